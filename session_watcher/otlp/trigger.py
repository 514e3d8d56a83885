"""The hook's whole share of the OpenTelemetry export: a stat, and now and then a spawn.

Imported by a hook only when its config has export on (`on`). The exporter keeps a heartbeat file
fresh while it loops; a hook that finds it older than two intervals (or missing) touches it, so its
neighbours do not start another, and starts the exporter detached (state.spawn.detached: its own
session, stdio on /dev/null, nothing on its command line but the package root and, at SessionEnd,
the session id). SessionEnd always starts a one-off flush of its own session: a print-mode session
ends with the client, and its last figures should not wait for the next loop. The exporter imports
the OTLP encoders; the hook imports nothing but this module and `state.spawn`.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from session_watcher.core.shapes import OtlpConfig

# the child's command line carries the package root and a session id, never session text
_BOOT = ("import sys;sys.path.insert(0,sys.argv[1]);from session_watcher.otlp.exporter import main;"
         "raise SystemExit(main(sys.argv[2:]))")


def on(otlp: OtlpConfig | None, env: Mapping[str, str]) -> bool:
    """Export is on: `enabled = true`, or "auto" with Claude Code's own telemetry on (its
    CLAUDE_CODE_ENABLE_TELEMETRY reaches hooks, the OTEL_* variables do not)."""
    if not otlp:
        return False
    enabled = otlp.get("enabled")
    if enabled == "auto":
        return env.get("CLAUDE_CODE_ENABLE_TELEMETRY", "").strip().lower() in ("1", "true", "yes", "on")
    return enabled is True


def child_argv(*extra: str) -> list[str]:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return [sys.executable, "-I", "-c", _BOOT, root, *extra]


def due(otlp: OtlpConfig, flush: bool, session_id: str, now: float, env: Mapping[str, str]) -> int | None:
    """Start the exporter when it is due, or at once for the session's own flush (`flush`: it ended,
    hooks.run's SessionEnd); its pid, or None (not due, or it could not start)."""
    if not sys.executable or not hasattr(os, "posix_spawn"):  # pragma: no cover - Windows: not yet
        return None
    from session_watcher.base import paths
    from session_watcher.state.spawn import detached

    if flush:
        return detached(child_argv("--session", session_id), env)
    stamp = os.path.join(paths.otlp_dir(), "heartbeat")
    interval = otlp.get("interval") or 60
    try:
        age = now - os.stat(stamp).st_mtime
    except FileNotFoundError:
        age = float("inf")
    except OSError:
        return None
    if age < 2 * interval:
        return None
    try:
        if age == float("inf"):
            paths.ensure_private_dir(os.path.dirname(stamp))
            os.close(paths.open_file(stamp, os.O_WRONLY | os.O_CREAT, 0o600, follow=False))  # never a FIFO
        os.utime(stamp, (now, now))
    except OSError:
        return None
    return detached(child_argv(), env)
