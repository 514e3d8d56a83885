"""The report's text and page say the same things in the same words: a day whose only session made one
call has no warmth ("-" in both; the page said "undefined"); a mark is explained only where it is shown."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from session_watcher.reports import render_html, render_text
from tests.test_report_cli import _html_tables, _text_table
from tests.test_warmth import COLD, T0, WARM, Transcript, home, report

__all__ = ["home"]  # the fixture: a private SESSION_WATCHER_HOME and CLAUDE_CONFIG_DIR

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.quick


def test_a_day_of_one_call_reads_the_same_on_the_page_as_in_the_text(home: Path) -> None:
    proj = home / "claude" / "projects" / "-home-u-p"
    Transcript("lone").call(T0, 0, 15_000).write(proj)  # alone on its day: one call, nothing to be warm with
    Transcript("next").call(T0 + 86400, *WARM).call(T0 + 86400 + 9, *WARM).write(proj)
    doc = report(proj.parent, now=T0 + 2 * 86400)
    assert doc["totals"]["days"][0]["warmth"] is None
    text = render_text.render(doc, width=200)
    page = _html_tables(render_html.render(doc))
    days = _text_table(text, "by day")
    assert days[-1][-1] == "-"
    assert page["days"] == days
    assert "undefined" not in text
    assert "undefined" not in render_html.render(doc)



def test_the_cold_mark_is_explained_only_where_its_column_is_shown(home: Path) -> None:
    """"cold*" (the call after the longest break ran cold, not from the break) is explained under the
    sessions only when the width kept the longest break's column: at 80 columns it is left out, and
    the note explained a mark nowhere on the screen."""
    proj = home / "claude" / "projects" / "-home-u-p"
    Transcript("odd").call(T0, *WARM).call(T0 + 60, *COLD).call(T0 + 70, *WARM).write(proj)
    doc = report(proj.parent)
    wide, narrow = render_text.render(doc, width=200), render_text.render(doc, width=80)
    assert "1m cold*" in wide
    assert "cold*: the call after the break ran cold" in wide
    assert "longest break" in narrow.split("sessions, newest first")[1].split("\n\n")[0]  # said left out
    assert "cold*" not in narrow
