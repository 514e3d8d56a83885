"""The closed loop reads each call's figures from the engine (`engine.on_call`'s `priced`) instead of
computing them again after the call (`core.closedloop`): they must be the figures `eoq.quantities`
gives of the state the call left, field for field, on every call of real sessions (cold returns,
model switches, compactions, calls the engine does not price, Codex rollouts), with the config as
shipped and with the keys `backtest --set` moves most. The advice's horizon (`horizon`,
`untilCompaction`, `saving`) is filled in only where the gate or a reminder weighed it, as without a
hook (no reader of `priced` reads it): filled in after the call, the figures are `quantities`' whole."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.base import config
from session_watcher.core import engine
from session_watcher.core.eoq import quantities, with_horizon
from session_watcher.sessions import backtest as shell
from tests.oracle import FIXTURES, TRANSCRIPTS

if TYPE_CHECKING:
    from session_watcher.core.shapes import Alert, CallUsage, ModelParams, Quantities, State

SESSIONS = [TRANSCRIPTS / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl", TRANSCRIPTS / "tool_heavy.jsonl",
            FIXTURES / "codex" / "rollout-019f8c04-f40a-75a1-80a3-75c564780b42.jsonl"]
OVERRIDES: list[dict[str, Any]] = [{}, {"bp_amber": 0.05, "notify_dwell": 1}, {"gate_min_calls": 30,
                                                                                 "advice_min_usd": 0.2}]


class Both:
    """A call hook given the engine's figures of each call, that computes them again after it."""

    def __init__(self, cfg: ModelParams) -> None:
        self.cfg = cfg
        self.priced: list[Quantities | None] = []
        self.pairs: list[tuple[Quantities | None, Quantities]] = []
        self.filled: list[Quantities] = []  # each priced call's figures, the horizon filled in after it

    def __call__(self, state: State, _fired: list[Alert], _usage: CallUsage) -> None:
        q = self.priced.pop()
        self.pairs.append((None if q is None else q.copy(), quantities(state, self.cfg)))
        if q is not None:
            self.filled.append(with_horizon(state, self.cfg, {**q}))


@pytest.mark.parametrize("overrides", OVERRIDES)
def test_the_engine_s_figures_of_a_call_are_the_state_s_after_it(overrides: dict[str, Any]) -> None:
    lamps = set()
    n = 0
    for path in SESSIONS:
        loaded = shell.load(str(path))
        cfg = config.model_params(config.merge(overrides))
        hook = Both(cfg)
        engine.fold(loaded.fresh(), loaded.events, cfg, loaded.paths, call_hook=hook)
        priced = [(q, again) for q, again in hook.pairs if q is not None]
        assert priced
        n += len(priced)
        horizon = ("horizon", "untilCompaction", "saving")
        for (q, again), filled in zip(priced, hook.filled, strict=True):
            assert {k: v for k, v in q.items() if k not in horizon} == {k: v for k, v in again.items()
                                                                         if k not in horizon}
            assert filled == again
            assert q["horizon"] is None or q == again  # where the gate weighed it: the same
        lamps |= {q["lamp"] for q, _again in priced}
    assert n > 300
    assert {"green", "amber", "red"} <= lamps  # the lamp's hysteresis read before the fold set it
