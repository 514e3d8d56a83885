"""Has the turn's last API call reached the transcript? A look at the file's tail, for the Stop hook.

Claude Code runs Stop before it has written the turn's last assistant line (2.1.197: every turn;
2.1.332: 19 of 28 terminal-UI turns, there 0.3 s later). The Stop hook runs async and waits, bounded,
until the last main-chain conversation record is an assistant line that ends a turn: one with a stop
reason other than `tool_use`, or (clients that leave stop_reason null) one holding text and no
tool_use block. A user record there (the prompt, a tool result) means the reply is still to come.
"""

from __future__ import annotations

import time

from session_watcher.base import sysos
from session_watcher.core import fastjson

BLOCK = 64 << 10
MAX_SCAN = 1 << 20  # give up (and fold what is there) past this much tail of bulky records
POLL = 0.02


def _verdict(line: bytes) -> bool | None:
    """True: a turn-ending assistant line; False: a user line or a reply still going; None: neither."""
    if b'"type":"assistant"' not in line and b'"type":"user"' not in line:
        return None
    try:
        rec = fastjson.loads(line)
    except ValueError:
        return None
    if not isinstance(rec, dict) or rec.get("isSidechain") is True:
        return None
    kind = rec.get("type")
    if kind == "user":
        return False
    if kind != "assistant":
        return None
    msg = rec.get("message")
    if not isinstance(msg, dict):
        return None
    stop = msg.get("stop_reason")
    if isinstance(stop, str):
        return stop != "tool_use"
    content = msg.get("content")
    blocks = [b.get("type") for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    return "tool_use" not in blocks and "text" in blocks


def turn_ended(path: str) -> bool | None:
    """Whether the transcript's last conversation record ends a turn; None when it cannot be told
    (no such record in the last MAX_SCAN bytes, or no file)."""
    try:
        fd = sysos.open(path, sysos.O_RDONLY | getattr(sysos, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        return _scan(fd)
    except OSError:  # a folder or a FIFO in the transcript's place
        return None
    finally:
        sysos.close(fd)


def _scan(fd: int) -> bool | None:
    """The verdict of the last conversation record among the last MAX_SCAN bytes of `fd`."""
    end = sysos.fstat(fd).st_size
    pos, carry, newest = end, b"", True
    while pos > 0 and end - pos < MAX_SCAN:
        step = min(BLOCK, pos)
        pos -= step
        lines = (sysos.pread(fd, step, pos) + carry).split(b"\n")
        if newest:  # after the last newline: a line still being written
            if len(lines) == 1:
                continue
            lines.pop()
            newest = False
        carry = lines.pop(0) if pos > 0 else b""  # cut by the block's start: finished next round
        for line in reversed(lines):
            got = _verdict(line)
            if got is not None:
                return got
    return None


def wait_turn_end(path: str, deadline: float) -> bool:
    """Poll until the turn's last line is in the transcript or `deadline` (monotonic) passes."""
    while True:
        if turn_ended(path) is not False:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL)
