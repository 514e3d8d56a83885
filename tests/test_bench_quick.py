"""The quick benchmark runs end to end and writes well-formed tables (no timing is asserted)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

LATENCY_KINDS = ("post-known", "post-new", "stop", "prompt")
SIZES = ("1 MB", "4 MB")
OTLP_KINDS = ("otlp-off", "otlp-on", "otlp-down", "otlp-spawn")
NUMERIC = (
    "medianMs",
    "p95Ms",
    "xPythonI",
    "xPythonIS",
    "totalMs",
    "seconds",
    "mbPerS",
    "callsPerS",
    "peakRssMB",
    "xFasterThanCold",
)


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    out = tmp_path_factory.mktemp("bench-out")
    proc = subprocess.run(
        # two timed rounds: every row measured, nothing here reads a figure's size (7 by default)
        [sys.executable, "-m", "bench.run", "--quick", "--rounds", "2", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads((out / "results.json").read_text()), (out / "results.md").read_text()


def expected_ids() -> list[str]:
    ids = [
        "python-I-S",
        "python-I",
        "import-python-I",
        "import-hook",
        "import-statusline",
        "replay",
        "ccusage",
        "report-cold",
        "report-warm",
        "report-append",
    ]
    ids += [f"hook-{k}@{s}" for k in LATENCY_KINDS for s in SIZES]
    ids += [f"statusline@{s}" for s in SIZES]
    ids += [f"hook-{k}@{SIZES[0]}" for k in OTLP_KINDS]  # the export's cost, on the small session
    return ids


class TestQuickBench:
    def test_every_row_is_present_once(self, quick: tuple[dict[str, Any], str]) -> None:
        """Each measured row appears exactly once, measured or marked not available."""
        res, _ = quick
        ids = [r["id"] for r in res["rows"]]
        assert sorted(ids) == sorted(expected_ids())

    def test_available_rows_have_finite_positive_numbers(self, quick: tuple[dict[str, Any], str]) -> None:
        """A measured row carries finite, positive figures; a missing one says why."""
        res, _ = quick
        for row in res["rows"]:
            if not row["available"]:
                assert row["note"].startswith("not available: "), row
                continue
            nums = [row[k] for k in NUMERIC if k in row]
            assert nums, row
            for v in nums:
                assert isinstance(v, int | float), (row["id"], v)
                assert math.isfinite(v), (row["id"], v)
                assert v > 0, (row["id"], v)
            if "n" in row:
                assert row["n"] >= 1

    def test_the_baselines_are_always_measured(self, quick: tuple[dict[str, Any], str]) -> None:
        """The interpreter's own start-up is measured in the same run, and -S is the cheaper one."""
        res, _ = quick
        rows = {r["id"]: r for r in res["rows"]}
        assert rows["python-I"]["available"]
        assert rows["python-I-S"]["available"]
        assert rows["python-I"]["xPythonI"] == pytest.approx(1.0)
        assert rows["import-python-I"]["modules"] > 5

    def test_machine_description(self, quick: tuple[dict[str, Any], str]) -> None:
        """The results say what they were measured on."""
        m = quick[0]["machine"]
        assert m["cores"] >= 1
        assert m["memoryGB"] > 0
        assert m["python"].startswith("3.")
        assert set(m["versions"]) >= {"session-watcher", "filelock", "platformdirs", "tomlkit"}

    def test_targets_are_reported_with_a_verdict(self, quick: tuple[dict[str, Any], str]) -> None:
        """Every target has a pass/miss verdict when its inputs were measured."""
        res, _ = quick
        assert len(res["targets"]) == 4 * 3 + 2 + 3 + 3  # + the export's on / down / spawn over off
        for t in res["targets"]:
            assert t["pass"] in (True, False, None)
            if t["pass"] is not None:
                assert math.isfinite(t["value"])
            if t["pass"] is False:
                assert t["note"].startswith("missed by ")

    def test_ccusage_reads_the_generated_corpus_exactly(self, quick: tuple[dict[str, Any], str]) -> None:
        """ccusage's totals equal the generator's ground truth (one usage sample per API call)."""
        res, _ = quick
        totals = res["totals"]
        if "ccusage" not in totals:
            pytest.skip("ccusage not installed")
        assert totals["ccusage"] == {k: float(v) for k, v in totals["generator (truth)"].items()}
        assert totals["generator (truth)"]["cacheRead"] > 0

    def test_report_totals_match_the_truth(self, quick: tuple[dict[str, Any], str]) -> None:
        """session-watcher report counts the same tokens, before and after the 1 % append."""
        res, _ = quick
        totals = res["totals"]
        if "report (cold)" not in totals:
            pytest.skip("report not available")
        truth = {k: float(v) for k, v in totals["generator (truth)"].items()}
        assert totals["report (cold)"] == truth
        after = {k: float(v) for k, v in totals["generator (truth, after append)"].items()}
        assert after != truth
        assert totals["report (after append)"] == after

    def test_markdown_has_every_row_and_section(self, quick: tuple[dict[str, Any], str]) -> None:
        """results.md shows every row's label and all sections."""
        res, md = quick
        for head in (
            "## Hook and status-line latency",
            "## Import budget",
            "## Replay throughput",
            "## Report on the corpus",
            "## Targets",
            "## Input shape",
        ):
            assert head in md
        for row in res["rows"]:
            assert row["label"].replace("|", "\\|") in md, row["label"]
