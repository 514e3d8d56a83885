"""Codex's hooks.json (cli.install_codex): nothing where Codex is absent; merged with the user's
hooks, a backup first, re-running changes nothing, `remove` restores the file; and a registered hook,
run as Codex runs it (its command through `sh -c`, a Codex payload on stdin), folds the rollout and
prints nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.codex_lines import FIXTURES
from tests.oracle import launchers

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)


pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

USER_HOOK = {"type": "command", "command": "echo mine", "timeout": 5}
THREAD = "019f1f6f-311c-7543-b0f9-f126da3c5434"


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "session_watcher.cli.install_codex", *args], env=env,
                          capture_output=True, text=True, timeout=60, check=False)


def _env(tmp_path: Path, codex_home: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CODEX_HOME"}
    env["SESSION_WATCHER_CODEX"] = str(tmp_path / "no-codex")  # no app-server to trust through (tests/e2e has one)
    env["COLUMNS"] = "1000"  # what the install says, unwrapped: read by its words
    if codex_home is not None:
        env["CODEX_HOME"] = str(codex_home)
    return env


def _backups(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".bak-session-watcher-" in p.name)


def test_nothing_where_codex_is_absent(tmp_path: Path) -> None:
    env = _env(tmp_path, None)
    got = _run(env, "add", "/opt/sw/bin")
    assert (got.returncode, got.stdout) == (0, "")
    assert not (tmp_path / "home" / ".codex").exists()
    assert not os.path.exists(os.path.join(env["HOME"], ".codex"))
    assert _run(env, "remove").returncode == 0


def test_merged_idempotent_and_reversible(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    home.mkdir()
    original = json.dumps({"hooks": {"Stop": [{"hooks": [USER_HOOK]}]}}, indent=4)
    (home / "hooks.json").write_text(original)
    env = _env(tmp_path, home)
    first = _run(env, "add", "/opt/sw/bin")
    assert first.returncode == 0, first.stderr
    assert "/hooks" in first.stdout  # the one step that makes Codex run them
    doc = json.loads((home / "hooks.json").read_text())
    assert set(doc["hooks"]) == {"Stop", "PostToolUse", "PostModelRequest", "UserPromptSubmit", "SessionStart"}
    assert doc["hooks"]["Stop"][0] == {"hooks": [USER_HOOK]}
    ours = [h for g in doc["hooks"]["PostModelRequest"] for h in g["hooks"]]
    assert ours == [{"type": "command", "async": True, "timeout": 10,
                     "command": "/opt/sw/bin/python -I -S /opt/sw/bin/session-watcher-hook PostModelRequest codex"}]
    speaking = [h for event in ("UserPromptSubmit", "SessionStart") for g in doc["hooks"][event] for h in g["hooks"]]
    assert [(h["async"], h["command"].split()[-2:]) for h in speaking] == [
        (False, ["UserPromptSubmit", "codex"]), (False, ["SessionStart", "codex"])]
    assert len(_backups(home)) == 1
    assert (home / _backups(home)[0]).read_text() == original
    text = (home / "hooks.json").read_text()
    assert _run(env, "add", "/opt/sw/bin").returncode == 0
    assert (home / "hooks.json").read_text() == text  # re-running changes nothing
    assert len(_backups(home)) == 1
    moved = _run(env, "add", "/opt/sw2/bin")  # another venv: replaced, not doubled
    assert moved.returncode == 0
    doc = json.loads((home / "hooks.json").read_text())
    assert [len(g["hooks"]) for g in doc["hooks"]["PostToolUse"]] == [1]
    assert "/opt/sw2/bin" in doc["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
    assert _run(env, "remove").returncode == 0
    assert json.loads((home / "hooks.json").read_text()) == json.loads(original)
    assert _run(env, "remove").returncode == 0  # twice: nothing more


def _a_machine(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """(a Codex home, a folder with the hook's launcher and a python, the environment naming them)."""
    home = tmp_path / "codex"
    home.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    shutil.copy(launchers() / "session-watcher-hook", bin_dir / "session-watcher-hook")
    return home, bin_dir, _env(tmp_path, home)


def test_a_registered_hook_folds_the_rollout_silently(tmp_path: Path) -> None:
    home, bin_dir, env = _a_machine(tmp_path)
    assert "hooks not installed" in _doctor(env)
    assert _run(env, "add", str(bin_dir)).returncode == 0
    assert "installed, not trusted yet" in _doctor(env)
    # trusted as the install's app-server route writes it (Codex's config.toml), before any thread ran:
    # doctor said "not trusted yet" right after the install said "trusted through codex app-server"
    keys = [f"{home / 'hooks.json'}:{event}:0:0" for event in ("post_tool_use", "post_model_request", "stop",
                                                                 "user_prompt_submit", "session_start")]
    entries = "".join(f'[hooks.state."{key}"]\ntrusted_hash = "sha256:00"\n' for key in keys)
    (home / "config.toml").write_text(entries)
    # trust given by hand (/hooks): entries under our hooks' keys, with hashes the install did not write
    assert (f"installed; {home / 'config.toml'} holds a trust entry for each of its 5 hooks, 5 not written by "
            "the install") in _doctor(env)
    record = Path(env["SESSION_WATCHER_HOME"]) / "data" / "installed-codex.json"
    rec = json.loads(record.read_text())
    record.write_text(json.dumps({**rec, "trusted": dict.fromkeys(keys, "sha256:00")}))  # the install's route
    assert f"installed and trusted in {home / 'config.toml'}; none has fired yet" in _doctor(env)
    (home / "config.toml").write_text("\n".join(entries.splitlines()[:2]) + "\n")
    assert (f"installed, not trusted yet (4 of its 5 hooks without a trust entry in {home / 'config.toml'}"
            in _doctor(env))  # one entry of five: not trusted
    doc: dict[str, Any] = json.loads((home / "hooks.json").read_text())
    rollout = tmp_path / f"rollout-2026-07-01T20-47-00-{THREAD}.jsonl"
    shutil.copy(FIXTURES / f"rollout-{THREAD}.jsonl", rollout)
    payload = {"session_id": THREAD, "transcript_path": str(rollout), "cwd": str(tmp_path),
               "hook_event_name": "PostModelRequest", "model": "gpt-5.5", "permission_mode": "default",
               "kind": "sampling", "request_id": "r1", "attempt_number": 1, "thread_id": THREAD, "status": "ok",
               "token_usage": {"input_tokens": 1}, "response_id": "resp_1"}
    command = doc["hooks"]["PostModelRequest"][0]["hooks"][0]["command"]
    got = subprocess.run(["sh", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                         env=env, timeout=60, check=False, cwd=tmp_path)
    assert (got.returncode, got.stdout) == (0, "")
    status = subprocess.run([sys.executable, "-m", "session_watcher", "status", "--json", THREAD[:8]], env=env,
                            capture_output=True, text=True, timeout=60, check=False)
    assert status.returncode == 0, status.stderr
    doc = json.loads(status.stdout)
    assert doc["sessionId"] == THREAD
    assert doc["tokenUsage"]["calls"] == 101
    assert f"hooks firing (last thread {THREAD})" in _doctor(env)
    # the guard's line names the thread's own cache class (gpt-5.5's), not the "5m" its usage is stored as,
    # in words (it said "codex-10m cache", the class's id in cliff.json and --json)
    assert ("newest session: cold by the documented lifetime (Codex 10-minute cache, lasts 10 min), last call "
            in _doctor(env, "guard "))
    (home / "hooks.json").write_text("{}")
    assert "hooks are gone" in _doctor(env)


def test_doctor_counts_only_our_hooks_trust_not_the_users(tmp_path: Path) -> None:
    """The user's own five hooks in Codex's hooks.json, trusted in config.toml, and ours (installed
    after them, untrusted): doctor says ours are not trusted (it said "installed and trusted": it
    counted every trusted entry of the file); ours trusted as the install records it: trusted."""
    home, bin_dir, env = _a_machine(tmp_path)
    events = ("PostToolUse", "PostModelRequest", "Stop", "UserPromptSubmit", "SessionStart")
    snake = ("post_tool_use", "post_model_request", "stop", "user_prompt_submit", "session_start")
    (home / "hooks.json").write_text(json.dumps({"hooks": {e: [{"hooks": [USER_HOOK]}] for e in events}}))
    theirs = "".join(f'[hooks.state."{home / "hooks.json"}:{e}:0:0"]\ntrusted_hash = "sha256:{n}"\n'
                     for n, e in enumerate(snake))
    config = home / "config.toml"
    config.write_text(f'model = "gpt-5.5"\n{theirs}')
    assert _run(env, "add", str(bin_dir)).returncode == 0
    said = _doctor(env)
    assert f"installed, not trusted yet (5 of its 5 hooks without a trust entry in {config}; no Codex hook " \
           "has fired: trust them where Codex's TUI asks at its start, \"Hooks need review\", or in its /hooks; " \
           "`codex exec` runs them only then, and says nothing of it)" in said
    assert "trusted in" not in said
    ours = [f"{home / 'hooks.json'}:{e}:1:0" for e in snake]  # each ours, the second group of its event
    config.write_text(config.read_text() + "".join(f'[hooks.state."{k}"]\ntrusted_hash = "sha256:ab"\n' for k in ours))
    record = Path(env["SESSION_WATCHER_HOME"]) / "data" / "installed-codex.json"
    record.write_text(json.dumps({**json.loads(record.read_text()), "trusted": dict.fromkeys(ours, "sha256:ab")}))
    assert f"installed and trusted in {config}; none has fired yet" in _doctor(env)


def test_doctor_reads_no_trust_from_hashes_written_for_an_earlier_installs_hooks(tmp_path: Path) -> None:
    """Ours trusted as the install records it, then a re-install from another venv path where Codex
    could not be asked (the install says "open /hooks"): the recorded hashes were written for the
    earlier commands, which Codex hashes otherwise, so doctor no longer says "installed and trusted"
    (it did: the keys and hashes were unchanged); a re-run from the same path changes nothing."""
    home, bin_dir, env = _a_machine(tmp_path)
    assert "(start a Claude Code session)" in _doctor(env, "sessions ")  # Codex's hooks not installed yet
    assert _run(env, "add", str(bin_dir)).returncode == 0
    assert "sessions   none yet: hooks have not fired (start a Codex thread)" in \
        _doctor(env, "sessions ")  # a Codex user is not told to start Claude Code (installed for Codex alone)
    keys = [f"{home / 'hooks.json'}:{e}:0:0"
            for e in ("post_tool_use", "post_model_request", "stop", "user_prompt_submit", "session_start")]
    config = home / "config.toml"
    config.write_text("".join(f'[hooks.state."{k}"]\ntrusted_hash = "sha256:a{n}"\n' for n, k in enumerate(keys)))
    record = Path(env["SESSION_WATCHER_HOME"]) / "data" / "installed-codex.json"
    trusted = {k: f"sha256:a{n}" for n, k in enumerate(keys)}
    record.write_text(json.dumps({**json.loads(record.read_text()), "trusted": trusted}))  # the install's route
    said = f"installed and trusted in {config}; none has fired yet"
    assert said in _doctor(env)
    assert _run(env, "add", str(bin_dir)).returncode == 0  # the same venv again: the same hooks, still trusted
    assert said in _doctor(env)
    moved = _run(env, "add", str(tmp_path / "elsewhere" / "bin"))
    assert "open /hooks in Codex" in moved.stdout
    got = _doctor(env)
    assert said not in got
    assert f"installed; {config} holds a trust entry for each of its 5 hooks, 5 not written by the install" in got
    assert json.loads(record.read_text())["trusted"] == trusted  # still ours to take out at --uninstall


def test_doctor_reads_a_malformed_or_odd_codex_config_as_not_trusted(tmp_path: Path) -> None:
    """Codex's config.toml is read for trust entries before any hook fired: `hooks.state` of the wrong
    type, a FIFO there or a file too large to be a config say "not trusted yet", never a traceback
    or a block (before: `state = 5` was a traceback and no codex line; a FIFO held doctor for good)."""
    home, bin_dir, env = _a_machine(tmp_path)
    assert _run(env, "add", str(bin_dir)).returncode == 0
    config = home / "config.toml"
    for text in ("[hooks]\nstate = 5\n", "[hooks]\nstate = [1, 2]\n", "hooks = 'x'\n",
                 "a = " + "[" * 5000 + "]" * 5000 + "\n", "# " + "x" * (2 << 20) + "\n"):
        config.write_text(text)
        assert "installed, not trusted yet" in _doctor(env), text[:40]
    config.unlink()
    os.mkfifo(config)
    assert "installed, not trusted yet" in _doctor(env)


def _doctor(env: dict[str, str], field: str = "codex ") -> str:
    got = subprocess.run([sys.executable, "-m", "session_watcher", "doctor"], env={**env, "COLUMNS": "1000"},
                         capture_output=True,
                         text=True, timeout=60, check=False)
    return "\n".join(line for line in got.stdout.splitlines() if line.startswith(field))


def test_codex_installed_but_never_run_is_named(tmp_path: Path) -> None:
    """A `codex` executable on the machine but no ~/.codex yet (Codex makes it on its first run): the
    install adds nothing and says what to do (it said nothing, and a new Codex user had no hooks)."""
    env = _env(tmp_path, None)
    exe = tmp_path / "bin" / "codex"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    env["SESSION_WATCHER_CODEX"] = str(exe)
    got = _run(env, "add", "/opt/sw/bin")
    assert got.returncode == 0, got.stderr
    folder = Path(env["HOME"]) / ".codex"
    assert got.stdout == (f"codex: {exe} is installed, but {folder} is not there yet (Codex makes it when it first "
                          "runs): run codex once, then ./install.sh again to add its hooks\n")
    assert not folder.exists()
    assert not (Path(env["SESSION_WATCHER_HOME"]) / "data" / "installed-codex.json").exists()


def test_doctor_on_a_codex_only_install_names_codex_alone(tmp_path: Path) -> None:
    """install.sh on a machine with Codex alone writes nothing of Claude Code's (cli.agents_here):
    doctor then says why Claude Code's settings are absent, and names a Codex thread to start; it
    said "install with ./install.sh", which writes them no more there, and "a Claude Code session"."""
    _home, bin_dir, env = _a_machine(tmp_path)
    env = {k: v for k, v in env.items() if k != "CLAUDE_CONFIG_DIR"}  # Claude Code's default folders, not made
    env["SESSION_WATCHER_CLAUDE"] = str(tmp_path / "no")
    assert _run(env, "add", str(bin_dir)).returncode == 0  # Codex's record; no Claude Code record
    settings = Path(env["HOME"]) / ".claude" / "settings.json"
    assert _doctor(env, "settings ") == (f"settings   {settings}: absent (install.sh installed for Codex alone: "
                                         "Claude Code was not on this machine; ./install.sh again once it is)")
    assert _doctor(env, "sessions ") == "sessions   none yet: hooks have not fired (start a Codex thread)"
    claude = Path(env["SESSION_WATCHER_HOME"]) / "data" / "installed.json"
    other = tmp_path / "other" / "settings.json"  # installed for Claude Code too (its record, and its file)
    other.parent.mkdir()
    other.write_text("{}\n")
    claude.write_text(json.dumps({"settings": str(other)}) + "\n")
    assert "install with ./install.sh" in _doctor(env, "settings ")
    assert "(start a Claude Code session or a Codex thread)" in _doctor(env, "sessions ")


def test_a_hooks_file_made_by_an_install_before_its_record_said_so_goes_at_uninstall(tmp_path: Path) -> None:
    """Codex's hooks.json made by an install before its record said whether it created the file
    (2026-12-05): updated over, --uninstall deletes it where nothing but our hooks is in it, and
    keeps one holding a hook of the user's."""
    for users in ({}, {"Stop": [{"hooks": [USER_HOOK]}]}):
        home = tmp_path / ("mine" if users else "ours") / "codex"
        home.mkdir(parents=True)
        env = {**_env(tmp_path, home), "SESSION_WATCHER_HOME": str(home.parent / "sw")}
        assert _run(env, "add", "/opt/old/bin").returncode == 0
        record = home.parent / "sw" / "data" / "installed-codex.json"
        rec = json.loads(record.read_text())
        assert rec["created"] is True
        # the record as that install wrote it (2026-12-04): no word of the files it made
        record.write_text(json.dumps({key: rec[key] for key in ("hooksFile", "hooks", "trusted")}))
        if users:
            doc = json.loads((home / "hooks.json").read_text())
            doc["hooks"]["Stop"] = [*users["Stop"], *doc["hooks"]["Stop"]]
            (home / "hooks.json").write_text(json.dumps(doc))
        assert _run(env, "add", "/opt/new/bin").returncode == 0  # the update
        assert json.loads(record.read_text())["created"] is (not users)  # nothing of the user's in it
        rm = _run(env, "remove")
        assert rm.returncode == 0, rm.stderr
        if users:
            assert json.loads((home / "hooks.json").read_text()) == {"hooks": users}
        else:
            assert not (home / "hooks.json").exists()
            assert f"codex: removed {home / 'hooks.json'} (the install created it; nothing else was in it)" in rm.stdout
            assert _backups(home) == []
