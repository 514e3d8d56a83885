"""A seeded fuzz run of the real processes: the hook (Claude Code's and Codex's), the status line and
the CLI, fed hostile stdin, hostile paths, mutated transcripts and damaged state folders.

    PYTHONPATH=. .venv/bin/python -m bench.fuzz_hooks [--seed N] [--cases N] [--only KIND] [--keep] [--jobs N]

Each case runs in a fresh folder under a temp root (SESSION_WATCHER_HOME, HOME, CLAUDE_CONFIG_DIR and
CODEX_HOME in it), through install.sh's launchers written for this interpreter. A case fails when a
hook exits non-zero, writes to stderr, prints anything but one JSON object, or is still running after
60 s; when the log holds a traceback; when a state file left behind is no JSON object of its session;
when the CLI exits 3 (a bug), prints a traceback or exits non-zero without a message; when the live
state, once the hooks have read the whole file, is not what replay says. What failed is printed with
the case to run it again; nothing is asserted on a duration.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(os.environ.get("SW_FIXTURES", "/work/shared/fixtures"))
TIMEOUT = 60
EVENTS = ["PostToolUse", "PostToolUseFailure", "Stop", "SubagentStop", "SessionStart", "UserPromptSubmit",
          "SessionEnd", "PreCompact", ""]
ODD = ["", "\x00", "a\x00b", "\ud800", "\udfff", "\u202e\u202d", "\u200f", "\ufeff", "..", "../..", ".",
       "/", "~", "-", "--help", "a" * 5000, "é" * 3000, "/dev/zero", "/dev/stdin", "/proc/self/fd/0",
       "/proc/self/mem", "x/" * 2100, "\n", " ", "C:\\x\\y.jsonl"]


def launchers(folder: Path) -> tuple[list[str], list[str]]:
    from session_watcher.hooks.launchers import write

    write(str(folder))
    return ([sys.executable, "-I", "-S", str(folder / "session-watcher-hook")],
            [sys.executable, "-I", "-S", str(folder / "session-watcher-statusline")])


class Case:
    """One fuzz case's folder and environment."""

    def __init__(self, root: Path, n: int) -> None:
        self.dir = root / f"c{n}"
        self.home = self.dir / "swhome"
        self.proj = self.dir / "proj"
        (self.proj / "src").mkdir(parents=True)
        (self.dir / "codex").mkdir()
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("SESSION_WATCHER", "CLAUDE", "XDG_", "CODEX", "PYTHON"))}
        self.env.update({"SESSION_WATCHER_HOME": str(self.home), "HOME": str(self.dir / "home"),
                         "CLAUDE_CONFIG_DIR": str(self.dir / "claude"), "CODEX_HOME": str(self.dir / "codex"),
                         "PYTHONDONTWRITEBYTECODE": "1", "SESSION_WATCHER_STOP_WAIT": "0", "COLUMNS": "80",
                         "PYTHONPATH": str(REPO)})  # the CLI of this checkout (the launchers name it already)
        self.env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        cfg = self.home / "config"
        cfg.mkdir(parents=True)
        (cfg / "config.toml").write_text('[notify]\nchannels = ["message"]\nfallback = "none"\n')


def run(argv: list[str], stdin: bytes, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[bytes] | None:
    """The process run to its end; None when it is still running after TIMEOUT (killed)."""
    try:
        return subprocess.run(argv, input=stdin, capture_output=True, env=env, cwd=cwd, timeout=TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return None


def check_hook(kind: str, proc: Any, case: Case, faults: list[str], async_event: bool) -> None:
    if proc is None:
        faults.append(f"{kind}: no exit within {TIMEOUT} s")
        return
    if proc.returncode != 0:
        faults.append(f"{kind}: exit {proc.returncode}")
    if proc.stderr:
        faults.append(f"{kind}: stderr {proc.stderr[:300]!r}")
    out = proc.stdout
    if out.strip():
        if async_event:
            faults.append(f"{kind}: an async hook printed {out[:300]!r}")
        try:
            doc = json.loads(out)
            assert isinstance(doc, dict)
            assert out.count(b"\n") == 1
        except (ValueError, AssertionError):
            faults.append(f"{kind}: stdout is no one JSON object: {out[:300]!r}")


def check_after(case: Case, faults: list[str], states: bool = True, log_ok: bool = False) -> None:
    log = case.home / "log" / "session-watcher.log"
    if log_ok:  # a folder the user broke: every run says so in the log, and that is all
        return
    try:
        text = log.read_text(errors="replace")
    except OSError:
        text = ""
    if "Traceback" in text:
        i = text.find("Traceback")
        faults.append("log: " + text[max(0, i - 300): i + 2500])
    sessions = case.home / "state" / "sessions"
    if states and sessions.is_dir():
        for p in sessions.glob("*.json"):
            if p.is_symlink() or not p.is_file():
                continue
            try:
                doc = json.loads(p.read_bytes())
            except (OSError, ValueError) as exc:
                faults.append(f"state {p.name}: {exc}")
                continue
            if not isinstance(doc, dict) or doc.get("sessionId") != p.name[:-5]:
                faults.append(f"state {p.name}: not a state of its session: {str(doc)[:200]}")


# ------------------------------------------------------------------------------------------ sources

def claude_sources() -> list[Path]:
    return sorted((FIXTURES / "corpus").glob("*.jsonl")) + sorted((FIXTURES / "corpus2").glob("*.jsonl"))


def codex_sources() -> list[Path]:
    return sorted((FIXTURES / "codex").glob("rollout-*.jsonl"))


def head_lines(path: Path, rng: random.Random, most: int = 400) -> list[bytes]:
    with open(path, "rb") as fh:
        lines = [fh.readline() for _ in range(rng.randint(5, most))]
    return [line for line in lines if line]


def big_number(rng: random.Random) -> Any:
    return rng.choice([10**30, -(10**30), -1, -5, 1.5, 1e308, -1e308, "NaN", "nan", "Infinity", "1e400",
                       "12", True, False, None, [], {}, 2**63, 2**64 + 1, 0.0, -0.0, 1e-300, "", "x" * 100])


def mutate_numbers(obj: Any, rng: random.Random) -> Any:
    if isinstance(obj, dict):
        return {k: (big_number(rng) if isinstance(v, int | float) and not isinstance(v, bool) and rng.random() < 0.3
                    else mutate_numbers(v, rng)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [mutate_numbers(v, rng) for v in obj]
    return obj


def mutate_lines(lines: list[bytes], rng: random.Random) -> tuple[str, list[bytes]]:  # noqa: C901 - one branch a mutation
    kind = rng.choice(["cut", "dup", "reorder", "numbers", "nest", "drop", "nan", "raw_nan", "types",
                       "surrogate", "nul", "crlf", "bom", "mix"])
    out = list(lines)
    if kind == "cut":
        for _ in range(rng.randint(1, 5)):
            i = rng.randrange(len(out))
            line = out[i]
            out[i] = line[: rng.randrange(max(1, len(line)))] + (b"\n" if rng.random() < 0.7 else b"")
    elif kind == "dup":
        for _ in range(rng.randint(1, 10)):
            i = rng.randrange(len(out))
            out.insert(rng.randrange(len(out) + 1), out[i])
    elif kind == "reorder":
        rng.shuffle(out)
    elif kind in ("numbers", "types"):
        for i in range(len(out)):
            if rng.random() < 0.4:
                try:
                    doc = json.loads(out[i])
                except (ValueError, RecursionError):
                    continue
                doc = mutate_numbers(doc, rng) if kind == "numbers" else retype(doc, rng)
                out[i] = json.dumps(doc).encode() + b"\n"
    elif kind == "nest":
        depth = rng.choice([100, 1000, 10000, 100000])
        payload = b"[" * depth + b"]" * depth
        i = rng.randrange(len(out) + 1)
        out.insert(i, b'{"type":"assistant","message":{"usage":' + payload + b"}}\n")
        out.insert(i, b'{"type":"assistant","message":' + b'{"a":' * depth + b"1" + b"}" * depth + b"}\n")
    elif kind == "drop":
        for _ in range(rng.randint(1, 10)):
            if len(out) > 1:
                out.pop(rng.randrange(len(out)))
    elif kind == "nan":
        for i in range(len(out)):
            if rng.random() < 0.3:
                out[i] = (out[i].replace(b'_tokens":', b'_tokens":NaN, "x":')
                          .replace(b'"timestamp":"', b'"timestamp":"NaN'))
    elif kind == "raw_nan":
        for i in range(len(out)):
            if rng.random() < 0.3:
                for word in (b'"input_tokens":', b'"output_tokens":', b'"cache_read_input_tokens":',
                             b'"cached_input_tokens":', b'"total_tokens":'):
                    j = out[i].find(word)
                    if j >= 0:
                        k = j + len(word)
                        m = k
                        while m < len(out[i]) and out[i][m:m + 1].isdigit():
                            m += 1
                        out[i] = out[i][:k] + rng.choice([b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1",
                                                          b"1.5", b"99999999999999999999999"]) + out[i][m:]
    elif kind == "surrogate":
        for i in range(len(out)):
            if rng.random() < 0.2:
                out[i] = (out[i].replace(b'"cwd":"', b'"cwd":"\\ud800', 1)
                          .replace(b'"text":"', b'"text":"\\udfff\\u0000\\u202e', 1))
    elif kind == "nul":
        i = rng.randrange(len(out))
        out[i] = out[i][:len(out[i]) // 2] + b"\x00" * rng.randint(1, 5000) + out[i][len(out[i]) // 2:]
    elif kind == "crlf":
        out = [line.replace(b"\n", b"\r\n") for line in out]
    elif kind == "bom":
        out[0] = b"\xef\xbb\xbf" + out[0]
    else:
        for _ in range(3):
            _, out = mutate_lines(out, rng)
    return kind, out


def retype(obj: Any, rng: random.Random) -> Any:
    if isinstance(obj, dict):
        res = {}
        for k, v in obj.items():
            odd = rng.choice([None, 1, -1, "s", [], {}, [1, 2], {"a": 1}, True, 1.5])
            res[k] = odd if rng.random() < 0.15 else retype(v, rng)
        return res
    if isinstance(obj, list):
        return [retype(v, rng) for v in obj]
    return obj


# ------------------------------------------------------------------------------------------ scenarios

def odd_paths(case: Case, rng: random.Random, good: str) -> list[str]:
    d = case.dir
    fifo = d / "fifo.jsonl"
    if not fifo.exists():
        os.mkfifo(fifo)
    (d / "adir.jsonl").mkdir(exist_ok=True)
    links = {"zero": "/dev/zero", "fifo": str(fifo), "dir": str(d / "adir.jsonl"), "loop": str(d / "loop.jsonl"),
             "missing": str(d / "missing.jsonl"), "urandom": "/dev/urandom", "self": "/proc/self/fd/0"}
    for name, target in links.items():
        p = d / f"link-{name}.jsonl"
        if not p.is_symlink():
            os.symlink(target, p)
    if not (d / "loop.jsonl").is_symlink():
        os.symlink(d / "loop.jsonl", d / "loop.jsonl")
    rel = os.path.relpath(good, case.proj)
    return [good, rel, good + "/..", good + "/../" + Path(good).name, str(fifo), str(d / "adir.jsonl"),
            *(str(d / f"link-{n}.jsonl") for n in links), str(d / "loop.jsonl"),
            str(d / ("a" * 255 + ".jsonl")), str(d / ("a" * 300)), "/" + "a/" * 3000,
            good + "\x00x", good.replace("/", "/\u202e", 1), "\ud800" + good, *ODD]


def scenario_paths(case: Case, rng: random.Random, hook: list[str], faults: list[str]) -> str:
    """Hostile payloads: odd paths, types and unicode in every field the hooks read."""
    src = rng.choice(claude_sources() + codex_sources())
    codex = "rollout-" in src.name
    tr = case.dir / src.name
    tr.write_bytes(b"".join(head_lines(src, rng)))
    paths = odd_paths(case, rng, str(tr))
    odd_ids: list[object] = ["x", "..", "../x", "a/b", "\ud800", "a" * 300, "\u202e", " ", "con", "-x", 7, None, [],
                             {"a": 1}]
    sid = rng.choice([src.stem.removeprefix("rollout-")[-36:]] * 4 + odd_ids)
    event = rng.choice(EVENTS)
    payload: dict[str, Any] = {
        "session_id": sid, "hook_event_name": rng.choice([event, event, 5, None, "\x00"]),
        "transcript_path": rng.choice([*paths, 5, None, [], {"p": 1}, True]),
        "cwd": rng.choice([str(case.proj)] * 3 + paths + [5, None, []]),
    }
    if rng.random() < 0.5:
        payload["agent_transcript_path"] = rng.choice(paths)
    if rng.random() < 0.5:
        payload["tool_name"] = rng.choice(["Read", "Edit", "Write", "Bash", "MultiEdit", None, 5, "\ud800"])
        payload["tool_input"] = rng.choice([{"file_path": rng.choice(paths)}, {"file_path": 5}, [], "x",
                                            {"edits": [{"old_string": 1}]}, {"file_path": rng.choice(paths),
                                                                             "offset": -1, "limit": 1e300}])
        payload["tool_response"] = rng.choice([{"file": {"filePath": rng.choice(paths), "content": "\x00" * 9,
                                                          "startLine": -5}}, None, "x", [1]])
    if rng.random() < 0.3:
        payload["source"] = rng.choice(["startup", "resume", "clear", "compact", 5, None])
        payload["prompt_cache_likely_expired"] = rng.choice([True, False, "yes", None])
        payload["seconds_since_last_response"] = rng.choice([1e308, -5, "NaN", 10**40, 3600])
    if rng.random() < 0.3:
        payload["prompt"] = rng.choice(["/clear", "/compact", "\x00", "a" * 100000, "\ud800", "hi"])
    if rng.random() < 0.2:
        payload["model"] = rng.choice([{"id": "\ud800" * 50}, "x" * 10000, 5, {"id": 5}])
    raw = json.dumps(payload).encode("utf-8", "surrogatepass")
    mode = rng.random()
    if mode < 0.1:
        raw = raw[: rng.randrange(len(raw))]
    elif mode < 0.15:
        raw = raw.replace(b'"', b"'", 1)
    elif mode < 0.2:
        raw = b"\xff\xfe" + raw
    elif mode < 0.22:
        raw = raw + b"\n" + raw
    named = payload["hook_event_name"]
    argv = [*hook, named if isinstance(named, str) and "\x00" not in named else event]
    if codex or rng.random() < 0.2:
        argv.append("codex")
    elif rng.random() < 0.1:
        argv.append(rng.choice(["inject", "nobody", "\u202e"]))
    if argv[-1] == "inject" and argv[-2] != "SessionStart":
        argv[-2] = "SessionStart"
    for _ in range(rng.randint(1, 2)):
        proc = run(argv, raw, case.env, case.proj)
        check_hook("hook " + " ".join(argv[4:]), proc, case, faults,
                   async_event=argv[4] in ("PostToolUse", "PostToolUseFailure", "Stop", "SubagentStop")
                   and "codex" not in argv[5:])
    check_after(case, faults)
    return f"paths {src.name} argv={argv[4:]} payload={raw[:400]!r}"


def placed(case: Case, src: Path) -> tuple[bool, str, Path]:
    """A fixture's copy where its agent keeps one (a Codex rollout under CODEX_HOME's sessions, a
    Claude Code transcript under a project's folder), its folder made: (a rollout?, session id, path)."""
    codex = "rollout-" in src.name
    if codex:
        tr = case.dir / "codex" / "sessions" / "2026" / "01" / "01" / src.name
    else:
        tr = case.dir / "claude" / "projects" / "-proj" / src.name
    tr.parent.mkdir(parents=True, exist_ok=True)
    return codex, src.stem.removeprefix("rollout-") if codex else src.stem, tr


def caught_up_as_replay(case: Case, exe: tuple[list[str], list[str]], agent: list[str], sid: str, tr: Path,
                        end: int, faults: list[str]) -> None:
    """Stop hooks until the state's cursor reaches `end` (30 at most), then `status --json` (the live
    state) against `replay --json` (one fold of the whole file): each LIVE_KEYS that differs is a fault."""
    hook, cli = exe
    for _ in range(30):
        run([*hook, "Stop", *agent], hook_payload(sid, tr, case, "Stop"), case.env, case.proj)
        try:
            offset = json.loads((case.home / "state" / "sessions" / f"{sid}.json").read_bytes())["cursor"]["offset"]
        except (OSError, ValueError, KeyError, TypeError):
            offset = None
        if offset is not None and offset >= end:
            break
    live = run([*cli, "status", sid, "--json"], b"", case.env, case.proj)
    whole = run([*cli, "replay", str(tr), "--json", "--cwd", str(case.proj)], b"", case.env, case.proj)
    if live is None or whole is None or live.returncode or whole.returncode:
        faults.append(f"status/replay failed: {live and live.stderr[:500]!r} {whole and whole.stderr[:500]!r}")
    else:
        a, b = json.loads(live.stdout), json.loads(whole.stdout)
        faults.extend(f"live {key}={json.dumps(a.get(key))[:300]} but replay {json.dumps(b.get(key))[:300]}"
                      for key in LIVE_KEYS if a.get(key) != b.get(key))


def hook_payload(sid: str, tr: Path, case: Case, event: str) -> bytes:
    return json.dumps({"session_id": sid, "transcript_path": str(tr), "cwd": str(case.proj),
                       "hook_event_name": event}).encode()


def scenario_transcript(case: Case, rng: random.Random, hook: list[str], faults: list[str]) -> str:  # noqa: C901
    """A fixture's head mutated, folded in steps by Stop hooks, with the file cut, replaced, grown or
    swapped between runs."""
    src = rng.choice(claude_sources() + codex_sources())
    codex, sid, tr = placed(case, src)
    lines = head_lines(src, rng, 600)
    kind, lines = mutate_lines(lines, rng)
    blob = b"".join(lines)
    cut = rng.randrange(len(blob) + 1)
    tr.write_bytes(blob[:cut])
    argv = [*hook, "Stop", *(["codex"] if codex else [])]
    between = rng.choice(["grow", "truncate", "replace", "shrink-replace", "append-garbage", "huge-line",
                          "grow-while", "none", "empty", "to-dir", "to-fifo", "to-zero"])
    steps = []
    proc = run(argv, hook_payload(sid, tr, case, "Stop"), case.env, case.proj)
    check_hook("hook Stop 1", proc, case, faults, async_event=not codex)
    writer = None
    if between == "grow":
        with open(tr, "ab") as fh:
            fh.write(blob[cut:])
    elif between == "truncate":
        os.truncate(tr, rng.randrange(cut + 1))
    elif between == "replace":
        tmp = tr.with_suffix(".tmp")
        tmp.write_bytes(blob)
        os.replace(tmp, tr)
    elif between == "shrink-replace":
        tmp = tr.with_suffix(".tmp")
        tmp.write_bytes(blob[: cut // 2])
        os.replace(tmp, tr)
    elif between == "append-garbage":
        with open(tr, "ab") as fh:
            fh.write(os.urandom(rng.randint(1, 70000)))
    elif between == "huge-line":
        with open(tr, "ab") as fh:
            fh.write(b'{"type":"user","message":{"content":"' + b"x" * (50 << 20))
    elif between == "grow-while":
        def grow() -> None:
            with open(tr, "ab") as fh:
                for i in range(0, len(blob) - cut, 4096):
                    fh.write(blob[cut + i: cut + i + 4096])
                    fh.flush()
        writer = threading.Thread(target=grow)
        writer.start()
    elif between == "empty":
        tr.write_bytes(b"")
    elif between == "to-dir":
        tr.unlink()
        tr.mkdir()
    elif between == "to-fifo":
        tr.unlink()
        os.mkfifo(tr)
    elif between == "to-zero":
        tr.unlink()
        os.symlink("/dev/zero", tr)
    for n, event in enumerate(rng.sample(["Stop", "PostToolUse", "UserPromptSubmit", "SessionEnd", "SubagentStop"], 3)):
        proc = run([*hook, event, *(["codex"] if codex else [])], hook_payload(sid, tr, case, event),
                           case.env, case.proj)
        check_hook(f"hook {event} {n + 2}", proc, case, faults,
                   async_event=not codex and event in ("Stop", "PostToolUse", "SubagentStop"))
        steps.append(event)
    if writer is not None:
        writer.join()
    check_after(case, faults)
    return f"transcript {src.name} mutation={kind} cut={cut} between={between} then={steps}"


def scenario_state(case: Case, rng: random.Random, hook: list[str], faults: list[str]) -> str:  # noqa: C901
    """A state folder damaged before a hook runs: corrupt, empty, foreign, odd files where the state,
    its lock or its shards belong, a lock held by another process."""
    src = rng.choice(claude_sources())
    sid = src.stem
    tr = case.dir / src.name
    tr.write_bytes(b"".join(head_lines(src, rng)))
    payload = hook_payload(sid, tr, case, "Stop")
    proc = run([*hook, "Stop"], payload, case.env, case.proj)
    check_hook("hook Stop 1", proc, case, faults, async_event=True)
    sessions = case.home / "state" / "sessions"
    state = sessions / f"{sid}.json"
    lock = sessions / f"{sid}.json.lock"
    damage = rng.choice(["garbage", "empty", "list", "foreign", "truncated", "nul", "huge-int", "nan", "deep",
                         "state-dir", "state-fifo", "state-zero", "lock-dir", "lock-fifo", "lock-held",
                         "lock-link", "shards-garbage", "sessions-file", "home-file", "types",
                         "shard-dir", "state-dangling", "schema-future", "cursor-odd"])
    holder = None
    text = state.read_bytes() if state.is_file() else b"{}"
    if damage == "garbage":
        state.write_bytes(os.urandom(rng.randint(1, 5000)))
    elif damage == "empty":
        state.write_bytes(b"")
    elif damage == "list":
        state.write_bytes(b"[1,2,3]")
    elif damage == "foreign":
        doc = json.loads(text)
        doc["sessionId"] = "someone-else"
        state.write_text(json.dumps(doc))
    elif damage == "truncated":
        state.write_bytes(text[: rng.randrange(len(text))])
    elif damage == "nul":
        state.write_bytes(b"\x00" * len(text))
    elif damage == "huge-int":
        state.write_bytes(text.replace(b'"calls":', b'"calls":1' + b"9" * 5000 + b","
                                       b'"x":', 1))
    elif damage == "nan":
        state.write_bytes(text.replace(b'"offset":', b'"offset":NaN,"y":', 1))
    elif damage == "deep":
        state.write_bytes(b"[" * 100000 + b"]" * 100000)
    elif damage == "types":
        doc = json.loads(text)
        doc = retype(doc, rng)
        doc["sessionId"] = sid
        state.write_text(json.dumps(doc))
    elif damage == "schema-future":
        doc = json.loads(text)
        doc["schema"] = rng.choice([99, -1, "3", None, 3.5])
        state.write_text(json.dumps(doc))
    elif damage == "cursor-odd":
        doc = json.loads(text)
        doc["cursor"] = rng.choice([{"path": str(tr), "offset": -5}, {"path": str(tr), "offset": 10**20},
                                    {"path": "/dev/zero", "offset": 0}, {"offset": "x"}, [], None,
                                    {**(doc.get("cursor") or {}), "offset": 1.5},
                                    {**(doc.get("cursor") or {}), "ino": "x", "dev": None}])
        state.write_text(json.dumps(doc))
    elif damage == "state-dir":
        state.unlink(missing_ok=True)
        state.mkdir()
    elif damage == "state-fifo":
        state.unlink(missing_ok=True)
        os.mkfifo(state)
    elif damage == "state-zero":
        state.unlink(missing_ok=True)
        os.symlink("/dev/zero", state)
    elif damage == "state-dangling":
        state.unlink(missing_ok=True)
        os.symlink(case.dir / "nowhere", state)
    elif damage == "lock-dir":
        lock.unlink(missing_ok=True)
        lock.mkdir()
    elif damage == "lock-fifo":
        lock.unlink(missing_ok=True)
        os.mkfifo(lock)
    elif damage == "lock-link":
        lock.unlink(missing_ok=True)
        os.symlink("/dev/zero", lock)
    elif damage == "lock-held":
        holder = subprocess.Popen([sys.executable, "-c",
                                   "import fcntl,sys,time;f=open(sys.argv[1],'a');fcntl.flock(f,fcntl.LOCK_EX);"
                                   "print('held',flush=True);time.sleep(600)", str(lock)],
                                  stdout=subprocess.PIPE)
        assert holder.stdout is not None
        holder.stdout.readline()
    elif damage in ("shards-garbage", "shard-dir"):
        for p in sessions.iterdir():
            if p.is_dir() or (p.name.startswith(sid) and p.name not in (state.name, lock.name)):
                if p.is_dir():
                    for q in p.rglob("*"):
                        if q.is_file():
                            if damage == "shard-dir":
                                q.unlink()
                                q.mkdir()
                            else:
                                q.write_bytes(os.urandom(100))
                else:
                    p.write_bytes(os.urandom(100))
    elif damage == "sessions-file":
        shutil.rmtree(sessions)
        sessions.write_bytes(b"x")
    elif damage == "home-file":
        shutil.rmtree(case.home / "state")
        (case.home / "state").write_bytes(b"x")
    try:
        with open(tr, "ab") as fh, open(src, "rb") as s:
            s.seek(tr.stat().st_size)
            fh.write(s.read(200000))
        for event in rng.sample(["Stop", "PostToolUse", "UserPromptSubmit", "SessionEnd", "SessionStart"], 3):
            proc = run([*hook, event], hook_payload(sid, tr, case, event), case.env, case.proj)
            check_hook(f"hook {event} after {damage}", proc, case, faults,
                       async_event=event in ("Stop", "PostToolUse"))
    finally:
        if holder is not None:
            holder.kill()
            holder.wait()
    check_after(case, faults, states=damage not in ("state-dir", "state-fifo", "state-zero"),
                log_ok=damage in ("sessions-file", "home-file"))
    return f"state {src.name} damage={damage}"


def scenario_statusline(case: Case, rng: random.Random, statusline: list[str], faults: list[str]) -> str:
    src = rng.choice(claude_sources())
    tr = case.dir / src.name
    kind, lines = mutate_lines(head_lines(src, rng), rng)
    tr.write_bytes(b"".join(lines))
    paths = odd_paths(case, rng, str(tr))
    payload: dict[str, Any] = {
        "session_id": rng.choice([src.stem] * 3 + ["..", "\ud800", 5, None]),
        "transcript_path": rng.choice([*paths, 5, None]),
        "cwd": rng.choice([str(case.proj), *paths, 5]),
        "model": rng.choice([{"id": "claude-opus-4-5", "display_name": "Opus"}, {"id": 5}, "x", None,
                             {"id": "\ud800\x1b[31m", "display_name": "\x1b]0;x\x07"}]),
        "workspace": rng.choice([{"current_dir": str(case.proj), "project_dir": rng.choice(paths)}, 5, None]),
        "context_window": rng.choice([{"context_window_size": rng.choice([200000, -1, 0, 1e308, "x", 10**40]),
                                       "current_usage": rng.choice([None, 5, {"input_tokens": -1}])}, None, []]),
        "cost": rng.choice([{"total_cost_usd": rng.choice([1e308, -1, "NaN", None])}, None, 5]),
        "rate_limits": rng.choice([None, {"five_hour": {"used_percentage": rng.choice([150, -5, "x", 1e308]),
                                                        "resets_at": rng.choice([10**20, -1, "x"])}}, []]),
        "version": rng.choice(["2.1.332", "x", 5, None, "9" * 500]),
    }
    raw = json.dumps(payload).encode("utf-8", "surrogatepass")
    if rng.random() < 0.1:
        raw = raw[: rng.randrange(len(raw))]
    proc = run(statusline, raw, case.env, case.proj)
    if proc is None:
        faults.append(f"statusline: no exit within {TIMEOUT} s")
    else:
        if proc.returncode != 0:
            faults.append(f"statusline: exit {proc.returncode}")
        if proc.stderr:
            faults.append(f"statusline: stderr {proc.stderr[:300]!r}")
        if any(b < 0x20 and b not in (0x0A, 0x1B) for b in proc.stdout):
            faults.append(f"statusline: control bytes {proc.stdout[:300]!r}")
    check_after(case, faults)
    return f"statusline {src.name} mutation={kind} payload={raw[:400]!r}"


CLI_FORMS = [
    ["status", "{p}"], ["status", "{p}", "--json"], ["health", "{p}"], ["replay", "{p}", "--json"],
    ["replay", "{p}", "--verbose"], ["replay", "{p}", "--trace", "{q}"], ["backtest", "{p}", "--json"],
    ["backtest", "{p}", "--set", "{s}"], ["handoff", "{p}", "--show"], ["handoff", "{p}", "--json"],
    ["report", "--since", "{s}"], ["report", "--json", "--since", "{s}"], ["report", "session", "{p}", "--html", "{q}"],
    ["config", "get", "{s}"], ["config", "set", "{s}", "{s}"], ["config", "unset", "{s}"],
    ["export", "--otlp", "{s}", "--dry-run"], ["report", "--html", "{q}"],
]


def scenario_cli(case: Case, rng: random.Random, cli: list[str], faults: list[str]) -> str:
    src = rng.choice(claude_sources() + codex_sources())
    tr = case.dir / src.name
    kind, lines = mutate_lines(head_lines(src, rng), rng)
    tr.write_bytes(b"".join(lines))
    paths = [p for p in odd_paths(case, rng, str(tr)) if "\x00" not in p and "\ud800" not in p and "\udfff" not in p]
    form = rng.choice(CLI_FORMS)
    strings = ["x", "", "7d", "-1d", "2026-13-40", "99999999999d", "1e400", "NaN", "guard=off", "guard",
               "a=b=c", "notify.remind_min=-5", "notify.remind_min=1e400", "ttl=\u202e", "\x1b[2J", "é" * 200,
               "notify.channels", "notify.channels=[1", "http://[::1", "http://127.0.0.1:1/x", "a" * 3000,
               "headroom=NaN", "headroom=inf", "sweet=1e308"]
    args = [a.replace("{p}", rng.choice(paths)).replace("{q}", rng.choice([*paths, str(case.dir / "out.html")]))
            .replace("{s}", rng.choice(strings)) for a in form]
    proc = run([*cli, *args], b"", case.env, case.proj)
    if proc is None:
        faults.append(f"cli {args}: no exit within {TIMEOUT} s")
    else:
        err = proc.stderr.decode(errors="replace")
        if proc.returncode == 3 or "Traceback" in err or proc.returncode not in (0, 1, 2):
            faults.append(f"cli {args[:3]}: exit {proc.returncode}: {err[:1500]}")
        if proc.returncode != 0 and not err.strip():
            faults.append(f"cli {args[:3]}: exit {proc.returncode} without a message")
    log = case.home / "log" / "session-watcher.log"
    if log.exists() and "Traceback" in log.read_text(errors="replace") and proc is not None and proc.returncode != 3:
        faults.append(f"cli {args[:3]}: a traceback logged, exit {proc.returncode}")
    return f"cli {src.name} mutation={kind} args={args!r}"


def odd_numbers(data: bytes, rng: random.Random) -> bytes:
    """Every number of `data`'s JSON lines, now and then, made one no figure can be."""
    pool = [float("inf"), float("-inf"), float("nan"), 10**400, -(10**400), 1e308, -1e308, -1, 2**63, 0.5, 0]

    def odd(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: odd(x) for k, x in v.items()}
        if isinstance(v, list):
            return [odd(x) for x in v]
        if isinstance(v, int | float) and not isinstance(v, bool) and rng.random() < 0.3:
            return rng.choice(pool)
        return v

    out = []
    for line in data.splitlines(keepends=True):
        try:
            out.append(json.dumps(odd(json.loads(line))).encode() + b"\n")
        except (ValueError, RecursionError):
            out.append(line)
    return b"".join(out)


def damage_file(path: Path, rng: random.Random) -> str:
    """One damage to one file: its bytes, its type, or what it is."""
    how = rng.choice(["garbage", "empty", "truncate", "dir", "fifo", "zero", "retype", "nul", "dangling", "huge-int",
                      "numbers", "numbers", "numbers"])
    data = path.read_bytes()
    if how == "numbers":
        path.write_bytes(odd_numbers(data, rng))
        return how
    if how in ("dir", "fifo", "zero", "dangling"):
        path.unlink()
        if how == "dir":
            path.mkdir()
        elif how == "fifo":
            os.mkfifo(path)
        else:
            os.symlink("/dev/zero" if how == "zero" else str(path) + ".gone", path)
    elif how == "garbage":
        path.write_bytes(os.urandom(rng.randint(1, 4000)))
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "truncate":
        path.write_bytes(data[: rng.randrange(max(1, len(data)))])
    elif how == "nul":
        path.write_bytes(b"\x00" * max(1, len(data)))
    elif how == "huge-int":
        path.write_bytes(data.replace(b":1", b":1" + b"9" * 5000, 1).replace(b"= 1", b"= 1" + b"9" * 5000, 1))
    else:
        try:
            doc = json.loads(data)
        except ValueError:
            path.write_bytes(data[::-1])
            return "reversed"
        path.write_text(json.dumps(retype(doc, rng)))
    return how


def scenario_store(case: Case, rng: random.Random, exe: tuple[list[str], list[str], list[str]],
                   faults: list[str]) -> str:
    """Every file the package keeps (state, shards, config, the report's index, pending handoffs,
    markers, the cliff, the guard log) made once, then one of them damaged, then the hooks, the
    status line and the commands run over it."""
    hook, statusline, cli = exe
    src = rng.choice(claude_sources() + codex_sources())
    codex, sid, tr = placed(case, src)
    tr.write_bytes(b"".join(head_lines(src, rng, 800)))
    agent = ["codex"] if codex else []
    for event in ("Stop", "UserPromptSubmit"):
        run([*hook, event, *agent], hook_payload(sid, tr, case, event), case.env, case.proj)
    run([*cli, "report", "--json"], b"", case.env, case.proj)
    run([*cli, "handoff", sid, "--json"], b"", case.env, case.proj)
    run([*cli, "config", "set", "guard", "off"], b"", case.env, case.proj)
    files = sorted(p for p in case.home.rglob("*") if p.is_file() and not p.is_symlink() and "log" not in p.parts)
    victim = rng.choice(files)
    how = damage_file(victim, rng)
    rel = victim.relative_to(case.home)
    log = case.home / "log" / "session-watcher.log"
    before = log.read_text(errors="replace") if log.exists() else ""
    new = "fresh-" + sid[6:]
    steps = [([*hook, "SessionStart", "inject"] if not codex else [*hook, "SessionStart", "codex"],
              json.dumps({"session_id": new, "transcript_path": str(tr.parent / "new.jsonl"), "cwd": str(case.proj),
                          "hook_event_name": "SessionStart", "source": "clear"}).encode()),
             ([*hook, "UserPromptSubmit", *agent], hook_payload(sid, tr, case, "UserPromptSubmit")),
             ([*hook, "Stop", *agent], hook_payload(sid, tr, case, "Stop")),
             ([*hook, "SessionEnd", *agent], hook_payload(sid, tr, case, "SessionEnd"))]
    if not codex:
        steps.insert(2, (statusline, hook_payload(sid, tr, case, "status")))
    for argv, stdin in steps:
        proc = run(argv, stdin, case.env, case.proj)
        if argv is statusline:
            if proc is None or proc.returncode or proc.stderr:
                faults.append(f"statusline: {proc and (proc.returncode, proc.stderr[:500])}")
            continue
        check_hook(" ".join(argv[4:6]), proc, case, faults, async_event=argv[4] == "Stop" and not codex)
    for args in (["status", sid, "--json"], ["report", "--json"], ["handoff", "--show"], ["health", sid],
                 ["config", "show"], ["replay", sid, "--json"], ["report", "session", sid, "--html",
                                                                   str(case.dir / "p.html")], ["doctor"]):
        proc = run([*cli, *args], b"", case.env, case.proj)
        if proc is None:
            faults.append(f"cli {args}: no exit within {TIMEOUT} s")
            continue
        err = proc.stderr.decode(errors="replace")
        if proc.returncode not in (0, 1) or "Traceback" in err:
            faults.append(f"cli {args}: exit {proc.returncode}: {err[:1500]}")
        if proc.returncode == 1 and not err.startswith("session-watcher: ") and args != ["doctor"]:
            faults.append(f"cli {args}: exit 1 without its message: {err[:500]}")
    after = log.read_text(errors="replace") if log.exists() else ""
    if "Traceback" in after[len(before):]:
        i = after.find("Traceback", len(before))
        faults.append("log: " + after[max(0, i - 300): i + 2500])
    return f"store {src.name} damaged {rel} ({how})"


LIVE_KEYS = ("calls", "L", "B", "bDefault", "bFull", "x", "segment", "compactions", "model", "usage")


def scenario_live(case: Case, rng: random.Random, exe: tuple[list[str], list[str]], faults: list[str]) -> str:
    """A mutated transcript written in chunks cut at random bytes, a hook after each chunk: once the
    hooks have read it all, `status --json` (the live state) says what `replay --json` (one fold of
    the whole file) says."""
    hook, cli = exe
    src = rng.choice(claude_sources() + codex_sources())
    codex, sid, tr = placed(case, src)
    lines = head_lines(src, rng, 700)
    kind, lines = mutate_lines(lines, rng) if rng.random() < 0.8 else ("none", lines)
    blob = b"".join(lines)
    cuts = [*sorted(rng.sample(range(1, len(blob)), min(len(blob) - 1, rng.randint(1, 8)))), len(blob)]
    agent = ["codex"] if codex else []
    at = 0
    tr.write_bytes(b"")
    swap = rng.choice(["none", "none", "truncate", "replace", "rewrite-head", "same-size"])
    swap_at = rng.randrange(len(cuts))
    shift = 0  # what a truncation took off the bytes still to come
    for n, planned in enumerate(cuts):
        cut = planned - shift
        with open(tr, "ab") as fh:
            fh.write(blob[at:cut])
        at = cut
        if n == swap_at and swap != "none":  # the file changed under the state's cursor
            if swap == "truncate":  # cut back, then written on from there with the rest
                keep = rng.randrange(at + 1)
                os.truncate(tr, keep)
                blob, at, shift = blob[:keep] + blob[at:], keep, shift + at - keep
            elif swap == "replace":  # another file in its place (a new inode), the same bytes
                tmp = tr.with_suffix(".tmp")
                tmp.write_bytes(blob[:at])
                os.replace(tmp, tr)
            elif swap == "rewrite-head":  # the first line changed in place
                head = bytearray(tr.read_bytes())
                i = head.find(b'"')
                if i >= 0:
                    head[i + 1: i + 2] = b"Z"
                    tr.write_bytes(bytes(head))
                    blob = bytes(head) + blob[at:]
            else:  # bytes before the cursor changed, the size kept
                data = bytearray(tr.read_bytes())
                j = rng.randrange(len(data)) if data else 0
                if data and data[j:j + 1] not in (b"\n",):
                    data[j] = ord("x") if data[j] != ord("x") else ord("y")
                    tr.write_bytes(bytes(data))
                    blob = bytes(data) + blob[at:]
        event = rng.choice(["Stop", "PostToolUse", "UserPromptSubmit", "SubagentStop"])
        proc = run([*hook, event, *agent], hook_payload(sid, tr, case, event), case.env, case.proj)
        check_hook(f"hook {event}", proc, case, faults, async_event=event != "UserPromptSubmit" and not codex)
    caught_up_as_replay(case, (hook, cli), agent, sid, tr, blob.rfind(b"\n") + 1, faults)
    check_after(case, faults)
    return f"live {src.name} mutation={kind} cuts={cuts} swap={swap}@{swap_at}"


def scenario_contention(case: Case, rng: random.Random, exe: tuple[list[str], list[str], list[str]],
                        faults: list[str]) -> str:
    """Hooks of every event, the status line and `status` started together on one session while its
    transcript grows: none waits on another's lock past its own bound, and once the hooks have read
    it all the live state is replay's."""
    hook, statusline, cli = exe
    src = rng.choice(claude_sources() + codex_sources())
    codex, sid, tr = placed(case, src)
    blob = b"".join(head_lines(src, rng, 900))
    cuts = [*sorted(rng.sample(range(1, len(blob)), min(len(blob) - 1, rng.randint(2, 6)))), len(blob)]
    agent = ["codex"] if codex else []
    at = 0
    tr.write_bytes(b"")
    for cut in cuts:
        with open(tr, "ab") as fh:
            fh.write(blob[at:cut])
        at = cut
        procs: list[tuple[str, subprocess.Popen[bytes]]] = []
        for _ in range(rng.randint(2, 6)):
            which = rng.random()
            if which < 0.15 and not codex:
                argv, stdin, kind = statusline, hook_payload(sid, tr, case, "status"), "statusline"
            elif which < 0.25:
                argv, stdin, kind = [*cli, "status", sid, "--json"], b"", "cli"
            else:
                event = rng.choice(["Stop", "PostToolUse", "UserPromptSubmit", "SubagentStop", "SessionStart"])
                argv, stdin, kind = [*hook, event, *agent], hook_payload(sid, tr, case, event), "hook " + event
            feed = case.dir / f"stdin-{len(procs)}"
            feed.write_bytes(stdin)
            with open(feed, "rb") as fh:
                procs.append((kind, subprocess.Popen(argv, stdin=fh, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                     env=case.env, cwd=case.proj)))
        for kind, proc in procs:
            try:
                _out, err = proc.communicate(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                faults.append(f"{kind}: no exit within {TIMEOUT} s")
                continue
            if proc.returncode != 0 or err:
                faults.append(f"{kind}: exit {proc.returncode}, stderr {err[:500]!r}")
    caught_up_as_replay(case, (hook, cli), agent, sid, tr, blob.rfind(b"\n") + 1, faults)
    check_after(case, faults)
    return f"contention {src.name} cuts={cuts}"


def scenario_commands(case: Case, rng: random.Random, cli: list[str], faults: list[str]) -> str:
    """Every command that reads a transcript, over a real transcript or rollout mutated: each exits 0
    or 1 with its message, never 3, never a traceback."""
    src = rng.choice(claude_sources() + codex_sources())
    _, sid, tr = placed(case, src)
    kind, lines = mutate_lines(head_lines(src, rng, 1500), rng)
    tr.write_bytes(b"".join(lines))
    said = []
    page = str(case.dir / "p.html")
    commands = (["status", sid, "--json"], ["health", sid], ["replay", str(tr), "--json"],
                ["replay", sid, "--verbose"], ["backtest", str(tr), "--json"], ["handoff", str(tr), "--json"],
                ["report", "--json"], ["report"], ["report", "session", str(tr), "--html", page],
                ["export", "--otlp", "http://127.0.0.1:9/v1/metrics", "--dry-run"])
    for args in commands:
        proc = run([*cli, *args], b"", case.env, case.proj)
        if proc is None:
            faults.append(f"cli {args[:2]}: no exit within {TIMEOUT} s")
            continue
        err = proc.stderr.decode(errors="replace")
        said.append(proc.returncode)
        if proc.returncode not in (0, 1) or "Traceback" in err:
            faults.append(f"cli {args[:2]}: exit {proc.returncode}: {err[:1500]}")
        elif proc.returncode == 1 and not err.startswith("session-watcher: "):
            faults.append(f"cli {args[:2]}: exit 1 without its message: {err[:500]}")
    check_after(case, faults, states=False)
    return f"commands {src.name} mutation={kind} exits={said}"


SCENARIOS: dict[str, Any] = {
    "paths": scenario_paths, "transcript": scenario_transcript, "state": scenario_state,
    "statusline": scenario_statusline, "cli": scenario_cli, "store": scenario_store, "live": scenario_live,
    "contention": scenario_contention, "commands": scenario_commands}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=50, help="cases of each kind")
    ap.add_argument("--only", choices=sorted(SCENARIOS), action="append")
    ap.add_argument("--keep", action="store_true", help="keep the temp folders of failed cases")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="sw-fuzz-"))
    hook, statusline = launchers(root)
    cli = [sys.executable, "-m", "session_watcher"]
    kinds = args.only or sorted(SCENARIOS)
    work = [(kind, i) for i in range(args.cases) for kind in kinds]
    counts: dict[str, int] = dict.fromkeys(kinds, 0)
    failed: list[tuple[str, str, list[str]]] = []
    lock = threading.Lock()

    def one(kind: str, i: int) -> None:
        n = kinds.index(kind) * 1_000_000 + i
        rng = random.Random(f"{args.seed}-{kind}-{i}")
        case = Case(root, n)
        faults: list[str] = []
        exe = {"statusline": statusline, "cli": cli, "commands": cli, "store": (hook, statusline, cli),
               "live": (hook, cli), "contention": (hook, statusline, cli)}.get(kind, hook)
        try:
            what = SCENARIOS[kind](case, rng, exe, faults)
        except Exception as exc:  # the harness's own trouble
            what, faults = f"{kind} {i}", [f"harness: {exc!r}"]
        with lock:
            counts[kind] += 1
            if faults:
                failed.append((f"{kind} #{i} (--seed {args.seed})", what, faults))
                print(f"FAULT {kind} #{i}: {what}\n  " + "\n  ".join(f[:3000] for f in faults), flush=True)
        if not faults or not args.keep:
            os.chmod(case.dir, stat.S_IRWXU)
            shutil.rmtree(case.dir, ignore_errors=True)

    queue = list(work)
    qlock = threading.Lock()

    def worker() -> None:
        while True:
            with qlock:
                if not queue:
                    return
                kind, i = queue.pop(0)
            one(kind, i)

    threads = [threading.Thread(target=worker) for _ in range(args.jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"cases": counts, "failed": len(failed)}))
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    else:
        print(f"kept: {root}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
