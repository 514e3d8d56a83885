"""The hook process's entry point, `session-watcher-hook EVENT [inject | AGENT]`: the synchronous
SessionStart hook giving a handoff (`hooks.inject`) or the fold of every other event (`hooks.run`),
the output printed as the agent's hook takes it, and whatever went wrong logged, never raised.

Apart from `hooks.run` (every event's fold: the session's state, the alerts, the guard) so that the
SessionStart hook, which the client waits for at every start, loads none of it; nothing is
imported here before a branch needs it.
"""

from __future__ import annotations

import sys

# small enough that its parse ends well within the hook's timeout (docs/architecture.md, the figures
# in docs/benchmarks.md); a payload larger (a Read of a large PDF: its base64) is read to its end and
# dropped unparsed: the hook exits 0 without a word, and the next event folds the transcript, which
# holds the calls (no hook reads a payload's tool_response)
MAX_STDIN = 8 << 20
# a payload is drained to this much and no further: an input that never ends (a client's fault, a
# device) must not hold the hook until its timeout; past it the client's write breaks, as it would
DRAIN_MAX = 256 << 20
INJECT = "SessionStart inject"  # the one row of hooks.run.EVENTS whose run is "inject", not a fold
# the agent the plugin's own hooks (`hook EVENT [inject]`) run for: agents.claude_code's name, spelled
# here so that its SessionStart hook imports no registry (tests/test_handoff.py holds the two alike)
PLUGIN_AGENT = "claude-code"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    event = argv[0] if argv else ""
    agent = None  # the plugin's own hooks: `hook EVENT [inject]`; another agent's: `hook EVENT AGENT`
    if argv[1:2] and argv[1] != "inject":
        from session_watcher.agents import agent_named

        agent = agent_named(argv[1])
    if sys.stdin is None:  # stdin closed (`<&-`): no payload, nothing to fold and nothing to log
        return 0
    try:
        raw = sys.stdin.buffer.read(MAX_STDIN + 1)
        if len(raw) > MAX_STDIN:  # never parsed: its parse alone could outlast the hook's timeout
            return _dropped(event, len(raw))
        # `SessionStart inject` has a row of its own; an agent's one SessionStart hook is that row
        one_start = agent is not None and agent.one_start_hook
        if (one_start and event == "SessionStart") or " ".join(argv[:2]) == INJECT:
            from session_watcher.hooks.inject import run as inject

            out = inject(raw, drop_on_compact=one_start, agent=PLUGIN_AGENT if agent is None else agent.name)
        else:
            from session_watcher.hooks.run import run

            out = run(event, raw, message=agent is not None and not agent.status_line)
        if out and agent is not None:
            out = agent.hook_output(event, out)  # what its hook may print
        if out and sys.stdout is not None:  # stdout closed (`>&-`): the caller's choice, nothing to report
            from session_watcher.core.fastjson import dumps

            sys.stdout.write(dumps(out) + "\n")
            sys.stdout.flush()
    except BaseException as exc:
        from session_watcher.base.logs import log_exception

        log_exception(f"hook {event}", exc)
    return 0


def _dropped(event: str, size: int) -> int:
    """A payload past MAX_STDIN, read to its end (up to DRAIN_MAX) and dropped (a hook that exits
    before the client has written its input breaks the pipe: Claude Code's write fails, Codex says
    "failed to write hook stdin: Broken pipe"), and logged."""
    while size <= DRAIN_MAX and (chunk := sys.stdin.buffer.read(1 << 20)):
        size += len(chunk)
    from session_watcher.base.logs import log

    said = f"{size} bytes" if size <= DRAIN_MAX else f"over {DRAIN_MAX >> 20} MiB (read no further)"
    log(f"hook {event}: a payload of {said}, past the {MAX_STDIN >> 20} MiB a hook parses, dropped "
        "(the next event folds the transcript)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
