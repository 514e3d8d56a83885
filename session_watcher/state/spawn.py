"""Start helper programs from the hook without importing `subprocess`.

`import subprocess` imports signal, threading, selectors, ..., which cost more than the git call
it would make. `run` spawns with `os.posix_spawn` (argument list, no shell; the program looked up in
the absolute folders of PATH only, `which`), feeds stdin and drains stdout through `select` so
neither pipe can fill up, and kills the child at the deadline. Where `posix_spawnp` is missing
(Windows), it falls back to `subprocess`. `detached` starts a child that
outlives the hook (the notifier's deliverer, the OpenTelemetry exporter): its own session, stdio on
/dev/null (an inherited pipe would keep Claude Code waiting for the hook's output), an empty signal
mask, and `data` on a private pipe.
"""

from __future__ import annotations

import time

from session_watcher.base import sysos

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


def which(name: str, path: str | None = None) -> str | None:
    """The program `name` names: an absolute path as it is, else `name` in an absolute folder of PATH.
    Never an empty or relative PATH element (a trailing `:` means the current folder: the project a
    hook runs in, whose planted `git` must not run), never a relative path."""
    if "/" in name:
        return name if sysos.isabs(name) else None
    for folder in (sysos.environ.get("PATH", sysos.defpath) if path is None else path).split(sysos.pathsep):
        if folder and sysos.isabs(folder):
            candidate = sysos.join(folder, name)
            if sysos.isfile(candidate) and sysos.access(candidate, sysos.X_OK):
                return candidate
    return None


def run(argv: Sequence[str], data: bytes, timeout: float) -> tuple[int, bytes] | None:
    """(exit status, stdout) of `argv` given `data` on stdin; None when it cannot run. TimeoutError
    when time ran out (the child killed and waited for first): no answer, which the caller may not
    take for one. The program is found by `which` (absolute PATH folders only)."""
    if not hasattr(sysos, "posix_spawnp"):  # pragma: no cover - Windows
        return _run_subprocess(argv, data, timeout)
    program = which(argv[0])
    if program is None:
        return None
    import select

    in_r, in_w = sysos.pipe()
    out_r, out_w = sysos.pipe()
    devnull = sysos.open(sysos.devnull, sysos.O_WRONLY)
    dup = sysos.POSIX_SPAWN_DUP2
    actions = [(dup, in_r, 0), (dup, out_w, 1), (dup, devnull, 2)]
    try:
        pid = sysos.posix_spawn(program, list(argv), sysos.environ, file_actions=actions)
    except OSError:
        for fd in (in_r, in_w, out_r, out_w, devnull):
            sysos.close(fd)
        return None
    for fd in (in_r, out_w, devnull):
        sysos.close(fd)
    deadline = time.monotonic() + timeout
    view, chunks = memoryview(data), []
    writing: list[int] = [in_w] if data else []
    if not data:
        sysos.close(in_w)
    reading = [out_r]
    try:
        while reading:
            left = deadline - time.monotonic()
            if left <= 0:
                sysos.kill(pid, 9)
                sysos.waitpid(pid, 0)
                raise TimeoutError(f"{argv[0]} did not answer within {timeout:g} s")
            readable, writable, _ = select.select(reading, writing, [], left)
            if writable:
                try:
                    n = sysos.write(in_w, view[:65536])
                except BrokenPipeError:
                    n = len(view)
                view = view[n:]
                if not view:
                    sysos.close(in_w)
                    writing = []
            if readable:
                chunk = sysos.read(out_r, 65536)
                if chunk:
                    chunks.append(chunk)
                else:
                    reading = []
    finally:
        if writing:
            sysos.close(in_w)
        sysos.close(out_r)
    _, status = sysos.waitpid(pid, 0)
    return sysos.waitstatus_to_exitcode(status), b"".join(chunks)


def _run_subprocess(argv: Sequence[str], data: bytes, timeout: float) -> tuple[int, bytes] | None:
    import subprocess

    try:
        proc = subprocess.run(list(argv), input=data, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise TimeoutError(f"{argv[0]} did not answer within {timeout:g} s") from None
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.returncode, proc.stdout


def detached(argv: Sequence[str], env: Mapping[str, str], data: bytes = b"") -> int | None:
    """Start `argv` detached (POSIX: posix_spawn with setsid) with `data` on its stdin (at most a
    pipe's buffer: writing it never blocks); its pid, or None when it could not start."""
    r = w = devnull = -1
    try:
        devnull = sysos.open(sysos.devnull, sysos.O_RDWR)
        stdin = devnull
        if data:
            r, w = sysos.pipe()
            try:
                sysos.write(w, data)  # fits in the empty pipe's buffer: does not block
            finally:
                sysos.close(w)
            stdin = r
        actions = [(sysos.POSIX_SPAWN_DUP2, stdin, 0), (sysos.POSIX_SPAWN_DUP2, devnull, 1),
                   (sysos.POSIX_SPAWN_DUP2, devnull, 2)]
        # an empty signal mask: a hook spawns while it holds SIGTERM back (hooks/run.py)
        try:
            return sysos.posix_spawn(argv[0], list(argv), dict(env), file_actions=actions, setsid=True, setsigmask=())
        except NotImplementedError:  # pragma: no cover - a platform without POSIX_SPAWN_SETSID
            return sysos.posix_spawn(argv[0], list(argv), dict(env), file_actions=actions, setpgroup=0, setsigmask=())
    except OSError:
        return None
    finally:
        for fd in (r, devnull):
            if fd >= 0:
                sysos.close(fd)
