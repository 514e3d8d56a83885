"""The seed's context-health algorithm from scratch over plain lists: the reference the incremental
`core.health.grade` must meet. Written apart from core.health on purpose (its own cut-offs, composite
and rounding), so a mistake there is not repeated here; the project's choices (docs: integer percent
weights, round half up, NotebookEdit productive, a real window) are followed.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

from session_watcher.core import health

if TYPE_CHECKING:
    from session_watcher.core.shapes import Health

PRODUCTIVE = {"Write", "Edit", "MultiEdit", "NotebookEdit"}


def _grade(score: float | Fraction) -> str:
    return "A" if score >= 85 else "B" if score >= 70 else "C" if score >= 55 else "D" if score >= 40 else "F"


def _fill(fill: float | None) -> int:
    if fill is None:
        return 100
    for cut, score in ((0.50, 100), (0.65, 80), (0.80, 60), (0.90, 40)):
        if fill < cut:
            return score
    return 20


def _compactions(count: int) -> int:
    return {0: 100, 1: 75, 2: 55, 3: 35}.get(count, 15)


def _rereads(ratio: float | None) -> int:
    if ratio is None:
        return 100
    for cut, score in ((0.05, 100), (0.10, 80), (0.20, 60), (0.35, 40)):
        if ratio <= cut:
            return score
    return 20


def _errors(n: int, first: float, second: float) -> int:
    if n < 4 or (first == 0 and second == 0):
        return 100
    if first == 0:
        return 40  # went from clean to errors
    ratio = second / first
    for cut, score in ((1.0, 100), (2.0, 75), (3.0, 55), (5.0, 35)):
        if ratio <= cut:
            return score
    return 15


def _efficiency(n: int, first: float, second: float) -> int:
    if n < 4:
        return 100
    if first == 0:
        return 80  # no writes at all: could be a research phase
    change = second / first
    for cut, score in ((0.9, 100), (0.7, 75), (0.4, 55), (0.15, 35)):
        if change >= cut:
            return score
    return 15


def grade_from_records(
    prompt_tokens: list[int],
    compactions: int,
    tool_calls: list[dict[str, Any]],
    window: int | None = None,
) -> dict[str, Any]:
    """`prompt_tokens`: each main-chain API call's prompt size, in order; `tool_calls`: dicts with
    `toolName`, `filePath` (canonical, for Read; None otherwise) and `isError`, in result order."""
    win = window if window and window > 0 else 200_000
    fill = prompt_tokens[-1] / win if prompt_tokens else None

    reads = [t["filePath"] for t in tool_calls if t["toolName"] == "Read" and t.get("filePath")]
    rereads = len(reads) - len(set(reads))  # every read of a path after its first
    ratio = rereads / len(reads) if reads else None

    n = len(tool_calls)
    first, second = tool_calls[: n // 2], tool_calls[n // 2 :]
    judged = n >= 4

    def share(part: list[dict[str, Any]], hit: Any) -> float:
        return sum(1 for t in part if hit(t)) / len(part)

    err1 = share(first, lambda t: t["isError"]) if judged else 0.0
    err2 = share(second, lambda t: t["isError"]) if judged else 0.0
    prod1 = share(first, lambda t: t["toolName"] in PRODUCTIVE) if judged else 0.0
    prod2 = share(second, lambda t: t["toolName"] in PRODUCTIVE) if judged else 0.0

    signals = [
        ("Context Fill", _fill(fill), 40),
        ("Compactions", _compactions(compactions), 25),
        ("Re-reads", _rereads(ratio), 15),
        ("Error Rate", _errors(n, err1, err2), 10),
        ("Tool Efficiency", _efficiency(n, prod1, prod2), 10),
    ]
    composite = sum(Fraction(value * weight, 100) for _, value, weight in signals)
    return {
        "grade": _grade(composite),
        "score": int(composite + Fraction(1, 2)),  # Math.round: half up
        "fillPercent": None if fill is None else round(fill * 100, 1),
        "compactionCount": compactions,
        "rereadRatio": None if ratio is None else round(ratio, 4),
        "errorAcceleration": round(err2 / err1, 4) if judged and err1 > 0 else None,
        "toolEfficiency": round(prod2 / prod1, 4) if judged and prod1 > 0 else None,
        "signals": [{"name": name, "value": value, "weight": weight / 100, "grade": _grade(value)}
                    for name, value, weight in signals],
    }


def from_codes(h: Health, codes: str) -> Health:
    """`h` with its tool calls set to the code sequence `codes` (one character per call)."""
    mid = len(codes) // 2
    first = codes[:mid]
    h["head"] = [mid, health._count(first, health._ERROR_CHARS), health._count(first, health._PRODUCTIVE_CHARS)]
    h["tail"] = codes[mid:]
    return h
