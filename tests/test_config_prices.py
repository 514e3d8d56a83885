"""The user's own prices (the config's `[prices."MODEL"]`) over the built-in tables, Claude's and
OpenAI's alike: checked by the config (a bad value refused with the model and field named), handed
to the core by the shell (core.prices.use), and every dollar of a fixture thread moved by the ratio
they set, in the backtest, replay, the report and a live hook's state alike."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.base import config, paths
from session_watcher.core import prices
from session_watcher.core.usererrors import ConfigError
from session_watcher.sessions import backtest as shell
from tests.codex_lines import FIXTURES
from tests.oracle import one_message, sw

if TYPE_CHECKING:
    from collections.abc import Iterator

THREAD = "019f6bcb-eb00-7ea1-99ef-7fe2d29e2bba"  # gpt-5.6-sol: input $4, read 0.1x, write 1.25x
ROLLOUT = FIXTURES / f"rollout-{THREAD}.jsonl"


@pytest.fixture
def clean_prices() -> Iterator[None]:
    prices.use({})
    yield
    prices.use({})


def _usd(doc: dict[str, Any]) -> list[float]:
    return [seg["policies"][p]["usd"] for seg in doc["segmentList"] for p in ("actual", "alert", "hindsight")]


def test_an_input_price_moves_every_dollar_of_a_thread_by_its_ratio(clean_prices: None) -> None:
    """input 4 -> 6 on gpt-5.6-sol: every dollar x1.5; the read-price units, restarts and capture as
    before (a field left out keeps its ratio to input, so cRatio is unchanged)."""
    before = shell.session_doc(shell.load(str(ROLLOUT)), config.merge())
    prices.use({"gpt-5.6-sol": {"input": 6.0}})
    after = shell.session_doc(shell.load(str(ROLLOUT)), config.merge())
    assert _usd(after) == pytest.approx([u * 1.5 for u in _usd(before)], rel=1e-5)
    assert after["capture"] == before["capture"]
    assert [s["policies"]["alert"]["restartsAfter"] for s in after["segmentList"]] == [
        s["policies"]["alert"]["restartsAfter"] for s in before["segmentList"]]


def test_a_cache_read_price_changes_the_ratio_and_the_tier_still_scales(clean_prices: None) -> None:
    """cache_read $0.8 on gpt-5.6 (was 0.4): a read costs twice, cRatio halves (12.5 -> 6.25); a
    priority-tier call pays twice the user's price; 1h writes keep Claude's 2x unless set."""
    prices.use({"gpt-5.6": {"cache_read": 0.8}, "claude-sonnet-5": {"cache_write_1h": 6.0}})
    assert prices.read_usd("gpt-5.6-sol", 1e6) == pytest.approx(0.8)
    assert prices.c_ratio("gpt-5.6-sol", None) == pytest.approx(6.25)
    assert prices.read_usd("gpt-5.6-sol[priority]", 1e6) == pytest.approx(1.6)
    assert prices.write_usd("claude-sonnet-5-20261001", 0, 1e6) == pytest.approx(6.0)
    assert prices.write_usd("claude-sonnet-5-20261001", 1e6, 0) == pytest.approx(2.5)  # 1.25 x $2 kept
    assert prices.read_usd("gpt-5.5", 1e6) == pytest.approx(0.5)  # another model: the table's
    prices.use({})
    assert prices.read_usd("gpt-5.6-sol", 1e6) == pytest.approx(0.4)


def test_a_model_the_tables_do_not_know_is_priced_from_its_input(clean_prices: None) -> None:
    assert prices.read_usd("acme-coder-2", 1e6) is None
    prices.use({"acme-coder": {"input": 3.0}})
    assert prices.read_usd("acme-coder-2", 1e6) == pytest.approx(0.3)
    assert prices.c_ratio("acme-coder-2", "5m") == pytest.approx(12.5)


@pytest.mark.parametrize(("row", "said"), [
    ({"gpt-5.5": {"output": 10.0}}, "unknown field 'output'"),
    ({"gpt-5.5": {"input": 0}}, '[prices."gpt-5.5"] input: expected USD per million tokens'),
    ({"gpt-5.5": {"cache_read": -1.0}}, "at least 0.000001 and at most 10000, got -1.0"),
    ({"gpt-5.5": {"cache_read": 1e-299}}, "at least 0.000001 and at most 10000, got 1e-299"),
    ({"gpt-5.5": {"cache_write": 9.9e-7}}, "at least 0.000001 and at most 10000, got 9.9e-07"),
    ({"gpt-5.5": {"input": "cheap"}}, "got 'cheap'"),
    ({"gpt-5.5": {"input": float("inf")}}, "got inf"),
    ({"acme-coder": {"cache_read": 0.1}}, "no built-in price for this model, so it needs input"),
    ({"gpt-5.5": 3}, "expected a table of input, cache_read, cache_write, cache_write_1h"),
])
def test_a_bad_price_is_refused_naming_the_model_and_field(row: dict[str, Any], said: str) -> None:
    with pytest.raises(ConfigError, match="key 'prices'") as got:
        config.validate("config.toml", {"prices": row})
    assert said in str(got.value)


def test_the_price_floor_and_ceiling_are_said_where_prices_are_explained() -> None:
    """The range `config set` and the files take, in config.example.toml's comment above `prices` and in
    docs/configuration.md (the example said neither: a price under the floor was refused unsaid)."""
    repo = Path(__file__).resolve().parent.parent
    low, high = f"{config.PRICE_FLOOR:f}", f"{config.SPECS['prices'].high:,.0f}"
    example = (repo / "config.example.toml").read_text()
    comment = " ".join(line.lstrip("# ") for line in example[:example.index("\nprices = ")].split("\n")[-10:])
    assert f"at least {low} and at most {high}" in comment
    said = " ".join((repo / "docs" / "configuration.md").read_text().split())
    assert f"at least {low} and at most {high}" in said


def test_a_project_file_may_not_set_prices() -> None:
    with pytest.raises(ConfigError, match="may only be set in your own config"):
        config.validate("p.toml", {"prices": {"gpt-5.5": {"input": 1.0}}}, project=True)


def test_loading_the_config_hands_the_core_its_prices(clean_prices: None) -> None:
    Path(paths.user_config_file()).parent.mkdir(parents=True, exist_ok=True)
    Path(paths.user_config_file()).write_text('[prices."GPT-5.5"]\ninput = 10\n')
    try:
        cfg, errors = config.load_layers(None)
        assert errors == []
        assert cfg["prices"] == {"gpt-5.5": {"input": 10.0}}
        assert prices.read_usd("gpt-5.5", 1e6) == pytest.approx(1.0)  # 10 x 0.1
        cache: dict[str, Any] = {}
        _, error = config.load_cached(cache, None)  # type: ignore[arg-type]  # filled by the call
        assert error is None
        prices.use({})
        read_again = cache["values"]
        assert config.load_cached(cache, None)[0] is read_again  # type: ignore[arg-type]  # the cached copy
        assert prices.read_usd("gpt-5.5", 1e6) == pytest.approx(1.0)  # the hooks' cached config too
    finally:
        os.unlink(paths.user_config_file())


@pytest.mark.slow
def test_config_set_writes_a_row_and_refuses_a_bad_value() -> None:
    got = sw("config", "set", "prices.gpt-5.6-sol.input", "6")
    assert got.returncode == 0, got.stderr
    assert b"prices.gpt-5.6-sol.input = 6.0" in got.stdout
    got = sw("config", "set", "prices.gpt-5.6-sol.cache_read", "0.8")
    assert got.returncode == 0, got.stderr
    shown = json.loads(sw("config", "show", "--json").stdout)["effective"]["prices"]
    assert shown == {"gpt-5.6-sol": {"input": 6.0, "cache_read": 0.8}}
    before = Path(paths.user_config_file()).read_bytes()
    got = sw("config", "set", "prices.gpt-5.6-sol.cache_write", "-2")
    assert got.returncode == 2
    assert '[prices."gpt-5.6-sol"] cache_write: expected USD per million tokens' in one_message(got.stderr.decode())
    assert Path(paths.user_config_file()).read_bytes() == before
    os.unlink(paths.user_config_file())


@pytest.mark.slow
def test_config_set_of_a_row_echoes_it_on_one_line() -> None:
    """The row form the docs give: its echo is the table inline, as TOML (it was the table's block,
    its newlines escaped: `prices.gpt-5.5 = input = 4.0\\x0acache_read = 0.4\\x0a`)."""
    wide = {**os.environ, "COLUMNS": "1000"}  # no line of it wrapped for the width (it keeps within COLUMNS)
    try:
        got = sw("config", "set", "prices.gpt-5.5", "{input = 4.0, cache_read = 0.4}", env=wide)
        assert got.returncode == 0, got.stderr
        said = got.stdout.decode().splitlines()
        assert len(said) == 1
        assert said[0].startswith("prices.gpt-5.5 = {input = 4.0, cache_read = 0.4}  (in "), said
        got = sw("config", "set", "notify.channels", '["terminal", "message"]', env=wide)
        assert got.stdout.decode().startswith('notify.channels = ["terminal", "message"]  (in '), got.stdout
    finally:
        os.unlink(paths.user_config_file())


@pytest.mark.slow
def test_doctor_names_a_bad_price_and_a_hook_leaves_the_file_out() -> None:
    Path(paths.user_config_file()).parent.mkdir(parents=True, exist_ok=True)
    Path(paths.user_config_file()).write_text('[prices."gpt-5.5"]\ninput = -3\n')
    try:
        got = sw("doctor", env={**os.environ, "COLUMNS": "1000"})
        assert b"input: expected USD per million tokens" in got.stdout + got.stderr
        hook = sw("hook", "Stop", stdin=b'{"session_id": "x", "transcript_path": "/nonexistent"}')
        assert hook.returncode == 0
        assert hook.stdout == b""
    finally:
        os.unlink(paths.user_config_file())


@pytest.mark.slow
def test_backtest_replay_status_and_report_price_with_the_user_s_prices(tmp_path: Path) -> None:
    """[prices."gpt-5.6"] input = 8 (twice the table's $4) on a gpt-5.6-sol thread: backtest's,
    replay's, status's and report's dollars all double."""
    def figures() -> tuple[list[float], list[float], float]:
        bt = sw("backtest", "--json", str(ROLLOUT))
        assert bt.returncode == 0, bt.stderr
        rp = sw("replay", "--json", str(ROLLOUT))
        assert rp.returncode == 0, rp.stderr
        st = json.loads(sw("status", "--json", str(ROLLOUT)).stdout)
        rep = sw("report", "--json")
        assert rep.returncode == 0, rep.stderr
        session = next(s for s in json.loads(rep.stdout)["sessions"] if s["sessionId"] == THREAD)
        replayed = json.loads(rp.stdout)
        return (_usd(json.loads(bt.stdout)["sessions"][0]),
                [replayed["savingUsd"], replayed["coldReturns"]["usd"], st["savingUsd"], st["coldReturns"]["usd"]],
                session["cacheUsd"])

    live = Path(os.environ["HOME"]) / ".codex" / "sessions" / "2026" / "07" / "01"
    live.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROLLOUT, live / f"rollout-2026-07-01T00-00-00-{THREAD}.jsonl")
    before = figures()
    Path(paths.user_config_file()).parent.mkdir(parents=True, exist_ok=True)
    Path(paths.user_config_file()).write_text('[prices."gpt-5.6"]\ninput = 8.0\n')
    try:
        after = figures()
    finally:
        os.unlink(paths.user_config_file())
        shutil.rmtree(Path(os.environ["HOME"]) / ".codex")
    assert after[0] == pytest.approx([u * 2 for u in before[0]], rel=1e-5)
    assert after[1] == pytest.approx([u * 2 for u in before[1]], rel=1e-5)
    assert after[2] == pytest.approx(before[2] * 2, rel=1e-5)
    assert before[2] > 0
    assert min(before[1]) > 0
