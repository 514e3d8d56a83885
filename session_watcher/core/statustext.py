"""`session-watcher status` in words: the status document (core.status) as the lines the command
prints, and the health grade's table. Pure. Apart from the status line's `core.render`, which the
client runs on every refresh and which draws one line only.
"""

from __future__ import annotations

from session_watcher.core.render import bill_ready, bills_since_alert, lamp_words

TYPE_CHECKING = False  # typing is slow to import
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v * 100:.1f}%"


def _c_eff(doc: Mapping[str, Any]) -> str:
    """' (cEff 6.3: the restart reads 18k shared)' when a shared prefix makes restarts cheaper."""
    from session_watcher.core.numbers import tokens

    c_eff, shared = doc.get("cEff"), doc.get("shared")
    if c_eff is None or not shared or c_eff >= doc["cRatio"]:
        return ""
    return f" (cEff {c_eff:.1f}: a restart reads {tokens(shared)} shared)"


def _num(v: float | None, nd: int = 2) -> str:
    return "-" if v is None else f"{v:.{nd}f}"


def plan_lines(plan: Mapping[str, Any] | None, now: float | None) -> list[str]:
    """A subscriber's plan: each window's use and reset, and how the estimate was made."""
    from session_watcher.core.numbers import dollars, duration

    if not plan:
        return []
    names = {"fiveHour": "5-hour", "sevenDay": "7-day"}
    uses, notes = [], []
    for key, name in names.items():
        w = plan.get(key)
        if not w:
            continue
        reset = w.get("resetsAt")
        when = f", resets in {duration(reset - now)}" if isinstance(reset, int | float) and now is not None else ""
        uses.append(f"{name} window {w['usedPercent']:g} % used{when}")
        est = w.get("estimate")
        if est:
            span = f" over {duration(est['until'] - est['since'])}" if est.get("since") and est.get("until") else ""
            notes.append(f"  estimate ({name}): your use moved {est['points']:g} points while this session's "
                         f"API-priced cost grew {dollars(est['usd'])}{span}, so about {est['percentPerUsd']:.2f} "
                         "points a dollar (other work on the plan in that time makes it high)")
        else:
            notes.append(f"  estimate ({name}): not yet (it needs the use to move {plan.get('minPoints', 2):g} "
                         "points while this session works)")
    seen = plan.get("seenAt")
    ago = f" (as the status line saw it {duration(now - seen)} ago)" if isinstance(seen, int | float) and now else ""
    return [f"plan     {', '.join(uses)}{ago}", *notes]


def status_text(doc: Mapping[str, Any], top: int = 8, verbose: bool = False, now: float | None = None,  # noqa: PLR0913
                last_call: bool = False, last_ts: float | None = None, *, cfg: Mapping[str, Any] | None = None,
                project: str | None = None, skipped: Sequence[str] = ()) -> str:
    """The human form of the status document (`session-watcher status`), `last_ts` the time of the
    session's last call (said, with `now`, as how long ago it was); `verbose` adds the
    model's internals (x against the sweet spot, bp, bill progress, L and B, g, cRatio and cEff,
    the rent), which `--json` always has; `cfg`, the session's config, says the alert's floors;
    `project`, the session's project folder, and `skipped`, the newer sessions without an API call a
    default pick passed over, make a line of their own (none when both are empty). Text from the
    session (its id, model, paths) is one field each (`core.text.one_line`): none can start a line
    of its own."""
    from session_watcher.core.numbers import tokens
    from session_watcher.core.status import own_calls, own_usage
    from session_watcher.core.text import one_line  # the CLI's; the status line does not import it

    tu, su = own_usage(doc), doc["subagentUsage"]  # a fork's copies of its parent's calls are the parent's
    cp = doc["contextPressure"]
    h = doc.get("health") or {}
    occ = "-"
    if cp.get("pressureTokens") is not None and cp.get("contextWindow"):
        occ = f"{100 * cp['pressureTokens'] / cp['contextWindow']:.0f}% of {tokens(cp['contextWindow'])}"
    called = doc["calls"] > 0
    lines = [
        f"session  {one_line(doc['sessionId'])}  model {one_line(doc.get('model') or '-')}  calls {own_calls(doc)}"
        f"{_last_call_ago(doc['calls'], last_ts, now)}",
    ]
    place = place_words(project, skipped)
    if place:
        lines.append(f"project  {place}")
    if doc.get("inheritedCalls"):
        lines.append(f"fork     {fork_words(doc)}")
    lines += [
        f"lamp     {_when(lamp_words(doc, _idle(last_ts, now)), last_call)}",
        f"alerts   {_alert_words(doc, cfg, last_call)}",
    ]
    carry = _carry_words(doc)
    if carry:
        lines.append(f"restart  {carry}")
    grade = f"{h.get('grade', '-')} ({h.get('score', '-')})" if called else "- (no call yet)"
    lines.append(f"context  {occ}   health {grade}   compactions {doc['compactions']}")
    lines.append(
        f"usage    input {tokens(tu['uncachedInput'])}  output {tokens(tu['output'])}  "
        f"cache read {tokens(tu['cacheRead'])}  cache write {tokens(tu['cacheWrite'])}  "
        f"({_n(tu['calls'], 'call')}{_copies_in(doc)}; subagents {_n(su['calls'], 'call')}, "
        f"{tokens(su['cacheRead'] + su['cacheWrite'])} cached)")
    lines.extend(plan_lines(doc.get("plan"), now))
    if verbose:
        lines.append(
            f"model    x {_num(doc['x']) if doc['L'] else '- (no cache read yet)'} / sweet spot "
            f"{_num(doc['xSweet'])}   bp {_pct(doc['br'])}   bill progress {doc['billProgress']:.2f} "
            f"({doc['bills']} this segment)   segment {doc['segment']}")
        lines.append(
            f"tokens   L {tokens(doc['L'])}   B {tokens(doc['B'])}   bDefault {tokens(doc['bDefault'])}   "
            f"g {tokens(doc['g'])}/call   cRatio {doc['cRatio']:g}{_c_eff(doc)}   rent {_num(doc['burnRate'])}")
    files = [b for b in doc["buckets"] if b["type"] == "file"]
    if files:
        shown = files[:top]
        folder = _common_folder([b["path"] for b in shown])
        which = "largest first" if len(shown) == len(files) else f"the {len(shown)} largest"
        # each file's figure is its estimated tokens (the unit said: a bare `1.9k` read as bytes or lines)
        lines.append(f"carried  {_n(len(files), 'file')} (estimated tokens each), {which}"
                     + (f", under {one_line(folder)}" if folder else ""))
        for b in shown:
            why = "" if b["included"] else f"  [{b['defaultDiscardReason'] or 'excluded'}]"
            path = b["path"][len(folder.rstrip("/")) + 1:] if folder else b["path"]
            lines.append(f"  {tokens(b['tokens']):>6}  {one_line(path)}{why}")
    return "\n".join(lines)


def fork_words(doc: Mapping[str, Any]) -> str:
    """What a fork's status document leaves out of its figures, in one sentence: 'forked from
    59f3783b-...: 4 copied calls not counted here (calls 1-4: counted there, context here)'. The
    session it names is the last copy's maker (`forkedFrom`); where its file is not found
    (`forkedFromFound` False, `sessions.naming.mark_parent`), '(calls 1-4: that session's file not
    found, so counted in no session; context here)', as `report` counts them then."""
    from session_watcher.core.text import one_line

    n, upto = int(doc.get("inheritedCalls") or 0), int(doc.get("inheritedTo") or 0)
    parent = doc.get("forkedFrom")
    source = f"forked from {one_line(str(parent))}" if parent else "a fork"
    span = "call 1" if upto <= 1 else f"calls 1-{upto}"
    where = "that session's file not found, so counted in no session;" if doc.get("forkedFromFound") is False \
        else "counted there,"
    return f"{source}: {_n(n, 'copied call')} not counted here ({span}: {where} context here)"


def _copies_in(doc: Mapping[str, Any]) -> str:
    """', 4 of them copies' where a fork's usage line holds its copies' tokens: a state saved before
    they were kept (`inheritedUsage` null) has only the conversation's, which the line then says."""
    n = doc.get("inheritedCalls")
    return f", {n:,} of them copies" if n and doc.get("inheritedUsage") is None else ""


def _last_call_ago(calls: int, last: float | None, now: float | None) -> str:
    """', the last 3 months ago' for `status` (priced at the clock's time): how long ago the session's
    last call was, so a session left weeks ago is not read as the one running now; '' without a clock
    (`replay`), a call or its time. Under a second is 'just now' (not '0 s ago'); a last call dated
    over a minute ahead of the clock (a clock set back, a log from another machine) is said as that."""
    from session_watcher.core.eoq import is_number
    from session_watcher.core.numbers import duration

    if now is None or not is_number(last) or not calls:
        return ""
    ago = now - last
    if ago < -60:
        return f", the last dated {duration(-ago)} ahead of this machine's clock"
    return ", the last just now" if ago < 1 else f", the last {duration(ago)} ago"


def _idle(last: float | None, now: float | None) -> float | None:
    """Seconds from the session's last call to `now` (None without either: `replay`'s document)."""
    from session_watcher.core.eoq import is_number

    return now - last if now is not None and is_number(last) else None


def _common_folder(paths: list[str]) -> str | None:
    """The folder every one of `paths` (absolute, '/'-separated) lies under, said once above the list
    so each line holds the rest; None for none but the root (or paths of another form)."""
    import posixpath

    try:
        folder = posixpath.commonpath([posixpath.dirname(p) for p in paths])
    except ValueError:  # relative and absolute mixed, or no path
        return None
    return folder if folder.startswith("/") and folder != "/" else None


def _carry_words(doc: Mapping[str, Any]) -> str | None:
    """What a fresh session would carry and what the context holds now: the last call's prompt, as
    the `context` line shows it (L, what it re-read from the cache, leaves out what it wrote). A
    restart cannot carry more than the context holds: where the carry is as large, the line says a
    restart would not make it smaller."""
    from session_watcher.core.numbers import tokens

    b = doc.get("bDefault")
    if b is None:
        return None
    held = (doc.get("contextPressure") or {}).get("pressureTokens")
    held = held if isinstance(held, int | float) else doc.get("L") or 0
    floor = doc.get("floor") or 0
    # the carry's two parts in the alerts' words (notifier.message: `50k system + 12k in files`: tokens, not
    # a count of files, which the `carried` line gives)
    parts = f"{tokens(floor)} system + {tokens(max(0, b - floor))} in files"
    if b >= held:
        return (f"a restart would not make the context smaller (it holds {tokens(held)}; a fresh session "
                f"would carry {tokens(b)}: {parts})")
    return f"a fresh session would carry {tokens(b)} tokens ({parts}); the context now holds {tokens(held)}"


def _n(count: int, noun: str) -> str:
    """`1 call`, `12 calls`."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _alert_words(doc: Mapping[str, Any], cfg: Mapping[str, Any] | None = None, replayed: bool = False) -> str:
    """The alerts' state; before any, when one can come (`cfg`: the session's config, whose floors the
    gate reads; the status document does not carry them). `replayed`: a fold with no delivery (`replay`),
    whose count runs from the last alert made, shown or held back by notify.remind_min: said so, as
    `status` and the status line count from the last one shown (`notice`) and may say more."""
    dwell, back = doc["dwell"], doc["backstop"]
    if dwell["alerted"]:
        if back["N"] is None:
            return "alerted; no reminder due (the reminder interval is unbounded)"
        since = bills_since_alert(doc)
        if replayed and not isinstance(doc.get("notice"), dict):
            return (f"alerted; the next reminder once staying has cost {back['N']} restarts' worth since the "
                    f"last alert ({since} so far from the last alert made; `status` counts from the last one "
                    "shown)")
        return (f"alerted; the next reminder once staying has cost {back['N']} restarts' worth since the "
                f"last alert ({since} so far)")
    if dwell["calls"]:
        return (f"past the sweet spot for {_n(dwell['calls'], 'call')}; the alert comes once staying has cost one "
                f"restart's worth ({bill_ready(dwell)} so far)")
    amber = (doc.get("lampAt") or {}).get("amber")
    over = f"{amber * 100:g} % or more" if isinstance(amber, int | float) else "more"
    # the gate speaks on the right arm alone: before the sweet spot bp is over 0 too (a restart there
    # comes too early), and "once staying costs 0.1 %" read as met at x 3.0 against a sweet spot of 4.0
    said = (f"none pending (one can come once the session is past its sweet spot and staying costs {over} over "
            "a restart at the best moment")
    if cfg is None:  # the floors unknown here: said, not counted
        return f"{said}, if a restart then saves enough to be worth saying)"
    # the floors the engine's gate reads (`engine._bills_and_gate`, `engine.worth_saying`): the same keys
    from session_watcher.core.numbers import dollars

    calls = int(cfg["gate_min_calls"])
    if calls > 1:
        said += f", once {calls} calls have come since the session's start or its last compaction"
    floors = [f"{dollars(cfg['advice_min_usd'])} or more"] if cfg["advice_min_usd"] > 0 else []
    if cfg["advice_min_share"] > 0:
        cost = ("those calls' cache cost" if calls > 1
                else "the cache cost since the session's start or its last compaction")
        floors.append(f"{cfg['advice_min_share'] * 100:g} % or more of {cost}")
    return f"{said}, and if a restart then saves {' and '.join(floors)})" if floors else f"{said})"


def _when(words: str, last_call: bool) -> str:
    """The lamp's words for a document of the session's last call (`replay`'s), not of now (`status`
    prices a restart with the cache as it is at the clock's time, `replay` as it was then)."""
    return words.replace(" now saves ", " saves, as of its last call, ") if last_call else words


def health_value(h: Mapping[str, Any], name: str) -> str:
    """The figure behind a signal's grade: `45.2 % full`, `1`, `0.68 of reads`, ...; where there is
    none, `-` and why (`core.health.no_number`): `- (under 4 tool calls)`, `- (no errors)`, ..."""
    from session_watcher.core.health import no_number

    def num(key: str, fmt: str) -> str | None:
        v = h.get(key)
        return None if not isinstance(v, int | float) else fmt.format(v)

    shown = {
        "Context Fill": num("fillPercent", "{:.1f} % full"),
        "Compactions": num("compactionCount", "{:d}"),
        "Re-reads": num("rereadRatio", "{:.2f} of reads"),
        "Error Rate": num("errorAcceleration", "{:.2f}x the first half's"),
        "Tool Efficiency": num("toolEfficiency", "{:.2f}x the first half's"),
    }.get(name)
    why = no_number(h, name)
    return shown or (f"- ({why})" if why else "-")


def place_words(project: str | None, skipped: Sequence[str] = ()) -> str:
    """The session's project folder (`-` when unknown), and the newer sessions without an API call a
    default pick passed over, the newest named as given (`sessions.naming.Found.passed_over`: its
    shortest prefix no other session's id begins with, 8 characters or more):
    `/src/app (passed over 1a2b3c4d: no API call)`; "" when neither is known."""
    from session_watcher.core.text import one_line

    if not project and not skipped:
        return ""
    words = one_line(project) if project else "-"
    if skipped:
        words += f" ({passed_over(skipped)})"
    return words


def passed_over(skipped: Sequence[str]) -> str:
    """The newer sessions without an API call a pick passed over, as `status` and doctor's guard line
    say them (one rule): the newest named, the rest counted, `passed over 1a2b3c4d and 2 more: no API
    call`."""
    from session_watcher.core.text import one_line

    more = f" and {len(skipped) - 1} more" if len(skipped) > 1 else ""
    return f"passed over {one_line(skipped[0])}{more}: no API call"


def health_text(h: Mapping[str, Any], width: int = 20, session: str | None = None, *, project: str | None = None,
                skipped: Sequence[str] = ()) -> str:
    """`health`'s text: the grade (of `session`, where named; `project` and `skipped` a line of their
    own, `place_words`) and each signal's bar, grade, figure; of a session without an API call
    (`core.health.ungraded`), one line saying there is nothing to grade."""
    from session_watcher.core.text import one_line

    of = f"  session {one_line(session)}" if session else ""
    place = place_words(project, skipped)
    where = [f"project  {place}"] if place else []
    if h.get("grade") is None:  # `core.health.ungraded`: no call, nothing graded
        return "\n".join([f"Context health: - ({h.get('why') or 'nothing to grade'}){of}", *where])
    rows = [f"Context health: {h['grade']} (score {h['score']}/100){of}", *where]
    figures = [health_value(h, s["name"]) for s in h["signals"]]
    room = max(map(len, figures), default=0)
    for s, figure in zip(h["signals"], figures, strict=True):
        filled = round(width * s["value"] / 100)
        rows.append(f"  {s['name']:<16} {'█' * filled}{'░' * (width - filled)} {s['grade']}  "
                    f"{figure:<{room}}  weight {s['weight'] * 100:.0f}%")
    return "\n".join(rows)
