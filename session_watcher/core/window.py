"""The context window a session runs in (SPEC "The context window"). Pure.

In order: what Claude Code told the status line; a `[1m]` / "1M context" marker in the model id or
name; a model known to run only at 1M; observed pressure above 200k; else 200k. The transcript never
carries the window, and the request's model id drops the `[1m]` suffix.
"""

from __future__ import annotations

STANDARD = 200_000
EXTENDED = 1_000_000
# models that run only with the 1M window on the Anthropic API
ONLY_1M = ("claude-opus-4-7", "claude-opus-4-8", "claude-opus-5", "claude-sonnet-5", "claude-fable-5",
           "claude-mythos-5")


def _named(names: list[str]) -> int | None:
    """The window the model names say, None when they do not."""
    for name in names:
        low = name.lower()
        if low[:4] == "gpt-":  # an OpenAI model: the window its family runs in (core.prices_openai)
            from session_watcher.core.prices_openai import context_window as codex_window

            return codex_window(name)
        if "[1m]" in low or "1m context" in low:
            return EXTENDED
    for name in names:
        if name.lower().startswith(ONLY_1M):
            return EXTENDED
    return None


def context_window(reported: int | None, model_names: list[str | None], peak_pressure: int | None) -> int | None:
    """The window, or None while nothing is known (no status line, no model, no call)."""
    if isinstance(reported, int) and reported > 0:
        return reported
    names = [n for n in model_names if n]
    named = _named(names)
    if named is not None:
        return named
    if peak_pressure is not None and peak_pressure > STANDARD:
        return EXTENDED
    if names or peak_pressure is not None:
        return STANDARD
    return None
