"""A saved state whose values the fold cannot read (a damaged or hand-edited file: a string where a
number is, NaN, a list, null where an object is) is quarantined and the session started again from its
transcript (state.store.damage), keeping what a rebuild keeps; before, every later hook and status-line
run raised inside the fold, the state was never saved again and the session's figures froze.

Real processes on a real calibration session: the state the hooks saved after 116 of its 120 calls,
one value damaged in turn, then the hook on the rest of the transcript and the status line. Each must
exit 0 and say nothing on stderr, the hook must say what a clean run says, and the state must catch up
to the clean run's figures."""

from __future__ import annotations

import json
import math
import re
import shutil
from typing import TYPE_CHECKING, Any

import pytest

from tests import fuzz_synth as fs
from tests.calibration import all_sessions, unpack
from tests.live_driver import count_calls, line_offsets
from tests.oracle import hook, statusline
from tests.statefile import load_state, state_file

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

SID = "d29c2adb-9a9e-45ac-b435-bce63d920d59"  # 120 calls; a reminder at call 119
CUT = 970  # lines: the state saved at its 116th call, the 119th's reminder to come
# a cap of no reminders: the 119th call's reminder weighs its saving against the gate's (`gateSaving`)
CONFIG = '[notify]\nchannels = ["message"]\nfallback = "none"\n\nremind_cap = 0\n'
NAN = float("nan")
# engine values a clean fold at the cut may not hold yet (core.shapes.Engine's NotRequired ones)
OPTIONAL = {"lastBill": 3, "gateSaving": 1000.0, "segUnits": 10.0, "compactAt": 150_000}


class Setup:
    """The session's home at the cut (a snapshot to damage), the whole transcript (shared: the saved
    cursor describes that very file), and what a clean run does from the cut."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = unpack(SID, root / "src").read_bytes()
        self.transcript = root / "projects" / "p" / f"{SID}.jsonl"
        self.transcript.parent.mkdir(parents=True)
        self.transcript.write_bytes(self.data[:line_offsets(self.data)[CUT]])
        self.cwd = root / "cwd"
        self.cwd.mkdir()
        self.snap = root / "snap"
        fs.write_config(self.snap, CONFIG)
        assert hook("Stop", self.payload(), env=self.env(self.snap)).returncode == 0
        self.at_cut = load_state(SID, fs.sw_home(self.snap))
        assert 0 < self.at_cut["engine"]["calls"] < count_calls(self.data)
        self.transcript.write_bytes(self.data)
        clean = self.copy(root / "clean")
        self.clean_out = self.finish(clean)
        self.clean = load_state(SID, fs.sw_home(clean))
        assert self.clean["engine"]["calls"] == count_calls(self.data) == 120

    def copy(self, root: Path) -> Path:
        shutil.copytree(fs.sw_home(self.snap), fs.sw_home(root), symlinks=True)
        return root

    def env(self, root: Path) -> dict[str, str]:
        return fs.env_for(root, CLAUDE_PROJECT_DIR=str(self.cwd))

    def payload(self, event: str = "Stop") -> dict[str, Any]:
        return {"session_id": SID, "transcript_path": str(self.transcript), "cwd": str(self.cwd),
                "hook_event_name": event}

    def finish(self, root: Path) -> bytes:
        """The hook run on the rest of the transcript, then the status line: the hook's output (both
        exit 0 and are silent on stderr; the status line shows no error; nothing raised is logged)."""
        env = self.env(root)
        got = hook("Stop", self.payload(), env=env)
        assert (got.returncode, got.stderr) == (0, b"")
        line = statusline({**self.payload(""), "model": {"id": "claude-opus-4-1", "display_name": "Opus"}}, env=env)
        assert (line.returncode, line.stderr) == (0, b"")
        assert b"error" not in line.stdout, line.stdout
        log = fs.sw_home(root) / "log" / "session-watcher.log"
        assert not log.exists() or "Traceback" not in log.read_text()
        return got.stdout


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Setup:
    return Setup(tmp_path_factory.mktemp("values"))


def _wrong(good: object, nullable: bool = False) -> list[object]:
    """Values of another type than `good`'s (null too where `good` may not be null)."""
    if isinstance(good, bool):
        return ["yes", None]
    if isinstance(good, int | float):
        return [str(good), [good] if nullable else None, NAN]
    if good is None:
        return ["x", [1], {"a": 1}]
    if isinstance(good, str):
        return [7, [good]]
    if isinstance(good, list):
        return ["x", None, [["x"]]]
    return ["x", None, [1]]


def _engine_cases() -> list[tuple[tuple[str, ...], object]]:
    """Every engine value (its tally's and calibration's too) with each of its wrong values, from a
    new state's engine (core.fresh) and the values it gains later (`OPTIONAL`)."""
    from session_watcher.core.fresh import new_engine

    e: dict[str, Any] = {**new_engine(), **OPTIONAL}
    nullable = {"L", "floor", "shared", "residual", "lastTs", "level", "gateSaving", "ttl", "globs", "lamp"}
    e.update(dict.fromkeys(("L", "floor", "shared", "residual"), 1))
    e.update(dict.fromkeys(("ttl", "globs", "lamp"), "x"), lastTs=1.5, level=1.5)
    cases: list[tuple[tuple[str, ...], object]] = []
    for key, good in e.items():
        if key in ("tally", "cal"):
            cases.extend((("engine", key), bad) for bad in _wrong(good))
            for sub, value in good.items():
                first = sub == "firstTs"
                cases.extend((("engine", key, sub), bad) for bad in _wrong(1.5 if first else value, first))
        else:
            cases.extend((("engine", key), bad) for bad in _wrong(good, key in nullable))
    return cases


# the rest the fold or the hooks read: a sample of each part
OTHER: list[tuple[tuple[str, ...], object]] = [
    (("meter", "main", "calls"), "9"), (("meter", "sub", "output"), None), (("meter", "recent"), {"k": 5}),
    (("health", "reads"), NAN), (("health", "prompt"), "x"),
    (("context", "window"), "200k"), (("context", "model"), [1]), (("context", "cwd"), 5),
    (("context", "peak"), "x"), (("cursor",), 5), (("cursor", "offset"), "x"), (("cursor", "offset"), -1),
    (("cursor",), None),  # calls folded, and the transcript unread: they were read again, counted twice
    (("tools", "pending"), {"t": 5}), (("guard",), "x"), (("guard",), {"shown": 5}), (("notified",), [1]),
    (("seen",), {"a": 1}), (("engine", "ledger"), [[1, 2]]),
    # an int no float holds exactly, of any size (the checks asked for an int alone): past +-2**53
    (("engine", "bFull"), 10**400), (("engine", "calls"), 2**53 + 1), (("meter", "main", "output"), 10**20),
    (("engine", "tally", "coldTokens"), 10**30), (("health", "prompt"), -(10**30)), (("cursor", "offset"), 10**400),
    (("engine", "ledger"), [["a", 10**400, 1, 1, 1]]),
    # the config the state keeps: only dropped (its files read again), the state not started again
    (("config", "params", "include"), None), (("config", "params", "bp_amber"), "x"),
    (("config", "values", "bp_amber"), None), (("config", "values", "notify"), [1]),
    (("config", "params", "cliff"), {"5m": "x"}), (("config", "params"), {}),
]


def damaged(doc: dict[str, Any], where: tuple[str, ...], bad: object) -> bytes:
    part = doc
    for key in where[:-1]:
        part = part[key]
    part[where[-1]] = bad
    return json.dumps(doc).encode()  # NaN written as JSON's NaN, as a damaged file may hold it


def _ident(case: tuple[tuple[str, ...], object]) -> str:
    where, bad = case
    said = "nan" if isinstance(bad, float) and math.isnan(bad) else json.dumps(bad)
    return ".".join(where) + "=" + re.sub(r"\d{20,}", lambda m: f"<{len(m[0])} digits>", said)


CASES = _engine_cases() + OTHER


@pytest.mark.parametrize("case", CASES, ids=[_ident(c) for c in CASES])
def test_a_damaged_value_starts_the_state_again_and_it_catches_up(
        setup: Setup, tmp_path: Path, case: tuple[tuple[str, ...], object]) -> None:
    where, bad = case
    root = setup.copy(tmp_path / "s")
    sf = state_file(SID, fs.sw_home(root))
    doc = json.loads(sf.read_bytes())
    old, new = str(fs.sw_home(setup.snap)), str(fs.sw_home(root))
    doc["config"]["stamp"] = [[f.replace(old, new), *rest] for f, *rest in doc["config"]["stamp"]]  # copied
    bad_file = damaged(doc, where, bad)
    sf.write_bytes(bad_file)
    out = setup.finish(root)
    assert out == setup.clean_out  # the same news: nothing delivered again, nothing lost
    got = load_state(SID, fs.sw_home(root))
    clean = setup.clean
    assert got["engine"]["calls"] == count_calls(setup.data)
    assert got["meter"] == clean["meter"]
    assert got["engine"] == clean["engine"]
    assert got["health"] == clean["health"]
    assert got["readPaths"] == clean["readPaths"]
    quarantine = fs.sw_home(root) / "state" / "quarantine"
    kept = [p.read_bytes() for p in quarantine.iterdir()] if quarantine.exists() else []
    assert kept in ([], [bad_file])  # a value the fold reads is quarantined (one it never reads may pass)
    assert kept == [] or where[0] != "config"


def test_the_states_the_hooks_saved_are_sound(setup: Setup) -> None:
    """The check passes what the hooks wrote (else a sound state would be started again on every run)."""
    from session_watcher.state.store import damage

    assert damage(setup.at_cut) == []
    assert damage(setup.clean) == []
    assert {"lastBill", "gateSaving", "segUnits"} <= set(setup.clean["engine"])


def test_the_states_of_every_calibration_session_are_sound(tmp_path: Path) -> None:
    """... and what the fold writes of each calibration session (compactions, subagents, cold returns,
    every optional engine value among them), as saved and loaded again."""
    from session_watcher.core import fastjson
    from session_watcher.sessions.replay import fold
    from session_watcher.state.store import damage, encode

    optional: set[str] = set()
    for path in all_sessions(tmp_path):
        state, _cfg, _trace = fold(str(path), with_trace=False)
        loaded = fastjson.loads(encode(state))
        assert damage(loaded) == [], path.name
        optional |= set(OPTIONAL) & set(loaded["engine"])
    assert optional == set(OPTIONAL)


def test_the_config_check_knows_every_model_parameter() -> None:
    """Every key a project's file may set (the model's parameters) is checked, and the defaults pass."""
    from session_watcher.base import config
    from session_watcher.state import store

    assert list(store._PARAMS) == list(config.PROJECT_KEYS)
    cfg = config.merge({"cRatio": 12.5, "compact_reserve": 33000})
    assert store._config({"values": cfg, "params": config.model_params(cfg)})
    assert store._config({"values": config.merge(), "params": config.model_params(config.merge())})
    assert not store._config({"values": config.merge(), "params": {}})
