"""One house: one import package, no import cycles, and the same behaviour on every CPython 3.11+ here.

The package's subpackages (core, state, hooks, notifier, reports) are real folders under
`session_watcher/`; the plugin's `hooks/` (hooks.json and its launcher) stays at the top level.
What must hold:

* the repository holds no symbolic link, so a checkout without links (git's default on Windows)
  builds; the built wheel installs `session_watcher` and no other top-level name; the sdist carries
  no tests;
* no project module imports a top-level `core`, `state`, ... (two copies of a module would load);
* no import cycle between the project's modules, counting imports inside functions too;
* an install on each other interpreter pyenv has (3.11 and 3.13 on the CI image) replays a real
  transcript to the same totals as this one, and its hook, given broken JSON, exits 0 in silence.
"""

from __future__ import annotations

import ast
import functools
import glob
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable

REPO = Path(__file__).resolve().parent.parent
PACKAGE = "session_watcher"
FOLDERS = ("core", "base", "agents", "state", "sessions", "notifier", "otlp", "reports", "hooks", "cli")  # real folders
# The layers, lowest first (session_watcher/README.md): a module imports only from a lower floor or its own
# subpackage; the packages sharing a floor do not import each other. The package's face
# (session_watcher/__init__.py) is under everything; its entry point (__main__) over everything.
FLOORS = (("core",), ("base",), ("agents",), ("state",), ("sessions",), ("notifier", "otlp", "reports"), ("hooks",),
          ("cli",))
FIXTURE = REPO / "tests" / "fixtures" / "transcripts" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"  # 152 calls
SKIP = {".git", ".venv", "build", "dist", "test-output", "__pycache__", ".mypy_cache", ".ruff_cache",
        ".pytest_cache", ".hypothesis", "node_modules"}


def modules(root: Path) -> dict[str, Path]:
    """Every module of the package under `root`, by dotted name."""
    found: dict[str, Path] = {}
    for folder, dirs, files in os.walk(root / PACKAGE):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                dotted = ".".join(Path(folder, name).relative_to(root).with_suffix("").parts)
                found[dotted.removesuffix(".__init__")] = Path(folder, name)
    return found


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The project modules `name` imports anywhere in its file (module level or inside functions)."""
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = name.split(".") if is_package else name.split(".")[:-1]
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        out.update(t for t in targets if t.split(".")[0] in (PACKAGE, *FOLDERS))
    out.discard(name)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in graph:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    mods = modules(root)
    return {name: imports(name, path, set(mods)) for name, path in mods.items()}


@pytest.mark.slow
def test_the_repository_holds_no_symbolic_link() -> None:
    """`git ls-files -s` lists no mode 120000 (a link): a checkout without links builds as it is."""
    proc = subprocess.run(["git", "ls-files", "-s"], cwd=REPO, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.skip(f"not a git checkout: {proc.stderr.strip()}")
    links = [line.split("\t", 1)[1] for line in proc.stdout.splitlines() if line.startswith("120000 ")]
    assert proc.stdout
    assert links == []
    for folder in FOLDERS:
        sub = REPO / PACKAGE / folder
        assert not sub.is_symlink(), sub
        assert (sub / "__init__.py").is_file(), sub
    # the plugin is the package's folder: its launchers and hooks.json beside the hook's Python
    plugin = {p.name for p in (REPO / PACKAGE / "hooks").iterdir()}
    assert {"hooks.json", "run.sh", "venv.sh", "__init__.py", "run.py"} <= plugin


def test_no_merge_conflict_is_left_in_a_file() -> None:
    text = (".py", ".md", ".toml", ".sh", ".json", ".yaml", ".txt", ".css", ".js", ".html")
    left, seen = [], 0
    for folder, dirs, names in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in SKIP and d != "fixtures" and not d.endswith(".egg-info")]
        for name in names:
            if name.endswith(text):
                seen += 1
                path = Path(folder, name)
                left += [f"{path.relative_to(REPO)}:{n}" for n, line in
                         enumerate(path.read_text(errors="replace").splitlines(), 1)
                         if line.startswith(("<<<<<<< ", ">>>>>>> "))]
    assert seen > 100
    assert left == []


def test_every_import_goes_through_the_one_package() -> None:
    graph = import_graph(REPO)
    assert len(graph) > 50  # the walk found the subpackages' modules
    bare = {name: sorted(d for d in deps if not d.startswith(f"{PACKAGE}.") and d != PACKAGE)
            for name, deps in graph.items()}
    assert {name: deps for name, deps in bare.items() if deps} == {}


# edges kept for what an earlier release wrote on users' machines, left out of the cycle check: the
# launchers written before hooks.entry import hooks.run's `main`, which hands over to hooks.entry
COMPAT_EDGES = {("session_watcher.hooks.run", "session_watcher.hooks.entry")}
# modules at the root kept for the launchers written before the package by layers (2026-12-04), which
# import them by these names: above every floor, as the entry point is (they hand over to hooks)
COMPAT_MODULES = ("session_watcher.bundle", "session_watcher.statusline")


def test_no_import_cycles() -> None:
    graph = import_graph(REPO)
    for module, target in COMPAT_EDGES:
        assert target in graph[module]  # still there: else drop it from COMPAT_EDGES
        graph[module] = graph[module] - {target}
    assert "session_watcher.core.engine" in graph["session_watcher.state.session"]  # the graph has edges
    assert cycles(graph) == []


def floor_of(module: str) -> tuple[int, str]:
    """A module's floor and subpackage: the face -1, the entry point above every floor."""
    parts = module.split(".")
    if len(parts) == 1:
        return -1, ""
    if parts[1] == "__main__" or module in COMPAT_MODULES:
        return len(FLOORS), parts[1]
    return next(n for n, floor in enumerate(FLOORS) if parts[1] in floor), parts[1]


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import that runs up a floor or across to another package of the same floor."""
    bad = []
    for name, deps in sorted(graph.items()):
        level, pkg = floor_of(name)
        for dep in sorted(deps):
            dep_level, dep_pkg = floor_of(dep)
            if dep_level > level or (dep_level == level and dep_pkg != pkg):
                bad.append(f"{name} -> {dep}")
    return bad


def test_imports_run_down_the_layers() -> None:
    graph = import_graph(REPO)
    loose = sorted(name for name in graph if name.count(".") == 1 and name.split(".")[1] not in FOLDERS)
    # the root holds the face and the entry point, and what old launchers import
    assert loose == sorted(["session_watcher.__main__", *COMPAT_MODULES])
    assert upward_imports(graph) == []


# what the core (floor 0) may import beside its own modules: computation only. No module that reads or
# writes files, streams, processes, the network or the clock (os, sys, io, pathlib, time, subprocess,
# ...): the shells do that and hand the core its inputs (docs/architecture.md: "A pure core")
CORE_MAY_IMPORT = {"__future__", "typing", "collections", "bisect", "heapq", "itertools", "math", "operator",
                   "datetime", "fnmatch", "ntpath", "posixpath", "re", "unicodedata", "zlib", "json", "_json",
                   "stringzilla"}


def core_imports(root: Path) -> dict[str, set[str]]:
    """Every module the core imports that is not the package's own (top-level name -> its importers),
    at module level or inside functions."""
    out: dict[str, set[str]] = {}
    for path in sorted((root / PACKAGE / "core").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top != PACKAGE:
                    out.setdefault(top, set()).add(path.name)
    return out


def test_the_core_imports_nothing_that_does_io() -> None:
    got = core_imports(REPO)
    assert {"math", "typing"} <= set(got)  # the walk found the core's imports
    assert {name: sorted(files) for name, files in got.items() if name not in CORE_MAY_IMPORT} == {}


def test_the_core_check_finds_an_io_import(tmp_path: Path) -> None:
    core = tmp_path / PACKAGE / "core"
    core.mkdir(parents=True)
    (core / "k.py").write_text("import math\n\ndef f():\n    import os.path\n    from time import time\n")
    assert core_imports(tmp_path) == {"math": {"k.py"}, "os": {"k.py"}, "time": {"k.py"}}


def test_layer_check_finds_an_upward_import(tmp_path: Path) -> None:
    """The check itself can fail: state importing the CLI, and reports importing a peer (otlp)."""
    pkg = tmp_path / PACKAGE
    for sub in ("state", "cli", "reports", "otlp", "core"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "state" / "s.py").write_text("def f():\n    from session_watcher.cli import c\n")
    (pkg / "cli" / "c.py").write_text("from session_watcher.state import s\nfrom session_watcher.core import k\n")
    (pkg / "core" / "k.py").write_text("")
    (pkg / "reports" / "r.py").write_text("from session_watcher.otlp import o\n")
    (pkg / "otlp" / "o.py").write_text("import session_watcher\n")
    assert upward_imports(import_graph(tmp_path)) == ["session_watcher.reports.r -> session_watcher.otlp.o",
                                                      "session_watcher.state.s -> session_watcher.cli.c"]


AGENT_PACKAGES = (f"{PACKAGE}.agents.claude_code", f"{PACKAGE}.agents.codex")
# The seam (session_watcher/README.md): outside agents/, an agent is reached through the registry
# (`session_watcher.agents`), never by its own package, but for these (module -> {agent module: the
# names it takes}), each with why; cli/install* registers each agent's hooks and is not listed.
SEAM_ALLOWED: dict[str, dict[str, set[str]]] = {
    "sessions.replay": {"agents.claude_code.transcript": {"MAX_LINE_BYTES"}},
    # the report's walk of Claude Code's project folders, listed again only where their mtimes moved
    # (the fallback's layout; another agent's logs are listed by its own `sources`)
    "reports.walk": {"agents.claude_code.discover": {"project_folders", "project_sources"}},
    # the report's and the page's mappings from Claude Code's one msgspec schema (`records`) to their
    # rows (the registry's fallback: a stateful agent's rows come through its `read`, reports.parse_events);
    # `made_by`: the client's rule for a fork's copied call, one for the report's rows and the fold's tally
    # (`decode_dir`, `DirRecord`: a record's working folder read by the struct, `head_dir`'s other path;
    # `STAMP_TABLES`, its type `StampTables`, `decode_call_unchecked`: `stamp_to_epoch` and `decode_call`
    # written out in its loop; `USAGE`, `COMPACT`: the hooks' markers of a call's and a compaction's line,
    # the two of `transcript.MARKERS` the report searches for)
    "reports.parse": {"agents.claude_code.records": {"NOT_JSON", "CallRecord", "DirRecord", "Usage", "counts_sample",
                                                     "decode_call", "decode_dir", "stamp_to_epoch", "usage_reading",
                                                     "STAMP_TABLES", "StampTables", "decode_call_unchecked"},
                      "agents.claude_code.transcript": {"COMPACT", "USAGE", "call_key", "iso_to_epoch", "made_by",
                                                        "usage_reading"}},
    # (the page takes the records replay's parse decodes, `bulkparse.tap`, while it reads a transcript)
    "reports.session_page_data": {"agents.claude_code": {"bulkparse"},
                                  "agents.claude_code.records": {"Block", "Input", "Message", "NOT_JSON", "Record",
                                                                 "Usage", "decode", "msgspec", "stamp_to_epoch",
                                                                 "usage_reading"},
                                  "agents.claude_code.transcript": {"split_lines", "usage_reading"}},
}


def agent_imports(root: Path) -> dict[str, dict[str, set[str]]]:
    """Outside agents/ and cli/install*: each module's imports of an agent's own package (module ->
    {the agent module, short: the names taken}), at module level or inside functions."""
    out: dict[str, dict[str, set[str]]] = {}
    for name, path in modules(root).items():
        short = name.removeprefix(f"{PACKAGE}.")
        if short.startswith(("agents", "cli.install")):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                pairs = [(a.name, a.name) for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                pairs = [(f"{node.module}.{a.name}" if node.module == f"{PACKAGE}.agents" else node.module, a.name)
                         for a in node.names]
            else:
                continue
            for target, what in pairs:
                if target.startswith(AGENT_PACKAGES):
                    out.setdefault(short, {}).setdefault(target.removeprefix(f"{PACKAGE}."), set()).add(what)
    return out


def test_no_module_outside_the_agents_reaches_an_agent_but_through_the_registry() -> None:
    """Exactly the allowed imports: a new one fails, and so does an allowed one no longer made (the
    list says what is true)."""
    got = agent_imports(REPO)
    assert got == SEAM_ALLOWED
    assert not any("codex" in target for targets in got.values() for target in targets)


def test_the_seam_check_finds_an_agent_reached_by_name(tmp_path: Path) -> None:
    pkg = tmp_path / PACKAGE
    for sub in ("state", "agents", "agents/codex", "cli"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "state" / "s.py").write_text("def f():\n    from session_watcher.agents.codex import reader\n")
    (pkg / "state" / "t.py").write_text("from session_watcher.agents import codex, agent_named\n")
    (pkg / "state" / "u.py").write_text("from session_watcher.agents import AGENTS\n")
    (pkg / "cli" / "install_x.py").write_text("from session_watcher.agents.codex import hooks\n")
    assert agent_imports(tmp_path) == {"state.s": {"agents.codex": {"reader"}},
                                       "state.t": {"agents.codex": {"codex"}}}


DEAD_KINDS = ("function", "method", "class", "import", "property", "unreachable_code")  # not a TypedDict's fields


def dead_code(*paths: Path) -> list[str]:
    """What vulture finds unused in `paths` (its 60 % confidence: functions, methods, classes)."""
    from vulture import Vulture

    v = Vulture()
    v.scavenge([str(p) for p in paths])
    return [f"{item.filename}:{item.first_lineno}: {item.message}" for item in v.get_unused_code(min_confidence=60)
            if item.typ in DEAD_KINDS]


def test_no_dead_code() -> None:
    """The package holds no code nothing calls (tools/vulture_allow.py lists what only the standard
    library or the tests use)."""
    assert dead_code(REPO / PACKAGE, REPO / "tools" / "vulture_allow.py") == []


def test_the_dead_code_check_finds_a_dead_function(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def used():\n    return 1\n\n\ndef unused():\n    return used()\n\n\nused()\n")
    assert [line.split(": ", 1)[1] for line in dead_code(tmp_path)] == ["unused function 'unused'"]


def test_cycle_check_finds_a_cycle(tmp_path: Path) -> None:
    """The check itself can fail: a lazy import inside a function closing a loop is a cycle."""
    pkg = tmp_path / PACKAGE
    (pkg / "core").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "core" / "__init__.py").write_text("")
    (pkg / "core" / "a.py").write_text("from session_watcher.core import b\n")
    (pkg / "core" / "b.py").write_text("def f():\n    from . import c\n")
    (pkg / "core" / "c.py").write_text("import session_watcher.core.a\n")
    (pkg / "core" / "d.py").write_text("from session_watcher.core.a import x\n")
    assert cycles(import_graph(tmp_path)) == [["session_watcher.core.a", "session_watcher.core.b",
                                               "session_watcher.core.c"]]


def source_copy(dest: Path) -> Path:
    """The repository's files as a fresh clone has them, without build output."""
    shutil.copytree(REPO, dest, symlinks=True,
                    ignore=lambda _d, names: [n for n in names if n in SKIP or n.endswith(".egg-info")])
    return dest


@pytest.mark.slow
def test_built_wheel_has_one_top_level_name(tmp_path: Path) -> None:
    src = source_copy(tmp_path / "src")
    out = tmp_path / "wheel"
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "--no-deps",
                           "-w", str(out), str(src)], capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    (wheel,) = out.glob("session_watcher-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names if ".dist-info/" not in n} == {PACKAGE}
    for path in ("core/engine.py", "state/store.py", "hooks/run.py", "notifier/deliver.py",
                 "cli/report.py", "base/config.py", "agents/claude_code/transcript.py", "reports/assets/theme.css",
                 "data/icon.png"):
        assert f"{PACKAGE}/{path}" in names, path
    top = [n for n in names if n.endswith(".dist-info/top_level.txt")]
    if top:  # setuptools writes it; it lists what `pip install` exposes
        assert zipfile.ZipFile(wheel).read(top[0]).decode().split() == [PACKAGE]


@pytest.mark.slow
def test_a_clone_without_links_builds_and_its_sdist_has_no_tests(tmp_path: Path) -> None:
    """`git -c core.symlinks=false clone` (what Windows gets) builds a wheel; the sdist carries the
    package, the plugin's files and the licence, and no test (they cannot run from an sdist)."""
    pytest.importorskip("build")
    clone = tmp_path / "clone"
    proc = subprocess.run(["git", "-c", "core.symlinks=false", "clone", "-q", "--no-hardlinks", str(REPO), str(clone)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.skip(f"cannot clone the repository: {proc.stderr.strip()}")
    out = tmp_path / "dist"
    # the sdist, then the wheel built from it (so the sdist is enough to build), in isolated environments
    # with the current setuptools, as pip and PyPI build them
    proc = subprocess.run([sys.executable, "-m", "build", "-q", "--outdir", str(out), str(clone)],
                          capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (sdist_path,) = out.glob("session_watcher-*.tar.gz")
    (wheel_path,) = out.glob("session_watcher-*.whl")
    import tarfile

    with tarfile.open(sdist_path) as tar:
        names = [n.split("/", 1)[1] for n in tar.getnames() if "/" in n]
    assert "session_watcher/core/engine.py" in names
    assert "LICENSE" in names
    assert [n for n in names if n.startswith("tests/") or "/test_" in n] == []
    wheel = zipfile.ZipFile(wheel_path).namelist()
    assert "session_watcher/core/engine.py" in wheel
    assert "session_watcher/data/icon.png" in wheel


@functools.cache
def other_interpreters() -> list[str]:
    """The newest CPython 3.11+ that pyenv has here other than the one running the tests (every
    one with `SW_RUN_SLOW=1`: each is a whole install)."""
    mine = os.path.realpath(sys.executable)
    found = []
    for exe in sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[1-9]*/bin/python3.1[1-9]"))):
        if os.path.realpath(exe) != mine and not os.path.realpath(exe).startswith(sys.prefix):
            found.append(exe)
    versions: dict[str, str] = {}
    for exe in found:  # one per minor version
        v = subprocess.run([exe, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True,
                           check=False).stdout.strip()
        if v and v != str(sys.version_info[:2]):
            versions.setdefault(v, exe)
    ordered = [versions[v] for v in sorted(versions, key=lambda v: tuple(int(n) for n in v.strip("()").split(",")))]
    return ordered if os.environ.get("SW_RUN_SLOW") == "1" else ordered[-1:]


def replay(python: list[str], env: dict[str, str], cwd: Path) -> dict[str, object]:
    proc = subprocess.run([*python, "replay", "--json", str(FIXTURE)], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, object] = json.loads(proc.stdout)
    return doc


STALE = f"build/lib/{PACKAGE}/zz_deleted_since.py"  # setuptools' scratch of an earlier install, gitignored


@pytest.fixture(scope="module")
def venv_only(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """`install.sh --venv-only --data ROOT/data` of a source copy whose build/ holds a module deleted
    since (STALE), with `python` (PYTHON; "" for install.sh's own choice) and ROOT's home, once per
    interpreter a module: the tests only read the venv (the hook run writes to ROOT/sw alone)."""
    done: dict[str, Path] = {}

    def install(python: str) -> Path:
        if python not in done:
            root = tmp_path_factory.mktemp("venv-only")
            (root / "home").mkdir()
            src = source_copy(root / "src")
            (src / STALE).parent.mkdir(parents=True)
            (src / STALE).write_text("X = 1\n")
            proc = subprocess.run(["sh", str(src / "install.sh"), "--venv-only", "--data", str(root / "data")],
                                  env=venv_only_env(root, python), capture_output=True, text=True, timeout=900,
                                  check=False)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            done[python] = root
        return done[python]

    return install


def venv_only_env(root: Path, python: str) -> dict[str, str]:
    env = {**os.environ, "HOME": str(root / "home"), "SESSION_WATCHER_HOME": str(root / "sw"),
           "CLAUDE_CONFIG_DIR": str(root / "claude"), "XDG_BIN_HOME": str(root / "bin")}
    env.pop("VIRTUAL_ENV", None)
    if python:
        env["PYTHON"] = python
    return env


@pytest.mark.parametrize("python", other_interpreters() or [pytest.param("", marks=pytest.mark.skip(
    reason="no other CPython 3.11+ under ~/.pyenv on this machine"))])
@pytest.mark.slow
def test_other_interpreter_installs_and_works_the_same(python: str, tmp_path: Path,
                                                       venv_only: Callable[[str], Path]) -> None:
    root = venv_only(python)
    env = venv_only_env(root, python)
    data = root / "data"
    venv_python = data / "venv" / "bin" / "python"
    version = subprocess.run([str(venv_python), "-c", "import sys; print(sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert version != str(sys.version_info[:2])  # really the other interpreter
    record = next((data / "venv").glob("lib/python3.*/site-packages/session_watcher-*.dist-info/RECORD"))
    top = {line.split("/")[0] for line in record.read_text().splitlines() if ".dist-info/" not in line}
    assert {t for t in top if not t.startswith("..")} == {PACKAGE}

    theirs = replay([str(data / "venv" / "bin" / "session-watcher")], env, tmp_path)
    mine = replay([sys.executable, "-m", "session_watcher"], env, tmp_path)
    assert (theirs["calls"], theirs["buckets"]) == (mine["calls"], mine["buckets"])
    assert theirs == mine

    hook = subprocess.run([str(venv_python), "-I", "-S", str(data / "venv" / "bin" / "session-watcher-hook"),
                           "PostToolUse"], input=b'{"session_id": "abc", "transcript_path": ', env=env,
                          capture_output=True, timeout=60, check=False)
    assert (hook.returncode, hook.stdout, hook.stderr) == (0, b"", b"")
    written = [p for p in (root / "sw").rglob("*") if p.is_file()] if (root / "sw").exists() else []
    assert [p for p in written if b"Traceback" in p.read_bytes() or b"Error" in p.read_bytes()] == []


@pytest.mark.slow
def test_a_module_deleted_from_the_checkout_is_not_installed_again(venv_only: Callable[[str], Path]) -> None:
    """install.sh builds from a clean copy: a checkout's build/ (setuptools' scratch of an earlier
    install, gitignored) keeps modules deleted since, and a re-install put them back in the venv.
    The venv is the other interpreter's test's where there is one (one install for both)."""
    root = venv_only((other_interpreters() or [""])[-1])
    assert (root / "src" / STALE).is_file()
    site = next((root / "data" / "venv").glob("lib/python3.*/site-packages"))
    installed = {p.name for p in (site / PACKAGE).glob("*.py")}
    assert "__main__.py" in installed
    assert "zz_deleted_since.py" not in installed
