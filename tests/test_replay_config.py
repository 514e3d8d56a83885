"""The config a replay folds with for a session whose folder is gone: the user's own (its keys, its
prices, the cliff `report` inferred), as the live hooks read it, not the built-in defaults; `backtest
--set` starts from the same config."""

from __future__ import annotations

from pathlib import Path

import pytest

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


@pytest.mark.slow  # starts the CLI, the hooks and a collector
def test_a_users_config_that_cannot_be_used_is_left_out_as_the_hooks_left_it_out(tmp_path: Path) -> None:
    """A session whose folder is gone, the user's config not TOML: the live hooks fold it without
    that file (and log why); `replay`, `status`, `backtest` and `export` fold it the same (their
    figures those of no user config at all), exit 0 and say once on stderr that the config was left
    out and why; `config` still names the bad file as its error (exit 1)."""
    import json

    from tests.oracle import hook, payload, stop_until_read, sw
    from tests.otlp_receiver import Receiver

    gone = str(tmp_path / "gone")
    transcript = tmp_path / "s.jsonl"
    transcript.write_bytes((TRANSCRIPTS / "subagent.jsonl").read_bytes()
                           .replace(b"/home/marco/projects/spotter", gone.encode()))
    commands = [["replay", "--json", str(transcript)], ["status", "--json", str(transcript)],
                ["backtest", "--json", str(transcript)]]

    def figures(out: bytes) -> dict[str, object]:
        """The document, less what `status` prices at the clock's time (the cache's age)."""
        doc = json.loads(out)
        doc.pop("coldCache", None)
        return doc  # type: ignore[no-any-return]

    want = [figures(sw(*args).stdout) for args in commands]  # no user config: the built-in defaults
    user = Path(paths.user_config_file())
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("gate_min_calls = [\n")
    for args, doc in zip(commands, want, strict=True):
        proc = sw(*args)
        assert proc.returncode == 0, proc.stderr
        assert figures(proc.stdout) == doc, args
        said = proc.stderr.decode()
        assert said.count("session-watcher:") == 1, said  # once, in doctor's words (config.left_out)
        assert "the file is left out (none of its settings apply)" in " ".join(said.split()), said
        assert f"{user}: not valid TOML" in " ".join(said.split()), said  # wrapped as every message
    sid = "left-out"
    live = tmp_path / f"{sid}.jsonl"
    live.write_bytes(transcript.read_bytes())
    assert hook("SessionStart", payload(sid, live, "SessionStart", cwd=gone)).returncode == 0
    stop_until_read(sid, live)
    replayed = json.loads(sw("replay", "--json", str(live)).stdout)
    saved = json.loads(sw("status", "--json", sid).stdout)
    assert {k: saved[k] for k in ("calls", "L", "tokenUsage", "advice")} == {
        k: replayed[k] for k in ("calls", "L", "tokenUsage", "advice")}
    with Receiver() as r:
        proc = sw("export", "--otlp", r.url, "--projects", str(tmp_path))
        assert proc.returncode == 0, proc.stderr
        assert " ".join(proc.stderr.decode().split()).count("the file is left out (none of its settings apply)") == 1
        assert {p.attributes["session.id"] for p in r.points("session_watcher.calls")} == {"s", sid}
    proc = sw("config")
    assert proc.returncode == 1
    assert f"{user}: not valid TOML" in " ".join(proc.stderr.decode().split())
