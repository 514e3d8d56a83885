"""The scripted sessions of the e2e suite, with what SPEC.md says must follow from them.

Overstay (print mode, 16 main-chain API calls):

  1  Read src/engine.py        warm start: cr = FLOOR (shared with earlier sessions), cw 300
  2  Read build/generated.log  L grows by what call 1 wrote; the gitignored file is read
  3-5 Bash                     the files' content settles into L (over-provided: the ledger clears)
  6  Bash                      L jumps by SPIKE (a big command output): g rises, x ~ 2
  7-11 Bash                    L creeps by STEP a call: g decays, bp stays below 0.07
 12  Bash                      L jumps by JUMP: x ~ 4.8 against xSweet ~ 2, bp crosses 0.10
                               (with margin: 0.16 vs 0.04 the call before); amber from here on
 13  Bash                      a cache miss: cr = 3,000, cw = the rest; L must stay continuous
 14                            third deep-water call with a bill completed: the gate trips HERE
 16  text                      a second cache miss ends the session (final L = cr + cw)

The gate call (14) does not depend on the plugin's token estimate of the read files: the design
gives 14 for any estimate of src/engine.py between 600 and 1,400 tokens (see
test_overstay_design_is_robust); SPEC's own default (3.5 chars/token) gives about 900.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .harness import ignored_text, tracked_text
from .mock_api import Turn, Usage, bash, read, say
from .spec_model import Model, Row, read_tokens

if TYPE_CHECKING:
    from .harness import World

FLOOR = 20_000
# the scenario's figures assume a model that reads its cache at 0.1x (cRatio 12.5 for 5-minute
# writes); the client's own default (claude-opus-5-5 in 2.1.332) reads at 0.05x (cRatio 25)
MODEL = "claude-opus-4-6"
FIRST_CR = FLOOR  # a warm start: the first call reads what earlier sessions cached (shared = FLOOR)
SPIKE = 20_000
STEP = 60
JUMP, JUMP_CALL = 60_000, 12  # one big step: where deep water starts
GATE_CALL = 14
MISS_CALLS = (13, 16)
MISS_CR = (3_000, 2_000)
N_CALLS = 16


def overstay_usages(est_tracked: int = 900, est_ignored: int = 1_050) -> list[Usage]:
    """The usage of each of the 16 calls. Estimates only size the over-provided settling growth."""
    del est_tracked, est_ignored  # the numbers below over-provide for anything up to ~1,400 + ~1,400
    u: list[Usage] = [
        Usage(input_tokens=4, cache_read=FIRST_CR, cache_write_5m=FLOOR + 300 - FIRST_CR, output_tokens=40),
        Usage(input_tokens=4, cache_read=FLOOR + 300, cache_write_5m=1_000, output_tokens=38),
        Usage(input_tokens=4, cache_read=FLOOR + 1_300, cache_write_5m=1_150, output_tokens=35),
        Usage(input_tokens=4, cache_read=FLOOR + 2_450, cache_write_5m=60, output_tokens=35),
        Usage(input_tokens=4, cache_read=FLOOR + 2_510, cache_write_5m=SPIKE, output_tokens=35),
    ]
    level = FLOOR + 2_510 + SPIKE
    u.append(Usage(input_tokens=4, cache_read=level, cache_write_5m=STEP, output_tokens=33))
    for call in range(7, N_CALLS + 1):
        level += JUMP if call == JUMP_CALL else STEP
        if call in MISS_CALLS:
            cr = MISS_CR[MISS_CALLS.index(call)]
            u.append(Usage(input_tokens=4, cache_read=cr, cache_write_5m=level - cr, output_tokens=33))
        else:
            u.append(Usage(input_tokens=4, cache_read=level, cache_write_5m=STEP, output_tokens=33))
    assert len(u) == N_CALLS
    return u


def overstay_turns(world: World) -> list[Turn]:
    usages = overstay_usages()
    turns = [
        read(str(world.tracked), usages[0], "read tracked"),
        read(str(world.ignored), usages[1], "read ignored"),
    ]
    for i in range(2, N_CALLS - 1):
        turns.append(bash(f"echo step-{i + 1}", usages[i], f"bash {i + 1}"))
    turns.append(say("Finished the scripted work.", usages[-1], "final"))
    return turns


def expected_rows(est_tracked: int | None = None, est_ignored: int | None = None) -> list[Row]:
    """The SPEC oracle's walk through the overstay session."""
    e1 = read_tokens(tracked_text()) if est_tracked is None else est_tracked
    e2 = read_tokens(ignored_text()) if est_ignored is None else est_ignored
    m = Model()
    for n, u in enumerate(overstay_usages(), start=1):
        m.call(u.input_tokens, u.cache_read, u.cache_write)
        if n == 1:
            m.file_read(e1, included=True)
        elif n == 2:
            m.file_read(e2, included=False)
    return m.rows
