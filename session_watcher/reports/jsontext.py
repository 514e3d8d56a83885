"""`cli.messages.json_text`'s text without importing `json` (and `re` and `enum` with it, a share
of a warm report's start-up): the C encoder `json.dumps` itself runs, ASCII only, standard JSON:
a figure JSON cannot hold (NaN, an infinity) is written null, as `json_text` writes it, so no text
the report makes, keeps in its index and sends again as it is holds `NaN` or `Infinity`
(`finite_pieces` checks a text made in pieces before the index keeps it). `core.fastjson` reads."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

try:
    import _json
except ImportError:  # pragma: no cover - not CPython
    _json = None  # type: ignore[assignment]


def _fail(obj: object) -> object:
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def _encoder(item_sep: str, key_sep: str) -> Callable[[Any], str]:
    from session_watcher.core.fastjson import finite

    try:  # `_json` is CPython's own, not a public API: another interpreter's, or another signature,
        encode = _json.make_encoder({}, _fail, _json.encode_basestring_ascii, None, key_sep, item_sep,
                                    False, False, False)
    except (AttributeError, TypeError):  # means `json` itself, at the cost of its import
        import json

        def dumps(obj: Any) -> str:
            try:
                return json.dumps(obj, separators=(item_sep, key_sep), allow_nan=False)
            except ValueError:  # a figure JSON cannot hold: null
                return json.dumps(finite(obj), separators=(item_sep, key_sep), allow_nan=False)

        return dumps

    def c_dumps(obj: Any) -> str:
        try:
            return "".join(encode(obj, 0))
        except ValueError:  # a figure JSON cannot hold: null (`finite` copies only on this rare path)
            return "".join(encode(finite(obj), 0))

    return c_dumps


dumps = _encoder(",", ":")  # json_text(obj, separators=(",", ":"))
dumps_spaced = _encoder(", ", ": ")  # json_text(obj)

# what `json.dumps` writes for a figure JSON cannot hold (`allow_nan`); no text of these encoders
# holds one outside a string
NON_FINITE = (b"NaN", b"Infinity")
# what stands before a figure in a JSON text (a member's or an item's separator, compact or spaced, a
# minus): a word found after none of these is inside a string (a folder named `NaN`, `~/Infinity`)
BEFORE = (b":", b",", b"[", b" ", b":-", b",-", b"[-", b" -")


def _figure(text: bytes) -> bool:
    """Whether `text` may hold `NaN` or `Infinity` as a figure (a word after none of `BEFORE`: in a
    string only). The word itself is looked for first: the rule's text holds neither."""
    return any(word in text and any(b + word in text for b in BEFORE) for word in NON_FINITE)


def finite_pieces(pieces: list[bytes | memoryview], tail: bytes = b"") -> list[bytes | memoryview]:
    """The JSON text in `pieces` (with `tail` it is one document: `b"}"` closes the report's open
    object) as these encoders write it: the pieces as they are where the new ones (bytes) hold
    neither `NaN` nor `Infinity` as a figure (every text of `dumps`), or where the text read and
    written again is the same text (the word in a string only); else that text, each such figure
    null, in one piece (without `tail`): a text of another length, whose places (`reports.merge`'s
    spans) are not the pieces'. A memoryview is a stretch of a text the index kept
    (`reports.stored`), which passed here when it was kept: not read again (a warm run that changed
    a few sessions reads their text alone)."""
    # each new piece after a comma: a figure a piece begins with is found as one after a memoryview
    if not _figure(b",".join([p for p in pieces if not isinstance(p, memoryview)])):
        return pieces
    from session_watcher.core import fastjson

    text = b"".join(pieces)
    again = dumps(fastjson.loads(text + tail)).encode()
    again = again[:len(again) - len(tail)] if tail else again
    return pieces if again == text else [again]
