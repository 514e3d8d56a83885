"""The plugin inside the real client: installed with ./install.sh, driven by the scripted mock.

One print-mode overstay session (tests/e2e/scenario.py) is run once and then questioned from
several sides; the terminal UI test runs its own session for the status line and /compact.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.sessions.replay import replay

from . import plugin
from .harness import PLUGIN, REPO, Tmux, make_world, run_print, transcript_records, usage_by_message
from .mock_api import MockAPI, Served, Usage, read, say
from .scenario import FLOOR, GATE_CALL, MISS_CALLS, MODEL, N_CALLS, expected_rows, overstay_turns, overstay_usages
from .spec_model import Row, read_tokens

if TYPE_CHECKING:
    from pathlib import Path

    from .harness import PrintRun, World
    from .mock_api import LoggedRequest

pytestmark = pytest.mark.e2e


@dataclass
class Session:
    run: PrintRun
    served: list[Served]
    requests: list[LoggedRequest]
    records: list[dict[str, Any]]
    doc: dict[str, Any]


@pytest.fixture(scope="session")
def overstay(claude_bin: Path, installed: World) -> Session:
    with MockAPI(overstay_turns(installed)) as api:
        run = run_print(claude_bin, installed, api.base_url, "do the scripted work", "--model", MODEL)
        served = api.main_served()
        requests = list(api.requests)
        unscripted = api.unscripted
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.result["num_turns"] == N_CALLS
    assert unscripted == 0
    records = transcript_records(installed.transcript(run.session_id))
    return Session(run, served, requests, records, plugin.status(installed, run.session_id))


def _oracle(doc: dict[str, Any]) -> list[Row]:
    """The SPEC oracle's walk, with the plugin's own estimates of the two files read."""
    est = sorted((b["included"], b["tokens"]) for b in doc["buckets"] if b["type"] == "file")
    assert len(est) == 2, est  # [(False, ignored), (True, tracked)]
    return expected_rows(est_tracked=est[1][1], est_ignored=est[0][1])


# -- install ----------------------------------------------------------------------------------


def test_install_sh_registers_hooks_and_status_line_keeping_user_settings(installed: World) -> None:
    settings = json.loads((installed.config / "settings.json").read_text())
    venv = str(plugin.cli(installed).parent.parent)
    for event in plugin.HOOK_EVENTS:
        hooks = [h for g in settings["hooks"][event] for h in g["hooks"]]
        assert len(hooks) == (2 if event == "SessionStart" else 1), (event, hooks)
        assert hooks[0]["command"] == venv + "/bin/python", hooks  # the private venv, not a PATH lookup
        assert hooks[0]["args"][-1] == event, hooks  # the exec form: no shell
        assert hooks[0].get("async", False) is (event not in plugin.SYNC_EVENTS), hooks
    # SessionStart's second hook, synchronous: a fresh session's pending handoff, as additional context
    inject = [h for g in settings["hooks"]["SessionStart"] for h in g["hooks"]][1]
    assert inject["args"][-2:] == ["SessionStart", "inject"]
    assert "async" not in inject
    assert settings["statusLine"]["command"].startswith(venv + "/")
    assert "statusline" in settings["statusLine"]["command"]
    assert settings["skipDangerousModePermissionPrompt"] is True  # the user's own key survived


# -- the overstay session, print mode ---------------------------------------------------------


def test_state_exists_under_the_session_id(installed: World, overstay: Session) -> None:
    sid = overstay.run.session_id
    path = plugin.state_file(installed, sid)
    assert path.exists()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    state = json.loads(path.read_text())
    assert state["sessionId"] == sid
    assert overstay.doc["sessionId"] == sid
    assert overstay.doc["calls"] == N_CALLS
    assert overstay.doc["model"] == overstay.requests[-1].body["model"]


def test_token_usage_equals_what_the_mock_served(overstay: Session) -> None:
    served = [s.usage for s in overstay.served]
    assert len(served) == N_CALLS
    assert overstay.doc["tokenUsage"] == {
        "uncachedInput": sum(u.input_tokens for u in served),
        "output": sum(u.output_tokens for u in served),
        "cacheRead": sum(u.cache_read for u in served),
        "cacheWrite": sum(u.cache_write for u in served),
        "cacheWrite5m": sum(u.cache_write_5m for u in served),
        "cacheWrite1h": sum(u.cache_write_1h for u in served),
        "calls": N_CALLS,
    }
    # and the transcript the client wrote holds those numbers once per message id
    by_id = usage_by_message(overstay.records)
    assert sorted(by_id) == sorted(s.message_id for s in overstay.served)


def test_read_file_is_in_b_default_and_the_gitignored_file_is_not(installed: World, overstay: Session) -> None:
    doc = overstay.doc
    files = {b["path"]: b for b in doc["buckets"] if b["type"] == "file"}
    assert set(files) == {str(installed.tracked), str(installed.ignored)}
    tracked, ignored = files[str(installed.tracked)], files[str(installed.ignored)]
    assert tracked["defaultDiscardReason"] is None
    assert tracked["included"] is True
    assert ignored["defaultDiscardReason"] == "gitignore"
    assert ignored["included"] is False
    # about its token count: the Read result's characters at the SPEC's default ratio
    for bucket, est in (
        (tracked, read_tokens(installed.tracked.read_text())),
        (ignored, read_tokens(installed.ignored.read_text())),
    ):
        assert 0.75 * est <= bucket["tokens"] <= 1.25 * est
        assert bucket["calibration"] == 0  # the scripted L growth settled every estimate
    first = overstay_usages()[0]
    floor = first.input_tokens + first.cache_read + first.cache_write  # the whole first prompt
    system = [b for b in doc["buckets"] if b["type"] == "system"]
    assert [b["tokens"] for b in system] == [floor]
    assert doc["floor"] == floor
    assert doc["shared"] == FLOOR  # what the first call read from earlier sessions' cache
    assert doc["bDefault"] == floor + tracked["tokens"]
    assert doc["bFull"] == floor + tracked["tokens"] + ignored["tokens"]


def test_l_follows_the_scripted_usage_across_cache_misses(overstay: Session) -> None:
    doc = overstay.doc
    usages = overstay_usages()
    last = usages[-1]
    assert N_CALLS in MISS_CALLS
    # the last call was a cache miss: L is cr + cw (continuous), not the 2,000 tokens of cr
    assert doc["L"] == last.cache_read + last.cache_write == expected_rows()[-1].L
    assert doc["L"] > 50 * last.cache_read
    assert doc["x"] == pytest.approx(doc["L"] / doc["bDefault"], abs=1e-6)
    assert doc["contextPressure"]["pressureTokens"] == last.input_tokens + last.cache_read + last.cache_write


def test_gate_trips_at_the_scripted_call_and_the_alert_reaches_the_user(
    claude_bin: Path, installed: World, overstay: Session
) -> None:
    doc = overstay.doc
    rows = _oracle(doc)
    want = rows[GATE_CALL - 1]
    assert want.gate

    gates = [a for a in doc["alerts"] if a["kind"] == "gate"]
    assert len(gates) == 1
    alert = gates[0]
    assert alert["call"] == GATE_CALL
    assert alert["sessionId"] == overstay.run.session_id
    assert alert["L"] == want.L  # continuous across the cache miss at call 13
    assert alert["bDefault"] == want.b_default
    assert alert["x"] == pytest.approx(want.x, rel=1e-9)
    assert alert["xSweet"] == pytest.approx(want.x_sweet, rel=1e-9)
    assert alert["br"] == pytest.approx(want.bp, rel=1e-9)
    assert alert["lamp"] == want.lamp == "amber"
    assert doc["lamp"] == rows[-1].lamp == "amber"
    assert doc["dwell"]["alerted"] is True

    # live equals replay: the finished transcript, replayed, fires the gate at the same call
    _doc, trace = replay(str(installed.transcript(overstay.run.session_id)), cwd=str(installed.project))
    assert [(r["call"], a["kind"]) for r in trace for a in r["alerts"]][:1] == [(GATE_CALL, "gate")]

    # the hooks that ran during the turn are async: they printed nothing (their output would have
    # gone to the model), and the message waits in the state for the next synchronous hook
    assert not [m for m in plugin.system_messages(overstay.records) if "session-watcher" in m["content"]]
    assert not [r for r in overstay.records if (r.get("attachment") or {}).get("type") == "async_hook_response"]
    # the next prompt's UserPromptSubmit hook shows it to the user, once
    after = Usage(input_tokens=4, cache_read=overstay_usages()[-1].cache_read + overstay_usages()[-1].cache_write,
                  cache_write_5m=60, output_tokens=9)
    with MockAPI([say("Carrying on.", after, "after the gate")]) as api:
        more = run_print(claude_bin, installed, api.base_url, "carry on", "--resume", overstay.run.session_id,
                         "--model", MODEL)
        requests = list(api.requests)
    assert more.returncode == 0, more.stderr[-2000:]
    records = transcript_records(installed.transcript(overstay.run.session_id))
    ours = [m for m in plugin.system_messages(records) if "session-watcher" in m["content"]]
    assert len(ours) == 1, ours
    assert ours[0]["hookEvent"] == "UserPromptSubmit"
    assert "costs more than a fresh start" in ours[0]["content"]
    assert "A fresh session would carry" in ours[0]["content"]
    # shown to the user only: the model never saw it
    for q in [*overstay.requests, *requests]:
        if q.kind == "main":
            assert "costs more than a fresh start" not in json.dumps(q.body)


# -- the terminal UI: status line and /compact ------------------------------------------------


def test_terminal_ui_status_line_shows_the_lamp_and_compact_starts_a_new_segment(
    claude_bin: Path, installed: World
) -> None:
    after = Usage(input_tokens=4, cache_read=8_000, cache_write_5m=1_200, output_tokens=20)
    turns = [*overstay_turns(installed), say("Back after compaction.", after, "after compact")]
    compact_usage = Usage(input_tokens=3, cache_read=140_000, cache_write_5m=500, output_tokens=300)
    tmux = Tmux(installed.root)
    with MockAPI(turns, compact_usage=compact_usage) as api:
        env = installed.env(api.base_url, TERM="xterm-256color", COLUMNS="200")
        try:
            tmux.start([str(claude_bin), "--dangerously-skip-permissions", "--model", MODEL], env, installed.project)
            tmux.wait_for(lambda s: "❯" in s, 60, "the prompt")
            tmux.type("do the scripted work")
            tmux.wait_for(lambda s: "Finished the scripted work." in s, 90, "the scripted turn's end")
            sid = _session_of(api)
            # the client may still be writing the last call's lines when its reply is on screen
            doc = _wait_status(installed, sid, lambda d: d["calls"] == N_CALLS, 120)
            assert doc["calls"] == N_CALLS
            assert doc["lamp"] == "amber"
            # the saving after the last call, in dollars at Opus 4.6's cache-read price ($5/MTok x
            # 0.1), as the alerts round them. A line drawn while the hooks were behind (one held the
            # lock at the redraw, or the line's own fold ran out of its budget) shows an earlier
            # call's, the state as then saved; the client redraws it every refreshInterval seconds
            # (install.sh's 15), from the caught-up state, so wait for that redraw
            rows = _oracle(doc)
            final = f"{int(rows[-1].saving * 0.5 / 1e6 * 100 + 0.5) / 100:.2f}"
            screen = tmux.wait_for(lambda s: f"● amber: restart saves ${final} · " in s, 60,
                                   f"the amber lamp in the status line saying ${final}")
            assert " bp" not in screen  # the model's internals only with --verbose
            # the client's prompt_cache (2.1.332+): the countdown to the cache's expiry (5-minute writes)
            m = re.search(r"cache (\d):(\d\d)", screen)
            assert m is not None, screen
            assert int(m.group(1)) * 60 + int(m.group(2)) <= 300

            tmux.type("/compact")
            tmux.wait_for(lambda s: "Compacted" in s, 60, "the compaction")
            tmux.type("carry on")
            tmux.wait_for(lambda s: "Back after compaction." in s, 60, "the reply after compaction")
            doc2 = _wait_status(installed, sid, lambda d: d["calls"] == N_CALLS + 1)
            try:
                tmux.wait_for(lambda s: "○ white" in s, 10, "the white lamp of a fresh segment")
            except AssertionError:
                # the last redraw came while the Stop hook held the session lock, so the line shows
                # the state as last saved; a permission-mode change (shift+tab) redraws it
                tmux.key("BTab")
                tmux.wait_for(lambda s: "○ white" in s, 20, "the white lamp of a fresh segment")
        finally:
            tmux.kill()
        kinds = [q.kind for q in api.requests]
    assert kinds.count("compact") >= 1  # 2.1.332 sent two summary requests for one /compact here
    assert doc2["segment"] == 1
    assert doc2["compactions"] == 1
    assert doc2["floor"] == 4 + 8_000 + 1_200  # the new segment's first call sets its own floor: its whole prompt
    assert doc2["L"] == 8_000
    assert [b["type"] for b in doc2["buckets"]] == ["system"]  # the path map starts over
    assert doc2["lamp"] == "white"
    # token usage is durable across compaction
    assert doc2["tokenUsage"]["cacheRead"] >= sum(u.cache_read for u in overstay_usages()) + 8_000


def _session_of(api: MockAPI) -> str:
    ids = {
        q.headers.get("X-Claude-Code-Session-Id") or q.headers.get("x-claude-code-session-id")
        for q in api.requests
        if q.kind == "main"
    }
    ids.discard(None)
    assert len(ids) == 1, ids
    return str(ids.pop())


def _wait_status(world: World, sid: str, ok: Any, timeout: float = 20) -> dict[str, Any]:
    import time

    deadline = time.monotonic() + timeout
    doc = plugin.status(world, sid)
    while not ok(doc) and time.monotonic() < deadline:
        time.sleep(0.25)
        doc = plugin.status(world, sid)
    return doc


# -- the plugin route -------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["marketplace", "plugin"])
def test_claude_plugin_validate_accepts_the_repository(claude_bin: Path, tmp_path: Path, target: str) -> None:
    """The repository is a marketplace; its plugin is the package's folder."""
    world = make_world(tmp_path)
    import subprocess

    proc = subprocess.run(
        [str(claude_bin), "plugin", "validate", str(REPO if target == "marketplace" else PLUGIN)],
        env=world.env("http://127.0.0.1:9"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Validation passed" in proc.stdout


def test_plugin_dir_session_runs_the_same_hooks(claude_bin: Path, tmp_path: Path) -> None:
    world = make_world(tmp_path)
    plugin.write_config(world)
    warmup = [say("Hello.", Usage(input_tokens=4, cache_read=15_000, cache_write_5m=200, output_tokens=5))]
    with MockAPI(warmup) as api:
        first = run_print(claude_bin, world, api.base_url, "hello", "--plugin-dir", str(PLUGIN))
    assert first.returncode == 0, first.stderr[-2000:]
    binary = plugin.wait_for_plugin_venv(world)  # the first hook run bootstraps the plugin's venv

    script = [
        read(str(world.tracked), Usage(input_tokens=4, cache_read=15_000, cache_write_5m=150, output_tokens=30)),
        say("Read it.", Usage(input_tokens=5, cache_read=15_150, cache_write_5m=1_100, output_tokens=9)),
    ]
    with MockAPI(script) as api:
        run = run_print(claude_bin, world, api.base_url, "read the engine", "--plugin-dir", str(PLUGIN))
        served = api.main_served()
    assert run.returncode == 0, run.stderr[-2000:]
    sid = run.session_id
    assert plugin.state_file(world, sid).exists()
    doc = plugin.status(world, sid, binary)
    assert doc["tokenUsage"]["cacheRead"] == 15_000 + 15_150
    assert doc["tokenUsage"]["cacheWrite"] == 150 + 1_100
    assert doc["tokenUsage"]["calls"] == len(served) == 2
    files = [b for b in doc["buckets"] if b["type"] == "file"]
    assert [(b["path"], b["defaultDiscardReason"]) for b in files] == [(str(world.tracked), None)]
    assert doc["floor"] == 4 + 15_000 + 150  # the first prompt, read and written parts
    # no settings.json hooks were involved: only the plugin's hooks.json
    settings = json.loads((world.config / "settings.json").read_text())
    assert "hooks" not in settings
    assert os.path.samefile(binary.parent.parent.parent, plugin.plugin_data_dir(world))
