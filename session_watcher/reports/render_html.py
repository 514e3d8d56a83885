"""The report document -> one self-contained HTML page (inline CSS and SVG, no script, no network).

Its CSS is package data (reports/assets/theme.css, shared with the session page, and report_page.css).
A session's row links to its page when `pages` maps its id to one (`report --html OUT --pages`).
"""

from __future__ import annotations

import math
import re
from html import escape as _html_escape
from typing import Any

from session_watcher.agents import FALLBACK  # a document from before sessions named their agent
from session_watcher.core.numbers import dollars, duration, tokens
from session_watcher.core.prices_openai import class_words
from session_watcher.core.text import clean, keep_units
from session_watcher.reports.fmt import CAUSE_WORDS, CAUSES
from session_watcher.reports.render_text import (
    agents_of,
    break_cell,
    cliff_classes,
    day_sentence,
    fork_sentence,
    guard_sentence,
    model_cell,
    pct,
    project_names,
    report_id_length,
    span,
    started,
    subagent_sentence,
    ttl_sentence,
    unpriced_sentence,
)


def escape(text: str) -> str:
    """HTML-escaped text, cleaned first (`core.text.clean`): no character the reader cannot see."""
    return _html_escape(clean(text))


def _css() -> str:
    """The shared theme (the session page uses it too) and the report's own rules: package data."""
    from session_watcher.reports.session_page_template import asset

    return asset("theme.css") + "\n" + asset("report_page.css")


W, H = 900, 380
ML, MR, MT, MB = 60, 20, 44, 40  # the top margin holds the inferred-boundary labels
# a phone's copy of the scatter (shown under 780 px, where the wide one's 11 px text would scale
# below 9 px): its own geometry, fewer ticks, short boundary labels, 12 px text at about 1:1
NARROW = {"w": 360, "h": 300, "ml": 54, "mr": 12, "mt": 40, "mb": 36}
WIDE = {"w": W, "h": H, "ml": ML, "mr": MR, "mt": MT, "mb": MB}
TICKS = ((1, "1 s"), (10, "10 s"), (60, "1 min"), (300, "5 min"), (600, "10 min"), (3600, "1 h"),
         (4 * 3600, "4 h"), (86400, "1 day"))
LABEL_ROW = 14  # px between the inferred-boundary labels' baselines, stacked up from the frame's top
NARROW_TICKS = (1, 60, 300, 3600, 86400)  # 10 min and 4 h would run into their neighbours


def _log_scale(lo: float, hi: float, a: float, b: float) -> Any:
    llo, lhi = math.log10(lo), math.log10(max(hi, lo * 10))

    def f(v: float) -> float:
        return a + (math.log10(max(v, lo)) - llo) / (lhi - llo) * (b - a)

    return f


# each cache class's colour in the scatter and its legend (a Codex thread's classes: core.eoq.cache_class)
CLASS_COLOURS = {"5m": "var(--cat2)", "1h": "var(--warm)", "codex-30m": "var(--read)", "codex-10m": "var(--task)"}
# the legend's words: Claude Code's classes spelt out, a Codex class in prices_openai.class_words' words
CLASS_WORDS = {"5m": "after 5-minute writes", "1h": "after 1-hour writes"}


# a point with no cache class (core.eoq.cache_class None): neutral (report_page.css `.p-none`), a legend entry
NO_CLASS_WORDS = "no cache class"


def cliff_legend(doc: dict[str, Any]) -> str:
    """The scatter's legend: a swatch for each class the cliff shows (`cliff_classes`), in its colour,
    and the neutral one of the points with no class, where there are any."""
    spans = "".join(
        f'<span><i class="sw sw-{cls if cls in CLASS_COLOURS else "other"}"></i>'
        f"{escape(CLASS_WORDS.get(cls) or f'after {class_words(cls)} writes')}</span>"
        for cls in cliff_classes(doc)
    )
    if any(p["ttl"] is None for p in doc["scatter"]):
        spans += f'<span><i class="sw sw-none"></i>{NO_CLASS_WORDS}</span>'
    return f'<p class="legend">{spans}<span class="muted">hollow: warm, filled: cold</span></p>'


def _frame(doc: dict[str, Any], narrow: bool) -> tuple[int, int, int, int, int, int]:
    """A copy's width, height and margins (left, right, top, bottom): the top margin holds two rows
    of inferred-boundary labels, a third class's adds one."""
    g = NARROW if narrow else WIDE
    more = LABEL_ROW * max(0, sum(1 for tt in doc["ttl"].values() if tt is not None) - 2)
    return g["w"], g["h"] + more, g["ml"], g["mr"], g["mt"] + more, g["mb"]


def _ranges(pts: list[dict[str, Any]]) -> tuple[float, float]:
    """The axes' tops: the longest gap (2 h at least) and 1.5 x the most tokens (100k at least)."""
    return (max([p["gapSeconds"] for p in pts] + [7200.0]),
            max([p["tokensRecreated"] * 1.5 for p in pts] + [1e5]))


def scatter_svg(doc: dict[str, Any], narrow: bool = False) -> str:
    """The gap-versus-tokens scatter's frame, axes and inferred boundaries; `narrow`: the phone's copy
    (id `scatter-narrow`). Its points are drawn once for both copies (`scatter_points`)."""
    w, h, ml, mr, mt, mb = _frame(doc, narrow)
    inferred = sorted((cls, tt) for cls, tt in doc["ttl"].items() if tt is not None)
    max_gap, max_tok = _ranges(doc["scatter"])
    x = _log_scale(1.0, max_gap, ml, w - mr)
    y = _log_scale(1.0, max_tok, h - mb, mt)
    parts = [
        f'<svg id="{"scatter-narrow" if narrow else "scatter"}" class="scatter" xmlns="http://www.w3.org/2000/svg" '
        f'width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" '
        'aria-label="gap before a call versus tokens re-created">'
    ]
    parts.append(f'<rect class="frame" x="{ml}" y="{mt}" width="{w - ml - mr}" height="{h - mt - mb}"/>')
    for s, label in TICKS:
        if s <= max_gap * 1.01 and (not narrow or s in NARROW_TICKS):
            xs = x(s)
            parts.append(f'<line class="tick" x1="{xs:.1f}" y1="{h - mb}" x2="{xs:.1f}" y2="{h - mb + 4}"/>')
            parts.append(f'<text x="{xs:.1f}" y="{h - mb + 16}" text-anchor="middle">{label}</text>')
    t = 1 if not narrow else 100  # the phone's copy: every second decade, none in the corner by "1 s"
    while t <= max_tok * 1.01:
        ys = y(t)
        parts.append(f'<text x="{ml - 6}" y="{ys + 4:.1f}" text-anchor="end">{tokens(t)}</text>')
        t *= 10 if not narrow else 100
    parts.append(f'<text x="{(ml + w - mr) / 2}" y="{h - 6}" text-anchor="middle">gap before the call (log)</text>')
    parts.append(
        f'<text x="{12 if narrow else 14}" y="{(mt + h - mb) / 2}" '
        f'transform="rotate(-90 {12 if narrow else 14} {(mt + h - mb) / 2})" '
        f'text-anchor="middle">{"tokens (log)" if narrow else "tokens re-created (log)"}</text>'
    )
    colour = CLASS_COLOURS
    for k, (cls, tt) in enumerate(inferred):  # one label row each, from the frame's top up
        xs = x(tt["inferredSeconds"])
        ev = tt["evidence"]
        parts.append(
            f'<line class="inferred-ttl" x1="{xs:.1f}" y1="{mt}" x2="{xs:.1f}" y2="{h - mb}" '
            f'stroke="{colour.get(cls, "var(--dim)")}" stroke-dasharray="5 4"/>'
        )
        when = escape(duration(tt["inferredSeconds"]))
        label = f"{class_words(cls)} TTL ≈ {when}" if narrow else \
            f"inferred {class_words(cls)}-write TTL ≈ {when} (n={ev['below']['n']} below, {ev['above']['n']} above)"
        parts.append(
            f'<text class="inferred-label" x="{xs:.1f}" y="{mt - 8 - LABEL_ROW * k}" '
            f'text-anchor="{"end" if xs > w / 2 else "start"}">{label}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _box(doc: dict[str, Any], narrow: bool) -> str:
    """Where a copy's frame sits in its picture, in shares of the picture (CSS custom properties)."""
    w, h, ml, mr, mt, mb = _frame(doc, narrow)
    k = "n" if narrow else "w"
    return (f"--{k}l:{100 * ml / w:.3f}%;--{k}t:{100 * mt / h:.3f}%;"
            f"--{k}w:{100 * (w - ml - mr) / w:.3f}%;--{k}h:{100 * (h - mt - mb) / h:.3f}%")


def scatter_points(doc: dict[str, Any]) -> str:
    """The scatter's points, written once for the wide copy and the phone's: a layer laid over the frame
    of whichever copy shows (its place in each: `_box`), each point placed in shares of the frame (both
    copies' axes span the same ranges on the same log scales), a dot of fixed size (hollow: warm, filled:
    cold) in its class's colour, its figures on hover. One dot per drawn position, class and warmth: a
    year's returns (68,919 points, most of them under a minute and warm) were as many circles, twice (the
    phone's copy), 22 MB of the page."""
    # hidden from assistive technology, as the picture's own marks are (the picture is one image, named):
    # a point each, thousands of them, read out one by one; the table under it says them (`points_table`)
    parts = [f'<div class="points" aria-hidden="true" style="{_box(doc, False)};{_box(doc, True)}">']
    for (left, top, ttl, cold), same in _spots(doc["scatter"]).items():
        cls = ttl if ttl in CLASS_COLOURS else ("none" if ttl is None else "other")
        gap, tok = _dot_figures(same)
        tip = (f"{len(same):,} returns: " if len(same) > 1 else "") + f"{gap} gap, {tok} tokens re-created"
        writes = f"{class_words(ttl)} writes" if ttl else NO_CLASS_WORDS
        parts.append(f'<i class="p-{cls}{" cold" if cold else ""}" style="left:{left}%;top:{top}%" '
                     f'title="{escape(tip)} ({escape(writes)})"></i>')
    parts.append("</div>")
    return "".join(parts)


def _spots(pts: list[dict[str, Any]]) -> dict[tuple[str, str, str | None, bool], list[dict[str, Any]]]:
    """The scatter's points by the dot that draws them: its place (a hundredth of a per cent of the
    frame: a tenth of a unit of the wide copy's), cache class and warmth."""
    max_gap, max_tok = _ranges(pts)
    x = _log_scale(1.0, max_gap, 0.0, 100.0)
    y = _log_scale(1.0, max_tok, 100.0, 0.0)
    spots: dict[tuple[str, str, str | None, bool], list[dict[str, Any]]] = {}
    for p in pts:
        spot = (f"{x(max(p['gapSeconds'], 1.0)):.2f}", f"{y(max(p['tokensRecreated'], 1)):.2f}", p["ttl"], p["cold"])
        spots.setdefault(spot, []).append(p)
    return spots


def _dot_figures(same: list[dict[str, Any]]) -> tuple[str, str]:
    """A dot's gap and tokens re-created, as its tooltip and its row in the table say them: one value,
    or the range of the returns it draws."""
    lo, hi = duration(min(p["gapSeconds"] for p in same)), duration(max(p["gapSeconds"] for p in same))
    toks = sorted({p["tokensRecreated"] for p in same})
    gap = lo if lo == hi else f"{lo} to {hi}"  # (10.2 s and 10.201 s both read "10 s")
    return gap, f"{toks[0]:,}" if len(toks) == 1 else f"{toks[0]:,} to {toks[-1]:,}"


POINTS_ROWS = 500  # the table under the scatter: its dots with the longest gaps, where there are more


def points_table(doc: dict[str, Any]) -> str:
    """The scatter's figures for a reader without a mouse (a dot's are its tooltip, hover only), folded
    under the figure: a row per dot as drawn (its gap, tokens re-created, cache class, warm or cold,
    and how many returns it draws), the longest gaps first, at most POINTS_ROWS (the others counted:
    `report --json` has every point). "" with no point."""
    spots = _spots(doc["scatter"])
    if not spots:
        return ""
    dots = sorted(spots.items(), key=lambda kv: (-max(p["gapSeconds"] for p in kv[1]),
                                                  -max(p["tokensRecreated"] for p in kv[1])))
    n = sum(len(same) for _, same in dots)
    said = f"the figure's {n:,} return{'s' if n != 1 else ''} as a table"
    if len(dots) > POINTS_ROWS:
        said += f": the {POINTS_ROWS:,} longest gaps of its {len(dots):,} dots (every point: `report --json`)"
    h = [f'<details class="points-table"><summary>{escape(said)}</summary><table id="scatter-points"><thead><tr>'
         '<th class="n">gap</th><th class="n">tokens re-created</th><th>writes</th><th>cache</th>'
         '<th class="n">returns</th></tr></thead><tbody>']
    for (_left, _top, ttl, cold), same in dots[:POINTS_ROWS]:
        gap, tok = _dot_figures(same)
        h.append(f'<tr><td class="n">{escape(gap)}</td><td class="n">{escape(tok)}</td>'
                 f'<td>{escape(f"{class_words(ttl)} writes" if ttl else NO_CLASS_WORDS)}</td>'
                 f'<td>{"cold" if cold else "warm"}</td>'
                 f'<td class="n">{len(same):,}</td></tr>')
    return "".join([*h, "</tbody></table></details>"])


def warmth_bar(w: float | None) -> str:
    if w is None:
        return '<span class="muted" title="one call: nothing earlier to be warm with">-</span>'
    warm = 100 * w
    return (
        f'<span class="bar" title="{warm:.1f} % read from cache, {100 - warm:.1f} % re-created">'
        f'<span class="warm" style="width:{warm:.2f}%"></span>'
        f'<span class="recreated" style="width:{100 - warm:.2f}%"></span></span> '
        f'<span class="num">{pct(w)}</span>'
    )


def _stat(label: str, value: str) -> str:
    return f'<span class="stat">{escape(label)} <b>{escape(value)}</b></span>'


SESSION_COLUMNS = (("id", ""), ("started", ""), ("span", ""), ("project", ""), ("model", ""), ("calls", "n"),
                   ("cache $", "n"), ("warmth", ""), ("cold", "n"), ("longest break", ""))


NUMERIC = ' class="n"'


def _head(columns: tuple[tuple[str, str], ...]) -> str:
    return "".join(f'<th class="{c}">{escape(n)}</th>' if c else f"<th>{escape(n)}</th>" for n, c in columns)


PAGE_SESSIONS = 100  # the newest sessions the page opens with; the others fold under their count


def _sessions(sessions: list[dict[str, Any]], id_length: int, pages: dict[str, str]) -> list[str]:
    """The sessions, as the text report has them (every one, newest first): a short id linked to its
    page, started, span, project, model, calls, cache $, warmth, cold starts, the longest break. Past
    the newest PAGE_SESSIONS they fold (`details`): a year of sessions was a table some 60,000 px
    tall above the day, week and project views. Each id cut to `id_length` (`report_id_length`: as
    the text and the fork sentence name it)."""
    mixed = len(agents_of(sessions)) > 1  # an agent column, as in the text, when two agents are there
    head = _head((SESSION_COLUMNS[0], ("agent", ""), *SESSION_COLUMNS[1:]) if mixed else SESSION_COLUMNS)
    h = ['<h2 id="h-sessions">Sessions</h2>']
    shown, rest = sessions[:PAGE_SESSIONS], sessions[PAGE_SESSIONS:]
    for part, ident in ((shown, "sessions"), (rest, "sessions-rest")):
        if not part:
            continue
        if part is rest:
            said = "the session" if len(rest) == 1 else f"the {len(rest):,} sessions"
            h.append(f'<details id="sessions-more"><summary>{said} before these</summary>')
        h.append(f'<table id="{ident}" class="sessions"><thead><tr>{head}</tr></thead><tbody>')
        h.extend(_session_row(s, id_length, pages, mixed) for s in part)
        h.append("</tbody></table>")
    if rest:
        h.append("</details>")
    return h


def _session_row(s: dict[str, Any], id_length: int, pages: dict[str, str], mixed: bool) -> str:
    sid = s["sessionId"]
    href = pages.get(sid)
    short = escape(sid[:id_length])
    cell = f'<a href="{escape(href)}">{short}</a>' if href else f"<span>{short}</span>"
    agent = f'<td data-label="agent">{escape(s.get("agent") or FALLBACK.name)}</td>' if mixed else ""
    cells = (started(s.get("firstActivity")), span(s),
             s.get("projectName") or s["project"], model_cell(s), f"{s['calls']:,}", dollars(s.get("cacheUsd")))
    return (f'<tr><td class="sid" data-label="id" title="{escape(sid)}">{cell}</td>{agent}'
            + "".join(f'<td{NUMERIC if k >= 4 else ""} data-label="{SESSION_COLUMNS[k + 1][0]}">'
                      f"{escape(v)}</td>" for k, v in enumerate(cells))
            + f'<td class="w" data-label="warmth">{warmth_bar(s["warmth"])}</td>'
            f'<td class="n" data-label="cold">{s["coldStarts"]}</td>'
            f'<td data-label="longest break" title="{escape(s.get("sentence") or "")}">'
            f"{escape(break_cell(s))}</td></tr>")


def _totals(doc: dict[str, Any]) -> list[str]:
    """By day, by week (from Monday) and by project, newest (costliest) first, and by agent when
    two are there, as in the text."""
    t = doc.get("totals")
    if not t:
        return []
    h: list[str] = ['<div class="views">']
    for title, ident, key, label, rows in (("By day", "days", "date", "day", t["days"]),
                                           ("By week, from Monday", "weeks", "week", "week of", t["weeks"])):
        if not rows:
            continue
        h.append(f'<section><h2 id="h-{ident}">{title}</h2><table id="{ident}" class="totals"><thead><tr>'
                 + _head(((label, ""), ("sessions", "n"), ("calls", "n"), ("cache $", "n"), ("warm", "n")))
                 + "</tr></thead><tbody>")
        h.extend(f'<tr><td>{escape(r[key])}</td><td class="n">{r["sessions"]}</td><td class="n">{r["calls"]:,}</td>'
                 f'<td class="n">{dollars(r["cacheUsd"])}</td><td class="n">{pct(r["warmth"])}</td></tr>'
                 for r in reversed(rows))
        h.append("</tbody></table></section>")
    projects = t["projects"]
    if projects:
        names = project_names(projects)
        h.append('<section><h2 id="h-projects">By project</h2><table id="projects" class="totals"><thead><tr>'
                 + _head((("project", ""), ("sessions", "n"), ("calls", "n"), ("cache $", "n"), ("last active", "")))
                 + "</tr></thead><tbody>")
        h.extend(f'<tr><td title="{escape(p.get("cwd") or "")}">{escape(names[i])}</td><td class="n">{p["sessions"]}'
                 f'</td><td class="n">{p["calls"]:,}</td><td class="n">{dollars(p["cacheUsd"])}</td>'
                 f'<td>{escape(started(p.get("lastActivity"))[:10])}</td></tr>' for i, p in enumerate(projects))
        h.append("</tbody></table></section>")
    agents = t.get("agents") or []
    if len(agents) > 1:
        h.append('<section><h2 id="h-agents">By agent</h2><table id="agents" class="totals"><thead><tr>'
                 + _head((("agent", ""), ("sessions", "n"), ("calls", "n"), ("cache $", "n"))) + "</tr></thead><tbody>")
        h.extend(f'<tr><td>{escape(a["agent"])}</td><td class="n">{a["sessions"]}</td><td class="n">{a["calls"]:,}'
                 f'</td><td class="n">{dollars(a["cacheUsd"])}</td></tr>' for a in agents)
        h.append("</tbody></table></section>")
    return [*h, "</div>"]


def _restarts(taken: list[dict[str, Any]], narrowed: bool = False) -> list[str]:
    """The restarts taken with a handoff on this machine, as the text lists them; `narrowed` (--since,
    --projects): those into the report's sessions, so none there is not "none yet"."""
    from session_watcher.sessions.restarts import render_lines

    lines = render_lines(taken)
    h = ['<h2 id="h-restarts">Restarts taken with a handoff</h2>']
    if not lines:
        return [*h, '<p class="muted" id="restarts">'
                + ("None into this report's sessions: a restart shows here with the session it started, "
                   if narrowed else "None yet: a restart with a handoff shows here, ")
                + "with what it saved.</p>"]
    return [*h, '<ul id="restarts">', *(f"<li>{escape(line)}</li>" for line in lines), "</ul>"]


def _cliff(doc: dict[str, Any]) -> list[str]:
    """The scatter (the wide copy and the phone's, its figures in a folded table under it) and, beside
    it where there is room, each TTL class's sentence and gap buckets."""
    h = ['<div class="cliff"><div class="plot"><div class="scatter-box">', scatter_svg(doc),
         scatter_svg(doc, narrow=True), scatter_points(doc), "</div>", points_table(doc),
         '</div><div class="buckets-col">']
    for cls in cliff_classes(doc):
        h.append(f"<p>{escape(ttl_sentence(cls, doc['ttl'][cls]))}</p>")
        rows = [b for b in doc["gapBuckets"] if b["ttl"] == cls and b["n"]]
        if not rows:
            continue
        h.append(
            f'<table class="buckets" data-ttl="{cls}"><thead><tr><th>gap ({class_words(cls)} writes)</th>'
            '<th class="n">n</th><th class="n">median warmth</th><th class="n">cold</th></tr></thead><tbody>'
        )
        h.extend(
            f'<tr><td>{escape(b["label"])}</td><td class="n">{b["n"]}</td>'
            f'<td class="n">{pct(b["medianWarmth"])}</td><td class="n">{pct(b["coldShare"])}</td></tr>'
            for b in rows
        )
        h.append("</tbody></table>")
    return [*h, "</div></div>"]


def render(doc: dict[str, Any], pages: dict[str, str] | None = None, *, narrowed: bool = False) -> str:
    """The page; `pages` maps a session id to the (relative) address of its session page; `narrowed`:
    the report was asked with --since or --projects (its restarts are those into its sessions)."""
    pages = pages or {}
    sessions = doc["sessions"]
    calls = sum(s["calls"] for s in sessions)
    spent = sum(s.get("cacheUsd") or 0.0 for s in sessions)
    h: list[str] = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>session-watcher: cache warmth</title>",
        f"<style>{_css()}</style></head><body>",
        '<header class="topbar"><h1>Cache warmth across your sessions</h1><span class="stats">',
        _stat("sessions", str(len(sessions))), _stat("calls", f"{calls:,}"), _stat("cache", dollars(spent)),
        _stat("cold starts", str(doc["coldStarts"])), "</span></header><main>",
    ]
    h.append(f'<p class="summary" id="summary">{escape(day_sentence(doc))}.</p>')
    if not sessions:
        from session_watcher.agents import NO_FOLDER, folders_there

        roots = folders_there((doc.get("index") or {}).get("roots") or [])  # a folder not there held nothing
        where = f"; searched: {', '.join(roots)}" if roots else f": {NO_FOLDER}"
        h.append(f'<p id="empty">No Claude Code or Codex sessions found{escape(where)}.</p></main></body></html>')
        return _unbroken("\n".join(h))
    h.append(
        '<p class="legend"><span><i class="sw sw-warm"></i>read from cache</span>'
        '<span><i class="sw sw-recreated"></i>re-created (paid again)</span></p>'
    )
    id_length = report_id_length(doc)
    h.extend(_sessions(sessions, id_length, pages))
    said = subagent_sentence(doc)
    if said:
        h.append(f'<p class="muted" id="subagents">{escape(said)}.</p>')
    said = fork_sentence(doc, id_length)
    if said:
        h.append(f'<p class="muted" id="forks">{escape(said)}.</p>')
    said = unpriced_sentence(doc)
    if said:
        h.append(f'<p class="muted" id="unpriced">{escape(said)}.</p>')
    h.extend(_totals(doc))
    h.extend(_restarts(doc.get("restartsTaken") or [], narrowed))
    h.append('<h2 id="cliff">The cache-TTL cliff</h2>')
    h.append("<h3>Gap before a call versus tokens re-created</h3>")
    h.append(
        '<p class="muted">Filled points ran cold (under 50 % read from cache). A dashed line is '
        "where your own calls say the cache expires: an inference from this data, not a documented "
        "figure.</p>"
    )
    h.append(cliff_legend(doc))
    h.extend(_cliff(doc))
    h.append(f'<div class="views"><section><h2>Cold starts: {doc["coldStarts"]}</h2>')
    if doc["coldStarts"]:  # none: no table of causes (each share would be 0 of 0), as the text report
        h.append('<table id="causes"><thead><tr><th>cause</th>'
                 '<th class="n">n</th><th class="n">share</th></tr></thead><tbody>')
        for k in CAUSES:
            h.append(
                f'<tr><td>{CAUSE_WORDS[k]}</td><td class="n">{doc["causes"][k]}</td>'
                f'<td class="n">{pct(doc["causeShares"][k])}</td></tr>'
            )
        h.append("</tbody></table>")
    h.append('</section><section class="notes">')
    if doc["causes"]["unexplained"]:
        h.append(
            '<p class="muted">Unexplained: the transcript shows no idle gap, model switch or compaction '
            "before these calls.</p>"
        )
    h.append(f'<p id="guard">{escape(guard_sentence(doc.get("guard")))}</p></section></div>')
    h.append("</main></body></html>")
    return _unbroken("\n".join(h))


SHOWN = re.compile(r'(<style>.*?</style>)|>([^<]+)<|( title=")([^"]*)"', re.S)


def _unbroken(page: str) -> str:
    """A number stays with its unit, a duration whole: `100 %`, `5.6 min`, `4 min 30 s` never break
    across two lines (`core.text.keep_units`: a no-break space), in the text the page shows (its
    elements' text and tooltips) alone; the CSS, links and data attributes as they are."""
    def held(m: re.Match[str]) -> str:
        if m.group(1):
            return m.group(1)
        if m.group(2) is not None:
            return f">{keep_units(m.group(2))}<"
        return f'{m.group(3)}{keep_units(m.group(4))}"'

    return SHOWN.sub(held, page)
