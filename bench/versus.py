"""Issue 16's comparisons, each side by side with its reference in the same run:
``python -m bench.versus [--sections report,replay] [--repeat 3] [--out bench/out]``.

* report: ``session-watcher report --json`` cold (a new index each time) against
  ``ccusage session --json --offline`` over the same folder, alternating, median of ``--repeat``,
  on the 1.2 GB generated corpus (bench.generate) and on a corpus of real sessions replicated to
  250 MB (bench.real_corpus: tests/fixtures, plus ../shared/fixtures/corpus when it is there). Wall
  time, CPU time (user + system, children included, from wait4) and peak RSS of each process; then
  one instrumented cold run that splits the time: start-up, read, read + parse + fold (in N
  processes), index writes, merge, render (JSON text).
* replay: ``session-watcher replay --json`` of a 100 MB generated session, MB/s, median of
  ``--repeat``.

``--fresh-venv`` measures the venv ``install.sh`` makes (a regular install, as a user runs it)
instead of this one (an editable install adds its import finder to every start). The hook against
``python -I -c pass`` is bench.run's (``--fresh-venv``: the launchers install.sh writes) and
bench.hookcpu's.

Writes OUT/versus.md and OUT/versus.json. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import generate, real_corpus
from bench import run as bench_run

ROOT = Path(__file__).resolve().parent.parent
# ../shared beside a clone; ../../shared beside a worktree in a folder of worktrees
SHARED_CORPUS = next((p for p in (ROOT.parent / "shared" / "fixtures" / "corpus",
                                  ROOT.parent.parent / "shared" / "fixtures" / "corpus") if p.is_dir()),
                     ROOT.parent / "shared" / "fixtures" / "corpus")

SPLIT = r"""
import json, os, sys, time
t_start = time.perf_counter()
from session_watcher.agents.claude_code import discover
from session_watcher.reports import collect, index, scan, warmth
from session_watcher.state import pool
T = {}
def timed(owner, name, key):
    f = getattr(owner, name)
    def g(*a, **k):
        t = time.perf_counter(); r = f(*a, **k); T[key] = T.get(key, 0.0) + time.perf_counter() - t; return r
    setattr(owner, name, g)
timed(index, "scan_all", "scan"); timed(index.Index, "refresh", "refresh")
timed(collect._Summarize, "parts", "fold"); timed(warmth, "report_of_parts", "report")
projects, db = sys.argv[1], sys.argv[2]
t = time.perf_counter()
for s in discover.discover([projects]):
    fd = os.open(s.path, os.O_RDONLY)
    while os.read(fd, scan.READ_BLOCK):
        pass
    os.close(fd)
read = time.perf_counter() - t
t0 = time.perf_counter()
text = collect.run_report_json([projects], db)
total = time.perf_counter() - t0
print(json.dumps({"read": read, "scan": T["scan"], "index": T["refresh"] - T["scan"], "fold": T["fold"],
                  "report": T["report"], "render": total - T["refresh"] - T["fold"] - T["report"],
                  "inProcess": total, "imports": t0 - t_start - read, "processes": pool.cores()}))
"""


def wait_run(argv: list[str], env: dict[str, str], cwd: Path, out: Path | None = None) -> dict[str, float]:
    """Wall seconds, CPU seconds (user + system, waited-for children included) and peak RSS in MB."""
    with (out or Path(os.devnull)).open("wb") as fh:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.DEVNULL, env=env,
                                cwd=cwd)
        _pid, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rssMB": ru.ru_maxrss / 1024, "rc": proc.returncode}


def med(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SESSION_WATCHER", "CLAUDE", "PYTHON"))}
    env["SESSION_WATCHER_HOME"] = str(home)
    env.update(extra)
    return env


def corpora(cache: Path, say: Any) -> list[tuple[str, Path]]:
    out = []
    gen = cache / "corpus"
    say("the generated corpus (bench.generate, cached)")
    generate.write_corpus(gen, generate.CorpusSpec())
    out.append(("generated, 1.2 GB", gen))
    real = cache / "real-corpus"
    sources = [ROOT / "tests" / "fixtures"] + ([SHARED_CORPUS] if SHARED_CORPUS.is_dir() else [])
    if not (real / "projects").is_dir():
        say(f"real sessions from {', '.join(str(s) for s in sources)}, replicated to 250 MB")
        real_corpus.build(sources, real, 250_000_000)
    size = sum(p.stat().st_size for p in (real / "projects").rglob("*.jsonl"))
    out.append((f"real sessions replicated, {size / 1e6:.0f} MB", real))
    return out


def report(res: dict[str, Any], bindir: Path, tmp: Path, cache: Path, repeat: int, say: Any) -> None:
    cc = bench_run.find_ccusage(bench_run.Bench(bench_run.scale_for(True, None), cache.parent, tmp, bindir / "python",
                                                bindir))
    rows = []
    for label, root in corpora(cache, say):
        projects = root / "projects"
        files = sum(1 for _ in projects.rglob("*.jsonl"))
        size = sum(p.stat().st_size for p in projects.rglob("*.jsonl"))
        ours: list[dict[str, float]] = []
        theirs: list[dict[str, float]] = []
        for i in range(repeat):
            say(f"{label}: round {i + 1}/{repeat}")
            if cc is not None:
                theirs.append(wait_run([*cc, "session", "--json", "--offline"],
                                       env_for(tmp / "home-cc", CLAUDE_CONFIG_DIR=str(root)), tmp))
            ours.append(wait_run([str(bindir / "session-watcher"), "report", "--projects", str(projects), "--json",
                                  "--index", str(tmp / f"index-{label[:4]}-{i}.sqlite3")],
                                 env_for(tmp / f"home-{i}"), tmp))
        split_out = subprocess.run([str(bindir / "python"), "-c", SPLIT, str(projects), str(tmp / "split.sqlite3")],
                                   capture_output=True, text=True, env=env_for(tmp / "home-split"), cwd=ROOT,
                                   check=False)
        (tmp / "split.sqlite3").unlink(missing_ok=True)
        split = json.loads(split_out.stdout) if split_out.returncode == 0 else {"error": split_out.stderr[-300:]}
        row: dict[str, Any] = {"corpus": label, "files": files, "bytes": size, "ours": ours, "ccusage": theirs,
                               "split": split}
        for key in ("wall", "cpu", "rssMB"):
            row[f"ours_{key}"] = med(ours, key)
            if theirs:
                row[f"cc_{key}"] = med(theirs, key)
        if theirs:
            row["ratio"] = row["ours_wall"] / row["cc_wall"]
        rows.append(row)
    res["report"] = rows


def replay(res: dict[str, Any], bindir: Path, tmp: Path, cache: Path, repeat: int, say: Any) -> None:
    path = cache / "replay-100MB.jsonl"
    if not path.exists() or path.stat().st_size < 99_000_000:
        say("generating the 100 MB session")
        generate.write_transcript(path, 100_000_000, 12)
    runs = [wait_run([str(bindir / "session-watcher"), "replay", str(path), "--json"], env_for(tmp / "home-r"), tmp)
            for _ in range(repeat)]
    mb = path.stat().st_size / 1e6
    res["replay"] = {"mb": mb, "runs": runs, "wall": med(runs, "wall"), "cpu": med(runs, "cpu"),
                     "mbPerS": mb / med(runs, "wall"), "mbPerCpuS": mb / med(runs, "cpu")}


def render(res: dict[str, Any]) -> str:
    load = f"load average at start {res['load'][0]:.1f}, at end {res['loadEnd'][0]:.1f}"
    out = [f"# bench.versus ({res['when']}, {load}, {res.get('install', 'this venv')})", ""]
    for row in res.get("report", []):
        out += [f"## report --json cold vs ccusage session --json --offline: {row['corpus']} "
                f"({row['files']} files, {row['bytes'] / 1e6:.0f} MB), alternating, median of {len(row['ours'])}", "",
                "| | wall s | CPU s | peak RSS MB |", "|---|---|---|---|",
                f"| session-watcher report --json (cold) | {row['ours_wall']:.2f} | {row['ours_cpu']:.2f} "
                f"| {row['ours_rssMB']:.0f} |"]
        if "cc_wall" in row:
            out += [f"| ccusage session --json --offline | {row['cc_wall']:.2f} | {row['cc_cpu']:.2f} "
                    f"| {row['cc_rssMB']:.0f} |",
                    f"| ratio (ours / ccusage) | {row['ratio']:.2f} | {row['ours_cpu'] / row['cc_cpu']:.2f} | |"]
        sp = row["split"]
        if "error" not in sp:
            out += ["", f"Split of one cold run (s): start-up {sp['imports']:.2f}; read alone (1 process) "
                    f"{sp['read']:.2f}; read + parse + each session's fold and part of the report, in "
                    f"{sp['processes']} processes, {sp['scan']:.2f}; index writes {sp['index']:.2f}; sessions "
                    f"not read whole, folded after {sp['fold']:.2f}; the parts merged into the report "
                    f"{sp['report']:.2f}; render (JSON text, stored in the index) {sp['render']:.2f}."]
        out.append("")
    rp = res.get("replay")
    if rp:
        out += [f"## replay --json of a {rp['mb']:.0f} MB session, median of {len(rp['runs'])}", "",
                f"{rp['wall']:.2f} s wall = {rp['mbPerS']:.0f} MB/s ({rp['cpu']:.2f} s CPU = "
                f"{rp['mbPerCpuS']:.0f} MB per CPU second)", ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.versus", description=__doc__)
    ap.add_argument("--sections", default="report,replay")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    ap.add_argument("--fresh-venv", action="store_true",
                    help="measure the venv install.sh makes (what a user runs) instead of this one")
    args = ap.parse_args(argv)

    def say(msg: str) -> None:
        print(f"[versus {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    python = bench_run.fresh_venv(args.out.resolve(), say) if args.fresh_venv else Path(sys.executable)
    bindir = python.parent

    cache = args.out.resolve() / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    res: dict[str, Any] = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load": os.getloadavg(),
                           "python": str(python), "install": "install.sh's venv" if args.fresh_venv else "this venv"}
    sections = set(args.sections.split(","))
    with tempfile.TemporaryDirectory(prefix="sw-versus-") as tmp:
        if "report" in sections:
            report(res, bindir, Path(tmp), cache, args.repeat, say)
        if "replay" in sections:
            replay(res, bindir, Path(tmp), cache, args.repeat, say)
    res["loadEnd"] = os.getloadavg()
    (args.out / "versus.json").write_text(json.dumps(res, indent=1))
    (args.out / "versus.md").write_text(render(res))
    print(render(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
