"""One session's page: a self-contained HTML file (inline CSS, JS and SVG, no network).

`reports.live_view` serves the same page live; the command line is `reports.session_cli`.
"""

from __future__ import annotations

import html
import json
import re
from typing import TYPE_CHECKING, Any

from session_watcher.core.text import clean_data, one_line, utf8
from session_watcher.reports.session_page_data import load_model
from session_watcher.reports.session_page_template import CSS, JS, PAGE, THEME

if TYPE_CHECKING:
    from collections.abc import Iterator


def model_json(model: dict[str, Any], rows_text: list[str] | None = None) -> list[str]:
    """`json.dumps(model, separators=(",", ":"), allow_nan=False)` in pieces, each row and story row
    its own (a long session's text is never one string); `rows_text`: the rows' texts, already made."""
    if not model:
        return ["{}"]
    out: list[str] = []
    for key, value in model.items():
        out.append(("," if out else "{") + json.dumps(key) + ":")
        if key in ("rows", "story") and isinstance(value, list):
            items = rows_text if key == "rows" and rows_text is not None else [_dumps(v) for v in value]
            out.append("[")
            for i, item in enumerate(items):
                if i:
                    out.append(",")
                out.append(item)
            out.append("]")
        else:
            out.append(_dumps(value))
    out.append("}")
    return out


def _dumps(value: object) -> str:
    """JSON of page data, every string cleaned (`core.text.clean_data`)."""
    return json.dumps(clean_data(value), separators=(",", ":"), allow_nan=False)


_SLOT = re.compile(r"__[A-Z]+__")


def page_parts(model: dict[str, Any], live: bool = False, rows_text: list[str] | None = None) -> list[str]:
    """The page for one session's model, as pieces to join or write one after another.

    The template's slots are filled in one pass over the template alone (cut at `__MODEL__` first),
    so a value that spells a slot (`__JS__` in a session id) stays text; text from the session is
    one field each (`core.text.one_line`: no raw control character, no lone surrogate)."""
    sid = one_line(str(model.get("sessionId") or "session"))
    slots = {
        "__TITLE__": html.escape(f"Session {sid} · session-watcher"),
        "__HEADING__": html.escape(f"Session {sid}"),
        "__LIVE__": "1" if live else "0",
        "__LIVESTATUS__": "connecting…" if live else "",
        "__THEME__": THEME,
        "__CSS__": CSS,
        "__JS__": JS,
        "__BACKTEST__": _backtest_html(model),
    }

    def fill(template: str) -> str:
        return _SLOT.sub(lambda m: slots.get(m.group(0), m.group(0)), template)

    # inside <script>: no "</script>", "<!--" or "<script" may change how the element is parsed
    data = [piece.replace("<", "\\u003c") for piece in model_json(model, rows_text)]
    out: list[str] = []
    for i, text in enumerate(PAGE.split("__MODEL__")):  # the template's one model slot
        if i:
            out += data
        out.append(fill(text))
    return out


def _backtest_html(model: dict[str, Any]) -> str:
    """The backtest's line (core.backtest.sentence), or nothing without the watcher's trace."""
    bt = model.get("backtest")
    if not isinstance(bt, dict) or not bt.get("sentence"):
        return ""
    return f'<p id="backtest">{html.escape(one_line(str(bt["sentence"])))}</p>'


def write_html(transcript: str, out: str, now: float | None = None) -> dict[str, Any]:
    """The page of `transcript` at `out`, its restart saving priced at `now` (default the clock's)."""
    model = load_model(transcript, now=now)
    from session_watcher.base.atomic import write_atomic

    # user-only (the page shows commands, URLs and prompts); a unique temp file, never a planted one
    write_atomic(out, _encoded(page_parts(model)), mode=0o600, fsync=False)
    return model


def _encoded(parts: list[str], block: int = 1 << 20) -> Iterator[bytes]:
    """The pieces as UTF-8, about `block` characters a write (never the whole page as one string)."""
    group: list[str] = []
    size = 0
    for part in parts:
        group.append(part)
        size += len(part)
        if size >= block:
            yield utf8("".join(group))  # a lone surrogate: its escape, never a failed page
            group, size = [], 0
    if group:
        yield utf8("".join(group))
