"""The cold report of this checkout against others, in the same rounds:
``python -m bench.report_trees --code DIR [--code DIR ...] [--rounds 8] [--files 3000] [--size 300MB]``.

A generated corpus (bench.generate: ``--files`` transcripts, ``--size`` in all, cached in
bench/out/cache) is reported by ``python -m session_watcher report --projects CORPUS --json``, cold
(a new temp home, so a new index, each run), by each tree in turn: this one and each ``--code``
(its folder holding ``session_watcher/``, put first on PYTHONPATH), the order rotated every round.
Name main twice (``--code MAIN --code MAIN``) for an A/A control: the spread between the two is the
noise a ratio is read against. Each tree's modules are compiled first (``compileall``): with
PYTHONDONTWRITEBYTECODE set, a fresh checkout would compile its sources again on every run.
Per tree: the median and least wall and CPU time (user + system, children included, from wait4),
and each ratio to the first ``--code``. For a before/after; nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import sys
import tempfile
from pathlib import Path

from bench import generate, measure

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.report_trees", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--code", action="append", required=True, help="another checkout (repeat it for an A/A control)")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--files", type=int, default=3000)
    ap.add_argument("--size", type=generate.parse_size, default=generate.parse_size("300MB"))
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    args = ap.parse_args(argv)
    spec = generate.CorpusSpec(files=args.files, total=args.size, median=max(1, args.size // args.files // 3),
                               p99=max(1, args.size // 200), largest=max(1, args.size // 15), projects=40)
    root = args.out.resolve() / "cache" / f"trees-{args.files}-{args.size}"
    generate.write_corpus(root, spec)
    trees = [("this", str(ROOT))] + [(f"other{n}", str(Path(c).resolve())) for n, c in enumerate(args.code, 1)]
    for _name, tree in trees:
        compileall.compile_dir(os.path.join(tree, "session_watcher"), quiet=1)
    walls: dict[str, list[float]] = {name: [] for name, _ in trees}
    cpus: dict[str, list[float]] = {name: [] for name, _ in trees}
    load = os.getloadavg()
    for k in range(args.rounds):
        for name, tree in trees[k % len(trees):] + trees[:k % len(trees)]:
            with tempfile.TemporaryDirectory(prefix="sw-trees-") as tmp:
                env = {**os.environ, "PYTHONPATH": tree, "HOME": tmp, "SESSION_WATCHER_HOME": f"{tmp}/sw",
                       "CLAUDE_CONFIG_DIR": f"{tmp}/claude", "CODEX_HOME": f"{tmp}/codex"}
                argv_ = [sys.executable, "-m", "session_watcher", "report", "--projects", str(root / "projects"),
                         "--json"]
                r = measure.run_rss(argv_, env=env, cwd=Path(tmp))
                if r.rc != 0:
                    raise SystemExit(f"{tree}: exit {r.rc}: {r.stderr.decode(errors='replace')[-500:]}")
                walls[name].append(r.wall)
                cpus[name].append(r.cpu)
    base = trees[1][0]
    print(f"{args.files} files, {args.size:,} bytes; {args.rounds} rounds; "
          f"load {load[0]:.1f} -> {os.getloadavg()[0]:.1f}")
    for name, tree in trees:
        w, c = walls[name], cpus[name]
        print(f"{name:7} {tree}: wall median {statistics.median(w):.3f} s (least {min(w):.3f}), CPU median "
              f"{statistics.median(c):.3f} s (least {min(c):.3f}); / {base}: wall "
              f"{statistics.median(w) / statistics.median(walls[base]):.3f}, CPU "
              f"{statistics.median(c) / statistics.median(cpus[base]):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
