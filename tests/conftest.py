"""Shared test isolation: no test reads or writes the real home, state or Claude Code settings.

Before any test (and before module-scoped fixtures) HOME, SESSION_WATCHER_HOME, CLAUDE_CONFIG_DIR and
the XDG folders point into a session temp dir, and CODEX_HOME is unset (Codex's folders are then the
temp home's, absent until a test makes them); each test then gets fresh ones of its own, without the
machine's OTEL_* variables and with Claude Code's managed settings file in its temp home. Subprocesses
inherit them through os.environ. XDG_CACHE_HOME keeps its real value (or the real ~/.cache) so tools'
download caches (the e2e client, pip) still work; session-watcher never writes there while
SESSION_WATCHER_HOME is set.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    from collections.abc import Iterator

ISOLATED = ("HOME", "SESSION_WATCHER_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME",
            "XDG_DATA_HOME")


def _isolated_env(root: Path) -> dict[str, str]:
    home = root / "home"
    env = {
        "HOME": home,
        "SESSION_WATCHER_HOME": root / "sw-home",
        "CLAUDE_CONFIG_DIR": home / ".claude",
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_STATE_HOME": home / ".local" / "state",
        "XDG_DATA_HOME": home / ".local" / "share",
    }
    home.mkdir(parents=True, exist_ok=True)
    return {k: str(v) for k, v in env.items()}


@pytest.fixture(scope="session", autouse=True)
def _isolate_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in (*ISOLATED, "XDG_CACHE_HOME")}
    os.environ.setdefault("XDG_CACHE_HOME", str(Path.home() / ".cache"))
    os.environ.update(_isolated_env(tmp_path_factory.mktemp("isolated-session")))
    os.environ.pop("CODEX_HOME", None)  # Codex's folders: the temp home's ~/.codex, absent until a test makes it
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="session", autouse=True)
def _launchers(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The hook's and the status line's launchers as the installers write them, for this dev venv,
    once a session: process tests run what users get (tests.oracle.launcher)."""
    from tests import oracle

    oracle.launchers(tmp_path_factory.mktemp("launchers"))


@pytest.fixture(autouse=True)
def _isolate_test(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in _isolated_env(tmp_path_factory.mktemp("isolated")).items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("CODEX_HOME", raising=False)  # set, it would say Codex is installed here
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)  # a client running the suite sets it
    monkeypatch.delenv("CODEX_THREAD_ID", raising=False)  # Codex's, for a command it runs (`handoff` reads it)
    monkeypatch.delenv("CLAUDE_PLUGIN_ROOT", raising=False)  # the route a message names (route.py)
    # the OpenTelemetry export reads Claude Code's telemetry settings: none of the machine's own
    for key in [k for k in os.environ if k.startswith("OTEL_")] + ["CLAUDE_CODE_ENABLE_TELEMETRY"]:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("SESSION_WATCHER_CLAUDE_MANAGED_SETTINGS", os.path.join(os.environ["HOME"], "managed.json"))


# Property tests: the same examples on every run and machine (derandomized, no example database), so
# a commit passes or fails alike in CI and here. The random search is run on purpose:
# `HYPOTHESIS_PROFILE=explore ./run-tests.sh ...`; what it finds is kept as an explicit @example.
settings.register_profile("repeatable", derandomize=True, database=None, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])  # speed is no verdict here
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


# The quick tier (`./run-tests.sh --quick`): every test that starts no process, browser or server.
# A test is slow when it or its module is marked `slow` (or `e2e`), or when it uses a fixture that
# starts one (SLOW_FIXTURES); every other test is quick. The tier cannot drift: a quick test that
# starts a process fails (the audit hook below counts every process start of the test's own call).
SLOW_FIXTURES = frozenset({"alone", "claude_bin", "world", "installed", "page", "browser", "server", "receiver"})
_SPAWN_EVENTS = frozenset({"subprocess.Popen", "os.posix_spawn", "os.fork", "os.forkpty", "os.exec", "os.system",
                           "os.spawn", "pty.spawn"})
_spawns = [0]


def _count_spawns(event: str, _args: tuple[object, ...]) -> None:
    if event in _SPAWN_EVENTS:
        _spawns[0] += 1


sys.addaudithook(_count_spawns)


def is_slow(item: pytest.Item) -> bool:
    fixtures = set(getattr(item, "fixturenames", ()))
    return bool(item.get_closest_marker("slow") or item.get_closest_marker("e2e") or fixtures & SLOW_FIXTURES)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    before = _spawns[0]
    result = yield
    if item.get_closest_marker("quick") and _spawns[0] != before:
        if os.environ.get("SESSION_WATCHER_SPAWN_LIST"):  # survey mode: list them instead (tools, by hand)
            with open(os.environ["SESSION_WATCHER_SPAWN_LIST"], "a", encoding="utf-8") as out:
                out.write(item.nodeid + "\n")
            return result
        pytest.fail(f"a quick test started {_spawns[0] - before} process(es): mark it (or its module) "
                    "`pytest.mark.slow`", pytrace=False)
    return result


_STARTED = time.monotonic()
_WORKER_FIGURES: dict[str, str] = {}  # the e2e figures pytest-xdist's workers sent


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    _WORKER_FIGURES.update(getattr(node, "workeroutput", {}).get("e2e_figures") or {})


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The figures the end-to-end tests measured (tests/e2e/conftest.py's FIGURES), of this process or
    of the workers."""
    e2e = sys.modules.get("tests.e2e.conftest")
    figures = {**_WORKER_FIGURES, **(getattr(e2e, "FIGURES", None) or {})}
    if figures:
        terminalreporter.section("e2e figures")
        for name, text in figures.items():
            terminalreporter.write_line(f"{name}: {text}")
        terminalreporter.write_line(f"wall time of this pytest run: {time.monotonic() - _STARTED:.0f} s")


# Modules whose tests share one costly session fixture, run on one parallel worker (run-tests.sh's
# `--dist loadfile`): the world ./install.sh installs (tests/e2e/conftest.installed, ~10 s of CPU) is
# built once a group, not once a worker. Two groups of about equal length, so that neither is the run's
# longest stretch; a module left out only costs one more install.
SHARED_WORKER = {"installed-1": ("tests/e2e/test_e2e_guard.py", "tests/e2e/test_e2e_lamp.py",
                                 "tests/e2e/test_e2e_overhead.py"),
                 "installed-2": ("tests/e2e/test_e2e_live.py", "tests/e2e/test_e2e_plugin.py")}


def _module(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if not is_slow(item):
            item.add_marker(pytest.mark.quick)
    # the longest first, so that the parallel workers finish together: the shared modules, the other
    # end-to-end ones, then every module that starts processes (a module keeps its own order)
    shared = {m for modules in SHARED_WORKER.values() for m in modules}
    weight: dict[str, int] = {}
    for item in items:
        module = _module(item)
        w = 3 if module in shared else 2 if item.get_closest_marker("e2e") else 1 if is_slow(item) else 0
        weight[module] = max(weight.get(module, 0), w)
    items.sort(key=lambda item: -weight[_module(item)])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadfile` with SHARED_WORKER's modules as one unit, handed out in the collection's order."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    if not callable(getattr(LoadFileScheduling, "_split_scope", None)):  # xdist's own method, not public:
        return None  # without it, plain `loadfile` (each shared module may build its own install)

    class Scheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = super()._split_scope(nodeid)
            return next((name for name, modules in SHARED_WORKER.items() if module in modules), module)

    config.option.loadscopereorder = False
    return Scheduling(config, log)


@pytest.fixture
def alone() -> None:
    """For tests that fork (replay's second parser, the scan's and the pages' children): no process
    forks while another thread runs (`state.pool.threads_running`), so threads a test before left
    ending (the browser tests' asyncio executor) are waited for, at most 10 s."""
    import threading
    import time

    deadline = time.monotonic() + 10
    for t in threading.enumerate():
        if t is not threading.main_thread():
            t.join(max(0.0, deadline - time.monotonic()))
    stray = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    assert not stray, f"threads still running: {stray}"
