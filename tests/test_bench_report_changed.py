"""bench.report_changed runs end to end and prints its rows (no timing is asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_warm_report_bench_prints_every_row(tmp_path: Path) -> None:
    """One small corpus, one round: the reference, and the report with one file changed, with none, and
    with none and the index's full pass due."""
    proc = subprocess.run([sys.executable, "-m", "bench.report_changed", "--files", "30", "--rounds", "1",
                           "--cache", str(tmp_path / "cache")], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    rows = {line[:45].strip(): line[45:].split() for line in proc.stdout.splitlines() if line.startswith(
        ("session-watcher", "report"))}
    assert set(rows) == {"session-watcher --version", "report --json, one changed (this)",
                         "report --json, none changed (this)", "report --json, full pass due (this)"}
    assert all(len(v) == 4 and all(float(x) > 0 for x in v) for v in rows.values())
    assert rows["session-watcher --version"][1] == rows["session-watcher --version"][3] == "1.00"
