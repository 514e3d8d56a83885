"""The benchmark: ``python -m bench.run [--quick] [--out bench/out]``.

Builds its own inputs (cached under ``OUT/cache``), runs every measured command as a whole process
from this interpreter's venv ``bin/`` with ``SESSION_WATCHER_HOME`` in a temp folder, and writes
``OUT/results.md`` and ``OUT/results.json``. Rows whose command does not exist yet are reported as
not available instead of failing. Targets are reported as pass/miss; nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import generate, measure, report_md

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
CCUSAGE_DIRS = (Path("/opt/session-watcher-ci/ccusage"),)


@dataclass
class Scale:
    quick: bool
    small: int  # the "1 MB" session
    big: int  # the "1 GB" session and the replay input
    paths: int  # path-map size
    rounds: int  # timed runs per command
    corpus: generate.CorpusSpec
    report_repeats: int

    @property
    def big_label(self) -> str:
        return _size_label(self.big)

    @property
    def small_label(self) -> str:
        return _size_label(self.small)


def _size_label(n: int) -> str:
    if n >= 10**9:
        return f"{n / 10**9:g} GB"
    if n >= 10**6:
        return f"{n / 10**6:g} MB"
    return f"{n / 10**3:g} KB"


def scale_for(quick: bool, big: int | None) -> Scale:
    if quick:
        return Scale(True, 1_000_000, big or 4_000_000, 200, 7, generate.CorpusSpec.quick(), 2)
    return Scale(False, 1_000_000, big or 1_000_000_000, 5000, 60, generate.CorpusSpec(), 3)


@dataclass
class Bench:
    scale: Scale
    out: Path
    tmp: Path
    python: Path
    bin: Path
    results: dict[str, Any] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    log: list[str] = field(default_factory=list)

    @property
    def cache(self) -> Path:
        return self.out / "cache"

    def say(self, msg: str) -> None:
        line = f"[bench {time.strftime('%H:%M:%S')}] {msg}"
        print(line, file=sys.stderr, flush=True)
        self.log.append(line)

    def env(self, home: Path, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SESSION_WATCHER", "CLAUDE"))}
        env["SESSION_WATCHER_HOME"] = str(home)
        env.pop("PYTHONPROFILEIMPORTTIME", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's install has its .pyc files
        env.update(extra)
        return env

    def sw(self) -> str:
        return str(self.bin / "session-watcher")

    def launcher(self, kind: str) -> list[str]:
        """What Claude Code's settings run (install.sh writes these launchers): the venv's python,
        isolated, on `session-watcher-hook` / `-statusline`. For a venv made otherwise (the dev
        venv, this interpreter's) the same launchers are written into the bench's temp folder by
        the code install.sh runs."""
        path = self.bin / f"session-watcher-{kind}"
        if not path.exists():
            from session_watcher.hooks.launchers import write

            path = self.tmp / f"session-watcher-{kind}"
            if not path.exists():
                write(str(self.tmp))
        return [str(self.python), "-I", "-S", str(path)]  # the launcher sets up sys.path itself: no `site`

    def row(self, rid: str, group: str, label: str, **kw: Any) -> dict[str, Any]:
        r: dict[str, Any] = {"id": rid, "group": group, "label": label, "available": True, **kw}
        self.rows.append(r)
        return r

    def missing(self, rid: str, group: str, label: str, why: str) -> None:
        self.rows.append(
            {"id": rid, "group": group, "label": label, "available": False, "note": f"not available: {why}"}
        )


# ---- availability -----------------------------------------------------------------------------


def command_works(b: Bench, args: list[str], stdin: bytes = b"") -> str | None:
    """None if ``session-watcher ARGS`` runs and exits 0 on a throwaway home, else why not."""
    exe = b.bin / "session-watcher"
    if not exe.exists():
        return f"{exe} does not exist"
    home = Path(tempfile.mkdtemp(dir=b.tmp, prefix="probe-"))
    r = measure.run([str(exe), *args], stdin, env=b.env(home), timeout=120)
    if r.rc != 0:
        tail = (r.stderr or r.stdout).decode(errors="replace").strip().splitlines()[-1:] or ["?"]
        return f"`session-watcher {' '.join(args)}` exited {r.rc}: {tail[0][:160]}"
    return None


# ---- inputs ----------------------------------------------------------------------------------


def cached_transcript(b: Bench, name: str, size: int, seed: int, **kw: Any) -> tuple[Path, dict[str, Any]]:
    """A generated transcript, reused when its manifest matches (same size, seed, generator)."""
    path = b.cache / f"{name}.jsonl"
    meta = b.cache / f"{name}.meta.json"
    key = generate.corpus_key(generate.CorpusSpec()) + f"-{size}-{seed}-{sorted(kw.items())}"
    if path.exists() and meta.exists():
        m = json.loads(meta.read_text())
        if m.get("key") == key and path.stat().st_size == m["manifest"]["bytes"]:
            return path, m
    b.say(f"generating {name} ({_size_label(size)})")
    t0 = time.perf_counter()
    man = generate.write_transcript(path, size, seed, **kw)
    m = {"key": key, "manifest": man.as_dict(), "seconds": round(time.perf_counter() - t0, 2)}
    meta.write_text(json.dumps(m))
    return path, m


def session_id_of(path: Path) -> str:
    with path.open("rb") as fh:
        for line in fh:
            sid = json.loads(line).get("sessionId")
            if isinstance(sid, str):
                return sid
    raise ValueError(f"no sessionId in {path}")


def make_project(root: Path, n: int) -> list[Path]:
    """A git work tree with ``n`` small source files (canonical paths must exist on disk)."""
    files = []
    for i in range(n):
        p = root / "src" / f"pkg{i // 50:03d}" / f"mod{i:05d}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("".join(f"value_{i}_{k} = {k}\n" for k in range(20)))
        files.append(p)
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(root)], check=False)
    return files


def read_payload(sid: str, transcript: Path, cwd: Path, file: Path, n: int) -> dict[str, Any]:
    content = file.read_text()
    return {
        "session_id": sid,
        "transcript_path": str(transcript),
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "PostToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": str(file)},
        "tool_use_id": f"toolu_bench{n:08d}",
        "duration_ms": 3,
        "tool_response": {
            "type": "text",
            "file": {
                "filePath": str(file),
                "content": content,
                "numLines": content.count("\n"),
                "startLine": 1,
                "totalLines": content.count("\n"),
            },
        },
    }


def stop_payload(sid: str, transcript: Path, cwd: Path) -> dict[str, Any]:
    return {
        "session_id": sid,
        "transcript_path": str(transcript),
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": "Done.",
        "background_tasks": [],
        "session_crons": [],
    }


HOOK_EVENT = {"stop": "Stop", "prompt": "UserPromptSubmit"}


def prompt_payload(sid: str, transcript: Path, cwd: Path) -> dict[str, Any]:
    return {
        "session_id": sid,
        "transcript_path": str(transcript),
        "cwd": str(cwd),
        "prompt_id": "bench-prompt",
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": "carry on with the next step",
    }


def statusline_payload(sid: str, transcript: Path, cwd: Path) -> dict[str, Any]:
    lines = (FIXTURES / "real-client" / "statusline.jsonl").read_text().splitlines()
    doc: dict[str, Any] = json.loads(lines[len(lines) // 2])["payload"]
    doc.update({"session_id": sid, "transcript_path": str(transcript), "cwd": str(cwd)})
    doc["workspace"] = {"current_dir": str(cwd), "project_dir": str(cwd), "added_dirs": []}
    return doc


def call_chunks(sid: str, cwd: Path, n: int, seed: int) -> list[bytes]:
    """``n`` one-API-call blocks of lines to append between timed hook runs (same for every session)."""
    import io

    prof = generate.get_profile()
    w = generate.SessionWriter(prof, seed, session_id=sid, cwd=str(cwd))
    w.stock = 60_000
    chunks = []
    for _ in range(n):
        buf = io.BytesIO()
        w.write_call(buf)
        chunks.append(buf.getvalue())
    return chunks


# ---- hook and status line latency -------------------------------------------------------------


@dataclass
class Session:
    label: str
    transcript: Path
    size0: int
    sid: str
    home: Path
    chunks: list[bytes]


def state_file_of(home: Path, sid: str) -> Path:
    """The session's state file under SESSION_WATCHER_HOME=`home`: where the package puts it
    (session_watcher.state.store), so a change of layout moves the bench with it."""
    from session_watcher.state import store

    saved = os.environ.get("SESSION_WATCHER_HOME")
    os.environ["SESSION_WATCHER_HOME"] = str(home)
    try:
        return Path(store.session_file(sid))
    finally:
        if saved is None:
            del os.environ["SESSION_WATCHER_HOME"]
        else:
            os.environ["SESSION_WATCHER_HOME"] = saved


def build_session(b: Bench, label: str, transcript: Path, cwd: Path, files: list[Path]) -> Session | None:
    """Fresh home; the hook fed PostToolUse Read payloads for every file, caught up on the transcript."""
    sid = session_id_of(transcript)
    home = b.tmp / f"home-{label.replace(' ', '')}"
    home.mkdir()
    feed = b.tmp / f"feed-{label.replace(' ', '')}.jsonl"
    with feed.open("w") as fh:
        for i, f in enumerate(files):
            fh.write(json.dumps({"event": "PostToolUse", "payload": read_payload(sid, transcript, cwd, f, i)}) + "\n")
    state_file = state_file_of(home, sid)
    b.say(f"building the {label} session: catch up on the transcript, {len(files)} Read payloads")
    r = measure.run(
        [str(b.python), "-m", "bench.feed", str(feed), str(state_file), str(transcript)],
        env=b.env(home, PYTHONPATH=str(ROOT)),
        cwd=ROOT,
        timeout=3600,
    )
    if r.rc != 0:
        b.say(f"building the {label} session failed: {r.stderr.decode(errors='replace')[-400:]}")
        return None
    info = json.loads(r.stdout.decode().strip().splitlines()[-1])
    b.results.setdefault("sessions", {})[label] = {
        **info,
        "paths": _paths_in_state(state_file),
        "stateBytes": state_file.stat().st_size if state_file.exists() else None,
    }
    b.say(f"  {info}")
    return Session(
        label,
        transcript,
        transcript.stat().st_size,
        sid,
        home,
        call_chunks(sid, cwd, b.scale.rounds + 2, seed=99),
    )


def small_session(out: Path, tmp: Path, python: Path, paths: int,
                  big: int | None = None) -> tuple[Bench, Session | None, Path, Path, list[Path]]:
    """The 1 MB session of the quick scale (`big`: the full run's big session of that size instead)
    with `paths` files read, in `tmp`: (bench, session or None when it could not be built, its
    transcript, the project folder, the project's files)."""
    s = scale_for(True, None)
    b = Bench(s, out.resolve(), tmp, python, python.parent)
    b.cache.mkdir(parents=True, exist_ok=True)
    cwd = tmp / "proj"
    cwd.mkdir()
    files = make_project(cwd, paths + 1)
    if big:
        transcript, _ = cached_transcript(b, "session-big", big, 12)
    else:
        transcript, _ = cached_transcript(b, "session-small", s.small, 11)
    label = _size_label(big or s.small)
    return b, build_session(b, label, transcript, cwd, files[:paths]), transcript, cwd, files


def _paths_in_state(state_file: Path) -> int | None:
    try:
        doc = json.loads(state_file.read_text())
    except (OSError, ValueError):
        return None
    paths = doc.get("paths")
    return len(paths) if isinstance(paths, dict | list) else None


OTLP_LABELS = {
    "otlp-off": "hook PostToolUse (Read, known path), OpenTelemetry export off",
    "otlp-on": "the same, export on, collector up (the exporter loops: the hook stats its heartbeat)",
    "otlp-down": "the same, export on, collector down (the exporter backs off: the hook stats its heartbeat)",
    "otlp-spawn": "the same, export on, heartbeat stale every run: a spawn each run (live: once per interval)",
}


def otlp_variants(b: Bench, sess: Session) -> tuple[Any, list[tuple[str, Session, str, list[str], Any]]]:
    """The export's cost to a hook: four copies of the small session's home, export off / on with a
    loopback collector that answers 200 / on with a collector that is down (a closed port) / on with
    the heartbeat made stale before every run (a spawn each time). None of them appends lines of its
    own: each folds what the other rows appended since its last run, like the others."""
    import http.server
    import socket
    import threading

    class Sink(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    sink = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        down = sock.getsockname()[1]
    endpoints = {"otlp-off": None, "otlp-on": f"http://127.0.0.1:{sink.server_address[1]}",
                 "otlp-down": f"http://127.0.0.1:{down}", "otlp-spawn": f"http://127.0.0.1:{down}"}
    rows = []
    for kind, url in endpoints.items():
        home = b.tmp / f"home-{kind}"
        shutil.copytree(sess.home, home)
        cfg = home / "config" / "config.toml"
        cfg.parent.mkdir(parents=True, exist_ok=True)
        cfg.write_text("[otlp]\nenabled = false\n" if url is None else
                       f'[otlp]\nenabled = true\nendpoint = "{url}"\ninterval = 60\ntimeout = 2\n')
        variant = Session(sess.label, sess.transcript, sess.size0, sess.sid, home, sess.chunks)
        heartbeat = home / "state" / "otlp" / "heartbeat"

        def stale(path: Path = heartbeat) -> None:
            if path.exists():
                os.utime(path, (0, 0))

        rows.append((f"hook-{kind}@{sess.label}", variant, kind, [*b.launcher("hook"), "PostToolUse"],
                     stale if kind == "otlp-spawn" else None))
    b.results["otlpHomes"] = [str(b.tmp / f"home-{k}") for k in endpoints]
    return sink, rows


def stop_otlp(b: Bench, sink: Any) -> None:
    """Stop the collector stand-in and the exporters the variants' hooks started (their pids are in
    their homes' lock files), and count what the collector received."""
    import signal

    sink.shutdown()
    for home in b.results.get("otlpHomes", []):
        lock = Path(home) / "state" / "otlp" / "exporter.lock"
        try:
            pid = int(lock.read_text().split()[0])
            os.kill(pid, signal.SIGTERM)
        except (OSError, ValueError, IndexError):
            pass


Plan = list[tuple[str, Session | None, str, list[str], Any]]  # (row id, session, kind, argv, prepare)
LATENCY_LABELS = {
    "post-known": "hook PostToolUse (Read, path already in the map)",
    "post-new": "hook PostToolUse (Read, new path)",
    "stop": "hook Stop",
    "prompt": "hook UserPromptSubmit (state current; the generated session is old, so the cold-cache warning)",
    "statusline": "statusline",
    **OTLP_LABELS,
}


class Inputs:
    """The project, its files (the first `paths` already in the sessions' maps, the rest new) and the
    built sessions the latency rounds run the hooks against."""

    def __init__(self, cwd: Path, base_files: list[Path], new_files: list[Path], sessions: list[Session]) -> None:
        self.cwd, self.base_files, self.new_files, self.sessions = cwd, base_files, new_files, sessions
        self.new_iter = iter(new_files)

    def stdin(self, sess: Session, kind: str, rnd: int) -> bytes:
        """The payload a hook of `kind` gets in round `rnd` (a post or stop event first appends the
        new lines a live hook run would see)."""
        cwd = self.cwd
        if kind in ("post-known", "post-new", "stop"):
            with sess.transcript.open("ab") as fh:
                fh.write(sess.chunks[rnd % len(sess.chunks)])
        if kind == "post-known" or kind.startswith("otlp-"):
            f = self.base_files[(rnd * 37) % len(self.base_files)]
            payload = read_payload(sess.sid, sess.transcript, cwd, f, 10**6 + rnd)
        elif kind == "post-new":
            f = next(self.new_iter, self.new_files[0])
            payload = read_payload(sess.sid, sess.transcript, cwd, f, 2 * 10**6 + rnd)
        elif kind == "stop":
            payload = stop_payload(sess.sid, sess.transcript, cwd)
        elif kind == "prompt":
            payload = prompt_payload(sess.sid, sess.transcript, cwd)
        else:
            payload = statusline_payload(sess.sid, sess.transcript, cwd)
        return json.dumps(payload).encode()


def latency_inputs(b: Bench, hook_ok: str | None) -> Inputs:
    """The project and the two generated sessions (small, big), built when the hook works."""
    s = b.scale
    cwd = b.tmp / "proj"
    cwd.mkdir()
    files = make_project(cwd, s.paths + 2 * s.rounds + 4)
    small, _ = cached_transcript(b, "session-small", s.small, 11)
    big, big_meta = cached_transcript(b, "session-big", s.big, 12)
    b.results.setdefault("inputs", {})["sessionBig"] = big_meta["manifest"]
    sessions: list[Session] = []
    if hook_ok is None:
        for label, t in ((s.small_label, small), (s.big_label, big)):
            sess = build_session(b, label, t, cwd, files[: s.paths])
            if sess:
                sessions.append(sess)
    return Inputs(cwd, files[: s.paths], files[s.paths :], sessions)


def latency_plan(b: Bench, sessions: list[Session], sl_ok: str | None) -> Plan:
    """The commands timed: the two interpreter baselines, then per session each hook event and the
    status line."""
    plan: Plan = [
        ("python-I-S", None, "python -I -S -c pass", [str(b.python), "-I", "-S", "-c", "pass"], None),
        ("python-I", None, "python -I -c pass", [str(b.python), "-I", "-c", "pass"], None),
    ]
    for sess in sessions:
        for kind in ("post-known", "post-new", "stop", "prompt"):
            argv = [*b.launcher("hook"), HOOK_EVENT.get(kind, "PostToolUse")]
            plan.append((f"hook-{kind}@{sess.label}", sess, kind, argv, None))
        if sl_ok is None:
            plan.append((f"statusline@{sess.label}", sess, "statusline", b.launcher("statusline"), None))
    return plan


def latency_rounds(b: Bench, plan: Plan, inputs: Inputs) -> tuple[dict[str, list[float]], dict[str, str]]:
    """Each command once a round, in a shuffled order; round 0 warms the page cache and is not
    counted. (wall times in ms by row id, the last failure's stderr by row id)"""
    timings: dict[str, list[float]] = {rid: [] for rid, *_ in plan}
    fails: dict[str, str] = {}
    rng = random.Random(5)
    for rnd in range(b.scale.rounds + 1):
        order = list(plan)
        rng.shuffle(order)
        for rid, sess, kind, argv, prepare in order:
            env = b.env(b.tmp / "home-none")
            if prepare is not None:
                prepare()
            stdin = b""
            if sess is not None:
                env = b.env(sess.home)
                stdin = inputs.stdin(sess, kind, rnd)
            r = measure.run(argv, stdin, env=env, cwd=inputs.cwd)
            if r.rc != 0:
                fails[rid] = r.stderr.decode(errors="replace")[-200:]
            if rnd:
                timings[rid].append(r.wall * 1000)
    return timings, fails


def latency_rows(b: Bench, plan: Plan, timings: dict[str, list[float]], fails: dict[str, str]) -> None:
    """One row per command: its median and p95, and as a multiple of each interpreter baseline."""
    base_i = measure.stats(timings["python-I"])["median"]
    base_is = measure.stats(timings["python-I-S"])["median"]
    for rid, sess, kind, argv, _ in plan:
        st = measure.stats(timings[rid])
        label = LATENCY_LABELS.get(kind, " ".join(Path(argv[0]).name if i == 0 else a for i, a in enumerate(argv)))
        if sess is not None:
            label = f"{label} [{sess.label} transcript, {b.scale.paths} paths]"
        group = ("statusline" if kind == "statusline" else "otlp" if kind.startswith("otlp-")
                 else "hook" if sess else "baseline")
        b.row(rid, group, label, medianMs=st["median"], p95Ms=st["p95"], n=st["n"], xPythonI=st["median"] / base_i,
              xPythonIS=st["median"] / base_is, note=("exit != 0: " + fails[rid]) if rid in fails else "")


def latency_missing(b: Bench, hook_ok: str | None, sl_ok: str | None, sessions: list[Session]) -> None:
    """The rows that could not be measured, each with why."""
    s = b.scale
    if hook_ok is not None or not sessions:
        why = hook_ok or "the session state could not be built (see log)"
        for kind in ("post-known", "post-new", "stop", "prompt"):
            for lab in (s.small_label, s.big_label):
                b.missing(f"hook-{kind}@{lab}", "hook", f"{LATENCY_LABELS[kind]} [{lab} transcript]", why)
    if sl_ok is not None or not sessions:
        why = sl_ok or "no session (the hook is needed to build its state)"
        for lab in (s.small_label, s.big_label):
            b.missing(f"statusline@{lab}", "statusline", f"statusline [{lab} transcript]", why)


def latency(b: Bench) -> None:
    hook_ok = command_works(b, ["hook", "PostToolUse"], b"{}")
    sl_ok = command_works(b, ["statusline"], b"{}")
    if hook_ok is not None:
        try:
            import session_watcher.hooks.run  # noqa: F401
        except ImportError as exc:
            hook_ok = f"{hook_ok}; hooks.run: {exc}"
    inputs = latency_inputs(b, hook_ok)
    sessions = inputs.sessions
    plan = latency_plan(b, sessions, sl_ok)
    sink = None
    if sessions and hook_ok is None:
        sink, variants = otlp_variants(b, sessions[0])
        plan += variants
    b.say(f"timing {len(plan)} commands x {b.scale.rounds} rounds")
    timings, fails = latency_rounds(b, plan, inputs)
    for sess in sessions:  # leave the cached input as generated
        os.truncate(sess.transcript, sess.size0)
    if sink is not None:
        stop_otlp(b, sink)
    latency_rows(b, plan, timings, fails)
    latency_missing(b, hook_ok, sl_ok, sessions)


# ---- import budget -----------------------------------------------------------------------------


def imports(b: Bench) -> None:
    cwd = b.tmp / "proj"
    sid = "bench-imports"
    t = b.tmp / "imports.jsonl"
    shutil.copyfile(FIXTURES / "transcripts" / "short.jsonl", t)
    files = sorted((cwd / "src").rglob("*.py"))[:1]
    cases = [
        (
            "import-python-I",
            "python -I -c pass",
            [str(b.python), "-I", "-X", "importtime", "-c", "pass"],
            b"",
            None,
        ),
        (
            "import-hook",
            "hook PostToolUse (Read)",
            [*b.launcher("hook")[:2], "-X", "importtime", *b.launcher("hook")[2:], "PostToolUse"],
            json.dumps(read_payload(sid, t, cwd, files[0], 1)).encode() if files else b"{}",
            ["hook", "PostToolUse"],
        ),
        (
            "import-statusline",
            "statusline",
            [*b.launcher("statusline")[:2], "-X", "importtime", *b.launcher("statusline")[2:]],
            json.dumps(statusline_payload(sid, t, cwd)).encode(),
            ["statusline"],
        ),
    ]
    out = {}
    for rid, label, argv, stdin, probe in cases:
        why = command_works(b, probe, b"{}") if probe else None
        if why:
            b.missing(rid, "imports", f"-X importtime: {label}", why)
            continue
        home = b.tmp / f"home-{rid}"
        best: dict[str, Any] | None = None
        for _ in range(3):
            r = measure.run(argv, stdin, env=b.env(home, PYTHONPROFILEIMPORTTIME="1"), cwd=cwd)
            parsed = measure.importtime(r.stderr)
            if best is None or parsed["totalMs"] < best["totalMs"]:
                best = parsed
        assert best is not None
        out[rid] = best
        b.row(
            rid,
            "imports",
            f"-X importtime: {label}",
            totalMs=best["totalMs"],
            modules=best["modules"],
            note=", ".join(f"{t['module']} {t['ms']:.1f}" for t in best["top"][:6]),
        )
    b.results["imports"] = out


# ---- replay ----------------------------------------------------------------------------------


def replay(b: Bench) -> None:
    s = b.scale
    why = command_works(b, ["replay", "--help"])
    big, meta = cached_transcript(b, "session-big", s.big, 12)
    if why:
        b.missing("replay", "replay", f"replay --json [{s.big_label} transcript]", why)
        return
    home = b.tmp / "home-replay"
    out = b.tmp / "replay.json"
    b.say(f"replay of the {s.big_label} transcript")
    r = measure.run_rss([b.sw(), "replay", str(big), "--json"], env=b.env(home), cwd=b.tmp, stdout_path=out)
    calls = meta["manifest"]["calls"]
    note = ""
    try:
        doc = json.loads(out.read_text())
        reported = _find_number(doc, ("calls", "apiCalls", "callCount"))
        if reported is not None:
            note = f"replay reports {reported:g} calls, generator wrote {calls}"
    except (OSError, ValueError):
        note = "replay output is not JSON"
    if r.rc != 0:
        note = f"exit {r.rc}: {r.stderr.decode(errors='replace')[-200:]}"
    mb = big.stat().st_size / 1e6
    b.row(
        "replay",
        "replay",
        f"replay --json [{s.big_label} transcript, {calls} calls]",
        seconds=r.wall,
        mbPerS=mb / r.wall,
        callsPerS=calls / r.wall,
        peakRssMB=r.maxrss_kb / 1024,
        note=note,
    )


def _find_number(doc: Any, keys: tuple[str, ...]) -> float | None:
    if isinstance(doc, dict):
        for k in keys:
            if isinstance(doc.get(k), int | float) and not isinstance(doc.get(k), bool):
                return float(doc[k])
        for v in doc.values():
            found = _find_number(v, keys)
            if found is not None:
                return found
    elif isinstance(doc, list):
        for v in doc[:50]:
            found = _find_number(v, keys)
            if found is not None:
                return found
    return None


# ---- report on the corpus ------------------------------------------------------------------------


def find_ccusage(b: Bench) -> list[str] | None:
    """The ccusage native binary (preferred: no node start-up) or its node wrapper."""
    for d in (*CCUSAGE_DIRS, b.cache / "ccusage"):
        native = list(d.glob("node_modules/@ccusage/ccusage-*/bin/*")) + list(
            d.glob("node_modules/@ccusage/ccusage-*/ccusage*")
        )
        for n in native:
            if n.is_file() and os.access(n, os.X_OK):
                return [str(n)]
        wrapper = d / "node_modules" / ".bin" / "ccusage"
        if wrapper.exists():
            return [str(wrapper)]
    if shutil.which("npm") and not b.scale.quick:  # quick (CI) never reaches the network
        d = b.cache / "ccusage"
        d.mkdir(parents=True, exist_ok=True)
        b.say("installing ccusage@20.0.24 into the cache")
        r = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(d), "ccusage@20.0.24"],
            capture_output=True,
            check=False,
        )
        if r.returncode == 0 and (d / "node_modules" / ".bin" / "ccusage").exists():
            return find_ccusage(b)
    return None


TOKEN_KEYS = {
    "input": ("inputTokens", "input", "input_tokens", "uncachedInput"),
    "output": ("outputTokens", "output", "output_tokens"),
    "cacheRead": ("cacheReadTokens", "cacheRead", "cache_read_input_tokens", "cacheReadInputTokens"),
    "cacheCreation": (
        "cacheCreationTokens",
        "cacheCreation",
        "cacheWrite",
        "cache_creation_input_tokens",
        "cacheCreationInputTokens",
    ),
}


def token_totals(doc: Any) -> dict[str, float] | None:
    """Find the totals in a report: a ``totals`` object if there is one, else the first dict with all four."""
    candidates: list[Any] = []
    if isinstance(doc, dict):
        for key in ("totals", "total", "tokenUsage", "tokens"):
            if key in doc:
                candidates.append(doc[key])
    candidates.append(doc)
    for c in candidates:
        found = _totals_in(c, depth=0)
        if found:
            return found
    if isinstance(doc, dict) and isinstance(doc.get("sessions"), list):  # sum per-session tokens
        acc: dict[str, float] = {}
        for sess in doc["sessions"]:
            got = _totals_in(sess, depth=0)
            if got is None:
                return None
            for k, v in got.items():
                acc[k] = acc.get(k, 0.0) + v
        return acc or None
    return None


def _totals_in(doc: Any, depth: int) -> dict[str, float] | None:
    if depth > 4:
        return None
    if isinstance(doc, dict):
        got = {}
        for name, keys in TOKEN_KEYS.items():
            for k in keys:
                if isinstance(doc.get(k), int | float) and not isinstance(doc.get(k), bool):
                    got[name] = float(doc[k])
                    break
        if len(got) == 4:
            return got
        for k in ("totals", "total", "tokenUsage", "tokens"):
            if k in doc:
                f = _totals_in(doc[k], depth + 1)
                if f:
                    return f
    return None


def report_ccusage(b: Bench, root: Path, totals: dict[str, Any]) -> dict[str, Any] | None:
    """ccusage over the corpus (`report_repeats` runs): its row, its token totals into `totals`; its
    wall-time stats (None: no ccusage)."""
    s = b.scale
    cc = find_ccusage(b)
    if cc is None:
        b.missing("ccusage", "report", "ccusage session --json --offline", "ccusage not found and npm failed")
        return None
    walls = []
    doc: Any = None
    for _ in range(s.report_repeats):
        r = measure.run(
            [*cc, "session", "--json", "--offline"],
            env=b.env(b.tmp / "home-cc", CLAUDE_CONFIG_DIR=str(root)),
            cwd=b.tmp,
        )
        walls.append(r.wall)
        if r.rc == 0:
            doc = json.loads(r.stdout)
    cc_stats = measure.stats(walls)
    if doc is not None:
        totals["ccusage"] = token_totals(doc)
    vr = measure.run([*cc, "--version"], env=b.env(b.tmp / "home-cc"))
    version = vr.stdout.decode(errors="replace").strip().splitlines()[-1:] or ["?"]
    b.results["machine"]["versions"]["ccusage"] = version[0].removeprefix("ccusage ")
    kind = "native binary" if "@ccusage" in cc[0] else "node wrapper"
    b.row(
        "ccusage",
        "report",
        f"ccusage session --json --offline [{kind}]",
        seconds=cc_stats["median"],
        p95s=cc_stats["p95"],
        n=cc_stats["n"],
        note="" if doc is not None else "ccusage failed",
    )
    return cc_stats


def report(b: Bench) -> None:
    s = b.scale
    root = b.cache / ("corpus-quick" if s.quick else "corpus")
    b.say(f"corpus: {s.corpus.files} files, {_size_label(s.corpus.total)} (generated once, then cached)")
    t0 = time.perf_counter()
    manifest = generate.write_corpus(root, s.corpus)
    b.results.setdefault("inputs", {})["corpus"] = {
        **manifest["truth"],
        "files": len(manifest["files"]),
        "spec": manifest["spec"],
        "secondsToPrepare": round(time.perf_counter() - t0, 1),
    }
    projects = root / "projects"
    truth = dict(manifest["truth"]["tokens"])
    totals: dict[str, Any] = {"generator (truth)": truth}
    cc_stats = report_ccusage(b, root, totals)
    why = command_works(b, ["report", "--help"])
    if why:
        for rid, label in (("report-cold", "cold"), ("report-warm", "warm"), ("report-append", "append")):
            b.missing(rid, "report", f"report --json ({label})", why)
        b.results["totals"] = totals
        return
    argv = [b.sw(), "report", "--projects", str(projects), "--json"]

    def one(home: Path) -> tuple[float, Any, str]:
        r = measure.run_rss(argv, env=b.env(home), cwd=b.tmp, stdout_path=b.tmp / "report.json")
        try:
            doc = json.loads(r.stdout)
        except ValueError:
            doc = None
        note = "" if r.rc == 0 else f"exit {r.rc}: {r.stderr.decode(errors='replace')[-200:]}"
        return r.wall, doc, note

    cold_walls, notes = [], []
    doc: Any = None
    home = b.tmp / "home-report-0"
    for i in range(1 if not s.quick else 2):
        home = b.tmp / f"home-report-{i}"
        w, doc, note = one(home)
        cold_walls.append(w)
        notes.append(note)
    b.say(f"report cold: {cold_walls}")
    if doc is not None:
        totals["report (cold)"] = token_totals(doc)
    warm_walls = []
    for _ in range(s.report_repeats):
        w, _doc, note = one(home)
        warm_walls.append(w)
        notes.append(note)
    # append one API call to 1 % of the files, as live sessions would
    rng = random.Random(3)
    files = [root / f for f in manifest["files"]]
    chosen = rng.sample(files, max(1, len(files) // 100))
    sizes = {p: p.stat().st_size for p in chosen}
    added = generate.Manifest()
    for i, p in enumerate(chosen):
        added.add(generate.append_calls(p, 1, seed=500 + i))
    try:
        w_app, doc_app, note = one(home)
        notes.append(note)
    finally:
        for p, n in sizes.items():
            os.truncate(p, n)
    add = added.as_dict()["tokens"]
    if doc_app is not None:
        totals["report (after append)"] = token_totals(doc_app)
        totals["generator (truth, after append)"] = {k: truth[k] + add[k] for k in truth}
    cold = measure.stats(cold_walls)
    warm = measure.stats(warm_walls)
    note = "; ".join(n for n in notes if n)
    b.row(
        "report-cold",
        "report",
        f"report --json, cold (empty index) [{len(files)} files]",
        seconds=cold["median"],
        n=cold["n"],
        note=note,
    )
    b.row(
        "report-warm",
        "report",
        "report --json, warm (unchanged corpus)",
        seconds=warm["median"],
        p95s=warm["p95"],
        n=warm["n"],
        xFasterThanCold=cold["median"] / warm["median"],
    )
    b.row(
        "report-append",
        "report",
        f"report --json, after appending to {len(chosen)} files (1 %)",
        seconds=w_app,
        n=1,
        xFasterThanCold=cold["median"] / w_app,
    )
    if cc_stats:
        b.results["reportVsCcusage"] = cold["median"] / cc_stats["median"]
    b.results["totals"] = totals


# ---- targets ---------------------------------------------------------------------------------


def targets(b: Bench) -> list[dict[str, Any]]:
    rows = {r["id"]: r for r in b.rows if r.get("available")}
    s = b.scale
    out: list[dict[str, Any]] = []

    def add(name: str, value: float | None, limit: float, better: str, unit: str = "x") -> None:
        if value is None or not math.isfinite(value):
            out.append({"target": name, "value": None, "limit": limit, "pass": None, "note": "not measured"})
            return
        ok = value <= limit if better == "<=" else value >= limit
        miss = (
            "" if ok else (f"missed by {value / limit:.2f}x" if better == "<=" else f"missed by {limit / value:.2f}x")
        )
        out.append(
            {
                "target": name,
                "value": value,
                "limit": limit,
                "op": better,
                "unit": unit,
                "pass": ok,
                "note": miss,
            }
        )

    for kind in ("post-known", "post-new", "stop", "prompt"):
        for lab in (s.small_label, s.big_label):
            r = rows.get(f"hook-{kind}@{lab}")
            add(f"hook {kind} [{lab}] median / python -I -c pass", r["xPythonI"] if r else None, 1.5, "<=")
        a, c = rows.get(f"hook-{kind}@{s.big_label}"), rows.get(f"hook-{kind}@{s.small_label}")
        add(
            f"hook {kind}: {s.big_label} / {s.small_label} median",
            a["medianMs"] / c["medianMs"] if a and c else None,
            1.1,
            "<=",
        )
    off = rows.get(f"hook-otlp-off@{s.small_label}")
    for kind, limit in (("otlp-on", 1.05), ("otlp-down", 1.05), ("otlp-spawn", 1.10)):
        r = rows.get(f"hook-{kind}@{s.small_label}")
        add(f"hook PostToolUse {kind} [{s.small_label}] median / export off",
            r["medianMs"] / off["medianMs"] if r and off else None,
            limit, "<=")
    for lab in (s.small_label, s.big_label):
        r = rows.get(f"statusline@{lab}")
        add(f"statusline [{lab}] median / python -I -c pass", r["xPythonI"] if r else None, 1.3, "<=")
    r = rows.get("report-warm")
    add("report warm: times faster than cold", r["xFasterThanCold"] if r else None, 20, ">=")
    cold, cc = rows.get("report-cold"), rows.get("ccusage")
    add("report cold / ccusage wall", cold["seconds"] / cc["seconds"] if cold and cc else None, 1.0, "<=")
    r = rows.get("replay")
    add(f"replay MB/s [{s.big_label}]", r["mbPerS"] if r else None, 100, ">=", "MB/s")
    return out


PACKAGES = ("session_watcher",)


def compile_packages(python: Path) -> str:
    """Byte-compile the installed packages, as ``pip install`` does: measured imports read .pyc files
    (with PYTHONDONTWRITEBYTECODE set, as in some CI shells, every run would recompile the sources)."""
    import importlib.util

    dirs = []
    for pkg in PACKAGES:
        spec = importlib.util.find_spec(pkg)
        if spec and spec.submodule_search_locations:
            dirs += list(spec.submodule_search_locations)
    if not dirs:
        return "no packages found"
    r = subprocess.run([str(python), "-m", "compileall", "-q", *dirs], capture_output=True, check=False)
    return f"compileall {len(dirs)} packages: exit {r.returncode}"


def fresh_venv(b_out: Path, say: Any) -> Path:
    """The venv a user gets: made by ``install.sh --venv-only`` itself (regular install, .pyc
    compiled, setuptools removed, and the launchers Claude Code's settings run), current code."""
    data = b_out / "cache" / "install"
    say(f"install.sh --venv-only --data {data}")
    subprocess.run(["sh", str(ROOT / "install.sh"), "--venv-only", "--data", str(data)], check=True,
                   stdout=subprocess.DEVNULL)
    return data / "venv" / "bin" / "python"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="tiny inputs, a few rounds: under a minute (CI)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    ap.add_argument(
        "--big",
        type=generate.parse_size,
        default=None,
        help="size of the big session and the replay input (default 1GB; quick 4MB)",
    )
    ap.add_argument("--rounds", type=int, default=None, help="timed runs per command")
    ap.add_argument("--only", default="latency,imports,replay,report", help="comma-separated sections")
    ap.add_argument(
        "--fresh-venv",
        action="store_true",
        help="measure a regular (non-editable) install in OUT/cache/venv instead of this venv",
    )
    args = ap.parse_args(argv)
    s = scale_for(args.quick, args.big)
    if args.rounds:
        s.rounds = args.rounds
    out: Path = args.out.resolve()
    (out / "cache").mkdir(parents=True, exist_ok=True)
    python = Path(sys.executable)  # the venv's interpreter as invoked (not resolved: keeps the venv)
    if args.fresh_venv:
        python = fresh_venv(out, lambda m: print(f"[bench] {m}", file=sys.stderr, flush=True))
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="sw-bench-") as tmp:
        b = Bench(s, out, Path(tmp), python, python.parent)
        b.results["machine"] = measure.machine(python)
        b.results["mode"] = "quick" if s.quick else "full"
        b.results["bytecode"] = "compiled by pip" if args.fresh_venv else compile_packages(python)
        b.results["install"] = "regular install in a fresh venv" if args.fresh_venv else f"this venv ({python})"
        b.results["shape"] = {"fixtures": generate.get_profile().describe()}
        sections = set(args.only.split(","))
        for name, fn in (("latency", latency), ("imports", imports), ("replay", replay), ("report", report)):
            if name in sections:
                try:
                    fn(b)
                except Exception as exc:  # one broken section must not hide the others
                    b.say(f"section {name} failed: {exc!r}")
                    b.results.setdefault("errors", {})[name] = repr(exc)
        from bench import profile as profile_mod

        sample, _ = cached_transcript(b, "shape-sample", 4_000_000 if s.quick else 20_000_000, 13)
        b.results["shape"]["generated"] = profile_mod.load([sample]).describe()
        b.results["machine"]["loadAverageAtEnd"] = measure.load_average()
        b.results["rows"] = b.rows
        b.results["targets"] = targets(b)
        b.results["seconds"] = round(time.perf_counter() - t0, 1)
        b.results["log"] = b.log
    (out / "results.json").write_text(json.dumps(b.results, indent=1, default=str, allow_nan=True))
    (out / "results.md").write_text(report_md.render(b.results))
    print(f"wrote {out / 'results.md'} and {out / 'results.json'} in {b.results['seconds']} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
