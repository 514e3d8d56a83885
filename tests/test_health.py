"""Context health: each signal at each cut-off, the composite, and incremental == from scratch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from session_watcher.core import health
from tests.health_reference import from_codes, grade_from_records

if TYPE_CHECKING:
    from session_watcher.core.shapes import Health

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
REAL = sorted(p for p in FIXTURES.glob("*.jsonl"))


def calls_h(codes: str, **extra: Any) -> Health:
    """Counters with the given tool-call code string (. p e E)."""
    h = from_codes(health.new_health(), codes)
    h.update(cast("Health", extra))
    return h


def signal(result: dict[str, Any], name: str) -> dict[str, Any]:
    signals: list[dict[str, Any]] = result["signals"]
    (s,) = [s for s in signals if s["name"] == name]
    return s


class TestFill:
    @pytest.mark.parametrize(
        ("prompt", "score"),
        [
            (0, 100),
            (99_999, 100),
            (100_000, 80),  # 50 % exactly is no longer A
            (129_999, 80),
            (130_000, 60),  # 65 %
            (159_999, 60),
            (160_000, 40),  # 80 %
            (179_999, 40),
            (180_000, 20),  # 90 %
            (250_000, 20),
        ],
    )
    def test_cutoffs_200k(self, prompt: int, score: int) -> None:
        """Fill cut-offs at 50/65/80/90 % of a 200k window (strictly below each)."""
        r = health.grade({**health.new_health(), "prompt": prompt}, None)
        assert signal(r, "Context Fill")["value"] == score

    def test_real_window_is_used(self) -> None:
        """A 1M window: 300k tokens is 30 % full (A), not 150 %."""
        h: Health = {**health.new_health(), "prompt": 300_000}
        r = health.grade(h, 1_000_000)
        assert signal(r, "Context Fill")["value"] == 100
        assert r["fillPercent"] == 30.0
        assert health.grade(h, None)["fillPercent"] == 150.0
        assert signal(health.grade(h, None), "Context Fill")["value"] == 20

    def test_no_call_is_healthy_and_null(self) -> None:
        """Before the first API call fill is 100 and fillPercent null, not 0 or NaN."""
        r = health.grade(health.new_health(), 200_000)
        assert signal(r, "Context Fill")["value"] == 100
        assert r["fillPercent"] is None

    def test_later_sample_replaces(self) -> None:
        """on_call keeps the newest prompt size only."""
        h = health.new_health()
        health.on_call(h, 190_000)
        health.on_call(h, 20_000)
        assert health.grade(h, None)["fillPercent"] == 10.0


class TestCompactions:
    @pytest.mark.parametrize(("n", "score"), [(0, 100), (1, 75), (2, 55), (3, 35), (4, 15), (9, 15)])
    def test_cutoffs(self, n: int, score: int) -> None:
        """0/1/2/3/4+ compactions."""
        h = health.new_health()
        for _ in range(n):
            health.on_compaction(h)
        r = health.grade(h, None)
        assert signal(r, "Compactions")["value"] == score
        assert r["compactionCount"] == n


class TestRereads:
    @pytest.mark.parametrize(
        ("reads", "rereads", "score"),
        [
            (0, 0, 100),
            (20, 1, 100),  # 5 % exactly is still A
            (100, 6, 80),
            (10, 1, 80),  # 10 %
            (100, 11, 60),
            (5, 1, 60),  # 20 %
            (100, 21, 40),
            (20, 7, 40),  # 35 %
            (100, 36, 20),
            (2, 1, 20),
        ],
    )
    def test_cutoffs(self, reads: int, rereads: int, score: int) -> None:
        """Re-read ratio cut-offs 5/10/20/35 % (inclusive)."""
        h = health.new_health()
        for i in range(reads):
            health.on_tool(h, "Read", i < rereads, False)
        r = health.grade(h, None)
        assert signal(r, "Re-reads")["value"] == score
        assert r["rereadRatio"] == (None if reads == 0 else round(rereads / reads, 4))

    def test_only_read_counts(self) -> None:
        """A re-read flag on a non-Read tool is not a read."""
        h = health.new_health()
        health.on_tool(h, "Grep", True, False)
        health.on_tool(h, "Read", False, False)
        assert health.grade(h, None)["rereadRatio"] == 0.0


class TestErrorAcceleration:
    @pytest.mark.parametrize(
        ("codes", "score", "accel"),
        [
            ("eee", 100, None),  # fewer than 4 calls
            ("....", 100, None),  # clean
            ("....e.", 40, None),  # clean first half, errors later
            ("e...", 100, 0.0),  # errors only early: ratio 0
            ("e...e...", 100, 1.0),  # ratio 1
            ("e...ee..", 75, 2.0),  # ratio 2
            ("e.....eee...", 55, 3.0),  # ratio 3
            ("e.........eeee......", 35, 4.0),  # ratio 4
            ("e.........eeeee.....", 35, 5.0),  # ratio 5
            ("e.........eeeeee....", 15, 6.0),  # ratio 6
            ("e...eee.", 55, 3.0),
        ],
    )
    def test_cutoffs(self, codes: str, score: int, accel: float | None) -> None:
        """Second-half error rate over first-half, cut-offs 1/2/3/5 (inclusive)."""
        r = health.grade(calls_h(codes), None)
        assert signal(r, "Error Rate")["value"] == score
        assert r["errorAcceleration"] == accel

    def test_odd_count_split(self) -> None:
        """With 5 calls the first half is 2 and the second 3 (floor), as the seed slices."""
        # floor split: "e." 0.5 vs "e.e" 0.667 -> 1.3333; a ceil split would give 0.75
        assert health.grade(calls_h("e.e.e"), None)["errorAcceleration"] == 1.3333


class TestToolEfficiency:
    @pytest.mark.parametrize(
        ("codes", "score", "eff"),
        [
            ("ppp", 100, None),  # too few
            ("....", 80, None),  # no writes at all
            ("..pp", 80, None),  # no writes in the first half
            ("pp..", 15, 0.0),
            ("p.p.", 100, 1.0),
            ("pppppppppp.ppppppppp", 100, 0.9),  # 0.9 exactly is A
            ("pppppppppp..pppppppp", 75, 0.8),
            ("pppppppppp...ppppppp", 75, 0.7),  # 0.7 exactly
            ("pppppppppp....pppppp", 55, 0.6),
            ("pppppppppp......pppp", 55, 0.4),  # 0.4 exactly
            ("pppppppppp.......ppp", 35, 0.3),
            ("pppppppppppppppppppp" + "." * 17 + "ppp", 35, 0.15),  # 0.15 exactly
            ("pppppppppp.........p", 15, 0.1),
            ("EEEE", 100, 1.0),  # failed edits are still productive attempts
        ],
    )
    def test_cutoffs(self, codes: str, score: int, eff: float | None) -> None:
        """Second-half productive share over first-half, cut-offs 0.9/0.7/0.4/0.15 (inclusive)."""
        r = health.grade(calls_h(codes), None)
        assert signal(r, "Tool Efficiency")["value"] == score
        assert r["toolEfficiency"] == eff

    @pytest.mark.parametrize("name", ["Write", "Edit", "MultiEdit", "NotebookEdit"])
    def test_productive_tools(self, name: str) -> None:
        """The four productive tools, and nothing else."""
        h = health.new_health()
        health.on_tool(h, name, False, False)
        health.on_tool(h, "Bash", False, True)
        assert h["head"] == [1, 0, 1]  # the first half: the Write, productive
        assert h["tail"] == "e"  # the second half: the failed Bash


class TestComposite:
    def test_all_healthy(self) -> None:
        """Nothing happened: A, 100, five signals with the seed's weights."""
        r = health.grade(health.new_health(), None)
        assert r["grade"] == "A"
        assert r["score"] == 100
        assert [(s["name"], s["weight"], s["grade"]) for s in r["signals"]] == [
            ("Context Fill", 0.4, "A"),
            ("Compactions", 0.25, "A"),
            ("Re-reads", 0.15, "A"),
            ("Error Rate", 0.1, "A"),
            ("Tool Efficiency", 0.1, "A"),
        ]

    def test_hand_built_b(self) -> None:
        """Fill 60 %, one compaction, 10 % re-reads, error ratio 2, efficiency A -> 74, B."""
        h = calls_h("e...ee..", prompt=120_000, compactions=1, reads=10, rereads=1)
        r = health.grade(h, 200_000)
        # 80*.40 + 75*.25 + 80*.15 + 75*.10 + 80*.10 (no writes) = 32 + 18.75 + 12 + 7.5 + 8 = 78.25
        assert r["score"] == 78
        assert r["grade"] == "B"
        assert [s["value"] for s in r["signals"]] == [80, 75, 80, 75, 80]
        assert [s["grade"] for s in r["signals"]] == ["B", "B", "B", "B", "B"]

    def test_exact_boundary_85(self) -> None:
        """A composite of exactly 85 is an A (integer weights: no 84.99999999999999)."""
        # error: 1/10 then 3/10 -> ratio 3 -> 55; productive: 5/10 then 2/10 -> 0.4 -> 55
        h = calls_h("eppppp...." + "eeepp.....", reads=5, rereads=1)  # re-reads 20 % -> 60
        r = health.grade(h, None)
        assert [s["value"] for s in r["signals"]] == [100, 100, 60, 55, 55]
        # 40 + 25 + 9 + 5.5 + 5.5 = 85
        assert r["score"] == 85
        assert r["grade"] == "A"
        assert r["errorAcceleration"] == 3.0
        assert r["toolEfficiency"] == 0.4

    def test_score_rounds_half_up(self) -> None:
        """92.5 rounds to 93, like Math.round, not to 92 (banker's rounding)."""
        h = calls_h("ep....eeep..", reads=10, rereads=1)
        r = health.grade(h, None)
        assert [s["value"] for s in r["signals"]] == [100, 100, 80, 55, 100]
        # 40 + 25 + 12 + 5.5 + 10 = 92.5
        assert r["score"] == 93

    def test_worst_session(self) -> None:
        """A full window, four compactions, heavy re-reads, errors rising, writes stopping: F."""
        h = calls_h("e.pppppppp" + "eeeeee....", prompt=190_000, compactions=4, reads=10, rereads=5)
        r = health.grade(h, None)
        assert [s["value"] for s in r["signals"]] == [20, 15, 20, 15, 15]
        # 8 + 3.75 + 3 + 1.5 + 1.5 = 17.75
        assert r["score"] == 18
        assert r["grade"] == "F"
        assert [s["grade"] for s in r["signals"]] == ["F"] * 5

    def test_json_has_no_nan(self) -> None:
        """The block is strict JSON in every state."""
        for h in (health.new_health(), calls_h("eeee"), calls_h("....", prompt=5)):
            json.dumps(health.grade(h, None), allow_nan=False)


def test_grade_boundaries() -> None:
    """A >= 85 > B >= 70 > C >= 55 > D >= 40 > F."""
    got = [health.to_grade(s) for s in (100, 85, 84.99, 70, 69.99, 55, 54.99, 40, 39.99, 0)]
    assert got == ["A", "A", "B", "B", "C", "C", "D", "D", "F", "F"]


def test_from_records_hand_built() -> None:
    """The reference computation on a literal session."""
    calls: list[dict[str, Any]] = [
        {"toolName": "Read", "filePath": "/p/a.py", "isError": False},
        {"toolName": "Edit", "filePath": None, "isError": False},
        {"toolName": "Read", "filePath": "/p/a.py", "isError": False},
        {"toolName": "Bash", "filePath": None, "isError": True},
        {"toolName": "Read", "filePath": "/p/b.py", "isError": True},
        {"toolName": "Read", "filePath": "/p/a.py", "isError": False},
    ]
    r = grade_from_records([50_000, 140_000], 2, calls, 200_000)
    # fill 70 % -> 60; 2 compactions -> 55; rereads 2/4 = 0.5 -> 20;
    # errors: first [R,E,R] 0/3, second [B!,R!,R] 2/3 -> clean to errors 40;
    # efficiency: first 1/3, second 0/3 -> 0 -> 15
    assert [s["value"] for s in r["signals"]] == [60, 55, 20, 40, 15]
    # 24 + 13.75 + 3 + 4 + 1.5 = 46.25
    assert r["score"] == 46
    assert r["grade"] == "D"
    assert r["rereadRatio"] == 0.5
    assert r["fillPercent"] == 70.0
    assert r["errorAcceleration"] is None
    assert r["toolEfficiency"] == 0.0


# --- incremental == from scratch on every real fixture ----------------------------------------------


def _canon(path: str, cwd: str | None) -> str:
    return os.path.normpath(os.path.join(cwd or "/", path))


def walk(path: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Feed a transcript record by record; after each, (incremental grade, from-scratch grade)."""
    h = health.new_health()
    prompts: dict[str, int] = {}
    compactions = 0
    tool_calls: list[dict[str, Any]] = []
    uses: dict[object, tuple[str, str | None]] = {}  # by the JSON's tool_use id
    seen_reads: set[str] = set()
    out = []
    for line in path.read_text().splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("isSidechain"):
            continue
        if rec.get("type") == "system" and rec.get("subtype") == "compact_boundary":
            compactions += 1
            health.on_compaction(h)
        msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
        content = msg.get("content")
        if rec.get("type") == "assistant":
            u = msg.get("usage")
            if isinstance(u, dict):
                p = (
                    int(u.get("input_tokens") or 0)
                    + int(u.get("cache_read_input_tokens") or 0)
                    + int(u.get("cache_creation_input_tokens") or 0)
                )
                key = f"{msg.get('id')}|{rec.get('requestId')}"
                prompts.pop(key, None)
                prompts[key] = p
                health.on_call(h, p)
            if isinstance(content, list):
                for b in content:
                    if isinstance(b, dict) and b.get("type") == "tool_use":
                        inp = b.get("input") or {}
                        fp = inp.get("file_path") if isinstance(inp, dict) else None
                        uses[b.get("id")] = (
                            b.get("name") or "",
                            _canon(fp, rec.get("cwd")) if isinstance(fp, str) else None,
                        )
        if rec.get("type") == "user" and isinstance(content, list):
            for b in content:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    name, fp = uses.get(b.get("tool_use_id"), ("", None))
                    err = bool(b.get("is_error"))
                    tool_calls.append({"toolName": name, "filePath": fp, "isError": err})
                    reread = name == "Read" and fp is not None and fp in seen_reads
                    if name == "Read" and fp is not None:
                        seen_reads.add(fp)
                    health.on_tool(h, name, reread, err)
        out.append(
            (
                health.grade(h, 200_000),
                grade_from_records(list(prompts.values()), compactions, tool_calls, 200_000),
            )
        )
    return out


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name[:12])
def test_incremental_equals_from_scratch(path: Path) -> None:
    """After every record of each real fixture the incremental grade equals the reference."""
    pairs = walk(path)
    assert pairs
    for i, (inc, ref) in enumerate(pairs):
        assert inc == ref, f"record {i}"


def test_first_half_counts_follow_the_half_point() -> None:
    """Call by call, the stored first half (counts) and second half (codes) are the split of the
    whole sequence at n // 2, so the grade sees the same halves as from the whole sequence."""
    import random

    rng = random.Random(16)
    tools = [("Read", False, "."), ("Edit", False, "p"), ("Bash", True, "e"), ("Write", True, "E")]
    h = health.new_health()
    codes = ""
    for _ in range(300):
        name, err, ch = rng.choice(tools)
        health.on_tool(h, name, False, err)
        codes += ch
        want = from_codes(health.new_health(), codes)
        assert (h["head"], h["tail"]) == (want["head"], want["tail"])
        mid = len(codes) // 2
        assert h["head"] == [mid, codes[:mid].count("e") + codes[:mid].count("E"),
                             codes[:mid].count("p") + codes[:mid].count("E")]
    assert health.grade(h, None) == health.grade(calls_h(codes, reads=h["reads"]), None)


def test_real_fixture_values() -> None:
    """One real session end to end: a B with one compaction, a quarter of its reads re-reads."""
    steps = walk(FIXTURES / "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
    final = steps[-1][0]
    assert (final["grade"], final["score"], final["compactionCount"]) == ("B", 80, 1)
    assert [s["value"] for s in final["signals"]] == [100, 75, 40, 55, 100]
    assert (final["rereadRatio"], final["errorAcceleration"], final["toolEfficiency"]) == (0.2619, 2.5, 1.0)
    assert final["fillPercent"] == 38.7
    assert {g["grade"] for g, _ in steps} == {"A", "B", "C"}  # healthy at the start, C on the way


@pytest.mark.slow
def test_hot_path_imports() -> None:
    """Importing core.health pulls in no typing, dataclasses or json."""
    code = (
        "import sys; before = set(sys.modules); import session_watcher.core.health;"
        "print(sorted(set(sys.modules) - before))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parent.parent,
    ).stdout
    new = set(json.loads(out.replace("'", '"')))
    assert new <= {"__future__", "session_watcher", "session_watcher.core", "session_watcher.core.health"}, new


def test_fold_keeps_the_tail_in_place_over_many_tool_results() -> None:
    """A fold of 4,000 tool results: the second half is one object appended to in place through the
    fold (a string copied whole on each result made the fold quadratic in its tool results), graded
    at each call as the whole sequence split at n // 2 grades, and saved as a string again; a second
    fold reopens the saved string and goes on from it."""
    import random

    from session_watcher.base import config
    from session_watcher.core import engine

    cfg = config.merge()
    rng = random.Random(35)
    tools = [("Read", False, "."), ("Edit", False, "p"), ("Bash", True, "e"), ("Write", True, "E"),
             ("Grep", False, ".")]
    events: list[Any] = []
    codes = ""
    marks: list[str] = []  # the codes so far at each call
    for i in range(4000):
        name, err, ch = rng.choice(tools)
        events += [("use", 1.0 + i, f"t{i}", name, None), ("result", 1.0 + i, f"t{i}", err, None)]
        codes += ch
        if i % 40 == 39:
            events.append(("call", f"c{i}", 1.0 + i, "claude-sonnet-4-5", False, 10, 1000 + i, 10, 5, 10, 0, None))
            marks.append(codes)
    seen: list[object] = []
    grades: list[dict[str, Any]] = []

    def hook(st: Any, _fired: Any, _usage: Any) -> None:
        seen.append(st["health"]["tail"])
        grades.append(health.grade(st["health"], None))

    state = engine.new_state("s")
    half = len(events) // 2
    engine.fold(state, events[:half], cfg, call_hook=hook)
    first = len(seen)
    assert isinstance(state["health"]["tail"], str)
    json.dumps(state)  # saved as plain JSON between folds
    engine.fold(state, events[half:], cfg, call_hook=hook)
    assert len(seen) == len(marks) == 100
    assert all(t is seen[0] for t in seen[:first])  # one object through a fold, not one per result
    assert all(t is seen[first] for t in seen[first:])
    for got, upto in zip(grades, marks, strict=True):  # the two signals of the halves, call by call
        want_g = health.grade(calls_h(upto), None)
        assert (got["errorAcceleration"], got["toolEfficiency"], got["signals"][3:]) == (
            want_g["errorAcceleration"], want_g["toolEfficiency"], want_g["signals"][3:])
    want = from_codes(health.new_health(), codes)
    h = state["health"]
    assert (h["head"], h["tail"]) == (want["head"], want["tail"])
    assert isinstance(h["tail"], str)
    assert len(h["tail"]) == 2000


def test_no_number_says_why_from_the_block_alone() -> None:
    """Every null figure has its reason, read from the `grade` block alone (what --json, the text
    and the page have), equal to the reason counted from the calls themselves, for every sequence
    of up to 7 tool calls, with a call and file reads or without: `health` showed a bare `-`
    for "fewer than 4 tool calls" and for "no errors" alike."""
    from itertools import product

    def truth(codes: str, name: str, called: bool, reads: int) -> str | None:
        first, second = codes[:len(codes) // 2], codes[len(codes) // 2:]
        if name == "Context Fill":
            return None if called else "no call yet"
        if name == "Re-reads":
            return None if reads else "no file read yet"
        if name == "Compactions":
            return None
        if len(codes) < health.MIN_CALLS:
            return "under 4 tool calls"
        errors = [sum(c in "eE" for c in half) for half in (first, second)]
        if name == "Error Rate":
            return None if errors[0] else ("errors in 2nd half" if errors[1] else "no errors")
        return None if any(c in "pE" for c in first) else "no edit in 1st half"

    seen = set()
    for n in range(8):
        for codes in map("".join, product(".peE", repeat=n)):
            for called, reads in ((True, 2), (False, 0)):
                h = calls_h(codes, prompt=50_000 if called else None, reads=reads, rereads=1 if reads else 0)
                block = health.grade(h, 200_000)
                for name, _ in health.SIGNALS:
                    why = health.no_number(block, name)
                    assert why == truth(codes, name, called, reads), (codes, name, called)
                    seen.add(why)
    assert seen == {None, "no call yet", "no file read yet", "under 4 tool calls", "no errors", "errors in 2nd half",
                    "no edit in 1st half"}
    assert health.no_number({"errorAcceleration": None}, "Error Rate") is None  # no signals: no reason read
