"""What the commands a client waits for import, module by module, through install.sh's launchers:
the status line drawn from the state as saved, the synchronous SessionStart hook with and without a
pending handoff, and a hook that folds. A module added to one of these paths fails here, so the
import diet (docs/benchmarks.md: each is measured against `python -I -c pass`) cannot regress
unnoticed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.oracle import REPO, TRANSCRIPTS, hook, launcher, payload, statusline
from tests.statefile import load_state, state_file

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

# beyond the bare interpreter (`python -I -S -c pass`): the package's face, its calls to the system
# without `os` (base/sysos.py: `posix`'s, with `_stat`, both built in; `os` and what it brings, 1.2 ms,
# are loaded by none of these runs), and __future__ (every module's `from __future__ import
# annotations` loads it once); not errno, which only a failure's code imports (a busy lock, a refused
# file, a write that cannot happen)
OS = {"_stat", "session_watcher", "__future__", "session_watcher.base", "session_watcher.base.sysos",
      "session_watcher.hooks", "session_watcher.hooks.finder",  # and the launchers' import finder
      "gc"}  # built in: the launchers set the collector's threshold (hooks/launchers.py)


def with_packages(names: set[str]) -> set[str]:
    """The modules and the packages they sit in (importing a module runs its package's __init__)."""
    return names | {name.rsplit(".", i)[0] for name in names if name.startswith("session_watcher.")
                    for i in range(1, name.count(".") + 1)}

RENDER = with_packages({"session_watcher.hooks.statusline", "session_watcher.core", "session_watcher.core.render",
          "session_watcher.core.status", "session_watcher.core.health", "session_watcher.core.prices",
          "session_watcher.core.eoq", "math", "session_watcher.core.window"})
# the payload checked by the state's caps (core.caps), not by the transcript's parser: no agents' registry
SAVED_STATE = with_packages({"session_watcher.state", "session_watcher.state.shell", "session_watcher.state.store",
               "session_watcher.core.fresh", "session_watcher.core.meter", "session_watcher.core.caps",
               "session_watcher.core.fastjson", "_json",
               "session_watcher.core.errors", "session_watcher.base.paths", "session_watcher.base.config_cache"})
# the entry point (hooks.entry) without the fold's events (hooks.run)
START = with_packages({"session_watcher.hooks", "session_watcher.hooks.entry", "session_watcher.hooks.inject",
         "session_watcher.core", "session_watcher.core.errors", "session_watcher.core.fastjson", "_json",
         "session_watcher.state", "session_watcher.base.paths", "session_watcher.state.handoffs"})
# a handoff given: the payload checked (the caps, the store's session-id rule), the project's key (zlib), the
# stale limit (no config file: its default, without the key table), the note cleaned and its parent read
# from its first line (core.notehead, not the note's composer)
GIVE = {"session_watcher.core.caps", "session_watcher.state.store", "session_watcher.state.shell", "zlib",
        "session_watcher.base.config_cache", "session_watcher.core.text", "session_watcher.core.notehead",
        "session_watcher.core.numbers"}  # the note's size in the user's word that it came (no import of its own)
# what the fold adds: the engine, the lock, the path map's shards, the reader and the writer, and the
# transcript's parser with the agents' registry (agents/__init__.py: each agent a class of a few attributes)
FOLD = {"session_watcher.core.engine", "session_watcher.core.paths", "session_watcher.state.lock", "fcntl",
        "session_watcher.state.pathstore", "zlib",
        "session_watcher.base.atomic", "session_watcher.state.reader", "session_watcher.state.session",
        "session_watcher.agents", "session_watcher.agents.seam", "session_watcher.agents.claude_code",
        "session_watcher.agents.claude_code.transcript", "session_watcher.agents.codex"}


def imports(argv: list[str], stdin: bytes = b"") -> tuple[subprocess.CompletedProcess[bytes], set[str]]:
    """The process's result and the modules it imported beyond `python -I -S -c pass`'s own."""

    def names(proc: subprocess.CompletedProcess[bytes]) -> set[str]:
        return {line.rsplit("|", 1)[1].strip() for line in proc.stderr.decode().splitlines()
                if line.startswith("import time:") and "|" in line} - {"package"}

    def importtime(args: list[str], data: bytes) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([args[0], "-X", "importtime", *args[1:]], input=data, capture_output=True,
                              timeout=60, check=False)

    base = names(importtime([sys.executable, "-I", "-S", "-c", "pass"], b""))
    proc = importtime(argv, stdin)
    return proc, names(proc) - base


def test_the_import_list_sees_a_module_added() -> None:
    """The check itself can fail: a run that imports one more module shows it."""
    _, got = imports([sys.executable, "-I", "-S", "-c", "import zlib"])
    assert got == {"zlib"}


def folded_session(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A real transcript folded by a hook, and a status-line payload whose window, model and place
    the state holds already (a first status-line run recorded them)."""
    t = tmp_path / "s.jsonl"
    shutil.copy(TRANSCRIPTS / "short.jsonl", t)
    assert hook("Stop", payload("s", t)).returncode == 0
    p = {"session_id": "s", "transcript_path": str(t), "cwd": str(tmp_path),
         "model": {"id": "claude-opus-4-6", "display_name": "Opus"}, "context_window": {"context_window_size": 200000}}
    assert statusline(p).returncode == 0
    return t, p


def test_the_status_line_draws_the_saved_state_with_the_render_modules_only(tmp_path: Path) -> None:
    """Nothing new in the transcript, nothing new in the payload: the line is drawn from the state as
    saved, without the lock, the fold or the writer, and the state file is left as it was."""
    t, p = folded_session(tmp_path)
    main = state_file("s")
    before = (main.read_bytes(), main.stat().st_mtime_ns, main.stat().st_ino)
    proc, got = imports(launcher("statusline"), json.dumps(p).encode())
    assert proc.returncode == 0
    assert "white" in proc.stdout.decode()
    assert got == OS | RENDER | SAVED_STATE
    assert (main.read_bytes(), main.stat().st_mtime_ns, main.stat().st_ino) == before
    # the same line the locked path draws (a new line in the transcript sends the run there)
    with t.open("ab") as fh:
        fh.write(b"\n")  # an empty line: nothing to count, but the cursor moves
    proc2, got2 = imports(launcher("statusline"), json.dumps(p).encode())
    assert proc2.stdout == proc.stdout
    assert FOLD - {"zlib"} <= got2  # zlib may come with another module
    assert main.stat().st_ino != before[2]  # saved: the cursor moved


def test_the_status_line_records_what_the_payload_says_that_the_state_does_not_hold(tmp_path: Path) -> None:
    """A new window or a subscriber's new use is recorded (the locked path); the same sample again
    within a minute is not written."""
    _t, p = folded_session(tmp_path)
    p["context_window"]["context_window_size"] = 1_000_000
    assert statusline(p).returncode == 0
    assert load_state("s")["context"]["window"] == 1_000_000
    limits = {"five_hour": {"used_percentage": 12.0, "resets_at": 1_900_000_000}}
    p |= {"rate_limits": limits, "cost": {"total_cost_usd": 1.5}}
    assert statusline(p).returncode == 0
    plan = load_state("s")["context"]["plan"]
    assert (plan["cost"], plan["windows"]["five_hour"]["used"]) == (1.5, 12.0)
    main = state_file("s")
    before = main.read_bytes()
    _, got = imports(launcher("statusline"), json.dumps(p).encode())  # the same sample: as saved
    assert main.read_bytes() == before
    assert not FOLD & got
    p["cost"] = {"total_cost_usd": 1.75}  # the cost moved: a new sample
    _, got = imports(launcher("statusline"), json.dumps(p).encode())
    assert load_state("s")["context"]["plan"]["cost"] == 1.75
    assert "session_watcher.state.lock" in got


def start(tmp_path: Path, sid: str) -> bytes:
    return json.dumps(payload(sid, tmp_path / f"{sid}.jsonl", "SessionStart", source="startup")).encode()


def pend(project: Path) -> None:
    from session_watcher.core.handoff import header
    from session_watcher.state import handoffs

    note = header("parent", "2026-12-04 21:00 UTC", 1000, 0.01) + "\nthe work so far"
    handoffs.write_pending({"project": str(project.resolve()), "parentSession": "parent", "createdAt": time.time(),
                            "note": note, "agent": "claude-code"})  # a Claude Code session's, as `handoff` writes


def test_the_session_start_hook_imports_no_config_parser_without_a_config_file(tmp_path: Path) -> None:
    """With nothing pending: one directory read. With a handoff pending and no config file: the
    handoff is given without tomllib (and what it brings: re, typing, datetime, enum)."""
    proc, got = imports(launcher("hook", "SessionStart", "inject"), start(tmp_path, "c1"))
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert got == OS | START
    pend(tmp_path)
    proc, got = imports(launcher("hook", "SessionStart", "inject"), start(tmp_path, "c2"))
    assert proc.returncode == 0
    assert "the work so far" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    # not tomllib (and re, typing, datetime, enum), nor the config's key table, unicodedata (an ASCII
    # note is cleaned without Unicode's tables), the fold, the pricing, the transcript's parser, the path rules
    assert got == OS | START | GIVE


def test_a_config_file_is_still_read_by_the_session_start_hook(tmp_path: Path) -> None:
    """A config file that exists is parsed: its handoff_stale_min makes a minute-old handoff stale."""
    from session_watcher.base import paths
    from session_watcher.state import handoffs

    cfg = Path(paths.user_config_file())
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text("handoff_stale_min = 1\n")

    handoffs.write_pending({"project": str(tmp_path.resolve()), "parentSession": "parent",
                            "createdAt": time.time() - 120, "note": "session-watcher handoff from parent\nold"})
    proc, got = imports(launcher("hook", "SessionStart", "inject"), start(tmp_path, "c3"))
    assert (proc.returncode, proc.stdout) == (0, b"")  # stale by the file's own limit
    assert {"tomllib", "session_watcher.base.config"} <= got


def test_a_hook_that_folds_imports_the_fold_and_nothing_more(tmp_path: Path) -> None:
    """A Stop hook with new lines to fold (no alert due, no new path): the fold's modules, bounded."""
    t, _p = folded_session(tmp_path)
    shutil.copy(TRANSCRIPTS / "tool_heavy.jsonl", t)  # another file in its place: folded from the start
    proc, got = imports(launcher("hook", "Stop"), json.dumps(payload("s", t)).encode())
    assert proc.returncode == 0
    allowed = OS | SAVED_STATE | FOLD | {"session_watcher.core", "session_watcher.hooks", "session_watcher.hooks.entry",
                                        "session_watcher.hooks.run",
                                        "session_watcher.state.tail", "session_watcher.state.spawn", "select",
                                        "session_watcher.core.health", "session_watcher.core.prices",
                                        "session_watcher.core.eoq", "math", "session_watcher.core.window"}
    assert got >= FOLD
    assert got <= allowed, got - allowed


# the error kinds a fold may raise or catch (core.errors); UserError and its kinds and ReadOnlyFile
# (core.usererrors) are only a command's to report: a hook creates none of them (docs/benchmarks.md: what a class costs)
HOOK_ERRORS = {"WatcherError", "LockTimeout", "Rejected", "StateRejected", "ShardRejected", "Reset", "ProbeError",
               "JSONError", "StateTooLarge", "NotOurs", "NotAFile", "TooLarge"}
CLASSES = """
import sys
for name in sys.argv[1:]:
    __import__(name)
from session_watcher.core.errors import WatcherError
seen, todo = set(), [WatcherError]
while todo:
    cls = todo.pop()
    seen.add(cls.__name__)
    todo += cls.__subclasses__()
print(" ".join(sorted(seen)))
"""


def test_a_fold_creates_the_error_kinds_a_hook_meets_and_no_other(tmp_path: Path) -> None:
    """The modules a Stop fold imports define the error kinds a hook may meet, not the ones only a
    command reports; the prompt's own steps (`hooks.prompt`) are loaded by the prompt's hook alone."""
    t, _p = folded_session(tmp_path)
    shutil.copy(TRANSCRIPTS / "tool_heavy.jsonl", t)
    _, folded = imports(launcher("hook", "Stop"), json.dumps(payload("s", t)).encode())
    assert "session_watcher.hooks.prompt" not in folded
    ours = sorted(n for n in folded if n.startswith("session_watcher"))
    out = subprocess.run([sys.executable, "-I", "-c", CLASSES, *ours], capture_output=True, check=True, timeout=60)
    assert set(out.stdout.decode().split()) == HOOK_ERRORS
    _, prompted = imports(launcher("hook", "UserPromptSubmit"),
                          json.dumps(payload("s", t, "UserPromptSubmit", prompt="go on")).encode())
    assert "session_watcher.hooks.prompt" in prompted


def test_a_codex_hook_that_folds_imports_the_fold_and_the_rollout_decoder_only(tmp_path: Path) -> None:
    """PostModelRequest as Codex runs it (`hook EVENT codex`) on a rollout with new calls: the fold's
    modules, and the rollout decoder (agents.codex), without typing or re (several ms of a start), nor
    Claude Code's transcript parser or the config's key table."""
    from tests.codex_lines import FIXTURES

    rollout = tmp_path / "rollout-2026-07-16T16-39-00-019f6bcb-eb00-7ea1-99ef-7fe2d29e2bba.jsonl"
    lines = (FIXTURES / "rollout-019f6bcb-eb00-7ea1-99ef-7fe2d29e2bba.jsonl").read_bytes().splitlines(keepends=True)
    rollout.write_bytes(b"".join(lines[:200]))
    doc = {"session_id": "019f6bcb-eb00-7ea1-99ef-7fe2d29e2bba", "transcript_path": str(rollout),
           "cwd": str(tmp_path), "hook_event_name": "PostModelRequest", "model": "gpt-5.6-sol", "kind": "sampling",
           "status": "ok", "token_usage": {"input_tokens": 1}}
    assert hook("PostModelRequest", doc, args=("codex",)).returncode == 0
    rollout.write_bytes(b"".join(lines[:400]))  # the calls Codex logged since
    proc, got = imports(launcher("hook", "PostModelRequest", "codex"), json.dumps(doc).encode())
    assert proc.returncode == 0
    codex = {"session_watcher.agents.codex", "session_watcher.agents.codex.reader",
             "session_watcher.agents.codex.rollout"}
    allowed = OS | SAVED_STATE | FOLD | codex | {
        "session_watcher.core", "session_watcher.hooks", "session_watcher.hooks.entry", "session_watcher.hooks.run",
        "session_watcher.state.tail",
        "session_watcher.state.spawn", "select", "session_watcher.core.health", "session_watcher.core.prices",
        "session_watcher.core.eoq", "math", "session_watcher.core.window", "session_watcher.core.prices_openai"}
    parser = "session_watcher.agents.claude_code.transcript"  # Claude Code's: the line rules are the seam's
    assert got >= (FOLD - {parser}) | codex
    assert not got & {"typing", "re", parser, "session_watcher.base.config"}
    assert got <= allowed, got - allowed


def test_the_command_written_for_an_install_imports_no_re(tmp_path: Path) -> None:
    """`session-watcher` as install.sh leaves it (hooks.launchers writes it over pip's wrapper, whose
    `re` cost 10 % of a warm report over the Codex fixtures): a report over empty homes imports no
    `re`, where the same run through pip's wrapper does. Run without `site` (`-S`, the package on
    PYTHONPATH): the dev venv's editable install imports `re` on every start itself."""
    from session_watcher.hooks.launchers import write

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    pip_made = ("#!/usr/bin/python3\n# -*- coding: utf-8 -*-\nimport re\nimport sys\n"
                "from session_watcher.cli import run\n"
                "if __name__ == '__main__':\n    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
                "    sys.exit(run())\n")
    (tmp_path / "pip-wrapper").write_text(pip_made)
    (bin_dir / "session-watcher").write_text(pip_made)
    assert str(bin_dir / "session-watcher") in write(str(bin_dir))
    for d in ("home", "codex", "sw"):
        (tmp_path / d).mkdir()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path / "home"), "CODEX_HOME": str(tmp_path / "codex"),
           "SESSION_WATCHER_HOME": str(tmp_path / "sw"), "PYTHONPATH": str(REPO)}

    def loaded(command: Path) -> set[str]:
        proc = subprocess.run([sys.executable, "-S", "-X", "importtime", str(command), "report", "--json", "--index",
                               str(tmp_path / "i.sqlite3")], capture_output=True, env=env, timeout=60, check=False)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert json.loads(proc.stdout)["sessions"] == []
        return {line.rsplit("|", 1)[1].strip() for line in proc.stderr.decode().splitlines()
                if line.startswith("import time:") and "|" in line}

    assert "re" in loaded(tmp_path / "pip-wrapper")  # the check can fail
    assert "re" not in loaded(bin_dir / "session-watcher")
