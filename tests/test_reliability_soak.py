"""Soak: thousands of hook invocations over one growing synthetic session.

Per-invocation work must not grow with the session (the reader only reads new bytes; every list in
the state is capped), the state file stays bounded, memory stays flat. How the state is bounded:
the meter keeps the last 32 call samples (`core.meter.RECENT_MAX`), the tool de-duplication list
128 ids and pending uses 256 (`core.engine.DONE_MAX`, `PENDING_MAX`), the alert list 20, ledger
entries are settled or written off within 3 calls (`LEDGER_CALLS`), the path map holds one entry per
distinct file; the one linear term is the health signal's tool-call sequence, one byte per tool call.
`SW_RUN_SLOW=1` runs 10,000 invocations (the short variant 3,000).

"Per-invocation work does not grow" is checked on what a run reads from disk (transcript bytes,
state, shards), counted through the reader's and the loader's own `pread`/`read`, not on the clock:
a test must not depend on the machine's speed or load. The timing claim (median time of the last
invocations against the first) is measured by `python -m bench.soak`.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import time
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.base import sysos
from tests import fuzz_synth as fs
from tests.statefile import load_state, state_file

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

if TYPE_CHECKING:
    from pathlib import Path


SLOW = os.environ.get("SW_RUN_SLOW") == "1"
RUNS = 10_000 if SLOW else 3_000
KEYS: list[dict[str, int]] = []
WINDOW = 500 if SLOW else 300


def rss_kb() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)


def proc_times(root: Path, s: fs.SynthSession, tr: Path, n: int = 5) -> list[float]:
    out = []
    for i in range(n):
        payload = s.hook_payload(str(tr), "PostToolUse", bash_id=f"toolu_proc_{len(s.calls)}_{i}")
        t0 = time.monotonic()
        proc = subprocess.run(fs.hook_argv("PostToolUse"), input=json.dumps(payload).encode(), capture_output=True,
                              env=fs.env_for(root), timeout=60, check=False)
        out.append(time.monotonic() - t0)
        assert proc.returncode == 0
        assert proc.stderr == b""
    return out


class CountingOs:
    """`os` for one module, with the bytes its pread/read calls return counted."""

    def __init__(self) -> None:
        self.bytes = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(sysos, name)

    def pread(self, fd: int, n: int, offset: int) -> bytes:
        data = os.pread(fd, n, offset)
        self.bytes += len(data)
        return data

    def read(self, fd: int, n: int) -> bytes:
        data = os.read(fd, n)
        self.bytes += len(data)
        return data


def test_soak(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import session_watcher.hooks.run
    from session_watcher.core import engine, meter
    from session_watcher.hooks.run import run
    from session_watcher.state import pathstore, reader, store

    counted = CountingOs()
    for module in (reader, store, pathstore):
        monkeypatch.setattr(module, "sysos", counted)  # the hooks' calls: base/sysos.py
    # the synthetic turns end on tool results, so Stop would wait its whole bound for a closing
    # assistant line each time (tests/test_tail.py covers that wait)
    monkeypatch.setattr(session_watcher.hooks.run, "STOP_WAIT", 0.0)

    for k, v in fs.env_for(tmp_path).items():
        if k.startswith(("SESSION_WATCHER", "HOME", "CLAUDE")):
            monkeypatch.setenv(k, v)
    fs.write_config(tmp_path)
    root = tmp_path
    s = fs.SynthSession("soak", fs.make_project(root), seed=21, files=40)
    tr = root / "soak.jsonl"
    tr.write_bytes(b"")
    first_proc = proc_times(root, s, tr)
    times: list[float] = []
    reads: list[int] = []
    sizes: list[int] = []
    tool_calls = 0
    rss: list[int] = []
    objs: list[int] = []
    sf = state_file(s.session_id, fs.sw_home(root))
    for i in range(RUNS):
        c = s.next_call(growth=300) if i % 2 == 0 else None  # context grows slowly; alerts keep firing
        if c is not None:
            with open(tr, "ab") as fh:
                fh.write(s.lines_of(c))
        if c is not None and c.reads:
            payload = s.hook_payload(str(tr), "PostToolUse", read=c.reads[0])  # already in the transcript
        elif i % 3 == 0:
            payload = s.hook_payload(str(tr), "Stop")
        else:
            payload = s.hook_payload(str(tr), "PostToolUse", bash_id=f"toolu_soak_{i}")
            tool_calls += 1
        raw = json.dumps(payload).encode()
        t0 = time.perf_counter()
        before = counted.bytes
        run(payload["hook_event_name"], raw)
        times.append(time.perf_counter() - t0)
        reads.append(counted.bytes - before)
        if i % 100 == 99:
            st = load_state(s.session_id, fs.sw_home(root))
            sizes.append(sf.stat().st_size - len(st["health"]["tail"]))
            KEYS.append({k: len(json.dumps(v)) for k, v in st.items()})
            assert len(st["meter"]["recent"]) <= meter.RECENT_MAX
            assert len(st["tools"]["done"]) <= engine.DONE_MAX
            assert len(st["tools"]["pending"]) <= engine.PENDING_MAX
            assert len(st["alerts"]) <= engine.ALERTS_MAX
            assert all(entry[2] < engine.LEDGER_CALLS for entry in st["engine"]["ledger"])
            assert len(st["paths"]) <= s.files
            gc.collect()
            objs.append(len(gc.get_objects()) - 2 * len(s.calls))  # less the test's own Call objects
            rss.append(rss_kb())
    last_proc = proc_times(root, s, tr)
    st = load_state(s.session_id, fs.sw_home(root))
    assert st["meter"]["main"] == s.token_usage()
    assert fs.reads_of(st) == dict(s.reads_per_path())
    transcript_reads = sum(len(c.reads) for c in s.calls)
    # one call per tool call of the transcript (the only source: the payloads' extra Bash ids add none),
    # the first half as counts, the second one byte per call
    assert st["health"]["head"][0] + len(st["health"]["tail"]) == transcript_reads
    assert st["health"]["head"][0] == transcript_reads // 2
    assert tool_calls > 0
    assert st["alerts"], "the soak session fires alerts all along"

    head, tail = statistics.median(times[:WINDOW]), statistics.median(times[-WINDOW:])
    # what a run reads: the new lines, the state, the shards its events touch; flat as the session grows
    read_head = statistics.median(reads[WINDOW:2 * WINDOW])  # once the path map holds every file
    read_tail = statistics.median(reads[-WINDOW:])
    assert read_tail <= read_head * 1.5 + 16_384, (read_head, read_tail)
    # the state minus the health sequence: flat once every cap is reached (digits of the sums may grow)
    settled = sizes[2 * len(sizes) // 3:]
    assert max(settled) <= min(settled) * 1.05 + 256, str((KEYS[len(KEYS) // 2], KEYS[-1]))
    assert objs[-1] - objs[len(objs) // 2] < 500, objs  # no objects pile up in the process
    assert rss[-1] - rss[len(rss) // 2] < 16_384, rss  # kB
    print(f"\nsoak: {RUNS} in-process invocations, {len(s.calls)} calls, transcript {tr.stat().st_size >> 10} KiB; "
          f"median {head * 1000:.2f} ms (first {WINDOW}) -> {tail * 1000:.2f} ms (last {WINDOW}), read "
          f"{read_head / 1024:.1f} -> {read_tail / 1024:.1f} KiB per run; "
          f"state {sf.stat().st_size} B ({len(st['health']['tail'])} B health sequence, second half); "
          f"rss {rss[0]} -> {rss[-1]} kB; hook process median {statistics.median(first_proc) * 1000:.0f} -> "
          f"{statistics.median(last_proc) * 1000:.0f} ms")
