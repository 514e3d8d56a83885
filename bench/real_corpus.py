"""A ~250 MB corpus of real sessions: ``python -m bench.real_corpus SRC... --out DIR [--size 250MB]``.

Real transcripts are few and small (the six in ../shared/fixtures/corpus plus the fixtures: ~30 MB),
so they are replicated until the corpus reaches the size asked for. Each copy gets a distinct
session id (file and folder names and the `sessionId` field) and distinct message and request ids,
so neither this project nor ccusage (which deduplicates by message + request id across files)
folds two copies into one. The content is otherwise byte for byte the real one.
"""

from __future__ import annotations

import argparse
import re
import shutil
import uuid
from pathlib import Path

from bench.generate import parse_size

UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def sessions(sources: list[Path]) -> list[tuple[Path, Path | None]]:
    """(main transcript, its subagent folder or None) under the given folders."""
    out = []
    for src in sources:
        for p in sorted(src.rglob("*.jsonl")):
            if "subagents" in p.parts or p.stat().st_size < 10_000:
                continue
            folder = p.with_suffix("")
            out.append((p, folder if (folder / "subagents").is_dir() else None))
    return out


def rename(data: bytes, sid: bytes, new: bytes, k: int) -> bytes:
    tag = b"c%04d" % k
    data = data.replace(sid, new)
    return data.replace(b'"msg_', b'"msg_' + tag).replace(b'"req_', b'"req_' + tag)


def build(sources: list[Path], out: Path, size: int) -> dict[str, int]:
    found = sessions(sources)
    if out.exists():
        shutil.rmtree(out)
    total = files = k = 0
    while total < size:
        for main, sub in found:
            if total >= size:
                break
            k += 1
            sid = main.stem.encode()
            new = str(uuid.UUID(int=k, version=4)).encode() if UUID.fullmatch(sid) else sid + b"-c%04d" % k
            proj = out / "projects" / f"-real-{k % 12:02d}"
            proj.mkdir(parents=True, exist_ok=True)
            data = rename(main.read_bytes(), sid, new, k)
            (proj / (new.decode() + ".jsonl")).write_bytes(data)
            total += len(data)
            files += 1
            if sub is not None:
                for f in sorted((sub / "subagents").glob("*.jsonl")):
                    d = proj / new.decode() / "subagents"
                    d.mkdir(parents=True, exist_ok=True)
                    data = rename(f.read_bytes(), sid, new, k)
                    (d / f.name).write_bytes(data)
                    total += len(data)
                    files += 1
    return {"bytes": total, "files": files, "copies": k, "distinct": len(found)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.real_corpus", description=__doc__)
    ap.add_argument("sources", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--size", type=parse_size, default=250_000_000)
    args = ap.parse_args(argv)
    print(build(args.sources, args.out, args.size))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
