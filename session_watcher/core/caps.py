"""What a state keeps of a text or a count from a payload or a log: the caps every reader applies. Pure.

Apart from the transcript's parser (`agents.claude_code.transcript`, which re-exports them) so that
the commands that only check a payload (the status line drawn from the state as saved, the
SessionStart hook giving a handoff) do not import the parser and the agents' registry with it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is slow to import; this module is on the hot path
if TYPE_CHECKING:
    from typing import TypeGuard

MAX_PATH_CHARS = 4096  # a longer file path names no file (`clean_path`)
MAX_PATH_PARTS = 256  # nor one of more components
# A count (tokens of one call, a line number) above this is a bad value, read as 0 like a negative
# one: a 1M-token context is 10**6; 10**400 raised OverflowError in every float that met it
MAX_COUNT = 10**9
MAX_ID_CHARS = 256  # a message, request or tool id (or a tool or model name) longer than this: bad


def count(v: object) -> int:
    """A count as a parser keeps it: an int in 1..MAX_COUNT, else 0 (another type, a bad value)."""
    return v if v.__class__ is int and 0 < v <= MAX_COUNT else 0


def short_id(v: object) -> TypeGuard[str]:
    """A message, request or tool id (or a name) the state may keep: a string of MAX_ID_CHARS at most
    (the meter keeps message ids; 2 MB ones made the state too large to load)."""
    return isinstance(v, str) and len(v) <= MAX_ID_CHARS


def model_name(v: object) -> str | None:
    """A model name as the parsers keep it: a string of MAX_ID_CHARS at most, else None."""
    return v if isinstance(v, str) and len(v) <= MAX_ID_CHARS else None


def clean_path(path: str) -> bool:
    """False for text no file can be named by: a NUL byte, a lone surrogate from a JSON escape, more
    than MAX_PATH_CHARS characters or MAX_PATH_PARTS components (PATH_MAX is 4096 bytes on Linux;
    `os.path.realpath` costs the square of a path's length)."""
    if len(path) > MAX_PATH_CHARS or "\x00" in path or path.count("/") > MAX_PATH_PARTS:
        return False
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
