"""The warm report when one transcript changed, against `session-watcher --version`, interleaved:
``python -m bench.report_changed [--files 300,3000,10000] [--rounds 7] [--also OTHER_PYTHON]``.

For each corpus size a generated corpus of small transcripts (bench.generate, cached in
bench/out/cache) is copied to a temp projects folder, its files' mtimes spread evenly over the last
year (a year of sessions; the folders' a day old) and reported once cold (the index is built);
then each round appends one API call (a line of the file itself, its message id made new) to one
transcript, the newest one (the session a user is in keeps growing), and runs, in turn,
`session-watcher --version`, `report --json` over the folder, the same with nothing changed
since, and the same again with the index's full pass due (what one warm run in `FULL_EVERY_NS`, ten
minutes, does: every file `stat`ed, `reports/index.py`). Each command is a whole process, its CPU
time (user + system, from wait4) and wall time measured; the medians and their ratio to `--version`
of the same rounds are printed.

`--also PYTHON` runs the same report with another install's interpreter (an earlier build, for a
before/after), on its own index, in the same rounds.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.generate import CorpusSpec, write_corpus

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / "out" / "cache"


def spec_of(files: int) -> CorpusSpec:
    """Small transcripts (median 15 kB), as many as asked, over one project per 75 files."""
    return CorpusSpec(files=files, total=files * 25_000, median=15_000, p99=250_000, largest=2_000_000,
                      projects=max(2, files // 75))


def run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall ms, CPU ms) of one process, its output discarded (a pipe: not a terminal)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=env)
    _pid, status, ru = os.wait4(p.pid, 0)
    p.returncode = 0
    if status:
        raise SystemExit(f"failed ({status}): {argv}")
    return (time.perf_counter() - t0) * 1000, (ru.ru_utime + ru.ru_stime) * 1000


_MSG = re.compile(rb'"id":"(msg_[^"]*)"')


def grow(path: Path, n: int) -> None:
    """Append one API call: the file's last line with a message id, that id made new."""
    lines = path.read_bytes().splitlines()
    line = next((x for x in reversed(lines) if _MSG.search(x) and b'"usage"' in x), lines[-1])
    new = _MSG.sub(lambda m: b'"id":"' + m.group(1) + f"_r{n}".encode() + b'"', line, count=1)
    with path.open("ab") as fh:
        fh.write(new + b"\n")


def measure(files: int, rounds: int, pythons: dict[str, Path], tmp: Path, cache: Path = CACHE,
            ) -> dict[str, tuple[list[float], list[float]]]:
    corpus = cache / f"changed-{files}"
    write_corpus(corpus, spec_of(files))
    projects = tmp / f"projects-{files}"
    shutil.copytree(corpus / "projects", projects)
    files_in = sorted(projects.rglob("*.jsonl"))
    now = time.time()
    for k, path in enumerate(files_in):
        when = now - 365 * 86400 * (len(files_in) - k) / len(files_in)
        os.utime(path, (when, when))
    for folder in [projects, *(p for p in projects.rglob("*") if p.is_dir())]:
        os.utime(folder, (now - 86400, now - 86400))
    newest = files_in[-1]
    home = tmp / f"home-{files}"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "SESSION_WATCHER"))}
    env |= {"SESSION_WATCHER_HOME": str(home), "HOME": str(home)}

    def report(name: str, python: Path) -> list[str]:
        return [str(python), "-I", "-m", "session_watcher", "report", "--json", "--projects", str(projects),
                "--index", str(tmp / f"index-{files}-{name}.sqlite3")]

    for name, python in pythons.items():
        run(report(name, python), env)  # cold: builds the index
    first = next(iter(pythons.values()))
    cases = {"session-watcher --version": [str(first), "-I", "-m", "session_watcher", "--version"]}
    full_due: dict[str, Path] = {}
    for name, python in pythons.items():
        cases[f"report --json, one changed ({name})"] = report(name, python)
        cases[f"report --json, none changed ({name})"] = report(name, python)
        full = f"report --json, full pass due ({name})"
        cases[full] = report(name, python)
        full_due[full] = tmp / f"index-{files}-{name}.sqlite3"
    got: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in cases}
    for n in range(rounds + 1):
        grow(newest, n)
        for case, argv in cases.items():
            if case in full_due:
                forget_full_pass(full_due[case])
            w, c = run(argv, env)
            if n:  # the first round settles the page cache
                got[case][0].append(w)
                got[case][1].append(c)
    return got


def forget_full_pass(index: Path) -> None:
    """Make the index's next run a full pass (as once every FULL_EVERY_NS)."""
    with sqlite3.connect(index) as conn:
        conn.execute("DELETE FROM meta WHERE key = 'fullPass'")
    conn.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.report_changed", description=__doc__)
    ap.add_argument("--files", default="300,3000,10000")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--also", type=Path, help="another install's python, timed in the same rounds")
    ap.add_argument("--cache", type=Path, default=CACHE, help="where the generated corpora are kept")
    args = ap.parse_args(argv)
    pythons = {"this": Path(sys.executable)}
    if args.also:
        pythons["also"] = args.also
    print(f"python: {sys.executable}" + (f"; also: {args.also}" if args.also else ""))
    with tempfile.TemporaryDirectory(prefix="sw-report-changed-") as tmp:
        for files in (int(x) for x in args.files.split(",")):
            got = measure(files, args.rounds, pythons, Path(tmp), args.cache)
            base_w = statistics.median(got["session-watcher --version"][0])
            base_c = statistics.median(got["session-watcher --version"][1])
            print(f"\n{files} files{'':30s} {'wall ms':>8s} {'x':>5s} {'cpu ms':>8s} {'x':>5s}")
            for name, (walls, cpus) in got.items():
                w, c = statistics.median(walls), statistics.median(cpus)
                print(f"{name:45s} {w:8.1f} {w / base_w:5.2f} {c:8.1f} {c / base_c:5.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
