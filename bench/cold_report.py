"""The cold report against ccusage, by user and by total CPU, trees side by side in the same rounds:
``python -m bench.cold_report --corpus DIR [--tree NAME=PATH ...] [--rounds 7] [--out FILE]``.

Each round runs, in turn, ccusage 20.0.24's native binary (``session --json --offline``, found as
bench.run finds it: checked to be the native one, not its node wrapper) and each tree's
``python -m session_watcher report --projects DIR/projects --json`` cold (a new index, HOME and
SESSION_WATCHER_HOME each run), the tree first on PYTHONPATH of this interpreter, from a neutral
folder (`python -m` puts the current folder first on sys.path, before PYTHONPATH), its modules
compiled first; every other round runs them in the reverse order. CPU from
``wait4`` (children included), split into user and system time; peak RSS. Printed: each one's
medians, and each tree's ratio to ccusage by total CPU and by user time, both as the medians'
ratio and as the median of the per-round ratios (ccusage's system time grows with the machine's
load, ours much less: the user-time ratio is the steadier one). ``--no-ccusage`` leaves it out
(a memory run at 2 GB). Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import compileall
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
NATIVE_GLOBS = ("node_modules/@ccusage/ccusage-*/bin/*", "node_modules/@ccusage/ccusage-*/ccusage*")
CCUSAGE_DIRS = (Path("/opt/session-watcher-ci/ccusage"), ROOT / "bench" / "out" / "cache" / "ccusage")


def native_ccusage() -> str | None:
    """ccusage's native binary (its npm package's platform build), or None: the node wrapper would
    add node's start-up to every run, which earlier rounds did not measure."""
    for d in CCUSAGE_DIRS:
        for pattern in NATIVE_GLOBS:
            for n in sorted(d.glob(pattern)):
                if n.is_file() and os.access(n, os.X_OK):
                    with n.open("rb") as fh:
                        if fh.read(4) == b"\x7fELF":
                            return str(n)
    return None


def run(argv: list[str], env: dict[str, str], cwd: str) -> dict[str, float]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=env, cwd=cwd)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _pid, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    rc = os.waitstatus_to_exitcode(status)
    if rc:
        raise SystemExit(f"{argv[:3]} exited {rc}: {err[-400:].decode(errors='replace')}")
    return {"wall": wall, "user": ru.ru_utime, "sys": ru.ru_stime, "cpu": ru.ru_utime + ru.ru_stime,
            "rss": ru.ru_maxrss / 1024}


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SESSION_WATCHER", "CLAUDE", "PYTHON"))}
    env.update(extra)
    return env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.cold_report", description=__doc__)
    ap.add_argument("--corpus", type=Path, required=True, help="a folder holding projects/ (bench.generate's)")
    ap.add_argument("--tree", action="append", default=[], help="NAME=PATH: a source tree (default: this one)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--no-ccusage", action="store_true")
    ap.add_argument("--out", type=Path, help="write every run as JSON here")
    args = ap.parse_args(argv)
    # each tree's path absolute: the runs start in a folder of their own
    trees = [[name, str(Path(path).resolve())] for name, path in (t.split("=", 1) for t in args.tree)] \
        or [["this", str(ROOT)]]
    cc = None if args.no_ccusage else native_ccusage()
    if cc is None and not args.no_ccusage:
        raise SystemExit("ccusage's native binary not found "
                         "(npm install --prefix bench/out/cache/ccusage ccusage@20.0.24)")
    projects = args.corpus.resolve() / "projects"
    names = ([] if cc is None else ["ccusage"]) + [name for name, _ in trees]
    paths = dict(trees)
    runs: dict[str, list[dict[str, float]]] = {n: [] for n in names}
    load0 = os.getloadavg()[0]
    for _name, path in trees:  # each tree's modules compiled, as an install leaves them (a `git archive` has none)
        compileall.compile_dir(os.path.join(path, "session_watcher"), quiet=1)
    with tempfile.TemporaryDirectory(prefix="cold-report-") as tmp:
        for r in range(args.rounds):
            # every other round in the reverse order: no one of them always runs first (or after ccusage)
            for name in names if r % 2 == 0 else names[::-1]:
                home = Path(tmp, f"{name}-{r}")
                home.mkdir()
                if name == "ccusage":
                    assert cc is not None
                    runs[name].append(run([cc, "session", "--json", "--offline"],
                                          clean_env(HOME=str(home), CLAUDE_CONFIG_DIR=str(args.corpus.resolve())),
                                          tmp))
                else:
                    env = clean_env(HOME=str(home), SESSION_WATCHER_HOME=str(home / "sw"), PYTHONPATH=paths[name])
                    runs[name].append(run([sys.executable, "-m", "session_watcher", "report", "--projects",
                                           str(projects), "--json", "--index", str(home / "index.sqlite3")], env, tmp))
                shutil.rmtree(home, ignore_errors=True)
            print(f"[{time.strftime('%H:%M:%S')}] round {r + 1}/{args.rounds}: " + ", ".join(
                f"{n} {runs[n][-1]['user']:.2f}+{runs[n][-1]['sys']:.2f}" for n in names), file=sys.stderr, flush=True)
    load1 = os.getloadavg()[0]

    def med(name: str, key: str) -> float:
        return statistics.median(x[key] for x in runs[name])

    print(f"{args.corpus} ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {load0:.1f} -> {load1:.1f}, "
          f"{args.rounds} rounds)")
    print("| | wall s | user s | sys s | CPU s | peak RSS MB | / ccusage CPU (medians; per round) "
          "| / ccusage user (medians; per round) |")
    print("|---|---|---|---|---|---|---|---|")
    for n in names:
        line = f"| {n} | {med(n, 'wall'):.2f} | {med(n, 'user'):.2f} | {med(n, 'sys'):.2f} | {med(n, 'cpu'):.2f} " \
               f"| {med(n, 'rss'):.0f} |"
        if cc is not None and n != "ccusage":
            per_cpu = statistics.median(a["cpu"] / b["cpu"] for a, b in zip(runs[n], runs["ccusage"], strict=True))
            per_user = statistics.median(a["user"] / b["user"] for a, b in zip(runs[n], runs["ccusage"], strict=True))
            line += f" {med(n, 'cpu') / med('ccusage', 'cpu'):.3f}; {per_cpu:.3f} " \
                    f"| {med(n, 'user') / med('ccusage', 'user'):.3f}; {per_user:.3f} |"
        else:
            line += " | |"
        print(line)
    first = trees[0][0]
    for n, _ in trees[1:]:
        per = statistics.median(a["cpu"] / b["cpu"] for a, b in zip(runs[n], runs[first], strict=True))
        per_u = statistics.median(a["user"] / b["user"] for a, b in zip(runs[n], runs[first], strict=True))
        print(f"{n} / {first} per round: CPU {per:.3f}, user {per_u:.3f}")
    if args.out:
        args.out.write_text(json.dumps({"corpus": str(args.corpus), "load": [load0, load1], "runs": runs}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
