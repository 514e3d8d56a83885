"""OpenAI Codex CLI as an agent: its rollout files, their events, its hooks (`AGENT`, the registry's
instance). Its prices are OpenAI's models' (`core.prices_openai`, by model id)."""

from __future__ import annotations

from session_watcher.agents.seam import Agent

TYPE_CHECKING = False  # typing is not imported on the hooks' path
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from typing import Any, Literal

    from session_watcher.agents.source import Source
    from session_watcher.core.handoff import Digest
    from session_watcher.core.shapes import Event

NAME = "codex"  # also its hook command's last word (`hook UserPromptSubmit codex`) and its cursor key
_DECODE: list[Callable[..., tuple[list[Event], int]]] = []  # reader.decode, imported at the first read


class Codex(Agent):
    name = NAME
    stateful = True  # a call's model is the latest turn_context, a token_count counts where the total moved
    open_end = True  # copies of a finished rollout sometimes end without a newline
    status_line = False  # Codex has no status-line command
    one_start_hook = True  # registered once, synchronous: the handoff (agents.codex.hooks.EVENTS)
    clear_words = "/clear"  # a held prompt is not put back in the input line

    def claims(self, head: bytes) -> bool:
        """A rollout opens with its `session_meta` line."""
        if head[:12] != b'{"timestamp"':  # most files: no import
            return False
        from session_watcher.agents.codex.rollout import is_rollout_head

        return is_rollout_head(head)

    def session_id(self, path: str) -> str | None:
        if "rollout-" not in path:  # most paths: no import
            return None
        from session_watcher.agents.codex.reader import session_id

        return session_id(path)

    def roots(self) -> list[str]:
        from session_watcher.agents.codex.discover import roots

        return roots()

    def sources(self, roots: list[str]) -> list[Source]:
        from session_watcher.agents.codex.discover import sources

        return sources(roots)

    def session_ids(self, roots: list[str]) -> Iterator[str]:
        from session_watcher.agents.codex.discover import session_ids

        return session_ids(roots)

    def read(self, before: dict[str, Any] | None, cursor: dict[str, Any], lines: list[bytes], whole: bool,
             ) -> tuple[list[Event], int]:
        if not _DECODE:
            from session_watcher.agents.codex.reader import decode

            _DECODE.append(decode)
        return _DECODE[0](before, cursor, lines, whole)

    def line_reader(self, cursor: dict[str, Any]) -> Callable[[bytes, int], Event | Literal[False] | None]:
        from session_watcher.agents.codex.reader import CURSOR_KEY
        from session_watcher.agents.codex.rollout import line_reader, new_decoder

        d = cursor[CURSOR_KEY] = cursor.get(CURSOR_KEY) or new_decoder()
        return line_reader(d)

    def line_markers(self) -> tuple[bytes, ...]:
        from session_watcher.agents.codex.rollout import ROW_MARKERS  # the report's: no tool lines

        return ROW_MARKERS

    def bind_schema(self) -> None:
        from session_watcher.agents.codex.rollout import bind_schema

        bind_schema()

    def cwd_of(self, rec: Mapping[str, Any]) -> str | None:
        inner = rec.get("payload")  # its session_meta's
        cwd = inner.get("cwd") if isinstance(inner, dict) else None
        return cwd if isinstance(cwd, str) else None

    def digest(self, d: Digest) -> Callable[[Mapping[str, Any]], None]:
        from session_watcher.agents.codex.digest import Feed

        return Feed(d).add

    def turn_starts(self, lines: Iterable[bytes]) -> set[str]:
        from session_watcher.agents.codex.turns import turn_starts

        return turn_starts(lines)

    def hook_output(self, event: str, out: dict[str, Any] | None) -> dict[str, Any] | None:
        from session_watcher.agents.codex.hooks import output

        out = output(event, out)
        if not out:
            return out
        from session_watcher.agents.codex.execout import show  # `codex exec` shows no hook's output

        return show(out)

    def fresh_start(self) -> str | None:
        from session_watcher.agents.codex.execout import EXEC_CLEAR, under_exec

        return EXEC_CLEAR if under_exec() else "/clear here"  # Codex's /clear starts a new thread

    def shell_escape(self) -> str | None:
        # the TUI's `!` runs the command in a login shell of the thread's folder and sends no request
        # (measured with 0.171.0: tests/e2e/test_e2e_codex.py); `codex exec` has no input line
        from session_watcher.agents.codex.execout import under_exec

        return None if under_exec() else "!"

    def unseen(self) -> bool:
        from session_watcher.agents.codex.execout import unseen

        return unseen()

    def held_words(self) -> dict[str, Any]:
        from session_watcher.agents.codex.execout import EXEC_CLEAR, under_exec

        if under_exec():  # a new thread is a new `codex exec`; `/compact` there is a prompt like any
            return {"clear": EXEC_CLEAR, "compact": False}
        return super().held_words()


AGENT = Codex()
