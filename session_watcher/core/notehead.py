"""The handoff note's first line: the marker naming the parent session, when it was written, and
what the restart was priced at. Pure, and no imports: `header` writes it (core.handoff.compose's
notes), `parent_of` and `priced` read it back (the child's transcript, the SessionStart hook that
gives a note, which checks it by this module alone); `unquoted` tells a note of a release before
the note was quoted data."""

from __future__ import annotations

MARKER = "[session-watcher handoff from session "
# the second line of every note the releases before the quoted note (2026-12-01 to 2026-12-04) wrote:
# their transcript text went unquoted, and such a note can wait pending across an update
UNQUOTED = ("This note was written from the transcript of the previous session in this project, so that "
            "its work can go on here without re-reading that whole conversation.")


def header(parent: str, written_at: str, carry: int, carry_usd: float | None) -> str:
    """The note's first line: its origin (MARKER + the parent's id), when, and what it was priced at
    (exact tokens, so that `priced` can read the price back from the child's transcript)."""
    usd = "" if carry_usd is None else f" (${carry_usd:.2f})"  # in cents, as every price a person reads
    return f"{MARKER}{parent}, written {written_at}; priced at {carry:,} tokens{usd}]"


def parent_of(text: str) -> str | None:
    """The parent session's id named by a note's first line, or None when `text` is no handoff note."""
    if not text.startswith(MARKER):
        return None
    rest = text[len(MARKER):]
    end = rest.find(",")
    sid = rest[:end] if end > 0 else ""
    ok = 0 < len(sid) <= 128 and sid[0] != "." and all(c.isascii() and (c.isalnum() or c in "-_.") for c in sid)
    return sid if ok else None


def priced(text: str) -> tuple[int | None, float | None]:
    """(carry tokens, carry USD) a note's first line was priced at; None for what it does not say."""
    first = text.split("\n", 1)[0]
    at = first.rfind("; priced at ")
    if parent_of(first) is None or at < 0:
        return None, None
    words = first[at + len("; priced at "):].rstrip("]").split(" ")
    try:
        tokens = int(words[0].replace(",", ""))
    except ValueError:
        return None, None
    usd = None
    if len(words) >= 3 and words[2].startswith("($") and words[2].endswith(")"):
        try:
            usd = float(words[2][2:-1])
        except ValueError:
            usd = None
    return tokens, usd


def unquoted(text: str) -> bool:
    """Whether `text` is a note a release before 2026-12-04 wrote (its second line `UNQUOTED`): its
    transcript text is not behind core.handoff.QUOTE, so it is quoted again before a model reads it."""
    return text.split("\n", 2)[1:2] == [UNQUOTED]
