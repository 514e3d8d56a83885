"""The errors only a command reports to its user (core.errors draws the whole hierarchy): what the
user can act on, `UserError` and its kinds (the CLI prints one message, wrapped within COLUMNS,
and exits 1, or 2 for a UsageError), and a read-only user file. Apart from `core.errors`, which
every hook run loads, so a hook's process creates these classes only when it reads the config
files again (`base.config`: a session's first run, a config file changed) or reaches other code
that raises one."""

from __future__ import annotations

from session_watcher.core.errors import WatcherError


class UserError(WatcherError):
    """Something the user can fix (a missing session, a bad argument, an unusable file): one message,
    exit 1. `keep`: the paths in it, each kept whole where the CLI wraps the message (one may hold a
    space)."""

    def __init__(self, message: str = "", *, keep: tuple[str, ...] | list[str] = ()) -> None:
        super().__init__(message)
        self.keep = tuple(str(k) for k in keep)


class UsageError(UserError):
    """A command line that cannot work (options that do not go together): exit 2, as argparse's refusals."""


class NoSession(UserError):
    """No session matches the request (no state, no transcript, an unknown id or prefix)."""


class ConfigError(UserError, ValueError):
    """A config file that cannot be used: names the file, the key and what was expected."""


class NoTarget(UserError):
    """OTLP export is on but there is nowhere it can go (the message says why, for the log and `doctor`)."""


class ReadOnlyFile(WatcherError, PermissionError):
    """The user's file is read-only (no write permission bit): left as it is, never rewritten."""
