"""`status` with no SESSION named, over a heavy user's sessions: ``python -m bench.default_pick
[--sessions 3000] [--runs 11] [--also SOURCE_TREE ...]``.

The default session (`sessions.naming.default_session`) is the newest of the project the command runs
in, else the newest of all, passing over newer ones with no API call: it looks at the sessions newest
first until it has its pick, so where it runs decides how many it looks at. Under a throwaway HOME:
`--sessions` small Claude Code sessions (bench.year's) across 8 project folders, copies of the real
fixtures (a few MiB each) and Codex rollouts among them, every one recorded by the hooks (a state
file, cloned from a folded one, as the hooks would have left it). Timed as whole processes
(`python -m session_watcher status --json`), wall time, medians, the code trees interleaved in
shuffled rounds, in three folders: the newest session's project; a project whose one session is the
oldest of all; a folder no session ran in (every session looked at). `--also` adds another source
tree (`git archive` of an earlier commit) run with the same interpreter; the ratios are to the
first tree (this one). Asserts nothing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import year

ROOT = Path(__file__).resolve().parent.parent


def _clone_states(home: Path, sw_home: Path) -> int:
    """A state file for every main transcript under `home`, as the hooks leave one: the state of the
    session nearest 1 MB folded and cloned, its id, transcript, project and calls made each session's
    own (its mtime the transcript's); its size in bytes."""
    env = {**os.environ, "SESSION_WATCHER_HOME": str(sw_home), "HOME": str(home),
           "CLAUDE_CONFIG_DIR": str(home / ".claude"), "CODEX_HOME": str(home / ".codex"), "PYTHONPATH": str(ROOT)}
    code = r"""
import json, os, sys
from session_watcher.agents import sources
from session_watcher.sessions.replay import fold, transcript_cwd, placed
from session_watcher.state import store
found = [s for s in sources()[1] if not s.sub]
template, _cfg, _ = fold(min(found, key=lambda s: abs(os.path.getsize(s.path) - 1e6)).path, with_trace=False)
os.makedirs(os.path.dirname(store.session_file("x" * 8)), exist_ok=True)
n = 0
for src in found:
    state = json.loads(json.dumps(template))
    state["sessionId"] = src.session
    state["cursor"]["path"] = src.path
    cwd = transcript_cwd(src.path)
    state["context"]["cwd"], state["context"]["project"] = placed(cwd)
    state["engine"]["calls"] = max(1, state["engine"]["calls"])
    path = store.session_file(src.session)
    store.save(path, state)
    at = os.stat(src.path).st_mtime
    os.utime(path, (at, at))
    n += 1
print(n, len(store.encode(template)))
"""
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    return int(out.stdout.split()[1])


def build(root: Path, sessions: int, seed: int = 11) -> dict[str, Path]:
    """The HOME, the sessions and the three folders (`newest`, `old`, `none`)."""
    random.seed(seed)
    home, work = root / "home", root / "work"
    claude, codex = home / ".claude" / "projects", home / ".codex"
    names = ["api", "web", "infra", "cli", "docs", "alpha", "scratch", "tools"]
    for n in (*names, "old-proj", "no-session"):
        (work / n).mkdir(parents=True, exist_ok=True)
    t0 = dt.datetime(2026, 1, 2, 9, 0, tzinfo=dt.UTC).timestamp()
    span = 330 * 86400
    for _ in range(sessions):
        year.small_session(claude, str(work / random.choice(names)), t0 + random.random() * span, "claude-opus-4-6")
    for src, sid in year.claude_sources():  # a few MiB each, among the newest
        when = dt.datetime.fromtimestamp(t0 + span - random.random() * 86400 * 20, dt.UTC)
        year.write_claude(src, sid, claude, str(work / random.choice(names)), when)
    for src in sorted((year.FIX / "codex").glob("rollout-*.jsonl")):
        when = dt.datetime.fromtimestamp(t0 + random.random() * span, dt.UTC)
        year.write_codex(src, codex, str(work / random.choice(names)), when)
    year.small_session(claude, str(work / "old-proj"), t0 - 86400 * 30, "claude-opus-4-6")
    newest = max(claude.rglob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    project = year.cwd_of(newest.read_bytes()[:1 << 16])
    sw_home = root / "sw"
    size = _clone_states(home, sw_home)
    print(f"every state {size:,} bytes")
    return {"home": home, "sw": sw_home, "newest": Path(project), "old": work / "old-proj",
            "none": work / "no-session"}


def _time(python: str, tree: Path, cwd: Path, env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run([python, "-m", "session_watcher", "status", "--json"], cwd=cwd, check=True,
                   env={**env, "PYTHONPATH": str(tree)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.default_pick", description=__doc__)
    ap.add_argument("--sessions", type=int, default=3000)
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--also", type=Path, action="append", default=[], help="another source tree, timed alike")
    ap.add_argument("--keep", type=Path, help="build (or reuse) the sessions here rather than in a temp folder")
    args = ap.parse_args(argv)
    trees = [ROOT, *args.also]
    with tempfile.TemporaryDirectory() as tmp_name:
        root = args.keep or Path(tmp_name)
        meta = root / "built.json"
        if meta.exists():
            where = {k: Path(v) for k, v in json.loads(meta.read_text()).items()}
        else:
            if root.exists():
                shutil.rmtree(root / "home", ignore_errors=True)
            where = build(root, args.sessions)
            meta.write_text(json.dumps({k: str(v) for k, v in where.items()}))
        for tree in trees:  # each tree's modules compiled, as an install leaves them (a `git archive` has none)
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "session_watcher")], check=True)
        home = where["home"]
        env = {**os.environ, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"),
               "CODEX_HOME": str(home / ".codex"), "SESSION_WATCHER_HOME": str(where["sw"]), "COLUMNS": "200"}
        env.pop("CLAUDE_PROJECT_DIR", None)
        folders = {"the newest session's project": where["newest"], "a project whose one session is the oldest":
                   where["old"], "a folder no session ran in": where["none"]}
        files = sum(1 for _ in home.rglob("*.jsonl"))
        print(f"{files} transcripts, {sum(1 for _ in where['sw'].rglob('*.json'))} state files; load "
              f"{os.getloadavg()[0]:.1f}")
        times: dict[tuple[str, int], list[float]] = {(f, i): [] for f in folders for i in range(len(trees))}
        plan = [(f, i) for f in folders for i in range(len(trees))]
        for _ in range(args.runs):
            random.shuffle(plan)
            for f, i in plan:
                times[(f, i)].append(_time(sys.executable, trees[i], folders[f], env))
        print(f"load at the end {os.getloadavg()[0]:.1f}; medians of {args.runs} runs, ms (x this tree)")
        for f in folders:
            base = statistics.median(times[(f, 0)])
            row = [f"{statistics.median(times[(f, i)]):.0f}" + ("" if i == 0 else
                   f" ({statistics.median(times[(f, i)]) / base:.2f}x)") for i in range(len(trees))]
            print(f"  {f}: " + " | ".join(f"{trees[i]}: {row[i]}" for i in range(len(trees))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
