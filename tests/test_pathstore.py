"""The path map's shards on disk: partial loads, copy-on-write saves, segments, damage."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import pytest

from bench.synth import Transcript
from session_watcher.core import engine
from session_watcher.core.errors import ShardRejected
from session_watcher.state import store
from session_watcher.state.pathstore import SHARDS, PathShards, shard_of
from tests.oracle import hook, oracle, payload
from tests.statefile import load_state, read_state, sessions_dir

if TYPE_CHECKING:
    from pathlib import Path

    from session_watcher.core.shapes import PathEntry, State


def _state_with_paths(n: int) -> State:
    state = engine.new_state("s")
    state["engine"]["floor"] = 1000
    for i in range(n):
        path = f"/proj/src/f{i:04d}.py"
        entry: PathEntry = {"lines": i, "ranges": [[1, i + 1]], "overhead": 40, "pendingEdit": 0, "calibration": 0,
                 "tokens": i + 40, "reason": None, "include": True, "reads": 1, "edited": False}
        state["paths"][path] = entry
        state["reasons"][path] = None
        state["readPaths"][path] = 1
    return state


def _save(tmp_path: Path, state: State) -> Path:
    main = tmp_path / "s.json"
    shards = PathShards(str(main))
    shards.ensure_all(state)
    store.save(str(main), state, shards)
    return main


def test_round_trip_and_partial_load(tmp_path: Path) -> None:
    """The whole map comes back; a partial load brings exactly the shard of the path asked for."""
    state = _state_with_paths(300)
    main = _save(tmp_path, state)
    on_disk = json.loads(main.read_bytes())
    assert on_disk["paths"] == {}, "the main file carries no path map"
    assert len(on_disk["shards"]) == len({shard_of(p) for p in state["paths"]})
    full = store.load_full(str(main), "s")
    assert full is not None
    assert full["paths"] == state["paths"]
    assert full["reasons"] == state["reasons"]
    assert full["readPaths"] == state["readPaths"]

    part = store.load(str(main), "s")
    assert part is not None
    shards = PathShards(str(main))
    wanted = "/proj/src/f0007.py"
    shards.ensure(part, [wanted])
    same_shard = {p for p in state["paths"] if shard_of(p) == shard_of(wanted)}
    assert set(part["paths"]) == same_shard
    assert shards.loaded == {shard_of(wanted)}


def test_only_changed_shards_are_rewritten(tmp_path: Path) -> None:
    state = _state_with_paths(200)
    main = _save(tmp_path, state)
    before = json.loads(main.read_bytes())["shards"]
    part = store.load(str(main), "s")
    assert part is not None
    shards = PathShards(str(main))
    path = "/proj/src/f0003.py"
    shards.ensure(part, [path])
    part["paths"][path]["reads"] += 1
    store.save(str(main), part, shards)
    after = json.loads(main.read_bytes())["shards"]
    changed = {n for n in after if after[n] != before[n]}
    assert changed == {str(shard_of(path))}
    folder = tmp_path / "s.paths"
    assert sorted(os.listdir(folder)) == sorted(f"{int(n):02d}-{r}.json" for n, r in after.items()), \
        "the superseded shard file is gone, the others are untouched"
    assert read_state(main)["paths"][path]["reads"] == 2


def test_a_crash_between_shards_and_state_keeps_the_old_map(tmp_path: Path) -> None:
    """New shard files are written first under new names; until the state names them they do not count."""
    state = _state_with_paths(50)
    main = _save(tmp_path, state)
    part = store.load(str(main), "s")
    assert part is not None
    shards = PathShards(str(main))
    shards.ensure_all(part)
    for entry in part["paths"].values():
        entry["reads"] = 99
    shards.save(part)  # shard files written; the hook "dies" before the main state is replaced
    again = store.load_full(str(main), "s")
    assert again is not None
    assert {e["reads"] for e in again["paths"].values()} == {1}


def test_a_new_segment_retires_unloaded_shards_path_entries(tmp_path: Path) -> None:
    state = _state_with_paths(100)
    main = _save(tmp_path, state)
    part = store.load(str(main), "s")
    assert part is not None
    engine.new_segment(part)  # as a compaction does, with no shard loaded
    store.save(str(main), part, PathShards(str(main)))
    full = store.load_full(str(main), "s")
    assert full is not None
    assert full["paths"] == {}, "path entries of the old segment no longer count"
    assert full["readPaths"] == state["readPaths"], "what was read stays known for re-read detection"


def test_a_damaged_shard_is_rejected(tmp_path: Path) -> None:
    state = _state_with_paths(10)
    main = _save(tmp_path, state)
    victim = sorted((tmp_path / "s.paths").iterdir())[0]
    victim.write_bytes(b"{not json")
    part = store.load(str(main), "s")
    assert part is not None
    with pytest.raises(ShardRejected, match=victim.name):
        PathShards(str(main)).ensure_all(part)


@pytest.mark.slow
def test_hook_rebuilds_a_session_whose_shard_is_damaged(tmp_path: Path) -> None:
    """Through the real hook: the session is folded again from its transcript, totals exact."""
    t = Transcript(session_id="dmg", cwd=str(tmp_path))
    t.call(20_000, 500)
    for i in range(12):
        t.read(str(tmp_path / f"m{i}.py"), "x = 1\n" * (i + 1), cr=20_500 + 100 * i, cw=100)
    tr = t.save(tmp_path / "dmg.jsonl")
    assert hook("Stop", payload("dmg", tr)).returncode == 0
    sessions = sessions_dir()
    shard_files = sorted((sessions / "dmg.paths").iterdir())
    assert shard_files
    victim = shard_files[0]
    victim.write_bytes(b"\x00garbage")
    # damage is found when a hook needs that shard: read again a file whose entry lives there
    again = next(p for p in (os.path.realpath(tmp_path / f"m{i}.py") for i in range(12))
                 if shard_of(p) == int(victim.name[:2]))
    t.read(again, "x = 1\n", cr=22_000, cw=300)
    t.call(22_500, 300)
    t.save(tr)
    proc = hook("Stop", payload("dmg", tr))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    state = load_state("dmg")
    assert state["meter"]["main"] == oracle(tr)["main"]
    assert len(state["paths"]) == 12
    assert {p: e["reads"] for p, e in state["paths"].items() if e["reads"] != 1} == {again: 2}
    assert victim.name not in os.listdir(sessions / "dmg.paths")


def test_shard_count_is_fixed() -> None:
    assert SHARDS == 64
    assert all(0 <= shard_of(f"/p/{i}") < SHARDS for i in range(1000))


def test_a_shards_ints_are_bounded_however_its_text_reads() -> None:
    """`sound` refuses an int past +-2**53 whether or not `short_numbers` sent it to look: a path
    holding 16 digits only makes it look, and passes; a bound past it in the text is found."""
    from session_watcher.core.fastjson import dumps, loads
    from session_watcher.core.paths import new_entry
    from session_watcher.state.pathstore import KINDS, short_numbers, sound

    def shard(path: str, tokens: int) -> bytes:
        return dumps({"segment": 0, "paths": {path: {**new_entry(None), "tokens": tokens, "ranges": [[1, 2]]}},
                      "reasons": {path: None}, "readPaths": {path: 1}}).encode()

    for path, tokens, short, ok in (("/src/a.py", 10**15 - 1, True, True), ("/src/a.py", 2**53, False, True),
                                    ("/src/1234567890123456.log", 5, False, True),
                                    ("/src/a.py", 2**53 + 1, False, False), ("/src/a.py", -(10**400), False, False)):
        raw = shard(path, tokens)
        assert short_numbers(raw) is short
        assert sound(loads(raw), KINDS, short_numbers(raw)) is ok
        assert sound(loads(raw), KINDS) is ok
