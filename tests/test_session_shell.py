"""The session shell (state/shell.py) is one: the hook, the status line and the CLI, each run as a
real process on real files, treat a path that cannot name a file, a damaged path map and the
project root the same way."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests import fuzz_synth as fs
from tests.statefile import load_state, state_file

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

CALLERS = ("hook", "statusline", "cli")
REBUILT = "not a path-map shard; rebuilding the session from the transcript"


def _run(root: Path, argv: list[str], stdin: bytes = b"", cwd: Path | str | None = None,
         **env: str) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(argv, input=stdin, capture_output=True, env=fs.env_for(root, **env), cwd=cwd,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr
    return proc


def hook(root: Path, p: dict[str, Any], event: str = "PostToolUse", **env: str) -> bytes:
    proc = _run(root, fs.hook_argv(event), json.dumps(p).encode(), **env)
    assert proc.stderr == b""
    return proc.stdout


def statusline(root: Path, p: dict[str, Any], **env: str) -> str:
    proc = _run(root, fs.statusline_argv(), json.dumps(p).encode(), NO_COLOR="1", COLUMNS="200", **env)
    assert proc.stderr == b""
    line = proc.stdout.decode()
    assert line.count("\n") == 1
    return line[:-1]


def log_text(root: Path) -> str:
    log = fs.sw_home(root) / "log" / "session-watcher.log"
    return log.read_text() if log.exists() else ""


def session(root: Path, sid: str, calls: int) -> tuple[fs.SynthSession, Path]:
    s = fs.SynthSession(sid, fs.make_project(root), seed=7)
    tr = root / f"{sid}.jsonl"
    with open(tr, "ab") as fh:
        for _ in range(calls):
            fh.write(s.lines_of(s.next_call(reads=2)))
    return s, tr


def more(s: fs.SynthSession, tr: Path, calls: int) -> None:
    with open(tr, "ab") as fh:
        for _ in range(calls):
            fh.write(s.lines_of(s.next_call(reads=2)))


def folded(root: Path, s: fs.SynthSession) -> dict[str, Any]:
    """What the state on disk says about the calls and the reads (the independent reader)."""
    state = load_state(s.session_id, fs.sw_home(root))
    return {"meter": state["meter"]["main"], "reads": fs.reads_of(state)}


# --------------------------------------------------------------- a path that cannot name a file

@pytest.mark.parametrize("bad", ["\x00", "\ud800"], ids=["nul", "lone-surrogate"])
def test_unusable_transcript_path_is_no_path_for_the_hook_and_the_status_line(tmp_path: Path, bad: str) -> None:
    """JSON can carry a NUL byte or a lone surrogate; a file name cannot. Both callers take such a
    transcript_path as none given: no traceback, the state as it was, the line drawn from it."""
    root = tmp_path
    fs.write_config(root)
    s, tr = session(root, "nulpath", calls=4)
    good = s.hook_payload(str(tr))
    hook(root, good)
    want = folded(root, s)
    assert want["meter"] == s.token_usage()
    shown = statusline(root, {"session_id": s.session_id})  # no transcript named: the state as saved

    more(s, tr, 2)  # new lines a usable path would have folded
    broken = {**good, "transcript_path": str(tr) + bad}
    hook(root, broken)
    assert folded(root, s) == want
    line = statusline(root, {"session_id": s.session_id, "transcript_path": str(tr) + bad})
    assert line == shown
    assert "error" not in line
    assert folded(root, s) == want
    assert load_state(s.session_id, fs.sw_home(root))["cursor"]["path"] == str(tr)
    assert "Traceback" not in log_text(root)
    # the same session with the path usable again: both callers fold what is new
    hook(root, good)
    assert folded(root, s)["meter"] == s.token_usage()


# --------------------------------------------------------------- a damaged path map

def _shard_files(root: Path, sid: str) -> list[Path]:
    return sorted((fs.sw_home(root) / "state" / "sessions" / f"{sid}.paths").glob("*.json"))


@pytest.mark.parametrize("caller", CALLERS)
def test_damaged_shard_starts_the_session_again_from_its_transcript(tmp_path: Path, caller: str) -> None:
    """Every path-map shard overwritten with garbage, then new lines that read the same files: each
    caller says so, starts the session again from its transcript (the durable log), and saves it
    exact, the damaged files swept."""
    root = tmp_path
    fs.write_config(root)
    s, tr = session(root, "shards", calls=6)
    hook(root, s.hook_payload(str(tr)))
    damaged = _shard_files(root, s.session_id)
    assert damaged
    for f in damaged:
        f.write_bytes(b"{garbage")
    more(s, tr, 4)  # 8 more reads among the same 6 files: some shard is loaded
    said = ""
    if caller == "hook":
        hook(root, s.hook_payload(str(tr)))
        said = log_text(root)
    elif caller == "statusline":
        p = {"session_id": s.session_id, "transcript_path": str(tr), "cwd": s.project}
        for _ in range(50):  # its fold budget is short: a loaded machine may take more than one run
            statusline(root, p)
            if load_state(s.session_id, fs.sw_home(root))["cursor"]["offset"] == tr.stat().st_size:
                break
        said = log_text(root)
    else:
        proc = _run(root, fs.cli_argv("status", "--session", s.session_id, "--json"))
        said = proc.stderr.decode()
        assert json.loads(proc.stdout)["tokenUsage"] == s.token_usage()
    assert REBUILT in said
    assert folded(root, s) == {"meter": s.token_usage(), "reads": dict(s.reads_per_path())}
    left = _shard_files(root, s.session_id)
    assert all(f.read_bytes() != b"{garbage" for f in left)
    named = load_state(s.session_id, fs.sw_home(root))["shards"]
    assert {f.name for f in left} == {f"{int(n):02d}-{rev}.json" for n, rev in named.items()}
    # and the next run of any caller finds a sound map
    out = _run(root, fs.cli_argv("status", "--session", s.session_id, "--json"))
    assert out.stderr == b""


# --------------------------------------------------------------- the project root

def _project_of(root: Path, caller: str, cwd: Path, stated: Path | None, **env: str) -> str:
    """The project root one caller settles on, in a state home of its own."""
    home = root / caller
    sessions = fs.sw_home(home) / "state" / "sessions"
    sessions.mkdir(parents=True, mode=0o700)
    fs.write_config(home)
    sid = "proj-" + caller
    if caller == "cli":
        if stated is not None:
            out = _run(home, fs.cli_argv("config", "show", "--json", "--project", str(stated)), b"", cwd, **env)
        else:
            out = _run(home, fs.cli_argv("config", "show", "--json"), b"", cwd, **env)
        project_file = Path(json.loads(out.stdout)["files"][1])
        return str(project_file.parent.parent)
    p: dict[str, Any] = {"session_id": sid, "cwd": str(cwd), "transcript_path": str(root / "none.jsonl")}
    if caller == "hook":
        hook(home, {**p, "hook_event_name": "PostToolUse"}, **env)
    else:
        if stated is not None:
            p["workspace"] = {"project_dir": str(stated), "current_dir": str(cwd)}
        statusline(home, p, **env)
    assert state_file(sid, fs.sw_home(home)).exists()
    project: str = load_state(sid, fs.sw_home(home))["context"]["project"]
    return project


def test_project_root_is_one_rule_for_the_three(tmp_path: Path) -> None:
    """Told outright (`--project`, `workspace.project_dir`) > CLAUDE_PROJECT_DIR > the working folder,
    symlinks resolved: the three callers given the same situation settle on the same folder."""
    proj = Path(fs.make_project(tmp_path))
    sub = proj / "src"
    link = tmp_path / "link"
    link.symlink_to(proj)
    # the client's CLAUDE_PROJECT_DIR (a link to the project), run from a subfolder
    got = {c: _project_of(tmp_path / "env", c, sub, None, CLAUDE_PROJECT_DIR=str(link)) for c in CALLERS}
    assert got == dict.fromkeys(CALLERS, str(proj))
    # nothing said but the working folder (reached through the link)
    got = {c: _project_of(tmp_path / "cwd", c, link / "src", None) for c in CALLERS}
    assert got == dict.fromkeys(CALLERS, str(sub))
    # told outright, over CLAUDE_PROJECT_DIR (the hook is never told: its payload has no workspace)
    got = {c: _project_of(tmp_path / "stated", c, sub, link, CLAUDE_PROJECT_DIR=str(sub)) for c in CALLERS[1:]}
    assert got == dict.fromkeys(CALLERS[1:], str(proj))


def test_unusable_cwd_falls_through_to_the_next_rule(tmp_path: Path) -> None:
    """A cwd with a NUL byte names no folder: the project comes from CLAUDE_PROJECT_DIR, for both
    payload callers, and the session's cwd stays unknown."""
    proj = Path(fs.make_project(tmp_path))
    for caller in CALLERS[:2]:
        home = tmp_path / caller
        (fs.sw_home(home) / "state" / "sessions").mkdir(parents=True, mode=0o700)
        fs.write_config(home)
        p = {"session_id": "nulcwd", "cwd": str(proj) + "\x00/x", "transcript_path": str(tmp_path / "none.jsonl")}
        if caller == "hook":
            hook(home, p, CLAUDE_PROJECT_DIR=str(proj))
        else:
            statusline(home, p, CLAUDE_PROJECT_DIR=str(proj))
        ctx = load_state("nulcwd", fs.sw_home(home))["context"]
        assert (ctx["project"], ctx["cwd"]) == (str(proj), None), caller
        assert "Traceback" not in log_text(home)
