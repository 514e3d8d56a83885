"""The real Codex CLI 0.171.0 (.ci/setup.d/55-codex-cli.sh), offline against a loopback Responses
mock: session-watcher's hooks registered in `$CODEX_HOME/hooks.json` (cli.install_codex, the
install.sh step) and trusted through Codex's app-server run, and what they fold live equals a replay
of the same rollout bytes; left untrusted, Codex skips them and `doctor` says so; a handoff reaches
the next thread; a cold prompt is held with no request and goes when sent again; the TUI's
`!session-watcher handoff`, the form its alerts offer there, sends no request, cold or warm."""

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

from tests.oracle import launchers, sw
from tests.statefile import load_state, state_file

from .responses_mock import Mock

pytestmark = pytest.mark.e2e

VERSION = "0.171.0"
CODEX = Path(os.environ.get("SESSION_WATCHER_CODEX_PREFIX", f"/opt/session-watcher-ci/codex-{VERSION}")) / \
    "node_modules" / ".bin" / "codex"


@pytest.fixture(scope="module")
def codex_bin() -> Path:
    if not os.access(CODEX, os.X_OK):
        if os.environ.get("CI") == "true":
            pytest.fail(f"e2e: the real Codex CLI is required under CI and is missing at {CODEX}")
        pytest.skip(f"e2e SKIPPED LOUDLY: the real Codex CLI {VERSION} is not at {CODEX} (.ci/setup.d/55-codex-cli.sh)")
    return CODEX


def _world(tmp_path: Path, port: int) -> tuple[dict[str, str], Path, Path]:
    home = Path(os.environ["HOME"])  # tests/conftest.py: a private home for this test
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    project = tmp_path / "proj"
    project.mkdir()
    (codex_home / "config.toml").write_text(
        f'model = "gpt-6.2-sol"\nmodel_provider = "mock"\ncheck_for_update_on_startup = false\n'
        f'[model_providers.mock]\nname = "Mock"\nbase_url = "http://127.0.0.1:{port}/v1"\n'
        f'env_key = "MOCK_OPENAI_KEY"\nwire_api = "responses"\nsupports_websockets = false\n'
        f'[analytics]\nenabled = false\n')
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    shutil.copy(launchers() / "session-watcher-hook", bin_dir / "session-watcher-hook")
    env = {**os.environ, "CODEX_HOME": str(codex_home), "MOCK_OPENAI_KEY": "k"}
    return env, project, bin_dir


def _install(env: dict[str, str], bin_dir: Path) -> str:
    got = subprocess.run([sys.executable, "-m", "session_watcher.cli.install_codex", "add", str(bin_dir)],
                         env={**env, "COLUMNS": "1000"}, capture_output=True, text=True, timeout=120,
                         check=False)  # what it says unwrapped
    assert got.returncode == 0, got.stderr
    return got.stdout


def _install_sh(env: dict[str, str]) -> str:
    """./install.sh as a user runs it (its own venv under SESSION_WATCHER_HOME; no demo)."""
    repo = Path(__file__).resolve().parents[2]
    got = subprocess.run(["sh", str(repo / "install.sh"), "--no-demo"], env={**env, "COLUMNS": "1000"},
                         capture_output=True, text=True, timeout=600, check=False)  # what it says unwrapped
    assert got.returncode == 0, got.stdout[-3000:] + got.stderr[-3000:]
    return got.stdout


def _exec(codex: Path, env: dict[str, str], project: Path, prompt: str, resume: bool = False,
          said: list[str] | None = None) -> str:
    args = [str(codex), "exec", "--skip-git-repo-check", "--json"]
    args += ["resume", "--last", prompt] if resume else [prompt]
    got = subprocess.run(args, env=env, cwd=project, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                         timeout=300, check=False)
    assert got.returncode == 0, got.stderr[-3000:]
    if said is not None:
        said.append(got.stderr)
    started = [json.loads(x) for x in got.stdout.splitlines() if x.startswith('{"type":"thread.started"')]
    return str(started[0]["thread_id"])


def _doctor(env: dict[str, str]) -> str:
    got = sw("doctor", env={**env, "COLUMNS": "1000"})  # its lines unwrapped
    return "\n".join(x for x in got.stdout.decode().splitlines() if x.startswith("codex "))


def _replayed_prefix(tmp_path: Path, state: dict[str, Any]) -> dict[str, Any]:
    """`replay --json` of the rollout's bytes up to where the live state's cursor stands."""
    cursor = state["cursor"]
    data = Path(cursor["path"]).read_bytes()[:cursor["offset"]]
    copy = tmp_path / "prefix" / Path(cursor["path"]).name
    copy.parent.mkdir()
    copy.write_bytes(data)
    got = sw("replay", "--json", str(copy))
    assert got.returncode == 0, got.stderr
    return dict(json.loads(got.stdout))


def test_trusted_by_the_install_the_hooks_fold_live_and_equal_replay(codex_bin: Path, tmp_path: Path) -> None:
    """./install.sh registers the hooks in $CODEX_HOME/hooks.json and has Codex trust them."""
    with Mock() as mock:
        env, project, _bin_dir = _world(tmp_path, mock.port)
        said = _install_sh({**env, "SESSION_WATCHER_CODEX": str(codex_bin)})
        assert "trusted through codex app-server (5 now, 0 already)" in said
        hooks = json.loads((Path(env["CODEX_HOME"]) / "hooks.json").read_text())["hooks"]
        assert all(str(Path(env["SESSION_WATCHER_HOME"])) in h["command"]
                   for groups in hooks.values() for g in groups for h in g["hooks"])  # install.sh's own venv
        assert "installed and trusted" in _doctor(env)  # as install.sh just said
        thread = _exec(codex_bin, env, project, "say hi")
        for n in (2, 3):
            assert _exec(codex_bin, env, project, f"again {n}", resume=True) == thread
        calls = len(mock.bodies)
    assert calls == 3
    state = load_state(thread)
    # the last turn's prompt hook (synchronous) folded every call before it; its own call's async
    # hook may be cut off when exec exits (reference/codex.md), then the next run folds it
    assert state["engine"]["calls"] >= calls - 1
    replayed = _replayed_prefix(tmp_path, state)
    assert replayed["calls"] == state["engine"]["calls"]
    assert replayed["tokenUsage"] == state["meter"]["main"]
    assert replayed["tokenUsage"]["cacheWrite"] >= mock.usage(1)["input_tokens"]  # the cold first call's write
    assert f"hooks firing (last thread {thread})" in _doctor(env)


def test_left_untrusted_codex_skips_the_hooks_and_doctor_says_so(codex_bin: Path, tmp_path: Path) -> None:
    with Mock() as mock:
        env, project, bin_dir = _world(tmp_path, mock.port)
        said = _install({**env, "SESSION_WATCHER_CODEX": str(tmp_path / "no-codex")}, bin_dir)
        assert "open /hooks in Codex" in said
        thread = _exec(codex_bin, env, project, "say hi")
    assert len(mock.bodies) == 1
    with pytest.raises(FileNotFoundError):
        load_state(thread)
    assert "installed, not trusted yet" in _doctor(env)


def test_handoff_reaches_the_next_threads_first_request_and_names_its_parent(codex_bin: Path,
                                                                            tmp_path: Path) -> None:
    """`session-watcher handoff` on a Codex thread, then a new thread in the project: Codex takes
    the synchronous SessionStart hook's one JSON object (its strict schema), the note is in the new
    thread's first request, and the new thread's state names its parent."""
    with Mock(text="Renamed the parser module and fixed its tests.") as mock:
        env, project, bin_dir = _world(tmp_path, mock.port)
        _install({**env, "SESSION_WATCHER_CODEX": str(codex_bin)}, bin_dir)
        parent = _exec(codex_bin, env, project, "rename the parser module")
        handed = sw("handoff", "--json", parent, env=env)
        assert handed.returncode == 0, handed.stderr
        note = json.loads(handed.stdout)["note"]
        assert "> rename the parser module" in note
        assert "> Renamed the parser module and fixed its tests." in note
        said: list[str] = []
        child = _exec(codex_bin, env, project, "go on", said=said)
        first = json.dumps(mock.bodies[-1])
    assert child != parent
    # the SessionStart hook's message, which exec shows no more than the prompt's, is on its stderr
    # the parent named as short as tells it from the child: UUIDv7 ids of one minute share 8 characters
    from session_watcher.core.text import short_ids

    shown = short_ids([parent, child])[parent]
    assert f"session-watcher: this session starts with the handoff of session {shown} (" in said[0]
    assert f"[session-watcher handoff from session {parent}" in first
    assert json.dumps("> rename the parser module")[1:-1] in first
    status = sw("status", "--json", child, env=env)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["parentSession"] == parent
    assert "no handoff waiting" in sw("handoff", "--show", env=env).stdout.decode()


def _age(rollout: Path, hours: float) -> None:
    """Move every timestamp of a rollout `hours` back, in place (the same length: the same bytes count)."""
    from datetime import UTC, datetime, timedelta

    out = []
    for line in rollout.read_text().splitlines():
        rec = json.loads(line)
        at = datetime.fromisoformat(rec["timestamp"].replace("Z", "+00:00")) - timedelta(hours=hours)
        rec["timestamp"] = at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        out.append(json.dumps(rec, separators=(",", ":")))
    rollout.write_text("\n".join(out) + "\n")


def test_a_cold_prompt_is_held_with_no_request_and_goes_when_sent_again(codex_bin: Path, tmp_path: Path) -> None:
    """A thread whose last call was 3 h ago (its rollout aged, its state rebuilt from it): Codex
    takes the prompt hook's block, 0 requests reach the mock, exec's stderr says why, and the same
    prompt sent again within the minute goes."""
    with Mock(base=150_000, grow=6_000) as mock:
        env, project, bin_dir = _world(tmp_path, mock.port)
        _install({**env, "SESSION_WATCHER_CODEX": str(codex_bin)}, bin_dir)
        thread = _exec(codex_bin, env, project, "start")
        for n in range(4):
            _exec(codex_bin, env, project, f"turn {n}", resume=True)
        sent = len(mock.bodies)
        rollout = Path(load_state(thread)["cursor"]["path"])
        _age(rollout, 3)
        state_file(thread).unlink()  # rebuilt from the aged rollout by the next hook
        got = subprocess.run([str(codex_bin), "exec", "--skip-git-repo-check", "--json", "resume", "--last", "go on"],
                             env=env, cwd=project, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             timeout=300, check=False)
        held = len(mock.bodies)
        waiting = json.loads(sw("handoff", "--show", "--json", env=env).stdout)
        _exec(codex_bin, env, project, "go on", resume=True)
        again = len(mock.bodies)
    assert got.returncode == 0, got.stderr[-3000:]
    assert held == sent  # held: nothing reached the model
    # exec shows no hook's output (only "hook: UserPromptSubmit Blocked"): the reason is on its stderr,
    # with the way to a fresh thread that exec has, and nothing of it on stdout, its events' place
    assert "session-watcher: cold cache" in got.stderr
    assert "Nothing was sent" in got.stderr
    assert "run `codex exec` without `resume` in this project" in got.stderr
    assert "/compact" not in got.stderr  # exec sends `/compact` to the model as a prompt: not offered
    assert "session-watcher" not in got.stdout
    assert [w["parentSession"] for w in waiting] == [thread]  # the guard prepared the handoff /clear takes
    assert again == sent + 1  # sent again within the minute: it goes
    assert json.loads(sw("handoff", "--show", "--json", env=env).stdout) == []  # and the handoff is dropped


@pytest.mark.slow
def test_under_exec_a_typed_compact_on_a_cold_thread_is_held_too(codex_bin: Path, tmp_path: Path) -> None:
    """`codex exec resume --last /compact` on a thread whose cache expired: exec has no slash
    commands, it sends `/compact` to the model as a prompt (the whole cold thread re-written), so the
    guard holds it as any prompt (0 requests, the reason on exec's stderr), saying it is words to the
    model there, not a command. The guard let every prompt starting with `/` through (the TUI's
    /compact reaches no prompt hook), and the mock logged one request with the whole thread written
    cold. Sent again within the minute it goes: one ordinary request, the word its last input."""
    with Mock(base=150_000, grow=6_000) as mock:
        env, project, bin_dir = _world(tmp_path, mock.port)
        _install({**env, "SESSION_WATCHER_CODEX": str(codex_bin)}, bin_dir)
        thread = _exec(codex_bin, env, project, "start")
        for n in range(4):
            _exec(codex_bin, env, project, f"turn {n}", resume=True)
        sent = len(mock.bodies)
        _age(Path(load_state(thread)["cursor"]["path"]), 3)
        state_file(thread).unlink()  # rebuilt from the aged rollout by the next hook
        got = subprocess.run([str(codex_bin), "exec", "--skip-git-repo-check", "resume", "--last", "/compact"],
                             env=env, cwd=project, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             timeout=300, check=False)
        held = len(mock.bodies)
        again = subprocess.run([str(codex_bin), "exec", "--skip-git-repo-check", "resume", "--last", "/compact"],
                               env=env, cwd=project, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=300, check=False)
        went = mock.bodies[held:]
    assert got.returncode == 0, got.stderr[-3000:]
    assert held == sent, json.dumps(mock.bodies[-1])[-2000:]  # nothing reached the model
    said = " ".join(got.stderr.split())
    assert "session-watcher: cold cache" in said
    assert "run `codex exec` without `resume` in this project" in said
    # worded as what it is there: words to the model, not a command; a compaction is the TUI's
    assert "`codex exec` has no /compact command: it sends the word to the model as a prompt" in said, said
    assert "type /compact there" in said
    # sent again within the minute it goes, as the hold said: one ordinary request whose last input is
    # the word, the thread's history before it (nothing compacted: no summary, no compaction call)
    assert again.returncode == 0, again.stderr[-3000:]
    assert len(went) == 1
    last = went[0]["input"][-1]
    assert (last["role"], last["content"][0]["text"]) == ("user", "/compact"), last
    assert any(item.get("role") == "user" and "turn 3" in json.dumps(item) for item in went[0]["input"])


def _exec_on_terminal(codex: Path, env: dict[str, str], project: Path, prompt: str, resume: bool) -> str:
    """`codex exec` as a person runs it in a terminal (a pty, left in its line mode): what it showed."""
    import pty
    import select

    args = [str(codex), "exec", "--skip-git-repo-check", *(["resume", "--last"] if resume else []), prompt]
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(args, env={**env, "TERM": "dumb", "NO_COLOR": "1"}, cwd=project,
                                stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
        os.close(slave)
        slave = -1
        shown = b""
        while True:  # read as it writes (a full pty would stop it), until no writer is left
            ready, _, _ = select.select([master], [], [], 300)
            if not ready:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer closed
                break
            if not chunk:
                break
            shown += chunk
        assert proc.wait(timeout=300) == 0, shown.decode(errors="replace")[-3000:]
    finally:
        if slave >= 0:
            os.close(slave)
        os.close(master)
    return shown.decode(errors="replace").replace("\r\n", "\n")


def _alerts_early(env: dict[str, str]) -> None:
    """The gate from the third call on, whatever it saves, to the `message` channel alone."""
    for key, value in (("gate_min_calls", "3"), ("advice_min_usd", "0"), ("advice_min_share", "0"),
                       ("notify.channels", '["message"]'), ("notify.fallback", '"none"')):
        assert sw("config", "set", key, value, env=env).returncode == 0


def test_under_exec_the_alerts_queued_for_the_next_prompt_are_shown_on_its_terminal(codex_bin: Path,
                                                                                   tmp_path: Path) -> None:
    """`codex exec` in a terminal, turn after turn on one thread growing 30K tokens a call, alerts to
    the `message` channel only: once past the sweet spot, a later prompt's hook has an alert for the
    user (the TUI shows it as the hook's systemMessage; exec shows no hook output) and exec's
    terminal shows it; no request carries it (nothing of it is the model's)."""
    with Mock(base=10_000, grow=30_000) as mock:
        env, project, bin_dir = _world(tmp_path, mock.port)
        _install({**env, "SESSION_WATCHER_CODEX": str(codex_bin)}, bin_dir)
        _alerts_early(env)
        screens = [_exec_on_terminal(codex_bin, env, project, "step 0", resume=False)]
        for n in range(1, 12):
            if "costs more than a fresh start" in screens[-1]:
                break
            screens.append(_exec_on_terminal(codex_bin, env, project, f"step {n}", resume=True))
        bodies = json.dumps(mock.bodies)
    shown = screens[-1]
    assert "costs more than a fresh start" in shown, screens[-1][-3000:]
    # said by the prompt's hook, while it ran
    assert "costs more than a fresh start" in shown.split("hook: UserPromptSubmit Completed")[0]
    # its restart is exec's: the command in a terminal, then a new `codex exec` (no `/clear` there),
    # never Claude Code's bash mode ("(in Claude Code, `! session-watcher handoff` also works ...)")
    assert ("To restart with a handoff: `session-watcher handoff` in another terminal, then run `codex exec` "
            "without `resume` in this project.") in shown
    assert "Claude Code" not in shown
    assert "/clear" not in shown
    assert "costs more than a fresh start" not in bodies
    assert "session-watcher:" not in bodies


class _Tmux:
    """Codex's TUI in a private tmux server (tmux answers the cursor query the TUI sends)."""

    def __init__(self, folder: Path) -> None:
        self.sock = str(folder / "tmux.sock")

    def run(self, *args: str) -> str:
        return subprocess.run(["tmux", "-S", self.sock, *args], capture_output=True, text=True, timeout=30,
                              check=False).stdout

    def start(self, env: dict[str, str], project: Path, *command: str | Path) -> None:
        """`command` run in the server's one window, in `project`, with the test's world of `env`."""
        exports = " ".join(f"{k}={json.dumps(v)}" for k, v in env.items()
                           if k in ("HOME", "CODEX_HOME", "MOCK_OPENAI_KEY", "SESSION_WATCHER_HOME", "PATH",
                                    "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR"))
        self.run("new-session", "-d", "-x", "160", "-y", "50", "-c", str(project),
                 f"env {exports} {' '.join(str(c) for c in command)}")

    def type_line(self, text: str) -> None:
        """Type `text`, then Enter once the TUI shows it (a key right after typed text would be read
        as part of a paste)."""
        self.run("send-keys", "-l", text)
        self.wait_for(f"› {text}")
        time.sleep(1.0)
        self.run("send-keys", "Enter")

    def wait_for(self, text: str, seconds: float = 90) -> str:
        """The screen once it shows `text` (polled; the deadline only ends a hang)."""
        end = time.monotonic() + seconds
        screen = ""
        while time.monotonic() < end:
            screen = self.run("capture-pane", "-p", "-J")
            if text in screen:
                return screen
            time.sleep(0.3)
        raise AssertionError(f"never showed {text!r}:\n{screen}")


def test_in_the_tui_a_cold_prompt_is_held_on_screen_and_goes_when_sent_again(codex_bin: Path, tmp_path: Path) -> None:
    """The same cold thread resumed in Codex's TUI (through tmux, no background daemon): the prompt
    is blocked by our hook with its priced reason on screen and 0 requests; typed again, it goes."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (.ci/setup.d/50-claude-cli.sh installs it)")
    with Mock(base=150_000, grow=6_000) as mock:
        env, project, bin_dir = _world(tmp_path, mock.port)
        with (Path(env["CODEX_HOME"]) / "config.toml").open("a") as fh:
            fh.write(f'[projects."{project}"]\ntrust_level = "trusted"\n')
        _install({**env, "SESSION_WATCHER_CODEX": str(codex_bin)}, bin_dir)
        thread = _exec(codex_bin, env, project, "start")
        for n in range(4):
            _exec(codex_bin, env, project, f"turn {n}", resume=True)
        _age(Path(load_state(thread)["cursor"]["path"]), 3)
        state_file(thread).unlink()
        sent = len(mock.bodies)
        tmux = _Tmux(tmp_path)
        tmux.start(env, project, codex_bin, "resume", "--no-daemon", thread)
        try:
            tmux.wait_for("Ask Codex")
            tmux.type_line("go on")
            screen = tmux.wait_for("Blocked by hook")
            assert "session-watcher: cold cache" in screen
            assert "Nothing was sent" in screen
            assert len(mock.bodies) == sent
            tmux.type_line("go on")  # the TUI does not put a blocked prompt back: typed again
            end = time.monotonic() + 90
            while len(mock.bodies) == sent and time.monotonic() < end:
                time.sleep(0.3)
            assert len(mock.bodies) >= sent + 1  # sent again within the minute: it goes
        finally:
            tmux.run("kill-server")


def test_left_untrusted_the_tui_asks_at_its_start_as_the_install_said(codex_bin: Path, tmp_path: Path) -> None:
    """Installed where Codex could not be asked to trust them, the hooks wait for review: the install
    and doctor say Codex's TUI asks at its next start, and it does ("Hooks need review", our 5 hooks);
    "Trust all and continue" trusts them, the next prompt's hooks fire, and doctor says so."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (.ci/setup.d/50-claude-cli.sh installs it)")
    with Mock() as mock:
        env, project, bin_dir = _world(tmp_path, mock.port)
        with (Path(env["CODEX_HOME"]) / "config.toml").open("a") as fh:
            fh.write(f'[projects."{project}"]\ntrust_level = "trusted"\n')
        said = " ".join(_install({**env, "SESSION_WATCHER_CODEX": str(tmp_path / "no-codex")}, bin_dir).split())
        assert "Codex's TUI asks at its next start (\"Hooks need review\")" in said, said
        assert "trust them where Codex's TUI asks at its start, \"Hooks need review\"" in _doctor(env)  # doctor too
        tmux = _Tmux(tmp_path)
        tmux.start(env, project, codex_bin, "--no-daemon")
        try:
            screen = tmux.wait_for("Hooks need review")
            assert "5 hooks are new or changed" in screen, screen
            tmux.wait_for("Trust all and continue")
            tmux.run("send-keys", "Down")
            time.sleep(0.5)
            tmux.run("send-keys", "Enter")
            tmux.wait_for("Ask Codex")
            tmux.type_line("say hi")
            end = time.monotonic() + 90
            while not mock.bodies and time.monotonic() < end:
                time.sleep(0.3)
            assert mock.bodies  # the turn's call (and the TUI's side call that titles a new chat)
            end = time.monotonic() + 60
            while "hooks firing" not in _doctor(env) and time.monotonic() < end:
                time.sleep(0.5)
        finally:
            tmux.run("kill-server")
    assert "hooks firing" in _doctor(env)


def test_uninstall_takes_out_exactly_the_trust_entries_the_install_wrote(codex_bin: Path, tmp_path: Path) -> None:
    """Trusted through codex app-server, our five hooks leave five `hooks.state` entries in Codex's
    config.toml; `remove` (install.sh --uninstall's step) takes out those and nothing else: the
    user's own trust entry and settings read as before, a backup first; re-running changes nothing."""
    import tomllib

    env, _project, bin_dir = _world(tmp_path, 9)  # no model call: the port is never dialled
    env["SESSION_WATCHER_CODEX"] = str(codex_bin)
    config = Path(env["CODEX_HOME"]) / "config.toml"
    with config.open("a") as fh:
        fh.write('\n# my own hook, trusted by me\n[hooks.state."/elsewhere/hooks.json:stop:0:0"]\n'
                 'trusted_hash = "sha256:0123"\n')
    original = config.read_text()
    assert "(5 now, 0 already)" in _install(env, bin_dir)
    state = tomllib.loads(config.read_text())["hooks"]["state"]
    ours = sorted(k for k in state if k.startswith(env["CODEX_HOME"]))
    assert len(ours) == 5
    assert "(0 now, 5 already)" in _install(env, bin_dir)  # a re-run trusts nothing more...
    trusted = config.read_bytes()

    def remove() -> str:
        got = subprocess.run([sys.executable, "-m", "session_watcher.cli.install_codex", "remove"],
                             env={**env, "COLUMNS": "1000"}, capture_output=True, text=True, timeout=120,
                             check=False)  # what it says unwrapped
        assert got.returncode == 0, got.stderr
        return got.stdout

    backups = sorted(p.name for p in config.parent.iterdir() if p.name.startswith("config.toml.bak-"))
    assert backups == []
    said = remove()
    assert "removed the 5 trust entries the install wrote" in said  # ...and its entries still go
    assert tomllib.loads(config.read_text()) == tomllib.loads(original)
    assert "# my own hook, trusted by me" in config.read_text()
    backup_files = sorted(p for p in config.parent.iterdir() if p.name.startswith("config.toml.bak-"))
    assert [b.read_bytes() for b in backup_files] == [trusted]
    after = config.read_bytes()
    assert remove() == ""
    assert config.read_bytes() == after
    assert len([p for p in config.parent.iterdir() if p.name.startswith("config.toml.bak-")]) == 1


def _venv_bin(tmp_path: Path) -> Path:
    """A venv's bin folder, as install.sh's (the hooks run its `python`, and so does the detached
    deliverer they start: a bare link to the dev venv's interpreter would lose the venv's packages),
    seeing this checkout and the dev venv's packages through a .pth file, with the hook launcher."""
    import site
    import venv

    root = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(root)
    lib = next((root / "lib").glob("python3*")) / "site-packages"
    repo = Path(__file__).resolve().parents[2]
    (lib / "dev.pth").write_text(f"{repo}\n" + "".join(f"{p}\n" for p in site.getsitepackages()))
    shutil.copy(launchers() / "session-watcher-hook", root / "bin" / "session-watcher-hook")
    return root / "bin"


def test_in_the_tui_past_the_sweet_spot_the_desktop_notification_arrives(codex_bin: Path, tmp_path: Path) -> None:
    """Codex's TUI (tmux), its hooks installed and trusted, alerts to the desktop: a thread growing
    30K tokens a call passes the sweet spot, and the notification reaches a real notification
    server (dunst under Xvfb on a private D-Bus session bus) naming a fresh start; the next prompt
    shows the same alert, queued by the folding hook, as the prompt hook's systemMessage."""
    from tests.test_notifier_delivery import Desktop, need, wait_for

    need("dbus-daemon", "dunst", "Xvfb")
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (.ci/setup.d/50-claude-cli.sh installs it)")
    (tmp_path / "desktop").mkdir()
    desktop = Desktop(tmp_path / "desktop")
    tmux = _Tmux(tmp_path)
    try:
        desktop.start_bus()
        desktop.start_dunst()
        with Mock(base=10_000, grow=30_000) as mock:
            env, project, _bin = _world(tmp_path, mock.port)
            with (Path(env["CODEX_HOME"]) / "config.toml").open("a") as fh:
                fh.write(f'[projects."{project}"]\ntrust_level = "trusted"\n')
            _install({**env, "SESSION_WATCHER_CODEX": str(codex_bin)}, _venv_bin(tmp_path))
            # the advice's floors down, so that a few calls reach it (the gate itself as shipped)
            for key, value in (("gate_min_calls", "3"), ("advice_min_usd", "0"), ("advice_min_share", "0"),
                               ("notify.channels", '["desktop"]'), ("notify.fallback", '"none"')):
                assert sw("config", "set", key, value, env=env).returncode == 0
            env.update(DBUS_SESSION_BUS_ADDRESS=str(desktop.address), XDG_RUNTIME_DIR=str(desktop.runtime))
            exports = " ".join(f"{k}={json.dumps(v)}" for k, v in env.items()
                               if k in ("HOME", "CODEX_HOME", "MOCK_OPENAI_KEY", "SESSION_WATCHER_HOME", "PATH",
                                        "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR",
                                        "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"))
            tmux.run("new-session", "-d", "-x", "200", "-y", "50", "-c", str(project),
                     f"env {exports} {codex_bin} --no-daemon")
            tmux.wait_for("Ask Codex")
            for n in range(12):
                if desktop.notifications():
                    break
                sent = len(mock.bodies)
                tmux.type_line(f"step {n}")
                end = time.monotonic() + 90
                while len(mock.bodies) == sent and time.monotonic() < end:
                    time.sleep(0.3)
                tmux.wait_for("Ask Codex")  # the turn is over: the input box is back
            wait_for(lambda: len(desktop.notifications()) >= 1, 120, "the desktop notification")
            got = desktop.notifications()[0]
            assert got["app"] == "session-watcher"
            assert "costs more than a fresh start" in got["summary"]
            # the TUI's way: the command by its `!`, which sends nothing (the test below), then /clear
            assert ("`!session-watcher handoff` (Codex runs it itself: no request to the model), then /clear "
                    "here.") in got["body"]
            assert "Claude Code" not in got["body"]
            tmux.type_line("and now")
            screen = tmux.wait_for("costs more than a fresh start", 120)
            assert "session-watcher" in screen
    finally:
        tmux.run("kill-server")
        desktop.close()


def test_trusted_through_a_linked_codex_home_with_the_users_hooks_first(codex_bin: Path, tmp_path: Path) -> None:
    """`$CODEX_HOME` a link to the real folder (Codex files trust under the resolved path), and the
    user's own hooks before ours in Stop (a prompt hook Codex skips still takes an index): the install
    trusts ours through the app-server and doctor, computing the keys as Codex does, says trusted.
    Through the link the install said "open /hooks" (no hook of `hooks/list` came from the path it
    looked for) and doctor "5 of its 5 hooks without a trust entry"."""
    env, _project, bin_dir = _world(tmp_path, 9)  # no model call: the port is never dialled
    real = Path(env["CODEX_HOME"])
    link = tmp_path / "codex-link"
    link.symlink_to(real)
    mine = [{"type": "command", "command": "echo one"}, {"type": "prompt", "prompt": "x"},
            {"type": "command", "command": "echo two"}]
    (real / "hooks.json").write_text(json.dumps({"hooks": {"Stop": [{"hooks": mine}, {"matcher": "x", "hooks": []}]}}))
    env = {**env, "CODEX_HOME": str(link), "SESSION_WATCHER_CODEX": str(codex_bin)}
    assert "trusted through codex app-server (5 now, 0 already)" in _install(env, bin_dir)
    said = _doctor(env)
    assert f"installed and trusted in {link / 'config.toml'}; none has fired yet" in said, said
    assert f'"{real / "hooks.json"}:stop:2:0"' in (real / "config.toml").read_text()  # ours: Stop's third group


def test_in_the_tui_the_handoff_by_its_bang_sends_nothing_on_a_cold_thread(codex_bin: Path, tmp_path: Path) -> None:
    """A cold thread (its last call 3 h ago) resumed in Codex's TUI: `!session-watcher handoff`, the
    form its alerts offer there, runs the command in Codex's own shell (a login shell: the command
    found on the PATH ~/.profile sets, where install.sh says to put its folder) and shows its output,
    with 0 requests to the model (nor a prompt hook, which would hold it); the note waits for the
    thread the command ran in (CODEX_THREAD_ID), which it names as its parent no more than before;
    /clear, then a prompt: the new thread's first request carries the note and nothing of the cold
    thread's history, whose re-write the restart saved."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (.ci/setup.d/50-claude-cli.sh installs it)")
    repo = Path(__file__).resolve().parents[2]
    with Mock(base=150_000, grow=6_000) as mock:
        env, project, bin_dir = _world(tmp_path, mock.port)
        with (Path(env["CODEX_HOME"]) / "config.toml").open("a") as fh:
            fh.write(f'[projects."{project}"]\ntrust_level = "trusted"\n')
        _install({**env, "SESSION_WATCHER_CODEX": str(codex_bin)}, bin_dir)
        home = Path(env["HOME"])
        command = home / ".local" / "bin" / "session-watcher"  # where install.sh links the command
        command.parent.mkdir(parents=True)
        command.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(repo)!r})\n"
                           "from session_watcher.cli import run\nrun()\n")
        command.chmod(0o755)
        (home / ".profile").write_text('export PATH="$HOME/.local/bin:$PATH"\n')  # install.sh's line for it
        thread = _exec(codex_bin, env, project, "start")
        for n in range(4):
            _exec(codex_bin, env, project, f"turn {n}", resume=True)
        _age(Path(load_state(thread)["cursor"]["path"]), 3)
        state_file(thread).unlink()  # rebuilt from the aged rollout by the command
        sent = len(mock.bodies)
        tmux = _Tmux(tmp_path)
        tmux.start(env, project, codex_bin, "resume", "--no-daemon", thread)
        try:
            tmux.wait_for("Ask Codex")
            tmux.run("send-keys", "-l", "!session-watcher handoff")
            tmux.wait_for("! session-watcher handoff")  # the TUI's shell mode shows the command so
            time.sleep(1.0)
            tmux.run("send-keys", "Enter")
            screen = tmux.wait_for("session-watcher: handoff saved")
            assert f"[session-watcher handoff from session {thread}" in screen  # its output, on the screen
            assert "Blocked by hook" not in screen
            time.sleep(3)  # a request it made would be on its way by now
            assert len(mock.bodies) == sent
            waiting = json.loads(sw("handoff", "--show", "--json", env=env).stdout)
            assert [w["parentSession"] for w in waiting] == [thread]
            status = sw("status", "--json", thread, env=env)
            assert status.returncode == 0, status.stderr
            assert json.loads(status.stdout).get("parentSession") is None  # the output in its history names none
            tmux.wait_for("Ask Codex")
            tmux.type_line("/clear")
            time.sleep(2)
            tmux.type_line("go on")
            end = time.monotonic() + 90
            while len(mock.bodies) == sent and time.monotonic() < end:
                time.sleep(0.3)
            first = mock.bodies[sent]
        finally:
            tmux.run("kill-server")
    assert f"[session-watcher handoff from session {thread}" in json.dumps(first)
    # the cold thread's history stayed unsent: none of its prompts, nor the command's output
    typed = [c.get("text") for item in first["input"] if item.get("role") == "user"
             for c in item.get("content") or [] if isinstance(c, dict)]
    assert not {"start", "turn 3"} & set(typed), typed
    assert "user_shell_command" not in json.dumps(first)
    assert json.loads(sw("handoff", "--show", "--json", env=env).stdout) == []  # taken


def test_under_exec_an_alert_nobody_can_see_waits_for_a_prompt_that_shows_it(codex_bin: Path,
                                                                              tmp_path: Path) -> None:
    """`codex exec` with its stderr a file opened for overwrite (`2>log`), where a line of ours would
    be written over: the alert queued for the next prompt is not used up there unseen, it stays in
    the thread's state; the next `codex exec` on a terminal shows it (and it is used up then)."""
    with Mock(base=10_000, grow=30_000) as mock:
        env, project, bin_dir = _world(tmp_path, mock.port)
        _install({**env, "SESSION_WATCHER_CODEX": str(codex_bin)}, bin_dir)
        _alerts_early(env)
        log = tmp_path / "exec.log"

        def overwritten(prompt: str, resume: bool) -> None:
            args = [str(codex_bin), "exec", "--skip-git-repo-check", *(["resume", "--last"] if resume else []),
                    prompt]
            with log.open("w") as err:  # `2>exec.log`: opened for overwrite, no O_APPEND
                got = subprocess.run(args, env=env, cwd=project, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=err, timeout=300, check=False)
            assert got.returncode == 0, log.read_text()[-3000:]

        overwritten("step 0", resume=False)
        thread = str(json.loads(sw("status", "--json", env=env).stdout)["sessionId"])
        prompts_after = 0
        for n in range(1, 14):
            overwritten(f"step {n}", resume=True)
            if any(a.get("kind") != "guard" for a in load_state(thread)["alerts"]):
                prompts_after += 1  # a prompt's hook ran with the alert fired: once or twice past it
            if prompts_after == 2:
                break
        state = load_state(thread)
        assert prompts_after == 2, state["alerts"]
        assert "costs more than a fresh start" not in log.read_text()
        # still waiting: the alert, priced and worded when a prompt shows it (hooks.outbox)
        assert [q["alert"]["kind"] in ("gate", "backstop") for q in state.get("outbox") or []][-1:] == [True]
        shown = _exec_on_terminal(codex_bin, env, project, "and now", resume=True)
        bodies = json.dumps(mock.bodies)
    assert "costs more than a fresh start" in shown.split("hook: UserPromptSubmit Completed")[0], shown[-3000:]
    assert not load_state(thread).get("outbox")  # shown: used up
    assert "costs more than a fresh start" not in bodies
