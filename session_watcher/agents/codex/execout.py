"""What a `codex exec` user sees of a synchronous hook: its text written to exec's own stderr.

Codex 0.171.0's `exec` (its plain and its `--json` output alike) shows none of a hook's output: not
a `systemMessage`, not a block's `reason`, not the hook's stderr, not a `stopReason`; only
`hook: UserPromptSubmit Blocked` (or `Completed`, `Stopped`, `Failed`) on its stderr, while the TUI
shows the messages and reasons (docs/install.md, Codex CLI). So a prompt held by the guard
ended with no word of why, and the alerts queued for the next prompt were never seen. A hook runs
in a session of its own, with no controlling terminal and its stdout and stderr read by Codex; the
one place the exec user reads is the stderr of the `codex` process that runs the hook, where exec
writes its own lines (`--json` keeps stdout for its events, so stderr stays the person's; not where
stderr is stdout too, `2>&1`: that stream is a program's, left alone).

`show` finds that process (the nearest ancestor named `codex`, the one that ran the hook, past a
`sh -c`), checks that it is `exec` (its command line's subcommand: never the TUI, whose screen a
write would tear, nor its background daemon), and writes the texts there when that stderr is a
terminal in its ordinary line mode, a pipe, or a file opened for appending (a file written at an
offset would overwrite our lines, or ours its). The write needs Linux's `/proc` (exec's stderr
opened through it); elsewhere, and whenever any step fails, nothing is written and the JSON output
stays as it was. Where no line can be added (`unseen`), the prompt hook leaves the alerts queued
for a prompt that shows them (hooks.run._route) rather than print them to no one. No portable way
was found: measured with the real `codex exec`, a hook's own stderr is shown in none of its exit
forms (0, 1, 2 or a JSON block: only `hook: UserPromptSubmit Blocked`,
`Failed`, `Completed`), the hook inherits no descriptor but its three pipes, and has no controlling
terminal; so on macOS a held exec prompt says no more than that (`doctor` says so, and
docs/install.md). Whether the hook runs under `exec` (the guard's and the alerts' words for it) is
told without /proc too: from `ps` on macOS (`_exec_by_ps`); on Windows never (checked first: its
`os` has no O_NOCTTY). Nothing here reaches the thread's model (a `codex exec` that another agent runs as
a tool has its stderr read by that agent, these lines with Codex's own: the command's output).
"""

from __future__ import annotations

import sys

from session_watcher.base import sysos

TYPE_CHECKING = False  # typing is slow to import; this module is on a hook's path (rarely: only with text to show)
if TYPE_CHECKING:
    from typing import Any

ANCESTORS = 4  # the hook, its launcher's shell, ...: how far up `codex` is looked for
# Codex 0.171.0's subcommands (`codex --help`) and their aliases: the first of these on its command
# line is the one it runs; none is the TUI
SUBCOMMANDS = frozenset({
    "exec", "e", "review", "login", "logout", "mcp", "plugin", "app-server", "remote-control", "completion",
    "update", "doctor", "sandbox", "debug", "apply", "a", "resume", "queue", "archive", "delete",
    "migrate-rollouts", "migrate-nfs-db", "unarchive", "fork", "cloud", "exec-server", "features", "help",
    "agents", "mcp-server", "responses-api-proxy", "stdio-to-uds",
})
EXEC = frozenset({"exec", "e"})
# Codex 0.171.0's options before a subcommand that take a value as the next word (`codex --help`):
# that word is the value, never the subcommand (`codex -m exec` is the TUI on a model named exec);
# `-i`'s values are every word up to the next option (`codex -i a.png exec` attaches an image `exec`)
VALUED = frozenset({
    "-c", "--config", "--enable", "--disable", "--remote", "--remote-auth-token-env", "-m", "--model",
    "--local-provider", "-p", "--profile", "-s", "--sandbox", "-C", "--cd", "--add-dir", "-a",
    "--ask-for-approval",
})
IMAGES = frozenset({"-i", "--image"})
# how an exec user starts the fresh thread a held prompt's handoff waits for (the guard's reason)
EXEC_CLEAR = "run `codex exec` without `resume` in this project"
O_APPEND_FLAG = sysos.O_APPEND  # /proc/PID/fdinfo's octal `flags:` are the kernel's own (this architecture's values)
PROC = "/proc"


def is_exec(argv: list[str]) -> bool:
    """`codex exec` (or `e`): the first subcommand on the command line `argv` (its program first)."""
    value = images = False  # the word is an option's value; an image, as any up to the next option
    for word in argv[1:]:
        if word == "--":
            return False
        if value or (images and not word.startswith("-")):
            value = False
            continue
        value, images = word in VALUED, word in IMAGES
        if word in SUBCOMMANDS:
            return word in EXEC
    return False


def _read(path: str, limit: int = 1 << 16) -> bytes:
    fd = sysos.open(path, sysos.O_RDONLY | sysos.O_CLOEXEC)
    try:
        return sysos.read(fd, limit)
    finally:
        sysos.close(fd)


def _parent(pid: int) -> int:
    stat = _read(f"{PROC}/{pid}/stat", 4096)
    return int(stat[stat.rindex(b")") + 2:].split()[1])  # after `(comm)`: state, then the parent's pid


def codex_pid(start: int) -> int | None:
    """The nearest process named `codex` from `start` up (the hook's parent first), or None."""
    pid = start
    for _ in range(ANCESTORS):
        if pid <= 1:
            return None
        if _read(f"{PROC}/{pid}/comm", 256).strip() == b"codex":
            return pid
        pid = _parent(pid)
    return None


def _exec() -> tuple[int, list[str]] | None:
    """The pid and command line of the `codex exec` that runs this hook; None for any other Codex
    (the TUI, its daemon), for no Codex, and on Windows. Read from /proc where there is one (Linux),
    else from `ps` (`_exec_by_ps`: macOS, the BSDs)."""
    if sys.platform == "win32":  # no process tree to read the same way (nor O_NOCTTY)
        return None
    if not sysos.isdir(f"{PROC}/{sysos.getpid()}"):
        return _exec_by_ps()
    try:
        pid = codex_pid(sysos.getppid())
        if pid is None:
            return None
        argv = [w.decode("utf-8", "replace") for w in _read(f"{PROC}/{pid}/cmdline").split(b"\0")]
    except (OSError, ValueError, IndexError):
        return None
    return (pid, argv) if is_exec(argv) else None


PS_TIMEOUT = 3.0  # seconds for all of `_exec_by_ps`' runs of ps (procps' took 87 ms a run on a busy 2-core box)
_BY_PS: list[tuple[int, list[str]] | None] = []  # its answer, once per process
# the system's ps, by its path: never a `ps` the user's PATH names first (a hook runs with that PATH,
# and a relative entry, `.` or `node_modules/.bin`, is the project's own files); none there: no answer
PS = ("/bin/ps", "/usr/bin/ps")


def _ps(pid: int, fields: tuple[str, ...], deadline: float) -> str:
    """`ps -o FIELD= ... -p PID`'s line, no header (POSIX ps: Linux's procps, macOS, the BSDs), from
    the system's ps (`PS`)."""
    import subprocess
    import time

    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    ps = next((p for p in PS if sysos.access(p, sysos.X_OK)), None)
    if ps is None:
        raise FileNotFoundError(PS[0])
    # -ww: the whole line (ps cuts it to the terminal's width, or 80 columns, otherwise: the subcommand
    # after a long path to codex was cut off)
    args = [ps, "-ww", *(w for f in fields for w in ("-o", f"{f}=")), "-p", str(pid)]
    got = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         timeout=left, check=False)
    return got.stdout.decode("utf-8", "replace").strip()


def _exec_by_ps() -> tuple[int, list[str]] | None:
    """`_exec` where there is no /proc (macOS): the nearest ancestor named `codex` and its command
    line from `ps`, within PS_TIMEOUT. Codex 0.171.0 tells a hook nothing of exec or the TUI (seen
    with the real CLI: the same payload keys and CODEX_* variables under both; `permission_mode`
    follows the approval policy, either's; the rollout's `source` is the thread's first runner's,
    not a resume's), so the process tree is the one sign. The command line is ps's, its words split
    at spaces: a subcommand is found as on Linux, unless an option's value before it holds a space
    and a word of Codex's subcommands."""
    import subprocess
    import time

    if _BY_PS:
        return _BY_PS[0]
    found: tuple[int, list[str]] | None = None
    deadline = time.monotonic() + PS_TIMEOUT
    try:
        pid = sysos.getppid()
        for _ in range(ANCESTORS):
            if pid <= 1:
                break
            line = _ps(pid, ("ppid", "comm"), deadline)  # the parent's pid, then the name (macOS: its path)
            parent, comm = line.split(None, 1)
            if sysos.basename(comm.strip()) == "codex":
                argv = _ps(pid, ("command",), deadline).split()
                found = (pid, argv) if is_exec(argv) else None
                break
            pid = int(parent)
    except (OSError, ValueError, TimeoutError, subprocess.SubprocessError):
        found = None
    _BY_PS.append(found)
    return found


def exec_pid() -> int | None:
    """The pid of the `codex exec` that runs this hook (`_exec`), or None."""
    found = _exec()
    return found[0] if found else None


def under_exec() -> bool:
    return exec_pid() is not None


def stderr_reachable() -> bool:
    """Whether a hook can write to exec's stderr on this system: through /proc only (Linux). Codex
    0.171.0 gives a hook nothing else to reach it by (measured under `codex exec`: the hook's fds 0, 1
    and 2 are pipes Codex reads, none other is inherited, and it leads a session of its own, with no
    controlling terminal); `doctor` says so where this is False."""
    return sys.platform != "win32" and sysos.isdir(f"{PROC}/{sysos.getpid()}")


def exec_stderr() -> int | None:
    """A descriptor open on the stderr of the `codex exec` that runs this hook, when it is a place a
    line can be added to without harm; else None. Under `--json`, a stderr that is its stdout too
    (`2>&1` into a pipe or a file: one stream of events a program reads) is left alone."""
    if not stderr_reachable():  # written through /proc only: no `ps` asked for nothing
        return None
    found = _exec()
    if found is None:
        return None
    pid, argv = found
    try:
        flags = 0
        for line in _read(f"{PROC}/{pid}/fdinfo/2", 4096).splitlines():
            if line.startswith(b"flags:"):
                flags = int(line.split()[1], 8)
        # O_NOCTTY: the hook leads a session of its own, and a terminal it opened would become its own
        flags_w = sysos.O_WRONLY | sysos.O_APPEND | sysos.O_NOCTTY | sysos.O_NONBLOCK | sysos.O_CLOEXEC
        fd = sysos.open(f"{PROC}/{pid}/fd/2", flags_w)
    except (OSError, ValueError, IndexError):
        return None
    try:
        st = sysos.fstat(fd)
        mode = st.st_mode
        addable = sysos.S_ISFIFO(mode) or (sysos.S_ISREG(mode) and flags & O_APPEND_FLAG) or (
            sysos.S_ISCHR(mode) and _line_mode(fd))
        events = not sysos.S_ISCHR(mode) and "--json" in argv and _same(st, f"{PROC}/{pid}/fd/1")
        if addable and not events:
            return fd
    except OSError:
        pass
    sysos.close(fd)
    return None


def _same(st: sysos.stat_result, path: str) -> bool:
    """`path` is the file `st` is of (or cannot be told apart from it)."""
    try:
        other = sysos.stat(path)
    except OSError:
        return True
    return (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino)


def _line_mode(fd: int) -> bool:
    """A terminal in its ordinary (canonical, echoing) mode: not one a full-screen program holds raw."""
    if not sysos.isatty(fd):
        return False
    import termios

    lflag = termios.tcgetattr(fd)[3]
    return bool(lflag & termios.ICANON and lflag & termios.ECHO)


def unseen() -> bool:
    """Under `codex exec`, a hook's messages reach no one: exec shows none, and its stderr is no
    place `show` may add a line to (a file opened for overwrite, the events' stream, a raw terminal,
    a system without /proc). False outside exec (the TUI shows them)."""
    if not under_exec():
        return False
    fd = exec_stderr()
    if fd is None:
        return True
    sysos.close(fd)
    return False


def texts(out: dict[str, Any]) -> list[str]:
    """What the TUI would show of a hook's output: a block's reason, then the message."""
    said = []
    if out.get("decision") == "block" and isinstance(out.get("reason"), str):
        said.append(out["reason"])
    if isinstance(out.get("systemMessage"), str):
        said.append(out["systemMessage"])
    return [t for t in said if t.strip()]


def show(out: dict[str, Any]) -> dict[str, Any]:
    """Under `codex exec`, write what a hook's output says to the user on exec's stderr; the output
    to print, its `systemMessage` taken out once written (a later Codex that shows it would show it
    twice). The block and its reason stay: the reason is what holds the prompt."""
    said = texts(out)
    if not said:
        return out
    fd = exec_stderr()
    if fd is None:
        return out
    from session_watcher.core.text import clean

    data = ("\n".join(clean(t) for t in said) + "\n").encode("utf-8", "replace")
    try:
        written = sysos.write(fd, data)
    except OSError:
        written = 0
    finally:
        sysos.close(fd)
    if written != len(data):
        return out
    return {k: v for k, v in out.items() if k != "systemMessage"}
