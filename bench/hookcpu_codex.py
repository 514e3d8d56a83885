"""The Codex hooks' cost as CPU time and wall time, against the interpreter's own start, interleaved:
``python -m bench.hookcpu_codex [--runs 60] [--thread ID] [--also PYTHON]``.

Run it with the interpreter of the venv install.sh builds (`$SESSION_WATCHER_HOME/venv/bin/python`
or wherever it says): the hooks run as Codex runs them there (`python -I -S session-watcher-hook
EVENT codex`), and `python -I -c pass` of that interpreter is the reference (an editable dev venv
imports its path hooks at every start and inflates it). A fixture rollout (tests/fixtures/codex) is
the thread: its first calls settle the state, then each round appends the rollout's next call, its
times moved to now (a live thread, its cache warm), and times each command once:

* `hook PostModelRequest codex`: the folding hook of every model call (Codex runs it async);
* `hook UserPromptSubmit codex`: the prompt hook, waited for (the guard; nothing held, nothing
  queued: it prints nothing);
* `hook SessionStart codex`: a fresh thread's start, waited for, no handoff pending, and with one
  (bench.hookcpu's note, written again before each run on the row's own state folder: a run takes it;
  the note the last run took sent, as the thread's first prompt sends it: bench.hookcpu.sent).

`--also` times another install's hooks (its venv's interpreter; an earlier install's, for a before and
after) in the same rounds, each row on its own state folder, all reading the same rollout.

The CPU column is each process's own (user + system, from wait4); wall medians move with the load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import run as bench_run
from bench.hookcpu import ALSO, PENDING, one, round_order, sent

THREAD = "019f6bcb-eb00-7ea1-99ef-7fe2d29e2bba"  # gpt-5.6-sol, 234 calls
SETTLE = 40  # calls in the rollout before the first round


def calls_of(rollout: Path) -> list[list[dict[str, object]]]:
    """The rollout's lines cut after each call's `token_count` (the last group: what follows)."""
    groups: list[list[dict[str, object]]] = [[]]
    for raw in rollout.read_text().splitlines():
        rec = json.loads(raw)
        groups[-1].append(rec)
        payload = rec.get("payload")
        if rec.get("type") == "event_msg" and isinstance(payload, dict) and payload.get("type") == "token_count":
            groups.append([])
    return [g for g in groups if g]


def now_lines(group: list[dict[str, object]], cwd: Path) -> bytes:
    """A call's lines as Codex writes them now: the time now, the thread's folder `cwd`."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    out = []
    for line in group:
        rec = {**line, "timestamp": stamp}
        payload = rec.get("payload")
        if isinstance(payload, dict) and "cwd" in payload:
            rec["payload"] = {**payload, "cwd": str(cwd)}
        out.append(json.dumps(rec, separators=(",", ":")) + "\n")
    return "".join(out).encode()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.hookcpu_codex", description=__doc__)
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--thread", default=THREAD)
    ap.add_argument("--also", type=Path, action="append", default=[],
                    help="another install's venv interpreter, its hooks timed in the same rounds")
    args = ap.parse_args(argv)
    rollout = bench_run.FIXTURES / "codex" / f"rollout-{args.thread}.jsonl"
    groups = calls_of(rollout)
    with tempfile.TemporaryDirectory(prefix="sw-hookcpu-codex-") as tmp_name:
        tmp = Path(tmp_name)
        python = Path(sys.executable)
        b = bench_run.Bench(bench_run.scale_for(True, None), tmp / "out", tmp, python, python.parent)
        cwd, home = tmp / "proj", tmp / "home"
        cwd.mkdir()
        home.mkdir()
        path = tmp / "sessions" / f"rollout-2026-12-04T00-00-00-{args.thread}.jsonl"
        path.parent.mkdir()
        path.write_bytes(b"".join(now_lines(g, cwd) for g in groups[:SETTLE]))
        env = b.env(home)

        def payload(event: str, n: int, **extra: object) -> bytes:
            return json.dumps({"session_id": args.thread, "transcript_path": str(path), "cwd": str(cwd),
                               "hook_event_name": event, "model": "gpt-5.6-sol", "permission_mode": "default",
                               **extra}).encode()

        def start(n: int) -> bytes:
            return json.dumps({"session_id": f"019fbe00-0000-7000-8000-{n:012d}", "transcript_path": None,
                               "cwd": str(cwd), "hook_event_name": "SessionStart", "source": "startup",
                               "model": "gpt-5.6-sol"}).encode()

        def pending(home: Path) -> Any:
            """A handoff pending for the project under `home`, and what writes it again (a run takes it)."""
            home.mkdir(exist_ok=True)
            note = Path(subprocess.run([str(python), "-I", "-c", PENDING, str(cwd), "codex"], env=b.env(home),
                                       cwd=bench_run.ROOT, check=True, capture_output=True).stdout.decode().strip())
            text = note.read_bytes()

            def put_back() -> None:
                note.write_bytes(text)
                sent(note)
            return put_back

        cases: dict[str, tuple[list[str], Any, dict[str, str], Any]] = {
            "python -I -c pass": ([str(python), "-I", "-c", "pass"], lambda n: b"", env, None),
            "python -I -S -c pass": ([str(python), "-I", "-S", "-c", "pass"], lambda n: b"", env, None),
        }
        for i, venv_python in enumerate([None, *args.also]):
            hook = b.launcher("hook") if venv_python is None else [
                str(venv_python), "-I", "-S", str(venv_python.with_name("session-watcher-hook"))]
            own, tag = (env, "") if venv_python is None else (b.env(tmp / f"home-also-{i}"), f"{ALSO}{i}")
            (tmp / f"home-also-{i}").mkdir(exist_ok=True)
            cases |= {
                f"hook PostModelRequest codex (fold){tag}": ([*hook, "PostModelRequest", "codex"], lambda n: payload(
                    "PostModelRequest", n, kind="sampling", request_id=f"r{n}", attempt_number=1,
                    thread_id=args.thread, status="ok", response_id=f"resp_{n}", token_usage={"input_tokens": 1}), own,
                    None),
                f"hook UserPromptSubmit codex{tag}": ([*hook, "UserPromptSubmit", "codex"], lambda n: payload(
                    "UserPromptSubmit", n, turn_id=f"t{n}", prompt="go on"), own, None),
                f"hook SessionStart codex, none pending{tag}": ([*hook, "SessionStart", "codex"], start, own, None),
                f"hook SessionStart codex, handoff pending{tag}": ([*hook, "SessionStart", "codex"], start,
                                                                   b.env(tmp / f"home-pending-{i}"),
                                                                   pending(tmp / f"home-pending-{i}")),
            }
        got: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in cases}
        for n in range(args.runs + 4):
            with path.open("ab") as fh:  # the next call, as Codex appends it
                fh.write(now_lines(groups[SETTLE + n % (len(groups) - SETTLE)], cwd))
            for name in round_order(cases, n):  # the installs take turns at going first
                cmd, stdin_of, case_env, prepare = cases[name]
                if prepare is not None:
                    prepare()
                w, c = one(cmd, stdin_of(n), case_env, cwd)
                if n >= 4:  # the first rounds settle the state
                    got[name][0].append(w)
                    got[name][1].append(c)
            time.sleep(0.01)
        base_w = statistics.median(got["python -I -c pass"][0])
        base_c = statistics.median(got["python -I -c pass"][1])
        print(f"{'':40s} {'wall ms':>8s} {'x':>5s} {'cpu ms':>8s} {'x':>5s}   (python: {python})")
        for name, (walls, cpus) in got.items():
            w, c = statistics.median(walls), statistics.median(cpus)
            print(f"{name:40s} {w:8.1f} {w / base_w:5.2f} {c:8.1f} {c / base_c:5.2f}")
        print(f"states folded: {len(list(tmp.glob('home*/**/*.json')))}")
        for i, other in enumerate(args.also, 1):
            print(f"--also #{i}: {other}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
