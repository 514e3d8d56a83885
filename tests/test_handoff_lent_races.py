"""The give-back of a lent handoff (state.handoffs.give_back) under the races and sessions around it:
two processes giving the same one back while a third session takes it; a handoff the guard prepared
whose session went on since. Real files in the test's state folder; the other process's steps are
run at the exact point of the interleaving (inside os.link), so the order is fixed, not timed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.base import sysos
from session_watcher.core.handoff import header
from session_watcher.state import handoffs

if TYPE_CHECKING:
    from pathlib import Path

PROJECT = "/work/proj-lent"
STALE = 180 * 60.0


def _max_age(_project: str) -> float:
    return STALE


def _pending(parent: str = "parent-1", by: str | None = None, created: float | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {"project": PROJECT, "parentSession": parent,
                           "createdAt": time.time() if created is None else created,
                           "note": header(parent, "2026-12-05 23:00 UTC", 1000, 0.01) + "\nthe work so far"}
    if by is not None:
        doc["by"] = by
    handoffs.write_pending(doc)
    return doc


def _take(child: str) -> dict[str, Any] | None:
    return handoffs.take(PROJECT, child, time.time(), lambda: STALE, None, None)


def test_two_give_backs_of_one_handoff_with_a_take_between_leave_it_with_one_session(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A gives back (link into pending); before A removes its taken copy, session D takes the pending
    one, and B (another start's reclaim of the same lent note) gives it back too: pending again, so
    a third session would take it. Only one of A and B may give it back."""
    _pending()
    assert _take("child-1") is not None
    real_link = os.link
    ran: list[bool] = []

    def link(src: str, dst: str) -> None:
        real_link(src, dst)
        if not ran:  # the other processes, between A's link and the rest of A's give-back
            ran.append(True)
            assert _take("child-d") is not None
            handoffs.give_back("child-1", time.time(), _max_age)

    monkeypatch.setattr(sysos, "link", link)  # the hooks' calls: base/sysos.py
    handoffs.give_back("child-1", time.time(), _max_age)
    monkeypatch.setattr(sysos, "link", real_link)
    assert ran
    assert handoffs.pending(PROJECT) == []  # child-d has it; nothing left for another to take
    assert _take("child-e") is None


def _parent_state(session_id: str, last_ts: float) -> None:
    from session_watcher.base import paths
    from session_watcher.core.fresh import new_state
    from session_watcher.state import store

    state = new_state(session_id)
    state["engine"]["lastTs"] = last_ts
    path = store.session_file(session_id)
    paths.ensure_private_dir(os.path.dirname(path))
    store.save(path, state)


def test_a_guard_handoff_is_not_given_back_once_its_session_went_on() -> None:
    """The guard's handoff is dropped when the user goes on in the session it was made for (issue
    37); taken meanwhile by a session that never sent it, it must not come back pending for the
    next /clear in the project: that session made a call since."""
    created = time.time() - 60
    _parent_state("parent-on", created - 30)
    _pending("parent-on", handoffs.GUARD, created)
    assert _take("child-g1") is not None
    _parent_state("parent-on", created + 20)  # the user went on there: a call after the hold
    assert handoffs.give_back("child-g1", time.time(), _max_age) is False
    assert handoffs.pending(PROJECT) == []


def test_a_guard_handoff_whose_session_did_not_go_on_is_given_back() -> None:
    created = time.time() - 60
    _parent_state("parent-held", created - 30)
    _pending("parent-held", handoffs.GUARD, created)
    assert _take("child-g2") is not None
    assert handoffs.give_back("child-g2", time.time(), _max_age) is True
    [(_, doc)] = handoffs.pending(PROJECT)
    assert doc["parentSession"] == "parent-held"


def _lent_to(child: str, client: int, started: str | None) -> None:
    path = handoffs.lent_file(child)
    with open(path, encoding="utf-8") as fh:
        doc = json.loads(fh.read())
    assert doc["client"] == client
    doc["clientStart"] = started
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(doc))


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="a process's start is read from /proc")
def test_a_client_pid_taken_by_another_process_is_a_client_gone() -> None:
    """The client exited and its pid went to another process (here this test's own, started at
    another time): still lent, the handoff is given back at the next start, not kept until stale."""
    _pending()
    assert handoffs.take(PROJECT, "child-r1", time.time(), lambda: STALE, None, os.getpid()) is not None
    handoffs.reclaim(time.time(), _max_age)
    assert handoffs.pending(PROJECT) == []  # this process runs, started when the note says: kept
    _lent_to("child-r1", os.getpid(), "1")  # the client the note names started at boot, and is gone
    handoffs.reclaim(time.time(), _max_age)
    [(_, doc)] = handoffs.pending(PROJECT)
    assert doc["parentSession"] == "parent-1"


def test_going_on_drops_a_guard_handoff_lent_as_well_as_one_pending() -> None:
    """The prompt hook drops the guard's handoff when the user goes on in its session (issue 37):
    taken meanwhile by a session that has not sent it yet, it is not given back when that one ends,
    though the call that goes on is not folded yet (no state says so)."""
    _pending("parent-go", handoffs.GUARD)
    assert _take("child-go") is not None
    handoffs.drop(PROJECT, "parent-go", handoffs.GUARD)  # the prompt that goes on
    assert not os.path.exists(handoffs.lent_file("child-go"))
    assert handoffs.give_back("child-go", time.time(), _max_age) is False
    assert handoffs.pending(PROJECT) == []


def test_going_on_leaves_another_sessions_lent_handoff() -> None:
    _pending("parent-other")  # the handoff command's, of another session
    assert _take("child-other") is not None
    handoffs.drop(PROJECT, "parent-go2", handoffs.GUARD)
    assert os.path.exists(handoffs.lent_file("child-other"))
    assert handoffs.give_back("child-other", time.time(), _max_age) is True


def test_codex_compaction_drops_its_guard_handoff_lent(tmp_path: Path) -> None:
    """Codex's /compact reaches no prompt hook: its SessionStart (`compact`) drops the guard's
    handoff; taken and not sent by then, it must not come back either."""
    from session_watcher.hooks import inject

    project = str(tmp_path.resolve())
    handoffs.write_pending({"project": project, "parentSession": "parent-cx", "createdAt": time.time(),
                            "by": handoffs.GUARD,
                            "note": header("parent-cx", "2026-12-05 23:00 UTC", 1000, 0.01) + "\nthe work"})
    assert handoffs.take(project, "child-cx", time.time(), lambda: STALE, None, None) is not None
    raw = json.dumps({"session_id": "parent-cx", "transcript_path": None, "cwd": project, "source": "compact",
                      "hook_event_name": "SessionStart"}).encode()
    assert inject.run(raw, drop_on_compact=True) is None
    assert handoffs.give_back("child-cx", time.time(), _max_age) is False


def test_a_folder_or_link_named_like_a_lent_note_keeps_the_start_on_its_fast_path() -> None:
    """Only a regular file is a lent note: anything else there (never ours; reclaim skips it and
    never removes it) would send every session start down the slow path for good."""
    folder = handoffs.folder("lent")
    os.makedirs(os.path.join(folder, "child-dir.json"))
    os.symlink("/nonexistent", os.path.join(folder, "child-link.json"))
    assert handoffs.any_lent() is False
    _pending()
    assert _take("child-f") is not None
    assert handoffs.any_lent() is True


GONE = (1 << 31) - 2  # a pid past any pid_max: no process has it


@pytest.mark.slow  # starts a process (the give-back under way)
def test_a_killed_give_backs_claim_is_given_back_at_the_next_start() -> None:
    """A give-back killed between its claim (the lent note renamed to `<child>.json.<pid>.giving`)
    and its end left the claim in handoffs/lent for good, and the handoff taken, never pending
    again. The next start's reclaim (any_lent sees the claim) puts it back as the lent note and gives
    it back as usual; a claim whose process still runs is that give-back's own: left alone."""
    _pending()
    assert handoffs.take(PROJECT, "child-1", time.time(), lambda: STALE, None, GONE) is not None
    lent = handoffs.lent_file("child-1")
    os.rename(lent, f"{lent}.{GONE}.giving")  # the claim of a give-back killed before its end
    assert handoffs.pending(PROJECT) == []
    assert handoffs.any_lent()  # the start takes the slower path that reclaims
    handoffs.reclaim(time.time(), _max_age)
    assert os.listdir(os.path.dirname(lent)) == []  # no claim, no lent note left
    assert [doc["parentSession"] for _, doc in handoffs.pending(PROJECT)] == ["parent-1"]
    assert _take("child-2") is not None

    # a give-back under way (its process runs: a child of this test stands in for it; not the test's
    # parent, which is pid 1 where the runner's own parent has exited) keeps its claim
    assert handoffs.take(PROJECT, "child-3", time.time(), lambda: STALE, None, GONE) is None  # child-2 has it
    _pending("parent-2")
    assert handoffs.take(PROJECT, "child-3", time.time(), lambda: STALE, None, GONE) is not None
    lent = handoffs.lent_file("child-3")
    giver = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        claim = f"{lent}.{giver.pid}.giving"
        os.rename(lent, claim)
        handoffs.reclaim(time.time(), _max_age)
    finally:
        giver.kill()
        giver.wait()
    left = sorted(os.listdir(os.path.dirname(lent)))
    assert left == ["child-2.json", os.path.basename(claim)]  # child-2's client unknown: lent still
    assert handoffs.pending(PROJECT) == []  # still with the give-back that claimed it


def test_a_give_back_killed_after_its_link_into_pending_is_not_given_back_again() -> None:
    """A give-back killed after it linked the taken note into pending, before it removed the taken
    note: the handoff is pending (or, a start later, another session's), the taken note one more
    link to it. The next start's reclaim puts the claim back and gave it back again: pending a
    second time, so two sessions took the one handoff. The taken note's second link says it went
    back already: the claim and the note go, the handoff stays with the session that has it."""
    _pending()
    assert handoffs.take(PROJECT, "child-1", time.time(), lambda: STALE, None, GONE) is not None
    lent = handoffs.lent_file("child-1")
    os.rename(lent, f"{lent}.{GONE}.giving")  # claimed,
    os.link(handoffs.taken_file("child-1"), handoffs.pending_file(PROJECT))  # linked back, then killed
    assert _take("child-d") is not None  # the next session took it
    handoffs.reclaim(time.time(), _max_age)
    assert handoffs.pending(PROJECT) == []
    assert _take("child-e") is None  # never a second session
    assert sorted(os.listdir(os.path.dirname(lent))) == ["child-d.json"]  # no claim, no lent note of child-1
    assert not os.path.exists(handoffs.taken_file("child-1"))
    assert handoffs.taken("child-d") is not None

    # killed at the same point with the handoff still pending: it stays pending, once
    _pending("parent-2")
    assert handoffs.take(PROJECT, "child-2", time.time(), lambda: STALE, None, GONE) is not None
    lent = handoffs.lent_file("child-2")
    os.rename(lent, f"{lent}.{GONE}.giving")
    os.link(handoffs.taken_file("child-2"), handoffs.pending_file(PROJECT))
    handoffs.reclaim(time.time(), _max_age)
    assert [doc["parentSession"] for _, doc in handoffs.pending(PROJECT)] == ["parent-2"]
    assert not os.path.exists(handoffs.taken_file("child-2"))
    assert _take("child-f") is not None
    assert _take("child-g") is None


RECLAIM = """
import os, sys, time
from session_watcher.state import handoffs
while not os.path.exists(sys.argv[1]):  # both started: they go at once
    time.sleep(0.001)
handoffs.reclaim(time.time(), lambda _project: 3600.0)
"""


@pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)
def test_two_starts_at_once_put_a_killed_give_backs_claim_back_and_give_it_back_once(tmp_path: Path) -> None:
    """Two session starts at once (real processes), each reclaiming the claim a killed give-back
    left: the handoff is pending once, then one session takes it; no claim or lent note left."""
    for n in range(4):
        _pending(f"parent-{n}")
        child = f"child-{n}"
        assert handoffs.take(PROJECT, child, time.time(), lambda: STALE, None, GONE) is not None
        lent = handoffs.lent_file(child)
        os.rename(lent, f"{lent}.{GONE}.giving")
        go = tmp_path / f"go-{n}"
        starts = [subprocess.Popen([sys.executable, "-c", RECLAIM, str(go)]) for _ in range(2)]
        go.touch()
        assert [p.wait(timeout=120) for p in starts] == [0, 0]
        assert [doc["parentSession"] for _, doc in handoffs.pending(PROJECT)] == [f"parent-{n}"]
        assert os.listdir(os.path.dirname(lent)) == []
        assert _take(f"taker-{n}") is not None
        assert _take(f"other-{n}") is None
        os.unlink(handoffs.lent_file(f"taker-{n}"))  # sent


STOPPED = """
import os, signal, sys, time
from session_watcher.base import sysos
from session_watcher.state import handoffs
real = getattr(os, sys.argv[1])

def stop(*args, **kw):  # the step, then a SIGSTOP of this process: the test steps in, then continues it
    setattr(sysos, sys.argv[1], real)
    done = real(*args, **kw)
    os.kill(os.getpid(), signal.SIGSTOP)
    return done

setattr(sysos, sys.argv[1], stop)  # the hooks' calls: base/sysos.py
print(handoffs.give_back("child-1", time.time(), lambda _project: float(sys.argv[2])))
"""


@pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)
@pytest.mark.parametrize("step", ["rename", "link"])
def test_a_give_back_stopped_past_its_claims_age_loses_nothing(step: str) -> None:
    """A give-back (a real process) SIGSTOPped for over GIVING_MAX_S, right after its claim (`rename`)
    or right after its link into pending (`link`): the next start's reclaim takes the claim for one a
    dead give-back left (its age says so), puts it back and gives it back; a session takes it, a newer
    handoff is written for the project. Continued, the stopped give-back ends at once (nothing waits
    on it, no lock held) and changes nothing: the newer handoff stays pending, as written (its age:
    the link's `utime` set it to the first handoff's creation, two hours back, where the stale rule
    would sweep it sooner), the first stays with the session that took it; no claim or lent note left."""
    _pending(created=time.time() - 7200)
    assert handoffs.take(PROJECT, "child-1", time.time(), lambda: STALE, None, GONE) is not None
    p = subprocess.Popen([sys.executable, "-c", STOPPED, step, str(STALE)], stdout=subprocess.PIPE, text=True)
    try:
        _, status = os.waitpid(p.pid, os.WUNTRACED)  # returns once it stopped itself: no clock
        assert os.WIFSTOPPED(status), status
        assert os.listdir(os.path.dirname(handoffs.lent_file("child-1"))) == [f"child-1.json.{p.pid}.giving"]
        handoffs.reclaim(time.time() + handoffs.GIVING_MAX_S + 1, _max_age)  # a start, over 10 minutes on
        assert [doc["parentSession"] for _, doc in handoffs.pending(PROJECT)] == ["parent-1"]
        assert _take("child-d") is not None
        newer = _pending("parent-2")
        written = os.stat(handoffs.pending_file(PROJECT)).st_mtime
    finally:
        os.kill(p.pid, signal.SIGCONT)
    out, _ = p.communicate(timeout=120)
    assert (p.returncode, out) == (0, f"{step == 'link'}\n")  # it had linked, or found its claim gone
    assert [doc["createdAt"] for _, doc in handoffs.pending(PROJECT)] == [newer["createdAt"]]
    assert os.stat(handoffs.pending_file(PROJECT)).st_mtime == written
    assert handoffs.taken("child-d")["parentSession"] == "parent-1"  # type: ignore[index]
    assert sorted(os.listdir(os.path.dirname(handoffs.lent_file("child-1")))) == ["child-d.json"]


@pytest.mark.slow  # starts a process (tests/conftest.py: the quick tier)
def test_a_give_back_stopped_after_its_link_leaves_the_age_of_the_note_a_session_took_alone() -> None:
    """A give-back (a real process) SIGSTOPped right after its link into pending, and a session takes
    the note meanwhile (the take renames the pending link: one inode with the give-back's taken copy,
    its age set to the take's time, which the sweep of taken notes keeps the newest by). Continued, the
    give-back set the age through its copy, after the link: the other session's taken note read two
    hours old. It is set before the link now; a give-back that finds a newer handoff pending leaves
    its own taken note's age as it was."""
    _pending(created=time.time() - 7200)
    assert handoffs.take(PROJECT, "child-1", time.time(), lambda: STALE, None, GONE) is not None
    p = subprocess.Popen([sys.executable, "-c", STOPPED, "link", str(STALE)], stdout=subprocess.PIPE, text=True)
    try:
        _, status = os.waitpid(p.pid, os.WUNTRACED)  # returns once it stopped itself: no clock
        assert os.WIFSTOPPED(status), status
        assert _take("child-d") is not None
        took = os.stat(handoffs.taken_file("child-d")).st_mtime
    finally:
        os.kill(p.pid, signal.SIGCONT)
    out, _ = p.communicate(timeout=120)
    assert (p.returncode, out) == (0, "True\n")
    assert os.stat(handoffs.taken_file("child-d")).st_mtime == took
    assert handoffs.taken("child-d")["parentSession"] == "parent-1"  # type: ignore[index]
    assert not os.path.exists(handoffs.taken_file("child-1"))

    _pending("parent-2", created=time.time() - 3600)  # a newer handoff pending: the give-back keeps its note
    assert handoffs.take(PROJECT, "child-2", time.time(), lambda: STALE, None, GONE) is not None
    took = float(int(time.time()) - 60)
    os.utime(handoffs.taken_file("child-2"), (took, took))
    _pending("parent-3")
    assert handoffs.give_back("child-2", time.time(), _max_age) is False
    assert os.stat(handoffs.taken_file("child-2")).st_mtime == took


KILLED_TAKE = """
import os, signal, sys, time
from session_watcher.base import sysos
from session_watcher.core.handoff import header
from session_watcher.state import handoffs

project, real_rename = sys.argv[1], sysos.rename

def rename(src, dst):  # a Claude Code session's handoff replaces the note between the read and the rename
    sysos.rename = real_rename
    handoffs.write_pending({"project": project, "parentSession": "cc-parent", "createdAt": time.time(),
                            "note": header("cc-parent", "2026-12-06 12:00 UTC", 1000, 0.01) + "\\nwork",
                            "agent": "claude-code"})
    real_rename(src, dst)

def link(src, dst):  # putting it back: killed first
    os.kill(os.getpid(), signal.SIGKILL)

sysos.rename, sysos.link = rename, link
handoffs.take(project, "codex-child", time.time(), lambda: 3600.0, None, None, "codex")
"""


@pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)
def test_a_take_killed_before_it_put_another_agents_note_back_leaves_it_pending_at_the_next_start() -> None:
    """A Codex thread's start (a real process) read its project's Codex note; a Claude Code session's
    handoff replaced it before the rename, so the rename took that one, another agent's; the start
    was killed (SIGKILL) before it put it back. The note stayed taken for good: never pending again,
    no Claude Code session could take it. The take's claim says whose it is now: the next start sees
    it (the fast path's one directory read), puts it back pending, and a Claude Code session takes it."""
    doc = _pending("codex-parent")
    handoffs.write_pending({**doc, "agent": "codex"})
    proc = subprocess.run([sys.executable, "-c", KILLED_TAKE, PROJECT], capture_output=True, timeout=120,
                          check=False)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    claims = os.listdir(os.path.dirname(handoffs.pending_file(PROJECT)))  # taken, not put back: the claim
    assert [c.endswith(handoffs.TAKING) for c in claims] == [True], claims
    assert not os.path.exists(handoffs.taken_file("codex-child"))
    assert not os.path.exists(handoffs.lent_file("codex-child"))
    assert handoffs.any_pending()  # the next start takes the slower path that puts it back
    assert handoffs.take(PROJECT, "codex-2", time.time(), lambda: STALE, None, None, "codex") is None
    assert [(d["parentSession"], d["agent"]) for _, d in handoffs.pending(PROJECT)] == [("cc-parent", "claude-code")]
    got = handoffs.take(PROJECT, "cc-child", time.time(), lambda: STALE, None, None, "claude-code")
    assert got is not None
    assert got["parentSession"] == "cc-parent"
    assert os.listdir(os.path.dirname(handoffs.pending_file(PROJECT))) == []  # no claim left


def test_a_take_killed_after_it_put_a_note_back_does_not_put_it_back_twice() -> None:
    """A take killed after it linked another agent's note back into pending, before its claim went:
    the note is pending (then a session's); the claim is one more link to it. The next start's take
    removes the claim only: the note is not pending a second time, never taken twice."""
    _pending("parent-1")
    path = handoffs.pending_file(PROJECT)
    claim = f"{path}.{GONE}{handoffs.TAKING}"
    os.rename(path, claim)
    os.link(claim, path)  # put back, then killed
    assert _take("child-1") is not None  # a session took it (its own claim, then its taken note)
    assert _take("child-2") is None  # the next start: the claim goes, nothing pending again
    assert os.listdir(os.path.dirname(path)) == []
    assert handoffs.pending(PROJECT) == []
    assert _take("child-3") is None


def test_a_take_killed_before_its_note_was_the_sessions_is_pending_again() -> None:
    """A take killed between its claim and the rename into taken (a note of its own agent's): the
    session never had it (the hook printed nothing); the next start puts it back pending, and a
    newer handoff pending by then stays, the claim going."""
    _pending("parent-1")
    path = handoffs.pending_file(PROJECT)
    os.rename(path, f"{path}.{GONE}{handoffs.TAKING}")
    assert handoffs.any_pending()
    got = _take("child-1")
    assert got is not None
    assert got["parentSession"] == "parent-1"
    _pending("parent-2")
    os.rename(path, f"{path}.{GONE}{handoffs.TAKING}")
    _pending("parent-3")  # written since: it stays
    got = _take("child-2")
    assert got is not None
    assert got["parentSession"] == "parent-3"
    assert os.listdir(os.path.dirname(path)) == []


@pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)
def test_a_take_under_way_keeps_its_claim() -> None:
    """A claim whose process runs (a child of this test stands in for the take) is that take's:
    another start leaves it alone."""
    _pending("parent-1")
    path = handoffs.pending_file(PROJECT)
    taker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        claim = f"{path}.{taker.pid}{handoffs.TAKING}"
        os.rename(path, claim)
        assert _take("child-1") is None
        assert os.path.exists(claim)
    finally:
        taker.kill()
        taker.wait()
    assert _take("child-2") is not None  # its process gone: pending again, and taken


def test_a_claim_whose_pid_runs_is_put_back_once_older_than_a_take_can_be() -> None:
    """The claim's pid is a running process (here this test's parent): a take under way, or a process
    that got the pid of a take killed since. A pid taken over that way kept the note from every
    start for as long as that process ran; past GIVING_MAX_S after the claim (its ctime: a take
    takes milliseconds) the next start puts it back and takes it."""
    _pending("parent-1")
    path = handoffs.pending_file(PROJECT)
    claim = f"{path}.{os.getppid()}{handoffs.TAKING}"
    os.rename(path, claim)
    assert _take("child-1") is None  # its claimant runs: left alone
    assert os.path.exists(claim)
    later = time.time() + handoffs.GIVING_MAX_S + 5
    got = handoffs.take(PROJECT, "child-2", later, lambda: STALE, None, None)
    assert got is not None
    assert got["parentSession"] == "parent-1"
    assert os.listdir(os.path.dirname(path)) == []


def test_going_on_drops_a_guard_handoff_a_killed_take_left_claimed() -> None:
    """A start killed between its claim of the guard's note (`<key>.json.<pid>.taking`) and its end
    left the claim; the prompt that goes on in the note's session did not see it (only the pending
    file), so the next start put it back and handed out a note no longer wanted. The drop puts a
    dead claim back first, then drops it."""
    _pending("parent-k", handoffs.GUARD)
    path = handoffs.pending_file(PROJECT)
    os.rename(path, f"{path}.{GONE}{handoffs.TAKING}")
    assert handoffs.drop(PROJECT, "parent-k", handoffs.GUARD) is True
    assert os.listdir(os.path.dirname(path)) == []
    assert _take("child-k") is None


def test_going_on_leaves_another_sessions_note_a_killed_take_left_claimed() -> None:
    _pending("parent-user")  # the handoff command's: not the guard's to drop
    path = handoffs.pending_file(PROJECT)
    os.rename(path, f"{path}.{GONE}{handoffs.TAKING}")
    assert handoffs.drop(PROJECT, "parent-user", handoffs.GUARD) is False
    got = _take("child-u")
    assert got is not None
    assert got["parentSession"] == "parent-user"


@pytest.mark.parametrize("name", ["notes.taking", "x.json.abc.taking", "x.json..taking", "a.b.json.7.taking",
                                  f"{'k' * 90}.json.7.taking", "x.json.\u00b2.taking", "x.json.\u0661.taking"])
def test_a_file_named_like_no_claim_keeps_the_start_on_its_fast_path(name: str) -> None:
    """Only a take's claim (`<project key>.json.<pid>.taking`, a regular file) is put back by the next
    start; a file ending in `.taking` under any other name was never put back nor removed, yet it
    sent every start down the slower path for good. A pid in other digits (`²`) stopped the take
    itself: no note was handed out while that file was there."""
    folder = handoffs.folder("pending")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w", encoding="utf-8") as fh:
        fh.write("{}")
    os.makedirs(os.path.join(folder, f"dir.json.{GONE}{handoffs.TAKING}"))  # a folder: never a claim
    assert handoffs.any_pending() is False
    _pending("parent-n")
    got = _take("child-n")
    assert got is not None
    assert got["parentSession"] == "parent-n"
    assert handoffs.any_pending() is False
    assert os.path.exists(os.path.join(folder, name))  # never ours to remove


def test_a_folder_or_a_link_named_as_a_note_keeps_the_start_on_its_fast_path(tmp_path: Path) -> None:
    """A folder named `*.json` in the pending folder, or a link so named (to nothing, or to a note
    elsewhere), counted as a handoff waiting, though no take reads one (`_read`: a regular file, a
    link never followed): every start went down the slower path for good. Only a regular file
    counts now; the take hands out the real note beside them as before, and leaves them there."""
    folder = handoffs.folder("pending")
    os.makedirs(os.path.join(folder, "dir.json"))
    os.symlink(tmp_path / "gone.json", os.path.join(folder, "nothing.json"))
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("{}")
    os.symlink(elsewhere, os.path.join(folder, "linked.json"))
    assert handoffs.any_pending() is False
    _pending("parent-d")
    assert handoffs.any_pending() is True
    got = _take("child-d")
    assert got is not None
    assert got["parentSession"] == "parent-d"
    assert handoffs.any_pending() is False
    assert sorted(os.listdir(folder)) == ["dir.json", "linked.json", "nothing.json"]


def test_a_real_claim_still_sends_the_start_down_the_path_that_puts_it_back() -> None:
    _pending("parent-c")
    path = handoffs.pending_file(PROJECT)
    os.rename(path, f"{path}.{GONE}{handoffs.TAKING}")
    assert handoffs.any_pending() is True
    got = _take("child-c")
    assert got is not None
    assert got["parentSession"] == "parent-c"


def test_a_claim_no_start_can_put_back_stops_costing_every_start() -> None:
    """A claim whose rename fails (here a folder, not empty, stands where this process's own claim
    goes: the rename onto it fails as on an immutable file) was never put back, and every start took
    the slower path for good. Seen so once, it is marked stuck: no start counts it after; `handoff
    --show` (`pending`) tries it again, and once it can be put back the mark goes with it."""
    _pending("parent-s")
    path = handoffs.pending_file(PROJECT)
    claim = f"{path}.{GONE}{handoffs.TAKING}"
    os.rename(path, claim)
    mine = f"{path}.{os.getpid()}{handoffs.TAKING}"
    os.makedirs(os.path.join(mine, "inside"))
    assert handoffs.any_pending() is True
    assert _take("child-s") is None
    assert os.path.exists(claim + handoffs.STUCK)
    assert handoffs.any_pending() is False  # the starts after: their fast path
    assert _take("child-s2") is None
    os.rmdir(os.path.join(mine, "inside"))
    os.rmdir(mine)
    [(_, doc)] = handoffs.pending(PROJECT)  # tried again: put back, and the mark gone
    assert doc["parentSession"] == "parent-s"
    assert sorted(os.listdir(os.path.dirname(path))) == [os.path.basename(path)]
    got = _take("child-s3")
    assert got is not None
    assert got["parentSession"] == "parent-s"


def _start_in_a_read_only_folder(child: str) -> list[str]:
    """What a start sees with the pending folder read-only (a mount for root, who writes a folder
    whatever its mode; its mode for another user): `any_pending`, its take, then `any_pending` and
    the folder's names, a line each."""
    import shutil

    folder = handoffs.folder("pending")
    code = ("import os, time; from session_watcher.state import handoffs; print(handoffs.any_pending()); "
            f"print(handoffs.take({PROJECT!r}, {child!r}, time.time(), lambda: {STALE!r}, None, None)); "
            "print(handoffs.any_pending(), sorted(os.listdir(handoffs.folder('pending'))))")
    if os.geteuid() != 0:
        os.chmod(folder, 0o500)
        cmd = [sys.executable, "-c", code]
    elif shutil.which("unshare") is None:
        pytest.skip("root, and no unshare to mount the folder read-only")
    else:
        ro = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$1" -c "$2"'
        cmd = ["unshare", "-m", "sh", "-c", ro, folder, sys.executable, code]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    finally:
        os.chmod(folder, 0o700)
    if os.geteuid() == 0 and proc.returncode != 0 and not proc.stdout:
        pytest.skip(f"no read-only mount here: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


@pytest.mark.slow  # starts a process (the folder read-only in it)
def test_a_claim_in_a_folder_no_start_can_write_keeps_the_start_on_its_fast_path() -> None:
    """A claim in a pending folder this process may not write (read-only: a mount, or its mode for
    another user than root) can be neither put back nor marked stuck: every start went down the slower
    path to try again, for good. It is not counted there; a start's take leaves it as it is."""
    _pending("parent-r")
    path = handoffs.pending_file(PROJECT)
    claim = f"{path}.{GONE}{handoffs.TAKING}"
    os.rename(path, claim)
    assert handoffs.any_pending() is True  # writable: the next start puts it back
    assert _start_in_a_read_only_folder("child-r") == ["False", "None", f"False [{os.path.basename(claim)!r}]"]
    assert handoffs.any_pending() is True  # writable again: counted, and put back
    got = _take("child-r2")
    assert got is not None
    assert got["parentSession"] == "parent-r"


@pytest.mark.slow  # starts a process (the folder read-only in it)
def test_a_note_in_a_folder_no_start_can_write_keeps_the_start_on_its_fast_path() -> None:
    """A note pending in a folder this process may not write cannot be taken (the take claims it by a
    rename): every start went down the slower path to try, for good, as for a claim there. It is
    not counted there; writable again, it is counted and taken."""
    _pending("parent-n")
    path = handoffs.pending_file(PROJECT)
    assert _start_in_a_read_only_folder("child-n") == ["False", "None", f"False [{os.path.basename(path)!r}]"]
    assert handoffs.any_pending() is True  # writable again: counted, and taken
    got = _take("child-n2")
    assert got is not None
    assert got["parentSession"] == "parent-n"


def test_a_stuck_mark_whose_claim_is_gone_goes() -> None:
    _pending("parent-m")
    path = handoffs.pending_file(PROJECT)
    mark = f"{path}.{GONE}{handoffs.TAKING}{handoffs.STUCK}"
    with open(mark, "w", encoding="utf-8"):
        pass
    other = os.path.join(os.path.dirname(path), "notes.stuck")  # not a mark of ours: never removed
    with open(other, "w", encoding="utf-8"):
        pass
    assert handoffs.any_pending() is True  # the note itself
    assert _take("child-m") is not None
    assert not os.path.exists(mark)
    assert os.path.exists(other)
