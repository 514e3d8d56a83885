"""The warm `report --json` written to /dev/null and into a pipe (`| cat`), this checkout against
others in the same rounds: ``python -m bench.report_json_out --code DIR [--code DIR ...] [--rounds 12]
[--fixtures ../shared/fixtures]``.

The shared fixtures (each folder of Claude Code transcripts a project of a temp Claude Code folder,
the Codex rollouts under a temp `CODEX_HOME`, all linked, not copied) are reported by
``python -m session_watcher report --json``, warm: each tree has its own temp home, whose index one
run first fills (and which must then say `cached`), so every timed run sends the kept text. The
trees run in turn, the order rotated every round, each output in turn. Each tree's modules are
compiled first (`compileall`; with PYTHONDONTWRITEBYTECODE set a fresh checkout compiles its sources
on every run). Per tree and output: the median and least CPU time (user + system, from wait4) and
the ratio of the medians to the first ``--code``. For a before/after; nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _home(tmp: Path, fixtures: Path) -> dict[str, str]:
    """A temp home whose Claude Code and Codex folders link the fixtures; the environment for it."""
    projects = tmp / "claude" / "projects"
    projects.mkdir(parents=True)
    day = tmp / "codex" / "sessions" / "2026" / "07" / "16"
    day.mkdir(parents=True)
    for folder in sorted(fixtures.iterdir()):
        if folder.name == "codex":
            for rollout in sorted(folder.glob("rollout-*.jsonl")):
                (day / rollout.name).symlink_to(rollout)
        elif folder.is_dir():
            (projects / folder.name).symlink_to(folder)
    return {"HOME": str(tmp), "SESSION_WATCHER_HOME": str(tmp / "sw"), "CLAUDE_CONFIG_DIR": str(tmp / "claude"),
            "CODEX_HOME": str(tmp / "codex"), "XDG_CONFIG_HOME": str(tmp / ".config"),
            "XDG_STATE_HOME": str(tmp / ".state"), "XDG_DATA_HOME": str(tmp / ".share")}


def _cpu(argv: list[str], env: dict[str, str], piped: bool) -> float:
    """The CPU seconds (user + system) of one run, its output to /dev/null or into `cat`."""
    with open(os.devnull, "wb") as null:
        cat = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=null) if piped else None
        out = cat.stdin if cat is not None else null
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, env=env)
        if cat is not None and cat.stdin is not None:
            cat.stdin.close()
        _pid, status, usage = os.wait4(proc.pid, 0)
        if cat is not None:
            cat.wait()
    if status != 0:
        raise SystemExit(f"{argv}: wait status {status}")
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.report_json_out", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--code", action="append", required=True, help="another checkout (repeat it for an A/A control)")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--fixtures", type=Path, default=ROOT.parent / "shared" / "fixtures")
    args = ap.parse_args(argv)
    trees = [(f"other{n}", str(Path(c).resolve())) for n, c in enumerate(args.code, 1)] + [("this", str(ROOT))]
    report = [sys.executable, "-m", "session_watcher", "report", "--json"]
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory(prefix="sw-jsonout-") as tmp:
        envs = {}
        for name, tree in trees:
            compileall.compile_dir(os.path.join(tree, "session_watcher"), quiet=1)
            os.mkdir(os.path.join(tmp, name))
            envs[name] = {**base, **_home(Path(tmp) / name, args.fixtures.resolve()), "PYTHONPATH": tree}
            _cpu(report, envs[name], piped=False)  # fills its index
            doc = json.loads(subprocess.run(report, env=envs[name], capture_output=True, check=True).stdout)
            if not doc["index"]["cached"]:
                raise SystemExit(f"{tree}: the second run is no kept report")
        cpus: dict[tuple[str, bool], list[float]] = {(name, p): [] for name, _ in trees for p in (False, True)}
        load = os.getloadavg()
        for k in range(args.rounds):
            for piped in (False, True):
                for name, _tree in trees[k % len(trees):] + trees[:k % len(trees)]:
                    cpus[(name, piped)].append(_cpu(report, envs[name], piped))
    print(f"{args.fixtures}: {len(doc['sessions'])} sessions, {args.rounds} rounds; "
          f"load {load[0]:.1f} -> {os.getloadavg()[0]:.1f}")
    first = trees[0][0]
    for piped in (False, True):
        for name, tree in trees:
            c = cpus[(name, piped)]
            ratio = statistics.median(c) / statistics.median(cpus[(first, piped)])
            print(f"{'| cat' if piped else '> /dev/null':11} {name:7} {tree}: CPU median "
                  f"{1000 * statistics.median(c):.1f} ms (least {1000 * min(c):.1f}); / {first}: {ratio:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
