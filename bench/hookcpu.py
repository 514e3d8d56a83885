"""Hook cost as CPU time and wall time, against the interpreter's own start, interleaved:
``python -m bench.hookcpu [--paths 200] [--runs 40] [--big 1GB] [--also LAUNCHER] [--statusline] [--otlp] [--split]``.

`--otlp` adds the OpenTelemetry export's four cases (bench.run.otlp_variants: export off; on with a
loopback collector; on with the collector down; on with the heartbeat stale before every run, so each
run spawns the exporter), each on its own copy of the session, and the exporter's own cost (a
session's flush, collector up and down). The CPU column is each process's own: a spawned exporter's
is not the hook's.

`--also` times another hook launcher (an earlier install's, for a before/after) in the same rounds,
on its own copy of the session; every hook run folds the one API call appended in its round. The
installs take turns at going first, round by round (`round_order`).
Without `--statusline` the rows also hold the other commands a client waits for (`more_cases`): the
status line after the hook folded the round's call and the status line that folds it itself, the
synchronous SessionStart hook with no handoff pending and with one.
`--statusline` times the status-line launcher instead (and the `--also` installs' status-line launchers:
`bin/session-watcher-statusline` beside the `bin/session-watcher-hook` given, or given itself), with
a subscriber's payload (`rate_limits`, the client's cost growing each round) when `--rate-limits`.

`--split` adds where the timed command's CPU goes, each part a whole process of the same interpreter:
the interpreter with `os` and no teardown, the same loading the C extensions the command loads, the
launcher's start with its import finder and no module of the package, and the launcher importing
every module of the package the command imports (found by one `-X importtime` run) and exiting.

Wall medians on a shared machine move with its load; the CPU time a process used (user + system,
from wait4) moves much less, so both are printed. The session is built as bench.run builds it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import generate
from bench import run as bench_run


def one(argv: list[str], stdin: bytes, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=env, cwd=cwd)
    assert p.stdin is not None
    p.stdin.write(stdin)
    p.stdin.close()
    _pid, _status, ru = os.wait4(p.pid, 0)
    p.returncode = 0
    return (time.perf_counter() - t0) * 1000, (ru.ru_utime + ru.ru_stime) * 1000


Case = tuple[list[str], Any, dict[str, str], Any]  # (argv, stdin of round n, environment, prepare)
ALSO = ", --also #"  # an `--also` install's rows: its name's tail, then its number


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m bench.hookcpu", description=__doc__)
    ap.add_argument("--paths", type=int, default=200)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--big", type=generate.parse_size, default=None,
                    help="use bench.run's big session of this size (e.g. 1GB) instead of the 1 MB one")
    ap.add_argument("--out", type=Path, default=bench_run.ROOT / "bench" / "out")
    ap.add_argument("--also", type=Path, action="append", default=[],
                    help="another install's hook launcher (e.g. an earlier install's bin/session-watcher-hook) "
                         "timed in the same rounds; with --statusline, its status-line launcher beside it")
    ap.add_argument("--statusline", action="store_true", help="time the status line instead of the hook")
    ap.add_argument("--rate-limits", action="store_true", help="with --statusline: a subscriber's payload")
    ap.add_argument("--otlp", action="store_true", help="the OpenTelemetry export's cases too")
    ap.add_argument("--split", action="store_true", help="the command's CPU in parts: start, extensions, imports")
    return ap


def cases_of(args: argparse.Namespace, b: bench_run.Bench, sess: bench_run.Session, cwd: Path, files: list[Path],
             tmp: Path) -> tuple[dict[str, Case], Any]:
    """The commands timed each round, by row name (the baselines first), and the OTLP collector's
    stand-in when `--otlp` (None otherwise)."""
    python = Path(sys.executable)
    transcript = sess.transcript

    def post(n: int) -> bytes:
        return json.dumps(bench_run.read_payload(sess.sid, transcript, cwd, files[n % args.paths], n)).encode()

    def line(n: int) -> bytes:
        p = bench_run.statusline_payload(sess.sid, transcript, cwd)
        if args.rate_limits:  # the use and the cost grow: the plan's estimate is made and kept up
            p["cost"] = {**(p.get("cost") or {}), "total_cost_usd": 1.0 + 0.05 * n}
            p["rate_limits"] = {"five_hour": {"used_percentage": 10.0 + 0.1 * n, "resets_at": 1_900_000_000},
                                "seven_day": {"used_percentage": 30.0 + 0.02 * n, "resets_at": 1_900_300_000}}
        return json.dumps(p).encode()

    home = b.env(sess.home)
    kind, event, stdin = ("statusline", [], line) if args.statusline else ("hook", ["PostToolUse"], post)
    label, short = ("status line", "status line") if args.statusline else \
        ("hook PostToolUse (Read, known path)", "hook PostToolUse")
    cases: dict[str, Case] = {
        "python -I -c pass": ([str(python), "-I", "-c", "pass"], lambda n: b"", home, None),
        "python -I -S -c pass": ([str(python), "-I", "-S", "-c", "pass"], lambda n: b"", home, None),
        label: ([*b.launcher(kind), *event], stdin, home, None),
    }
    if args.split:
        cases.update(split_cases(cases[label], cwd, tmp))
    if not args.statusline:
        cases.update(more_cases(b, sess, cwd, tmp, line))
    sink = None
    if args.otlp:
        sink, variants = bench_run.otlp_variants(b, sess)
        for rid, variant, _kind, argv_, prepare in variants:
            cases[rid.split("@")[0].removeprefix("hook-")] = (argv_, post, b.env(variant.home), prepare)
    for i, given in enumerate(args.also, 1):  # rows named by position, the paths printed below
        other = also_launcher(given, kind)
        own = tmp / f"home-also-{i}"  # its own copy of the session: both fold the same lines
        shutil.copytree(sess.home, own, symlinks=True)
        cases[f"{short}{ALSO}{i}"] = ([str(python), "-I", "-S", str(other), *event], stdin, b.env(own), None)
        statusline = other.with_name("session-watcher-statusline")
        if not args.statusline and other.name == "session-watcher-hook" and statusline.exists():
            def other_launcher(kind: str, other: Path = other) -> list[str]:
                return [str(python), "-I", "-S", str(other.with_name(f"session-watcher-{kind}"))]

            got = more_cases(b, sess, cwd, tmp / f"also-{i}", line, other_launcher, own)
            cases.update({f"{name}{ALSO}{i}": case for name, case in got.items()})
    return cases, sink


def also_launcher(given: Path, kind: str) -> Path:
    """The `--also` install's launcher of `kind` ("hook", or "statusline" with `--statusline`): the one
    given, or its sibling of that kind where the one given is that install's other launcher (a hook
    launcher run as a status line gets no event: it timed a hook with nothing to do). SystemExit
    naming what is missing otherwise."""
    want = f"session-watcher-{kind}"
    if given.name == want:
        return given
    sibling = given.with_name(want)
    if given.name in ("session-watcher-hook", "session-watcher-statusline"):
        if sibling.exists():
            return sibling
        raise SystemExit(f"--also {given}: the bench times {want} here, and there is none beside it ({sibling})")
    raise SystemExit(f"--also {given}: not a {want} launcher (an install's bin/{want}); "
                     f"the bench runs it as one, with {'the status line' if kind == 'statusline' else 'a hook'}'s "
                     "input")


IMPORTS = """\
import sys
sys.path.extend({libs!r})
from session_watcher.hooks.finder import install
install()
for name in sys.argv[1:]:
    __import__(name)
import os
os._exit(0)
"""


def split_cases(timed: Case, cwd: Path, tmp: Path) -> dict[str, Case]:
    """The parts of `timed` (a launcher's case), each a whole process: the interpreter with `os`,
    the C extensions it loads, the launcher with its finder and no module, all its modules imported."""
    import ast

    argv, stdin, env, _ = timed
    python, launcher = argv[0], Path(argv[3])

    def imported(*args: str, data: bytes = b"") -> list[str]:
        err = subprocess.run([python, "-X", "importtime", *args], input=data, env=env, cwd=cwd, capture_output=True,
                             check=False).stderr.decode()
        return [line.rsplit("|", 1)[1].strip() for line in err.splitlines() if line.startswith("import time:")]

    names = imported(*argv[1:], data=stdin(0))
    ours = sorted({n for n in names if n.startswith("session_watcher.")})
    at_start = set(imported("-I", "-S", "-c", "import os"))
    others = sorted({n for n in names if not n.startswith("session_watcher")} - at_start)
    find = ("import sys, importlib.util as u\n"
            "print(' '.join(n for n in sys.argv[1:] if u.find_spec(n).origin.endswith('.so')))")
    ext = subprocess.run([python, "-I", "-S", "-c", find, *others], capture_output=True, text=True,
                         check=False).stdout.split()
    extend = next(line for line in launcher.read_text().splitlines() if line.startswith("sys.path.extend("))
    script = tmp / "imports.py"
    script.write_text(IMPORTS.format(libs=ast.literal_eval(extend[len("sys.path.extend("):-1])))
    quiet = lambda n: b""  # noqa: E731
    return {
        "-I -S, os, no teardown": ([python, "-I", "-S", "-c", "import os; os._exit(0)"], quiet, env, None),
        f"the same, with {', '.join(ext)}": ([python, "-I", "-S", "-c", f"import os, {', '.join(ext)}; os._exit(0)"],
                                             quiet, env, None),
        "the launcher and its finder, no module": ([python, "-I", "-S", str(script)], quiet, env, None),
        f"the launcher importing its {len(ours)} modules": ([python, "-I", "-S", str(script), *ours], quiet, env, None),
    }


PENDING = """\
import sys, time
from session_watcher.core.handoff import header
from session_watcher.state import handoffs, shell
project = shell.project_root(None, sys.argv[1])
note = header("bench-parent", "2026-12-04 21:00 UTC", 1000, 0.01) + "\\n" + "what was done, what is next. " * 60
doc = {"project": project, "parentSession": "bench-parent", "createdAt": time.time(), "note": note,
       "agent": sys.argv[2]}  # the agent whose start the row times: its own note, which it takes
print(handoffs.write_pending(doc))
"""


def sent(note: Path) -> None:
    """The earlier rounds' children sent the notes they took (their first prompt hook: `handoffs.sent`),
    so a round's start finds no note lent, as a user's next start does once the last one prompted.
    Left lent, every round's note stays lent to the bench (a client still running), and each start
    would check them all again (`handoffs.reclaim`: two reads and /proc each), a cost growing with
    the rounds that a user's start does not pay."""
    for lent in (note.parent.parent / "lent").glob("*.json"):
        lent.unlink()


def more_cases(b: bench_run.Bench, sess: bench_run.Session, cwd: Path, tmp: Path, line: Any,
               launcher: Any = None, home: Path | None = None) -> dict[str, Case]:
    """The other commands a client waits for, each round: the status line after the hook folded the
    round's call (it renders the state as saved), the status line that folds the call itself (on its
    own copy of the session), and the synchronous SessionStart hook of a fresh session with no handoff
    pending and with one (written again before each run: a run takes it; the note the last run took
    sent, as its session's first prompt sends it: `sent`). `launcher` and `home`: an
    `--also` install's launchers (`launcher(kind)`) and its copy of the session."""
    python = Path(sys.executable)
    launcher = launcher or b.launcher
    home = home or sess.home
    tmp.mkdir(exist_ok=True)
    folds, pending = tmp / "home-statusline-folds", tmp / "home-handoff"
    for own in (folds, pending):
        shutil.copytree(sess.home, own, symlinks=True)
    path = subprocess.run([str(python), "-I", "-c", PENDING, str(cwd), "claude-code"], env=b.env(pending),
                          cwd=bench_run.ROOT, check=True, capture_output=True).stdout.decode().strip()
    note = Path(path).read_bytes()

    def put_back() -> None:
        Path(path).write_bytes(note)
        sent(Path(path))

    def start(n: int) -> bytes:
        return json.dumps({"session_id": f"bench-child-{n}", "transcript_path": str(tmp / f"child-{n}.jsonl"),
                           "cwd": str(cwd), "hook_event_name": "SessionStart", "source": "startup"}).encode()

    inject = [*launcher("hook"), "SessionStart", "inject"]
    return {
        "status line (the hook folded the call)": (launcher("statusline"), line, b.env(home), None),
        "status line (folds the call itself)": (launcher("statusline"), line, b.env(folds), None),
        "hook SessionStart inject, none pending": (inject, start, b.env(home), None),
        "hook SessionStart inject, handoff pending": (inject, start, b.env(pending), put_back),
    }


def round_calls(sess: bench_run.Session, cwd: Path, runs: int) -> list[bytes]:
    """A new API call for each of the `runs` rounds and the 4 that settle: the session's own calls
    (bench.run's, as many as the quick scale's rounds and 2), then more of the same writer's. With
    those 9 alone, every round from the 10th appended a call the session had folded already, which
    the fold passes over as the same message (no call folded, no figure computed)."""
    more = bench_run.call_chunks(sess.sid, cwd, max(runs + 4, len(sess.chunks)), seed=99)
    return [*sess.chunks, *more[len(sess.chunks):]]


def round_order(cases: dict[str, Case], n: int) -> list[str]:
    """Round `n`'s order of the cases: each install's (this checkout's, each `--also` one's) in the
    order given, the installs taking turns at going first. In one fixed order an install's place in
    the round alone moved rows whose code did not change by 1-3 % on a loaded machine."""
    groups: dict[str, list[str]] = {}
    for name in cases:
        groups.setdefault(name.rpartition(ALSO)[2] if ALSO in name else "", []).append(name)
    turn = list(groups.values())
    k = n % len(turn) if turn else 0
    return [name for group in turn[k:] + turn[:k] for name in group]


def rounds(runs: int, cases: dict[str, Case], sess: bench_run.Session, cwd: Path
           ) -> dict[str, tuple[list[float], list[float]]]:
    """Every case once a round, after one API call appended to the transcript (in `round_order`); the
    first 4 rounds settle the session (its ledger is written off) and are not counted. (walls, CPU
    times) by case."""
    got: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in cases}
    calls = round_calls(sess, cwd, runs)
    for n in range(runs + 4):
        with sess.transcript.open("ab") as fh:  # the new lines a live hook run would see: one API call
            fh.write(calls[n])
        for name in round_order(cases, n):
            cmd, stdin_of, env, prepare = cases[name]
            if prepare is not None:
                prepare()
            w, c = one(cmd, stdin_of(n), env, cwd)
            if n >= 4:
                got[name][0].append(w)
                got[name][1].append(c)
    os.truncate(sess.transcript, sess.size0)  # leave the cached input as generated
    return got


def exporter_flush(b: bench_run.Bench, sess: bench_run.Session, cwd: Path,
                   got: dict[str, tuple[list[float], list[float]]]) -> None:
    """The exporter's own cost: one session's flush, with the collector up and down (7 runs each)."""
    from session_watcher.otlp.trigger import child_argv

    flush = child_argv("--session", sess.sid)
    for variant_kind in ("otlp-on", "otlp-down"):
        runs = [one(flush, b"", b.env(b.tmp / f"home-{variant_kind}"), cwd) for _ in range(7)]
        got[f"exporter flush, {variant_kind.removeprefix('otlp-')}"] = ([w for w, _ in runs], [c for _, c in runs])


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="sw-hookcpu-") as tmp:
        b, sess, _transcript, cwd, files = bench_run.small_session(args.out, Path(tmp), Path(sys.executable),
                                                                   args.paths, args.big)
        if sess is None:
            return 1
        cases, sink = cases_of(args, b, sess, cwd, files, Path(tmp))
        got = rounds(args.runs, cases, sess, cwd)
        if sink is not None:
            exporter_flush(b, sess, cwd, got)
            bench_run.stop_otlp(b, sink)
        base_w = statistics.median(got["python -I -c pass"][0])
        base_c = statistics.median(got["python -I -c pass"][1])
        flags = " ".join(b.launcher("statusline" if args.statusline else "hook")[1:-1])
        print(f"{'':40s} {'wall ms':>8s} {'x':>5s} {'cpu ms':>8s} {'x':>5s}   (launcher: python {flags})")
        for name, (walls, cpus) in got.items():
            w, c = statistics.median(walls), statistics.median(cpus)
            print(f"{name:40s} {w:8.1f} {w / base_w:5.2f} {c:8.1f} {c / base_c:5.2f}")
        for i, given in enumerate(args.also, 1):
            other = also_launcher(given, "statusline" if args.statusline else "hook")
            print(f"--also #{i}: {other}" + (f" (the install of --also {given})" if other != given else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
