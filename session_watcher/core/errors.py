"""Every error session-watcher raises on purpose: one base, a few named kinds.

    WatcherError                  anything raised on purpose; what else reaches the CLI is a bug (exit 3)
    ├── UserError                 the user can act on it: the CLI prints it as one message and exits 1
    │   ├── UsageError            options that do not go together: one message, exit 2 (as argparse's own)
    │   ├── NoSession             no session matches what was named (sessions.find)
    │   ├── ConfigError           a config file that cannot be used (a ValueError too)
    │   └── NoTarget              OTLP export is on but has nowhere to go (otlp.settings)
    ├── LockTimeout               the session lock is busy: show the state as saved, or leave it to a later run
    ├── Rejected                  a file of ours that cannot be used: rebuild from the transcript
    │   ├── StateRejected         the state file (quarantined by state.store)
    │   └── ShardRejected         a path-map shard (state.pathstore)
    ├── Reset                     the transcript is not the one the cursor describes: fold it from the start
    ├── ProbeError                the session bus could not be asked (notifier.busprobe)
    ├── JSONError                 not a JSON document (core.fastjson; a ValueError too)
    ├── StateTooLarge             a state or shard past the load limit: not written (a ValueError too)
    ├── NotOurs                   a folder we would write into is a link or someone else's (an OSError too)
    ├── NotAFile                  a FIFO, socket, device or folder where a regular file belongs (an OSError)
    ├── TooLarge                  a file over the size its reader takes (paths.read_file; an OSError)
    └── ReadOnlyFile              the user's file is read-only: never rewritten (a PermissionError)

Two modules hold them, by who meets them: this one the base and the kinds a hook or the status line
may raise or catch (it imports nothing: the hooks load it on every run), `core.usererrors` the ones
only a command reports to its user (UserError and its kinds, ReadOnlyFile), which a hook's process
never creates unless it reaches the code that raises one (a config file that cannot be used, an OTLP
export with nowhere to go).

The stdlib bases stay where callers rely on them: a ConfigError or JSONError is caught as the
ValueError a parse raises, NotOurs, NotAFile, TooLarge and ReadOnlyFile as the OSError an open or a
read raises (the CLI prints an OSError as its file and its reason, exit 1). The hierarchy lives in the
core because the core raises JSONError and imports nothing of the project but itself; the modules
that raise each kind import it from here (or `core.usererrors`) under its old name
(`state.lock.LockTimeout`, `config.ConfigError`, ...).
"""


class WatcherError(Exception):
    """Raised by session-watcher on purpose; anything else that reaches the CLI is a bug."""


class LockTimeout(WatcherError):
    """The session lock could not be had in time; the caller leaves and a later run catches up."""


class Rejected(WatcherError):
    """A file of ours exists but cannot be used; the session is rebuilt from its transcript."""


class StateRejected(Rejected):
    """The state file exists but cannot be used; it has been quarantined. `kept`: a state of the right
    shape whose values are not all readable (state.store.damage): its sound parts, for a rebuild to keep."""

    kept: object = None


class ShardRejected(Rejected):
    """A path-map shard is missing or unusable: the session state must be rebuilt from the transcript."""


class Reset(WatcherError):
    """The transcript is not the one the cursor describes: fold it again from the start."""


class ProbeError(WatcherError):
    """The bus could not be reached or answered something this client does not understand."""


class JSONError(WatcherError, ValueError):
    """Not a JSON document (also raised for bytes that are not UTF-8)."""


class NotOurs(WatcherError, OSError):
    """A folder we would write into is a symlink, not a folder, or someone else's: refused."""


class StateTooLarge(WatcherError, ValueError):
    """A state (or one of its path-map shards) that would pass the load limit: not written, so no
    later run finds a file it must quarantine (the last state that could be saved stays)."""


class NotAFile(WatcherError, OSError):
    """A FIFO, socket, device, folder (or, where links are not followed, a link) where a regular
    file belongs: never read or written. `kind`: 'fifo', 'socket', 'device', 'folder', 'symlink'."""

    kind = "not-a-file"


class TooLarge(WatcherError, OSError):
    """A file over the size its reader takes: not read (`paths.read_file`)."""
