"""The width a command's text keeps within: COLUMNS, else the terminal's, else 80."""

from __future__ import annotations

from session_watcher.core.text import columns


def test_columns_env_first_then_terminal_then_80() -> None:
    assert columns("100", 200) == 100
    assert columns(None, 132) == 132
    assert columns(None, None) == 80
    assert columns("wide", None) == 80  # not a number: as if unset
    assert columns("0", None) == 80
    assert columns("12", None) == 40  # a table cannot be read narrower
