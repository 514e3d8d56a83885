"""An empty `report` says which folders it searched (and what else to try)."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from oracle import sw

if TYPE_CHECKING:
    from pathlib import Path


def test_empty_report_names_the_folders_it_searched(tmp_path: Path) -> None:
    proc = sw("report")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    claude = os.environ["CLAUDE_CONFIG_DIR"]
    assert out.startswith("no Claude Code sessions found; searched:\n")
    assert f"\n  {claude}/projects\n" in out
    assert "--projects DIR" in out
    empty = tmp_path / "nowhere"
    empty.mkdir()
    out = sw("report", "--projects", str(empty)).stdout.decode()
    assert f"searched:\n  {empty}\n" in out
    assert claude not in out
    doc = json.loads(sw("report", "--projects", str(empty), "--json").stdout)
    assert doc["index"]["roots"] == [str(empty)]
    assert doc["sessions"] == []
