"""Pieces of the end-to-end harness: the pinned client, a throwaway home, a git project, runs.

Nothing here talks to anything but 127.0.0.1 (the mock) and, once per run when the client is not
installed yet, the npm registry through npm itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

CLIENT_VERSION = "2.1.332"
CI_PREFIX = Path(f"/opt/session-watcher-ci/claude-code-{CLIENT_VERSION}")  # as .ci/setup.d/50-claude-cli.sh
API_KEY = "sk-test"
REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "session_watcher"  # the plugin's folder (the marketplace's source; `claude --plugin-dir` it)
PIP_CACHE = os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip")
PKG_SUBPATH = Path("node_modules/@anthropic-ai/claude-code/bin/claude.exe")


class ClientUnavailable(Exception):
    """The client could not be found or installed; the message says why."""


def _version_of(binary: Path) -> str | None:
    try:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60, check=False).stdout
    except OSError:
        return None
    return out.split()[0] if out.split() else None


def _npm_install(prefix: Path) -> None:
    npm = shutil.which("npm")
    node = shutil.which("node")
    if npm is None or node is None:
        raise ClientUnavailable("npm/node are not installed, so the pinned Claude Code CLI cannot be installed")
    prefix.mkdir(parents=True, exist_ok=True)
    pj = prefix / "package.json"
    if not pj.exists():
        pj.write_text('{"name": "session-watcher-e2e-client", "private": true}\n')
    proc = subprocess.run(
        [
            npm,
            "install",
            "--prefix",
            str(prefix),
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--loglevel=error",
            f"@anthropic-ai/claude-code@{CLIENT_VERSION}",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if proc.returncode != 0:
        raise ClientUnavailable(
            f"npm could not install @anthropic-ai/claude-code@{CLIENT_VERSION} "
            f"(registry unreachable?): {proc.stderr.strip()[-500:]}"
        )
    pkg = prefix / "node_modules/@anthropic-ai/claude-code"
    if (pkg / "install.cjs").exists():
        subprocess.run([node, "install.cjs"], cwd=pkg, capture_output=True, timeout=120, check=False)


def find_client() -> Path:
    """The pinned `claude` binary: $SESSION_WATCHER_CLAUDE_BIN, the CI folder, or a local cache.

    Installs into the local cache (once; later runs reuse it) when neither has it.
    """
    env_bin = os.environ.get("SESSION_WATCHER_CLAUDE_BIN")
    if env_bin:
        p = Path(env_bin)
        if _version_of(p) != CLIENT_VERSION:
            raise ClientUnavailable(f"$SESSION_WATCHER_CLAUDE_BIN={p} is not claude {CLIENT_VERSION}")
        return p
    for prefix in (CI_PREFIX, _cache_prefix()):
        p = prefix / PKG_SUBPATH
        if p.exists() and _version_of(p) == CLIENT_VERSION:
            return p
    prefix = CI_PREFIX if os.access(CI_PREFIX.parent, os.W_OK) or _can_create(CI_PREFIX) else _cache_prefix()
    _npm_install(prefix)
    p = prefix / PKG_SUBPATH
    got = _version_of(p)
    if got != CLIENT_VERSION:
        raise ClientUnavailable(f"installed client at {p} reports {got!r}, expected {CLIENT_VERSION}")
    return p


def _can_create(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return True


def _cache_prefix() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "session-watcher-e2e" / f"claude-code-{CLIENT_VERSION}"


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "e2e",
        "GIT_AUTHOR_EMAIL": "e2e@example.invalid",
        "GIT_COMMITTER_NAME": "e2e",
        "GIT_COMMITTER_EMAIL": "e2e@example.invalid",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True, timeout=30
    ).stdout


# -- the throwaway world ----------------------------------------------------------------------

TRACKED_NAME = "src/engine.py"
IGNORED_NAME = "build/generated.log"


def tracked_text() -> str:
    """About 1,000 tokens of plausible source (80 lines x ~50 chars)."""
    lines = [f"def step_{i:02d}(x: int) -> int:\n    return x * {i} + {i * 7}  # step {i}\n" for i in range(40)]
    return "".join(lines)


def ignored_text() -> str:
    return "".join(f"2026-11-29T10:{i // 60:02d}:{i % 60:02d} INFO generated line {i} of build\n" for i in range(60))


@dataclass
class World:
    root: Path
    home: Path
    config: Path
    project: Path
    sw_home: Path

    @property
    def tracked(self) -> Path:
        return self.project / TRACKED_NAME

    @property
    def ignored(self) -> Path:
        return self.project / IGNORED_NAME

    def transcript(self, session_id: str) -> Path:
        """`$CLAUDE_CONFIG_DIR/projects/<cwd, every non-alphanumeric as ->/<session_id>.jsonl`."""
        found = sorted((self.config / "projects").glob(f"*/{session_id}.jsonl"))
        assert len(found) == 1, f"transcript of {session_id}: {found}"
        assert found[0].parent.name == re.sub(r"[^A-Za-z0-9]", "-", str(self.project))
        return found[0]

    def env(self, base_url: str, **extra: str) -> dict[str, str]:
        keep = {
            k: v
            for k, v in os.environ.items()
            if k in ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR", "USER", "LOGNAME", "SHELL")
        }
        keep.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
        env = {
            **keep,
            "HOME": str(self.home),
            "CLAUDE_CONFIG_DIR": str(self.config),
            "SESSION_WATCHER_HOME": str(self.sw_home),
            "ANTHROPIC_API_KEY": API_KEY,
            "ANTHROPIC_BASE_URL": base_url,
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "IS_SANDBOX": "1",
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_STATE_HOME": str(self.home / ".local/state"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_DATA_HOME": str(self.home / ".local/share"),
        }
        # pip (install.sh, the plugin route's bootstrap) keeps the machine's wheel cache: the
        # throwaway HOME would otherwise fetch every dependency again on each install
        env["PIP_CACHE_DIR"] = PIP_CACHE
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        env.update(extra)
        return env


# v2's gate, with issue 37's floors off (its sessions' gate comes early and saves cents by design)
GATE_V2 = ("bp_amber = 0.10\nnotify_dwell = 3\nbill_lookback = 0\nguard_x = 1.7\n"
           "gate_min_calls = 1\nadvice_min_usd = 0.0\nadvice_min_share = 0.0\n")


def make_world(root: Path) -> World:
    home = root / "home"
    config = home / "config"
    project = root / "proj"
    sw_home = root / "sw"
    for d in (home, config, project, sw_home):
        d.mkdir(parents=True, exist_ok=True)
    project = project.resolve()
    (config / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "bypassPermissionsModeAccepted": True,
                "projects": {str(project): {"hasTrustDialogAccepted": True}},
                "customApiKeyResponses": {"approved": [API_KEY]},
            }
        )
    )
    (config / "settings.json").write_text(json.dumps({"skipDangerousModePermissionPrompt": True}))
    git(project, "init", "-q", "-b", "main")
    (project / "src").mkdir()
    (project / "build").mkdir()
    (project / TRACKED_NAME).write_text(tracked_text())
    (project / IGNORED_NAME).write_text(ignored_text())
    (project / ".gitignore").write_text("build/\n")
    # the scripted sessions (scenario.py, test_e2e_live.py) were designed around v2's gate, bp_amber 0.10
    # for 3 calls with a bill cycle within them: the project pins it, for the hooks and for replay alike
    # (the shipped gate's timing is held by tests/test_gate.py and tests/test_calibration.py)
    (project / ".claude").mkdir()
    (project / ".claude" / "session-watcher.toml").write_text(GATE_V2)
    (project / "README.md").write_text("# scratch project\n")
    git(project, "add", ".gitignore", "README.md", TRACKED_NAME)
    git(project, "commit", "-q", "-m", "initial")
    return World(root=root, home=home, config=config, project=project, sw_home=sw_home)


# -- print-mode runs --------------------------------------------------------------------------


@dataclass
class PrintRun:
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    messages: list[dict[str, Any]]

    @property
    def result(self) -> dict[str, Any]:
        for m in reversed(self.messages):
            if m.get("type") == "result":
                return dict(m)
        raise AssertionError(f"no result message; stdout={self.stdout[-2000:]!r} stderr={self.stderr[-2000:]!r}")

    @property
    def session_id(self) -> str:
        return str(self.result["session_id"])


def run_print(
    client: Path,
    world: World,
    base_url: str,
    prompt: str,
    *extra_args: str,
    timeout: float = 120,
    env_extra: dict[str, str] | None = None,
) -> PrintRun:
    args = [
        str(client),
        "-p",
        prompt,
        "--output-format",
        "stream-json",
        "--verbose",
        "--dangerously-skip-permissions",
        *extra_args,
    ]
    t0 = time.monotonic()
    proc = subprocess.run(
        args,
        cwd=world.project,
        env=world.env(base_url, **(env_extra or {})),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    wall = time.monotonic() - t0
    messages: list[dict[str, Any]] = []
    for raw in proc.stdout.splitlines():
        line = raw.strip()
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                messages.append(json.loads(line))
    return PrintRun(proc.returncode, proc.stdout, proc.stderr, wall, messages)


def transcript_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def usage_by_message(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """message.id -> the usage of that API call (last line wins), main chain and sidechain alike."""
    out: dict[str, dict[str, Any]] = {}
    for r in records:
        if r.get("type") != "assistant":
            continue
        msg = r.get("message") or {}
        if msg.get("id") and isinstance(msg.get("usage"), dict):
            out[msg["id"]] = msg["usage"]
    return out


# -- the terminal UI under tmux ---------------------------------------------------------------


class Tmux:
    """One private tmux server (its own socket) running the client's terminal UI."""

    def __init__(self, root: Path, width: int = 200, height: int = 50) -> None:
        self.sock = str(root / "tmux.sock")
        self.width, self.height = width, height
        self.started = False

    def _tmux(self, *args: str, check: bool = True) -> str:
        return subprocess.run(
            ["tmux", "-S", self.sock, *args], capture_output=True, text=True, timeout=30, check=check
        ).stdout

    def start(self, argv: list[str], env: dict[str, str], cwd: Path, limit_s: int = 240) -> None:
        # `timeout --foreground`: plain `timeout` puts the client in a background process group and
        # its UI freezes; the limit bounds a hung client.
        cmd = " ".join(shlex.quote(a) for a in ["timeout", "--foreground", str(limit_s), *argv])
        env_args: list[str] = []
        for k, v in env.items():
            env_args += ["-e", f"{k}={v}"]
        subprocess.run(
            [
                "tmux",
                "-S",
                self.sock,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-x",
                str(self.width),
                "-y",
                str(self.height),
                "-c",
                str(cwd),
                *env_args,
                cmd,
            ],
            check=True,
            env=env,
            timeout=30,
        )
        self.started = True

    def capture(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "0", check=False)

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "0", "-l", text)
        time.sleep(0.3)
        self._tmux("send-keys", "-t", "0", "Enter")

    def key(self, name: str) -> None:
        self._tmux("send-keys", "-t", "0", name)

    def wait_for(self, predicate: Callable[[str], bool], timeout: float = 30, what: str = "") -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.capture()
            if predicate(screen):
                return screen
            time.sleep(0.25)
        raise AssertionError(f"timed out waiting for {what or predicate}; the pane shows:\n{screen}")

    def kill(self) -> None:
        if self.started:
            self._tmux("kill-server", check=False)
            self.started = False
