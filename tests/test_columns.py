"""The width a command's text keeps within: COLUMNS, else the terminal's, else 80; a path is never
cut (only a path longer than the whole width, on a line of its own, goes past it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import example, given

from session_watcher.core.text import columns

if TYPE_CHECKING:
    from pathlib import Path


def test_columns_env_first_then_terminal_then_80() -> None:
    assert columns("100", 200) == 100
    assert columns(None, 132) == 132
    assert columns(None, None) == 80
    assert columns("wide", None) == 80  # not a number: as if unset
    assert columns("0", None) == 80
    assert columns("12", None) == 40  # a table cannot be read narrower


def _widths(*args: str, columns: str | None) -> int:
    import os

    from tests.oracle import sw

    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    proc = sw(*args, env=env)
    assert proc.returncode in (0, 1), proc.stderr
    width = int(columns or 80)
    # a line past the width is one whole path, alone on its line (never cut: it is copied)
    lines = proc.stdout.decode().splitlines()
    return max(len(line) if len(line) <= width or not _one_path(line) else 0 for line in lines)


def _one_path(line: str) -> bool:
    if line.startswith("#   "):  # a TOML comment of `config show`: the path after its marker
        line = line[4:]
    return len(line.split()) == 1 and "/" in line and not line.startswith(" ")


@pytest.mark.slow
def test_every_text_command_within_columns() -> None:
    """status (130 columns at COLUMNS=100 before), replay, health, backtest, notify --test, config
    show (its 91-column header comment before): within
    COLUMNS, and within 80 when it is unset and stdout is no terminal; status's continuation lines
    under its values."""
    from tests.oracle import TRANSCRIPTS

    t = str(TRANSCRIPTS / "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
    for args in (("status", t), ("status", t, "--verbose"), ("replay", t), ("health", t), ("backtest", t),
                 ("notify", "--test", "--channel", "message"), ("config", "show")):
        assert _widths(*args, columns="100") <= 100, args
        assert _widths(*args, columns=None) <= 80, args
        assert _widths(*args, columns="60") <= 60, args


def test_fit_wraps_under_the_value() -> None:
    from session_watcher.core.text import fit

    assert fit("lamp     amber: restart; a fresh session now saves about $0.43 over the next stretch", 40) == (
        "lamp     amber: restart; a fresh session\n"
        "         now saves about $0.43 over the\n"
        "         next stretch")
    assert fit("short\n  and short", 40) == "short\n  and short"
    assert fit("Context health: B (score 80/100) and a long tail of words", 30) == (
        "Context health: B (score\n  80/100) and a long tail of\n  words")


LONG_CWD = "/home/developer/work/clients/acme-corporation/projects/very-long-project-name-for-testing/svc/api"


@pytest.mark.slow
@pytest.mark.parametrize("width", [80, 100])
def test_status_never_cuts_a_path(tmp_path: Path, width: int) -> None:
    """A session whose folder is a 97-character path: at COLUMNS=80 and 100, `status` wraps at
    spaces; the folder and each carried file's path are whole on one line, the paths under the
    folder said once (on main the folder was cut in the middle of a name, a file's path mid-word)."""
    import json
    import os

    from tests.oracle import TRANSCRIPTS, sw

    src = TRANSCRIPTS / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    old = next(json.loads(ln)["cwd"] for ln in src.read_text().splitlines() if '"cwd"' in ln)
    moved = tmp_path / src.name
    moved.write_text(src.read_text().replace(old, LONG_CWD))
    proc = sw("status", str(moved), env={**os.environ, "COLUMNS": str(width)})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    # the folder, whole, on a line of its own (it does not fit after a label): the header's project
    # line's, then the carried files'
    assert lines.count(LONG_CWD) == 2
    assert lines[lines.index(LONG_CWD) - 1] == "project"
    carried = lines[len(lines) - lines[::-1].index(LONG_CWD):]
    assert len(carried) == 8
    for line in carried:
        size, path = line.split()
        assert size[0].isdigit()
        assert not path.startswith("/")
        assert path.endswith((".ex", ".exs", ".json", ".md", ".sh", ".js", ".toml", ".yml", ".txt", ".heex"))
    for line in lines:
        assert len(line) <= width or line == LONG_CWD, line
        assert not line.strip().startswith(("very", "-", "svc", "api", "ame")), line  # no path's tail on a line


def _words_and_paths() -> Any:
    from hypothesis import strategies as st

    word = st.text(alphabet="abc/-._", min_size=1, max_size=30)
    line = st.lists(st.tuples(word, st.sampled_from([" ", "  ", "   "])), max_size=12).map(
        lambda parts: "".join(w + sep for w, sep in parts).rstrip())
    return st.tuples(st.lists(line, min_size=1, max_size=4).map("\n".join), st.integers(min_value=20, max_value=120))


@given(_words_and_paths())
@example(("carried  17 files, largest first, under /" + "a" * 95, 80))
def test_fit_keeps_every_word_whole(case: tuple[str, int]) -> None:
    """Every word of the text, in order and never cut; each line within the width unless it is one
    word longer than the width."""
    from session_watcher.core.text import fit

    text, width = case
    out = fit(text, width)
    assert out.split() == text.split()
    for line in out.split("\n"):
        assert len(line) <= width or len(line.split()) == 1, (line, width)


@given(_words_and_paths())
@example((f"restart taken in {LONG_CWD}: carry written 12k ($0.05)", 80))
@example(("by project (the 10 costliest of 12; all in --json) under /" + "b" * 95 + " and more", 80))
def test_report_sentences_keep_every_word_whole(case: tuple[str, int]) -> None:
    """The text report's sentences (`core.text.wrap`, fit's rule) break at spaces only: every word in
    order and whole, each line within the width unless it is one word longer than the room, the later
    lines indented by two (main's textwrap cut a 97-character project path at 80 columns)."""
    from session_watcher.core.text import wrap

    text, width = case
    lines = wrap(text, width)
    assert " ".join(lines).split() == text.split()
    for line in lines:
        assert len(line) <= width or len(line.split()) == 1, (line, width)
    for line in lines[1:]:
        assert line.startswith("  ") or len(line) > width - 2, line


def test_report_wraps_a_long_path_whole() -> None:
    """`reports.render_text` says its sentences through that rule: at 80 columns a project path
    longer than the room after the indent stands whole on a line of its own, from the first column."""
    from session_watcher.core.text import wrap
    from session_watcher.reports import render_text

    assert vars(render_text)["wrap"] is wrap  # the name it imported (not one it exports) is the rule's own
    assert wrap(f"restart taken in {LONG_CWD}: carry written 12k ($0.05)", 80) == [
        "restart taken in", LONG_CWD + ":", "  carry written 12k ($0.05)"]
    assert wrap("", 80) == [""]
    assert wrap("one\ntwo\tthree", 9) == ["one two", "  three"]


@pytest.mark.slow
def test_report_text_at_80_columns_with_a_long_project_path(tmp_path: Path) -> None:
    """`report` at COLUMNS=80 over a session whose folder is a 97-character path: every line within
    80 columns (a table's project cell is the folder's last name, shortened with a mark)."""
    import json
    import os

    from tests.oracle import TRANSCRIPTS, sw

    src = TRANSCRIPTS / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    old = next(json.loads(ln)["cwd"] for ln in src.read_text().splitlines() if '"cwd"' in ln)
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / src.name).write_text(src.read_text().replace(old, LONG_CWD))
    proc = sw("report", "--projects", str(tmp_path / "p"), "--index", str(tmp_path / "i.db"),
              env={**os.environ, "COLUMNS": "80"})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    assert any("258c7280" in line for line in lines)
    for line in lines:
        assert len(line) <= 80, line


@pytest.mark.slow
@pytest.mark.parametrize("width", [40, 60, 80])
def test_report_text_fits_a_narrow_terminal(width: int) -> None:
    """`report` over the test transcripts at COLUMNS=40, 60 and 80: every line within the width. At
    40 its tables ran to 57 columns (sessions: id, started, project, calls and cache $ left after the
    columns it leaves out) and 42 (by day, by week, the cliff): past its columns left out, a table
    cuts the project's name, then leaves out more, and says which; the session's id, calls and cache
    $ are always there."""
    import os

    from tests.oracle import TRANSCRIPTS, sw

    proc = sw("report", "--projects", str(TRANSCRIPTS), env={**os.environ, "COLUMNS": str(width)})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    assert [line for line in lines if len(line) > width] == []
    head = lines[lines.index("sessions, newest first") + 1]
    assert head.startswith("id ")
    assert "  calls  cache $" in head
    assert any(line.startswith("258c7280") for line in lines)
    if width == 40:
        said = " ".join(" ".join(lines).split())
        assert "(sessions: left out at this width; all in --json)" in said  # by day and by week
        assert "(last active: left out at this width; all in --json)" in said  # by project


def test_report_by_project_fits_60_columns() -> None:
    """The by-project table's names are cut to what the width leaves (a 24-character name made it
    63 columns wide at COLUMNS=60); where there is room they stay as long as before."""
    from session_watcher.reports.render_text import totals_rows

    name = "test-explain-checkpoint-boundaries"
    doc = {"totals": {"days": [], "weeks": [], "projects": [
        {"project": name, "sessions": 3, "calls": 1060, "cacheUsd": 159.8, "lastActivity": None}]}}
    narrow = totals_rows(doc, 60)
    assert max(len(line) for line in narrow) <= 60
    assert narrow[-1].startswith("test-explain-checkpo…  ")  # 21 = 60 - the other columns (39)
    wide = totals_rows(doc, 100)
    assert wide[-1].startswith("test-explain-checkpoint…  ")  # 24 characters, as before


def test_two_repositories_worktrees_of_one_name_are_told_apart_by_project() -> None:
    """Two projects of one name are told apart by the folder above: `a/shop`, `b/shop`. Two clones'
    worktrees of one name (`cli/1` twice) read `.worktrees/1` both, the last two folders of each:
    they read `a/cli/1` and `b/cli/1`."""
    from session_watcher.reports.render_text import project_names

    projects = [{"project": name, "cwd": cwd} for name, cwd in (
        ("cli/1", "/home/u/a/cli/.worktrees/1"), ("cli/1", "/home/u/b/cli/.worktrees/1"),
        ("shop", "/srv/a/shop"), ("shop", "/srv/b/shop/"), ("cli/feat", "/home/u/a/cli/.claude/worktrees/feat"))]
    assert project_names(projects) == ["a/cli/1", "b/cli/1", "a/shop", "b/shop", "cli/feat"]


def test_report_by_day_says_its_rows_are_days_with_calls() -> None:
    """15 days with calls over a month: the 14 shown are the last days that had any, said so ("the
    last 14" read as the last 14 calendar days)."""
    from session_watcher.reports.render_text import totals_rows

    days = [{"date": f"2026-07-{2 * d + 1:02d}", "sessions": 1, "calls": 3, "cacheUsd": 0.5, "warmth": 0.9}
            for d in range(15)]
    lines = totals_rows({"totals": {"days": days, "weeks": [], "projects": []}}, 80)
    assert lines[1] == "by day (the last 14 with calls; all in --json)"
    assert lines[4].startswith("2026-07-29 ")
    assert lines[-1].startswith("2026-07-03 ")


@pytest.mark.parametrize("width", ["80", "61"])
def test_help_is_wrapped_at_spaces_only(width: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command's `--help` wraps at spaces, as the rest of the CLI's text: argparse's own
    wrapping broke `export --help`'s `YYYY-MM-DDTHH:MM` after `YYYY-` and `report --help`'s
    `OUT-sessions/` after `OUT-`, a word cut in two at the line's end."""
    import argparse
    import re

    from session_watcher.cli import COMMANDS, build_parser

    monkeypatch.setenv("COLUMNS", width)

    def helps(parser: argparse.ArgumentParser) -> list[str]:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        return [parser.format_help()] + [h for s in subs for p in s.choices.values() for h in helps(p)]

    texts = [h for name in (None, *COMMANDS) for h in helps(build_parser(name))]
    assert len(texts) > len(COMMANDS)  # report session, config's subcommands
    for text in texts:
        assert not [line for line in text.splitlines() if re.search(r"\w-$", line)], text
    said = {name: " ".join(" ".join(helps(build_parser(name))).split()) for name in ("export", "report")}
    assert "YYYY-MM-DDTHH:MM" in said["export"]
    assert "OUT-sessions/" in said["report"]


def test_wrap_keeps_a_number_with_its_unit() -> None:
    """A break never falls between a number and its unit, nor inside a duration: `handoff --show`
    said "written 4 min 30" at the end of a line and "s ago" on the next."""
    from session_watcher.core.text import fit, wrap

    said = "waiting: the handoff for /tmp/hcu/u/proj from session 01a247d5, written 4 min 30 s ago"
    assert wrap(said, 80) == ["waiting: the handoff for /tmp/hcu/u/proj from session 01a247d5, written",
                              "  4 min 30 s ago"]
    assert wrap("the cache lasts 30 min and 40 % of it is read", 20) == [
        "the cache lasts", "  30 min and 40 % of", "  it is read"]
    assert wrap("last call 6 h 3 min ago", 14) == ["last call", "  6 h 3 min", "  ago"]
    assert fit("guard      cold by ttl (codex-30m cache, lasts 30 min), last call 6 h 3 min ago", 60) == (
        "guard      cold by ttl (codex-30m cache, lasts 30 min), last\n"
        "           call 6 h 3 min ago")
    assert wrap("version 2 s3 and v2 s", 12) == ["version 2 s3", "  and v2 s"]  # no number: no unit
    # a duration wider than the width itself is broken at its spaces after all, each line within it
    # (it was one line of 15 in 10): a word is the only thing that goes past the width
    assert wrap("gap 1 h 00 min 10 s", 10) == ["gap", "1 h 00 min", "  10 s"]
    assert wrap("gap 1 h 00 min 10 s", 8) == ["gap 1 h", "  00 min", "  10 s"]
    # a unit that ends a clause ("min),", "s.") or a number after a bracket or a sign ("(5", "-3")
    # keeps them together too: the report's idle-gap line broke "(5" / "min for 5m writes" at 56 columns
    gap = "idle gap: a break at least as long as the cache lives (5 min for 5m writes, 60 min for 1h writes)"
    assert wrap(gap, 56)[0] == "idle gap: a break at least as long as the cache lives"
    assert wrap("guard cold (codex-30m cache, lasts 30 min), last call 4 min 30 s.", 40) == [
        "guard cold (codex-30m cache, lasts", "  30 min), last call 4 min 30 s."]
    assert wrap("it would have cost $1.20 more (-3 %), best 4 min 30 s.", 30) == [
        "it would have cost $1.20 more", "  (-3 %), best 4 min 30 s."]
    assert all(len(row) <= width for width in range(7, 30)  # "between", 7, the longest word
               for row in wrap("the edge lies between a 1 h 00 min 10 s gap and 40 %", width))


def test_fit_keeps_a_path_with_a_space_whole() -> None:
    """install.sh's lines name folders that may hold a space ("My Config"): `fit`'s `keep` holds each
    one as one word, so it is never cut at its space; a path without a space and the rest as before."""
    from session_watcher.core.text import fit

    path = "/home/u/My Config/session-watcher/config.toml"
    text = f"your config stays in {path} (delete it yourself if you wish)"
    assert path not in fit(text, 30).split("\n")  # cut at its space without keep
    lines = fit(text, 30, [path, "", "/no/space"]).split("\n")
    assert lines == ["your config stays in", path, "  (delete it yourself if you", "  wish)"]


@pytest.mark.slow  # starts a process
def test_install_sh_says_a_path_with_a_space_whole(tmp_path: Path) -> None:
    """`python -m session_watcher.cli.install say TEXT PATH...`, as install.sh says its lines."""
    import os
    import subprocess
    import sys

    path = str(tmp_path / "a folder" / "venv")
    got = subprocess.run([sys.executable, "-I", "-m", "session_watcher.cli.install", "say", f"removed {path}", path],
                         capture_output=True, text=True, env={**os.environ, "COLUMNS": "20"}, check=True)
    assert got.stdout.split("\n")[:2] == ["removed", path]
