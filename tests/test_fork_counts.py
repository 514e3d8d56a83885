"""`replay`, `status`, `backtest` and the session page of a fork count its own calls only, and say so.

A fork (`claude --resume ID --fork-session`, `/branch`) begins with copies of its parent's calls,
each naming the session that made it (`agents.claude_code.transcript.made_by`). Its fold reads them
(the context is the fork's all the same: L, B, growth, segment start), but its figures leave them
out, as `report` and the OTLP counters do: `calls` and `tokenUsage` hold them and say how many and
how much (`inheritedCalls`, `inheritedTo`, `inheritedUsage`, made by `forkedFrom`), the text shows
the fork's own and a line that says what it left out, the backtest prices the fork's own calls and
restarts after one of them only (the copies' advice was the parent's). The real fork is the real
client's (2.1.332, tests/fixtures/real-client-2.1.332/fork: the parent made 5 calls, the fork copies
the first 4 and makes 1); the closed loop's case marks the first calls of a real session with alerts
as copies, as the client writes them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from session_watcher.core.segment import _price
from session_watcher.core.status import own_calls, own_usage
from session_watcher.core.statustext import status_text
from session_watcher.sessions import backtest as shell
from session_watcher.sessions.replay import replay
from tests.oracle import FIXTURES, TRANSCRIPTS

if TYPE_CHECKING:
    from pathlib import Path

FORK = FIXTURES / "real-client-2.1.332" / "fork" / "projects" / "-home-dev-proj"
PARENT = "59f3783b-fd38-4563-9820-250620846abd"
CHILD = "703fbb53-83ed-4907-ae6b-d4c8f3285559"
FORK_KEYS = ("inheritedCalls", "inheritedTo", "forkedFrom", "inheritedUsage")


def _own_call_usage(path: Path) -> list[dict[str, int]]:
    """The oracle: the usage of each call the file's session made itself (an assistant line naming no
    other session in `requestSessionId`), one per message id, its last sample."""
    calls: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        msg = rec.get("message") if rec.get("type") == "assistant" else None
        if isinstance(msg, dict) and isinstance(msg.get("usage"), dict) \
                and rec.get("requestSessionId") in (None, rec.get("sessionId")):
            calls[msg["id"]] = msg["usage"]
    return list(calls.values())


def test_the_real_forks_replay_says_which_of_its_calls_and_tokens_are_copies() -> None:
    """The fork's document keeps the conversation's `calls` and `tokenUsage` (5 calls, as the fold
    numbers them) and says the first 4 are the parent's: less them, its own 1 call and that call's
    tokens exactly; the parent's document has none of the fork's keys."""
    doc, trace = replay(str(FORK / f"{CHILD}.jsonl"))
    assert (doc["calls"], doc["inheritedCalls"], doc["inheritedTo"], doc["forkedFrom"]) == (5, 4, 4, PARENT)
    assert own_calls(doc) == 1 == len(_own_call_usage(FORK / f"{CHILD}.jsonl"))
    [u] = _own_call_usage(FORK / f"{CHILD}.jsonl")
    mine = own_usage(doc)
    assert (mine["calls"], mine["uncachedInput"], mine["output"], mine["cacheRead"], mine["cacheWrite"]) == (
        1, u["input_tokens"], u["output_tokens"], u["cache_read_input_tokens"], u["cache_creation_input_tokens"])
    assert doc["inheritedUsage"]["calls"] == 4
    assert [r.get("inheritedCalls") for r in trace] == [1, 2, 3, 4, 4]  # each row as live status says it then
    parent, _ = replay(str(FORK / f"{PARENT}.jsonl"))
    assert not any(k in parent for k in FORK_KEYS)
    assert own_calls(parent) == parent["calls"] == 5
    assert own_usage(parent) == parent["tokenUsage"]


def test_the_text_shows_the_forks_own_calls_and_says_what_it_left_out() -> None:
    doc, _ = replay(str(FORK / f"{CHILD}.jsonl"))
    text = status_text(doc, last_call=True)
    lines = text.splitlines()
    assert lines[0].endswith("calls 1")
    assert lines[1] == f"fork     forked from {PARENT}: 4 copied calls not counted here (calls 1-4: counted there, " \
                       "context here)"
    assert "(1 call; subagents 0 calls" in text
    parent, _ = replay(str(FORK / f"{PARENT}.jsonl"))
    said = status_text(parent, last_call=True)
    assert "fork " not in said
    assert said.splitlines()[0].endswith("calls 5")
    assert "(5 calls;" in said


def _cost_usd(usage: dict[str, int], model: str) -> float:
    """A call's cache cost as the backtest prices it (cr at the read price, cw at the 5-minute write's)."""
    p = _price(model)
    assert p.usd is not None
    return (usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"] * p.w5m) * p.usd


def test_the_backtest_of_the_real_fork_prices_its_own_call_once() -> None:
    """The fork's 1 call and its cost alone (its 4 copies are the parent's, priced there): the two
    sessions' calls sum to the 6 the client made, their cost to the 6 calls' cost; the fork's document
    says what it left out as `status --json` does."""
    child = shell.run_one(str(FORK / f"{CHILD}.jsonl"))
    parent = shell.run_one(str(FORK / f"{PARENT}.jsonl"))
    assert (child["calls"], parent["calls"]) == (1, 5)
    assert {k: child[k] for k in ("inheritedCalls", "inheritedTo", "forkedFrom")} == {
        "inheritedCalls": 4, "inheritedTo": 4, "forkedFrom": PARENT}
    assert not any(k in parent for k in FORK_KEYS)
    [u] = _own_call_usage(FORK / f"{CHILD}.jsonl")
    assert child["policies"]["actual"]["usd"] == round(_cost_usd(u, child["model"]), 6)
    every = [*_own_call_usage(FORK / f"{PARENT}.jsonl"), u]
    total = sum(_cost_usd(c, child["model"]) for c in every)
    assert abs(child["policies"]["actual"]["usd"] + parent["policies"]["actual"]["usd"] - total) < 1e-5


def _fork_of(source: Path, dest: Path, copied: int) -> None:
    """`dest`: `source` as a fork of it writes it when the fork's first `copied` calls are copies (each
    assistant line of those calls naming the parent in `requestSessionId`, the client's spacing)."""
    seen: list[str] = []
    out = []
    for line in source.read_text().splitlines():
        rec = json.loads(line)
        msg = rec.get("message") if rec.get("type") == "assistant" else None
        if isinstance(msg, dict) and isinstance(msg.get("usage"), dict) and not rec.get("isSidechain"):
            if msg["id"] not in seen:
                seen.append(msg["id"])
            if len(seen) <= copied:
                rec["requestSessionId"] = "the-parent"
        out.append(json.dumps(rec, separators=(",", ":")))
    dest.write_text("\n".join(out) + "\n")


def test_the_closed_loop_of_a_fork_restarts_after_its_own_calls_only(tmp_path: Path) -> None:
    """A real session whose advice says to restart after call 27 (gate), made a fork whose first 40
    calls are copies: the copies' advice was the parent's, so the fork's user restarts after its own
    calls only; its calls and costs are those after call 40, where the advice it follows is the
    session's own (the same restarts there as the whole session's, whose context it has)."""
    sid = "258c7280-ae70-4798-800f-63464d01a85d"
    whole = shell.run_one(str(TRANSCRIPTS / f"{sid}.jsonl"))
    assert 27 in whole["policies"]["alert"]["restartsAfter"]
    fork = tmp_path / f"{sid}.jsonl"
    _fork_of(TRANSCRIPTS / f"{sid}.jsonl", fork, 40)
    doc = shell.run_one(str(fork))
    assert (doc["inheritedCalls"], doc["inheritedTo"], doc["forkedFrom"]) == (40, 40, "the-parent")
    assert doc["calls"] == whole["calls"] - 40
    for policy in ("alert", "sweetSpot", "hindsight", "hindsight1"):
        assert all(k > 40 for k in doc["policies"][policy]["restartsAfter"]), policy
    from session_watcher.base.config import model_params
    from session_watcher.core import closedloop

    loaded = shell.load(str(fork))
    cfg = model_params(shell.config_for(str(fork), {}))
    seen = closedloop.observe(loaded.fresh(), loaded.events, cfg, loaded.paths)
    assert seen.copied == 40
    for policy in closedloop.POLICIES:  # none restarts among the copies (the whole session's at 27)
        followed = closedloop.follow(loaded.fresh(), seen, cfg, policy, shell.turns(str(fork)))
        assert followed, policy
        assert all(k > 40 for k in followed), (policy, followed)
        if policy in ("alert", "sweetSpot"):
            assert followed == doc["policies"][policy]["restartsAfter"]
    assert doc["policies"]["actual"]["usd"] < whole["policies"]["actual"]["usd"]
    assert doc["segmentList"][0]["firstCall"] == 41


def test_the_page_of_the_fork_counts_its_own_calls_and_says_so() -> None:
    """The page's model says what the fork left out (status's sentence), its backtest line prices
    the fork's own call (the closed loop's document), and the page shows the sentence; the parent's
    page has no such key or line."""
    from session_watcher.reports.session_page import page_parts
    from session_watcher.reports.session_page_data import load_model

    model = load_model(str(FORK / f"{CHILD}.jsonl"), now=0.0)
    fork = model["fork"]
    assert (fork["inheritedCalls"], fork["inheritedTo"], fork["forkedFrom"]) == (4, 4, PARENT)
    assert fork["text"].startswith(f"forked from {PARENT}: 4 copied calls not counted here")
    [u] = _own_call_usage(FORK / f"{CHILD}.jsonl")
    actual = model["backtest"]["policies"]["actual"]["usd"]
    assert actual == round(_cost_usd(u, "claude-opus-5-5"), 6)
    html = "".join(page_parts(model))
    assert f'<p id="fork">forked from {PARENT}: 4 copied calls not counted here' in html
    parent = load_model(str(FORK / f"{PARENT}.jsonl"), now=0.0)
    assert "fork" not in parent
    assert '<p id="fork">' not in "".join(page_parts(parent))


def test_a_long_forks_page_prices_its_best_restarts_on_its_own_calls(tmp_path: Path) -> None:
    """Past the closed loop's size the page prices the best schedule from its trace's calls: a fork's
    own only, as the backtest has them."""
    from session_watcher.core import backtest as bt
    from session_watcher.reports.session_page_data import backtest_summary, fork_of, own_calls, story_of

    sid = "258c7280-ae70-4798-800f-63464d01a85d"
    fork = tmp_path / f"{sid}.jsonl"
    _fork_of(TRANSCRIPTS / f"{sid}.jsonl", fork, 40)
    final, trace, _cfg = story_of(str(fork), now=0.0)
    mine = own_calls(trace.calls, fork_of(final))
    assert [c.call for c in mine] == list(range(41, final["calls"] + 1))
    got: Any = backtest_summary(mine, final, None, trace.autos.autos)
    want = bt.best_restarts(mine, bt.shared_prefix(final, mine), trace.autos.autos)
    assert got["policies"]["hindsight"]["restartsAfter"] == want["policies"]["hindsight"]["restartsAfter"]
    assert all(k > 40 for k in got["policies"]["hindsight"]["restartsAfter"])
    assert own_calls(trace.calls, None) is trace.calls


def test_a_fork_without_a_call_of_its_own_yet_and_a_state_saved_before_its_copies_tokens_were_kept(
        tmp_path: Path) -> None:
    """The fork's file cut before its own call: every call and token is a copy's (its own: none).
    A state an older version saved, with own calls already and no copies' tokens: `inheritedUsage`
    null, and the usage shown is the conversation's, never less than nothing."""
    from session_watcher.core.status import status_document
    from session_watcher.sessions.replay import fold

    lines = (FORK / f"{CHILD}.jsonl").read_text().splitlines()
    last_copy = max(i for i, line in enumerate(lines) if '"requestSessionId"' in line)
    cut = tmp_path / f"{CHILD}.jsonl"
    cut.write_text("\n".join(lines[:last_copy + 1]) + "\n")
    doc, _ = replay(str(cut))
    assert (doc["calls"], doc["inheritedCalls"], own_calls(doc)) == (4, 4, 0)
    assert doc["inheritedUsage"] == doc["tokenUsage"]
    assert set(own_usage(doc).values()) == {0}
    assert "fork     forked from" in status_text(doc)
    state, cfg, _ = fold(str(FORK / f"{CHILD}.jsonl"))
    del state["engine"]["tally"]["inheritedUsage"]
    older = status_document(state, cfg)
    assert older["inheritedUsage"] is None
    assert own_usage(older) == older["tokenUsage"]
    said = status_text(older)
    assert "calls 1" in said.splitlines()[0]
    assert "(5 calls, 4 of them copies;" in said  # the conversation's tokens, and the line says so
    assert "(1 call;" in status_text(status_document(fold(str(FORK / f"{CHILD}.jsonl"))[0], cfg))


def test_a_fork_whose_parents_file_is_gone_says_its_copies_are_counted_in_no_session(
        tmp_path: Path, capsys: Any) -> None:
    """The real fork alone (its parent's file deleted): `replay`'s text, `status --json`'s key, the
    backtest's document and sentence and the page's line say that the 4 copies, not counted here, are
    counted in no session (as `report`, which counts them in the parent only, then counts them);
    beside its parent, each says they are counted there, as before."""
    from types import SimpleNamespace

    from session_watcher.cli import commands
    from session_watcher.reports.render_text import fork_sentence
    from session_watcher.reports.session_page_data import load_model

    alone = tmp_path / f"{CHILD}.jsonl"
    alone.write_bytes((FORK / f"{CHILD}.jsonl").read_bytes())
    nowhere = "(calls 1-4: that session's file not found, so counted in no session; context here)"
    there = "(calls 1-4: counted there, context here)"
    for path, said, found in ((alone, nowhere, False), (FORK / f"{CHILD}.jsonl", there, None)):
        for as_json in (False, True):
            ns = SimpleNamespace(target=str(path), cwd=None, json=as_json, trace=None, verbose=False)
            assert commands.replay(ns) == 0
            out = capsys.readouterr().out
            if as_json:
                assert json.loads(out).get("forkedFromFound") is found
            else:
                assert said in " ".join(out.split()), out
        doc = shell.run_one(str(path))
        assert doc.get("forkedFromFound") is found
        sentence = fork_sentence({"sessions": [doc]}, 8)
        assert sentence is not None
        assert ("counted in no session" in sentence) is (found is False), sentence
        model = load_model(str(path), now=0.0)
        assert model["fork"]["text"].endswith(said)
