"""The config a replay folds with for a session whose folder is gone: the user's own (its keys, its
prices, the cliff `report` inferred), as the live hooks read it, not the built-in defaults; `backtest
--set` starts from the same config."""

from __future__ import annotations

from pathlib import Path

from session_watcher.base import config, paths
from session_watcher.core import prices
from session_watcher.sessions.replay import config_for, project_config, project_of
from tests.oracle import TRANSCRIPTS

USER = 'bp_red = 0.05\ngate_min_calls = 3\n\n[prices."claude-"]\ninput = 7.0\n'


def _users_config() -> None:
    user = Path(paths.user_config_file())
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(USER)
    Path(paths.cliff_file()).parent.mkdir(parents=True, exist_ok=True)
    Path(paths.cliff_file()).write_text('{"5m": 240}')


def test_a_gone_folder_folds_with_what_the_hooks_read(tmp_path: Path) -> None:
    _users_config()
    gone = tmp_path / "gone"
    assert project_of(str(gone)) is None
    live, errors = config.load_layers(None)  # what a hook in that session read (its folder had no file)
    assert errors == []
    rows = prices.user_rows()
    prices.use({})  # the replay hands the core the user's prices itself
    assert prices.user_rows() != rows
    cfg = project_config(None)
    assert cfg == live
    assert (cfg["bp_red"], cfg["gate_min_calls"], cfg["cliff"]["5m"]) == (0.05, 3, 240.0)
    assert prices.user_rows() == rows


def test_backtest_set_starts_from_the_users_config(tmp_path: Path) -> None:
    _users_config()
    gone = str(tmp_path / "gone")
    transcript = tmp_path / "s.jsonl"
    transcript.write_bytes((TRANSCRIPTS / "short.jsonl").read_bytes()
                           .replace(b"/home/marco/projects/spotter", gone.encode()))
    assert b'"cwd":"' + gone.encode() in transcript.read_bytes()
    cfg = config_for(str(transcript), {"notify_dwell": 5})
    assert cfg is not None
    assert cfg == {**config.load_layers(None)[0], "notify_dwell": 5}
