"""`--uninstall` takes out of Codex's config.toml exactly the trust entries the install had Codex
write (cli.codex_trust.untrust): the user's own entries, comments and other tables kept, a backup
first, an entry whose hash has changed since left alone, and a second run changes nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from session_watcher.cli.codex_trust import untrust

if TYPE_CHECKING:
    from pathlib import Path

MINE = {"/h/hooks.json:stop:0:0": "sha256:aa", "/h/hooks.json:post_tool_use:0:0": "sha256:bb",
        "/h/hooks.json:session_start:0:0": "sha256:cc"}
USERS = '''# my Codex settings
model = "gpt-5.5"

[hooks.state."/h/hooks.json:stop:1:0"]  # my own hook, trusted by me
trusted_hash = "sha256:11"
'''
AFTER_INSTALL = USERS + '''
[hooks.state."/h/hooks.json:stop:0:0"]
trusted_hash = "sha256:aa"

[hooks.state."/h/hooks.json:post_tool_use:0:0"]
trusted_hash = "sha256:bb"
enabled = true

[hooks.state."/h/hooks.json:session_start:0:0"]
trusted_hash = "sha256:changed"

[analytics]
enabled = false
'''


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # what it says unwrapped, read line by line


def _backups(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if ".bak-session-watcher-" in p.name)


def test_only_what_the_install_wrote_goes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.toml"
    config.write_text(AFTER_INSTALL)
    assert untrust(str(tmp_path), MINE) == 2
    [backup] = _backups(tmp_path)
    assert capsys.readouterr().out.splitlines() == [  # what became of each file, once
        f"codex: removed the 2 trust entries the install wrote from {config}",
        f"backup: made {backup} (the file as it was; it holds settings of yours)"]
    text = config.read_text()
    assert "sha256:aa" not in text  # ours: the whole table
    assert "sha256:bb" not in text
    assert '[hooks.state."/h/hooks.json:post_tool_use:0:0"]\nenabled = true' in text  # what else it held stays
    assert "sha256:changed" in text  # trusted again since, by someone else: not ours to take
    assert text.startswith(USERS)  # the user's entry and comments as they were
    assert text.endswith("[analytics]\nenabled = false\n")
    assert [b.read_text() for b in _backups(tmp_path)] == [AFTER_INSTALL]
    again = config.read_bytes()
    assert untrust(str(tmp_path), MINE) == 0
    assert config.read_bytes() == again
    assert len(_backups(tmp_path)) == 1


def test_a_table_left_empty_goes_with_its_entries(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('model = "gpt-5.5"\n\n[hooks.state]\n\n[hooks.state."/h/hooks.json:stop:0:0"]\n'
                      'trusted_hash = "sha256:aa"\n')
    assert untrust(str(tmp_path), MINE) == 1
    assert config.read_text().strip() == 'model = "gpt-5.5"'


def test_nothing_written_where_nothing_is_ours(tmp_path: Path) -> None:
    assert untrust(str(tmp_path), MINE) == 0  # no config.toml
    config = tmp_path / "config.toml"
    config.write_text(USERS)
    assert untrust(str(tmp_path), MINE) == 0
    config.write_text("not = [toml")
    assert untrust(str(tmp_path), MINE) == 0
    assert config.read_text() == "not = [toml"
    assert _backups(tmp_path) == []


def test_a_config_the_install_created_goes_when_only_ours_was_in_it(tmp_path: Path) -> None:
    """Codex's app-server made config.toml for our trust (there was none): it goes again with our
    entries, and no backup is written (it held nothing of the user's); one the user has since written
    into stays, a backup first."""
    config = tmp_path / "config.toml"
    config.write_text('[hooks.state]\n\n[hooks.state."/h/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:aa"\n')
    assert untrust(str(tmp_path), MINE, created=True) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    config.write_text('model = "gpt-5.5"\n\n[hooks.state."/h/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:aa"\n')
    assert untrust(str(tmp_path), MINE, created=True) == 1
    assert config.read_text().strip() == 'model = "gpt-5.5"'
    assert len(_backups(tmp_path)) == 1


def test_a_config_that_held_only_ours_is_left_empty_without_a_backup(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A config.toml there before the install (empty, then), holding only our entries: emptied again,
    and no backup of it written (it would hold nothing of the user's)."""
    config = tmp_path / "config.toml"
    config.write_text('[hooks.state."/h/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:aa"\n')
    assert untrust(str(tmp_path), MINE) == 1
    assert config.read_text().strip() == ""
    assert _backups(tmp_path) == []
    assert capsys.readouterr().out.splitlines() == [
        f"codex: removed the 1 trust entries the install wrote from {config}"]
