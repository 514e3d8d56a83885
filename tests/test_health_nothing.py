"""`health` of a session without an API call (only a prompt, or lines none of which is a call) says
there is nothing to grade, in its text and in `--json`: it graded such a session A (100/100), every
signal A, which nothing earned. A session with a call is graded as before."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from session_watcher import cli
from tests.oracle import TRANSCRIPTS

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def _no_call(tmp_path: Path) -> Path:
    """A transcript of the fixture's first prompt and a line that is not JSON: no API call."""
    prompt = next(line for line in (TRANSCRIPTS / "short.jsonl").read_bytes().splitlines()
                  if b'"type":"user"' in line)
    path = tmp_path / "nocall.jsonl"
    path.write_bytes(prompt + b"\ngarbage {\n")
    return path


def test_a_session_without_a_call_has_nothing_to_grade(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _no_call(tmp_path)
    assert cli.main(["health", str(path)]) == 0
    assert capsys.readouterr().out == ("Context health: - (no API call yet: nothing to grade)  session nocall\n"
                                       "project  /home/marco/projects/spotter\n")  # its records' cwd
    assert cli.main(["health", "--json", str(path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["grade"], doc["score"], doc["why"]) == (None, None, "no API call yet: nothing to grade")
    assert [(s["name"], s["value"], s["grade"]) for s in doc["signals"]] == [
        (name, None, None) for name in ("Context Fill", "Compactions", "Re-reads", "Error Rate", "Tool Efficiency")]


def test_a_session_with_calls_is_graded(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["health", "--json", str(TRANSCRIPTS / "short.jsonl")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["grade"] == "A"
    assert doc["score"] == 100
    assert "why" not in doc
    assert cli.main(["health", str(TRANSCRIPTS / "short.jsonl")]) == 0
    assert capsys.readouterr().out.startswith("Context health: A (score 100/100)  session short\n"
                                              "project  /home/marco/projects/spotter\n  Context Fill ")


def test_status_and_the_page_grade_nothing_without_a_call_as_health_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`status --json` and the session page's health block graded a session without an API call A
    (100/100), as `health` did before; they follow one rule now (`core.health.graded`): the same
    block as `health --json`, and the page's badge says why there is no grade."""
    from session_watcher.reports.session_page_data import load_model

    path = _no_call(tmp_path)
    assert cli.main(["health", "--json", str(path)]) == 0
    block = json.loads(capsys.readouterr().out)
    assert cli.main(["status", "--json", str(path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["calls"] == 0
    assert doc["health"] == block
    assert cli.main(["status", str(path)]) == 0
    assert "health - (no call yet)" in capsys.readouterr().out
    page = load_model(str(path), with_story=False)["health"]
    assert (page["grade"], page["score"], page["nothing"]) == (None, None, "no API call yet: nothing to grade")
    assert [s["grade"] for s in page["signals"]] == [None] * 5
    graded = load_model(str(TRANSCRIPTS / "short.jsonl"), with_story=False)["health"]
    assert (graded["grade"], "nothing" in graded) == ("A", False)  # a session with a call: as before
