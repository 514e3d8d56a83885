"""The state's written-down shape (core/shapes.py) is the shape the code makes: the TypedDicts list
the keys the constructors write, a real session folds into entries of the declared shapes, and a
state that went through its JSON file (typed tuples come back as lists) folds on like the one kept
in memory."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from session_watcher.agents.claude_code.transcript import parse_lines, split_lines
from session_watcher.base import config
from session_watcher.core import engine, health, meter, shapes, status
from session_watcher.core import paths as pathmap
from session_watcher.state import store
from tests.oracle import TRANSCRIPTS

if TYPE_CHECKING:
    from pathlib import Path

CFG = config.merge()
SESSION = TRANSCRIPTS / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"  # a real session: 89 Reads


def keys(td: Any) -> set[str]:
    return set(td.__required_keys__) | set(td.__optional_keys__)


def test_the_constructors_write_exactly_the_declared_keys() -> None:
    state = engine.new_state("s")
    assert set(state) == set(shapes.State.__required_keys__)
    # lastBill: set by a segment's first bill; gateSaving and segUnits: by its start (older states lack them);
    # compactAt: by the session's first automatic compaction; burstUntil: by a segment's burst holding its advice
    assert set(engine.new_engine()) == keys(shapes.Engine) - {"lastBill", "gateSaving", "segUnits", "compactAt",
                                                               "burstUntil"}
    assert set(health.new_health()) == keys(shapes.Health)
    assert set(meter.new_meter()) == set(shapes.Meter.__required_keys__)  # `other`: when first needed
    assert set(meter.new_bucket()) == keys(shapes.Bucket)
    assert set(pathmap.new_entry(None)) == keys(shapes.PathEntry)
    assert set(state["tools"]) == keys(shapes.Tools)
    assert set(state["context"]) == set(shapes.Context.__required_keys__)
    assert set(meter.FIELDS) | {"calls"} == keys(shapes.Bucket)


def events() -> list[Any]:
    lines, _ = split_lines(SESSION.read_bytes())
    evs, _bad = parse_lines(lines)
    assert len(evs) > 100
    return evs


def test_a_real_session_folds_into_the_declared_shapes() -> None:
    evs = events()
    kinds = {ev[0] for ev in evs}
    assert {"call", "use", "result"} <= kinds
    lengths = {"call": 12, "use": 5, "result": 5, "compact": 4, "autocompact": 3}
    assert all(len(ev) == lengths[ev[0]] for ev in evs)
    ledgers: list[Any] = []
    state = engine.new_state("s")

    def seen(st: Any, fired: list[Any], usage: shapes.CallUsage) -> None:
        assert set(usage) == set(shapes.CallUsage.__required_keys__)  # `iter`: only with iterations
        ledgers.extend(st["engine"]["ledger"])

    engine.fold(state, evs, CFG, call_hook=seen)
    assert ledgers, "the session's Reads open ledger entries"
    for path, open_tokens, calls, chars, original in ledgers:
        assert isinstance(path, str)
        assert all(isinstance(v, int) for v in (open_tokens, calls, chars, original))
        assert 0 < open_tokens <= original
        assert 0 <= calls < engine.LEDGER_CALLS
    assert state["paths"]
    for entry in state["paths"].values():
        assert set(entry) == keys(shapes.PathEntry)
    for stream, *sample in state["meter"]["recent"].values():
        assert stream in ("main", "sub")
        assert len(sample) == len(meter.FIELDS)
    for name, info in state["tools"]["pending"].values():
        assert isinstance(name, str)
        assert (info is None or set(info) <= keys(shapes.UseInfo))
    assert set(state) == set(shapes.State.__required_keys__)
    # burstUntil: only in a segment whose burst held its advice back (none in this session)
    assert set(state["engine"]) == keys(shapes.Engine) - {"burstUntil"}


def test_a_state_through_its_file_folds_on_like_the_one_in_memory(tmp_path: Path) -> None:
    evs = events()
    half = len(evs) // 2
    kept = engine.new_state("s")
    engine.fold(kept, evs[:half], CFG)
    while not kept["engine"]["ledger"]:  # stop where ledger entries are open: tuples to write out
        engine.fold(kept, evs[half:half + 1], CFG)
        half += 1
    kept["cursor"] = {"offset": 1 << 20}  # where the hooks' fold of a transcript would have left it (a
    # null one under calls folded is a damaged value: state.store.damage)
    path = str(tmp_path / "s.json")
    store.save(path, kept)
    loaded = store.load(path, "s")
    assert loaded is not None
    open_kept = [*kept["engine"]["ledger"], *kept["tools"]["pending"].values()]
    # typed as the tuples they were; read back from the file they are what JSON gives
    open_loaded: list[object] = [*loaded["engine"]["ledger"], *loaded["tools"]["pending"].values()]
    assert all(isinstance(t, tuple) for t in open_kept)
    assert open_loaded == [list(t) for t in open_kept]  # the same entries, as JSON lists
    assert half < len(evs) - 100
    for state in (kept, loaded):
        engine.fold(state, evs[half:], CFG)
    assert status.status_document(loaded, CFG) == status.status_document(kept, CFG)
    assert status.status_document(kept, CFG)["calls"] > 0
