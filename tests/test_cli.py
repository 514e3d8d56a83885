"""The CLI as a user runs it, and the hot path's import discipline."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from tests.oracle import REPO, TRANSCRIPTS, hook, one_message, oracle, payload, run, statusline, sw

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

HEAVY = ("filelock", "tomllib", "tomlkit", "platformdirs", "desktop_notifier", "asyncio", "subprocess", "typing",
         "dataclasses", "logging", "argparse",
         "msgspec", "stringzilla",  # the report's decoder and search: never a hook's
         # the OpenTelemetry exporter's: the protobuf messages, HTTP, the settings readers, the payload
         "opentelemetry", "google.protobuf", "http", "json", "platform",
         "session_watcher.otlp.exporter", "session_watcher.otlp.payload", "session_watcher.otlp.settings",
         "session_watcher.otlp.wire", "session_watcher.cli.export",
         "session_watcher.core.shapes")  # the state's TypedDicts: for the type checker only


def imported(importtime_stderr: str) -> list[str]:
    """Module names from `python -X importtime` output."""
    names = []
    for line in importtime_stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.append(name)
    return names


def heavy_in(names: list[str]) -> list[str]:
    return [n for n in names if any(n == h or n.startswith(h + ".") for h in HEAVY)]


def total_us(importtime_stderr: str) -> int:
    total = 0
    for line in importtime_stderr.splitlines():
        parts = line.split("|")
        if line.startswith("import time:") and len(parts) == 3 and parts[0].split(":")[1].strip().isdigit():
            total += int(parts[0].split(":")[1])
    return total


def test_import_parser_sees_heavy_modules() -> None:
    """The check itself can fail: a process that does import them is caught."""
    proc = run([sys.executable, "-X", "importtime", "-c", "import argparse, subprocess, typing"])
    assert set(heavy_in(imported(proc.stderr.decode()))) >= {"argparse", "subprocess", "typing"}


def test_hook_with_no_input_imports_nothing_heavy() -> None:
    proc = run([sys.executable, "-X", "importtime", "-m", "session_watcher.hooks", "Stop"])
    assert proc.returncode == 0
    assert proc.stdout == b""
    names = imported(proc.stderr.decode())
    assert "session_watcher.hooks.run" in names
    assert heavy_in(names) == []


def test_normal_hook_run_imports_nothing_heavy(tmp_path: Path) -> None:
    """An uncontended PostToolUse and Stop over a real transcript, after a first run cached the config."""
    t = tmp_path / "imp.jsonl"
    data = (TRANSCRIPTS / "tool_heavy.jsonl").read_bytes()
    t.write_bytes(data[: len(data) // 2].rsplit(b"\n", 1)[0] + b"\n")
    assert hook("SessionStart", payload("imp", t, "SessionStart", source="startup")).returncode == 0
    t.write_bytes(data)  # new lines to fold in the measured run
    for event in ("PostToolUse", "Stop"):
        p = payload("imp", t, event, tool_name="Bash", tool_input={"command": "ls"}, tool_use_id=f"tu-{event}",
                    tool_response={"stdout": "x"})
        proc = run([sys.executable, "-X", "importtime", "-m", "session_watcher.hooks", event],
                   stdin=json.dumps(p).encode())
        assert proc.returncode == 0
        names = imported(proc.stderr.decode())
        assert "session_watcher.state.store" in names
        assert heavy_in(names) == [], event
    state = json.loads(sw("status", "--session", "imp", "--json").stdout)
    assert state["tokenUsage"] == oracle(t)["main"]


@pytest.mark.parametrize("due", [False, True])
def test_a_hook_with_otlp_export_on_imports_nothing_heavy(tmp_path: Path, due: bool) -> None:
    """Export on: the hook stats the exporter's heartbeat and, when it is stale, spawns the exporter;
    the encoders, HTTP and the settings readers load in that detached process, never in the hook."""
    from session_watcher.base import paths

    cfg = Path(paths.user_config_file())
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text('[otlp]\nenabled = true\nendpoint = "http://127.0.0.1:9"\ninterval = 3600\n')
    t = tmp_path / "otlp.jsonl"
    shutil.copy(TRANSCRIPTS / "short.jsonl", t)
    assert hook("Stop", payload("otlp", t)).returncode == 0  # caches the config in the state
    from tests.otlp_receiver import stop_exporters

    stop_exporters()  # the one that first run started
    heartbeat = Path(paths.otlp_dir(), "heartbeat")
    heartbeat.parent.mkdir(parents=True, exist_ok=True)
    heartbeat.touch()
    os.utime(heartbeat, (0, 0) if due else (2e9, 2e9))  # stale, or fresh for a long while
    before = heartbeat.stat().st_mtime
    try:
        proc = run([sys.executable, "-X", "importtime", "-m", "session_watcher.hooks", "Stop"],
                   stdin=json.dumps(payload("otlp", t)).encode())
    finally:
        stop_exporters()
    assert proc.returncode == 0
    names = imported(proc.stderr.decode())
    assert "session_watcher.otlp.trigger" in names
    assert heavy_in(names) == []
    assert (heartbeat.stat().st_mtime != before) is due  # a due run marks the heartbeat (and spawns)


def test_statusline_imports_nothing_heavy(tmp_path: Path) -> None:
    proc = run([sys.executable, "-X", "importtime", "-c", "import session_watcher.hooks.statusline"])
    assert proc.returncode == 0
    assert heavy_in(imported(proc.stderr.decode())) == []
    t = tmp_path / "sl.jsonl"
    shutil.copy(TRANSCRIPTS / "short.jsonl", t)
    hook("Stop", payload("sl", t))
    p = {"session_id": "sl", "transcript_path": str(t), "model": {"id": "claude-opus-4-6", "display_name": "Opus"},
         "context_window": {"context_window_size": 200000}}
    assert statusline(p).returncode == 0  # first run: caches the config
    proc = run([sys.executable, "-X", "importtime", "-c", "from session_watcher.hooks.statusline import main; main()"],
               stdin=json.dumps(p).encode())
    assert proc.returncode == 0
    assert proc.stdout.decode().strip()
    names = imported(proc.stderr.decode())
    assert "session_watcher.core.render" in names
    assert heavy_in(names) == []


def test_replay_missing_file_is_one_line_exit_1(tmp_path: Path) -> None:
    proc = sw("replay", str(tmp_path / "nope.jsonl"))
    assert proc.returncode == 1
    assert proc.stdout == b""
    err = proc.stderr.decode()
    err = one_message(err)
    assert "nope.jsonl" in err


def test_status_without_sessions_is_one_line_exit_1() -> None:
    proc = sw("status")
    assert proc.returncode == 1
    assert one_message(proc.stderr.decode())


@pytest.mark.parametrize("bad_id", ["../etc", "x" * 200])
def test_status_bad_session_id(bad_id: str) -> None:
    proc = sw("status", "--session", bad_id)
    assert proc.returncode == 1
    assert one_message(proc.stderr.decode())
    assert "Traceback" not in proc.stderr.decode()


def test_status_defaults_to_the_most_recent_session(tmp_path: Path) -> None:
    for sid, name in (("older", "short.jsonl"), ("newer", "subagent.jsonl")):
        t = tmp_path / name
        shutil.copy(TRANSCRIPTS / name, t)
        assert hook("Stop", payload(sid, t)).returncode == 0
    doc = json.loads(sw("status", "--json").stdout)
    assert doc["sessionId"] == "newer"
    assert doc["tokenUsage"] == oracle(TRANSCRIPTS / "subagent.jsonl")["main"]
    text = sw("status", "--session", "older")
    assert text.returncode == 0
    assert text.stdout.decode().strip()


def test_status_folds_lines_written_since_the_last_hook(tmp_path: Path) -> None:
    t = tmp_path / "grow.jsonl"
    data = (TRANSCRIPTS / "subagent.jsonl").read_bytes()
    first = data[: len(data) // 3].rsplit(b"\n", 1)[0] + b"\n"
    t.write_bytes(first)
    hook("Stop", payload("grow", t))
    t.write_bytes(data)
    doc = json.loads(sw("status", "--session", "grow", "--json").stdout)
    assert doc["tokenUsage"] == oracle(data)["main"]
    assert doc["tokenUsage"]["calls"] > oracle(first)["main"]["calls"]


def test_status_leaves_the_state_as_the_hooks_wrote_it_when_nothing_is_new(tmp_path: Path) -> None:
    """`doctor` says when a hook last wrote a state (is it firing?): a `status` that read nothing new
    saved the state all the same, and doctor then said "last hook wrote 0 s ago". Lines written since
    the last hook are still folded and saved."""
    from session_watcher.base import paths

    t = tmp_path / "s.jsonl"
    data = (TRANSCRIPTS / "subagent.jsonl").read_bytes()
    t.write_bytes(data[: len(data) // 3].rsplit(b"\n", 1)[0] + b"\n")
    assert hook("Stop", payload("quiet", t)).returncode == 0
    state = Path(paths.sessions_dir()) / "quiet.json"
    hour_ago = state.stat().st_mtime - 3600
    os.utime(state, (hour_ago, hour_ago))
    before = state.read_bytes()
    assert sw("status", "quiet").returncode == 0
    assert (state.read_bytes(), state.stat().st_mtime) == (before, hour_ago)
    said = sw("doctor", env={**os.environ, "COLUMNS": "200"}).stdout.decode()
    assert re.search(r"last hook wrote 6[01] min ago \(quiet\)", said), said
    t.write_bytes(data)  # the session went on; no hook ran since
    doc = json.loads(sw("status", "quiet", "--json").stdout)
    assert doc["tokenUsage"] == oracle(data)["main"]
    assert state.stat().st_mtime > hour_ago
    assert json.loads(state.read_bytes())["cursor"]["offset"] == len(data)


def test_replay_text_and_doctor_run() -> None:
    proc = sw("replay", str(TRANSCRIPTS / "short.jsonl"))
    assert proc.returncode == 0
    assert proc.stdout.decode().strip()
    # before any alert, `replay` and `status` say when one can come by the floors the session's config
    # sets for the gate (the sentence left them out)
    config = Path(os.environ["SESSION_WATCHER_HOME"]) / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("gate_min_calls = 20\nadvice_min_usd = 0.5\n")
    for cmd in ("replay", "status"):
        said = " ".join(sw(cmd, str(TRANSCRIPTS / "short.jsonl")).stdout.decode().split())
        assert ("once 20 calls have come since the session's start or its last compaction, and if a restart "
                "then saves $0.50 or more and 5 % or more of those calls' cache cost)") in said, (cmd, said)
    doc = sw("doctor")
    assert doc.returncode in (0, 1)
    assert doc.stdout.decode().strip()
    assert "Traceback" not in doc.stderr.decode()


def test_unknown_command_and_help() -> None:
    assert sw("frobnicate").returncode == 2
    # no command: what a user typing the name alone asks for, the help on stdout as `--help` prints it,
    # and 0 (it was 2, the exit of a command line that cannot work, with the help on stdout and nothing
    # on stderr: README's 2 is argparse's message on stderr)
    bare = sw()
    assert (bare.returncode, bare.stderr) == (0, b"")
    assert bare.stdout.decode().startswith("usage: session-watcher")
    help_ = sw("--help")
    assert help_.returncode == 0
    assert bare.stdout == help_.stdout
    for cmd in ("status", "replay", "config", "doctor", "hook", "statusline"):
        assert cmd in help_.stdout.decode()
    for verb, runs in (("install", "./install.sh in"), ("uninstall", "./install.sh --uninstall in")):
        got = sw(verb, "--agent", "codex")  # what a new user may try first: told where the installer is
        assert got.returncode == 2
        assert got.stdout == b""
        err = one_message(got.stderr.decode())  # wrapped within COLUMNS, the folder whole
        # named: this venv is pip's editable install of the repository (direct_url.json records it)
        assert f"session-watcher: {verb} is not a command: {runs} session-watcher's folder ({REPO}) does it" in err
        assert f"or `claude plugin {verb} session-watcher@session-watcher` for the Claude Code plugin" in err
    said = " ".join(help_.stdout.decode().split())
    assert "hook run as a Claude Code or Codex hook: `hook EVENT [AGENT]`" in said  # as `hook --help` says


def test_every_command_goes_through_the_one_handler(tmp_path: Path) -> None:
    """`report`, `report session` and `export` fail as `status` does: one line, exit 1 (a command line
    that cannot work, export's --since as any other bad value, is argparse's: exit 2); `notify` sends
    with the bad file left out, as an alert would be sent, and says so in the same one line."""
    from session_watcher.base import paths

    cfg = Path(paths.user_config_file())
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text("bp_amber = 'high'\n")
    for args in (("status",),
                 ("report", "session", str(tmp_path / "nope.jsonl"), "--html", str(tmp_path / "p.html")),
                 ("report", "--projects", str(tmp_path / "nope")),
                 ("export", "--otlp", "--projects", str(tmp_path / "nope"))):
        proc = sw(*args)
        err = proc.stderr.decode()
        assert proc.returncode == 1, (args, err)
        assert one_message(err).startswith("session-watcher: "), (args, err)
    notify = sw("notify", "--test", "--channel", "message")
    assert notify.returncode == 0, notify.stderr
    said = one_message(notify.stderr.decode())
    assert "key 'bp_amber': expected a number" in said
    assert said.endswith("the file is left out (none of its settings apply): `session-watcher config show` says more")


def test_a_reader_that_leaves_ends_the_command_quietly() -> None:
    """stdout a pipe whose reader is already gone: no traceback, no message, killed by SIGPIPE as
    coreutils are (tests/test_reader_gone.py: every command, both launchers)."""
    import subprocess

    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run([str(Path(sys.executable).parent / "session-watcher"), "replay",
                               str(TRANSCRIPTS / "short.jsonl"), "--json"],
                              stdout=write, stderr=subprocess.PIPE, timeout=60, check=False)
    finally:
        os.close(write)
    assert (proc.returncode, proc.stderr) == (-13, b"")


def test_a_command_imports_its_own_module_only() -> None:
    """The parser tree holds the command being run: `status` loads neither the backtest nor the
    notifier's sender (3.8 and 5.2 ms of imports), and `--version` none of the commands' modules."""
    from session_watcher.cli import COMMANDS

    modules = {module for module, _ in COMMANDS.values()}
    for args, own in ((["status", "--help"], {"session_watcher.cli.commands"}), (["--version"], set())):
        code = ("import sys\nfrom session_watcher.cli import main\ntry:\n    main(sys.argv[1:])\n"
                "except SystemExit:\n    pass\nprint(*sorted(sys.modules), file=sys.stderr)\n")
        proc = run([sys.executable, "-c", code, *args])
        assert proc.returncode == 0, proc.stderr
        names = set(proc.stderr.decode().split())
        assert names & modules == own, args
    assert "usage: session-watcher status" in sw("status", "--help").stdout.decode()
    listed = sw("--help").stdout.decode()
    assert all(f"    {name}" in listed for name in COMMANDS)


def test_each_command_s_module_adds_it() -> None:
    """COMMANDS names, for each command, the module whose `add_parser` adds it and its `func`."""
    import argparse

    from session_watcher.cli import COMMANDS, build_parser

    for name in COMMANDS:
        parser = build_parser(name)
        subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        assert name in subs.choices, name
        ns = parser.parse_args([name, *{"notify": ["--test"], "export": ["--otlp"]}.get(name, [])])
        assert callable(ns.func), name


def test_a_warm_report_loads_no_parser(tmp_path: Path) -> None:
    """A warm report (nothing changed since the index read it) reads no transcript, so it imports
    neither the report's parser nor msgspec (62 -> 51 ms of CPU over 252 MB of real sessions); a
    cold one over the same folder does."""
    projects = tmp_path / "projects" / "-home-u-proj"
    projects.mkdir(parents=True)
    for name in ("258c7280-ae70-4798-800f-63464d01a85d.jsonl", "short.jsonl"):
        shutil.copy(TRANSCRIPTS / name, projects / name)
    code = ("import sys\nfrom session_watcher.cli import main\nrc = main(sys.argv[1:])\n"
            "print(rc, *sorted(sys.modules), file=sys.stderr)\n")
    args = ["report", "--json", "--projects", str(tmp_path / "projects")]
    cold, warm = (run([sys.executable, "-c", code, *args]) for _ in range(2))
    for proc in (cold, warm):
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["sessions"]
    cold_names, warm_names = (set(p.stderr.decode().split()) for p in (cold, warm))
    assert {"session_watcher.reports.parse", "msgspec"} <= cold_names
    assert not {"session_watcher.reports.parse", "msgspec", "session_watcher.agents.claude_code.records"} & warm_names
    assert json.loads(warm.stdout)["index"]["skipped"] == 2


def test_a_trace_to_a_missing_folder_names_the_file_asked_for() -> None:
    """`replay X --trace /nonexistent/t.jsonl`: the error names that file, never our temp file beside it
    (as `report --html` says it; a folder there: tests/test_sessions.py)."""
    proc = sw("replay", str(TRANSCRIPTS / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"), "--trace",
              "/nonexistent/t.jsonl")
    assert proc.returncode == 1
    assert proc.stderr.decode() == "session-watcher: cannot write /nonexistent/t.jsonl: No such file or directory\n"


def test_a_misspelt_option_gets_the_commands_own_usage() -> None:
    """`status --sesion 6878`: status's error, then its usage, not the top level's (what is wrong
    first, as every message of the CLI: argparse put it last, on a line however long)."""
    proc = sw("status", "--sesion", "6878")
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert err.startswith("session-watcher status: error: unrecognized arguments: --sesion\n")
    assert "\nusage: session-watcher status [-h]" in err
    nested = sw("config", "show", "--bogus").stderr.decode()
    assert nested.startswith("session-watcher config show: error: unrecognized arguments: --bogus\n")
    assert "\nusage: session-watcher config show" in nested



def test_every_command_description_reads_as_sentences(capsys: pytest.CaptureFixture[str]) -> None:
    """No sentence of a command's `--help` text starts in lower case (the session's naming rule used
    to be glued after a full stop as "... with it. a session: its id")."""
    from session_watcher import cli

    for name in cli.COMMANDS:
        with pytest.raises(SystemExit):
            cli.build_parser(name).parse_args([name, "--help"])
        text = capsys.readouterr().out
        description = " ".join(text.split("\n\n")[1].split())  # after the usage lines
        assert not re.search(r"[.!?] [a-z]", description), (name, description)


def test_hook_and_statusline_say_what_they_are_to_a_person() -> None:
    """`statusline --help` printed a status line ("○ session-watcher: no session"), `hook --help`
    nothing; run at a terminal (stdin a tty: a person, not the agent, which pipes its JSON in) both
    waited for input with no word. Now `--help` says what each is for, and a terminal's stdin gets
    the same on stderr, exit 2, at once. The agent's runs (a pipe) are as before."""
    import pty
    import subprocess

    from tests.oracle import SW

    for command in ("statusline", "hook"):
        asked = sw(command, "--help")
        assert asked.returncode == 0, asked.stderr
        assert asked.stdout.decode().startswith(f"usage: session-watcher {command}"), asked.stdout
        assert "session-watcher status" in asked.stdout.decode()
        primary, secondary = pty.openpty()
        try:
            got = subprocess.run([str(SW), command, *(["Stop"] if command == "hook" else [])], stdin=secondary,
                                 capture_output=True, timeout=60, check=False)
        finally:
            os.close(primary)
            os.close(secondary)
        assert (got.returncode, got.stdout) == (2, b""), got
        assert got.stderr.decode().startswith(f"usage: session-watcher {command}"), got.stderr
    for command in ("statusline", "hook"):  # within COLUMNS, as every command's text (README); 80 unset
        for width, widest in ((40, 40), (120, 120), (None, 80)):
            env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
            said = sw(command, "--help", env=env if width is None else {**env, "COLUMNS": str(width)}).stdout
            longest = max(map(len, said.decode().splitlines()))
            assert widest - 12 < longest <= widest, (width, said.decode())
    piped = sw("statusline", stdin=b"{}")
    assert (piped.returncode, piped.stdout) == (0, "○ session-watcher: no session\n".encode())
    assert sw("hook", "Stop", stdin=b"{}").returncode == 0


def test_statusline_help_says_what_each_option_does_as_the_doc_does() -> None:
    """`statusline --help` showed `--with 'YOUR COMMAND'` and `--verbose` in its usage line with no
    word of what either does. Now each has a line of its own saying it, and docs/statusline.md says
    each in the same words (backticks aside), so the two cannot drift apart."""
    said = sw("statusline", "--help", env={**os.environ, "COLUMNS": "200"}).stdout.decode()
    rows = {line.split()[0]: " ".join(line.split("  ")[-1].split()) for line in said.splitlines()
            if line.startswith("  --")}
    assert set(rows) == {"--with", "--verbose"}, said
    assert "above ours" in rows["--with"], said
    assert "same input" in rows["--with"], said
    assert "bill premium" in rows["--verbose"], said
    assert "sweet spot" in rows["--verbose"], said
    doc = " ".join((REPO / "docs" / "statusline.md").read_text().replace("`", "").split())
    for words in rows.values():
        assert words in doc, words


@pytest.mark.parametrize("stdin", ["/dev/null", "a file", "closed"])
def test_hook_and_statusline_are_unchanged_on_any_stdin_but_a_terminal(tmp_path: Path, stdin: str) -> None:
    """Only a terminal on stdin makes `hook` / `statusline` say what they are (exit 2): stdin at
    /dev/null, a file, or closed, as an agent might leave it, the hook exits 0 saying nothing and the
    status line prints its one line and exits 0, both the command and the launchers Claude Code runs,
    and nothing is logged: no payload is no error. The status line with stdin closed used to end in a
    traceback (exit 1); the hook logged one at every run (`sys.stdin` is None)."""
    import subprocess

    from tests.oracle import SW, launcher

    payload = tmp_path / "payload.json"
    payload.write_text("{}")
    where = {"/dev/null": "</dev/null", "a file": f"<{shlex.quote(str(payload))}", "closed": "<&-"}[stdin]
    for kind, argv in (("statusline", [str(SW), "statusline"]), ("statusline", launcher("statusline")),
                       ("hook", [str(SW), "hook", "Stop"]), ("hook", launcher("hook", "Stop"))):
        got = subprocess.run(["/bin/sh", "-c", f"exec {shlex.join(argv)} {where}"], capture_output=True, timeout=60,
                             check=False)
        assert got.returncode == 0, (argv, got)
        assert got.stderr == b"", (argv, got)
        if kind == "hook":
            assert got.stdout == b"", (argv, got)
        else:
            assert got.stdout.decode().count("\n") == 1, (argv, got)
            assert got.stdout.decode().startswith("○ session-watcher"), (argv, got)
        log = Path(os.environ["SESSION_WATCHER_HOME"]) / "log" / "session-watcher.log"
        assert not log.exists() or log.read_text() == "", (argv, log.read_text())


def test_the_status_line_with_standard_output_closed_exits_0_and_logs_nothing() -> None:
    """The status line started with standard output closed (`>&-`) folds as ever and exits 0 with
    nothing said or logged, as the hook does; it ended in an AttributeError traceback on stderr,
    exit 1 (`sys.stdout` is None)."""
    import subprocess

    from tests.oracle import SW, launcher

    log = Path(os.environ["SESSION_WATCHER_HOME"]) / "log" / "session-watcher.log"
    for argv in ([str(SW), "statusline"], launcher("statusline")):
        got = subprocess.run(["/bin/sh", "-c", f"exec {shlex.join(argv)} >&-"], input=b"{}", capture_output=True,
                             timeout=60, check=False)
        assert (got.returncode, got.stdout, got.stderr) == (0, b"", b""), (argv, got)
        assert not log.exists() or log.read_text() == "", (argv, log.read_text())


def test_a_closed_standard_output_is_one_line_exit_1(tmp_path: Path) -> None:
    """A command started with standard output closed (`>&-`) says so in one line, exit 1, and logs
    nothing: `sys.stdout` is None then, and every command that prints (the handler's flush too)
    ended in an AttributeError, exit 3, a traceback logged; `report --html -` among them. The page
    that cannot be written to a full standard output names it, not a file `-`."""
    import subprocess

    from tests.oracle import SW

    transcript = str(TRANSCRIPTS / "short.jsonl")
    log = Path(os.environ["SESSION_WATCHER_HOME"]) / "log" / "session-watcher.log"
    for args, to in ((("config", "show"), ">&-"), (("replay", transcript), ">&-"),
                     (("report", "--projects", str(tmp_path), "--html", "-"), ">&-"),
                     (("report", "session", transcript, "--html", "-"), ">&-"),
                     (("report", "session", transcript, "--html", "-"), ">/dev/full")):
        got = subprocess.run(["/bin/sh", "-c", f"exec {shlex.join([str(SW), *args])} {to}"], capture_output=True,
                             timeout=120, check=False)
        err = got.stderr.decode()
        assert (got.returncode, err.count("\n")) == (1, 1), (args, got)
        if to == ">&-":
            assert err.endswith("standard output is closed\n"), (args, err)
        else:
            assert "cannot write to standard output: No space left on device" in err, err
        assert not log.exists() or "Traceback" not in log.read_text(), (args, log.read_text())


def test_a_bad_option_value_exits_2_on_every_command(tmp_path: Path) -> None:
    """README: 2 for a command line that cannot work, one line on stderr (argparse's usage and error,
    or a UsageError's line). A value of an option that the command, not argparse, refused exited 1
    (backtest --set, export --since and --otlp URL, two sessions named at once) or 3 (report session
    --port 99999: the bind's OverflowError)."""
    transcript = str(TRANSCRIPTS / "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")
    for args, why in (
        (("backtest", "--set", "nosuch=1", transcript), "unknown key 'nosuch'"),
        (("backtest", "--set", "bp_amber", transcript), "expected KEY=VALUE"),
        (("backtest", "--set", "bp_amber=abc", transcript), "key 'bp_amber'"),
        # export's --since and --otlp URL: argparse's usage and error, as report's --since (they had no usage)
        (("export", "--otlp", "--since", "garbage", "--dry-run"), "argument --since: 'garbage' is not a date"),
        (("export", "--otlp", "ftp://127.0.0.1:4318", "--dry-run"), "argument --otlp: the OTLP endpoint 'ftp://"),
        (("export", "--otlp", "http://127.0.0.1:port", "--dry-run"), "is not a usable URL"),
        (("export", "--otlp", "notaurl"), "argument --otlp: the OTLP endpoint 'notaurl' is not an http://"),
        (("status", "--session", "abcdef", transcript), "name one session, not 2"),
        (("health", "--session", "abcdef", transcript), "name one session, not 2"),
        (("report", "--since", "garbage"), "argument --since"),  # argparse's, as before
        (("report", "session", transcript, "--serve", "--port", "99999"), "99999 is not a port"),
        (("report", "session", transcript, "--serve", "--port", "-1"), "-1 is not a port"),
        # a negative count was read as 0 (never stop)
        (("report", "session", transcript, "--serve", "--idle-minutes", "-5"), "-5 is not a number of minutes"),
        (("report", "session", transcript, "--serve", "--idle-minutes", "nan"), "nan is not a number of minutes"),
        # `config set` of an unknown key or a value the key does not take exited 1
        (("config", "set", "nosuch", "1"), "unknown key 'nosuch'"),
        (("config", "set", "bp_amber", "abc"), "key 'bp_amber'"),
        (("config", "set", "bp_amber", "5"), "bp_red must be at least bp_amber"),
        (("config", "set", "--project", str(tmp_path), "guard", "off"), "may only be set in your own config"),
    ):
        got = sw(*args)
        err = got.stderr.decode()
        assert got.returncode == 2, (args, got.returncode, err)
        assert why in " ".join(err.split()), (args, err)  # wrapped within COLUMNS
        assert "Traceback" not in err
        if "argument " in why:
            assert f"usage: session-watcher {args[0]} " in err, (args, err)
        assert got.stdout == b"", (args, got.stdout)
    # a configured endpoint that cannot be used is the config's, not the command line's: 1, as before
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://127.0.0.1:4318"}
    assert sw("export", "--otlp", "--dry-run", env=env).returncode == 1


def test_notify_test_reads_as_a_real_gate_alert() -> None:
    """`notify --test` shows what a gate alert says now: the saving in dollars over its horizon, and
    how (the tokens not read at this session's pace); its sample had no horizon and read as an older
    alert's ("Restarting now saves about 612k tokens ($0.31) of cache reads.")."""
    proc = sw("notify", "--test", "--channel", "message", env={**os.environ, "COLUMNS": "1000"})
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert "session-watcher: Test: This session now costs more than a fresh start\n" in out
    assert ("Restarting now saves $0.31 over the next ~6 calls (at this session's pace: 648k fewer tokens read, "
            "less the restart's own cost: 612k net at the cache-read price).") in out


def test_notify_test_reaching_no_channel_says_the_next_step_on_stderr(tmp_path: Path) -> None:
    """Exit 1 comes with one message on stderr (README): `notify --test` that reached no channel exited
    1 with the channels' lines on stdout and nothing on stderr, no next step. Without a session bus
    the desktop cannot be reached: asked for alone, the test says the alerts still have the fallback;
    with no fallback (`notify.fallback = "none"`), that an alert would not show, and how to make one."""
    env = {k: v for k, v in os.environ.items() if k not in ("DBUS_SESSION_BUS_ADDRESS", "SSH_CONNECTION")}
    env.update({"XDG_RUNTIME_DIR": str(tmp_path), "SESSION_WATCHER_HOME": str(tmp_path / "home"),
                "COLUMNS": "1000"})
    alone = sw("notify", "--test", "--channel", "desktop", env=env)
    assert alone.returncode == 1
    assert alone.stdout.decode() == "desktop: not reachable (no session bus)\n"
    assert alone.stderr.decode() == ("session-watcher: the desktop channel did not reach you (why: above); "
                                     "`session-watcher notify` tries every channel an alert would use, "
                                     "the fallback included\n")
    config = tmp_path / "home" / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[notify]\nchannels = ["desktop"]\nfallback = "none"\n')
    none = sw("notify", "--test", env=env)
    assert none.returncode == 1
    assert none.stdout.decode() == "desktop: not reachable (no session bus)\n"
    assert one_message(none.stderr.decode()).startswith("session-watcher: no channel reached you, so an alert "
                                                         "would not show (why: above); `session-watcher config "
                                                         "set notify.fallback message`")
    config.write_text('[notify]\nchannels = ["desktop"]\nfallback = "message"\n')
    assert sw("notify", "--test", env=env).returncode == 0


def test_export_and_notify_alone_do_the_one_thing_each_does(tmp_path: Path) -> None:
    """`export` without `--otlp` stopped at "the following arguments are required: --otlp" (exit 2)
    with a collector in the config, and `notify` without `--test` at "required: --test": each has one
    thing to do, and now the bare command does it, as the flag does (the flag kept); the help says so."""
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text('[otlp]\nendpoint = "http://127.0.0.1:4318"\n')
    env = {**os.environ, "SESSION_WATCHER_HOME": str(home), "COLUMNS": "1000"}
    one = tmp_path / "one"
    one.mkdir()
    shutil.copy(TRANSCRIPTS / "short.jsonl", one / "short.jsonl")
    bare = sw("export", "--dry-run", "--projects", str(one), env=env)
    assert bare.returncode == 0, bare.stderr
    flagged = sw("export", "--otlp", "--dry-run", "--projects", str(one), env=env)
    def timeless(doc: object) -> object:  # the request as sent, less the clock's stamps
        if isinstance(doc, dict):
            return {k: timeless(v) for k, v in doc.items() if "UnixNano" not in k}
        return [timeless(v) for v in doc] if isinstance(doc, list) else doc

    assert json.loads(bare.stdout)["resourceMetrics"]
    assert timeless(json.loads(bare.stdout)) == timeless(json.loads(flagged.stdout))
    assert "left out, or without URL: the configured one" in " ".join(sw("export", "--help", env=env).stdout.decode()
                                                                        .split())
    alone = sw("notify", "--channel", "message", env=env)
    assert alone.returncode == 0, alone.stderr
    assert "session-watcher: Test: This session now costs more than a fresh start" in alone.stdout.decode()
    assert alone.stdout == sw("notify", "--test", "--channel", "message", env=env).stdout
    said = sw("notify", "--help", env=env).stdout.decode()
    assert said.startswith("usage: session-watcher notify [-h] [--test]"), said
    assert "what `notify` alone does" in said


def test_config_unset_takes_a_key_out_and_its_default_counts_again(tmp_path: Path) -> None:
    """`config set` had no way back: a user who tried a value could not return to the default but by
    editing the file. `config unset KEY` takes it out (comments kept, a table left empty gone) and
    says what `show` then has; a key the file does not set changes nothing; an unknown key, or a
    removal that breaks the rule between two keys, is a command line that cannot work (exit 2, the
    file as it was)."""
    from session_watcher.base import paths

    wide = {**os.environ, "COLUMNS": "1000"}
    cfg = Path(paths.user_config_file())
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text("# mine\nguard = \"warn\"\nbp_red = 0.5\nbp_amber = 0.3\n\n[notify]\nremind_min = 5  # quiet\n")
    got = sw("config", "unset", "notify.remind_min", env=wide)
    assert (got.returncode, got.stderr) == (0, b"")
    assert got.stdout.decode() == f"notify.remind_min = 10  (removed from {cfg})\n"
    assert cfg.read_text() == "# mine\nguard = \"warn\"\nbp_red = 0.5\nbp_amber = 0.3\n\n"
    got = sw("config", "unset", "notify.remind_min", env=wide)
    assert got.stdout.decode() == f"notify.remind_min = 10  ({cfg} did not set it: unchanged)\n"
    before = cfg.read_text()
    for args, why in ((("bp_red",), "bp_red must be at least bp_amber"), (("remind_min",), "did you mean"),
                      (("nosuch",), "unknown key 'nosuch'")):
        got = sw("config", "unset", *args)
        assert got.returncode == 2, (args, got.stderr)
        assert why in one_message(got.stderr.decode())
        assert got.stdout == b""
        assert cfg.read_text() == before
    assert sw("config", "unset", "bp_amber").returncode == 0
    got = sw("config", "unset", "bp_red", env=wide)
    assert got.stdout.decode() == f"bp_red = 0.25  (removed from {cfg})\n"
    assert sw("config", "set", "cRatio", "20").returncode == 0
    got = sw("config", "unset", "cRatio", env=wide)
    assert got.stdout.decode() == f"cRatio not set (worked out at run time)  (removed from {cfg})\n"
    assert cfg.read_text() == "# mine\nguard = \"warn\"\n\n"
    shown = sw("config", "show", "--json")
    assert json.loads(shown.stdout)["effective"]["guard"] == "warn"


def test_config_unset_finds_a_price_row_whatever_the_case_of_its_model_id() -> None:
    """The config reads a model's id in lower case, so `[prices."My-Model"]` prices my-model and
    `config show` lists it; `config unset prices.My-Model` (or `prices.my-model`) said the file did
    not set it and left it there. Every row of that id goes, in whatever case it was written; the
    other rows stay."""
    from session_watcher.base import paths

    wide = {**os.environ, "COLUMNS": "1000"}
    cfg = Path(paths.user_config_file())
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text('[prices."My-Model"]\ninput = 1.0\ncache_read = 0.2\n\n[prices.other]\ninput = 2.0\n')
    got = sw("config", "unset", "prices.my-model.cache_read", env=wide)
    assert (got.returncode, got.stderr) == (0, b"")
    assert got.stdout.decode().endswith(f"(removed from {cfg})\n"), got.stdout
    assert cfg.read_text() == '[prices."My-Model"]\ninput = 1.0\n\n[prices.other]\ninput = 2.0\n'
    got = sw("config", "unset", "prices.My-Model", env=wide)
    assert (got.returncode, got.stderr) == (0, b"")
    assert got.stdout.decode() == (f"prices.My-Model not set (my-model has no price: the built-in tables do not "
                                   f"know it)  (removed from {cfg})\n")
    assert cfg.read_text() == "[prices.other]\ninput = 2.0\n"
    assert "my-model" not in json.loads(sw("config", "show", "--json").stdout)["effective"].get("prices", {})


def test_config_unset_of_a_price_says_what_prices_the_calls_instead() -> None:
    """`config unset prices.MODEL.FIELD` said "(the built-in prices count)", where a cache field left
    out is the built-in ratio applied to the row's own input price (core.prices): said so, with the
    dollars it makes; `input` or the whole row left out, the table's price."""
    from session_watcher.base import paths

    wide = {**os.environ, "COLUMNS": "1000"}
    cfg = Path(paths.user_config_file())
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text('[prices."claude-opus-5"]\ninput = 6.0\ncache_read = 1.0\n')
    said = sw("config", "unset", "prices.claude-opus-5.cache_read", env=wide).stdout.decode()
    assert said.startswith("prices.claude-opus-5.cache_read not set (the built-in ratio, 0.1 x the input price "
                           "$6/MTok: $0.6/MTok)  (removed from "), said
    said = sw("config", "get", "prices.claude-opus-5.cache_write_1h", env=wide).stdout.decode()
    assert "not set (the built-in ratio, 2 x the input price $6/MTok: $12/MTok)" in said, said
    said = sw("config", "unset", "prices.claude-opus-5.input", env=wide).stdout.decode()
    assert "prices.claude-opus-5.input not set (the built-in input price, $5/MTok)  (removed" in said, said
    said = sw("config", "get", "prices.claude-opus-5", env=wide).stdout.decode()
    assert said.startswith("prices.claude-opus-5 not set (the built-in prices, input $5/MTok)"), said


def test_config_get_and_unset_of_a_price_key_are_strict_and_say_what_applies_once() -> None:
    """`config get prices.claude-opus-4-6.output` read `claude-opus-4-6.output` as a model id, which
    the tables priced as claude-opus-4's ("not set (the built-in price, input $15/MTok)", exit 0), and
    so did `.outputt` and `.input.extra`; `config unset prices.M.input` said "the built-in input
    price, input $5/MTok". A last part that is no price field is refused (exit 2, nothing written),
    a model id with a dot and a digit (gpt-5.5) or in quotes still is one; what now applies is said
    once, and whose it is: a shorter id's row of yours prices the longer id."""
    from session_watcher.base import paths

    wide = {**os.environ, "COLUMNS": "1000"}
    cfg = Path(paths.user_config_file())
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text('[prices."claude-opus-4-6"]\ninput = 6.0\n')
    fields = "input, cache_read, cache_write, cache_write_1h"
    for verb in ("get", "unset", "set"):
        for key, field in (("prices.claude-opus-4-6.output", "'output'"),
                           ("prices.claude-opus-4-6.outputt", "'outputt'"),
                           ("prices.claude-opus-4-6.input.extra", "'extra'"), ('prices."gpt-5.5".output', "'output'")):
            got = sw("config", verb, key, *(["1"] if verb == "set" else []), env=wide)
            assert (got.returncode, got.stdout) == (2, b""), (verb, key, got)
            assert f"key '{key}': unknown field {field} (a price row's fields are {fields}" in one_message(
                got.stderr.decode()), got.stderr
        assert cfg.read_text() == '[prices."claude-opus-4-6"]\ninput = 6.0\n'
        for key in ('prices."a', 'prices."a.input', 'prices.a"', 'prices.a".input', 'prices."gpt-5.5'):
            got = sw("config", verb, key, *(["1"] if verb == "set" else []), env=wide)  # read as model `a` before
            assert (got.returncode, got.stdout) == (2, b""), (verb, key, got)
            assert f"key '{key}': a quote without its pair" in one_message(got.stderr.decode()), got.stderr
        assert cfg.read_text() == '[prices."claude-opus-4-6"]\ninput = 6.0\n'
    for key, said in (("prices.gpt-5.5", "not set (the built-in prices, input $5/MTok)  (the default)"),
                      ('prices."gpt-5.5".input', "not set (the built-in input price, $5/MTok)  (the default)"),
                      ("prices.gpt-5.6-sol.cache_read", "not set (the built-in ratio, 0.1 x the input price $4/MTok: "
                                                        "$0.4/MTok)  (the default)"),
                      ("prices.claude-opus-4-6.input", f"= 6.0  (your config, {cfg})")):
        got = sw("config", "get", key, env=wide)
        assert (got.returncode, got.stdout.decode()) == (0, f"{key} {said}\n"), got
    got = sw("config", "unset", "prices.claude-opus-4-6.input", env=wide)
    assert got.stdout.decode() == f"prices.claude-opus-4-6.input not set (the built-in input price, $5/MTok)  " \
                                  f"(removed from {cfg})\n"
    assert got.stdout.decode().count("input") == 2  # the key's and the price's: said once
    cfg.write_text('[prices.claude-opus]\ninput = 7.0\n\n[prices."claude-opus-4-6"]\ninput = 6.0\n')
    got = sw("config", "unset", "prices.claude-opus-4-6", env=wide)
    assert got.stdout.decode() == f"prices.claude-opus-4-6 not set (your prices for claude-opus, input $7/MTok)  " \
                                  f"(removed from {cfg})\n"
    got = sw("config", "get", "prices.claude-opus-4-6.input", env=wide)
    assert got.stdout.decode() == "prices.claude-opus-4-6.input not set (your input price for claude-opus, $7/MTok)\n"


def test_an_unset_input_says_whose_price_applies_by_the_row_that_prices_the_model() -> None:
    """core.prices takes the longest row of yours whose id is the model's or a prefix of it; where that
    row has no `input`, the tables' input price applies, not a shorter row's. `config unset` of the
    longer row's input said "your input price for claude-opus, $5/MTok": $5 is the built-in price,
    claude-opus's row says $7. A model only the shorter row prices still names it."""
    from session_watcher.base import paths

    wide = {**os.environ, "COLUMNS": "1000"}
    cfg = Path(paths.user_config_file())
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text('[prices.claude-opus]\ninput = 7.0\n\n[prices."claude-opus-4-6"]\ninput = 6.0\ncache_read = 0.5\n')
    got = sw("config", "unset", "prices.claude-opus-4-6.input", env=wide)
    assert got.stdout.decode() == f"prices.claude-opus-4-6.input not set (the built-in input price, $5/MTok)  " \
                                  f"(removed from {cfg})\n", got
    got = sw("config", "get", "prices.claude-opus-4-6.input", env=wide)
    assert got.stdout.decode() == "prices.claude-opus-4-6.input not set (the built-in input price, $5/MTok)  " \
                                  "(the default)\n", got
    got = sw("config", "get", "prices.claude-opus-4-7", env=wide)
    assert got.stdout.decode() == "prices.claude-opus-4-7 not set (your prices for claude-opus, input $7/MTok)\n", got


def test_config_set_and_unset_say_what_they_did_within_the_terminals_width(tmp_path: Path) -> None:
    """What `config set` and `config unset` say ("notify.remind_min = 10  (removed from
    ~/.config/session-watcher/config.toml)", 83 columns on a new user's machine) wraps at spaces
    within COLUMNS as every command's text, the file's path whole (a folder with a space in it too)."""
    project = tmp_path / "a project with spaces"
    project.mkdir()
    target = project / ".claude" / "session-watcher.toml"
    env = {**os.environ, "COLUMNS": "40", "SESSION_WATCHER_CODEX": str(tmp_path / "no-codex")}  # no agent but ours
    for args, said in ((("set", "gate_min_calls", "12"),
                        "gate_min_calls = 12  (a new folder: no recent session ran here, and Claude Code's is "
                        f"the default; in {target})"),
                       (("unset", "gate_min_calls"), f"gate_min_calls = 10  (removed from {target})")):
        got = sw("config", *args, "--project", str(project), env=env)
        assert (got.returncode, got.stderr) == (0, b""), args
        lines = got.stdout.decode().splitlines()
        assert len(lines) > 1, lines
        assert all(len(line) <= 40 or line == f"{target})" for line in lines), lines
        assert f"{target})" in lines, lines  # the path whole, on a line of its own
        assert " ".join(line.strip() for line in lines) == said


def test_config_get_says_a_keys_value_and_where_it_comes_from(tmp_path: Path) -> None:
    """`config get KEY` ended in argparse's "invalid choice". It prints the effective value and the
    layer it comes from: the default, your config, the project's (which wins key by key); `--json`
    the same for programs; an unknown key is a command line that cannot work (exit 2), as for
    `config unset`; a file left out is named, as `config show` does (exit 1)."""
    from session_watcher.base import paths

    wide = {**os.environ, "COLUMNS": "1000"}
    cfg = Path(paths.user_config_file())
    cfg.parent.mkdir(parents=True, exist_ok=True)
    before = cfg.read_text() if cfg.exists() else None
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    (project / ".git").mkdir()
    mine = project / ".claude" / "session-watcher.toml"
    try:
        cfg.write_text('bp_amber = 0.05\n\n[notify]\nremind_min = 5\n')
        mine.write_text('bp_amber = 0.2\n')

        def get(*args: str) -> str:
            got = sw("config", "get", *args, "--project", str(project), env=wide)
            assert (got.returncode, got.stderr) == (0, b""), got.stderr
            return got.stdout.decode()

        assert get("bp_red") == "bp_red = 0.25  (the default)\n"
        assert get("cRatio") == "cRatio not set (worked out at run time)  (the default)\n"
        assert get("notify.remind_min") == f"notify.remind_min = 5  (your config, {cfg})\n"
        assert get("bp_amber") == f"bp_amber = 0.2  (the project's config, {mine})\n"
        assert json.loads(get("bp_amber", "--json")) == {"key": "bp_amber", "value": 0.2, "source": "project",
                                                         "file": str(mine)}
        assert json.loads(get("notify.remind_min", "--json"))["source"] == "user"
        for args, why in ((("remind_min",), "did you mean 'notify.remind_min'"), (("nosuch",), "unknown key")):
            got = sw("config", "get", *args)
            assert got.returncode == 2, (args, got.stderr)
            assert why in got.stderr.decode()
            assert got.stdout == b""
        mine.write_text("bp_amber = [\n")  # not TOML: left out, named, the answer without it
        got = sw("config", "get", "bp_amber", "--project", str(project), env=wide)
        assert got.returncode == 1
        assert got.stdout.decode() == f"bp_amber = 0.05  (your config, {cfg})\n"
        assert str(mine) in got.stderr.decode()
    finally:
        if before is None:
            cfg.unlink()
        else:
            cfg.write_text(before)


def test_uninstall_names_the_folder_only_when_pip_recorded_one(tmp_path: Path) -> None:
    """Without a distribution of session-watcher to ask (the package on PYTHONPATH alone, no
    site-packages: no direct_url.json), `uninstall` keeps the words that name no folder."""
    import subprocess

    proc = subprocess.run([sys.executable, "-S", "-m", "session_watcher", "uninstall"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 2
    assert "./install.sh --uninstall in session-watcher's folder does it, for Claude Code" in one_message(proc.stderr)


def test_every_error_message_keeps_within_columns_its_paths_and_ids_whole() -> None:
    """README: every command's text keeps within COLUMNS, a path never cut; an error is one message
    on stderr, its first line `session-watcher...:`. `status nosuch` said 218 columns on one line,
    `report --since yesterday` argparse's 259; a path with a space (a folder named `My Home`) is
    one word where the message wraps."""
    import tempfile

    from tests.fuzz_synth import env_for, sw_home

    with tempfile.TemporaryDirectory(prefix="sw e") as short:  # short: a path may fill a line, never pass it
        root = Path(short) / "My Home"
        env = {**env_for(root), "COLUMNS": "80", "CODEX_HOME": str(root / "codex")}
        projects = root / "claude" / "projects"
        projects.mkdir(parents=True)
        transcript = str(root / "t.jsonl")
        shutil.copyfile(TRANSCRIPTS / "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl", transcript)
        junk = root / "not a transcript.jsonl"
        junk.write_bytes(b"hello\n")
        missing = str(root / "no such folder" / "out.html")
        bad_config = sw_home(root) / "config" / "config.toml"
        cases: list[tuple[tuple[str, ...], int, list[str]]] = [
            (("status", "nosuch"), 1, ["'nosuch'", str(projects)]),
            (("health", "abcdef0123"), 1, ["'abcdef0123'", str(projects)]),
            (("report", "--since", "yesterday"), 2, ["'yesterday'"]),
            (("export", "--otlp", "--since", "last week", "--dry-run"), 2, ["'last week'"]),
            (("config", "get", "nosuch.key"), 2, ["'nosuch.key'"]),
            (("config", "set", "bp_amber", "5"), 2, ["bp_amber"]),
            (("status", str(junk)), 1, [str(junk)]),
            (("replay", str(root / "gone.jsonl")), 1, [str(root / "gone.jsonl")]),
            (("report", "session", transcript, "--html", missing), 1, [missing]),
            (("report", "--html", missing), 1, [missing]),
            (("report", "--projects", str(root / "no such folder")), 1, [str(root / "no such folder")]),
            (("status", "--session", "abcdef", transcript), 2, ["'abcdef'"]),
            (("backtest", "--set", "nosuch=1", transcript), 2, ["'nosuch'"]),
            (("export", "--otlp", "ftp://127.0.0.1:4318", "--dry-run"), 2, ["'ftp://127.0.0.1:4318'"]),
            (("status", "--bogus"), 2, ["--bogus"]),
            (("config", "show", "--bogus"), 2, ["--bogus"]),
            (("install",), 2, ["./install.sh"]),
            (("nosuchcmd",), 2, ["'nosuchcmd'", "`session-watcher --help`"]),  # not the 12 commands' names
            (("config", "get", "bp_red"), 1, [str(bad_config)]),  # a file that cannot be used: named whole
        ]
        for args, rc, whole in cases:
            if args == ("config", "get", "bp_red"):
                bad_config.parent.mkdir(parents=True, exist_ok=True)
                bad_config.write_text("bp_red = [\n")
            got = sw(*args, env=env)
            err = got.stderr.decode()
            lines = err.splitlines()
            assert got.returncode == rc, (args, err)
            assert re.match(r"session-watcher( \w+)*: ", lines[0]), (args, err)
            assert max(map(len, lines)) <= 80, (args, err)
            for word in whole:  # each on one line: to be copied
                assert any(word in line for line in lines), (args, word, err)
            if rc == 2 and args[-1] == "--bogus":  # argparse's: what is wrong first, then the command's usage
                assert lines[-1].lstrip().startswith(("usage:", "[")), err
        said = sw("status", "nosuch", env={**env, "COLUMNS": "1000"}).stderr.decode()
        assert said.count("\n") == 1, said  # one line where it fits


def test_a_mistyped_command_is_named_and_the_usage_keeps_the_messages_width() -> None:
    """An unknown command is said without argparse's list of all 12 names; the name a typo was
    meant for is said instead, as that list showed it (`statu`: status). The usage after the message
    keeps the CLI's width too: COLUMNS=5 is read as 40 columns as everywhere (argparse's own read it
    as 3, one word a line); garbage in COLUMNS as 80."""
    env = {**os.environ, "COLUMNS": "5"}
    got = sw("statu", env=env)
    err = got.stderr.decode()
    assert got.returncode == 2, err
    said = " ".join(err.split())
    assert "'statu' is not a command (did you mean 'status'? `session-watcher --help` lists them)" in said, err
    assert "report" not in said  # not every command's name
    assert "did you mean" not in " ".join(sw("xyzzy", env=env).stderr.decode().split())
    for columns, width in (("5", 40), ("garbage", 80), ("-3", 80)):
        got = sw("status", "--bogus", env={**os.environ, "COLUMNS": columns})
        lines = got.stderr.decode().splitlines()
        assert got.returncode == 2, lines
        assert max(map(len, lines)) <= width, lines
        assert "[-h] [--session ID]" in got.stderr.decode(), lines  # argparse's own: a word a line at "5"


def test_a_config_file_s_misspelt_key_is_named_with_the_key_it_meant(tmp_path: Path) -> None:
    """A key misspelt in your config file (`bp_ambr`) was named with a list of every 31 keys and no
    hint, though `config set` of the same key named the one it meant: the file's own error names
    the known key spelt closest (a table's key too), and the list only where none is close."""
    env = {**os.environ, "SESSION_WATCHER_HOME": str(tmp_path / "sw"), "COLUMNS": "1000"}
    cfg = tmp_path / "sw" / "config" / "config.toml"
    assert sw("config", "path", env=env).stdout.decode().splitlines()[0].startswith(str(cfg))
    cfg.parent.mkdir(parents=True)
    for text, said in (("bp_ambr = 0.2\n", "unknown key 'bp_ambr' (did you mean 'bp_amber'? `config show` lists"),
                       ("[notify]\nremind_mn = 5\n", "'notify.remind_mn' (did you mean 'notify.remind_min'?"),
                       ("zzz = 1\n", "unknown key 'zzz' (known: include, exclude,")):
        cfg.write_text(text)
        for args in (("config", "show"), ("config", "get", "bp_red"), ("doctor",)):
            got = sw(*args, env=env)
            err = (got.stdout + got.stderr).decode()
            assert said in err, (args, err)
            assert ("known: " in err) == ("did you mean" not in said), err


def test_a_number_in_quotes_or_one_name_for_a_list_says_how_to_write_it(tmp_path: Path) -> None:
    """`notify_dwell = "3"` was refused with "expected a whole number ..., got '3'", which reads as a
    number: the error says it is a string and how a number is written; one channel where a list goes
    names the brackets. A value no quoting explains keeps the plain error."""
    env = {**os.environ, "SESSION_WATCHER_HOME": str(tmp_path / "sw"), "COLUMNS": "1000"}
    cfg = tmp_path / "sw" / "config" / "config.toml"
    cfg.parent.mkdir(parents=True)
    for text, said in (
        ('notify_dwell = "3"\n', "got '3', a string: a number is written without quotes (notify_dwell = 3) (left out"),
        ('bp_amber = "0.2"\n', "got '0.2', a string: a number is written without quotes (bp_amber = 0.2) (left out"),
        ('[notify]\nchannels = "desktop"\n', "got 'desktop', one name: a list is written in brackets "
                                             '(channels = ["desktop"]) (left out'),
        ('bp_amber = "abc"\n', "expected a number from 0.001 to 10, got 'abc' (left out"),
    ):
        cfg.write_text(text)
        got = sw("config", "show", env=env)
        assert got.returncode == 1
        assert said in got.stderr.decode(), got.stderr


def test_a_quoted_number_or_one_name_on_the_command_line_is_shown_as_the_command_line_takes_it(
        tmp_path: Path) -> None:
    """`config set notify.channels desktop` was told "(channels = ["desktop"])", a file's line, and
    `["desktop"]` typed unquoted is a shell pattern: `config set` and `backtest --set` name their own
    form, quoted; a number the key refuses unquoted too ("3.5" for a whole number) gets no example."""
    env = {**os.environ, "SESSION_WATCHER_HOME": str(tmp_path / "sw"), "COLUMNS": "1000"}
    got = sw("config", "set", "notify.channels", "desktop", env=env)
    assert got.returncode == 2
    assert ("got 'desktop', one name: a list is written in brackets (config set notify.channels '[\"desktop\"]')"
            in got.stderr.decode()), got.stderr
    got = sw("backtest", "--set", "notify.channels=desktop", env=env)
    assert got.returncode == 2
    assert "a list is written in brackets (--set 'notify.channels=[\"desktop\"]')" in got.stderr.decode(), got.stderr
    taken = sw("config", "set", "notify.channels", '["desktop"]', env=env)  # the example, as given, is taken
    assert taken.returncode == 0, taken.stderr
    cfg = tmp_path / "sw" / "config" / "config.toml"
    cfg.write_text('notify_dwell = "3.5"\n')
    got = sw("config", "show", env=env)
    assert got.returncode == 1
    assert "got '3.5', a string: a number is written without quotes (left out" in got.stderr.decode(), got.stderr


def test_version_answers_without_argparse_or_the_config() -> None:
    """`--version` says what the parser's `--version` says, and imports neither argparse nor the
    config (an empty report costs less than argparse's import: docs/benchmarks.md)."""
    code = ("import sys\nfrom session_watcher.cli import main\nrc = main(['--version'])\nsys.stdout.flush()\n"
            "print(rc, *sorted(sys.modules), file=sys.stderr)\n")
    proc = run([sys.executable, "-c", code])
    rc, *names = proc.stderr.decode().split()
    assert rc == "0"
    assert not {"argparse", "session_watcher.base.config", "tomllib"} & set(names)
    parsed = run([sys.executable, "-c", "from session_watcher.cli import build_parser\n"
                  "build_parser().parse_args(['--version'])"])
    assert proc.stdout == parsed.stdout == sw("--version").stdout
    assert parsed.stdout.startswith(b"session-watcher ")
