"""The install route and its one restart path, the same in the alerts, `notify --test` and the hook."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pytest

from session_watcher import cli
from session_watcher.base import paths, route
from session_watcher.notifier import dispatch, message

if TYPE_CHECKING:
    from session_watcher.core.shapes import NotifyConfig

ALERT = {"kind": "gate", "lamp": "amber", "bDefault": 45000, "model": "claude-opus-4-6", "sessionId": "s1"}
INSTALL = ("`session-watcher handoff` in another terminal, then /clear here (in Claude Code, "
           "`! session-watcher handoff` also works but sends one request: the note goes through the model once)")
PLUGIN = "/session-watcher:handoff, then /clear"


def _plugin_installed(home: Path) -> None:
    """Claude Code's record of the plugin installed and enabled, as 2.1.332 writes it."""
    cfg = home / ".claude"
    (cfg / "plugins").mkdir(parents=True)
    (cfg / "plugins" / "installed_plugins.json").write_text(json.dumps(
        {"version": 2, "plugins": {"session-watcher@session-watcher": [
            {"scope": "user", "installPath": str(cfg / "plugins" / "cache" / "sw"), "version": "0.9.0"}]}}))
    (cfg / "settings.json").write_text(json.dumps({"enabledPlugins": {"session-watcher@session-watcher": True}}))


def _install_record() -> None:
    os.makedirs(paths.data_dir(), exist_ok=True)
    Path(paths.data_dir(), "installed.json").write_text(json.dumps({"hooks": ["[\"python\"]"], "statusLine": None}))


class TestRoute:
    def test_paths(self) -> None:
        """The plugin route has the slash command; install.sh's has only the command on PATH."""
        assert route.restart_path("plugin") == PLUGIN
        assert route.restart_path("install") == INSTALL
        assert route.handoff_command("install") == "! session-watcher handoff"

    def test_install_words_lead_with_what_sends_nothing(self) -> None:
        """The install.sh route's warm restart leads with the terminal form (no request), gives the
        bash-mode form after it with its cost (one request: the note goes through the model once;
        tests/e2e/test_e2e_handoff_install.py counts both); the cold words name no form typed in the
        agent. Every command named is one the route has."""
        words = route.restart_path("install")
        terminal = words.index(f"`{route.TERMINAL_COMMAND}` in another terminal, then /clear here")
        bash = words.index(f"`{route.BASH_COMMAND}` also works but sends one request: the note goes through the "
                           "model once")
        assert terminal == 0 < bash
        assert "!" not in route.COLD_RESTART
        assert "/session-watcher:handoff" not in words + route.COLD_RESTART

    def test_docs_say_the_alerts_words(self) -> None:
        """README and docs/alerts.md give the install.sh route's restart in the alerts' own words."""
        import re

        root = Path(__file__).resolve().parent.parent
        want = route.restart_path("install").replace("`", "")
        for doc in ("README.md", "docs/alerts.md"):
            text = re.sub(r"\s+", " ", (root / doc).read_text(encoding="utf-8")).replace("`", "")
            assert want in text, doc

    def test_current_from_how_hooks_were_installed(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A terminal's command reads the route from the install: nothing -> install.sh's words; the
        plugin installed -> the slash command; install.sh's hooks recorded -> the command on PATH;
        a hook with CLAUDE_PLUGIN_ROOT -> the plugin whatever else is installed."""
        monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
        home = Path(os.environ["HOME"])
        assert route.current({}) == "install"
        _plugin_installed(home)
        assert route.current({}) == "plugin"
        _install_record()
        assert route.current({}) == "install"
        assert route.current({"CLAUDE_PLUGIN_ROOT": "/p"}) == "plugin"


class TestMessages:
    def test_alert_names_the_hooks_route(self) -> None:
        """The alert a hook composes names its own route's path, never the other's."""
        message_only = cast("NotifyConfig", {"channels": ["message"]})  # the defaults for the rest
        plugin = dispatch([ALERT], message_only, env={"CLAUDE_PLUGIN_ROOT": "/p"})
        install = dispatch([ALERT], message_only, env={})
        assert plugin
        assert install
        assert f"To restart with a handoff: {PLUGIN}." in plugin["systemMessage"].splitlines()
        assert f"To restart with a handoff: {INSTALL}." in install["systemMessage"].splitlines()
        assert "/session-watcher:handoff" not in install["systemMessage"]

    def test_a_codex_threads_alert_names_codexs_way(self) -> None:
        """A Codex thread's alert (the hook's state names its agent) ends with Codex's restart: outside
        `codex exec` (this test's process) the TUI's, the command by its `!` (which sends nothing to
        the model, warm or cold), then Codex's /clear; it said "(in Claude Code, `! session-watcher
        handoff` also works ...)", a client and a bash mode the Codex user does not have, then "in
        another terminal", which the TUI does not need. Claude Code's alert as it was."""
        message_only = cast("NotifyConfig", {"channels": ["message"]})
        tui = "`!session-watcher handoff` (Codex runs it itself: no request to the model), then /clear here"
        for alert in (ALERT, GUARD):
            codex = dispatch([alert], message_only, env={}, agent="codex")
            claude = dispatch([alert], message_only, env={}, agent="claude-code")
            assert codex
            assert claude
            assert f"To restart with a handoff: {tui}." in codex["systemMessage"].splitlines()
            assert "Claude Code" not in codex["systemMessage"]
            assert "terminal" not in codex["systemMessage"]
            assert claude == dispatch([alert], message_only, env={})
        assert f"To restart with a handoff: {INSTALL}." in \
            (dispatch([ALERT], message_only, env={}, agent="claude-code") or {})["systemMessage"].splitlines()

    def test_compose_takes_the_path(self) -> None:
        _, body = message.compose(ALERT, PLUGIN)
        assert f"To restart with a handoff: {PLUGIN}." in body.splitlines()

    def test_notify_test_names_the_installed_route(self, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
        """`notify --test` on the install.sh route shows the command that route has."""
        monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
        _install_record()
        assert cli.main(["notify", "--test", "--channel", "message"]) == 0
        out = capsys.readouterr().out
        assert "! session-watcher handoff" in out
        assert "/session-watcher:handoff" not in out
        _plugin_installed(Path(os.environ["HOME"]))
        os.unlink(os.path.join(paths.data_dir(), "installed.json"))
        assert cli.main(["notify", "--test", "--channel", "message"]) == 0
        assert f"{PLUGIN}." in capsys.readouterr().out


    @pytest.mark.slow  # a login shell runs what the message names
    def test_codexs_bang_names_the_linked_command_by_its_path(self, monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
        """Codex's `!` runs the command in a login shell, whose profile may set PATH anew (Debian's
        /etc/profile does): where install.sh linked the command, the TUI's restart names the link by
        its path, which that shell runs whatever its PATH (a real `bash -l` here, ~/.local/bin on no
        PATH); the bare name, on the terminal's PATH, was not found there. No link of ours: the name."""
        import subprocess

        monkeypatch.delenv("XDG_BIN_HOME", raising=False)
        message_only = cast("NotifyConfig", {"channels": ["message"]})
        bare = "`!session-watcher handoff` (Codex runs it itself"
        assert bare in (dispatch([ALERT], message_only, env={}, agent="codex") or {})["systemMessage"]
        target = tmp_path / "sw" / "session-watcher" / "venv" / "bin" / "session-watcher"  # install.sh's venv
        target.parent.mkdir(parents=True)
        target.write_text('#!/bin/sh\necho "ran: $*"\n')
        target.chmod(0o755)
        link = Path.home() / ".local" / "bin" / "session-watcher"
        link.parent.mkdir(parents=True)
        link.symlink_to(target)
        for alert in (ALERT, GUARD):
            text = (dispatch([alert], message_only, env={}, agent="codex") or {})["systemMessage"]
            assert "`!~/.local/bin/session-watcher handoff` (Codex runs it itself: no request to the model), " \
                   "then /clear here." in text, text
            typed = text.split("`!", 1)[1].split("`", 1)[0]
            got = subprocess.run(["bash", "-lc", typed], env={"HOME": str(Path.home()), "PATH": "/usr/bin:/bin"},
                                 stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30, check=False)
            assert got.stdout.strip().splitlines()[-1:] == ["ran: handoff"], (typed, got.stdout, got.stderr)
        link.unlink()
        link.symlink_to(tmp_path / "elsewhere" / "session-watcher")  # not ours: never suggested by its path
        assert bare in (dispatch([ALERT], message_only, env={}, agent="codex") or {})["systemMessage"]

    def test_notify_test_speaks_codex_to_a_codex_user(self, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
        """The latest session a Codex thread: `notify --test`'s sample ends with Codex's restart (the
        command by the TUI's `!`, then /clear), not Claude Code's bash mode."""
        monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
        _install_record()
        rollout = next((Path(__file__).parent / "fixtures" / "codex").glob("rollout-*.jsonl"))
        day = Path(os.environ["HOME"]) / ".codex" / "sessions" / "2026" / "12" / "01"
        day.mkdir(parents=True)
        (day / rollout.name).write_bytes(rollout.read_bytes())
        assert cli.main(["notify", "--test", "--channel", "message"]) == 0
        out = " ".join(capsys.readouterr().out.split())
        assert ("To restart with a handoff: `!session-watcher handoff` (Codex runs it itself: no request to the "
                "model), then /clear here.") in out
        assert "Claude Code, `!" not in out


GUARD = {"kind": "guard", "lamp": "amber", "bDefault": 45000, "gap": 900, "rewrite": 120000, "sessionId": "s1"}


class TestCommand:
    """The command every suggestion names: the plugin route puts nothing on PATH, so a plugin user
    is told the plugin's own `bin/session-watcher`, by its path; `session-watcher` was named to them."""

    def test_the_routes_command(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
        home = Path(os.environ["HOME"])
        assert route.cli_command({}) == "session-watcher"
        # started by the plugin's bin/session-watcher (or a hook by its hooks/run.sh): that file, for
        # this process (its pid), `~/` for the home folder
        own = str(home / ".claude/plugins/cache/m/session-watcher/0.1.0/bin/session-watcher")
        pid = {route.PLUGIN_PID: str(os.getpid())}
        assert route.cli_command({route.PLUGIN_BIN: own, **pid}) == \
            "~/.claude/plugins/cache/m/session-watcher/0.1.0/bin/session-watcher"
        assert route.cli_command({route.PLUGIN_BIN: "/my plugins/bin/session-watcher", **pid}, hook=True) == \
            "'/my plugins/bin/session-watcher'"
        # a terminal's `python -m session_watcher` with the plugin installed: the installed plugin's
        _plugin_installed(home)
        assert route.cli_command({}) == "~/.claude/plugins/cache/sw/bin/session-watcher"
        assert route.cli_command({}, hook=True) == "session-watcher"  # a hook of install.sh's reads no file
        _install_record()
        assert route.cli_command({}) == "session-watcher"

    def test_a_cold_return_names_the_plugins_command(self) -> None:
        """The cold-cache alert's restart is a handoff written in a terminal: for the plugin's hook it
        named `session-watcher handoff`, which a plugin user does not have."""
        message_only = cast("NotifyConfig", {"channels": ["message"]})
        hook = {"CLAUDE_PLUGIN_ROOT": "/opt/p", route.PLUGIN_BIN: "/opt/p/bin/session-watcher",
                route.PLUGIN_PID: str(os.getpid())}  # as the plugin's hooks/run.sh starts a hook
        plugin = dispatch([GUARD], message_only, env=hook)
        install = dispatch([GUARD], message_only, env={})
        assert plugin
        assert install
        assert ("To restart with a handoff: `/opt/p/bin/session-watcher handoff` in a terminal (nothing goes to "
                "the model), then /clear.") in plugin["systemMessage"].splitlines()
        assert f"To restart with a handoff: {route.COLD_RESTART}." in install["systemMessage"].splitlines()

    def test_cowork_plugins_are_the_plugins_too(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Claude Code's cowork mode (CLAUDE_CODE_USE_COWORK_PLUGINS; 2.1.332) keeps its plugins in
        <config>/cowork_plugins, enabled in cowork_settings.json: the plugin installed there was not
        seen, so a terminal's command took install.sh's route."""
        monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
        cfg = Path(os.environ["HOME"]) / ".claude"
        (cfg / "cowork_plugins").mkdir(parents=True)
        copy = cfg / "cowork_plugins" / "cache" / "session-watcher" / "session-watcher" / "0.1.0"
        (cfg / "cowork_plugins" / "installed_plugins.json").write_text(json.dumps(
            {"version": 2, "plugins": {"session-watcher@session-watcher": [
                {"scope": "user", "installPath": str(copy), "version": "0.1.0"}]}}))
        assert route.plugin_installs() == [("session-watcher@session-watcher 0.1.0", str(copy), False)]
        on = {"enabledPlugins": {"session-watcher@session-watcher": True}}
        (cfg / "cowork_settings.json").write_text(json.dumps(on))
        assert route.plugin_installs() == [("session-watcher@session-watcher 0.1.0", str(copy), True)]
        assert route.current({}) == "plugin"
        assert route.cli_command({}) == \
            "~/.claude/cowork_plugins/cache/session-watcher/session-watcher/0.1.0/bin/session-watcher"

    def test_a_seed_dirs_plugin(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """CLAUDE_CODE_PLUGIN_SEED_DIR: plugins installed in read-only folders (each its own
        installed_plugins.json, enabled in settings.json)."""
        monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
        seed = tmp_path / "seed"
        copy = seed / "cache" / "m" / "session-watcher" / "0.1.0"
        seed.mkdir()
        (seed / "installed_plugins.json").write_text(json.dumps(
            {"version": 2, "plugins": {"session-watcher@m": [{"installPath": str(copy), "version": "0.1.0"}]}}))
        cfg = Path(os.environ["HOME"]) / ".claude"
        cfg.mkdir()
        (cfg / "settings.json").write_text(json.dumps({"enabledPlugins": {"session-watcher@m": True}}))
        assert route.plugin_installs() == []
        monkeypatch.setenv("CLAUDE_CODE_PLUGIN_SEED_DIR", f"{tmp_path / 'other'}{os.pathsep}{seed}")
        assert route.plugin_installs() == [("session-watcher@m 0.1.0", str(copy), True)]
        assert route.plugin_roots({})[:2] == [str(cfg / "plugins"), str(cfg / "cowork_plugins")]


class TestNoCommandFromAProject:
    """A project's .claude/settings.json may set any environment variable (`env`), which reaches the
    hooks, the status line and the agent's commands; the command a message tells the user to run in a
    terminal was taken from CLAUDE_PLUGIN_ROOT or SESSION_WATCHER_PLUGIN_BIN as the environment gave them."""

    HOSTILE = "/work/repo/.x/bin/session-watcher"

    @pytest.mark.parametrize("env", [
        {"CLAUDE_PLUGIN_ROOT": "/work/repo/.x"},
        {route.PLUGIN_BIN: HOSTILE},
        {route.PLUGIN_BIN: HOSTILE, route.PLUGIN_PID: "1"},  # another process's
    ], ids=["plugin-root", "plugin-bin", "plugin-bin-other-pid"])
    def test_an_environments_path_is_never_suggested(self, env: dict[str, str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
        message_only = cast("NotifyConfig", {"channels": ["message"]})
        out = dispatch([GUARD], message_only, env=env)
        assert out
        assert f"To restart with a handoff: {route.COLD_RESTART}." in out["systemMessage"].splitlines()
        assert route.cli_command(env, hook=True) == "session-watcher"
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        assert route.cli_command() == "session-watcher"  # from a terminal: no install of the plugin recorded

    def test_a_records_garbage_path_is_never_suggested(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """installed_plugins.json is Claude Code's, but read as it comes: a relative path or a NUL (which
        made doctor's realpath raise: exit 3) is no folder of the plugin's."""
        monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
        cfg = Path(os.environ["HOME"]) / ".claude"
        (cfg / "plugins").mkdir(parents=True)
        (cfg / "plugins" / "installed_plugins.json").write_text(json.dumps(
            {"plugins": {"session-watcher@m": [{"installPath": "rel/sw"}, {"installPath": "/a\0b"}, {}, 5]}}))
        (cfg / "settings.json").write_text(json.dumps({"enabledPlugins": {"session-watcher@m": True}}))
        monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", "/opt/p")
        assert route.plugin_installs() == [(route.PLUGIN_DIR, "/opt/p", True)]
        assert route.cli_command({}) == "session-watcher"
