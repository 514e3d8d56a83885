"""Drive a finished session again, live: the transcript written progressively and the real hook and
status-line processes run at the moments the client runs them, in the client's order.

A schedule is a list of steps `(size, kind, event, payload)`: before the step the main transcript
holds its first `size` bytes; `kind` is "hook" or "statusline". For 2.1.332 sessions the schedule is
the client's own (its hooks.jsonl recorded the transcript size at each hook); for older transcripts
it is built with 2.1.197's order, the harder one: PostToolUse before the assistant line holding the
tool_use, Stop before the turn's last API call line. A Stop runs async as the client runs it: the rest
of the turn is appended while it waits.

Every process gets SESSION_WATCHER_TRACE, so the trace rows the live folds made can be compared with
`replay`'s, call for call.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from typing import TYPE_CHECKING, Any

from tests.oracle import launcher

if TYPE_CHECKING:
    from pathlib import Path

Step = tuple[int, str, str, dict[str, Any]]
HOOK_EVENTS = ("PostToolUse", "PostToolUseFailure", "Stop", "SubagentStop", "SessionStart", "UserPromptSubmit",
               "SessionEnd")


def line_offsets(data: bytes) -> list[int]:
    """Start offset of every complete line, and the end of the last."""
    out = [0]
    for i, b in enumerate(data):
        if b == 10:
            out.append(i + 1)
    return out


def _records(data: bytes) -> list[tuple[int, dict[str, Any]]]:
    """(offset, record) of every line that is a JSON object."""
    offsets = line_offsets(data)
    recs: list[tuple[int, dict[str, Any]]] = []
    for n in range(len(offsets) - 1):
        try:
            rec = json.loads(data[offsets[n]:offsets[n + 1]])
        except ValueError:
            continue
        if isinstance(rec, dict):
            recs.append((offsets[n], rec))
    return recs


def _errored(recs: list[tuple[int, dict[str, Any]]]) -> set[Any]:
    """The tool use ids whose result is an error (their hook is PostToolUseFailure)."""
    errors = set()
    for _, rec in recs:
        content = (rec.get("message") or {}).get("content") if isinstance(rec.get("message"), dict) else None
        if rec.get("type") == "user" and isinstance(content, list):
            errors |= {b.get("tool_use_id") for b in content if isinstance(b, dict) and b.get("is_error")}
    return errors


class _Turns:
    """The steps of 2.1.197's order, record by record of the main chain."""

    def __init__(self, session_id: str, errors: set[Any]) -> None:
        self.base = {"session_id": session_id}
        self.errors = errors
        self.steps: list[Step] = [(0, "hook", "SessionStart", {**self.base, "source": "startup"})]
        self.first_line_of: dict[str, int] = {}  # message id -> offset of its first line
        self.last_call_start: int | None = None  # first line of the latest main-chain call
        self.turn_open = False

    def end_turn(self, status_at: int) -> None:
        """Stop before the turn's last API call line, then the status line."""
        if self.turn_open and self.last_call_start is not None:
            self.steps.append((self.last_call_start, "hook", "Stop", {**self.base, "stop_hook_active": False}))
            self.steps.append((status_at, "statusline", "", {**self.base}))
            self.turn_open = False

    def record(self, off: int, rec: dict[str, Any]) -> None:
        kind = rec.get("type")
        if rec.get("isSidechain") is True:
            return
        if kind == "system" and rec.get("subtype") == "compact_boundary":
            self.steps.append((off, "hook", "SessionStart", {**self.base, "source": "compact"}))
            return
        msg = rec["message"] if isinstance(rec.get("message"), dict) else {}
        content = msg.get("content")
        if kind == "user":
            prompt = not (isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result"
                                                            for b in content))
            if prompt and rec.get("isMeta") is not True:
                self.end_turn(off)
                self.steps.append((off, "hook", "UserPromptSubmit", {**self.base, "prompt": "..."}))
        elif kind == "assistant" and isinstance(msg.get("id"), str):
            self.assistant(off, msg["id"], content)

    def assistant(self, off: int, mid: str, content: Any) -> None:
        """An API call's line: PostToolUse (or its failure) before the line holding the tool_use."""
        if mid not in self.first_line_of:
            self.first_line_of[mid] = off
            self.last_call_start = off
        self.turn_open = True
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                event = "PostToolUseFailure" if block.get("id") in self.errors else "PostToolUse"
                self.steps.append((off, "hook", event, {**self.base, "tool_name": block.get("name"),
                                                        "tool_input": block.get("input"),
                                                        "tool_use_id": block.get("id")}))


def synthetic_schedule(data: bytes, session_id: str) -> list[Step]:
    """2.1.197's order over a transcript with no hook log (see the module docstring)."""
    recs = _records(data)
    turns = _Turns(session_id, _errored(recs))
    for off, rec in recs:
        turns.record(off, rec)
    turns.end_turn(len(data))
    turns.steps.append((len(data), "hook", "SessionEnd", {**turns.base, "reason": "other"}))
    return turns.steps


def recorded_schedule(hooks_log: Path, statusline_log: Path | None, session_id: str,
                      data: bytes) -> list[Step]:
    """The client's own order (a 2.1.332 capture): each hook over the lines the transcript held when
    it ran (`n_lines`; the recorded byte sizes predate the fixture's shorter home paths); the status
    line at its time, over the transcript as the hook before it saw it."""
    offsets = line_offsets(data)
    timed: list[tuple[float, str, str, dict[str, Any], int | None]] = []
    for line in hooks_log.read_text().splitlines():
        rec = json.loads(line)
        p = rec["payload"]
        if p.get("session_id") != session_id or rec["event"] not in HOOK_EVENTS:
            continue
        seen = rec.get("transcript_at_invocation") or {}
        lines = min(int(seen.get("n_lines") or 0), len(offsets) - 1)
        timed.append((rec["t"], "hook", rec["event"], p, offsets[lines]))
    if statusline_log is not None:
        for line in statusline_log.read_text().splitlines():
            rec = json.loads(line)
            if rec["payload"].get("session_id") == session_id:
                timed.append((rec["t"], "statusline", "", rec["payload"], None))
    timed.sort(key=lambda item: item[0])
    steps: list[Step] = []
    size = 0
    for _, kind, event, p, seen_size in timed:
        size = seen_size if seen_size is not None else size
        steps.append((size, kind, event, p))
    return steps


class Live:
    """One session replayed live into `root`: transcript, subagents, trace and hook outputs."""

    def __init__(self, root: Path, source: Path, session_id: str, cwd: Path) -> None:
        self.root = root
        self.data = source.read_bytes()
        self.session_id = session_id
        self.project = root / "projects" / "proj"
        self.project.mkdir(parents=True)
        self.transcript = self.project / f"{session_id}.jsonl"
        self.transcript.write_bytes(b"")
        self.sub_source = source.parent / session_id / "subagents"
        self.sub_dir = self.project / session_id / "subagents"
        self.cwd = cwd
        self.trace = root / "trace.jsonl"
        # the Stop hook's wait for the turn's last line at its longest (it ends once the line is there):
        # the test writes that line 0.05 s after starting the hook, which a busy machine may stall
        self.env = {**os.environ, "SESSION_WATCHER_TRACE": str(self.trace), "CLAUDE_PROJECT_DIR": str(cwd),
                    "SESSION_WATCHER_STOP_WAIT": "5"}
        self.written = 0
        self.outputs: list[tuple[str, dict[str, Any]]] = []
        # after each Stop: (calls up to the turn's end, calls in the state, calls in the file written)
        self.stop_folded: list[tuple[int, int, int]] = []
        self.payload_cwd = True  # False: the payloads name no folder (no `cwd`)
        self.run_in: Path | None = None  # the folder the hook and status-line processes run in (None: this one's)

    def write_to(self, size: int) -> None:
        if size > self.written:
            with self.transcript.open("ab") as fh:
                fh.write(self.data[self.written:size])
            self.written = size

    def copy_subagents(self) -> None:
        if self.sub_source.is_dir() and not self.sub_dir.exists():
            shutil.copytree(self.sub_source, self.sub_dir)

    def _payload(self, event: str, p: dict[str, Any]) -> dict[str, Any]:
        out = {**p, "transcript_path": str(self.transcript), "cwd": str(self.cwd)}
        if not self.payload_cwd:
            del out["cwd"]
        if event:
            out["hook_event_name"] = event
        agent = p.get("agent_transcript_path")
        if isinstance(agent, str):
            out["agent_transcript_path"] = str(self.sub_dir / os.path.basename(agent))
        return out

    def run(self, steps: list[Step]) -> None:
        for size, kind, event, p in steps:
            self.write_to(size)
            if kind == "statusline":
                proc = subprocess.run(launcher("statusline"), input=json.dumps(self._payload("", p)).encode(),
                                      env=self.env, capture_output=True, timeout=60, check=False, cwd=self.run_in)
                assert proc.returncode == 0
                assert proc.stderr == b"", proc.stderr
                continue
            if event == "SubagentStop" or (event == "Stop" and self.sub_source.is_dir()):
                self.copy_subagents()
            child = subprocess.Popen(launcher("hook", event), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=self.env, cwd=self.run_in)
            assert child.stdin is not None
            child.stdin.write(json.dumps(self._payload(event, p)).encode())
            child.stdin.close()
            if event == "Stop":  # async: the client writes the turn's last line while the hook waits
                time.sleep(0.05)
                self.write_to(turn_end(self.data, size))
            assert child.stdout is not None
            assert child.stderr is not None
            with child.stdout, child.stderr:
                out, err = child.stdout.read(), child.stderr.read()
            child.wait(timeout=60)
            assert child.returncode == 0
            assert err == b"", err
            if out:
                self.outputs.append((event, json.loads(out)))
            if event == "Stop":
                low = count_calls(self.data[:min(turn_end(self.data, size), self.written)])
                self.stop_folded.append((low, self.calls(), count_calls(self.data[:self.written])))
        self.write_to(len(self.data))

    def calls(self) -> int:
        from tests.statefile import load_state

        return int(load_state(self.session_id)["engine"]["calls"])

    def rows(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.trace.read_text().splitlines()] if self.trace.exists() else []


def turn_end(data: bytes, size: int) -> int:
    """Where the turn open at `size` (a line boundary) ends: `size` when the last conversation record
    before it ends a turn already, else the end of the first turn-ending assistant line after it, or
    the file's end."""
    from session_watcher.state.tail import _verdict

    for line in reversed(data[:size].split(b"\n")[:-1]):
        verdict = _verdict(line)
        if verdict is not None:
            if verdict:
                return size
            break
    pos = size
    while pos < len(data):
        nl = data.find(b"\n", pos)
        if nl < 0:
            break
        if _verdict(data[pos:nl]) is True:
            return nl + 1
        pos = nl + 1
    return len(data)


def count_calls(data: bytes) -> int:
    """Main-chain API calls (distinct message id + request id, with usage) in complete lines."""
    ids = set()
    for line in data.split(b"\n")[:-1]:
        if b'"usage"' not in line:
            continue
        rec = json.loads(line)
        msg = rec.get("message") if isinstance(rec, dict) else None
        if rec.get("type") == "assistant" and not rec.get("isSidechain") and isinstance(msg, dict) \
                and isinstance(msg.get("usage"), dict) and msg.get("model") != "<synthetic>":
            ids.add((msg.get("id"), rec.get("requestId")))
    return len(ids)
