"""`json.dumps`'s text without importing `json` (and `re` and `enum` with it, a share of a warm
report's start-up): the C encoder `json.dumps` itself runs, with its defaults (ASCII only, NaN
and infinities written as `json.dumps` writes them). `core.fastjson` reads; it refuses NaN."""

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
    try:  # `_json` is CPython's own, not a public API: another interpreter's, or another signature,
        encode = _json.make_encoder({}, _fail, _json.encode_basestring_ascii, None, key_sep, item_sep,
                                    False, False, True)
    except (AttributeError, TypeError):  # means `json` itself, at the cost of its import
        import json

        return lambda obj: json.dumps(obj, separators=(item_sep, key_sep))
    return lambda obj: "".join(encode(obj, 0))


dumps = _encoder(",", ":")  # json.dumps(obj, separators=(",", ":"))
dumps_spaced = _encoder(", ", ": ")  # json.dumps(obj)
