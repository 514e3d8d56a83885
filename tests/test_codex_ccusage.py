"""Token totals of every Codex fixture rollout, as the fold counts them (`replay`), equal an independent
sum of its per-call usage read from the raw JSON and `ccusage codex session --json` (20.0.24), token
for token per model.

The core counts a Codex call as (uncached, cache read, cache write) with cache write = the reported
write, else input - cached (SPEC v4 "Agents"); ccusage counts input - cached as input and the reported
write as cache creation. So the sums compared: input = uncached + written, cache read, output, and
the calls; a non-default tier (`gpt-5.6-sol[priority]`) is the model's tokens.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.agents.codex import rollout
from session_watcher.sessions.replay import fold
from tests.codex_lines import FIXTURES
from tests.test_codex_rollout import oracle
from tests.test_report_ccusage import find_or_install_ccusage

if TYPE_CHECKING:
    from pathlib import Path

ROLLOUTS = sorted(FIXTURES.glob("rollout-*.jsonl"))
Totals = dict[str, dict[str, dict[str, int]]]  # thread id prefix -> model -> figures


@pytest.fixture(scope="module")
def theirs(tmp_path_factory: pytest.TempPathFactory) -> Totals:
    binary = find_or_install_ccusage()
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("ccusage is not installed and could not be installed (CI)")
        pytest.skip("ccusage not installed and npm could not install it")
    home = tmp_path_factory.mktemp("codex-home")
    day = home / "sessions" / "2026" / "07" / "22"
    day.mkdir(parents=True)
    for path in ROLLOUTS:
        shutil.copy(path, day / path.name)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCUSAGE")}
    env.update(CODEX_HOME=str(home), HOME=str(home))
    r = subprocess.run([str(binary), "codex", "session", "--json", "--offline"], capture_output=True, text=True,
                       env=env, timeout=300, check=False)
    assert r.returncode == 0, r.stderr
    out: Totals = {}
    for s in json.loads(r.stdout)["sessions"]:
        out[s["sessionFile"][8:16]] = {m: {"input": v["inputTokens"] + v["cacheCreationTokens"],
                                           "cacheRead": v["cacheReadTokens"], "output": v["outputTokens"]}
                                       for m, v in s["models"].items()}
    return out


def independent(path: Path) -> dict[str, dict[str, int]]:
    """Per model, from the raw JSON (tests.test_codex_rollout.oracle): input - cached, cached, output."""
    got = oracle(path)
    out: dict[str, dict[str, int]] = {}
    for u, model in zip(got["calls"], got["models"], strict=True):
        m = out.setdefault(model, {"input": 0, "cacheRead": 0, "output": 0, "calls": 0})
        m["input"] += u["input_tokens"] - u["cached_input_tokens"]
        m["cacheRead"] += u["cached_input_tokens"]
        m["output"] += u["output_tokens"]
        m["calls"] += 1
    return out


def ours_by_model(path: Path) -> dict[str, dict[str, int]]:
    """Per model (its tier left out), each call's last sample, as the decoder hands them to the fold."""
    events, _bad = rollout.parse_lines(path.read_bytes().splitlines(), rollout.new_decoder())
    last = {e[1]: e for e in events if e[0] == "call"}
    out: dict[str, dict[str, int]] = {}
    for e in last.values():
        assert e[3] is not None  # every call names its model
        m = out.setdefault(e[3].split("[")[0], {"input": 0, "cacheRead": 0, "output": 0, "calls": 0})
        m["input"] += e[5] + e[7]
        m["cacheRead"] += e[6]
        m["output"] += e[8]
        m["calls"] += 1
    return out


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[8:16])
def test_totals_equal_an_independent_sum_and_ccusage(path: Path, theirs: Totals) -> None:
    want = independent(path)
    # the decoder's per-model figures (read whole, so the last line without a newline is in)
    assert ours_by_model(path) == want
    # the fold's meter (replay: the reader, the cursor, the decoder state, the meter)
    state: Any = fold(str(path))[0]
    main, sub = state["meter"]["main"], state["meter"]["sub"]
    assert sub["calls"] == 0
    assert {"input": main["uncachedInput"] + main["cacheWrite"], "cacheRead": main["cacheRead"],
            "output": main["output"], "calls": main["calls"]} == next(iter(want.values()))
    assert len(want) == 1  # one model a thread in these ten
    assert {m: {k: v for k, v in f.items() if k != "calls"} for m, f in want.items()} == theirs[path.name[8:16]]
