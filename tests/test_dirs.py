"""Where files go: the XDG layout matches platformdirs, and every folder we create is user-only."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

import platformdirs

from session_watcher.base import paths

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_linux_layout_matches_platformdirs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The hand-rolled XDG lookup (no platformdirs import on the hot path) agrees with platformdirs."""
    monkeypatch.delenv("SESSION_WATCHER_HOME", raising=False)
    for var in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/ignored")  # relative values are ignored, as XDG says
    pd = platformdirs.PlatformDirs("session-watcher", appauthor=False)
    assert paths.state_dir() == pd.user_state_dir
    assert paths.config_dir() == pd.user_config_dir
    assert paths.data_dir() == pd.user_data_dir
    assert paths.log_dir() == pd.user_log_dir
    assert paths.cache_dir() == pd.user_cache_dir


def test_created_folders_are_user_only_and_existing_ones_untouched(tmp_path: Path) -> None:
    existing = tmp_path / "shared"
    existing.mkdir(mode=0o755)
    os.chmod(existing, 0o755)
    target = existing / "a" / "b" / "sessions"
    old_umask = os.umask(0o022)
    try:
        paths.ensure_private_dir(str(target))
    finally:
        os.umask(old_umask)
    for d in (existing / "a", existing / "a" / "b", target):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700, d
    assert stat.S_IMODE(existing.stat().st_mode) == 0o755


def test_a_wide_existing_state_folder_is_tightened(tmp_path: Path) -> None:
    d = tmp_path / "state"
    d.mkdir()
    os.chmod(d, 0o777)
    paths.ensure_private_dir(str(d))
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
