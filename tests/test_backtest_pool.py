"""`backtest` over many sessions on the process pool (`sessions.backtest.run_all`, state.pool): the same
document, the same skipped lines and the same errors, in the same order, from forked children as
from one process; what a child hands back is what pricing the restarts taken needs. Real forks,
real files."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import sys
import time
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.cli import backtest as command
from session_watcher.core import backtest as bt
from session_watcher.sessions import backtest as shell
from session_watcher.sessions.restarts import restarts_taken
from session_watcher.state import pool
from tests.oracle import FIXTURES
from tests.test_restarts import PARENT, _child
from tests.ttys import bar_counts, on_a_terminal

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.usefixtures("alone")  # no fork while another thread runs

ROLLOUT = FIXTURES / "codex" / "rollout-019f8c04-f40a-75a1-80a3-75c564780b42.jsonl"
WAIT = 60.0  # seconds this process's first run waits for a child to have started one (a deadlock guard)


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """A home with a parent session, the child that started from its handoff, two short sessions
    and a Codex rollout; its main transcripts in the order the command finds them."""
    project = tmp_path / "home" / ".claude" / "projects" / "-work-proj"
    project.mkdir(parents=True)
    shutil.copy(PARENT, project / PARENT.name)
    shutil.copy(_child(tmp_path, PARENT.stem, 40_000, 0.2), project / "child-1.jsonl")
    for name in ("subagent.jsonl", "tool_heavy.jsonl"):
        shutil.copy(FIXTURES / "transcripts" / name, project / name)
    day = tmp_path / "codex" / "sessions" / "2026" / "01" / "01"
    day.mkdir(parents=True)
    shutil.copy(ROLLOUT, day / ROLLOUT.name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "home" / ".claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    found = [os.path.realpath(p) for p in shell.all_transcripts()]
    assert len(found) == 5
    return [tmp_path / p for p in found]


def alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shell, "FORK_FROM", 1 << 62)


def forking(monkeypatch: pytest.MonkeyPatch, runs: Path | None = None) -> None:
    """Fork for any size, on two processes whatever the machine has; with `runs`, every run notes
    the process it ran in (a file `<pid>-<transcript>` there), and this process's first run waits
    until a child has started one: some sessions are surely done in a child."""
    monkeypatch.setattr(shell, "FORK_FROM", 1)
    monkeypatch.setattr(pool, "cores", lambda: 2)
    if runs is None:
        return
    runs.mkdir()
    parent = os.getpid()
    real = shell.run_one

    def noted(transcript: str, overrides: dict[str, Any] | None = None, taken: dict[str, Any] | None = None,
              ) -> dict[str, Any]:
        (runs / f"{os.getpid()}-{os.path.basename(transcript)}").touch()
        if os.getpid() == parent:
            end = time.monotonic() + WAIT
            while not any(not p.name.startswith(f"{parent}-") for p in runs.iterdir()):
                if time.monotonic() > end:
                    raise AssertionError("no child took a session")
                time.sleep(0.005)
        return real(transcript, overrides, taken)

    monkeypatch.setattr(shell, "run_one", noted)


def test_forked_children_give_the_document_of_one_process(machine: list[Path], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Byte for byte, the restart taken priced from calls a child sent back; every session run once."""
    alone(monkeypatch)
    one = json.dumps(command.run([]))
    forking(monkeypatch, tmp_path / "runs")
    several = json.dumps(command.run([]))
    assert several == one
    doc = json.loads(several)
    assert [s["transcript"] for s in doc["sessions"]] == [str(p) for p in machine]
    [taken] = [r for r in doc["restartsTaken"] if r["kind"] == "handoff"]
    assert (taken["parent"], taken["child"], taken["calls"]) == (PARENT.stem, "child-1", 3)
    assert taken["savingUsd"] > 0
    ran = [p.name.split("-", 1) for p in (tmp_path / "runs").iterdir()]
    assert sorted(name for _pid, name in ran) == sorted(p.name for p in machine)  # none done twice
    assert {int(pid) for pid, _name in ran} - {os.getpid()}  # some in a child


def test_what_a_child_sends_back_prices_the_restarts_taken(machine: list[Path]) -> None:
    """The marshal round trip of a batch: the same documents, the calls `Call`s again, the same restarts."""
    out: list[tuple[int, shell.Done | None]] = [(i, shell.run_noted(str(p))) for i, p in enumerate(machine)]
    back = shell._decode(shell._encode(out))
    assert json.dumps(back) == json.dumps(out)
    calls = [c for _i, got in back if got for _sid, (_path, _parent, cs) in got[1] for c in cs]
    assert len(calls) > 150
    assert all(type(c) is bt.Call for c in calls)
    found = restarts_taken(dict(e for _i, got in back if got for e in got[1]))
    assert found == restarts_taken(dict(e for _i, got in out if got for e in got[1]))
    assert any(r["kind"] == "handoff" and r["savingUsd"] > 0 for r in found["restartsTaken"])


def test_unreadable_sessions_are_skipped_in_their_place(machine: list[Path], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A file gone since it was found and a FIFO: one line each on stderr, in the order of the
    sessions, the rest backtested, as one process does."""
    gone = tmp_path / "gone.jsonl"
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    paths = [str(machine[0]), str(gone), *map(str, machine[1:3]), str(fifo), *map(str, machine[3:])]
    monkeypatch.setattr(command, "all_transcripts", lambda: paths)
    alone(monkeypatch)
    one = json.dumps(command.run([]))
    one_err = capsys.readouterr().err
    forking(monkeypatch)
    several = json.dumps(command.run([]))
    err = capsys.readouterr().err
    assert several == one
    assert err == one_err
    said = [" ".join(m.split()) for m in re.split(r"\n(?=session-watcher)", err.strip())]  # each wrapped within 80
    assert said == [f"session-watcher backtest: skipped {gone}: No such file or directory",
                    f"session-watcher backtest: skipped {fifo}: Illegal seek"]
    assert len(json.loads(several)["sessions"]) == len(machine)


def test_a_named_session_that_cannot_be_read_fails_the_command_as_alone(machine: list[Path],
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Sessions named on the command line: the first that cannot be read (in their order) is the
    command's error, whichever process met it first."""
    real = shell.run_one
    unreadable = {str(machine[1]), str(machine[3])}

    def refused(transcript: str, overrides: dict[str, Any] | None = None, taken: dict[str, Any] | None = None,
                ) -> dict[str, Any]:
        if transcript in unreadable:
            raise PermissionError(13, "Permission denied", transcript)
        return real(transcript, overrides, taken)

    monkeypatch.setattr(shell, "run_one", refused)
    targets = [str(p) for p in machine]
    for mode in (alone, forking):
        mode(monkeypatch)
        with pytest.raises(PermissionError) as got:
            command.run(targets)
        assert got.value.filename == str(machine[1])


def test_progress_on_a_terminal_rises_to_the_whole(machine: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Drawn by this process alone, on a terminal: counts that only rise, to all the sessions, then cleared."""
    forking(monkeypatch)
    counts, seen = _progress(monkeypatch)
    assert counts
    assert counts == sorted(counts)
    assert counts[-1] == len(machine)
    assert seen.endswith(b"\r")  # the bar wiped at the end


def test_progress_stays_cleared_when_a_child_dies(machine: list[Path], tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A child killed on its first session: this process does that batch again after its own last
    one, and the bar, whole and cleared by then, is not drawn again lower; the document the same."""
    alone(monkeypatch)
    one = json.dumps(command.run([]))
    forking(monkeypatch)
    started = tmp_path / "child-started"
    parent = os.getpid()
    real = shell.run_one

    def dies(transcript: str, overrides: dict[str, Any] | None = None, taken: dict[str, Any] | None = None,
             ) -> dict[str, Any]:
        if os.getpid() != parent:
            started.touch()
            os.kill(os.getpid(), signal.SIGKILL)
        end = time.monotonic() + WAIT
        while not started.exists():  # the child has taken its batch (one of the first two)
            if time.monotonic() > end:
                raise AssertionError("no child took a session")
            time.sleep(0.005)
        return real(transcript, overrides, taken)

    monkeypatch.setattr(shell, "run_one", dies)
    counts, seen = _progress(monkeypatch)
    assert counts == sorted(counts)  # not drawn again lower once it was whole and cleared
    assert counts[-1] == len(machine)
    assert seen.endswith(b"\r")
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert json.dumps(command.run([])) == one


def _progress(monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], bytes]:
    """Run the command over every session with stderr a terminal: the counts its progress bar drew,
    and all it wrote there."""
    _got, seen = on_a_terminal(lambda: command.run([]), monkeypatch)
    return bar_counts(seen, "scanning transcripts")[1], seen
