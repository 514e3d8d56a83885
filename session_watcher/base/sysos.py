"""The operating system's calls the hooks and the status line make, without importing `os`.

`os` is written in Python over the `posix` module built into the interpreter; importing it runs that
layer and `_collections_abc` (some 30 abstract classes made, for `os.environ`'s mapping type),
`posixpath`, `genericpath` and `stat`, on every tool result, turn's end and status-line refresh
(the launchers run without `site`, which would have imported it; docs/benchmarks.md, 2026-12-06).
The calls themselves are `posix`'s: `os.stat` *is* `posix.stat`. What `os` adds in Python and the
hooks' path uses is here, for `str` paths: the path helpers copied from CPython 3.11's `posixpath`
and `genericpath` (same results: tests/test_sysos.py holds them to `os.path` over generated paths,
links, a broken link and a loop) and `environ`, which is `os.environ` itself where `os` was
imported before this module (the CLI, the tests), else a view of the same `posix.environ` that `os.environ` reads
and writes (`_Environ`): one environment either way, whichever of the two is imported first.

Elsewhere than POSIX (Windows), every name is `os`'s, `os.path`'s or `stat`'s, looked up when first
used.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing is slow to import; this module is on the hot path
if TYPE_CHECKING:
    from collections.abc import Iterator, MutableMapping

__all__ = [  # what the hooks' path takes from here instead of `os` and `os.path`
    "O_APPEND", "O_CLOEXEC", "O_CREAT", "O_EXCL", "O_NOCTTY", "O_NONBLOCK", "O_RDONLY", "O_RDWR", "O_WRONLY",
    "POSIX_SPAWN_DUP2", "S_IMODE", "S_ISBLK", "S_ISCHR", "S_ISDIR", "S_ISFIFO", "S_ISLNK", "S_ISREG", "S_ISSOCK",
    "W_OK", "X_OK", "abspath", "access", "basename", "chmod", "close", "defpath", "devnull", "dirname", "dup2",
    "environ", "exists", "expanduser", "fchmod", "fspath", "fstat", "fsync", "getcwd", "geteuid", "getpid", "getppid",
    "getuid", "isabs", "isatty", "isdir", "isfile", "islink", "join", "kill", "lexists", "link", "listdir", "lstat",
    "mkdir", "name", "normpath", "open", "pathsep", "pipe", "posix_spawn", "pread", "preadv", "read", "readlink",
    "realpath", "rename", "replace", "scandir", "sep", "set_blocking", "split", "stat", "stat_result", "unlink",
    "urandom", "utime", "waitpid", "waitstatus_to_exitcode", "write",
]

if sys.platform != "win32":
    from _stat import S_IMODE, S_ISBLK, S_ISCHR, S_ISDIR, S_ISFIFO, S_ISLNK, S_ISREG, S_ISSOCK
    from posix import (
        O_APPEND,
        O_CLOEXEC,
        O_CREAT,
        O_EXCL,
        O_NOCTTY,
        O_NONBLOCK,
        O_RDONLY,
        O_RDWR,
        O_WRONLY,
        W_OK,
        X_OK,
        access,
        chmod,
        close,
        dup2,
        fchmod,
        fspath,
        fstat,
        fsync,
        getcwd,
        geteuid,
        getpid,
        getppid,
        getuid,
        isatty,
        kill,
        link,
        listdir,
        lstat,
        mkdir,
        pipe,
        pread,
        read,
        readlink,
        rename,
        replace,
        scandir,
        set_blocking,
        stat,
        stat_result,
        unlink,
        urandom,
        utime,
        waitpid,
        waitstatus_to_exitcode,
        write,
    )
    try:  # not on every POSIX system: the reader's caller asks first (hasattr(os, "preadv"))
        from posix import preadv
    except ImportError:  # pragma: no cover
        pass
    try:  # nor these: their callers ask first (state.spawn.run, the OTLP trigger), as they did of `os`
        from posix import POSIX_SPAWN_DUP2, posix_spawn
    except ImportError:  # pragma: no cover
        pass
    from posix import environ as _bytes_environ  # what os.environ reads and writes too
    from posix import open as open  # noqa: PLC0414 - re-exported under os's name: it shadows the builtin here only
    from posix import putenv as _putenv
    from posix import unsetenv as _unsetenv

    def __getattr__(attr: str) -> object:
        """Any other of `posix`'s names, as `os` has them (`getattr(sysos, "O_NOFOLLOW", 0)` as with `os`)."""
        import posix

        return getattr(posix, attr)

    name = "posix"
    sep = "/"
    pathsep = ":"
    defpath = "/bin:/usr/bin"
    devnull = "/dev/null"

    class _Environ:
        """`os.environ` without `os`: the same live view of `posix.environ` (the process's environment
        as bytes, which `os.environ` reads and writes too), each name and value encoded and decoded as
        `os` does it (the file system's encoding, undecodable bytes kept as surrogates). So it and an
        `os.environ` made later in the process never disagree: a change made through either is in
        `posix.environ`, and `putenv` gives it to the children a fork or a spawn without `env` starts.
        The mapping's reads, `dict(...)` and `posix_spawn`'s `env`; of the writes, `x[k] = v` and
        `del x[k]` only (`os.environ`'s other mixins are `_collections_abc`'s: their import is what
        this module avoids)."""

        __slots__ = ()

        def __getitem__(self, key: str) -> str:
            return _decode(_bytes_environ[_encode(key)])

        def get(self, key: str, default: str | None = None) -> str | None:
            try:
                return self[key]
            except KeyError:
                return default

        def __contains__(self, key: object) -> bool:
            return isinstance(key, str) and _encode(key) in _bytes_environ

        def __iter__(self) -> Iterator[str]:
            return iter([_decode(k) for k in list(_bytes_environ)])

        def __len__(self) -> int:
            return len(_bytes_environ)

        def keys(self) -> list[str]:
            return list(self)

        def values(self) -> list[str]:
            return [self[k] for k in self]

        def items(self) -> list[tuple[str, str]]:
            return [(k, self[k]) for k in self]

        def copy(self) -> dict[str, str]:
            return dict(self.items())

        def __setitem__(self, key: str, value: str) -> None:
            k, v = _encode(key), _encode(value)
            _putenv(k, v)
            _bytes_environ[k] = v

        def __delitem__(self, key: str) -> None:
            k = _encode(key)
            _unsetenv(k)
            try:
                del _bytes_environ[k]
            except KeyError:
                raise KeyError(key) from None

        def __repr__(self) -> str:
            return f"environ({self.copy()!r})"

    _ENCODING = sys.getfilesystemencoding()  # os.environ's, taken once as os takes it

    def _encode(value: str) -> bytes:
        if not isinstance(value, str):
            raise TypeError(f"str expected, not {type(value).__name__}")
        return value.encode(_ENCODING, "surrogateescape")

    def _decode(value: bytes) -> str:
        return value.decode(_ENCODING, "surrogateescape")

    def _environ() -> MutableMapping[str, str]:
        """`os.environ` where `os` is loaded already (the CLI, the tests); else the same view of the
        process's environment (`_Environ`), whatever imports `os` later."""
        loaded = sys.modules.get("os")
        if loaded is not None:
            got: MutableMapping[str, str] = loaded.environ
            return got
        return _Environ()  # type: ignore[return-value]  # the mapping's calls the package makes, not its ABC

    environ = _environ()

    def isabs(s: str) -> bool:
        """Whether a path is absolute."""
        return fspath(s).startswith(sep)

    def join(a: str, *p: str) -> str:
        """Two or more path parts joined with `/`; an absolute part drops the ones before it."""
        path = fspath(a)
        for b in map(fspath, p):
            if b.startswith(sep):
                path = b
            elif not path or path.endswith(sep):
                path += b
            else:
                path += sep + b
        return path

    def split(p: str) -> tuple[str, str]:
        """(head, tail): tail is everything after the last slash."""
        p = fspath(p)
        i = p.rfind(sep) + 1
        head, tail = p[:i], p[i:]
        if head and head != sep * len(head):
            head = head.rstrip(sep)
        return head, tail

    def basename(p: str) -> str:
        """The path's last part."""
        p = fspath(p)
        return p[p.rfind(sep) + 1:]

    def dirname(p: str) -> str:
        """The path without its last part."""
        return split(p)[0]

    def exists(path: str) -> bool:
        """Whether the path exists (False for a broken link)."""
        try:
            stat(path)
        except (OSError, ValueError):
            return False
        return True

    def lexists(path: str) -> bool:
        """Whether the path exists (True for a broken link)."""
        try:
            lstat(path)
        except (OSError, ValueError):
            return False
        return True

    def isfile(path: str) -> bool:
        """Whether the path is a regular file (through links)."""
        try:
            st = stat(path)
        except (OSError, ValueError):
            return False
        return S_ISREG(st.st_mode)

    def isdir(s: str) -> bool:
        """Whether the path is a folder (through links)."""
        try:
            st = stat(s)
        except (OSError, ValueError):
            return False
        return S_ISDIR(st.st_mode)

    def islink(path: str) -> bool:
        """Whether the path is a symbolic link."""
        try:
            st = lstat(path)
        except (OSError, ValueError, AttributeError):
            return False
        return S_ISLNK(st.st_mode)

    def expanduser(path: str) -> str:
        """`~` and `~user` at the path's start expanded; unchanged when the user or HOME is unknown."""
        path = fspath(path)
        if not path.startswith("~"):
            return path
        i = path.find(sep, 1)
        if i < 0:
            i = len(path)
        if i == 1 and "HOME" in environ:
            userhome = environ["HOME"]
        else:
            try:
                import pwd  # built into the interpreter (where there is one: os.path's check)
            except ImportError:  # pragma: no cover
                return path
            try:
                userhome = pwd.getpwuid(getuid()).pw_dir if i == 1 else pwd.getpwnam(path[1:i]).pw_dir
            except KeyError:  # no such user (or none for this process's id): unchanged
                return path
        userhome = userhome.rstrip("/")
        return (userhome + path[i:]) or "/"

    def normpath(path: str) -> str:
        """A//B, A/./B and A/foo/../B all become A/B (without looking at links)."""
        path = fspath(path)
        if path == "":
            return "."
        initial_slashes = 1 if path.startswith(sep) else 0
        # POSIX allows one or two initial slashes, but treats three or more as one
        if initial_slashes and path.startswith(sep * 2) and not path.startswith(sep * 3):
            initial_slashes = 2
        new_comps: list[str] = []
        for comp in path.split(sep):
            if comp in ("", "."):
                continue
            if comp != ".." or (not initial_slashes and not new_comps) or (new_comps and new_comps[-1] == ".."):
                new_comps.append(comp)
            elif new_comps:
                new_comps.pop()
        path = sep.join(new_comps)
        if initial_slashes:
            path = sep * initial_slashes + path
        return path or "."

    def abspath(path: str) -> str:
        """The path made absolute against the working folder, normalized."""
        path = fspath(path)
        if not isabs(path):
            path = join(getcwd(), path)
        return normpath(path)

    def realpath(filename: str) -> str:
        """The path's canonical form, every symbolic link along it resolved (a loop left as it is,
        a missing part kept: `os.path.realpath` without `strict`)."""
        filename = fspath(filename)
        path, _ok = _joinrealpath("", filename, {})
        return abspath(path)

    def _joinrealpath(path: str, rest: str, seen: dict[str, str | None]) -> tuple[str, bool]:
        if isabs(rest):
            rest = rest[1:]
            path = sep
        while rest:
            part, _, rest = rest.partition(sep)
            if not part or part == ".":
                continue
            if part == "..":
                if path:
                    path, part = split(path)
                    if part == "..":
                        path = join(path, "..", "..")
                else:
                    path = ".."
                continue
            newpath = join(path, part)
            try:
                st = lstat(newpath)
            except OSError:
                is_link = False
            else:
                is_link = S_ISLNK(st.st_mode)
            if not is_link:
                path = newpath
                continue
            if newpath in seen:  # seen before: resolved, or a loop (the rest left unresolved)
                known = seen[newpath]
                if known is not None:
                    path = known
                    continue
                return join(newpath, rest), False
            seen[newpath] = None  # not resolved yet
            path, ok = _joinrealpath(path, readlink(newpath), seen)
            if not ok:
                return join(path, rest), False
            seen[newpath] = path
        return path, True

else:  # pragma: no cover - Windows: os and os.path themselves

    def __getattr__(attr: str) -> object:
        import os
        import stat

        for module in (os, os.path, stat):
            if hasattr(module, attr):
                return getattr(module, attr)
        raise AttributeError(attr)
