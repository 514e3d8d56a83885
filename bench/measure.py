"""Timing helpers: whole processes, wall time, peak memory of the child, summary statistics."""

from __future__ import annotations

import json
import math
import os
import platform
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Run:
    """One finished child process."""

    wall: float  # seconds
    rc: int
    stdout: bytes
    stderr: bytes
    maxrss_kb: int
    cpu: float = 0.0  # seconds, user + system, its waited-for children included (run_rss only)


def run(
    argv: list[str],
    stdin: bytes = b"",
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 600.0,
) -> Run:
    """Run ``argv`` as a whole process; wall time from spawn to reaped, and the child's own peak RSS."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd
    )
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return Run(time.perf_counter() - t0, -9, out, err + b"\n[timeout]", 0)
    # communicate() has reaped it; rusage comes from wait4 before that, so take it from a fresh
    # child only when asked (see run_rss).
    wall = time.perf_counter() - t0
    return Run(wall, proc.returncode, out, err, 0)


def run_rss(
    argv: list[str],
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    stdout_path: Path | None = None,
) -> Run:
    """Run with stdout to a file and reap with ``wait4`` to get the child's peak RSS (KiB on Linux)."""
    out_path = stdout_path or Path(os.devnull)
    with out_path.open("wb") as out_fh:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out_fh, stderr=subprocess.PIPE, env=env, cwd=cwd)
        assert proc.stderr is not None
        err = proc.stderr.read()  # the child closes it when it exits
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        proc.stderr.close()
    out = out_path.read_bytes() if stdout_path else b""
    return Run(wall, proc.returncode, out, err, int(usage.ru_maxrss), usage.ru_utime + usage.ru_stime)


def stats(values: list[float]) -> dict[str, float]:
    """Median and p95 (nearest rank), in the values' unit."""
    if not values:
        return {"median": math.nan, "p95": math.nan, "min": math.nan, "n": 0}
    s = sorted(values)
    med = s[len(s) // 2] if len(s) % 2 else (s[len(s) // 2 - 1] + s[len(s) // 2]) / 2
    p95 = s[min(len(s) - 1, math.ceil(0.95 * len(s)) - 1)]
    return {"median": med, "p95": p95, "min": s[0], "n": len(s)}


def machine(venv_python: Path) -> dict[str, Any]:
    """CPU, cores, memory, OS, Python and package versions."""
    cpu = platform.processor() or platform.machine()
    try:
        text = Path("/proc/cpuinfo").read_text()
        m = re.search(r"model name\s*:\s*(.+)", text)
        if m:
            cpu = m.group(1).strip()
    except OSError:
        pass
    mem_gb: float | None = None
    try:
        m2 = re.search(r"MemTotal:\s*(\d+) kB", Path("/proc/meminfo").read_text())
        if m2:
            mem_gb = round(int(m2.group(1)) / 1024 / 1024, 1)
    except OSError:
        pass
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count() or 0
    code = (
        "import json, importlib.metadata as m\n"
        "out = {}\n"
        "for d in ('session-watcher', 'filelock', 'platformdirs', 'tomlkit', 'desktop-notifier'):\n"
        "    try: out[d] = m.version(d)\n"
        "    except m.PackageNotFoundError: out[d] = None\n"
        "print(json.dumps(out))"
    )
    r = subprocess.run([str(venv_python), "-I", "-c", code], capture_output=True, text=True, check=False)
    versions: dict[str, str | None] = json.loads(r.stdout) if r.returncode == 0 else {}
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parent.parent,
            check=False,
        ).stdout.strip()
    except OSError:
        commit = ""
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "usableCores": affinity,
        "memoryGB": mem_gb,
        "os": f"{platform.system()} {platform.release()}",
        "python": subprocess.run(
            [str(venv_python), "-I", "-c", "import sys; print(sys.version.split()[0])"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        or sys.version.split()[0],
        "pythonImplementation": platform.python_implementation(),
        "interpreter": str(venv_python),
        "versions": versions,
        "commit": commit,
        "loadAverage": load_average(),
    }


def load_average() -> list[float] | None:
    """1, 5 and 15 minute load averages (other work on the machine skews every timing)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def importtime(stderr: bytes) -> dict[str, Any]:
    """Parse ``-X importtime`` output: total (sum of self times), and the top-level imports."""
    total = 0
    top: list[tuple[str, int]] = []
    count = 0
    for line in stderr.decode(errors="replace").splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        parts = line[len("import time:") :].split("|")
        if len(parts) != 3:
            continue
        try:
            self_us, cum_us = int(parts[0]), int(parts[1])
        except ValueError:
            continue
        name = parts[2]
        count += 1
        total += self_us
        if not name.startswith("  "):  # one leading space: imported at top level
            top.append((name.strip(), cum_us))
    top.sort(key=lambda kv: -kv[1])
    return {
        "totalMs": total / 1000,
        "modules": count,
        "top": [{"module": n, "ms": c / 1000} for n, c in top[:10]],
    }
