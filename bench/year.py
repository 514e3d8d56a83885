"""A year of history for one user: the real fixtures copied and re-dated across 2026, plus many small
synthetic sessions, under a throwaway HOME (Claude Code's ~/.claude/projects and a CODEX_HOME).

    python -m bench.year OUT [--copies N] [--small N]

Each copy of a real transcript gets a new session id, a project folder of this user's, and every
ISO timestamp inside its lines shifted by one delta (file mtime set to its last line's time). The
year holds: several projects, two whose folders were deleted, one renamed mid-year, a session that
crosses local midnight at a month's end, sessions across the daylight-saving changes of Europe/Berlin
(2026-03-29) and America/New_York (2026-03-08), a session resumed weeks later (same file appended,
and a resumed copy under a new id as the client writes one), and subagent files.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import re
import shutil
import uuid
from pathlib import Path

from bench import synth

FIX = Path(os.environ.get("SW_FIXTURES", "/work/shared/fixtures"))
TS = re.compile(rb'"(20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?)Z"')
UTC = dt.UTC


def _parse(ts: bytes) -> dt.datetime:
    s = ts.decode()
    if "." in s:
        head, frac = s.split(".")
        return dt.datetime.strptime(head, "%Y-%m-%dT%H:%M:%S").replace(
            microsecond=int(frac[:6].ljust(6, "0")), tzinfo=UTC)
    return dt.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)


def first_last(data: bytes) -> tuple[dt.datetime, dt.datetime]:
    stamps = [_parse(m.group(1)) for m in TS.finditer(data)]
    return min(stamps), max(stamps)


def shift(data: bytes, delta: dt.timedelta) -> bytes:
    def sub(m: re.Match[bytes]) -> bytes:
        d = _parse(m.group(1)) + delta
        return b'"' + d.strftime("%Y-%m-%dT%H:%M:%S.").encode() + f"{d.microsecond // 1000:03d}Z".encode() + b'"'
    return TS.sub(sub, data)


def cwd_of(data: bytes) -> str:
    m = re.search(rb'"cwd":"((?:[^"\\]|\\.)*)"', data)
    return json.loads(b'"' + m.group(1) + b'"') if m else ""


def retarget(data: bytes, old_sid: str, new_sid: str, old_cwd: str, new_cwd: str) -> bytes:
    data = data.replace(old_sid.encode(), new_sid.encode())
    if old_cwd:
        enc = json.dumps(old_cwd)[1:-1].encode()
        data = data.replace(enc, json.dumps(new_cwd)[1:-1].encode())
    return data


def slug(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def claude_sources() -> list[tuple[Path, str]]:
    out = []
    for d in ("corpus", "corpus2", "transcripts"):
        for p in sorted((FIX / d).glob("*.jsonl")):
            sid = p.stem
            out.append((p, sid))
    return out


def write_claude(src: Path, old_sid: str, projects: Path, cwd: str, start: dt.datetime,
                 new_sid: str | None = None) -> tuple[Path, str, dt.datetime]:
    data = src.read_bytes()
    first, last = first_last(data)
    delta = start - first
    new_sid = new_sid or str(uuid.UUID(int=random.getrandbits(128), version=4))
    old_cwd = cwd_of(data)
    out_dir = projects / slug(cwd)
    out_dir.mkdir(parents=True, exist_ok=True)
    dest = out_dir / f"{new_sid}.jsonl"
    dest.write_bytes(retarget(shift(data, delta), old_sid, new_sid, old_cwd, cwd))
    end = last + delta
    os.utime(dest, (end.timestamp(), end.timestamp()))
    sub = src.parent / old_sid / "subagents"
    if sub.is_dir():
        (out_dir / new_sid / "subagents").mkdir(parents=True, exist_ok=True)
        for s in sub.glob("*.jsonl"):
            sd = s.read_bytes()
            t = out_dir / new_sid / "subagents" / s.name
            t.write_bytes(retarget(shift(sd, delta), old_sid, new_sid, cwd_of(sd), cwd))
            os.utime(t, (end.timestamp(), end.timestamp()))
    return dest, new_sid, end


def write_codex(src: Path, codex_home: Path, cwd: str, start: dt.datetime) -> tuple[Path, str]:
    data = src.read_bytes()
    first, last = first_last(data)
    delta = start - first
    old_id = src.stem.removeprefix("rollout-")
    new_id = str(uuid.UUID(int=random.getrandbits(128), version=7 if False else 4))
    old_cwd = cwd_of(data)
    s = start
    d = codex_home / "sessions" / f"{s:%Y}" / f"{s:%m}" / f"{s:%d}"
    d.mkdir(parents=True, exist_ok=True)
    dest = d / f"rollout-{s:%Y-%m-%dT%H-%M-%S}-{new_id}.jsonl"
    dest.write_bytes(retarget(shift(data, delta), old_id, new_id, old_cwd, cwd))
    end = last + delta
    os.utime(dest, (end.timestamp(), end.timestamp()))
    return dest, new_id


def small_session(projects: Path, cwd: str, at: float, model: str) -> Path:
    sid = str(uuid.UUID(int=random.getrandbits(128), version=4))
    t = synth.Transcript(session_id=sid, cwd=cwd, model=model)
    t.user("hi", at=at)
    cr = 18_000
    synth.growing(t, cr, random.randint(300, 3000), random.randint(4, 30), cw_first=random.randint(2000, 9000))
    out = projects / slug(cwd) / f"{sid}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    t.save(out)
    _, last = first_last(out.read_bytes())
    os.utime(out, (last.timestamp(), last.timestamp()))
    return out


def build(root: Path, copies: int, small: int, seed: int = 7) -> dict[str, object]:
    random.seed(seed)
    home = root / "home"
    work = root / "work"
    projects = home / ".claude" / "projects"
    codex_home = home / ".codex"
    names = ["api", "web", "infra", "cli", "docs", "alpha", "scratch", "old-exp"]
    for n in names:
        (work / n).mkdir(parents=True, exist_ok=True)
    srcs = claude_sources()
    made: dict[str, object] = {"claude": 0, "codex": 0, "small": 0}
    year0 = dt.datetime(2026, 1, 2, 9, 0, tzinfo=UTC)
    for _ in range(copies):
        for src, sid in srcs:
            day = year0 + dt.timedelta(days=random.randint(0, 330), hours=random.randint(0, 12),
                                       minutes=random.randint(0, 59))
            name = random.choice(names)
            if name == "alpha" and day.month >= 7:
                name = "alpha-v2"  # the project renamed on July 1st
            write_claude(src, sid, projects, str(work / name), day)
            made["claude"] = int(str(made["claude"])) + 1
    for _ in range(max(1, copies // 2)):
        for src in sorted((FIX / "codex").glob("rollout-*.jsonl")):
            day = year0 + dt.timedelta(days=random.randint(0, 330), hours=random.randint(0, 12))
            write_codex(src, codex_home, str(work / random.choice(names[:5])), day)
            made["codex"] = int(str(made["codex"])) + 1
    models = ["claude-opus-4-1-20250805", "claude-sonnet-4-20250514", "claude-opus-4-6", "claude-sonnet-5",
              "claude-opus-5", "claude-3-5-sonnet-20241022"]
    for k in range(small):
        at = year0.timestamp() + random.random() * 330 * 86400
        month = dt.datetime.fromtimestamp(at, UTC).month
        model = models[min(len(models) - 2, (month - 1) // 2)] if k % 50 else models[-1]
        small_session(projects, str(work / random.choice(names)), at, model)
        made["small"] = int(str(made["small"])) + 1
    # special cases, named so they can be found
    spec = srcs[0]
    short = next(s for s in srcs if s[1] == "short")
    # crosses local midnight at a month's end (Berlin 23:30 on March 31st = 21:30Z)
    made["midnight"] = str(write_claude(short[0], "short", projects, str(work / "api"),
                                        dt.datetime(2026, 3, 31, 21, 58, tzinfo=UTC))[0])
    # across Berlin's DST change (2026-03-29 01:00Z) and New York's (2026-03-08 07:00Z)
    made["dst_berlin"] = str(write_claude(spec[0], spec[1], projects, str(work / "web"),
                                          dt.datetime(2026, 3, 28, 22, 30, tzinfo=UTC))[0])
    made["dst_ny"] = str(write_claude(spec[0], spec[1], projects, str(work / "web"),
                                      dt.datetime(2026, 3, 8, 3, 30, tzinfo=UTC))[0])
    # resumed weeks later: the same file appended with a later stretch
    path, sid, _end = write_claude(short[0], "short", projects, str(work / "cli"),
                                  dt.datetime(2026, 5, 4, 10, 0, tzinfo=UTC))
    raw = short[0].read_bytes()
    more = shift(raw, dt.datetime(2026, 5, 25, 10, 0, tzinfo=UTC) - first_last(raw)[0])
    more = retarget(more, "short", sid, cwd_of(more), str(work / "cli"))
    # new message ids for the later stretch (they are new calls)
    more = re.sub(rb'"id":"msg_', b'"id":"msg_R', more)
    more = re.sub(rb'"requestId":"req_', b'"requestId":"req_R', more)
    with path.open("ab") as f:
        f.write(more)
    made["resumed_same_file"] = str(path)
    # resumed under a new id: the client copies the earlier lines into the new file, then goes on
    data = path.read_bytes()
    new_sid = str(uuid.uuid4())
    copy = data.replace(sid.encode(), new_sid.encode())
    later = shift(raw, dt.datetime(2026, 6, 20, 10, 0, tzinfo=UTC) - first_last(raw)[0])
    later = retarget(later, "short", new_sid, cwd_of(later), str(work / "cli"))
    later = re.sub(rb'"id":"msg_', b'"id":"msg_S', later)
    later = re.sub(rb'"requestId":"req_', b'"requestId":"req_S', later)
    dest = path.parent / f"{new_sid}.jsonl"
    dest.write_bytes(copy + later)
    made["resumed_new_id"] = str(dest)
    # deleted projects: their folders go (transcripts stay)
    for n in ("scratch", "old-exp"):
        shutil.rmtree(work / n)
    return made


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--copies", type=int, default=8)
    ap.add_argument("--small", type=int, default=2000)
    a = ap.parse_args(argv)
    made = build(a.out, a.copies, a.small)
    print(json.dumps(made, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
