"""An independent token oracle and small helpers for the foundation tests (real CLI, real files).

The oracle is written from the issue's definition, not from the package: every complete JSONL line
that is an assistant record with `message.usage` and `message.id` is one sample of the API call keyed
by (message.id, requestId); the last sample of a call wins; model "<synthetic>" is no call;
`isSidechain` records, and every record of a subagent file, count toward the subagent totals.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
TRANSCRIPTS = FIXTURES / "transcripts"
REAL_CLIENT = FIXTURES / "real-client"
SW = Path(sys.executable).parent / "session-watcher"

KEYS = ("uncachedInput", "output", "cacheRead", "cacheWrite", "cacheWrite5m", "cacheWrite1h")


def _n(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0


def _sample(usage: dict[str, Any]) -> dict[str, int]:
    cw = _n(usage.get("cache_creation_input_tokens"))
    split = usage.get("cache_creation")
    if isinstance(split, dict):
        w5, w1 = _n(split.get("ephemeral_5m_input_tokens")), _n(split.get("ephemeral_1h_input_tokens"))
    else:
        w5, w1 = cw, 0
    return {
        "uncachedInput": _n(usage.get("input_tokens")),
        "output": _n(usage.get("output_tokens")),
        "cacheRead": _n(usage.get("cache_read_input_tokens")),
        "cacheWrite": cw,
        "cacheWrite5m": w5,
        "cacheWrite1h": w1,
    }


def complete_lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")[:-1]


def oracle(main: bytes | Path, subagents: list[Path] | tuple[Path, ...] = ()) -> dict[str, Any]:
    """{'main': bucket, 'sub': bucket, 'pressure': int | None, 'mainKeys': [...]} of the given files."""
    calls: dict[tuple[str, str | None], tuple[str, dict[str, int]]] = {}
    main_order: list[tuple[str, str | None]] = []
    sources = [(main.read_bytes() if isinstance(main, Path) else main, False)]
    sources += [(p.read_bytes(), True) for p in subagents]
    for data, is_sub_file in sources:
        for line in complete_lines(data):
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if not isinstance(rec, dict) or rec.get("type") != "assistant":
                continue
            msg = rec.get("message")
            if not isinstance(msg, dict) or msg.get("model") == "<synthetic>":
                continue
            usage, mid = msg.get("usage"), msg.get("id")
            if not isinstance(usage, dict) or not isinstance(mid, str):
                continue
            rid = rec.get("requestId")
            key = (mid, rid if isinstance(rid, str) else None)
            stream = "sub" if is_sub_file or rec.get("isSidechain") is True else "main"
            calls[key] = (stream, _sample(usage))
            if stream == "main" and key not in main_order:
                main_order.append(key)
    out: dict[str, Any] = {}
    for stream in ("main", "sub"):
        bucket = dict.fromkeys(KEYS, 0)
        bucket["calls"] = 0
        for s, sample in calls.values():
            if s == stream:
                for k in KEYS:
                    bucket[k] += sample[k]
                bucket["calls"] += 1
        out[stream] = bucket
    pressure = None
    mains = [k for k in main_order if calls[k][0] == "main"]
    if mains:
        last = calls[mains[-1]][1]
        pressure = last["uncachedInput"] + last["cacheRead"] + last["cacheWrite"]
    out["pressure"] = pressure
    out["mainKeys"] = mains
    return out


def run(args: list[str], stdin: bytes = b"", timeout: float = 60, env: dict[str, str] | None = None,
        ) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(args, input=stdin, capture_output=True, timeout=timeout, check=False,
                          env=env if env is not None else dict(os.environ))


def sw(*args: str, stdin: bytes = b"", timeout: float = 60, env: dict[str, str] | None = None,
       ) -> subprocess.CompletedProcess[bytes]:
    """The installed console script, as a user runs it."""
    return run([str(SW), *args], stdin=stdin, timeout=timeout, env=env)


_launchers: list[Path] = []  # the folder of the launchers, once written


def launchers(folder: Path | None = None) -> Path:
    """The folder of the two launchers the installers write, written for this interpreter (the dev
    venv) by the very code they run (`session_watcher.hooks.launchers.write`),
    once: into `folder` the first time (conftest's session fixture gives one), else into a temp
    folder."""
    if not _launchers:
        from session_watcher.hooks.launchers import write

        folder = folder if folder is not None else Path(tempfile.mkdtemp(prefix="sw-launchers-"))
        write(str(folder))
        _launchers.append(folder)
    return _launchers[0]


def launcher(kind: str, *args: str) -> list[str]:
    """What Claude Code's settings run for the hook (`kind` "hook") or the status line ("statusline"):
    the venv's interpreter, `-I -S`, on install.sh's launcher, then `args`."""
    return [sys.executable, "-I", "-S", str(launchers() / f"session-watcher-{kind}"), *args]


def hook(event: str, payload: dict[str, Any] | bytes, timeout: float = 30,
         env: dict[str, str] | None = None, args: tuple[str, ...] = ()) -> subprocess.CompletedProcess[bytes]:
    """One hook run as Claude Code starts it, through install.sh's launcher (`args` after the event)."""
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return run(launcher("hook", event, *args), stdin=raw, timeout=timeout, env=env)


def stop_until_read(session_id: str, transcript: Path, subagents: list[Path] | tuple[Path, ...] = (),
                    env: dict[str, str] | None = None, home: Path | None = None) -> int:
    """Stop hooks until one has read the transcript and each subagent file to its last line and left
    no alert pending (a run folds for FOLD_BUDGET, across files too, and leaves the rest, and its
    alerts, to the next: on a busy machine one run may not get there); how many ran. Each exits 0
    and prints nothing. `home`: the state's SESSION_WATCHER_HOME, if not this process's."""
    from tests.statefile import load_state

    ends = {str(p): p.read_bytes().rfind(b"\n") + 1 for p in [transcript, *subagents]}
    for n in range(1, 51):
        proc = hook("Stop", payload(session_id, transcript), env=env)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
        state = load_state(session_id, home)
        cursors = {**state["subCursors"], str(transcript): state["cursor"]}
        if {path: (cursors.get(path) or {}).get("offset") for path in ends} == ends \
                and not any(a.get("pending") for a in state["alerts"]):
            return n
    raise AssertionError(f"{session_id}: the Stop hooks never read every file to its end")


def statusline(payload: dict[str, Any] | bytes, *args: str, timeout: float = 60,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """One status-line run as Claude Code starts it, through install.sh's launcher."""
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return run(launcher("statusline", *args), stdin=raw, timeout=timeout, env=env)


def payload(session_id: str, transcript: Path | str, event: str = "Stop", **extra: Any) -> dict[str, Any]:
    return {"session_id": session_id, "transcript_path": str(transcript), "cwd": str(Path(transcript).parent),
            "hook_event_name": event, **extra}


def one_message(stderr: str) -> str:
    """The CLI's one message on stderr (README), as one line: its first line starts `session-watcher`,
    each later one is its continuation (wrapped within COLUMNS, indented by two, or a path too long
    for that on a line of its own); their words joined by single spaces again. Fails where stderr
    holds anything else (two messages, a traceback)."""
    lines = stderr.splitlines()
    assert lines, stderr
    assert lines[0].startswith("session-watcher"), stderr
    assert stderr.endswith("\n"), stderr
    assert all(line.startswith("  ") or (line and " " not in line) for line in lines[1:]), stderr
    return " ".join(line.strip() for line in lines)
