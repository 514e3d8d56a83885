"""The exporter's and the backfill's own code run in this process (the process tests run them as the
detached child and the CLI): a session's flush, a collector that refuses or is overloaded, the
backoff it leaves behind, the trigger's stat-and-spawn, `export --otlp` called directly."""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import pytest

from session_watcher.base import config, paths
from session_watcher.cli import export as backfill
from session_watcher.core.usererrors import NoTarget
from session_watcher.otlp import exporter, settings, trigger, wire
from tests.oracle import FIXTURES, TRANSCRIPTS, hook, payload
from tests.otlp_receiver import Receiver, closed_port, exporters, stop_exporters

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

SHORT = TRANSCRIPTS / "subagent.jsonl"  # 12 calls
DROPPED = "<the key left out>"  # an entry's field of this value is taken out of it


def _session(tmp_path: Path, sid: str = "inproc") -> Path:
    t = tmp_path / f"{sid}.jsonl"
    t.write_bytes(SHORT.read_bytes())
    assert hook("Stop", payload(sid, t)).returncode == 0
    return t


def _config(url: str, **more: object) -> None:
    cfg = Path(paths.user_config_file())
    cfg.parent.mkdir(parents=True, exist_ok=True)
    keys = {"enabled": True, "endpoint": url, "interval": 1, "timeout": 2, **more}
    cfg.write_text("[otlp]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in keys.items()))


def test_a_sessions_flush_sends_it_and_records_it(tmp_path: Path) -> None:
    _session(tmp_path)
    with Receiver() as r:
        _config(r.url, protocol="http/json")
        assert exporter.run("inproc") == 0
        calls = r.points("session_watcher.calls")
    assert [(p.attributes["session.id"], p.value) for p in calls] == [("inproc", 12.0)]
    progress = exporter.load_progress()
    assert progress["sessions"]["inproc"]["sent"] > 0
    assert (progress["downUntil"], progress["failures"]) == (0.0, 0)
    assert exporter.doctor_line().startswith("otlp       on: ")
    assert exporter.doctor_line().endswith("; 1 session sent; ok")  # was "1 sessions sent"


@pytest.mark.parametrize(("status", "retry"), [(503, True), (429, True), (404, False)])
def test_a_collector_that_answers_no_is_tried_again_later_or_not(tmp_path: Path, status: int, retry: bool) -> None:
    _session(tmp_path)
    with Receiver(status=status) as r:
        _config(r.url)
        got = exporter.ready(os.environ)
        assert got is not None
        otlp, cfg, target = got
        body, ctype = wire.encode({"resourceMetrics": []}, target.protocol, "metrics")
        outcome = wire.post(target.urls["metrics"], body, ctype, target.headers, 2)
        assert (outcome.ok, outcome.retry, outcome.status) == (False, retry, status)
        now = time.time()
        assert exporter.one_pass(otlp, cfg, target, now, "inproc") == 1  # backing off: stay
    progress = exporter.load_progress()
    assert progress["failures"] == 1
    wait = progress["downUntil"] - now
    assert wait == pytest.approx(1.0 if retry else exporter.BACKOFF_MAX, abs=0.01)
    assert "inproc" not in progress["sessions"]  # nothing recorded as sent
    assert "backing off" in exporter.doctor_line(now=now)  # (the clock's now may be past a 1 s wait)
    assert exporter.doctor_line(now=progress["downUntil"]).endswith("; ok")


def test_a_collector_that_is_down_doubles_the_wait(tmp_path: Path) -> None:
    _session(tmp_path)
    _config(f"http://127.0.0.1:{closed_port()}")
    otlp, cfg, target = exporter.ready(os.environ) or pytest.fail("export is on")
    waits = []
    for _ in range(3):
        now = exporter.load_progress()["downUntil"] or time.time()
        exporter.one_pass(otlp, cfg, target, now + 0.01, "inproc")
        waits.append(round(exporter.load_progress()["downUntil"] - now - 0.01))
    assert waits == [1, 2, 4]
    log = Path(paths.log_file()).read_text()
    assert log.count("failed (ConnectionRefusedError") == 1


def test_export_on_with_nowhere_to_go_pauses_the_hooks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """"auto" with Claude Code's telemetry on but no endpoint in its settings: said once; the
    heartbeat is set an hour ahead, so hooks start nothing meanwhile."""
    monkeypatch.setenv("CLAUDE_CODE_ENABLE_TELEMETRY", "1")
    assert exporter.run(None) == 0
    beat = Path(paths.otlp_dir(), "heartbeat").stat().st_mtime
    assert beat > time.time() + exporter.NO_TARGET_PAUSE - 60
    assert "nowhere to go" in exporter.doctor_line()
    assert "cannot start" in Path(paths.log_file()).read_text()
    monkeypatch.delenv("CLAUDE_CODE_ENABLE_TELEMETRY")
    assert exporter.doctor_line().startswith("otlp       off")
    assert trigger.on(config.DEFAULTS["otlp"], {}) is False


def test_the_trigger_spawns_when_the_heartbeat_is_stale_and_not_otherwise(tmp_path: Path) -> None:
    _session(tmp_path)
    stop_exporters()
    with Receiver() as r:
        _config(r.url, interval=3600)
        otlp = config.load(None)["otlp"]
        stamp = Path(paths.otlp_dir(), "heartbeat")
        if stamp.exists():
            stamp.unlink()
        spawned = []
        try:
            pid = trigger.due(otlp, False, "inproc", time.time(), dict(os.environ))
            assert pid is not None
            spawned.append(pid)
            assert trigger.due(otlp, False, "inproc", time.time(), dict(os.environ)) is None  # just marked
            assert r.wait(lambda rv: bool(rv.points("session_watcher.calls")), 60)
            assert exporters() == [pid]
            flush = trigger.due(otlp, True, "inproc", time.time(), dict(os.environ))
            assert flush is not None
            spawned.append(flush)
        finally:
            stop_exporters()
            for child in spawned:  # spawned from this process: its children to reap (a hook's are init's)
                os.waitpid(child, 0)


def test_export_called_directly_sends_the_sessions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    projects = tmp_path / "projects" / "-p"
    projects.mkdir(parents=True)
    for src in (SHORT, FIXTURES / "cold-return" / "03a1382e-ecd5-42c4-b3d4-5c659e165904.jsonl"):
        (projects / src.name).write_bytes(src.read_bytes())
    with Receiver() as r:
        ns = argparse.Namespace(otlp=r.url, since=None, projects=[str(tmp_path / "projects")], dry_run=False)
        assert backfill.command(ns) == 0
        assert len(r.points("session_watcher.calls")) == 2
    assert "exported 2 sessions" in capsys.readouterr().out
    ns = argparse.Namespace(otlp="", since="2999-01-01", projects=[str(tmp_path / "projects")], dry_run=True)
    _config("http://127.0.0.1:9")
    assert backfill.command(ns) == 0  # nothing since then: nothing to print or send
    assert capsys.readouterr().out == ""
    ns.since = None
    assert backfill.command(ns) == 0  # a dry run prints the request instead of sending it
    doc = json.loads(capsys.readouterr().out)
    assert {m["name"] for m in doc["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]} >= {"session_watcher.calls"}
    with pytest.raises(NoTarget):
        settings.resolve({"endpoint": "", "protocol": "grpc"}, {})  # type: ignore[typeddict-item]  # grpc, on purpose


def test_identity_waits_out_a_claude_json_being_rewritten(tmp_path: Path) -> None:
    """Claude Code rewrites .claude.json in place while it runs: a reader that meets it empty reads
    it again and gets the user id (lost once per full-suite run before)."""
    import threading

    state = tmp_path / ".claude.json"
    state.write_text("")  # truncated, the new text not written yet
    writer = threading.Timer(0.08, lambda: state.write_text(json.dumps({"userID": "u-123"})))
    writer.start()
    try:
        got = settings.identity({"CLAUDE_CONFIG_DIR": str(tmp_path)}, {})
    finally:
        writer.join()
    assert got == {"user.id": "u-123"}
    state.write_text("{not json")  # never repaired: no id, after a bounded wait
    assert settings.identity({"CLAUDE_CONFIG_DIR": str(tmp_path)}, {}) == {}
    state.unlink()  # no file: no wait, no id
    assert settings.identity({"CLAUDE_CONFIG_DIR": str(tmp_path)}, {}) == {}


def test_identity_waits_for_the_user_id_of_a_first_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On its first start on a machine Claude Code writes .claude.json several times, `userID` in a
    later write (as the real client did in test_e2e_otlp's world): a reader that meets a whole file
    without it reads again, so the first export carries the id Claude Code's own points carry. The
    client's later write happens during the reader's third wait (no thread, no clock)."""
    state = tmp_path / ".claude.json"
    state.write_text(json.dumps({"hasCompletedOnboarding": True, "firstStartTime": "2026-12-01"}))
    waits: list[float] = []

    def client_writes_meanwhile(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 3:
            state.write_text(json.dumps({"firstStartTime": "x", "userID": "u-9"}))

    monkeypatch.setattr(time, "sleep", client_writes_meanwhile)
    assert settings.identity({"CLAUDE_CONFIG_DIR": str(tmp_path)}, {}) == {"user.id": "u-9"}
    assert len(waits) == 3
    waits.clear()
    monkeypatch.setattr(time, "sleep", waits.append)
    state.write_text(json.dumps({"oauthAccount": {"organizationUuid": "org-1"}}))  # never gets one: what it holds
    assert settings.identity({"CLAUDE_CONFIG_DIR": str(tmp_path)}, {}) == {"organization.id": "org-1"}
    assert len(waits) == settings.IDENTITY_TRIES - 1  # a bounded wait


def _counted_replays(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the transcripts `sessions.replay.replay` is asked for from now on, as they come."""
    from session_watcher.sessions import replay

    replays: list[str] = []
    real = replay.replay

    def counted(path: str, *args: object, **kw: object) -> object:
        replays.append(os.path.basename(path))
        return real(path, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(replay, "replay", counted)
    return replays


def _sent(projects: Path, r: Receiver, replays: list[str]) -> list[tuple[object, ...]]:
    """`export --otlp` over `projects`: the data points the receiver got (the lifetimes' time, the
    export's now, left out), sorted (the sessions go oldest first: a touched one moves); `replays`
    gets the transcripts replayed."""
    ns = argparse.Namespace(otlp=r.url, since=None, projects=[str(projects)], dry_run=False)
    replays.clear()
    r.requests.clear()
    assert backfill.command(ns) == 0
    return sorted((p.name, sorted(p.attributes.items()), p.value, p.start,
                   None if p.name == "session_watcher.cache.lifetime" else p.time) for p in r.points())


def test_a_second_export_replays_only_what_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run again with nothing changed, `export --otlp` replays no session, sends the very same
    request and leaves backfill.json and progress.json as they are (its advice events sent before);
    one transcript changed (its mtime), that one is replayed; a handoff's parent changed, it and its
    child are (the restart priced again). The same request each time: every figure is a replay's.
    The cliff `report` inferred changed (every fold's cache lifetime), every session is, and sends
    what an export that keeps nothing sends."""
    import shutil

    from session_watcher.otlp.backfill import cache_file as backfill_cache
    from tests.test_restarts import PARENT, _child

    projects = tmp_path / "projects"
    folder = projects / "-home-USER-proj"
    folder.mkdir(parents=True)
    for src in (SHORT, FIXTURES / "cold-return" / "03a1382e-ecd5-42c4-b3d4-5c659e165904.jsonl"):
        (folder / src.name).write_bytes(src.read_bytes())
    shutil.copy(PARENT, folder / PARENT.name)
    child = _child(folder, PARENT.stem, 40_000, 0.2)
    replays = _counted_replays(monkeypatch)
    with Receiver() as r:
        first = _sent(projects, r, replays)
        assert sorted(replays) == sorted(p.name for p in folder.glob("*.jsonl"))
        assert "session_watcher.restart.realized_saving" in {p[0] for p in first}
        kept, told = os.stat(backfill_cache()), os.stat(exporter.progress_file())
        assert _sent(projects, r, replays) == first
        assert replays == []
        assert os.stat(backfill_cache()).st_ino == kept.st_ino  # nothing new: not written again
        now = os.stat(exporter.progress_file())
        assert (now.st_ino, now.st_mtime_ns) == (told.st_ino, told.st_mtime_ns)
        st = (folder / SHORT.name).stat()
        os.utime(folder / SHORT.name, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
        assert _sent(projects, r, replays) == first
        assert replays == [SHORT.name]
        st = (folder / PARENT.name).stat()
        os.utime(folder / PARENT.name, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
        assert _sent(projects, r, replays) == first
        assert sorted(replays) == sorted([PARENT.name, child.name])  # the parent's change, and the restart's pricing
        Path(paths.cliff_file()).parent.mkdir(parents=True, exist_ok=True)
        Path(paths.cliff_file()).write_text('{"5m": 240}')  # every fold's cache lifetime: all again
        then = _sent(projects, r, replays)
        assert sorted(replays) == sorted(p.name for p in folder.glob("*.jsonl"))
        os.unlink(backfill_cache())
        assert _sent(projects, r, replays) == then  # what an export that keeps nothing sends
        assert len(replays) == len(list(folder.glob("*.jsonl")))


def test_export_shows_its_progress_on_a_terminal_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """stderr a terminal: a bar counting the sessions up to all of them, cleared at the end; not a
    terminal: nothing (the OTLP/JSON of --dry-run on stdout either way)."""
    import io
    import sys

    from tests.ttys import bar_counts, on_a_terminal

    folder = tmp_path / "projects" / "-p"
    folder.mkdir(parents=True)
    for src in sorted(TRANSCRIPTS.glob("*.jsonl")):
        (folder / src.name).write_bytes(src.read_bytes())
    ns = argparse.Namespace(otlp="http://127.0.0.1:9", since=None, projects=[str(folder)], dry_run=True)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    code, seen = on_a_terminal(lambda: backfill.command(ns), monkeypatch)
    assert code == 0
    frames, counts = bar_counts(seen, "replaying sessions")
    n = len(list(folder.glob("*.jsonl")))
    assert counts == sorted(counts)
    assert counts[-1] == n
    assert f"{n}/{n}" in frames[-1]
    assert seen.endswith(b"\r")
    quiet = io.StringIO()
    monkeypatch.setattr(sys, "stderr", quiet)
    assert backfill.command(ns) == 0
    assert quiet.getvalue() == ""


def test_a_projects_config_changed_its_sessions_are_replayed_again(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A session whose folder is there folds with its project's config: that config changed (its
    `.claude/session-watcher.toml`), the next export replays the session; nothing changed, it does not."""

    proj = tmp_path / "proj"
    proj.mkdir()
    folder = tmp_path / "projects" / "-p"
    folder.mkdir(parents=True)
    cwd = b'"cwd":' + json.dumps(str(proj)).encode()
    text = SHORT.read_bytes().replace(b'"cwd":"/home/marco/projects/spotter"', cwd)
    (folder / "inproj.jsonl").write_bytes(text)
    replays = _counted_replays(monkeypatch)
    with Receiver() as r:
        _sent(folder, r, replays)
        assert replays == ["inproj.jsonl"]
        _sent(folder, r, replays)
        assert replays == []
        (proj / ".claude").mkdir()
        (proj / ".claude" / "session-watcher.toml").write_text("gate_min_calls = 3\n")
        _sent(folder, r, replays)
        assert replays == ["inproj.jsonl"]
        _sent(folder, r, replays)
        assert replays == []


def test_a_transcript_rewritten_to_its_old_size_and_mtime_is_replayed(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A transcript whose bytes change but whose size and mtime are set back as they were (a copy
    with `cp -p`, a restore, `touch -d`): its inode's change time moved, so the next export replays
    it and sends the new figures."""
    import re


    folder = tmp_path / "projects" / "-p"
    folder.mkdir(parents=True)
    t = folder / SHORT.name
    t.write_bytes(SHORT.read_bytes())
    replays = _counted_replays(monkeypatch)
    with Receiver() as r:
        first = _sent(folder, r, replays)
        st = t.stat()
        text = t.read_text()
        *_, last = re.finditer(r'"cache_read_input_tokens":([1-9])', text)
        digit = "2" if last.group(1) != "2" else "3"
        t.write_text(text[:last.start(1)] + digit + text[last.end(1):])
        os.utime(t, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert (t.stat().st_size, t.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
        then = _sent(folder, r, replays)
        assert replays == [SHORT.name]
        assert then != first


@pytest.mark.parametrize("bad", [{"folder": [1]}, {"folder": {}}, {"config": 7}, {"doc": "x"}, {"doc": {}},
                                 {"last": "x"}, {"last": None}, {"alerts": 5}, {"alerts": ["a"]},
                                 {"idle": "ab"}, {"idle": [{"child": 1}]}, {"idle": [{"child": "c", "firstCall": "x"}]},
                                 {"handoff": {"parent": "p", "sig": None, "doc": "x"}}, {"raws": "ab"},
                                 {"raws": [1]}, {"shell": None}, {"world": None}, {"cwd": 5},
                                 {"handoff": {"parent": "p", "sig": None, "doc": None, "asked": {"cwd": 1}}},
                                 {"cwd": DROPPED}, {"folder": DROPPED}, None, [], "entry"])
def test_a_backfill_entry_of_wrong_types_is_replayed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      bad: object) -> None:
    """backfill.json edited by hand, or by another build, with its key and a transcript's signature
    as they are but an entry's fields of other types: that transcript is replayed, and the export
    sends what it sent, never stops on them."""
    from session_watcher.otlp.backfill import cache_file

    folder = tmp_path / "projects" / "-p"
    folder.mkdir(parents=True)
    (folder / SHORT.name).write_bytes(SHORT.read_bytes())
    replays = _counted_replays(monkeypatch)
    with Receiver() as r:
        first = _sent(folder, r, replays)
        doc = json.loads(Path(cache_file()).read_text())
        [(path, entry)] = doc["sessions"].items()
        doc["sessions"][path] = ({k: v for k, v in {**entry, **bad}.items() if v != DROPPED} if isinstance(bad, dict)
                                 else bad)
        Path(cache_file()).write_text(json.dumps(doc))
        assert _sent(folder, r, replays) == first
        assert replays == [SHORT.name]
    from session_watcher.otlp.backfill import sound

    assert sound({**entry, "handoff": {"parent": "p", "sig": None, "doc": None}})  # no restart to price: kept


def test_two_exports_at_once_keep_each_others_entries(tmp_path: Path) -> None:
    """Two exports run at once over two folders (each read the file before the other wrote it): the
    file keeps what both replayed, so neither's sessions are replayed again; one holding the file's
    lock is waited for, never written over mid-write."""
    from session_watcher.otlp.backfill import Cache, cache_file, replayed
    from session_watcher.state.lock import SessionLock

    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for t in (a, b):
        t.write_bytes(SHORT.read_bytes())
    cliff = config.load_cliff()
    one, two = Cache(cliff), Cache(cliff)
    replayed(one, str(a), cliff)
    replayed(two, str(b), cliff)
    one.save()
    two.save()
    assert set(json.loads(Path(cache_file()).read_text())["sessions"]) == {str(a), str(b)}
    later = Cache(cliff)
    assert replayed(later, str(a), cliff)[1] is None  # kept: not replayed
    assert replayed(later, str(b), cliff)[1] is None
    before = Path(cache_file()).read_bytes()
    with SessionLock(cache_file() + ".lock", 1.0):
        os.utime(a, ns=(0, 0))
        third = Cache(cliff)
        replayed(third, str(a), cliff)
        third.save(wait=0.2)  # the other export writes: this one leaves the file to it
        assert Path(cache_file()).read_bytes() == before


def test_what_a_replay_found_outside_its_transcript_changed_it_is_replayed(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A kept session holds only while its replay would get the same answers outside the transcript:
    its project's `.gitignore` changed (the path map leaves other files out), the link its folder is
    re-pointed (another project), a file's link re-pointed out of the project: the next export replays
    it and sends what an export that keeps nothing sends, each time other figures than before;
    nothing changed, it is not replayed."""
    import subprocess

    from session_watcher.otlp.backfill import cache_file

    real, other, elsewhere = tmp_path / "real", tmp_path / "other", tmp_path / "elsewhere"
    for d in (real, other, elsewhere):
        d.mkdir()
        subprocess.run(["git", "init", "-q", str(d)], check=True)
        for name in ("mix.exs", "plan.md"):
            (d / name).write_text("x\n")
    proj = tmp_path / "proj"
    proj.symlink_to(real)
    folder = tmp_path / "projects" / "-p"
    folder.mkdir(parents=True)
    text = SHORT.read_bytes().replace(b"/home/marco/projects/spotter", str(proj).encode())
    (folder / "linked.jsonl").write_bytes(text)
    replays = _counted_replays(monkeypatch)

    def fresh() -> list[tuple[object, ...]]:
        """Sent now, and what an export that keeps nothing sends (the same)."""
        now = _sent(folder, r, replays)
        assert replays == ["linked.jsonl"]
        os.unlink(cache_file())
        assert _sent(folder, r, replays) == now
        return now

    with Receiver() as r:
        first = _sent(folder, r, replays)
        assert _sent(folder, r, replays) == first
        assert replays == []
        (real / ".gitignore").write_text("mix.exs\nplan.md\n")
        ignored = fresh()
        assert ignored != first
        proj.unlink()
        proj.symlink_to(other)  # no .gitignore there
        repointed = fresh()
        assert repointed != ignored
        assert _sent(folder, r, replays) == repointed
        assert replays == []
        (other / "mix.exs").unlink()
        (other / "mix.exs").symlink_to(elsewhere / "mix.exs")  # out of the project now
        assert fresh() != repointed
        assert _sent(folder, r, replays)
        assert replays == []


def test_a_dry_run_reads_what_was_kept_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """`export --dry-run` before any export creates no file or folder of ours; after one, it replays
    only what changed since (what was kept is read) and leaves backfill.json as it was, so the next
    export that sends replays the changed session itself."""
    from session_watcher.otlp.backfill import cache_file

    def tree() -> dict[str, tuple[int, int]]:
        """Every file and folder under the package's own folders, with its size and mtime."""
        got = {}
        for top in {os.path.dirname(d) for d in (paths.state_dir(), paths.data_dir(), paths.log_dir(),
                                                  paths.cache_dir(), paths.config_dir())}:
            for folder, dirs, files in os.walk(top):
                for name in (*dirs, *files):
                    st = os.lstat(os.path.join(folder, name))
                    got[os.path.join(folder, name)] = (st.st_size, st.st_mtime_ns)
        return got

    folder = tmp_path / "projects" / "-p"
    folder.mkdir(parents=True)
    for name in ("a.jsonl", "b.jsonl"):
        (folder / name).write_bytes(SHORT.read_bytes())
    dry = argparse.Namespace(otlp="http://127.0.0.1:9", since=None, projects=[str(folder)], dry_run=True)
    replays = _counted_replays(monkeypatch)
    before = tree()
    assert backfill.command(dry) == 0
    assert sorted(replays) == ["a.jsonl", "b.jsonl"]
    assert tree() == before
    printed = capsys.readouterr().out
    with Receiver() as r:
        _sent(folder, r, replays)
    kept = Path(cache_file()).read_bytes()
    before = tree()
    st = (folder / "a.jsonl").stat()
    os.utime(folder / "a.jsonl", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    replays.clear()
    capsys.readouterr()
    assert backfill.command(dry) == 0
    assert replays == ["a.jsonl"]  # b's kept replay read
    assert tree() == before
    assert Path(cache_file()).read_bytes() == kept
    assert capsys.readouterr().out.count('"session_watcher.') == printed.count('"session_watcher.')
    with Receiver() as r:
        _sent(folder, r, replays)
    assert replays == ["a.jsonl"]


def test_the_users_prices_changed_a_session_whose_folder_is_gone_is_replayed(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A session whose folder is gone folds with the user's config alone, priced with its
    `[prices]`: those changed, the next export replays it and sends what an export that keeps
    nothing sends (other dollars than before); nothing changed, it is not replayed."""
    from session_watcher.otlp.backfill import cache_file

    folder = tmp_path / "projects" / "-p"
    folder.mkdir(parents=True)
    gone = str(tmp_path / "gone")  # its cwd: no folder there
    (folder / "s.jsonl").write_bytes(SHORT.read_bytes().replace(b"/home/marco/projects/spotter", gone.encode()))
    user = Path(paths.user_config_file())
    user.parent.mkdir(parents=True, exist_ok=True)

    def priced(usd: float) -> None:
        user.write_text(f'[prices."claude-opus-4-6"]\ninput = {usd}\ncache_read = {usd / 10}\n'
                        f"cache_write = {usd * 1.25}\ncache_write_1h = {usd * 2}\n")

    priced(5.0)
    replays = _counted_replays(monkeypatch)
    with Receiver() as r:
        first = _sent(folder, r, replays)
        assert _sent(folder, r, replays) == first
        assert replays == []
        priced(500.0)
        dearer = _sent(folder, r, replays)
        assert replays == ["s.jsonl"]
        assert dearer != first
        os.unlink(cache_file())
        assert _sent(folder, r, replays) == dearer  # what an export that keeps nothing sends
        assert _sent(folder, r, replays) == dearer
        assert replays == []


def test_the_users_config_changed_a_session_whose_folder_is_gone_is_replayed(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A session whose folder is gone folds with the user's config, as its hooks did: a key of it
    changed (the gate's), the next export replays the session and sends what an export that keeps
    nothing sends; nothing changed, it is not replayed."""
    from session_watcher.otlp.backfill import cache_file

    folder = tmp_path / "projects" / "-p"
    folder.mkdir(parents=True)
    gone = str(tmp_path / "gone")  # its cwd: no folder there
    (folder / "s.jsonl").write_bytes(SHORT.read_bytes().replace(b"/home/marco/projects/spotter", gone.encode()))
    user = Path(paths.user_config_file())
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("gate_min_calls = 10\n")
    replays = _counted_replays(monkeypatch)
    with Receiver() as r:
        first = _sent(folder, r, replays)
        assert _sent(folder, r, replays) == first
        assert replays == []
        user.write_text("gate_min_calls = 3\nbp_red = 0.05\n")
        then = _sent(folder, r, replays)
        assert replays == ["s.jsonl"]
        os.unlink(cache_file())
        assert _sent(folder, r, replays) == then  # what an export that keeps nothing sends
        assert _sent(folder, r, replays) == then
        assert replays == []


def test_a_kept_sessions_project_config_broken_since_is_skipped_the_others_sent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A kept session whose project's config cannot be read now is skipped with a line on stderr and
    the other sessions sent, as an export that keeps nothing does (it ended the whole export)."""
    proj = tmp_path / "proj"
    proj.mkdir()
    folder = tmp_path / "projects" / "-p"
    folder.mkdir(parents=True)
    (folder / "in.jsonl").write_bytes(SHORT.read_bytes().replace(b"/home/marco/projects/spotter", str(proj).encode()))
    (folder / "out.jsonl").write_bytes(SHORT.read_bytes().replace(b"/home/marco/projects/spotter",
                                                                  str(tmp_path / "gone").encode()))
    replays = _counted_replays(monkeypatch)
    with Receiver() as r:
        _sent(folder, r, replays)
        assert sorted(replays) == ["in.jsonl", "out.jsonl"]
        (proj / ".claude").mkdir()
        (proj / ".claude" / "session-watcher.toml").write_text("bogus_key = 3\n")
        capsys.readouterr()
        got = _sent(folder, r, replays)
        assert replays == []  # its config refused before its replay; the other's kept one holds
        assert f"skipped {folder / 'in.jsonl'}" in " ".join(capsys.readouterr().err.split())
        assert "('session.id', 'out')" in str(got)
        assert "('session.id', 'in')" not in str(got)


def test_a_session_naming_no_folder_is_kept_whatever_folder_export_runs_in(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A transcript that names no folder (no `cwd` on any line) and relative file paths: its replay
    resolves them from nowhere, not from where `export` runs, so an export run from another folder
    finds its kept replay holding (nothing replayed) and sends the very same figures."""
    folder = tmp_path / "projects" / "-p"
    folder.mkdir(parents=True)
    text = SHORT.read_bytes().replace(b'"cwd":"/home/marco/projects/spotter",', b"")
    text = text.replace(b"/home/marco/projects/spotter/", b"")
    assert b'"cwd"' not in text
    assert b'"file_path":"mix.exs"' in text
    (folder / "nocwd.jsonl").write_bytes(text)
    here, there = tmp_path / "here", tmp_path / "there"
    for d in (here, there):
        d.mkdir()
        (d / "mix.exs").write_text("x\n")  # a file of that name where each export runs
    (there / "plan.md").symlink_to(there / "mix.exs")
    replays = _counted_replays(monkeypatch)
    with Receiver() as r:
        monkeypatch.chdir(here)
        first = _sent(folder, r, replays)
        assert replays == ["nocwd.jsonl"]
        monkeypatch.chdir(there)
        assert _sent(folder, r, replays) == first
        assert replays == []


def test_git_that_does_not_answer_in_time_is_no_answer_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Real git kept from answering which files it ignores (its `.gitignore` a FIFO nobody writes:
    `git check-ignore` waits on it until its 2 s are up): the export replays the session as if git
    ignores none, says so on stderr, and keeps nothing of it, so the next run replays it again (it
    read that silence as 'none ignored' and kept it); git answering again, the replay's figures are
    git's answer's (what an export that keeps nothing sends), and then kept."""
    import subprocess

    from session_watcher.otlp.backfill import cache_file

    proj = tmp_path / "proj"
    proj.mkdir()
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    for name in ("mix.exs", "plan.md"):
        (proj / name).write_text("x\n")
    os.mkfifo(proj / ".gitignore")
    folder = tmp_path / "projects" / "-p"
    folder.mkdir(parents=True)
    (folder / "s.jsonl").write_bytes(SHORT.read_bytes().replace(b"/home/marco/projects/spotter", str(proj).encode()))
    replays = _counted_replays(monkeypatch)
    with Receiver() as r:
        capsys.readouterr()
        silent = _sent(folder, r, replays)
        assert replays == ["s.jsonl"]
        said = " ".join(capsys.readouterr().err.split())
        assert f"git did not say in time which files it ignores in {proj}: 1 session there replayed" in said, said
        assert str(folder / "s.jsonl") not in (Path(cache_file()).read_text() if Path(cache_file()).exists() else "")
        assert _sent(folder, r, replays) == silent
        assert replays == ["s.jsonl"]  # not kept: asked again
        assert "did not say in time" in capsys.readouterr().err
        (proj / ".gitignore").unlink()
        (proj / ".gitignore").write_text("mix.exs\nplan.md\n")
        answered = _sent(folder, r, replays)
        assert replays == ["s.jsonl"]
        assert answered != silent
        assert "did not say in time" not in capsys.readouterr().err
        assert _sent(folder, r, replays) == answered
        assert replays == []  # kept now
        os.unlink(cache_file())
        assert _sent(folder, r, replays) == answered  # what an export that keeps nothing sends


_OPENED: list[str] = []  # the paths this process opened while `_WATCHING` (an audit hook: the opens themselves)
_WATCHING: list[bool] = []
_HOOKED: list[bool] = []  # the audit hook added (once: it stays for the process's life)


def _opens(event: str, args: tuple[object, ...]) -> None:
    if _WATCHING and event == "open" and args and isinstance(args[0], str):
        _OPENED.append(args[0])


def _passes(transcript: Path, sid: str, n: int, r: Receiver) -> tuple[int, list[object]]:
    """`n` passes of the live exporter over session `sid` with `[otlp] project = true`: (the opens of
    its transcript, the project each pass sent)."""
    if not _HOOKED:
        import sys

        sys.addaudithook(_opens)
        _HOOKED.append(True)
    _config(r.url, protocol="http/json", project=True)
    otlp, cfg, target = exporter.ready(os.environ) or pytest.fail("export is on")
    _OPENED.clear()
    _WATCHING[:] = [True]
    try:
        for _ in range(n):
            exporter.one_pass(otlp, cfg, target, time.time(), sid)
    finally:
        _WATCHING.clear()
    sent = [p.attributes.get("project") for p in r.points("session_watcher.calls")
            if p.attributes["session.id"] == sid]
    return _OPENED.count(str(transcript)), sent


def test_a_transcript_naming_no_folder_is_not_read_again_each_pass(tmp_path: Path) -> None:
    """A live session whose transcript names no folder in the lines its first cwd is looked for in
    (300 summary records, 90 kB, then lines without a `cwd`): with `project = true` the exporter read
    those lines again on every pass to find none again. It reads them once; the transcript grown
    since (the session goes on) is not read again: its head is the same. The project sent is the
    folder the hooks were told, every pass."""
    summary = b'{"type":"summary","summary":"' + b"s" * 280 + b'","leafUuid":"u"}\n'
    text = SHORT.read_bytes().replace(b'"cwd":"/home/marco/projects/spotter",', b"")
    assert b'"cwd"' not in text
    t = tmp_path / "far.jsonl"
    t.write_bytes(summary * 300 + text)
    assert hook("Stop", payload("far", t)).returncode == 0
    with Receiver() as r:
        opened, sent = _passes(t, "far", 3, r)
        assert opened == 1
        assert sent == [tmp_path.name] * 3
        with t.open("ab") as fh:
            fh.write(summary)
        opened, sent = _passes(t, "far", 2, r)
    assert opened == 0
    assert sent == [tmp_path.name] * 5


def test_a_short_transcript_naming_no_folder_yet_is_read_again_once_it_grew(tmp_path: Path) -> None:
    """A transcript shorter than the lines its first cwd is looked for in, naming none yet: read once
    while it stays as it is; once it grew (a record naming a folder written since) it is read again,
    and that folder is the project sent from then on."""
    text = SHORT.read_bytes().replace(b'"cwd":"/home/marco/projects/spotter",', b"")
    t = tmp_path / "short.jsonl"
    t.write_bytes(text)
    assert hook("Stop", payload("short", t)).returncode == 0
    with Receiver() as r:
        opened, sent = _passes(t, "short", 2, r)
        assert (opened, sent) == (1, [tmp_path.name] * 2)
        with t.open("ab") as fh:
            fh.write(b'{"type":"user","cwd":"/work/elsewhere","message":{"role":"user","content":"go"}}\n')
        opened, sent = _passes(t, "short", 2, r)
    assert opened == 1
    assert sent == [tmp_path.name] * 2 + ["elsewhere"] * 2


def test_a_figure_no_number_holds_is_left_out_alike_in_both_encodings(tmp_path: Path) -> None:
    """An advice whose figure is NaN or an infinity (a state's alert as a damage or a hand left it):
    http/json sent the attribute null, and http/protobuf's logs through `ParseDict` refused NaN, so
    that pass raised and sent no record. Both leave the attribute out; the records' other attributes
    are the same."""
    got = {}
    at = time.time() - 60
    for protocol in ("http/json", "http/protobuf"):
        sid = "nan-" + protocol.split("/")[1]
        _session(tmp_path, sid)
        state_path = Path(paths.sessions_dir(), f"{sid}.json")
        state = json.loads(state_path.read_text())
        state["alerts"] = [{"kind": "gate", "ts": at, "call": 3, "lamp": "amber", "x": float("nan"),
                            "xSweet": 1.5, "L": 90_000, "savingUsd": float("inf"), "model": "claude-opus-4-5"}]
        state_path.write_text(json.dumps(state))  # NaN and Infinity as a damaged file may hold them
        with Receiver() as r:
            _config(r.url, protocol=protocol)
            assert exporter.run(sid) == 0
            records = r.log_records()
        assert len(records) == 1, records
        attributes = records[0]["attributes"]
        assert attributes["session.id"] == sid
        got[protocol] = {k: v for k, v in attributes.items() if k != "session.id"}
    assert got["http/json"] == got["http/protobuf"]
    assert not {"x", "saving_usd"} & set(got["http/json"])
    assert (got["http/json"]["x_sweet"], got["http/json"]["kind"], got["http/json"]["lamp"]) == (1.5, "gate", "amber")
