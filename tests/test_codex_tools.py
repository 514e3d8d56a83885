"""A Codex rollout's tool calls feed health as a Claude Code transcript's tool uses do
(`agents.codex.rollout`): uses and results from real rollout lines, the files a shell command only
prints, the failures an output says; the same by both readings (JSON, msgspec), live and replayed,
and no figure of the model moves (the path map is never fed from them)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_watcher.agents.codex import rollout
from session_watcher.agents.seam import split_lines
from session_watcher.sessions.replay import fold
from tests.codex_lines import FIXTURES

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from session_watcher.core.shapes import UseEvent, UseInfo

ROLLOUTS = sorted(FIXTURES.glob("rollout-*.jsonl"))
GIT_SYNC = FIXTURES / "rollout-019d7739-95cb-79e3-9de4-3cbe15400b87.jsonl"  # 0.118: exec_command, apply_patch
MISE = FIXTURES / "rollout-019f6bcb-eb00-7ea1-99ef-7fe2d29e2bba.jsonl"  # 0.144.5: code-mode cells (`exec`)

# per fixture, measured: (reads, re-reads, tool calls, failed, edits) as the fold counts them
COUNTS = {
    "019d7739": (89, 64, 277, 22, 53), "019dc0d3": (115, 91, 541, 15, 49), "019ddaf2": (20, 6, 100, 6, 17),
    "019e260b": (46, 18, 268, 22, 62), "019e7da4": (33, 14, 179, 6, 23), "019ed893": (24, 7, 441, 15, 0),
    "019f1f6f": (66, 34, 185, 10, 21), "019f5cfd": (57, 33, 391, 0, 27), "019f6bcb": (26, 18, 231, 8, 9),
    "019f8c04": (11, 6, 77, 2, 7),
}


def payload_of(path: Path, call_id: str, kind: str) -> dict[str, Any]:
    """The payload of the rollout's line of type `kind` for `call_id` (a real line, as written)."""
    for raw in path.read_bytes().splitlines():
        if call_id.encode() in raw:
            p = json.loads(raw)["payload"]
            if p.get("type") == kind:
                return dict(p)
    raise AssertionError(call_id)


def health_counts(state: Mapping[str, Any]) -> tuple[int, int, int, int, int]:
    h = state["health"]
    tail = h["tail"]
    return (h["reads"], h["rereads"], h["head"][0] + len(tail), h["head"][1] + sum(map(tail.count, "eE")),
            h["head"][2] + sum(map(tail.count, "pE")))


class TestRealLines:
    """Lines copied by their call ids from real rollouts become the events a transcript gives."""

    def test_a_sed_read_through_exec_command_is_a_read_of_its_absolute_path(self) -> None:
        p = payload_of(GIT_SYNC, "call_", "function_call")  # the first: git status, no read
        assert rollout._use(p, None) == ("use", None, p["call_id"], "exec_command", None)
        read = next(json.loads(raw)["payload"] for raw in GIT_SYNC.read_bytes().splitlines()
                    if b"sed -n '1,260p' internal/syncer/entire_local_smoke_test.go" in raw
                    and b'"function_call"' in raw)
        ev = rollout._use(read, "2026-04-10T11:50:00.000Z")
        assert ev is not None
        assert ev[0] == "use"
        assert ev[3] == "ShellRead"
        assert ev[4] == {"path": "/Users/soph/Work/entire/devenv/git-sync/internal/syncer/entire_local_smoke_test.go"}

    def test_an_apply_patch_is_an_edit_and_its_metadata_says_it_worked(self) -> None:
        use = payload_of(GIT_SYNC, "call_5NeVRUba7MNEpLRkzPyjJ1yR", "custom_tool_call")
        out = payload_of(GIT_SYNC, "call_5NeVRUba7MNEpLRkzPyjJ1yR", "custom_tool_call_output")
        assert rollout._use(use, None) == ("use", None, "call_5NeVRUba7MNEpLRkzPyjJ1yR", "Edit", None)
        assert rollout._result(out, None) == ("result", None, "call_5NeVRUba7MNEpLRkzPyjJ1yR", False, None)

    def test_an_exit_code_of_1_in_the_header_is_a_failure(self) -> None:
        out = payload_of(GIT_SYNC, "call_RVGghU6wr7prnXnHIbJeUvIQ", "function_call_output")
        assert "Process exited with code 1" in out["output"]
        assert rollout._result(out, None) == ("result", None, "call_RVGghU6wr7prnXnHIbJeUvIQ", True, None)

    @pytest.mark.parametrize(("call_id", "failed"), [
        ("call_CPnBGFLG9oePXk7zPhpw5C3e", True),  # a cell that printed JSON.stringify(r): "exit_code":1
        ("call_2zV4zMFXqlBNEGHSw45XKBUX", True),  # ... 101
        ("call_3lwlChSbBVK7STFDgXvHqxQh", True),  # "Script failed": a patch refused inside the cell
    ])
    def test_a_code_mode_cells_output(self, call_id: str, failed: bool) -> None:
        out = payload_of(MISE, call_id, "custom_tool_call_output")
        assert rollout._result(out, None) == ("result", None, call_id, failed, None)

    def test_a_code_mode_cell_that_runs_one_read(self) -> None:
        cell = next(json.loads(raw)["payload"] for raw in MISE.read_bytes().splitlines()
                    if b'"custom_tool_call"' in raw and b"tools.exec_command" in raw and b"sed -n" in raw)
        ev = rollout._use(cell, None)
        assert ev is not None
        assert ev[0] == "use"
        assert ev[3] == "ShellRead"
        assert ev[4] is not None
        assert ev[4]["path"].startswith("/Users/jdx/")


@pytest.mark.parametrize(("cmd", "paths"), [
    ("cat a.py", ["/w/a.py"]),
    ("sed -n '1,200p' src/x.rs", ["/w/src/x.rs"]),
    ("nl -ba src/x.rs | sed -n '17,165p'", ["/w/src/x.rs"]),
    ("head -n 40 /etc/hosts", ["/etc/hosts"]),
    ("tail -50 log.txt", ["/w/log.txt"]),
    ("sed -n '1,80p' a.json && printf '\\n--\\n' && sed -n '1,80p' b.json", ["/w/a.json", "/w/b.json"]),
    ("sed -n '100,215p' src/env.rs\nrg -n foo src\nsed -n '1,40p' src/env.rs", ["/w/src/env.rs", "/w/src/env.rs"]),
    ("cat ~/.config/x.json", ["~/.config/x.json"]),
    ("cat a.py > b.py", []),  # a redirection: it writes
    ("cat src/*.py", []),  # a glob: how many files is the shell's
    ("cat a.py b.py", []),  # two files in one command: not one file printed
    ("sed -i 's/a/b/' a.py", []),
    ("sed -n '1,20p' a.py | grep x", []),  # a search, not a print of the file
    ("cat $HOME/a.py", []),
    ("rg -n foo a.py", []),
    ("git show HEAD:a.py", []),
    ("sed -n '1,20p' a.py &", []),
    ("cat 'a file.py'", ["/w/a file.py"]),
    ("cat ../x.py", ["/w/../x.py"]),  # `..`: the shell's canonical path resolves it
    ("cd src && cat main.rs", ["/w/src/main.rs"]),  # the folder a `cd` went to
    ("cd /etc; cat hosts && cd .. && cat /w/a.py && cat b.py", ["/etc/hosts", "/w/a.py", "/etc/../b.py"]),
    ("cd - && cat a.py && cat /abs.py", ["/abs.py"]),  # a `cd` this cannot follow: no relative read after it
    ("cd && cat a.py", []),
    ("cd x | cat a.py", []),  # a `cd` in a pipe moves only its own stage (and this is no plain read)
    ("cat -n a.py", []),  # an option: not the file alone
    ("sed -n '1,20p;40,60p' a.py", []),  # two ranges: more than `a,bp`
])
def test_the_read_rule(cmd: str, paths: list[str]) -> None:
    """What a shell command reads: each of its commands that does nothing but print one file."""
    assert rollout._read_paths(cmd, "/w") == paths


@pytest.mark.parametrize("output", [
    "Command: /bin/zsh -lc 'x'\nChunk ID: 1\nWall time: 0.0 seconds\nProcess exited with code 0\nOutput:\n"
    "Process exited with code 2\n",  # the command's own output is not its header
    '{"output":"Exit code: 1","metadata":{"exit_code":0,"duration_seconds":0.0}}',
    "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nSuccess.",
    [{"type": "input_text", "text": "Script completed\nWall time 0.1 seconds\nOutput:\n"},
     {"type": "input_text", "text": "exit_code: 1 (printed by the command)"}],
])
def test_outputs_that_did_not_fail(output: object) -> None:
    assert rollout._failed(output) is False


@pytest.mark.parametrize("output", [
    "Command: /bin/zsh -lc 'x'\nChunk ID: 1\nWall time: 0.0 seconds\nProcess exited with code 127\nOutput:\n",
    '{"output":"x","metadata":{"exit_code":1,"duration_seconds":0.0}}',
    "Exit code: 1\nWall time: 0.1 seconds\nOutput:\nerror",
    "apply_patch verification failed: Failed to find expected lines in /a.rs",
    "write_stdin failed: stdin is closed for this session",
    "aborted by user after 3.2s",
    [{"type": "input_text", "text": "Script failed\nWall time 0.0 seconds\nOutput:\n"}],
])
def test_outputs_that_failed(output: object) -> None:
    assert rollout._failed(output) is True


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[8:16])
def test_every_fixtures_tool_counts_and_no_model_figure_from_them(path: Path) -> None:
    """The fold of each fixture: its reads, re-reads, tool calls, failures and edits as measured
    (docs/model.md's table); the path map stays empty, so B is the floor's as before."""
    state = fold(str(path))[0]
    assert health_counts(state) == COUNTS[path.name[8:16]]
    assert state["paths"] == {}
    assert (state["engine"]["bFull"], state["engine"]["bIncl"], state["engine"]["ledger"]) == (0, 0, [])


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[8:16])
def test_both_readings_give_the_same_tool_events(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """JSON and msgspec (a whole rollout's read) decode every tool line alike: a use per call line,
    a result per output line."""
    rows = split_lines(path.read_bytes())[0]
    got = []
    for bound in (False, True):
        monkeypatch.setattr(rollout, "_SCHEMA", [])
        if bound:
            rollout.bind_schema()
        got.append(rollout.parse_lines(rows, rollout.new_decoder()))
    assert got[0] == got[1]
    kinds = [json.loads(r)["payload"].get("type") for r in rows if b'"response_item"' in r]
    events = got[1][0]
    assert sum(ev[0] == "use" for ev in events) == sum(k in rollout.USES for k in kinds)
    assert sum(ev[0] == "result" for ev in events) == sum(k in rollout.RESULTS for k in kinds)


def test_live_folding_in_pieces_gives_replays_health(tmp_path: Path) -> None:
    """Folded as the hooks fold a growing rollout (a tool call's use and its result often in two
    runs), health and the files read end where one replay ends."""
    from session_watcher.base import config
    from session_watcher.core import engine
    from session_watcher.state import session

    sid = "019f6bcb-eb00-7ea1-99ef-7fe2d29e2bba"
    src = MISE.read_bytes().splitlines(keepends=True)
    path = tmp_path / MISE.name
    path.write_bytes(b"")
    cfg = config.merge()
    state = engine.new_state(sid)
    for at in range(0, len(src), 7):
        with path.open("ab") as fh:
            fh.write(b"".join(src[at:at + 7]))
        state, _alerts, done = session.sync(state, str(path), cfg, float("inf"))
        assert done
    whole = fold(str(path))[0]
    assert health_counts(state) == COUNTS["019f6bcb"]
    assert state["health"] == whole["health"]
    assert state["readPaths"] == whole["readPaths"]
    assert state["engine"] == whole["engine"]


@pytest.mark.slow  # starts processes: the hook, as Codex runs it
def test_the_hooks_fold_of_a_growing_rollout_is_replays_health(tmp_path: Path) -> None:
    """PostToolUse / PostModelRequest as Codex runs them (`hook EVENT codex`, through the launcher)
    after each piece Codex appends: the saved state's health and files read are the replay's."""
    from tests.oracle import hook
    from tests.statefile import load_state

    small = FIXTURES / "rollout-019f8c04-f40a-75a1-80a3-75c564780b42.jsonl"
    sid = "019f8c04-f40a-75a1-80a3-75c564780b42"
    src = small.read_bytes().splitlines(keepends=True)
    path = tmp_path / f"rollout-2026-07-20T10-00-00-{sid}.jsonl"
    path.write_bytes(b"")
    doc = {"session_id": sid, "transcript_path": str(path), "cwd": str(tmp_path), "model": "gpt-5.6-sol"}
    for n, at in enumerate(range(0, len(src), 150)):
        with path.open("ab") as fh:
            fh.write(b"".join(src[at:at + 150]))
        event = ("PostToolUse", "PostModelRequest")[n % 2]
        assert hook(event, {**doc, "hook_event_name": event}, args=("codex",)).returncode == 0
    for _ in range(20):  # a run stops at its budget: the next goes on from its cursor
        state = load_state(sid)
        if state["cursor"]["offset"] == path.stat().st_size:
            break
        assert hook("Stop", {**doc, "hook_event_name": "Stop"}, args=("codex",)).returncode == 0
    whole = fold(str(path))[0]
    assert health_counts(state) == COUNTS["019f8c04"]
    assert state["health"] == whole["health"]
    assert state["readPaths"] == whole["readPaths"]


def as_read_before(lines: list[bytes]) -> list[bytes]:
    """The rollout as the decoder before the tool calls' reading saw it: each tool line blanked (the
    same length, no marker: passed over unparsed), every other line as it is."""
    def blank(line: bytes) -> bytes:
        p = json.loads(line).get("payload") if line.strip() else None
        tool = isinstance(p, dict) and p.get("type") in (*rollout.USES, *rollout.RESULTS)
        return b" " * (len(line) - 1) + b"\n" if tool else line
    return [blank(line) for line in lines]


def cut_at(lines: list[bytes], n: int) -> int:
    """The first cut at or after line `n` whose last line is no tool line (the cursor keeps a CRC of
    the bytes before its offset: those stay as they were)."""
    while as_read_before(lines[n - 1:n]) != lines[n - 1:n] or len(lines[n - 1]) < 4096:
        n += 1
    return n


def test_a_state_folded_before_tool_calls_were_read_gets_them_once_and_keeps_the_rest(tmp_path: Path) -> None:
    """A live state whose cursor holds a decoder that passed tool calls over (no `tools` key) counted
    none of them: its next read folds those of the lines read before, once, and nothing else of the
    state moves (its alerts, the guard's marks and prepared handoff, the lamp); health then ends
    where a replay ends, with or without new lines in that read."""
    import copy

    from session_watcher.base import config
    from session_watcher.core import engine
    from session_watcher.state import session

    sid = "019f6bcb-eb00-7ea1-99ef-7fe2d29e2bba"
    src = MISE.read_bytes().splitlines(keepends=True)
    path = tmp_path / MISE.name
    cut = cut_at(src, 300)
    path.write_bytes(b"".join(as_read_before(src[:cut])))
    cfg = config.merge()
    state, _alerts, _done = session.sync(engine.new_state(sid), str(path), cfg, float("inf"))
    assert state["cursor"] is not None
    del state["cursor"]["codex"]["tools"]  # as the decoder before left it
    assert (state["health"]["reads"], state["readPaths"], state["tools"]["done"]) == (0, {}, {})
    assert state["alerts"]
    state["guard"] = {"shown": [1.0, 9], "blocked": [1.0, 9, 2.0], "carry": {"K": 1.0, "lastTs": 1.0, "segment": 0}}
    state["notified"] = {"at": 2.0, "segment": 0, "episode": 3, "shown": 1}
    state["alerts"][0]["shownBy"] = "prompt"
    before = copy.deepcopy(state)
    with path.open("r+b") as fh:  # the same bytes Codex wrote: the tool lines as they are
        fh.write(b"".join(src[:cut]))
    state, alerts, done = session.sync(state, str(path), cfg, float("inf"))  # no new line
    assert (done, alerts) == (True, [])
    assert state["cursor"] is not None
    assert state["cursor"]["codex"]["tools"] is True
    assert state["health"] == fold(str(path))[0]["health"]
    assert state["health"]["reads"] > 0
    for key in ("alerts", "guard", "notified", "engine", "meter", "paths", "context"):
        assert state[key] == before[key], key
    with path.open("ab") as fh:
        fh.write(b"".join(src[cut:]))
    state, _alerts, done = session.sync(state, str(path), cfg, float("inf"))
    assert done
    assert health_counts(state) == COUNTS["019f6bcb"]
    assert state["health"] == fold(str(path))[0]["health"]
    state, _alerts, _done = session.sync(state, str(path), cfg, float("inf"))  # once: now current
    assert health_counts(state) == COUNTS["019f6bcb"]


@pytest.mark.slow  # starts processes: the hooks, as Codex runs them
def test_an_upgrade_mid_session_neither_repeats_nor_loses_what_the_user_saw(tmp_path: Path) -> None:
    """Hooks of the decoder before folded a rollout to past its gate, and the prompt after it was held
    (cold cache: `decision: block`, a handoff prepared); after the upgrade the user sends it again
    within the minute, as the hold said: it goes ahead (not held a second time), the gate is not
    fired again, and health has the tool calls read before."""
    from tests.oracle import hook
    from tests.statefile import load_state, state_file

    sid = "019f8c04-f40a-75a1-80a3-75c564780b42"
    src = (FIXTURES / f"rollout-{sid}.jsonl").read_bytes().splitlines(keepends=True)
    src = src[:cut_at(src, 160)]
    path = tmp_path / f"rollout-2026-07-20T10-00-00-{sid}.jsonl"
    doc = {"session_id": sid, "transcript_path": str(path), "cwd": str(tmp_path), "model": "gpt-5.6-sol"}
    path.write_bytes(b"")
    old = as_read_before(src)
    for at in range(0, len(old), 40):
        with path.open("ab") as fh:
            fh.write(b"".join(old[at:at + 40]))
        assert hook("PostModelRequest", {**doc, "hook_event_name": "PostModelRequest"}, args=("codex",)).returncode == 0
    for _ in range(20):
        if load_state(sid)["cursor"]["offset"] == path.stat().st_size:
            break
        assert hook("Stop", {**doc, "hook_event_name": "Stop"}, args=("codex",)).returncode == 0
    ask = {**doc, "hook_event_name": "UserPromptSubmit", "prompt": "go on"}
    held = hook("UserPromptSubmit", ask, args=("codex",))
    assert json.loads(held.stdout)["decision"] == "block"
    saved = json.loads(state_file(sid).read_bytes())
    assert "gate" in [a["kind"] for a in saved["alerts"]]
    assert saved["guard"]["carry"]
    del saved["cursor"]["codex"]["tools"]  # as the decoder before left it
    state_file(sid).write_text(json.dumps(saved))
    with path.open("r+b") as fh:
        fh.write(b"".join(src))
    again = hook("UserPromptSubmit", ask, args=("codex",))
    assert again.returncode == 0
    assert b"decision" not in again.stdout  # sent again within the minute: it goes ahead
    state = load_state(sid)
    assert state["alerts"] == saved["alerts"]
    assert state["notified"] == saved["notified"]  # the gate neither shown nor held back again
    assert state["guard"]["blocked"] == saved["guard"]["blocked"]
    assert state["health"] == fold(str(path))[0]["health"]
    assert state["health"]["reads"] > 0


def test_an_exit_code_too_long_for_int_is_read_as_a_failure_not_an_exception() -> None:
    assert rollout._failed('{"output":"","metadata":{"exit_code":' + "1" * 5000 + "}}") is True
    assert rollout._failed('{"output":"","metadata":{"exit_code":' + "0" * 5000 + "}}") is False


@given(st.text(alphabet=st.sampled_from(list("cat sed-n'1,2p\" |&;\n\\$~/ab*.hlx")), max_size=60))
def test_the_read_rule_takes_any_text(cmd: str) -> None:
    """Whatever a command line holds, its reads are paths (never an exception), each made absolute
    against the call's folder unless it names the home."""
    got = rollout._read_paths(cmd, "/w")
    assert all(p.startswith(("/", "~")) for p in got)


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                    max_leaves=12),
       st.sampled_from([*rollout.USES, *rollout.RESULTS]),
       st.sampled_from(["exec", "exec_command", "shell", "apply_patch", "x"]))
def test_any_tool_line_decodes_without_an_exception(value: Any, kind: str, name: str) -> None:
    """A tool line's fields of any JSON shape: at most one event, never an exception."""
    for key in ("arguments", "input", "output", "action", "call_id"):
        p = {"type": kind, "call_id": "c1", "name": name, key: value}
        line = json.dumps({"type": "response_item", "timestamp": None, "payload": p}).encode()
        ev = rollout.line_reader(rollout.new_decoder())(line, 0)
        assert ev is None or (ev is not False and ev[0] in ("use", "result"))


@pytest.mark.parametrize("cmd", ["cat '/tmp/a\x00b'", "cat /tmp/\ud800x", "cat /" + "a/" * 3000 + "x"],
                         ids=["nul", "lone-surrogate", "long"])
def test_a_path_no_file_can_be_named_by_is_no_read(tmp_path: Path, cmd: str) -> None:
    """A command that prints a path no file has (a NUL byte, a lone surrogate, past PATH_MAX) reads
    nothing: the fold resolves every path read (`os.path.realpath` raises on the first two, and a
    session whose fold raises at one line never moves past it), as a Read's is checked
    (`core.caps.clean_path`). The call itself still counts."""
    from session_watcher.base import config
    from session_watcher.core import engine
    from session_watcher.state import session

    assert rollout._read_paths(cmd, "/w") == []
    head = (FIXTURES / "rollout-019f8c04-f40a-75a1-80a3-75c564780b42.jsonl").read_bytes().splitlines(keepends=True)[:30]
    use = {"type": "function_call", "name": "exec_command", "call_id": "call_x",
           "arguments": json.dumps({"cmd": cmd, "workdir": "/w"})}
    out = {"type": "function_call_output", "call_id": "call_x", "output": "Process exited with code 0\nOutput:\n"}
    path = tmp_path / "rollout-2026-07-20T10-00-00-019f8c04-f40a-75a1-80a3-75c564780b42.jsonl"
    path.write_bytes(b"".join(head) + b"".join(
        json.dumps({"timestamp": "2026-07-20T10:00:00.000Z", "type": "response_item", "payload": p}).encode() + b"\n"
        for p in (use, out)))
    state, _alerts, done = session.sync(engine.new_state("019f8c04-f40a-75a1-80a3-75c564780b42"), str(path),
                                        config.merge(), float("inf"))
    assert done
    assert state["cursor"] is not None
    assert state["cursor"]["offset"] == path.stat().st_size
    assert (state["health"]["reads"], "call_x" in state["tools"]["done"]) == (0, True)


def test_a_command_line_too_long_for_a_plain_read_is_none() -> None:
    """Past MAX_COMMAND characters a command line or a code-mode cell is no read (the longest real
    read is a few hundred): the rule's scan goes a character at a time and stops before it."""
    chained = "cat a.py && " * 2000 + "cat b.py"
    assert len(chained) > rollout.MAX_COMMAND
    assert rollout._read_paths(chained, "/w") == []
    assert rollout._read_paths("cat a.py && cat b.py", "/w") == ["/w/a.py", "/w/b.py"]
    cell = 'tools.exec_command({cmd: "cat ' + "a" * rollout.MAX_COMMAND + '"})'
    assert rollout._cell_command(cell) == (None, None)
    assert rollout._cell_command('tools.exec_command({cmd: "cat a.py"})') == ("cat a.py", None)
    assert rollout._cell_command("tools.apply_patch(" + "x" * rollout.MAX_COMMAND + ")") == ("", None)


def use(tool_id: str, name: str, info: UseInfo) -> UseEvent:
    """A tool use as a transcript's parser gives it, with no time."""
    return ("use", None, tool_id, name, info)


def test_a_shell_reads_paths_are_resolved_but_never_classified(tmp_path: Path) -> None:
    """A shell read's files are canonical paths for health's re-reads, but the path map never takes
    them: no discard reason is asked (a `git check-ignore` per hook run that reads a new file, and
    the state's reasons growing, for nothing), while a Read's path still gets its reason."""
    from session_watcher.base import config
    from session_watcher.core import engine
    from session_watcher.state import session

    state = engine.new_state("s")
    state["context"].update({"cwd": str(tmp_path)})
    params = config.model_params(config.merge())
    session.fold_events(state, [use("c1", "ShellRead", {"path": "a.py", "more": ["b.py"]}),
                                use("c2", "ShellRead", {"path": str(tmp_path / "a.py")})], params)
    session.fold_events(state, [("result", None, "c1", False, None), ("result", None, "c2", False, None),
                                use("c3", "Read", {"path": "c.py"}), ("result", None, "c3", False, None)],
                        params)
    assert (state["health"]["reads"], state["health"]["rereads"]) == (4, 1)
    assert set(state["readPaths"]) == {str(tmp_path / n) for n in ("a.py", "b.py", "c.py")}
    assert set(state["reasons"]) == {str(tmp_path / "c.py")}
