"""Context health: the seed's five signals, composite score and A-F grade. Pure.

The fold keeps a small dict of counters (`new_health`) and feeds it on every API call sample, tool
result and compaction; `grade` turns the counters into the status document's `health` block. Nothing
here reads a file or a clock, keeps a global or imports more than the standard `math` would cost:
this module is on the hook's hot path.

Counters (schema of `state["health"]`, plain JSON):

* `prompt` - prompt tokens (input + cache read + cache write) of the newest main-chain API call, or
  None before the first call;
* `compactions` - compaction boundaries seen;
* `reads`, `rereads` - file reads (READS: a Read call, each file a Codex shell read prints), and
  those whose canonical path was read before in the session;
* `head`, `tail` - the session's tool calls in result order, split at the half point: `head` is
  [calls, errors, productive] of the first half (`n // 2` calls of `n`), `tail` the second half, one
  character per call: `.` plain, `p` productive, `e` error, `E` productive and error. The
  error-acceleration and tool-efficiency signals compare the two halves, and the half point moves
  with every call, so the second half's sequence is the smallest exact state (one byte per two
  calls); the first half's calls are needed only as counts. While a fold runs the second half is a
  bytearray (`open_tail`, `close_tail`), appended to in place; saved, it is a string.

Choices the seed leaves open (also in docs):

* the composite is computed in integer percent weights (40/25/15/10/10) so a score of exactly 85 is
  85, not 84.99999999999999; `score` rounds half up like the seed's `Math.round`;
* `fillPercent` is prompt tokens / the session's real window x 100, rounded to one decimal;
  `rereadRatio` is re-reads / reads; `errorAcceleration` is the second half's error rate over the
  first half's; `toolEfficiency` is the second half's productive share over the first half's. Each
  is null where the seed's algorithm has no number (no call yet, fewer than 4 tool calls, a zero
  first-half rate), never NaN or infinity. `no_number` says which of these it is, from the block
  alone (what `--json`, the text and the page all have).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from session_watcher.core.shapes import Health

DEFAULT_WINDOW = 200_000
PRODUCTIVE = ("Write", "Edit", "MultiEdit", "NotebookEdit")
# a Codex shell command that only prints files (agents.codex.rollout): a read for health alone, its
# paths never in the path map (state.session asks no discard reason for them)
SHELL_READ = "ShellRead"
READS = ("Read", SHELL_READ)  # and Claude Code's Read tool
MIN_CALLS = 4  # fewer tool calls than this: too few to judge (error and efficiency signals)

# (name, weight in percent) in the seed's order
SIGNALS = (
    ("Context Fill", 40),
    ("Compactions", 25),
    ("Re-reads", 15),
    ("Error Rate", 10),
    ("Tool Efficiency", 10),
)

_ERROR_CHARS = "eE"
_PRODUCTIVE_CHARS = "pE"
_ERROR_CODES = (b"e", b"E")  # the same, in a fold's bytearray (`open_tail`)
_PRODUCTIVE_CODES = (b"p", b"E")


def new_health() -> Health:
    """Empty counters for a new session."""
    return {"prompt": None, "compactions": 0, "reads": 0, "rereads": 0, "head": [0, 0, 0], "tail": ""}


def _count(part: str, chars: str) -> int:
    return sum(part.count(c) for c in chars)


def _count_codes(part: bytearray, codes: tuple[bytes, ...]) -> int:
    return sum(part.count(c) for c in codes)


def on_call(h: Health, prompt_tokens: int) -> None:
    """A main-chain API call sample: the newest prompt size (a later sample of one call replaces)."""
    h["prompt"] = int(prompt_tokens)


def on_read(h: Health, reread: bool) -> None:
    """A file read. `reread`: its canonical path was read before in this session."""
    h["reads"] = h.get("reads", 0) + 1
    if reread:
        h["rereads"] = h.get("rereads", 0) + 1


def on_tool(h: Health, name: str, reread: bool, is_error: bool) -> None:
    """A tool result. `reread`: a read (READS) of a canonical path already read before in this
    session (a shell command's other files read: `on_read`)."""
    if name in READS:
        on_read(h, reread)
    productive = name in PRODUCTIVE
    ch = ("E" if productive else "e") if is_error else ("p" if productive else ".")
    head, tail = h["head"], h["tail"]
    if isinstance(tail, bytearray):  # opened by `open_tail`: the call appended and the first dropped in place
        tail.append(ord(ch))
        if head[0] < (head[0] + len(tail)) // 2:
            _to_head(head, chr(tail[0]))
            del tail[0]  # a bytearray drops its first byte without moving the rest
        return
    tail = tail + ch
    if head[0] < (head[0] + len(tail)) // 2:  # the half point moved: the second half's first call
        _to_head(head, tail[0])                  # joins the first half's counts
        tail = tail[1:]
    h["tail"] = tail


def _to_head(head: list[int], first: str) -> None:
    head[0] += 1
    head[1] += first in _ERROR_CHARS
    head[2] += first in _PRODUCTIVE_CHARS


def open_tail(h: Health) -> None:
    """The second half kept as a bytearray while a fold runs, so that a tool result appends one byte
    where a string would be copied whole (quadratic in a session's tool results); `close_tail` gives
    back the saved form, a string. A tail of other than ASCII (a hand-edited state) stays a string."""
    tail = h["tail"]
    if type(tail) is str and tail.isascii():
        h["tail"] = bytearray(tail, "ascii")


def close_tail(h: Health) -> None:
    tail = h["tail"]
    if type(tail) is bytearray:
        h["tail"] = tail.decode("ascii")


def on_compaction(h: Health) -> None:
    """A compaction boundary."""
    h["compactions"] = h.get("compactions", 0) + 1


# --- the seed's cut-offs, one table per signal ---------------------------------------------------

FILL_CUTS = ((0.50, 100), (0.65, 80), (0.80, 60), (0.90, 40))  # fill < cut
FILL_ELSE = 20
COMPACTION_SCORES = (100, 75, 55, 35)  # by count; more than 3
COMPACTION_ELSE = 15
REREAD_CUTS = ((0.05, 100), (0.10, 80), (0.20, 60), (0.35, 40))  # ratio <= cut
REREAD_ELSE = 20
ERROR_CUTS = ((1.0, 100), (2.0, 75), (3.0, 55), (5.0, 35))  # second/first error rate <= cut
ERROR_ELSE = 15
ERROR_CLEAN_TO_ERRORS = 40  # first half clean, second half not
EFFICIENCY_CUTS = ((0.9, 100), (0.7, 75), (0.4, 55), (0.15, 35))  # second/first productive >= cut
EFFICIENCY_ELSE = 15
EFFICIENCY_NO_WRITES = 80  # no productive call in the first half: could be a research phase


def fill_score(fill: float | None) -> int:
    """Context fill (fraction of the window) -> sub-score; no data is healthy."""
    if fill is None:
        return 100
    return next((s for cut, s in FILL_CUTS if fill < cut), FILL_ELSE)


def compaction_score(count: int) -> int:
    return COMPACTION_SCORES[count] if 0 <= count < len(COMPACTION_SCORES) else COMPACTION_ELSE


def reread_score(ratio: float | None) -> int:
    """Re-reads / reads -> sub-score; no reads is healthy."""
    if ratio is None:
        return 100
    return next((s for cut, s in REREAD_CUTS if ratio <= cut), REREAD_ELSE)


def error_score(n_calls: int, first_rate: float, second_rate: float) -> int:
    """Error acceleration from the two halves' error rates."""
    if n_calls < MIN_CALLS or second_rate == 0:
        return 100  # too few calls to judge, or no error in the second half (ratio 0)
    if first_rate == 0:
        return ERROR_CLEAN_TO_ERRORS
    ratio = second_rate / first_rate
    return next((s for cut, s in ERROR_CUTS if ratio <= cut), ERROR_ELSE)


def efficiency_score(n_calls: int, first_ratio: float, second_ratio: float) -> int:
    """Tool efficiency from the two halves' productive shares."""
    if n_calls < MIN_CALLS:
        return 100
    if first_ratio == 0:
        return EFFICIENCY_NO_WRITES
    change = second_ratio / first_ratio
    return next((s for cut, s in EFFICIENCY_CUTS if change >= cut), EFFICIENCY_ELSE)


def to_grade(score: float) -> str:
    if score >= 85:
        return "A"
    if score >= 70:
        return "B"
    if score >= 55:
        return "C"
    if score >= 40:
        return "D"
    return "F"


def grade(h: Health, window: int | None) -> dict[str, Any]:
    """The `health` block of the status document from the incremental counters."""
    (f_n, f_err, f_prod), tail = h["head"], h["tail"]
    if isinstance(tail, bytearray):  # in a fold (`open_tail`): counted as it is
        s_err, s_prod = _count_codes(tail, _ERROR_CODES), _count_codes(tail, _PRODUCTIVE_CODES)
    else:
        s_err, s_prod = _count(tail, _ERROR_CHARS), _count(tail, _PRODUCTIVE_CHARS)
    s_n = len(tail)
    n_calls = f_n + s_n
    prompt = h.get("prompt")
    compactions = int(h.get("compactions", 0))
    reads, rereads = int(h.get("reads", 0)), int(h.get("rereads", 0))
    win = window if window and window > 0 else DEFAULT_WINDOW
    fill = None if prompt is None else prompt / win
    ratio = None if reads == 0 else rereads / reads
    judged = n_calls >= MIN_CALLS
    f_err_rate = f_err / f_n if judged else 0.0
    s_err_rate = s_err / s_n if judged else 0.0
    f_prod_rate = f_prod / f_n if judged else 0.0
    s_prod_rate = s_prod / s_n if judged else 0.0
    values = (
        fill_score(fill),
        compaction_score(compactions),
        reread_score(ratio),
        error_score(n_calls, f_err_rate, s_err_rate),
        efficiency_score(n_calls, f_prod_rate, s_prod_rate),
    )
    total = sum(v * w for v, (_, w) in zip(values, SIGNALS, strict=True))  # exact: integers
    composite = total / 100
    return {
        "grade": to_grade(composite),
        "score": (total + 50) // 100,  # round half up, like Math.round
        "fillPercent": None if fill is None else round(fill * 100, 1),
        "compactionCount": compactions,
        "rereadRatio": None if ratio is None else round(ratio, 4),
        "errorAcceleration": (round(s_err_rate / f_err_rate, 4) if judged and f_err_rate > 0 else None),
        "toolEfficiency": (round(s_prod_rate / f_prod_rate, 4) if judged and f_prod_rate > 0 else None),
        "signals": [
            {"name": name, "value": v, "weight": w / 100, "grade": to_grade(v)}
            for v, (name, w) in zip(values, SIGNALS, strict=True)
        ],
    }



NOTHING_TO_GRADE = "no API call yet: nothing to grade"


def ungraded(block: Mapping[str, Any]) -> dict[str, Any]:
    """`grade`'s block of a session without an API call (an empty session, or lines none of which is
    a call), as `health` shows it: no grade, no score and no signal graded (each would read A at 100,
    which nothing earned), `why` saying so; the figures (all null but the compactions) as they are."""
    return {**block, "grade": None, "score": None, "why": NOTHING_TO_GRADE,
            "signals": [{**s, "value": None, "grade": None} for s in block.get("signals") or ()]}


def graded(h: Health, window: int | None, calls: int) -> dict[str, Any]:
    """The one rule of every health block a session shows (`status --json`, `health`, the session
    page, `replay`): `grade`'s block of its counters, `ungraded` where the session has made no API
    call (`calls`, its main chain's, failed requests counted as the engine counts them)."""
    block = grade(h, window)
    return block if calls > 0 else ungraded(block)


def no_number(block: Mapping[str, Any], name: str) -> str | None:
    """Why signal `name` of a `grade` block has no figure (its field null), in a few words; None where
    it has one. Read from the block alone: the tool-call signals are null below MIN_CALLS calls (then
    Tool Efficiency's score is 100) or where the first half's rate is zero (then its score is
    EFFICIENCY_NO_WRITES, and Error Rate's 100 with no error at all, ERROR_CLEAN_TO_ERRORS with
    errors in the second half only)."""
    def score(signal: str) -> object:
        return next((s.get("value") for s in block.get("signals") or () if s.get("name") == signal), None)

    field = {"Context Fill": "fillPercent", "Re-reads": "rereadRatio", "Error Rate": "errorAcceleration",
             "Tool Efficiency": "toolEfficiency"}.get(name)
    efficiency = score("Tool Efficiency")
    if field is None or block.get(field) is not None or efficiency is None:  # a figure, or no block to read
        return None
    if name in ("Context Fill", "Re-reads"):
        return "no call yet" if name == "Context Fill" else "no file read yet"
    if block.get("toolEfficiency") is None and efficiency == 100:
        return f"under {MIN_CALLS} tool calls"
    if name == "Error Rate":
        return "errors in 2nd half" if score(name) == ERROR_CLEAN_TO_ERRORS else "no errors"
    return "no edit in 1st half"
