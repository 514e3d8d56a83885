"""Text from transcripts, payloads and file names, made safe to print to a terminal. Pure.

A model name, a path or a session id is data someone else may have written: `ESC ] 2 ; ... BEL`
retitles the window, `ESC [ 2 J` clears it, the C1 byte 0x9b is a one-character CSI for many
terminals, and the bidi overrides reorder what the reader sees. Format characters (Unicode category
Cf: zero-width spaces and joiners, the tag characters U+E0000-E007F that can spell a whole sentence
no one sees, the byte-order mark) and the variation selectors of U+E0100-E01EF are invisible to a
person and read by a model. `clean` shows each such character as an escape (`\\x1b`, `\\u202e`,
`\\U000e0041`) so none reaches the reader and none is hidden either: the one cleaner of every text a
person or a model reads (the CLI, the handoff note and its hook, pages); `notifier.message` and the
status line drop what `is_control` names.

A lone surrogate (a JSON `\\udc9b` escape, a file name's undecodable byte) is no character: it
stops a strict UTF-8 terminal's writer, and under the C locale Python writes it as the raw byte
(0x9b: a CSI). It is escaped too (`\\udc9b`). A newline inside one field (`one_line`) would forge a
line of its own. `utf8` is the one way text leaves as bytes (pages, the status line).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is slow to import; the hooks and the report's warm path import this module
if TYPE_CHECKING:
    from collections.abc import Collection

HIDDEN = ("Cc", "Cf", "Cs", "Zl", "Zp")  # controls, format characters, surrogates, line/paragraph separators


def is_control(ch: str) -> bool:
    """C0, DEL, C1, the format characters (bidi controls, zero-width characters, tag characters, the
    byte-order mark), the line and paragraph separators, lone surrogates, the whole tag block and
    the supplementary variation selectors."""
    o = ord(ch)
    if o < 0x20 or 0x7F <= o <= 0x9F:
        return True
    if o < 0xAD:
        return False
    return _category(ch) in HIDDEN or 0xE0000 <= o <= 0xE007F or 0xE0100 <= o <= 0xE01EF


def _category(ch: str) -> str:
    """Unicode's category of `ch`; unicodedata (a shared library) loaded only for a character past
    Latin-1, which an ASCII text (a handoff note of ours, given by a hook the client waits for) has none of."""
    from unicodedata import category

    return category(ch)


def clean(text: str, keep: str = "\n") -> str:
    """`text` with every control character but those in `keep` written as a visible escape."""
    # Python counts a supplementary variation selector (U+E0100-E01EF, category Mn) printable, and
    # nothing printable lies above them: the fast path holds only below U+E0100
    if text.isprintable() and (text.isascii() or max(text) < "\U000e0100"):
        return text
    out = []
    for ch in text:
        if ch in keep or not is_control(ch):
            out.append(ch)
        elif ord(ch) <= 0xFF:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return "".join(out)


def clean_data(value: object) -> object:
    """Every string in a JSON value (keys too) through `clean`, newlines and tabs kept: what a page's
    script shows is what `clean` would print."""
    if isinstance(value, str):
        return clean(value, keep="\n\t")
    if isinstance(value, dict):
        return {clean_data(k): clean_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_data(v) for v in value]
    return value


def one_line(text: str) -> str:
    """`clean` for one field of a line (an id, a model name, a path): a newline in it is escaped
    too, so it cannot start a line of its own."""
    return clean(text, keep="")


def utf16_len(text: str) -> int:
    """The length in UTF-16 code units (a character beyond U+FFFF counts 2): the unit Claude Code
    counts its limit on injected context in."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def cut_utf16(text: str, limit: int) -> str:
    """The longest start of `text` of at most `limit` UTF-16 code units (never half a pair)."""
    if len(text) * 2 <= limit or utf16_len(text) <= limit:
        return text
    n, out = 0, len(text)
    for i, ch in enumerate(text):
        n += 2 if ord(ch) > 0xFFFF else 1
        if n > limit:
            out = i
            break
    return text[:out]


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


def fit(text: str, width: int, keep: list[str] | tuple[str, ...] = ()) -> str:
    """Each line of `text` within `width` columns: a longer one wrapped at its spaces, its
    continuation lines indented to where its value starts (after a label and two spaces, as `status`
    prints them), else by two. A word is never cut (a path stays whole, to be copied): one longer
    than the room at the indent gets a line of its own, from the first column, and only a word
    longer than `width` itself goes past it. Each of `keep` (a path, which may hold a space) is one
    word, as in `wrap`."""
    import re

    for whole in keep:  # its spaces held as NULs (no path holds one) until the lines are made
        if " " in whole:
            text = text.replace(whole, whole.replace(" ", "\0"))
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        m = re.match(r"\s*\S+(?: \S+)*?\s{2,}", line)
        indent = len(m.group(0)) if m and len(m.group(0)) <= width // 2 else len(line) - len(line.lstrip()) + 2
        out.extend(_wrap_words(line, width, indent))
    joined = "\n".join(out)
    return joined.replace("\0", " ") if keep else joined


def wrap(text: str, width: int, indent: int = 2, keep: list[str] | tuple[str, ...] = ()) -> list[str]:
    """One paragraph (its newlines and tabs read as spaces) in lines of at most `width` columns, the
    later ones indented by `indent`: `fit`'s rule, a word never cut (one longer than the room gets a
    line of its own). Each of `keep` in it (a path, which may hold a space) is one word: never
    broken at its spaces, to be copied whole."""
    line = "".join(" " if c in "\t\n\r\v\f" else c for c in text).rstrip()
    for whole in keep:  # its spaces held as NULs (no path holds one) until the lines are made
        line = line.replace(whole, whole.replace(" ", "\0"))
    rows = _wrap_words(line, width, indent) if line.strip() else [""]
    return [row.replace("\0", " ") for row in rows] if keep else rows


# never a line of their own after their number
UNITS = frozenset(("s", "ms", "min", "h", "%", "day", "days", "token", "tokens"))
COUNTED = frozenset(("token", "tokens"))  # after a count as core.numbers.tokens writes one too: "10k", "2.4M"


def _number_last(word: str, scaled: bool = False) -> bool:
    """`word` is a number ("30", "1.5", "(40", "-3"), or a duration that ends in one ("7 min 30");
    `scaled`: a count with its magnitude ("10k", "2.4M", "1.2B") is one too."""
    last = word.rsplit(" ", 1)[-1].lstrip("([{~≈<>+-\u2212")
    if scaled and last[-1:] in ("k", "M", "B"):
        last = last[:-1]
    return bool(last) and last[0].isdigit() and all(c.isdigit() or c in ".," for c in last)


def _unit(word: str) -> str | None:
    """`word`'s unit ("min" of "min),"), None where it is not one: a unit may end a clause."""
    bare = word.rstrip(",.;:!?)]}")
    return bare if bare in UNITS else None


def _held(split: list[str], width: float) -> list[str]:
    """The words of `split` (a text cut at each space) with a number and its unit one word ("30 min"),
    and a whole duration too ("4 min 30 s", "6 h 3 min"), where it fits within `width` (where the
    whole would be wider: at its spaces, as before)."""
    words: list[str] = []
    for word in split:  # a number keeps its unit: "4 min 30 s", never "30" / "s ago"
        unit = _unit(word)
        if unit and words and _number_last(words[-1], unit in COUNTED) and len(words[-1]) + 1 + len(word) <= width:
            words[-1] += " " + word
            if (len(words) > 1 and words[-2].endswith((" h", " min")) and unit in ("min", "s")
                    and len(words[-2]) + 1 + len(words[-1]) <= width):
                words[-2:] = [" ".join(words[-2:])]  # one duration: "6 h 3 min", "7 min 30 s"
        else:
            words.append(word)
    return words


def keep_units(text: str) -> str:
    """`text` with the space between a number and its unit, and within a whole duration, a
    no-break space (U+00A0): where a page's text wraps it is `wrap`'s rule, "30 min" or
    "4 min 30 s" never cut, the rest of the text as it was."""
    if " " not in text:
        return text
    return " ".join(word.replace(" ", "\u00a0") for word in _held(text.split(" "), float("inf")))


def _wrap_words(line: str, width: int, indent: int) -> list[str]:
    """`line` wrapped at its spaces within `width` (words after the first line at `indent`); the
    line's own leading spaces and its label's run of spaces kept as they are."""
    lead = len(line) - len(line.lstrip(" "))
    words = _held(line[lead:].split(" "), width)
    rows: list[str] = []
    cur = " " * lead + words[0]
    for word in words[1:]:
        if not word and not cur.strip():
            continue  # a run of spaces where a continuation line starts
        if not cur.strip() or len(cur) + 1 + len(word) <= width:
            cur += (" " if cur.strip() else "") + word  # an empty word: a run of spaces, kept
            continue
        rows.append(cur.rstrip())
        cur = " " * (indent if indent + len(word) <= width else 0) + word
    rows.append(cur.rstrip())
    return rows


def short_ids(ids: list[str]) -> dict[str, str]:
    """Each session id's first 8 characters, more where two of them share those (every command takes
    a prefix of 6 or more). A Codex thread's id is a UUIDv7, whose first 8 characters are the time it
    started to the minute: two threads of one minute (a `/clear` soon after the start) share them."""
    n = short_id_length(ids)
    return {i: i[:n] for i in ids}


def unique_prefix(sid: str, ids: Collection[str], least: int = 8) -> str:
    """`sid` as the text names it among `ids`: its shortest prefix of `least` characters or more that
    begins no other of them, so that naming it on the command line finds it alone: its first 8 where
    none shares those; where one does (two Codex threads of one minute), on to the end of the uuid's
    group that tells them apart (`019f6bcb-f100`, not `019f6bcb-f`), which reads as a piece of the id;
    the whole id where another begins with all of it."""
    head = sid[:least]
    n = least
    for other in ids:
        if other != sid and other.startswith(head):  # only these can need more than `least`
            same = least
            while same < len(sid) and same < len(other) and sid[same] == other[same]:
                same += 1
            n = max(n, same + 1)
    if n > least:
        group_end = sid.find("-", n)  # the end of the group the prefix ends in (a longer prefix: unique too)
        n = len(sid) if group_end < 0 else group_end
    return sid[:n]


SHORT_ID_PLAIN = 16  # up to this many ids, short_id_length's plain loop (the hooks name one or two)


def short_id_length(ids: Collection[str]) -> int:
    """The length `short_ids` cuts every one of `ids` to: the fewest characters, 8 or more, that tell
    the different ids apart. Over a year of sessions (`report`'s 10,000) in C's loops: one set of
    first 8 characters where none are shared; else only the ids that share theirs with another are
    cut longer (an id alone in its first 8 characters is alone in any longer prefix)."""
    if len(ids) <= SHORT_ID_PLAIN:  # a hook's two ids: the same rule without importing itertools, operator
        distinct = set(ids)
        n = 8
        while len({i[:n] for i in distinct}) < len(distinct):
            n += 1
        return n
    from itertools import compress
    from operator import itemgetter

    first = itemgetter(slice(None, 8))
    if len(set(map(first, ids))) == len(ids):  # each alone in its first 8 (so no id twice)
        return 8
    distinct = set(ids)
    kept = dict(zip(map(first, distinct), distinct, strict=True))  # one id per first 8 (the set's one order)
    if len(kept) == len(distinct):  # an id named twice, none sharing its first 8 with another
        return 8
    shared = set(map(first, distinct.difference(kept.values())))  # each shared first 8 has an id not kept
    close = set(compress(distinct, map(shared.__contains__, map(first, distinct))))
    n = 9  # two different ids differ within the longer one's length: the loop ends
    while len(set(map(itemgetter(slice(None, n)), close))) < len(close):
        n += 1
    return n


# folders that hold a repository's worktrees, each in the repository (`repo/.worktrees/NAME`,
# `repo/.claude/worktrees/NAME`), or beside it, by repository (`~/.claude-worktrees/REPO/NAME`)
_IN_REPO = (".worktrees",)
_IN_REPO_DOT = {".claude": "worktrees", ".git": "worktrees"}
_BY_REPO = (".claude-worktrees",)


def project_label(path: str) -> str | None:
    """A project's name as a person knows it, from its folder's path (POSIX or Windows): the last
    folder, a git worktree's with its repository's (`worktree_name`: `repo/.worktrees/1` is
    `repo/1`); None for no folder. The one name of a project wherever the product names one
    (`report`'s tables and `projectName`, its page, OTLP's `project`, an alert's words)."""
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    return (worktree_name(parts) or parts[-1]) if parts else None


def worktree_name(parts: list[str]) -> str | None:
    """`repo/NAME` for the folder (`parts`, its path's folders) of a worktree in one of the usual
    places, NAME its last folder (a branch-like `NAME` of two folders, `.worktrees/alex/fix`, by its
    last, as git names that worktree); None elsewhere, or for a folder deeper in a worktree (its own
    last folder names it)."""
    for i in range(len(parts) - 2, -1, -1):
        below = len(parts) - 1 - i  # folders below the container: 1 or 2 for the worktree itself
        name = parts[i]
        if name in _IN_REPO and i >= 1 and below <= 2:
            return f"{parts[i - 1]}/{parts[-1]}"
        if name == "worktrees" and i >= 2 and _IN_REPO_DOT.get(parts[i - 1]) == name and below <= 2:
            return f"{parts[i - 2]}/{parts[-1]}"
        if name in _BY_REPO and 2 <= below <= 3:
            return f"{parts[i + 1]}/{parts[-1]}"
    return None
