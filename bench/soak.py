"""Soak timing: ``python -m bench.soak [--runs N] [--window W]``.

The reliability soak (tests/test_reliability_soak.py) checks that a hook's work does not grow with
the session by counting the bytes each invocation reads; the time claim is measured here instead,
as a ratio within one run: the median in-process time of the last W invocations against the first
W, over one synthetic session growing by one API call every other invocation. Nothing asserts a
time; a ratio near 1 means the cost does not grow with the session.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from bench.synth import SynthSession


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.soak")
    parser.add_argument("--runs", type=int, default=3000)
    parser.add_argument("--window", type=int, default=300)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="sw-soak-") as tmp:
        root = Path(tmp)
        # every folder under `root`, message alerts (as the reliability tests' harness sets a hook up)
        os.environ.update({"SESSION_WATCHER_HOME": str(root / "swhome"), "HOME": str(root / "home"),
                           "CLAUDE_CONFIG_DIR": str(root / "claude")})
        (root / "swhome" / "config").mkdir(parents=True)
        (root / "swhome" / "config" / "config.toml").write_text(
            '[notify]\nchannels = ["message"]\nfallback = "none"\n')
        project = root / "proj"
        (project / "src").mkdir(parents=True)
        import session_watcher.hooks.run
        from session_watcher.hooks.run import run

        # the synthetic turns end on tool results: no closing line to wait for
        session_watcher.hooks.run.STOP_WAIT = 0.0

        s = SynthSession("soak", os.path.realpath(project), seed=21, files=40)
        tr = root / "soak.jsonl"
        tr.write_bytes(b"")
        times: list[float] = []
        for i in range(args.runs):
            c = s.next_call(growth=300) if i % 2 == 0 else None
            if c is not None:
                with open(tr, "ab") as fh:
                    fh.write(s.lines_of(c))
            event = "Stop" if i % 3 == 0 else "PostToolUse"
            payload = s.hook_payload(str(tr), event, bash_id=f"toolu_soak_{i}")
            raw = json.dumps(payload).encode()
            t0 = time.perf_counter()
            run(event, raw)
            times.append(time.perf_counter() - t0)
        head = statistics.median(times[: args.window])
        tail = statistics.median(times[-args.window:])
        print(f"soak: {args.runs} in-process hook runs, {len(s.calls)} calls, transcript "
              f"{tr.stat().st_size >> 10} KiB; median {head * 1000:.2f} ms (first {args.window}) -> "
              f"{tail * 1000:.2f} ms (last {args.window}); last/first {tail / head:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
