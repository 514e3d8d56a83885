"""Where one hook run's time goes: ``python -m bench.hookprof [--paths 5000] [--runs 30]``.

Builds a session like the benchmark's (a 1 MB transcript, a path map of N paths), then prints
(1) the process-level split: interpreter start with and without ``site``, the console script's
imports, the whole hook; (2) a cProfile of the in-process part, ``hooks.run.run``, over many runs.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

from bench import measure
from bench import run as bench_run


def codecs(raw: bytes) -> None:
    """What the state's size costs per run in a few encodings (what would close the gap)."""
    import marshal
    import pickle

    doc = json.loads(raw)
    paths = doc.get("paths")
    print(
        f"state: {len(raw) / 1e6:.2f} MB, of which the path map "
        f"{len(json.dumps(paths)) / 1e6 if paths is not None else 0:.2f} MB"
    )

    def best(fn: object, n: int = 5) -> float:
        assert callable(fn)
        ts = []
        for _ in range(n):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        return min(ts) * 1000

    m = marshal.dumps(doc)
    pk = pickle.dumps(doc, protocol=pickle.HIGHEST_PROTOCOL)
    print(f"  json    loads {best(lambda: json.loads(raw)):6.1f} ms  dumps {best(lambda: json.dumps(doc)):6.1f} ms")
    print(f"  marshal loads {best(lambda: marshal.loads(m)):6.1f} ms  dumps {best(lambda: marshal.dumps(doc)):6.1f} ms")
    print(
        f"  pickle  loads {best(lambda: pickle.loads(pk)):6.1f} ms  dumps {best(lambda: pickle.dumps(doc, 5)):6.1f} ms"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.hookprof", description=__doc__)
    ap.add_argument("--paths", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--out", type=Path, default=bench_run.ROOT / "bench" / "out")
    args = ap.parse_args(argv)
    python = Path(sys.executable)
    with tempfile.TemporaryDirectory(prefix="sw-hookprof-") as tmp:
        b, sess, transcript, cwd, files = bench_run.small_session(args.out, Path(tmp), python, args.paths)
        if sess is None:
            print("could not build the session", file=sys.stderr)
            return 1
        state_file = bench_run.state_file_of(sess.home, sess.sid)
        payload = json.dumps(bench_run.read_payload(sess.sid, transcript, cwd, files[7], 123)).encode()
        env = b.env(sess.home)
        print(bench_run.compile_packages(python))

        def timed(argv: list[str], stdin: bytes = b"", extra: dict[str, str] | None = None) -> float:
            walls = [measure.run(argv, stdin, env={**env, **(extra or {})}, cwd=cwd).wall for _ in range(args.runs)]
            return measure.stats([w * 1000 for w in walls])["median"]

        sw = str(python.parent / "session-watcher")
        print(f"state file: {state_file.stat().st_size / 1e6:.2f} MB, {args.paths} paths requested")
        print("process level (median ms):")
        rows = [
            ("python -I -S -c pass", timed([str(python), "-I", "-S", "-c", "pass"])),
            ("python -I -c pass", timed([str(python), "-I", "-c", "pass"])),
            ("python -c pass (site + .pth, as the console script runs)", timed([str(python), "-c", "pass"])),
            (
                "python -c 'import session_watcher.cli, hooks.run, state.session'",
                timed([str(python), "-c", "import session_watcher.cli, hooks.run, state.session, state.store"]),
            ),
            ("session-watcher hook PostToolUse (whole)", timed([sw, "hook", "PostToolUse"], payload)),
        ]
        for label, ms in rows:
            print(f"  {ms:7.1f}  {label}")
        r = measure.run([sw, "hook", "PostToolUse"], payload, env={**env, "PYTHONPROFILEIMPORTTIME": "1"}, cwd=cwd)
        imp = measure.importtime(r.stderr)
        print(f"imports: {imp['totalMs']:.1f} ms over {imp['modules']} modules; top level:")
        for t in imp["top"]:
            print(f"  {t['ms']:7.1f}  {t['module']}")

        os.environ["SESSION_WATCHER_HOME"] = str(sess.home)
        os.chdir(cwd)
        from session_watcher.hooks.run import run

        run("PostToolUse", payload)  # imports done outside the profile
        prof = cProfile.Profile()
        t0 = time.perf_counter()
        prof.enable()
        for _ in range(args.runs):
            run("PostToolUse", payload)
        prof.disable()
        per = (time.perf_counter() - t0) / args.runs * 1000
        print(f"in-process hooks.run.run: {per:.1f} ms per run (under cProfile)")
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(15)
        print("\n".join(buf.getvalue().splitlines()[4:30]))
        codecs(state_file.read_bytes())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
