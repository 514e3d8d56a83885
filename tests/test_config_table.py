"""The one key table (base/config.KEYS): the checks, the defaults and the project rule come from it,
and docs/configuration.md and config.example.toml hold what tools/config_table.py writes from it."""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest

from session_watcher.base import config
from session_watcher.base.config import KEYS, Key
from session_watcher.core.usererrors import ConfigError
from tools import config_table as tool

REPO = Path(__file__).resolve().parent.parent
NUMBERS = ("number", "whole", "minutes", "seconds")


def at(doc: dict[str, Any], name: str) -> Any:
    """The value of a (dotted) key in a parsed document, KeyError when it is not set."""
    table, _, sub = name.rpartition(".")
    return (doc[table] if table else doc)[sub]


def test_the_docs_and_the_example_hold_the_key_table() -> None:
    """Both files' generated parts are what the table gives (run tools/config_table.py after a change)."""
    assert tool.stale() == []


def test_a_key_added_or_changed_without_the_generator_is_drift(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The check can fail: a new key, or a changed range, makes both files stale; the generator mends them."""
    for name in tool.FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, tmp_path / name)
    assert tool.stale(tmp_path) == []
    monkeypatch.setattr(config, "KEYS", (*KEYS, Key("remind_floor", "whole", 4, "a new key", low=0, high=9)))
    assert tool.stale(tmp_path) == list(tool.FILES)
    for name in tool.FILES:
        (tmp_path / name).write_text(tool.rendered(name, (tmp_path / name).read_text()))
    assert tool.stale(tmp_path) == []
    assert "| `remind_floor` | `4` | a whole number, 0 to 9 | no | a new key |" in (
        tmp_path / "docs/configuration.md").read_text()
    widened = tuple(Key(k.name, k.kind, k.default, k.doc, low=k.low, high=k.high * 2, project=k.project)
                    if k.name == "bp_red" else k for k in KEYS)
    monkeypatch.setattr(config, "KEYS", widened)
    assert tool.stale(tmp_path) == list(tool.FILES)


def test_the_generator_refuses_a_file_without_its_markers() -> None:
    with pytest.raises(ValueError, match="expected one line"):
        tool.replaced("a\nb\n", tool.DOCS_BEGIN, tool.DOCS_END, ["x"])


def test_the_example_sets_each_key_at_its_default() -> None:
    """Below its generated list, the example sets every key to its default (an unset one is shown
    commented out), and the whole file is a valid config."""
    text = (REPO / "config.example.toml").read_text()
    doc = tomllib.loads(text)
    for k in KEYS:
        if k.default is None:
            assert f"\n# {k.name} = " in text, k.name
        else:
            assert at(doc, k.name) == k.default, k.name
    assert config.validate("config.example.toml", doc) == {k: v for k, v in config.DEFAULTS.items() if k in doc}


@pytest.mark.parametrize("k", KEYS, ids=lambda k: k.name)
def test_each_default_passes_its_own_check(k: Key) -> None:
    """A table line whose default its own check refuses fails here (None: a key unset by default)."""
    if k.default is not None:
        assert config._check("t.toml", k.name, k.default) == k.default
    assert at(config.DEFAULTS, k.name) == k.default  # type: ignore[arg-type]


@pytest.mark.parametrize("k", [k for k in KEYS if k.kind in NUMBERS], ids=lambda k: k.name)
def test_each_number_takes_its_range_and_nothing_past_it(k: Key) -> None:
    """The range the docs print is the one checked, ends included; the error says it."""
    for value in (k.low, k.high):
        config._check("t.toml", k.name, value)
    step = 1 if k.kind == "whole" else k.low / 2 or 0.5
    for bad in (k.low - step, k.high + step, "1", True):
        with pytest.raises(ConfigError) as err:
            config._check("t.toml", k.name, bad)
        # a number in quotes is named a string, with the way to write it (tests/test_cli.py)
        got = f"'1', a string: a number is written without quotes ({k.name.split('.')[-1]} = 1)" if bad == "1" \
            else repr(bad)
        assert str(err.value) == f"t.toml: key '{k.name}': expected {config.expected(k)}, got {got}"
        assert f"{k.low:g} to {k.high:g}" in str(err.value)


@pytest.mark.parametrize("k", [k for k in KEYS if k.kind == "choice"], ids=lambda k: k.name)
def test_each_choice_is_taken_and_an_alias_read_as_its_new_name(k: Key) -> None:
    for choice in k.choices:
        assert config._check("t.toml", k.name, choice) == k.aliases.get(choice, choice)  # type: ignore[call-overload]
    with pytest.raises(ConfigError, match="expected one of"):
        config._check("t.toml", k.name, "nope")


def test_a_project_file_may_set_the_keys_marked_so_and_no_other() -> None:
    for k in KEYS:
        value = k.low if k.default is None else k.default
        table, _, sub = k.name.rpartition(".")
        doc = {table: {sub: value}} if table else {sub: value}
        if k.project:
            assert config.validate("p.toml", doc, project=True) == doc, k.name
        else:
            with pytest.raises(ConfigError, match="may only be set in your own config"):
                config.validate("p.toml", doc, project=True)
    assert tuple(k.name for k in KEYS if k.project) == config.PROJECT_KEYS
    assert "guard_x" in config.PROJECT_KEYS
    assert "guard" not in config.PROJECT_KEYS


def test_unknown_keys_name_every_known_one_in_the_table_s_order() -> None:
    with pytest.raises(ConfigError) as err:
        config._check("t.toml", "otlp.nope", 1)
    assert str(err.value).endswith("(known: " + ", ".join(config.known_keys()) + ")")
    assert set(config.known_keys()) == {k.name for k in KEYS}


def test_the_model_s_parameters_are_the_project_keys_and_the_cliff() -> None:
    """core/shapes.py ModelParams names what the core reads; config.model_params builds it from a
    settled config, the user's own tables and keys left out."""
    from session_watcher.core import shapes

    names = set(shapes.ModelParams.__required_keys__) | set(shapes.ModelParams.__optional_keys__)
    assert names == {*config.PROJECT_KEYS, "cliff"}
    cfg = config.merge({"guard_x": 2.0, "notify": {"remind_min": 3}})
    params = config.model_params(cfg)
    assert set(params) == set(config.PROJECT_KEYS)  # merge() alone adds no cliff
    assert params["guard_x"] == 2.0
    assert "notify" not in params
    assert set(config.model_params({**cfg, "cliff": {"5m": 300.0, "1h": None}})) == names


@pytest.mark.slow  # the fold asks git which files it ignores
def test_a_fold_hands_the_core_only_the_model_s_parameters(monkeypatch: pytest.MonkeyPatch) -> None:
    """replay's fold, as the hooks' (state.session.sync), gives engine.fold the model's parameters
    only, and folds the same as with the whole config."""
    from session_watcher.core import engine
    from session_watcher.sessions import replay
    from tests.oracle import TRANSCRIPTS

    transcript = str(TRANSCRIPTS / "subagent.jsonl")
    whole = replay.replay(transcript, cfg=config.merge())
    seen: list[set[str]] = []
    real = engine.fold

    def fold(state: Any, events: Any, cfg: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(set(cfg))
        return real(state, events, cfg, *args, **kwargs)

    monkeypatch.setattr(engine, "fold", fold)
    assert replay.replay(transcript, cfg=config.merge()) == whole
    assert seen
    assert all(keys == set(config.PROJECT_KEYS) for keys in seen)


def test_cratio_s_words_name_every_ratio_the_price_table_gives() -> None:
    """cRatio's help (docs/configuration.md's table) said "12.5 or 20" when unset, but a model whose
    cache read costs 0.05x or 0.025x its input (Opus 5.5, Mythos 5.1) prices at 25 / 40 or 50 / 80,
    and a Codex thread at 10 (gpt-5.5: no write premium) or 25 (gpt-6.2-sol): each ratio the built-in
    tables give, Claude's for 5-minute and 1-hour writes and OpenAI's, is named there and in
    config.example.toml's comment."""
    from session_watcher.core import prices, prices_openai

    ratios = {f"{w / read:g}" for _, read in prices.TABLE.values() for w in (prices.WRITE_5M, prices.WRITE_1H)}
    assert ratios == {"12.5", "20", "25", "40", "50", "80"}
    # a Codex thread's, 5-minute class alone (Codex's default model, gpt-6.2-sol, at 25; gpt-5.5 at 10)
    codex = {f"{row[3] / row[2]:g}" for rows in prices_openai.TABLE.values() for row in rows}
    assert codex == {"10", "12.5", "25"}
    assert f"{prices.c_ratio('gpt-5.5', '5m'):g}" == "10"
    ratios |= codex
    words = config.SPECS["cRatio"].doc
    example = (REPO / "config.example.toml").read_text()
    comment = example[example.index("# Cache write / cache read price ratio"):example.index("# cRatio =")]
    for r in ratios:
        assert re.search(rf"(?<![\d.]){re.escape(r)}(?![\d.])", words), (r, words)
        assert re.search(rf"(?<![\d.]){re.escape(r)}(?![\d.])", comment), (r, comment)
