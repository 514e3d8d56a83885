"""What each way of encoding OTLP costs here: ``python -m bench.otlp_encodings [--out bench/out]``.

The three candidates of issue 26, each in its own fresh venv (made once under OUT/cache/otlp-venvs
with pip, then reused), measured in the same run:

* ``sdk``: the official ``opentelemetry-sdk`` with ``opentelemetry-exporter-otlp-proto-http``:
  observable instruments whose callbacks yield the sessions' figures, collected by a reader and
  encoded by the exporter's own encoder;
* ``proto``: the official ``opentelemetry-proto`` messages: our OTLP/JSON document
  (session_watcher.otlp.payload) parsed into ``ExportMetricsServiceRequest`` and serialized;
* ``json``: the same document as OTLP/JSON text (stdlib ``json``).

Per candidate: the wall and CPU time of ``python -I -c "import ..."`` over ``python -I -c pass``
(medians of ROUNDS, interleaved; the CPU time, from wait4, moves less with the machine's load), the
CPU time of one export's encoding of N live sessions (median of the loop, in-process, network left
out), the request's size, and the install size (the venv's site-packages less pip and setuptools,
over a venv with nothing added). Writes OUT/otlp-encodings.json and prints a table. Nothing is
asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {
    "sdk": ["opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"],
    "proto": ["opentelemetry-proto"],
    "json": [],
}
IMPORTS = {
    "sdk": "import opentelemetry.sdk.metrics, opentelemetry.sdk.resources, "
           "opentelemetry.exporter.otlp.proto.http.metric_exporter",
    "proto": "import opentelemetry.proto.collector.metrics.v1.metrics_service_pb2, google.protobuf.json_format",
    "json": "import json, http.client",
}

# one export's encoding, run inside each venv: argv = [docs.json, sessions, loops]
ENCODE = r"""
import json, sys, time
sys.path.insert(0, sys.argv[4])
docs = json.load(open(sys.argv[1]))
n, loops, kind = int(sys.argv[2]), int(sys.argv[3]), sys.argv[5]
docs = [dict(docs[i % len(docs)], sessionId=f"s{i:04d}") for i in range(n)]
now = time.time()
if kind == "sdk":
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.metrics import Observation
    from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
    reader = InMemoryMetricReader()
    resource = Resource({"service.name": "session-watcher"})
    meter = MeterProvider(metric_readers=[reader], resource=resource).get_meter("session_watcher")
    def gauge(key):
        return lambda options: [Observation(d[key], {"session.id": d["sessionId"], "model": d["model"]})
                                for d in docs if d.get(key) is not None]
    def counter(path):
        def cb(options):
            out = []
            for d in docs:
                v = d
                for p in path:
                    v = v[p]
                out.append(Observation(v, {"session.id": d["sessionId"], "model": d["model"]}))
            return out
        return cb
    for key in ("x", "xSweet", "L", "bDefault", "savingUsd", "warmth"):
        meter.create_observable_gauge("session_watcher." + key, [gauge(key)])
    for path in (("advice", "gate"), ("advice", "reminder"), ("advice", "coldReturn"), ("coldReturns", "n"),
                 ("coldReturns", "tokens"), ("coldReturns", "usd"), ("calls",), ("warmthTokens", "read"),
                 ("warmthTokens", "write")):
        meter.create_observable_counter("session_watcher." + ".".join(path), [counter(path)])
    def one():
        return encode_metrics(reader.get_metrics_data()).SerializeToString()
else:
    from session_watcher.otlp import payload
    def doc():
        batch = payload.Batch()
        for d in docs:
            payload.add_session(batch, d, payload.session_attributes(d, {"user.id": "u"}, None), now)
        return batch.request({"service.name": "session-watcher"}, "0")
    if kind == "proto":
        from google.protobuf import json_format
        from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
        def one():
            m = ExportMetricsServiceRequest()
            json_format.ParseDict(doc(), m)
            return m.SerializeToString()
    else:
        def one():
            return json.dumps(doc(), separators=(",", ":")).encode()
one()
cpu = []
for _ in range(loops):
    t0 = time.process_time()
    body = one()
    cpu.append(time.process_time() - t0)
cpu.sort()
print(json.dumps({"cpuMs": cpu[len(cpu) // 2] * 1000, "bytes": len(body)}))
"""


def venv(cache: Path, kind: str) -> Path:
    d = cache / f"otlp-{kind}"
    py = d / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(d)], check=True)
        if PACKAGES[kind]:
            subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", *PACKAGES[kind]],
                           check=True)
    return py


def install_bytes(py: Path) -> int:
    code = ("import importlib.metadata as md, os\n"
            "print(sum(os.path.getsize(d.locate_file(f)) for d in md.distributions()"
            " if d.metadata['Name'] not in ('pip', 'setuptools') for f in (d.files or [])"
            " if os.path.exists(d.locate_file(f))))")
    return int(subprocess.run([str(py), "-c", code], capture_output=True, text=True, check=True).stdout)


def wall(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system, from wait4) of one whole process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv)
    _pid, _status, ru = os.wait4(p.pid, 0)
    p.returncode = 0
    return time.perf_counter() - t0, ru.ru_utime + ru.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.otlp_encodings", description=__doc__)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--sessions", type=int, default=10, help="live sessions in one export")
    ap.add_argument("--loops", type=int, default=200)
    args = ap.parse_args(argv)
    cache = args.out.resolve() / "cache" / "otlp-venvs"
    cache.mkdir(parents=True, exist_ok=True)
    pys = {kind: venv(cache, kind) for kind in PACKAGES}

    from session_watcher.sessions.replay import replay

    fixtures = sorted((ROOT / "tests" / "fixtures" / "transcripts").glob("*.jsonl"))
    docs = [replay(str(p), with_trace=False)[0] for p in fixtures]
    docs_file = cache / "docs.json"
    docs_file.write_text(json.dumps([{k: d[k] for k in ("sessionId", "model", "lamp", "x", "xSweet", "L", "bDefault",
                                                        "savingUsd", "warmth", "advice", "coldReturns", "calls",
                                                        "warmthTokens", "firstTs")} for d in docs]))
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in (*PACKAGES, *(f"{k}-pass" for k in PACKAGES))}
    for _ in range(args.rounds):  # interleaved, so load on the machine hits every candidate alike
        for kind, py in pys.items():
            times[f"{kind}-pass"].append(wall([str(py), "-I", "-c", "pass"]))
            times[kind].append(wall([str(py), "-I", "-c", IMPORTS[kind]]))
    rows = {}
    for kind, py in pys.items():
        enc = subprocess.run([str(py), "-I", "-c", ENCODE, str(docs_file), str(args.sessions), str(args.loops),
                              str(ROOT), kind], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})
        got = json.loads(enc.stdout.strip().splitlines()[-1])
        def med(key: str, i: int) -> float:
            return statistics.median(t[i] for t in times[key])

        rows[kind] = {
            "importMs": (med(kind, 0) - med(f"{kind}-pass", 0)) * 1000,
            "importCpuMs": (med(kind, 1) - med(f"{kind}-pass", 1)) * 1000,
            "cpuMsPerExport": got["cpuMs"], "requestBytes": got["bytes"],
            "installMB": install_bytes(py) / 1e6, "packages": PACKAGES[kind],
        }
    bare = rows["json"]["installMB"]  # a venv with nothing added: what every row has anyway
    for r in rows.values():
        r["addedMB"] = r["installMB"] - bare
    out = {"sessions": args.sessions, "rounds": args.rounds, "loops": args.loops, "rows": rows,
           "loadAverage": os.getloadavg()}
    (args.out / "otlp-encodings.json").write_text(json.dumps(out, indent=1))
    print(f"{'encoding':8} {'import ms':>10} {'import CPU':>11} {'CPU ms/export':>14} {'bytes':>8} {'added MB':>9}   "
          f"({args.sessions} sessions, load {out['loadAverage'][0]:.1f})")
    for kind, r in rows.items():
        print(f"{kind:8} {r['importMs']:10.1f} {r['importCpuMs']:11.1f} {r['cpuMsPerExport']:14.2f} "
              f"{r['requestBytes']:8d} {r['addedMB']:9.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
