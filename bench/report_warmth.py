"""The warmth report's index: first run (empty index) versus second run (unchanged corpus).

``python -m bench.report_warmth [--corpus fixtures|quick|medium|DIR] [--repeat N]``

Each run is a fresh process (`python -m session_watcher report --json`), the way a user runs it, so the
figures include interpreter start-up; the in-process time of `run_report` is printed as well.
The index is deleted before every first run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "transcripts"


def fixtures_corpus(dest: Path) -> Path:
    proj = dest / "projects" / "-home-user-spotter"
    proj.mkdir(parents=True, exist_ok=True)
    for item in FIXTURES.iterdir():
        if item.suffix == ".jsonl":
            shutil.copy2(item, proj / item.name)
        elif item.is_dir() and not (proj / item.name).exists():
            shutil.copytree(item, proj / item.name)
    return dest / "projects"


def synthetic_corpus(dest: Path, kind: str) -> Path:
    from bench.generate import CorpusSpec, write_corpus

    spec = (
        CorpusSpec.quick()
        if kind == "quick"
        else CorpusSpec(files=400, total=300_000_000, median=150_000, p99=6_000_000, largest=40_000_000, projects=12)
    )
    write_corpus(dest, spec)
    return dest / "projects"


def one_run(projects: Path, index: Path) -> tuple[float, float, dict[str, object]]:
    """Wall time of the whole process, and the in-process time of the scan and report."""
    code = (
        "import json,sys,time;from session_watcher.reports.collect import run_report;t=time.perf_counter();"
        f"d,s=run_report([{str(projects)!r}],{str(index)!r});"
        "print(json.dumps({'t':time.perf_counter()-t,'index':d['index'],'sessions':len(d['sessions'])}))"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    wall = time.perf_counter() - t0
    info = json.loads(r.stdout)
    return wall, float(info["t"]), info


def measure(projects: Path, repeat: int) -> dict[str, object]:
    size = sum(p.stat().st_size for p in projects.rglob("*.jsonl"))
    files = sum(1 for _ in projects.rglob("*.jsonl"))
    firsts, seconds, first_in, second_in = [], [], [], []
    info: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        index = Path(tmp) / "index.sqlite3"
        for _ in range(repeat):
            for suffix in ("", "-journal", "-wal", "-shm"):
                Path(str(index) + suffix).unlink(missing_ok=True)
            w, t, _i = one_run(projects, index)
            firsts.append(w)
            first_in.append(t)
            w, t, info = one_run(projects, index)
            seconds.append(w)
            second_in.append(t)
    f, s = statistics.median(firsts), statistics.median(seconds)
    fi, si = statistics.median(first_in), statistics.median(second_in)
    return {
        "bytes": size,
        "files": files,
        "sessions": info.get("sessions"),
        "first_s": round(f, 4),
        "second_s": round(s, 4),
        "speedup_process": round(f / s, 1),
        "first_inproc_s": round(fi, 4),
        "second_inproc_s": round(si, 4),
        "speedup_inproc": round(fi / si, 1),
        "second_run_index": info.get("index"),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.report_warmth", description=__doc__)
    ap.add_argument("--corpus", default="fixtures", help="fixtures, quick, medium, or a projects folder")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--work", type=Path, default=ROOT / "bench" / "out" / "report-warmth")
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    if args.corpus == "fixtures":
        projects = fixtures_corpus(args.work / "fixtures")
    elif args.corpus in ("quick", "medium"):
        projects = synthetic_corpus(args.work / args.corpus, args.corpus)
    else:
        projects = Path(args.corpus)
    print(json.dumps({"corpus": args.corpus, **measure(projects, args.repeat)}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
