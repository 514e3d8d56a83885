"""install.sh into a temp HOME, SESSION_WATCHER_HOME and CLAUDE_CONFIG_DIR (the venv is built once)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.cli.install import SYNC_EVENTS, hook_entries
from tests.oracle import REPO, TRANSCRIPTS, oracle
from tests.statefile import read_state, state_file

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

if TYPE_CHECKING:
    from pathlib import Path

EVENTS = ("PostToolUse", "PostToolUseFailure", "Stop", "SubagentStop", "SessionStart", "UserPromptSubmit",
          "SessionEnd")

USER_SETTINGS: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"]},
    "hooks": {
        "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    },
    "env": {"FOO": "1"},
}


# What the install says, read by the words: its lines unwrapped (test_every_line_install_and_uninstall_
# print_fits_80_columns reads the layout, at the width of a terminal-less run)
WIDE = "1000"


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", WIDE)


class Box:
    """One temp world: HOME, SESSION_WATCHER_HOME, a Claude config dir; COLUMNS `columns` (None:
    unset)."""

    def __init__(self, root: Path, columns: str | None = WIDE) -> None:
        self.root = root
        self.columns = columns
        self.home = root / "home"
        self.sw_home = root / "sw"
        self.claude = root / "claude"
        self.home.mkdir(parents=True, exist_ok=True)
        self.bin = self.sw_home / "data" / "venv" / "bin" / "session-watcher"

    def env(self, claude: Path | None = None, path_extra: str | None = None) -> dict[str, str]:
        path = os.environ.get("PATH", "/usr/bin:/bin")
        return {
            "PATH": f"{path_extra}:{path}" if path_extra else path,
            "HOME": str(self.home),
            "SESSION_WATCHER_HOME": str(self.sw_home),
            "CLAUDE_CONFIG_DIR": str(claude or self.claude),
            "XDG_CACHE_HOME": os.environ.get("XDG_CACHE_HOME", str(self.home / ".cache")),
            "LANG": "C.UTF-8",
            **({"COLUMNS": self.columns} if self.columns else {}),
        }

    def install(self, *args: str, claude: Path | None = None,
                path_extra: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["sh", str(REPO / "install.sh"), *args], env=self.env(claude, path_extra),
                              capture_output=True, text=True, timeout=600, check=False)

    @property
    def link(self) -> Path:
        return self.home / ".local" / "bin" / "session-watcher"

    def settings(self, claude: Path | None = None) -> Path:
        return (claude or self.claude) / "settings.json"


def without_claude_dir(env: dict[str, str]) -> dict[str, str]:
    """`env` with CLAUDE_CONFIG_DIR unset: Claude Code's folders are its defaults, under HOME."""
    return {k: v for k, v in env.items() if k != "CLAUDE_CONFIG_DIR"}


def write_settings(path: Path, doc: dict[str, Any]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc, indent=2) + "\n"
    path.write_text(text)
    return text


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Install once over a settings file with the user's own hooks; then install a second time."""
    b = Box(tmp_path_factory.mktemp("install"))
    original = write_settings(b.settings(), USER_SETTINGS)
    first = b.install("--no-demo")
    assert first.returncode == 0, first.stdout + first.stderr
    # Claude Code rewrites settings.json in its own style (JSON.stringify: no final newline): that is
    # no change to what session-watcher added, so the second run must neither write nor back it up
    claude_style = json.dumps(json.loads(b.settings().read_text()), indent=2)
    b.settings().write_text(claude_style)
    backups_first = sorted(b.claude.glob("settings.json.bak-session-watcher-*"))
    second = b.install("--no-demo", path_extra=str(b.home / ".local" / "bin"))
    assert second.returncode == 0, second.stdout + second.stderr
    return {"box": b, "original": original, "first": first, "after_first": claude_style, "second": second,
            "backups_first": backups_first}


def ours(bin_dir: str, event: str) -> list[dict[str, Any]]:
    """What the install registers for `event`: one hook, and on SessionStart also the synchronous
    `inject` one (a fresh session's pending handoff)."""
    return [entry for ev, entry in hook_entries(bin_dir) if ev == event]


def our_hooks(doc: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [h for g in doc.get("hooks", {}).get(event, []) for h in g.get("hooks", [])
            if "session-watcher" in json.dumps(h)]


def test_settings_merged_and_users_keys_kept(box: dict[str, Any]) -> None:
    b: Box = box["box"]
    doc = json.loads(box["after_first"])
    for key in ("model", "permissions", "env"):
        assert doc[key] == USER_SETTINGS[key]
    assert doc["hooks"]["Notification"] == USER_SETTINGS["hooks"]["Notification"]
    assert USER_SETTINGS["hooks"]["PostToolUse"][0] in doc["hooks"]["PostToolUse"]
    for event in EVENTS:
        assert our_hooks(doc, event) == ours(str(b.bin.parent), event)
        hook = our_hooks(doc, event)[0]
        # the exec form: the venv's interpreter and the launcher as argv, no shell to quote for
        assert hook["command"] == str(b.bin.parent / "python")
        assert hook["args"] == ["-I", "-S", str(b.bin.parent / "session-watcher-hook"), event]
        # async (the agent does not wait) except where the output must reach the user
        assert hook.get("async", False) is (event not in SYNC_EVENTS)
    [_, inject] = our_hooks(doc, "SessionStart")
    assert inject["args"][-2:] == ["SessionStart", "inject"]
    assert "async" not in inject  # its additionalContext must reach the model before the first request
    assert str(b.bin.parent) in doc["statusLine"]["command"]
    assert "statusline" in doc["statusLine"]["command"]
    assert doc["statusLine"]["type"] == "command"
    assert doc["statusLine"]["refreshInterval"] == 15  # the prompt-cache countdown moves while idle
    assert b.bin.exists()


def test_backup_written_first(box: dict[str, Any]) -> None:
    b: Box = box["box"]
    backups = sorted(b.claude.glob("settings.json.bak-session-watcher-*"))
    assert backups
    assert backups[0].read_text() == box["original"]


def test_second_run_is_idempotent(box: dict[str, Any]) -> None:
    b: Box = box["box"]
    assert b.settings().read_text() == box["after_first"]
    assert len(box["backups_first"]) == 1
    assert sorted(b.claude.glob("settings.json.bak-session-watcher-*")) == box["backups_first"]
    assert "backup:" not in box["second"].stdout
    doc = json.loads(b.settings().read_text())
    assert sum(len(our_hooks(doc, e)) for e in EVENTS) == len(hook_entries(str(b.bin.parent)))


def test_command_is_linked_into_local_bin_and_runs(box: dict[str, Any]) -> None:
    b: Box = box["box"]
    assert b.link.is_symlink()
    assert os.readlink(b.link) == str(b.bin)
    proc = subprocess.run([str(b.link), "config", "path"], env=b.env(), capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().startswith(str(b.sw_home))


def test_install_says_whether_local_bin_is_on_path(box: dict[str, Any]) -> None:
    first, second = box["first"].stdout, box["second"].stdout
    # the first run's PATH lacks ~/.local/bin: it says so and prints the line to add
    assert "is not on your PATH" in first
    assert 'export PATH="$HOME/.local/bin:$PATH"' in first
    assert "is not on your PATH" not in second
    assert "is on your PATH" in second


def _link(home: Path, target: str, path: str = "/usr/bin:/bin") -> subprocess.CompletedProcess[str]:
    import sys

    env = {"HOME": str(home), "PATH": path, "LANG": "C.UTF-8", "COLUMNS": WIDE}
    return subprocess.run([sys.executable, "-m", "session_watcher.cli.install", "link", target], env=env,
                          capture_output=True, text=True, timeout=60, check=False, cwd=REPO)


def test_link_over_a_file_or_foreign_link_is_left_alone(tmp_path: Path) -> None:
    """The link step alone (`python -m session_watcher.cli.install link`), in HOMEs of its own."""
    target = "/opt/sw/data/session-watcher/venv/bin/session-watcher"
    home = tmp_path / "a"
    (home / ".local" / "bin").mkdir(parents=True)
    theirs = home / ".local" / "bin" / "session-watcher"
    theirs.write_text("#!/bin/sh\necho theirs\n")
    proc = _link(home, target)
    assert proc.returncode == 0, proc.stderr
    assert "left as it is" in proc.stdout
    assert theirs.read_text() == "#!/bin/sh\necho theirs\n"
    home = tmp_path / "b"
    (home / ".local" / "bin").mkdir(parents=True)
    other = home / ".local" / "bin" / "session-watcher"
    other.symlink_to("/usr/local/bin/someone-elses")
    assert "left as it is" in _link(home, target).stdout
    assert os.readlink(other) == "/usr/local/bin/someone-elses"
    # an older install of ours (another data folder) is replaced, and a PATH entry with ~ counts
    home = tmp_path / "c"
    (home / ".local" / "bin").mkdir(parents=True)
    old = home / ".local" / "bin" / "session-watcher"
    old.symlink_to("/elsewhere/session-watcher/venv/bin/session-watcher")
    proc = _link(home, target, path="~/.local/bin:/usr/bin")
    assert os.readlink(old) == target
    assert "is on your PATH" in proc.stdout


def test_installed_hook_and_statusline_work(box: dict[str, Any], tmp_path: Path) -> None:
    b: Box = box["box"]
    sid = "inst"
    t = tmp_path / f"{sid}.jsonl"
    shutil.copy(TRANSCRIPTS / "subagent.jsonl", t)
    p = {"session_id": sid, "transcript_path": str(t), "cwd": str(tmp_path), "hook_event_name": "Stop"}
    settings = json.loads(b.settings().read_text())
    # the exact argv Claude Code will run (exec form: no shell)
    stop = our_hooks(settings, "Stop")[0]
    proc = subprocess.run([stop["command"], *stop["args"]], input=json.dumps(p), env=b.env(),
                          capture_output=True, text=True, timeout=60, check=False)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    state = read_state(state_file(sid, b.sw_home))
    assert state["meter"]["main"] == oracle(t)["main"]
    proc = subprocess.run(["sh", "-c", settings["statusLine"]["command"]], input=json.dumps(p), env=b.env(),
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0
    assert proc.stdout.count("\n") == 1
    assert proc.stdout.strip()


def test_existing_statusline_is_kept(box: dict[str, Any]) -> None:
    """The merge step install.sh runs after pip, with the installed venv, on another user's settings
    (its own SESSION_WATCHER_HOME, so its install record is its own)."""
    b: Box = box["box"]
    other = b.root / "claude-with-statusline"
    mine = {"statusLine": {"type": "command", "command": "~/bin/my-line"}, "theme": "dark"}
    original = write_settings(b.settings(other), mine)
    env = {**b.env(other), "SESSION_WATCHER_HOME": str(b.root / "sw-other")}
    python = str(b.bin.parent / "python")
    proc = subprocess.run([python, "-m", "session_watcher.cli.install", "add", str(b.bin.parent)], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "statusLine" in proc.stdout  # it says what it did and how to combine them
    doc = json.loads(b.settings(other).read_text())
    assert doc["statusLine"] == mine["statusLine"]
    assert doc["theme"] == "dark"
    assert our_hooks(doc, "Stop")
    proc = subprocess.run([python, "-m", "session_watcher.cli.install", "remove"], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert b.settings(other).read_text() == original


def _build(b: Box) -> list[str]:
    """The venv's record of the build it holds (install.sh's .install-build): its name, its files' hash."""
    return (b.sw_home / "data" / "venv" / ".install-build").read_text().splitlines()


def _mtimes(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.lstat().st_mtime_ns for p in folder.rglob("*")}


def test_a_second_run_of_the_same_build_runs_no_pip_and_adds_codex_s_hooks(box: dict[str, Any]) -> None:
    """Codex installed but never run: the install says to run it once, then ./install.sh again to add
    its hooks. That second run, with the venv holding this very build, runs no pip (it took ~24 s to
    put the same files in place again): it says so in one line, leaves every file of the venv as it
    was, and does the rest: Codex's hooks (its folder made since), the settings, the link, the closing
    screen. The fixture's second run was one too."""
    from session_watcher.cli.install_codex import EVENTS as CODEX_EVENTS

    b: Box = box["box"]
    said = f"session-watcher {_build(b)[0]} already installed: hooks and settings checked\n"
    assert box["second"].stdout.startswith(said), box["second"].stdout
    venv = b.sw_home / "data" / "venv"
    before = _mtimes(venv)
    pip_log = (b.sw_home / "data" / "pip.log").stat().st_mtime_ns
    settings = b.settings().read_text()
    codex = b.home / ".codex"
    assert not codex.exists()
    codex.mkdir()  # `codex` ran once
    env = {**b.env(), "SESSION_WATCHER_CODEX": str(b.root / "no-codex")}  # no app-server: trust by hand
    got = subprocess.run(["sh", str(REPO / "install.sh")], env=env, capture_output=True, text=True, timeout=600,
                         check=False)
    assert got.returncode == 0, got.stdout + got.stderr
    assert got.stdout.startswith(said), got.stdout
    assert "pip" not in got.stdout
    assert _mtimes(venv) == before
    assert (b.sw_home / "data" / "pip.log").stat().st_mtime_ns == pip_log
    doc = json.loads((codex / "hooks.json").read_text())
    assert set(doc["hooks"]) == set(CODEX_EVENTS)
    assert all(str(b.bin.parent) in json.dumps(doc["hooks"][event]) for event in CODEX_EVENTS)
    flat = " ".join(got.stdout.split())
    assert f"codex: {codex / 'hooks.json'} (hooks: {', '.join(CODEX_EVENTS)})" in flat, flat
    assert b.settings().read_text() == settings  # checked: nothing to change
    assert f"settings: {b.settings()}" in flat
    assert f"command: {b.link}" in flat
    assert "== no Claude Code sessions in" in flat  # the closing screen


def test_a_dependency_removed_by_hand_is_installed_again(box: dict[str, Any]) -> None:
    """`pip uninstall -y tomlkit` in the venv of this very build: the next run does not take the build
    for installed (it did, with every `config set` failing since); it names what is missing in one
    line and runs pip, which puts it back; the run after is the one with no pip again."""
    b: Box = box["box"]
    python = str(b.sw_home / "data" / "venv" / "bin" / "python")
    removed = subprocess.run([python, "-m", "pip", "uninstall", "-y", "-q", "tomlkit"], capture_output=True,
                             text=True, timeout=300, check=False)
    assert removed.returncode == 0, removed.stderr
    gone = subprocess.run([python, "-I", "-c", "import tomlkit"], capture_output=True, timeout=60, check=False)
    assert gone.returncode != 0
    name = _build(b)[0]
    env = {**b.env(), "SESSION_WATCHER_CODEX": str(b.root / "no-codex")}
    got = subprocess.run(["sh", str(REPO / "install.sh"), "--no-demo"], env=env, capture_output=True, text=True,
                         timeout=600, check=False)
    assert got.returncode == 0, got.stdout + got.stderr
    lines = got.stdout.splitlines()
    assert lines[0] == f"session-watcher {name} is installed, but not what it needs: tomlkit (pip installs it again)"
    assert lines[1] == f"updating {name} -> {name} with pip", got.stdout
    back = subprocess.run([python, "-I", "-c", "import tomlkit"], capture_output=True, timeout=60, check=False)
    assert back.returncode == 0, back.stderr
    again = subprocess.run(["sh", str(REPO / "install.sh"), "--no-demo"], env=env, capture_output=True, text=True,
                           timeout=600, check=False)
    assert again.stdout.startswith(f"session-watcher {name} already installed: hooks and settings checked\n")


def test_a_changed_source_file_is_installed_again(box: dict[str, Any], tmp_path: Path) -> None:
    """A checkout whose files differ from the build the venv holds has pip put them in place, though
    both builds have one name: a clone with one line added to a module (not committed), over a venv
    whose record names a changed build of that same commit ("V (commit, changed)": another change,
    as the venv's record says after installing one). The name alone would be the same for the two
    changes; the hash of the files is not. Runs after the other tests of the fixture's venv but the
    uninstall: it leaves the changed build in it."""
    from session_watcher import __version__

    if subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, timeout=60,
                      check=False).returncode:
        pytest.skip("not a git checkout")
    b: Box = box["box"]
    _name, tree = _build(b)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], capture_output=True, timeout=120, check=True)
    head = subprocess.run(["git", "-C", str(clone), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, timeout=60, check=True).stdout.strip()
    shutil.copyfile(REPO / "install.sh", clone / "install.sh")  # this checkout's, committed or not
    shutil.copytree(REPO / "session_watcher", clone / "session_watcher", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))  # the package as this checkout has it
    module = "session_watcher/cli/install.py"
    with (clone / module).open("a") as fh:
        fh.write("# a line of the user's\n")
    installed = next((b.sw_home / "data" / "venv" / "lib").glob(f"python3*/site-packages/{module}"))
    assert not installed.read_text().endswith("# a line of the user's\n")
    changed = f"{__version__} ({head}, changed)"
    (b.sw_home / "data" / "venv" / ".install-build").write_text(f"{changed}\n{tree}\n")
    env = {**b.env(), "SESSION_WATCHER_CODEX": str(b.root / "no-codex")}
    got = subprocess.run(["sh", str(clone / "install.sh"), "--no-demo"], env=env, capture_output=True, text=True,
                         timeout=600, check=False)
    assert got.returncode == 0, got.stdout + got.stderr
    assert got.stdout.startswith(f"updating {changed} -> {changed} with pip\n"), got.stdout
    assert "already installed" not in got.stdout
    assert installed.read_text().endswith("# a line of the user's\n")
    again = _build(b)
    assert again[0] == changed
    assert again[1] != tree


def test_a_venv_whose_python_is_gone_is_made_again_and_a_failed_pip_leaves_no_record(
        box: dict[str, Any], tmp_path: Path) -> None:
    """The interpreter the venv was made with removed (a pyenv version uninstalled, a Homebrew
    Python upgraded away): its links dangle, so the venv holds no build, whatever its record says.
    `python -m venv` over it kept the dangling link and failed in ensurepip ("No such file or
    directory: .../bin/python3.11") at every run after: the venv is made again from nothing. A pip
    that then fails (no index here) leaves the new venv with no record naming the build."""
    b = Box(tmp_path)
    venv = b.sw_home / "data" / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    for python in (venv / "bin").glob("python*"):
        python.unlink()
        python.symlink_to(tmp_path / "gone" / python.name)
    assert not os.access(venv / "bin" / "python", os.X_OK)
    (venv / ".install-build").write_text("\n".join(_build(box["box"])) + "\n")  # this very build, by its record
    wheels = tmp_path / "no-wheels"
    wheels.mkdir()
    env = {**b.env(), "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)}
    got = subprocess.run(["sh", str(REPO / "install.sh"), "--venv-only"], env=env, capture_output=True, text=True,
                         timeout=600, check=False)
    assert got.returncode == 1
    assert got.stdout.startswith("installing "), got.stdout
    assert "install.sh: pip failed" in got.stderr, got.stderr
    ran = subprocess.run([str(venv / "bin" / "python"), "-I", "-c", "import pip"], capture_output=True, timeout=60,
                         check=False)
    assert ran.returncode == 0, ran.stderr  # made again, with its pip
    assert not (venv / ".install-build").exists()


def test_an_install_beside_the_enabled_plugin_says_each_hook_runs_twice(box: dict[str, Any]) -> None:
    """The Claude Code plugin of session-watcher enabled too: install.sh (with the demo and without)
    ends saying what doctor says on its settings line (each hook runs twice, the command that keeps
    either route), in its words; a disabled plugin, or none, gets no such line."""
    b: Box = box["box"]
    before = b.settings().read_text()
    plugins = b.claude / "plugins"
    root = plugins / "cache" / "session-watcher" / "session-watcher" / "0.1.0"
    (root / "hooks").mkdir(parents=True)
    shutil.copy(REPO / "session_watcher" / "hooks" / "hooks.json", root / "hooks" / "hooks.json")
    (plugins / "installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": {
        "session-watcher@session-watcher": [{"scope": "user", "installPath": str(root), "version": "0.1.0"}]}}))
    try:
        for enabled in (True, False):
            doc = json.loads(before)
            doc["enabledPlugins"] = {"session-watcher@session-watcher": enabled}
            b.settings().write_text(json.dumps(doc, indent=2))
            doctor = subprocess.run([str(b.bin), "doctor"], env=b.env(), capture_output=True, text=True, timeout=120,
                                    check=False)
            said = [ln.removeprefix("settings   ") for ln in doctor.stdout.splitlines() if ln.startswith("settings ")]
            for args in (("--no-demo",), ()):
                got = b.install(*args)
                assert got.returncode == 0, got.stdout + got.stderr
                last = got.stdout.rstrip("\n").splitlines()[-1]
                if enabled:  # an earlier test of the module may have left Codex's hooks installed in the box
                    codex = ", which takes its Codex hooks too" if (b.sw_home / "data" / "installed-codex.json"
                                                                    ).exists() else ""
                    assert said == [f"{b.settings()}: hooks for {', '.join(sorted(EVENTS))}; the enabled plugin "
                                    "registers them too, so each runs twice (harmless, slower): keep one route, "
                                    "install.sh's for the status line (`claude plugin uninstall "
                                    f"session-watcher@session-watcher`), or the plugin's (`./install.sh --uninstall`"
                                    f"{codex})"], doctor.stdout
                    assert last == f"== {said[0]}", (args, got.stdout)
                else:
                    assert "runs twice" not in got.stdout, (args, got.stdout)
                    assert "runs twice" not in doctor.stdout, doctor.stdout
    finally:
        shutil.rmtree(plugins)
        b.settings().write_text(before)


def test_uninstall_restores_the_original(box: dict[str, Any]) -> None:
    """Runs last of the install.sh tests: it removes the venv. What stays is named: the session
    states, and the config `config set` wrote (it was left unsaid: a user who wanted everything gone
    did not know of it)."""
    b: Box = box["box"]
    config = b.sw_home / "config" / "config.toml"
    got = subprocess.run([str(b.bin), "config", "set", "notify.remind_min", "5"], env=b.env(), capture_output=True,
                         text=True, timeout=60, check=False)
    assert (got.returncode, got.stderr) == (0, ""), got.stdout
    assert config.is_file()
    proc = b.install("--uninstall")
    assert proc.returncode == 0, proc.stderr
    assert b.settings().read_text() == box["original"]
    assert json.loads(b.settings().read_text()) == USER_SETTINGS
    assert not b.bin.exists()
    assert not b.link.exists()
    assert not b.link.is_symlink()
    # one backup in all: the original, written before the first install; the removal that brings the
    # file back to it writes none
    backups = sorted(b.claude.glob("settings.json.bak-session-watcher-*"))
    assert [p.read_text() for p in backups] == [box["original"]]
    state = b.sw_home / "state"
    said = proc.stdout.strip().splitlines()[-1]
    kept = f"your config stays in {config} (delete it yourself if you wish)"
    if state.is_dir() and any(state.iterdir()):  # the hook tests above ran sessions here
        kept = f"session states stay in {state}; your config stays in {config} (delete them yourself if you wish)"
    assert said.endswith(f"; {kept}"), said
    assert config.is_file()
    # uninstalling again changes nothing
    assert b.install("--uninstall").returncode == 0
    assert b.settings().read_text() == box["original"]


def test_uninstall_names_no_session_states_when_none_were_made(tmp_path: Path) -> None:
    """Nothing installed, no state: the uninstall says what it removed, not that states stay."""
    b = Box(tmp_path)
    proc = b.install("--uninstall")
    assert proc.returncode == 0, proc.stderr
    assert "session states" not in proc.stdout
    assert proc.stdout.strip().endswith(f"removed {b.sw_home / 'data' / 'venv'}")


def test_install_then_uninstall_leaves_one_backup_the_original(tmp_path: Path) -> None:
    """add backs the user's file up first; remove, which brings the file back to that backup, writes
    no second one (and a backup in the same second never replaces another)."""
    import sys

    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"), "SESSION_WATCHER_HOME": str(tmp_path / "sw")}
    original = write_settings(tmp_path / "cfg" / "settings.json", USER_SETTINGS)
    for step in (["add", "/opt/sw/bin"], ["remove"]):
        got = subprocess.run([sys.executable, "-m", "session_watcher.cli.install", *step], env=env, capture_output=True,
                             text=True, timeout=60, check=False)
        assert got.returncode == 0, got.stderr
    backups = sorted((tmp_path / "cfg").glob("settings.json.bak-session-watcher-*"))
    assert [p.read_text() for p in backups] == [original]
    assert json.loads((tmp_path / "cfg" / "settings.json").read_text()) == USER_SETTINGS
    # the user edits the file, and the install runs again within the second: a new backup beside the first
    edited = write_settings(tmp_path / "cfg" / "settings.json", {**USER_SETTINGS, "theme": "dark"})
    for _ in range(2):
        subprocess.run([sys.executable, "-m", "session_watcher.cli.install", "add", "/opt/sw/bin"], env=env,
                       capture_output=True, text=True, timeout=60, check=True)
        subprocess.run([sys.executable, "-m", "session_watcher.cli.install", "remove"], env=env, capture_output=True,
                       text=True, timeout=60, check=True)
    texts = sorted(p.read_text() for p in (tmp_path / "cfg").glob("settings.json.bak-session-watcher-*"))
    assert texts == sorted([original, edited])


def test_uninstall_when_there_was_no_settings_file(tmp_path: Path) -> None:
    """Only the merge step (no venv): `python -m session_watcher.cli.install add|remove` on a fresh dir."""
    import sys

    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "fresh")}
    add = subprocess.run([sys.executable, "-m", "session_watcher.cli.install", "add", "/opt/sw/bin"],
                         env=env, capture_output=True, text=True, timeout=60, check=False)
    assert add.returncode == 0, add.stderr
    doc = json.loads((tmp_path / "fresh" / "settings.json").read_text())
    assert set(doc) == {"hooks", "statusLine"}
    again = subprocess.run([sys.executable, "-m", "session_watcher.cli.install", "add", "/opt/sw2/bin"],
                           env=env, capture_output=True, text=True, timeout=60, check=False)  # a re-install
    assert again.returncode == 0, again.stderr
    assert "you already have one" not in again.stdout  # the earlier install's status line is ours, replaced
    rm = subprocess.run([sys.executable, "-m", "session_watcher.cli.install", "remove"], env=env, capture_output=True,
                        text=True, timeout=60, check=False)
    assert rm.returncode == 0, rm.stderr
    # the file the install made goes, and the backups that held only our entries with it, and the
    # folder it made for them (a machine without Claude Code: it was left behind, empty)
    assert not (tmp_path / "fresh").exists()
    settings = tmp_path / "fresh" / "settings.json"
    assert f"settings: removed {settings} (the install created it; nothing else was in it)" in rm.stdout
    assert f"settings: removed {tmp_path / 'fresh'} (the install created it; it is empty now)" in rm.stdout
    # a folder that was there (empty) before the install is the user's: it stays, empty; so does one
    # the install made and something else wrote into since
    for before in ("there", "written into"):
        (tmp_path / "fresh").mkdir(exist_ok=before == "written into")
        for args in (["add", "/opt/sw/bin"], ["remove"]):
            if before == "written into" and args == ["remove"]:
                (tmp_path / "fresh" / "projects").mkdir()
            got = subprocess.run([sys.executable, "-m", "session_watcher.cli.install", *args], env=env,
                                 capture_output=True, text=True, timeout=60, check=False)
            assert got.returncode == 0, got.stderr
            if before == "there" and args == ["remove"]:
                assert sorted(p.name for p in (tmp_path / "fresh").iterdir()) == []
                (tmp_path / "fresh").rmdir()
        assert f"{tmp_path / 'fresh'} (the install" not in got.stdout.replace(str(settings), "")
    assert sorted(p.name for p in (tmp_path / "fresh").iterdir()) == ["projects"]


def test_a_settings_file_made_by_an_install_before_its_record_said_so_goes_at_uninstall(tmp_path: Path) -> None:
    """An install before its record said whether it created settings.json (2026-12-05) made the
    file: updated over (install.sh again), --uninstall deletes it where nothing but our entries is in
    it (it left `{}` behind), and keeps one the user wrote a key of theirs into."""
    for users in ({}, {"model": "opus"}):
        root = tmp_path / ("mine" if users else "ours")
        env = {**os.environ, "CLAUDE_CONFIG_DIR": str(root / "claude"), "SESSION_WATCHER_HOME": str(root / "sw")}
        (root / "claude").mkdir(parents=True)  # Claude Code's folder was there, its settings.json not

        def cli(*args: str, env: dict[str, str] = env) -> subprocess.CompletedProcess[str]:
            got = subprocess.run([sys.executable, "-m", "session_watcher.cli.install", *args], env=env,
                                 capture_output=True, text=True, timeout=60, check=False)
            assert got.returncode == 0, got.stderr
            return got

        cli("add", "/opt/old/bin")
        record = root / "sw" / "data" / "installed.json"
        rec = json.loads(record.read_text())
        assert rec["created"] is True
        # the record as that install wrote it: what it added, nothing of whether it made the file
        record.write_text(json.dumps({key: rec[key] for key in ("settings", "hooks", "statusLine")}))
        settings = root / "claude" / "settings.json"
        if users:
            write_settings(settings, {**json.loads(settings.read_text()), **users})
        cli("add", "/opt/new/bin")  # the update
        assert json.loads(record.read_text())["created"] is (not users)  # nothing of the user's in it
        rm = cli("remove")
        if users:
            assert json.loads(settings.read_text()) == users
            assert f"settings: removed session-watcher from {settings}" in rm.stdout
        else:
            assert not settings.exists()
            assert f"settings: removed {settings} (the install created it; nothing else was in it)" in rm.stdout
            assert sorted(p.name for p in (root / "claude").iterdir()) == []  # no backup of ours left
        assert (root / "claude").is_dir()  # Claude Code's folder: never the install's to remove


def test_uninstall_after_the_settings_file_went_forgets_the_install(tmp_path: Path) -> None:
    """The user deleted settings.json after the install: uninstall says there is nothing to remove
    there, and its record of the install goes too (a later install reads none of it)."""
    import sys

    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"), "SESSION_WATCHER_HOME": str(tmp_path / "sw")}
    add = subprocess.run([sys.executable, "-m", "session_watcher.cli.install", "add", "/opt/sw/bin"],
                         env=env, capture_output=True, text=True, timeout=60, check=False)
    assert add.returncode == 0, add.stderr
    record = tmp_path / "sw" / "data" / "installed.json"
    assert record.is_file()
    settings = tmp_path / "cfg" / "settings.json"
    settings.unlink()
    rm = subprocess.run([sys.executable, "-m", "session_watcher.cli.install", "remove"], env=env, capture_output=True,
                        text=True, timeout=60, check=False)
    assert rm.returncode == 0, rm.stderr
    assert f"settings: {settings} absent; nothing to remove" in rm.stdout
    assert not record.exists()


def test_installs_into_two_config_dirs_are_both_taken_out(tmp_path: Path) -> None:
    """An install into one CLAUDE_CONFIG_DIR, then into another (a second profile): the first file's
    hooks stay, the install says so, and the uninstall takes them out of both files (before, the
    second install's record replaced the first's and left its hooks behind)."""
    import sys

    first, second = tmp_path / "cfg-a", tmp_path / "cfg-b"
    original = write_settings(first / "settings.json", USER_SETTINGS)

    def run(cfg: Path, *args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "CLAUDE_CONFIG_DIR": str(cfg), "SESSION_WATCHER_HOME": str(tmp_path / "sw"),
               "COLUMNS": "400"}
        got = subprocess.run([sys.executable, "-m", "session_watcher.cli.install", *args], env=env,
                             capture_output=True, text=True, timeout=60, check=False)
        assert got.returncode == 0, got.stderr
        return got

    run(first, "add", "/opt/sw/bin")
    said = run(second, "add", "/opt/sw/bin").stdout
    assert f"{first / 'settings.json'} keeps an earlier install's hooks" in said
    for cfg in (first, second):
        assert our_hooks(json.loads((cfg / "settings.json").read_text()), "Stop"), cfg
    # installing into the first again keeps the second's record, and what the first install made
    run(first, "add", "/opt/sw2/bin")
    rec = json.loads((tmp_path / "sw" / "data" / "installed.json").read_text())
    assert rec["settings"] == str(first / "settings.json")
    assert rec["created"] is False
    assert [r["settings"] for r in rec["others"]] == [str(second / "settings.json")]
    assert rec["others"][0]["created"] is True
    run(first, "remove")
    assert (first / "settings.json").read_text() == original
    assert not second.exists()  # the install made that folder and file; both went again
    assert not (tmp_path / "sw" / "data" / "installed.json").exists()


def test_on_a_codex_only_machine_an_earlier_installs_record_stays_while_its_file_does(tmp_path: Path) -> None:
    """An install into a CLAUDE_CONFIG_DIR, then the variable unset (Codex alone now): the install
    leaves the record while the settings file it names holds our hooks (uninstall takes them out),
    and once the file is gone forgets it, our backup beside it tidied as uninstall would."""
    import sys

    cfg, codex = tmp_path / "cfg", tmp_path / "codex"
    codex.mkdir()
    env = {**os.environ, "HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(cfg), "CODEX_HOME": str(codex),
           "SESSION_WATCHER_HOME": str(tmp_path / "sw"), "SESSION_WATCHER_CLAUDE": str(tmp_path / "no"),
           "COLUMNS": WIDE}

    def add(bin_dir: str, env: dict[str, str]) -> str:
        got = subprocess.run([sys.executable, "-m", "session_watcher.cli.install", "add", bin_dir], env=env,
                             capture_output=True, text=True, timeout=60, check=False)
        assert got.returncode == 0, got.stderr
        return got.stdout

    add("/opt/a/bin", env)
    add("/opt/b/bin", env)  # another venv path: the first install's file backed up, only ours in it
    [backup] = sorted(cfg.glob("settings.json.bak-session-watcher-*"))
    record = tmp_path / "sw" / "data" / "installed.json"
    settings = cfg / "settings.json"
    alone = without_claude_dir(env)
    said = add("/opt/b/bin", alone)
    assert said.endswith(f"; an earlier install's hooks stay in {settings} (./install.sh --uninstall takes them "
                         "out); installed for Codex (./install.sh again adds Claude Code's once it is here)\n"), said
    assert record.is_file()
    settings.unlink()
    said = add("/opt/b/bin", alone)
    assert said == (f"backup: removed {backup} (it held only session-watcher's entries)\n"
                    f"claude code: not on this machine (no {tmp_path / 'home' / '.claude'} or "
                    f"{tmp_path / 'home' / '.config' / 'claude'}, no `claude` on PATH): its settings not written; "
                    f"the record of an earlier install into {settings} (gone since) forgotten; installed for Codex "
                    "(./install.sh again adds Claude Code's once it is here)\n"), said
    assert not record.exists()
    assert not backup.exists()
    assert add("/opt/b/bin", alone).startswith("claude code: not on this machine")  # nothing more to forget


def test_on_a_codex_only_machine_a_record_whose_folder_cannot_be_reached_now_is_kept(tmp_path: Path) -> None:
    """An install into a CLAUDE_CONFIG_DIR that is a link to a folder elsewhere (another drive), then
    the variable unset and the link's folder gone from sight (the drive not mounted): the settings
    file may still hold our hooks, so the install keeps the record (it forgot it: `--uninstall`, the
    drive back, left the hooks in the file, running a venv it removed), and doctor says why. With the
    folder back, `--uninstall` takes the hooks out."""
    drive, cfg, codex = tmp_path / "drive", tmp_path / "cfg", tmp_path / "codex"
    (drive / "claude").mkdir(parents=True)
    cfg.symlink_to(drive / "claude")
    codex.mkdir()
    env = {**os.environ, "HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(cfg), "CODEX_HOME": str(codex),
           "SESSION_WATCHER_HOME": str(tmp_path / "sw"), "SESSION_WATCHER_CLAUDE": str(tmp_path / "no"),
           "COLUMNS": WIDE}

    def install(env: dict[str, str], *args: str) -> str:
        got = subprocess.run([sys.executable, "-m", "session_watcher.cli.install", *args], env=env,
                             capture_output=True, text=True, timeout=60, check=False)
        assert got.returncode == 0, got.stderr
        return got.stdout

    install(env, "add", "/opt/a/bin")
    settings = cfg / "settings.json"
    record = tmp_path / "sw" / "data" / "installed.json"
    assert our_hooks(json.loads(settings.read_text()), "Stop") == ours("/opt/a/bin", "Stop")
    alone = without_claude_dir(env)
    (drive / "claude").rename(drive / "away")  # the drive not mounted: the link leads nowhere
    said = install(alone, "add", "/opt/a/bin")
    assert said.endswith(f"; the record of an earlier install into {settings} kept, its folder not reachable now "
                         "(./install.sh --uninstall forgets it); installed for Codex (./install.sh again adds "
                         "Claude Code's once it is here)\n"), said
    assert record.is_file()
    doctor = subprocess.run([sys.executable, "-m", "session_watcher", "doctor"], env=alone, capture_output=True,
                            text=True, timeout=120, check=False)
    assert f"install.sh wrote session-watcher's hooks into {settings}, whose folder cannot be reached now" in \
        " ".join(doctor.stdout.split()), doctor.stdout
    (drive / "away").rename(drive / "claude")  # mounted again
    install(env, "remove")
    assert our_hooks(json.loads(settings.read_text()) if settings.exists() else {}, "Stop") == []
    assert not record.exists()


@pytest.mark.parametrize("drive_there", [False, True])
def test_on_a_codex_only_machine_a_record_on_a_drive_not_mounted_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], drive_there: bool) -> None:
    """CLAUDE_CONFIG_DIR straight at a folder on a drive (`/media/u/USB/claude`: here `DRIVE_ROOTS`
    point into the temp dir), then the variable unset and the drive unmounted: its mount point an
    empty folder, the Claude folder not there. It read as deleted (the folder's parent is there) and
    the install forgot the record, so `--uninstall`, the drive back, left our hooks in its file. It is
    kept and doctor says why, as for a link to nowhere. With the drive mounted (a mount point on the
    way) and the folder deleted from it, the record goes as before."""
    from session_watcher.cli import agents_here, doctor, install

    media = tmp_path / "media"
    usb = media / "u" / "USB"
    cfg, codex = usb / "claude", tmp_path / "codex"
    cfg.mkdir(parents=True)
    codex.mkdir()
    monkeypatch.setattr(agents_here, "DRIVE_ROOTS", (str(media),))
    for name, value in (("HOME", tmp_path / "home"), ("CLAUDE_CONFIG_DIR", cfg), ("CODEX_HOME", codex),
                        ("SESSION_WATCHER_HOME", tmp_path / "sw"), ("SESSION_WATCHER_CLAUDE", tmp_path / "no"),
                        ("COLUMNS", WIDE)):
        monkeypatch.setenv(name, str(value))
    assert install.main(["add", "/opt/a/bin"]) == 0
    settings = cfg / "settings.json"
    record = tmp_path / "sw" / "data" / "installed.json"
    assert our_hooks(json.loads(settings.read_text()), "Stop") == ours("/opt/a/bin", "Stop")
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    shutil.rmtree(cfg)  # the drive's folder out of sight: its mount point left, empty
    if drive_there:  # mounted, and the folder deleted from it
        real_ismount = os.path.ismount
        monkeypatch.setattr(os.path, "ismount", lambda p: os.fspath(p) == str(usb) or real_ismount(p))
    capsys.readouterr()
    assert install.main(["add", "/opt/a/bin"]) == 0
    said = " ".join(capsys.readouterr().out.split())
    if drive_there:
        assert f"the record of an earlier install into {settings} (gone since) forgotten" in said, said
        assert not record.exists()
        return
    assert f"the record of an earlier install into {settings} kept, its folder not reachable now" in said, said
    assert record.is_file()
    assert f"install.sh wrote session-watcher's hooks into {settings}, whose folder cannot be reached now (a link " \
        "to nowhere, a drive not mounted, or not readable)" in (doctor._left_record(str(tmp_path / "home" / ".claude"
                                                                                        / "settings.json")) or "")
    assert agents_here.settings_gone(str(tmp_path / "home" / "gone" / "settings.json"))  # not on a drive: gone


def test_the_drive_rule_where_a_drive_is_mounted_on_its_root_or_is_the_config_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`agents_here.settings_gone` by where the folder is against the drives' roots (here in the temp
    dir). A drive mounted on the root itself (`mount /dev/sdb1 /mnt`) is there: a folder not on it is
    gone (it read as a drive not mounted, as nothing under the root was a mount point). A config folder
    that is a drive's mount point, left empty by its drive going out, is not reachable (it read as
    gone: the folder is there); one that holds anything, or is mounted on, is a folder whose
    settings were removed. A link into a drive follows the drive; the drives' root itself is no drive;
    /Volumes is never a mount point (macOS's firmlink may make it read as one)."""
    from session_watcher.cli import agents_here

    mnt, volumes, home = tmp_path / "mnt", tmp_path / "Volumes", tmp_path / "home"
    for d in (mnt, volumes, home):
        d.mkdir()
    monkeypatch.setattr(agents_here, "DRIVE_ROOTS", (str(mnt), str(volumes)))
    monkeypatch.setattr(agents_here, "NOT_A_MOUNT", (str(volumes),))
    mounted: set[str] = set()
    real_ismount = os.path.ismount
    monkeypatch.setattr(os.path, "ismount", lambda p: os.fspath(p) in mounted or real_ismount(p))

    def gone(folder: Path) -> bool:
        return agents_here.settings_gone(str(folder / "settings.json"))

    assert not gone(mnt / "claude")  # nothing mounted on /mnt: its drive is out
    mounted.add(str(mnt))
    assert gone(mnt / "claude")  # the drive is on /mnt, and holds no such folder
    mounted.clear()
    usb = mnt / "usb"
    usb.mkdir()
    assert not gone(usb)  # the drive's empty mount point
    mounted.add(str(usb))
    assert gone(usb)  # mounted, its settings removed
    mounted.clear()
    (usb / "projects").mkdir()
    assert gone(usb)  # a folder of Claude Code's on the root's own disk
    assert gone(mnt)  # the drives' root itself: on no drive
    assert not gone(volumes / "USB" / "claude")
    mounted.add(str(volumes))
    assert not gone(volumes / "USB" / "claude")  # /Volumes read as a mount point: still no drive there
    mounted.add(str(volumes / "USB"))
    assert gone(volumes / "USB" / "claude")
    (home / "usb").symlink_to(mnt / "stick")  # a link to a drive's mount point, the drive out
    assert not gone(home / "usb" / "claude")
    (mnt / "stick").mkdir()
    mounted.add(str(mnt / "stick"))
    assert gone(home / "usb" / "claude")
    assert gone(home / "deleted")  # elsewhere: gone, as before


def _claude_stand_in(tmp_path: Path) -> str:
    """A `claude` executable (cli.agents_here: Claude Code is here though it never ran)."""
    exe = tmp_path / "claude-bin" / "claude"
    exe.parent.mkdir(exist_ok=True)
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    return str(exe)


def test_uninstall_takes_away_the_files_install_sh_created(tmp_path: Path) -> None:
    """install.sh on a machine with neither settings.json nor Codex's hooks.json (Codex there: ~/.codex),
    then --uninstall: both files are gone again, and no backup is left (each held only our entries);
    Codex's own folder stays."""
    b = Box(tmp_path)
    codex = b.home / ".codex"
    codex.mkdir()
    env = {**b.env(), "SESSION_WATCHER_CODEX": str(tmp_path / "no-codex"),  # no app-server: no config.toml
           "SESSION_WATCHER_CLAUDE": _claude_stand_in(tmp_path)}  # Claude Code installed, never run: no folder
    run = ["sh", str(REPO / "install.sh")]
    got = subprocess.run([*run, "--no-demo"], env=env, capture_output=True, text=True, timeout=600, check=False)
    assert got.returncode == 0, got.stdout + got.stderr
    assert got.stdout.startswith("installing 0.")  # before pip's silence: the build it installs
    assert got.stdout.splitlines()[1] == f"  {b.sw_home / 'data' / 'venv'}"
    assert b.settings().is_file()
    assert (codex / "hooks.json").is_file()
    report = subprocess.run([str(b.bin), "report", "--json"], env=env, capture_output=True, timeout=120, check=False)
    assert report.returncode == 0, report.stderr
    assert (b.sw_home / "cache").is_dir()  # the report's index
    assert sorted(p.name for p in (b.sw_home / "state").iterdir()) == ["cliff.json"]  # what it inferred
    (b.sw_home / "state" / "sessions").mkdir()  # as the daily sweep leaves them: every state swept
    (b.sw_home / "state" / ".tidied").write_text("")
    (b.sw_home / "state" / "handoffs" / "pending").mkdir(parents=True)  # as `handoff`, then `handoff --drop`,
    (b.sw_home / "state" / "handoffs" / "lent").mkdir()  # leave them
    gone = subprocess.run([*run, "--uninstall"], env=env, capture_output=True, text=True, timeout=600, check=False)
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert not b.claude.exists()  # the folder the install made for settings.json, empty again: gone with it
    assert f"settings: removed {b.claude} (the install created it; it is empty now)" in gone.stdout
    assert sorted(p.name for p in codex.iterdir()) == []
    assert codex.is_dir()
    # nothing of the install is left behind but the session states: not its pip.log, not the index
    assert not (b.sw_home / "data").exists()
    assert not (b.sw_home / "cache").exists()
    assert f"removed {b.sw_home / 'cache'} (the report's index)" in gone.stdout
    # no session state: no "session states stay" for a state folder that held only the report's
    # cliff.json, the sweep's marker, the sessions folder it emptied and a handoffs folder with none
    assert not (b.sw_home / "state").exists()
    assert "session states" not in gone.stdout
    assert f"settings: removed {b.settings()} (the install created it; nothing else was in it)" in gone.stdout
    assert f"codex: removed {codex / 'hooks.json'} (the install created it; nothing else was in it)" in gone.stdout


def test_uninstall_keeps_a_created_file_the_user_wrote_into(tmp_path: Path) -> None:
    """A settings.json the install made, where the user has since put a key of theirs: it stays, with
    their key and without ours; a backup holding settings of theirs is kept and named, one holding
    only ours goes."""
    import sys

    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"), "SESSION_WATCHER_HOME": str(tmp_path / "sw")}
    cfg = tmp_path / "cfg"

    def run(*step: str) -> str:
        got = subprocess.run([sys.executable, "-m", "session_watcher.cli.install", *step], env=env,
                             capture_output=True, text=True, timeout=60, check=False)
        assert got.returncode == 0, got.stderr
        return got.stdout

    run("add", "/opt/sw/bin")
    installed = json.loads((cfg / "settings.json").read_text())
    only_ours = write_settings(cfg / "settings.json.bak-session-watcher-20250101000000", installed)
    write_settings(cfg / "settings.json", {**installed, "theme": "dark"})
    said = run("remove")
    assert json.loads((cfg / "settings.json").read_text()) == {"theme": "dark"}
    backups = sorted(cfg.glob("settings.json.bak-session-watcher-*"))
    assert [json.loads(p.read_text()) for p in backups] == [{**installed, "theme": "dark"}]
    assert f"backup: made {backups[0]} (the file as it was; it holds settings of yours)" in said
    assert only_ours not in [p.read_text() for p in backups]
    assert f"backup: removed {cfg / 'settings.json.bak-session-watcher-20250101000000'}" in said
    named_once(said, [*backups, cfg / "settings.json.bak-session-watcher-20250101000000"])


def named_once(said: str, files: list[Path]) -> None:
    """The uninstall's output says one thing of each file: one line names it."""
    for file in files:
        assert len([line for line in said.splitlines() if str(file) in line.split()]) == 1, (file, said)


def test_uninstall_writes_no_backup_it_would_remove(tmp_path: Path) -> None:
    """settings.json held an empty hooks table and nothing else: the install backs it up, the removal
    brings it back to `{}`. No backup of the file holding only our entries is written on the way (it
    was written, said, then removed and said again); the install's, which held nothing of the user's
    either, goes, named once."""
    import sys

    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"), "SESSION_WATCHER_HOME": str(tmp_path / "sw")}
    cfg = tmp_path / "cfg"
    write_settings(cfg / "settings.json", {"hooks": {}})
    said = ""
    for step in (["add", "/opt/sw/bin"], ["remove"]):
        got = subprocess.run([sys.executable, "-m", "session_watcher.cli.install", *step], env=env, capture_output=True,
                             text=True, timeout=60, check=False)
        assert got.returncode == 0, got.stderr
        if step == ["add", "/opt/sw/bin"]:
            [backup] = sorted(cfg.glob("settings.json.bak-session-watcher-*"))
        said = got.stdout
    assert json.loads((cfg / "settings.json").read_text()) == {}
    assert sorted(p.name for p in cfg.iterdir()) == ["settings.json"]
    assert said.splitlines() == [f"settings: removed session-watcher from {cfg / 'settings.json'}",
                                 f"backup: removed {backup} (it held only session-watcher's entries)"]


def test_uninstall_where_the_files_went_still_removes_our_backups(tmp_path: Path) -> None:
    """install.sh --uninstall after the user deleted settings.json and Codex's hooks.json: each is said
    to be absent, and our backups of them go as when the file is there, those holding only our
    entries removed, one holding the user's kept, each named once. (The venv: a stand-in that runs
    this interpreter; install.sh removes it.)"""
    import sys

    b = Box(tmp_path)
    codex = b.home / ".codex"
    codex.mkdir()
    env = {**b.env(), "SESSION_WATCHER_CODEX": str(tmp_path / "no-codex"),
           "SESSION_WATCHER_CLAUDE": _claude_stand_in(tmp_path)}

    def step(module: str, *args: str) -> None:
        got = subprocess.run([sys.executable, "-m", f"session_watcher.cli.{module}", *args], env=env,
                             capture_output=True, text=True, timeout=60, check=False)
        assert got.returncode == 0, got.stderr

    for module in ("install", "install_codex"):  # made by the install, then moved to another venv
        step(module, "add", "/opt/sw/bin")
        step(module, "add", "/opt/sw2/bin")
    hooks = codex / "hooks.json"
    ours_only = [*sorted(b.claude.glob("settings.json.bak-*")), *sorted(codex.glob("hooks.json.bak-*"))]
    assert len(ours_only) == 2
    users = codex / "hooks.json.bak-session-watcher-20250101000000"  # an older install's, of the user's file
    users.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}}))
    b.settings().unlink()
    hooks.unlink()
    venv_bin = b.sw_home / "data" / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    (venv_bin / "python").chmod(0o755)

    gone = b.install("--uninstall")
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert not b.claude.exists()  # the install made it; our backups gone, nothing is left in it
    assert sorted(p.name for p in codex.iterdir()) == [users.name]
    said = gone.stdout
    assert f"settings: {b.settings()} absent; nothing to remove" in said
    assert f"codex: {hooks} absent; nothing to remove" in said
    for backup in ours_only:
        assert f"backup: removed {backup} (it held only session-watcher's entries)" in said
    assert f"backup: kept {users} (it holds settings of yours)" in said
    named_once(said, [*ours_only, users])
    assert not (b.sw_home / "data" / "venv").exists()
    assert not (b.sw_home / "data" / "installed.json").exists()
    assert not (b.sw_home / "data" / "installed-codex.json").exists()


def test_a_status_line_of_the_users_without_a_command_is_kept(tmp_path: Path) -> None:
    """The user's statusLine with no "command" (an earlier install's line is replaced, recorded as a
    string): kept, first install or re-install (it was replaced: the earlier line's record, None,
    matched its missing command)."""
    import sys

    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"), "SESSION_WATCHER_HOME": str(tmp_path / "sw")}
    mine = {"type": "command", "padding": 2}
    write_settings(tmp_path / "cfg" / "settings.json", {"statusLine": mine, "theme": "dark"})
    for venv in ("/opt/sw/bin", "/opt/sw2/bin"):
        add = subprocess.run([sys.executable, "-m", "session_watcher.cli.install", "add", venv],
                             env=env, capture_output=True, text=True, timeout=60, check=False)
        assert add.returncode == 0, add.stderr
        assert "you already have one" in add.stdout
        assert json.loads((tmp_path / "cfg" / "settings.json").read_text())["statusLine"] == mine


def test_reinstall_replaces_the_shell_form_hooks_of_an_older_install(tmp_path: Path) -> None:
    """An install from before the exec form recorded shell command strings: they are taken out, not
    left to run beside the new hooks; the user's own hooks stay."""
    import sys

    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"), "SESSION_WATCHER_HOME": str(tmp_path / "sw")}
    old = {event: f"'/opt/sw/bin/python' -I -S '/opt/sw/bin/session-watcher-hook' {event}" for event in EVENTS[:5]}
    settings = {"hooks": {e: [{"hooks": [{"type": "command", "command": c, "timeout": 10}]}] for e, c in old.items()}}
    settings["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "echo mine"}]})
    write_settings(tmp_path / "cfg" / "settings.json", settings)
    (tmp_path / "sw" / "data").mkdir(parents=True)
    (tmp_path / "sw" / "data" / "installed.json").write_text(json.dumps({"hooks": list(old.values())}))
    add = subprocess.run([sys.executable, "-m", "session_watcher.cli.install", "add", "/opt/sw/bin"],
                         env=env, capture_output=True, text=True, timeout=60, check=False)
    assert add.returncode == 0, add.stderr
    doc = json.loads((tmp_path / "cfg" / "settings.json").read_text())
    for event in EVENTS:
        assert our_hooks(doc, event) == ours("/opt/sw/bin", event)
    assert {"type": "command", "command": "echo mine"} in [h for g in doc["hooks"]["Stop"] for h in g["hooks"]]
    rm = subprocess.run([sys.executable, "-m", "session_watcher.cli.install", "remove"], env=env, capture_output=True,
                        text=True, timeout=60, check=False)
    assert rm.returncode == 0, rm.stderr
    doc = json.loads((tmp_path / "cfg" / "settings.json").read_text())
    assert doc["hooks"] == {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}


def test_every_line_install_and_uninstall_print_fits_80_columns(tmp_path: Path) -> None:
    """A new user's ./install.sh (the demo too) and --uninstall, with a status line of their own,
    Codex's hooks.json and session states, run without a terminal (80 columns): every line is within
    80 columns but a path longer than the room, alone on its line (whole, to be copied), and the
    status-line command to copy, whole on a line of its own; the lines say what they said (they read
    120-230 columns: `settings: ...`, `codex: ...`, `command: ...`, `removed ...`)."""
    from session_watcher.cli.install import both, statusline_command
    from session_watcher.cli.install_codex import EVENTS as CODEX_EVENTS

    b = Box(tmp_path, columns=None)
    write_settings(b.settings(), {"statusLine": {"type": "command", "command": "~/bin/my-line"}, "model": "opus"})
    codex = b.home / ".codex"
    write_settings(codex / "hooks.json", {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo"}]}]}})
    env = {**b.env(), "SESSION_WATCHER_CODEX": str(tmp_path / "no-codex")}  # no app-server: trust by hand
    assert "COLUMNS" not in env
    run = ["sh", str(REPO / "install.sh")]
    got = subprocess.run(run, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert got.returncode == 0, got.stdout + got.stderr
    assert "== the status a bundled sample session ends with (session-watcher replay):" in got.stdout
    # the build installed, as the venv records it: the version, and the checkout's commit
    from session_watcher import __version__

    git = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                         timeout=60, check=False)  # a checkout without git's folder: the version alone
    build = _build(b)[0]
    said = rf" \({git.stdout.strip()}(, changed)?\)" if git.returncode == 0 else ""
    assert re.fullmatch(rf"{re.escape(__version__)}{said}", build), build
    assert got.stdout.startswith(f"installing {build} with pip (a minute or two) into\n"), got.stdout
    # an update (install.sh again over the venv; this very build, pip all the same with --reinstall)
    # says from which build to which ("updating (pip)" said neither), and shows the sample no more:
    # the user has seen it
    again = subprocess.run([*run, "--reinstall"], env=env, capture_output=True, text=True, timeout=600,
                           check=False)
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.startswith(f"updating {build} -> {build} with pip\n"), again.stdout
    assert "sample" not in again.stdout
    assert "== no Claude Code sessions in" in again.stdout
    state = b.sw_home / "state"
    state.mkdir(exist_ok=True)
    (state / "a-session.json").write_text("{}")
    gone = subprocess.run([*run, "--uninstall"], env=env, capture_output=True, text=True, timeout=600, check=False)
    assert gone.returncode == 0, gone.stdout + gone.stderr
    lines = (got.stdout + gone.stdout).splitlines()
    command = both(statusline_command(str(b.bin.parent)), {"command": "~/bin/my-line"})
    long = [line for line in lines if len(line) > 80 and line.strip() != command]
    assert all(" " not in line.strip() for line in long), long  # a path alone
    assert long  # this world's paths are longer than the room: the rule above was tried
    assert f"    {command}" in lines  # the command to copy: whole, set apart
    backups = sorted(str(p) for p in [*b.claude.glob("*.bak-*"), *codex.glob("*.bak-*")])
    assert len(backups) == 2
    for path in (str(b.bin), str(b.settings()), str(codex / "hooks.json"), *backups, str(b.sw_home / "data" / "venv")):
        assert any(path in line for line in lines), path  # never cut
    said = " ".join((got.stdout + gone.stdout).split())  # the words, the lines joined
    for words in (
            f"installed: {b.bin}",
            "statusLine: you already have one; it was left as it is. To show both (yours above), set "
            "statusLine.command to:",
            f"settings: {b.settings()} (hooks: {', '.join(EVENTS)}; statusLine: yours, kept)",
            f"codex: {codex / 'hooks.json'} (hooks: {', '.join(CODEX_EVENTS)}); Codex runs a hook once you trust "
            "it: Codex's TUI asks at its next start (\"Hooks need review\"), or open /hooks in Codex and trust "
            "session-watcher's 5 hooks there (`codex exec` runs none before that, and says nothing)",
            f"command: {b.link} {b.link.parent} is not on your PATH: add this line to ~/.profile (or your "
            "shell's startup file), then open a new terminal:",
            f"== no Claude Code sessions in {b.claude / 'projects'} and no Codex threads in "
            f"{codex / 'sessions'} yet: start one. Claude Code shows the status line; Codex has none: its alerts "
            "come to the desktop and with your next prompt (`session-watcher status` any time).",
            f"settings: removed session-watcher from {b.settings()}",
            f"codex: removed session-watcher from {codex / 'hooks.json'}",
            f"removed {b.sw_home / 'data' / 'venv'}; session states stay in {state} (delete them yourself if "
            "you wish)"):
        assert words in said, words


def _installed_stand_in(b: Box) -> None:
    """A venv where install.sh puts it whose python is this one (the package importable): what
    --uninstall runs, without a pip install."""
    python = b.sw_home / "data" / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)


def _index(folder: Path) -> None:
    """The files a report keeps in its cache folder (reports/index.py), by their names."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "warmth-index.sqlite3").write_bytes(b"index")
    (folder / "warmth-index-sources").write_bytes(b"sources")
    (folder / "warmth-index-reports").mkdir()
    (folder / "warmth-index-reports" / "merged-1.2").write_bytes(b"merged")


def test_uninstall_takes_the_index_but_nothing_of_the_users_beside_it(tmp_path: Path) -> None:
    """The cache folder the package names is not always one only we use (SESSION_WATCHER_HOME=~ makes
    it ~/cache): --uninstall takes the report's index out of it by its files' names, keeps whatever
    else is there (and the folder with it), and goes through no link (the report never writes
    through one); the data folder holding a file of the user's stays, with that file."""
    b = Box(tmp_path)
    _installed_stand_in(b)
    cache = b.sw_home / "cache"
    _index(cache)
    (cache / "notes.txt").write_text("mine")
    (b.sw_home / "data" / "pip.log").write_text("pip")
    (b.sw_home / "data" / "keep.txt").write_text("mine")
    proc = b.install("--uninstall")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(p.name for p in cache.iterdir()) == ["notes.txt"]
    assert (cache / "notes.txt").read_text() == "mine"
    assert f"removed the report's index from {cache} (the rest of that folder is not ours: kept)" in proc.stdout
    assert sorted(p.name for p in (b.sw_home / "data").iterdir()) == ["keep.txt"]

    # the cache folder a link to another folder: neither the link nor what it points at is touched
    b = Box(tmp_path / "linked")
    _installed_stand_in(b)
    elsewhere = tmp_path / "elsewhere"
    _index(elsewhere)
    (b.sw_home / "cache").symlink_to(elsewhere)
    proc = b.install("--uninstall")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (b.sw_home / "cache").is_symlink()
    assert sorted(p.name for p in elsewhere.iterdir()) == ["warmth-index-reports", "warmth-index-sources",
                                                            "warmth-index.sqlite3"]
    assert "report's index" not in proc.stdout

    # an empty folder of that name the report did not fill is not ours to remove
    b = Box(tmp_path / "empty")
    _installed_stand_in(b)
    (b.sw_home / "cache").mkdir()
    assert b.install("--uninstall").returncode == 0
    assert (b.sw_home / "cache").is_dir()


def test_uninstall_takes_the_exports_replay_cache_and_says_no_session_state_for_it(tmp_path: Path) -> None:
    """`export --otlp` (a real run over a real session, to a collector on loopback) keeps its replay
    cache in the state folder, beside its record of the advice sent (`--dry-run` writes neither);
    --uninstall takes the cache (made again by the next export) and keeps the record (a session whose
    advice was sent: an export with nothing to record writes none), and says so. A
    state folder that held nothing but the cache goes, no "session states stay" said for it."""
    from tests.otlp_receiver import Receiver

    b = Box(tmp_path)
    _installed_stand_in(b)
    projects = tmp_path / "projects" / "-home-u-p"
    projects.mkdir(parents=True)
    cold = REPO / "tests" / "fixtures" / "cold-return" / "03a1382e-ecd5-42c4-b3d4-5c659e165904.jsonl"  # advice sent
    shutil.copy(cold, projects / cold.name)
    with Receiver() as r:
        export = subprocess.run([sys.executable, "-m", "session_watcher", "export", "--otlp", r.url,
                                 "--projects", str(projects.parent)], env=b.env(), capture_output=True, text=True,
                                timeout=120, check=False)
        assert export.returncode == 0, export.stderr
        assert r.requests
    otlp = b.sw_home / "state" / "otlp"
    assert {"backfill.json", "progress.json"} <= {p.name for p in otlp.iterdir()}
    proc = b.install("--uninstall")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    kept = {p.name for p in otlp.iterdir()}
    assert "progress.json" in kept, kept  # (and the record's lock file)
    assert "backfill.json" not in kept, kept
    assert f"session states stay in {b.sw_home / 'state'}" in proc.stdout

    b = Box(tmp_path / "cache-only")
    _installed_stand_in(b)
    otlp = b.sw_home / "state" / "otlp"
    otlp.mkdir(parents=True)
    (otlp / "backfill.json").write_text("{}")
    proc = b.install("--uninstall")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (b.sw_home / "state").exists()
    assert "session states" not in proc.stdout


def test_a_codex_never_run_is_named_on_the_closing_screen(tmp_path: Path) -> None:
    """Codex installed and never run (no ~/.codex), no Claude Code session: the closing screen names
    both ways on, not only "watch the status line" (Codex has none, and its hooks wait for its folder)."""
    b = Box(tmp_path)
    exe = tmp_path / "bin" / "codex"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    # Codex alone (no claude, no Claude Code folder, no CLAUDE_CONFIG_DIR): only Codex's way on, nothing of
    # a status line
    env = {**without_claude_dir(b.env()), "SESSION_WATCHER_CODEX": str(exe),
           "SESSION_WATCHER_CLAUDE": str(tmp_path / "no-claude")}
    got = subprocess.run(["sh", str(REPO / "install.sh")], env=env, capture_output=True, text=True, timeout=600,
                         check=False)
    assert got.returncode == 0, got.stdout + got.stderr
    last = " ".join(got.stdout.rsplit("\n== ", 1)[1].split())
    assert last == f"run codex once (it makes {b.home / '.codex'}), then ./install.sh again to add its hooks.", last
    env["SESSION_WATCHER_CLAUDE"] = str(exe)  # a claude too: both ways on
    got = subprocess.run(["sh", str(REPO / "install.sh")], env=env, capture_output=True, text=True, timeout=600,
                         check=False)
    assert got.returncode == 0, got.stdout + got.stderr
    last = " ".join(got.stdout.split("== no Claude Code sessions", 1)[1].split())
    assert "start one and watch the status line, or run codex once, then ./install.sh again" in last
    # without that codex, the line it had
    env["SESSION_WATCHER_CODEX"] = str(tmp_path / "no-codex")
    got = subprocess.run(["sh", str(REPO / "install.sh")], env=env, capture_output=True, text=True, timeout=600,
                         check=False)
    assert got.returncode == 0, got.stdout + got.stderr
    assert "run codex once" not in got.stdout.split("== no Claude Code sessions", 1)[1]


def test_a_codex_user_s_install_shows_their_threads(tmp_path: Path) -> None:
    """A new user of Codex alone (no Claude Code folder; a thread of theirs in ~/.codex/sessions):
    the install's closing screen is the report of their sessions, the thread in it, not "no Claude
    Code sessions ... watch the status line" (Codex has no status line, and the thread was there)."""
    from tests.codex_lines import FIXTURES

    b = Box(tmp_path)
    thread = "019f1f6f-311c-7543-b0f9-f126da3c5434"
    day = b.home / ".codex" / "sessions" / "2026" / "07" / "01"
    day.mkdir(parents=True)
    shutil.copy(FIXTURES / f"rollout-{thread}.jsonl", day / f"rollout-2026-07-01T00-00-00-{thread}.jsonl")
    env = {**without_claude_dir(b.env()), "SESSION_WATCHER_CODEX": str(tmp_path / "no-codex")}
    got = subprocess.run(["sh", str(REPO / "install.sh")], env=env, capture_output=True, text=True, timeout=600,
                         check=False)
    assert got.returncode == 0, got.stdout + got.stderr
    assert "claude code: not on this machine" in got.stdout
    assert "== your sessions (session-watcher report):" in got.stdout, got.stdout
    report = got.stdout.split("== your sessions (session-watcher report):", 1)[1]
    assert thread[:8] in report
    # then where the thread's alerts come (the next step the screen with no thread yet names too),
    # never "watch the status line"
    assert " ".join(report.split()).endswith(
        "== Codex has no status line: a thread's alerts come to the desktop and with your next prompt "
        "(`session-watcher status` any time)."), report
    assert "watch the status line" not in got.stdout


def test_a_comma_separated_claude_config_dir_is_a_list_to_the_closing_screen_too(tmp_path: Path) -> None:
    """CLAUDE_CONFIG_DIR="A,B" (a list, as ccusage and the report read it), a session under B's
    projects alone: the install's closing screen is the report of it. install.sh read the variable as
    one path, "A" (the part before the comma), said "no Claude Code sessions in A/projects yet" and
    showed no report, though `session-watcher report` listed the session. The settings go to the first
    folder, A, as `settings_file` says."""
    b = Box(tmp_path)
    first, second = tmp_path / "first", tmp_path / "second config"
    session = "258c7280-ae70-4798-800f-63464d01a85d"
    project = second / "projects" / "-home-u-proj"
    project.mkdir(parents=True)
    shutil.copy(TRANSCRIPTS / f"{session}.jsonl", project / f"{session}.jsonl")
    env = {**b.env(), "CLAUDE_CONFIG_DIR": f"{first},{second}", "SESSION_WATCHER_CODEX": str(tmp_path / "no-codex")}
    got = subprocess.run(["sh", str(REPO / "install.sh")], env=env, capture_output=True, text=True, timeout=600,
                         check=False)
    assert got.returncode == 0, got.stdout + got.stderr
    assert "no Claude Code sessions" not in got.stdout, got.stdout
    assert "== your sessions (session-watcher report):" in got.stdout, got.stdout
    report = got.stdout.split("== your sessions (session-watcher report):", 1)[1]
    assert session[:8] in report, report
    assert (first / "settings.json").is_file()
    # the session gone: the line names the folders the report reads, each whole (one holds a space)
    (project / f"{session}.jsonl").unlink()
    (first / "projects").mkdir()
    again = subprocess.run(["sh", str(REPO / "install.sh")], env=env, capture_output=True, text=True, timeout=600,
                           check=False)
    assert again.returncode == 0, again.stdout + again.stderr
    said = " ".join(again.stdout.split())
    assert said.endswith(f"== no Claude Code sessions in {first / 'projects'} or {second / 'projects'} yet: "
                         "start one, and watch the status line."), said


def _venv_whose_projects_step_fails(b: Box) -> None:
    """A stand-in venv: its python is this interpreter, pip does nothing (this checkout is installed
    in it already), and `cli.install projects` fails printing nothing (as a broken venv would)."""
    venv_bin = b.sw_home / "data" / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").write_text(
        "#!/bin/sh\n"
        'case " $* " in *" -m pip "*) exit 0 ;; *" session_watcher.cli.install projects "*) exit 1 ;; esac\n'
        f'exec {sys.executable} "$@"\n')
    (venv_bin / "python").chmod(0o755)


@pytest.mark.parametrize("config", ["list", "one", "default"])
def test_the_closing_line_names_claude_codes_folder_when_the_projects_step_fails(tmp_path: Path, config: str) -> None:
    """`cli.install projects` failing (it printed nothing): install.sh said "no Claude Code sessions in
    yet", naming no folder. It names the one Claude Code would use: the first of a comma-separated
    CLAUDE_CONFIG_DIR (spaces around it dropped, `~/` read as the home), else ~/.claude, then
    /projects; and a session there is still found, so the report is shown."""
    b = Box(tmp_path)
    _venv_whose_projects_step_fails(b)
    env = {**b.env(), "SESSION_WATCHER_CODEX": str(tmp_path / "no-codex")}
    if config == "list":
        env["CLAUDE_CONFIG_DIR"] = f" ,  ~/first cfg , {tmp_path / 'second'}"
        folder = b.home / "first cfg" / "projects"
    elif config == "one":
        folder = b.claude / "projects"
    else:
        env = without_claude_dir(env)
        folder = b.home / ".claude" / "projects"
    got = subprocess.run(["sh", str(REPO / "install.sh")], env=env, capture_output=True, text=True, timeout=600,
                         check=False)
    assert got.returncode == 0, got.stdout + got.stderr
    said = " ".join(got.stdout.split())
    assert said.endswith(f"== no Claude Code sessions in {folder} yet: start one, and watch the status line."), said
    if config != "list":
        return
    session = "258c7280-ae70-4798-800f-63464d01a85d"
    (folder / "-home-u-proj").mkdir(parents=True)
    shutil.copy(TRANSCRIPTS / f"{session}.jsonl", folder / "-home-u-proj" / f"{session}.jsonl")
    again = subprocess.run(["sh", str(REPO / "install.sh")], env=env, capture_output=True, text=True, timeout=600,
                           check=False)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "no Claude Code sessions" not in again.stdout, again.stdout
    assert "== your sessions (session-watcher report):" in again.stdout, again.stdout


def test_the_closing_line_finds_more_sessions_than_a_command_s_arguments_hold(tmp_path: Path) -> None:
    """The projects step failing, install.sh looks for a session itself: with more of them than one
    command's arguments may hold (here 700 paths of 3,400 bytes: 2.4 MB, past Linux's 2 MB; macOS's
    1 MB is some 8,000 sessions), `ls` over them failed (E2BIG) and the line said there were none.
    The shell's own pattern has no such bound: the report is shown."""
    b = Box(tmp_path)
    _venv_whose_projects_step_fails(b)
    cfg = tmp_path.joinpath(*[f"{n:02d}" + "d" * 248 for n in range(13)])
    project = cfg / "projects" / "-p"
    project.mkdir(parents=True)
    for n in range(700):
        (project / f"{n:08x}-0000-4000-8000-000000000000.jsonl").write_bytes(b"")
    assert 700 * len(str(project / ("x" * 41))) > 2 * 1024 * 1024
    env = {**b.env(claude=cfg), "SESSION_WATCHER_CODEX": str(tmp_path / "no-codex")}
    got = subprocess.run(["sh", str(REPO / "install.sh")], env=env, capture_output=True, text=True, timeout=600,
                         check=False)
    assert got.returncode == 0, got.stdout + got.stderr
    assert "no Claude Code sessions" not in got.stdout, got.stdout
    assert "== your sessions (session-watcher report):" in got.stdout, got.stdout


@pytest.mark.parametrize("folder", ["sessions/2026/11/20", "archived_sessions"])
def test_the_closing_line_finds_more_codex_threads_than_a_command_s_arguments_hold(tmp_path: Path, folder: str) -> None:
    """As for Claude Code's sessions: 700 rollouts at paths of 3,400 bytes, live or archived, were
    more than `ls`'s arguments may hold, and the closing line said there were no Codex threads."""
    b = Box(tmp_path)
    _venv_whose_projects_step_fails(b)
    codex = tmp_path.joinpath(*[f"{n:02d}" + "d" * 248 for n in range(13)])
    threads = codex / folder
    threads.mkdir(parents=True)
    for n in range(700):
        (threads / f"rollout-2026-11-20T10-00-00-{n:08x}-0000-7000-8000-000000000000.jsonl").write_bytes(b"")
    assert 700 * len(str(threads / ("x" * 71))) > 2 * 1024 * 1024
    env = {**b.env(), "CODEX_HOME": str(codex), "SESSION_WATCHER_CODEX": str(tmp_path / "no-codex")}
    got = subprocess.run(["sh", str(REPO / "install.sh")], env=env, capture_output=True, text=True, timeout=600,
                         check=False)
    assert got.returncode == 0, got.stdout + got.stderr
    assert "no Codex threads" not in got.stdout, got.stdout
    assert "== your sessions (session-watcher report):" in got.stdout, got.stdout


def test_the_projects_install_sh_names_are_the_report_s(tmp_path: Path) -> None:
    """`cli.install projects`: the folders of a comma-separated CLAUDE_CONFIG_DIR that are there (none:
    the first, where Claude Code makes it), exit 0 only when one holds a session; spaces around a
    comma and an empty part are read as `paths.claude_config_dirs` reads them."""
    a, b = tmp_path / "a", tmp_path / "b"

    def projects(value: str) -> tuple[int, list[str]]:
        env = {**os.environ, "CLAUDE_CONFIG_DIR": value, "HOME": str(tmp_path / "home")}
        got = subprocess.run([sys.executable, "-I", "-m", "session_watcher.cli.install", "projects"], env=env,
                             capture_output=True, text=True, timeout=60, check=False, cwd=REPO)
        assert got.stderr == ""
        return got.returncode, got.stdout.splitlines()

    assert projects(f"{a} , {b},") == (1, [str(a / "projects")])  # neither there: the first
    (b / "projects" / "-p").mkdir(parents=True)
    assert projects(f"{a},{b}") == (1, [str(b / "projects")])
    (b / "projects" / "-p" / "s.jsonl").write_text("{}\n")
    assert projects(f"{a},{b}") == (0, [str(b / "projects")])
    (a / "projects").mkdir(parents=True)
    assert projects(f"{a},{b}") == (0, [str(a / "projects"), str(b / "projects")])
    assert projects(str(a)) == (1, [str(a / "projects")])  # one folder: its own sessions only


def test_uninstall_names_the_config_it_leaves_as_one_file(tmp_path: Path) -> None:
    """No session state, only the config `config set` wrote: the last line names it as the one file it
    is ("your config stays in FILE (delete it yourself if you wish)"), not as "them". (The venv: a
    stand-in that runs this interpreter; install.sh removes it.)"""
    import sys

    b = Box(tmp_path)
    config = b.sw_home / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("guard = \"warn\"\n")
    venv_bin = b.sw_home / "data" / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    (venv_bin / "python").chmod(0o755)
    gone = b.install("--uninstall")
    assert gone.returncode == 0, gone.stdout + gone.stderr
    said = " ".join(gone.stdout.split())  # the words, the lines joined
    assert said.endswith(f"; your config stays in {config} (delete it yourself if you wish)"), said
    assert config.is_file()


def test_the_build_an_install_names_from_a_clone_a_linked_path_and_a_changed_checkout(tmp_path: Path) -> None:
    """install.sh names the build it installs (and records it in the venv's .install-build): the
    version and the checkout's commit, ', changed' where a file pip builds from differs from it. A
    fresh clone (the README's first command), one with core.symlinks=false, and one reached through
    a link (git names its top folder with the link resolved: the commit was lost there) all name
    the commit; a changed README (pip builds the package's metadata from it) is a change too. A
    Python that passes find_python but fails at `-m venv` stops the run after that first line."""
    from session_watcher import __version__

    if subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, timeout=60,
                      check=False).returncode:
        pytest.skip("not a git checkout")
    fake = tmp_path / "bin" / "python3"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\ncase "$1" in -c) echo "{fake}" ;; *) exit 1 ;; esac\n')
    fake.chmod(0o755)

    def first_line(checkout: Path) -> str:
        env = {**os.environ, "HOME": str(tmp_path / "home"), "PYTHON": str(fake)}
        env.pop("SESSION_WATCHER_HOME", None)
        got = subprocess.run(["sh", str(checkout / "install.sh"), "--venv-only", "--data", str(tmp_path / "data")],
                             env=env, capture_output=True, text=True, timeout=120, check=False)
        assert got.returncode != 0, got.stdout + got.stderr  # the fake's venv failed
        return got.stdout.splitlines()[0]

    for name, options in (("clone", []), ("nolinks", ["-c", "core.symlinks=false"])):
        clone = tmp_path / name
        subprocess.run(["git", "clone", "-q", *options, str(REPO), str(clone)], capture_output=True, timeout=120,
                       check=True)
        head = subprocess.run(["git", "-C", str(clone), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=60, check=True).stdout.strip()
        shutil.copyfile(REPO / "install.sh", clone / "install.sh")  # this checkout's, committed or not
        assert first_line(clone) == f"installing {__version__} ({head}) with pip (a minute or two) into"
    link = tmp_path / "link"
    link.symlink_to(clone)
    assert first_line(link) == f"installing {__version__} ({head}) with pip (a minute or two) into"
    with (clone / "README.md").open("a") as readme:
        readme.write("\na line of the user's\n")
    assert first_line(clone) == f"installing {__version__} ({head}, changed) with pip (a minute or two) into"


def test_a_build_whose_files_cannot_be_hashed_is_never_taken_for_installed(tmp_path: Path) -> None:
    """The hash of the files pip builds from may fail (a Python that cannot run it, a file it cannot
    read): the install goes on to pip, as it did before the hash, and a record whose hash is empty
    (one such run's) never says the build is in. The venv here would pass every other check: its
    python imports the package (a .pth to this checkout) and its launchers are there; it has no pip,
    so the pip step fails at once."""
    from pathlib import Path

    real = shutil.which("python3") or sys.executable
    py = tmp_path / "bin" / "python3"
    py.parent.mkdir()
    # find_python's question answered with its own path; the hash's run (`-I -`) fails; the rest the real one's
    py.write_text(f'#!/bin/sh\ncase "$1 ${{2:-}}" in -c*) echo "{py}"; exit 0 ;; "-I -") exit 1 ;; esac\n'
                  f'exec "{real}" "$@"\n')
    py.chmod(0o755)
    venv = tmp_path / "data" / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = subprocess.run([str(venv / "bin" / "python"), "-I", "-c",
                           "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, timeout=60, check=True).stdout.strip()
    (tmp_path / "pkg").mkdir()
    shutil.copytree(REPO / "session_watcher", tmp_path / "pkg" / "session_watcher",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (Path(site) / "checkout.pth").write_text(str(tmp_path / "pkg") + "\n")
    for name in ("session-watcher", "session-watcher-hook", "session-watcher-statusline"):
        (venv / "bin" / name).write_text("#!/bin/sh\n")
        (venv / "bin" / name).chmod(0o755)
    env = {**os.environ, "HOME": str(tmp_path / "home"), "PYTHON": str(py)}
    env.pop("SESSION_WATCHER_HOME", None)

    def install() -> subprocess.CompletedProcess[str]:
        return subprocess.run(["sh", str(REPO / "install.sh"), "--venv-only", "--data", str(tmp_path / "data")],
                              env=env, capture_output=True, text=True, timeout=120, check=False)

    (venv / ".install-build").write_text("an older build\ntree \n")
    first = install()  # the build's name, as install.sh says it
    assert first.returncode == 1, first.stdout + first.stderr  # no pip in this venv
    said = re.match(r"updating an older build -> (.+) with pip\n", first.stdout)
    assert said is not None, first.stdout + first.stderr
    (venv / ".install-build").write_text(f"{said[1]}\ntree \n")
    again = install()
    assert again.stdout.startswith(f"updating {said[1]} -> {said[1]} with pip\n"), again.stdout + again.stderr
    assert again.returncode == 1
    assert "install.sh: pip failed" in again.stderr


def test_on_a_codex_only_machine_nothing_of_claude_code_is_written(tmp_path: Path) -> None:
    """Codex alone (its ~/.codex; no Claude Code folder, no `claude` on PATH): the install registers
    Codex's hooks and writes no Claude Code settings.json (it made ~/.claude and a settings file
    there), says so in a line, and its closing screen names Codex's threads only, its sample a
    Codex thread's (generated), not the Claude Code session it showed; --uninstall takes Codex's
    hooks out and says nothing of a Claude Code file it never wrote."""
    b = Box(tmp_path)
    codex = b.home / ".codex"
    codex.mkdir()
    env = {**without_claude_dir(b.env()), "SESSION_WATCHER_CODEX": str(tmp_path / "no-codex"),
           "SESSION_WATCHER_CLAUDE": str(tmp_path / "no-claude")}
    got = subprocess.run(["sh", str(REPO / "install.sh")], env=env, capture_output=True, text=True, timeout=600,
                         check=False)
    assert got.returncode == 0, got.stdout + got.stderr
    assert not (b.home / ".claude").exists()
    said = " ".join(got.stdout.split())
    assert (f"claude code: not on this machine (no {b.home / '.claude'} or {b.home / '.config' / 'claude'}, no "
            "`claude` on PATH): its settings not written; installed for Codex") in said
    assert f"codex: {codex / 'hooks.json'} (hooks: " in said
    assert "settings:" not in said
    assert "statusLine" not in said
    assert "== the status a sample Codex thread ends with (generated; session-watcher replay): " \
           "session sample-codex model gpt-5.5 calls 12 project /home/devel/projects/ledger" in said, said
    assert "bundled sample session" not in said
    assert "claude-" not in said  # no Claude Code model, no Claude Code session
    assert said.endswith(f"== no Codex threads in {codex / 'sessions'} yet: start one. Codex has no status line: its "
                         "alerts come to the desktop and with your next prompt (`session-watcher status` any time).")
    assert (codex / "hooks.json").is_file()
    gone = subprocess.run(["sh", str(REPO / "install.sh"), "--uninstall"], env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert f"codex: removed {codex / 'hooks.json'} (the install created it" in " ".join(gone.stdout.split())
    assert "settings" not in gone.stdout
    assert not (codex / "hooks.json").exists()
    assert not (b.home / ".claude").exists()


def _sw(env: dict[str, str], b: Box, *args: str) -> str:
    """The installed command's output, its lines unwrapped into one."""
    got = subprocess.run([str(b.bin), *args], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert got.returncode == 0, got.stdout + got.stderr
    return " ".join(got.stdout.split())


def _doctor(env: dict[str, str], b: Box, field: str) -> str:
    got = subprocess.run([str(b.bin), "doctor"], env=env, capture_output=True, text=True, timeout=120, check=False)
    return " ".join(" ".join(ln.split()) for ln in got.stdout.splitlines() if ln.startswith(field))


def test_a_claude_config_dir_not_made_yet_is_claude_code_and_a_record_left_after_it_goes_is_forgotten(
        tmp_path: Path) -> None:
    """CLAUDE_CONFIG_DIR set to a folder not made yet, Codex's folder there, no `claude` on PATH: the
    user said they use Claude Code (it makes that folder when it first runs), so the install writes
    its settings there and the closing screen, doctor and `config set --project` say Claude Code's (it
    read as a Codex-only machine: nothing written, "not on this machine"). Then Claude Code goes (its
    folder deleted, the variable unset): doctor names the record left over and how to remove it, and
    install.sh again forgets it, its closing screen Codex's alone (it still named the status line)."""
    b = Box(tmp_path)
    codex = b.home / ".codex"
    codex.mkdir()
    project = tmp_path / "proj"
    project.mkdir()
    env = {**b.env(), "SESSION_WATCHER_CODEX": str(tmp_path / "no-codex"),
           "SESSION_WATCHER_CLAUDE": str(tmp_path / "no-claude")}
    record = b.sw_home / "data" / "installed.json"
    assert not b.claude.exists()
    got = subprocess.run(["sh", str(REPO / "install.sh")], env=env, capture_output=True, text=True, timeout=600,
                         check=False)
    assert got.returncode == 0, got.stdout + got.stderr
    said = " ".join(got.stdout.split())
    assert "not on this machine" not in said
    assert f"settings: {b.settings()} (hooks: " in said
    assert our_hooks(json.loads(b.settings().read_text()), "Stop") == ours(str(b.bin.parent), "Stop")
    assert said.endswith(f"== no Claude Code sessions in {b.claude / 'projects'} and no Codex threads in "
                         f"{codex / 'sessions'} yet: start one. Claude Code shows the status line; Codex has none: "
                         "its alerts come to the desktop and with your next prompt (`session-watcher status` any "
                         "time)."), said
    assert _doctor(env, b, "settings ") == f"settings {b.settings()}: hooks for {', '.join(sorted(EVENTS))}"
    assert _doctor(env, b, "statusLine ") == "statusLine session-watcher"
    assert _doctor(env, b, "sessions ") == ("sessions none yet: hooks have not fired (start a Claude Code session "
                                            "or a Codex thread)")
    assert "no recent session ran here, and Claude Code's is the default" in _sw(
        env, b, "config", "set", "--project", str(project), "gate_min_calls", "20")
    assert (project / ".claude").is_dir()
    shutil.rmtree(project / ".claude")

    # Claude Code removed: its folder gone, the variable with it; install.sh's record is left
    shutil.rmtree(b.claude)
    env = without_claude_dir(env)
    assert _doctor(env, b, "settings ") == (
        f"settings {b.home / '.claude' / 'settings.json'}: absent: Claude Code is not on this machine any more, "
        f"and install.sh's record of the hooks it wrote into {b.settings()} (gone since) is left over: "
        f"./install.sh again forgets it, or remove it: rm {record}")
    assert _doctor(env, b, "sessions ") == ("sessions none yet: hooks have not fired (start a Codex thread)")
    again = subprocess.run(["sh", str(REPO / "install.sh")], env=env, capture_output=True, text=True, timeout=600,
                           check=False)
    assert again.returncode == 0, again.stdout + again.stderr
    said = " ".join(again.stdout.split())
    assert (f"its settings not written; the record of an earlier install into {b.settings()} (gone since) "
            "forgotten; installed for Codex") in said, said
    assert said.endswith(f"== no Codex threads in {codex / 'sessions'} yet: start one. Codex has no status line: "
                         "its alerts come to the desktop and with your next prompt (`session-watcher status` any "
                         "time)."), said
    assert "status line;" not in said
    assert not record.exists()
    assert not b.claude.exists()
    assert not (b.home / ".claude").exists()
    assert _doctor(env, b, "settings ") == (f"settings {b.home / '.claude' / 'settings.json'}: absent (install.sh "
                                            "installed for Codex alone: Claude Code was not on this machine; "
                                            "./install.sh again once it is)")
    assert "no recent session ran here, and Codex is the agent installed" in _sw(
        env, b, "config", "set", "--project", str(project), "gate_min_calls", "20")
    assert (project / ".codex").is_dir()


def test_install_sh_help_names_each_mode_it_takes(tmp_path: Path) -> None:
    """`./install.sh --help` (its header) names each mode the script's options choose and what it honours
    (it printed four of its lines: --no-demo and the variables were left out); it installs nothing."""
    b = Box(tmp_path)
    got = subprocess.run(["sh", str(REPO / "install.sh"), "--help"], env=b.env(), capture_output=True, text=True,
                         timeout=60, check=False)
    assert got.returncode == 0, got.stderr
    script = (REPO / "install.sh").read_text()
    modes = re.findall(r"^\s+(--[a-z-]+)\) mode=", script, re.MULTILINE)
    assert sorted(modes) == ["--no-demo", "--uninstall", "--venv-only"]
    for mode in modes:
        assert f"./install.sh {mode} " in got.stdout, mode
    assert "Honours CLAUDE_CONFIG_DIR" in got.stdout
    assert "set -eu" not in got.stdout
    assert not b.sw_home.exists()


def test_install_sh_unknown_option_names_the_help(tmp_path: Path) -> None:
    """An option install.sh does not take (`--uninstal`, a typo) was named and no more: the message
    names `./install.sh --help`, the next step; it exits 2 and installs nothing."""
    b = Box(tmp_path)
    got = subprocess.run(["sh", str(REPO / "install.sh"), "--uninstal"], env=b.env(), capture_output=True,
                         text=True, timeout=60, check=False)
    assert got.returncode == 2
    assert got.stderr == "install.sh: unknown option --uninstal (`./install.sh --help` lists the options)\n"
    assert got.stdout == ""
    assert not b.sw_home.exists()
