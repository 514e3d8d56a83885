"""What the hooks' import diet changed must mean what it meant: the pending handoff's stale limit
read without the key table is the config's own (tests/test_hot_imports.py holds the modules each
path imports)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest


def test_the_handoff_stale_limit_is_the_default_without_a_config_file_and_the_files_else(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from session_watcher.base import config, config_cache, paths
    from session_watcher.hooks.inject import stale_s

    monkeypatch.setenv("SESSION_WATCHER_HOME", str(tmp_path / "home"))
    project = tmp_path / "proj"
    project.mkdir()
    assert config_cache.HANDOFF_STALE_MIN == config.DEFAULTS["handoff_stale_min"] == 180
    assert stale_s(str(project)) == 180 * 60.0
    user = Path(paths.user_config_file())
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("handoff_stale_min = 7\n")
    assert stale_s(str(project)) == 7 * 60.0
    user.write_text("handoff_stale_min = 'soon'\n")  # a file that cannot be used: the default
    assert stale_s(str(project)) == 180 * 60.0
    user.unlink()
    own = Path(paths.project_config_file(str(project)))
    own.parent.mkdir(parents=True, exist_ok=True)
    own.write_text("handoff_stale_min = 7\n")  # a user's key in a project's file: refused, the default
    assert stale_s(str(project)) == 180 * 60.0
