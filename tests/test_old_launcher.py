"""A launcher written before `hooks.entry` (it imports `main` from `hooks.run`) still runs every hook,
exit 0 and silent, while an install replaces the package under it and until the install writes a new one."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from tests import oracle
from tests.statefile import load_state

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow  # starts hook processes

SHORT = oracle.REPO / "tests" / "fixtures" / "transcripts" / "short.jsonl"


def test_a_launcher_of_the_previous_release_still_folds(tmp_path: Path) -> None:
    new = (oracle.launchers() / "session-watcher-hook").read_text()
    old = new.replace("from session_watcher.hooks.entry import main", "from session_watcher.hooks.run import main")
    assert old != new
    launcher = tmp_path / "session-watcher-hook"
    launcher.write_text(old)
    transcript = tmp_path / "old.jsonl"
    shutil.copyfile(SHORT, transcript)
    for event in ("PostToolUse", "SessionStart"):
        proc = subprocess.run([sys.executable, "-I", "-S", str(launcher), event],
                              input=json.dumps(oracle.payload("old", transcript, event)).encode(),
                              capture_output=True, timeout=60, check=False)
        assert (proc.returncode, proc.stderr, proc.stdout) == (0, b"", b"")
    assert load_state("old")["engine"]["calls"] > 0
