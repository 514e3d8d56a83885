"""The report document -> aligned text tables and sentences. Pure."""

from __future__ import annotations

import time

from session_watcher.agents import FALLBACK  # a document from before sessions named their agent
from session_watcher.core.numbers import dollars, duration, duration_cell, exact_duration, tokens
from session_watcher.core.prices_openai import class_words
from session_watcher.core.text import one_line, short_id_length, wrap
from session_watcher.reports.fmt import CAUSE_WORDS, CAUSES, NO_BREAK

TYPE_CHECKING = False  # typing is slow to import (a report's start-up), and only the checker needs it

if TYPE_CHECKING:
    from typing import Any

MAX_SESSIONS = 25  # the most recently active; --json and --html list them all
MAX_DAYS, MAX_WEEKS, MAX_PROJECTS = 14, 8, 10  # the latest days and weeks with calls, the costliest projects
WIDTH = 100  # the report fits a terminal this wide (its tables are narrower)
PROJECT_WIDTH, MODEL_WIDTH = 14, 11


def pct(x: float | None) -> str:
    """A share as a whole percent; none (a one-call session's or day's warmth) as "-", on the page as in the text."""
    return "-" if x is None else f"{100 * x:.0f} %"


def table(headers: list[str], rows: list[list[str]], right: set[int] | None = None) -> list[str]:
    """Columns padded to their widest cell; columns in `right` are right-aligned (numbers). Each
    cell is one field (`core.text.one_line`): a session id or project cannot start a row of its own."""
    right = right or set()
    rows = [[one_line(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def fit_table(headers: list[str], rows: list[list[str]], right: set[int], width: int,
        drop: tuple[str, ...], narrower: tuple[str, tuple[str, ...]] | None = None) -> tuple[list[str], list[str]]:
    """`table` within `width` columns: the columns named in `drop` left out, in that order, until it
    fits; past them (`narrower`: a column and more to leave out, a terminal too narrow for the rest:
    COLUMNS=40), that column's text cut (`short`, to SQUEEZED_LEAST characters at least) and the
    columns named left out, the text cut again after each, until it fits; (its lines, the headers
    left out)."""
    squeeze, then = narrower if narrower is not None else (None, ())
    keep = list(range(len(headers)))
    left_out: list[str] = []
    lines: list[str] = []
    for k, name in enumerate((None, *drop, *then)):
        if name is not None:
            keep.remove(headers.index(name))
            left_out.append(name)
        lines = _kept(headers, rows, right, keep)
        if max(len(ln) for ln in lines) <= width:
            break
        if squeeze is None or k < len(drop) or headers.index(squeeze) not in keep or not rows:
            continue
        at = headers.index(squeeze)  # the text cut from the whole each time: a column left out gives it room
        room = max(SQUEEZED_LEAST, max(len(r[at]) for r in rows) - (max(len(ln) for ln in lines) - width))
        lines = _kept(headers, [[short_name(c, room) if i == at else c for i, c in enumerate(r)] for r in rows],
                      right, keep)
        if max(len(ln) for ln in lines) <= width:
            break
    return lines, left_out


SQUEEZED_LEAST = 6  # a project's name cut no shorter than this (`fit_table`'s squeeze)


def _kept(headers: list[str], rows: list[list[str]], right: set[int], keep: list[int]) -> list[str]:
    return table([headers[i] for i in keep], [[r[i] for i in keep] for r in rows],
                 {k for k, i in enumerate(keep) if i in right})


def _side(side: dict[str, Any], lo: float, hi: float) -> str:
    n = side["n"]
    if not n:
        return f"no return from {duration(lo)} to {duration(hi)}"
    return f"{side['cold']} of {n} return{'s' if n != 1 else ''} from {duration(lo)} to {duration(hi)} ran cold"


def ttl_sentence(cls: str, t: dict[str, Any] | None, tested: dict[str, Any] | None = None) -> str:
    """Where the cache expires, as an inference with its evidence, or why it cannot be said yet."""
    said = class_words(cls)
    if t is None:
        if tested is None:
            return f"{said} writes: not enough data yet to say where your cache expires"
        b, a, edge = tested["below"], tested["above"], tested["seconds"]
        return (f"{said} writes: not enough data yet to say where your cache expires, so the documented "
                f"{duration(edge)} counts. Near it: {_side(b, b['fromSeconds'], edge)}, "
                f"{_side(a, edge, a['toSeconds'])} (a claim needs 5 or more a side, clearly warm below and "
                "clearly cold above)")
    ev = t["evidence"]
    b, a = ev["below"], ev["above"]
    edge = t["inferredSeconds"]
    rng = ""
    if b["maxGapSeconds"] is not None and a["minGapSeconds"] is not None:
        rng = (
            f"; the edge lies between a {exact_duration(b['maxGapSeconds'])} gap and a "
            f"{exact_duration(a['minGapSeconds'])} gap"
        )
    return (
        f"{said} writes: inferred from your sessions (not documentation), the cache expires near {duration(edge)}: "
        f"{_side(b, b['fromSeconds'], edge)}, {_side(a, edge, a['toSeconds'])}{rng}"
    )


def guard_sentence(g: dict[str, Any] | None) -> str:
    """What the cold-cache guard warned about, and what those prompts cost."""
    if not g or not g["warned"]:
        return "cold-cache guard: no cold prompt warned about yet"
    n = g["warned"]
    text = f"cold-cache guard: {n} cold prompt{'s' if n != 1 else ''} warned about"
    if g["blocked"]:
        text += f" ({g['blocked']} blocked once)"
    if g["wentAhead"]:
        text += (f"; {g['wentAhead']} went ahead and re-wrote {tokens(g['wentAheadTokens'])} tokens "
                 f"({dollars(g['wentAheadUsd'])})")
    else:  # not "0 went ahead and re-wrote 0 tokens ($0.00)"
        text += "; none went ahead"
    if g["notSent"]:  # "their re-write: ~$1.18" read as a cost paid: it is the re-write not sent
        m = g["notSent"]
        text += (f"; {m} not sent again in {'its session' if m == 1 else 'their sessions'} (sending "
                 f"{'it' if m == 1 else 'them'} would have re-written ~{dollars(g['notSentEstimatedUsd'])})")
    return text


def day_sentence(doc: dict[str, Any]) -> str:
    """'68 % of today ran warm; this week 71 %', saying so when a period has no calls, and when its
    calls have no warmth: a session's first call has nothing to be warm with (docs/report.md), nor
    has a call that reads and writes no cache (prompt caching turned off), so a day of one-call
    sessions (a Codex thread asked once) has calls but no warmth, and says which of the two it is."""
    today = doc["warmthToday"]
    week = doc["warmthWeek"]
    calls_today, calls_week = _calls_in(doc, 0), _calls_in(doc, 6)

    def unmeasured(calls: tuple[int, int], when: str) -> str:
        n, firsts = calls
        said = f"{when} {n:,} call{'s' if n != 1 else ''}"
        if n == firsts:  # each a session's first
            return f"{said}, none after a session's first: no warmth yet"
        return f"{said}, no warmth yet: those after a session's first read and wrote no cache"

    first = (f"{pct(today)} of today ran warm" if today is not None
             else unmeasured(calls_today, "today") if calls_today[0] else "no calls today")
    if week is None and calls_week[0] and calls_week == calls_today:
        return f"{first}; this week the same"  # its calls are today's
    second = (f"this week {pct(week)}" if week is not None
              else unmeasured(calls_week, "this week") if calls_week[0] else "no calls this week")
    return f"{first}; {second}"


def _calls_in(doc: dict[str, Any], days_before: int) -> tuple[int, int]:
    """The calls of today and the `days_before` days before it (the report's by-day totals: the local
    calendar days of the report's clock, `generatedAt`) and how many of them were a session's first
    (a session's `firstActivity` is its first call's time, counted where it is in the window)."""
    import datetime

    now = doc.get("generatedAt")
    if not isinstance(now, int | float):
        return 0, 0
    last = datetime.date.fromtimestamp(now)
    first = last - datetime.timedelta(days=days_before)
    days = (doc.get("totals") or {}).get("days") or []
    calls = sum(int(d.get("calls") or 0) for d in days if first.isoformat() <= str(d.get("date")) <= last.isoformat())
    since = doc.get("since")
    firsts = sum(1 for s in doc["sessions"]
                 if isinstance(at := s.get("firstActivity"), int | float) and (since is None or at >= since)
                 and first <= datetime.date.fromtimestamp(at) <= last)
    return calls, firsts


def nothing_found(doc: dict[str, Any], width: int = WIDTH) -> str:
    """An empty report says where it looked, within `width` (a folder on a line of its own)."""
    from session_watcher.agents import NO_FOLDER, folders_there

    roots = folders_there(doc.get("index", {}).get("roots") or [])  # a folder not there held nothing
    where = [*(f"  {one_line(r)}" for r in roots)]
    if doc.get("since") is not None:
        import time

        day = time.strftime("%Y-%m-%d %H:%M", time.localtime(doc["since"]))
        head = f"no Claude Code or Codex session has calls since {day}"
        lines = wrap(f"{head}; searched:" if roots else f"{head}: {NO_FOLDER}", width)
        return "\n".join([*lines, *where]) + "\n"
    lines = wrap("no Claude Code or Codex sessions found" + ("; searched:" if roots else f": {NO_FOLDER}"), width)
    tail = wrap("(start a session in Claude Code or Codex, or point the report elsewhere with --projects DIR)", width)
    return "\n".join([*lines, *where, *tail]) + "\n"


def span(s: dict[str, Any]) -> str:
    """A session's span, from its first main-chain call to its last activity, in a table cell."""
    first, last = s.get("firstActivity"), s.get("lastActivity")
    return "-" if first is None or last is None else duration_cell(last - first)


def short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def short_name(name: str, width: int) -> str:
    """A project's name within `width`: a name of two parts (a git worktree's, `repo/1`; two folders
    of one name told apart, `work/shop`) keeps its last part, which tells it from its repository's
    other worktrees, and cuts the first (`session-wat…/1`, not `session-watc…` for every one)."""
    if len(name) <= width:
        return name
    head, _, tail = name.rpartition("/")
    if not head:
        return short(name, width)
    if len(tail) + 3 <= width:  # a character of the first part at least, its "…" and the "/"
        return f"{short(head, width - len(tail) - 1)}/{tail}"
    return "…/" + short(tail, width - 2) if width > 3 else short(tail, width)


def model_name(model: str) -> str:
    """claude-opus-4-6 -> opus-4-6, claude-haiku-4-5-20251001 -> haiku-4-5."""
    name = model.removeprefix("claude-")
    head, _, tail = name.rpartition("-")
    return head if tail.isdigit() and len(tail) == 8 else name


def model_cell(s: dict[str, Any]) -> str:
    """The model of most calls, and how many others the session used (+1)."""
    main, models = s.get("model") or (s["models"][0] if s["models"] else None), s["models"]
    if main is None:
        return "-"
    more = f"+{len(models) - 1}" if len(models) > 1 else ""
    return short(model_name(main), MODEL_WIDTH - len(more)) + more


def break_cell(s: dict[str, Any]) -> str:
    """The longest break: what it cost when it went cold ("8h18 $0.65"), or that it stayed warm; none
    ("-") where every call came within a second of the one before (it read "0s warm", and a cold call
    after such a gap "0s cold*", a break the sentence says there was not)."""
    gap = s.get("largestGap")
    if gap is None or s["calls"] < 2 or gap["seconds"] < NO_BREAK:
        return "-"
    dur = duration_cell(gap["seconds"])
    if not gap["cold"]:
        return f"{dur} warm"
    if s.get("largestGapCause") == "idleGap":
        return f"{dur} {dollars(gap['usd'])}" if gap["usd"] is not None else f"{dur} {tokens(gap['tokensRecreated'])}"
    return f"{dur} cold*"


def started(ts: float | None) -> str:
    return "-" if ts is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


SESSION_HEADERS = ["id", "started", "span", "project", "model", "calls", "cache $", "warm", "cold", "longest break"]
SESSION_DROP = ("longest break", "span", "warm", "model", "cold")  # left out in this order in a narrow terminal
SESSION_THEN = ("started", "project")  # narrower still (COLUMNS=40): the project's name cut, then these left out
AGENT = "agent"  # a column of its own when the report holds more than one agent's sessions (left out first)


def agents_of(sessions: list[dict[str, Any]]) -> set[str]:
    return {s.get("agent") or FALLBACK.name for s in sessions}


CLAUDE_CLASSES = ("5m", "1h")  # Claude Code's two cache classes, in the document whichever agents it holds


def cliff_classes(doc: dict[str, Any]) -> list[str]:
    """The cache classes the cliff shows: Claude Code's two where a session is Claude Code's (or one of
    them has calls or a lifetime), a Codex class where a thread has calls of it (the document holds it
    only then); a report of Codex threads alone is not shown two Claude classes with no calls."""
    claude = FALLBACK.name in agents_of(doc["sessions"])
    used = {b["ttl"] for b in doc["gapBuckets"] if b["n"]}
    return [c for c in doc["ttl"] if claude or c not in CLAUDE_CLASSES or c in used or doc["ttl"][c] is not None]


def empty_class_sentence(cls: str, since: float | None) -> str:
    """A cliff class with no gap to show: no call (in the window) came after one of its writes. True
    of a class with no call at all, of one whose sessions made only their first call (a Claude Code
    session asked once, a Codex thread: the class is in the document then), and under --since of one
    whose returns all came before it; "no calls" was said of the first two alike."""
    when = "yet" if since is None else "since " + time.strftime("%Y-%m-%d %H:%M", time.localtime(since))
    said = class_words(cls)
    return f"{said} writes: no call {when} after a {said} write (a first call has no gap before it)"


def report_id_length(doc: dict[str, Any]) -> int:
    """How long the report names each session's id, in its table (text and page) and its sentences
    alike: long enough to tell apart every id the report names (every session's, shown in the table
    or past its rows, and each one a fork was forked from: `core.text.short_id_length`), so a session
    is shown at one length wherever the report names it (the text's table widened over its rows and
    the fork sentence over all sessions: a fork's id at 8 characters in the one, 10 in the other).
    One pass over the ids in C's loops (10,000 sessions: the text report's table shows 25)."""
    from itertools import compress, repeat
    from operator import itemgetter

    sessions = doc["sessions"]
    forks = compress(sessions, map(dict.get, sessions, repeat("inheritedCalls")))
    return short_id_length([*map(itemgetter("sessionId"), sessions), *(str(s.get("forkedFrom")) for s in forks)])


def session_rows(sessions: list[dict[str, Any]], id_length: int, width: int = WIDTH) -> list[str]:
    """The session table's lines, each session named by its id's first `id_length` characters
    (`report_id_length`)."""
    rows = []
    mixed = len(agents_of(sessions)) > 1
    for s in sessions:
        rows.append([
            s["sessionId"][:id_length],
            *([s.get("agent") or FALLBACK.name] if mixed else []),
            started(s.get("firstActivity")),
            span(s),
            short_name(s.get("projectName") or s["project"], PROJECT_WIDTH),
            model_cell(s),
            f"{s['calls']:,}",
            dollars(s.get("cacheUsd")),
            pct(s["warmth"]),
            str(s["coldStarts"]),
            break_cell(s),
        ])
    if mixed:
        lines, left_out = fit_table([SESSION_HEADERS[0], AGENT, *SESSION_HEADERS[1:]], rows, {6, 7, 8, 9}, width,
                              (AGENT, *SESSION_DROP), ("project", SESSION_THEN))
    else:
        lines, left_out = fit_table(SESSION_HEADERS, rows, {5, 6, 7, 8}, width, SESSION_DROP,
                                    ("project", SESSION_THEN))
    if left_out:
        lines += wrap(f"({', '.join(left_out)}: left out at this width; all in --json)", width)
    return lines


def subagent_sentence(doc: dict[str, Any]) -> str | None:
    """Said once: calls and dollars are each session's main conversation, its sub-agents apart."""
    sessions = doc["sessions"]
    n = sum(s.get("subagentCalls") or 0 for s in sessions)
    if not n:
        return None
    spent = sum(s.get("subagentUsd") or 0.0 for s in sessions)
    return (f"calls and cache $ (here, by day, week and project, and in backtest): each session's main "
            f"conversation, the one a restart replaces; sub-agents apart: {n:,} calls, {dollars(spent)} (in --json)")


def fork_sentence(doc: dict[str, Any], id_length: int | None = None) -> str | None:
    """Said when a session is a fork: its row counts its own calls, the ones it copies are its parent's.
    Each id cut to `id_length` (`report_id_length`, found here where not given)."""
    forks = [s for s in doc["sessions"] if s.get("inheritedCalls")]
    if not forks:
        return None
    # each id as the session table shows it (two Codex threads of a minute share their first 8
    # characters: a fork made soon after its parent)
    cut = report_id_length(doc) if id_length is None else id_length
    named = ", ".join(f"{s['sessionId'][:cut]} of {str(s.get('forkedFrom'))[:cut]}" for s in forks[:3])
    more = f" and {len(forks) - 3:,} more" if len(forks) > 3 else ""
    # `backtest`'s documents say where that session's file is not found (`naming.mark_parent`)
    lost = [s for s in forks if s.get("forkedFromFound") is False]
    parts = []
    n = sum(s["inheritedCalls"] for s in forks) - sum(s["inheritedCalls"] for s in lost)
    if n:
        parts.append(f"the {n:,} they copy from the session they were forked from are counted there, once")
    if lost:
        gone = ", ".join(sorted({str(s.get("forkedFrom"))[:cut] for s in lost}))
        parts.append(f"the file of {gone} is not found: the {sum(s['inheritedCalls'] for s in lost):,} "
                     "copied from it are counted in no session")
    return f"forked sessions ({named}{more}) count their own calls: {'; '.join(parts)}"


def unpriced_sentence(doc: dict[str, Any]) -> str | None:
    """Said wherever a total leaves calls out: every session's calls of a model without a price (the
    whole history's, not only the sessions shown), counted as $0 in each total."""
    from session_watcher.core.prices import input_price

    hit = [s for s in doc["sessions"] if s.get("unpricedCalls")]
    if not hit:
        return None
    n = sum(s["unpricedCalls"] for s in hit)
    models = sorted({m for s in hit for m in s.get("models") or [] if input_price(m) is None})
    named = ", ".join(models[:3]) + (f" and {len(models) - 3} more" if len(models) > 3 else "")
    # a session's `models` are its main conversation's: a sub-agent's model (or a call naming none) is not there
    if any(all(input_price(m) is not None for m in s.get("models") or []) for s in hit):
        named += (" and " if named else "") + "a sub-agent's or an unnamed model"
    calls = f"{n:,} call{'s' if n != 1 else ''} in {len(hit):,} session{'s' if len(hit) != 1 else ''}"
    return (f"{calls} {'has' if n == 1 else 'have'} no price ({named}): every cache $ "
            f"here counts them as $0 (`session-watcher config set prices.MODEL.input USD` prices one)")


def project_names(projects: list[dict[str, Any]]) -> list[str]:
    """Each project's name; two folders of one name are told apart by the folder above each."""
    count: dict[str, int] = {}
    for p in projects:
        count[p["project"]] = count.get(p["project"], 0) + 1
    out = []
    for p in projects:
        cwd = p.get("cwd")
        if count[p["project"]] > 1 and cwd:
            # the folder above the name's first part: `x/repo`, a worktree's `x/repo/1` (its last two
            # folders, `.worktrees/1`, told two repositories' worktrees of one name apart no better)
            parts = [x for x in cwd.replace("\\", "/").split("/") if x]
            first = p["project"].split("/", 1)[0]
            at = next((i for i in range(len(parts) - 1, 0, -1) if parts[i] == first), None)
            out.append(f"{parts[at - 1]}/{p['project']}" if at else "/".join(parts[-2:]))
        else:
            out.append(p["project"])
    return out


def totals_rows(doc: dict[str, Any], width: int = WIDTH) -> list[str]:
    t = doc.get("totals")
    if not t:
        return []
    out: list[str] = []
    for title, key, label, rows, limit in (
        ("by day", "date", "day", t["days"], MAX_DAYS),
        ("by week, from Monday", "week", "week of", t["weeks"], MAX_WEEKS),
    ):
        shown = rows[-limit:]
        if not shown:
            continue
        body = [[r[key], str(r["sessions"]), f"{r['calls']:,}", dollars(r["cacheUsd"]), pct(r["warmth"])]
                for r in reversed(shown)]
        out.append("")
        more = f" (the last {limit} with calls; all in --json)" if len(rows) > limit else ""
        out.extend(wrap(f"{title}{more}", width))
        out.extend(_fitted([label, "sessions", "calls", "cache $", "warm"], body, {1, 2, 3, 4}, width,
                           ("sessions", "warm")))
    projects = t["projects"]
    if projects:
        names = project_names(projects)
        body = [[names[i], str(p["sessions"]), f"{p['calls']:,}", dollars(p["cacheUsd"]),
                 started(p.get("lastActivity"))[:10]] for i, p in enumerate(projects[:MAX_PROJECTS])]
        # the name gets what the width leaves the other columns (and their two-space gaps)
        rest = sum(max(len(h), *(len(r[i]) for r in body)) + 2
                   for i, h in enumerate(["sessions", "calls", "cache $", "last active"], 1))
        room = max(PROJECT_WIDTH // 2, min(PROJECT_WIDTH + 10, width - rest))
        for row in body:
            row[0] = short_name(row[0], room)
        out.append("")
        more = (f" (the {MAX_PROJECTS} costliest of {len(projects)}; all in --json)"
                if len(projects) > MAX_PROJECTS else "")
        out.extend(wrap(f"by project{more}", width))
        out.extend(_fitted(["project", "sessions", "calls", "cache $", "last active"], body, {1, 2, 3}, width,
                           ("last active",), ("project", ("sessions",))))
    agents = t.get("agents") or []
    if len(agents) > 1:
        body = [[a["agent"], str(a["sessions"]), f"{a['calls']:,}", dollars(a["cacheUsd"])] for a in agents]
        out.append("")
        out.extend(wrap("by agent", width))
        out.extend(table(["agent", "sessions", "calls", "cache $"], body, {1, 2, 3}))
    return out


def _fitted(headers: list[str], rows: list[list[str]], right: set[int], width: int, drop: tuple[str, ...],
            narrower: tuple[str, tuple[str, ...]] | None = None) -> list[str]:
    """`fit_table`'s lines, and a line naming the columns it left out."""
    lines, left_out = fit_table(headers, rows, right, width, drop, narrower)
    if left_out:
        lines += wrap(f"({', '.join(left_out)}: left out at this width; all in --json)", width)
    return lines


def render(doc: dict[str, Any], width: int = WIDTH) -> str:
    if not doc["sessions"]:
        return nothing_found(doc, width)

    def para(text: str) -> list[str]:  # a sentence at spaces only: a path or a long word is never cut
        return wrap(text, width)

    out: list[str] = []
    out.extend(para(day_sentence(doc)))
    out.append("")
    sessions = doc["sessions"][:MAX_SESSIONS]
    more = len(doc["sessions"]) - MAX_SESSIONS
    out.extend(para("sessions, newest first" + (f" ({MAX_SESSIONS} of {len(doc['sessions'])}; all of them in --json "
                                                "and --html)" if more > 0 else "")))
    id_length = report_id_length(doc)
    rows = session_rows(sessions, id_length, width)
    out.extend(rows)
    said = subagent_sentence(doc)
    if said:
        out.extend(para(said))
    said = fork_sentence(doc, id_length)
    if said:
        out.extend(para(said))
    if any(ln.endswith(" cold*") for ln in rows):  # the mark shown: not where the width left its column out
        out.extend(para("cold*: the call after the break ran cold, but not from the break, which the cache "
                        "outlives (see the causes below)"))
    if any(s.get("unpricedCalls") and s.get("cacheUsd") is None for s in sessions):
        out.extend(para("?: a model with no price in the table"))
    said = unpriced_sentence(doc)
    if said:
        out.extend(para(said))
    out.extend(totals_rows(doc, width))
    out.append("")
    out.extend(para("the cache-TTL cliff (gap before a call -> how often it ran cold)"))
    for cls in cliff_classes(doc):
        brows = [
            [b["label"], str(b["n"]), pct(b["medianWarmth"]), pct(b["coldShare"])]
            for b in doc["gapBuckets"]
            if b["ttl"] == cls and b["n"]
        ]
        out.append("")
        if not brows:
            out.extend(para(empty_class_sentence(cls, doc.get("since"))))
            continue
        out.extend(_fitted([f"gap ({class_words(cls)} writes)", "n", "median warmth", "cold"], brows, {1, 2, 3}, width,
                           ("median warmth",)))
        out.extend(para(ttl_sentence(cls, doc["ttl"][cls], (doc.get("documentedTtl") or {}).get(cls))))
    out.append("")
    n = doc["coldStarts"]
    out.append(f"cold starts: {n}")
    if n:
        crow = [[CAUSE_WORDS[k], str(doc["causes"][k]), pct(doc["causeShares"][k])] for k in CAUSES]
        out.extend(table(["cause", "n", "share"], crow, {1, 2}))
        rule = doc.get("idleGapRule") or {}
        shown = cliff_classes(doc)
        limits = ", ".join(f"{duration(r['seconds'])} for {class_words(cls)} writes" for cls, r in rule.items()
                           if cls in shown)
        if limits:
            out.extend(para(f"idle gap: a break at least as long as the cache lives ({limits}: the same lifetime "
                               "the cold-cache guard uses)"))
        if doc["causes"]["unexplained"]:
            out.extend(para("unexplained: the transcript shows no break that long, model switch or compaction "
                            "before them"))
    out.append("")
    out.extend(para(guard_sentence(doc.get("guard"))))
    return "\n".join(out) + "\n"
