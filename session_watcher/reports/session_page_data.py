"""One session's story as plain data for the session page: timeline rows, health over time, compactions.

`build_model(lines, ...)` is pure (transcript lines in, a JSON-able dict out); `load_model(path)` reads
the transcript and asks the engine's replay for the watcher's own trace. The page's renderer and the
live view both draw from this one dict.

Timeline rows, in start order:

* `call` - one main-chain API call (message id + request id, the last usage sample wins). It starts
  when its request was sent (the newest main-chain user, tool-result or compaction record before its
  first sample; else the first sample) and ends at its last sample.
* `tool` - one tool call: from the assistant record that holds its `tool_use` block to the record that
  holds its `tool_result` (open, `end` null, while the result has not arrived). A Read of a canonical
  path read before in the session is a re-read; `firstReadAt` is when that path was first read.

Health is fed through `core.health` in record order (every usage sample, tool result and compaction),
exactly as the fold feeds it; `healthBar` samples the score at each 5 % of the session's time.
"""

from __future__ import annotations

import json
import os
from typing import Any

from session_watcher.core import health
from session_watcher.core.transcript import iso_to_epoch, usage_reading

DEFAULT_WINDOW = 200_000
LARGE_WINDOW = 1_000_000
BAR_STEPS = 20  # 0 %, 5 %, ..., 100 %


def _summary(name: str, inp: object, cwd: str | None) -> tuple[str, str | None]:
    """A short label for a tool call, and its canonical file path (file tools only)."""
    if not isinstance(inp, dict):
        return "", None
    path = inp.get("file_path") or inp.get("notebook_path")
    if isinstance(path, str) and path:
        canon = os.path.normpath(os.path.join(cwd or "/", path))
        return canon, canon
    for key in ("command", "pattern", "url", "query", "description", "prompt", "skill"):
        v = inp.get(key)
        if isinstance(v, str) and v:
            return " ".join(v.split())[:120], None
    return "", None


def window_for(models: list[str], peak_prompt: int, reported: int | None = None) -> int:
    """The session's context window (SPEC "The context window"), from what a transcript holds."""
    if reported:
        return reported
    for m in models:
        low = m.lower()
        if "[1m]" in low or "1m context" in low:
            return LARGE_WINDOW
    return LARGE_WINDOW if peak_prompt > DEFAULT_WINDOW else DEFAULT_WINDOW


def build_model(
    lines: list[str],
    session_id: str | None = None,
    trace: list[dict[str, Any]] | None = None,
    final_status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The page's data from transcript lines (complete lines only) and the replay's trace."""
    calls: dict[str, dict[str, Any]] = {}
    tools: dict[str, dict[str, Any]] = {}
    compactions: list[dict[str, Any]] = []
    events: list[tuple[float, str, Any]] = []  # (ts, kind, arg) for health, in record order
    first_read: dict[str, float] = {}
    last_send: float | None = None
    t_first: float | None = None
    t_last: float | None = None
    models: list[str] = []
    sid = session_id
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rec, dict) or rec.get("isSidechain"):
            continue
        ts = iso_to_epoch(rec.get("timestamp"))
        if ts is None:
            continue
        kind = rec.get("type")
        if kind not in ("assistant", "user", "system"):
            continue
        sid = sid or (rec["sessionId"] if isinstance(rec.get("sessionId"), str) else None)
        t_first = ts if t_first is None else min(t_first, ts)
        t_last = ts if t_last is None else max(t_last, ts)
        cwd = rec.get("cwd") if isinstance(rec.get("cwd"), str) else None
        raw_msg = rec.get("message")
        msg: dict[str, Any] = raw_msg if isinstance(raw_msg, dict) else {}
        content = msg.get("content")
        if kind == "system" and rec.get("subtype") == "compact_boundary":
            raw_meta = rec.get("compactMetadata")
            meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
            trigger, pre = meta.get("trigger"), meta.get("preTokens")  # data: only the types the page draws
            compactions.append({"ts": ts, "trigger": trigger if isinstance(trigger, str) else None,
                                "preTokens": pre if isinstance(pre, int) and not isinstance(pre, bool) else None})
            events.append((ts, "compact", None))
            last_send = ts
            continue
        if kind == "user":
            last_send = ts
            if isinstance(content, list):
                for block in content:
                    if not isinstance(block, dict) or block.get("type") != "tool_result":
                        continue
                    tool = tools.get(str(block.get("tool_use_id")))
                    if tool is None or tool["end"] is not None:
                        continue
                    tool["end"] = max(ts, tool["start"])
                    tool["isError"] = bool(block.get("is_error"))
                    path = tool["path"]
                    if tool["name"] == "Read" and path:
                        if path in first_read:
                            tool["reread"] = True
                            tool["firstReadAt"] = first_read[path]
                        else:
                            first_read[path] = tool["start"]
                    events.append((ts, "tool", tool))
            continue
        if kind != "assistant":
            continue
        usage = msg.get("usage")
        key = f"{msg.get('id')}|{rec.get('requestId')}"
        if isinstance(usage, dict):
            (inp, cr, cw, out, _cw5, _cw1), detail = usage_reading(usage)  # the hooks' rule: a bad value counts 0
            prompt = inp + cr + cw if detail is None else sum(detail[0][:3])  # the context: its last message
            call = calls.get(key)
            if call is None:
                start = last_send if last_send is not None and last_send <= ts else ts
                call = {
                    "kind": "call",
                    "id": key,
                    "n": len(calls) + 1,
                    "start": start,
                    "end": ts,
                    "model": msg["model"] if isinstance(msg.get("model"), str) else None,
                }
                calls[key] = call
            call.update(
                end=max(ts, call["end"]), input=inp, cacheRead=cr, cacheWrite=cw, output=out, prompt=prompt
            )
            if isinstance(msg.get("model"), str) and msg["model"] not in models:
                models.append(msg["model"])
            events.append((ts, "call", prompt))
        if isinstance(content, list):
            for block in content:
                if not isinstance(block, dict) or block.get("type") != "tool_use":
                    continue
                tid = str(block.get("id"))
                if tid in tools:
                    continue
                name = str(block.get("name") or "?")
                label, path = _summary(name, block.get("input"), cwd)
                tools[tid] = {
                    "kind": "tool",
                    "id": tid,
                    "name": name,
                    "label": label,
                    "path": path,
                    "start": ts,
                    "end": None,
                    "isError": False,
                    "reread": False,
                    "firstReadAt": None,
                    "call": calls[key]["n"] if key in calls else None,
                }

    peak = max((c["prompt"] for c in calls.values()), default=0)
    reported = None
    if final_status:
        cp = final_status.get("contextPressure")
        if isinstance(cp, dict) and isinstance(cp.get("contextWindow"), int):
            reported = cp["contextWindow"]
    window = window_for(models, peak, reported)

    # health, record by record, as the fold does it
    h = health.new_health()
    timeline: list[tuple[float, dict[str, Any]]] = []
    for ts, kind, arg in events:
        if kind == "call":
            health.on_call(h, arg)
        elif kind == "compact":
            health.on_compaction(h)
        else:
            health.on_tool(h, arg["name"], arg["reread"], arg["isError"])
        timeline.append((ts, health.grade(h, window)))
    final = health.grade(h, window)
    t0 = t_first if t_first is not None else 0.0
    t1 = t_last if t_last is not None else t0
    for tool in tools.values():  # an open tool call runs to the end of what is known
        t1 = max(t1, tool["start"])
    bar = []
    first_grade = health.grade(health.new_health(), window)
    for step in range(BAR_STEPS + 1):
        t = t0 + (t1 - t0) * step / BAR_STEPS
        g = first_grade
        for ts, snap in timeline:
            if ts > t:
                break
            g = snap
        bar.append({"t": t, "score": g["score"], "grade": g["grade"]})

    rows: list[dict[str, Any]] = sorted(
        [*calls.values(), *tools.values()], key=lambda r: (r["start"], r["kind"] == "tool")
    )
    return {
        "sessionId": sid,
        "t0": t0,
        "t1": t1,
        "window": window,
        "models": models,
        "rows": rows,
        "compactions": compactions,
        "health": final,
        "healthBar": bar,
        "story": story_rows(trace or []),
        "backtest": backtest_summary(trace, final_status),
        "storyAvailable": trace is not None,
        "storyError": None,
    }


def story_rows(trace: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The watcher's own numbers per API call, trimmed to what the page draws."""
    out = []
    prev_total: int | None = None
    prev_bills = 0
    for row in trace:
        eng_total = row.get("billsTotal")
        raw_bills = row.get("bills")
        bills = raw_bills if isinstance(raw_bills, int) else 0
        if isinstance(eng_total, int):
            done = eng_total - (prev_total or 0)
            prev_total = eng_total
        else:
            done = max(0, bills - prev_bills)
        prev_bills = bills
        alerts = row.get("alerts") or []
        out.append(
            {
                "ts": row.get("ts"),
                "call": row.get("call"),
                "L": row.get("L"),
                "x": row.get("x"),
                "xSweet": row.get("xSweet"),
                "br": row.get("br"),
                "lamp": row.get("lamp"),
                "bills": bills,
                "billDone": max(0, done),
                "billProgress": row.get("billProgress"),
                "alerts": [
                    {"kind": a.get("kind"), "reminder": a.get("reminder")} for a in alerts if isinstance(a, dict)
                ],
            }
        )
    return out


def backtest_summary(trace: list[dict[str, Any]] | None, final: dict[str, Any] | None) -> dict[str, Any] | None:
    """Restarting at the advice vs the best single restart (core.backtest), for the page's one line."""
    if not trace:
        return None
    from session_watcher.core import backtest

    calls = backtest.calls_from_trace(trace)
    doc = backtest.backtest(calls, backtest.shared_prefix(final, calls))
    keep = ("usd", "savingUsd", "savingPct", "restartsAfter")
    return {
        "policies": {p: {k: doc["policies"][p][k] for k in keep} for p in ("actual", "alert", "hindsight")},
        "capture": doc["capture"],
        "sentence": backtest.sentence(doc),
    }


def complete_lines(data: bytes) -> list[str]:
    """The complete (newline-terminated) lines of a transcript; a torn last line waits."""
    end = data.rfind(b"\n")
    if end < 0:
        return []
    return data[: end + 1].decode("utf-8", "replace").splitlines()


def load_model(path: str, session_id: str | None = None, with_story: bool = True) -> dict[str, Any]:
    """Read a transcript and, when the engine's replay is there, the watcher's trace."""
    with open(path, "rb") as fh:
        lines = complete_lines(fh.read())
    trace: list[dict[str, Any]] | None = None
    final: dict[str, Any] | None = None
    error: str | None = None
    if with_story:
        try:
            from session_watcher.replay import replay
        except ImportError:
            replay = None  # type: ignore[assignment]
        if replay is not None:
            try:
                final, trace = replay(path)
            except Exception as exc:  # the page still shows the transcript's own story
                error = f"{type(exc).__name__}: {exc}"
    model = build_model(lines, session_id, trace, final)
    model["storyError"] = error
    return model
