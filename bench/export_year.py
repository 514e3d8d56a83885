"""`export --otlp` over a year of history, against an earlier build, interleaved:
``python -m bench.export_year HOME --old ROOT [--new ROOT] [--rounds 3]``.

HOME is a year made by `python -m bench.year OUT` (OUT/home). Each round, in turn: the earlier
build's export (`--old ROOT`: its package root, on PYTHONPATH) on a fresh state folder, and again
on it (warm: what that build keeps, if anything); this build's export on a fresh state folder
(cold: nothing kept yet); this build's again (warm: nothing changed); and this build's again after
one transcript changed (the newest: its mtime moved, as a session a user is in keeps changing).
Every run sends to a loopback OTLP/HTTP receiver (tests/otlp_receiver.py), a whole process, its
wall and CPU time (user + system, from wait4) measured; the medians and their ratios to the earlier
build's run are printed, with the data points the receiver got from each (the same for every run).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(root: Path, home: Path, state: Path, url: str) -> tuple[float, float]:
    """(wall s, CPU s) of one export, its output discarded."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "CODEX_HOME": str(home / ".codex"),
           "CLAUDE_CONFIG_DIR": str(home / ".claude"), "SESSION_WATCHER_HOME": str(state), "TZ": "UTC",
           "PYTHONPATH": str(root)}
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "session_watcher", "export", "--otlp", url],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _pid, status, ru = os.wait4(p.pid, 0)
    if status:
        raise SystemExit(f"export failed ({status}) with {root}")
    return time.perf_counter() - t0, ru.ru_utime + ru.ru_stime


def newest(home: Path) -> Path:
    return max((p for p in (home / ".claude" / "projects").rglob("*.jsonl") if "subagents" not in p.parts),
               key=lambda p: p.stat().st_mtime)


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(ROOT))
    from tests.otlp_receiver import Receiver

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("home", type=Path)
    ap.add_argument("--old", type=Path, required=True, help="the earlier build's package root")
    ap.add_argument("--new", type=Path, default=ROOT, help="this build's package root (default: this checkout)")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args(argv)
    rows: dict[str, list[tuple[float, float]]] = {"earlier build": [], "earlier, warm": [], "cold": [], "warm": [],
                                                  "one changed": []}
    sent: dict[str, set[int]] = {k: set() for k in rows}
    changed = newest(a.home)
    with Receiver() as r, tempfile.TemporaryDirectory(prefix="sw-export-year-") as tmp:
        for n in range(a.rounds):
            mine = Path(tmp, f"new{n}")
            for name, root, state in (("earlier build", a.old, Path(tmp, f"old{n}")),
                                      ("earlier, warm", a.old, Path(tmp, f"old{n}")), ("cold", a.new, mine),
                                      ("warm", a.new, mine), ("one changed", a.new, mine)):
                if name == "one changed":
                    st = changed.stat()
                    os.utime(changed, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
                r.requests.clear()
                rows[name].append(run(root, a.home, state, r.url))
                sent[name].add(len(r.points("session_watcher.")))
                print(f"round {n + 1} {name}: {rows[name][-1][0]:.2f} s wall, {rows[name][-1][1]:.2f} s CPU",
                      file=sys.stderr)
    old = rows["earlier build"]
    base = statistics.median(w for w, _ in old), statistics.median(c for _, c in old)
    print(f"{'run':<14} {'wall s':>8} {'CPU s':>8} {'wall ratio':>11} {'CPU ratio':>10}  data points")
    for name, got in rows.items():
        wall, cpu = statistics.median(w for w, _ in got), statistics.median(c for _, c in got)
        print(f"{name:<14} {wall:8.2f} {cpu:8.2f} {wall / base[0]:11.3f} {cpu / base[1]:10.3f}  "
              f"{', '.join(map(str, sorted(sent[name])))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
