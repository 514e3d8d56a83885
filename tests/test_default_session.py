"""The session a command takes when none is named (`sessions.naming.default_session`): the newest of
the project the command runs in, else the newest of all; in that scope one with an API call before a
newer one without; and the text says whose project it is."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.oracle import SW, TRANSCRIPTS, hook, payload

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

FIXTURE_CWD = "/home/marco/projects/spotter"  # the cwd short.jsonl's and tool_heavy.jsonl's records name
OLD = "abcdef01-1111-4111-8111-111111111111"  # in project A, the oldest
MID = "abcdef01-2222-4222-8222-222222222222"  # in project B
EMPTY = "0e0e0e0e-4444-4444-8444-444444444444"  # opened in project A and left before a prompt


def _transcript(sid: str, fixture: str, cwd: Path, at: int) -> Path:
    """A copy of a fixture transcript under $CLAUDE_CONFIG_DIR/projects/, its records run in `cwd`,
    last written at `at`."""
    folder = os.path.join(os.environ["CLAUDE_CONFIG_DIR"], "projects", str(cwd).replace("/", "-"))
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, sid + ".jsonl")
    text = (TRANSCRIPTS / fixture).read_text()
    assert f'"cwd":"{FIXTURE_CWD}"' in text
    with open(path, "w") as fh:
        fh.write(text.replace(f'"cwd":"{FIXTURE_CWD}"', f'"cwd":{json.dumps(str(cwd))}'))
    os.utime(path, (at, at))
    return Path(path)


def _sw(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The console script run in the folder `cwd`, as a user in that folder runs it."""
    proc = subprocess.run([str(SW), *args], capture_output=True, text=True, timeout=60, check=False, cwd=cwd,
                          env={**os.environ, "COLUMNS": "200", **(env or {})})
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    """Two projects: A with an old session, B with a newer one; then, newest of all, a session opened
    in A by Claude Code and left before its first prompt (its SessionStart hook recorded it; no
    transcript was ever written)."""
    a, b, elsewhere = tmp_path / "a", tmp_path / "b", tmp_path / "elsewhere"
    for d in (a, b, elsewhere):
        d.mkdir()
    _transcript(OLD, "short.jsonl", a, 1_700_000_000)
    _transcript(MID, "tool_heavy.jsonl", b, 1_700_000_060)
    started = hook("SessionStart", payload(EMPTY, a / "never-written.jsonl", "SessionStart", source="startup",
                                           cwd=str(a)))
    assert started.returncode == 0, started.stderr
    return {"a": a, "b": b, "elsewhere": elsewhere}


def test_in_a_project_its_newest_session_with_a_call(world: dict[str, Path]) -> None:
    """Run in project A, `status`, `health` and `replay` take A's session that made calls, not the
    newer session of B nor A's newer empty one (which `status` took: model -, calls 0)."""
    a = world["a"]
    assert json.loads(_sw("status", "--json", cwd=a).stdout)["sessionId"] == OLD
    assert json.loads(_sw("replay", "--json", cwd=a).stdout)["sessionId"] == OLD
    said = _sw("status", cwd=a).stdout
    assert f"session  {OLD}" in said
    assert f"project  {os.path.realpath(a)} (passed over {EMPTY[:8]}: no API call)" in said
    health = _sw("health", cwd=a).stdout
    assert f"session {OLD}" in health
    assert f"project  {os.path.realpath(a)} (passed over {EMPTY[:8]}: no API call)" in health
    # $CLAUDE_PROJECT_DIR names the project as it does for the hooks, wherever the command runs
    env = {"CLAUDE_PROJECT_DIR": str(a)}
    assert json.loads(_sw("status", "--json", cwd=world["elsewhere"], env=env).stdout)["sessionId"] == OLD


def test_elsewhere_the_newest_session_with_a_call(world: dict[str, Path]) -> None:
    """Run outside both projects: the newest session of all that made a call (B's), named with its
    project; the newer empty one passed over, and said so."""
    out = world["elsewhere"]
    assert json.loads(_sw("status", "--json", cwd=out).stdout)["sessionId"] == MID
    said = _sw("status", cwd=out).stdout
    assert f"project  {os.path.realpath(world['b'])} (passed over {EMPTY[:8]}: no API call)" in said
    replayed = _sw("replay", cwd=out).stdout  # replay never took the empty one (no transcript): no note
    assert f"project  {os.path.realpath(world['b'])}\n" in replayed
    assert f"session {MID}" in _sw("health", cwd=out).stdout
    # named, a session is the one named, its project said, nothing passed over
    named = _sw("status", EMPTY, cwd=out).stdout
    assert f"session  {EMPTY}" in named
    assert f"project  {os.path.realpath(world['a'])}\n" in named


def test_in_a_project_with_only_an_empty_session_that_one(tmp_path: Path, world: dict[str, Path]) -> None:
    """A project whose only session made no call: that session (the user's own, in this folder),
    rather than another project's; the newest of all, empty too, is passed over elsewhere."""
    c = tmp_path / "c"
    c.mkdir()
    other = "0f0f0f0f-5555-4555-8555-555555555555"
    assert hook("SessionStart", payload(other, c / "never.jsonl", "SessionStart", source="startup",
                                        cwd=str(c))).returncode == 0
    assert json.loads(_sw("status", "--json", cwd=c).stdout)["sessionId"] == other
    assert f"project  {os.path.realpath(c)}\n" in _sw("status", cwd=c).stdout
    said = _sw("status", cwd=world["elsewhere"]).stdout
    assert f"session  {MID}" in said
    assert "and 1 more: no API call)" in said


def test_a_passed_over_session_is_named_by_a_prefix_that_finds_it_alone(tmp_path: Path) -> None:
    """Two sessions whose ids share their first 8 characters (two Codex threads of one minute): the
    `project` line of `status`, `health` and `replay` named the one passed over by those 8, which
    name both (`status 0e0e0e0e` is refused as ambiguous); it names it by the group of its id that
    tells them apart, a prefix that finds it alone."""
    c = tmp_path / "c"
    c.mkdir()
    called, empty = "0e0e0e0e-1111-4111-8111-111111111111", "0e0e0e0e-4444-4444-8444-444444444444"
    _transcript(called, "short.jsonl", c, 1_700_000_000)
    path = _transcript(empty, "short.jsonl", c, 1_700_000_060)  # the newer, its lines before the first call
    path.write_text("".join(line + "\n" for line in path.read_text().splitlines()[:3]))
    assert b'"usage"' not in path.read_bytes()
    os.utime(path, (1_700_000_060, 1_700_000_060))
    line = f"project  {os.path.realpath(c)} (passed over 0e0e0e0e-4444: no API call)"
    for command in ("status", "health", "replay"):
        said = _sw(command, cwd=c).stdout
        assert called in said, (command, said)
        assert line in said.splitlines(), (command, said)
    assert json.loads(_sw("status", "--json", "0e0e0e0e-4444", cwd=c).stdout)["sessionId"] == empty
    ambiguous = subprocess.run([str(SW), "status", "0e0e0e0e"], capture_output=True, text=True, timeout=60,
                               check=False, cwd=c)
    assert ambiguous.returncode == 1
    assert "is the start of 2 session ids" in ambiguous.stderr


def test_the_project_line_keeps_within_columns(world: dict[str, Path]) -> None:
    """The header's project line wraps within COLUMNS at spaces, its path never cut."""
    said = _sw("status", cwd=world["a"], env={"COLUMNS": "40"}).stdout
    lines = said.splitlines()
    real = os.path.realpath(world["a"])
    assert all(len(line) <= 40 or line.strip() == real for line in lines), said
    assert real in [w for line in lines for w in line.split()]


def _record(path: Path) -> str:
    """The session of `path` recorded as its hooks leave it: its fold saved as its state, written when
    its transcript last was."""
    from session_watcher.base import paths
    from session_watcher.sessions.replay import fold
    from session_watcher.state import store

    state, _cfg, _trace = fold(str(path), with_trace=False)
    paths.ensure_private_dir(paths.sessions_dir())
    store.save(store.session_file(state["sessionId"]), state)
    at = path.stat().st_mtime
    os.utime(store.session_file(state["sessionId"]), (at, at))
    return str(state["sessionId"])


def test_the_pick_reads_only_what_can_change_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pick looks at the sessions newest first: what each needs, no more. Run where no session
    ran, the newest session's state counted its calls: no transcript is searched for an API call, no
    state but the one picked is loaded whole, and no transcript a state names is looked for on disk
    (it loaded every state whole, a third of a millisecond each with its checks, and read the first
    4 MiB of every transcript: seconds at a few thousand sessions; bench/default_pick.py). The picks
    stay the rule's."""
    from session_watcher.sessions import naming
    from session_watcher.state import store

    a, b, elsewhere = tmp_path / "a", tmp_path / "b", tmp_path / "elsewhere"
    for d in (a, b, elsewhere):
        d.mkdir()
    at = 1_700_000_000
    old_a = [_transcript(f"abcdef02-0000-4000-8000-00000000000{k}", "short.jsonl", a, at + k) for k in range(3)]
    for k in range(3):  # never recorded
        _transcript(f"abcdef03-0000-4000-8000-00000000000{k}", "short.jsonl", b, at + 10 + k)
    recorded = [_transcript(f"abcdef04-0000-4000-8000-00000000000{k}", "short.jsonl", b, at + 20 + k)
                for k in range(4)]
    for path in (*old_a, *recorded):
        _record(path)
    prompt = next(line for line in (TRANSCRIPTS / "short.jsonl").read_bytes().splitlines() if b'"type":"user"' in line)
    no_call = tmp_path / "no-call.jsonl"
    no_call.write_bytes(prompt.replace(f'"cwd":"{FIXTURE_CWD}"'.encode(), f'"cwd":{json.dumps(str(b))}'.encode()))
    newest_empty = _transcript("abcdef05-0000-4000-8000-000000000000", "short.jsonl", b, at + 30)
    newest_empty.write_bytes(no_call.read_bytes())
    os.utime(newest_empty, (at + 30, at + 30))

    loaded: list[str] = []
    searched: list[str] = []
    placed: list[str] = []  # the sessions whose transcript is looked for on disk (`_by_id`)
    load, has_call, by_id = store.load, naming._has_call, naming._by_id

    def counted_load(path: str, session_id: str, readonly: bool = False) -> object:
        loaded.append(session_id)
        return load(path, session_id, readonly)

    def counted_search(path: str) -> bool:
        searched.append(os.path.basename(path))
        return has_call(path)

    def counted_by_id(session_id: str, known: naming._Known, view: tuple[str | None, str | None, bool] | None = None
                      ) -> naming.Found:
        placed.append(session_id)
        return by_id(session_id, known, view)

    monkeypatch.setattr(store, "load", counted_load)
    monkeypatch.setattr(naming, "_has_call", counted_search)
    monkeypatch.setattr(naming, "_by_id", counted_by_id)

    def pick(project: Path) -> naming.Found:
        loaded.clear()
        searched.clear()
        placed.clear()
        return naming.default_session(naming._known(), os.path.realpath(project))

    found = pick(elsewhere)  # of all: the newest with a call, the newer one without passed over
    assert (found.session_id, found.recorded, found.skipped) == (recorded[-1].stem, True, (newest_empty.stem,))
    assert loaded == [recorded[-1].stem]
    assert searched == [newest_empty.name]
    unrecorded = [f"abcdef03-0000-4000-8000-00000000000{k}" for k in (2, 1, 0)]  # only a transcript names their project
    assert placed == [newest_empty.stem, *unrecorded, recorded[-1].stem]
    found = pick(a)  # A's newest, past B's six: B's transcripts searched for no call, its states not loaded
    assert (found.session_id, found.skipped) == (old_a[-1].stem, ())
    assert loaded == [old_a[-1].stem]
    assert searched == [newest_empty.name]
    assert placed == [newest_empty.stem, *unrecorded, old_a[-1].stem]


def test_a_state_read_where_its_fields_stand_is_the_state_loaded(tmp_path: Path, world: dict[str, Path]) -> None:
    """The pick reads each state's cursor, project and calls where they stand in its text
    (`naming._state_fields`): the same as the state loaded whole, for a session the hooks folded (its
    calls counted, its path map in shards) and one they only saw start; a text of another form (an
    older version's state, one edited by hand) is not read so, and the pick loads it whole."""
    from session_watcher.sessions import naming
    from session_watcher.state import store
    from tests.oracle import stop_until_read

    folded = _transcript("abcdef06-0000-4000-8000-000000000000", "tool_heavy.jsonl", world["b"], 1_700_000_100)
    stop_until_read(folded.stem, folded, env={**os.environ, "CLAUDE_PROJECT_DIR": str(world["b"])})
    for sid, calls in ((folded.stem, True), (EMPTY, False)):
        data = Path(store.session_file(sid)).read_bytes()
        assert bool(json.loads(data)["shards"]) is calls
        view = naming._state_view(sid)
        assert view[1:] == (os.path.realpath(world["b"] if calls else world["a"]), calls)
        assert naming._state_fields(data, sid) == view
        spaced = json.dumps(json.loads(data)).encode()  # the same state, written another way
        assert naming._state_fields(spaced, sid) is None
        Path(store.session_file(sid)).write_bytes(spaced)
        assert naming._state_peek(sid, os.path.dirname(store.session_file(sid))) == view
    assert naming._state_view(folded.stem)[0] == str(folded)


def test_status_of_a_fork_picked_by_default_looks_for_it_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """`status` of a fork whose parent's file is gone, named by nothing: it says its copies are counted in
    no session, having made its pick once (it looked for the fork's transcript by the same empty name
    again: a second pick, over every session on disk where no session of the project made a call)."""
    from argparse import Namespace

    from session_watcher.cli import commands
    from session_watcher.sessions import naming
    from tests.test_fork_counts import CHILD, FORK

    proj = tmp_path / "proj"
    proj.mkdir()
    folder = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / "-proj"
    folder.mkdir(parents=True)
    (folder / f"{CHILD}.jsonl").write_bytes((FORK / f"{CHILD}.jsonl").read_bytes())
    picks: list[str | None] = []
    pick = naming.default_session

    def counted(known: naming._Known, project: str | None, need_transcript: bool = False) -> naming.Found:
        picks.append(project)
        return pick(known, project, need_transcript)

    monkeypatch.setattr(naming, "default_session", counted)
    monkeypatch.chdir(proj)
    assert commands.status(Namespace(target=None, session=None, transcript=None, json=True, verbose=False)) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["sessionId"], doc.get("forkedFromFound")) == (CHILD, False)
    assert picks == [str(proj.resolve())]
