"""Per-session token totals agree with ccusage (`ccusage session --json --offline`) on the same files.

ccusage comes from .ci/setup.d/30-ccusage.sh (pinned 20.0.24: 20.0.26 has no linux-x64 binary). When it
is missing, the test installs it with npm into the user cache; it skips only when that fails outside
CI, and fails under CI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from session_watcher.reports.collect import run_report
from tests.test_report_fixtures import copy_fixtures
from tests.test_warmth import T0, Transcript

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

VERSION = "20.0.24"
CI_PREFIX = os.environ.get("SESSION_WATCHER_CCUSAGE_PREFIX", "/opt/session-watcher-ci/ccusage")


def _installed(prefix: Path) -> Path | None:
    binary = prefix / "node_modules" / ".bin" / "ccusage"
    pkg = prefix / "node_modules" / "ccusage" / "package.json"
    try:
        if binary.exists() and json.loads(pkg.read_text())["version"] == VERSION:
            return binary
    except (OSError, ValueError, KeyError):
        return None
    return None


def find_or_install_ccusage() -> Path | None:
    for prefix in (Path(CI_PREFIX), Path.home() / ".cache" / "session-watcher-ci" / "ccusage"):
        found = _installed(prefix)
        if found:
            return found
    npm = shutil.which("npm")
    if npm is None:
        return None
    prefix = Path.home() / ".cache" / "session-watcher-ci" / "ccusage"
    prefix.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(prefix), f"ccusage@{VERSION}"],
            capture_output=True,
            timeout=300,
            check=True,
        )
    except (subprocess.SubprocessError, OSError):
        return None
    return _installed(prefix)


@pytest.fixture(scope="module")
def ccusage() -> Path:
    found = find_or_install_ccusage()
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"ccusage@{VERSION} is not installed and could not be installed (CI)")
        pytest.skip(f"ccusage@{VERSION} not installed and npm could not install it")
    return found


def ccusage_sessions(binary: Path, config_dir: Path) -> dict[str, dict[str, int]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCUSAGE")}
    env["CLAUDE_CONFIG_DIR"] = str(config_dir)
    env["HOME"] = str(config_dir.parent)  # no ~/.claude of the machine's own
    r = subprocess.run(
        [str(binary), "session", "--json", "--offline"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    rows = doc.get("session", doc.get("sessions"))
    return {
        row.get("period", row.get("sessionId")): {
            "input": row["inputTokens"],
            "output": row["outputTokens"],
            "cacheRead": row["cacheReadTokens"],
            "cacheWrite": row["cacheCreationTokens"],
        }
        for row in rows
    }


def ours(config_dir: Path, tmp: Path) -> dict[str, dict[str, int]]:
    doc, _ = run_report([str(config_dir / "projects")], str(tmp / "index.sqlite3"), now=1.8e9)
    return {
        s["sessionId"]: {k: s["tokens"][k] for k in ("input", "output", "cacheRead", "cacheWrite")}
        for s in doc["sessions"]
    }


def test_fixture_totals_agree_with_ccusage(ccusage: Path, tmp_path: Path) -> None:
    """Main + subagent files, each call once with its last sample: to the token, session by session."""
    cfg = copy_fixtures(tmp_path / "claude")
    theirs = ccusage_sessions(ccusage, cfg)
    mine = ours(cfg, tmp_path)
    assert len(mine) == 6
    assert mine == theirs
    # the subagent files are in there: 258c7280's main file alone holds fewer cache writes
    assert mine["258c7280-ae70-4798-800f-63464d01a85d"]["cacheWrite"] == 394_137


def test_streamed_samples_agree_with_ccusage(ccusage: Path, tmp_path: Path) -> None:
    """A response written as several lines with a partial output count first: counted once, last sample."""
    cfg = tmp_path / "claude"
    proj = cfg / "projects" / "-home-u-p"
    tr = Transcript("streamed").call(T0, 100, 5_000, blocks=3, out=321).call(T0 + 30, 5_100, 40, blocks=2, out=12)
    tr.write(proj)
    sub = Transcript("agent-a1").call(T0 + 10, 0, 7_000, side=True, out=44)
    sub.write(proj / "streamed" / "subagents")
    mine = ours(cfg, tmp_path)
    assert mine["streamed"]["output"] == 321 + 12 + 44
    assert mine == ccusage_sessions(ccusage, cfg)
