"""The cold-cache guard inside the real client: a session whose last call was 20 minutes ago (its
transcript's timestamps moved back) is resumed; the warning reaches the user, never the model, and
in the terminal UI it is on screen before anything is sent."""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest

from . import plugin
from .conftest import FIGURES
from .harness import Tmux, run_print, transcript_records
from .mock_api import LoggedRequest, MockAPI, Turn, Usage, bash, read, say

if TYPE_CHECKING:
    from pathlib import Path

    from .harness import World

pytestmark = pytest.mark.e2e

IDLE_S = 20 * 60


def move_back(world: World, sid: str, seconds: float) -> float:
    """Every timestamp of the session's transcript `seconds` earlier: as if the user had been away that
    long. The saved state's last call moves with it, as time passing would have left it (a state that
    still showed the old time would say warm: the prompt hook trusts a warm saved state), and so does
    the expiry the status line was told for it (the terminal UI's). The state is caught up first (no
    hook still folding saves over the moved one) and again after: the rewritten transcript is not the
    one the state's cursor read, and its next fold starts over from the whole transcript, which the
    prompt hook (0.4 s of folding, the guard priced only once caught up) may not finish on a busy
    machine; time passing rewrites nothing, and the hooks and status-line refreshes of those minutes
    would have left the state caught up. Both files are rewritten under the session's lock (a hook
    of the client just gone that still runs saves before or after, never over them). The last
    call's time as the state then says (epoch seconds)."""
    from session_watcher.state.lock import SessionLock

    transcript, state = world.transcript(sid), plugin.state_file(world, sid)
    plugin.caught_up(world, sid, transcript)
    with SessionLock(str(state) + ".lock", 60):
        doc = json.loads(state.read_text())
        doc["engine"]["lastTs"] -= seconds
        cache = doc["context"].get("promptCache")  # what the status line was told, of the same call
        if isinstance(cache, dict) and isinstance(cache.get("expires_at"), int | float):
            cache["expires_at"] -= seconds
        state.write_text(json.dumps(doc))
        out = []
        for line in transcript.read_text().splitlines():
            doc = json.loads(line)
            if isinstance(doc.get("timestamp"), str):
                t = datetime.fromisoformat(doc["timestamp"].replace("Z", "+00:00")).timestamp() - seconds
                doc["timestamp"] = (datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds")
                                    .replace("+00:00", "Z"))
            out.append(json.dumps(doc))
        transcript.write_text("\n".join(out) + "\n")
    plugin.caught_up(world, sid, transcript)
    return float(json.loads(state.read_text())["engine"]["lastTs"])


def minutes_away(world: World, sid: str, last: float, sent: float, seen: float) -> range:
    """The idle minutes the guard may say (core.numbers.duration: whole minutes, half up, from 10
    minutes on) for a prompt sent after `sent` and shown by `seen` (epoch seconds), the last call at
    `last`: 20 minutes moved back, plus however long the client took to start and the hook to run.
    Where the client's resume said how long the session had been idle (2.1.332's SessionStart, kept
    in the state), the guard counts from that instead (core.guard.cold_cache)."""
    resume = json.loads(plugin.state_file(world, sid).read_text())["context"].get("resume")
    if isinstance(resume, dict) and resume.get("expired") is True and resume.get("lastTs") == last \
            and all(isinstance(resume.get(k), int | float) for k in ("seconds", "at")):
        last = resume["at"] - resume["seconds"]
    return range(int((sent - last + 30) // 60), int((seen - last + 30) // 60) + 1)


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
    last = move_back(world, sid, IDLE_S)

    # print mode, guard = "warn": a systemMessage the client shows, in no request body
    user_cfg = world.sw_home / "config" / "config.toml"  # `guard` is the user's, never a project's
    before = user_cfg.read_text()
    user_cfg.write_text('guard = "warn"\n' + before)
    try:
        with MockAPI([say("Back.", Usage(input_tokens=5, cache_write_5m=91_300, output_tokens=10))]) as api:
            sent = time.time()
            again = run_print(claude_bin, world, api.base_url, "carry on", "--resume", sid)
            seen = time.time()
            bodies = json.dumps([q.body for q in api.requests if q.path.startswith("/v1/messages")])
    finally:
        user_cfg.write_text(before)
    assert again.returncode == 0, again.stderr[-2000:]
    shown = [m["content"] for m in plugin.system_messages(transcript_records(transcript))]
    cold = [m for m in shown if "cold cache" in m]
    assert len(cold) == 1, shown
    # 2.1.197 has only the TTL to go by; 2.1.332's resume says prompt_cache_likely_expired itself
    away = re.match(r"session-watcher: cold cache \(last call (\d+) min ago; ", cold[0])
    assert away is not None, cold[0]
    assert int(away.group(1)) in minutes_away(world, sid, last, sent, seen), (cold[0], last, sent, seen)
    assert "the 5-minute cache has expired)" in cold[0] or "Claude Code says the cache has likely expired)" in cold[0]
    # the last call's whole prompt (5 + 90,000 read + 1,000 written) but the 30,000 shared prefix it
    # still reads (the first call's own... none here: the first call read nothing), at the 5-minute price
    assert re.search(r"this prompt re-writes 91k tokens \(\$\d", cold[0])
    assert "cold cache" not in bodies

    # terminal UI, the default guard ("ask"): the prompt is held back with the three choices priced,
    # nothing is sent, the prompt is back in the input box, and sending it again goes ahead (and drops
    # the handoff the hold prepared)
    last = move_back(world, sid, IDLE_S)
    tmux = Tmux(world.root)
    try:
        with MockAPI([say("Back again.", Usage(input_tokens=5, cache_write_5m=92_000, output_tokens=10))]) as api:
            tmux.start([str(claude_bin), "--resume", sid, "--dangerously-skip-permissions"],
                       world.env(api.base_url), world.project)
            tmux.wait_for(lambda s: "❯" in s, 60, "the prompt")
            sent = time.time()
            tmux.type("carry on please")
            screen = tmux.wait_for(lambda s: "starts with it" in _joined(s), 30, "the guard's reason")
            seen = time.time()
            text = _joined(screen)
            assert "blocked by hook" in text
            # the last: the history the resumed client shows holds the print-mode return's warning too
            shown_away = re.findall(r"session-watcher: cold cache \(last call (\d+) min ago", text)
            assert shown_away, text
            assert int(shown_away[-1]) in minutes_away(world, sid, last, sent, seen), (text, last, sent, seen)
            assert re.search(r"Continue: send this prompt again within a minute, re-writing 91k tokens \(\$\d", text)
            assert re.search(r"Or /compact: reads all 91k of the context cold once \(\$\d", text)
            less = re.search(r"Or a fresh session, (\$[\d.]+) less over the next ~\d+ calls(?:, until the automatic "
                             r"compaction)?: a handoff is ready; "
                             r"clear the input line \(Ctrl\+U\), then /clear, and the new session starts with it: "
                             r"it \w+ ~\d+k tokens \(\$\d", text)
            assert less is not None, text
            assert "session-watcher handoff" not in text
            assert len(pending(world)) == 1
            # one price: the status line the client draws for the same call (the state the hold left:
            # the cache cold, the restart at the prepared handoff's K) says the same dollars; a line
            # drawn before the hold priced the restart at the model's K, so wait for the redraw
            saves = f"restart saves {less.group(1)}"
            redrawn = tmux.wait_for(lambda s: re.search(re.escape(saves) + r"( |$)", s, re.M) is not None, 60,
                                    f"the status line saying '{saves}'")
            assert re.search(r"● \w+: " + re.escape(saves), redrawn), redrawn
            FIGURES["one price at a cold return"] = (f"the held prompt's reason and the status line drawn then both "
                                                     f"say a restart saves {less.group(1)}")
            messages = [q for q in api.requests if q.path.startswith("/v1/messages")]
            assert api.main_served() == []  # on screen, and nothing sent
            FIGURES["guard ask"] = (f"{len(api.main_served())} conversation requests and {len(messages)} "
                                    "/v1/messages requests of any kind reached the mock while the prompt was held")
            assert input_line(screen) == "carry on please"  # 2.1.332 puts the prompt back
            tmux.key("Enter")
            tmux.wait_for(lambda s: "Back again." in s, 60, "the reply to the prompt sent again")
            assert len(api.main_served()) == 1
            assert pending(world) == []
    finally:
        tmux.kill()


def pending(world: World) -> list[Path]:
    """The handoffs waiting for a fresh session in this world."""
    return sorted((world.sw_home / "state" / "handoffs" / "pending").glob("*.json"))


class Sized:
    """The mock's answers with usage measured from each request body (4 characters a token): a
    session's first request writes all it sends, a later one reads what the one before sent and
    writes the rest. So what a request writes is what the client really sent, not a scripted number."""

    def __init__(self, turns: list[Turn]) -> None:
        self.turns = list(turns)
        self.totals: list[int] = []
        self.last = 0

    def __call__(self, body: Any) -> Turn:
        total = len(json.dumps(body)) // 4
        first = len(body.get("messages") or []) <= 1 if isinstance(body, dict) else True
        read = 0 if first else min(self.last, total)
        self.last = total
        self.totals.append(total)
        turn = self.turns.pop(0) if self.turns else say("Done.", Usage())
        usage = Usage(input_tokens=3, cache_read=read, cache_write_5m=max(0, total - read - 3), output_tokens=20)
        return Turn(turn.blocks, usage, turn.label)


def test_a_held_cold_return_then_clear_alone_writes_what_the_guard_priced(claude_bin: Path, installed: World,
                                                                         tmp_path: Path) -> None:
    """Issue 37: the guard's fresh session costs what it says. A session in the terminal UI, left for
    20 minutes (its timestamps moved back), resumed: the cold return is held; the input line is
    cleared, `/clear` typed, and the fresh session's first prompt sent. No request reaches the mock
    between the hold and that prompt, the fresh session starts with the handoff the guard prepared,
    and its first request writes the carry the guard priced, within 10 %."""
    world = installed
    out = "x" * 20_000  # command output: context the work had, not a file a restart carries
    sized = Sized([bash(f"printf '%s' {out}", Usage()), bash(f"printf '%s' {out}", Usage()),
                   bash(f"printf '%s' {out}", Usage()), say("Done reading.", Usage())])
    child_sized = Sized([say("Carrying on.", Usage())])
    tmux = Tmux(tmp_path)
    try:
        with MockAPI([], fallback=sized) as api:
            tmux.start([str(claude_bin), "--dangerously-skip-permissions"], world.env(api.base_url), world.project)
            tmux.wait_for(lambda s: "❯" in s, 60, "the prompt")
            tmux.type("print the outputs")
            tmux.wait_for(lambda s: "Done reading." in s, 120, "the first turn's reply")
            tmux.type("/exit")  # SessionEnd folds the rest
            tmux.wait_for(lambda s: not s.strip(), 60, "the client's exit")
            sid = next(x for x in (_sid(q) for q in api.requests if q.kind == "main") if x)
        tmux.kill()
        move_back(world, sid, IDLE_S)
        with MockAPI([], fallback=child_sized) as api:
            tmux.start([str(claude_bin), "--resume", sid, "--dangerously-skip-permissions"],
                       world.env(api.base_url), world.project)
            tmux.wait_for(lambda s: "❯" in s, 60, "the prompt")
            tmux.type("go on please")
            screen = tmux.wait_for(lambda s: "the new session starts with it" in _joined(s), 30, "the guard's reason")
            reason = _joined(screen)
            priced = re.search(r"it \w+ ~(\d+)k tokens", reason)
            assert priced is not None, reason
            [held] = pending(world)
            doc = json.loads(held.read_text())
            assert (doc["parentSession"], doc["by"]) == (sid, "guard")
            assert int(priced.group(1)) == round(doc["carryTokens"] / 1000)
            assert input_line(screen) == "go on please"
            asked = len(api.requests)
            tmux.key("C-u")  # the held prompt out of the input line, as the reason says
            tmux.wait_for(lambda s: input_line(s) == "", 10, "an empty input line")
            tmux.type("/clear")
            tmux.wait_for(lambda s: "Nothing was sent" not in _joined(s), 30, "the cleared screen")
            tmux.type("carry on")
            tmux.wait_for(lambda s: "Carrying on." in s, 90, "the fresh session's first reply")
            after = api.requests[asked:]
    finally:
        tmux.kill()
    assert pending(world) == []  # taken by the fresh session
    messages = [q for q in after if q.path.startswith("/v1/messages")]
    first = messages[0]  # nothing went to the model between the hold and the fresh session's prompt
    assert first.kind == "main"
    assert _sid(first) not in (None, sid)
    sent = json.dumps(first.body)
    assert f"[session-watcher handoff from session {sid}, written " in sent
    assert f"priced at {doc['carryTokens']:,} tokens" in sent
    written = child_sized.totals[0]  # all of it written: a session's first request
    FIGURES["guard handoff"] = (f"the guard priced the fresh session at {doc['carryTokens']:,} tokens; its first "
                                f"request wrote {written:,} ({written / doc['carryTokens']:.3f}); no request "
                                f"between the hold and it ({len(after)} requests after the hold in all)")
    assert abs(written / doc["carryTokens"] - 1) <= 0.10


def _sid(q: LoggedRequest) -> str | None:
    return q.headers.get("X-Claude-Code-Session-Id") or q.headers.get("x-claude-code-session-id")


def _joined(screen: str) -> str:
    """The screen's text with the client's line wrapping undone (a long reason spans several rows)."""
    return re.sub(r"\s*\n\s*", " ", screen)
