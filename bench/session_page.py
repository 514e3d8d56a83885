"""One session's page against its replay: time and peak memory, in the same run.

``python -m bench.session_page [--size 1GB] [--repeat 3] [--code DIR] [--file PATH] [--line-mib N]``

Each run is a fresh process, the way a user runs them: ``session-watcher replay T`` (the fold the page's
story comes from, without a trace) and ``session-watcher report session T --html OUT``, alternately, on
one transcript (``bench.generate``'s, of ``--size``, kept in a temporary folder, or ``--file``). Wall
time, CPU time (its forked parser included) and the child's peak RSS (wait4) of each; the page's
time as a ratio of replay's in the same minutes (medians). ``--code DIR`` runs the commands from
another checkout (for a before/after: the same interpreter and packages, that tree's
``session_watcher``); given more than once, each checkout's pair runs in every round. ``--line-mib N``
adds a transcript whose one line of N MiB has no newline (a sparse file), through the page and
``report --json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.generate import parse_size, write_transcript
from bench.measure import run_rss
from bench.synth import newline_free

BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); import session_watcher; "
        "assert session_watcher.__file__.startswith(sys.argv[1]); from session_watcher.cli import run; "
        "sys.argv = ['session-watcher', *sys.argv[2:]]; run()")


def command(code: str | None, *args: str) -> list[str]:
    if code:
        return [sys.executable, "-c", BOOT, code, *args]
    exe = Path(sys.executable).parent / "session-watcher"
    return [str(exe), *args] if exe.exists() else [sys.executable, "-m", "session_watcher", *args]


def measure(argv: list[str]) -> dict[str, float]:
    run = run_rss(argv)
    if run.rc != 0:
        raise SystemExit(f"{argv[-4:]} failed ({run.rc}): {run.stderr.decode(errors='replace')[-2000:]}")
    return {"wall": run.wall, "cpu": run.cpu, "mb": run.maxrss_kb / 1024}


def summary(runs: list[dict[str, float]]) -> dict[str, Any]:
    """Medians of wall and CPU seconds, each run's, and the peak RSS in MB."""
    return {"wallMedian": round(statistics.median(r["wall"] for r in runs), 2),
            "cpuMedian": round(statistics.median(r["cpu"] for r in runs), 2),
            "walls": [round(r["wall"], 2) for r in runs], "cpus": [round(r["cpu"], 2) for r in runs],
            "peakMB": round(max(r["mb"] for r in runs), 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.session_page", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="1GB", help="the generated transcript's size (default 1GB)")
    ap.add_argument("--file", type=Path, help="a transcript to use instead of a generated one")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--code", action="append", default=[],
                    help="run the commands from this checkout instead (again: each checkout in the same rounds)")
    ap.add_argument("--line-mib", type=int, default=0, help="also a newline-free line of this many MiB")
    args = ap.parse_args(argv)
    codes: list[str | None] = list(args.code) or [None]
    out: dict[str, Any] = {"code": [c or "installed" for c in codes]}
    with tempfile.TemporaryDirectory(prefix="bench-page-") as tmp:
        folder = Path(tmp)
        if args.file:
            tr = args.file
        else:
            tr = folder / "projects" / "p" / "cd613e30-d8f1-4adf-a1b7-584a2265b1f5.jsonl"
            write_transcript(tr, parse_size(args.size), seed=1)
        out["transcriptBytes"] = tr.stat().st_size
        html = folder / "page.html"
        runs: dict[str | None, dict[str, list[dict[str, float]]]] = {c: {"replay": [], "page": []} for c in codes}
        for _ in range(args.repeat):  # interleaved: every checkout's replay and page in each round
            for c in codes:
                runs[c]["replay"].append(measure(command(c, "replay", str(tr))))
                runs[c]["page"].append(measure(command(c, "report", "session", str(tr), "--html", str(html))))
        out["runs"] = {}
        for c in codes:
            rep, page = summary(runs[c]["replay"]), summary(runs[c]["page"])
            out["runs"][c or "installed"] = {
                "replay": rep, "page": page,
                "pageOverReplay": {"wall": round(page["wallMedian"] / rep["wallMedian"], 2),
                                   "cpu": round(page["cpuMedian"] / rep["cpuMedian"], 2)},
            }
        code = codes[0]
        if args.line_mib:
            line = newline_free(folder / "lines" / "p" / "0a000000-0000-4000-8000-00000000000a.jsonl",
                                args.line_mib << 20)
            out["newlineFree"] = {
                "MiB": args.line_mib,
                "page": measure(command(code, "report", "session", str(line), "--html", str(html))),
                "report": measure(command(code, "report", "--projects", str(folder / "lines"), "--json",
                                          "--index", str(folder / "index.sqlite3"))),
            }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
