"""bench.hookcpu's `--also`: another install's launcher timed in the same rounds, as the kind of
command the bench times. `--statusline --also OTHER/bin/session-watcher-hook` ran the hook launcher
with the status line's input and no event (it timed a hook that had nothing to do); it times that
install's status line, and says so, or names what is missing."""

from __future__ import annotations

import os
from itertools import pairwise
from types import SimpleNamespace
from typing import TYPE_CHECKING

import pytest

from bench import hookcpu

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow  # the hook-mode cases prepare a pending handoff in a process


def _cases(tmp_path: Path, *argv: str) -> dict[str, hookcpu.Case]:
    home = tmp_path / "home"
    home.mkdir(parents=True)
    tmp = tmp_path / "run"  # a fresh one per bench run, as its temp folder is
    tmp.mkdir()
    b = SimpleNamespace(env=lambda h, **kw: {"SESSION_WATCHER_HOME": str(h)},
                        launcher=lambda kind: ["python", "-I", "-S", f"session-watcher-{kind}"])
    sess = SimpleNamespace(transcript=tmp_path / "t.jsonl", sid="s", home=home)
    cases, _ = hookcpu.cases_of(hookcpu.parser().parse_args(list(argv)), b, sess, tmp_path,  # type: ignore[arg-type]
                                [tmp_path / "f"], tmp)
    return cases


def test_a_status_line_bench_times_the_other_installs_status_line(tmp_path: Path) -> None:
    other = tmp_path / "other" / "bin"
    other.mkdir(parents=True)
    for kind in ("hook", "statusline"):  # an install's launchers (what they hold is not read here)
        (other / f"session-watcher-{kind}").write_text("")
    cases = _cases(tmp_path, "--statusline", "--also", str(other / "session-watcher-hook"))
    argv = cases["status line, --also #1"][0]
    assert argv[-1] == str(other / "session-watcher-statusline")  # was the hook launcher, with no event
    cases = _cases(tmp_path / "2", "--also", str(other / "session-watcher-statusline"))
    assert cases["hook PostToolUse, --also #1"][0][-2:] == [str(other / "session-watcher-hook"), "PostToolUse"]
    assert "status line (the hook folded the call), --also #1" in cases


def test_a_launcher_of_the_other_kind_alone_is_refused_by_name(tmp_path: Path) -> None:
    other = tmp_path / "other" / "bin"
    other.mkdir(parents=True)
    for kind in ("hook", "statusline"):  # an install's launchers (what they hold is not read here)
        (other / f"session-watcher-{kind}").write_text("")
    (other / "session-watcher-statusline").unlink()
    with pytest.raises(SystemExit, match="session-watcher-statusline"):
        _cases(tmp_path, "--statusline", "--also", str(other / "session-watcher-hook"))
    with pytest.raises(SystemExit, match="not a session-watcher-hook"):
        _cases(tmp_path / "2", "--also", str(tmp_path / "something-else"))


def test_each_handoff_pending_round_starts_with_no_note_lent(tmp_path: Path) -> None:
    """The rounds' children sent the notes they took (their first prompt hook removes the lent note):
    left lent to the bench, a still running client, every later start checked them all again."""
    from pathlib import Path

    _argv, _stdin, env, prepare = _cases(tmp_path)["hook SessionStart inject, handoff pending"]
    folder = Path(env["SESSION_WATCHER_HOME"]) / "state" / "handoffs"
    (note,) = (folder / "pending").glob("*.json")
    text = note.read_bytes()
    lent = folder / "lent"
    lent.mkdir(mode=0o700)
    for n in range(3):  # three rounds' takes, as a run leaves them: the note renamed, its lending noted
        (folder / "taken").mkdir(mode=0o700, exist_ok=True)
        note.rename(folder / "taken" / f"bench-child-{n}.json")
        (lent / f"bench-child-{n}.json").write_text("{}")
        prepare()
        assert note.read_bytes() == text
        assert list(lent.glob("*.json")) == []


def test_the_handoff_pending_row_times_a_start_that_takes_the_note(tmp_path: Path) -> None:
    """The row's note is one the start it times takes (a note names the agent whose session may take
    it: the bench's names Claude Code, whose `hook SessionStart inject` the row runs)."""
    import json
    import os

    from tests.oracle import hook

    argv, stdin, env, _prepare = _cases(tmp_path)["hook SessionStart inject, handoff pending"]
    assert argv[-2:] == ["SessionStart", "inject"]
    proc = hook("SessionStart", stdin(0), env={**os.environ, **env}, args=("inject",))
    assert proc.returncode == 0
    assert "what was done, what is next." in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


def test_every_round_appends_a_call_the_session_has_not_folded(tmp_path: Path) -> None:
    """The rounds' calls are new messages (the fold passes over one it has folded), the session's own
    first: a round's case sees the transcript with its round's call appended, one no round appended before."""
    import json

    from bench import run as bench_run

    own = bench_run.call_chunks("s", tmp_path, 9, seed=99)  # as bench.run builds the session's (the quick scale)
    transcript = tmp_path / "t.jsonl"
    transcript.write_bytes(b"")
    sess = SimpleNamespace(sid="s", chunks=own, transcript=transcript, size0=0)
    seen: list[list[str]] = []

    def ids() -> None:  # the transcript's assistant messages, as the round's case runs
        seen.append([json.loads(line)["message"]["id"] for line in transcript.read_bytes().splitlines()
                     if json.loads(line).get("type") == "assistant"])

    cases = {"true": (["true"], lambda n: b"", dict(os.environ), ids)}
    got = hookcpu.rounds(30, cases, sess, tmp_path)  # type: ignore[arg-type]
    assert len(got["true"][0]) == 30  # the 4 settling rounds not counted
    assert len(seen) == 34
    distinct = [len(set(ids)) for ids in seen]
    assert distinct[0] > 0
    assert all(now > before for before, now in pairwise(distinct))  # a new message each round
    assert hookcpu.round_calls(sess, tmp_path, 30)[:9] == own  # type: ignore[arg-type]  # the session's own first
    assert transcript.stat().st_size == 0  # left as generated


def test_the_installs_take_turns_at_going_first_each_keeping_its_order(tmp_path: Path) -> None:
    """Round by round, this checkout's cases and each `--also` install's go first in turn, each
    install's in the order given (its status line after its hook folded the round's call): in one
    fixed order an install's place in the round alone moved rows of unchanged code by 1-3 %."""
    other = tmp_path / "other" / "bin"
    other.mkdir(parents=True)
    for kind in ("hook", "statusline"):
        (other / f"session-watcher-{kind}").write_text("")
    cases = _cases(tmp_path, "--also", str(other / "session-watcher-hook"))
    ours = [name for name in cases if hookcpu.ALSO not in name]
    theirs = [name for name in cases if hookcpu.ALSO in name]
    assert ours[0] == "python -I -c pass"
    assert len(theirs) == 5  # the hook and its four more cases
    assert hookcpu.round_order(cases, 0) == ours + theirs
    assert hookcpu.round_order(cases, 1) == theirs + ours
    assert hookcpu.round_order(cases, 2) == ours + theirs
    lone = {name: cases[name] for name in ours}
    assert hookcpu.round_order(lone, 1) == ours  # one install: the order given, every round
