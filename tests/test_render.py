"""The status line: `core.render.render` (pure) and the `session-watcher statusline` command."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from session_watcher.core.numbers import tokens
from session_watcher.core.render import advice, render
from session_watcher.sessions.replay import replay
from tests.oracle import launcher

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
LONG = "fa812bfe-b295-4cca-9c2f-fdf01028cb46"


def visible(line: str) -> str:
    return ANSI.sub("", line)


def doc(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "lamp": "amber", "L": 85_000, "x": 3.41, "xSweet": 2.84, "br": 0.142, "saving": 593_000.0,
        "savingUsd": 0.8895, "lampAt": {"amber": 0.10, "red": 0.25},
        "backstop": {"n": 1, "N": 3}, "dwell": {"calls": 9, "bills": 2, "alerted": True, "reminders": 0},
        "health": {"grade": "B"},
        "contextPressure": {"pressureTokens": 124_000, "contextWindow": 200_000},
    }
    base.update(over)
    return base


def plan(five: float = 23.5, seven: float = 41.2, saves: float | None = 2.13, live: bool = True) -> dict[str, Any]:
    """The status document's `plan` (core.status.plan_view) as the status line marks it."""
    est = None if saves is None else {"percentPerUsd": 2.4, "points": 3.0, "usd": 1.25, "since": 0, "until": 60}
    return {"seenAt": 60, "minPoints": 2, "live": live,
            "fiveHour": {"usedPercent": five, "resetsAt": 9000, "estimate": est, "restartSaves": saves},
            "sevenDay": {"usedPercent": seven, "resetsAt": 90000, "estimate": None, "restartSaves": None}}


@pytest.fixture(scope="module")
def fixture_docs() -> list[dict[str, Any]]:
    return [replay(str(p))[0] for p in sorted(FIXTURES.glob("*.jsonl"))]


def test_the_parts_as_documented() -> None:
    """Amber and red say what to do and what it saves; no model internals unless asked."""
    assert render(doc(), 200, color=False) == "● amber: restart saves $0.89 · bill 1/3 · health B · ctx 62%"
    assert render(doc(lamp="red", br=0.31), 200, color=False).startswith("● red: restart saves $0.89 · ")
    assert render(doc(lamp="green", x=1.6, br=0.02), 200, color=False) == \
        "● green · bill 1/3 · health B · ctx 62%"
    # no backstop yet (mf = 0): the interval is infinite
    assert "bill 0/∞" in render(doc(backstop={"n": 0, "N": None}), 200, color=False)
    assert render(doc(lamp="white", x=0.9, br=None), 200, color=False) == "○ white · bill 1/3 · health B · ctx 62%"
    # occupancy only when both pressure and window are known
    assert "ctx" not in render(doc(contextPressure={"pressureTokens": 5, "contextWindow": None}), 200, color=False)
    # money as the alerts print it; an unknown model's saving in tokens; no saving, no figure
    assert "restart saves $12.40 ·" in render(doc(savingUsd=12.4), 200, color=False)
    assert "restart saves <$0.01 ·" in render(doc(savingUsd=0.004), 200, color=False)
    assert "restart saves 593k tokens ·" in render(doc(savingUsd=None), 200, color=False)
    assert render(doc(saving=None, savingUsd=None), 200, color=False).startswith("● amber: restart advised · ")
    for line in (render(doc(lamp=lamp), 200, color=False) for lamp in ("white", "green", "amber", "red")):
        for internal in ("x3", "bp", "rent", "cEff", "progress", "bp_amber"):
            assert internal not in line


def test_nothing_before_the_first_call() -> None:
    """No call yet: the line says so, and shows no grade or figure of the session (the health
    block exists from the start, with nothing behind it)."""
    first = {"lamp": "white", "L": None, "x": None, "health": {"grade": "A"},
             "contextPressure": {"pressureTokens": None, "contextWindow": 200_000}}
    for verbose in (False, True):
        assert render(first, 200, color=False, verbose=verbose) == "○ waiting for the first API call"
    assert render(first, 25, color=False) == "○ no API call yet"
    assert render(first, 12, color=False) == "○"
    # a subscriber's plan use is the account's, known before the session's first call
    assert render({**first, "plan": plan()}, 200, color=False) == "○ waiting for the first API call · 5h 23% · 7d 41%"


def test_verbose_adds_the_position_and_the_bill_premium() -> None:
    assert render(doc(), 200, color=False, verbose=True) == \
        "● amber: restart saves $0.89 · x3.4/2.8 · bp14% · bill 1/3 · health B · ctx 62%"
    # the left arm: bp means nothing there
    assert render(doc(lamp="green", x=1.6, br=0.02), 200, color=False, verbose=True) == \
        "● green · x1.6/2.8 · bill 1/3 · health B · ctx 62%"


def test_numbers_as_rounded_as_the_colour() -> None:
    """A figure never reads as past a threshold the lamp's colour says it has not reached: bp
    9.6 % in green (amber from 10 %) reads 9 %, 24.7 % in amber (red from 25 %) 24 %; x and the
    sweet spot get a second decimal where one would make them look equal."""
    assert " bp9% " in render(doc(lamp="green", br=0.096), 200, color=False, verbose=True)
    assert " bp24% " in render(doc(lamp="amber", br=0.247), 200, color=False, verbose=True)
    assert " bp25% " in render(doc(lamp="red", br=0.247), 200, color=False, verbose=True)  # red holds to 20 %
    assert " bp8% " in render(doc(lamp="amber", br=0.084), 200, color=False, verbose=True)  # amber holds to 8 %
    assert " bp10% " in render(doc(lamp="amber", br=0.1), 200, color=False, verbose=True)
    custom = {"amber": 0.125, "red": 0.3}
    assert " bp12% " in render(doc(lamp="green", br=0.1249, lampAt=custom), 200, color=False, verbose=True)
    assert " bp29% " in render(doc(lamp="amber", br=0.296, lampAt=custom), 200, color=False, verbose=True)
    assert " x2.83/2.84 " in render(doc(lamp="green", x=2.83, xSweet=2.84, br=0.0), 200, color=False, verbose=True)
    assert " x2.9/2.8 " in render(doc(x=2.86), 200, color=False, verbose=True)
    # a plan window in whole percent, never rounded up to a full window
    assert " 5h 99% " in render(doc(plan=plan(five=99.6)), 200, color=False)
    # a warm cache's countdown rounds up: never 0:00 while it is warm
    from session_watcher.core.render import cache_text

    assert cache_text({"warm": True, "left": 0.4}) == "cache 0:01"
    assert cache_text({"warm": True, "left": 59.0}) == "cache 0:59"
    assert cache_text({"warm": False, "left": -3.0}) == "cache cold"
    # a miss's cause in words, not the client's identifier ("(miss: likely_server_side)" on the line)
    assert cache_text({"warm": True, "left": 286.0, "miss": ["likely_server_side"]}) == \
        "cache 4:46 (miss: likely server side)"
    assert cache_text({"warm": False, "left": None, "miss": ["model_changed", "likely_server_side"]}) == \
        "cache cold (miss: model changed, likely server side)"


def test_subscribers_see_their_plan_and_the_saving_in_it() -> None:
    """With `rate_limits` in the payload: the 5-hour and 7-day use, and the restart's saving in the
    5-hour window where the user's own samples gave an estimate (`~`), else at API prices."""
    assert render(doc(plan=plan()), 200, color=False) == \
        "● amber: restart saves ~2.1% of 5h · bill 1/3 · 5h 23% · 7d 41% · health B · ctx 62%"
    assert render(doc(plan=plan(saves=0.04)), 200, color=False).startswith("● amber: restart saves <0.1% of 5h ·")
    assert render(doc(plan=plan(saves=12.0)), 200, color=False).startswith("● amber: restart saves ~12% of 5h ·")
    assert render(doc(plan=plan(saves=None)), 200, color=False) == \
        "● amber: restart saves $0.89 at API prices · bill 1/3 · 5h 23% · 7d 41% · health B · ctx 62%"
    assert render(doc(lamp="green", plan=plan()), 200, color=False) == \
        "● green · bill 1/3 · 5h 23% · 7d 41% · health B · ctx 62%"
    # a plan the state remembers while this payload has no rate_limits (an API user's): dollars
    assert render(doc(plan=plan(live=False)), 200, color=False) == render(doc(), 200, color=False)
    # shortened to fit: the advice first, then the parts from the right
    assert render(doc(plan=plan()), 40, color=False) == "● amber: restart saves ~2.1% of 5h"
    assert render(doc(plan=plan()), 30, color=False) == "● amber: restart saves ~2.1%"
    assert render(doc(plan=plan()), 20, color=False) == "● amber: restart"


def test_bill_counts_what_the_next_alert_waits_for() -> None:
    """Before the gate: one completed bill cycle in deep water (whatever the backstop interval);
    after it: the reminder interval N; out of deep water: nothing is pending, nothing shown."""
    gate = {"calls": 2, "bills": 0, "alerted": False, "reminders": 0}
    assert " bill 0/1 " in render(doc(dwell=gate, backstop={"n": 0, "N": 3}), 200, color=False)
    gate_met = {**gate, "bills": 2}
    assert " bill 1/1 " in render(doc(dwell=gate_met, backstop={"n": 2, "N": 3}), 200, color=False)
    calm = {"calls": 0, "bills": 0, "alerted": False, "reminders": 0}
    assert render(doc(lamp="green", x=1.6, br=0.02, dwell=calm), 200, color=False) == \
        "● green · health B · ctx 62%"
    assert " bill 1/3 " in render(doc(), 200, color=False)
    # before the gate, a bill cycle the gate counts (one just before the dwell, with bill_lookback)
    assert " bill 1/1 " in render(doc(dwell={**gate, "billCounted": True}, backstop={"n": 0, "N": 3}), 200,
                                  color=False)


def test_bill_counts_from_the_last_alert_the_user_saw() -> None:
    """After the gate, n counts the bill cycles since the last alert delivered (`notice`), so a
    reminder held back by notify.remind_min does not reset it (the engine's n did restart); without a
    delivery to count from (replay, or nothing shown yet), the engine's count."""
    alerted = {"calls": 30, "bills": 6, "alerted": True, "reminders": 1}
    held = doc(dwell=alerted, backstop={"n": 1, "N": 3}, notice={"shown": 1, "bills": 4})
    assert " bill 4/3 " in render(held, 200, color=False)
    assert " bill 1/3 " in render(doc(dwell=alerted, backstop={"n": 1, "N": 3}, notice=None), 200, color=False)


def test_no_position_before_a_cache_read() -> None:
    """A cold first call reads nothing from the cache: L = 0 makes x = 0.0, which is no position."""
    line = render(doc(lamp="white", L=0, x=0.0, br=None, dwell={"calls": 0}), 200, color=False, verbose=True)
    assert line == "○ white · x: no cache read yet · health B · ctx 62%"
    assert "x0.0" not in line


def test_colour_codes_follow_the_lamp() -> None:
    line = render(doc(lamp="red", br=0.4), 200, color=True)
    assert line.startswith("\x1b[31m● red\x1b[0m\x1b[31m: restart saves $0.89\x1b[0m · ")
    assert "\x1b[32mB\x1b[0m" in line  # the health grade has its own colour
    assert render(doc(lamp="green", x=1.5, br=0.0), 200).startswith("\x1b[32m● green\x1b[0m")
    assert render(doc(), 200).startswith("\x1b[33m● amber\x1b[0m")
    assert visible(line) == render(doc(lamp="red", br=0.4), 200, color=False)


def _parts(line: str) -> list[str]:
    return line.split(" · ")


@pytest.mark.parametrize("columns", range(20, 201))
def test_fits_the_columns(columns: int, fixture_docs: list[dict[str, Any]]) -> None:
    for d in [doc(), doc(plan=plan()), *fixture_docs]:
        for color in (True, False):
            for verbose in (False, True):
                line = render(d, columns, color, verbose)
                assert len(visible(line)) <= columns
                assert "\n" not in line
                assert (ANSI.search(line) is not None) is color
    for d in (doc(), doc(plan=plan())):
        full, line = render(d, 1000, color=False), render(d, columns, color=False)
        # parts are dropped from the right, never cut in the middle; the advice is shortened first
        got, want = _parts(line), _parts(full)
        assert got[1:] == want[1 : len(got)]
        assert got[0] in [want[0].split(": ")[0] + ": " + a for a in advice(d)] + [want[0].split(": ")[0]]
        if columns >= len(full):
            assert line == full


def statusline(payload: dict[str, Any], env: dict[str, str], *args: str) -> str:
    proc = subprocess.run(launcher("statusline", *args), input=json.dumps(payload), capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("\n")
    assert proc.stdout.count("\n") == 1
    return proc.stdout[:-1]


@pytest.mark.slow
def test_statusline_command_reads_columns_and_no_color(tmp_path: Path) -> None:
    from session_watcher.state import store

    src = FIXTURES / f"{LONG}.jsonl"
    os.makedirs(os.path.dirname(store.session_file(LONG)), mode=0o700, exist_ok=True)
    payload = {"session_id": LONG, "transcript_path": str(src), "cwd": str(tmp_path),
               "model": {"id": "claude-opus-4-6", "display_name": "Opus 4.6"},
               "context_window": {"context_window_size": 200_000}}
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")}
    lines = [statusline(payload, env)]  # the first run may stop at its fold budget
    for _ in range(30):
        lines.append(statusline(payload, env))
        if lines[-1] == lines[-2]:
            break
    line = lines[-1]
    assert "\x1b[" in line
    advice_re, bill_re = r"(: restart saves \$\d+\.\d\d)?", r"( · bill \d+/(\d+|∞))?"
    assert re.fullmatch(rf"● (green|amber|red){advice_re}{bill_re} · health [A-F] · ctx \d+%", visible(line)), line
    assert len(visible(line)) <= 80
    plain = statusline(payload, {**env, "NO_COLOR": "1"})
    assert "\x1b" not in plain
    assert plain == visible(line)
    verbose = statusline(payload, {**env, "NO_COLOR": "1"}, "--verbose")
    assert re.fullmatch(rf"● (green|amber|red){advice_re} · x\d+\.\d+/\d+\.\d+ · bp\d+%{bill_re} · health [A-F] · "
                        r"ctx \d+%", verbose), verbose
    for columns in (20, 33, 47, 200):
        narrow = statusline(payload, {**env, "NO_COLOR": "1", "COLUMNS": str(columns)}, "--verbose")
        assert len(narrow) <= columns
        assert _parts(narrow)[1:] == _parts(verbose)[1 : len(_parts(narrow))]
    assert statusline(payload, {**env, "COLUMNS": "nonsense", "NO_COLOR": "1"}) == plain


def test_the_status_line_of_a_real_fixture_at_its_last_call(fixture_docs: list[dict[str, Any]]) -> None:
    # the last call of the fixture in deep water before its gate: the line waits for one bill cycle
    trace = replay(str(FIXTURES / f"{LONG}.jsonl"))[1]
    d = [r for r in trace if r["dwell"]["calls"] > 0 and not r["dwell"]["alerted"]][-1]
    assert d["lamp"] in ("amber", "red")
    assert d["savingUsd"] == pytest.approx(d["saving"] * 5 * 0.1 / 1e6, abs=1e-6)  # Opus 4.6: $5/MTok, reads 0.1x
    tail = (f"bill {int(d['dwell']['billCounted'])}/1 · health {d['health']['grade']} · "
            f"ctx {100 * d['contextPressure']['pressureTokens'] / 200_000:.0f}%")
    saves = f"${int(d['savingUsd'] * 100 + 0.5) / 100:.2f}"
    assert render(d, 80, color=False) == f"● {d['lamp']}: restart saves {saves} · {tail}"
    assert render(d, 100, color=False, verbose=True) == (
        f"● {d['lamp']}: restart saves {saves} · x{d['x']:.1f}/{d['xSweet']:.1f} · bp{100 * d['br']:.0f}% · {tail}")


@pytest.mark.slow
def test_statusline_first_fold_agrees_with_replay() -> None:
    """When the status line folds a session before any hook ran, it knows the project from its own
    payload: the figures are the ones `replay` gives, not a map where every file is outside."""
    from session_watcher.core import eoq
    from session_watcher.core.status import status_document
    from session_watcher.sessions import replay as shell
    from session_watcher.state import store

    sid = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
    src = FIXTURES / f"{sid}.jsonl"
    state, cfg, _ = shell.fold(str(src), subagents=False)
    # the session ended long ago: at the status line's time its cache is cold, and the saving it
    # shows counts the re-write a restart spares (status_document(cold=True), replay's figures else)
    now = time.time()
    assert eoq.cache_cold(state, cfg, now)
    want = status_document(state, cfg, cold=True, now=now)
    warm, _ = replay(str(src), subagents=False)
    assert want["savingUsd"] > warm["savingUsd"]
    # the cold cache: the saving, and a restart advised at that cold return whatever the lamp
    assert {k: v for k, v in want.items() if k not in ("saving", "savingUsd", "plan", "coldReturn")} == \
        {k: v for k, v in warm.items() if k not in ("saving", "savingUsd", "plan", "coldReturn")}
    assert (want["coldReturn"], warm["coldReturn"]) == (True, False)
    os.makedirs(os.path.dirname(store.session_file(sid)), mode=0o700, exist_ok=True)
    cwd = "/home/USER/projects/spotter-worktrees/spotter-4te"  # the session's cwd, as Claude Code passes it
    payload = {"session_id": sid, "transcript_path": str(src), "cwd": cwd,
               "workspace": {"current_dir": cwd, "project_dir": cwd},
               "model": {"id": "claude-opus-4-6", "display_name": "Opus 4.6"},
               "context_window": {"context_window_size": 200_000}}
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "CLAUDE_PROJECT_DIR")}
    env["NO_COLOR"] = "1"
    lines = [statusline(payload, env)]
    for _ in range(30):
        lines.append(statusline(payload, env))
        if lines[-1] == lines[-2]:
            break
    assert lines[-1] == render(want, 80, color=False)


def test_status_text_names_the_restart_price_when_a_prefix_is_shared() -> None:
    from session_watcher.core.statustext import status_text

    d = replay(str(FIXTURES / f"{LONG}.jsonl"))[0]

    def tokens(doc: dict[str, Any]) -> str:
        return next(line for line in status_text(doc, verbose=True).splitlines() if line.startswith("tokens"))

    assert f"cRatio 12.5 (cEff {d['cEff']:.1f}: a restart reads {round(d['shared'] / 1000)}k shared)" in tokens(d)
    assert d["cEff"] < 12.5
    assert "cEff" not in tokens({**d, "shared": 0, "cEff": 12.5})


def test_status_text_speaks_plainly_unless_asked() -> None:
    """`status` without --verbose: what the lamp means and what a restart saves, what a restart
    would carry; no model internals (rent, cEff, bill progress, x, bp) and no config keys."""
    from session_watcher.core.statustext import status_text

    final, trace = replay(str(FIXTURES / f"{LONG}.jsonl"))
    amber = next(r for r in trace if r["lamp"] == "amber" and r["dwell"]["alerted"])
    final = next(r for r in reversed(trace) if r["lamp"] == "green" and not r["dwell"]["calls"] and r["x"] > 1)
    for d in (final, amber):
        plain, verbose = status_text(d), status_text(d, verbose=True)
        for internal in ("rent", "cEff", "bill progress", "bDefault", "bp ", "sweet spot 1", "x 1", "bp_amber",
                         "bp_red", "guard_x", "notify_dwell"):
            assert internal not in plain, internal
        for internal in ("rent", "bill progress", "bDefault", "bp "):
            assert internal in verbose, internal
        assert set(plain.splitlines()) <= set(verbose.splitlines())
    assert "green: no restart needed yet" in status_text(final)
    saves = f"${int(amber['savingUsd'] * 100 + 0.5) / 100:.2f}"
    assert f"amber: restart; a fresh session now saves about {saves} (" in status_text(amber)
    back = amber["backstop"]  # N restarts' worth since the last alert, n of them so far (not N more)
    assert (f"alerted; the next reminder once staying has cost {back['N']} restarts' worth since the last alert "
            f"({back['n']} so far)") in " ".join(status_text(amber).split())
    assert "bill cycle" not in status_text(amber)
    # bp_amber 0.001: just past the sweet spot; the gate also waits for the segment's calls and a saving
    # over its floors (`engine.worth_saying`): the sentence left them out, "one comes once staying costs
    # 0.1 % or more", which is not all it takes, nor the sweet spot (bp is over 0 before it too: green at x 3.0
    # against a sweet spot of 4.0, bp 2.9 %, read as met). Its figures are the config's the gate reads.
    from session_watcher.base.config import DEFAULTS

    assert ("none pending (one can come once the session is past its sweet spot and staying costs 0.1 % or more "
            "over a restart at the best moment, "
            "once 10 calls have come since the session's start or its last compaction, and if a restart then "
            "saves $0.01 or more and 5 % or more of those calls' cache cost)") in \
        " ".join(status_text(final, cfg=DEFAULTS).split())
    set_ = {**DEFAULTS, "gate_min_calls": 1, "advice_min_usd": 0.0, "advice_min_share": 0.2}
    assert ("none pending (one can come once the session is past its sweet spot and staying costs 0.1 % or more "
            "over a restart at the best moment, "
            "and if a restart then saves 20 % or more of the cache cost since the session's start or its last "
            "compaction)") in \
        " ".join(status_text(final, cfg=set_).split())
    assert ("none pending (one can come once the session is past its sweet spot and staying costs 0.1 % or more "
            "over a restart at the best moment, "
            "if a restart then saves enough to be worth saying)") in " ".join(status_text(final).split())


def test_status_text_never_says_a_restart_carries_more_than_the_context_holds() -> None:
    """The `short` fixture (one call: 12k read, 14k written, a 25k prompt that is also the floor):
    `status` said a restart "would carry 25k ...; the context now holds 12k" (L, the cache read).
    The context holds the last call's prompt (the `context` line's 13 % of 200k); a carry as large
    says a restart would not make it smaller. A longer session keeps the carry against what it holds."""
    from session_watcher.core.statustext import status_text

    short = replay(str(FIXTURES / "short.jsonl"))[0]
    assert (short["bDefault"], short["floor"], short["contextPressure"]["pressureTokens"]) == (25353, 25353, 25353)
    said = [line for line in status_text(short).splitlines() if line.startswith("restart")]
    assert said == ["restart  a restart would not make the context smaller (it holds 25k; a fresh session "
                    "would carry 25k: 25k system + 0 in files)"]
    grown = replay(str(FIXTURES / f"{LONG}.jsonl"))[0]
    said = [line for line in status_text(grown).splitlines() if line.startswith("restart")]
    held = grown["contextPressure"]["pressureTokens"]
    assert held > grown["bDefault"] > grown["floor"]
    assert said == [f"restart  a fresh session would carry {tokens(grown['bDefault'])} tokens "
                    f"({tokens(grown['floor'])} system + {tokens(grown['bDefault'] - grown['floor'])} in files); "
                    f"the context now holds {tokens(held)}"]
    # files a fresh session would read again, with a carry at or above what the context holds
    doc = {**short, "bDefault": 30_000, "floor": 26_000}
    assert "it holds 25k; a fresh session would carry 30k: 26k system + 4k in files)" in status_text(doc)


def test_a_cold_return_says_restart_whatever_the_lamp() -> None:
    """Issue 37: at a cold return (the cache cold, x >= guard_x, a positive saving: `coldReturn`) the
    line quotes the restart saving the guard quotes, though the lamp is green; `status` says why."""
    from session_watcher.core.render import lamp_words

    doc = {"lamp": "green", "L": 90_000, "x": 2.9, "xSweet": 5.9, "br": None, "saving": 780_000.0,
           "savingUsd": 0.39, "coldReturn": True, "contextPressure": {}, "health": None, "plan": None}
    assert render(doc, 80, color=False) == "● green: restart saves $0.39"
    assert render({**doc, "coldReturn": False}, 80, color=False) == "● green"
    assert lamp_words(doc).startswith("green, but the cache is cold: restart; a fresh session now saves about $0.39")
    # amber or red on a cold cache: the saving spares the re-write too, and the words say why it is large
    assert lamp_words({**doc, "lamp": "red"}).startswith("red, and the cache is cold: restart; a fresh session now")
    assert lamp_words({**doc, "lamp": "amber", "coldReturn": False}).startswith("amber: restart; a fresh session")


def test_a_cold_return_is_advised_only_past_the_edge() -> None:
    """Between the cache's lifetime and its edge (lifetime + EDGE_MARGIN) the cache only may have
    expired: `status` and the status line price the restart cold but advise no cold return there (the
    guard warns without a hold, the engine advises none); past the edge they do."""
    from session_watcher.core import eoq
    from session_watcher.core.status import status_document
    from session_watcher.sessions import replay as shell

    state, cfg, _ = shell.fold(str(FIXTURES / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"), subagents=False)
    state["context"].pop("promptCache", None)
    life = eoq.cache_lifetime(state["engine"]["ttl"], cfg.get("cliff"), state["context"].get("model"))
    assert life is not None
    last = state["engine"]["lastTs"]
    assert last is not None
    maybe = last + life + eoq.EDGE_MARGIN / 2
    past = last + eoq.cache_edge(life) + 1
    assert eoq.cache_cold(state, cfg, maybe)
    assert eoq.cache_cold(state, cfg, past)
    in_band = status_document(state, cfg, cold=True, now=maybe)
    beyond = status_document(state, cfg, cold=True, now=past)
    assert (in_band["coldReturn"], beyond["coldReturn"]) == (False, True)
    assert in_band["savingUsd"] == beyond["savingUsd"]  # the same cold price either way


def test_the_status_line_module_holds_the_line_and_not_the_status_commands_words() -> None:
    """`session-watcher status`'s lines are core.statustext's: the status line (core.render, drawn at
    every refresh) does not load their code."""
    from session_watcher.core import render, statustext

    words = {"status_text", "plan_lines", "health_text", "health_value"}
    assert words <= set(vars(statustext))
    assert not words & set(vars(render))
    assert vars(statustext)["lamp_words"] is render.lamp_words  # the lamp's words: one function, for the page too


def test_health_text_names_the_session_and_says_why_a_signal_has_no_figure() -> None:
    """`health`'s text: which session it grades (the default is the most recently active one), a B
    with no figure says there was no edit in the first half (it read `-`), an A with none that there
    was no error, and the figures' column is as wide as its widest figure (within 80 columns with
    the longest)."""
    from session_watcher.core import health
    from session_watcher.core.statustext import health_text

    h = health.new_health()
    health.on_call(h, 27_000)
    for name in ("Read", "Read", "Bash", "Edit"):  # the first half without an edit
        health.on_tool(h, name, reread=False, is_error=False)
    text = health_text(health.grade(h, 200_000), session="tool_heavy")
    lines = text.split("\n")
    assert lines[0] == "Context health: A (score 98/100)  session tool_heavy"
    assert lines[5].startswith("  Tool Efficiency  ████████████████░░░░ B  - (no edit in 1st half)  weight 10%")
    assert lines[4].split("A  ")[1].startswith("- (no errors)  ")
    assert max(len(line) for line in lines) == 78  # 2 + 16 + 1 + 20 + 1 + 1 + 2 + 23 + 2 + 10


def test_health_text_says_why_a_signal_has_no_number() -> None:
    """A signal without a number says why (core.health.no_number), not a bare `-`: "too few calls"
    and "no errors" read alike before. Every reason keeps the rows within 80 columns (the one of
    errors in the second half only read 82)."""
    from session_watcher.core import health
    from session_watcher.core.statustext import health_text

    def rows(tools: list[tuple[str, bool]], called: bool = True) -> dict[str, str]:
        h = health.new_health()
        if called:
            health.on_call(h, 27_000)
        for name, failed in tools:
            health.on_tool(h, name, reread=False, is_error=failed)
        text = health_text(health.grade(h, 200_000))
        assert max(len(line) for line in text.split("\n")) <= 80, text
        return {line[2:19].strip(): line[43:].rsplit("  weight", 1)[0].strip() for line in text.split("\n")[1:]}

    few = rows([("Read", False), ("Bash", False)], called=False)
    assert few == {"Context Fill": "- (no call yet)", "Compactions": "0", "Re-reads": "0.00 of reads",
                   "Error Rate": "- (under 4 tool calls)", "Tool Efficiency": "- (under 4 tool calls)"}
    late = rows([("Edit", False), ("Bash", False), ("Bash", True), ("Edit", True)])
    assert late["Error Rate"] == "- (errors in 2nd half)"
    assert late["Tool Efficiency"] == "1.00x the first half's"
    assert rows([("Bash", False)] * 4)["Error Rate"] == "- (no errors)"
    assert rows([("Bash", False)] * 4 + [("Edit", False)] * 2)["Re-reads"] == "- (no file read yet)"


def test_status_text_counts_the_carried_files_it_lists() -> None:
    """`carried` says how many of the files it lists ("1 files" read for one; "37 files, largest
    first" listed 8) and the unit of each file's figure (a bare `1.9k` beside a path)."""
    from session_watcher.core.statustext import status_text

    d = replay(str(FIXTURES / f"{LONG}.jsonl"))[0]
    files = [b for b in d["buckets"] if b["type"] == "file"]
    assert len(files) == 3

    def carried(doc: dict[str, Any], top: int = 8) -> str:
        return next(line for line in status_text(doc, top=top).splitlines() if line.startswith("carried"))

    assert carried(d, top=2).startswith("carried  3 files (estimated tokens each), the 2 largest")
    assert carried(d).startswith("carried  3 files (estimated tokens each), largest first")
    one = [b for b in d["buckets"] if b["type"] != "file"] + files[:1]
    assert carried({**d, "buckets": one}).startswith("carried  1 file (estimated tokens each), largest first")
    single = {**d, "tokenUsage": {**d["tokenUsage"], "calls": 1}, "subagentUsage": {**d["subagentUsage"], "calls": 1}}
    usage = " ".join(line for line in status_text(single).splitlines() if line.startswith(("usage", " ")))
    assert "(1 call; subagents 1 call, " in usage  # read "(1 calls; subagents 1 calls"


def test_replay_text_prices_the_restart_as_of_the_last_call() -> None:
    """`replay`'s lamp line is the session's last call's, not now's (the same session read "now saves
    about $0.37" in `replay` and "now saves about $0.65" in `status`, the cache cold by then)."""
    from session_watcher.core.statustext import status_text

    final, trace = replay(str(FIXTURES / f"{LONG}.jsonl"))
    amber = next(r for r in trace if r["lamp"] == "amber" and r["dwell"]["alerted"])
    then = status_text(amber, last_call=True).splitlines()[1]
    assert then.startswith("lamp     amber: restart; a fresh session saves, as of its last call, about $")
    assert status_text(amber).splitlines()[1].startswith("lamp     amber: restart; a fresh session now saves about $")
    green = next(r for r in trace if r["lamp"] == "green")
    assert status_text(green, last_call=True) == status_text(green)  # green: no price to date
    assert "as of its last call" in status_text(final, last_call=True)


def test_status_text_says_how_long_ago_the_last_call_was() -> None:
    """`status` names, by default, the most recently active session, which on a laptop may be one left
    months ago: its first line says when its last call was (it read the same as a session running now,
    "restart; a fresh session now saves about $1.52 ... over the next ~60 calls"). `replay` (no clock)
    does not."""
    from session_watcher.core.guard import cold_cache
    from session_watcher.core.status import status_document
    from session_watcher.core.statustext import status_text
    from session_watcher.sessions.replay import fold

    state, cfg, _trace = fold(str(FIXTURES / f"{LONG}.jsonl"), with_trace=False)
    final = status_document(state, cfg)
    last = state["engine"]["lastTs"]
    assert last is not None
    now = last + 9 * 86_400 + 600
    shown = {**final, "coldCache": cold_cache(state, cfg, now)}  # what `status` adds (cli.commands.status)

    def first(doc: dict[str, Any], at: float | None, ts: float | None = last) -> str:
        return " ".join(status_text(doc, now=at, last_ts=ts).split("\n")[0].split())

    assert first(shown, now).endswith(f"calls {final['calls']}, the last 9 days ago"), first(shown, now)
    # a session whose cache the guard cannot time (no cache write seen: no `coldCache`) says it too
    assert first({**final, "coldCache": None}, now).endswith(", the last 9 days ago")
    assert first(shown, last).endswith(f"calls {final['calls']}, the last just now")  # not "0 s ago"
    assert first(shown, last - 0.5).endswith(", the last just now")
    # a last call dated ahead of this clock (a clock set back): said so, not "0 s ago"
    assert first(shown, last - 7200).endswith(", the last dated 2 h ahead of this machine's clock")
    assert first(shown, None).endswith(f"calls {final['calls']}")  # no clock: no age
    assert first(shown, now, None).endswith(f"calls {final['calls']}")  # no timestamp: no age
    assert status_text(shown, last_call=True).split("\n")[0].endswith(f"calls {final['calls']}")


def test_status_of_a_session_idle_for_days_says_so_rather_than_advise_a_restart(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A session whose last call is over a day and the longest cache lifetime ago is one the user has
    left: `status` said "restart; a fresh session now saves $3.51" of a session idle 136 days, as if it
    ran now. It says it is idle, its cache gone, and what a fresh session saves against resuming it;
    the figures of `--json` are the same. A session idle under IDLE_ENDED reads as before."""
    from session_watcher import cli
    from session_watcher.core.numbers import dollars
    from session_watcher.core.render import IDLE_ENDED, lamp_words
    from session_watcher.core.statustext import status_text
    from session_watcher.sessions.replay import fold

    path = str(FIXTURES / f"{LONG}.jsonl")
    assert cli.main(["status", path]) == 0  # the fixture's last call is months before this clock
    lamp = " ".join(capsys.readouterr().out.split("\nalerts")[0].split("lamp", 1)[1].split())
    assert cli.main(["status", "--json", path]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["coldReturn"]  # a cold return: it advised a restart
    assert doc["saving"] > 0
    assert re.fullmatch(r"idle \d+ days, its cache long gone: to go on with its work, a fresh session would save "
                        rf"about {re.escape(dollars(doc['savingUsd']))} against resuming this one, over the next "
                        r"~\d+ calls.*", lamp), lamp
    assert "restart;" not in lamp
    state, _cfg, _trace = fold(path, with_trace=False)
    last = state["engine"]["lastTs"]
    assert last is not None

    def said(idle: float) -> str:
        return " ".join(status_text(doc, now=last + idle, last_ts=last).split("\nalerts")[0].split())

    assert "restart; a fresh session now saves" in said(IDLE_ENDED - 60)  # under a day past the cache: as before
    assert "idle 25 h, its cache long gone" in said(IDLE_ENDED)
    assert lamp_words({**doc, "coldReturn": False, "lamp": "green"}, IDLE_ENDED) == \
        "idle 25 h, its cache long gone: resuming it needs no restart first"
    assert lamp_words(doc, None) == lamp_words(doc)  # no clock (`replay`): the lamp's own words


def test_health_text_of_a_codex_thread_shows_its_tool_signals() -> None:
    """A rollout's tool calls are read: a Codex thread's three tool signals have figures (its shell
    reads re-read 64 of 89 times, its errors and edits compared half to half), not `-` beside an A."""
    from session_watcher.core.statustext import health_text
    from tests.codex_lines import FIXTURES

    final, _trace = replay(str(FIXTURES / "rollout-019d7739-95cb-79e3-9de4-3cbe15400b87.jsonl"))
    rows = health_text(final["health"]).split("\n")
    figures = ["0.72 of reads", "0.57x the first half's", "0.70x the first half's"]
    assert [figure in row for row, figure in zip(rows[3:], figures, strict=True)] == [True] * 3
    assert rows[0].startswith("Context health: B (score 79/100)")


def test_status_right_after_a_compaction_says_no_call_since_it(tmp_path: Path) -> None:
    """A Codex thread just compacted (its rollout up to the `compacted` line and the `token_count`
    with `last` = 0 after it), no call since: `status` said "white: no API call yet" of a thread of
    50 calls; it says none came since the compaction. A thread with no call at all still says no
    API call yet."""
    from session_watcher.core.render import lamp_words
    from session_watcher.core.status import status_document
    from session_watcher.sessions.replay import fold

    rollout = Path(__file__).parent / "fixtures" / "codex" / "rollout-019d7739-95cb-79e3-9de4-3cbe15400b87.jsonl"
    lines = rollout.read_bytes().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if b'"type":"compacted"' in line)
    after = next(i for i in range(cut, len(lines)) if b'"context_compacted"' in lines[i])
    path = tmp_path / rollout.name
    path.write_bytes(b"".join(lines[:after + 1]))
    state, cfg, _ = fold(str(path), with_trace=False)
    doc = status_document(state, cfg)
    assert (doc["compactions"], doc["segment"]) == (1, 1)
    assert doc["calls"] > 1
    assert lamp_words(doc) == "white: no API call since the compaction yet"
    path.write_bytes(b"".join(lines[:1]))  # its session_meta alone: no call at all
    state, cfg, _ = fold(str(path), with_trace=False)
    assert lamp_words(status_document(state, cfg)) == "white: no API call yet"


def test_replays_reminder_count_says_it_runs_from_the_last_alert_made() -> None:
    """`replay` knows no delivery (no `notice`): its "(n so far)" runs from the last alert the fold made,
    shown or held back, and it says so and names `status`, which counts from the last one shown, so the
    two do not disagree unexplained (the same session read "0 so far" in replay, "5 so far" in status
    and "bill 5/10" on the status line). `status` of a live state keeps its plain words."""
    from session_watcher.core.statustext import status_text

    d = replay(str(FIXTURES / f"{LONG}.jsonl"))[0]
    assert d["dwell"]["alerted"]
    assert d.get("notice") is None

    def alerts(doc: dict[str, Any], last_call: bool) -> str:
        return next(line for line in status_text(doc, last_call=last_call).splitlines() if line.startswith("alerts"))

    said = alerts(d, last_call=True)
    assert said.endswith("(0 so far from the last alert made; `status` counts from the last one shown)"), said
    live = {**d, "notice": {"shown": 1, "bills": 5}}
    assert alerts(live, last_call=False).endswith("since the last alert (5 so far)")
    assert alerts(live, last_call=True).endswith("since the last alert (5 so far)")
