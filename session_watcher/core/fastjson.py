"""JSON for the hot path, through CPython's `_json` accelerator without importing `json`.

`import json` is slow to import, almost all of it `re` and `enum`, which json's pure-Python layers
import for their fallbacks and whitespace handling. The C scanner and encoder underneath (`_json`,
the same code `json.loads`/`json.dumps` run) need neither. This module calls them directly: same
parser, same output as `json.dumps(obj, separators=(",", ":"))`, a tenth of the import. Where
`_json` is missing (another Python implementation), it is plain `json`.
"""

from __future__ import annotations

from session_watcher.core.errors import JSONError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

try:
    import _json
except ImportError:  # pragma: no cover - not CPython
    _json = None  # type: ignore[assignment]

_WS = " \t\n\r"


def _constant(name: str) -> float:
    return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


class _Context:
    # the attributes `_json.make_scanner` reads, as json.JSONDecoder defines them
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_constant)
    memo: dict[str, str] = {}  # noqa: RUF012 - read by the C scanner, which keeps its own memo


PAYLOAD_INT = 1 << 53  # a payload integer beyond this (exact as a float) reads as null


def _payload_int(text: str) -> int | None:
    if len(text) > 17:  # past PAYLOAD_INT however it is spelled (and int()'s digit limit)
        return None
    v = int(text)
    return v if -PAYLOAD_INT <= v <= PAYLOAD_INT else None


def _payload_float(text: str) -> float | None:
    v = float(text)
    return v if v - v == 0.0 else None  # 1e400 is infinite: null, like NaN


def _payload_constant(_name: str) -> None:
    return None  # NaN, Infinity, -Infinity: no JSON value, and none a state can be saved with


class _PayloadContext(_Context):
    parse_float = staticmethod(_payload_float)  # type: ignore[assignment]
    parse_int = staticmethod(_payload_int)  # type: ignore[assignment]
    parse_constant = staticmethod(_payload_constant)  # type: ignore[assignment]


def _fail(_obj: object) -> object:
    raise TypeError(f"Object of type {type(_obj).__name__} is not JSON serializable")


if _json is not None:
    _scan = _json.make_scanner(_Context())  # type: ignore[arg-type]
    _encode = _json.make_encoder(None, _fail, _json.encode_basestring_ascii, None, ":", ",", False, False, False)

    _payload_scan = _json.make_scanner(_PayloadContext())  # type: ignore[arg-type]

    def loads(data: bytes | bytearray | str, _scan: Any = _scan) -> Any:
        """Parse one JSON document (bytes must be UTF-8)."""
        try:
            text = data.decode("utf-8") if isinstance(data, bytes | bytearray) else data
        except UnicodeDecodeError as exc:
            raise JSONError(str(exc)) from None
        start = 0
        while start < len(text) and text[start] in _WS:
            start += 1
        try:
            obj, end = _scan(text, start)
        except StopIteration:
            raise JSONError("expected a JSON value") from None
        except (SystemError, ValueError):
            # A syntax error: the scanner raises it as json.decoder.JSONDecodeError. On 3.11 that
            # module is not loaded, so the raise fails as SystemError; 3.12 and later import it
            # (and `re` with it) first, then raise JSONDecodeError. Both only on broken input.
            raise JSONError("not valid JSON") from None
        except RecursionError:  # `[[[[...` nested past the C stack guard: hostile, not a crash
            raise JSONError("nested too deeply") from None
        if text[end:].strip(_WS):
            raise JSONError(f"extra data at {end}")
        return obj

    def load_payload(data: bytes | bytearray | str) -> Any:
        """`loads` for what a client sends (a hook's or the status line's stdin): every number a
        state can hold (NaN, Infinity, 1e400 and integers beyond 2**53 read as null), so one
        absurd field never stops a run from saving."""
        return loads(data, _payload_scan)

    def dumps(obj: Any) -> str:
        """Compact JSON, ASCII only; NaN and infinities are refused, never written."""
        return "".join(_encode(obj, 0))

    def scanner() -> Any:
        """The C scanner itself, `(text, index) -> (value, end)`, for callers that check the rest."""
        return _scan

else:  # pragma: no cover
    import json as _std

    def loads(data: bytes | bytearray | str) -> Any:
        try:
            return _std.loads(data)
        except ValueError as exc:
            raise JSONError(str(exc)) from None

    def load_payload(data: bytes | bytearray | str) -> Any:
        try:
            return _std.loads(data, parse_float=_payload_float, parse_int=_payload_int,
                              parse_constant=_payload_constant)
        except ValueError as exc:
            raise JSONError(str(exc)) from None

    def dumps(obj: Any) -> str:
        return _std.dumps(obj, separators=(",", ":"), allow_nan=False)

    def scanner() -> Any:
        return _std.JSONDecoder().scan_once


def finite(v: object) -> object:
    """`v` with every float JSON cannot hold (NaN, an infinity) made None: nested dicts, lists and
    tuples (as lists) copied, the rest as it is."""
    if isinstance(v, float):
        return v if v - v == 0.0 else None
    if isinstance(v, dict):
        return {k: finite(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [finite(x) for x in v]
    return v
