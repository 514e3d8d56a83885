"""One exception base (core.errors; the kinds only a command reports in core.usererrors) and the
CLI's one handler: which failure gives which exit code and which line."""

from __future__ import annotations

import errno
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import session_watcher
from session_watcher import cli
from session_watcher.core import errors, usererrors
from session_watcher.core import errors as core_errors
from tests.oracle import one_message


def package_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class the package defines, by its qualified name (each module imported;
    `__main__` modules run a command when imported, and define none)."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(session_watcher.__path__, "session_watcher."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__.startswith("session_watcher"):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


def test_every_exception_of_the_package_has_the_one_base() -> None:
    found = package_exceptions()
    assert len(found) >= 14  # the walk reaches them (the check can fail)
    assert [name for name, cls in found.items() if not issubclass(cls, errors.WatcherError)] == []
    # the hierarchy lives in the pure core: what a hook may meet, and what only a command reports
    assert {cls.__module__ for cls in found.values()} == {"session_watcher.core.errors",
                                                          "session_watcher.core.usererrors"}


def test_the_stdlib_bases_callers_rely_on_are_kept() -> None:
    from session_watcher.base import config, paths
    from session_watcher.core import fastjson
    from session_watcher.state import lock, pathstore, reader, store

    # each as the module that raises it names it (an imported name, not one it exports: its namespace)
    assert issubclass(vars(config)["ConfigError"], ValueError)  # a parse error, caught as one
    assert issubclass(vars(fastjson)["JSONError"], ValueError)
    assert issubclass(vars(paths)["NotOurs"], OSError)  # raised where a folder's open would raise
    refused = vars(paths)["NotOurs"](errno.EPERM, "refusing to use this folder: it is a symbolic link", "/x")
    assert (refused.errno, refused.filename) == (errno.EPERM, "/x")
    # the old names are the same classes
    assert vars(lock)["LockTimeout"] is errors.LockTimeout
    assert {vars(store)["StateRejected"], vars(pathstore)["ShardRejected"]} <= set(errors.Rejected.__subclasses__())
    assert vars(reader)["Reset"] is core_errors.Reset
    assert issubclass(usererrors.NoSession, usererrors.UserError)
    assert issubclass(usererrors.ConfigError, usererrors.UserError)
    assert issubclass(usererrors.NoTarget, usererrors.UserError)
    assert issubclass(usererrors.UserError, errors.WatcherError)
    assert issubclass(usererrors.ReadOnlyFile, errors.WatcherError)
    assert not issubclass(errors.LockTimeout, usererrors.UserError)  # a busy lock is handled, never shown as such


def test_the_core_module_imports_nothing() -> None:
    source = Path(core_errors.__file__).read_text()
    assert "import " not in source.split('"""', 2)[2]  # after the docstring: classes only (the hook loads it)
    imports = [line for line in Path(usererrors.__file__).read_text().splitlines() if "import " in line]
    assert imports == ["from __future__ import annotations", "from session_watcher.core.errors import WatcherError"]


def raises(exc: BaseException) -> int:
    raise exc


def test_a_user_error_is_one_line_and_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.handle(lambda: raises(usererrors.NoSession("no session 'abc'\nsecond line")), "t") == 1
    err = capsys.readouterr().err
    assert err == "session-watcher: no session 'abc'\\x0asecond line\n"  # the newline escaped (core.text.one_line)
    assert cli.handle(lambda: raises(usererrors.ConfigError("/c.toml: key 'x': expected a number")), "t") == 1
    assert capsys.readouterr().err == "session-watcher: /c.toml: key 'x': expected a number\n"


def test_a_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.handle(lambda: raises(usererrors.UsageError("--pages goes with --html OUT.html")), "t") == 2
    assert capsys.readouterr().err == "session-watcher: --pages goes with --html OUT.html\n"


def test_an_os_error_names_its_file(capsys: pytest.CaptureFixture[str]) -> None:
    def work() -> int:
        open("/nonexistent/folder/file")  # noqa: SIM115 - raises
        return 0

    assert cli.handle(work, "t") == 1
    assert capsys.readouterr().err == "session-watcher: /nonexistent/folder/file: No such file or directory\n"


def test_an_unexpected_error_is_logged_and_exits_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SESSION_WATCHER_HOME", str(tmp_path))

    def buggy() -> int:
        return {"a": 1}["b"]

    assert cli.handle(buggy, "cli status") == 3
    err = capsys.readouterr().err
    log = tmp_path / "log" / "session-watcher.log"
    assert one_message(err) == f"session-watcher: internal error (KeyError: 'b'); details in {log}"
    assert any(line.strip() == str(log) or line.endswith(f" {log}") for line in err.splitlines())  # whole
    text = log.read_text()
    assert "cli status: KeyError: 'b'" in text
    assert "Traceback (most recent call last)" in text
    assert "in buggy" in text


def test_interrupted_exits_130(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.handle(lambda: raises(KeyboardInterrupt()), "t") == 130
    assert capsys.readouterr().err == "session-watcher: interrupted\n"


def test_exits_pass_through() -> None:
    """argparse's own exits (2 for a bad command line, 0 for --help) are not errors of the handler's."""
    with pytest.raises(SystemExit) as ended:
        cli.handle(lambda: raises(SystemExit(2)), "t")
    assert ended.value.code == 2
