"""Calls of a model without a price count as $0 in every total: the report says so whenever a total
holds any, not only when one of the sessions it lists is among them (a year-old session of a model
the table never had left the totals short without a word)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bench.synth import T0, Transcript
from session_watcher.reports import render_html, render_text
from session_watcher.reports.collect import run_report

if TYPE_CHECKING:
    from pathlib import Path


def _session(folder: Path, sid: str, at: float, model: str, other: str | None = None) -> None:
    t = Transcript(session_id=sid, cwd="/proj", model=model)
    t.user("go", at=at)
    t.call(cr=20_000, cw=2_000)
    if other:
        t.model = other
    t.call(cr=22_000, cw=500)
    t.save(folder / f"{sid}.jsonl")


def test_the_totals_say_they_leave_unpriced_calls_out(tmp_path: Path) -> None:
    proj = tmp_path / "projects" / "-proj"
    proj.mkdir(parents=True)
    _session(proj, "old-one", T0, "claude-3-5-sonnet-20241022")  # no price: the oldest, not listed
    _session(proj, "mixed", T0 + 3600, "claude-opus-4-6", "claude-2.1")  # one call of two unpriced
    for k in range(render_text.MAX_SESSIONS):
        _session(proj, f"new-{k:02d}", T0 + 86400 * (k + 1), "claude-opus-4-6")
    doc, _ = run_report([str(tmp_path / "projects")], str(tmp_path / "i.db"), now=T0 + 86400 * 40, utc_offset=0.0)
    text = " ".join(render_text.render(doc, 200).split())
    assert "3 calls in 2 sessions have no price (claude-2.1, claude-3-5-sonnet-20241022)" in text, text
    assert "counts them as $0" in text
    page = render_html.render(doc)
    assert 'id="unpriced"' in page
    assert "claude-3-5-sonnet-20241022" in page


def test_one_unpriced_call_in_the_singular(tmp_path: Path) -> None:
    proj = tmp_path / "projects" / "-proj"
    proj.mkdir(parents=True)
    _session(proj, "mixed", T0, "claude-opus-4-6", "claude-2.1")
    doc, _ = run_report([str(tmp_path / "projects")], str(tmp_path / "i.db"), now=T0 + 86400, utc_offset=0.0)
    text = " ".join(render_text.render(doc, 200).split())
    assert "1 call in 1 session has no price (claude-2.1)" in text, text


def test_a_sub_agents_unpriced_model_is_not_an_unknown_one(tmp_path: Path) -> None:
    """A sub-agent's calls of a model without a price: its session's models (the main conversation's)
    do not name it, and the sentence said 'model unknown'."""
    proj = tmp_path / "projects" / "-proj"
    proj.mkdir(parents=True)
    t = Transcript(session_id="main", cwd="/proj", model="claude-opus-4-6")
    t.user("go", at=T0)
    t.call(cr=20_000, cw=2_000)
    t.call(cr=1_000, cw=100, sidechain=True, model="claude-2.1")
    t.call(cr=22_000, cw=500)
    t.save(proj / "main.jsonl")
    doc, _ = run_report([str(tmp_path / "projects")], str(tmp_path / "i.db"), now=T0 + 86400, utc_offset=0.0)
    assert doc["sessions"][0]["unpricedCalls"] == 1
    said = render_text.unpriced_sentence(doc)
    assert said is not None
    assert "model unknown" not in said
    assert "1 call in 1 session has no price (a sub-agent's or an unnamed model)" in said, said
