"""The overstay script against the SPEC oracle, and against the real client without the plugin."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from .harness import run_print, transcript_records, usage_by_message
from .mock_api import MockAPI
from .scenario import GATE_CALL, MISS_CALLS, N_CALLS, expected_rows, overstay_turns, overstay_usages

if TYPE_CHECKING:
    from pathlib import Path

    from .harness import World

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("est_tracked", [600, 900, 1_400])
@pytest.mark.parametrize("est_ignored", [600, 1_400])
def test_overstay_design_is_robust(est_tracked: int, est_ignored: int) -> None:
    rows = expected_rows(est_tracked, est_ignored)
    assert [r.call for r in rows if r.gate] == [GATE_CALL]
    # deep water starts at call 12 with margin on both sides of bp = 0.10 (and of the hysteresis' 0.08)
    assert rows[10].bp is not None
    assert rows[10].bp < 0.07
    assert rows[11].bp is not None
    assert rows[11].bp > 0.11
    assert [r.dwell for r in rows[11:14]] == [1, 2, 3]
    # the cache misses keep L continuous (a cr-only reading would drop L below the floor)
    for call in MISS_CALLS:
        assert rows[call - 1].L - rows[call - 2].L == 60
        assert overstay_usages()[call - 1].cache_read < rows[call - 2].L / 2
    assert [r.lamp for r in rows[11:]] == ["amber"] * 5


def test_overstay_runs_in_the_real_client_as_scripted(claude_bin: Path, world: World) -> None:
    with MockAPI(overstay_turns(world)) as api:
        run = run_print(claude_bin, world, api.base_url, "do the scripted work")
        served = api.main_served()
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.result["num_turns"] == N_CALLS
    assert api.unscripted == 0
    assert len(served) == N_CALLS
    by_id = usage_by_message(transcript_records(world.transcript(run.session_id)))
    assert [by_id[s.message_id]["cache_read_input_tokens"] for s in served] == [u.cache_read for u in overstay_usages()]
