"""Every JSON the CLI writes is standard JSON (no `NaN`, no `Infinity`), whatever `[prices]` the
config takes: a price below `config.PRICE_FLOOR` is refused (with a read price of 1e-299 against
writes of 10,000, `status`, `replay` and `backtest --json` wrote `Infinity`, and `backtest` stopped
on an overflow), and a figure JSON cannot hold is written null."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.oracle import TRANSCRIPTS, sw

FILES = ["short.jsonl", "tool_heavy.jsonl", "subagent.jsonl", "258c7280-ae70-4798-800f-63464d01a85d.jsonl"]
MODELS = ["claude-opus-4-6", "claude-sonnet-4-5", "claude-haiku-4-5"]


def strict(text: str) -> Any:
    """`text` read as standard JSON: `NaN`, `Infinity` and `-Infinity` refused."""
    def refuse(word: str) -> Any:
        raise AssertionError(f"{word} in the JSON")

    return json.loads(text, parse_constant=refuse)


def _prices(**row: float) -> str:
    return "".join(f'[prices."{m}"]\n' + "".join(f"{k} = {v!r}\n" for k, v in row.items()) for m in MODELS)


def _every_json(tmp_path: Path, codes: tuple[int, ...] = (0,), here: Path | None = None) -> list[str]:
    """What `status --json`, `replay --json` (and its `--trace`), `health --json`, `backtest --json`,
    `report --json` and `export --otlp --dry-run` write of the fixtures' sessions, each exiting with
    one of `codes`; `here`: the folder the sessions ran in (their folders, gone from this machine,
    otherwise: a replay leaves a user config that cannot be used out of such a session, as its hooks
    did)."""
    projects = tmp_path / "projects" / "-home-dev-proj"
    projects.mkdir(parents=True)
    for name in FILES:
        text = (TRANSCRIPTS / name).read_text()
        if here is not None:
            text = re.sub(r'"cwd":\s*"[^"]*"', lambda _: f'"cwd":{json.dumps(str(here))}', text)
        (projects / name).write_text(text)
    env = {**os.environ, "COLUMNS": "200"}
    outs = []
    for name in FILES:
        path = str(projects / name)
        one: list[tuple[str, ...]] = [("status", "--json", path), ("health", "--json", path),
                                      ("replay", "--json", "--trace", str(tmp_path / "t.jsonl"), path)]
        for args in one:
            proc = sw(*args, env=env)
            assert proc.returncode in codes, (args, proc.stderr)
            outs.append(proc.stdout.decode())
        if codes == (0,) or (tmp_path / "t.jsonl").exists():
            outs += (tmp_path / "t.jsonl").read_text().splitlines()
    every: list[tuple[str, ...]] = [("backtest", "--json", *(str(projects / n) for n in FILES))]
    for args in (*every,
                 ("report", "--json", "--projects", str(tmp_path / "projects")),
                 ("export", "--otlp", "--dry-run", "--projects", str(tmp_path / "projects"))):
        proc = sw(*args, env=env)
        assert proc.returncode in codes, (args, proc.stderr)
        outs.append(proc.stdout.decode())
    return outs


def _write_config(text: str) -> None:
    from session_watcher.base import paths

    Path(paths.user_config_file()).parent.mkdir(parents=True, exist_ok=True)
    Path(paths.user_config_file()).write_text(text)


@pytest.mark.slow
def test_a_read_price_of_1e_minus_299_is_refused_and_every_json_is_standard(tmp_path: Path) -> None:
    """Reads at 1e-299 against writes at 10,000 (the ceiling): `config set` refuses it, a file
    holding it is left out (and said), and every JSON is standard JSON."""
    set_ = sw("config", "set", "prices.claude-opus-4-6.cache_read", "1e-299")
    assert set_.returncode == 2
    assert "at least 0.000001" in " ".join(set_.stderr.decode().split())
    _write_config(_prices(input=1e4, cache_read=1e-299, cache_write=1e4, cache_write_1h=1e4))
    shown = sw("config", "show", "--json")
    assert shown.returncode == 1
    assert "at least 0.000001" in " ".join(shown.stderr.decode().split())
    # the commands that price sessions refuse to price them without your prices (exit 1, said, nothing
    # on stdout); `report` leaves the file out: standard JSON either way
    here = tmp_path / "work"
    here.mkdir()
    outs = [text for text in _every_json(tmp_path, codes=(0, 1), here=here) if text]
    assert len(outs) == 1  # report's
    for text in outs:
        strict(text)
    moved = tmp_path / "projects" / "-home-dev-proj" / "short.jsonl"
    assert f'"cwd":{json.dumps(str(here))}' in moved.read_text()
    proc = sw("status", "--json", str(moved))
    assert (proc.returncode, proc.stdout) == (1, b"")
    assert "at least 0.000001" in " ".join(proc.stderr.decode().split())
    # a session whose folder is gone folds without the file, as its hooks did, and says so: standard JSON
    gone = sw("status", "--json", str(TRANSCRIPTS / "short.jsonl"))
    assert gone.returncode == 0, gone.stderr
    assert strict(gone.stdout.decode())["calls"] > 0
    assert "the file is left out" in " ".join(gone.stderr.decode().split())


@pytest.mark.slow
@pytest.mark.parametrize("row", [
    {"input": 1e4, "cache_read": 1e-6, "cache_write": 1e4, "cache_write_1h": 1e4},
    {"input": 1e-6, "cache_read": 1e4, "cache_write": 1e-6, "cache_write_1h": 1e-6},
], ids=["reads-at-the-floor", "writes-at-the-floor"])
def test_at_the_prices_the_config_takes_every_figure_is_a_number(tmp_path: Path, row: dict[str, float]) -> None:
    """At the floor against the ceiling, both ways, the config is taken and every JSON is standard
    JSON with no figure written null for want of a number (the floor is high enough)."""
    _write_config(_prices(**row))
    assert sw("config", "show", "--json").returncode == 0
    for text in _every_json(tmp_path):
        strict(text)


def test_the_cli_writes_a_figure_json_cannot_hold_as_null() -> None:
    """The CLI's one JSON writer: NaN and infinities, nested anywhere, become null; the rest is
    `json.dumps`'s text, on one line or indented; the report's text (`reports.jsontext`) alike."""
    from session_watcher.cli.messages import json_text
    from session_watcher.reports.jsontext import dumps, dumps_spaced

    doc = {"a": float("inf"), "b": [1.5, float("nan"), {"c": -float("inf")}], "d": (2, "x"), "e": 0.1}
    assert json_text(doc) == '{"a": null, "b": [1.5, null, {"c": null}], "d": [2, "x"], "e": 0.1}'
    assert dumps_spaced(doc) == json_text(doc)
    assert json_text(doc, separators=(",", ":")) == '{"a":null,"b":[1.5,null,{"c":null}],"d":[2,"x"],"e":0.1}'
    assert dumps(doc) == json_text(doc, separators=(",", ":"))
    assert json_text(doc, indent=1) == json.dumps({**doc, "a": None, "b": [1.5, None, {"c": None}]}, indent=1)
    assert json_text({"e": 0.1}, indent=2) == json.dumps({"e": 0.1}, indent=2)
    assert json_text([1, 2], separators=(",", ":")) == "[1,2]"
    assert json_text({1: "é"}, separators=(",", ":")) == json.dumps({1: "é"}, separators=(",", ":"))
    with pytest.raises(TypeError):
        json_text({"a": object()})


def test_the_session_page_and_the_otlp_body_write_a_figure_json_cannot_hold_as_null() -> None:
    """The session page's data (written whole, a block of rows or story rows at a time, or a row
    the live view sends) and the OTLP/JSON body were written with `allow_nan=False`: a figure JSON
    cannot hold raised where every JSON the CLI writes has it null. They write it null now, the
    rest `json.dumps`'s very text."""
    from session_watcher.otlp.wire import encode
    from session_watcher.reports import live_view
    from session_watcher.reports.session_page import model_json
    from session_watcher.reports.session_page_data import Packed, story_dict, story_json

    inf, nan = float("inf"), float("nan")
    story = Packed([(1.0, 1, 100, inf, 1.5, None, "green", 0, 0, nan, ()),
                    (2.0, 2, 200, 0.5, 1.5, None, "amber", 1, 1, 0.25, ())], story_dict, story_json)
    model = {"sessionId": "s", "x": inf, "rows": [{"kind": "call", "start": nan, "n": 1}], "story": story,
             "fork": {"calls": [-inf, 2]}}
    nulled: dict[str, Any] = {"sessionId": "s", "x": None, "rows": [{"kind": "call", "start": None, "n": 1}],
              "story": [{"ts": 1.0, "call": 1, "L": 100, "x": None, "xSweet": 1.5, "br": None, "lamp": "green",
                         "bills": 0, "billDone": 0, "billProgress": None, "alerts": []},
                        {"ts": 2.0, "call": 2, "L": 200, "x": 0.5, "xSweet": 1.5, "br": None, "lamp": "amber",
                         "bills": 1, "billDone": 1, "billProgress": 0.25, "alerts": []}],
              "fork": {"calls": [None, 2]}}
    assert "".join(model_json(model)) == json.dumps(nulled, separators=(",", ":"))
    assert live_view._dumps({"a": [inf, "é"]}) == '{"a":[null,"\\u00e9"]}'
    body, kind = encode({"resourceMetrics": [{"asDouble": nan, "w": 1.5}]}, "http/json", "metrics")
    assert (body, kind) == (b'{"resourceMetrics":[{"asDouble":null,"w":1.5}]}', "application/json")


def test_a_text_kept_for_the_report_never_holds_a_figure_json_cannot_hold() -> None:
    """`reports.jsontext.finite_pieces`, what the report's text passes before the index keeps it (a
    warm run sends it as it is): pieces with no `NaN` or `Infinity` are the same pieces, not copied;
    a word only inside a string (after no separator, or read and written again the same) leaves them
    so too (a folder named `NaN` sent no warm run's text as stretches of the last); a figure written
    `NaN` or `Infinity` by any writer in a new piece, compact or spaced, is null, the object left
    open as it came, the kept text's stretches (memoryviews, checked when it was kept) with it."""
    from session_watcher.reports.jsontext import finite_pieces

    clean: list[bytes | memoryview] = [b'{"a":1.5,', memoryview(b'"b":[1,2]')]
    assert finite_pieces(clean, b"}") is clean
    worded: list[bytes | memoryview] = [b'{"project":"/home/NaN/Infinity",', b'"n":-1e-05']
    assert finite_pieces(worded, b"}") is worded  # a word after no separator: not read
    spaced: list[bytes | memoryview] = [b'{"cwd":"/a/:NaN/x Infinity",', memoryview(b'"b":1'), b',"c":"[-NaN"']
    assert finite_pieces(spaced, b"}") is spaced  # read, and the same text: the pieces, the stretch kept
    bad: list[bytes | memoryview] = [b'{"a":NaN,"b":[-Infinity,', memoryview(b'2],"c":"NaN"')]
    assert finite_pieces(bad, b"}") == [b'{"a":null,"b":[null,2],"c":"NaN"']
    assert finite_pieces([b"[1,Infinity]"]) == [b"[1,null]"]
    assert finite_pieces([b'{"a": NaN, "b": 1}']) == [b'{"a":null,"b":1}']  # json.dumps' own spacing
    after: list[bytes | memoryview] = [b'{"a":', memoryview(b'[1,2],"b":'), b"-Infinity"]  # a piece of its own
    assert finite_pieces(after, b"}") == [b'{"a":[1,2],"b":null']


@pytest.mark.slow
def test_report_json_to_a_pipe_or_a_file_writes_the_guards_estimates_as_a_number(tmp_path: Path) -> None:
    """A guard log line whose estimate is `1e999` (an infinity as JSON reads it) made the guard's
    `notSentEstimatedUsd` infinite: `report --json` at a terminal wrote it null, to a pipe or a file
    (its text as the index keeps it, sent as it is) `Infinity`, then null. The estimate adds nothing
    now: the figure is a number (the schema's), standard JSON every way, the run after too (from the
    kept text)."""
    import shutil
    import subprocess

    from session_watcher.base import paths
    from tests.oracle import SW

    projects = tmp_path / "projects" / "-home-dev-proj"
    projects.mkdir(parents=True)
    shutil.copy(TRANSCRIPTS / "short.jsonl", projects / "short.jsonl")
    sid = "short"  # a session is named by its file's name
    log = Path(paths.guard_log_file())
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(json.dumps({"ts": 4e9, "afterTs": 4e9, "sessionId": sid, "usd": usd}) + "\n"
                           for usd in (1e999, 1.7e308, 1.7e308, -1.0, 0.25)))
    assert "Infinity" in log.read_text()
    args = ("report", "--json", "--projects", str(tmp_path / "projects"))
    for run in ("first", "kept"):
        piped = sw(*args)
        assert piped.returncode == 0, piped.stderr
        doc = strict(piped.stdout.decode())
        assert doc["index"]["cached"] is (run == "kept")
        assert doc["guard"]["notSent"] == 5
        assert doc["guard"]["notSentEstimatedUsd"] == 1.7e308 + 0.25  # the second 1.7e308 would make an infinity
        out = tmp_path / f"{run}.json"
        with out.open("wb") as fh:
            proc = subprocess.run([str(SW), *args], stdout=fh, stderr=subprocess.PIPE, timeout=60, check=False)
        assert proc.returncode == 0, proc.stderr
        written = strict(out.read_text())
        assert written["index"]["cached"] is True
        assert (written["guard"], written["sessions"]) == (doc["guard"], doc["sessions"])


def test_a_report_holding_a_figure_json_cannot_hold_writes_it_null_cold_and_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No figure the report makes from what it reads can be NaN or an infinity any more (the guard
    log's estimates were the last way: above); should one be, the text `report --json` sends to a
    pipe or a file (`report_json_pieces`, the index's kept text the next run) holds it as null, not
    `Infinity`. The document here holds one: the guard's summary, made infinite."""
    import shutil

    from session_watcher.reports import collect, merge, warmth

    projects = tmp_path / "projects" / "-home-dev-proj"
    projects.mkdir(parents=True)
    shutil.copy(TRANSCRIPTS / "short.jsonl", projects / "short.jsonl")
    real = warmth.summarize_guard

    def infinite(*args: Any) -> dict[str, Any]:
        return {**real(*args), "notSentEstimatedUsd": float("inf"), "wentAheadUsd": float("nan")}

    monkeypatch.setattr(merge, "summarize_guard", infinite)
    monkeypatch.setattr(warmth, "summarize_guard", infinite)
    db = str(tmp_path / "index.sqlite3")
    for run in ("first", "kept"):
        text = b"".join(bytes(p) for p in collect.report_json_pieces([str(tmp_path / "projects")], db)) + b"}"
        doc = strict(text.decode())
        assert doc["sessions"], run
        assert doc["index"]["cached"] is (run == "kept")
        assert (doc["guard"]["notSentEstimatedUsd"], doc["guard"]["wentAheadUsd"]) == (None, None), run


@pytest.mark.slow
def test_codex_prices_at_the_floor_price_every_rollout(tmp_path: Path) -> None:
    """Your OpenAI input price at the floor (the other prices its built-in ratios): `backtest` prices
    every Codex rollout (it stopped on a division by zero, "internal error": a segment's best restart
    saved under half a millionth of a dollar, which its figure rounds to 0), and writes standard JSON,
    as `status` and `replay` do."""
    _write_config('[prices."gpt-5"]\ninput = 0.000001\n')
    rollouts = sorted(str(p) for p in (TRANSCRIPTS.parent / "codex").glob("rollout-*.jsonl"))
    assert len(rollouts) >= 5
    proc = sw("backtest", "--json", *rollouts)
    assert proc.returncode == 0, proc.stderr
    doc = strict(proc.stdout.decode())
    assert [s["priced"] for s in doc["sessions"]] == [True] * len(rollouts)
    assert [s["model"].startswith("gpt-5") for s in doc["sessions"]] == [True] * len(rollouts)
    for path in rollouts[:2]:
        for args in (("status", "--json", path), ("replay", "--json", path)):
            proc = sw(*args)
            assert proc.returncode == 0, (args, proc.stderr)
            strict(proc.stdout.decode())
