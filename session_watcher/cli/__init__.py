"""`session-watcher`: the command line, one way in.

`main` is the one entry point (the console script and `python -m session_watcher` reach it through
`run`). `hook` and `statusline` run on Claude Code's hot path, so they are dispatched first, before
argparse or anything else is imported; they deal with their own failures (a hook always exits 0).
Every other command goes through one parser tree, each command's module adding its own subcommand
(`add_parser(sub)`, see COMMANDS; a run builds the part of the command it runs), and one handler,
`handle`, which gives every command the same exit codes and messages (as pre-commit's
error_handler does). A message is one on stderr, its first line `session-watcher: ...` (argparse's
`session-watcher COMMAND: error: ...`), wrapped at spaces within COLUMNS as every command's text
(`messages.say`: a path or an id never cut):

    0    done
    1    a user error (`usererrors.UserError`, or an OSError naming a file): its message
    2    a command line that cannot work: argparse's message then the command's usage, or a `UsageError`'s
    3    an unexpected error: a message naming it and the log file that holds its traceback
    130  interrupted (^C)
    141  the reader of standard output went away (`session-watcher report | head -2`): nothing said

A reader that goes away ends the command quietly as coreutils and git end: killed by SIGPIPE, which
a shell shows as 141 (128 + 13) and says nothing of (`set -o pipefail` sees it as `yes | head -1`);
where there is no SIGPIPE (Windows), exit 141 (`READER_GONE`). A standard output closed from the
start (`>&-`) is said in one message, exit 1.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing is slow to import; `hook` and `statusline` start here

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from typing import Any, NoReturn

# Every command, in `--help`'s order: the module that adds it to the parser tree (`add_parser(sub)`:
# its arguments, and the `func` that runs it) and its line in `--help`. Only the module of the command
# being run is imported; `--help` and `--version` import none.
COMMANDS = {
    "status": ("session_watcher.cli.commands", "where one session stands (default: the latest of this project)"),
    "health": ("session_watcher.cli.commands", "the context health grade and its five signals"),
    "replay": ("session_watcher.cli.commands", "fold a session's transcript exactly as the hooks would"),
    "backtest": ("session_watcher.cli.backtest", "what restarting at the advice would have saved, session by session"),
    "handoff": ("session_watcher.cli.handoff",
                "a priced note for a fresh session of the project; the next one receives it"),
    "report": ("session_watcher.cli.report", "every session: cost, warmth, breaks, the cache-TTL cliff (`report "
               "--help`); one session's page: `report session SESSION --html OUT.html`"),
    "export": ("session_watcher.cli.export",
               "send the sessions' figures to an OpenTelemetry collector (`export --help`)"),
    "config": ("session_watcher.cli.commands", "show or edit the config"),
    "doctor": ("session_watcher.cli.commands", "what is installed where, whether hooks fire, permissions"),
    "notify": ("session_watcher.cli.notify", "send a sample alert through each channel"),
}
HOT = {  # dispatched before the parser; listed in `--help` only
    "hook": "run as a Claude Code or Codex hook: `hook EVENT [AGENT]`, the hook JSON on stdin",
    "statusline": "run as Claude Code's status line command",
}
INTERNAL = 3  # the exit code of an unexpected error
# the commands that read the config and run with a file of it left out (`_dispatch` says it)
READS_CONFIG = frozenset({"status", "health", "replay", "backtest", "handoff", "report", "export", "notify"})
READER_GONE = 141  # stdout's reader went away: 128 + SIGPIPE, as a shell shows a `head`'s writer (`run`: the signal)


OPTION_COLUMN = 25  # where an option's words start in HOT_HELP
# the status line's options, as docs/statusline.md says them (the doc holds each line whole)
WITH_HELP = "runs your own status line command with the same input and shows its line above ours"
VERBOSE_HELP = "adds x against the sweet spot (x3.4/2.8) and, past the sweet spot, the bill premium (bp14%)"
HOT_HELP = {  # what `hook --help` / `statusline --help` say, and a person who runs either at a terminal
    "hook": "usage: session-watcher hook EVENT [AGENT]\n\nRun by Claude Code (and Codex) as a hook, the hook's "
            "JSON on stdin (install.sh registers them: docs/install.md); as a hook it prints only what the agent "
            "reads, and exits 0 whatever happens. Where a session stands: `session-watcher status`.",
    "statusline": "usage: session-watcher statusline [--verbose] [--with 'YOUR COMMAND']\n\nRun by Claude Code as "
                  "its status line command, the status line's JSON on stdin; it prints one line "
                  "(docs/statusline.md). Where a session stands: `session-watcher status`.\n\noptions:\n"
                  f"  --with 'YOUR COMMAND'  {WITH_HELP}\n"
                  f"  --verbose              {VERBOSE_HELP}",
}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in HOT and (args[1:2] in (["-h"], ["--help"]) or _stdin_is_a_terminal()):
        # a person, not the agent (which pipes its JSON in): what the command is for, rather than a
        # wait for input that never comes (or a status line printed as the answer to --help)
        from session_watcher.base.terminal import columns
        from session_watcher.core.text import wrap

        asked = args[1:2] in (["-h"], ["--help"])
        width = columns()  # within COLUMNS, as every command's text
        # a paragraph a line; an option's line ("  --verbose  adds ...") wrapped under its words
        said = "\n\n".join("\n".join(row for line in part.split("\n")
                                      for row in wrap(line, width, OPTION_COLUMN if line[:3] == "  -" else 0))
                           for part in HOT_HELP[args[0]].split("\n\n"))
        try:
            print(said, file=sys.stdout if asked else sys.stderr, flush=True)
        except BrokenPipeError:  # `hook --help | head -1`: as any command's reader gone (`handle`)
            return _reader_gone() if asked else 2
        return 0 if asked else 2
    if args and args[0] == "hook":
        from session_watcher.hooks.entry import main as hook_main

        return hook_main(args[1:])
    if args and args[0] == "statusline":
        from session_watcher.hooks.statusline import main as statusline_main

        return statusline_main()
    if args[:1] in (["install"], ["uninstall"]):  # no such command: where the one that does it is
        run = "./install.sh --uninstall" if args[0] == "uninstall" else "./install.sh"
        plugin = f"claude plugin {args[0]} session-watcher@session-watcher"  # the plugin route's own
        where = _source_folder()
        folder = f"session-watcher's folder ({where})" if where else "session-watcher's folder"
        from session_watcher.cli.messages import say

        say(f"{args[0]} is not a command: {run} in {folder} does it, for Claude Code and Codex, or "
            f"`{plugin}` for the Claude Code plugin (docs/install.md)", keep=[where or ""])
        return 2
    return _handled(args)


def _source_folder() -> str | None:
    """The folder this package was installed from, when pip installed it from a local folder holding
    install.sh (install.sh's own route: pip records the folder in the dist-info's direct_url.json);
    None otherwise (a plugin's venv, an install from an index, a folder moved since)."""
    import json
    import os
    from importlib import metadata
    from urllib.parse import unquote, urlsplit

    try:
        doc = json.loads(metadata.distribution("session-watcher").read_text("direct_url.json") or "null")
    except (metadata.PackageNotFoundError, ValueError, OSError):
        return None
    url = doc.get("url") if isinstance(doc, dict) else None
    if not isinstance(url, str) or not url.startswith("file://"):
        return None
    folder = unquote(urlsplit(url).path)
    return folder if os.path.isfile(os.path.join(folder, "install.sh")) else None


def _stdin_is_a_terminal() -> bool:
    import os

    try:
        return os.isatty(0)
    except OSError:  # pragma: no cover - no descriptor 0 at all
        return False


def run() -> None:
    """The console script (and `python -m session_watcher`): `main`. A report leaves a large heap
    behind (a history's rows and sessions), and the interpreter's teardown frees it object by object:
    once its output is flushed, a report leaves through os._exit (docs/benchmarks.md, bench.tricks),
    and so does a replay (its teardown frees the fold's modules and state one by one: a replay of a
    large transcript is waited for). Nothing of either is pending then (files are written and closed,
    the index too; a replay's parsing child was waited for when its fold ended). Both find the
    package's modules by name (`hooks.finder`). The cyclic collector is off for a report's whole run
    (its imports are most of what it saves; the live page's server turns it back on), not for a
    replay's (it measured nothing there)."""
    args = sys.argv[1:]
    leaves = args[:1] in (["report"], ["replay"])
    if leaves:
        from session_watcher.hooks.finder import install

        if args[0] == "report":
            import gc

            gc.disable()  # a short life that makes no reference cycles: no collector passes, imports included
        install()  # the package's modules found by name, as the hooks' launchers find them (~50 on a warm run)
    rc = main(args)
    if rc == READER_GONE:
        _die_of_sigpipe()
    if leaves:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            sys.exit(rc)
        import os

        os._exit(rc)
    sys.exit(rc)


def _reader_gone() -> int:
    """READER_GONE, stdout's reader having gone away: stdout is pointed at the null device first, so
    no later flush (the interpreter's at its exit) fails with an "Exception ignored" line and exit 120."""
    import os

    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):  # no descriptor to point: nothing will flush to it either
        pass
    return READER_GONE


def _broken_pipe(exc: BrokenPipeError) -> int:
    """`handle`'s exit code for a broken pipe: READER_GONE where it is stdout's, else an OSError's 1
    and its message (another pipe or socket a command wrote to)."""
    if _stdout_gone():
        return _reader_gone()
    from session_watcher.cli.messages import say

    say(f"{exc.strerror or exc}")
    return 1


def _stdout_gone() -> bool:
    """Whether stdout's reader went away (a pipe with no reader polls as an error), rather than some
    other pipe or socket a command wrote to; True where it cannot be told (no poll: Windows)."""
    try:
        import select

        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poll.poll(0))
    except (AttributeError, OSError, ValueError):
        return True


def _die_of_sigpipe() -> None:
    """End as coreutils and git end when their reader leaves: killed by SIGPIPE (a shell shows 141
    and says nothing); where there is no SIGPIPE, exit READER_GONE. Nothing is pending: the command
    returned, its pool was reaped, stdout points at the null device."""
    import os
    import signal

    sigpipe = getattr(signal, "SIGPIPE", None)
    if sigpipe is not None:
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        signal.signal(sigpipe, signal.SIG_DFL)
        os.kill(os.getpid(), sigpipe)
    os._exit(READER_GONE)


def _handled(args: list[str]) -> int:
    """Run the command `args` name under the one error handler."""
    _text_streams()
    if sys.stdout is None:  # started with standard output closed (`>&-`)
        sys.stdout = _closed_stdout()
    if args == ["--version"]:  # argparse's answer, without argparse or the config (docs/benchmarks.md)
        return handle(_version, "cli --version")
    return handle(lambda: _dispatch(args), f"cli {args[0] if args else ''}")


def _version() -> int:
    """`--version`: `session-watcher VERSION`, as the parser's `--version` says it (`build_parser`)."""
    from session_watcher import __version__

    sys.stdout.write(f"session-watcher {__version__}\n")
    return 0


def _closed_stdout() -> Any:
    """A stand-in for a closed standard output (Python leaves `sys.stdout` None, and a command's
    first write, or the handler's flush, ended in an AttributeError: exit 3, a traceback logged): its
    writes fail as a closed descriptor's do, so the command ends with one message, exit 1."""
    import errno
    import io

    def closed(*_args: object) -> Any:
        raise OSError(errno.EBADF, "standard output is closed")

    class Closed(io.TextIOBase):
        write = fileno = closed  # text or, through `buffer`, bytes

        @property
        def buffer(self) -> Closed:
            return self

        def flush(self) -> None:  # nothing was written: nothing to flush
            pass

    return Closed()


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


def handle(work: Callable[[], int], where: str) -> int:
    """`work()`'s exit code, or the one its failure maps to (see the module's docstring); `where`
    labels an unexpected error's traceback in the log."""
    from session_watcher.cli.messages import say
    from session_watcher.core.usererrors import UsageError, UserError

    try:
        try:
            rc = work()
        except SystemExit as done:  # argparse's --help, its text flushed as any command's output
            if done.code != 0:
                raise
            rc = 0
        sys.stdout.flush()  # a reader gone away is noticed here, inside the handler
        return rc
    except BrokenPipeError as exc:  # `session-watcher status | head`: the reader left, nothing to say
        return _broken_pipe(exc)
    except KeyboardInterrupt:
        say("interrupted")
        return 130
    except UserError as exc:
        say(str(exc), keep=exc.keep)
        return 2 if isinstance(exc, UsageError) else 1
    except OSError as exc:  # the user's files and folders: a missing one, a permission, a full disk
        named = f"{exc.filename}: " if exc.filename else ""
        say(f"{named}{exc.strerror or exc}", keep=[str(exc.filename or "")])
        return 1
    except Exception as exc:
        from session_watcher.base.logs import log_exception
        from session_watcher.base.paths import log_file

        log_exception(where, exc)
        say(f"internal error ({type(exc).__name__}: {exc}); details in {log_file()}", keep=[log_file()])
        return INTERNAL


def _dispatch(args: list[str]) -> int:
    """Parse `args` with the command's part of the tree and run its `func`. `report` (text or `--json`)
    and `replay` in the forms people and programs run them are read without argparse
    (`cli.report.report_args`, `cli.commands.replay_args`). Every command prices with the user's own
    prices (`prices` in their config; a bad file is left out, as `config show` says). Each command
    that reads the config (READS_CONFIG) says such a file once on stderr when it has run, in doctor's
    words (`messages.say_left_out`, the one function): its figures were made without it; a command
    that fails says its one error. `config` and `doctor` say it their own way."""
    from session_watcher.base import config

    _, errors = config.load_layers(None)
    code = _run(args)
    if errors and _command_of(args) in READS_CONFIG:
        from session_watcher.cli.messages import say_left_out

        say_left_out(errors, config.config_files(None))
    return code


def _run(args: list[str]) -> int:
    """`_dispatch`'s command run."""
    if args[:1] == ["report"]:
        from session_watcher.cli.report import command, report_args

        quick = report_args(args[1:])
        if quick is not None:
            return command(quick)
    if args[:1] == ["replay"]:
        from session_watcher.cli.commands import replay, replay_args

        plain = replay_args(args[1:])
        if plain is not None:
            return replay(plain)
    parser = build_parser(_command_of(args))
    ns, extra = parser.parse_known_args(args)
    if extra:  # said by the command's own parser: its usage, not the top level's
        _innermost(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    func: Callable[[argparse.Namespace], int] | None = getattr(ns, "func", None)
    if func is None:  # no command: a user asking what there is (as cargo, gh, docker, pip answer it): the help, 0
        parser.print_help()
        return 0
    return int(func(ns))


def _innermost(parser: argparse.ArgumentParser, args: list[str]) -> argparse.ArgumentParser:
    """The parser of the (sub)command `args` name: `config show`'s for `config show --x`."""
    import argparse

    words = [a for a in args if not a.startswith("-")]
    while words:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        chosen = subs[0].choices.get(words[0]) if subs else None
        if not isinstance(chosen, argparse.ArgumentParser):
            break
        parser, words = chosen, words[1:]
    return parser


def _command_of(args: list[str]) -> str | None:
    """The command `args` name (the first word that is not an option), if it is one of COMMANDS."""
    for arg in args:
        if not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


def _parser_class() -> type[argparse.ArgumentParser]:
    """ArgumentParser whose help is wrapped at spaces only, as every other text of the CLI: argparse's
    own wrapping also breaks after a hyphen (`YYYY-` at a line's end, `MM-DD` on the next) and cuts a
    word longer than the line. Subcommands' parsers are of the same class (`add_subparsers` makes
    them of its parser's), so the whole tree wraps the one way."""
    import argparse
    import textwrap

    class Formatter(argparse.HelpFormatter):
        def __init__(self, prog: str, *args: Any, **kwargs: Any) -> None:
            # the CLI's width (base.terminal.columns: never under 40, COLUMNS garbage ignored), less
            # argparse's margin of 2: argparse's own read COLUMNS=5 as 3 columns, a word a line
            from session_watcher.base.terminal import columns

            kwargs.setdefault("width", columns() - 2)
            super().__init__(prog, *args, **kwargs)

        def _split_lines(self, text: str, width: int) -> list[str]:
            return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False, break_long_words=False)

        def _fill_text(self, text: str, width: int, indent: str) -> str:
            return textwrap.fill(" ".join(text.split()), width, initial_indent=indent, subsequent_indent=indent,
                                 break_on_hyphens=False, break_long_words=False)

    class Parser(argparse.ArgumentParser):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("formatter_class", Formatter)
            super().__init__(*args, **kwargs)

        def _print_message(self, message: str, file: Any = None) -> None:
            """argparse's, without swallowing a write that fails: `--help` to a reader gone ends as
            every command's output does (`handle`: SIGPIPE), to a closed stdout in its one message
            (argparse's own passes over the error, and the help's exit said 0)."""
            if message:
                (file or sys.stderr).write(message)

        def error(self, message: str) -> NoReturn:
            """What is wrong first (`session-watcher status: error: ...`, wrapped within COLUMNS as
            every message of the CLI), then the command's usage (argparse's, within COLUMNS too); exit 2.
            argparse puts the usage first and the error on one line however long. An unknown command
            is said without the list of every one (`--help` has them, each with its line), with the one
            a typo was meant for where one is near."""
            import re

            from session_watcher.cli.messages import say

            unknown = re.fullmatch(r"argument COMMAND: invalid choice: (.*?) \(choose from (.*)\)", message, re.S)
            if unknown:  # the 12 names left out, the one a typo was meant for said (as argparse's list showed it)
                import difflib

                given = unknown.group(1).strip("'")
                names = [n.strip(" '") for n in unknown.group(2).split(",")]
                near = difflib.get_close_matches(given, names, n=1)
                meant = f"did you mean '{near[0]}'? " if near else ""
                message = f"{unknown.group(1)} is not a command ({meant}`{self.prog} --help` lists them)"
            say(message, prog=f"{self.prog}: error")
            try:
                self.print_usage(sys.stderr)
            except OSError:  # stderr gone: the exit code says it
                pass
            sys.exit(2)

    return Parser


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser tree: `command`'s part of it (what its module adds), or, for None (`--help`,
    `--version`, an unknown command), every command's line and no module."""
    import importlib

    from session_watcher import __version__

    p = _parser_class()(
        prog="session-watcher",
        description="When does a long Claude Code or Codex session cost more than restarting it? Measured live.",
        epilog="A session is named the same way everywhere: nothing (the most recently active of the project "
               "run in, else of all, passing over one with no API call; for `replay` and `report session` the "
               "most recently active one with a transcript; `backtest` takes every session), its id, the first 6 "
               "or more characters of its id, or its transcript's path. "
               "`COMMAND --help` for each command.",
    )
    p.add_argument("--version", action="version", version=f"session-watcher {__version__}")
    sub = p.add_subparsers(metavar="COMMAND")
    if command in COMMANDS:
        importlib.import_module(COMMANDS[command][0]).add_parser(sub)
    else:
        for name, (_module, line) in COMMANDS.items():
            sub.add_parser(name, help=line)
        for name, line in HOT.items():
            sub.add_parser(name, help=line)
    return p
