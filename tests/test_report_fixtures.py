"""The report over the real transcripts in tests/fixtures/transcripts (copied into a temp projects dir)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from session_watcher.reports.collect import run_report

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
AE = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
C258 = "258c7280-ae70-4798-800f-63464d01a85d"
FA = "fa812bfe-b295-4cca-9c2f-fdf01028cb46"


def copy_fixtures(dest: Path) -> Path:
    """Fixtures as a Claude Code config dir: DIR/projects/<project>/<session>.jsonl (+ subagents)."""
    proj = dest / "projects" / "-home-user-projects-spotter"
    proj.mkdir(parents=True)
    for item in FIXTURES.iterdir():
        if item.suffix == ".jsonl":
            shutil.copy2(item, proj / item.name)
        elif item.is_dir():
            shutil.copytree(item, proj / item.name)
    return dest


@pytest.fixture(scope="module")
def doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("fx")
    cfg = copy_fixtures(base / "claude")
    d, _ = run_report([str(cfg / "projects")], str(base / "index.sqlite3"), now=1.8e9, utc_offset=0.0)
    return d


def sessions(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["sessionId"]: s for s in doc["sessions"]}


def test_main_chain_call_counts(doc: dict[str, Any]) -> None:
    """One call per (message.id, requestId), main chain only: the counts in the fixtures' README."""
    got = {k: v["calls"] for k, v in sessions(doc).items()}
    assert got == {C258: 152, FA: 157, AE: 217, "short": 1, "tool_heavy": 4, "subagent": 12}


def test_cold_starts_and_causes(doc: dict[str, Any]) -> None:
    """Six cold starts: the one-call session's first call, a model switch, a break past the 5-minute
    cache's lifetime (after which the model switched back, too), three unexplained."""
    assert doc["coldStarts"] == 6
    assert doc["causes"] == {"firstCall": 1, "idleGap": 1, "modelSwitch": 1, "compaction": 0, "unexplained": 3}
    where = sorted((c["sessionId"], c["callIndex"], c["cause"]) for c in doc["coldStartList"])
    assert where == [
        (C258, 31, "unexplained"),
        (C258, 149, "unexplained"),
        (AE, 5, "modelSwitch"),
        (AE, 138, "idleGap"),
        (FA, 43, "unexplained"),
        ("short", 0, "firstCall"),
    ]


def test_model_switch_in_ae4a77f8(doc: dict[str, Any]) -> None:
    """Opus to Haiku at call 5 re-creates the whole prompt; the switch back comes after 17.5 min, past
    the 5-minute cache's lifetime, and after a compaction (all three are said, the break first)."""
    s = sessions(doc)[AE]
    assert s["models"] == ["claude-haiku-4-5-20251001", "claude-opus-4-6"]
    cold = {c["callIndex"]: c for c in doc["coldStartList"] if c["sessionId"] == AE}
    assert cold[5]["warmth"] == 0.0
    assert cold[5]["alsoApplies"] == []
    assert cold[138]["cause"] == "idleGap"
    assert cold[138]["alsoApplies"] == ["modelSwitch", "compaction"]
    assert cold[138]["gapSeconds"] == pytest.approx(1052.966, abs=0.01)
    g = s["largestGap"]
    assert g["callIndex"] == 138
    assert g["cold"] is True
    assert g["tokensRecreated"] == 23_812
    assert s["sentence"] == "your 18 min break cost 24k tokens of re-reading ($0.15)"


def test_ttl_classes_and_no_inferred_cliff(doc: dict[str, Any]) -> None:
    """258c7280 and the small sessions wrote 1-hour caches, the other two 5-minute ones; no gap in
    these sessions is long enough to show where either cache expires, so neither TTL is claimed."""
    n = {cls: sum(b["n"] for b in doc["gapBuckets"] if b["ttl"] == cls) for cls in ("5m", "1h")}
    assert n == {"5m": (157 - 1) + (217 - 1), "1h": (152 - 1) + (4 - 1) + (12 - 1)}
    assert doc["ttl"] == {"5m": None, "1h": None}


def test_one_call_session_is_undefined(doc: dict[str, Any]) -> None:
    s = sessions(doc)["short"]
    assert s["warmth"] is None
    assert s["largestGap"] is None


def test_session_warmth(doc: dict[str, Any]) -> None:
    s = sessions(doc)
    assert s[AE]["warmth"] == pytest.approx(0.98634, abs=1e-5)
    assert s["tool_heavy"]["warmth"] == pytest.approx(0.87753, abs=1e-5)
