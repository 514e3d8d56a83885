"""What an agent is to the rest of the package: an `Agent` per agent (SPEC "Agents").

The state, the sessions, the reports and the hooks reach an agent only through this type, found in
the registry (`session_watcher.agents`): where its logs are, which file is its log, how its lines
become the core's events, what its records give a handoff note, and what its hooks may print. Each
agent's folder subclasses it once (its methods import the agent's modules when called) and the
registry holds one instance of each. A plain class: the hooks import it on every run. Beside it, the
rules every agent's log is read by (the reader's split at newlines and the cap past which a line is
skipped unread, a line's ISO time, the handoff note's mark), which Claude Code's parser re-exports.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported on the hooks' path
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from typing import Any, Literal

    from session_watcher.agents.source import Source
    from session_watcher.core.handoff import Digest
    from session_watcher.core.shapes import Event

# what every agent's log is read by (the reader's split and cap, a line's time, the handoff's mark)
MAX_LINE_BYTES = 8 << 20  # longer lines are skipped unparsed (a hostile 50 MB line stays cheap)
HANDOFF = b"[session-watcher handoff from session "  # core.notehead.MARKER: a line that may name a parent


def split_lines(chunk: bytes, max_lines: int = -1) -> tuple[list[bytes], int]:
    """Complete lines of `chunk` (the first `max_lines` at most) and the bytes they span; a line
    without its newline waits, and so do the lines past `max_lines`."""
    lines = chunk.split(b"\n", max_lines)  # the whole chunk: no copy of it cut at the last newline first
    tail = lines.pop()  # after the last newline (or the last line taken): not for this call
    return lines, len(chunk) - len(tail)


def iso_to_epoch(text: object) -> float | None:
    """'2026-02-10T21:11:56.906Z' -> seconds since the epoch, without importing datetime."""
    if not isinstance(text, str) or len(text) < 19 or text[10] not in "T ":
        return None
    try:
        y, mo, d = int(text[0:4]), int(text[5:7]), int(text[8:10])
        h, mi, s = int(text[11:13]), int(text[14:16]), int(text[17:19])
        frac = 0.0
        rest = text[19:]
        if len(text) == 24 and text[23] == "Z" and text[19] == "." and text[20:23].isdigit():
            frac = float("0." + text[20:23])  # what every transcript line carries: the loop below, unrolled
            rest = "Z"
        elif rest.startswith("."):
            digits = ""
            for ch in rest[1:]:
                if not ch.isdigit():
                    break
                digits += ch
            rest = rest[1 + len(digits):]
            frac = float("0." + digits) if digits else 0.0
        offset = 0
        if rest and rest[0] in "+-" and len(rest) >= 6:
            sign = 1 if rest[0] == "+" else -1
            offset = sign * (int(rest[1:3]) * 3600 + int(rest[4:6]) * 60)
    except ValueError:
        return None
    if not (1 <= mo <= 12 and 1 <= d <= 31):
        return None
    # days from civil (Howard Hinnant's algorithm)
    y -= mo <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (mo + (-3 if mo > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    days = era * 146097 + doe - 719468
    return days * 86400 + h * 3600 + mi * 60 + s + frac - offset


class Agent:
    """One agent: its facts as class attributes, its ways as methods (each agent overrides them)."""

    # what `status`, the report, the pages and the OTLP points call it; its hook command's word; the
    # key that marks the reader's cursors on its logs (`agents.agent_reading`)
    name = ""
    # its logs carry no mark of their own: it reads every log no other agent claims (one agent is)
    fallback = False
    # its lines do not stand alone: its decoder's state rides in the reader's cursor, under its name,
    # and a file is read from its first byte (the report's index reads it again whole)
    stateful = False
    open_end = False  # a finished log may end without a newline: its last line counts
    status_line = True  # False: no status line, so alerts also go to the next prompt's message
    # its one SessionStart hook gives the pending handoff (the inject row), and a compaction drops the
    # guard's handoff (its `/compact` reaches no prompt hook)
    one_start_hook = False
    clear_words = "/clear"  # how the user starts the fresh session a held prompt's handoff waits for

    def claims(self, head: bytes) -> bool:
        """True when a file opening with these bytes (its first line, or at least 512 bytes) is its log."""
        raise NotImplementedError

    def session_id(self, path: str) -> str | None:
        """The session a log's path names; None when the name is not one of its logs'."""
        raise NotImplementedError

    def roots(self) -> list[str]:
        """The folders its logs are in on this machine."""
        raise NotImplementedError

    def sources(self, roots: list[str]) -> list[Source]:
        """Every log under these folders (main and subagent files), an entry named as a main log
        that is no file among them (a folder so named, a link to nothing): whoever reads the logs
        names those it cannot read (`report`, `export`, `backtest`), one rule for every agent."""
        raise NotImplementedError

    def session_ids(self, roots: list[str]) -> Iterator[str]:
        """The session of each main log under these folders, as the folders are listed (no log
        read; a session may come more than once): what `doctor` counts, and stops counting at its
        bound. An agent that lists its folders lazily says so; this one lists them all first."""
        return (src.session for src in self.sources(roots) if not src.sub)

    def read(self, before: dict[str, Any] | None, cursor: dict[str, Any], lines: list[bytes], whole: bool,
             ) -> tuple[list[Event], int]:
        """(events, bad lines) of one read: a hook's new lines, or with `whole` one chunk of complete
        lines (replay's read); `before` and `cursor` are the reader's cursor before and after it
        (a stateful agent keeps its decoder's state in `cursor`)."""
        raise NotImplementedError

    def line_markers(self) -> tuple[bytes, ...]:
        """Byte strings of which every line its decoder takes a call, a compaction or a state from
        holds one (the report searches them over whole chunks and hands it only those lines; its rows
        are calls and compactions); () for every line."""
        return ()

    def line_reader(self, cursor: dict[str, Any]) -> Callable[[bytes, int], Event | Literal[False] | None]:
        """`take(line, which)` for a stateful agent: the event of one line holding its markers (bit i of
        `which` set where the line holds `line_markers()[i]`), None for none, False for a bad line; its
        decoder's state in `cursor`. The report's marked lines, one at a time and in order."""
        raise NotImplementedError

    def bind_schema(self) -> None:
        """Read whole logs from now on the way a large read pays for (msgspec imported: the report's
        readers, before they fork); nothing where its decoder has one way only. Never a hook's."""

    def cwd_of(self, rec: Mapping[str, Any]) -> str | None:
        """The folder a parsed record of its log says the session ran in, None."""
        raise NotImplementedError

    def digest(self, d: Digest) -> Callable[[Mapping[str, Any]], None]:
        """What a parsed record of its log, fed in order, adds to the handoff note's Digest."""
        raise NotImplementedError

    def held_words(self) -> dict[str, Any]:
        """What the reason of a held prompt offers its user where the hook runs (`core.guard.compose`'s
        `clear`: how the fresh session the handoff waits for is started; `compact`: /compact is one)."""
        return {"clear": self.clear_words, "compact": True}

    def fresh_start(self) -> str | None:
        """How its user starts the fresh session a handoff waits for, where the hook runs, in the words
        an alert's restart line ends with (`base.route.restart_path`'s `then`); None: the install
        route's own words (Claude Code's: its plugin's slash command, or the command then `/clear`)."""
        return None

    def shell_escape(self) -> str | None:
        """The prefix its input line takes for a shell command that it runs itself and sends to no
        model, where the hook runs (`base.route`: the handoff typed there); None: it has none.
        Claude Code's bash mode is none: it hands the command's output to the model as a turn."""
        return None

    def unseen(self) -> bool:
        """Whether what its printing hook shows the user (a `systemMessage`) reaches no one where the
        hook runs; True: the alerts wait in the state for a prompt that shows them."""
        return False

    def turn_starts(self, lines: Iterable[bytes]) -> set[str]:
        """The main-chain calls of a whole log (its lines, in order) that open an agent turn: the first
        call after the agent stopped and the user sent a prompt, by their call events' keys."""
        raise NotImplementedError

    def hook_output(self, _event: str, out: dict[str, Any] | None) -> dict[str, Any] | None:
        """What its hook may print of a run's output for `event` (None: nothing)."""
        return out

    def __repr__(self) -> str:
        return f"Agent({self.name!r})"
