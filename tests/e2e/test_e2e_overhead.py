"""The hook cost the agent sees: the same scripted session with the plugin, without it, and with a
`true` hook as the floor any command hook costs.

Two figures, both the client's own: the duration Claude Code logs for each PostToolUse hook (its
debug log: "moved to the background (N ms)" for an async hook, "finished with status 0 (N ms)" for a
synchronous one), and the session's `duration_ms` with vs without the plugin. They are reported
(terminal summary and test-output/e2e-overhead.json), never asserted: speed claims belong to the
benchmarks, and a loaded CI machine must not fail the suite. One round by default (what the suite checks: every
hook ran and folded); `SW_OVERHEAD_ROUNDS=5` for a figure worth quoting.
"""

from __future__ import annotations

import json
import os
import re
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

ROUNDS = max(1, int(os.environ.get("SW_OVERHEAD_ROUNDS", "1")))
TOOL_CALLS = N_CALLS - 1
HOOK_LINE = re.compile(r"Hooks: PostToolUse:\w+ \[(.*)\] (?:moved to the background|finished with status \d+) "
                       r"\((\d+)ms\)")


def _true_world(root: Path) -> World:
    """A world whose only hook is a synchronous `true` on PostToolUse (exec form)."""
    world = make_world(root)
    settings = json.loads((world.config / "settings.json").read_text())
    settings["hooks"] = {"PostToolUse": [{"hooks": [{"type": "command", "command": "/bin/true", "args": []}]}]}
    (world.config / "settings.json").write_text(json.dumps(settings))
    return world


def hook_durations(debug_log: Path) -> list[int]:
    """The client's own duration of each PostToolUse hook run, in ms."""
    return [int(m.group(2)) for m in HOOK_LINE.finditer(debug_log.read_text(errors="replace"))]


def test_hook_overhead_per_tool_call(claude_bin: Path, installed: World, tmp_path: Path) -> None:
    worlds = {"bare": make_world(tmp_path / "bare"), "true": _true_world(tmp_path / "true"), "plugin": installed}
    durations: dict[str, list[int]] = {name: [] for name in worlds}
    hook_ms: dict[str, list[int]] = {"true": [], "plugin": []}
    for rnd in range(ROUNDS):
        for name, world in worlds.items():
            debug = tmp_path / f"debug-{name}-{rnd}.log"
            with MockAPI(overstay_turns(world)) as api:
                run = run_print(claude_bin, world, api.base_url, "do the scripted work", "--debug-file", str(debug))
            assert run.returncode == 0, run.stderr[-2000:]
            assert run.result["num_turns"] == N_CALLS
            durations[name].append(int(run.result["duration_ms"]))
            if name in hook_ms:
                got = hook_durations(debug)
                assert len(got) == TOOL_CALLS, got  # one PostToolUse hook run per tool call, all logged
                hook_ms[name] += got
            if name == "plugin":  # the hooks really ran: every call was folded (the sync SessionEnd at the latest)
                assert plugin.status(world, run.session_id)["calls"] == N_CALLS
            elif name == "bare":
                assert not (world.sw_home / "state").exists()
    medians = {name: statistics.median(v) for name, v in durations.items()}
    per_tool = {name: (medians[name] - medians["bare"]) / TOOL_CALLS for name in ("true", "plugin")}
    hook_median = {name: statistics.median(v) for name, v in hook_ms.items()}
    figure = {
        "client": CLIENT_VERSION,
        "session": f"{N_CALLS} API calls, {TOOL_CALLS} tool calls (print mode), {ROUNDS} rounds",
        "duration_ms": durations,
        "median_duration_ms": medians,
        "turn_time_added_per_tool_call_ms": {k: round(v, 1) for k, v in per_tool.items()},
        "client_hook_ms": hook_ms,
        "client_hook_median_ms": hook_median,
    }
    FIGURES["hook cost"] = (
        f"claude {CLIENT_VERSION}: the client's own PostToolUse hook duration, median {hook_median['plugin']:.0f} ms "
        f"with the plugin (async) vs {hook_median['true']:.0f} ms for a sync `true` hook; session duration_ms median "
        f"{medians['bare']:.0f} without, {medians['true']:.0f} with `true`, {medians['plugin']:.0f} with the plugin "
        f"({per_tool['plugin']:+.1f} ms per tool call; `true`: {per_tool['true']:+.1f})"
    )
    out = REPO / "test-output"
    out.mkdir(exist_ok=True)
    (out / "e2e-overhead.json").write_text(json.dumps(figure, indent=2) + "\n")
