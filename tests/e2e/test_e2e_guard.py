"""The cold-cache guard inside the real client: a session whose last call was 20 minutes ago (its
transcript's timestamps moved back) is resumed; the warning reaches the user, never the model, and
in the terminal UI it is on screen before anything is sent."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest

from . import plugin
from .conftest import FIGURES
from .harness import Tmux, run_print, transcript_records
from .mock_api import MockAPI, Usage, bash, read, say

if TYPE_CHECKING:
    from pathlib import Path

    from .harness import World

pytestmark = pytest.mark.e2e

IDLE_S = 20 * 60


def move_back(transcript: Path, seconds: float, state: Path | None = None) -> None:
    """Every timestamp of the transcript `seconds` earlier: as if the user had been away that long.
    The saved `state`'s last call moves with it, as time passing would have left it (a state that
    still showed the old time would say warm: the prompt hook trusts a warm saved state)."""
    if state is not None and state.exists():
        doc = json.loads(state.read_text())
        doc["engine"]["lastTs"] -= seconds
        state.write_text(json.dumps(doc))
    out = []
    for line in transcript.read_text().splitlines():
        doc = json.loads(line)
        if isinstance(doc.get("timestamp"), str):
            t = datetime.fromisoformat(doc["timestamp"].replace("Z", "+00:00")).timestamp() - seconds
            doc["timestamp"] = datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        out.append(json.dumps(doc))
    transcript.write_text("\n".join(out) + "\n")


def input_line(screen: str) -> str:
    """The text in the prompt box (the last line starting with the prompt mark)."""
    lines = [ln for ln in screen.splitlines() if ln.startswith("❯")]
    return lines[-1][1:].strip() if lines else ""


def test_a_cold_return_is_shown_to_the_user_before_the_prompt_is_sent(claude_bin: Path, installed: World) -> None:
    world = installed
    # a session of ~31k carried (the first prompt and the file) holding 90k: x ~ 2.9, past guard_x
    first = [
        read(str(world.tracked), Usage(input_tokens=4, cache_write_5m=30_000, output_tokens=40)),
        bash("true", Usage(input_tokens=5, cache_read=30_000, cache_write_5m=60_000, output_tokens=20)),
        say("Read it.", Usage(input_tokens=5, cache_read=90_000, cache_write_5m=1_000, output_tokens=20)),
    ]
    with MockAPI(first) as api:
        run = run_print(claude_bin, world, api.base_url, "read the engine file")
    assert run.returncode == 0, run.stderr[-2000:]
    sid = run.session_id
    transcript = world.transcript(sid)
    move_back(transcript, IDLE_S, plugin.state_file(world, sid))

    # print mode, guard = "warn": a systemMessage the client shows, in no request body
    user_cfg = world.sw_home / "config" / "config.toml"  # `guard` is the user's, never a project's
    before = user_cfg.read_text()
    user_cfg.write_text('guard = "warn"\n' + before)
    try:
        with MockAPI([say("Back.", Usage(input_tokens=5, cache_write_5m=91_300, output_tokens=10))]) as api:
            again = run_print(claude_bin, world, api.base_url, "carry on", "--resume", sid)
            bodies = json.dumps([q.body for q in api.requests if q.path.startswith("/v1/messages")])
    finally:
        user_cfg.write_text(before)
    assert again.returncode == 0, again.stderr[-2000:]
    shown = [m["content"] for m in plugin.system_messages(transcript_records(transcript))]
    cold = [m for m in shown if "cold cache" in m]
    assert len(cold) == 1, shown
    # 2.1.197 has only the TTL to go by; 2.1.332's resume says prompt_cache_likely_expired itself
    assert cold[0].startswith("session-watcher: cold cache (last call 20 min ago; ")
    assert "the 5-minute cache has expired)" in cold[0] or "Claude Code says the cache has likely expired)" in cold[0]
    # the last call's whole prompt (5 + 90,000 read + 1,000 written), at the 5-minute write price
    assert "instead of re-writing 91k ($" in cold[0]
    assert "cold cache" not in bodies

    # terminal UI, the default guard ("ask"): the prompt is held back with the three choices priced,
    # nothing is sent, the prompt is back in the input box, and sending it again goes ahead
    move_back(transcript, IDLE_S, plugin.state_file(world, sid))
    tmux = Tmux(world.root)
    try:
        with MockAPI([say("Back again.", Usage(input_tokens=5, cache_write_5m=92_000, output_tokens=10))]) as api:
            tmux.start([str(claude_bin), "--resume", sid, "--dangerously-skip-permissions"],
                       world.env(api.base_url), world.project)
            tmux.wait_for(lambda s: "❯" in s, 60, "the prompt")
            tmux.type("carry on please")
            screen = tmux.wait_for(lambda s: "/clear, would" in _joined(s), 30, "the guard's reason")
            text = _joined(screen)
            assert "blocked by hook" in text
            assert "session-watcher: cold cache (last call 20 min ago" in text
            assert re.search(r"Continue: send this prompt again within a minute, re-writing 91k tokens \(\$\d", text)
            assert re.search(r"Or /compact: reads the same 91k cold once \(\$\d", text)
            assert re.search(r"Or a fresh session: ! session-watcher handoff, then /clear, would \w+ ~\d+k "
                             r"tokens \(\$\d", text)
            messages = [q for q in api.requests if q.path.startswith("/v1/messages")]
            assert api.main_served() == []  # on screen, and nothing sent
            FIGURES["guard ask"] = (f"{len(api.main_served())} conversation requests and {len(messages)} "
                                    "/v1/messages requests of any kind reached the mock while the prompt was held")
            assert input_line(screen) == "carry on please"  # 2.1.332 puts the prompt back
            tmux.key("Enter")
            tmux.wait_for(lambda s: "Back again." in s, 60, "the reply to the prompt sent again")
            assert len(api.main_served()) == 1
    finally:
        tmux.kill()


def _joined(screen: str) -> str:
    """The screen's text with the client's line wrapping undone (a long reason spans several rows)."""
    return re.sub(r"\s*\n\s*", " ", screen)
