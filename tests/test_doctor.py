"""`doctor` as a newcomer reads it: one line per label, plain words, and a stuck plugin install noticed."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from tests.oracle import TRANSCRIPTS, hook, payload, sw

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)


@pytest.fixture(autouse=True)
def _one_line_each(monkeypatch: pytest.MonkeyPatch) -> None:
    """Wide enough that each finding stays on its line (the width itself: test_within_columns)."""
    monkeypatch.setenv("COLUMNS", "2000")


def doctor(env: dict[str, str] | None = None) -> tuple[int, list[str]]:
    proc = sw("doctor", env=env)
    assert proc.stderr == b""
    return proc.returncode, proc.stdout.decode().splitlines()


def labels(lines: list[str]) -> list[str]:
    """The first column (doctor pads labels to 10 characters)."""
    return [ln[:10].strip() for ln in lines]


def plugin_data(name: str = "session-watcher-inline") -> Path:
    return Path(os.environ["CLAUDE_CONFIG_DIR"]) / "plugins" / "data" / name


def test_every_label_once_and_no_jargon(tmp_path: Path) -> None:
    t = tmp_path / "s1.jsonl"
    t.write_bytes((TRANSCRIPTS / "short.jsonl").read_bytes())
    hook("Stop", payload("s1", t, "Stop", cwd=str(tmp_path)))  # a session, so every section speaks
    code, lines = doctor()
    assert code == 0, lines
    found = labels(lines)
    assert len(found) == len(set(found)), lines
    assert len({ln.split()[0] for ln in lines}) == len(lines), lines  # not even the first word repeats
    text = "\n".join(lines)
    assert "mode absent" not in text
    assert "  mode " not in text
    assert "(private, 700)" in text  # the state folder exists now, and only its owner can read it
    assert "not created yet" in text  # the config folder does not


def test_stuck_plugin_install_is_reported(tmp_path: Path) -> None:
    data = plugin_data()
    (data / ".installing").mkdir(parents=True)
    code, lines = doctor()
    plugin = [ln for ln in lines if ln.startswith("plugin ")]
    assert plugin == [f"plugin     {data}: installing (started {plugin[0].split('started ')[1].split()[0]} s ago)"]
    assert code == 0
    old = time.time() - 45 * 60
    os.utime(data / ".installing", (old, old))
    code, lines = doctor()
    (line,) = [ln for ln in lines if ln.startswith("plugin ")]
    assert "install STUCK (started 45 min ago and it never finished; the next hook run starts it again" in line
    assert str(data / "install.log") in line
    assert code == 1


def test_interrupted_and_failed_plugin_installs_are_reported(tmp_path: Path) -> None:
    """hooks/run.sh keeps the installing shell's pid in .installing/pid: a pid that is gone is an
    install killed midway; no marker, no venv but a log is an install that failed."""
    import subprocess

    data = plugin_data()
    (data / ".installing").mkdir(parents=True)
    done = subprocess.Popen(["true"])
    done.wait()
    (data / ".installing" / "pid").write_text(f"{done.pid}\n")
    code, lines = doctor()
    (line,) = [ln for ln in lines if ln.startswith("plugin ")]
    assert "install STUCK (its process is gone and it never finished" in line, line
    assert code == 1
    (data / ".installing" / "pid").write_text(f"{os.getpid()}\n")  # a live one: still installing
    code, lines = doctor()
    (line,) = [ln for ln in lines if ln.startswith("plugin ")]
    assert ": installing (started " in line
    assert code == 0
    (data / ".installing" / "pid").unlink()
    (data / ".installing").rmdir()
    (data / "install.log").write_text("Collecting filelock\nERROR: No matching distribution found for filelock\n")
    code, lines = doctor()
    (line,) = [ln for ln in lines if ln.startswith("plugin ")]
    assert line.endswith("ends: ERROR: No matching distribution found for filelock)")  # no .failed: a log only
    assert ": install FAILED (the next hook run tries again; " in line
    assert code == 1
    # a long last line is cut at a word and said to be cut, as the log line's entry (it was cut bare at
    # 140 characters, read as the whole message)
    words = " ".join(f"dependency{i}" for i in range(30))
    (data / "install.log").write_text(f"Collecting filelock\nERROR: Cannot install {words}\n")
    _, lines = doctor()
    (line,) = [ln for ln in lines if ln.startswith("plugin ")]
    shown = line.split(" ends: ", 1)[1]
    assert shown.endswith(" ...)"), line
    head = shown.removesuffix(" ...)")
    assert f"ERROR: Cannot install {words}".startswith(head + " "), line
    assert len(head) <= 140, line


def test_ready_plugin_venv_and_marketplace_folder(tmp_path: Path) -> None:
    ready = plugin_data("session-watcher-session-watcher")
    (ready / "venv" / "bin").mkdir(parents=True)
    (ready / "venv" / "bin" / "session-watcher-hook").write_text("")
    fresh = plugin_data()
    fresh.mkdir(parents=True)
    code, lines = doctor()
    plugin = [ln for ln in lines if ln.startswith("plugin ")]
    assert plugin == [f"plugin     {fresh}: not installed yet (the first hook run installs it) | {ready}: ready"]
    assert code == 0
    assert len(set(labels(lines))) == len(lines)  # two data folders, still one line


def test_a_plugin_venv_under_the_clients_plugin_cache_dir(tmp_path: Path) -> None:
    """CLAUDE_CODE_PLUGIN_CACHE_DIR moves Claude Code's plugins folder (its cache and its data folders)
    out of <config>/plugins: doctor looked only there and said nothing of the plugin route's venv."""
    moved = tmp_path / "elsewhere"
    ready = moved / "data" / "session-watcher-session-watcher"
    (ready / "venv" / "bin").mkdir(parents=True)
    (ready / "venv" / "bin" / "session-watcher-hook").write_text("")
    _, lines = doctor()
    assert not [ln for ln in lines if ln.startswith("plugin ")]
    _, lines = doctor({**os.environ, "CLAUDE_CODE_PLUGIN_CACHE_DIR": str(moved)})
    assert [ln for ln in lines if ln.startswith("plugin ")] == [f"plugin     {ready}: ready"]


def test_command_line_says_whether_the_link_is_on_path(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "session-watcher").symlink_to("/nonexistent/venv/bin/session-watcher")
    _, lines = doctor()
    (line,) = [ln for ln in lines if ln.startswith("command ")]
    assert "a broken link" in line
    assert "NOT on your PATH" in line
    env = {**os.environ, "PATH": f"{home}/.local/bin:{os.environ['PATH']}"}
    _, lines = doctor(env)
    (line,) = [ln for ln in lines if ln.startswith("command ")]
    assert line.endswith("/.local/bin is on your PATH")


def test_doctor_runs_from_the_plugin_folder_without_its_venv(tmp_path: Path) -> None:
    """A stuck plugin install has no venv, so no dependencies: `python3 -m session_watcher doctor`
    from the plugin's folder (no site-packages here: -S) still reports it."""
    import subprocess
    import sys

    from tests.oracle import REPO

    data = plugin_data()
    (data / ".installing").mkdir(parents=True)
    old = time.time() - 3600
    os.utime(data / ".installing", (old, old))
    proc = subprocess.run([sys.executable, "-S", "-m", "session_watcher", "doctor"], cwd=REPO,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.stderr == ""
    assert proc.returncode == 1
    assert f"plugin     {data}: install STUCK (started 60 min ago and it never finished" in proc.stdout


def _installed_plugin(version: str = "0.1.0", enabled: bool = True) -> Path:
    """The plugin as `claude plugin install` records it: its cache folder (with the real hooks.json),
    installed_plugins.json and settings.json's enabledPlugins."""
    import json
    import shutil

    from tests.oracle import REPO

    cfg = Path(os.environ["CLAUDE_CONFIG_DIR"])
    root = cfg / "plugins" / "cache" / "session-watcher" / "session-watcher" / version
    (root / "hooks").mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "session_watcher" / "hooks" / "hooks.json", root / "hooks" / "hooks.json")
    (cfg / "plugins" / "installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": {
        "session-watcher@session-watcher": [{"scope": "user", "installPath": str(root), "version": version}]}}))
    (cfg / "settings.json").write_text(json.dumps({"enabledPlugins": {"session-watcher@session-watcher": enabled}}))
    return root


def test_the_plugin_routes_hooks_are_seen(tmp_path: Path) -> None:
    """On the plugin route settings.json holds none of our hooks: the plugin's hooks.json does."""
    root = _installed_plugin()
    _, lines = doctor()
    (settings,) = [ln for ln in lines if ln.startswith("settings ")]
    assert settings.endswith("no hooks of ours (the enabled plugin's run instead)")
    (hooks,) = [ln for ln in lines if ln.startswith("hooks ")]
    assert hooks == (f"hooks      the plugin session-watcher@session-watcher 0.1.0 (enabled, {root}): PostToolUse, "
                     "PostToolUseFailure, SessionEnd, SessionStart, Stop, SubagentStop, UserPromptSubmit")
    assert len({ln.split()[0] for ln in lines}) == len(lines), lines
    _installed_plugin(enabled=False)
    _, lines = doctor()
    assert any(ln.startswith("settings ") and ln.endswith("hooks for no events") for ln in lines)
    assert any("(installed, disabled, " in ln for ln in lines if ln.startswith("hooks "))


def test_the_plugin_venv_says_which_version_it_serves_and_an_update(tmp_path: Path) -> None:
    data = plugin_data("session-watcher-session-watcher")
    (data / "venv" / "bin").mkdir(parents=True)
    (data / "venv" / "bin" / "session-watcher-hook").write_text("")
    (data / "venv" / ".plugin-version").write_text('/cache/0.1.0   "version": "0.1.0",\n')
    _, lines = doctor()
    (line,) = [ln for ln in lines if ln.startswith("plugin ")]
    assert line == f"plugin     {data}: ready (built for 0.1.0)"
    (data / ".installing").mkdir()
    (data / ".installing" / "pid").write_text(f"{os.getpid()}\n")
    _, lines = doctor()
    (line,) = [ln for ln in lines if ln.startswith("plugin ")]
    assert line.startswith(f"plugin     {data}: ready (built for 0.1.0); updating (started ")
    (data / ".installing" / "pid").unlink()
    (data / ".installing").rmdir()
    (data / ".failed").write_text('/cache/0.2.0   "version": "0.2.0",\n')
    (data / "install.log").write_text("ERROR: Could not find a version that satisfies the requirement msgspec\n")
    code, lines = doctor()
    (line,) = [ln for ln in lines if ln.startswith("plugin ")]
    assert line.startswith(f"plugin     {data}: ready (built for 0.1.0), still serving; update FAILED (once; the "
                           "first hook run after ")
    assert line.endswith("satisfies the requirement msgspec")
    assert code == 1


def test_a_failed_build_says_when_it_retries_and_how_to_retry_now(tmp_path: Path) -> None:
    """What failed (the log's last line), how often in a row, when the next hook run builds again
    (hooks/run.sh's back-off: 1, 2, 4 ... 30 min after the last failure), and the one command that
    makes the next hook run build at once."""
    import shlex
    import time

    from session_watcher.cli.doctor import retry_wait_min

    assert [retry_wait_min(n) for n in (1, 2, 3, 4, 5, 6, 7, 20)] == [1, 2, 4, 8, 16, 30, 30, 30]
    data = plugin_data("session-watcher-session-watcher")
    data.mkdir(parents=True)
    (data / "install.log").write_text("ERROR: No matching distribution found for filelock\n")
    failed = data / ".failed"
    failed.write_text('/cache/0.1.0   "version": "0.1.0",\n3\n')
    at = time.time() - 60
    os.utime(failed, (at, at))
    _, lines = doctor()
    (line,) = [ln for ln in lines if ln.startswith("plugin ")]
    due = time.strftime("%H:%M", time.localtime(at + 4 * 60))
    assert (f"install FAILED (3 times in a row; the first hook run after {due} tries again; to retry at the "
            f"next hook run: rm {shlex.quote(str(failed))}); {data}/install.log ends: ERROR: No matching "
            "distribution found for filelock") in line
    at = time.time() - 5 * 60
    os.utime(failed, (at, at))
    _, lines = doctor()
    assert "install FAILED (3 times in a row; the next hook run tries again; " in next(
        ln for ln in lines if ln.startswith("plugin "))


def test_the_plugins_command_runs_doctor_before_its_venv_exists(tmp_path: Path) -> None:
    """From the plugin's own folder, named by its version as in the plugin cache, with a Python that
    sees no site-packages (-S): what a user whose first install failed can run."""
    import shutil
    import subprocess
    import sys

    from tests.oracle import REPO

    root = tmp_path / "cache" / "0.1.0"
    shutil.copytree(REPO / "session_watcher", root, ignore=shutil.ignore_patterns("__pycache__"))
    data = plugin_data("session-watcher-session-watcher")
    data.mkdir(parents=True)
    (data / "install.log").write_text("ERROR: No matching distribution found for filelock\n")
    env = {**os.environ, "PYTHON": sys.executable, "CLAUDE_PLUGIN_DATA": str(data)}
    proc = subprocess.run(["sh", str(root / "bin" / "session-watcher"), "doctor"], capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert proc.returncode == 1, proc.stderr
    assert f"plugin     {data}: install FAILED (the next hook run tries again; " in proc.stdout
    other = subprocess.run(["sh", str(root / "bin" / "session-watcher"), "status"], capture_output=True, text=True,
                           env=env, timeout=60, check=False)
    assert other.returncode == 1
    assert "not installed yet" in other.stderr
    assert "bin/session-watcher doctor" in other.stderr


def test_the_plugins_command_finds_its_venv_from_a_terminal(tmp_path: Path) -> None:
    """Run from a terminal (Claude Code sets CLAUDE_PLUGIN_DATA for hooks only), the plugin's command
    in the plugin cache, <config>/plugins/cache/<marketplace>/<plugin>/<version>, runs the venv its
    hooks built in <config>/plugins/data/<plugin>-<marketplace>: it looked in install.sh's folder and
    said "not installed yet" while doctor said the plugin's venv was ready."""
    import shutil
    import subprocess

    from tests.oracle import REPO

    plugins = tmp_path / "claude" / "plugins"
    root = plugins / "cache" / "my.market" / "session-watcher" / "0.1.0"
    shutil.copytree(REPO / "session_watcher", root, ignore=shutil.ignore_patterns("__pycache__"))
    venv_bin = plugins / "data" / "session-watcher-my-market" / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "session-watcher").write_text('#!/bin/sh\necho "the venv: $*"\n')
    (venv_bin / "session-watcher").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PLUGIN_DATA"}
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg-data")  # install.sh's folder: nothing there
    proc = subprocess.run(["sh", str(root / "bin" / "session-watcher"), "status", "--json"], capture_output=True,
                          text=True, env=env, timeout=60, check=False)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "the venv: status --json\n", "")
    # CLAUDE_PLUGIN_DATA (the plugin's slash command passes it) still names the folder
    elsewhere = tmp_path / "elsewhere"
    proc = subprocess.run(["sh", str(root / "bin" / "session-watcher"), "status"], capture_output=True, text=True,
                          env={**env, "CLAUDE_PLUGIN_DATA": str(elsewhere)}, timeout=60, check=False)
    assert proc.returncode == 1
    assert f"not installed yet in {elsewhere} " in proc.stderr


def test_doctor_reads_a_bad_state_without_quarantining_it(tmp_path: Path) -> None:
    """doctor holds no session lock, so it only reports a state it cannot use: the file stays where
    it is (a hook holding the lock may be writing it), for the next hook run to quarantine."""
    t = tmp_path / "s1.jsonl"
    t.write_bytes((TRANSCRIPTS / "short.jsonl").read_bytes())
    hook("Stop", payload("s1", t, "Stop", cwd=str(tmp_path)))
    main = Path(os.environ["SESSION_WATCHER_HOME"]) / "state" / "sessions" / "s1.json"
    main.write_bytes(b'{"schema": 4, "torn')
    _code, lines = doctor()
    (guard,) = [ln for ln in lines if ln.startswith("guard ")]
    assert "newest session: its state cannot be used" in guard
    assert "corrupt; left in place" in guard
    assert main.read_bytes() == b'{"schema": 4, "torn'
    quarantine = [ln for ln in lines if ln.startswith("quarantine ")]
    assert quarantine == ["quarantine 0 files"]


def test_within_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each line within COLUMNS (80 when unset and not a terminal): a long path wraps under its value,
    its label alone at the line's start."""
    monkeypatch.delenv("COLUMNS")
    _, lines = doctor()
    # a path longer than 80 (a temp folder's, under parallel workers) is the one thing past it, alone
    assert all(len(ln) <= 80 or (len(ln.split()) == 1 and "/" in ln) for ln in lines), lines
    assert all(ln[:11].strip() or ln.startswith(" " * 11) for ln in lines)
    monkeypatch.setenv("COLUMNS", "60")
    _, narrow = doctor()
    # a path longer than the room is never cut: on a line of its own, past 60 only when it is longer
    assert all(len(ln) <= 60 or (len(ln.split()) == 1 and "/" in ln) for ln in narrow), narrow
    assert len(narrow) > len(lines)


def test_a_state_gone_after_the_listing_is_no_fault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A state listed, then removed before doctor looks at its mode (the daily sweep, state.tidy, or
    a hook's quarantine): doctor goes on; it ended in a FileNotFoundError."""
    from session_watcher.cli import doctor as doctor_module
    from session_watcher.state import store

    t = tmp_path / "s1.jsonl"
    t.write_bytes((TRANSCRIPTS / "short.jsonl").read_bytes())
    hook("Stop", payload("s1", t, "Stop", cwd=str(tmp_path)))
    listed = store.list_sessions()
    monkeypatch.setattr(store, "list_sessions", lambda: [*listed, (0.0, "swept-since")])
    lines, _ok = doctor_module.report()
    assert [ln[:13] for ln in lines if ln.startswith("sessions ")] == ["sessions   2;"]
    assert not [ln for ln in lines if ln.startswith("perms ")]


def test_the_plugins_command_finds_its_venv_under_a_plugin_cache_dir_of_the_users_choice(tmp_path: Path) -> None:
    """CLAUDE_CODE_PLUGIN_CACHE_DIR moves Claude Code's plugins folder (2.1.332: its `cache` and its
    `data` both under it, siblings as in <config>/plugins): the command run from a terminal finds the
    venv there too, in the `data` folder beside the cache it sits in (Claude Code makes it for the
    hooks); it looked only under a folder named `plugins` and said "not installed yet" of
    install.sh's folder."""
    import shutil
    import subprocess

    from tests.oracle import REPO

    plugins = tmp_path / "my cc plugins"
    root = plugins / "cache" / "market" / "session-watcher" / "0.2.0"
    shutil.copytree(REPO / "session_watcher", root, ignore=shutil.ignore_patterns("__pycache__"))
    venv_bin = plugins / "data" / "session-watcher-market" / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "session-watcher").write_text('#!/bin/sh\necho "the venv: $*"\n')
    (venv_bin / "session-watcher").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PLUGIN_DATA"}
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg-data")  # install.sh's folder: nothing there
    proc = subprocess.run(["sh", str(root / "bin" / "session-watcher"), "status"], capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "the venv: status\n", "")
    # a cache of some other layout, with no data folder beside it: not taken for the plugin's
    other = tmp_path / "cache" / "a" / "b" / "c"
    shutil.copytree(REPO / "session_watcher" / "bin", other / "bin")
    proc = subprocess.run(["sh", str(other / "bin" / "session-watcher"), "status"], capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert proc.returncode == 1
    assert f"not installed yet in {tmp_path / 'xdg-data' / 'session-watcher'} " in proc.stderr


def _plugin_copy(plugins: Path, market: str = "market") -> Path:
    """The plugin as Claude Code copies it: <plugins>/cache/<marketplace>/session-watcher/<version>."""
    import shutil

    from tests.oracle import REPO

    root = plugins / "cache" / market / "session-watcher" / "0.1.0"
    shutil.copytree(REPO / "session_watcher", root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _venv_of_this_checkout(data: Path) -> None:
    """A plugin venv whose command runs this checkout's package (the dev venv's Python)."""
    import sys

    venv_bin = data / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "session-watcher").write_text(f'#!/bin/sh\nexec {sys.executable} -m session_watcher "$@"\n')
    (venv_bin / "session-watcher").chmod(0o755)
    (venv_bin / "session-watcher-hook").write_text("")


def test_the_plugins_command_names_itself_in_what_it_suggests(tmp_path: Path) -> None:
    """The plugin route puts no `session-watcher` on PATH: doctor said "not linked ... (./install.sh
    links it)" and told the plugin user to run `session-watcher config set ...`; status and config's
    errors named `session-watcher` too. Every command they suggest is the plugin's own, by its path."""
    import re
    import subprocess

    config = Path(os.environ["CLAUDE_CONFIG_DIR"])
    root = _plugin_copy(config / "plugins")
    _venv_of_this_checkout(config / "plugins" / "data" / "session-watcher-market")
    command = str(root / "bin" / "session-watcher")
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PLUGIN_DATA"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["sh", command, *args], capture_output=True, text=True, env=env, timeout=60,
                              check=False)

    from session_watcher.base.route import shown

    mine = shown(command)
    doctor = run("doctor")
    assert doctor.returncode == 0, doctor.stderr
    lines = doctor.stdout.splitlines()
    assert [ln for ln in lines if ln.startswith("command ")] == \
        [f"command    {mine} (the plugin's; not on your PATH: run it by this path)"]
    suggested = re.findall(r"`([^`]*)`", doctor.stdout)
    assert any(s.endswith(" config set otlp.enabled true") for s in suggested), suggested
    for text in suggested:  # each a command of the plugin's, never the bare one it does not have
        assert not text.startswith("session-watcher"), text
    status = run("status")
    assert status.returncode == 1
    assert f"`{mine} doctor` checks the hooks)" in status.stderr
    bad = Path(os.environ["SESSION_WATCHER_HOME"]) / "config" / "config.toml"
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_text("bp_amber = [")
    shown_bad = run("config", "show")
    assert shown_bad.returncode == 1
    assert f"`{mine} config set` can fix it" in shown_bad.stderr


def test_a_plugin_venv_under_cowork_plugins(tmp_path: Path) -> None:
    """Claude Code's cowork mode (CLAUDE_CODE_USE_COWORK_PLUGINS, `claude plugin --cowork`, the desktop
    app's setting; 2.1.332) keeps the plugins, their copies and data folders in <config>/cowork_plugins:
    doctor did not look there."""
    ready = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "cowork_plugins" / "data" / "session-watcher-session-watcher"
    (ready / "venv" / "bin").mkdir(parents=True)
    (ready / "venv" / "bin" / "session-watcher-hook").write_text("")
    _, lines = doctor()
    assert [ln for ln in lines if ln.startswith("plugin ")] == [f"plugin     {ready}: ready"]


def test_the_plugins_command_from_a_seed_dir_finds_its_venv_in_the_plugins_folder(tmp_path: Path) -> None:
    """A copy in a CLAUDE_CODE_PLUGIN_SEED_DIR (<seed>/cache/<marketplace>/<plugin>/<version>, read
    only) has its data folder in Claude Code's plugins folder, not beside it in the seed (2.1.332:
    every plugin's CLAUDE_PLUGIN_DATA is <plugins folder>/data/<id>): run from a terminal, the command
    looked only beside it, then in install.sh's folder. The same for a copy in cowork_plugins."""
    import subprocess

    config = Path(os.environ["CLAUDE_CONFIG_DIR"])
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PLUGIN_DATA"}
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg-data")  # install.sh's folder: nothing there
    seed_root = _plugin_copy(tmp_path / "seed", "m")
    cowork_root = _plugin_copy(config / "cowork_plugins", "m")
    for root, data in ((seed_root, config / "plugins" / "data" / "session-watcher-m"),
                       (cowork_root, config / "cowork_plugins" / "data" / "session-watcher-m")):
        venv_bin = data / "venv" / "bin"
        venv_bin.mkdir(parents=True)
        (venv_bin / "session-watcher").write_text(f'#!/bin/sh\necho "{data.parent.parent.name}: $*"\n')
        (venv_bin / "session-watcher").chmod(0o755)
        proc = subprocess.run(["sh", str(root / "bin" / "session-watcher"), "status"], capture_output=True,
                              text=True, env=env, timeout=60, check=False)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"{data.parent.parent.name}: status\n", ""), root
        (venv_bin / "session-watcher").unlink()
    # no venv yet: a cowork copy says where its hooks will build it
    proc = subprocess.run(["sh", str(cowork_root / "bin" / "session-watcher"), "status"], capture_output=True,
                          text=True, env=env, timeout=60, check=False)
    assert proc.returncode == 1
    assert f"not installed yet in {config / 'cowork_plugins' / 'data' / 'session-watcher-m'} " in proc.stderr


def test_a_plugin_record_with_a_nul_in_its_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """installed_plugins.json (of <config>/plugins, cowork_plugins or a seed folder) read as it comes:
    an installPath with a NUL made doctor's comparison with CLAUDE_PLUGIN_ROOT raise (exit 3)."""
    import json

    config = Path(os.environ["CLAUDE_CONFIG_DIR"])
    for folder in ("plugins", "cowork_plugins"):
        (config / folder).mkdir(parents=True, exist_ok=True)
        (config / folder / "installed_plugins.json").write_text(json.dumps(
            {"plugins": {"session-watcher@m": [{"installPath": "/a\0b", "version": "1"}]}}))
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(config / "p"))
    code, _ = doctor()
    assert code in (0, 1)


def test_the_plugins_command_with_a_space_in_its_path_is_never_wrapped(tmp_path: Path) -> None:
    """The plugin's command by its path, quoted where it holds a space: doctor wrapped its lines at
    spaces, the quoted path's too, so that what was copied from the two lines was no command."""
    import subprocess

    plugins = tmp_path / "my plugins"
    root = _plugin_copy(plugins)
    _venv_of_this_checkout(plugins / "data" / "session-watcher-market")
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PLUGIN_DATA"}
    env["COLUMNS"] = "60"
    proc = subprocess.run(["sh", str(root / "bin" / "session-watcher"), "doctor"], capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    mine = f"'{root / 'bin' / 'session-watcher'}'"
    assert proc.stdout.count(mine) >= 2, proc.stdout  # the command's line and the otlp line's suggestion


def test_sessions_on_disk_the_hooks_never_saw_are_counted_not_none(tmp_path: Path) -> None:
    """Sessions in Claude Code's folder that no hook saw (open before the install, or from before it):
    doctor said "none yet: hooks have not fired" while `report` listed them. It counts them (a
    subagent's file is its session's, not one more), says the hooks have not fired for any and when
    they start; once a hook fires, the count of watched sessions as before."""
    project = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / "-home-u-proj"
    project.mkdir(parents=True)
    ids = ("258c7280-ae70-4798-800f-63464d01a85d", "ae4a77f8-aedd-4bc1-888f-c94edc91af04")
    for sid in ids:
        (project / f"{sid}.jsonl").write_bytes((TRANSCRIPTS / f"{sid}.jsonl").read_bytes())
    sub = project / ids[0] / "subagents"
    sub.mkdir(parents=True)
    (sub / "agent-a1.jsonl").write_bytes((TRANSCRIPTS / "subagent.jsonl").read_bytes())
    listed = sw("report", "--json")
    assert listed.returncode == 0, listed.stderr
    assert all(sid in listed.stdout.decode() for sid in ids)  # what report lists
    code, lines = doctor()
    assert code == 0, lines
    assert [ln for ln in lines if ln.startswith("sessions ")] == [
        "sessions   none watched yet: 2 sessions are on disk (`session-watcher report` reads them), but the hooks "
        "have not fired for any: they start with the next Claude Code session (one open since before the install "
        "may need its client restarted)"]
    hook("Stop", payload(ids[1], project / f"{ids[1]}.jsonl", "Stop"))
    _code, lines = doctor()
    assert [ln[:13] for ln in lines if ln.startswith("sessions ")] == ["sessions   1;"]


def test_no_session_anywhere_is_none_yet() -> None:
    """Nothing on disk and no hook fired: "none yet", and what to start."""
    _code, lines = doctor()
    assert [ln for ln in lines if ln.startswith("sessions ")] == [
        "sessions   none yet: hooks have not fired (start a Claude Code session)"]


@pytest.mark.parametrize(("on_disk", "said"), [(1000, "1000"), (1001, "1000+")])
def test_sessions_on_disk_are_counted_up_to_a_bound_by_their_names(tmp_path: Path, on_disk: int, said: str) -> None:
    """A year of sessions no hook saw: doctor lists their folders, reads no transcript and stops
    counting past its bound ("1000+"); before, it found every log and its subagents' (4,385 sessions,
    1.9 GB: 18 ms of a doctor's 176 ms, and growing with the history). Exactly 1000 is said as it is
    (it was "1000+": the count stopped at the bound, so 1000 and more read alike)."""
    project = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / "-home-u-proj"
    project.mkdir(parents=True)
    for n in range(on_disk):
        (project / f"{n:08x}-0000-4000-8000-000000000000.jsonl").write_bytes(b"")  # named, never read
    code, lines = doctor()
    assert code == 0, lines
    assert [ln for ln in lines if ln.startswith("sessions ")] == [
        f"sessions   none watched yet: {said} sessions are on disk (`session-watcher report` reads them), "
        "but the hooks have not fired for any: they start with the next Claude Code session (one open since before "
        "the install may need its client restarted)"]


def test_the_count_lists_one_folder_at_a_time_and_stops_at_its_bound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`agents.sessions_on_disk`: each agent's sessions by their names (a Codex rollout's thread id,
    a transcript's name; a subagent's file is its session's; a session under two config folders is
    one), and once the bound is reached no other folder is listed."""
    from session_watcher import agents

    first, second = tmp_path / "c1", tmp_path / "c2"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", f"{first},{second}")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    for cfg in (first, second):
        (cfg / "projects" / "-p").mkdir(parents=True)
        (cfg / "projects" / "-p" / "s1.jsonl").write_bytes(b"")  # the same session in both folders: one
    (first / "projects" / "-p" / "s2.jsonl").write_bytes(b"")
    (first / "projects" / "-p" / "s1" / "subagents").mkdir(parents=True)
    (first / "projects" / "-p" / "s1" / "subagents" / "agent-a.jsonl").write_bytes(b"")
    (first / "projects" / "-q").mkdir()
    (first / "projects" / "-q" / "s3.jsonl").write_bytes(b"")
    day = tmp_path / "codex" / "sessions" / "2026" / "11" / "20"
    day.mkdir(parents=True)
    (day / "rollout-2026-11-20T10-00-00-019f1f6f-311c-7543-b0f9-f126da3c5434.jsonl").write_bytes(b"")
    (day / "notes.jsonl").write_bytes(b"")  # not a rollout's name
    assert agents.sessions_on_disk(100) == 4
    listed: list[str] = []
    real_scandir = os.scandir

    def scandir(path: str) -> object:
        listed.append(os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert agents.sessions_on_disk(2) == 2
    assert listed == [str(first / "projects"), str(first / "projects" / "-p")], listed  # -q, c2 and codex: not


def test_both_routes_hooks_are_named_as_running_twice(tmp_path: Path) -> None:
    """install.sh's hooks in settings.json and the enabled plugin's (the README's "run ./install.sh
    too" for a status line): doctor listed both routes' hooks and said nothing of it; it says each
    hook runs twice and which command keeps which route. A disabled plugin's are not named so; where
    install.sh added Codex's hooks, its --uninstall is said to take them too."""
    import json
    import subprocess
    import sys

    wide = {**os.environ, "COLUMNS": "1000"}
    _installed_plugin()
    settings_file = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json"
    doc = json.loads(settings_file.read_text())
    doc["hooks"] = {"Stop": [{"hooks": [{"type": "command", "command": "/v/bin/python",
                                         "args": ["-I", "-S", "/v/bin/session-watcher-hook", "Stop"]}]}]}
    settings_file.write_text(json.dumps(doc))
    _, lines = doctor(wide)
    (settings,) = [ln for ln in lines if ln.startswith("settings ")]
    assert settings == (f"settings   {settings_file}: hooks for Stop; the enabled plugin registers them too, so each "
                        "runs twice (harmless, slower): keep one route, install.sh's for the status line (`claude "
                        "plugin uninstall session-watcher@session-watcher`), or the plugin's (`./install.sh "
                        "--uninstall`)")
    # install.sh registered Codex's hooks as well: --uninstall takes them, which keeping the plugin does not need
    codex_home = tmp_path / "codex"
    codex_home.mkdir()
    env = {**wide, "CODEX_HOME": str(codex_home)}
    added = subprocess.run([sys.executable, "-m", "session_watcher.cli.install_codex", "add", "/v/bin"], env=env,
                           capture_output=True, timeout=60, check=True)
    assert (codex_home / "hooks.json").exists(), added
    _, lines = doctor(env)
    (settings,) = [ln for ln in lines if ln.startswith("settings ")]
    assert settings.endswith("or the plugin's (`./install.sh --uninstall`, which takes its Codex hooks too)"), settings
    doc["enabledPlugins"] = {"session-watcher@session-watcher": False}
    settings_file.write_text(json.dumps(doc))
    _, lines = doctor(wide)
    assert f"settings   {settings_file}: hooks for Stop" in lines


def test_the_guard_line_passes_over_a_newer_session_with_no_api_call(tmp_path: Path) -> None:
    """`claude plugin install` runs the hooks of a session that never prompts: doctor's guard line
    read that newest state and said "cannot tell yet" of the session at work. It reads the newest
    with an API call and names the one passed over, as `status` does; with none, as before."""
    wide = {**os.environ, "COLUMNS": "1000"}
    empty = tmp_path / "s0.jsonl"
    empty.write_bytes(b"")
    hook("SessionStart", payload("s0-no-call", empty, "SessionStart", cwd=str(tmp_path)))
    _, lines = doctor(wide)
    (guard,) = [ln for ln in lines if ln.startswith("guard ")]
    assert guard.endswith("newest session: cannot tell yet (no API call or no cache write seen)"), guard
    t = tmp_path / "s1.jsonl"
    t.write_bytes((TRANSCRIPTS / "short.jsonl").read_bytes())
    hook("Stop", payload("s1-calls", t, "Stop", cwd=str(tmp_path)))
    time.sleep(0.05)
    hook("SessionStart", payload("s2-no-call", empty, "SessionStart", cwd=str(tmp_path)))
    _, lines = doctor(wide)
    (sessions,) = [ln for ln in lines if ln.startswith("sessions ")]
    assert sessions.endswith("(s2-no-call)")  # the hooks' own news: the newest state
    (guard,) = [ln for ln in lines if ln.startswith("guard ")]
    assert "newest session (s1-calls; passed over s2-no-ca: no API call): cold by the documented lifetime" in \
        guard, guard
    assert "cannot tell yet" not in guard
    for n in (3, 4):  # more passed over: the newest named, the rest counted, as `status` says them
        time.sleep(0.05)
        hook("SessionStart", payload(f"s{n}-no-call", empty, "SessionStart", cwd=str(tmp_path)))
    _, lines = doctor(wide)
    (guard,) = [ln for ln in lines if ln.startswith("guard ")]
    assert "newest session (s1-calls; passed over s4-no-ca and 2 more: no API call): cold by the documented " \
        "lifetime" in guard, guard
    said = sw("status").stdout.decode()
    assert "passed over s4-no-ca and 2 more: no API call" in " ".join(said.split()), said


def test_the_guard_line_keeps_a_newer_session_with_a_call_but_no_cache_write(tmp_path: Path) -> None:
    """A session whose calls wrote no cache (a prompt under the model's caching floor) made API calls:
    the guard line reads it, "cannot tell yet", and does not pass it over as one with no API call
    for an older session's cache."""
    wide = {**os.environ, "COLUMNS": "1000"}
    t = tmp_path / "s1.jsonl"
    t.write_bytes((TRANSCRIPTS / "short.jsonl").read_bytes())
    hook("Stop", payload("s1-cached", t, "Stop", cwd=str(tmp_path)))
    time.sleep(0.05)
    uncached = tmp_path / "s2.jsonl"
    uncached.write_bytes((TRANSCRIPTS / "short.jsonl").read_bytes()
                         .replace(b'"cache_creation_input_tokens":13835', b'"cache_creation_input_tokens":0')
                         .replace(b'"ephemeral_1h_input_tokens":13835', b'"ephemeral_1h_input_tokens":0'))
    assert b"13835" not in uncached.read_bytes()
    hook("Stop", payload("s2-uncached", uncached, "Stop", cwd=str(tmp_path)))
    _, lines = doctor(wide)
    (guard,) = [ln for ln in lines if ln.startswith("guard ")]
    assert guard.endswith("newest session: cannot tell yet (no API call or no cache write seen)"), guard
    assert "passed over" not in guard


def test_a_long_log_entry_is_cut_at_a_word_said_to_be_cut_and_the_log_named() -> None:
    """The log's last entry longer than doctor shows (an unknown key's message lists every key):
    cut at a space, marked as cut, and the log's path given for the rest; it was cut bare at 140
    characters, "(known: include, exclude, cRati", read as the whole message. A short one stays whole.
    Each is said with its age: an entry an older version wrote before an upgrade (a key it did not
    know yet) read as news of now."""
    from session_watcher.base import paths
    from session_watcher.cli import doctor as doctor_module

    log = Path(paths.log_file())
    log.parent.mkdir(parents=True, exist_ok=True)
    keys = ", ".join(f"key_number_{i}" for i in range(30))
    then = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(time.time() - 3 * 86400))
    long = (f"{then} pid 28089 /p/.claude/session-watcher.toml: unknown key 'x' (known: {keys}); "
            "using defaults")
    log.write_text(long + "\n")
    lines, _ok = doctor_module.report()
    [said] = [ln for ln in lines if ln.startswith("log ")]
    assert said.startswith("log        1 entry; last, 3 days ago: "), said
    shown = said.split(" ago: ", 1)[1]
    head, rest = shown.split(" ... ", 1)
    assert long.startswith(head + " ")
    assert len(head) <= doctor_module.LOG_SHOWN
    assert rest == f"(the whole entry: {log})"
    # a word that ends just at the cut is kept whole (it was dropped with the space after it)
    edge = f"{then} pid 1 " + "w" * (doctor_module.LOG_SHOWN - len(f"{then} pid 1 ")) + " and the rest"
    log.write_text(edge + "\n")
    lines, _ok = doctor_module.report()
    [said] = [ln for ln in lines if ln.startswith("log ")]
    assert said.split(" ago: ", 1)[1] == f"{edge[:doctor_module.LOG_SHOWN]} ... (the whole entry: {log})", said
    short = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} pid 1 a short entry"
    log.write_text(long + "\n" + short + "\n")
    lines, _ok = doctor_module.report()
    [said] = [ln for ln in lines if ln.startswith("log ")]
    assert re.fullmatch(r"log        2 entries; last, [^:]+ ago: " + re.escape(short), said), said


def test_a_log_entry_dated_ahead_or_undated_is_shown_without_an_age() -> None:
    """An entry whose time is after doctor's clock (written under a clock or a time zone ahead: the log
    keeps local time with no offset) has no age to give: it read "last, 0 s ago", news of now, for an
    entry of a day ahead; it stands with its own time alone, as one whose start is no time does."""
    from session_watcher.base import paths
    from session_watcher.cli import doctor as doctor_module

    log = Path(paths.log_file())
    log.parent.mkdir(parents=True, exist_ok=True)
    for entry in (f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.localtime(time.time() + 86400))} pid 7 ahead",
                  "(no time) pid 7 at its start"):
        log.write_text(entry + "\n")
        lines, _ok = doctor_module.report()
        [said] = [ln for ln in lines if ln.startswith("log ")]
        assert said == f"log        1 entry; last: {entry}", said


def test_doctor_says_the_one_command_that_puts_the_fast_command_back_over_pips_wrapper(tmp_path: Path) -> None:
    """A `pip install` into install.sh's venv writes pip's console-script wrapper over the command the
    install wrote (pip's own script maker, clobbering as pip sets it): doctor, run through that very
    wrapper, names it and the one command that writes the fast one back; run, doctor is silent again."""
    import importlib
    import shlex
    import subprocess
    import sys
    import sysconfig
    from typing import Any

    scripts: Any = importlib.import_module("pip._vendor.distlib.scripts")  # pip's own script maker (untyped)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    bin_dir = venv / "bin"
    python = bin_dir / "python"
    # the venv sees this checkout and the dev venv's packages, as an install's sees its own site-packages
    found = [str(Path(__file__).resolve().parent.parent), sysconfig.get_paths()["purelib"]]
    env = {**os.environ, "COLUMNS": "1000", "PYTHONPATH": os.pathsep.join(found)}
    subprocess.run([str(python), "-m", "session_watcher.hooks.launchers", str(bin_dir)], check=True, env=env,
                   timeout=60)

    def wrapper_lines() -> list[str]:
        proc = subprocess.run([str(bin_dir / "session-watcher"), "doctor"], capture_output=True, text=True,
                              env=env, timeout=120, check=False)
        assert "Traceback" not in proc.stderr, proc.stderr
        return [ln for ln in proc.stdout.splitlines() if "pip's wrapper" in ln]

    assert wrapper_lines() == []  # the install's own command
    maker = scripts.ScriptMaker(None, str(bin_dir))
    maker.clobber = True  # pip's (pip._internal.operations.install.wheel)
    maker.executable = str(python)
    maker.variants = {""}
    maker.make("session-watcher = session_watcher.cli:run")
    assert "import re" in (bin_dir / "session-watcher").read_text()
    (line,) = wrapper_lines()
    assert line.startswith(f"command    {bin_dir / 'session-watcher'} is pip's wrapper again"), line
    told = line.split("`")[-2]
    assert shlex.split(told)[1:] == ["-I", "-m", "session_watcher.hooks.launchers", str(bin_dir)], told
    # as told, but for -I: this test's venv finds the package through PYTHONPATH, an install's in its own site-packages
    subprocess.run([str(python), *shlex.split(told)[2:]], check=True, env=env, timeout=60)
    assert "import re" not in (bin_dir / "session-watcher").read_text()
    assert wrapper_lines() == []
