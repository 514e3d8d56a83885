"""One session's page: a self-contained HTML file (inline CSS, JS and SVG, no network).

`reports.live_view` serves the same page live; the command line is `reports.session_cli`.
"""

from __future__ import annotations

import html
import json
import re
from typing import TYPE_CHECKING, Any

from session_watcher.core.text import clean_data, keep_units, one_line, utf8
from session_watcher.reports import jsontext
from session_watcher.reports.session_page_data import Packed, load_model
from session_watcher.reports.session_page_template import CSS, JS, PAGE, THEME

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import BinaryIO


def model_json(model: dict[str, Any], rows_text: list[str] | None = None) -> Iterator[str]:
    """`json.dumps(model, separators=(",", ":"))` in pieces, a figure JSON cannot hold written null
    (`reports.jsontext`, as every JSON the CLI writes), made as they are asked
    for (a long session's text is never one string, nor all its pieces at once): the rows and story
    rows a block at a time (`_items`); `rows_text`: the rows' texts, already made."""
    if not model:
        yield "{}"
        return
    first = True
    for key, value in model.items():
        yield ("{" if first else ",") + json.dumps(key) + ":"
        first = False
        if key in ("rows", "story") and isinstance(value, list):
            yield "["
            yield from _items(value, rows_text if key == "rows" else None)
            yield "]"
        else:
            yield _dumps(value)
    yield "}"


BLOCK = 512  # rows encoded by one json.dumps
# in JSON as json.dumps writes it (ASCII), a string `clean` changes shows one of these: a character past
# ASCII or a control character escaped, or DEL as it is
_UNCLEAN = ("\\u", "\\r", "\\b", "\\f", "\x7f")


def _items(values: list[Any], texts: list[str] | None) -> Iterator[str]:
    """The items of a JSON array, separated by commas, a block at a time: the block by one
    json.dumps where no string in it needs `clean` (the same text as `_dumps` item by item)."""
    for i in range(0, len(values), BLOCK):
        if i:
            yield ","
        if texts is not None:
            yield ",".join(texts[i:i + BLOCK])
            continue
        block = values[i:i + BLOCK]
        if isinstance(values, Packed):
            written = values.as_json(block) if values.as_json is not None else None
            if written is not None:  # each row's text, its dict's where a string in it needs `clean`
                text = ",".join(written)
                yield ",".join(t if not _unclean(t) else _dumps(values.as_dict(v))
                               for t, v in zip(written, block, strict=True)) if _unclean(text) else text
                continue
            block = [values.as_dict(v) for v in block]
        text = jsontext.dumps(block)
        yield ",".join(_dumps(v) for v in block) if _unclean(text) else text[1:-1]


def _unclean(text: str) -> bool:
    """The JSON shows a string `clean` changes (`_UNCLEAN`): each escape looked for only where
    there is a backslash at all."""
    return "\x7f" in text or ("\\" in text and any(m in text for m in _UNCLEAN))


def _dumps(value: object) -> str:
    """JSON of page data, every string cleaned (`core.text.clean_data`), a figure JSON cannot hold
    written null (`reports.jsontext`)."""
    return jsontext.dumps(clean_data(value))


_SLOT = re.compile(r"__[A-Z]+__")


def page_parts(model: dict[str, Any], live: bool = False, rows_text: list[str] | None = None) -> Iterator[str]:
    """The page for one session's model, as pieces to join or write one after another (made as
    they are taken).

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

    for i, text in enumerate(PAGE.split("__MODEL__")):  # the template's one model slot
        if i:  # inside <script>: no "</script>", "<!--" or "<script" may change how the element is parsed
            yield from (piece.replace("<", "\\u003c") for piece in model_json(model, rows_text))
        yield fill(text)


def _backtest_html(model: dict[str, Any]) -> str:
    """The backtest's line (core.backtest.sentence), a number kept with its unit (`keep_units`), or
    nothing without the watcher's trace; a fork's, after the line that says what its figures leave
    out (`session_page_data.fork_of`)."""
    fork = model.get("fork")
    said = f'<p id="fork">{html.escape(one_line(str(fork["text"])))}.</p>\n' if isinstance(fork, dict) else ""
    bt = model.get("backtest")
    if not isinstance(bt, dict) or not bt.get("sentence"):
        return said
    return said + f'<p id="backtest">{html.escape(keep_units(one_line(str(bt["sentence"]))))}</p>'


def write_html(transcript: str, out: str, now: float | None = None, stream: BinaryIO | None = None,
               ) -> dict[str, Any]:
    """The page of `transcript` at `out` (or, given a `stream`, written to it: `--html -`), its restart
    saving priced at `now` (default the clock's)."""
    _steady_malloc()
    model = load_model(transcript, now=now, packed=True)
    if stream is not None:
        for chunk in _encoded(page_parts(model)):
            stream.write(chunk)
        stream.flush()
        return model
    from session_watcher.base.atomic import write_atomic

    # user-only (the page shows commands, URLs and prompts); a unique temp file, never a planted one
    write_atomic(out, _encoded(page_parts(model)), mode=0o600, fsync=False)
    return model


def _steady_malloc() -> None:
    """glibc's malloc raises its mmap threshold to the largest block freed (the reader's 8 MiB
    chunks), after which a chunk is carved from the heap among the page's rows, which keep the heap
    from shrinking: the page's peak RSS then varied run to run (docs/benchmarks.md). The threshold
    fixed at glibc's own start value keeps every chunk its own mapping, given back when freed."""
    try:
        import ctypes

        ctypes.CDLL(None).mallopt(-3, 128 << 10)  # M_MMAP_THRESHOLD; another libc has no mallopt
    except (ImportError, OSError, AttributeError, TypeError):  # ImportError: a Python built without ctypes
        pass


def _encoded(parts: Iterable[str], block: int = 1 << 16) -> Iterator[bytes]:
    """The pieces as UTF-8, about `block` characters a write (never the whole page as one string;
    a write's text under glibc's mmap threshold, `_steady_malloc`: its memory reused, not mapped anew)."""
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
