"""`backtest --json` over every session of a home, this tree against an earlier one in the same rounds:
``python -m bench.backtest_many [--repeat 5] [--before SRC] [--unseen DIR ...] [--many 300] [--fifo]``.

Homes (each a Claude Code config folder and a Codex home, in a temporary folder):

* fixtures: the 28 sessions of ../shared/fixtures (corpus, corpus2, transcripts with their subagent
  folders, codex);
* unseen: the `*.jsonl` files directly in each `--unseen DIR` (`rollout-*` into the Codex home, the
  others into a Claude Code project of their own), when given;
* many: `--many` sessions of bench.generate's corpus (120 MB: a median of 200 kB, the largest
  12 MB; 12 % of them subagent logs), a year of sessions on a laptop.

Cases, alternating in each round: `ours` (this tree, as shipped), `one` (this tree with the
sessions kept in one process: a driver that sets `sessions.backtest.FORK_FROM` out of reach),
`forked` (this tree with the fork forced: `FORK_FROM` 1), and `before` (`--before SRC`, first on
PYTHONPATH). Medians of wall and CPU seconds (user + system, children included) and peak RSS;
the standard output of every run of a home compared byte for byte with the first one's. `--fifo`:
every run under `chrt -f 10` (SCHED_FIFO: the machine's other work waits, as on an idle machine;
root only). Writes OUT/backtest_many.json and .md. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import generate
from bench.versus import ROOT, env_for, med, wait_run

SHARED = next((p for p in (ROOT.parent / "shared" / "fixtures", ROOT.parent.parent / "shared" / "fixtures")
               if p.is_dir()), ROOT.parent / "shared" / "fixtures")
DRIVER = ("import sys; from session_watcher.sessions import backtest; backtest.FORK_FROM = {fork}; "
          "from session_watcher.cli import main; sys.exit(main(['backtest', '--json']))")
MANY = generate.CorpusSpec(files=300, total=120_000_000, median=200_000, p99=4_000_000, largest=12_000_000,
                           projects=12)


def fixtures_home(home: Path) -> int:
    """The shared fixtures' sessions in a home; how many main sessions."""
    n = 0
    for name in ("corpus", "corpus2", "transcripts"):
        project = home / "claude" / "projects" / f"-fixtures-{name}"
        project.mkdir(parents=True, exist_ok=True)
        for p in sorted((SHARED / name).glob("*.jsonl")):
            shutil.copyfile(p, project / p.name)
            n += 1
            if p.with_suffix("").is_dir():
                shutil.copytree(p.with_suffix(""), project / p.stem, dirs_exist_ok=True)
    n += _rollouts(sorted((SHARED / "codex").glob("rollout-*.jsonl")), home)
    return n


def unseen_home(folders: list[Path], home: Path) -> int:
    """The `*.jsonl` files directly in each folder, in a home; how many."""
    n = 0
    for folder in folders:
        logs = sorted(folder.glob("*.jsonl"))
        n += _rollouts([p for p in logs if p.name.startswith("rollout-")], home)
        project = home / "claude" / "projects" / f"-unseen-{folder.name}"
        project.mkdir(parents=True, exist_ok=True)
        for p in logs:
            if not p.name.startswith("rollout-"):
                shutil.copyfile(p, project / p.name)
                n += 1
    return n


def many_home(home: Path, cache: Path, spec: generate.CorpusSpec) -> int:
    """bench.generate's corpus of `spec` (cached in `cache`) as the home's Claude Code folder."""
    generate.write_corpus(cache, spec)
    (home / "claude").mkdir(parents=True, exist_ok=True)
    (home / "claude" / "projects").symlink_to(cache / "projects")
    return sum(1 for p in (cache / "projects").rglob("*.jsonl") if "subagents" not in p.parts)


def _rollouts(found: list[Path], home: Path) -> int:
    day = home / "codex" / "sessions" / "2026" / "01" / "01"
    day.mkdir(parents=True, exist_ok=True)
    for p in found:
        shutil.copyfile(p, day / p.name)
    return len(found)


def _bytes(home: Path) -> int:
    """The bytes of every log in the home (the generated one's folder is a link)."""
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(home, followlinks=True)
               for f in files if f.endswith(".jsonl"))


def cases(before: Path | None) -> dict[str, tuple[list[str], dict[str, str]]]:
    py = sys.executable
    out: dict[str, tuple[list[str], dict[str, str]]] = {
        "ours": ([py, "-m", "session_watcher", "backtest", "--json"], {}),
        "one": ([py, "-c", DRIVER.format(fork=1 << 62)], {}),
        "forked": ([py, "-c", DRIVER.format(fork=1)], {}),
    }
    if before is not None:
        out["before"] = ([py, "-m", "session_watcher", "backtest", "--json"], {"PYTHONPATH": str(before)})
    return out


def measure(home: Path, tmp: Path, repeat: int, before: Path | None, fifo: bool, say: Any) -> dict[str, Any]:
    empty = tmp / "empty-home"
    empty.mkdir(exist_ok=True)
    env = env_for(tmp / "sw-home", HOME=str(empty), CLAUDE_CONFIG_DIR=str(home / "claude"),
                  CODEX_HOME=str(home / "codex"))
    runs: dict[str, list[dict[str, float]]] = {}
    digests: dict[str, set[str]] = {}
    out = tmp / "stdout.json"
    for i in range(repeat):
        say(f"{home.name}: round {i + 1}/{repeat}, load {os.getloadavg()[0]:.1f}")
        for name, (argv, extra) in cases(before).items():
            got = wait_run((["chrt", "-f", "10"] if fifo else []) + argv, {**env, **extra}, tmp, out)
            got["load"] = os.getloadavg()[0]
            runs.setdefault(name, []).append(got)
            digests.setdefault(name, set()).add(hashlib.sha256(out.read_bytes()).hexdigest())
    doc = json.loads(out.read_bytes())
    row: dict[str, Any] = {"home": home.name, "sessions": len(doc["sessions"]), "calls": doc["total"]["calls"],
                           "bytes": _bytes(home),
                           "identical": len(set().union(*digests.values())) == 1, "runs": runs}
    for name, done in runs.items():
        row[name] = {k: med(done, k) for k in ("wall", "cpu", "rssMB")}
    return row


def render(rows: list[dict[str, Any]]) -> str:
    names = [n for n in ("ours", "one", "forked", "before") if n in rows[0]]
    head = "| home | sessions (calls) | " + " | ".join(f"{n}: wall / CPU s / RSS MB" for n in names)
    lines = [head + " | ours / before, wall | CPU | identical |",
             "|---" * (len(names) + 5) + "|"]
    for r in rows:
        cells = [f"{r[n]['wall']:.2f} / {r[n]['cpu']:.2f} / {r[n]['rssMB']:.0f}" for n in names]
        ratio = (f"{r['ours']['wall'] / r['before']['wall']:.2f}x | {r['ours']['cpu'] / r['before']['cpu']:.2f}x"
                 if "before" in r else "- | -")
        lines.append(f"| {r['home']} ({r['bytes'] / 1e6:.0f} MB) | {r['sessions']} ({r['calls']:,}) | "
                     + " | ".join(cells) + f" | {ratio} | {'yes' if r['identical'] else 'NO'} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.backtest_many", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--before", type=Path, help="a source tree (an earlier commit's worktree) run in the same rounds")
    ap.add_argument("--unseen", type=Path, nargs="*", default=[], help="folders of sessions for the unseen home")
    ap.add_argument("--many", type=int, default=MANY.files, help="files of the generated home (0: none)")
    ap.add_argument("--homes", default="fixtures,unseen,many")
    ap.add_argument("--fifo", action="store_true", help="every run under chrt -f 10 (root)")
    ap.add_argument("--cache", type=Path, default=ROOT / "bench" / "out" / "cache")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    args = ap.parse_args(argv)

    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    wanted = args.homes.split(",")
    rows = []
    with tempfile.TemporaryDirectory(prefix="sw-backtest-many-") as t:
        tmp = Path(t)
        homes: list[Path] = []
        if "fixtures" in wanted:
            homes.append(tmp / "fixtures")
            say(f"fixtures: {fixtures_home(homes[-1])} sessions")
        if "unseen" in wanted and args.unseen:
            homes.append(tmp / "unseen")
            say(f"unseen: {unseen_home(args.unseen, homes[-1])} sessions")
        if "many" in wanted and args.many:
            spec = dataclasses.replace(MANY, files=args.many)
            homes.append(tmp / "many")
            say(f"many: {many_home(homes[-1], args.cache / f'backtest-many-{args.many}', spec)} sessions")
        for home in homes:
            rows.append(measure(home, tmp, args.repeat, args.before, args.fifo, say))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "backtest_many.json").write_text(json.dumps(rows, indent=1) + "\n")
    text = render(rows)
    (args.out / "backtest_many.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
