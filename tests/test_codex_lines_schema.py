"""Codex rollout lines through msgspec (`agents.codex.lines`, bound by `rollout.bind_schema`) give
the decoder what the JSON reading gives: the same events, bad lines and decoder state, line for
line, on the fixtures and on lines where the two readings could part."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.agents.codex import lines, reader, rollout
from session_watcher.agents.seam import split_lines
from tests.codex_lines import FIXTURES, line, meta, turn, usage

if TYPE_CHECKING:
    from collections.abc import Callable

SHARED = Path(__file__).resolve().parent.parent.parent.parent / "shared" / "fixtures" / "codex"
ROLLOUTS = sorted(FIXTURES.glob("rollout-*.jsonl")) + sorted(SHARED.glob("rollout-*.jsonl"))


def both(monkeypatch: pytest.MonkeyPatch, rows: list[bytes]) -> tuple[Any, Any]:
    """(JSON reading, msgspec reading) of `rows` as one rollout: (events, bad lines, decoder state)."""
    out = []
    for bound in (False, True):
        monkeypatch.setattr(rollout, "_SCHEMA", [])
        if bound:
            rollout.bind_schema()
        d = rollout.new_decoder()
        events, bad = rollout.parse_lines(rows, d)
        out.append((events, bad, d))
    return out[0], out[1]


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[-16:])
def test_every_fixture_rollout_reads_alike(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    rows = split_lines(path.read_bytes())[0]
    taken: list[bytes] = []
    record = lines.record

    def counting(text: bytes, digits: int) -> tuple[object, object, Any] | None:
        got = record(text, digits)
        if got is not None:
            taken.append(text)
        return got

    snapshots: list[bytes] = []
    read_counts = lines.counts

    def counted(text: bytes, digits: int) -> Any:
        got = read_counts(text, digits)
        if got is not None:
            snapshots.append(text)
        return got

    monkeypatch.setattr(lines, "record", counting)
    monkeypatch.setattr(lines, "counts", counted)
    plain, fast = both(monkeypatch, rows)
    assert fast == plain
    assert plain[0]  # calls, every fixture has some
    assert taken  # and the marked lines went through msgspec
    # every `token_count` event read straight into its counts, nothing else
    assert len(snapshots) == sum(1 for r in rows if _is_count_line(r))


def _is_count_line(line: bytes) -> bool:
    """An `event_msg` `token_count` line whose `info` is an object or null and whose usages are
    objects or absent, as the JSON way reads it: the lines `lines.counts` takes."""
    try:
        rec = json.loads(line)
    except ValueError:
        return False
    p = rec.get("payload") if isinstance(rec, dict) else None
    if rec.get("type") != "event_msg" or not isinstance(p, dict) or p.get("type") != "token_count":
        return False
    info = p.get("info")
    return info is None or (isinstance(info, dict) and all(
        isinstance(info.get(k), dict | None) for k in ("total_token_usage", "last_token_usage")))


def _calls() -> list[str]:
    total = usage(1000, 200, 50)
    info = {"total_token_usage": total, "last_token_usage": total}
    return [meta(0), turn(0.1, "gpt-5.5"), line(0.2, "event_msg", {"type": "token_count", "info": info})]


_INFO = b'{"total_token_usage":{"input_tokens":20000},"last_token_usage":{"input_tokens":500,"output_tokens":9}}'


def _tc(info: bytes) -> bytes:
    """A `token_count` line whose `info` is `info` as written."""
    return (b'{"timestamp":"2026-11-20T10:00:04.000Z","type":"event_msg","payload":{"type":"token_count","info":'
            + info + b"}}")


TRICKY = [
    # not UTF-8 in a key the decoder never reads: the JSON reading refuses the line
    b'{"timestamp":"2026-11-20T10:00:01.000Z","type":"session_meta","payload":{"id":"x","instructions":"\xff"}}',
    # a run of digits past int()'s limit: refused by the JSON reading
    b'{"type":"event_msg","payload":{"type":"token_count","n":' + b"7" * 5000 + b"}}",
    b'{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":NaN}}}}',
    b'{"type":"turn_context","payload":{"model":"\\ud800x"}}',  # a lone surrogate: the JSON reading keeps it
    b'{"type":"turn_context","payload":["model","gpt"]}',  # a payload that is no object
    b'{"type":"turn_context","payload":null}',
    b'{"type":"turn_context","payload":"text"}',
    b'["turn_context"]',
    b'{"type":"turn_context","payload":{"model":"a"},"payload":{"model":"b"}}',  # the last of two keys
    b'{"type":"turn_context","payload":{"model":"a","model":"c"}}',
    b' {"type":"turn_context","payload":{"model":"spaced"}} ',
    b'{"type":"turn_context","payload":{"model":"x"}} trailing',
    b'{"type":"turn_context","payload":{"model":"x"}',
    b'{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":'
    + b"1" * 40 + b'},"last_token_usage":{"input_tokens":12345678901234567890123,"output_tokens":2.5}}}}',
    b'{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":[1,2],'
    b'"last_token_usage":{"input_tokens":9}}}}',
    b'{"type":"event_msg","payload":{"type":"thread_settings_applied","thread_settings":{"service_tier":"fast"}}}',
    b'{"type":"token_usage_record","payload":{"response_id":"r1","usage":{"input_tokens":5,"output_tokens":1},'
    b'"thread_token_usage":{"input_tokens":5e0}}}',
    b'{"type":"session_meta","payload":{"id":' + json.dumps("i" * 600).encode() + b',"source":{"subagent":{}}}}',
    b'{"type":"compacted","payload":{"message":"' + b"m" * 2000 + b'"},"timestamp":17}',
    b'{"timestamp":"2026-11-20T10:00:02.5Z","type":"compacted","payload":{}}',
    b'{"type":"response_item","payload":{"type":"message","role":"user","content":[{"text":"\\u00e9 compacted"}]}}',
    b'{"type": "turn_context", "payload": {"model": "gpt-5.5\\u0000"}}',
    # `token_count` lines, read straight into their counts (`lines.counts`) where they can be
    _tc(b'[1]'),  # an `info` that is no object
    _tc(b'{"total_token_usage":{"input_tokens":9},"last_token_usage":5}'),  # a usage that is no object
    _tc(b'{"total_token_usage":{"input_tokens":9},"last_token_usage":null}'),
    _tc(b'{"total_token_usage":null,"last_token_usage":{"input_tokens":9}}'),
    _tc(b'{}'),
    _tc(b'null'),
    _tc(b'{"total_token_usage":{},"last_token_usage":{}}'),
    _tc(b'{"total_token_usage":{"input_tokens":7,"input_tokens":8,"output_tokens":true},"last_token_usage":'
        b'{"input_tokens":-3,"cached_input_tokens":2.0,"cache_write_input_tokens":null,"output_tokens":"4"}}'),
    _tc(b'{"total_token_usage":{"input_tokens":11},"last_token_usage":{"input_tokens":11,'
        b'"cache_write_input_tokens":0,"cached_input_tokens":1000000001}},"info":{"total_token_usage":{"input_tokens":12},'
        b'"last_token_usage":{"input_tokens":12,"cache_write_input_tokens":3}}'),  # the last of two `info`s
    b'{"type":"event_msg","payload":{"type":"token_count"},"payload":null}',
    b'{"type":"event_msg","payload":null}',
    b'{"timestamp":"2026-11-20T10:00:03.000Z","type":"event_msg","payload":{"info":' + _INFO
    + b',"type":"token_count"}}',
    b'{"type":"turn_context","payload":{"type":"token_count","model":"gpt-5.4","info":' + _INFO + b'}}',
    b'{"type":"event_msg","payload":{"type":"token_countx","info":' + _INFO + b',"note":"token_count"}}',
    b'{"type":"response_item","payload":{"type":"message","role":"user","content":[{"text":"say \\"token_count\\""}]}}',
]


@pytest.mark.parametrize("n", range(len(TRICKY)))
def test_lines_where_the_readings_could_part(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    rows = [c.encode() for c in _calls()] + [TRICKY[n]] + [c.encode() for c in _calls()[1:]]
    plain, fast = both(monkeypatch, rows)
    assert fast == plain


def test_all_tricky_lines_in_one_rollout(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [c.encode() for c in _calls()] + TRICKY + [c.encode() for c in _calls()]
    plain, fast = both(monkeypatch, rows)
    assert fast == plain
    assert plain[1] >= 5  # the refused ones counted as bad, both ways


def test_equal_at_the_recursion_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A line nested past the recursion limit: the JSON reading gives up on it, so msgspec must too,
    at the very same depth (found here for this Python, at this test's stack depth)."""

    def turn(n: int) -> bytes:
        return b'{"type":"turn_context","payload":{"model":"m","x":' + b"[" * n + b"]" * n + b"}}"

    def snapshot(n: int) -> bytes:  # read by `lines.counts`
        return _tc(b'{"total_token_usage":{"input_tokens":9},"rate_limits":' + b"[" * n + b"]" * n + b"}")

    for deep in (turn, snapshot):

        def bad(n: int, deep: Callable[[int], bytes] = deep) -> int:
            monkeypatch.setattr(rollout, "_SCHEMA", [])
            return rollout.parse_lines([deep(n)], rollout.new_decoder())[1]

        step = 256
        first = next(n for n in range(step, 1 << 16, step) if bad(n))
        first = next(n for n in range(first - step, first + 1) if bad(n))
        assert not bad(first - 1)
        for n in range(first - 3, first + 3):
            plain, fast = both(monkeypatch, [deep(n)])
            assert fast == plain, n


def test_only_a_whole_rollouts_read_binds_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hook's read (a few lines) never imports msgspec for them; replay's read of a whole rollout
    binds the schema."""
    monkeypatch.setattr(rollout, "_SCHEMA", [])
    text = "\n".join(_calls()).encode() + b"\n"
    cursor: dict[str, Any] = {}
    hook = reader.decode(None, cursor, split_lines(text)[0], False)
    assert not rollout._SCHEMA
    whole = reader.decode(None, {}, [text], True)
    bound = rollout._SCHEMA
    assert bound == [lines.record, lines.counts]
    assert whole == hook
    assert len(hook[0]) == 1


def test_the_reports_readers_bind_it_through_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The report binds its schema before its readers fork, and every agent's with it (`Agent.bind_schema`)."""
    from session_watcher.reports import parse

    monkeypatch.setattr(rollout, "_SCHEMA", [])
    parse.bind_schema()
    bound = rollout._SCHEMA
    assert bound == [lines.record, lines.counts]


@pytest.mark.slow
def test_a_rollouts_schema_loads_msgspec_without_typing_extensions() -> None:
    """Replay of a rollout binds `lines` first (no Claude Code schema before it): msgspec still comes
    without typing_extensions (and inspect, ast), the real module importable afterwards."""
    code = (
        "import sys\n"
        "from session_watcher.agents.codex import reader, rollout\n"
        "got = reader.decode(None, {}, [sys.stdin.buffer.read()], True)\n"
        "assert rollout._SCHEMA, 'bound'\n"
        "assert 'typing_extensions' not in sys.modules and 'inspect' not in sys.modules, sorted(sys.modules)\n"
        "import typing_extensions\n"
        "assert typing_extensions.__file__\n"
        "print(got[0][0][6])\n"
    )
    total = usage(1000, 200, 50)
    text = "\n".join([meta(0), turn(0.1, "gpt-5.5"), line(0.2, "event_msg", {"type": "token_count", "info": {
        "total_token_usage": total, "last_token_usage": total}})]) + "\n"
    out = subprocess.run([sys.executable, "-c", code], input=text.encode(), capture_output=True, check=True)
    assert out.stdout.decode().strip() == "200"  # the call's cache read
