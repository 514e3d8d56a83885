"""The reliability tests' harness: synthetic sessions (bench.synth.SynthSession, the one transcript
writer) written into temp folders, the hook subprocesses' environment and argv, and the oracle of a
session (one uninterrupted fold of its whole transcript).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.synth import MODEL, Call, SynthSession, content_of

if TYPE_CHECKING:
    from session_watcher.core.shapes import Alert

__all__ = ["MODEL", "Call", "SynthSession", "content_of"]  # the writer, for the tests that import this module


def fill_up(path: Path) -> None:
    """Write zeros to `path` until the disk it is on says it is full."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 1024)
    except OSError:
        pass
    finally:
        os.close(fd)


def make_project(root: Path) -> str:
    proj = root / "proj"
    (proj / "src").mkdir(parents=True, exist_ok=True)
    return os.path.realpath(proj)


def sw_home(root: Path) -> Path:
    """The SESSION_WATCHER_HOME of hook subprocesses run with `env_for(root)`."""
    return root / "swhome"


def env_for(root: Path, **extra: str) -> dict[str, str]:
    """The environment of a hook subprocess: every folder under `root`, message alerts, and a Stop hook
    that does not wait for the turn's last line (a synthetic session ends mid-turn: waiting 1.2 s for a
    line that never comes only delays the same fold; tests/test_hook_process.py keeps the wait)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SESSION_WATCHER", "CLAUDE", "XDG_"))}
    env.update({"SESSION_WATCHER_HOME": str(sw_home(root)), "HOME": str(root / "home"),
                "CLAUDE_CONFIG_DIR": str(root / "claude"), "PYTHONDONTWRITEBYTECODE": "1",
                "SESSION_WATCHER_STOP_WAIT": "0"})
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    env.update(extra)
    return env


def write_config(root: Path, text: str = '[notify]\nchannels = ["message"]\nfallback = "none"\n') -> None:
    cfg = sw_home(root) / "config"
    cfg.mkdir(parents=True, exist_ok=True)
    (cfg / "config.toml").write_text(text)


def isolate(root: Path, monkeypatch: Any, config: str | None = None) -> Path:
    """Point this process's session-watcher at folders under `root` (as `env_for` does for hook
    subprocesses), with message alerts unless `config` says otherwise."""
    for k, v in env_for(root).items():
        if k.startswith(("SESSION_WATCHER", "HOME", "CLAUDE")):
            monkeypatch.setenv(k, v)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    if config is None:
        write_config(root)
    else:
        write_config(root, config)
    return root


def write_session(root: Path, sid: str, calls: int, seed: int, *, reads: int | None = None,
                  folder: Path | None = None) -> tuple[SynthSession, Path]:
    """A synthetic session of `calls` API calls (each with `reads` file reads: the generator's choice
    when None) written to `folder/<sid>.jsonl` (default `root/projects`)."""
    s = SynthSession(sid, make_project(root), seed=seed)
    tr = (root / "projects" if folder is None else folder) / f"{sid}.jsonl"
    tr.parent.mkdir(parents=True, exist_ok=True)
    with open(tr, "ab") as fh:
        for _ in range(calls):
            fh.write(s.lines_of(s.next_call(reads=reads)))
    return s, tr


# ---------------------------------------------------------------------- running hooks

REPO = Path(__file__).resolve().parent.parent


def hook_argv(event: str) -> list[str]:
    """The hook as Claude Code runs it: install.sh's launcher (tests.oracle.launcher)."""
    from tests.oracle import launcher

    return launcher("hook", event)


def statusline_argv() -> list[str]:
    """The status line as Claude Code runs it: install.sh's launcher (tests.oracle.launcher)."""
    from tests.oracle import launcher

    return launcher("statusline")


def cli_argv(*args: str) -> list[str]:
    import sys

    exe = Path(sys.executable).parent / "session-watcher"
    return [str(exe), *args] if exe.exists() else [sys.executable, "-m", "session_watcher.cli", *args]


def reads_of(state: dict[str, Any]) -> dict[str, int]:
    return {p: e["reads"] for p, e in state["paths"].items()}


def oracle(session: SynthSession, transcript: Path) -> tuple[dict[str, Any], list[Alert]]:
    """(state, every alert) of one uninterrupted fold of the whole transcript, as a hook folds it."""
    import time

    from session_watcher.base import config
    from session_watcher.core import engine
    from session_watcher.state import session as sessmod

    state = engine.new_state(session.session_id)
    state["context"]["cwd"] = state["context"]["project"] = session.project
    cfg, _ = config.load_cached(state["config"], session.project)
    state, alerts, done = sessmod.sync(state, str(transcript), cfg, time.monotonic() + 600)
    assert done
    # as a state file holds it: the fold's typed tuples (ledger entries, samples) come back as lists
    return json.loads(json.dumps(state)), alerts


def message_texts(alerts: list[dict[str, Any]]) -> Counter[str]:
    """What each alert's message says below its title (the title counts what the user was shown
    before it, which an uninterrupted fold does not know: notifier.throttle)."""
    from session_watcher import notifier
    from session_watcher.notifier import message

    return Counter(notifier.system_message(*message.compose(a)).split("\n", 1)[1] for a in alerts)
