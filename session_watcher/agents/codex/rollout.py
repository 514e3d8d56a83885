"""Codex rollout lines -> the core's events. Pure: bytes and a small decoder state in, tuples out.

A rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`) is one thread's log, each line
`{"timestamp", "type", "payload"}`. Unlike a Claude Code transcript a line does not stand alone: a
call's model is the latest `turn_context.model`, a `token_count` counts only where the running total
changed, and a subagent thread says so once, in its `session_meta`. That context is the decoder
state (`new_decoder`, plain JSON so that it rides in the reader's cursor between hook runs).

Events (core.transcript's): a model call is ("call", key, ts, model, sidechain, uncached, cr, cw, out,
cw, 0, None) with cr = `cached_input_tokens`, cw = `cache_write_input_tokens` where the line has it
(non-zero), else `input_tokens - cached_input_tokens` (older models write at the input price), uncached the rest,
so that the core's prompt size (uncached + cr + cw) is Codex's `input_tokens`. Per call: a
`token_usage_record` (keyed by its `response_id`); else `event_msg.token_count.info.last_token_usage`
where `total_token_usage` changed (snapshots repeat; deduplicating on `last` would merge two equal
calls). A `compacted` line is ("compact", ts, "auto", the last call's input). A non-default
`service_tier` is carried in the model name, `gpt-5.6-sol[priority]` (core.prices_openai reads it;
its tokens are the model's). A subagent thread's calls are sidechain calls: totals only.

Tool calls (health's, never the path map's): a `function_call` / `custom_tool_call` /
`local_shell_call` is ("use", ts, call id, name, info), its `*_output` ("result", ts, call id, failed,
None); a shell command that only prints files is a `ShellRead` of them, an applied patch an `Edit`
(docs/model.md "Codex CLI" has the rules and what they measured).
"""

from __future__ import annotations

import sys

from session_watcher.agents.seam import HANDOFF, MAX_LINE_BYTES, iso_to_epoch
from session_watcher.core import fastjson
from session_watcher.core.caps import clean_path, count, model_name, short_id
from session_watcher.core.health import SHELL_READ  # a command whose sole purpose is printing files

TYPE_CHECKING = False  # typing (with re) is several ms of a folding hook's start: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Literal

    from session_watcher.core.shapes import Event, UseInfo

MAX_COUNT = 10**9  # a count above this is a bad value, read as 0 (core.transcript's rule)
USAGE_KEYS = ("input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens",
              "reasoning_output_tokens")
# the line types the report's rows (calls, compactions) come from, or the decoder's state: the report
# hands its decoder only these (`Codex.line_markers`)
ROW_MARKERS = (b'"session_meta"', b'"turn_context"', b'"token_count"', b'"token_usage_record"', b'"compacted"',
               b'"thread_settings_applied"', HANDOFF)
# the line types a decoder looks at: those and the tool calls and outputs (health's, which keep no
# decoder state); every other line (messages, reasoning) is passed over by a substring test before
# any JSON parsing. ROW_MARKERS first, in their order: a marker's bit is the same in both searches
MARKERS = (*ROW_MARKERS, b'_call"', b'_call_output"')
DEFAULT_TIERS = ("default", "auto", "standard", "")
# a line's marker bits (`line_reader`, from either search): where it holds the handoff note's only;
# where it holds `token_count`
HANDOFF_ONLY = 1 << MARKERS.index(HANDOFF)
COUNT = 1 << MARKERS.index(b'"token_count"')


def new_decoder() -> dict[str, Any]:
    """The state a rollout's decoding starts from (and the reader's cursor keeps)."""
    return {"model": None, "tier": None, "total": None, "sub": False, "calls": 0, "last": None,
            "lastIn": 0, "records": False, "id": None, "tools": True}  # tools: its fold counted the tool calls


_MINUTES: dict[str, int | None] = {}  # 'YYYY-MM-DDTHH:MM' -> the epoch second it starts at, or None
_FRACTIONS: dict[str, float] = {}  # 'mmmZ' -> 0.mmm, as met (a thousand at most)


def epoch(stamp: object) -> float | None:
    """`iso_to_epoch(stamp)`, the same float: a rollout stamps its lines 'YYYY-MM-DDTHH:MM:SS.mmmZ',
    most of them in a minute seen before (its start remembered, a few thousand at most)."""
    if stamp.__class__ is not str or len(stamp) != 24 or stamp[19] != ".":
        return iso_to_epoch(stamp)
    text: str = stamp
    frac = _FRACTIONS.get(text[20:])
    if frac is None:
        digits = text[20:23]
        if text[23] != "Z" or not (digits.isascii() and digits.isdigit()):
            return iso_to_epoch(text)
        frac = _FRACTIONS[text[20:]] = float("0." + digits)
    sec = text[17:19]
    minute = _MINUTES.get(text[:16], -1)
    if minute == -1:
        if len(_MINUTES) >= 4096:
            _MINUTES.clear()
        whole = iso_to_epoch(text[:16] + ":00Z")
        minute = _MINUTES[text[:16]] = None if whole is None else int(whole)
    if minute is None or not (sec.isascii() and sec.isdigit()):
        return iso_to_epoch(text)
    return minute + int(sec) + frac - 0  # iso_to_epoch's own sum, term for term: the same float


def is_rollout_head(line: bytes) -> bool:
    """True when `line` (a file's first line, or its first bytes) opens a Codex rollout."""
    head = line[:512]
    return head.startswith(b'{"timestamp"') and b'"type":"session_meta"' in head


def usage_of(usage: object) -> tuple[int, int, int, int] | None:
    """(input, cached, cache write (-1 where the object has none), output) of a Codex usage object;
    None when it is not one."""
    if not isinstance(usage, dict):
        return None
    write = usage.get("cache_write_input_tokens")
    return (count(usage.get("input_tokens")), count(usage.get("cached_input_tokens")),
            count(write) if write is not None else -1, count(usage.get("output_tokens")))


def sample(usage: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """(uncached, cache read, cache write, output) as the core counts them: the sum of the first three
    is Codex's `input_tokens` (a cached count above the input is read as all of it). A write of 0
    reads as none reported: 0.145.0-alpha.30 wrote 0 on every call, the uncached part written all
    the same (the next call read it)."""
    inp, cached, write, out = usage
    cr = min(cached, inp)
    cw = inp - cr if write <= 0 else min(write, inp - cr)
    return inp - cr - cw, cr, cw, out


def _total_key(total: object) -> list[int] | None:
    if not isinstance(total, dict):
        return None
    got = total.get
    return [v if (v := got(k)).__class__ is int and 0 < v <= MAX_COUNT else 0 for k in USAGE_KEYS]


def _model(d: dict[str, Any]) -> str | None:
    model: str | None = d["model"]
    tier = d["tier"]
    if model and tier and tier not in DEFAULT_TIERS:
        return f"{model}[{tier}]"
    return model


def _call(d: dict[str, Any], key: str, stamp: object, usage: tuple[int, int, int, int]) -> Event:
    inp, cr, cw, out = sample(usage)
    d["lastIn"] = usage[0]
    return ("call", key, epoch(stamp), _model(d), bool(d["sub"]), inp, cr, cw, out, cw, 0, None)


def _token_count(d: dict[str, Any], info: object, ts: object) -> Event | None:
    """A `token_count` snapshot: a call where its running total changed, else nothing."""
    if not isinstance(info, dict):
        return None  # the first snapshot of older versions: `info: null`, before any call
    return snapshot(d, _total_key(info.get("total_token_usage")), usage_of(info.get("last_token_usage")), ts)


def snapshot(d: dict[str, Any], total: list[int] | None, usage: tuple[int, int, int, int] | None, ts: object,
             ) -> Event | None:
    """A `token_count` snapshot read (its running total as `_total_key` reads it, its last call's
    usage as `usage_of` does): a call where the total changed, else nothing."""
    if total is None or total == d["total"]:
        return None  # a repeated snapshot (turn start, resume, after a compaction)
    d["total"] = total
    if usage is None or d["records"]:
        return None  # `token_usage_record` lines carry the calls of this rollout
    d["calls"] += 1
    key = f"{d['id'] or 'codex'}#{d['calls']}"
    d["last"] = key
    return _call(d, key, ts, usage)


def _usage_record(d: dict[str, Any], p: dict[str, Any], ts: object) -> Event | None:
    """A `token_usage_record`: one model response, keyed by its `response_id`."""
    usage = usage_of(p.get("usage"))
    rid = p.get("response_id")
    if usage is None or not short_id(rid) or not rid:
        return None
    total = _total_key(p.get("thread_token_usage"))
    key = rid
    if not d["records"] and total is not None and total == d["total"] and d["last"]:
        key = d["last"]  # the call a `token_count` just counted: this sample replaces it
    d["records"] = True
    if total is not None:
        d["total"] = total
    return _call(d, key, ts, usage)


def _event_msg(d: dict[str, Any], p: dict[str, Any], ts: object) -> Event | None:
    sub = p.get("type")
    if sub == "token_count":
        return _token_count(d, p.get("info"), ts)
    if sub == "thread_settings_applied":
        settings = p.get("thread_settings")
        tier = settings.get("service_tier") if isinstance(settings, dict) else None
        d["tier"] = tier if isinstance(tier, str) and len(tier) <= 32 else None
    return None


def _turn(d: dict[str, Any], p: dict[str, Any], _ts: object) -> None:
    model = model_name(p.get("model"))
    if model:
        d["model"] = model


def _compacted(d: dict[str, Any], _p: dict[str, Any], ts: object) -> Event:
    return ("compact", epoch(ts), "auto", d["lastIn"])


def _response_item(d: dict[str, Any], p: dict[str, Any], ts: object) -> Event | None:
    kind = p.get("type")
    if d["sub"]:
        return None  # a subagent thread's tools are its own, as its calls are
    if kind in USES:
        return _use(p, ts)
    if kind in RESULTS:
        return _result(p, ts)
    if kind != "message" or p.get("role") == "assistant":
        return None
    return _parent(p, ts)


# ----------------------------------------------------------------------------- tool calls
# A tool call is a ("use", ts, call id, name, info) event and its output a ("result", ts, call id,
# failed, None) event, as a Claude Code transcript gives them, so health's shared fold reads both.
USES = ("function_call", "custom_tool_call", "local_shell_call")
RESULTS = ("function_call_output", "custom_tool_call_output")
EDIT = "Edit"  # core.health.PRODUCTIVE: an applied patch (no path: the path map is not fed by Codex)
SHELLS = ("exec_command", "shell", "container.exec", "shell_command")  # their `cmd` / `command` runs in a shell
# the first words of an output that says the call failed (a code-mode cell's, a patch refused, a
# command that could not start, a process gone, the user's interruption)
FAILURES = ("Script failed", "Script terminated", "apply_patch verification failed", "exec_command failed",
            "write_stdin failed", "aborted by user")
SEPARATORS = frozenset(" \t|&;\n")  # outside quotes: between words, stages, commands
UNQUOTED = frozenset("<>()$`*?[]{}#!\\")  # outside quotes: more than plain commands (a redirection, an expansion)
FILTERS = ("sed", "head", "tail")  # a pipe's later stages that only cut the printed lines
CODE_DIGITS = 12  # an exit code's digits read at most (a run past int()'s limit would raise)
MAX_READS = 64  # files one call's reads name at most (the pending use keeps them in the state)
# a longer command line or code-mode cell is no plain print of files (the fixtures' and the unseen
# rollouts' longest read: 451 characters, in a cell 614): the rule's scan, a loop per character, stops here
MAX_COMMAND = 1 << 14


def _use(p: dict[str, Any], ts: object) -> Event | None:
    tool_id, kind = p.get("call_id"), p.get("type")
    if not (tool_id and short_id(tool_id)):
        return None
    if kind == "local_shell_call":
        action = p.get("action")
        action = action if isinstance(action, dict) else {}
        name, cmd, cwd = "local_shell", _script(action.get("command")), action.get("working_directory")
    else:
        given = p.get("name")
        if not (given and short_id(given)):
            return None
        name = given
        cmd, cwd = _command(name, p.get("arguments") if kind == "function_call" else p.get("input"))
        if cmd == "" or (cmd is None and name == "apply_patch"):  # "": a code-mode cell that applies one
            return ("use", epoch(ts), tool_id, EDIT, None)
    paths = _read_paths(cmd, cwd) if isinstance(cmd, str) else []
    if paths:
        info: UseInfo = {"path": paths[0]}
        if len(paths) > 1:
            info["more"] = paths[1:MAX_READS]
        return ("use", epoch(ts), tool_id, SHELL_READ, info)
    return ("use", epoch(ts), tool_id, name, None)


def _command(name: str, args: object) -> tuple[str | None, object]:
    """(the shell command a tool call runs, its folder): a shell tool's JSON arguments, a code-mode
    cell (`exec`) that runs one `tools.exec_command`; "" for a cell that applies a patch; None."""
    if not isinstance(args, str):
        return None, None
    if name == "exec":
        return _cell_command(args)
    if name not in SHELLS:
        return None, None
    try:
        doc = fastjson.loads(args)
    except ValueError:
        return None, None
    if not isinstance(doc, dict):
        return None, None
    cmd = doc.get("cmd") if "cmd" in doc else _script(doc.get("command"))
    return (cmd if isinstance(cmd, str) else None), doc.get("workdir")


def _cell_command(code: str) -> tuple[str | None, object]:
    """A code-mode cell's (JavaScript) command and folder when it calls one tool, `exec_command`;
    "" when it applies a patch."""
    if "tools.apply_patch(" in code:
        return "", None
    if len(code) > MAX_COMMAND:
        return None, None
    at = code.find("tools.exec_command(")
    if at < 0 or code.count("tools.") != 1:
        return None, None
    return _js_string(code, "cmd", at), _js_string(code, "workdir", at)


def _script(argv: object) -> str | None:
    """The command line of an argv: `bash -lc SCRIPT`'s script, else its words joined (unquoted
    words only: one with a space or a quote is no plain read)."""
    if not (isinstance(argv, list) and argv and all(isinstance(w, str) for w in argv)):
        return None
    if len(argv) == 3 and argv[0].rsplit("/", 1)[-1] in ("bash", "zsh", "sh") and argv[1] in ("-lc", "-c"):
        return str(argv[2])
    if any(not w or " " in w or "'" in w or '"' in w for w in argv):
        return None
    return " ".join(argv)


def _js_string(code: str, key: str, start: int) -> str | None:
    """The string literal given to `key` in a cell's first `tools.exec_command({...})` (`key:"..."`
    or `"key": "..."`), read as JSON reads it; None when it is not one."""
    at = start
    while True:
        at = code.find(key, at)
        if at < 0:
            return None
        i = at + len(key)
        if code[at - 1:at] == '"' and code[i:i + 1] == '"':
            i += 1
        while code[i:i + 1] == " ":
            i += 1
        if code[i:i + 1] != ":":
            at = i
            continue
        i += 1
        while code[i:i + 1] in (" ", "\n"):
            i += 1
        if code[i:i + 1] != '"':
            return None
        end = i + 1
        while end < len(code) and code[end] != '"':
            end += 2 if code[end] == "\\" else 1
        try:
            got = fastjson.loads(code[i:end + 1])
        except ValueError:
            return None
        return got if isinstance(got, str) else None


def _commands(cmd: str) -> list[list[list[str]]] | None:
    """A command line's commands (split at `&&`, `||`, `;`, a newline), each its pipe's stages of
    words; None where it is more than plain commands (a redirection, an expansion, a glob, a
    background `&`, an unclosed quote)."""
    commands: list[list[list[str]]] = [[[]]]
    word: list[str] = []
    has = False
    i, n = 0, len(cmd)
    while i < n:
        c = cmd[i]
        if c in SEPARATORS:
            if has:
                commands[-1][-1].append("".join(word))
            word, has = [], False
            two = cmd[i:i + 2]
            if c == "&" and two != "&&":
                return None
            if c == "|" and two != "||":  # a pipe: the next stage
                if not commands[-1][-1]:
                    return None
                commands[-1].append([])
            elif c not in " \t":  # the next command
                i += two in ("&&", "||")
                commands.append([[]])
        elif c in "'\"":
            got = _quoted(cmd, i)
            if got is None:
                return None
            word.append(got[0])
            has, i = True, got[1]
        elif c in UNQUOTED:
            return None
        else:
            word.append(c)
            has = True
        i += 1
    if has:
        commands[-1][-1].append("".join(word))
    if any(not stage for command in commands for stage in command[1:]):
        return None  # a pipe into nothing
    return [command for command in commands if command[0]]


def _quoted(cmd: str, at: int) -> tuple[str, int] | None:
    """The text between the quote at `at` and its closing one, and where that one is; None for an
    unclosed quote or double quotes holding an expansion or an escape."""
    end = cmd.find(cmd[at], at + 1)
    if end < 0 or (cmd[at] == '"' and any(ch in cmd[at + 1:end] for ch in "$`\\")):
        return None
    return cmd[at + 1:end], end


def _lines_arg(words: list[str]) -> list[str] | None:
    """`head` / `tail`'s words after its name, its line count taken off (`-n N`, `-nN`, `-N`, `-n +N`)."""
    rest = words[1:]
    if rest[:1] == ["-n"] and len(rest) > 1 and rest[1].lstrip("+").isdigit():
        return rest[2:]
    if rest[:1] and rest[0].startswith("-") and rest[0].lstrip("-n+").isdigit():
        return rest[1:]
    return rest


def _printed(words: list[str]) -> list[str] | None:
    """The operands of a command that only prints lines (`cat`, `sed -n 'a,bp'`, `head`, `tail`,
    `nl -ba`), None for any other command."""
    name = words[0]
    if name == "cat":
        return words[1:]
    if name in ("head", "tail"):
        return _lines_arg(words)
    if name == "nl":
        return words[2:] if words[1:2] == ["-ba"] else words[1:]
    if name == "sed" and words[1:2] == ["-n"] and len(words) > 2:
        script = words[2]
        lines = script[:-1].split(",")
        if script.endswith("p") and 1 <= len(lines) <= 2 and all(x.isdigit() or x == "$" for x in lines):
            return words[3:]
    return None


def _read_paths(cmd: str, cwd: object) -> list[str]:
    """The files a shell command line prints, one for each of its commands that does nothing but
    print one file (its first stage prints it, a later stage only cuts lines), absolute against the
    call's folder, or the one a `cd` before it went to (after a `cd` this cannot follow, a relative
    path is none); none where the line is more than plain commands. A path no file can be named by
    (a NUL byte, a lone surrogate, too long: `core.caps.clean_path`) is none: the shell resolves the
    others (`os.path.realpath` raises on the first two and costs the square of a path's length)."""
    paths: list[str] = []
    if len(cmd) > MAX_COMMAND:
        return paths
    here = cwd if isinstance(cwd, str) and cwd[:1] == "/" else None
    lost = False  # a `cd` went where this cannot follow
    for stages in _commands(cmd) or ():
        if stages[0][0] in ("cd", "pushd", "popd") and len(stages) == 1:  # in a pipe it moves only its own stage
            here = _cd(here, stages[0])
            lost = lost or here is None
            continue
        operands = _printed(stages[0])
        if not operands or len(operands) != 1 or operands[0].startswith("-"):
            continue
        if any(later[0] not in FILTERS or _printed(later) != [] for later in stages[1:]):
            continue
        path = operands[0]
        if path[:1] not in ("/", "~"):  # `~`: the shell's (canonical's)
            if lost:
                continue
            if here is not None:
                path = here.rstrip("/") + "/" + path
        if clean_path(path):
            paths.append(path)
    return paths


def _cd(here: str | None, words: list[str]) -> str | None:
    """The folder `cd DIR` goes to from `here` (None: the call's folder is not said, the session's;
    then a relative one stays relative to it); None where this cannot say (`cd` home, `cd -`, an
    option, `pushd` / `popd`)."""
    if words[0] != "cd" or len(words) != 2 or words[1][:1] in ("-", "~", ""):
        return None
    to = words[1]
    return to if to[:1] == "/" or here is None else here.rstrip("/") + "/" + to


def _result(p: dict[str, Any], ts: object) -> Event | None:
    tool_id = p.get("call_id")
    if not (tool_id and short_id(tool_id)):
        return None
    return ("result", epoch(ts), tool_id, _failed(p.get("output")), None)


def _failed(out: object) -> bool:
    """Whether a tool's output says the call failed: its first words (FAILURES), a non-zero exit
    code in its header (`Process exited with code N`, `Exit code: N`) or in a printed result
    (`"exit_code":N`: an output's metadata, a cell's `JSON.stringify(r)`)."""
    if isinstance(out, list):  # a code-mode cell's content parts: its status, then what it printed
        texts = [t for part in out if isinstance(part, dict) and isinstance(t := part.get("text"), str)]
        head, body = (texts[0] if texts else ""), "".join(texts[1:2])
    elif isinstance(out, str):
        head = body = out
    else:
        return False
    if head.startswith(FAILURES):
        return True
    end = head.find("\nOutput:")
    header = head[:end] if end >= 0 else head[:200]
    code = _number_after(header, "Process exited with code ")
    if code is None and header.startswith("Exit code: "):
        code = _number_after(header, "Exit code: ")
    if code is None and body[:1] == "{":
        code = _number_after(body, '"exit_code":')
    return bool(code)


def _number_after(text: str, label: str) -> int | None:
    """The integer right after the first `label` in `text`, None when there is none."""
    at = text.find(label)
    if at < 0:
        return None
    at += len(label)
    end = at + (text[at:at + 1] == "-")
    while text[end:end + 1].isdigit() and end - at < CODE_DIGITS:
        end += 1
    return int(text[at:end]) if end > at and text[at:end] != "-" else None


def _meta(d: dict[str, Any], p: dict[str, Any], _ts: object) -> None:
    if d["id"] is None and short_id(p.get("id")):
        d["id"] = p["id"]
    src = p.get("source")
    if isinstance(src, dict) and "subagent" in src:
        d["sub"] = True


# each handler is given the line's `timestamp` as written: read (`epoch`) only for an event
HANDLERS: dict[object, Callable[[dict[str, Any], dict[str, Any], object], Event | None]] = {
    "event_msg": _event_msg, "turn_context": _turn, "token_usage_record": _usage_record,
    "compacted": _compacted, "session_meta": _meta, "response_item": _response_item,
}


def _parent(p: dict[str, Any], ts: object) -> Event | None:
    """The parent session named by a handoff note the SessionStart hook injected, if `p` holds one.
    Codex (0.171.0, tests/e2e) records a hook's additionalContext as a `developer` message whose
    text is the context as given: the note's first line opens it. Anywhere else (a user message: a
    prompt, a repository's AGENTS.md; the middle of a text) the marker names no parent."""
    if p.get("role") != "developer":
        return None
    from session_watcher.core.notehead import parent_of  # only for such a line: rare

    content = p.get("content")
    for part in content if isinstance(content, list) else ():
        text = part.get("text") if isinstance(part, dict) else None
        found = parent_of(text) if isinstance(text, str) else None
        if found:
            return ("parent", epoch(ts), found)
    return None


_SCHEMA: list[Any] = []  # `lines.record` and `lines.counts` once bound


def bind_schema() -> None:
    """Read marked lines through msgspec (`agents.codex.lines`) from now on: for the readers of
    whole rollouts (replay, the report), never a hook (its few lines would pay for the import)."""
    if not _SCHEMA:
        from session_watcher.agents.codex.lines import counts, record

        _SCHEMA.extend((record, counts))


def parse_lines(lines: list[bytes], d: dict[str, Any]) -> tuple[list[Event], int]:
    """Events of complete rollout lines and how many were bad (not JSON, too long); `d` is updated."""
    events: list[Event] = []
    bad = 0
    take = line_reader(d)
    for line in lines:
        if not line:
            continue
        if len(line) > MAX_LINE_BYTES:
            bad += 1
            continue
        which = first_marker(line)
        if not which:
            continue
        ev = take(line, which)
        if ev is False:
            bad += 1
        elif ev is not None:
            events.append(ev)
    return events, bad


def first_marker(line: bytes) -> int:
    """1 << i for the first of MARKERS that `line` holds (MARKERS[i]), 0 for none."""
    for i, m in enumerate(MARKERS):
        if m in line:
            return 1 << i
    return 0


def line_reader(d: dict[str, Any]) -> Callable[[bytes, int], Event | Literal[False] | None]:
    """`take(line, which)`: the event of one rollout line (in order) or None, False where the line is
    bad (not JSON, not an object); `d` is updated. `which`: bit i set where the line holds MARKERS[i]
    (every marker it holds: `core.markscan.marked_lines`' bits, the report's search; or at least the
    first: `first_marker`), 0 where not looked for yet (a line without any is passed over). A line
    whose only marker is the handoff note's (a message's text) goes the JSON way, as in the Claude
    Code decoder; one with the `token_count` marker is first read as a snapshot (`lines.counts`,
    which hands any other line back)."""
    schema, counts = _SCHEMA if _SCHEMA else (None, None)
    int_digits = sys.get_int_max_str_digits() if schema is not None else 0
    handlers = HANDLERS

    def take(line: bytes, which: int) -> Event | Literal[False] | None:
        if not which:
            which = first_marker(line)
            if not which:
                return None  # messages, tool output: most lines, no JSON read
        if which & COUNT and counts is not None:  # most marked lines: read straight into a snapshot
            snap = counts(line, int_digits)
            if snap is not None:
                return snapshot(d, snap[1], snap[2], snap[0])
        got = schema(line, int_digits) if schema is not None and which != HANDOFF_ONLY else None
        if got is None:
            try:
                rec = fastjson.loads(line)
            except ValueError:
                return False
            if not isinstance(rec, dict):
                return False
            got = rec.get("type"), rec.get("timestamp"), rec.get("payload")
        kind = got[0]
        # a `type` no key can be (an object, a list) names no handler: a line that says nothing
        handler = handlers.get(kind) if isinstance(kind, str) else None
        p = got[2]
        if handler is None or not isinstance(p, dict):
            return None
        return handler(d, p, got[1])

    return take
