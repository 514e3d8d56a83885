"""An independent, minimal reading of SPEC.md's per-call formulas: the oracle of the e2e scripts.

It takes the usage the mock serves and the ledger entries the file reads push (tokens estimated by
the SPEC's rule, given here by the test), and walks L, the ledger, Holt growth, x, xSweet, bp, the
bill integral, the dwell counter and the gate, call by call. It is deliberately written from the
SPEC text alone and shares no code with the plugin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

ALPHA, G_MIN, WARM, CLIP = 0.05, 100.0, 20, 4.0  # the growth estimate (SPEC v2; docs/model.md)
BP_AMBER, BP_RED, DWELL = 0.10, 0.25, 3  # the gate the scripted project pins (harness.GATE_V2), a bill in the dwell
LEDGER_CALLS = 3


@dataclass
class Row:
    call: int
    L: int
    residual: int | None
    g: float
    b_default: int
    x: float
    x_sweet: float
    bp: float | None
    rent: float
    bills_done: int
    dwell: int
    gate: bool
    lamp: str
    saving: float = 0.0  # what restarting now saves over the next cycle, in read-price tokens


@dataclass
class Model:
    c_ratio: float = 12.5
    floor: int | None = None
    L: int | None = None
    level: float | None = None
    seen: int = 0  # residuals the growth estimate has seen
    shared: int | None = None  # cr of the session's first call
    lamp: str = "white"
    included: int = 0  # pathTotals of included paths
    ledger: list[list[int]] = field(default_factory=list)  # [open tokens, age]
    bill_progress: float = 0.0
    rent: float = 0.0
    dwell: int = 0
    dwell_bills: int = 0
    fired: bool = False
    calls: int = 0
    rows: list[Row] = field(default_factory=list)

    def file_read(self, tokens: int, included: bool) -> None:
        """A tool result adding `tokens` to B at once and to the ledger."""
        if included:
            self.included += tokens
        self.ledger.append([tokens, 0])

    def call(self, inp: int, cr: int, cw: int) -> Row:
        self.calls += 1
        residual: int | None = None
        if self.floor is None:
            self.floor = inp + cr + cw
            self.shared = cr
            self.L = cr
        else:
            prev = self.L or 0
            big_l = cr + cw if cr < prev - max(1000, 0.02 * prev) else cr
            ref = self.floor if self.calls == 2 else prev
            left = max(0, big_l - ref)
            kept = []
            for entry in self.ledger:
                take = min(entry[0], left)
                left -= take
                entry[0] -= take
                entry[1] += 1
                if entry[0] > 0 and entry[1] < LEDGER_CALLS:
                    kept.append(entry)
            self.ledger = kept
            residual = left
            self.L = big_l
            value = float(residual)
            if self.level is None:
                self.level = value
            else:
                if self.seen >= WARM:
                    value = min(value, CLIP * max(self.level, G_MIN))
                weight = max(ALPHA, 1 / (self.seen + 1))
                self.level = weight * value + (1 - weight) * self.level
            self.seen += 1
        g = G_MIN if self.level is None else max(G_MIN, self.level)
        b = self.floor + self.included
        x = self.L / b
        shared = min(self.shared or 0, b)
        c_eff = (self.c_ratio * (b - shared) + shared) / b
        dhat = math.sqrt(2 * c_eff * g / b)
        x_sweet = 1 + dhat
        mf = dhat / (1 + dhat + self.c_ratio * g / b)
        r = (x - 1) / dhat
        bp = mf * (r - 1) ** 2 / (2 * r) if r > 0 else None
        rent = max(0.0, self.L - b) / (c_eff * b)
        self.bill_progress += (self.rent + rent) / 2
        self.rent = rent
        done = math.floor(self.bill_progress) if self.bill_progress >= 1 else 0
        self.bill_progress -= done
        was = self.lamp
        lit = was in ("amber", "red")
        if x <= 1:
            lamp = "white" if was == "white" else "green"
        elif x < x_sweet or bp is None:  # a lit lamp holds a fifth of the way back from the sweet spot
            lamp = "amber" if lit and x - 1 >= 0.8 * dhat else "green"
        elif bp >= BP_RED or was == "red":  # red, as amber, holds while past the sweet spot
            lamp = "red"
        elif bp >= BP_AMBER or lit:  # amber holds while past the sweet spot
            lamp = "amber"
        else:
            lamp = "green"
        self.lamp = lamp
        deep = lamp in ("amber", "red")
        gate = False
        if deep:
            self.dwell += 1
            self.dwell_bills += done
            if not self.fired and self.dwell >= DWELL and self.dwell_bills >= 1 and x >= x_sweet:
                self.fired = gate = True
        else:
            self.dwell = self.dwell_bills = 0  # the gate given stays given: one per segment
        saving = (dhat * b / g) * (self.L - b) - c_eff * b  # m (L - B) - K over the optimal cycle's m calls
        row = Row(self.calls, self.L, residual, g, b, x, x_sweet, bp, rent, done, self.dwell, gate, lamp, saving)
        self.rows.append(row)
        return row


def read_tokens(text: str, cpt: float = 3.5, line_prefix: int = 7, overhead: int = 40) -> int:
    """SPEC's estimate of a whole-file Read: the lines as the Read tool shows them, plus overhead."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    chars = sum(len(s) + line_prefix + 1 for s in lines)
    return round(chars / cpt) + overhead
