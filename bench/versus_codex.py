"""The report over Codex rollouts against ccusage's, side by side in the same run:
``python -m bench.versus_codex [--repeat 7] [--size 250MB] [--before SRC] [--out bench/out]``.

``session-watcher report --json`` cold (a new index each time) against ``ccusage codex session
--json --offline`` (20.0.24's native binary, as bench.versus finds it), both reading one Codex home
(``CODEX_HOME``; ours also looks in an empty Claude Code home), alternating in each round, median of
``--repeat``: wall time, CPU time (user + system, children included) and peak RSS. Two homes: the
Codex fixtures (../shared/fixtures/codex, 10 rollouts, 18 MB) as they are, and the same rollouts
replicated to ``--size`` (each copy its own thread id, in its file name and its `session_meta`, and
its own response ids, so that neither side folds two copies into one; the content is otherwise the
real one). ``--before SRC``: a source tree (a worktree of an earlier commit) whose report runs in
the same rounds, first on PYTHONPATH. ``--fresh-venv``: the venv ``install.sh`` makes.

Writes OUT/versus_codex.md and OUT/versus_codex.json. Nothing here asserts a time.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.generate import parse_size
from bench.versus import ROOT, Run, env_for, med, wait_run

if TYPE_CHECKING:
    import argparse

FIXTURES = next((p for p in (ROOT.parent / "shared" / "fixtures" / "codex",
                             ROOT.parent.parent / "shared" / "fixtures" / "codex") if p.is_dir()),
                ROOT.parent / "shared" / "fixtures" / "codex")


def rollouts(src: Path) -> list[Path]:
    return sorted(src.glob("rollout-*.jsonl"))


def copy_home(src: Path, home: Path) -> None:
    """A Codex home holding the rollouts of `src` as they are, in one day's folder."""
    day = home / "sessions" / "2026" / "01" / "01"
    day.mkdir(parents=True, exist_ok=True)
    for p in rollouts(src):
        shutil.copyfile(p, day / p.name)


def replicate(src: Path, home: Path, size: int) -> dict[str, int]:
    """A Codex home of `src`'s rollouts copied until `size` bytes, each copy a thread of its own."""
    found = rollouts(src)
    total = files = k = 0
    while found and total < size:
        for p in found:
            if total >= size:
                break
            k += 1
            tid = p.name.removesuffix(".jsonl")[-36:]
            new = str(uuid.UUID(int=k, version=4))
            data = p.read_bytes().replace(tid.encode(), new.encode())
            data = data.replace(b'"response_id":"', b'"response_id":"c%05d-' % k)
            day = home / "sessions" / "2026" / "01" / f"{k % 28 + 1:02d}"
            day.mkdir(parents=True, exist_ok=True)
            (day / p.name.replace(tid, new)).write_bytes(data)
            total += len(data)
            files += 1
    return {"bytes": total, "files": files}


def measure(bindir: Path, cc: list[str] | None, home: Path, tmp: Path, repeat: int, before: Path | None,
            say: Any) -> dict[str, Any]:
    cases: dict[str, tuple[list[str], dict[str, str]]] = {}
    empty = tmp / "empty-home"
    empty.mkdir(exist_ok=True)
    ours_env = env_for(tmp / "home-ours", HOME=str(empty), CODEX_HOME=str(home))
    ours = [str(bindir / "python"), "-m", "session_watcher", "report", "--json", "--index"]
    cases["ours"] = (ours, ours_env)
    if before is not None:
        cases["before"] = (ours, {**ours_env, "PYTHONPATH": str(before)})
    if cc is not None:
        cases["ccusage"] = ([*cc, "codex", "session", "--json", "--offline"],
                            env_for(tmp / "home-cc", HOME=str(empty), CODEX_HOME=str(home)))
    runs: dict[str, list[dict[str, float]]] = {k: [] for k in cases}
    for i in range(repeat):
        say(f"{home.name}: round {i + 1}/{repeat}")
        for name, (argv, env) in cases.items():
            db = tmp / f"index-{name}-{i}.sqlite3"
            runs[name].append(wait_run([*argv, str(db)] if name != "ccusage" else argv, env, tmp))
            db.unlink(missing_ok=True)
    size = sum(p.stat().st_size for p in home.rglob("rollout-*.jsonl"))
    files = sum(1 for _ in home.rglob("rollout-*.jsonl"))
    row: dict[str, Any] = {"home": home.name, "bytes": size, "files": files, "runs": runs}
    for name, got in runs.items():
        row[name] = {"wall": med(got, "wall"), "cpu": med(got, "cpu"), "rssMB": med(got, "rssMB")}
    return row


def render(res: dict[str, Any]) -> str:
    load = f"load average at start {res['load'][0]:.1f}, at end {res['loadEnd'][0]:.1f}"
    out = [f"# bench.versus_codex ({res['when']}, {load}, {res['install']})", ""]
    for row in res["rows"]:
        ref = row.get("ccusage")
        out += [f"## report --json cold vs ccusage codex session --json --offline: {row['home']} "
                f"({row['files']} rollouts, {row['bytes'] / 1e6:.0f} MB), alternating, median of "
                f"{len(row['runs']['ours'])}", "",
                "| | wall s | CPU s | peak RSS MB | wall x ccusage | CPU x ccusage |", "|---|---|---|---|---|---|"]
        for name in row["runs"]:
            r = row[name]
            x = f"{r['wall'] / ref['wall']:.2f} | {r['cpu'] / ref['cpu']:.2f}" if ref else "- | -"
            out.append(f"| {name} | {r['wall']:.3f} | {r['cpu']:.3f} | {r['rssMB']:.0f} | {x} |")
        out.append("")
    return "\n".join(out)


def source_arguments(ap: argparse.ArgumentParser, before: str) -> None:
    """The Codex benches' own arguments (this one's, bench.codex_small's): the rollouts, a tree before."""
    ap.add_argument("--source", type=Path, default=FIXTURES, help="the rollouts (default: the shared fixtures)")
    ap.add_argument("--before", type=Path, help=before)


def _arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--size", type=parse_size, default=250_000_000, help="the replicated home's size")
    source_arguments(ap, "a source tree whose report runs in the same rounds")


def main(argv: list[str] | None = None) -> int:
    run = Run("versus_codex", __doc__, 7, _arguments, argv, rows=[])
    args, bindir, say = run.args, run.python.parent, run.say
    with tempfile.TemporaryDirectory(prefix="sw-versus-codex-") as name:
        tmp = Path(name)
        cc = run.ccusage(tmp)
        fixtures = tmp / "fixtures"
        copy_home(args.source, fixtures)
        run.res["rows"].append(measure(bindir, cc, fixtures, tmp, args.repeat, args.before, say))
        if args.size:
            big = tmp / "replicated"
            say(f"replicating the rollouts to {args.size / 1e6:.0f} MB")
            replicate(args.source, big, args.size)
            run.res["rows"].append(measure(bindir, cc, big, tmp, args.repeat, args.before, say))
    return run.finish(render)


if __name__ == "__main__":
    raise SystemExit(main())
