"""`session-watcher`: the command line.

`hook` and `statusline` run on Claude Code's hot path, so they are dispatched before argparse or
anything else is imported; every other command is ordinary.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing costs ~3 ms to import; `hook` and `statusline` start here

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "hook":
        from session_watcher.hooks.run import main as hook_main

        return hook_main(args[1:])
    if args and args[0] == "statusline":
        from session_watcher.statusline import main as statusline_main

        return statusline_main()
    return _commands(args)


def run() -> None:
    """The console script (and `python -m session_watcher`): `main`. A report leaves a large heap
    behind (a history's rows and sessions), and the interpreter's teardown frees it object by object:
    once its output is flushed, a report leaves through os._exit (12 % of a warm report's CPU, 2 % of
    a cold one's; bench.tricks). Nothing of it is pending then (files are written and closed, the
    index too). The cyclic collector is off for a report's whole run (5-7 % of a warm report over
    real sessions, mostly its imports; the live page's server turns it back on)."""
    args = sys.argv[1:]
    if args[:1] == ["report"]:
        import gc

        gc.disable()  # a short life that makes no reference cycles: no collector passes, imports included
    rc = main(args)
    if args[:1] == ["report"]:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            sys.exit(rc)
        import os

        os._exit(rc)
    sys.exit(rc)


def _text_streams() -> None:
    """Whatever a command prints, a lone surrogate leaves as its escape, never as a crash (a strict
    UTF-8 terminal) nor as a raw byte (the C locale writes `\\udc9b` as 0x9b, a one-byte CSI). The
    text is cleaned where it is made (`core.text`); this is the net under it."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # pragma: no cover - a stream that cannot change
                pass


def _commands(args: list[str]) -> int:
    from session_watcher.config import ConfigError
    from session_watcher.core.text import one_line
    from session_watcher.errors import UserError

    _text_streams()
    if args and args[0] == "report":
        return _delegate_report(args[1:])
    if args and args[0] == "notify":
        from session_watcher.notifier.cli import main as notify_main

        return notify_main(args[1:])
    parser = _parser()
    ns = parser.parse_args(args)
    if not getattr(ns, "func", None):
        parser.print_help()
        return 1
    try:
        return int(ns.func(ns))
    except BrokenPipeError:  # `session-watcher status | head`: the reader left, nothing to say
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (UserError, ConfigError) as exc:
        print(one_line(f"session-watcher: {exc}"), file=sys.stderr)
        return 1
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(one_line(f"session-watcher: {where}{exc.strerror or exc}"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        from session_watcher.logs import log_exception
        from session_watcher.paths import log_file

        log_exception(f"cli {args[0] if args else ''}", exc)
        print(one_line(f"session-watcher: internal error ({type(exc).__name__}: {exc}); details in {log_file()}"),
              file=sys.stderr)
        return 1


def _delegate_report(args: list[str]) -> int:
    if args and args[0] == "session":
        from session_watcher.reports.session_cli import main as page_main

        return page_main(args[1:])
    from session_watcher.reports.cli import main as report_main

    return report_main(args)


def _backtest(ns: argparse.Namespace) -> int:
    from session_watcher.backtest import command

    return command(ns)


SESSION_HELP = ("a session: its id, the first 6 or more characters of it, or its transcript's path "
                "(default: the most recently active)")


def _handoff(ns: argparse.Namespace) -> int:
    from session_watcher.handoff import command

    return command(ns)


def _parser() -> argparse.ArgumentParser:
    import argparse

    from session_watcher import __version__, commands

    p = argparse.ArgumentParser(
        prog="session-watcher",
        description="When does a long Claude Code session cost more than restarting it? Measured live.",
        epilog="A session is named the same way everywhere: nothing (the most recently active), its id, the first "
               "6 or more characters of its id, or its transcript's path. `COMMAND --help` for each command.",
    )
    p.add_argument("--version", action="version", version=f"session-watcher {__version__}")
    sub = p.add_subparsers(metavar="COMMAND")

    s = sub.add_parser("status", help="where one session stands (default: the most recently active)",
                       description="Where one session stands: the lamp, the position against the sweet spot, the "
                                   "baseline a restart would carry, the cache. " + SESSION_HELP + ".")
    s.add_argument("target", nargs="?", metavar="SESSION", help=SESSION_HELP)
    s.add_argument("--session", metavar="ID", help="the same as SESSION (kept for scripts)")
    s.add_argument("--json", action="store_true", help="the full status document")
    s.add_argument("--verbose", action="store_true", help="also the model's internals (x, bp, bill progress, L, B, g)")
    s.set_defaults(func=commands.status)

    s = sub.add_parser("health", help="the context health grade and its five signals",
                       description="The context health grade and its five signals. " + SESSION_HELP + ".")
    s.add_argument("target", nargs="?", metavar="SESSION", help=SESSION_HELP)
    g = s.add_mutually_exclusive_group()
    g.add_argument("--session", metavar="ID", help="the same as SESSION (kept for scripts)")
    g.add_argument("--transcript", metavar="PATH", help="the same as SESSION given as a path (kept for scripts)")
    s.add_argument("--json", action="store_true", help="the health document (grade, score, each signal's value)")
    s.set_defaults(func=commands.health)

    s = sub.add_parser("replay", help="fold a session's transcript exactly as the hooks would",
                       description="Fold a session's transcript from its first line, exactly as the hooks would, "
                                   "in a scratch state (nothing is saved). " + SESSION_HELP + ".")
    s.add_argument("target", nargs="?", metavar="SESSION", help=SESSION_HELP)
    s.add_argument("--cwd", metavar="DIR", help="the project folder (default: the transcript's cwd)")
    s.add_argument("--json", action="store_true", help="the final status document")
    s.add_argument("--trace", metavar="FILE", help="write one JSON line per API call")
    s.add_argument("--verbose", action="store_true", help="also the model's internals (x, bp, bill progress, L, B, g)")
    s.set_defaults(func=commands.replay)

    s = sub.add_parser("backtest", help="what restarting at the advice would have saved, session by session",
                       description="Replay sessions and price restarting at the advice, at the sweet spot and at "
                                   "the best moments in hindsight (docs/backtest.md).")
    s.add_argument("targets", nargs="*", metavar="SESSION",
                   help="sessions by id, id prefix or transcript path (default: every session on this machine)")
    s.add_argument("--json", action="store_true", help="the full document (docs/backtest.md)")
    s.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="replay with this config key changed (e.g. bp_amber=0.15); repeatable")
    s.set_defaults(func=_backtest)

    s = sub.add_parser("handoff", help="a priced note for a fresh session of the project; the next one receives it",
                       description="Write the handoff of a session (what the work is, the files a restart carries, "
                                   "its price) for the next fresh session of its project: /clear, or a new session "
                                   "there, starts with it. " + SESSION_HELP + "; inside Claude Code, the session "
                                   "it runs in.")
    s.add_argument("target", nargs="?", metavar="SESSION", help=SESSION_HELP)
    s.add_argument("--session", metavar="ID", help="the same as SESSION")
    s.add_argument("--json", action="store_true", help="sessionId, note, files, carryTokens, carryUsd, savingUsd")
    s.set_defaults(func=_handoff)

    s = sub.add_parser("config", help="show or edit the config", description="Show or edit the config.")
    project_help = "the project whose config counts (default: $CLAUDE_PROJECT_DIR, else the current folder)"
    csub = s.add_subparsers(metavar="ACTION")
    c = csub.add_parser("show", help="the effective config and where it came from")
    c.add_argument("--project", metavar="DIR", help=project_help)
    c.set_defaults(func=commands.config_show)
    c = csub.add_parser("path", help="the config files")
    c.add_argument("--project", metavar="DIR", help=project_help)
    c.set_defaults(func=commands.config_path)
    c = csub.add_parser("set", help="set KEY to VALUE (a TOML value), keeping comments")
    c.add_argument("key", help="a config key (`config show` lists them), e.g. notify.remind_min")
    c.add_argument("value", help="a TOML value, e.g. 15, 0.2, true or '\"block\"'")
    c.add_argument("--project", metavar="DIR", help="edit DIR/.claude/session-watcher.toml instead")
    c.set_defaults(func=commands.config_set)
    s.set_defaults(func=commands.config_show, project=None)

    from session_watcher.otlp.backfill import add_parser as add_export

    add_export(sub)

    s = sub.add_parser("doctor", help="what is installed where, whether hooks fire, permissions")
    s.set_defaults(func=commands.doctor)

    sub.add_parser("hook", help="run as a Claude Code hook: `hook EVENT`, the hook JSON on stdin")
    sub.add_parser("statusline", help="run as Claude Code's status line command")
    sub.add_parser("report", help="every session: cost, warmth, breaks, the cache-TTL cliff (`report --help`); "
                                  "one session's page: `report session SESSION --html OUT.html`")
    sub.add_parser("notify", help="send a sample alert through each channel (`notify --test`)")
    return p
