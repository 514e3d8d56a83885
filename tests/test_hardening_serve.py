"""The hardening rules of issue 28 classes 6, 9 and 10, each checked by replaying an attack of the class.

6. The live page is the user's alone and cannot be starved: a token in its address, a deadline per
   request header, event streams in their own budget, the collector on, no fork from its threads.
9. Memory bounded by the work, not the file: the session page and the report over huge lines and
   mostly-output transcripts, measured in child processes (RSS, with a wide margin: not speed); the
   live page folds only appended bytes and stays the page a fresh build makes.
10. One id, one row: the same session id in two project folders.

Real sockets on 127.0.0.1, real files, real processes; nothing asserts on how fast anything ran.
"""

from __future__ import annotations

import gc
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest

from bench.synth import Transcript, newline_free
from tests import fuzz_synth as fs

if TYPE_CHECKING:
    from pathlib import Path

MiB = 1 << 20


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fs.isolate(tmp_path, monkeypatch)


def small_transcript(root: Path, name: str = "serve") -> Path:
    t = Transcript(session_id=name)
    t.call(cr=1000, cw=200)
    t.read("/proj/secret-plan.py", "x = 1\n", cr=1200, cw=100)
    return t.save(root / f"{name}.jsonl")


def get(port: int, path: str, timeout: float = 30) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read() if not path.startswith("/events") or resp.status != 200 else b""
    finally:
        conn.close()


def closed_by_server(sock: socket.socket) -> bool:
    """The server closed (or reset) this connection; it sends nothing before it does."""
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


# --------------------------------------------------------------- 6. the token


def test_serve_answers_only_with_its_token(root: Path) -> None:
    """A neighbour who found the port gets a 403 and nothing of the page or its stream; the token
    is long, random per server, and a near miss is a miss."""
    from session_watcher.reports.live_view import LiveView

    view = LiveView(str(small_transcript(root)))
    other = LiveView(str(small_transcript(root)))
    view.start()
    try:
        token = view.token
        assert len(token) >= 40
        assert other.token != token
        assert view.url == f"http://127.0.0.1:{view.port}/?token={token}"
        near = token[:-1] + ("A" if token[-1] != "A" else "B")
        for query in ("", "?token=", f"?token={near}", f"?token={token[:20]}", f"?t={token}",
                      f"?token={other.token}", f"?token={token}x"):
            for path in ("/", "/index.html", "/events"):
                code, body = get(view.port, path + query)
                assert code == 403, (path, query)
                assert b"secret-plan" not in body
        code, body = get(view.port, f"/?token={token}")
        assert code == 200
        assert b"secret-plan" in body
        code, body = get(view.port, f"/nothing?token={token}")
        assert code == 404
    finally:
        view.close()
        other.close()


@pytest.mark.slow
def test_the_printed_address_carries_the_token(root: Path) -> None:
    """The command (through the console script, whose report commands run without the collector)
    prints the address once, token included; that address opens the page, the bare one does not."""
    tr = small_transcript(root)
    proc = subprocess.Popen(fs.cli_argv("report", "session", str(tr), "--serve", "--idle-minutes", "0.03"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=fs.env_for(root))
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = line.split()[1]
        assert url.startswith("http://127.0.0.1:")
        port = int(url.split(":")[2].split("/")[0])
        token = url.split("?token=")[1]
        assert get(port, "/")[0] == 403
        code, body = get(port, f"/?token={token}")
        assert code == 200
        assert b"secret-plan" in body
        out, err = proc.communicate(timeout=120)  # it stops by itself: no page open for 1.8 s
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0
    assert err == ""
    assert token not in out  # printed once, in the first line only
    assert "stopped: no page open" in out


# --------------------------------------------------------------- 6. slots


def test_trickling_headers_are_cut_and_a_page_still_loads(root: Path) -> None:
    """Requests that trickle their header a byte at a time (each byte well within the socket's
    timeout) are cut at their header deadline, and the page loads meanwhile; before, the tricklers
    held every slot for as long as they kept trickling."""
    from session_watcher.reports.live_view import Limits, LiveView

    view = LiveView(str(small_transcript(root)), limits=Limits(connections=4, timeout=20.0, header_seconds=0.5))
    view.start()
    stop = threading.Event()
    cut: list[bool] = []

    def trickle() -> None:
        sock = socket.create_connection(("127.0.0.1", view.port), timeout=30)
        try:
            data = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Slow: " + b"a" * 2000
            for k in range(len(data)):  # a byte every 0.1 s: 200 s, were it let
                if stop.is_set():
                    break
                try:
                    sock.sendall(data[k : k + 1])
                except OSError:
                    cut.append(True)
                    return
                sock.settimeout(0.1)
                try:
                    if sock.recv(1) == b"":
                        cut.append(True)
                        return
                except TimeoutError:
                    pass
                except ConnectionResetError:
                    cut.append(True)
                    return
            cut.append(False)
        finally:
            sock.close()

    threads = [threading.Thread(target=trickle, daemon=True) for _ in range(8)]
    try:
        for t in threads:
            t.start()
        time.sleep(0.3)  # they have all connected and begun
        code, body = get(view.port, f"/?token={view.token}", timeout=60)
        assert code == 200
        assert b"secret-plan" in body
        for t in threads:
            t.join(timeout=60)
        assert cut == [True] * 8  # every trickler was cut by the server, none ran out of bytes
    finally:
        stop.set()
        view.close()


def test_open_streams_stay_in_their_own_budget(root: Path) -> None:
    """Event streams beyond their budget are refused (503) while the page itself still loads: open
    streams never hold the slots a page load needs. Before, sixteen open streams held every slot."""
    from session_watcher.reports.live_view import Limits, LiveView

    view = LiveView(str(small_transcript(root)), limits=Limits(connections=2, streams=2, timeout=20.0))
    before = threading.active_count()
    view.start()
    streams: list[socket.socket] = []
    try:
        answers = []
        for _ in range(8):
            sock = socket.create_connection(("127.0.0.1", view.port), timeout=30)
            sock.sendall(f"GET /events?token={view.token} HTTP/1.1\r\nHost: 127.0.0.1:{view.port}\r\n\r\n".encode())
            status = b""
            while not status.endswith(b"\r\n"):
                status += sock.recv(1)
            answers.append(status.split()[1])
            streams.append(sock)
        assert answers == [b"200", b"200"] + [b"503"] * 6
        for _ in range(3):  # the page, again and again, with both streams still open
            code, body = get(view.port, f"/?token={view.token}", timeout=60)
            assert code == 200
            assert b"secret-plan" in body
        for _ in range(100):  # the refused ones' threads end: the server, its gate and dispatcher, two streams
            if threading.active_count() <= before + 5:
                break
            time.sleep(0.05)
        assert threading.active_count() <= before + 5
    finally:
        for sock in streams:
            sock.close()
        view.close()


def test_the_server_collects_cycles(root: Path) -> None:
    """`report` commands switch the cyclic collector off for their short lives; the live server,
    which runs for an hour with threads and sockets, switches it back on."""
    from session_watcher.reports.live_view import LiveView

    was = gc.isenabled()
    gc.disable()
    view = LiveView(str(small_transcript(root)))
    try:
        view.start()
        assert get(view.port, f"/?token={view.token}")[0] == 200  # it serves: serve_forever has begun
        assert gc.isenabled()
    finally:
        view.close()
        if was:
            gc.enable()
        else:
            gc.disable()


@pytest.mark.slow
def test_no_fork_from_a_process_with_threads(root: Path, alone: None) -> None:
    """The scan's and pages' children are never forked while another thread runs (a child forked
    then holds whatever locks that thread held); the work is then done in the process, with the
    same result."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("the pool forks only with two cores")
    from session_watcher.sessions.replay import replay
    from session_watcher.state import pool

    tr = small_transcript(root)
    release = threading.Event()
    other = threading.Thread(target=release.wait, daemon=True)
    other.start()
    try:
        assert pool.fork("test") is None
        with_thread = replay(str(tr))
    finally:
        release.set()
        other.join()
    child = pool.fork("test")  # alone again: it forks
    assert child is not None
    pid, tmp, end = child
    if pid == 0:
        os._exit(0)
    pool.stop(pid)
    tmp.close()
    os.close(end)
    assert replay(str(tr)) == with_thread


# --------------------------------------------------------------- 9. the live page folds what was appended


def test_live_page_folds_only_appended_bytes_and_equals_a_fresh_page(root: Path) -> None:
    """After an append the live source has read only the new bytes into the same builder, and its
    page is byte for byte the one a fresh build of the whole file makes (story included); a rewrite
    starts it again, and again equals a fresh page."""
    from session_watcher.reports import live_view
    from session_watcher.reports.session_page import page_parts
    from session_watcher.reports.session_page_data import load_model
    from tests.builders import render_html

    src = (fs.REPO / "tests" / "fixtures" / "transcripts" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
    lines = src.read_bytes().splitlines(keepends=True)
    cut = next(i for i, ln in enumerate(lines) if b"compact_boundary" in ln)
    tr = root / src.name
    tr.write_bytes(b"".join(lines[:cut]))
    source = live_view._Source(str(tr))

    def page(snap: live_view.Snapshot) -> str:
        return "".join(page_parts(snap.model, live=True, rows_text=snap.texts))

    def fresh(snap: live_view.Snapshot) -> str:
        """A fresh page of the whole file, its restart saving priced when the live one was."""
        now = (snap.model.get("restartNow") or {}).get("asOf")
        return render_html(load_model(str(tr), now=now), live=True)

    first = source.current()
    assert page(first) == fresh(first)
    assert source._feed.cursor is not None
    builder, offset = source._feed.builder, source._feed.cursor["offset"]
    assert offset == tr.stat().st_size
    with tr.open("ab") as fh:
        fh.write(b"".join(lines[cut:]))
    later = source.current()
    assert later.version > first.version
    assert source._feed.builder is builder  # the same builder, fed from where it stopped
    assert page(later) == fresh(later)
    assert len(later.model["compactions"]) == 1
    assert later.model["storyAvailable"]
    assert later.texts[:10] == first.texts[:10]  # unchanged rows keep their encoded text
    assert all(a is b for a, b in zip(later.texts[:10], first.texts[:10], strict=True))
    tr.write_bytes(b"".join(lines[: cut // 2]))  # rewritten shorter: started again
    again = source.current()
    assert source._feed.builder is not builder
    assert page(again) == fresh(again)


# --------------------------------------------------------------- 9. memory bounded by the work


_PEAK = ("import os, subprocess, sys; p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL); "
         "_, st, ru = os.wait4(p.pid, 0); print(os.waitstatus_to_exitcode(st), ru.ru_maxrss)")


def peak_mb(root: Path, *args: str) -> float:
    """The command's peak RSS. Started from a small interpreter: a child's peak counts what it held
    before its exec, a copy of the (large) test process when forked from it."""
    got = subprocess.run([sys.executable, "-c", _PEAK, *fs.cli_argv(*args)], env=fs.env_for(root),
                         capture_output=True, text=True, timeout=300, check=False)
    rc, kb = got.stdout.split()
    assert rc == "0", got.stderr
    return int(kb) / 1024


@pytest.mark.slow
def test_a_line_without_end_costs_neither_the_page_nor_the_report_its_size(root: Path) -> None:
    """A 256 MiB line without a newline: the session page and the report each stay within a bounded
    buffer (before, they held the line and copies of it: over 2x and 3x its size)."""
    tr = newline_free(root / "projects" / "p" / "0a000000-0000-4000-8000-00000000000a.jsonl", 256 * MiB)
    page = root / "p.html"
    page_peak = peak_mb(root, "report", "session", str(tr), "--html", str(page))
    report_peak = peak_mb(root, "report", "--projects", str(root / "projects"), "--json",
                          "--index", str(root / "idx.sqlite3"))
    assert page_peak < 150, page_peak
    assert report_peak < 150, report_peak
    assert "<html" in page.read_text()


@pytest.mark.slow
def test_page_memory_follows_the_rows_not_the_bytes(root: Path) -> None:
    """A 100 MB transcript that is mostly tool output (48 Reads of a 1 MB file): the page keeps its
    rows, not its bytes (before: the whole file, its text and every line at once, ~4x its size)."""
    t = Transcript(session_id="bulky")
    t.call(cr=1000, cw=200)
    for n in range(48):
        t.read(f"/proj/big{n}.py", "FILE-TEXT\n", cr=1200 + n, cw=100)
    text = b"y = 2  # " + b"z" * (MiB - 9)  # the file's 1 MB, twice in each Read's result line
    tr = root / "bulky.jsonl"
    with tr.open("wb") as fh:  # written line by line: the test process holds none of it
        for line in t.lines():
            fh.write(line.replace(b"FILE-TEXT", text) + b"\n")
    assert tr.stat().st_size > 90 * MiB
    out = root / "bulky.html"
    peak = peak_mb(root, "report", "session", str(tr), "--html", str(out))
    assert peak < 160, peak
    assert out.read_text().count('"kind":"tool"') == 48


def test_pages_run_no_more_at_once_than_memory_holds() -> None:
    """`report --pages` asks each page's expected peak: the processes running at once (heaviest
    first) fit in half the memory available; at least one always runs."""
    from session_watcher.reports.session_page_data import page_memory
    from session_watcher.state.pool import available_memory, memory_bound

    gb = 1 << 30
    assert memory_bound([page_memory(1 * gb)] * 8, 64 * gb) == 8
    assert memory_bound([page_memory(1 * gb)] * 8, 8 * gb) == 1  # 2.03 GB each, 4 GB to spend
    assert memory_bound([page_memory(gb // 2), page_memory(gb // 4), page_memory(gb // 4)], 4 * gb) == 2
    assert memory_bound([page_memory(4 * gb)], 1 * gb) == 1
    assert memory_bound([page_memory(1)] * 3, None) == 3
    avail = available_memory()
    assert avail is None or avail > 0
    assert page_memory(1_000_000_000) > 280 * 10**6  # bench.generate's 1 GB page peaks at 280 MB


# --------------------------------------------------------------- 10. one id, one row


def _calls(t: Transcript, n: int, first_cr: int) -> None:
    for k in range(n):
        t.call(cr=first_cr + 100 * k, cw=50, inp=1, out=10)


@pytest.mark.slow
def test_one_session_id_in_two_project_folders_is_one_row_and_one_page(root: Path) -> None:
    """A session resumed from another folder leaves its calls in two project folders; a copied
    config folder leaves a whole copy in a third: one row (every call once, tokens not doubled),
    named after the folder it went on in, and one page."""
    from session_watcher.cli.report import write_session_pages
    from session_watcher.reports.collect import run_report

    sid = "5e55a000-0000-4000-8000-000000000010"
    projects = root / "projects"
    first = Transcript(session_id=sid, cwd="/home/u/a")
    _calls(first, 3, 10_000)
    first.save(projects / "-home-u-a" / f"{sid}.jsonl")
    later = Transcript(session_id=sid, cwd="/home/u/b")
    later.ts = first.ts + 3600  # resumed an hour later, from another folder: new calls
    later.n = 100
    _calls(later, 4, 20_000)
    later.save(projects / "-home-u-b" / f"{sid}.jsonl")
    (projects / "-home-u-copy").mkdir()
    shutil.copy(projects / "-home-u-a" / f"{sid}.jsonl", projects / "-home-u-copy" / f"{sid}.jsonl")
    alone = Transcript(session_id="5e55a000-0000-4000-8000-000000000011", cwd="/home/u/a")
    _calls(alone, 2, 5_000)
    alone.save(projects / "-home-u-a" / "5e55a000-0000-4000-8000-000000000011.jsonl")

    doc, _stats = run_report([str(projects)], str(root / "idx.sqlite3"), now=first.ts + 7200)
    rows = [s for s in doc["sessions"] if s["sessionId"] == sid]
    assert len(rows) == 1
    row = rows[0]
    assert row["apiCalls"] == 7
    assert row["project"] == "-home-u-b"
    want_cr = sum(10_000 + 100 * k for k in range(3)) + sum(20_000 + 100 * k for k in range(4))
    assert row["tokens"]["cacheRead"] == want_cr
    assert len(doc["sessions"]) == 2
    again, _ = run_report([str(projects)], str(root / "idx2.sqlite3"), now=first.ts + 7200)
    assert json.dumps(again["sessions"]) == json.dumps(doc["sessions"])  # a fresh index agrees
    cached, _ = run_report([str(projects)], str(root / "idx.sqlite3"), now=first.ts + 7200)
    assert json.dumps(cached["sessions"]) == json.dumps(doc["sessions"])  # so does the cached one

    pages = write_session_pages(doc, str(root / "out.html"), [str(projects)])
    assert sorted(pages) == sorted(s["sessionId"] for s in doc["sessions"])
    page = (root / pages[sid]).read_text()
    assert "/home/u/b" in page or '"n":4' in page  # the folder the row names: its 4 calls
    model: dict[str, Any] = json.loads(page.split('id="model">')[1].split("</script>")[0])
    assert sum(r["kind"] == "call" for r in model["rows"]) == 4


@pytest.mark.slow
def test_live_page_takes_a_message_of_200k_rows() -> None:
    """The live page's handler of a `rows` message, run by V8 (node): the first message of a long
    session's stream holds every row (122,624 for bench.generate's 1 GB transcript), which spread
    into a call's arguments was refused ("Maximum call stack size exceeded"), so the page never
    updated."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    js = (fs.REPO / "session_watcher" / "reports" / "assets" / "session_page.js").read_text()
    line = next(ln for ln in js.splitlines() if "msg.type === 'rows'" in ln)
    statement = line.split("msg.type === 'rows')", 1)[1].split("//")[0].strip()
    script = (
        "const M = {rows: Array.from({length: 10}, (_, i) => ({n: -i}))};\n"
        "const msg = {type: 'rows', from: 5, rows: Array.from({length: 200000}, (_, i) => ({n: i}))};\n"
        f"{statement}\n"
        "console.log(M.rows.length, M.rows[4].n, M.rows[5].n, M.rows[M.rows.length - 1].n);\n"
    )
    got = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=60, check=False)
    assert got.returncode == 0, got.stderr
    assert got.stdout.split() == ["200005", "-4", "0", "199999"]
