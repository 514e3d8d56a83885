"""`session-watcher report [--projects DIR ...] [--since WHEN] [--json | --html OUT.html [--pages]]`.

Its arguments join the CLI's parser tree (`add_parser`); `report session ...`, the single-session
page, is `reports.session_cli`'s. `report_args` reads the forms people and programs run without
argparse.
"""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace

from session_watcher.core.text import clean as clean_text
from session_watcher.core.text import one_line, utf8
from session_watcher.core.usererrors import UsageError, UserError

TYPE_CHECKING = False  # typing is slow to import (a report's start-up), and only the checker needs it

if TYPE_CHECKING:
    import argparse
    from typing import Any


def since_epoch(text: str) -> float:
    """`--since TEXT` as epoch seconds (core.when: a date, a date-time, local unless zoned, or a span
    back from now). Raises ValueError naming the accepted forms."""
    import time

    from session_watcher.core.when import since_epoch as parse

    return parse(text, time.time(), lambda dt: dt.astimezone().timestamp())  # naive: the local zone


def parse_since(text: str) -> float:
    """`since_epoch` for argparse."""
    import argparse

    try:
        return since_epoch(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def add_parser(sub: Any) -> None:
    """`report` (and its `session` subcommand, `reports.session_cli`) in the CLI's parser tree."""
    import argparse

    from session_watcher.base.route import cli_command
    from session_watcher.cli.messages import LEFT_OUT_HELP

    p = sub.add_parser(
        "report",
        description="Cache warmth, idle-gap cost, the inferred cache-TTL cliff and cold-start causes "
        "across every Claude Code and Codex session on this machine.",
        epilog=f"One session's page: `{cli_command()} report session [SESSION] --html OUT.html` (or --serve for a "
        "live view); `report session --help` for more. " + LEFT_OUT_HELP,
    )
    p.add_argument(
        "--projects",
        metavar="DIR",
        nargs="+",
        action="extend",
        help="scan these folders (Claude Code projects, Codex rollouts) instead of every agent's own folders",
    )
    p.add_argument("--since", metavar="WHEN", type=parse_since,
                   help="only calls from then on: YYYY-MM-DD, YYYY-MM-DDTHH:MM (local time), or 7d, 12h, 2w, 30m back")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the report as JSON (docs/report-schema.json)")
    out.add_argument("--html", metavar="OUT.html",
                     help="write a self-contained HTML page (`-`: to standard output)")
    p.add_argument("--pages", action="store_true",
                   help="with --html OUT.html (a file, not -): also write each session's page into OUT-sessions/ "
                        "beside it, linked from its row")
    p.add_argument("--index", metavar="FILE", help=argparse.SUPPRESS)  # tests and benchmarks
    p.set_defaults(func=command)
    from session_watcher.cli.report_session import add_parser as add_page

    add_page(p.add_subparsers(metavar="session", help=argparse.SUPPRESS))  # the epilog says it


def restarts_taken() -> list[dict[str, Any]]:
    """The restarts taken on this machine (the handoffs received here, priced), for every view."""
    from session_watcher.base.paths import state_dir

    kept = os.path.join(state_dir(), "handoffs")
    if not (os.path.lexists(os.path.join(kept, "taken")) or os.path.lexists(os.path.join(kept, "taken.ids"))):
        return []  # no handoff ever taken here (`state.handoffs`' folder and index): nothing to read
    from session_watcher.state.handoffs import taken_ids

    if not taken_ids():  # none taken here: nothing to replay or price (and no pricing's imports)
        return []
    from session_watcher.sessions.restarts import from_machine

    taken: list[dict[str, Any]] = from_machine()["restartsTaken"]
    return taken


def narrowed(args: Any) -> bool:
    """A report asked for part of the history (--since, --projects): its restarts are those into the
    sessions it covers, each listed with its child session (docs/report.md)."""
    return args.since is not None or bool(args.projects)


def report(args: argparse.Namespace) -> dict[str, Any]:
    from session_watcher.reports.collect import Progress, run_report

    doc, _stats = run_report(args.projects, args.index, since=args.since, progress=Progress())
    return doc


def write_session_pages(doc: dict[str, Any], out: str, roots: list[str] | None) -> dict[str, str]:
    """Each reported session's page in `<OUT stem>-sessions/`; {session id: address relative to OUT}."""
    from session_watcher.agents import sources
    from session_watcher.base.paths import ensure_private_dir
    from session_watcher.reports.session_page import write_html
    from session_watcher.reports.session_page_data import page_memory
    from session_watcher.state import pool

    folder_name = os.path.splitext(os.path.basename(out))[0] + "-sessions"
    folder = os.path.join(os.path.dirname(os.path.abspath(out)), folder_name)
    ensure_private_dir(folder)
    # every agent's main logs: the page reads a rollout with its agent's decoder (reports.session_page_data)
    found = [s for s in sources(roots)[1] if not s.sub]
    mains = {s.session: s.path for s in found} | {(s.project, s.session): s.path for s in found}
    pages: dict[str, str] = {}
    jobs: list[tuple[str, str]] = []
    sizes: list[int] = []
    for s in doc["sessions"]:
        sid = s["sessionId"]
        path = mains.get((s.get("project"), sid)) or mains.get(sid)  # the main file of the row's folder
        if path is None or os.sep in sid or sid.startswith("."):
            continue
        jobs.append((path, os.path.join(folder, sid + ".html")))
        pages[sid] = f"{folder_name}/{sid}.html"
        try:
            sizes.append(os.path.getsize(path))
        except OSError:
            sizes.append(0)
    # a page is a replay of its transcript (its work ~ the file's size): the largest first, on every
    # usable core, but no more at once than half the memory available holds of the heaviest pages
    # (the queue hands them out heaviest first, so no later set of running pages needs more)
    parts = pool.batches(sizes)
    workers = min(pool.cores(), len(sizes))
    if workers > 1:
        heaviest = sorted(sizes, reverse=True)[:workers]
        workers = pool.memory_bound([page_memory(size) for size in heaviest], pool.available_memory())

    now = doc.get("generatedAt")  # every page priced at the report's time, as the report itself
    at = float(now) if isinstance(now, (int, float)) else None

    def write(k: int) -> None:  # written again by this process when a child could not finish it
        for i in parts[k]:
            write_html(*jobs[i], now=at)

    pool.map_batches(write, len(parts), workers, name="session-watcher-pages")
    return pages


def report_args(argv: list[str]) -> SimpleNamespace | None:
    """The namespace argparse makes of `report` as people and programs run it: `--json` or not, with
    `--projects DIR...`, `--since WHEN`, `--index FILE`, each written out whole; None for anything
    else (`--html`, `session`, a prefix, `-h`), which argparse then reads (and says what is wrong).
    argparse and what it loads (gettext, locale, textwrap, shutil; the `report session` parser's
    json and typing) are a large share of a warm report's start-up (docs/benchmarks.md)."""
    projects: list[str] | None = None
    values: dict[str, str] = {}
    seen_json = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--json":
            seen_json = True
        elif arg == "--projects":
            start = i
            while i < len(argv) and not argv[i].startswith("-"):
                i += 1
            if i == start:
                return None
            projects = [*(projects or []), *argv[start:i]]
        elif arg in ("--since", "--index"):
            if i >= len(argv) or argv[i].startswith("-"):
                return None
            values[arg] = argv[i]
            i += 1
        else:
            return None
    since = None
    if "--since" in values:
        try:
            since = since_epoch(values["--since"])
        except ValueError:  # argparse says what is wrong with it
            return None
    return SimpleNamespace(projects=projects, since=since, json=seen_json, html=None, pages=False,
                           index=values.get("--index"))


def check_projects(folders: list[str] | None) -> None:
    """`--projects` (report's, export's): each a folder. One that is not there is a typo, not an empty
    history (UserError); a file there is named as one."""
    for d in folders or ():
        if not os.path.isdir(os.path.expanduser(d)):
            what = "a file, not a folder" if os.path.exists(os.path.expanduser(d)) else "no such folder"
            raise UserError(f"--projects {d}: {what}", keep=[d])


def say_unread(paths: list[str]) -> None:
    """The transcripts the report left out because they could not be read, named on stderr as
    `backtest` and `export` name theirs (its `--json` has them as `unreadable`)."""
    from session_watcher.base.terminal import columns
    from session_watcher.cli.messages import NOT_A_FILE
    from session_watcher.core.text import wrap

    for path in paths:
        said = one_line(f"session-watcher report: left out {path}: {NOT_A_FILE}")
        sys.stderr.write("\n".join(wrap(said, columns(), keep=[one_line(path)])) + "\n")


def command(args: Any) -> int:
    """`report`: its namespace from the CLI's parser, or from `report_args`."""
    if args.pages and not args.html:
        raise UsageError("--pages goes with --html OUT.html")
    if args.pages and args.html == "-":  # a folder of pages has no standard output to go to
        raise UsageError("--pages writes a folder of pages beside the report: --html names a file for it, not -")
    check_projects(args.projects)
    if args.json and not sys.stdout.isatty():
        # for programs: compact text, straight from the index's cache when the corpus is unchanged
        from session_watcher.reports.collect import Progress, report_json_pieces

        unread: list[str] = []
        pieces = report_json_pieces(args.projects, args.index, since=args.since, progress=Progress(), unread=unread)
        say_unread(unread)
        from session_watcher.cli.messages import json_text  # json's text without json's imports here

        found = restarts_taken()
        if found and narrowed(args):  # the restarts into the sessions reported (ids need no escaping)
            text = [p if isinstance(p, bytes) else bytes(p) for p in pieces]
            found = [r for r in found if any(f'"sessionId":"{r["child"]}"'.encode() in t for t in text)]
        taken = json_text(found, separators=(",", ":"))
        # the pieces as they are: a large history's text is not copied again. Each is json_text's
        # text: the members after the kept text made by its encoders, the kept text checked before
        # the index kept it (`reports.jsontext.finite_pieces`): no figure JSON cannot hold in either
        out = sys.stdout.buffer
        for piece in [*pieces, f',"restartsTaken":{taken}}}\n'.encode()]:
            out.write(piece)
        out.flush()
        return 0
    doc = report(args)
    say_unread(doc.get("unreadable") or [])
    doc["restartsTaken"] = restarts_taken()
    if doc["restartsTaken"] and narrowed(args):
        # a narrower report (--since, --projects) lists the restarts into the sessions it covers (each
        # with its child, wherever its parent is): not, under "no session has calls since 2027-01-01",
        # the restarts taken before
        ids = {s["sessionId"] for s in doc["sessions"]}
        doc["restartsTaken"] = [r for r in doc["restartsTaken"] if r["child"] in ids]
    if args.json:
        from session_watcher.cli.messages import json_text

        sys.stdout.write(json_text(doc, indent=1) + "\n")  # a person at a terminal
    elif args.html == "-":  # the one page on standard output, nothing else
        from session_watcher.reports.render_html import render

        sys.stdout.buffer.write(utf8(render(doc, None, narrowed=narrowed(args))))
    elif args.html:
        from session_watcher.base.atomic import write_atomic
        from session_watcher.reports.render_html import render

        try:  # user-only: the page names projects and files; a unique temp file, never a planted one
            pages = write_session_pages(doc, args.html, args.projects) if args.pages else None
            write_atomic(args.html, utf8(render(doc, pages, narrowed=narrowed(args))), mode=0o600, fsync=False)
        except OSError as exc:
            raise UserError(f"cannot write {args.html}: {exc.strerror or exc}", keep=[args.html]) from None
        # the pages' folder as the user named the report (relative stays relative): `<OUT stem>-sessions/`
        folder = os.path.join(os.path.dirname(args.html), next(iter(pages.values())).split("/")[0]) if pages else ""
        print(one_line(f"wrote {args.html}" + (f" and {len(pages)} session pages in {folder}/" if pages else "")))
    else:
        from session_watcher.base.terminal import columns
        from session_watcher.reports.render_text import render as render_text

        width = columns()
        sys.stdout.write(clean_text(render_text(doc, width)))
        if doc["restartsTaken"]:  # the handoffs received here, priced (none taken: not their module's imports)
            from session_watcher.core.text import wrap
            from session_watcher.sessions.restarts import render_lines

            lines = [w for line in render_lines(doc["restartsTaken"]) for w in wrap(line, width)]
            if lines:
                sys.stdout.write(clean_text("\n" + "\n".join(lines) + "\n"))
    return 0
