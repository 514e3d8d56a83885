"""The report over the Codex fixtures against ccusage, with the floors beside it, in one interleaved run:
``python -m bench.codex_small [--repeat 15] [--fresh-venv] [--before SRC] [--out bench/out]``.

Issue 35 item 5 asks for a report over the Codex fixtures (../shared/fixtures/codex, 10 rollouts, 18
MB) at 0.7x ``ccusage codex session`` or less. At that size a run is mostly start-up, so each round
runs, one after the other, the floors and both programs' runs over one Codex home (``CODEX_HOME``;
ours also looks in an empty Claude Code home):

* ``python -I -c pass`` (the venv's interpreter), and the same importing msgspec as a cold read
  does (``agents/schema.py``: without typing_extensions);
* ccusage 20.0.24's native binary (as bench.versus finds it): ``codex session --offline``, the same
  with ``--json``, and ``--json`` over an empty Codex home (its own start);
* ours through the venv's ``session-watcher`` command (what a user runs): ``--version``, ``report
  --json`` over empty homes, ``report`` and ``report --json`` cold (a new index each time) and warm
  (an index of the same rollouts, built before the rounds).

CPU (user + system, waited-for children included), wall and peak RSS; medians of ``--repeat``, and
each CPU median over ccusage's of the same output (the text's, the JSON's). ``--before SRC``: a source
tree (a worktree of an earlier commit) whose runs join each round, first on PYTHONPATH, through pip's
own wrapper for the command (what install.sh left before the command was written over it).
``--fresh-venv``: the venv ``install.sh`` makes (else this interpreter's venv, whose command may be
pip's). Both trees are compiled first, so no round pays for writing a ``.pyc``.

Writes OUT/codex_small.md and OUT/codex_small.json. Nothing here asserts a time.
"""

from __future__ import annotations

import compileall
import statistics
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.versus import ROOT, Run, env_for, wait_run
from bench.versus_codex import copy_home, source_arguments

if TYPE_CHECKING:
    import argparse

# pip's console-script wrapper as pip 23-24 write it for `session-watcher = session_watcher.cli:run`
PIP_WRAPPER = ("#!{python}\n# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom session_watcher.cli import run\n"
               "if __name__ == '__main__':\n    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
               "    sys.exit(run())\n")


def cases(python: Path, cc: list[str] | None, home: Path, tmp: Path,
          trees: dict[str, tuple[list[str], str | None]]) -> dict[str, tuple[list[str], dict[str, str], str]]:
    """name -> (argv, env, what its CPU is set against: "json", "text" or "").
    `trees`: label -> (the command's argv, PYTHONPATH or None). An argv holding "COLD" gets a new index."""
    empty = tmp / "empty-home"
    empty_codex = tmp / "empty-codex"
    (empty_codex / "sessions").mkdir(parents=True, exist_ok=True)
    empty.mkdir(exist_ok=True)
    out: dict[str, tuple[list[str], dict[str, str], str]] = {
        "python -I -c pass": ([str(python), "-I", "-c", "pass"], env_for(tmp / "sw-pass"), ""),
        # what a cold read of rollouts imports before its first byte (agents/schema.py: without typing_extensions)
        "python -I -c 'import msgspec.json'": (
            [str(python), "-I", "-c", "import sys; sys.modules['typing_extensions'] = None; import msgspec.json"],
            env_for(tmp / "sw-pass"), ""),
    }
    if cc is not None:
        cc_env = env_for(tmp / "sw-cc", HOME=str(empty), CODEX_HOME=str(home))
        out["ccusage codex session"] = ([*cc, "codex", "session", "--offline"], cc_env, "text")
        out["ccusage codex session --json"] = ([*cc, "codex", "session", "--json", "--offline"], cc_env, "json")
        out["ccusage, an empty Codex home"] = ([*cc, "codex", "session", "--json", "--offline"],
                                               {**cc_env, "CODEX_HOME": str(empty_codex)}, "json")
    for label, (argv, path) in trees.items():
        extra = {"PYTHONPATH": path} if path else {}
        env = env_for(tmp / f"sw-{label}", HOME=str(empty), CODEX_HOME=str(home), **extra)
        warm = str(tmp / f"warm-{label}.sqlite3")
        out[f"{label}: --version"] = ([*argv, "--version"], env, "")
        out[f"{label}: report --json, empty homes"] = (
            [*argv, "report", "--json", "--index", str(tmp / f"empty-{label}.sqlite3")],
            {**env, "CODEX_HOME": str(empty_codex)}, "json")
        out[f"{label}: report, cold"] = ([*argv, "report", "--index", "COLD"], env, "text")
        out[f"{label}: report --json, cold"] = ([*argv, "report", "--json", "--index", "COLD"], env, "json")
        out[f"{label}: report, warm"] = ([*argv, "report", "--index", warm], env, "text")
        out[f"{label}: report --json, warm"] = ([*argv, "report", "--json", "--index", warm], env, "json")
    return out


def measure(runs_of: dict[str, tuple[list[str], dict[str, str], str]], tmp: Path, repeat: int,
            say: Any) -> dict[str, list[dict[str, float]]]:
    for argv, env, _ in runs_of.values():  # the warm indexes built, the empty ones too
        if "COLD" not in argv and "report" in argv:
            wait_run(argv, env, tmp)
    runs: dict[str, list[dict[str, float]]] = {k: [] for k in runs_of}
    for i in range(repeat):
        say(f"round {i + 1}/{repeat}")
        for name, (argv, env, _) in runs_of.items():
            db = tmp / "cold.sqlite3"
            got = wait_run([str(db) if a == "COLD" else a for a in argv], env, tmp)
            for p in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
                p.unlink(missing_ok=True)
            if got["rc"] != 0:
                raise SystemExit(f"{name}: exit {got['rc']}")
            runs[name].append(got)
    return runs


def summary(runs_of: dict[str, tuple[list[str], dict[str, str], str]],
            runs: dict[str, list[dict[str, float]]]) -> dict[str, dict[str, float | None]]:
    med = {k: {m: statistics.median(r[m] for r in v) for m in ("wall", "cpu", "rssMB")} for k, v in runs.items()}
    ref = {"text": med.get("ccusage codex session"), "json": med.get("ccusage codex session --json")}
    out: dict[str, dict[str, float | None]] = {}
    for k, m in med.items():
        against = ref.get(runs_of[k][2]) or ref["json"]
        out[k] = {**m, "cpuMin": min(r["cpu"] for r in runs[k]),
                  "xCpu": m["cpu"] / against["cpu"] if against else None,
                  "xWall": m["wall"] / against["wall"] if against else None}
    return out


def render(res: dict[str, Any]) -> str:
    load = f"load average at start {res['load'][0]:.1f}, at end {res['loadEnd'][0]:.1f}"
    out = [f"# bench.codex_small ({res['when']}, {load}, {res['install']}, median of {res['repeat']})", "",
           "The x columns: over ccusage's run of the same output (`codex session` for text, `--json` for JSON and "
           "the floors).", "",
           "| run | CPU ms | min CPU ms | wall ms | peak RSS MB | CPU x ccusage | wall x ccusage |",
           "|---|---|---|---|---|---|---|"]
    for k, m in res["summary"].items():
        xs = f"{m['xCpu']:.2f} | {m['xWall']:.2f}" if m["xCpu"] is not None else "- | -"
        out.append(f"| {k} | {m['cpu'] * 1000:.1f} | {m['cpuMin'] * 1000:.1f} | {m['wall'] * 1000:.1f} | "
                   f"{m['rssMB']:.0f} | {xs} |")
    return "\n".join(out) + "\n"


def _arguments(ap: argparse.ArgumentParser) -> None:
    source_arguments(ap, "a source tree whose runs join each round (through pip's wrapper)")


def main(argv: list[str] | None = None) -> int:
    run = Run("codex_small", __doc__, 15, _arguments, argv)
    args, python, res = run.args, run.python, run.res
    res["repeat"] = args.repeat
    command = python.parent / "session-watcher"
    with tempfile.TemporaryDirectory(prefix="sw-codex-small-") as name:
        tmp = Path(name)
        cc = run.ccusage(tmp)
        home = tmp / "codex-home"
        copy_home(args.source, home)
        # ours: the venv's own command; this venv's (an editable install of another checkout, maybe)
        # runs this checkout, first on PYTHONPATH
        trees: dict[str, tuple[list[str], str | None]] = {"ours": ([str(command)], None if args.fresh_venv
                                                                   else str(ROOT))}
        if args.before is not None:
            wrapper = tmp / "pip-wrapper"
            wrapper.write_text(PIP_WRAPPER.format(python=python))
            wrapper.chmod(0o755)
            trees["before"] = ([str(wrapper)], str(args.before.resolve()))
            compileall.compile_dir(str(args.before.resolve() / "session_watcher"), quiet=1)
        compileall.compile_dir(str(ROOT / "session_watcher"), quiet=1)  # a --fresh-venv's are compiled by pip
        runs_of = cases(python, cc, home, tmp, trees)
        runs = measure(runs_of, tmp, args.repeat, run.say)
        res["summary"] = summary(runs_of, runs)
        res["runs"] = runs
    return run.finish(render)


if __name__ == "__main__":
    raise SystemExit(main())
