"""Build a session's state in one process: feed the hook's own ``run(event, stdin)`` many payloads.

``python -m bench.feed PAYLOADS.jsonl STATE_FILE TRANSCRIPT`` (with SESSION_WATCHER_HOME set): each
line is ``{"event": ..., "payload": {...}}``. The first payload goes through the hook's ``run`` and is
repeated until the state's cursor has reached the end of the transcript (the hook folds at most its
time budget per run), so the measured runs start from a caught-up session, as in a live one. The
rest go through the hook's own tool-result step with one state load and save (see ``_bulk``).
Prints a JSON summary.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from session_watcher.core.shapes import ModelParams, State


def _offset(state_file: str) -> int:
    try:
        with open(state_file, "rb") as fh:
            state = json.loads(fh.read())
    except (OSError, ValueError):
        return -1
    cursor = state.get("cursor") or {}
    return int(cursor.get("offset") or 0)


def _bulk(state_file: str, items: list[dict[str, object]]) -> int:
    """The hook's own tool-result step for every payload, with one state load and one save.

    Per payload the hook loads the state, applies the payload and saves; doing the load and save
    once gives the same state (the transcript does not change in between) in seconds instead of
    minutes for thousands of paths.
    """
    from session_watcher.base import config
    from session_watcher.state import store

    first = items[0]["payload"] if items else {}
    assert isinstance(first, dict)
    state = store.load(state_file, str(first["session_id"]))
    if state is None:
        raise KeyError("no state after the catch-up run")
    cfg, _ = config.load_cached(state["config"], state["context"]["project"])
    for item in items:
        payload = item["payload"]
        assert isinstance(payload, dict)
        _apply_read(state, cfg, payload)
    store.save(state_file, state)
    return len(items)


def _apply_read(state: State, cfg: ModelParams, payload: dict[str, object]) -> None:
    """A Read payload as a tool result in the path map (the hooks fold results from the transcript
    only; the bench builds a big path map faster this way)."""
    from session_watcher.agents.claude_code.transcript import read_payload, use_info
    from session_watcher.core import engine
    from session_watcher.state import session

    name, tool_id = str(payload["tool_name"]), str(payload["tool_use_id"])
    info = use_info(name, payload.get("tool_input"))
    file = read_payload(payload.get("tool_response"))
    raws = {p for p in (info and info.get("path"), file and file["path"]) if isinstance(p, str)}
    canon, reasons = session.resolve(state, raws)
    engine.apply_globs(state, cfg)
    engine.on_tool_result(state, ("result", None, tool_id, False, file), (canon, reasons), use=(name, info),
                          globs=(cfg["include"], cfg["exclude"]))


def main(argv: list[str]) -> int:
    payloads, state_file, transcript = argv
    from session_watcher.hooks.run import run

    size = os.path.getsize(transcript)
    t0 = time.perf_counter()
    catchup_runs = 0
    runs = 0
    with open(payloads, "rb") as fh:
        lines = [json.loads(line) for line in fh if line.strip()]
    first = lines[0]
    raw = json.dumps(first["payload"]).encode()
    while _offset(state_file) < size and catchup_runs < 100_000:
        run(first["event"], raw)
        catchup_runs += 1
    t_catchup = time.perf_counter() - t0
    rest = lines[1:]
    try:
        runs = _bulk(state_file, rest)
    except (ImportError, AttributeError, KeyError, TypeError) as exc:  # internals moved: one run each
        print(f"bulk feed unavailable ({exc!r}); one hook run per payload", file=sys.stderr)
        for item in rest:
            run(item["event"], json.dumps(item["payload"]).encode())
            runs += 1
    print(
        json.dumps(
            {
                "catchupRuns": catchup_runs,
                "catchupSeconds": round(t_catchup, 3),
                "runs": runs,
                "seconds": round(time.perf_counter() - t0, 3),
                "offset": _offset(state_file),
                "size": size,
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
