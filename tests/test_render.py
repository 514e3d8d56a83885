"""The status line: `core.render.render` (pure) and the `session-watcher statusline` command."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from session_watcher.core.render import human, render
from session_watcher.replay import replay

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
LONG = "fa812bfe-b295-4cca-9c2f-fdf01028cb46"


def visible(line: str) -> str:
    return ANSI.sub("", line)


def doc(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "lamp": "amber", "L": 85_000, "x": 3.41, "xSweet": 2.84, "br": 0.142,
        "backstop": {"n": 1, "N": 3}, "dwell": {"calls": 9, "bills": 2, "alerted": True, "reminders": 0},
        "health": {"grade": "B"},
        "contextPressure": {"pressureTokens": 124_000, "contextWindow": 200_000},
    }
    base.update(over)
    return base


@pytest.fixture(scope="module")
def fixture_docs() -> list[dict[str, Any]]:
    return [replay(str(p))[0] for p in sorted(FIXTURES.glob("*.jsonl"))]


def test_the_parts_as_documented() -> None:
    assert render(doc(), 200, color=False) == "● amber x3.4/2.8 bp14% bill 1/3 health B ctx 62%"
    assert render(doc(lamp="red", br=0.31), 200, color=False).startswith("● red x3.4/2.8 bp31% ")
    assert render(doc(lamp="green", x=1.6, br=0.02), 200, color=False) == \
        "● green x1.6/2.8 bill 1/3 health B ctx 62%"  # the left arm: bp means nothing there
    # no backstop yet (mf = 0): the interval is infinite
    assert "bill 0/∞" in render(doc(backstop={"n": 0, "N": None}), 200, color=False)
    # at or below x = 1 there is no bill premium to show
    assert render(doc(lamp="white", x=0.9, br=None), 200, color=False) == \
        "○ white x0.9/2.8 bill 1/3 health B ctx 62%"
    # occupancy only when both pressure and window are known
    assert "ctx" not in render(doc(contextPressure={"pressureTokens": 5, "contextWindow": None}), 200, color=False)
    assert render({"lamp": "white", "L": None, "x": None}, 200, color=False) == \
        "○ white waiting for the first API call"


def test_bill_counts_what_the_next_alert_waits_for() -> None:
    """Before the gate: one completed bill cycle in deep water (whatever the backstop interval);
    after it: the reminder interval N; out of deep water: nothing is pending, nothing shown."""
    gate = {"calls": 2, "bills": 0, "alerted": False, "reminders": 0}
    assert " bill 0/1 " in render(doc(dwell=gate, backstop={"n": 0, "N": 3}), 200, color=False)
    gate_met = {**gate, "bills": 2}
    assert " bill 1/1 " in render(doc(dwell=gate_met, backstop={"n": 2, "N": 3}), 200, color=False)
    calm = {"calls": 0, "bills": 0, "alerted": False, "reminders": 0}
    assert render(doc(lamp="green", x=1.6, br=0.02, dwell=calm), 200, color=False) == \
        "● green x1.6/2.8 health B ctx 62%"
    assert " bill 1/3 " in render(doc(), 200, color=False)


def test_no_position_before_a_cache_read() -> None:
    """A cold first call reads nothing from the cache: L = 0 makes x = 0.0, which is no position."""
    line = render(doc(lamp="white", L=0, x=0.0, br=None, dwell={"calls": 0}), 200, color=False)
    assert line == "○ white x: no cache read yet health B ctx 62%"
    assert "x0.0" not in line


def test_colour_codes_follow_the_lamp() -> None:
    line = render(doc(lamp="red", br=0.4), 200, color=True)
    assert line.startswith("\x1b[31m● red\x1b[0m ")
    assert "\x1b[32mB\x1b[0m" in line  # the health grade has its own colour
    assert render(doc(lamp="green", x=1.5, br=0.0), 200).startswith("\x1b[32m● green\x1b[0m")
    assert render(doc(), 200).startswith("\x1b[33m● amber\x1b[0m")
    assert visible(line) == render(doc(lamp="red", br=0.4), 200, color=False)


@pytest.mark.parametrize("columns", range(20, 201))
def test_fits_the_columns(columns: int, fixture_docs: list[dict[str, Any]]) -> None:
    full = render(doc(), 1000, color=False)
    for d in [doc(), *fixture_docs]:
        for color in (True, False):
            line = render(d, columns, color)
            assert len(visible(line)) <= columns
            assert "\n" not in line
            assert (ANSI.search(line) is not None) is color
    line = render(doc(), columns, color=False)
    # parts are dropped from the right, never cut in the middle
    assert full.startswith(line)
    assert len(full) <= columns or full[len(line)] == " "
    if columns >= len(full):
        assert line == full


def test_human_numbers() -> None:
    assert human(340_219) == "340k"
    assert human(1_250_000) == "1.2M"
    assert human(1_000_000) == "1M"
    assert human(999) == "999"
    assert human(None) == "?"


def statusline(payload: dict[str, Any], env: dict[str, str]) -> str:
    exe = Path(sys.executable).parent / "session-watcher"
    proc = subprocess.run([str(exe), "statusline"], input=json.dumps(payload), capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("\n")
    assert proc.stdout.count("\n") == 1
    return proc.stdout[:-1]


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
    assert re.fullmatch(r"● (green|amber|red) x\d+\.\d/\d+\.\d bp\d+% bill \d+/\d+ health [A-F] ctx \d+%",
                        visible(line)), line
    assert len(visible(line)) <= 80
    plain = statusline(payload, {**env, "NO_COLOR": "1"})
    assert "\x1b" not in plain
    assert plain == visible(line)
    for columns in (20, 33, 47, 200):
        narrow = statusline(payload, {**env, "NO_COLOR": "1", "COLUMNS": str(columns)})
        assert len(narrow) <= columns
        assert plain.startswith(narrow)
    assert statusline(payload, {**env, "COLUMNS": "nonsense", "NO_COLOR": "1"}) == plain


def test_the_status_line_of_a_real_fixture_at_its_last_call(fixture_docs: list[dict[str, Any]]) -> None:
    # the last call of the fixture in deep water before its gate: the line waits for one bill cycle
    trace = replay(str(FIXTURES / f"{LONG}.jsonl"))[1]
    d = [r for r in trace if r["dwell"]["calls"] > 0 and not r["dwell"]["alerted"]][-1]
    line = render(d, 80, color=False)
    assert line == (f"● {d['lamp']} x{d['x']:.1f}/{d['xSweet']:.1f} bp{100 * d['br']:.0f}% "
                    f"bill {min(d['dwell']['bills'], 1)}/1 health {d['health']['grade']} "
                    f"ctx {100 * d['contextPressure']['pressureTokens'] / 200_000:.0f}%")


def test_statusline_first_fold_agrees_with_replay() -> None:
    """When the status line folds a session before any hook ran, it knows the project from its own
    payload: the figures are the ones `replay` gives, not a map where every file is outside."""
    from session_watcher.state import store

    sid = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
    src = FIXTURES / f"{sid}.jsonl"
    want, _ = replay(str(src), subagents=False)
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
    from session_watcher.core.render import status_text

    d = replay(str(FIXTURES / f"{LONG}.jsonl"))[0]
    tokens = status_text(d).splitlines()[3]
    assert f"cRatio 12.5 (cEff {d['cEff']:.1f}: a restart reads {round(d['shared'] / 1000)}k shared)" in tokens
    assert d["cEff"] < 12.5
    assert "cEff" not in status_text({**d, "shared": 0, "cEff": 12.5}).splitlines()[3]
