"""The width a command's text keeps within: COLUMNS, else the terminal's, else 80."""

from __future__ import annotations

import pytest

from session_watcher.core.text import columns


def test_columns_env_first_then_terminal_then_80() -> None:
    assert columns("100", 200) == 100
    assert columns(None, 132) == 132
    assert columns(None, None) == 80
    assert columns("wide", None) == 80  # not a number: as if unset
    assert columns("0", None) == 80
    assert columns("12", None) == 40  # a table cannot be read narrower


def _widths(*args: str, columns: str | None) -> int:
    import os

    from tests.oracle import sw

    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    proc = sw(*args, env=env)
    assert proc.returncode in (0, 1), proc.stderr
    return max(len(line) for line in proc.stdout.decode().splitlines())


@pytest.mark.slow
def test_every_text_command_within_columns() -> None:
    """status (130 columns at COLUMNS=100 before), replay, health, backtest, notify --test: within
    COLUMNS, and within 80 when it is unset and stdout is no terminal; status's continuation lines
    under its values."""
    from tests.oracle import TRANSCRIPTS

    t = str(TRANSCRIPTS / "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
    for args in (("status", t), ("status", t, "--verbose"), ("replay", t), ("health", t), ("backtest", t),
                 ("notify", "--test", "--channel", "message")):
        assert _widths(*args, columns="100") <= 100, args
        assert _widths(*args, columns=None) <= 80, args
        assert _widths(*args, columns="60") <= 60, args


def test_fit_wraps_under_the_value() -> None:
    from session_watcher.core.text import fit

    assert fit("lamp     amber: restart; a fresh session now saves about $0.43 over the next stretch", 40) == (
        "lamp     amber: restart; a fresh session\n"
        "         now saves about $0.43 over the\n"
        "         next stretch")
    assert fit("short\n  and short", 40) == "short\n  and short"
    assert fit("Context health: B (score 80/100) and a long tail of words", 30) == (
        "Context health: B (score\n  80/100) and a long tail of\n  words")
