"""The hook's per-event behaviour is one table (hooks.run.EVENTS): every hook the plugin and the
installer register has its row, registered as the row says, and an async hook never prints."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from session_watcher.cli import install
from session_watcher.hooks.run import EVENTS, FOLD
from tests.oracle import REPO

if TYPE_CHECKING:
    from collections.abc import Mapping


def plugin_hooks() -> dict[str, bool]:
    """`EVENT [args...]` -> registered async, from the plugin's hooks.json (both forms: exec
    `args`, and a shell command line)."""
    doc = json.loads((REPO / "session_watcher" / "hooks" / "hooks.json").read_text())
    out: dict[str, bool] = {}
    for event, groups in doc["hooks"].items():
        for group in groups:
            for hook in group["hooks"]:
                words = hook.get("args") or hook["command"].split()[1:]
                assert words[0] == event
                out[" ".join(words)] = bool(hook.get("async", False))
    return out


def test_every_plugin_hook_has_its_row_and_is_registered_as_it_says() -> None:
    registered = plugin_hooks()
    assert set(registered) == set(EVENTS)
    assert {name: not plan["sync"] for name, plan in EVENTS.items()} == registered


def test_the_installer_registers_the_table() -> None:
    entries = install.hook_entries("/venv/bin")
    assert [" ".join(entry["args"][3:]) for _, entry in entries] == list(EVENTS)
    for name, entry in zip(EVENTS, (e for _, e in entries), strict=True):
        assert entry.get("async", False) is not EVENTS[name]["sync"], name


def test_an_async_hook_never_prints() -> None:
    """Its output would reach the model, not the user: only synchronous rows print."""
    assert [name for name, plan in EVENTS.items() if plan["prints"] and not plan["sync"]] == []
    assert [name for name, plan in EVENTS.items() if plan["prints"]] == ["SessionStart inject", "UserPromptSubmit"]


def test_the_rows_that_differ_from_a_plain_fold() -> None:
    """What is special about each event, as architecture.md's table tells it."""
    fold: Mapping[str, object] = FOLD  # looked up by each row's keys
    special = {name: {k for k, v in plan.items() if v != fold[k]} for name, plan in EVENTS.items()}
    assert special == {
        "PostToolUse": set(),
        "PostToolUseFailure": set(),
        "Stop": {"turnEnd", "lock", "subagents", "tidy"},
        "SubagentStop": {"subagents"},
        "SessionStart": {"subagents", "apply", "beforeCall"},
        "SessionStart inject": {"sync", "run", "lock", "prints"},
        "UserPromptSubmit": {"sync", "lock", "peek", "budgetAtLock", "guard", "beforeCall", "prints", "saveAlways",
                             "lent"},
        "SessionEnd": {"sync", "lock", "subagents", "flush", "apply", "lent"},
    }


def test_the_entry_point_sends_exactly_the_inject_row_to_the_inject() -> None:
    """hooks.entry chooses the inject without the table (it does not import hooks.run): its one name
    is the table's one row that runs the inject, and an agent's one SessionStart hook is that row."""
    from session_watcher.agents import AGENTS
    from session_watcher.hooks.entry import INJECT

    assert [name for name, plan in EVENTS.items() if plan["run"] == "inject"] == [INJECT]
    assert [a.name for a in AGENTS if a.one_start_hook] == ["codex"]


def test_the_prompts_shortcut_past_a_break_asks_the_guard_at_every_edge() -> None:
    """`hooks.run._gone_cold` asks the guard nothing within COLD_MIN of the last call: no cache is
    cold for sure that soon only while COLD_MIN is at most the margin the edge adds to the shortest
    lifetime (core.eoq.EDGE_MARGIN); a larger one would deliver the alerts of calls whose cache has
    gone since."""
    from session_watcher.core.eoq import EDGE_MARGIN, cache_edge
    from session_watcher.hooks.run import COLD_MIN

    assert 0 < COLD_MIN <= EDGE_MARGIN
    assert cache_edge(0.0) >= COLD_MIN
