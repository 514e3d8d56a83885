"""Synthetic sessions for the reliability tests: transcript lines, hook payloads and their oracle.

A session is a list of API calls; each call is written as two assistant lines sharing one message id
(the first with a partial output count, as Claude Code writes them) with Read tool uses, then one
user line per tool result. The oracle is what an exact meter must show: one sample per call (the
last one), and for each path the number of distinct Read results.
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MODEL = "claude-opus-4-6"


def content_of(call: int, path: str, n: int) -> str:
    return "".join(f"line {j} of {os.path.basename(path)} in call {call}\n" for j in range(n))


@dataclass
class Call:
    index: int
    inp: int
    cr: int
    cw: int
    out: int
    reads: list[tuple[str, str, int]]  # (tool_use_id, path, lines of content)


@dataclass
class SynthSession:
    """Build the records of one session; `lines_of(call)` gives the JSONL bytes in file order."""

    session_id: str
    project: str
    seed: int = 1
    files: int = 6
    calls: list[Call] = field(default_factory=list)
    _ctx: int = 0

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.paths = [os.path.join(self.project, "src", f"mod{i}.py") for i in range(self.files)]

    def next_call(self, reads: int | None = None, growth: int | None = None) -> Call:
        """Append one call; the context grows by `growth` tokens (cache write), read from cache next."""
        i = len(self.calls)
        r = self.rng
        if i == 0:
            cr, cw = 0, 18_000
        else:
            cr = self._ctx
            cw = growth if growth is not None else r.randint(2_000, 9_000)
        self._ctx = cr + cw
        n = r.randint(0, 2) if reads is None else reads
        call_reads = [(f"toolu_{self.seed:04d}_{i:05d}_{k}", r.choice(self.paths), r.randint(5, 60))
                      for k in range(n)]
        call = Call(i, r.randint(1, 9), cr, cw, r.randint(50, 900), call_reads)
        self.calls.append(call)
        return call

    def ts(self, i: int, sub: int = 0) -> str:
        minute, sec = divmod(i * 20 + sub, 60)
        hour, minute = divmod(minute, 60)
        return f"2026-03-0{1 + hour // 24}T{hour % 24:02d}:{minute:02d}:{sec:02d}.000Z"

    def usage(self, c: Call, partial: bool) -> dict[str, Any]:
        return {"input_tokens": c.inp, "cache_read_input_tokens": c.cr, "cache_creation_input_tokens": c.cw,
                "output_tokens": 1 if partial else c.out,
                "cache_creation": {"ephemeral_5m_input_tokens": c.cw, "ephemeral_1h_input_tokens": 0}}

    def records(self, c: Call) -> list[dict[str, Any]]:
        mid, rid = f"msg_{self.seed:04d}_{c.index:05d}", f"req_{self.seed:04d}_{c.index:05d}"
        base = {"sessionId": self.session_id, "cwd": self.project, "isSidechain": False, "version": "2.1.39"}
        recs: list[dict[str, Any]] = [
            {**base, "type": "assistant", "uuid": f"a{c.index}-0", "timestamp": self.ts(c.index), "requestId": rid,
             "message": {"id": mid, "model": MODEL, "role": "assistant", "usage": self.usage(c, True),
                         "content": [{"type": "text", "text": f"step {c.index}"}]}},
            {**base, "type": "assistant", "uuid": f"a{c.index}-1", "timestamp": self.ts(c.index, 1), "requestId": rid,
             "message": {"id": mid, "model": MODEL, "role": "assistant", "usage": self.usage(c, False),
                         "content": [{"type": "tool_use", "id": tid, "name": "Read", "input": {"file_path": p}}
                                     for tid, p, _ in c.reads]}},
        ]
        for k, (tid, path, n) in enumerate(c.reads):
            content = content_of(c.index, path, n)
            recs.append({**base, "type": "user", "uuid": f"u{c.index}-{k}", "timestamp": self.ts(c.index, 2 + k),
                         "message": {"role": "user", "content": [
                             {"type": "tool_result", "tool_use_id": tid, "content": content}]},
                         "toolUseResult": {"type": "text", "file": {"filePath": path, "content": content,
                                                                    "numLines": n, "startLine": 1,
                                                                    "totalLines": n}}})
        return recs

    def lines_of(self, c: Call) -> bytes:
        return b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in self.records(c))

    def hook_payload(self, transcript: str, event: str = "PostToolUse", read: tuple[str, str, int] | None = None,
                     bash_id: str = "toolu_bash_x") -> dict[str, Any]:
        p: dict[str, Any] = {"session_id": self.session_id, "transcript_path": transcript, "cwd": self.project,
                             "hook_event_name": event, "permission_mode": "default"}
        if event == "PostToolUse":
            if read is None:
                p.update({"tool_name": "Bash", "tool_input": {"command": "true"}, "tool_use_id": bash_id,
                          "tool_response": {"stdout": "", "stderr": ""}})
            else:
                tid, path, n = read
                content = content_of(int(tid.split("_")[2]), path, n)
                p.update({"tool_name": "Read", "tool_input": {"file_path": path}, "tool_use_id": tid,
                          "tool_response": {"type": "text", "file": {"filePath": path, "content": content,
                                                                     "numLines": n, "startLine": 1,
                                                                     "totalLines": n}}})
        return p

    # ------------------------------------------------------------------ the oracle

    def token_usage(self, upto: int | None = None) -> dict[str, int]:
        calls = self.calls[:upto]
        return {"uncachedInput": sum(c.inp for c in calls), "output": sum(c.out for c in calls),
                "cacheRead": sum(c.cr for c in calls), "cacheWrite": sum(c.cw for c in calls),
                "cacheWrite5m": sum(c.cw for c in calls), "cacheWrite1h": 0, "calls": len(calls)}

    def reads_per_path(self, upto: int | None = None) -> Counter[str]:
        return Counter(p for c in self.calls[:upto] for _, p, _ in c.reads)


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
    """The environment of a hook subprocess: every folder under `root`, message alerts."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SESSION_WATCHER", "CLAUDE", "XDG_"))}
    env.update({"SESSION_WATCHER_HOME": str(sw_home(root)), "HOME": str(root / "home"),
                "CLAUDE_CONFIG_DIR": str(root / "claude"), "PYTHONDONTWRITEBYTECODE": "1"})
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


def write_session(root: Path, sid: str, calls: int, seed: int) -> tuple[SynthSession, Path]:
    """A synthetic session of `calls` API calls written to `root/projects/<sid>.jsonl`."""
    s = SynthSession(sid, make_project(root), seed=seed)
    tr = root / "projects" / f"{sid}.jsonl"
    tr.parent.mkdir(parents=True, exist_ok=True)
    with open(tr, "ab") as fh:
        for _ in range(calls):
            fh.write(s.lines_of(s.next_call()))
    return s, tr


# ---------------------------------------------------------------------- running hooks

REPO = Path(__file__).resolve().parent.parent


def hook_argv(event: str) -> list[str]:
    import sys

    exe = Path(sys.executable).parent / "session-watcher"
    if exe.exists():
        return [str(exe), "hook", event]
    return [sys.executable, "-m", "session_watcher.hooks", event]


def cli_argv(*args: str) -> list[str]:
    import sys

    exe = Path(sys.executable).parent / "session-watcher"
    return [str(exe), *args] if exe.exists() else [sys.executable, "-m", "session_watcher.cli", *args]


def reads_of(state: dict[str, Any]) -> dict[str, int]:
    return {p: e["reads"] for p, e in state["paths"].items()}


def oracle(session: SynthSession, transcript: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(state, every alert) of one uninterrupted fold of the whole transcript, as a hook folds it."""
    import time

    from session_watcher import config
    from session_watcher.core import engine
    from session_watcher.state import session as sessmod

    state = engine.new_state(session.session_id)
    state["context"]["cwd"] = state["context"]["project"] = session.project
    cfg, _ = config.load_cached(state["config"], session.project)
    state, alerts, done = sessmod.sync(state, str(transcript), cfg, time.monotonic() + 600)
    assert done
    return state, alerts


def message_texts(alerts: list[dict[str, Any]]) -> Counter[str]:
    from session_watcher import notifier
    from session_watcher.notifier import message

    return Counter(notifier.system_message(*message.compose(a)) for a in alerts)
