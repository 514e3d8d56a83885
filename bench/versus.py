"""Issue 16's comparisons, each side by side with its reference in the same run:
``python -m bench.versus [--sections report,replay] [--repeat 3] [--out bench/out]``.

* report: ``session-watcher report --json`` cold (a new index each time) against
  ``ccusage session --json --offline`` over the same folder, alternating, median of ``--repeat``,
  on the 1.2 GB generated corpus (bench.generate) and on a corpus of real sessions replicated to
  250 MB (bench.real_corpus: tests/fixtures, plus ../shared/fixtures/corpus when it is there). Wall
  time, CPU time (user + system, children included, from wait4) and peak RSS of each process; then
  one instrumented cold run that splits the time: start-up, read, read + parse + fold (in N
  processes), index writes, merge, render (JSON text).
* replay: ``session-watcher replay --json`` of a 100 MB generated session (``--replay-sizes
  100MB,1GB``) against ``ccusage session --json --offline`` over a folder holding only that session,
  alternating, with each ``--also`` venv's replay (a before/after) in the same rounds: wall, CPU and
  peak RSS, median of ``--repeat``.

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
from typing import TYPE_CHECKING, Any

from bench import generate, real_corpus
from bench import run as bench_run

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parent.parent
# ../shared beside a clone; ../../shared beside a worktree in a folder of worktrees
SHARED_CORPUS = next((p for p in (ROOT.parent / "shared" / "fixtures" / "corpus",
                                  ROOT.parent.parent / "shared" / "fixtures" / "corpus") if p.is_dir()),
                     ROOT.parent / "shared" / "fixtures" / "corpus")

SPLIT = r"""
import json, os, sys, time
t_start = time.perf_counter()
from session_watcher.agents.claude_code import discover
from session_watcher.reports import collect, index, merge, scan
from session_watcher.state import pool
T = {}
def timed(owner, name, key):
    f = getattr(owner, name)
    def g(*a, **k):
        t = time.perf_counter(); r = f(*a, **k); T[key] = T.get(key, 0.0) + time.perf_counter() - t; return r
    setattr(owner, name, g)
timed(index, "scan_all", "scan"); timed(index.Index, "refresh", "refresh")
timed(collect._Summarize, "document", "fold"); timed(merge, "build", "report")  # the fold holds the merge
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
print(json.dumps({"read": read, "scan": T["scan"], "index": T["refresh"] - T["scan"], "fold": T["fold"] - T["report"],
                  "report": T["report"], "render": total - T["refresh"] - T["fold"],
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


def replay_input(cache: Path, size: int, say: Any) -> Path:
    """A generated session of `size` bytes, in a projects folder of its own (`CLAUDE_CONFIG_DIR`'s
    `projects/<project>/`), where ccusage finds it and nothing else."""
    label = f"{size // 1_000_000}MB"
    path = cache / f"replay-{label}" / "projects" / "-bench-replay" / f"replay-{label}.jsonl"
    if not path.exists() or path.stat().st_size < size * 0.99:
        say(f"generating the {label} session")
        path.parent.mkdir(parents=True, exist_ok=True)
        generate.write_transcript(path, size, 12)
    return path


def replay(res: dict[str, Any], bindir: Path, tmp: Path, cache: Path, repeat: int, say: Any,
           sizes: list[int] | None = None, also: list[Path] | None = None) -> None:
    """`replay --json` of each generated session against `ccusage session --json --offline` over a
    folder holding only that session (its native binary, when installed), and each `--also` venv's
    replay (an earlier install, for a before/after), in the same rounds: wall, CPU, peak RSS."""
    cc = bench_run.find_ccusage(bench_run.Bench(bench_run.scale_for(True, None), cache.parent, tmp, bindir / "python",
                                                bindir))
    rows = []
    for size in sizes or [100_000_000]:
        path = replay_input(cache, size, say)
        root = path.parent.parent.parent
        cases: dict[str, list[str]] = {"ours": [str(bindir / "session-watcher"), "replay", str(path), "--json"]}
        for i, other in enumerate(also or [], 1):
            cases[f"also #{i}"] = [str(other / "session-watcher"), "replay", str(path), "--json"]
        if cc is not None:
            cases["ccusage"] = [*cc, "session", "--json", "--offline"]
        runs: dict[str, list[dict[str, float]]] = {k: [] for k in cases}
        for i in range(repeat):
            say(f"replay {path.name}: round {i + 1}/{repeat}")
            for name, argv in cases.items():
                env = env_for(tmp / "home-cc", CLAUDE_CONFIG_DIR=str(root)) if name == "ccusage" \
                    else env_for(tmp / f"home-r-{name}")
                runs[name].append(wait_run(argv, env, tmp))
        mb = path.stat().st_size / 1e6
        row: dict[str, Any] = {"mb": mb, "runs": runs, "ccusageBinary": cc[0] if cc else None}
        for name, got in runs.items():
            row[name] = {"wall": med(got, "wall"), "cpu": med(got, "cpu"), "rssMB": med(got, "rssMB")}
        rows.append(row)
    res["replay"] = rows


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
    for rp in res.get("replay") or []:
        ours = rp["ours"]
        out += [f"## replay --json of a {rp['mb']:.0f} MB session, median of {len(rp['runs']['ours'])}", "",
                "| | wall s | CPU s | peak RSS MB | wall x ccusage | CPU x ccusage |", "|---|---|---|---|---|---|"]
        ref = rp.get("ccusage")
        for name in rp["runs"]:
            r = rp[name]
            x = f"{r['wall'] / ref['wall']:.2f} | {r['cpu'] / ref['cpu']:.2f}" if ref else "- | -"
            out.append(f"| {name} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['rssMB']:.0f} | {x} |")
        out += ["", f"ours: {rp['mb'] / ours['wall']:.0f} MB/s, {rp['mb'] / ours['cpu']:.0f} MB per CPU second", ""]
    return "\n".join(out)


class Run:
    """One run of a side-by-side bench (this one, bench.versus_codex, bench.codex_small), the part
    their `main`s share: the arguments all take (`--repeat`, `--out`, `--fresh-venv`, then the
    bench's own), its lines on stderr, the venv it measures, the results' document and its two files,
    OUT/NAME.json and OUT/NAME.md."""

    def __init__(self, name: str, doc: str | None, repeat: int, own: Callable[[argparse.ArgumentParser], None],
                 argv: list[str] | None, **res: Any) -> None:
        ap = argparse.ArgumentParser(prog=f"python -m bench.{name}", description=doc,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
        ap.add_argument("--repeat", type=int, default=repeat)
        ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
        ap.add_argument("--fresh-venv", action="store_true",
                        help="measure the venv install.sh makes (what a user runs) instead of this one")
        own(ap)
        self.name = name
        self.args = args = ap.parse_args(argv)
        self.out: Path = args.out
        self.out.mkdir(parents=True, exist_ok=True)
        self.python = bench_run.fresh_venv(self.out.resolve(), self.say) if args.fresh_venv else Path(sys.executable)
        self.res: dict[str, Any] = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                    "load": os.getloadavg(),
                                    "install": "install.sh's venv" if args.fresh_venv else "this venv", **res}

    def say(self, msg: str) -> None:
        print(f"[{self.name} {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    def ccusage(self, tmp: Path) -> list[str] | None:
        """ccusage's command, as bench.run finds it (its native binary, else its node wrapper)."""
        return bench_run.find_ccusage(bench_run.Bench(bench_run.scale_for(True, None), self.out.resolve(), tmp,
                                                      self.python, self.python.parent))

    def finish(self, render: Callable[[dict[str, Any]], str]) -> int:
        """The load at the end; the document written as JSON and as `render`'s text, which is printed."""
        self.res["loadEnd"] = os.getloadavg()
        (self.out / f"{self.name}.json").write_text(json.dumps(self.res, indent=1))
        text = render(self.res)
        (self.out / f"{self.name}.md").write_text(text)
        print(text)
        return 0


def _arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--sections", default="report,replay")
    ap.add_argument("--replay-sizes", default="100MB", help="replay's generated sessions (e.g. 100MB,1GB)")
    ap.add_argument("--also", type=Path, action="append", default=[],
                    help="another venv's bin folder whose replay runs in the same rounds (a before/after)")


def main(argv: list[str] | None = None) -> int:
    run = Run("versus", __doc__, 3, _arguments, argv)
    args = run.args
    bindir = run.python.parent
    run.res["python"] = str(run.python)
    cache = run.out.resolve() / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    sections = set(args.sections.split(","))
    with tempfile.TemporaryDirectory(prefix="sw-versus-") as tmp:
        if "report" in sections:
            report(run.res, bindir, Path(tmp), cache, args.repeat, run.say)
        if "replay" in sections:
            sizes = [generate.parse_size(x) for x in args.replay_sizes.split(",")]
            replay(run.res, bindir, Path(tmp), cache, args.repeat, run.say, sizes, args.also)
    return run.finish(render)


if __name__ == "__main__":
    raise SystemExit(main())
