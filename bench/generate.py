"""Synthetic Claude Code transcripts shaped like the real fixtures, deterministic from a seed.

``python -m bench.generate transcript OUT --size 100MB [--seed N] [--paths N]`` writes one session;
``python -m bench.generate corpus DIR [--quick]`` writes a heavy user's ``projects/`` folder. Files are
streamed to disk line by line (memory stays flat at any size). Each call returns a manifest with the
ground truth: bytes, lines, API calls, token sums (one sample per API call), distinct paths read.

The shape comes from :mod:`bench.profile`: whole call blocks are sampled from the real sessions and
every record is rebuilt with synthetic content padded to the sampled line length, by the record
builders of :mod:`bench.synth` (the one transcript writer the tests use too).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import random
import statistics
import string
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from bench import profile as profile_mod
from bench import synth

if TYPE_CHECKING:
    from collections.abc import Callable

GENERATOR_VERSION = 2
_ALNUM = string.ascii_letters + string.digits
_WORDS_TEXT = (
    "def return self value state path token cache read write index list dict none true false "
    "import from class async await for while if else elif try except finally with yield lambda "
    "session transcript offset cursor ledger segment growth usage model record line file buffer "
    "config notify report query result error count total delta floor window lamp gate bill"
)
_WORDS = _WORDS_TEXT.split()


def parse_size(text: str) -> int:
    """``1MB`` / ``100MB`` / ``1GB`` / ``512KB`` / plain bytes -> bytes (decimal units)."""
    t = text.strip().upper()
    for suffix, mult in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3), ("B", 1)):
        if t.endswith(suffix):
            return int(float(t[: -len(suffix)]) * mult)
    return int(t)


class TextPool:
    """A few MB of code-like text; slices of it fill records to their sampled lengths."""

    def __init__(self, rng: random.Random, size: int = 1 << 21) -> None:
        parts: list[str] = []
        total = 0
        while total < size:
            indent = " " * (4 * rng.randint(0, 3))
            words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 9)))
            line = f"{indent}{words}_{rng.randint(0, 999)}\n"
            parts.append(line)
            total += len(line)
        self.text = "".join(parts)

    def take(self, n: int, rng: random.Random) -> str:
        n = max(0, n)
        if n == 0:
            return ""
        if n >= len(self.text):
            reps = n // len(self.text) + 1
            return (self.text * reps)[:n]
        o = rng.randrange(0, len(self.text) - n)
        return self.text[o : o + n]


@dataclass
class Manifest:
    """Ground truth for one generated file (or a sum of them)."""

    bytes: int = 0
    lines: int = 0
    calls: int = 0
    input: int = 0
    output: int = 0
    cacheRead: int = 0
    cacheCreation: int = 0
    compactions: int = 0
    readPaths: set[str] = field(default_factory=set)

    def add(self, other: Manifest) -> None:
        for k in ("bytes", "lines", "calls", "input", "output", "cacheRead", "cacheCreation", "compactions"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.readPaths |= other.readPaths

    def as_dict(self) -> dict[str, Any]:
        return {
            "bytes": self.bytes,
            "lines": self.lines,
            "calls": self.calls,
            "tokens": {
                "input": self.input,
                "output": self.output,
                "cacheRead": self.cacheRead,
                "cacheCreation": self.cacheCreation,
            },
            "compactions": self.compactions,
            "distinctReadPaths": len(self.readPaths),
        }


class SessionWriter:
    """Writes one session's records: sampled call blocks, a usage model, compactions, idle gaps."""

    def __init__(
        self,
        prof: profile_mod.Profile,
        seed: int,
        *,
        session_id: str | None = None,
        cwd: str = "/home/dev/proj",
        sidechain: bool = False,
        agent_id: str | None = None,
        paths: int = 400,
        distinct_reads: bool = False,
        start: dt.datetime | None = None,
    ) -> None:
        self.prof = prof
        self.rng = random.Random(seed)
        self.pool = _pool(seed % 7)
        self.session_id = session_id or self.uuid()
        self.cwd = cwd
        self.sidechain = sidechain
        self.agent_id = agent_id
        self.n_paths = max(1, paths)
        self.distinct_reads = distinct_reads
        self.next_path = 0
        self.t = start or dt.datetime(2026, 2, 1, 9, 0, tzinfo=dt.UTC) + dt.timedelta(
            minutes=self.rng.randrange(0, 60 * 24 * 20)
        )
        self.parent: str | None = None
        self.stock: int | None = None
        self.compact_at = self.rng.choice(prof.compact_at)
        self.ttl_min = 60 if self.rng.random() < 0.5 else 5
        self.pending: list[tuple[str, str, str]] = []  # (tool name, tool_use id, path)
        self.msg: dict[str, Any] = {}
        self.request_id = ""
        self.last_assistant = ""
        self.m = Manifest()

    # ---- ids and clock -------------------------------------------------------------------------
    def uuid(self) -> str:
        h = f"{self.rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"

    def token(self, prefix: str, n: int) -> str:
        return prefix + "".join(self.rng.choice(_ALNUM) for _ in range(n))

    def stamp(self) -> str:
        self.t += dt.timedelta(milliseconds=self.rng.randint(50, 4000))
        return synth.iso(self.t)

    def path(self, for_read: bool) -> str:
        if for_read and self.distinct_reads:
            i = self.next_path
            self.next_path += 1
        else:
            i = self.rng.randrange(self.n_paths)
        return f"{self.cwd}/src/pkg{i // 50:03d}/mod{i:05d}.py"

    # ---- writing ------------------------------------------------------------------------------
    def header(self, rtype: str) -> dict[str, Any]:
        return synth.header(
            rtype,
            self.session_id,
            self.cwd,
            parent=self.parent,
            sidechain=self.sidechain,
            branch="main",
            agent_id=self.agent_id,
        )

    def emit(self, fh: IO[bytes], rec: dict[str, Any]) -> None:
        data = synth.line(rec)
        fh.write(data)
        self.m.bytes += len(data)
        self.m.lines += 1
        if "uuid" in rec:
            self.parent = rec["uuid"]

    def finish(self, rec: dict[str, Any]) -> dict[str, Any]:
        rec["uuid"] = self.uuid()
        rec["timestamp"] = self.stamp()
        return rec

    def sized(self, target: int, build: Callable[[str], dict[str, Any]], copies: float = 1.0) -> dict[str, Any]:
        """Build a record whose JSON line is about ``target`` bytes: ``build(filler) -> record``."""
        skeleton = build("")
        base = len(json.dumps(skeleton, ensure_ascii=False, separators=(",", ":")))
        n = int(max(0, target - base) / (1.02 * copies))
        if not n:
            return skeleton
        filler = self.pool.take(n, self.rng)
        rec = build(filler)
        size = len(json.dumps(rec, ensure_ascii=False, separators=(",", ":")))
        if abs(size - target) > 0.1 * target and size > base:  # one correction: escapes, line numbers
            n = max(0, int(n * (target - base) / (size - base)))
            rec = build(filler[:n] if n <= len(filler) else self.pool.take(n, self.rng))
        return rec

    def write_preamble(self, fh: IO[bytes]) -> None:
        if self.sidechain:
            self.emit(fh, self.finish(self.sized(2000, self.user_text)))
            return
        for kind, n in self.prof.preamble[: self.rng.randint(3, 6)]:
            self.write_kind(fh, kind, n)

    def pick_block(self) -> list[tuple[str, int]]:
        return self.rng.choice(self.prof.blocks)

    def write_call(self, fh: IO[bytes], block: list[tuple[str, int]] | None = None) -> None:
        """One API call: its usage, then a sampled block of records."""
        if block is None:
            block = self.pick_block()
        self.new_call(fh)
        for kind, n in block:
            self.write_kind(fh, kind, n)

    def new_call(self, fh: IO[bytes]) -> None:
        gap = 0.0
        if self.stock is not None and self.rng.random() < 0.015:
            gap = self.rng.uniform(3, 45)
            self.t += dt.timedelta(minutes=gap)
        inp = self.rng.randint(1, 10)
        if self.stock is None:
            stock = self.rng.choice(self.prof.first_stocks)
            cr = int(stock * 0.65) if self.rng.random() < 0.5 else 0
            cw = stock - cr - inp
        else:
            if self.stock >= self.compact_at:
                self.compact(fh)
            prev = self.stock or 0
            stock = prev + self.rng.choice(self.prof.stock_deltas)
            if gap > self.ttl_min:
                cr, cw = 0, stock - inp
            else:
                cr, cw = prev, stock - prev - inp
        cw = max(0, cw)
        self.stock = inp + cr + cw
        out = self.rng.choice(self.prof.outputs)
        self.m.calls += 1
        self.m.input += inp
        self.m.output += out
        self.m.cacheRead += cr
        self.m.cacheCreation += cw
        self.request_id = self.token("req_011C", 20)
        mid = self.token("msg_01", 22)
        ttl = "1h" if self.ttl_min == 60 else "5m"
        self.msg = synth.assistant_message(mid, synth.usage(cr, cw, inp, out, ttl))

    def compact(self, fh: IO[bytes]) -> None:
        pre = self.stock or 0
        rec = synth.compact_boundary(self.header("system"), pre, logical_parent=self.parent)
        self.emit(fh, self.finish(rec))

        def summary(f: str) -> dict[str, Any]:
            r = synth.user_text(self.header("user"), "This session is being continued. Summary:\n" + f)
            r["isVisibleInTranscriptOnly"] = True
            r["isCompactSummary"] = True
            return r

        self.emit(fh, self.finish(self.sized(self.rng.choice(self.prof.summary_lengths), summary)))
        self.m.compactions += 1
        self.stock = None
        self.compact_at = self.rng.choice(self.prof.compact_at)

    # ---- records by kind -------------------------------------------------------------------------
    def user_text(self, f: str) -> dict[str, Any]:
        return synth.user_text(self.header("user"), f or "Continue.")

    def assistant(self, block: dict[str, Any]) -> dict[str, Any]:
        return synth.assistant(self.header("assistant"), self.msg, [block], self.request_id)

    def write_kind(self, fh: IO[bytes], kind: str, n: int) -> None:
        parts = kind.split(":")
        head = parts[0]
        rec: dict[str, Any]
        if head == "assistant" and self.msg:
            rec = self.assistant_kind(parts, n)
        elif head == "user" and len(parts) > 2 and parts[1] == "tool_result":
            rec = self.tool_result(parts[2], n)
        elif head == "user":
            rec = self.sized(n, self.user_text)
        elif head == "progress":
            rec = self.progress(parts, n)
        elif head == "system":
            sub = parts[1] if len(parts) > 1 else "info"

            def system(f: str) -> dict[str, Any]:
                r = self.header("system")
                r.update({"subtype": sub, "content": f, "isMeta": False, "level": "info"})
                if sub == "turn_duration":
                    r["durationMs"] = self.rng.randint(2_000, 900_000)
                return r

            rec = self.sized(n, system)
        elif head == "file-history-snapshot":
            self.emit(fh, self.snapshot(n))
            return
        elif head == "queue-operation":
            r = {"type": "queue-operation", "operation": "enqueue", "timestamp": self.stamp()}
            r["sessionId"] = self.session_id
            self.emit(fh, self.sized(n, lambda f: {**r, "content": f}))
            return
        else:
            rec = self.sized(n, lambda f: {**self.header(head), "content": f})
        self.emit(fh, self.finish(rec))

    def assistant_kind(self, parts: list[str], n: int) -> dict[str, Any]:
        btype = parts[1]
        if btype == "tool_use":
            name = parts[2] if len(parts) > 2 else "Bash"
            tid = self.token("toolu_01", 22)
            p = self.path(for_read=name == "Read")
            self.pending.append((name, tid, p))

            def tool(f: str) -> dict[str, Any]:
                if name == "Read":
                    inp: dict[str, Any] = {"file_path": p}
                elif name in ("Edit", "Write"):
                    inp = {"file_path": p, "content": f}
                elif name == "Bash":
                    inp = {"command": f, "description": "Run a command"}
                else:
                    inp = {"prompt": f}
                return self.assistant(synth.tool_use(tid, name, inp))

            return self.sized(n, tool)
        if btype == "thinking":
            return self.sized(n, lambda f: self.assistant({"type": "thinking", "thinking": f, "signature": "x"}))
        return self.sized(n, lambda f: self.assistant({"type": "text", "text": f}))

    def tool_result(self, name: str, n: int) -> dict[str, Any]:
        tid, p = "", self.path(for_read=name == "Read")
        for i, (pname, ptid, ppath) in enumerate(self.pending):
            if pname == name:
                tid, p = ptid, ppath
                del self.pending[i]
                break
        if not tid:
            tid = self.token("toolu_01", 22)
        if name == "Read":
            self.m.readPaths.add(p)

        def result(f: str) -> dict[str, Any]:
            r = self.header("user")
            content: str = f
            tur: Any = f[:200]
            if name == "Read":
                lines = f.split("\n")
                content = synth.numbered(lines)
                tur = synth.file_result(p, f, len(lines))
            elif name == "Bash":
                tur = {
                    "stdout": f,
                    "stderr": "",
                    "interrupted": False,
                    "isImage": False,
                    "noOutputExpected": False,
                }
            elif name == "Edit":
                content = f"The file {p} has been updated successfully."
                tur = {
                    "filePath": p,
                    "oldString": f[:80],
                    "newString": f[80:200],
                    "originalFile": f,
                    "structuredPatch": [],
                    "userModified": False,
                    "replaceAll": False,
                }
            elif name == "Write":
                content = f"File created successfully at: {p}"
                tur = {
                    "type": "create",
                    "filePath": p,
                    "content": f,
                    "structuredPatch": [],
                    "originalFile": None,
                }
            elif name in ("Glob", "Grep"):
                tur = {"filenames": [p], "durationMs": 12, "numFiles": 1, "truncated": False}
            synth.tool_result(r, tid, content, tur)
            r["sourceToolAssistantUUID"] = self.parent
            return r

        copies = 2.3 if name == "Read" else 2.0 if name == "Bash" else 1.0
        return self.sized(n, result, copies)

    def progress(self, parts: list[str], n: int) -> dict[str, Any]:
        dtype = parts[1] if len(parts) > 1 else "progress"
        tid = self.pending[-1][1] if self.pending else self.token("toolu_01", 22)

        def build(f: str) -> dict[str, Any]:
            r = self.header("progress")
            if dtype == "hook_progress":
                event = parts[2] if len(parts) > 2 else "PostToolUse"
                data: dict[str, Any] = {
                    "type": dtype,
                    "hookEvent": event,
                    "hookName": f"{event}:Bash",
                    "command": "/home/dev/.claude/hooks/" + f.replace("\n", " "),
                }
            elif dtype == "bash_progress":
                data = {
                    "type": dtype,
                    "output": f[: len(f) // 3],
                    "fullOutput": f[len(f) // 3 :],
                    "elapsedTimeSeconds": 2,
                    "totalLines": f.count("\n"),
                    "timeoutMs": 60000,
                }
            elif dtype == "agent_progress":
                data = {
                    "message": {
                        "type": "user",
                        "message": {"role": "user", "content": [{"type": "text", "text": f}]},
                    },
                    "normalizedMessages": [],
                    "type": dtype,
                    "prompt": "",
                    "agentId": "a93ccab",
                }
            else:
                data = {"type": dtype, "taskDescription": f}
            r["data"] = data
            r["toolUseID"] = tid
            r["parentToolUseID"] = tid
            return r

        return self.sized(n, build)

    def snapshot(self, n: int) -> dict[str, Any]:
        mid = self.uuid()
        ts = self.stamp()

        def build(f: str) -> dict[str, Any]:
            backups = (
                {
                    f"src/{f[:40].strip() or 'a'}.py": {
                        "backupFileName": f or None,
                        "version": 1,
                        "backupTime": ts,
                    }
                }
                if f
                else {}
            )
            return {
                "type": "file-history-snapshot",
                "messageId": mid,
                "snapshot": {"messageId": mid, "trackedFileBackups": backups, "timestamp": ts},
                "isSnapshotUpdate": bool(f),
            }

        return self.sized(n, build)


_POOLS: dict[int, TextPool] = {}


def _pool(k: int) -> TextPool:
    if k not in _POOLS:
        _POOLS[k] = TextPool(random.Random(1000 + k))
    return _POOLS[k]


_PROFILES: dict[str, profile_mod.Profile] = {}


def get_profile() -> profile_mod.Profile:
    """The fixtures' profile, measured once per process."""
    if "fixtures" not in _PROFILES:
        _PROFILES["fixtures"] = profile_mod.load()
    return _PROFILES["fixtures"]


def write_transcript(
    path: Path,
    size: int,
    seed: int = 1,
    *,
    session_id: str | None = None,
    cwd: str = "/home/dev/proj",
    sidechain: bool = False,
    agent_id: str | None = None,
    paths: int = 400,
    distinct_reads: bool = False,
    prof: profile_mod.Profile | None = None,
) -> Manifest:
    """Stream a session of about ``size`` bytes to ``path`` (whole call blocks; never a cut line)."""
    w = SessionWriter(
        prof or get_profile(),
        seed,
        session_id=session_id,
        cwd=cwd,
        sidechain=sidechain,
        agent_id=agent_id,
        paths=paths,
        distinct_reads=distinct_reads,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb", buffering=1 << 20) as fh:
        w.write_preamble(fh)
        while True:
            block = w.pick_block()
            # stop where the file lands closest to the asked size (whole call blocks only)
            if w.m.calls and w.m.bytes + sum(n for _, n in block) / 2 > size:
                break
            w.write_call(fh, block)
    return w.m


def append_calls(path: Path, calls: int, seed: int, prof: profile_mod.Profile | None = None) -> Manifest:
    """Append ``calls`` API calls to an existing session file (same session id), as a live session would."""
    first: dict[str, Any] = {}
    with path.open("rb") as fh:
        for line in fh:
            first = json.loads(line)
            if "sessionId" in first:
                break
    w = SessionWriter(
        prof or get_profile(),
        seed,
        session_id=first.get("sessionId"),
        cwd=first.get("cwd", "/home/dev/proj"),
        sidechain=bool(first.get("isSidechain")),
        agent_id=first.get("agentId"),
        start=dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC),
    )
    with path.open("ab") as fh:
        for _ in range(calls):
            w.write_call(fh)
    return w.m


# ---- the corpus ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CorpusSpec:
    files: int = 3000
    total: int = 1_200_000_000
    median: int = 100_000
    p99: int = 5_000_000
    largest: int = 90_000_000
    projects: int = 40
    subagent_share: float = 0.12
    seed: int = 7

    @staticmethod
    def quick() -> CorpusSpec:
        return CorpusSpec(files=40, total=4_000_000, median=40_000, p99=600_000, largest=1_000_000, projects=5)


def corpus_sizes(spec: CorpusSpec) -> list[int]:
    """Log-normal file sizes (median and p99 as given) at evenly spaced quantiles; the largest file
    set to ``largest``; the rest scaled so the total comes out at ``total``."""
    nd = statistics.NormalDist()
    sigma = (_ln(spec.p99) - _ln(spec.median)) / nd.inv_cdf(0.99)
    raw = [spec.median * _exp(sigma * nd.inv_cdf((i + 0.5) / spec.files)) for i in range(spec.files)]
    raw.sort()
    rest = raw[:-1]
    scale = (spec.total - spec.largest) / sum(rest)
    sizes = [max(2_000, int(s * scale)) for s in rest] + [spec.largest]
    return sizes


def _ln(x: float) -> float:
    import math

    return math.log(x)


def _exp(x: float) -> float:
    import math

    return math.exp(x)


def corpus_key(spec: CorpusSpec) -> str:
    here = Path(__file__).parent
    src = b"".join((here / name).read_bytes() for name in ("generate.py", "profile.py", "synth.py"))
    return hashlib.sha256(src + repr(spec).encode() + str(GENERATOR_VERSION).encode()).hexdigest()[:16]


def write_corpus(root: Path, spec: CorpusSpec) -> dict[str, Any]:
    """Write ``root/projects/<proj>/<uuid>.jsonl`` (+ ``<uuid>/subagents/agent-<id>.jsonl``); reuse it
    when a manifest for the same spec and generator is already there."""
    manifest_path = root / "manifest.json"
    key = corpus_key(spec)
    if manifest_path.exists():
        old = json.loads(manifest_path.read_text())
        if old.get("key") == key:
            return dict(old)
    rng = random.Random(spec.seed)
    sizes = corpus_sizes(spec)
    rng.shuffle(sizes)
    prof = get_profile()
    total = Manifest()
    files: list[str] = []
    parents: list[tuple[Path, str, str]] = []  # (session file, session id, cwd)
    for i, size in enumerate(sizes):
        seed = spec.seed * 1_000_003 + i
        if parents and rng.random() < spec.subagent_share:
            parent, sid, cwd = rng.choice(parents)
            aid = f"a{rng.getrandbits(28):07x}"
            path = parent.with_suffix("") / "subagents" / f"agent-{aid}.jsonl"
            m = write_transcript(path, size, seed, session_id=sid, cwd=cwd, sidechain=True, agent_id=aid, prof=prof)
        else:
            proj = int(rng.paretovariate(1.2)) % spec.projects
            cwd = f"/home/dev/work/proj{proj:02d}"
            sid = SessionWriter(prof, seed).uuid()
            path = root / "projects" / cwd.replace("/", "-") / f"{sid}.jsonl"
            m = write_transcript(path, size, seed, session_id=sid, cwd=cwd, prof=prof)
            parents.append((path, sid, cwd))
        total.add(m)
        files.append(str(path.relative_to(root)))
    out = {"key": key, "spec": spec.__dict__, "files": files, "truth": total.as_dict()}
    manifest_path.write_text(json.dumps(out, indent=1))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.generate", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("transcript")
    t.add_argument("out", type=Path)
    t.add_argument("--size", default="1MB")
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--paths", type=int, default=400)
    t.add_argument("--distinct-reads", action="store_true")
    c = sub.add_parser("corpus")
    c.add_argument("root", type=Path)
    c.add_argument("--quick", action="store_true")
    c.add_argument("--seed", type=int, default=7)
    p = sub.add_parser("profile")
    p.add_argument("--generated", type=Path, help="also measure this generated file")
    args = ap.parse_args(argv)
    if args.cmd == "transcript":
        m = write_transcript(
            args.out, parse_size(args.size), args.seed, paths=args.paths, distinct_reads=args.distinct_reads
        )
        print(json.dumps(m.as_dict(), indent=1))
    elif args.cmd == "corpus":
        spec = CorpusSpec.quick() if args.quick else CorpusSpec()
        spec = CorpusSpec(**{**spec.__dict__, "seed": args.seed})
        print(json.dumps(write_corpus(args.root, spec)["truth"], indent=1))
    else:
        out = {"fixtures": get_profile().describe()}
        if args.generated:
            out["generated"] = profile_mod.load([args.generated]).describe()
        print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
