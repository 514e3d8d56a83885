"""`report --json` to a program: the compact text is the same document, cold or from the cache."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from session_watcher.reports.collect import run_report, run_report_json

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"


def _corpus(tmp_path: Path) -> Path:
    proj = tmp_path / "projects" / "-proj"
    proj.mkdir(parents=True)
    for f in FIXTURES.glob("*.jsonl"):
        shutil.copy(f, proj / f.name)
    return tmp_path / "projects"


def _without_index(doc: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in doc.items() if k != "index"}


def test_text_equals_the_document_cold_and_warm(tmp_path: Path) -> None:
    roots = [str(_corpus(tmp_path))]
    db = str(tmp_path / "index.sqlite3")
    cold = json.loads(run_report_json(roots, db, now=1.8e9, utc_offset=0.0))
    warm = json.loads(run_report_json(roots, db, now=1.8e9 + 86400 * 3, utc_offset=0.0))
    reference, _ = run_report(roots, str(tmp_path / "other.sqlite3"), now=1.8e9, utc_offset=0.0)
    later, _ = run_report(roots, str(tmp_path / "other.sqlite3"), now=1.8e9 + 86400 * 3, utc_offset=0.0)
    assert cold["index"]["cached"] is False
    assert warm["index"]["cached"] is True
    assert _without_index(cold) == _without_index(reference)
    assert _without_index(warm) == _without_index(later), "the clock fields follow the new `now`"
    assert cold["sessions"], "the corpus has sessions"


@pytest.mark.slow
def test_cli_pipe_output_is_compact_valid_json(tmp_path: Path) -> None:
    roots = _corpus(tmp_path)
    env = {"SESSION_WATCHER_HOME": str(tmp_path / "sw"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    outs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-m", "session_watcher", "report", "--projects", str(roots),
                               "--json"], capture_output=True, env=env, check=False, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert b"\n " not in proc.stdout, "compact when stdout is not a terminal"
        outs.append(json.loads(proc.stdout))
    assert [o["index"]["cached"] for o in outs] == [False, True]
    assert _without_index(outs[0]) == {**_without_index(outs[1]), "generatedAt": outs[0]["generatedAt"]}
