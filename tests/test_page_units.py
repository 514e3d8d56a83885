"""A page's text keeps a number with its unit, and a whole duration, on one line (a no-break space,
`core.text.keep_units`: the words `core.text.wrap` holds together), and only in the text it shows."""

from __future__ import annotations

import pytest

from session_watcher.core.text import keep_units, wrap
from session_watcher.reports.render_html import _unbroken
from session_watcher.reports.session_page import _backtest_html

pytestmark = pytest.mark.quick

NB = "\u00a0"


def test_keep_units_holds_what_wrap_holds() -> None:
    said = "saved $2.52 (23 %) in 4 min 30 s, 6 h 3 min later, 30 min idle, 1.5 days, 5 calls, min 3 s"
    held = keep_units(said)
    assert held == (f"saved $2.52 (23{NB}%) in 4{NB}min{NB}30{NB}s, 6{NB}h{NB}3{NB}min later, 30{NB}min idle, "
                    f"1.5{NB}days, 5 calls, min 3{NB}s")
    for width in range(12, 40):  # each held group is one of wrap's words: never cut at any width
        lines = wrap(said, width, 0)
        for group in held.split(" "):
            if NB in group:
                assert any(group.replace(NB, " ") in line for line in lines), (width, group, lines)
    assert keep_units("nothing to hold") == "nothing to hold"


def test_the_report_page_holds_units_in_its_text_alone() -> None:
    page = ('<style>.a{margin:1 s}</style><p class="x" title="after 5 h" data-tip="30 min">'
            '<a href="s 5 min.html">idle 4 min 30 s</a> then 100 %</p>')
    got = _unbroken(page)
    assert got == (f'<style>.a{{margin:1 s}}</style><p class="x" title="after 5{NB}h" data-tip="30 min">'
                   f'<a href="s 5 min.html">idle 4{NB}min{NB}30{NB}s</a> then 100{NB}%</p>')


def test_the_session_page_backtest_line_holds_its_units() -> None:
    line = _backtest_html({"backtest": {"sentence": "would have saved $2.52 (23 %) over 4 min 30 s"}})
    assert line == f'<p id="backtest">would have saved $2.52 (23{NB}%) over 4{NB}min{NB}30{NB}s</p>'


def test_a_token_count_keeps_its_word() -> None:
    """"N tokens" stays whole where a page shows it (the report page's tooltips held it before its own
    unit pattern gave way to `keep_units`, whose units had no "tokens"), the count as `core.numbers`
    writes it too ("2.4M tokens"); in a terminal's lines as well (`wrap`: one rule)."""
    said = "re-wrote 12,345 tokens, about $0.72 (2.4M tokens at the cache-read price), 1 token, 10k tokens."
    assert keep_units(said) == (f"re-wrote 12,345{NB}tokens, about $0.72 (2.4M{NB}tokens at the cache-read "
                                f"price), 1{NB}token, 10k{NB}tokens.")
    assert keep_units("tokens re-created, M tokens, v2 tokens") == "tokens re-created, M tokens, v2 tokens"
    assert wrap("it re-wrote 12,345 tokens", 22, 0) == ["it re-wrote", "12,345 tokens"]
    tip = "<title>21 min gap, 84,000 tokens re-created (5m)</title>"
    assert _unbroken(tip) == f"<title>21{NB}min gap, 84,000{NB}tokens re-created (5m)</title>"
