"""The loops that run once per line or call of a whole history, in-process, against another checkout.

``python -m bench.hotpaths --code DIR [--rounds 10] [--repeat 5] [--corpus DIR ...]``

Each round starts one fresh process per tree, alternately (this tree, then ``DIR``'s: the same
interpreter and packages, that tree's ``session_watcher``), which reads the corpora once, then
times each stage ``--repeat`` times and keeps its minimum:

* fold: `reports.collect.build_sessions` over the report parser's rows (`warmth.fold_session`);
* part: `reports.warmth.session_part` of every session, as the report's text path calls it;
* part-plain: the same without ``scatter_text`` (the plain path the tests hold the text path to);
* bulk: `core.bulkparse.parse_lines` of every transcript's lines (replay's and backtest's parser);
* reader: `state.reader.read_new` through every transcript in 64 KiB reads (the hook's reader);
* dir: `reports.parse.head_dir` of every file's first 64 KiB, 50 times over (the cold report's
  working folder; one pass is too short to time).

Per stage: the median over rounds of each tree's minimum, and the ratio this tree / ``DIR``. The
corpora default to tests/fixtures/transcripts, the calibration sessions and ../shared/fixtures/corpus*
where they are. For a refactor's before/after; nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = next((p for p in (ROOT.parent / "shared" / "fixtures", ROOT.parent.parent / "shared" / "fixtures")
               if p.is_dir()), ROOT.parent / "shared" / "fixtures")

CHILD = r"""
import gzip, json, os, sys, tempfile, time
code, repeat, corpora = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
sys.path.insert(0, code)
import session_watcher
assert session_watcher.__file__.startswith(code), session_watcher.__file__
from session_watcher.agents.claude_code import bulkparse, transcript
from session_watcher.agents.claude_code import discover
from session_watcher.reports import collect, index, parse, warmth
from tests.builders import build_sessions
from session_watcher.state import reader

sources = [s for root in corpora for s in discover.discover([root])]
rows = {s.path: parse.parse_chunk(open(s.path, "rb").read())[0] for s in sources}
lines = [transcript.split_lines(open(s.path, "rb").read())[0] for s in sources]
heads = [open(s.path, "rb").read(1 << 16) for s in sources]
sessions = build_sessions(sources, rows)

def best(f):
    out = float("inf")
    for _ in range(repeat):
        t = time.perf_counter(); f(); out = min(out, time.perf_counter() - t)
    return out

def read_all():
    for s in sources:
        cursor = None
        while True:
            got, after, skipped = reader.read_new(s.path, cursor, 1 << 16)
            if not got and not skipped and (cursor or {}).get("skip") == after.get("skip"):
                break
            cursor = after

import gc
gc.disable()  # as the report runs; the other stages allocate little that lives
print(json.dumps({
    "fold": best(lambda: build_sessions(sources, rows)),
    "part": best(lambda: [warmth.session_part(s, None, 3600.0, True) for s in sessions]),
    "part-plain": best(lambda: [warmth.session_part(s, None, 3600.0, False) for s in sessions]),
    "bulk": best(lambda: [bulkparse.parse_lines(ls) for ls in lines]),
    "reader": best(read_all),
    "dir": best(lambda: [parse.head_dir(h) for _ in range(50) for h in heads]),
    "files": len(sources), "sessions": len(sessions), "calls": sum(len(s.calls) for s in sessions),
}))
"""


def default_corpora(work: Path) -> list[str]:
    """The fixtures, the calibration sessions (unpacked into `work`) and the shared corpora found."""
    import gzip

    calib = work / "calibration"
    calib.mkdir(parents=True, exist_ok=True)
    for gz in sorted((ROOT / "tests" / "fixtures" / "calibration").glob("*.jsonl.gz")):
        out = calib / gz.name.removesuffix(".gz")
        if not out.exists():
            out.write_bytes(gzip.decompress(gz.read_bytes()))
    found = [ROOT / "tests" / "fixtures" / "transcripts", calib]
    found += [SHARED / name for name in ("corpus", "corpus2") if (SHARED / name).is_dir()]
    return [str(p) for p in found]


def one(code: str, repeat: int, corpora: list[str]) -> dict[str, Any]:
    r = subprocess.run([sys.executable, "-c", CHILD, code, str(repeat), *corpora], capture_output=True, text=True,
                       check=False)
    if r.returncode != 0:
        raise SystemExit(f"{code}: {r.stderr[-2000:]}")
    got: dict[str, Any] = json.loads(r.stdout)
    return got


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.hotpaths", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--code", required=True, help="the other checkout (its folder holding session_watcher/)")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--corpus", action="append", help="a projects or project folder (default: see above)")
    ap.add_argument("--work", type=Path, default=ROOT / "bench" / "out" / "hotpaths")
    args = ap.parse_args(argv)
    corpora = args.corpus or default_corpora(args.work)
    trees = {"this": str(ROOT), "other": str(Path(args.code).resolve())}
    runs: dict[str, list[dict[str, Any]]] = {"this": [], "other": []}
    for k in range(args.rounds):
        for name in (("this", "other") if k % 2 == 0 else ("other", "this")):
            runs[name].append(one(trees[name], args.repeat, corpora))
    first = runs["this"][0]
    out: dict[str, Any] = {"trees": trees, "rounds": args.rounds, "repeat": args.repeat,
                           "files": first["files"], "sessions": first["sessions"], "calls": first["calls"]}
    for stage in ("fold", "part", "part-plain", "bulk", "reader", "dir"):
        this = statistics.median(r[stage] for r in runs["this"])
        other = statistics.median(r[stage] for r in runs["other"])
        out[stage] = {"this_ms": round(this * 1e3, 2), "other_ms": round(other * 1e3, 2),
                      "ratio": round(this / other, 3)}
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
