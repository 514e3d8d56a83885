"""What the two fast transcript parsers share (`core.bulkparse` for replay, `reports.parse` for the
report): msgspec, imported without typing_extensions; the usage object as structs; and the timestamp
reader. Pure. Not for hooks: msgspec costs an import they need not pay."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from session_watcher.agents.claude_code.transcript import (
    count,
    iso_to_epoch,
    iteration_detail,
    model_name,
    split_writes,
)

if TYPE_CHECKING:
    from session_watcher.core.shapes import Detail, Iteration, Sample

# msgspec imports typing_extensions (and with it inspect and ast) only to recognize that
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


class Counts(msgspec.Struct):
    """The token counts of a usage object, or of one of its iterations."""

    input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    output_tokens: int = 0
    cache_creation: Split | None = None


class IterationCounts(Counts):
    """One of `usage.iterations`."""

    type: Any = None
    model: Any = None


class Usage(Counts):
    # left undecoded until a call lists more than one (most lines list one, which changes nothing)
    iterations: list[msgspec.Raw] | None = None


_decode_iteration = msgspec.json.Decoder(IterationCounts).decode


def counts_sample(u: Counts) -> Sample:
    """`core.transcript.usage_sample` of the same object, from its struct (a count out of range,
    negative or past MAX_COUNT, is 0: `core.transcript.count`)."""
    inp, cr = count(u.input_tokens), count(u.cache_read_input_tokens)
    cw, out = count(u.cache_creation_input_tokens), count(u.output_tokens)
    split = u.cache_creation
    if split is None:
        return inp, cr, cw, out, cw, 0
    cw5, cw1 = count(split.ephemeral_5m_input_tokens), count(split.ephemeral_1h_input_tokens)
    cw, cw5 = split_writes(cw, cw5, cw1)
    return inp, cr, cw, out, cw5, cw1


def usage_reading(u: Usage) -> tuple[Sample, Detail | None]:
    """`core.transcript.usage_reading` of the same object, from its struct. Raises
    msgspec.DecodeError where an iteration is not what the struct says (an item that is not an
    object, a count that is not an int): the caller then takes the JSON path, as for any such line."""
    top = counts_sample(u)
    items = u.iterations
    if items is None or len(items) < 2:
        return top, None
    parts: list[Iteration] = []
    for raw in items:
        it = _decode_iteration(raw)
        parts.append((it.type if isinstance(it.type, str) else None, model_name(it.model), counts_sample(it)))
    return iteration_detail(top, parts)


_SECONDS = {f"{n:02d}": n for n in range(100)}
_FRACTIONS = {f".{n:03d}Z": float(f"0.{n:03d}") for n in range(1000)}
_MINUTES: dict[str, int | None] = {}  # 'YYYY-MM-DDTHH:MM:' -> the epoch second it starts at, or None
_HOURS: dict[str, int | None] = {}  # 'YYYY-MM-DDTHH:' -> the same, for the hour


def _minute(head: str) -> int | None:
    """The epoch second 'YYYY-MM-DDTHH:MM:' starts at (iso_to_epoch's, as an int), remembered, and
    made from its hour's, remembered too: a generated or sparse history has a new minute every few
    lines, most of them in an hour seen before."""
    if len(_MINUTES) >= 4096:  # transcripts run in time order: recent minutes are the ones asked
        _MINUTES.clear()
    hour = _HOURS.get(head[:14], -1)
    if hour == -1:
        if len(_HOURS) >= 4096:
            _HOURS.clear()
        whole = iso_to_epoch(head[:14] + "00:00Z")
        hour = _HOURS[head[:14]] = None if whole is None else int(whole)
    try:
        minute = None if hour is None else hour + 60 * int(head[14:16])  # iso_to_epoch's int() of the minute
    except ValueError:
        minute = None
    _MINUTES[head] = minute
    return minute


def stamp_to_epoch(text: object) -> float | None:
    """`iso_to_epoch`, the same float, with the minute's part remembered: transcripts stamp every
    line as 'YYYY-MM-DDTHH:MM:SS.mmmZ', and all but a few lines share their minute with the line
    before (remembering the second as well paid on real sessions, whose lines of one call share it,
    and cost twice as much on the generated corpus, whose lines do not)."""
    if not isinstance(text, str):
        return iso_to_epoch(text)
    frac = _FRACTIONS.get(text[19:])  # exactly '.mmmZ' after the first 19 characters: 24 in all
    minute = _MINUTES.get(text[:17], -1)
    if minute == -1:
        minute = _minute(text[:17])
    sec = _SECONDS.get(text[17:19])
    if frac is None or minute is None or sec is None:
        return iso_to_epoch(text)
    return minute + sec + frac - 0  # iso_to_epoch's own sum, term for term: the same float
