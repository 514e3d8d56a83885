"""session_watcher.bundle: the launchers import the package's hot modules from one file of compiled
code. Real files, real interpreter processes: a hook run through a bundle leaves the same state as
an ordinary one, a source changed since the build is imported the ordinary way, and a file that
cannot be used changes nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

from session_watcher import bundle
from session_watcher.launchers import text as launcher_text
from tests.oracle import SW, TRANSCRIPTS, payload

if TYPE_CHECKING:
    from pathlib import Path

SMALL = TRANSCRIPTS / "subagent.jsonl"
SID = "5f0c3e2a-1b2c-4d5e-8f90-0a1b2c3d4e5f"


def run_py(code: str, env: dict[str, str] | None = None, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-I", "-c", code], input=stdin.decode(), capture_output=True,
                          text=True, env=env, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc


def launcher(path: Path, modules: Path, report: Path) -> None:
    """install.sh's hook launcher (run with `site`: no paths of its own), plus a line saying which
    modules came from the bundle."""
    said = (f"open({str(report)!r}, 'w').write(' '.join(sorted(m for m, mod in sys.modules.items() "
            "if type(getattr(mod, '__loader__', None)).__name__ == 'Bundle')))\n")
    text = launcher_text("hook", [], str(modules))
    assert text.endswith("import os\nos._exit(rc)\n")
    path.write_text(text.replace("import os\nos._exit(rc)\n", said + "import os\nos._exit(rc)\n"))


def test_a_hook_run_through_the_bundle_leaves_the_same_state(tmp_path: Path) -> None:
    modules, report, script = tmp_path / "modules.marshal", tmp_path / "loaded.txt", tmp_path / "hook"
    built = subprocess.run([sys.executable, "-m", "session_watcher.bundle", str(modules)], capture_output=True,
                           text=True, check=True, timeout=60)
    assert built.stdout.startswith(f"{len(bundle.MODULES)} modules in ")
    launcher(script, modules, report)
    states = []
    runs = (("bundle", [sys.executable, "-I", str(script), "Stop"]), ("ordinary", [str(SW), "hook", "Stop"]))
    for name, argv in runs:
        home = tmp_path / name
        transcript = tmp_path / name / "t.jsonl"
        transcript.parent.mkdir()
        shutil.copy(SMALL, transcript)
        env = {**os.environ, "SESSION_WATCHER_HOME": str(home)}
        proc = subprocess.run(argv, input=json.dumps(payload(SID, transcript)).encode(), capture_output=True,
                              env=env, timeout=60, check=False)
        assert (proc.returncode, proc.stderr) == (0, b"")
        state = json.loads((home / "state" / "sessions" / f"{SID}.json").read_bytes())
        states.append({k: state[k] for k in ("meter", "engine", "health", "alerts", "tools")})
    assert states[0] == states[1]
    assert states[0]["meter"]["main"]["calls"] > 0
    loaded = set(report.read_text().split())
    assert {"session_watcher.hooks.run", "session_watcher.core.engine", "session_watcher.state.shell",
            "session_watcher.state.session", "session_watcher.core.transcript"} <= loaded


def test_a_source_changed_since_the_build_is_imported_the_ordinary_way(tmp_path: Path) -> None:
    pkg = tmp_path / "pkgx"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("NAME = 'pkgx'\n")
    # the flag without the import statement: the annotation stays a string, and the module has no
    # `annotations` name (the statement binds it)
    (pkg / "a.py").write_text("from __future__ import annotations\n\ndef f(x: Undefined) -> None: ...\n\nVALUE = 1\n")
    (pkg / "b.py").write_text("VALUE = 'b'\n")
    out = tmp_path / "modules.marshal"
    setup = f"import sys; sys.path.insert(0, {str(tmp_path)!r}); from session_watcher import bundle\n"
    run_py(setup + f"bundle.build({str(out)!r}, ('pkgx', 'pkgx.a', 'pkgx.b'))")
    (pkg / "b.py").write_text("VALUE = 'b, edited'\n")  # another size: not the built code any more
    probe = setup + (f"b = bundle.install({str(out)!r})\nimport pkgx.a, pkgx.b\n"
                     "print(pkgx.a.VALUE, pkgx.b.VALUE, type(pkgx.__loader__).__name__, "
                     "type(pkgx.a.__loader__).__name__, type(pkgx.b.__loader__).__name__, "
                     "pkgx.a.__file__, pkgx.__path__[0], pkgx.a.f.__annotations__['x'], "
                     "hasattr(pkgx.a, 'annotations'))")
    got = run_py(probe).stdout.split()
    assert got == ["1", "b,", "edited", "Bundle", "Bundle", "SourceFileLoader", str(pkg / "a.py"), str(pkg),
                   "Undefined", "False"]


def test_a_file_that_cannot_be_used_changes_nothing(tmp_path: Path) -> None:
    before = list(sys.meta_path)
    assert bundle.install(str(tmp_path / "missing")) is None
    (tmp_path / "junk").write_bytes(b"\x00not marshal")
    assert bundle.install(str(tmp_path / "junk")) is None
    import marshal

    index = marshal.dumps(("cpython-99:0000", {}))  # another Python's build
    (tmp_path / "other").write_bytes(len(index).to_bytes(4, "little") + index)
    assert bundle.install(str(tmp_path / "other")) is None
    built = tmp_path / "built"
    run_py(f"from session_watcher import bundle; bundle.build({str(built)!r})")
    (tmp_path / "cut").write_bytes(built.read_bytes()[:-1])  # a file cut short by a full disk
    assert bundle.install(str(tmp_path / "cut")) is None
    assert sys.meta_path == before


def test_the_modules_listed_are_those_every_event_imports(tmp_path: Path) -> None:
    """What a run of each event and of the status line imports from the package is in MODULES (a
    delivered alert's notifier aside: rare, and imported the ordinary way; its throttle is listed)."""
    transcript = tmp_path / "t.jsonl"
    shutil.copy(SMALL, transcript)
    env = {**os.environ, "SESSION_WATCHER_HOME": str(tmp_path / "home")}
    seen: set[str] = set()
    for event in ("SessionStart", "PostToolUse", "Stop", "UserPromptSubmit", "SubagentStop", "SessionEnd", ""):
        main = "session_watcher.statusline" if not event else "session_watcher.hooks.run"
        code = (f"import sys\nsys.argv = ['x', {event!r}] if {event!r} else ['x']\nfrom {main} import main\nmain()\n"
                "sys.stderr.write(' '.join(m for m in sys.modules if m.startswith('session_watcher')))\n")
        proc = run_py(code, env, json.dumps(payload(SID, transcript, event or "Stop", prompt="go on")).encode())
        seen |= set(proc.stderr.split())
    assert "session_watcher.hooks.run" in seen
    assert "session_watcher.statusline" in seen
    assert {m for m in seen if not m.startswith("session_watcher.notifier")} <= set(bundle.MODULES)
    assert {"session_watcher.notifier", "session_watcher.notifier.throttle"} <= set(bundle.MODULES)
