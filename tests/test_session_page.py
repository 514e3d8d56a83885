"""The session page without a browser: its data against an independent reader, the CLI, the live stream."""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from session_watcher.reports import live_view
from session_watcher.reports.session_page_data import load_model
from tests.builders import build_model, complete_lines, render_html
from tests.health_reference import grade_from_records
from tests.oracle import TRANSCRIPTS, one_message

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
REAL = sorted(FIXTURES.glob("*.jsonl"))
BIG = [p for p in REAL if len(p.name) > 40]  # the three long sessions, named by their uuid


def epoch(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def facts(path: Path) -> dict[str, Any]:
    """Compactions, API calls, tool calls, re-reads (with the first-read time) of a transcript."""
    compactions = 0
    calls: set[str] = set()
    uses: dict[str, tuple[str, str | None, float]] = {}
    first: dict[str, float] = {}
    rereads: list[dict[str, Any]] = []
    results = 0
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        if rec.get("isSidechain") or "timestamp" not in rec:
            continue
        if rec.get("type") == "system" and rec.get("subtype") == "compact_boundary":
            compactions += 1
        msg = rec.get("message") or {}
        if not isinstance(msg, dict):
            continue
        content = msg.get("content")
        if rec.get("type") == "assistant":
            if msg.get("usage") and isinstance(msg.get("id"), str) and msg.get("model") != "<synthetic>":
                calls.add(f"{msg.get('id')}|{rec.get('requestId')}")
            for b in content if isinstance(content, list) else []:
                if b.get("type") == "tool_use":
                    fp = (b.get("input") or {}).get("file_path")
                    canon = os.path.normpath(os.path.join(rec.get("cwd") or "/", fp)) if fp else None
                    uses.setdefault(b["id"], (b["name"], canon, epoch(rec["timestamp"])))
        if rec.get("type") == "user":
            for b in content if isinstance(content, list) else []:
                if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") in uses:
                    results += 1
                    name, canon, t_use = uses[b["tool_use_id"]]
                    if name == "Read" and canon:
                        if canon in first:
                            rereads.append({"path": canon, "firstReadAt": first[canon]})
                        else:
                            first[canon] = t_use
    return {
        "compactions": compactions,
        "calls": len(calls),
        "tools": len(uses),
        "results": results,
        "rereads": rereads,
    }


def hms_utc(ts: float) -> str:
    from datetime import UTC

    return datetime.fromtimestamp(ts, UTC).strftime("%H:%M:%S")


# --- the page's data -------------------------------------------------------------------------------

REPO = Path(__file__).parent.parent
README_CALLS = {"258c7280": 152, "fa812bfe": 157, "ae4a77f8": 217, "short.js": 1, "tool_hea": 4, "subagent": 12}


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name[:8])
def test_model_matches_independent_reader(path: Path) -> None:
    """Calls, tool calls, compactions and re-reads agree with a separate reading of the file."""
    want = facts(path)
    model = load_model(str(path), with_story=False)
    calls = [r for r in model["rows"] if r["kind"] == "call"]
    tools = [r for r in model["rows"] if r["kind"] == "tool"]
    assert len(calls) == want["calls"] == README_CALLS[path.name[:8]]
    assert len(tools) == want["tools"]
    assert sum(t["end"] is not None for t in tools) == want["results"]
    assert len(model["compactions"]) == want["compactions"]
    got = [(t["path"], t["firstReadAt"]) for t in tools if t["reread"]]
    assert sorted(got) == sorted((r["path"], r["firstReadAt"]) for r in want["rereads"])
    starts = [r["start"] for r in model["rows"]]
    assert starts == sorted(starts)
    assert all(r["end"] is None or r["end"] >= r["start"] for r in model["rows"])


def test_big_fixtures_have_rereads_and_compactions() -> None:
    """The browser tests count something: every long fixture has a compaction and re-reads."""
    for path in BIG:
        want = facts(path)
        assert want["compactions"] == 1
        assert len(want["rereads"]) >= 10


def test_the_page_says_why_a_signal_has_no_number(tmp_path: Path) -> None:
    """A session of few tool calls: the page's health says why each signal without a number has
    none, in `health`'s words (core.health.no_number); the page drew `-` and "no error rate to
    compare yet" for too few calls and for no errors alike."""
    from session_watcher.core import health

    sample = Path(health.__file__).parent.parent / "data" / "sample-session.jsonl"
    short = tmp_path / "short.jsonl"
    short.write_text("".join(sample.read_text().splitlines(keepends=True)[:6]))
    h = load_model(str(short), with_story=False)["health"]
    assert h["why"] == {"Re-reads": "no file read yet", "Error Rate": "under 4 tool calls",
                        "Tool Efficiency": "under 4 tool calls"}
    full = load_model(str(sample), with_story=False)["health"]
    assert full["why"] == {"Error Rate": "no errors", "Tool Efficiency": "no edit in 1st half"}


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name[:8])
def test_health_bar(path: Path) -> None:
    """21 samples at each 5 % of the session's time, from a healthy start to the final grade."""
    model = load_model(str(path), with_story=False)
    bar = model["healthBar"]
    assert len(bar) == 21
    assert bar[0]["t"] == model["t0"]
    assert bar[-1]["t"] == pytest.approx(model["t1"])
    assert bar[-1]["score"] == model["health"]["score"]
    step = (model["t1"] - model["t0"]) / 20
    assert all(b["t"] == pytest.approx(model["t0"] + i * step) for i, b in enumerate(bar))


def test_final_health_equals_reference() -> None:
    """The page's grade is the seed's algorithm over the whole session."""
    path = FIXTURES / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
    model = load_model(str(path), with_story=False)
    tool_calls = [
        {"toolName": r["name"], "filePath": r["path"], "isError": r["isError"]}
        for r in sorted((r for r in model["rows"] if r["kind"] == "tool"), key=lambda r: r["end"])
    ]
    prompts = [r["prompt"] for r in model["rows"] if r["kind"] == "call"]
    ref = grade_from_records(prompts, 1, tool_calls, 200_000)
    assert model["health"] == {**ref, "why": {}}  # every signal has its number
    assert (ref["grade"], ref["score"]) == ("C", 69)


def _rec(kind: str, ts: str, **fields: Any) -> str:
    return json.dumps({"type": kind, "timestamp": f"2026-02-12T10:00:{ts}Z", "sessionId": "s1", **fields})


def _call(ts: str, mid: str, model: str = "claude-opus-4-6", tools: tuple[str, ...] = ()) -> str:
    usage = {"input_tokens": 3, "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 10, "output_tokens": 5}
    content = [{"type": "tool_use", "id": t, "name": "Bash", "input": {"command": "ls"}} for t in tools]
    return _rec("assistant", ts, requestId=f"req_{mid}",
                message={"id": mid, "model": model, "usage": usage, "content": content})


def test_a_turn_is_the_users_words_not_the_reminders_around_them_nor_a_commands_output() -> None:
    """A typed prompt between two system reminders showed the first reminder's body as its turn's
    words, a record of reminders alone was a turn, and a local command's or bash mode's output was a
    turn of its own (`/exit`, then "Goodbye!"; a compaction's "Compacted" with its escape codes; the
    shell's output after `! pwd`), as was an interruption: the shapes of the calibration transcripts
    (03a1382e, 1e0816ef). Now the turns are the user's words and what they entered."""
    reminder = "<system-reminder>\nThe user opened the file src/app.go in the IDE.\n</system-reminder>"
    todo = "<system-reminder>\nThe TodoWrite tool hasn't been used recently.\n</system-reminder>"
    lines = [
        _rec("user", "00", message={"role": "user", "content": reminder + "\nfix the build please\n" + todo}),
        _call("01", "m1"),
        _rec("user", "02", message={"content": [{"type": "text", "text": reminder},
                                                {"type": "text", "text": "and the tests"},
                                                {"type": "text", "text": todo}]}),
        _call("03", "m2"),
        _rec("user", "04", message={"content": todo}),  # reminders alone
        _rec("user", "05", message={"content": "<command-name>/exit</command-name>\n<command-message>exit"
                                               "</command-message>\n<command-args></command-args>"}),
        _rec("user", "06", message={"content": "<local-command-stdout>Goodbye!</local-command-stdout>"}),
        _rec("user", "07", message={"content": "<local-command-stdout>\u001b[2mCompacted (ctrl+o to see full "
                                               "summary)\u001b[22m</local-command-stdout>"}),
        _rec("user", "08", message={"content": "<bash-input>pwd</bash-input>"}),
        _rec("user", "09", message={"content": "<bash-stdout>/home/dev/proj</bash-stdout><bash-stderr>"
                                               "</bash-stderr>"}),
        _rec("user", "10", message={"content": [{"type": "text", "text": "[Request interrupted by user]"}]}),
        _call("11", "m3"),
        # the interruption and the words typed after it in one record: the words (a text block each)
        _rec("user", "12", message={"content": [{"type": "text", "text": "[Request interrupted by user]"},
                                                {"type": "text", "text": "use the other branch"}]}),
        _call("13", "m4"),
    ]
    m = build_model(lines)
    assert [t["text"] for t in m["turns"]] == ["fix the build please", "and the tests", "/exit", "pwd",
                                               "use the other branch"]
    assert [(r["n"], r["turn"]) for r in m["rows"] if r["kind"] == "call"] == [(1, 1), (2, 2), (3, 4), (4, 5)]


def test_a_task_notifications_turn_is_titled_by_its_summary_not_its_bare_id() -> None:
    """A background task's notification titled its turn by its bare id and output file ("b0be39e
    /tmp/claude-1000/.../b0be39e.output completed Background…", fixture 258c7280): the summary says
    what it is, else the description; one with neither keeps what it has."""
    note = ("<task-notification>\n<task-id>b0be39e</task-id>\n<output-file>/tmp/claude-1000/p/tasks/b0be39e.output"
            "</output-file>\n<status>completed</status>\n<summary>Background command \"Force recompile\" completed "
            "(exit code 0)</summary>\n</task-notification>\nRead the output file to retrieve the result")
    described = ("<task-notification>\n<task-id>c1</task-id>\n<description>Run the linter</description>\n"
                 "</task-notification>")
    bare = "<task-notification>\n<task-id>d2</task-id>\n<status>failed</status>\n</task-notification>"
    lines = [_rec("user", "00", message={"role": "user", "content": "start the build"}), _call("01", "m1")]
    for k, content in enumerate((note, described, bare)):
        lines += [_rec("user", f"{2 + 2 * k:02d}", message={"content": content}),
                  _call(f"{3 + 2 * k:02d}", f"m{2 + k}")]
    assert [t["text"] for t in build_model(lines)["turns"]] == [
        "start the build", 'Background command "Force recompile" completed (exit code 0)', "Run the linter",
        "d2 failed"]
    turns = load_model(str(TRANSCRIPTS / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"), with_story=False)["turns"]
    assert turns[1]["text"] == 'Background command "Force recompile ash deps to clear stale associations" ' \
                               "completed (exit code 0)"


def test_turns_and_synthetic_records() -> None:
    """Each prompt of the user's starts a turn (tool results, the client's meta text and a
    compaction's summary do not); a `<synthetic>` assistant record is no API call, as the hooks count."""
    lines = [
        _rec("user", "00", message={"role": "user", "content": "fix <b>the</b> build please"}),
        _call("01", "m1", tools=("t1",)),
        _rec("user", "02", message={"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}),
        _call("03", "m2"),
        _rec("user", "04", isMeta=True, message={"content": "Caveat: the messages below were generated"}),
        _rec("user", "05", message={"content": "<command-name>/compact</command-name><command-args>short"
                                               "</command-args>"}),
        _rec("user", "06", isCompactSummary=True, message={"content": "This session is being continued"}),
        _rec("assistant", "07", message={"id": "s-1", "model": "<synthetic>", "content": [],
                                         "usage": {"input_tokens": 0, "output_tokens": 0}}),
        _rec("user", "08", message={"content": [{"type": "text", "text": "and the tests"}]}),
        _call("09", "m3"),
    ]
    m = build_model(lines)
    assert m["turns"] == [{"n": 1, "ts": m["turns"][0]["ts"], "text": "fix the build please"},
                          {"n": 2, "ts": m["turns"][1]["ts"], "text": "/compact short"},
                          {"n": 3, "ts": m["turns"][2]["ts"], "text": "and the tests"}]
    assert [(r["kind"], r.get("n"), r["turn"]) for r in m["rows"]] == [
        ("call", 1, 1), ("tool", None, 1), ("call", 2, 1), ("call", 3, 3)]
    assert m["models"] == ["claude-opus-4-6"]
    # the records as json.loads gives them (the builder's other way in) make the same turns
    from session_watcher.reports.session_page_data import PageBuilder

    builder = PageBuilder()
    for line in lines:
        builder.add(json.loads(line))
    assert builder.model()["turns"] == m["turns"]


def test_open_tool_call_and_torn_line() -> None:
    """A tool call without its result is open (end null); a line without its newline waits."""
    lines = (FIXTURES / "tool_heavy.jsonl").read_bytes().splitlines(keepends=True)
    uses = [i for i, ln in enumerate(lines) if b'"tool_use"' in ln]
    cut = b"".join(lines[: uses[0] + 1])
    model = build_model(complete_lines(cut + lines[uses[0] + 1][:40]))
    tools = [r for r in model["rows"] if r["kind"] == "tool"]
    assert len(tools) == 1
    assert tools[0]["end"] is None
    assert complete_lines(b'{"a": 1}') == []


def test_window_from_status_and_model() -> None:
    """The fill uses the real window: the replay's contextPressure, else a 1M model, else 200k."""
    lines = (FIXTURES / "short.jsonl").read_text().splitlines()
    m = build_model(lines, final_status={"contextPressure": {"contextWindow": 1_000_000}})
    assert m["window"] == 1_000_000
    base = build_model(lines)
    assert base["window"] == 200_000
    assert m["health"]["fillPercent"] == pytest.approx(base["health"]["fillPercent"] / 5, abs=0.1)


# --- the HTML file ---------------------------------------------------------------------------------


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    code = "import sys; from session_watcher.cli import main; sys.exit(main(['report', 'session', *sys.argv[1:]]))"
    return subprocess.run(
        [sys.executable, "-c", code, *args], check=False, capture_output=True, text=True, cwd=REPO, env=env, timeout=120
    )


@pytest.mark.slow
def test_cli_writes_self_contained_file(tmp_path: Path) -> None:
    """--html writes one file that loads nothing from anywhere."""
    out = tmp_path / "page.html"
    path = FIXTURES / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    r = run_cli(str(path), "--html", str(out))
    assert r.returncode == 0, r.stderr
    # said as `report --html` says it ("wrote OUT and N session pages in ..."), not "OUT: session ..."
    assert " ".join(r.stdout.split()) == (f"wrote {out}: session 258c7280-ae70-4798-800f-63464d01a85d, "
                                          "health B (80/100)"), r.stdout
    text = out.read_text()
    low = text.lower()
    for bad in ("<link", "src=", "@import", "url(http", "fetch(", "<img", "<iframe"):
        assert bad not in low, bad
    # the only address in the file is the SVG namespace
    assert {m for m in re.findall(r"https?://[^\s'\"]+", text)} == {"http://www.w3.org/2000/svg"}


@pytest.mark.slow
def test_cli_session_id_lookup(tmp_path: Path) -> None:
    """An id is found under $CLAUDE_CONFIG_DIR/projects/*/<id>.jsonl; an unknown id is one error line."""
    sid = "fa812bfe-b295-4cca-9c2f-fdf01028cb46"
    proj = tmp_path / "claude" / "projects" / "-home-u-proj"
    proj.mkdir(parents=True)
    shutil.copy(FIXTURES / f"{sid}.jsonl", proj / f"{sid}.jsonl")
    env = dict(os.environ, CLAUDE_CONFIG_DIR=str(tmp_path / "claude"))
    r = run_cli(sid, "--html", str(tmp_path / "p.html"), env=env)
    assert r.returncode == 0, r.stderr
    assert f"session {sid}" in " ".join(r.stdout.split())
    r = run_cli("no-such-session", "--html", str(tmp_path / "q.html"), env=env)
    assert r.returncode == 1
    assert "no-such-session" in one_message(r.stderr)
    assert not (tmp_path / "q.html").exists()


def test_script_injection_is_inert(tmp_path: Path) -> None:
    """A transcript carrying '</script>' cannot end the data block."""
    lines = (FIXTURES / "tool_heavy.jsonl").read_text().splitlines()
    evil = []
    for ln in lines:
        rec = json.loads(ln)
        for b in (rec.get("message") or {}).get("content") or []:
            if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == "Bash":
                b["input"]["command"] = "echo '</script><script>document.title=\"owned\"</script><!--'"
        evil.append(json.dumps(rec))
    model = build_model(evil)
    page = render_html(model)
    assert page.lower().count("<script") == 2
    assert page.lower().count("</script>") == 2
    start = page.index('id="model">') + len('id="model">')
    data = json.loads(page[start : page.index("</script>", start)])
    assert any("</script>" in (r.get("label") or "") for r in data["rows"])


# --- the live stream, over real HTTP ---------------------------------------------------------------


def test_diff_sends_only_what_changed() -> None:
    """New rows from their index; a finished tool call from its own index; nothing when nothing moved."""
    lines = (FIXTURES / "tool_heavy.jsonl").read_text().splitlines()
    sent: dict[str, Any] = {}
    first = build_model(lines[:20])

    def diff(model: dict[str, Any]) -> list[dict[str, Any]]:
        return [json.loads(m) for m in live_view._diff(live_view.Snapshot.of(model), sent)]

    msgs = diff(first)
    assert [m["type"] for m in msgs] == ["rows", "session", "health:update"]
    assert msgs[0]["from"] == 0
    assert msgs[0]["rows"] == json.loads(json.dumps(first["rows"]))
    assert diff(first) == []
    later = build_model(lines)
    msgs = diff(later)
    rows = next(m for m in msgs if m["type"] == "rows")
    k = rows["from"]
    assert first["rows"][:k] == later["rows"][:k]
    assert k == len(first["rows"]) or first["rows"][k] != later["rows"][k]
    assert rows["rows"] == later["rows"][k:]


def read_events(resp: http.client.HTTPResponse, n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while len(out) < n:
        line = resp.fp.readline()
        if not line:
            break
        if line.startswith(b"data: "):
            out.append(json.loads(line[6:]))
    return out


def test_live_server_streams_new_lines(tmp_path: Path) -> None:
    """The server listens on 127.0.0.1, serves the live page and streams appended lines."""
    src = (FIXTURES / "258c7280-ae70-4798-800f-63464d01a85d.jsonl").read_text().splitlines(keepends=True)
    cut = next(i for i, ln in enumerate(src) if "compact_boundary" in ln)
    tr = tmp_path / "s.jsonl"
    tr.write_text("".join(src[:cut]))
    view = live_view.LiveView(str(tr), poll=0.05)
    view.start()
    try:
        assert view.server.server_address[0] == "127.0.0.1"
        conn = http.client.HTTPConnection("127.0.0.1", view.port, timeout=30)
        conn.request("GET", f"/?token={view.token}")
        page = conn.getresponse()
        body = page.read().decode()
        assert page.status == 200
        assert 'data-live="1"' in body
        conn.close()
        conn = http.client.HTTPConnection("127.0.0.1", view.port, timeout=60)
        conn.request("GET", f"/events?token={view.token}")
        resp = conn.getresponse()
        assert resp.getheader("Content-Type", "").startswith("text/event-stream")
        first = read_events(resp, 3)
        assert [m["type"] for m in first] == ["rows", "session", "health:update"]
        n0 = len(first[0]["rows"])
        assert first[1]["session"]["compactions"] == []
        with tr.open("a") as fh:
            fh.write("".join(src[cut:]))
        want = len(load_model(str(tr), with_story=False)["rows"])
        # the append is written in buffer-sized pieces, and a poll between two of them (a loaded
        # machine) pushes what was complete so far: read on until the whole append is shown (each
        # read is bounded by the socket's timeout; 60 messages are 20 polls' worth)
        kinds: dict[str, dict[str, Any]] = {}
        froms: list[int] = []
        for _ in range(60):
            got = read_events(resp, 1)
            assert got, kinds
            kinds[got[0]["type"]] = got[0]
            if got[0]["type"] == "rows":
                froms.append(got[0]["from"])
            rows = kinds.get("rows")
            if rows is not None and rows["from"] + len(rows["rows"]) == want and "session" in kinds \
                    and "health:update" in kinds and kinds["health:update"]["health"]["compactionCount"] == 1:
                break
        assert set(kinds) == {"rows", "session", "health:update"}
        assert froms[0] <= n0
        assert len(kinds["session"]["session"]["compactions"]) == 1
        assert kinds["health:update"]["health"]["compactionCount"] == 1
        assert kinds["rows"]["from"] + len(kinds["rows"]["rows"]) == want
        conn.close()
    finally:
        view.close()


def test_a_long_prompt_is_cut_between_words_and_marked() -> None:
    """A turn's words on the page: a prompt past PROMPT_CHARS ends at a word with an ellipsis (it
    read '... completed Background com' on 258c7280's page)."""
    from session_watcher.agents.claude_code.records import Record
    from session_watcher.reports.session_page_data import PROMPT_CHARS, prompt_text

    words = "completed Background command finished " * 10
    shown = prompt_text(Record(), words)
    assert shown is not None
    assert len(shown) <= PROMPT_CHARS
    assert shown.endswith("…")
    assert words.startswith(shown[:-1] + " ")  # whole words: the next character was a space
    assert prompt_text(Record(), "short prompt") == "short prompt"
    assert prompt_text(Record(), "x" * 500) == "x" * (PROMPT_CHARS - 1) + "…"


def _serve_lines(path: Path, columns: int, minutes: str = "7") -> list[str]:
    """`report session PATH --serve --idle-minutes MINUTES`'s lines up to the one that ends what it says."""
    from tests.oracle import SW

    with subprocess.Popen([str(SW), "report", "session", str(path), "--serve", "--idle-minutes", minutes],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                          env={**os.environ, "COLUMNS": str(columns)}) as proc:
        watchdog = threading.Timer(120, proc.kill)  # bounds a hang only: other words end the read at EOF
        watchdog.start()
        try:
            assert proc.stdout is not None
            lines = [proc.stdout.readline()]
            while lines[-1] and "no page open" not in lines[-1]:
                lines.append(proc.stdout.readline())
        finally:
            watchdog.cancel()
            proc.terminate()
            proc.wait(timeout=60)
    return lines


@pytest.mark.slow
def test_serve_says_which_session_and_when_it_stops() -> None:
    """`--serve`'s first line: the URL alone, as a user or a test reads it from there (it was one line
    of ~196 columns with the session and the ways it stops); then the session it shows and that it
    stops by itself (it said only "(Ctrl-C to stop)" while `--idle-minutes` would end it unannounced),
    within the width."""
    path = REAL[0]
    first, *rest = _serve_lines(path, 1000)
    assert re.fullmatch(r"serving http://127\.0\.0\.1:\d+/\?token=\S+\n", first), first
    assert rest == [f"  session {path.stem}; Ctrl-C to stop, or it stops after 7 minutes with no page open\n"]
    first, *rest = _serve_lines(path, 50)
    assert re.fullmatch(r"serving http://127\.0\.0\.1:\d+/\?token=\S+\n", first), first
    assert len(rest) > 1, rest
    assert all(len(line.rstrip("\n")) <= 50 and line.startswith("  ") for line in rest), rest
    assert " ".join(" ".join(rest).split()) == (f"session {path.stem}; Ctrl-C to stop, or it stops after 7 "
                                                "minutes with no page open")
    first, *rest = _serve_lines(path, 1000, "1")  # one minute, not "1 minutes"
    assert rest == [f"  session {path.stem}; Ctrl-C to stop, or it stops after 1 minute with no page open\n"]


@pytest.mark.slow
def test_cli_says_what_it_wrote_within_the_width(tmp_path: Path) -> None:
    """`report session THREAD --html OUT` off a terminal (80 columns): the line naming the file, the
    session and its grade keeps within 80, the path and the id whole (it was one 81-column line for
    a Codex thread's page in a short temp folder)."""
    from tests.codex_lines import FIXTURES as CODEX

    thread = "019f1f6f-311c-7543-b0f9-f126da3c5434"
    out = tmp_path / "a-page-of-the-codex-thread.html"
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    r = run_cli(str(CODEX / f"rollout-{thread}.jsonl"), "--html", str(out), env=env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert all(len(x) <= 80 or x.strip().rstrip(":").removeprefix("wrote ") == str(out) for x in lines), r.stdout
    said = " ".join(r.stdout.split())
    assert said.startswith(f"wrote {out}: session {thread}, health "), r.stdout
    spaced = tmp_path / "the pages of my Codex threads, kept here" / "the page of a thread.html"
    spaced.parent.mkdir()
    r = run_cli(str(CODEX / f"rollout-{thread}.jsonl"), "--html", str(spaced), env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("wrote"), r.stdout
    assert f"{spaced}:" in r.stdout, r.stdout  # a path with spaces: whole, never broken at one


def test_a_codex_tool_row_says_its_name_once() -> None:
    """A Codex thread's tool rows were labelled with the tool's name, which the page writes before the
    label: `exec_command exec_command`, `Edit Edit` down the waterfall. A row's label is the file its
    shell command printed, else nothing (the name alone)."""
    from tests.codex_lines import FIXTURES as CODEX

    model = load_model(str(CODEX / "rollout-019f1f6f-311c-7543-b0f9-f126da3c5434.jsonl"))
    tools = [r for r in model["rows"] if r["kind"] == "tool"]
    assert len(tools) > 20
    assert [r for r in tools if r["label"] == r["name"]] == []
    assert all(r["label"] == (r["path"] or "") for r in tools)
    assert any(r["path"] for r in tools)  # a shell read's file, as before
