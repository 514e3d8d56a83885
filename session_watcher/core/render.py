"""The status line: one line from the status document. Pure.

`● amber x3.4/2.8 bp14% bill 1/3 health B ctx 62%` - the lamp (colour and glyph), position x against the
sweet spot (none until a call has read the cache), the bill premium, the bill cycles the next alert
waits for n/N (only in deep water), the health grade and the context occupancy. Parts are dropped
from the right end of the priority list until the line fits the terminal's columns.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs ~3 ms to import; this module is on the hot path
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

GLYPH = {"white": "○", "green": "●", "amber": "●", "red": "●"}
COLOR = {"white": "37", "green": "32", "amber": "33", "red": "31"}
GRADE_COLOR = {"A": "32", "B": "32", "C": "33", "D": "33", "F": "31"}


def human(n: float | None) -> str:
    """340219 -> '340k'; 1.2M; small numbers as they are."""
    if n is None:
        return "?"
    a = abs(n)
    if a >= 999_500_000:
        return f"{n / 1e9:.1f}B".replace(".0B", "B")
    if a >= 999_500:
        return f"{n / 1e6:.1f}M".replace(".0M", "M")
    if a >= 1000:
        return f"{n / 1e3:.0f}k"
    return f"{n:.0f}"


NO_X = "x: no cache read yet"


def next_alert(doc: Mapping[str, Any]) -> str | None:
    """`bill n/N`: the bill cycles the next alert waits for, counted as the engine counts them.

    In deep water before the gate: one completed bill cycle (`n/1`); after the gate: a reminder every
    N bill cycles since the last alert; out of deep water no alert is pending (None)."""
    dwell = doc.get("dwell") or {}
    if dwell.get("alerted"):
        back = doc.get("backstop") or {}
        n_back = back.get("N")
        return f"bill {back.get('n', 0)}/{n_back if n_back is not None else '∞'}"
    if dwell.get("calls"):
        return f"bill {min(dwell.get('bills', 0), 1)}/1"
    return None


def _paint(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def render(doc: Mapping[str, Any], columns: int = 80, color: bool = True) -> str:
    lamp = doc.get("lamp") or "white"
    head = _paint(f"{GLYPH.get(lamp, '○')} {lamp}", COLOR.get(lamp, "37"), color)
    parts: list[tuple[str, str]] = []  # (plain, painted), in priority order
    x, xs, bp = doc.get("x"), doc.get("xSweet"), doc.get("br")
    if doc.get("L") is None or x is None:
        parts.append(("waiting for the first API call",) * 2)
    else:
        pos = f"x{x:.1f}/{xs:.1f}" if xs is not None else f"x{x:.1f}"
        if not doc.get("L"):  # a cold start reads nothing from the cache: x = L / B is no position yet
            pos = NO_X
        parts.append((pos, pos))
        if bp is not None and xs is not None and x >= xs:  # bp means something on the right arm only
            parts.append((f"bp{bp * 100:.0f}%",) * 2)
        bill = next_alert(doc)
        if bill:
            parts.append((bill, bill))
    cache = doc.get("cache")  # the client's prompt_cache (2.1.332+), only when it said
    if cache:
        text = cache_text(cache)
        parts.append((text, _paint(text, "36" if cache["warm"] else "35", color)))
    grade = (doc.get("health") or {}).get("grade")
    if grade:
        parts.append((f"health {grade}", "health " + _paint(grade, GRADE_COLOR.get(grade, "37"), color)))
    cp = doc.get("contextPressure") or {}
    pressure, window = cp.get("pressureTokens"), cp.get("contextWindow")
    if pressure is not None and window:
        occ = f"ctx {100 * pressure / window:.0f}%"
        parts.append((occ, occ))
    plain_len = len(lamp) + 2
    chosen: list[str] = []
    for plain, painted in parts:
        if plain_len + 1 + len(plain) > columns:
            break
        plain_len += 1 + len(plain)
        chosen.append(painted)
    return " ".join([head, *chosen])


def cache_text(cache: Mapping[str, Any]) -> str:
    """'cache 4:32' (warm: time left), 'cache cold'; '(miss: model_changed)' after a cold start."""
    left = cache.get("left")
    if not cache["warm"]:
        text = "cache cold"
    elif left is None:
        text = "cache warm"
    else:
        secs = max(0, int(left))
        text = f"cache {secs // 60}:{secs % 60:02d}"
    miss = cache.get("miss")
    return f"{text} (miss: {', '.join(miss)})" if miss else text


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v * 100:.1f}%"


def _c_eff(doc: Mapping[str, Any]) -> str:
    """' (cEff 6.3: the restart reads 18k shared)' when a shared prefix makes restarts cheaper."""
    c_eff, shared = doc.get("cEff"), doc.get("shared")
    if c_eff is None or not shared or c_eff >= doc["cRatio"]:
        return ""
    return f" (cEff {c_eff:.1f}: a restart reads {human(shared)} shared)"


def _num(v: float | None, nd: int = 2) -> str:
    return "-" if v is None else f"{v:.{nd}f}"


def status_text(doc: Mapping[str, Any], top: int = 8) -> str:
    """The human form of the status document (`session-watcher status`)."""
    tu, su = doc["tokenUsage"], doc["subagentUsage"]
    cp = doc["contextPressure"]
    h = doc.get("health") or {}
    occ = "-"
    if cp.get("pressureTokens") is not None and cp.get("contextWindow"):
        occ = f"{100 * cp['pressureTokens'] / cp['contextWindow']:.0f}% of {human(cp['contextWindow'])}"
    lines = [
        f"session  {doc['sessionId']}  model {doc.get('model') or '-'}  segment {doc['segment']}  "
        f"calls {doc['calls']}",
        f"lamp     {doc['lamp']}   x {_num(doc['x']) if doc['L'] else '- (no cache read yet)'} / sweet spot "
        f"{_num(doc['xSweet'])}   bp {_pct(doc['br'])}   bill progress {doc['billProgress']:.2f} "
        f"({doc['bills']} this segment)",
        f"alerts   {_alert_words(doc)}",
        f"tokens   L {human(doc['L'])}   B {human(doc['B'])}   bDefault {human(doc['bDefault'])}   "
        f"g {human(doc['g'])}/call   cRatio {doc['cRatio']:g}{_c_eff(doc)}   rent {_num(doc['burnRate'])}",
        f"context  {occ}   health {h.get('grade', '-')} ({h.get('score', '-')})   "
        f"compactions {doc['compactions']}",
        f"usage    input {human(tu['uncachedInput'])}  output {human(tu['output'])}  "
        f"cache read {human(tu['cacheRead'])}  cache write {human(tu['cacheWrite'])}  "
        f"({tu['calls']} calls; subagents {su['calls']} calls, {human(su['cacheRead'] + su['cacheWrite'])} cached)",
    ]
    files = [b for b in doc["buckets"] if b["type"] == "file"]
    if files:
        lines.append(f"carried  {len(files)} files (largest first):")
        for b in files[:top]:
            why = "" if b["included"] else f"  [{b['defaultDiscardReason'] or 'excluded'}]"
            lines.append(f"  {human(b['tokens']):>6}  {b['path']}{why}")
    return "\n".join(lines)


def _alert_words(doc: Mapping[str, Any]) -> str:
    dwell, back = doc["dwell"], doc["backstop"]
    if dwell["alerted"]:
        if back["N"] is None:
            return "alerted; no reminder due (the backstop interval is unbounded)"
        return f"alerted; the next reminder after {back['N']} bill cycles ({back['n']} so far)"
    if dwell["calls"]:
        return (f"in deep water for {dwell['calls']} calls; the alert waits for 1 completed bill cycle "
                f"({min(dwell['bills'], 1)} so far)")
    return "none pending (not past the sweet spot with a bill premium of bp_amber or more)"


def health_text(h: Mapping[str, Any], width: int = 20) -> str:
    rows = [f"Context health: {h['grade']} (score {h['score']}/100)"]
    for s in h["signals"]:
        filled = round(width * s["value"] / 100)
        rows.append(f"  {s['name']:<16} {'█' * filled}{'░' * (width - filled)} {s['grade']}  "
                    f"weight {s['weight'] * 100:.0f}%")
    return "\n".join(rows)
