"""Claude Code as an agent: its transcripts, their events, its hooks (`AGENT`, the registry's instance).

Its transcripts carry no mark of their own (a JSON object a line): it is the registry's fallback,
reading every log no other agent claims.
"""

from __future__ import annotations

from session_watcher.agents.seam import Agent

TYPE_CHECKING = False  # typing is not imported on the hooks' path
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from typing import Any

    from session_watcher.agents.source import Source
    from session_watcher.core.handoff import Digest
    from session_watcher.core.shapes import Event


class ClaudeCode(Agent):
    name = "claude-code"
    fallback = True
    clear_words = "clear the input line (Ctrl+U), then /clear"  # a held prompt goes back in the input line

    def claims(self, head: bytes) -> bool:
        return False  # the fallback: claims nothing, reads the rest

    def session_id(self, path: str) -> str:
        """A transcript is named after its session: `<id>.jsonl`."""
        from session_watcher.base import sysos

        return sysos.basename(path).removesuffix(".jsonl")

    def roots(self) -> list[str]:
        from session_watcher.agents.claude_code.discover import default_roots

        return default_roots()

    def sources(self, roots: list[str]) -> list[Source]:
        from session_watcher.agents.claude_code.discover import discover

        return discover(roots)

    def session_ids(self, roots: list[str]) -> Iterator[str]:
        from session_watcher.agents.claude_code.discover import session_ids

        return session_ids(roots)

    def read(self, before: dict[str, Any] | None, cursor: dict[str, Any], lines: list[bytes], whole: bool,
             ) -> tuple[list[Event], int]:
        """Every line stands alone: a hook's new lines by the hooks' scanner, replay's whole chunk by
        the bulk parser (msgspec), without the events that change nothing in the fold (`lean`)."""
        if whole:
            from session_watcher.agents.claude_code.bulkparse import parse_chunk

            return parse_chunk(lines[0], lean=True)
        from session_watcher.agents.claude_code.transcript import parse_lines

        return parse_lines(lines)

    def cwd_of(self, rec: Mapping[str, Any]) -> str | None:
        cwd = rec.get("cwd")
        return cwd if isinstance(cwd, str) else None

    def digest(self, d: Digest) -> Callable[[Mapping[str, Any]], None]:
        return d.add  # its records go to the Digest as they are

    def turn_starts(self, lines: Iterable[bytes]) -> set[str]:
        from session_watcher.agents.claude_code.turns import turn_starts

        return turn_starts(lines)


AGENT = ClaudeCode()
