"""`replay`'s start: read without argparse in the forms programs run it (`cli.commands.replay_args`),
and imports nothing a replay of a Claude Code transcript with `--json` does not use."""

from __future__ import annotations

import json
import shutil
import sys
from typing import TYPE_CHECKING

import pytest

from session_watcher.cli import build_parser
from session_watcher.cli.commands import replay_args
from tests.oracle import TRANSCRIPTS, run
from tests.test_hot_imports import imports

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--json"],
        ["s.jsonl", "--json"],
        ["--json", "s.jsonl"],
        ["abcdef", "--json", "--json", "--verbose"],
        ["s.jsonl", "--trace", "t.jsonl", "--json"],
        ["--cwd", "/x y", "s.jsonl", "--trace", "t.jsonl"],
        ["--verbose"],
    ],
)
def test_the_plain_forms_read_as_argparse_reads_them(argv: list[str]) -> None:
    plain = replay_args(argv)
    assert plain is not None
    want = {k: v for k, v in vars(build_parser("replay").parse_args(["replay", *argv])).items() if k != "func"}
    assert vars(plain) == want


@pytest.mark.parametrize(
    "argv",
    [
        ["a", "b", "--json"],  # argparse refuses a second SESSION
        ["--js", "s.jsonl"],  # argparse takes the prefix
        ["--json=1"],
        ["--trace"],
        ["--trace", "-"],
        ["--trace", "a", "--trace", "b"],
        ["--cwd", "--json"],
        ["--", "s.jsonl"],
        ["-h"],
        ["--session", "abcdef"],
    ],
)
def test_every_other_form_is_left_to_argparse(argv: list[str]) -> None:
    assert replay_args(argv) is None


# what `replay --json` never needs: the parser and what it loads, the status text's renderer, the
# Codex rollout reader (for a transcript not named as a rollout)
UNUSED = {"argparse", "gettext", "locale", "shutil", "bz2", "lzma", "session_watcher.core.render",
          "session_watcher.agents.codex.reader", "session_watcher.agents.codex.rollout"}


@pytest.mark.slow
def test_replay_json_imports_neither_argparse_nor_the_renderer(tmp_path: Path) -> None:
    """The same document as argparse's reading of the same command (`--js`, its prefix), which does
    import the parser (the check can see it)."""
    t = tmp_path / "s.jsonl"
    shutil.copy(TRANSCRIPTS / "tool_heavy.jsonl", t)
    proc, got = imports([sys.executable, "-m", "session_watcher", "replay", str(t), "--json"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not got & UNUSED, got & UNUSED
    assert {"msgspec", "session_watcher.sessions.replay"} <= got  # a real replay ran
    proc2, got2 = imports([sys.executable, "-m", "session_watcher", "replay", str(t), "--js"])
    assert "argparse" in got2
    assert json.loads(proc.stdout) == json.loads(proc2.stdout)
    assert proc.stdout == proc2.stdout
    text = run([sys.executable, "-m", "session_watcher", "replay", str(t)])  # the text form still renders
    assert text.returncode == 0
    assert b"lamp" in text.stdout


def test_the_schemas_annotations_are_objects_not_strings() -> None:
    """msgspec compiles a string annotation (a `typing.ForwardRef`) for each field when a decoder is
    built: the schema modules keep their annotations as objects (no `from __future__ import
    annotations`), so replay's start builds its decoders without compiling any."""
    import msgspec

    from session_watcher.agents.claude_code import records
    from session_watcher.agents.codex import lines

    structs = [v for m in (records, lines) for v in vars(m).values()
               if isinstance(v, type) and issubclass(v, msgspec.Struct) and v.__module__ == m.__name__]
    assert len(structs) >= 12
    for struct in structs:
        assert struct.__annotations__, struct
        strings = [k for k, v in struct.__annotations__.items() if isinstance(v, str)]
        assert not strings, (struct, strings)


# the console script's `run` with a teardown that speaks: an exit handler the interpreter's own exit
# runs (after `run`'s sys.exit), and os._exit skips
_SPEAKING_EXIT = """import atexit, sys
atexit.register(lambda: sys.stderr.write("teardown ran\\n"))
from session_watcher.cli import run
sys.argv = ["session-watcher", *sys.argv[1:]]
run()
"""


@pytest.mark.slow
def test_a_replay_leaves_without_the_teardown_its_output_whole(tmp_path: Path) -> None:
    """Once its output is flushed, a replay leaves through os._exit as a report does (the teardown
    frees its fold's modules and state one object at a time): no exit handler runs, and what it
    printed and wrote is whole, as the same replay in this process gives it; `config show` still
    leaves the ordinary way (the check can see a teardown)."""
    from session_watcher.sessions.replay import replay

    t = tmp_path / "s.jsonl"
    shutil.copy(TRANSCRIPTS / "tool_heavy.jsonl", t)
    trace = tmp_path / "trace.jsonl"
    proc = run([sys.executable, "-c", _SPEAKING_EXIT, "replay", str(t), "--json", "--trace", str(trace)])
    assert (proc.returncode, proc.stderr) == (0, b""), proc.stderr[-2000:]
    doc, rows = replay(str(t))
    assert rows
    assert json.loads(proc.stdout) == json.loads(json.dumps(doc))
    assert [json.loads(line) for line in trace.read_text().splitlines()] == json.loads(json.dumps(rows))
    other = run([sys.executable, "-c", _SPEAKING_EXIT, "config", "show"])
    assert other.returncode == 0
    assert other.stderr == b"teardown ran\n"
