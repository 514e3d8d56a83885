"""A project's config file in either agent's folder (base.paths.project_config_file): a Codex user
has no `.claude/`, so `.codex/session-watcher.toml` is read too, one file per project for both
agents (`.claude/`'s when both are there, the other named as not read), with the same distrust as
ever: a repository's file sets only the project keys, within the project. `config set/get
--project`, `config path`, `config show` and `doctor` name the file really read."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from session_watcher.base import config, config_cache, paths
from tests.oracle import SW, one_message, sw
from tests.statefile import load_state
from tests.test_codex_hooks import THREAD, folded, prompt, shifted

HOSTILE = ('bp_amber = 0.2\nguard = "off"\nhandoff_stale_min = 1\ninclude = ["*"]\n'
           '[notify]\nchannels = []\nfallback = "none"\n[otlp]\nenabled = true\nendpoint = "http://127.0.0.1:1"\n'
           '[prices."gpt-6.2-sol"]\ninput = 0.001\n')


WIDE = {**os.environ, "COLUMNS": "1000"}  # the CLI's lines unwrapped


def _file(project: Path, folder: str, text: str) -> Path:
    (project / folder).mkdir(parents=True, exist_ok=True)
    f = project / folder / "session-watcher.toml"
    f.write_text(text)
    return f


def test_the_file_read_is_the_one_there_claudes_first(tmp_path: Path) -> None:
    claude, codex = (str(tmp_path / d / "session-watcher.toml") for d in (".claude", ".codex"))
    assert paths.project_config_file(str(tmp_path)) == claude  # nothing there: made in .claude/
    (tmp_path / ".codex").mkdir()
    assert paths.project_config_file(str(tmp_path)) == codex  # a Codex project: made in .codex/
    (tmp_path / ".claude").mkdir()
    assert paths.project_config_file(str(tmp_path)) == claude  # both folders: .claude/
    _file(tmp_path, ".codex", "bp_amber = 0.2\n")
    assert paths.project_config_file(str(tmp_path)) == codex  # the one there, whatever the folders
    assert paths.project_config_unread(str(tmp_path)) == []
    _file(tmp_path, ".claude", "bp_amber = 0.1\n")
    assert paths.project_config_file(str(tmp_path)) == claude
    assert paths.project_config_unread(str(tmp_path)) == [codex]
    assert config.load(str(tmp_path))["bp_amber"] == 0.1  # one file counts, not both


def test_a_codex_folders_file_is_distrusted_as_claudes_was(tmp_path: Path) -> None:
    """Only the project keys, each checked; the user's own keys refused and named; `include` kept
    inside the project."""
    f = _file(tmp_path, ".codex", HOSTILE)
    cfg, errors = config.load_layers(str(tmp_path))
    assert cfg["bp_amber"] == 0.2  # a project key applies
    assert cfg["guard"] == config.DEFAULTS["guard"]
    assert cfg["handoff_stale_min"] == config.DEFAULTS["handoff_stale_min"]
    assert cfg["notify"] == config.DEFAULTS["notify"]
    assert cfg["otlp"] == config.DEFAULTS["otlp"]
    assert cfg["prices"] == {}
    assert cfg["include"] == [f"{os.path.realpath(tmp_path)}/*"]  # anchored: never ~/.aws/credentials
    assert len(errors) == 1
    assert errors[0].startswith(f"{f}: ")
    for key in ("guard", "handoff_stale_min", "notify", "otlp", "prices"):
        assert f"'{key}'" in errors[0]
    assert set(config.PROJECT_KEYS) == {k.name for k in config.KEYS if k.project}
    assert not {"guard", "handoff_stale_min", "notify", "otlp", "prices"} & set(config.PROJECT_KEYS)


def test_a_file_made_in_the_codex_folder_is_read_at_the_next_hook(tmp_path: Path) -> None:
    """The cached config's stamp covers both places: a file made where none was is read again."""
    (tmp_path / ".codex").mkdir()
    before = config_cache.stamp(str(tmp_path))
    _file(tmp_path, ".codex", "bp_amber = 0.2\n")
    assert config_cache.stamp(str(tmp_path)) != before
    _file(tmp_path, ".claude", "bp_amber = 0.3\n")  # the other place: it now wins, so it is stamped too
    assert config_cache.stamp(str(tmp_path)) != before


def test_config_show_names_a_file_not_read(tmp_path: Path) -> None:
    files = [str(tmp_path / "user.toml"), str(tmp_path / ".claude" / "session-watcher.toml")]
    unread = str(tmp_path / ".codex" / "session-watcher.toml")
    shown = config.show_toml(files, config.merge(), 200, [unread])
    assert f"# not read: {unread} (a project has one file: the one above counts)" in shown.splitlines()


@pytest.mark.slow
def test_the_cli_names_the_codex_folders_file(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    (proj / ".codex").mkdir(parents=True)  # a Codex user's project: no .claude/
    f = proj / ".codex" / "session-watcher.toml"
    got = sw("config", "set", "--project", str(proj), "bp_amber", "0.2", env=WIDE)
    assert got.returncode == 0, got.stderr
    assert f"(in {f})" in got.stdout.decode()
    assert f.read_text() == "bp_amber = 0.2\n"
    assert not (proj / ".claude").exists()
    got = sw("config", "get", "--json", "--project", str(proj), "bp_amber", env=WIDE)
    assert json.loads(got.stdout) == {"key": "bp_amber", "value": 0.2, "source": "project", "file": str(f)}
    got = sw("config", "set", "--project", str(proj), "guard", '"off"', env=WIDE)
    assert got.returncode == 2
    assert f"{f}: key 'guard' may only be set in your own config" in got.stderr.decode()
    shown = json.loads(sw("config", "show", "--json", "--project", str(proj), env=WIDE).stdout)
    assert shown["files"][-1] == str(f)
    assert "unread" not in shown
    assert str(f) in sw("config", "path", "--project", str(proj), env=WIDE).stdout.decode()
    claude = _file(proj, ".claude", "bp_amber = 0.1\n")  # a second file: .claude/'s is read
    shown = json.loads(sw("config", "show", "--json", "--project", str(proj), env=WIDE).stdout)
    assert (shown["files"][-1], shown["unread"], shown["effective"]["bp_amber"]) == (str(claude), [str(f)], 0.1)
    text = sw("config", "show", "--project", str(proj), env=WIDE).stdout.decode()
    assert f"# not read: {f}" in text
    said = sw("config", "path", "--project", str(proj), env=WIDE)
    assert said.stdout.decode() == f"{claude}\n"
    assert one_message(said.stderr.decode()) == \
        f"session-watcher: {f} is not read: a project has one file, {claude} counts"
    doctor = subprocess.run([str(SW), "doctor"], cwd=proj, env=WIDE, capture_output=True, text=True, timeout=120,
                            check=False)
    assert f"config     {f} is not read: a project has one file, {claude} counts" in doctor.stdout
    got = sw("config", "unset", "--project", str(proj), "bp_amber", env=WIDE)
    assert f"removed from {claude}" in got.stdout.decode()


@pytest.mark.slow
def test_a_codex_threads_hooks_read_the_codex_folders_file(tmp_path: Path) -> None:
    """A Codex thread run in a project whose `.codex/session-watcher.toml` sets guard_x out of reach
    and the guard off: the project key applies (the cold prompt is not held, only told what it
    re-writes), the user's key does not (the guard still speaks), and the log names the refusal."""
    project = tmp_path / "proj"
    project.mkdir()
    f = _file(project, ".codex", 'guard_x = 1000\nguard = "off"\n')
    rollout = folded(shifted(tmp_path, THREAD, 180), project)
    got = prompt(rollout, project)
    assert got is not None
    assert "decision" not in got  # below guard_x: not held
    assert "this prompt re-writes" in got["systemMessage"]
    values = load_state(THREAD)["config"]["values"]
    assert (values["guard_x"], values["guard"]) == (1000, "ask")
    log = Path(os.environ["SESSION_WATCHER_HOME"]) / "log" / "session-watcher.log"
    assert f"{f}: 'guard' may only be set in your own config" in log.read_text()


@pytest.mark.slow
def test_a_project_with_neither_folder_gets_the_file_of_the_agent_used_there(tmp_path: Path) -> None:
    """`config set --project` in a project with neither `.claude/` nor `.codex/`: the folder of the
    agent whose session ran there last (a Codex thread: `.codex/`), else of the agent installed
    (Codex alone: `.codex/`), else `.claude/`; it says which and why. It made `.claude/` always, a
    folder a Codex user's project never had."""
    wide = {**os.environ, "COLUMNS": "1000"}  # this test's own homes (WIDE is the module's at import)
    proj = tmp_path / "proj"
    proj.mkdir()
    folded(shifted(tmp_path, THREAD, 1), proj)  # a Codex thread ran in it
    got = sw("config", "set", "--project", str(proj), "bp_amber", "0.2", env=wide)
    assert got.returncode == 0, got.stderr
    f = proj / ".codex" / "session-watcher.toml"
    assert f.read_text() == "bp_amber = 0.2\n"
    assert not (proj / ".claude").exists()
    said = " ".join(got.stdout.decode().split())
    assert said == f"bp_amber = 0.2 (a new folder: the latest session in this project is Codex's; in {f})"
    assert sw("config", "get", "--json", "--project", str(proj), "bp_amber", env=wide).stdout.decode().count(str(f))

    none = {**wide, "SESSION_WATCHER_CODEX": str(tmp_path / "no-codex"), "SESSION_WATCHER_CLAUDE": str(tmp_path / "no")}
    other = tmp_path / "other"
    other.mkdir()
    got = sw("config", "set", "--project", str(other), "bp_amber", "0.2", env=none)  # no session, no agent known
    assert " ".join(got.stdout.decode().split()).endswith(
        "(a new folder: no recent session ran here, and Claude Code's is the default; in "
        f"{other / '.claude' / 'session-watcher.toml'})")
    record = Path(os.environ["SESSION_WATCHER_HOME"]) / "data" / "installed-codex.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text('{"hooksFile": "/x/hooks.json"}\n')  # install.sh installed for Codex alone
    third = tmp_path / "third"
    third.mkdir()
    got = sw("config", "set", "--project", str(third), "bp_amber", "0.2", env=none)
    assert " ".join(got.stdout.decode().split()).endswith(
        "(a new folder: no recent session ran here, and Codex is the agent installed; in "
        f"{third / '.codex' / 'session-watcher.toml'})")
    assert not (third / ".claude").exists()


@pytest.mark.slow
def test_a_recorded_state_with_a_hostile_folder_is_passed_over(tmp_path: Path) -> None:
    """A recorded state whose working folder holds a NUL (a state is data: anything may be in it):
    `config set --project` passes over it to the next, where it stopped with a ValueError
    (os.path.realpath's "embedded null byte")."""
    from session_watcher.cli.agents_here import latest_agent
    from session_watcher.state import store

    proj = tmp_path / "proj"
    proj.mkdir()
    folded(shifted(tmp_path, THREAD, 1), proj)  # a Codex thread ran in it
    [(_mtime, sid)] = store.list_sessions()[:1]
    f = Path(store.session_file(sid))
    doc = json.loads(f.read_text())
    hostile = {**doc, "sessionId": sid[:-1] + ("0" if sid[-1] != "0" else "1")}
    hostile["context"] = {**doc["context"], "cwd": "/a\u0000b", "project": "/c\u0000d"}
    twin = Path(store.session_file(hostile["sessionId"]))
    twin.write_text(json.dumps(hostile))
    os.utime(twin, (f.stat().st_mtime + 10, f.stat().st_mtime + 10))  # the newest
    assert store.list_sessions()[0][1] == hostile["sessionId"]
    assert store.load(str(twin), hostile["sessionId"], readonly=True) is not None  # a state read as sound
    assert latest_agent(str(proj)) == "codex"
    got = sw("config", "set", "--project", str(proj), "bp_amber", "0.2", env={**os.environ, "COLUMNS": "1000"})
    assert got.returncode == 0, got.stderr
    assert (proj / ".codex" / "session-watcher.toml").is_file()


@pytest.mark.slow  # starts processes
def test_config_path_is_a_path_an_editor_opens(tmp_path: Path) -> None:
    """`$EDITOR "$(session-watcher config path)"`: it printed two lines, each with "  (not present)"
    when absent, and the editor opened a file of that name. Now one path alone: yours, or with
    `--project` the project's (the one `config set --project` makes where there is none yet; one in
    `.codex/` where that is the project's folder), as a user's editor writes it."""
    env = {**WIDE, "SESSION_WATCHER_HOME": str(tmp_path / "sw"), "CLAUDE_PROJECT_DIR": ""}
    editor = tmp_path / "editor"  # an editor: makes the file's folder, writes one line
    editor.write_text('#!/bin/sh\nmkdir -p "$(dirname "$1")" && echo "bp_amber = 0.2" > "$1"\n')
    editor.chmod(0o755)
    proj = tmp_path / "proj"
    (proj / ".codex").mkdir(parents=True)

    def edit(*args: str) -> subprocess.CompletedProcess[bytes]:
        line = 'e="$0" s="$1"; shift; "$e" "$("$s" config path "$@")"'
        return subprocess.run(["sh", "-c", line, str(editor), str(SW), *args], cwd=proj, env=env,
                              capture_output=True, timeout=60, check=False)

    user = tmp_path / "sw" / "config" / "config.toml"
    assert sw("config", "path", env=env).stdout.decode() == f"{user}\n"
    assert (edit().returncode, edit().stderr) == (0, b"")
    assert user.read_text() == "bp_amber = 0.2\n"
    got = json.loads(sw("config", "get", "--json", "bp_amber", env=env).stdout)
    assert (got["value"], got["source"]) == (0.2, "user")
    user.write_text("")
    for args in (("--project",), ("--project", str(proj))):
        (proj / ".codex" / "session-watcher.toml").unlink(missing_ok=True)
        assert (edit(*args).returncode, edit(*args).stderr) == (0, b"")
        got = json.loads(subprocess.run([str(SW), "config", "get", "--json", "bp_amber"], cwd=proj, env=env,
                                        capture_output=True, timeout=60, check=True).stdout)
        assert got == {"key": "bp_amber", "value": 0.2, "source": "project",
                       "file": str(proj / ".codex" / "session-watcher.toml")}
