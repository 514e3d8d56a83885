"""The launchers Claude Code runs, written into a venv's bin folder: `python -m session_watcher.hooks.launchers BIN`.

Both install routes write them (install.sh, and the plugin route's hooks/venv.sh), after the package
and its dependencies are in the venv; the tests write them for their dev venv (tests.oracle.launcher),
so that the process tests run what users get. The hook and the status line run as `python -I -S LAUNCHER`:
the console script's wrapper imports `re`, `python -m` imports runpy, and `site` scans the venv's .pth
files, together a cost on every tool call; without `site`, the launcher puts the venv's packages on
sys.path itself. Once main() has returned and stdout is flushed, `_exit` skips the interpreter's
teardown (every module and object freed one by one); everything they write goes through os.write,
and a flush that fails (the reader went away) changes nothing (docs/benchmarks.md, bench.tricks).
The package's modules are found by their names (`hooks.finder`: each from its own `.pyc`, as the
ordinary loader would take it, without the generic search). The cyclic collector's first generation
is collected every 10,000 new containers instead of every 700 (`GC_THRESHOLD`): a fold adds some
4,000-4,500 that live to its end (its modules' functions, classes and constants, the state), so the
five first-generation passes a fold made (and the status line's one second-generation pass), which
freed nothing, are not made; the status line that folds a call and Codex's fold cost 6-7 % less
CPU (the PostToolUse fold 2-3 %), and cyclic garbage stays bounded in a long catch-up
(docs/architecture.md, the trick audit). A bundle of the modules' compiled code paid under the 5 % a
trick must pay (docs/benchmarks.md).

`session-watcher`, the command, is written too: the plugin route puts the package in place without
pip, and where pip made it (install.sh's route), its entry point's wrapper imports `re` to strip a
Windows suffix off argv[0] on every run: 10 % of a warm report over the Codex fixtures
(docs/benchmarks.md). The command keeps `site` and the environment (PYTHONPATH, a user's site).
"""

from __future__ import annotations

import os
import sys
import sysconfig

GC_THRESHOLD = 10_000  # the first generation's collection threshold in a launcher's process (CPython's: 700)
# `_exit` from the module built into the interpreter: `os` (slow to import: base/sysos.py) is loaded by
# none of the hooks' and the status line's runs
EXIT_MODULE = "nt" if sys.platform == "win32" else "posix"
LAUNCHERS = (("hook", "session_watcher.hooks.entry"), ("statusline", "session_watcher.hooks.statusline"))
# the module bundle an install wrote into the venv (beside bin/) before the package by layers
# (2026-12-04): the old build's compiled modules, which no launcher reads since (session_watcher.bundle)
OLD_BUNDLE = "session-watcher-modules.marshal"
COMMAND_MARK = "session-watcher, the command"  # the first words of the command's docstring (`command_text`)


def pip_wrapper_back(bin_dir: str) -> bool:
    """Whether `bin_dir` holds the launchers an install wrote (`write`) and, as its `session-watcher`,
    a command that is not theirs: pip's console-script wrapper, written back over it by a `pip install`
    of the package into the venv by hand (pip overwrites a script of the same name, and an upgrade
    removes the one it recorded), which imports `re` on every run until `write` runs again."""
    if not os.path.isfile(os.path.join(bin_dir, "session-watcher-hook")):
        return False  # no install's venv (a dev venv, an install by pip alone): pip's wrapper is its command
    try:
        with open(os.path.join(bin_dir, "session-watcher"), encoding="utf-8", errors="replace") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return COMMAND_MARK not in head


def text(kind: str, libs: list[str]) -> str:
    """The launcher of `kind` ("hook", "statusline"): this interpreter, `libs` on sys.path, then the
    entry point."""
    return (f"#!{sys.executable} -IS\n"
            f'"""session-watcher {kind} launcher, written by session_watcher.hooks.launchers; run as `python -IS`."""\n'
            f"import gc, sys\ngc.set_threshold({GC_THRESHOLD})\nsys.path.extend({libs!r})\n"
            "from session_watcher.hooks.finder import install\ninstall()\n"
            f"from {dict(LAUNCHERS)[kind]} import main\nrc = main()\n"
            "try:\n    sys.stdout.flush()\nexcept BaseException:\n    pass\n"
            f"from {EXIT_MODULE} import _exit\n_exit(rc)\n")


def command_text() -> str:
    """The command, `session-watcher`: this interpreter into the CLI's entry point, as pip's wrapper
    but for its `re`. An interpreter's path with a space, or too long for the kernel's `#!` line (a
    venv under a home folder with a space), is no `#!` line's program: as pip writes its wrapper
    then, sh runs the file and execs the interpreter on it (a line Python reads as a string)."""
    exe = sys.executable
    longest = 512 if sys.platform == "darwin" else 127  # pip's limits, with `#!` and the newline
    if " " in exe or len(exe) + 3 > longest:
        head = f"#!/bin/sh\n'''exec' \"{exe}\" \"$0\" \"$@\"\n' '''\n"
    else:
        head = f"#!{exe}\n"
    return (head +
            f'"""{COMMAND_MARK} (as pip writes an entry point, without its `re`)."""\n'
            "import sys\nfrom session_watcher.cli import run\n"
            "if __name__ == '__main__':\n    sys.argv[0] = 'session-watcher'\n    run()\n")


def write(bin_dir: str) -> list[str]:
    """Write the launchers and the command (pip's wrapper, if there, replaced) into `bin_dir` for this
    interpreter and the package as it imports it (a regular install: the venv's site-packages; an
    editable one, the tests' dev venv: its source folder too); the paths written. An older build's
    module bundle in the venv (`OLD_BUNDLE`) goes: the launchers written before these read it."""
    import session_watcher

    paths = sysconfig.get_paths()
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(session_watcher.__file__)))
    libs = list(dict.fromkeys([package_root, paths["purelib"], paths["platlib"]]))
    written = []
    for kind, _module in LAUNCHERS:
        path = os.path.join(bin_dir, f"session-watcher-{kind}")
        _write(path, text(kind, libs))
        written.append(path)
    command = os.path.join(bin_dir, "session-watcher")
    _write(command, command_text())
    written.append(command)
    try:
        os.unlink(os.path.join(os.path.dirname(os.path.abspath(bin_dir)), OLD_BUNDLE))
    except OSError:  # none there (every venv made since), or not a file of ours
        pass
    return written


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(path, 0o755)  # noqa: S103 - a program the client runs


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m session_watcher.hooks.launchers BIN_DIR", file=sys.stderr)
        return 2
    write(args[0])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
