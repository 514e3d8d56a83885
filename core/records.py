"""What the two fast transcript parsers share (`core.bulkparse` for replay, `reports.parse` for the
report): msgspec, imported without typing_extensions; the usage object as structs; and the timestamp
reader. Pure. Not for hooks: msgspec costs an import they need not pay."""

from __future__ import annotations

import sys

from session_watcher.core.transcript import iso_to_epoch

# msgspec imports typing_extensions (and with it inspect and ast, ~8 ms) only to recognize that
# module's TypedDict, which no struct here uses; without it, it takes `typing`'s
_HIDE = "typing_extensions" not in sys.modules
if _HIDE:
    sys.modules["typing_extensions"] = None  # type: ignore[assignment]
try:
    import msgspec as msgspec  # noqa: PLC0414 - re-exported: the parsers take it from here, imported this way
finally:
    if _HIDE and sys.modules.get("typing_extensions", 0) is None:
        del sys.modules["typing_extensions"]  # a later import finds the real module


# Each field typed as `core.transcript` reads it: `Any` where it tests the value itself (`is True`,
# isinstance), a struct or an int where it must be one (another type: the scanner's path decides).
class Split(msgspec.Struct):
    ephemeral_5m_input_tokens: int = 0
    ephemeral_1h_input_tokens: int = 0


class Usage(msgspec.Struct):
    input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    output_tokens: int = 0
    cache_creation: Split | None = None


_SECONDS = {f"{n:02d}": n for n in range(100)}
_FRACTIONS = {f".{n:03d}Z": float(f"0.{n:03d}") for n in range(1000)}
_MINUTES: dict[str, int | None] = {}
_WHOLE: dict[str, int | None] = {}  # 'YYYY-MM-DDTHH:MM:SS' -> its epoch second, or None


def _whole_second(head: str) -> int | None:
    """The epoch second of 'YYYY-MM-DDTHH:MM:SS' (the minute's, remembered, plus the seconds)."""
    minute = _MINUTES.get(head[:17], -1)
    if minute == -1:
        if len(_MINUTES) >= 4096:  # transcripts run in time order: recent minutes are the ones asked
            _MINUTES.clear()
        whole = iso_to_epoch(head[:17] + "00Z")
        minute = _MINUTES[head[:17]] = None if whole is None else int(whole)
    sec = _SECONDS.get(head[17:19])
    if len(_WHOLE) >= 4096:
        _WHOLE.clear()
    second = _WHOLE[head] = None if minute is None or sec is None else minute + sec
    return second


def stamp_to_epoch(text: object) -> float | None:
    """`iso_to_epoch`, the same float, with the second's part remembered: transcripts stamp every
    line as 'YYYY-MM-DDTHH:MM:SS.mmmZ', and most lines share their second (and all but a few their
    minute) with the line before."""
    if not isinstance(text, str):
        return iso_to_epoch(text)
    frac = _FRACTIONS.get(text[19:])  # exactly '.mmmZ' after the first 19 characters: 24 in all
    if frac is None:
        return iso_to_epoch(text)
    head = text[:19]
    second = _WHOLE.get(head, -1)
    if second == -1:
        second = _whole_second(head)
    if second is None:
        return iso_to_epoch(text)
    return second + frac - 0  # iso_to_epoch's own sum, term for term: the same float
