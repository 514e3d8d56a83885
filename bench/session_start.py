"""What the synchronous SessionStart hook adds to a session's start: ``python -m bench.session_start
[--rounds N]``.

The client waits for `hook SessionStart inject` at every session start (the async SessionStart
hook that folds it does not wait for). Timed as whole processes through the launcher install.sh
writes (as Bench.launcher), interleaved in shuffled rounds with the reference `python -I -c pass`,
so a loaded machine slows both alike: with no handoff pending (every start but one after a
handoff), and with one pending (the note taken and printed). Prints medians, p95 and the ratios;
asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from bench import measure
from bench.run import Bench, scale_for


def _pending(home: Path, project: Path, n: int) -> None:
    """A handoff waiting for the project, as `session-watcher handoff` leaves it (a 5,000-character note)."""
    import os

    saved = os.environ.get("SESSION_WATCHER_HOME")
    os.environ["SESSION_WATCHER_HOME"] = str(home)
    try:
        from session_watcher.state import handoffs

        note = f"[session-watcher handoff from session parent-{n}, written now; priced at 50,000 tokens]\n"
        handoffs.write_pending({"parentSession": f"parent-{n}", "project": str(project), "createdAt": time.time(),
                                "note": note + "x" * 5000})
    finally:
        if saved is None:
            del os.environ["SESSION_WATCHER_HOME"]
        else:
            os.environ["SESSION_WATCHER_HOME"] = saved


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=40)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        python = Path(sys.executable)
        b = Bench(scale_for(True, None), tmp / "out", tmp, python, python.parent)
        project = tmp / "proj"
        project.mkdir()
        home = tmp / "home"
        hook = [*b.launcher("hook"), "SessionStart", "inject"]
        plan = {
            "python -I -c pass": [str(python), "-I", "-c", "pass"],
            "SessionStart inject, nothing pending": hook,
            "SessionStart inject, a handoff pending (taken, 5 kB note printed)": hook,
        }
        times: dict[str, list[float]] = {k: [] for k in plan}
        rng = random.Random(7)
        for rnd in range(args.rounds + 1):  # round 0 warms the page cache
            order = list(plan)
            rng.shuffle(order)
            for name in order:
                pending = "pending" in name and "nothing" not in name
                if pending:
                    _pending(home, project, rnd)
                payload = {"session_id": f"child-{rnd}-{len(name)}", "transcript_path": str(tmp / "t.jsonl"),
                           "cwd": str(project), "hook_event_name": "SessionStart", "source": "clear"}
                r = measure.run(plan[name], json.dumps(payload).encode(), env=b.env(home), cwd=project)
                if r.rc != 0 or (pending and b"additionalContext" not in r.stdout):
                    print(f"{name}: failed: rc {r.rc} {r.stderr[-300:]!r}", file=sys.stderr)
                    return 1
                if rnd:
                    times[name].append(r.wall * 1000)
                if pending:  # the child's first prompt sends the note: nothing stays lent
                    for lent in home.glob("**/handoffs/lent/*.json"):
                        lent.unlink()
        base = measure.stats(times["python -I -c pass"])["median"]
        for name, values in times.items():
            st = measure.stats(values)
            print(f"{name}: median {st['median']:.1f} ms, p95 {st['p95']:.1f} ms, n {st['n']}, "
                  f"{st['median'] / base:.2f}x python -I -c pass")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
