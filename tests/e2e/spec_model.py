"""An independent, minimal reading of SPEC.md's per-call formulas: the oracle of the e2e scripts.

It takes the usage the mock serves and the ledger entries the file reads push (tokens estimated by
the SPEC's rule, given here by the test), and walks L, the ledger, Holt growth, x, xSweet, bp, the
bill integral, the dwell counter and the gate, call by call. It is deliberately written from the
SPEC text alone and shares no code with the plugin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

ALPHA, BETA, G_MIN = 0.3, 0.1, 100.0
BP_AMBER, BP_RED, DWELL = 0.10, 0.25, 3
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


@dataclass
class Model:
    c_ratio: float = 12.5
    floor: int | None = None
    L: int | None = None
    level: float | None = None
    trend: float = 0.0
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
            self.floor = max(cr, cw, inp)
            self.L = cr
        else:
            prev = self.L or 0
            big_l = cr + cw if (cr < prev / 2 and cr + cw >= prev / 2) else cr
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
            if self.level is None:
                self.level, self.trend = float(residual), 0.0
            else:
                new_level = ALPHA * residual + (1 - ALPHA) * (self.level + self.trend)
                self.trend = BETA * (new_level - self.level) + (1 - BETA) * self.trend
                self.level = new_level
        g = G_MIN if self.level is None else max(G_MIN, self.level + self.trend)
        b = self.floor + self.included
        x = self.L / b
        dhat = math.sqrt(2 * self.c_ratio * g / b)
        x_sweet = 1 + dhat
        mf = dhat / (1 + dhat + dhat * dhat / 2)
        r = (x - 1) / dhat
        bp = mf * (r - 1) ** 2 / (2 * r) if r > 0 else None
        rent = max(0.0, self.L - b) / (self.c_ratio * b)
        self.bill_progress += (self.rent + rent) / 2
        self.rent = rent
        done = math.floor(self.bill_progress) if self.bill_progress >= 1 else 0
        self.bill_progress -= done
        deep = x >= x_sweet and bp is not None and bp >= BP_AMBER
        gate = False
        if deep:
            self.dwell += 1
            self.dwell_bills += done
            if not self.fired and self.dwell >= DWELL and self.dwell_bills >= 1:
                self.fired = gate = True
        else:
            self.dwell = self.dwell_bills = 0
            self.fired = False
        if x <= 1:
            lamp = "white"
        elif x < x_sweet or bp is None or bp < BP_AMBER:
            lamp = "green"
        elif bp < BP_RED:
            lamp = "amber"
        else:
            lamp = "red"
        row = Row(self.calls, self.L, residual, g, b, x, x_sweet, bp, rent, done, self.dwell, gate, lamp)
        self.rows.append(row)
        return row


def read_tokens(text: str, cpt: float = 3.5, line_prefix: int = 7, overhead: int = 40) -> int:
    """SPEC's estimate of a whole-file Read: the lines as the Read tool shows them, plus overhead."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    chars = sum(len(s) + line_prefix + 1 for s in lines)
    return round(chars / cpt) + overhead
