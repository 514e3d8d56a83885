"""One lamp, one gate, one price, live in the real client (issue 37): a session scripted well past its
sweet spot with a real session's usage, the plugin's hooks running as installed, the shipped
defaults, and a real notification server (dunst) on a private D-Bus session bus.

The lamp the live folds recorded changes at most once per 20 calls once it is lit, never goes back to
green after the gate, and each segment has exactly one gate alert; the desktop notification the hooks
delivered for the gate quotes the saving the status line shows for that same call (core.render over
that call's live status document) and the alert recorded. No timing is asserted: every wait is a
condition with a generous bound.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.core import render
from session_watcher.core.numbers import dollars, tokens
from tests.test_notifier_delivery import Desktop, need, wait_for

from .harness import run_print
from .mock_api import MockAPI, Turn, bash, say
from .plugin import settle_trace
from .test_e2e_live import real_usages

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from .harness import World

pytestmark = pytest.mark.e2e

CALLS = 80  # with the shipped defaults this script gates near its 13th call: 60 calls past the sweet spot


@pytest.fixture
def desktop_world(installed: World, tmp_path: Path) -> Iterator[tuple[World, Desktop]]:
    """The installed world with the shipped defaults (the scripted project's pinned v2 gate taken
    away) and alerts also sent to the desktop, on a private bus with dunst; all put back afterwards."""
    need("dbus-daemon", "dunst", "Xvfb")
    pinned = installed.project / ".claude" / "session-watcher.toml"
    user_cfg = installed.sw_home / "config" / "config.toml"
    saved_pin, saved_cfg = pinned.read_bytes(), user_cfg.read_bytes()
    (tmp_path / "desktop").mkdir()
    d = Desktop(tmp_path / "desktop")
    try:
        pinned.unlink()
        user_cfg.write_text('[notify]\nchannels = ["message", "desktop"]\n')
        d.start_bus()
        d.start_dunst()
        yield installed, d
    finally:
        d.close()
        pinned.write_bytes(saved_pin)
        user_cfg.write_bytes(saved_cfg)


def lamp_changes(rows: list[dict[str, Any]]) -> list[int]:
    """The calls where the lamp changed within a segment, once it was first lit (white to green is
    the baseline arriving, not a change of advice)."""
    out: list[int] = []
    lit: set[int] = set()
    for prev, row in pairwise(rows):
        if row["segment"] != prev["segment"]:
            continue
        if prev["lamp"] != "white":
            lit.add(row["segment"])
        if row["segment"] in lit and row["lamp"] != prev["lamp"]:
            out.append(row["call"])
    return out


def test_one_lamp_one_gate_one_price_live(claude_bin: Path, desktop_world: tuple[World, Desktop],
                                          tmp_path: Path) -> None:
    world, desk = desktop_world
    usages = real_usages(CALLS)
    turns: list[Turn] = [bash(f"echo lamp-{i}", u, f"call {i + 1}") for i, u in enumerate(usages[:-1])]
    turns.append(say("Done with the steps.", usages[-1], "last"))
    trace = tmp_path / "live-trace.jsonl"
    assert desk.address is not None
    env_extra = {"SESSION_WATCHER_TRACE": str(trace), "DBUS_SESSION_BUS_ADDRESS": desk.address}
    with MockAPI(turns) as api:
        run = run_print(claude_bin, world, api.base_url, "do the steps", timeout=900, env_extra=env_extra)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.result["num_turns"] == CALLS
    rows = settle_trace(world, run.session_id, trace, CALLS, env_extra)
    assert [r["call"] for r in rows] == list(range(1, CALLS + 1))

    # exactly one gate a segment; the session went on well past it (reminders are the repeat)
    gates = [(r["segment"], r["call"]) for r in rows for a in r["alerts"] if a["kind"] == "gate"]
    assert {r["segment"] for r in rows} == {0}  # one segment: no compaction in this script
    assert len(gates) == 1, gates
    gate_call = gates[0][1]
    assert gate_call <= CALLS - 40, gate_call

    # the lamp: lit changes at least 20 calls apart, and never green again after the gate
    changes = lamp_changes(rows)
    assert all(b - a >= 20 for a, b in pairwise(changes)), (changes, [r["lamp"] for r in rows])
    assert all(r["lamp"] in ("amber", "red") for r in rows[gate_call - 1:]), [r["lamp"] for r in rows]

    # one price: the status line drawn from the gate call's status document, the alert the hooks
    # recorded, and the notification dunst showed quote the same dollars
    row = rows[gate_call - 1]
    [alert] = [a for a in row["alerts"] if a["kind"] == "gate"]
    usd = dollars(alert["savingUsd"])
    assert dollars(row["savingUsd"]) == usd
    line = render.render(row, columns=200, color=False)
    assert f"restart saves {usd}" in line, line
    wait_for(lambda: any("less the restart's own cost" in n["body"] for n in desk.notifications()),
             120, "the gate's desktop notification")
    shown = [n for n in desk.notifications() if "less the restart's own cost" in n["body"]]
    m = re.search(r"Restarting now saves (\$[\d,]+\.\d\d) over the next", shown[0]["body"])
    assert m is not None, shown[0]
    assert m.group(1) == usd, (m.group(1), usd, line)
    # and the same tokens: the notification's net figure is the one `status` quotes beside the dollars
    net = re.search(r"less the restart's own cost: (\S+) net at the cache-read price", shown[0]["body"])
    assert net is not None, shown[0]
    assert net.group(1) == tokens(alert["saving"]) == tokens(row["saving"]), (net.group(1), alert, row["saving"])
    assert f"({net.group(1)} tokens at the cache-read price)" in render.lamp_words(row), render.lamp_words(row)

    from .conftest import FIGURES

    FIGURES["one lamp, one gate, one price"] = (
        f"{CALLS} calls live, gate at call {gate_call} (the only one), lamp changes at {changes}; the status "
        f"line, the alert and dunst's notification all say {usd}")
