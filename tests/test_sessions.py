"""One way to name a session (`session_watcher.sessions.naming`), as a new user meets it: transcripts on disk
that the hooks never saw, named by nothing, a full id, a short id or a path, in every command that
takes a session; and the CLI's errors that point the right way (issue 29, items 1 and 8)."""

from __future__ import annotations

import json
import os
import shutil
import tomllib
from typing import TYPE_CHECKING

import pytest

from session_watcher import agents
from session_watcher.core.usererrors import NoSession, UserError
from session_watcher.sessions import naming as sessions
from tests.oracle import REPO, TRANSCRIPTS, hook, one_message, oracle, payload, sw

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

if TYPE_CHECKING:
    from pathlib import Path

# three sessions in one project folder, as Claude Code writes them; two share a 9-character prefix
IDS = {
    "abcdef01-1111-4111-8111-111111111111": "short.jsonl",
    "abcdef01-2222-4222-8222-222222222222": "tool_heavy.jsonl",
    "9f3c2e10-3333-4333-8333-333333333333": "subagent.jsonl",
}
NEWEST = "9f3c2e10-3333-4333-8333-333333333333"


@pytest.fixture
def projects() -> Path:
    """Three transcripts under $CLAUDE_CONFIG_DIR/projects/<project>/, the newest last; no hook ran."""
    folder = os.path.join(os.environ["CLAUDE_CONFIG_DIR"], "projects", "-home-dev-proj")
    os.makedirs(folder)
    for n, (sid, name) in enumerate(IDS.items()):
        path = os.path.join(folder, sid + ".jsonl")
        shutil.copy(TRANSCRIPTS / name, path)
        os.utime(path, (1_700_000_000 + n * 60, 1_700_000_000 + n * 60))
    from pathlib import Path

    return Path(folder)


def _states() -> list[str]:
    folder = os.path.join(os.environ["SESSION_WATCHER_HOME"], "state", "sessions")
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


def test_find_names_a_session_every_way(projects: Path) -> None:
    assert sessions.find(None) == sessions.Found(NEWEST, str(projects / f"{NEWEST}.jsonl"), False)
    for sid in IDS:
        want = sessions.Found(sid, str(projects / f"{sid}.jsonl"), False)
        assert sessions.find(sid) == want  # the full id
        assert sessions.find(sid[:13]) == want  # a unique prefix
        assert sessions.find(str(projects / f"{sid}.jsonl")) == want  # the path
    assert sessions.find("9f3c2e")[0] == NEWEST  # the shortest prefix taken


def test_ambiguous_short_and_unknown_names_say_why(projects: Path) -> None:
    with pytest.raises(UserError, match="start of 2 session ids") as exc:
        sessions.find("abcdef01")
    assert "abcdef01-1111" in str(exc.value)
    assert "abcdef01-2222" in str(exc.value)
    with pytest.raises(NoSession, match="at least 6 characters"):
        sessions.find("9f3c2")
    with pytest.raises(NoSession, match=r"no session 'ffffffff'.*transcripts in") as none:
        sessions.find("ffffffff")
    assert str(none.value).endswith("; `session-watcher report` lists every session with its id")  # what to do


def test_paths_that_are_not_transcripts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    junk = tmp_path / "junk.jsonl"
    junk.write_bytes(b"hello\nnot json at all\n")
    with pytest.raises(UserError, match="not a Claude Code transcript or Codex rollout"):
        sessions.find(str(junk))
    (tmp_path / "empty.jsonl").write_bytes(b"")
    with pytest.raises(UserError, match="empty"):
        sessions.find(str(tmp_path / "empty.jsonl"))
    with pytest.raises(UserError, match="no such file"):
        sessions.find(str(tmp_path / "nope.jsonl"))
    with pytest.raises(UserError, match="a folder"):
        sessions.find(str(tmp_path) + "/")
    fresh = tmp_path / "home"
    monkeypatch.setenv("HOME", str(fresh))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(fresh / ".claude"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(fresh / ".config"))
    with pytest.raises(NoSession, match="no session yet") as nothing:
        sessions.find(None)  # nothing anywhere, no folder either: none named
    assert str(nothing.value).startswith("no session yet: no folder of Claude Code's or Codex's sessions exists yet, "
                                         "and none recorded by the hooks")
    # what to do: start one (it said only that doctor checks the hooks, a new user's first error)
    assert "start a Claude Code session or a Codex thread, then run this again" in str(nothing.value)
    (fresh / ".claude" / "projects").mkdir(parents=True)
    with pytest.raises(NoSession, match="no session yet") as nothing:
        sessions.find(None)
    said = str(nothing.value)
    assert f"Claude Code transcript or Codex rollout in {fresh / '.claude' / 'projects'}, and none" in said
    assert all(root in said for root in agents.folders_there(agents.sources()[0]))  # where it looked: those there
    assert ".codex" not in said


def test_a_recorded_session_without_its_log_names_both_agents(monkeypatch: pytest.MonkeyPatch) -> None:
    """A session the hooks recorded whose state names no log on disk (a Codex thread's as well as a
    Claude Code session's): the commands that read it say that neither agent's folders hold it."""
    monkeypatch.setattr(sessions, "find", lambda _target: sessions.Found("019d7739-95cb", None, True))
    with pytest.raises(NoSession, match="no transcript on disk") as gone:
        sessions.transcript_of("019d7739")
    assert "Claude Code" in str(gone.value)
    assert "Codex" in str(gone.value)


def test_every_command_answers_for_sessions_the_hooks_never_saw(projects: Path, tmp_path: Path) -> None:
    short = "abcdef01-2222"  # tool_heavy.jsonl, by a short id
    doc = json.loads(sw("status", short, "--json").stdout)
    assert doc["sessionId"].startswith(short)
    assert doc["tokenUsage"] == oracle(TRANSCRIPTS / "tool_heavy.jsonl")["main"]
    latest = json.loads(sw("status", "--json").stdout)
    assert latest["sessionId"] == NEWEST
    assert latest["tokenUsage"] == oracle(TRANSCRIPTS / "subagent.jsonl")["main"]
    assert json.loads(sw("health", short, "--json").stdout)["grade"]
    replayed = json.loads(sw("replay", short, "--json").stdout)
    assert replayed["tokenUsage"] == doc["tokenUsage"]
    bt = json.loads(sw("backtest", "--json", short).stdout)
    assert [s["sessionId"] for s in bt["sessions"]] == ["abcdef01-2222-4222-8222-222222222222"]
    page = sw("report", "session", short, "--html", str(tmp_path / "p.html"))
    assert page.returncode == 0, page.stderr
    assert (tmp_path / "p.html").stat().st_size > 10_000
    assert _states() == []  # folded on demand: nothing saved for a session the hooks never saw


def test_a_recorded_session_is_read_from_its_state_and_a_copy_is_not(projects: Path, tmp_path: Path) -> None:
    sid = "abcdef01-1111-4111-8111-111111111111"
    t = projects / f"{sid}.jsonl"
    assert hook("Stop", payload(sid, t)).returncode == 0
    assert sessions.find("abcdef01-11") == sessions.Found(sid, str(t), True)
    assert json.loads(sw("status", "abcdef01-11", "--json").stdout)["tokenUsage"] == oracle(t)["main"]
    copy = tmp_path / f"{sid}.jsonl"  # the same name elsewhere: folded on its own, the state left alone
    copy.write_bytes(t.read_bytes()[: t.stat().st_size // 2].rsplit(b"\n", 1)[0] + b"\n")
    assert sessions.find(str(copy)) == sessions.Found(sid, str(copy), False)
    state = os.path.join(os.environ["SESSION_WATCHER_HOME"], "state", "sessions", f"{sid}.json")
    before = os.stat(state).st_mtime_ns
    half = json.loads(sw("status", str(copy), "--json").stdout)
    assert half["tokenUsage"] == oracle(copy)["main"]
    assert os.stat(state).st_mtime_ns == before


def test_cli_errors_point_the_right_way(projects: Path, tmp_path: Path) -> None:
    junk = tmp_path / "junk.txt"
    junk.write_text("just some notes\n")
    args: tuple[str, ...]  # each loop's command lines
    for args in (("report", "session", str(junk), "--html", str(tmp_path / "j.html")), ("status", str(junk)),
                 ("replay", str(junk)), ("health", "--transcript", str(junk)), ("backtest", str(junk))):
        proc = sw(*args)
        assert proc.returncode == 1, args
        assert "not a Claude Code transcript or Codex rollout" in " ".join(proc.stderr.decode().split()), args
        assert one_message(proc.stderr.decode()), args
    assert not (tmp_path / "j.html").exists()
    nope = sw("report", "session", "/nope.jsonl", "--html", str(tmp_path / "n.html"))
    assert nope.returncode == 1
    assert "/nope.jsonl: no such file" in " ".join(nope.stderr.decode().split())  # (wrapped where a temp path is long)
    assert "searched" not in nope.stderr.decode()
    for args in (("report", "--projects", "/nonexistent"), ("report", "--json", "--projects", "/nonexistent"),
                 ("export", "--otlp", "--dry-run", "--projects", "/nonexistent")):  # export: "no session to export"
        proc = sw(*args)
        assert proc.returncode == 1, args
        assert "/nonexistent: no such folder" in proc.stderr.decode()
    wide = {**os.environ, "COLUMNS": "1000"}
    for args in (("report", "--projects", str(junk)), ("export", "--otlp", "--dry-run", "--projects", str(junk))):
        proc = sw(*args, env=wide)  # it said "no such folder" of a file, export "no session to export"
        assert (proc.returncode, proc.stderr.decode()) == (1, f"session-watcher: --projects {junk}: a file, not a "
                                                              "folder\n"), args
    proc = sw("replay", NEWEST, "--trace", str(tmp_path), env=wide)  # a folder where the file goes
    assert (proc.returncode, proc.stderr.decode()) == (1, f"session-watcher: cannot write {tmp_path}: Is a directory\n")
    assert not [p for p in tmp_path.parent.iterdir() if p.name.startswith(tmp_path.name + ".")]  # no temp file left
    two = sw("status", "abcdef01-11", "--session", NEWEST)
    assert two.returncode == 2  # options that do not go together: a command line that cannot work
    assert "name one session" in two.stderr.decode()


def test_version_is_one_and_printed() -> None:
    from session_watcher import __version__

    plugin = json.loads((REPO / "session_watcher" / ".claude-plugin" / "plugin.json").read_text())
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert plugin["version"] == __version__
    assert project["dynamic"] == ["version"]
    proc = sw("--version")
    assert proc.returncode == 0
    assert proc.stdout.decode() == f"session-watcher {__version__}\n"


def _parsers() -> list[tuple[str, object]]:
    import argparse

    from session_watcher.cli import build_parser

    out: list[tuple[str, object]] = []

    def walk(name: str, p: argparse.ArgumentParser) -> None:
        out.append((name, p))
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    walk(f"{name} {sub_name}", sub)

    from session_watcher.cli import COMMANDS

    walk("session-watcher", build_parser())  # the listing
    for command in COMMANDS:  # each command's part of the tree, `report session` included
        walk("session-watcher", build_parser(command))
    return out


def test_every_option_has_help() -> None:
    import argparse

    missing = []
    for name, p in _parsers():
        assert isinstance(p, argparse.ArgumentParser)
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
                continue
            if not action.help:
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert missing == []
    session_help = sw("report", "session", "--help").stdout.decode()
    for opt in ("--html", "--serve", "--port", "--idle-minutes"):
        assert opt in session_help
    assert "report session" in sw("report", "--help").stdout.decode()


def test_the_commands_reading_a_transcript_pass_over_a_latest_session_without_one(projects: Path,
                                                                                  tmp_path: Path) -> None:
    """Claude Code opened and left before a prompt: its SessionStart hook recorded a session with no
    transcript, now the most recently active. `status` passes it over too (it made no API call: it
    showed `model - calls 0`; tests/test_default_session.py); `replay` and `report session`, named no
    session, take the latest that has a transcript: they said "session ... has no transcript on
    disk", of a session the user never used."""
    empty = "0e0e0e0e-4444-4444-8444-444444444444"
    assert hook("SessionStart", payload(empty, tmp_path / "never-written.jsonl", "SessionStart",
                                         source="startup")).returncode == 0
    assert json.loads(sw("status", "--json").stdout)["sessionId"] == NEWEST
    assert json.loads(sw("status", "--json", empty).stdout)["sessionId"] == empty  # named: that one
    replayed = sw("replay", "--json")
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout)["sessionId"] == NEWEST
    page = tmp_path / "page.html"
    made = sw("report", "session", "--html", str(page), env={**os.environ, "COLUMNS": "1000"})
    assert made.returncode == 0, made.stderr
    assert made.stdout.decode().startswith(f"wrote {page}: session ")
    assert page.is_file()
    gone = sw("replay", empty)  # named: still said
    assert gone.returncode == 1
    assert "has no transcript on disk" in one_message(gone.stderr.decode())
    # and each says so in README's words (their help said "the most recently active", as status's does)
    said = " ".join(REPO.joinpath("README.md").read_text().split())
    assert "for `replay` and `report session`, the most recently active one with a transcript" in said
    rule = "of the project run in, else of all, passing over one with no API call"
    assert f"by default the most recently active {rule}" in said
    for command in (("replay",), ("report", "session")):
        helped = " ".join(sw(*command, "--help", env={**os.environ, "COLUMNS": "1000"}).stdout.decode().split())
        assert f"(default: the most recently active one with a transcript {rule})" in helped, command
    assert f"(default: the most recently active {rule})" in " ".join(sw("status", "--help").stdout.decode().split())
    top = " ".join(sw("--help", env={**os.environ, "COLUMNS": "1000"}).stdout.decode().split())
    assert "for `replay` and `report session` the most recently active one with a transcript" in top
