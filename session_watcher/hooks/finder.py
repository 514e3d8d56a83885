"""The launchers' import finder: the package's modules found by their names, not by a search.

Installed first on `sys.meta_path` by the hook's and the status line's launchers (hooks/launchers.py),
for the `session_watcher.*` modules only. A module's place follows from its name (the package is
plain folders of `.py` files), and its compiled code is taken from `__pycache__` under the rule the
interpreter's own loader applies to a timestamp-checked `.pyc` (this interpreter's magic number, the
source's mtime and size), so the module is the one an ordinary import gives, with its `__file__`,
`__cached__` and `__spec__`. Anything else (no such file, no `.pyc` yet, a stale or hash-checked
one) is left to the ordinary finders, which compile and write the `.pyc` as always.

What it saves is the generic search's Python code on each of the 20-35 modules a hook run imports
(the path finder's suffix loop, spec, path and cache-name helpers); docs/benchmarks.md and
bench.tricks ("ordinary imports") measure it. No imports beyond the interpreter's own: this module
is imported the ordinary way, before it is installed. On Windows it installs nothing.
"""

from __future__ import annotations

import sys
from marshal import loads

POSIX = sys.platform != "win32"  # elsewhere the ordinary finders alone (`install` does nothing)
if POSIX:
    from posix import O_CLOEXEC, O_RDONLY, close, read, stat
    from posix import open as open_fd

TYPE_CHECKING = False  # typing is slow to import; this module is on the hot path
if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType
    from typing import Any

PREFIX = "session_watcher."
_ROOT: list[str] = []  # the package's folder, once installed
_MAGIC: bytes = sys.modules["_frozen_importlib_external"].MAGIC_NUMBER
_TAG = sys.implementation.cache_tag
_Spec: Any = type(sys.__spec__)  # importlib's ModuleSpec, without importing importlib


def find_spec(name: str, path: Sequence[str] | None = None, target: ModuleType | None = None) -> Any:
    """The spec of one of the package's modules whose `.pyc` is current, else None (the ordinary
    finders' turn)."""
    if not name.startswith(PREFIX) or not _ROOT:
        return None
    head, _, leaf = name.rpartition(".")
    folder = _ROOT[0] + head[len(PREFIX) - 1:].replace(".", "/")
    package = False
    source = f"{folder}/{leaf}.py"
    try:
        st = stat(source)
    except OSError:
        folder, leaf, package = f"{folder}/{leaf}", "__init__", True
        source = f"{folder}/__init__.py"
        try:
            st = stat(source)
        except OSError:
            return None
    cached = f"{folder}/__pycache__/{leaf}.{_TAG}.pyc"
    try:
        data = _read(cached)
    except OSError:
        return None
    if (data[:4] != _MAGIC or data[4:8] != b"\0\0\0\0"  # flags 0: checked by timestamp
            or data[8:12] != (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
            or data[12:16] != (st.st_size & 0xFFFFFFFF).to_bytes(4, "little")):
        return None
    spec = _Spec(name, sys.modules[__name__], origin=source, loader_state=data, is_package=package)
    spec.has_location = True  # __file__ and __cached__, as the ordinary loader sets them
    spec.cached = cached
    if package:
        spec.submodule_search_locations = [folder]
    return spec


def _read(path: str) -> bytes:
    """A file's bytes by the descriptor calls alone (no file object: its buffer, size and tty checks)."""
    fd = open_fd(path, O_RDONLY | O_CLOEXEC)
    try:
        parts = [read(fd, 1 << 18)]
        while parts[-1]:
            parts.append(read(fd, 1 << 18))
    finally:
        close(fd)
    return b"".join(parts)


def create_module(_spec: Any) -> None:
    """The default module object (the loader protocol)."""
    return None


def exec_module(module: ModuleType) -> None:
    """Run the module's compiled code, read by `find_spec`, in the module."""
    spec: Any = module.__spec__
    data, spec.loader_state = spec.loader_state, None
    exec(loads(memoryview(data)[16:]), module.__dict__)  # noqa: S102,S302  # the package's own compiled code


def get_resource_reader(name: str) -> Any:
    """A package's files for `importlib.resources.files`, as the ordinary loader gives them (its
    folder: `importlib.readers.FileReader`); without it `files` gave a stand-in whose `joinpath`
    takes one name (the report page's `joinpath("assets", name)` failed)."""
    from importlib.readers import FileReader  # only when a resource is asked for
    from types import SimpleNamespace

    spec: Any = sys.modules[name].__spec__
    located: Any = SimpleNamespace(path=spec.origin)  # what FileReader reads of a loader: the source's path
    return FileReader(located)


def install() -> None:
    """First on `sys.meta_path`, for the package imported from where it is (once)."""
    me = sys.modules[__name__]
    if POSIX and me not in sys.meta_path:
        _ROOT[:] = [sys.modules["session_watcher"].__path__[0]]
        sys.meta_path.insert(0, me)  # a module with find_spec is a finder
