"""The cold-cache guard in the warmth report: the inferred cliffs it hands to the guard, and the count
of cold prompts warned about and what they cost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import jsonschema
import pytest

from session_watcher.reports.warmth import Call, Session, session_part
from tests.builders import guard_summary

if TYPE_CHECKING:
    from pathlib import Path

from tests.test_report_cli import SCHEMA, report
from tests.test_warmth import COLD, T0, WARM, Transcript, cliff_session


def call(ts: float, cw: int, ttl: str = "5m", model: str = "claude-opus-4-6") -> Call:
    return Call(f"k{ts}", ts, model, 3, 50, 1000, cw, cw if ttl == "5m" else 0, cw if ttl == "1h" else 0)


def warning(sid: str, ts: float, after: float, usd: float = 0.48, mode: str = "warn") -> dict[str, Any]:
    return {"ts": ts, "sessionId": sid, "mode": mode, "afterTs": after, "tokens": 76_178, "usd": usd}


def test_a_warned_prompt_that_went_ahead_costs_its_calls_writes() -> None:
    s = Session("a", "p", [call(1000, 500), call(3000, 80_000)], {}, 2, 3000)
    got = guard_summary([warning("a", 2990, 1000)], [s])
    assert got == {"warned": 1, "blocked": 0, "wentAhead": 1, "wentAheadTokens": 80_000,
                   "wentAheadUsd": 0.5, "notSent": 0, "notSentEstimatedUsd": 0.0}


def test_a_warned_prompt_with_no_later_call_was_not_sent() -> None:
    s = Session("a", "p", [call(1000, 500)], {}, 1, 1000)
    got = guard_summary([warning("a", 2990, 1000, mode="block"), warning("gone", 2990, 1000)], [s])
    assert (got["warned"], got["blocked"], got["wentAhead"], got["notSent"]) == (2, 1, 0, 1)
    assert got["notSentEstimatedUsd"] == 0.48  # the other session is not in this report: not counted


@pytest.mark.parametrize("bad", [float("inf"), float("nan"), -0.25, -float("inf"), 10 ** 400, True])
def test_a_log_lines_estimate_that_is_no_amount_is_counted_and_not_added(bad: object) -> None:
    """A guard log line's `usd` of `1e999` (an infinity as JSON reads it), NaN or below 0 made
    `notSentEstimatedUsd` no number (the schema's, at least 0): `report --json` wrote it null, or
    less than the other warnings' estimates. The warning still counts; its estimate adds nothing."""
    s = Session("a", "p", [call(1000, 500)], {}, 1, 1000)
    got = guard_summary([warning("a", 2990, 1000), {**warning("a", 2995, 1000), "usd": bad}], [s])
    assert (got["warned"], got["notSent"]) == (2, 2)
    assert got["notSentEstimatedUsd"] == 0.48


def test_estimates_summing_past_any_float_leave_the_figure_a_number() -> None:
    """Two lines of 1.7e308, each a float, sum to an infinity: the one that would takes it past adds
    nothing, so the figure stays the largest sum a float holds."""
    s = Session("a", "p", [call(1000, 500)], {}, 1, 1000)
    got = guard_summary([warning("a", 2990, 1000, usd=1.7e308), warning("a", 2995, 1000, usd=1.7e308)], [s])
    assert got["notSent"] == 2
    assert got["notSentEstimatedUsd"] == 1.7e308


def test_since_applies_to_the_warnings_time() -> None:
    s = Session("a", "p", [call(1000, 500)], {}, 1, 1000)
    assert guard_summary([warning("a", 2990, 1000)], [s], since=3000.0)["warned"] == 0


def sw_home(base: Path) -> Path:
    return base / "home"


@pytest.mark.slow
def test_report_writes_the_inferred_cliffs_and_the_config_reads_them(tmp_path: Path) -> None:
    proj = tmp_path / "claude" / "projects" / "-home-u-p"
    cliff_session("five", "5m", [20, 45, 90, 190, 220, 250, 280, 299], [301, 420, 600, 900, 1150]).write(proj)
    r = report(tmp_path, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads((sw_home(tmp_path) / "state" / "cliff.json").read_text())
    assert (doc["5m"], doc["1h"]) == (300, None)
    assert doc["evidence"] == {"5m": [5, 0, 5, 5]}  # returns below and cold of them, above and cold: the guard's words
    env = {**os.environ, "SESSION_WATCHER_HOME": str(sw_home(tmp_path))}
    shown = subprocess.run([sys.executable, "-m", "session_watcher", "config", "show", "--json"], capture_output=True,
                           text=True, env=env, cwd=tmp_path, timeout=60, check=True)
    assert json.loads(shown.stdout)["effective"]["cliff"] == {"5m": 300.0, "1h": None, "evidence": {"5m": [5, 0, 5, 5]}}
    # a report over a window has less evidence: it leaves the file as it is
    (sw_home(tmp_path) / "state" / "cliff.json").write_text('{"5m": 1234}')
    assert report(tmp_path, "--since", "2026-03-02").returncode == 0
    assert json.loads((sw_home(tmp_path) / "state" / "cliff.json").read_text()) == {"5m": 1234}


@pytest.mark.slow
def test_report_counts_the_guards_warnings_and_sees_new_ones(tmp_path: Path) -> None:
    proj = tmp_path / "claude" / "projects" / "-home-u-p"
    # a 5-minute session: warm, then 20 minutes idle, then a cold call re-writing 30k
    Transcript("back").call(T0, *WARM).call(T0 + 30, *WARM).call(T0 + 1230, *COLD).write(proj)
    Transcript("left").call(T0, *WARM).call(T0 + 30, *WARM).write(proj)
    log = sw_home(tmp_path) / "state" / "guard-warnings.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text(json.dumps(warning("back", T0 + 1229, T0 + 30)) + "\n")
    r = report(tmp_path, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["guard"]["wentAhead"] == 1
    assert doc["guard"]["wentAheadTokens"] == COLD[1]
    assert doc["guard"]["wentAheadUsd"] == COLD[1] * 6.25e-6
    with log.open("a") as fh:  # a new warning: the cached report must not hide it
        fh.write(json.dumps(warning("left", T0 + 2000, T0 + 30, usd=0.31, mode="block")) + "\n")
    text = " ".join(line.strip() for line in report(tmp_path).stdout.splitlines())  # wrapped at 100 columns
    assert ("cold-cache guard: 2 cold prompts warned about (1 blocked once); 1 went ahead and re-wrote 30k "
            "tokens ($0.19); 1 not sent again in its session (sending it would have re-written ~$0.31)") in text
    html = tmp_path / "r.html"
    assert report(tmp_path, "--html", str(html)).returncode == 0
    assert '<p id="guard">cold-cache guard: 2 cold prompts' in html.read_text()


@pytest.mark.slow
def test_no_warnings_yet(tmp_path: Path) -> None:
    proj = tmp_path / "claude" / "projects" / "-home-u-p"
    Transcript("one").call(T0, *WARM).write(proj)
    assert "cold-cache guard: no cold prompt warned about yet" in report(tmp_path).stdout


def test_scatter_text_is_the_scatter_list_as_json() -> None:
    """A session's scatter written straight as text is json.dumps of the list the dict path makes, for
    float times (the fast writer) and for int times (json's own writer)."""
    for t0 in (1000, 1000.25):
        s = Session("a\\u00e9\"", "p", [call(t0, 500), call(t0 + 301, 80_000, "1h"), call(t0 + 302, 0),
                                         call(t0 + 9000, 12, "5m")], {}, 4, t0 + 9000)
        as_text = session_part(s, None, 0.0, True)
        as_list = session_part(s, None, 0.0, False)
        assert as_text is not None
        assert as_list is not None
        assert len(as_list.scatter) == 3
        assert "[" + as_text.scatter + "]" == json.dumps(as_list.scatter, separators=(",", ":"))


@pytest.mark.slow
def test_report_says_none_went_ahead_without_a_zero_re_write(tmp_path: Path) -> None:
    """Every prompt the guard warned about was held and never sent: "none went ahead", where the report
    said "0 went ahead and re-wrote 0 tokens ($0.00)"."""
    proj = tmp_path / "claude" / "projects" / "-home-u-p"
    Transcript("left").call(T0, *WARM).call(T0 + 30, *WARM).write(proj)
    log = sw_home(tmp_path) / "state" / "guard-warnings.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text(json.dumps(warning("left", T0 + 2000, T0 + 30, usd=0.31, mode="block")) + "\n")
    text = " ".join(line.strip() for line in report(tmp_path).stdout.splitlines())
    assert ("cold-cache guard: 1 cold prompt warned about (1 blocked once); none went ahead; 1 not sent again "
            "in its session (sending it would have re-written ~$0.31)") in text
    assert "0 went ahead" not in text


def test_prompts_not_sent_say_what_sending_them_would_have_re_written() -> None:
    """"1 not sent in their session (their re-write: ~$1.18)" read as a re-write paid: the figure is
    the one a prompt held cold and not sent again spared; one is said in the singular."""
    from session_watcher.reports.render_text import guard_sentence

    g = {"warned": 2, "blocked": 2, "wentAhead": 0, "wentAheadTokens": 0, "wentAheadUsd": 0.0,
         "notSent": 1, "notSentEstimatedUsd": 1.18}
    assert guard_sentence(g) == ("cold-cache guard: 2 cold prompts warned about (2 blocked once); none went ahead; "
                                 "1 not sent again in its session (sending it would have re-written ~$1.18)")
    assert guard_sentence({**g, "notSent": 2, "notSentEstimatedUsd": 2.5}).endswith(
        "; 2 not sent again in their sessions (sending them would have re-written ~$2.50)")
