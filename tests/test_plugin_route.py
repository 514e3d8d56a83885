"""The plugin route's launcher (session_watcher/hooks/run.sh), as Claude Code runs it: the first hook
run builds the venv in the background; a new version of the plugin (a new CLAUDE_PLUGIN_ROOT, or a new
version in its manifest) gets a new venv while the old one keeps serving (issue 28, class 7); a build
that failed is not started again on every hook. The builder here is a stand-in that records its runs
(the real one, hooks/venv.sh, is run by tests/e2e/test_e2e_marketplace.py); the launcher is the
real file, in a real shell."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import tomllib
from typing import TYPE_CHECKING

import pytest

from tests.oracle import REPO

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

if TYPE_CHECKING:
    from pathlib import Path

PLUGIN = REPO / "session_watcher"

# a builder that takes a moment, then makes a venv whose launcher records each hook run
BUILDER = """#!/bin/sh
root=$1 data=$2 stamp=$3
printf '%s\\n' "$stamp" >> "$data/builds"
sleep "${BUILD_SECONDS:-0.3}"
[ -n "${BUILD_FAILS:-}" ] && exit 1
new="$data/venv-$$"
mkdir -p "$new/bin"
printf '#!/bin/sh\\necho "$0 $*" >> "%s/hook-runs"\\n' "$data" > "$new/bin/python"
chmod +x "$new/bin/python"
: > "$new/bin/session-watcher-hook"
printf '%s\\n' "$stamp" > "$new/.plugin-version"
ln -sfn "venv-$$" "$data/venv.tmp" && mv -T "$data/venv.tmp" "$data/venv"
"""


def _plugin(tmp: Path, version: str = "0.1.0", name: str = "0.1.0") -> Path:
    """A plugin folder as the cache holds one: the real run.sh and manifest, the stand-in builder."""
    root = tmp / "cache" / name
    (root / "hooks").mkdir(parents=True)
    (root / ".claude-plugin").mkdir()
    shutil.copy(PLUGIN / "hooks" / "run.sh", root / "hooks" / "run.sh")
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({**manifest, "version": version}, indent=2))
    (root / "hooks" / "venv.sh").write_text(BUILDER)
    return root


def _hook(root: Path, data: Path, **env: str) -> float:
    """One hook run; its wall time (what the agent would wait, were the hook synchronous)."""
    t = time.monotonic()
    proc = subprocess.run(["sh", str(root / "hooks" / "run.sh"), "Stop"], input=b"{}", capture_output=True,
                          timeout=30, check=False,
                          env={"PATH": os.environ["PATH"], "HOME": str(data.parent), "CLAUDE_PLUGIN_ROOT": str(root),
                               "CLAUDE_PLUGIN_DATA": str(data), **env})
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    return time.monotonic() - t


def _built(data: Path) -> None:
    for _ in range(400):
        if not (data / ".installing").exists():
            return
        time.sleep(0.05)
    raise AssertionError("the build did not finish")


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_the_dependencies_are_pyprojects() -> None:
    """The plugin route installs what pyproject.toml declares (data/requirements.txt, kept equal)."""
    want = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    lines = (PLUGIN / "data" / "requirements.txt").read_text().splitlines()
    assert [ln for ln in lines if ln and not ln.startswith("#")] == want
    fast = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["fast"]
    lines = (PLUGIN / "data" / "requirements-fast.txt").read_text().splitlines()
    assert [ln for ln in lines if ln and not ln.startswith("#")] == fast


def test_the_marketplace_installs_the_package_folder() -> None:
    """The marketplace's plugin is session_watcher/ (what the plugin needs: the package, its manifest,
    hooks, command and bin), not the checkout with its tests, benchmarks and dev venv."""
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    (entry,) = market["plugins"]
    assert entry["source"] == "./session_watcher"
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    assert (PLUGIN / manifest["icon"]).is_file()
    for part in ("hooks/hooks.json", "hooks/run.sh", "hooks/venv.sh", "bin/session-watcher", "commands/handoff.md",
                 "data/requirements.txt", "__init__.py"):
        assert (PLUGIN / part).is_file(), part
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    commands = {h.get("command", "") for groups in hooks.values() for g in groups for h in g["hooks"]}
    assert all("${CLAUDE_PLUGIN_ROOT}/hooks/run.sh" in c for c in commands), commands
    assert not (REPO / "hooks").exists()
    assert sorted(os.listdir(REPO / ".claude-plugin")) == ["marketplace.json"]


def test_the_first_run_builds_in_the_background(tmp_path: Path) -> None:
    root, data = _plugin(tmp_path), tmp_path / "data"
    _hook(root, data, BUILD_SECONDS="0.5")
    assert (data / ".installing").is_dir()  # returned while the build runs
    assert not (data / "venv").exists()
    _built(data)
    (stamp,) = _lines(data / "builds")
    assert stamp.startswith(f"{root} ")
    assert '"version": "0.1.0"' in stamp
    _hook(root, data)  # now the venv serves, and nothing is built again
    assert _lines(data / "hook-runs") == [f"{data}/venv/bin/python -I -S {data}/venv/bin/session-watcher-hook Stop"]
    assert len(_lines(data / "builds")) == 1


@pytest.mark.parametrize("change", ["new-folder", "new-version"])
def test_an_update_is_built_while_the_old_venv_serves(tmp_path: Path, change: str) -> None:
    old, data = _plugin(tmp_path), tmp_path / "data"
    _hook(old, data)
    _built(data)
    new = _plugin(tmp_path, "0.2.0", name="0.2.0") if change == "new-folder" else old
    if change == "new-version":  # the same folder, another version (a `--plugin-dir` checkout pulled)
        manifest = json.loads((old / ".claude-plugin" / "plugin.json").read_text())
        (old / ".claude-plugin" / "plugin.json").write_text(json.dumps({**manifest, "version": "0.2.0"}, indent=2))
    _hook(new, data, BUILD_SECONDS="0.5")
    assert len(_lines(data / "hook-runs")) == 1  # the old venv ran this hook, at once
    assert (data / ".installing").is_dir()  # and the new one is being built
    _built(data)
    builds = _lines(data / "builds")
    assert len(builds) == 2
    assert builds[1].startswith(f"{new} ")
    assert '"version": "0.2.0"' in builds[1]
    assert _lines(data / "venv" / ".plugin-version") == [builds[1]]
    _hook(new, data)
    assert len(_lines(data / "hook-runs")) == 2
    assert len(_lines(data / "builds")) == 2  # built once per version


def test_a_failed_build_is_not_retried_on_every_hook(tmp_path: Path) -> None:
    root, data = _plugin(tmp_path), tmp_path / "data"
    _hook(root, data, BUILD_FAILS="1", BUILD_SECONDS="0")
    _built(data)
    assert _lines(data / ".failed") == [*_lines(data / "builds"), "1"]  # the stamp whose build failed, once
    _hook(root, data, BUILD_FAILS="1", BUILD_SECONDS="0")
    _built(data)
    assert len(_lines(data / "builds")) == 1  # within the minute: not started again
    old = time.time() - 11 * 60
    os.utime(data / ".failed", (old, old))
    _hook(root, data, BUILD_SECONDS="0")
    _built(data)
    assert len(_lines(data / "builds")) == 2
    assert not (data / ".failed").exists()
    assert (data / "venv" / "bin" / "session-watcher-hook").is_file()


def test_a_newline_in_the_plugins_path_is_one_stamp_built_once(tmp_path: Path) -> None:
    """A plugin folder (and data folder) whose path holds a newline: the stamp is written and read back
    as one record, so the second hook runs the venv and builds nothing (issue 33, rule 5)."""
    root, data = _plugin(tmp_path, name="0.1.0\nx"), tmp_path / "da\nta"
    _hook(root, data)
    _built(data)
    _hook(root, data)
    assert not (data / ".installing").exists()  # no second build started
    assert (data / "hook-runs").read_text().count("session-watcher-hook Stop") == 1  # the venv ran it
    assert len(_lines(data / "builds")) == 1  # one line: the newline escaped
    assert _lines(data / "venv" / ".plugin-version") == _lines(data / "builds")


def _age(path: Path, seconds: float) -> None:
    old = time.time() - seconds
    os.utime(path, (old, old))


def test_a_failed_build_recovers_by_itself_backing_off(tmp_path: Path) -> None:
    """Offline first run: the next hook a minute later builds again (the cause may be gone); each
    failure in a row doubles the wait (1, 2, 4 ... 30 min); once the network is back, the next due
    hook builds and the venv serves. `.failed` counts the failures, for doctor."""
    root, data = _plugin(tmp_path), tmp_path / "data"
    _hook(root, data, BUILD_FAILS="1", BUILD_SECONDS="0")
    _built(data)
    stamp = _lines(data / "builds")[0]
    assert _lines(data / ".failed") == [stamp, "1"]
    _age(data / ".failed", 40)
    _hook(root, data, BUILD_FAILS="1", BUILD_SECONDS="0")
    _built(data)
    assert len(_lines(data / "builds")) == 1  # under a minute: not yet
    _age(data / ".failed", 70)
    _hook(root, data, BUILD_FAILS="1", BUILD_SECONDS="0")
    _built(data)
    assert len(_lines(data / "builds")) == 2  # a minute on: tried again, failed again
    assert _lines(data / ".failed") == [stamp, "2"]
    _age(data / ".failed", 100)
    _hook(root, data, BUILD_SECONDS="0")
    _built(data)
    assert len(_lines(data / "builds")) == 2  # the second failure waits 2 minutes
    (data / ".failed").write_text(f"{stamp}\n9\n")
    _age(data / ".failed", 29 * 60)
    _hook(root, data, BUILD_SECONDS="0")
    _built(data)
    assert len(_lines(data / "builds")) == 2  # never more than 30 minutes, but 30
    _age(data / ".failed", 31 * 60)
    _hook(root, data, BUILD_SECONDS="0")  # the network is back
    _built(data)
    assert len(_lines(data / "builds")) == 3
    assert not (data / ".failed").exists()
    _hook(root, data)
    assert len(_lines(data / "hook-runs")) == 1  # the venv serves


# an interpreter for the real hooks/venv.sh: it answers find_python's question with its own path and
# makes a venv whose python does nothing (no pip, no network); anything else is not asked of it
FAKE_PYTHON = """#!/bin/sh
case $1 in
-c) echo "$0" ;;
-m) mkdir -p "$3/bin"; printf '#!/bin/sh\\ncat >/dev/null\\n' > "$3/bin/python"; chmod +x "$3/bin/python" ;;
esac
"""


@pytest.mark.parametrize(("manifest", "said"), [(True, " (version 0.1.0)"), (False, "")])
def test_the_venv_builders_log_line_says_the_version_cleanly(tmp_path: Path, manifest: bool, said: str) -> None:
    """The real hooks/venv.sh, given run.sh's stamp (the folder, then the manifest's version line as it
    is, `  "version": "0.1.0",`), ends its log with `ready (version 0.1.0)`, not the raw stamp; a stamp
    without a version line (no manifest) says `ready`."""
    root = tmp_path / "plug in"
    shutil.copytree(PLUGIN / "hooks", root / "hooks")
    (root / "data").mkdir()
    python = tmp_path / "python3"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    data = tmp_path / "data"
    stamp = f'{root}   "version": "0.1.0",' if manifest else str(root)
    proc = subprocess.run(["sh", str(root / "hooks" / "venv.sh"), str(root), str(data), stamp],
                          capture_output=True, text=True, timeout=60, check=False,
                          stdin=subprocess.DEVNULL, env={**os.environ, "PYTHON": str(python)})
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("venv.sh: "), last
    assert last.endswith(f" ready{said}"), last
    built = [p.read_text() for p in data.glob("venv-*/.plugin-version")]
    assert built == [stamp + "\n"]  # the stamp itself is kept whole (run.sh compares it)


def test_a_hook_is_told_its_plugins_command_for_itself(tmp_path: Path) -> None:
    """A cold-cache alert names the plugin's bin/session-watcher (nothing of the plugin's is on PATH):
    run.sh says which, by the path it was run by, for the process it execs (its pid), so that an
    environment a project's settings set (CLAUDE_PLUGIN_ROOT, SESSION_WATCHER_PLUGIN_BIN) names none."""
    root, data = _plugin(tmp_path), tmp_path / "data"
    _hook(root, data)
    _built(data)
    seen = data / "seen"
    python = data / "venv" / "bin" / "python"
    python.write_text(f'#!/bin/sh\necho "$SESSION_WATCHER_PLUGIN_BIN $SESSION_WATCHER_PLUGIN_PID $$" > "{seen}"\n')
    _hook(root, data, SESSION_WATCHER_PLUGIN_BIN="/elsewhere/bin/x", SESSION_WATCHER_PLUGIN_PID="1")
    path, pid, own = seen.read_text().split()
    assert (path, pid) == (f"{root}/bin/session-watcher", own)
