"""The package's errors (defined in `core.errors`, where the pure core can raise them too).

The CLI's one handler (`cli.main`) turns them into exit codes: a `UserError` prints as one line on
stderr and exits 1; anything else unexpected is logged and exits 3.
"""

from __future__ import annotations

from session_watcher.core.errors import (
    ConfigError,
    JSONError,
    LockTimeout,
    NoSession,
    NotAFile,
    NoTarget,
    NotOurs,
    ProbeError,
    ReadOnlyFile,
    Rejected,
    Reset,
    ShardRejected,
    StateRejected,
    StateTooLarge,
    TooLarge,
    UsageError,
    UserError,
    WatcherError,
)

__all__ = [
    "ConfigError",
    "JSONError",
    "LockTimeout",
    "NoSession",
    "NoTarget",
    "NotAFile",
    "NotOurs",
    "ProbeError",
    "ReadOnlyFile",
    "Rejected",
    "Reset",
    "ShardRejected",
    "StateRejected",
    "StateTooLarge",
    "TooLarge",
    "UsageError",
    "UserError",
    "WatcherError",
]
