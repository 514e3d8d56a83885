"""The hook overhead the client itself sees: the same scripted session with and without the plugin.

Claude Code's own `duration_ms` (the result message of print mode) is compared; the figure is
reported (terminal summary and test-output/e2e-overhead.json), never asserted: speed claims belong
to the benchmarks, and a loaded CI machine must not fail the suite.
"""

from __future__ import annotations

import json
import statistics
from typing import TYPE_CHECKING

import pytest

from . import plugin
from .conftest import FIGURES
from .harness import CLIENT_VERSION, REPO, make_world, run_print
from .mock_api import MockAPI
from .scenario import N_CALLS, overstay_turns

if TYPE_CHECKING:
    from pathlib import Path

    from .harness import World

pytestmark = pytest.mark.e2e

ROUNDS = 3
# hook runs in one overstay session: SessionStart, PostToolUse for each of the 15 tool calls, Stop
HOOK_RUNS = 1 + (N_CALLS - 1) + 1


def test_hook_overhead_per_call(claude_bin: Path, installed: World, tmp_path: Path) -> None:
    bare = make_world(tmp_path / "bare")
    durations: dict[str, list[int]] = {"bare": [], "plugin": []}
    for _ in range(ROUNDS):
        for name, world in (("bare", bare), ("plugin", installed)):
            with MockAPI(overstay_turns(world)) as api:
                run = run_print(claude_bin, world, api.base_url, "do the scripted work")
            assert run.returncode == 0, run.stderr[-2000:]
            assert run.result["num_turns"] == N_CALLS
            durations[name].append(int(run.result["duration_ms"]))
            if name == "plugin":  # the hooks really ran: every call was folded
                assert plugin.status(world, run.session_id)["calls"] == N_CALLS
            else:
                assert not (world.sw_home / "state").exists()
    bare_ms = statistics.median(durations["bare"])
    plugin_ms = statistics.median(durations["plugin"])
    per_hook = (plugin_ms - bare_ms) / HOOK_RUNS
    figure = {
        "client": CLIENT_VERSION,
        "session": f"{N_CALLS} API calls, {N_CALLS - 1} tool calls, {HOOK_RUNS} hook runs",
        "duration_ms_without": durations["bare"],
        "duration_ms_with": durations["plugin"],
        "median_without_ms": bare_ms,
        "median_with_ms": plugin_ms,
        "overhead_per_hook_ms": round(per_hook, 1),
    }
    FIGURES["hook overhead"] = (
        f"claude {CLIENT_VERSION}: median duration_ms {bare_ms:.0f} without, {plugin_ms:.0f} with the plugin "
        f"over {ROUNDS} runs; {per_hook:.1f} ms per hook run ({HOOK_RUNS} hook runs per session)"
    )
    out = REPO / "test-output"
    out.mkdir(exist_ok=True)
    (out / "e2e-overhead.json").write_text(json.dumps(figure, indent=2) + "\n")
