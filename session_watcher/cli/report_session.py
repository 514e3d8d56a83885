"""`session-watcher report session [SESSION] --html OUT.html|- | --serve [--port N] [--idle-minutes M]`.

One session's page: a self-contained HTML file (`reports.session_page`; `--html -`: on standard
output), or the same page served live on 127.0.0.1 (`reports.live_view`) and pushed new rows and
health as the transcript grows.
Its arguments join the CLI's parser tree under `report` (`add_parser`).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from session_watcher.core.text import one_line
from session_watcher.core.usererrors import UserError

if TYPE_CHECKING:
    import argparse

IDLE_MINUTES = 60.0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "session", help="one session's page: `report session [SESSION] --html OUT.html` or `--serve`",
        description="One session's page: the waterfall, the health grade and the watcher's own story.",
    )
    from session_watcher.cli.commands import TRANSCRIPT_HELP

    p.add_argument("session", nargs="?", metavar="SESSION", help=TRANSCRIPT_HELP)
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--html", metavar="OUT.html",
                      help="write a self-contained HTML file (mode 0600); `-`: the page to standard output")
    mode.add_argument("--serve", action="store_true", help="serve the page live on 127.0.0.1")
    p.add_argument("--port", type=_port, default=0, help="port for --serve (default: any free port)")
    p.add_argument("--idle-minutes", type=_minutes, default=IDLE_MINUTES, metavar="M",
                   help=f"--serve stops after M minutes with no page open (default {IDLE_MINUTES:g}; 0: never)")
    p.set_defaults(func=command)


def _port(text: str) -> int:
    """`--port N`, a TCP port (0: any free one); anything else argparse refuses (exit 2): 99999 made
    an internal error of the bind (exit 3)."""
    import argparse

    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port (0 to 65535; 0: any free one)")
    return port


def _minutes(text: str) -> float:
    """`--idle-minutes M`, minutes from 0 (never stop) on; anything else argparse refuses (exit 2): a
    negative count read as 0 made a page that never stops of a typo."""
    import argparse
    import math

    try:
        minutes = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number: {text!r}") from None
    if not (math.isfinite(minutes) and minutes >= 0):
        raise argparse.ArgumentTypeError(f"{text} is not a number of minutes (0 or more; 0: never stop)")
    return minutes


def command(args: argparse.Namespace) -> int:
    from session_watcher.sessions.naming import transcript_of

    found = transcript_of(args.session)
    transcript = found.transcript
    assert transcript is not None
    if args.html:
        from session_watcher.reports.session_page import write_html

        to_stdout = args.html == "-"  # `--html -`: the page alone on standard output, as a file is written
        try:
            model = write_html(transcript, args.html, stream=sys.stdout.buffer if to_stdout else None)
        except BrokenPipeError:
            raise
        except OSError as exc:
            where = "to standard output" if to_stdout else args.html
            raise UserError(f"cannot write {where}: {exc.strerror or exc}", keep=[where]) from None
        if to_stdout:
            return 0
        h, sid = model["health"], model.get("sessionId") or found.session_id
        from session_watcher.base.terminal import columns
        from session_watcher.core.text import wrap

        # in `report --html`'s form ("wrote OUT ..."): the two --html commands confirm alike
        said = one_line(f"wrote {args.html}: session {sid}, health {h['grade'] or '- (nothing to grade)'}"
                        + (f" ({h['score']}/100)" if h['score'] is not None else ""))
        print("\n".join(wrap(said, columns(), keep=[one_line(args.html)])))  # the path and the id each whole
        return 0
    from session_watcher.reports.live_view import LiveView

    try:
        view = LiveView(transcript, port=args.port, idle_stop=args.idle_minutes * 60)
    except OSError as exc:
        raise UserError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}") from None
    unit = "minute" if args.idle_minutes == 1 else "minutes"
    idle = f", or it stops after {args.idle_minutes:g} {unit} with no page open" if args.idle_minutes > 0 else ""
    from session_watcher.base.terminal import columns
    from session_watcher.core.text import wrap

    # the URL alone on the first line, where it is read from (a user's copy, a test); then the rest
    said = one_line(f"session {found.session_id}; Ctrl-C to stop{idle}")
    rest = wrap(said, columns() - 2, indent=0, keep=[one_line(found.session_id)])
    print("\n".join([f"serving {view.url}", *("  " + line for line in rest)]), flush=True)
    try:
        view.serve_forever()
    except KeyboardInterrupt:  # the way to stop it: not an interruption
        pass
    finally:
        view.close()
    if view.idle_stopped:
        print(f"stopped: no page open for {args.idle_minutes:g} minutes", flush=True)
    return 0
