"""Build a session's state in one process: feed the hook's own ``run(event, stdin)`` many payloads.

``python -m bench.feed PAYLOADS.jsonl STATE_FILE TRANSCRIPT`` (with SESSION_WATCHER_HOME set): each
line is ``{"event": ..., "payload": {...}}``. The first payload is repeated until the state's cursor
has reached the end of the transcript (the hook folds at most its time budget per run), so the
benchmark's measured runs start from a caught-up session, as in a live one. Prints a JSON summary.
"""

from __future__ import annotations

import json
import os
import sys
import time


def _offset(state_file: str) -> int:
    try:
        with open(state_file, "rb") as fh:
            state = json.loads(fh.read())
    except (OSError, ValueError):
        return -1
    cursor = state.get("cursor") or {}
    return int(cursor.get("offset") or 0)


def main(argv: list[str]) -> int:
    payloads, state_file, transcript = argv
    from hooks.run import run

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
    for item in lines[1:]:
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
