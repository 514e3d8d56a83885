"""One session's page against its replay: time and peak memory, in the same run.

``python -m bench.session_page [--size 1GB] [--repeat 3] [--code DIR] [--file PATH] [--line-mib N]``

Each run is a fresh process, the way a user runs them: ``session-watcher replay T`` (the fold the page's
story comes from, without a trace) and ``session-watcher report session T --html OUT``, alternately, on
one transcript (``bench.generate``'s, of ``--size``, kept in a temporary folder, or ``--file``). Wall
time and the child's peak RSS (wait4) of each; the page's time as a ratio of replay's in the same
minutes. ``--code DIR`` runs the commands from another checkout (for a before/after: the same
interpreter and packages, that tree's ``session_watcher``). ``--line-mib N`` adds a transcript whose one
line of N MiB has no newline (a sparse file), through the page and ``report --json``.
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


def measure(argv: list[str]) -> tuple[float, float]:
    run = run_rss(argv)
    if run.rc != 0:
        raise SystemExit(f"{argv[-4:]} failed ({run.rc}): {run.stderr.decode(errors='replace')[-2000:]}")
    return run.wall, run.maxrss_kb / 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.session_page", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="1GB", help="the generated transcript's size (default 1GB)")
    ap.add_argument("--file", type=Path, help="a transcript to use instead of a generated one")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--code", help="run the commands from this checkout instead")
    ap.add_argument("--line-mib", type=int, default=0, help="also a newline-free line of this many MiB")
    args = ap.parse_args(argv)
    out: dict[str, Any] = {"code": args.code or "installed"}
    with tempfile.TemporaryDirectory(prefix="bench-page-") as tmp:
        folder = Path(tmp)
        if args.file:
            tr = args.file
        else:
            tr = folder / "projects" / "p" / "cd613e30-d8f1-4adf-a1b7-584a2265b1f5.jsonl"
            write_transcript(tr, parse_size(args.size), seed=1)
        out["transcriptBytes"] = tr.stat().st_size
        html = folder / "page.html"
        replay: list[tuple[float, float]] = []
        page: list[tuple[float, float]] = []
        for _ in range(args.repeat):
            replay.append(measure(command(args.code, "replay", str(tr))))
            page.append(measure(command(args.code, "report", "session", str(tr), "--html", str(html))))
        rw, pw = statistics.median(w for w, _ in replay), statistics.median(w for w, _ in page)
        out["replay"] = {"wallMedian": round(rw, 2), "walls": [round(w, 2) for w, _ in replay],
                         "peakMB": round(max(m for _, m in replay), 1)}
        out["page"] = {"wallMedian": round(pw, 2), "walls": [round(w, 2) for w, _ in page],
                       "peakMB": round(max(m for _, m in page), 1)}
        out["pageOverReplay"] = round(pw / rw, 2)
        if args.line_mib:
            line = newline_free(folder / "lines" / "p" / "0a000000-0000-4000-8000-00000000000a.jsonl",
                                args.line_mib << 20)
            out["newlineFree"] = {
                "MiB": args.line_mib,
                "page": measure(command(args.code, "report", "session", str(line), "--html", str(html))),
                "report": measure(command(args.code, "report", "--projects", str(folder / "lines"), "--json",
                                          "--index", str(folder / "index.sqlite3"))),
            }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
