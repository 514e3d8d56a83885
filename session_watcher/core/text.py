"""Text from transcripts, payloads and file names, made safe to print to a terminal. Pure.

A model name, a path or a session id is data someone else may have written: `ESC ] 2 ; ... BEL`
retitles the window, `ESC [ 2 J` clears it, the C1 byte 0x9b is a one-character CSI for many
terminals, and the bidi overrides reorder what the reader sees. `clean` shows each such character
as an escape (`\\x1b`, `\\x9b`, `\\u202e`) so none reaches the terminal and none is hidden either.
Every line the CLI prints from such data goes through it; `notifier.message` uses `is_control`.

A lone surrogate (a JSON `\\udc9b` escape, a file name's undecodable byte) is no character: it
stops a strict UTF-8 terminal's writer, and under the C locale Python writes it as the raw byte
(0x9b: a CSI). It is escaped too (`\\udc9b`). A newline inside one field (`one_line`) would forge a
line of its own. `utf8` is the one way text leaves as bytes (pages, the status line).
"""

from __future__ import annotations

BIDI = frozenset(range(0x202A, 0x202F)) | frozenset(range(0x2066, 0x206A)) | {0x200E, 0x200F, 0x061C}


def is_control(ch: str) -> bool:
    """C0, DEL, C1, the bidi controls, the line and paragraph separators, and lone surrogates."""
    o = ord(ch)
    return o < 0x20 or 0x7F <= o <= 0x9F or o in BIDI or o in (0x2028, 0x2029) or 0xD800 <= o <= 0xDFFF


def clean(text: str, keep: str = "\n") -> str:
    """`text` with every control character but those in `keep` written as a visible escape."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch in keep or not is_control(ch):
            out.append(ch)
        elif ord(ch) <= 0xFF:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(f"\\u{ord(ch):04x}")
    return "".join(out)


def one_line(text: str) -> str:
    """`clean` for one field of a line (an id, a model name, a path): a newline in it is escaped
    too, so it cannot start a line of its own."""
    return clean(text, keep="")


def utf8(text: str) -> bytes:
    """Text as UTF-8 bytes, a lone surrogate written as its escape (`\\udc9b`) instead of failing."""
    return text.encode("utf-8", "backslashreplace")


DEFAULT_COLUMNS = 80  # the width of a command's text when COLUMNS is unset and stdout is no terminal
MIN_COLUMNS = 40


def columns(env_columns: str | None, terminal: int | None) -> int:
    """The width a command's text keeps within: COLUMNS when it is a number, else the terminal's,
    else 80; never under 40 (a table cannot be read narrower)."""
    try:
        n = int(env_columns or "")
    except ValueError:
        n = 0
    if n <= 0:
        n = terminal if terminal and terminal > 0 else DEFAULT_COLUMNS
    return max(MIN_COLUMNS, n)


def fit(text: str, width: int) -> str:
    """Each line of `text` within `width` columns: a longer one wrapped at its spaces (a word longer
    than the room, a path, cut where it must), its continuation lines indented to where its value
    starts (after a label and two spaces, as `status` prints them), else by two."""
    import re
    import textwrap

    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        m = re.match(r"\s*\S+(?: \S+)*?\s{2,}", line)
        indent = len(m.group(0)) if m and len(m.group(0)) <= width // 2 else len(line) - len(line.lstrip()) + 2
        out.extend(textwrap.wrap(line, width, subsequent_indent=" " * indent, break_on_hyphens=False,
                                 drop_whitespace=True) or [line[:width]])
    return "\n".join(out)
