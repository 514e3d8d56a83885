"""`session-watcher report session [SESSION] --html OUT.html | --serve [--port N] [--idle-minutes M]`.

One session's page: a self-contained HTML file (`reports.session_page`), or the same page served
live on 127.0.0.1 (`reports.live_view`) and pushed new rows and health as the transcript grows.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from session_watcher.core.text import one_line
from session_watcher.errors import UserError
from session_watcher.reports.session_page import write_html

if TYPE_CHECKING:
    from collections.abc import Sequence

IDLE_MINUTES = 60.0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="session-watcher report session",
        description="One session's page: the waterfall, the health grade and the watcher's own story.",
    )
    parser.add_argument("session", nargs="?", metavar="SESSION",
                        help="a session: its id, the first 6 or more characters of it, or its transcript's path "
                             "(default: the most recently active)")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--html", metavar="OUT.html", help="write a self-contained HTML file (mode 0600)")
    mode.add_argument("--serve", action="store_true", help="serve the page live on 127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="port for --serve (default: any free port)")
    parser.add_argument("--idle-minutes", type=float, default=IDLE_MINUTES, metavar="M",
                        help=f"--serve stops after M minutes with no page open (default {IDLE_MINUTES:g}; 0: never)")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    from session_watcher.sessions import transcript_of

    try:
        found = transcript_of(args.session)
    except UserError as exc:
        print(one_line(f"session-watcher: {exc}"), file=sys.stderr)
        return 1
    transcript = found.transcript
    assert transcript is not None
    if args.html:
        try:
            model = write_html(transcript, args.html)
        except OSError as exc:
            print(one_line(f"session-watcher: cannot write {args.html}: {exc.strerror or exc}"), file=sys.stderr)
            return 1
        h, sid = model["health"], model.get("sessionId") or found.session_id
        print(one_line(f"{args.html}: session {sid}, health {h['grade']} ({h['score']}/100)"))
        return 0
    from session_watcher.reports.live_view import LiveView

    try:
        view = LiveView(transcript, port=args.port, idle_stop=max(0.0, args.idle_minutes) * 60)
    except OSError as exc:
        print(f"session-watcher: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"serving {view.url} (Ctrl-C to stop)", flush=True)
    try:
        view.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        view.close()
    if view.idle_stopped:
        print(f"stopped: no page open for {args.idle_minutes:g} minutes", flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
