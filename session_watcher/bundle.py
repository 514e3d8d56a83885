"""The compiled code of the hook's and the status line's modules in one file, for their launchers.

Importing one of the package's modules the ordinary way costs ~65 us before its code runs (the
folder's stat, the source's stat, the .pyc's open and read); a hook run imports ~22 of them. The
launchers install.sh writes read this file once instead (`install`): 0.6 ms, 5.7 % less CPU a hook
run (bench.tricks: the bench's 1 MB session, 80 rounds interleaved with the same launcher without
it; 2.7 % of a status-line run).
Each entry keeps its source's mtime and size, checked as a .pyc's are: a module whose source changed
since the file was built (an upgrade by pip alone, an edit) is imported the ordinary way, as is a
module not in the file, and every module when the file is missing or was built by another Python.
A module's `from __future__ import annotations` is compiled in as the flag it is, without the import
of the `__future__` module it also makes at run time (0.2 ms, the first time; the one other change
is that the module has no `annotations` attribute). This module has none of its own for that reason.

    python -m session_watcher.bundle OUT    # install.sh, after pip: build OUT from this install
"""

import marshal
import posix  # not `os`: the launchers import this first, and posix is builtin (free)
import sys

TYPE_CHECKING = False  # typing costs ~3 ms to import; this module is on the hot path
if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec
    from types import CodeType, ModuleType

    # module name -> (source path, package folder or None, source mtime_ns, source size, where its
    # marshalled code starts and ends after the index)
    Entry = tuple[str, str | None, int, int, int, int]

# what a hook run (any event) and a status-line run import from the package, with the notifier's
# throttle (and its package): a session far past its sweet spot (the bench's 1 GB one) has an alert
# to weigh on every call
MODULES = (
    "session_watcher", "session_watcher.config", "session_watcher.paths", "session_watcher.statusline",
    "session_watcher.notifier", "session_watcher.notifier.throttle", "session_watcher.core.text",
    "session_watcher.core", "session_watcher.core.engine", "session_watcher.core.eoq", "session_watcher.core.errors",
    "session_watcher.core.fastjson", "session_watcher.core.guard", "session_watcher.core.health",
    "session_watcher.core.meter", "session_watcher.core.paths", "session_watcher.core.prices",
    "session_watcher.core.render", "session_watcher.core.status", "session_watcher.core.transcript",
    "session_watcher.core.window", "session_watcher.hooks", "session_watcher.hooks.run",
    "session_watcher.state", "session_watcher.state.atomic", "session_watcher.state.lock",
    "session_watcher.state.pathstore", "session_watcher.state.reader", "session_watcher.state.session",
    "session_watcher.state.shell", "session_watcher.state.store", "session_watcher.state.tail",
    "session_watcher.route",
)


def _tag() -> str:
    """What the code objects are only good for: this Python's bytecode (magic number and cache tag)."""
    magic: bytes = sys.modules["_frozen_importlib_external"].MAGIC_NUMBER
    return f"{sys.implementation.cache_tag}:{magic.hex()}"


def build(out: str, names: tuple[str, ...] = MODULES) -> int:
    """Compile `names` (found as an import would find them) into the file `out`; returns how many."""
    import importlib.util

    from session_watcher.state.atomic import write_atomic

    entries: dict[str, Entry] = {}
    blobs: list[bytes] = []
    at = 0
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            continue
        with open(spec.origin, "rb") as fh:
            source = fh.read()
        st = posix.stat(spec.origin)
        package = spec.submodule_search_locations
        blob = marshal.dumps(_compile(source, spec.origin))
        entries[name] = (spec.origin, package[0] if package else None, st.st_mtime_ns, st.st_size,
                         at, at + len(blob))
        blobs.append(blob)
        at += len(blob)
    # the index's length, the index, then the code: each module's code is read where it lies (a
    # memoryview), only when it is imported
    index = marshal.dumps((_tag(), entries))
    write_atomic(out, b"".join([len(index).to_bytes(4, "little"), index, *blobs]), mode=0o644, fsync=False)
    return len(entries)


def _compile(source: bytes, origin: str) -> "CodeType":
    """The module's code as an import compiles it, but a `from __future__ import ...` of features
    only is a compiler flag alone (see the module's docstring)."""
    import __future__

    import ast

    tree = ast.parse(source, origin)
    flags = 0
    kept: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__" and all(
                alias.asname is None for alias in node.names):
            for alias in node.names:
                flags |= getattr(__future__, alias.name).compiler_flag
        else:
            kept.append(node)
    tree.body = kept
    return compile(tree, origin, "exec", flags=flags, dont_inherit=True)  # type: ignore[no-any-return]


class Bundle:
    """A finder and loader over the file's entries (first on `sys.meta_path`)."""

    def __init__(self, entries: "dict[str, Entry]", code: memoryview) -> None:
        self.entries = entries
        self.code = code
        self.spec = sys.modules["_frozen_importlib"].ModuleSpec

    def find_spec(self, name: str, path: object = None, target: object = None) -> "ModuleSpec | None":
        entry = self.entries.get(name)
        if entry is None:
            return None
        origin, package, mtime_ns, size = entry[:4]
        try:
            st = posix.stat(origin)
        except OSError:
            return None
        if st.st_mtime_ns != mtime_ns or st.st_size != size:
            del self.entries[name]  # changed since the build: the ordinary way, its .pyc checked
            return None
        spec: ModuleSpec = self.spec(name, self, origin=origin, is_package=package is not None)
        if package is not None:
            spec.submodule_search_locations = [package]
        spec.has_location = True  # __file__ and __cached__ as an ordinary import sets them
        return spec

    def create_module(self, spec: "ModuleSpec") -> None:
        return None  # the default module

    def exec_module(self, module: "ModuleType") -> None:
        start, end = self.entries.pop(module.__name__)[4:]
        code: CodeType = marshal.loads(self.code[start:end])  # noqa: S302 - built by install.sh
        exec(code, module.__dict__)  # noqa: S102 - what an ordinary import does with the .pyc's code


def install(path: str) -> "Bundle | None":
    """Import the package's modules from the file at `path` from now on; None (and nothing changed)
    when it cannot be read or was built by another Python."""
    try:
        with open(path, "rb") as fh:
            data = memoryview(fh.read())
        end = 4 + int.from_bytes(data[:4], "little")
        tag, entries = marshal.loads(data[4:end])  # noqa: S302 - install.sh's file, in the venv
        if tag != _tag() or max((entry[5] for entry in entries.values()), default=0) != len(data) - end:
            return None  # another Python's, or cut short: every module the ordinary way
    except (OSError, ValueError, EOFError, TypeError, AttributeError, IndexError):
        return None
    bundle = Bundle(entries, data[end:])
    sys.meta_path.insert(0, bundle)
    return bundle


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m session_watcher.bundle OUT")
    print(f"{build(sys.argv[1])} modules in {sys.argv[1]}")
