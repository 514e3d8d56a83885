"""OpenAI's prices and cache classes (core.prices_openai) as the one price table serves them (core.prices):
cRatio 10 / 12.5 / 25 by family, the tier on every dollar but not on cRatio, the 272K step, dated rows,
the cache lifetime floor per class; Claude's figures as they were."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from session_watcher.core import eoq, prices
from session_watcher.core import prices_openai as codex
from session_watcher.sessions.replay import fold
from tests.codex_lines import THREAD, Thread, meta, turn, write_rollout

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(("model", "ratio"), [
    ("gpt-5.4", 10.0), ("gpt-5.5", 10.0), ("gpt-5.3-codex-spark", 10.0), ("gpt-5.6-sol", 12.5),
    ("gpt-5.6-luna", 12.5), ("gpt-6-sol", 12.5), ("gpt-6-astra", 12.5), ("gpt-6.1-sol", 25.0),
    ("gpt-6.2-sol", 25.0), ("gpt-6.2-sol[priority]", 25.0),
])
def test_c_ratio_by_family(model: str, ratio: float) -> None:
    assert prices.c_ratio(model, "5m") == pytest.approx(ratio)
    assert codex.c_ratio(model) == pytest.approx(ratio)


def test_dollars_of_reads_and_writes() -> None:
    """No write premium before gpt-5.6 (the uncached input written at the input price), 1.25x from it."""
    assert prices.write_usd("gpt-5.5", 1e6, 0) == pytest.approx(5.0)
    assert prices.read_usd("gpt-5.5", 1e6) == pytest.approx(0.5)
    assert prices.write_usd("gpt-5.6-sol", 1e6, 0) == pytest.approx(5.0)
    assert prices.read_usd("gpt-6.2-sol", 1e6) == pytest.approx(0.1)
    assert prices.write_usd("gpt-6.2-sol", 1e6, 0) == pytest.approx(2.5)


def test_a_tier_scales_every_dollar_and_not_c_ratio() -> None:
    assert prices.input_price("gpt-5.6-sol[priority]") == pytest.approx(8.0)
    assert prices.input_price("gpt-5.6-sol[flex]") == pytest.approx(2.0)
    assert prices.input_price("gpt-6.2-sol[ultrafast]") == pytest.approx(6.0)
    assert prices.input_price("gpt-6.2-sol[some-new-tier]") == pytest.approx(2.0)
    standard = prices.read_usd("gpt-5.6-sol", 1e6)
    assert standard is not None
    assert prices.read_usd("gpt-5.6-sol[priority]", 1e6) == pytest.approx(2 * standard)


def test_the_long_context_step_doubles_every_rate_of_a_call_past_272k() -> None:
    assert codex.call_factor("gpt-6.2-sol", 272_000) == 1.0
    assert codex.call_factor("gpt-6.2-sol", 272_001) == 2.0
    assert codex.call_factor("gpt-6-sol[priority]", 300_000) == 2.0
    assert codex.call_factor("gpt-5.5", 300_000) == 1.0  # no such step on older models
    short = codex.call_usd("gpt-6.2-sol", 1_000, 200_000, 71_000, 2_000, out_price=12.0)
    long = codex.call_usd("gpt-6.2-sol", 1_000, 200_000, 72_000, 2_000, out_price=12.0)
    assert short == pytest.approx((1_000 * 2 + 200_000 * 0.1 + 71_000 * 2.5 + 2_000 * 12) / 1e6)
    assert long == pytest.approx(2 * (1_000 * 2 + 200_000 * 0.1 + 72_000 * 2.5 + 2_000 * 12) / 1e6)
    assert codex.call_usd("gpt-9-unknown", 1, 1, 1, 1) is None


def test_a_dated_row_holds_from_its_date() -> None:
    jul_1, aug_1 = 1782864000.0, 1785542400.0
    old = codex.TABLE["gpt-5.6-sol"]
    codex.TABLE["gpt-5.6-sol"] = [(0, 3.0, 0.1, 1.25, False), *old]
    try:
        assert codex.entry("gpt-5.6-sol", jul_1) == (3.0, 0.1, 1.25)
        assert codex.entry("gpt-5.6-sol", aug_1) == (4.0, 0.1, 1.25)
    finally:
        codex.TABLE["gpt-5.6-sol"] = old
    assert codex.entry("gpt-5.6-sol", jul_1) == (4.0, 0.1, 1.25)  # no older row known: the earliest


def test_claude_figures_are_unchanged() -> None:
    assert prices.c_ratio("claude-opus-4-6", "5m") == pytest.approx(12.5)
    assert prices.c_ratio("claude-opus-4-6", "1h") == pytest.approx(20.0)
    assert prices.c_ratio("claude-opus-5-5", "5m") == pytest.approx(25.0)
    assert prices.write_usd("claude-sonnet-4-5", 1e6, 1e6) == pytest.approx(3.0 * 1.25 + 3.0 * 2.0)
    assert prices.write_multiplier("claude-fable-5-1") == prices.WRITE_5M
    assert prices.input_price("gpt") is None
    assert prices.input_price("not-a-model") is None


def test_the_cache_lifetime_floor_per_class() -> None:
    """30 minutes on the models that charge for a write, the in-memory class's 10 before them;
    Claude Code's inferred cliff is not Codex's."""
    cliff = {"5m": 420.0, "1h": None}
    assert eoq.cache_lifetime("5m", cliff, "gpt-5.6-sol") == codex.FLOOR_NEW == 1800.0
    assert eoq.cache_lifetime("5m", cliff, "gpt-6.2-sol[priority]") == 1800.0
    assert eoq.cache_lifetime("5m", cliff, "gpt-5.5") == codex.FLOOR_OLD == 600.0
    assert eoq.cache_lifetime("5m", cliff, "claude-opus-4-6") == 420.0
    assert eoq.cache_lifetime("5m", None, None) == 300.0


@pytest.mark.parametrize(("model", "cold"), [("gpt-5.6-sol", 0), ("gpt-5.5", 1)])
def test_a_20_minute_gap_is_a_cold_return_only_on_the_older_class(tmp_path: Path, model: str, cold: int) -> None:
    t = Thread(records=False)
    t.call(1, 20_000, 0, 100)
    t.call(2, 21_000, 20_000, 100)
    t.call(22, 22_000, 2_000, 100)  # 20 minutes idle
    path = write_rollout(tmp_path / f"rollout-{THREAD}.jsonl", [meta(), turn(0, model), *t.lines])
    state = fold(str(path))[0]
    assert state["engine"]["tally"]["cold"] == cold
    assert state["engine"]["tally"]["coldUsd"] == pytest.approx(cold * 20_000 * 5.0 / 1e6)


def test_the_context_window_codex_reports() -> None:
    from session_watcher.core.window import context_window

    assert context_window(None, ["gpt-5.6-sol"], 236_282) == 258_400  # not the 1M of a Claude model past 200K
    assert context_window(None, ["gpt-6.2-sol[priority]"], 10) == 475_000
    assert context_window(None, ["claude-opus-4-6"], 236_282) == 1_000_000
