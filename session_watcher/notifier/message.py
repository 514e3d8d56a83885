"""The alert's words: title and body from the session's own numbers, and escaping per channel.

Pure functions of the alert dict (docs/architecture.md, "Alerts"). The texts are plain; each channel
escapes them for its own carrier: `markup_escape` for a freedesktop body, `terminal_clean` for an
OSC sequence, `plain_clean` for Claude Code's `systemMessage`.
"""

from __future__ import annotations

from session_watcher.core.numbers import dollars, duration, over_calls, tokens
from session_watcher.core.text import is_control as _is_control

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hot path)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


def math_isnan(v: float) -> bool:
    return v != v  # noqa: PLR0124 - NaN is the only value unequal to itself (math costs an import)


MAX_FIELD = 120  # session text (a project path, a model name) longer than this is shortened
MAX_BODY = 600


def pair(x: object, sweet: object) -> tuple[str, str]:
    """x and xSweet with one decimal, or two when one decimal would make them look equal."""
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (x, sweet)):
        return "?", "?"
    a, b = f"{x:.1f}", f"{sweet:.1f}"
    if a == b:
        a, b = f"{x:.2f}", f"{sweet:.2f}"
    return a, b


def _short(text: object) -> str | None:
    if not isinstance(text, str) or not text.strip():
        return None
    text = plain_clean(text).replace("\n", " ").strip()
    if len(text) > MAX_FIELD:
        text = "…" + text[-(MAX_FIELD - 1) :]
    return text


def project_name(project: object) -> str | None:
    """A project given as a path is named as `report` names it (`core.text.project_label`: its last
    folder, a git worktree's with its repository's, `repo/1`)."""
    from session_watcher.core.text import project_label

    text = _short(project)
    if text is None:
        return None
    return project_label(text) or text


def _number(v: object) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) and not math_isnan(v) else None


def _tokens_and_dollars(n: object, usd: object) -> str:
    """'48k tokens ($1.13)'; the dollars left out when the model has no price."""
    price = _number(usd)
    return f"{tokens(n)} tokens" + (f" ({dollars(price)})" if price is not None else "")


def long_context(alert: Mapping[str, object]) -> str | None:
    """On a model whose calls cost double past a long-context step (OpenAI's 272K): restart before
    it, or, past it, that every call costs double; None on other models."""
    from session_watcher.core import prices
    from session_watcher.core.prices_openai import LONG_CONTEXT

    model, big_l = alert.get("model"), _number(alert.get("L"))
    if not isinstance(model, str) or big_l is None or prices.call_factor(model, LONG_CONTEXT + 1) <= 1:
        return None
    step = tokens(LONG_CONTEXT)
    if big_l > LONG_CONTEXT:
        return f"Past {step} tokens every call costs double: a fresh session ends that."
    return f"Restart before {step} tokens: past it every call costs double (now {tokens(big_l)})."


def compose(alert: Mapping[str, object], restart: str | None = None, command: str | None = None,
            then: str | None = None, escape: str | None = None) -> tuple[str, str]:
    """(title, body) in plain text for one alert: plain words first, then numbers to act on (what
    a fresh session would carry and what restarting now saves), never the model's jargon; `restart`
    is the route's restart path (route.restart_path), by default the running hook's; `command` the
    route's command (route.cli_command), which a cold return's restart runs in a terminal; `then`
    how the session's agent starts the fresh session (`Agent.fresh_start`; None: Claude Code's), and
    `escape` its input line's shell escape that sends nothing to the model (`Agent.shell_escape`)."""
    project = project_name(alert.get("project"))
    where = f" ({project})" if project else ""
    kind = alert.get("kind")
    carry = f"A fresh session would carry {tokens(alert.get('bDefault'))} tokens"
    system, files = alert.get("system"), alert.get("files")
    if isinstance(system, int | float) and isinstance(files, int | float):
        carry += f" ({tokens(system)} system + {tokens(files)} in files)"
    carry += "."
    lines = []
    if kind == "guard":
        title = f"Your cache expired: a fresh start is cheaper now{where}"
        gap, fresh_usd = _number(alert.get("gap")), _number(alert.get("freshUsd"))
        rewrite = _tokens_and_dollars(alert.get("rewrite"), alert.get("rewriteUsd"))
        fresh = dollars(fresh_usd) if fresh_usd is not None else ""
        lines.append(f"{duration(gap) if gap is not None else 'A while'} since the last call: "
                     f"the next prompt re-writes {rewrite}.")
        lines.append(carry[:-1] + (f", about {fresh} to start." if fresh else "."))
        saving = horizon(alert)  # the guard's and the status line's figure, the cache cold
        if saving is not None:
            lines.append(saving)
    else:
        title = _advice_title(alert, where)
        saving = horizon(alert)
        if saving is not None:
            lines.append(saving)
        lines.append(carry)
        step = long_context(alert)
        if step:
            lines.append(step)
    import os

    from session_watcher.base import route

    if kind == "guard":  # the cache is cold: nothing that goes to the model may restart it; the command
        # run in a terminal, or by the agent's shell escape, is the route's (the plugin's by its path:
        # the plugin puts nothing on PATH)
        restart = route.cold_restart(command or route.cli_command(os.environ, hook=True), then or "/clear", escape)
    elif restart is None:
        restart = route.restart_path(route.of_hook(os.environ), then, escape)
    lines.append(f"{route.RESTART_LINE}{restart}.")
    model = _short(alert.get("model"))
    if model:
        lines.append(f"Model: {model}")
    body = "\n".join(lines)
    if len(body) > MAX_BODY:
        body = body[: MAX_BODY - 1] + "…"
    return title, body


def _count(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _advice_title(alert: Mapping[str, object], where: str) -> str:
    """The gate's title for the first of its episode the user sees, "Reminder k" for the k-th after
    it: counted from what was shown (`shown`, set on delivery by notifier.throttle), else, for an alert
    composed without delivery (`notify --test`), from the engine's own count."""
    k = _count(alert.get("shown"))
    if k is None:
        k = _count(alert.get("reminder")) or (1 if alert.get("kind") == "backstop" else 0)
    if k:
        return f"Reminder {k}: this session still costs more than a fresh start{where}"
    return f"This session now costs more than a fresh start{where}"


def horizon(alert: Mapping[str, object]) -> str | None:
    """What restarting now saves (`saving`, eoq.restart_saving: the status line's and the guard's
    figure), over its horizon in the one wording (`numbers.over_calls`: the calls at this session's
    pace, until the automatic compaction when it comes first), and how: the tokens not read over those
    calls (each reads L - B fewer) less the restart's own cost, the net tokens `status` quotes beside
    the dollars, and at a cold return the re-write it spares. None without the figures, or when nothing is saved."""
    saving, cycle = _number(alert.get("saving")), _number(alert.get("cycle"))
    big_l, base = _number(alert.get("L")), _number(alert.get("bDefault"))
    if saving is None or saving <= 0:
        return None
    over = over_calls(cycle, alert.get("untilCompaction"))
    if not over and alert.get("kind") != "guard":
        return f"Restarting now saves about {_tokens_and_dollars(saving, alert.get('savingUsd'))} of cache reads."
    saving_usd = _number(alert.get("savingUsd"))
    amount = dollars(saving_usd) if saving_usd is not None else f"about {tokens(saving)} tokens of cache reads"
    if alert.get("kind") == "guard":
        how = ", the re-write included"
    elif cycle is not None and big_l is not None and base is not None and big_l > base:
        fewer = tokens(cycle * (big_l - base))
        net = f": {tokens(saving)} net at the cache-read price" if saving_usd is not None else ""  # status's
        how = f" (at this session's pace: {fewer} fewer tokens read, less the restart's own cost{net})"
    else:
        how = ""
    return f"Restarting now saves {amount}{' ' + over if over else ''}{how}."


def pick(alerts: Sequence[Mapping[str, object]]) -> Mapping[str, object]:
    """The alert to show when a batch holds several: the latest call, a reminder over the gate."""

    def key(a: Mapping[str, object]) -> tuple[int, int]:
        call, rem = a.get("call"), a.get("reminder")
        return (call if isinstance(call, int) else -1, rem if isinstance(rem, int) else 0)

    return max(alerts, key=key)


def markup_escape(text: str) -> str:
    """Escape &, < and > for the freedesktop notification body markup."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def plain_clean(text: str) -> str:
    """Drop control characters (ESC, BEL, C1...) but keep newlines: text for `systemMessage`."""
    return "".join(ch if ch == "\n" or not _is_control(ch) else "" for ch in text)


def terminal_clean(text: str) -> str:
    """Text safe inside an OSC sequence: no control characters at all (newlines become spaces)."""
    return "".join(" " if ch in "\n\t" else ("" if _is_control(ch) else ch) for ch in text).strip()


def osc777(title: str, body: str) -> str:
    """`ESC ] 777 ; notify ; TITLE ; BODY BEL` (urxvt, foot, Ghostty, WezTerm); ';' ends the title."""
    return f"\x1b]777;notify;{terminal_clean(title).replace(';', ',')};{terminal_clean(body)}\x07"


def osc9(title: str, body: str) -> str:
    """`ESC ] 9 ; TEXT BEL` (iTerm2, kitty, WezTerm, Ghostty)."""
    return f"\x1b]9;{terminal_clean(title)}: {terminal_clean(body)}\x07"
