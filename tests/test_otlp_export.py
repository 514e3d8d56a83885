"""The OpenTelemetry export with real processes: the real hook process folds a real session and
starts the detached exporter, which sends to a loopback OTLP/HTTP receiver decoding with the
official opentelemetry-proto messages; `status --json` says the same figures; a collector that is
down costs the hooks nothing and piles nothing up; `export --otlp` backfills each session once."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.base import paths
from tests.oracle import FIXTURES, SW, TRANSCRIPTS, hook, one_message, payload, run, sw
from tests.otlp_receiver import Receiver, closed_port, exporters
from tests.otlp_receiver import stop_exporters as stop

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.otlp_receiver import Point

COLD = FIXTURES / "cold-return" / "03a1382e-ecd5-42c4-b3d4-5c659e165904.jsonl"
SID = COLD.stem
WAIT = 60.0  # bounds a hang only; how long things took is measured in bench/, not asserted


@pytest.fixture
def stop_exporters() -> Iterator[None]:
    """Whatever exporters a test started leave with it (stopped by their pid: they are its own)."""
    yield
    stop(os.environ["SESSION_WATCHER_HOME"])


def write_config(url: str, protocol: str = "http/protobuf", interval: float = 1, **more: Any) -> None:
    lines = ["[otlp]", "enabled = true", f'endpoint = "{url}"', f'protocol = "{protocol}"', f"interval = {interval}",
             "timeout = 2", *(f"{k} = {json.dumps(v)}" for k, v in more.items())]
    cfg = Path(paths.user_config_file())
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text("\n".join(lines) + "\n")


def copy_session(tmp_path: Path) -> Path:
    t = tmp_path / "proj" / f"{SID}.jsonl"
    t.parent.mkdir(parents=True)
    t.write_bytes(COLD.read_bytes())
    return t


def fold_to_the_end(transcript: Path, event: str = "Stop") -> float:
    """Hook runs until the state's cursor stops moving (at the last complete line); when the last
    one finished."""
    before = None
    for _ in range(40):
        proc = hook(event, payload(SID, transcript, event))
        assert proc.returncode == 0
        assert proc.stdout in (b"", b"\n") or proc.stdout.startswith(b"{")
        cursor = json.loads(Path(paths.sessions_dir(), f"{SID}.json").read_text())["cursor"]
        if cursor is not None and cursor == before:
            return time.time()
        before = cursor
    raise AssertionError("the hooks never caught up")


def latest(points: list[Point]) -> dict[tuple[str, tuple[tuple[str, Any], ...]], Point]:
    out: dict[tuple[str, tuple[tuple[str, Any], ...]], Point] = {}
    for p in points:
        key = (p.name, tuple(sorted((k, v) for k, v in p.attributes.items() if k in ("state", "kind", "type", "ttl"))))
        if key not in out or p.time >= out[key].time:
            out[key] = p
    return out


def status(session_id: str) -> dict[str, Any]:
    proc = sw("status", "--session", session_id, "--json")
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


@pytest.mark.parametrize("protocol", ["http/protobuf", "http/json"])
def test_a_live_sessions_figures_reach_the_collector_and_equal_status(tmp_path: Path, protocol: str,
                                                                      stop_exporters: None) -> None:
    transcript = copy_session(tmp_path)
    with Receiver() as r:
        write_config(r.url, protocol)
        done = fold_to_the_end(transcript)

        def current(rv: Receiver) -> bool:
            calls = [p for p in rv.points("session_watcher.calls") if p.at >= done]
            return bool(calls) and calls[-1].value == 184

        assert r.wait(current, WAIT), (r.rejected, len(r.requests))
        got = latest(r.points("session_watcher."))
        ctype = {q.content_type for q in r.metric_requests()}
    assert ctype == {"application/json" if protocol == "http/json" else "application/x-protobuf"}
    doc = status(SID)
    assert got[("session_watcher.calls", ())].value == doc["calls"] == 184
    assert got[("session_watcher.x", ())].value == doc["x"]
    assert got[("session_watcher.x_sweet", ())].value == doc["xSweet"]
    assert got[("session_watcher.context.tokens", ())].value == doc["L"]
    assert got[("session_watcher.baseline.tokens", ())].value == doc["bDefault"]
    assert got[("session_watcher.restart.saving", ())].value == doc["savingUsd"]
    assert got[("session_watcher.warmth", ())].value == doc["warmth"]
    assert got[("session_watcher.lamp", (("state", doc["lamp"]),))].value == 1
    assert got[("session_watcher.advice", (("kind", "reminder"),))].value == doc["advice"]["reminder"]
    assert got[("session_watcher.cold_returns", ())].value == doc["coldReturns"]["n"]
    assert got[("session_watcher.cold_return.cost", ())].value == doc["coldReturns"]["usd"]
    x = got[("session_watcher.x", ())]
    assert x.attributes["session.id"] == SID
    assert x.resource["service.name"] == "session-watcher"
    calls = got[("session_watcher.calls", ())]
    assert (calls.kind, calls.monotonic, calls.temporality) == ("sum", True, 2)
    assert calls.start == round(doc["firstTs"] * 1e6) * 1000


def test_cumulative_values_never_count_twice_across_passes(tmp_path: Path, stop_exporters: None) -> None:
    """Pass after pass the counters say the same total from the same start: a collector that keeps
    the last point, or sums nothing, sees each advice and cold return once."""
    transcript = copy_session(tmp_path)
    with Receiver() as r:
        write_config(r.url)
        done = fold_to_the_end(transcript)
        assert r.wait(lambda rv: len({p.at for p in rv.points("session_watcher.advice") if p.at >= done}) >= 2, WAIT)
        points = [p for p in r.points("session_watcher.advice") if p.at >= done]
        events = r.log_records()
    by_kind: dict[str, set[tuple[int, float]]] = {}
    for p in points:
        by_kind.setdefault(p.attributes["kind"], set()).add((p.start, p.value))
    doc = status(SID)
    assert by_kind == {"gate": {(calls_start := points[0].start, doc["advice"]["gate"])},
                       "reminder": {(calls_start, doc["advice"]["reminder"])},
                       "cold_return": {(calls_start, doc["advice"]["coldReturn"])}}
    keys = [(e["attributes"]["kind"], e["attributes"]["call"]) for e in events]
    assert len(keys) == len(set(keys)) == sum(doc["advice"].values())  # each advice event sent once


def test_a_collector_that_is_down_costs_the_hooks_nothing_and_piles_nothing_up(tmp_path: Path,
                                                                                stop_exporters: None) -> None:
    began = time.time()
    transcript = copy_session(tmp_path)
    port = closed_port()
    write_config(f"http://127.0.0.1:{port}")
    fold_to_the_end(transcript)
    heartbeat = Path(paths.otlp_dir(), "heartbeat")
    for _ in range(6):  # hooks finding the heartbeat stale over and over: still one exporter
        os.utime(heartbeat, (0, 0))
        proc = hook("PostToolUse", payload(SID, transcript, "PostToolUse"))
        assert proc.returncode == 0
        assert proc.stdout == b""
        assert len(exporters()) <= 7  # each start sees the loop's lock and leaves at once
    deadline = time.monotonic() + WAIT
    while len(exporters()) > 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(exporters()) == 1
    progress = json.loads(Path(paths.otlp_dir(), "progress.json").read_text()) if Path(
        paths.otlp_dir(), "progress.json").exists() else {}
    deadline = time.monotonic() + WAIT
    while not progress.get("failures") and time.monotonic() < deadline:
        time.sleep(0.1)
        progress = json.loads(Path(paths.otlp_dir(), "progress.json").read_text())
    assert progress["failures"] >= 1
    assert progress["downUntil"] >= began + 1  # a failure of this test's: backed off an interval at least
    assert progress["sessions"] == {}  # nothing sent, nothing queued: the figures wait in the state
    files = sorted(p.name for p in Path(paths.otlp_dir()).iterdir())
    assert set(files) <= {"heartbeat", "exporter.lock", "progress.json", "progress.json.lock"}
    log = Path(paths.log_file()).read_text()
    assert log.count("OpenTelemetry export to") == 1  # said once, not per attempt
    for _ in range(8):  # the back-off doubles each failure: on a busy machine a doctor run may land between two
        doctor = sw("doctor").stdout.decode()
        if "backing off after a failure" in doctor:
            break
        time.sleep(0.5)
    assert f"otlp       on: http://127.0.0.1:{port}/v1/metrics (http/protobuf, from config)" in doctor
    assert "backing off after a failure" in doctor
    # the collector comes back: the session that changed meanwhile goes out
    with Receiver(port=port) as r:
        assert r.wait(lambda rv: any(p.value == 184 for p in rv.points("session_watcher.calls")), WAIT)


def test_session_end_flushes_its_session_at_once(tmp_path: Path, stop_exporters: None) -> None:
    """A loop that sleeps a long interval does not hold back a session's last figures."""
    transcript = copy_session(tmp_path)
    with Receiver() as r:
        write_config(r.url, interval=3600)
        heartbeat = Path(paths.otlp_dir(), "heartbeat")
        heartbeat.parent.mkdir(parents=True, exist_ok=True)
        heartbeat.touch()  # an exporter looks alive: only SessionEnd's own flush can send
        fold_to_the_end(transcript, "SessionEnd")
        assert r.wait(lambda rv: any(p.value == 184 for p in rv.points("session_watcher.calls")), WAIT)


def test_export_backfills_each_session_once_and_again_changes_nothing(tmp_path: Path) -> None:
    with Receiver() as r:
        runs = []
        for _ in range(2):
            proc = sw("export", "--otlp", r.url, "--projects", str(TRANSCRIPTS))
            assert proc.returncode == 0, proc.stderr
            runs.append(latest(r.points("session_watcher.")))
            r.requests.clear()
        events = [lr for lr in r.log_records()]
    first, second = runs
    sessions = {p.attributes.get("session.id") for p in first.values()} - {None}
    assert sessions <= {p.stem for p in TRANSCRIPTS.glob("*.jsonl")}
    assert first.keys() == second.keys()
    for key, p in first.items():
        if p.kind == "sum":
            assert (p.start, p.value, p.time) == (second[key].start, second[key].value, second[key].time)
    assert events == []  # the second run's advice events: none, the first sent them
    assert b"exported 6 sessions" in proc.stdout


def test_export_sends_every_session_of_the_calibration_set(tmp_path: Path) -> None:
    """Each session once, its counters as replay counts them."""
    from session_watcher.sessions.replay import replay

    with Receiver() as r:
        proc = sw("export", "--otlp", r.url, "--projects", str(TRANSCRIPTS))
        assert proc.returncode == 0, proc.stderr
        calls = r.points("session_watcher.calls")
        advice = r.log_records()
    want = {p.stem: replay(str(p), with_trace=False)[0] for p in TRANSCRIPTS.glob("*.jsonl")}
    assert sorted(p.attributes["session.id"] for p in calls) == sorted(want)  # one point each
    assert {p.attributes["session.id"]: p.value for p in calls} == {s: d["calls"] for s, d in want.items()}
    assert len(advice) == sum(sum(d["advice"].values()) for d in want.values())


def test_export_prices_the_restarts_taken_as_backtest_does(tmp_path: Path) -> None:
    """A handoff's fresh session: the restart counted on it, and what it saved, backtest's figure."""
    import shutil

    from tests.test_restarts import PARENT, _child

    folder = tmp_path / "projects" / "-home-USER-proj"
    folder.mkdir(parents=True)
    shutil.copy(PARENT, folder / PARENT.name)
    child = _child(folder, PARENT.stem, 40_000, 0.2)
    want = json.loads(sw("backtest", "--json", str(PARENT), str(child)).stdout)["restartsTaken"]
    with Receiver() as r:
        proc = sw("export", "--otlp", r.url, "--projects", str(tmp_path / "projects"))
        assert proc.returncode == 0, proc.stderr
        realized = r.points("session_watcher.restart.realized_saving")
        restarts = r.points("session_watcher.restarts")
        every = r.points()
    # what it says it sent is what the collector got, the restarts' own request too (it said 2 fewer)
    assert f"({len(every)} data points, " in proc.stdout.decode()
    [point] = realized
    assert point.value == want[0]["savingUsd"] > 0
    assert point.attributes["session.id"] == "child-1"
    assert point.attributes["session.parent.id"] == PARENT.stem
    assert point.attributes["kind"] == "handoff"
    assert [(p.attributes["session.id"], p.value) for p in restarts] == [("child-1", 1)]


def test_export_with_no_collector_says_what_to_do(tmp_path: Path) -> None:
    """Nothing listening on the URL: one line that says how to get a collector or where to point."""
    proc = sw("export", "--otlp", f"http://127.0.0.1:{closed_port()}", "--projects", str(TRANSCRIPTS))
    assert proc.returncode == 1
    err = proc.stderr.decode()
    err = one_message(err)
    assert "0 sessions were sent before it; no collector answers there" in err
    assert "did not take the figures (Connection refused); " in err  # the system's words, no class or errno
    assert "docs/otel-collector.yaml" in err
    assert "--dry-run" in err
    # the URL was the command line's: it is checked, not named again; and said without a source
    assert "or check the URL; " in err
    assert "name its URL" not in err
    assert "/v1/metrics did not take" in err


def test_export_to_no_collector_says_which_setting_named_it(tmp_path: Path) -> None:
    """No URL on the command line: the line says where the one it tried came from, Codex's `[otel]`
    exporter (a user who set it for Codex alone would not know why export went there), or the
    default where nothing names one; and how to name another."""
    codex = tmp_path / "codex-home"
    codex.mkdir()
    port = closed_port()
    (codex / "config.toml").write_text(
        f'[otel]\nexporter = {{ otlp-http = {{ endpoint = "http://127.0.0.1:{port}/v1/logs" }} }}\n')
    env = {**os.environ, "CODEX_HOME": str(codex), "COLUMNS": "400"}
    proc = sw("export", "--otlp", "--projects", str(TRANSCRIPTS), env=env)
    assert proc.returncode == 1
    err = one_message(proc.stderr.decode())
    assert f"the collector at http://127.0.0.1:{port}/v1/metrics (from [otel] in $CODEX_HOME/config.toml) " \
           "did not take the figures" in err
    assert "export --otlp URL`)" in err
    (codex / "config.toml").write_text("")
    proc = sw("export", "--otlp", "--projects", str(TRANSCRIPTS), env=env)
    if proc.returncode == 1:  # (a collector on the default port, localhost:4318, would take them)
        assert "(the default: no setting names a collector) did not take" in one_message(proc.stderr.decode())
    else:
        assert proc.returncode == 0, proc.stderr


def test_bare_export_to_the_default_names_the_setting_as_well(tmp_path: Path) -> None:
    """`export` alone sends, as `export --otlp` does; where nothing names a collector it tries the
    default (localhost:4318), and with none there the line named only `export --otlp URL`, the flag of
    one run: it names the setting for every run too (`config set otlp.endpoint URL`, the live
    exporter's as well), which a setting that named the URL it tried does not need."""
    codex = tmp_path / "codex-home"
    codex.mkdir()
    env = {**os.environ, "CODEX_HOME": str(codex), "COLUMNS": "400"}
    proc = sw("export", "--projects", str(TRANSCRIPTS), env=env)
    if proc.returncode == 0:  # (a collector on the default port, localhost:4318, took them)
        return
    err = one_message(proc.stderr.decode())
    assert proc.returncode == 1, err
    assert "(the default: no setting names a collector) did not take" in err
    assert "or name its URL (`session-watcher export --otlp URL`, or for every run `session-watcher config set " \
           "otlp.endpoint URL`); `--dry-run`" in err
    (codex / "config.toml").write_text(
        f'[otel]\nexporter = {{ otlp-http = {{ endpoint = "http://127.0.0.1:{closed_port()}/v1/logs" }} }}\n')
    named = one_message(sw("export", "--projects", str(TRANSCRIPTS), env=env).stderr.decode())
    assert "(from [otel] in $CODEX_HOME/config.toml)" in named
    assert "export --otlp URL`); " in named
    assert "otlp.endpoint" not in named


def test_export_with_no_session_says_so(tmp_path: Path) -> None:
    """Nothing to send: one line saying where it looked (it said "exported 0 sessions ... to URL", and
    `--dry-run` printed nothing at all); with `--dry-run` on standard error, its standard output being
    the OTLP/JSON a pipe reads."""
    url = f"http://127.0.0.1:{closed_port()}"
    said = f"no session to export; looked in {tmp_path}\n"
    wide = {**os.environ, "COLUMNS": "400"}  # on one line (test_export_says_what_it_did_within_the_terminals_width)
    proc = sw("export", "--otlp", url, "--projects", str(tmp_path), env=wide)
    assert (proc.returncode, proc.stdout.decode(), proc.stderr.decode()) == (0, said, "")
    proc = sw("export", "--otlp", url, "--projects", str(tmp_path), "--dry-run", env=wide)
    assert (proc.returncode, proc.stdout.decode(), proc.stderr.decode()) == (0, "", said)


def test_the_reason_a_collector_did_not_take_the_figures_reads_plainly() -> None:
    """`export`'s line keeps the system's words of a failed POST (otlp.wire's `why`: "{class}: {str}"),
    without the exception's class and errno, whatever the class is called (http.client's
    RemoteDisconnected kept its name), and the class alone where there are no words."""
    import http.client
    import socket

    from session_watcher.cli.export import _plain

    for exc, said in ((ConnectionRefusedError(111, "Connection refused"), "Connection refused"),
                      (socket.gaierror(-2, "Name or service not known"), "Name or service not known"),
                      (http.client.RemoteDisconnected("Remote end closed connection without response"),
                       "Remote end closed connection without response"),
                      (TimeoutError(), "TimeoutError")):
        assert _plain(f"{type(exc).__name__}: {exc}") == said
    for why in ("HTTP 503 Service Unavailable", "no answer within the 5 s deadline"):
        assert _plain(why) == why


def test_export_says_what_it_did_within_the_terminals_width(tmp_path: Path) -> None:
    """The closing line ("exported N sessions (...) to URL", 90 columns on a new user's machine) and
    the empty machine's ("looked in FOLDER", a folder with a space) wrap at spaces within COLUMNS as
    every command's text, the URL and the folder each whole (one wider than the width on a line of its own)."""
    env = {**os.environ, "COLUMNS": "60"}
    with Receiver() as r:
        proc = sw("export", "--otlp", r.url, "--projects", str(TRANSCRIPTS), env=env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    assert len(lines) > 1, lines
    assert all(len(line) <= 60 for line in lines), lines
    assert lines[-1] == f"  {r.url}/v1/metrics"
    assert " ".join(lines).startswith("exported 6 sessions (")
    empty = tmp_path / "a folder with spaces and a long name to go past the width"
    empty.mkdir()
    url = f"http://127.0.0.1:{closed_port()}"
    proc = sw("export", "--otlp", url, "--projects", str(empty), env=env)
    assert (proc.returncode, proc.stdout.decode()) == (0, f"no session to export; looked in\n{empty}\n")


def test_export_of_a_codex_thread_carries_its_cache_lifetime(tmp_path: Path) -> None:
    """A Codex thread exported: the lifetime of its cache's class (an OpenAI class, the floor until
    the user's returns show a cliff) goes beside Claude Code's classes; the export sent only 5m and 1h,
    the guard's lifetime for none of a Codex user's threads."""
    from session_watcher.core.prices_openai import CLASSES, cache_class
    from session_watcher.sessions.replay import replay

    rollout = FIXTURES / "codex" / "rollout-019e7da4-83bc-7dc1-93d3-a435cb5c9100.jsonl"
    folder = tmp_path / "threads"
    folder.mkdir()
    (folder / rollout.name).write_bytes(rollout.read_bytes())
    with Receiver() as r:
        proc = sw("export", "--otlp", r.url, "--projects", str(folder))
        assert proc.returncode == 0, proc.stderr
        lives = {p.attributes["ttl"]: (p.value, p.attributes["source"])
                 for p in r.points("session_watcher.cache.lifetime")}
    cls = cache_class(replay(str(rollout), with_trace=False)[0]["model"])
    assert lives == {"5m": (300.0, "ttl"), "1h": (3600.0, "ttl"), cls: (CLASSES[cls], "ttl")}


def test_export_goes_where_codexs_otel_config_says(tmp_path: Path) -> None:
    """No URL, no [otlp] endpoint, no Claude Code setting: a Codex user's `[otel]` exporter in
    `$CODEX_HOME/config.toml` (a logs endpoint, OTLP/JSON, a header) is where the figures go, both
    signals at that collector, with its header."""
    rollout = FIXTURES / "codex" / "rollout-019e7da4-83bc-7dc1-93d3-a435cb5c9100.jsonl"
    folder = tmp_path / "threads"
    folder.mkdir()
    (folder / rollout.name).write_bytes(rollout.read_bytes())
    codex = tmp_path / "codex-home"
    codex.mkdir()
    with Receiver() as r:
        (codex / "config.toml").write_text(
            'model = "gpt-5.2-codex"\n[otel]\nlog_user_prompt = false\n'
            f'exporter = {{ otlp-http = {{ endpoint = "{r.url}/v1/logs", protocol = "json", '
            'headers = { "x-otlp-api-key" = "k1" } } }\n')
        env = {**os.environ, "CODEX_HOME": str(codex), "COLUMNS": "400"}
        proc = sw("export", "--otlp", "--projects", str(folder), env=env)
        assert proc.returncode == 0, proc.stderr
        assert f"to {r.url}/v1/metrics" in proc.stdout.decode()
        assert {q.path for q in r.requests} >= {"/v1/metrics"}
        assert {q.content_type for q in r.requests} == {"application/json"}
        assert {q.headers.get("x-otlp-api-key") for q in r.requests} == {"k1"}
        assert r.points("session_watcher.calls")


def test_doctor_says_why_export_is_off_and_where_codex_would_have_it_go(tmp_path: Path) -> None:
    """doctor's otlp line with export off: under "auto", where Codex's `[otel]` exporter names a
    collector, that one's metrics URL (a Codex user set it for Codex: export goes there once on); set
    off in the config, that setting, never "on by itself" (it said so for `enabled = false` too)."""
    codex = tmp_path / "codex-home"
    codex.mkdir()
    (codex / "config.toml").write_text(
        '[otel]\nexporter = { otlp-http = { endpoint = "http://127.0.0.1:4999/v1/logs" } }\n')
    env = {**os.environ, "CODEX_HOME": str(codex), "COLUMNS": "400"}
    env.pop("CLAUDE_CODE_ENABLE_TELEMETRY", None)

    def line() -> str:
        proc = sw("doctor", env=env)
        assert proc.returncode == 0, proc.stderr
        [otlp] = [s for s in proc.stdout.decode().splitlines() if s.startswith("otlp ")]
        return otlp

    assert "to send always, to Codex's [otel] collector at http://127.0.0.1:4999/v1/metrics: `" in line()
    (codex / "config.toml").write_text("")
    assert "Codex" not in line()
    assert "on by itself where Claude Code's own telemetry is on" in line()
    assert sw("config", "set", "otlp.enabled", "false", env=env).returncode == 0
    said = line()
    assert said.startswith("otlp       off (otlp.enabled = false in your config; `")
    assert "on by itself" not in said


def test_a_codex_config_nested_too_deep_is_no_exporter_of_codexs(tmp_path: Path) -> None:
    """A `$CODEX_HOME/config.toml` whose value nests deeper than the parser recurses is read as naming no
    collector, as one that is not TOML: `export --otlp` goes on (it ended with an internal error, exit
    3), and so does doctor's otlp line."""
    codex = tmp_path / "codex-home"
    codex.mkdir()
    (codex / "config.toml").write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    env = {**os.environ, "CODEX_HOME": str(codex), "COLUMNS": "400"}
    proc = sw("export", "--otlp", "--dry-run", "--projects", str(TRANSCRIPTS), env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["resourceMetrics"]
    proc = sw("doctor", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "\notlp       off (" in proc.stdout.decode()


def _unprivileged(args: list[str]) -> list[str]:
    """`args` run where a file's mode stops a read: as they are for a user; for root (CI), under capsh
    without the capabilities that read any file."""
    if os.geteuid() != 0:
        return args
    capsh = shutil.which("capsh")
    if capsh is None:
        pytest.skip("running as root without capsh: a file's mode stops no read")
    return [capsh, "--drop=cap_dac_override,cap_dac_read_search", "--", "-c", 'exec "$@"', "sh", *args]


def test_export_passes_over_a_transcript_it_cannot_read(tmp_path: Path) -> None:
    """One unreadable transcript among a user's (a file of another user's, a mode 000 one) ended the
    whole export with its error, nothing sent; now it is said on stderr, as `backtest` says one, and
    the others go."""
    proj = tmp_path / "projects" / "-proj"
    proj.mkdir(parents=True)
    shutil.copy(COLD, proj / COLD.name)
    locked = proj / "0bad0bad-1111-4222-8333-444444444444.jsonl"
    shutil.copy(COLD, locked)
    locked.chmod(0)
    wide = {**os.environ, "COLUMNS": "400"}
    proc = run(_unprivileged([str(SW), "export", "--otlp", "--dry-run", "--projects", str(tmp_path / "projects")]),
               env=wide)
    locked.chmod(0o600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.decode() == f"session-watcher export: skipped {locked}: Permission denied\n"
    sent = json.loads(proc.stdout)
    ids = {a["value"]["stringValue"] for rm in sent["resourceMetrics"] for sm in rm["scopeMetrics"]
           for m in sm["metrics"] for kind in ("gauge", "sum") for p in (m.get(kind) or {}).get("dataPoints", [])
           for a in p["attributes"] if a["key"] == "session.id"}
    assert ids == {SID}


def test_the_live_exporter_and_the_backfill_name_a_sessions_project_alike(tmp_path: Path,
                                                                          stop_exporters: None) -> None:
    """The same session exported live (from its hooks) and by `export --otlp` carries one `project`
    attribute, the name `report` gives it (`core.text.project_label` of its transcript's first cwd):
    the live exporter named the project its hooks placed it in (Claude Code's CLAUDE_PROJECT_DIR, a
    repository's top folder here, links resolved), the backfill the session's own folder."""
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    linked = tmp_path / "work-link"
    linked.symlink_to(repo / "sub")
    transcript = tmp_path / "projects" / "-work-link" / f"{SID}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_bytes(COLD.read_bytes().replace(b'"cwd":"/Users/alex/workspace/cli/.worktrees/1"',
                                                     f'"cwd":"{linked}"'.encode()))
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(repo)}
    with Receiver() as r:
        write_config(r.url, project=True)
        before = None
        for _ in range(40):  # the hooks until the cursor stops, as fold_to_the_end
            assert hook("Stop", {**payload(SID, transcript), "cwd": str(linked)}, env=env).returncode == 0
            cursor = json.loads(Path(paths.sessions_dir(), f"{SID}.json").read_text())["cursor"]
            if cursor is not None and cursor == before:
                break
            before = cursor

        def named(rv: Receiver) -> bool:
            return any("project" in p.attributes for p in rv.points("session_watcher.calls"))

        assert r.wait(named, WAIT), (r.rejected, len(r.requests))
        live = {p.attributes["project"] for p in r.points("session_watcher.") if "project" in p.attributes}
    proc = sw("export", "--otlp", "--dry-run", "--projects", str(transcript.parent))
    assert proc.returncode == 0, proc.stderr
    sent = json.loads(proc.stdout)
    backfill = {a["value"]["stringValue"] for rm in sent["resourceMetrics"] for sm in rm["scopeMetrics"]
                for m in sm["metrics"] for kind in ("gauge", "sum") for p in (m.get(kind) or {}).get("dataPoints", [])
                for a in p["attributes"] if a["key"] == "project"}
    report = json.loads(sw("report", "--json", "--projects", str(transcript.parent)).stdout)
    assert [s["projectName"] for s in report["sessions"]] == ["work-link"]
    assert live == backfill == {"work-link"}


def test_export_names_a_log_that_is_no_file_as_report_does(tmp_path: Path) -> None:
    """A folder named `*.jsonl` among the transcripts (and one named as a Codex rollout, a link to
    nothing) was passed over without a word, where `report` names each ("left out PATH: not a file it
    can read") and the export names a file it cannot read: now each is said on stderr in report's
    words, the others sent; `backtest` says the same of them."""
    proj = tmp_path / "projects" / "-proj"
    proj.mkdir(parents=True)
    shutil.copy(COLD, proj / COLD.name)
    odd = [proj / "folder.jsonl", proj / "nothing.jsonl",
           proj / "rollout-2026-07-01T00-00-00-019f0000-0000-7000-8000-000000000001.jsonl"]
    odd[0].mkdir()
    odd[1].symlink_to(tmp_path / "gone.jsonl")
    odd[2].mkdir()
    wide = {**os.environ, "COLUMNS": "1000"}
    proc = sw("export", "--otlp", "--dry-run", "--projects", str(tmp_path / "projects"), env=wide)
    assert proc.returncode == 0, proc.stderr
    said = sorted(f"skipped {p}: not a file it can read" for p in odd)
    assert sorted(proc.stderr.decode().splitlines()) == [f"session-watcher export: {x}" for x in said]
    sent = json.loads(proc.stdout)
    ids = {a["value"]["stringValue"] for rm in sent["resourceMetrics"] for sm in rm["scopeMetrics"]
           for m in sm["metrics"] for kind in ("gauge", "sum") for p in (m.get(kind) or {}).get("dataPoints", [])
           for a in p["attributes"] if a["key"] == "session.id"}
    assert ids == {SID}
    report = sw("report", "--json", "--projects", str(tmp_path / "projects"), env=wide)
    assert sorted(report.stderr.decode().splitlines()) == sorted(
        f"session-watcher report: left out {p}: not a file it can read" for p in odd)
    claude = tmp_path / "claude"  # backtest reads the agents' own folders: these, as Claude Code's
    (claude / "projects").mkdir(parents=True)
    shutil.copytree(proj, claude / "projects" / "-proj", symlinks=True)
    mine = {**wide, "CLAUDE_CONFIG_DIR": str(claude)}
    back = sw("backtest", "--json", env=mine, timeout=120)
    assert back.returncode == 0, back.stderr
    assert sorted(back.stderr.decode().splitlines()) == sorted(
        f"session-watcher backtest: skipped {claude / 'projects' / '-proj' / p.name}: not a file it can read"
        for p in odd)


def test_a_subagent_log_that_is_no_file_is_named_as_a_main_one(tmp_path: Path) -> None:
    """A folder named `*.jsonl` (or a link to nothing) in a session's `subagents/` folder was named by
    no command, where `report`, `export --otlp` and `backtest` name one among the main logs: each
    names it now in the same words, the session's own logs read as before."""
    proj = tmp_path / "claude" / "projects" / "-proj"
    proj.mkdir(parents=True)
    shutil.copy(COLD, proj / COLD.name)
    subs = proj / SID / "subagents"
    subs.mkdir(parents=True)
    odd = [subs / "agent-folder.jsonl", subs / "agent-nothing.jsonl"]
    odd[0].mkdir()
    odd[1].symlink_to(tmp_path / "gone.jsonl")
    wide = {**os.environ, "COLUMNS": "1000", "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    said = sorted(f"skipped {p}: not a file it can read" for p in odd)
    export = sw("export", "--otlp", "--dry-run", env=wide)
    assert export.returncode == 0, export.stderr
    assert sorted(export.stderr.decode().splitlines()) == [f"session-watcher export: {x}" for x in said]
    report = sw("report", "--json", env=wide)
    assert report.returncode == 0, report.stderr
    assert sorted(report.stderr.decode().splitlines()) == sorted(
        f"session-watcher report: left out {p}: not a file it can read" for p in odd)
    assert [s["sessionId"] for s in json.loads(report.stdout)["sessions"]] == [SID]
    back = sw("backtest", "--json", env=wide, timeout=120)
    assert back.returncode == 0, back.stderr
    assert sorted(back.stderr.decode().splitlines()) == [f"session-watcher backtest: {x}" for x in said]
    assert [s["sessionId"] for s in json.loads(back.stdout)["sessions"]] == [SID]


def test_replay_and_status_name_a_subagent_log_that_is_no_file(tmp_path: Path) -> None:
    """`replay`, `status` and `health` passed over a folder named `*.jsonl` (or a link to nothing) in
    the session's `subagents/` folder without a word, where `report`, `export` and `backtest` name it:
    each names it now, once, in their words (a session the hooks never saw, then one they recorded);
    the hooks, whose fold reads the same folder, stay silent; the figures are the same."""
    proj = tmp_path / "claude" / "projects" / "-proj"
    proj.mkdir(parents=True)
    transcript = proj / COLD.name
    shutil.copy(COLD, transcript)
    wide = {**os.environ, "COLUMNS": "1000", "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    plain = sw("replay", "--json", str(transcript), env=wide)
    assert plain.returncode == 0, plain.stderr
    assert plain.stderr == b""
    subs = proj / SID / "subagents"
    subs.mkdir(parents=True)
    odd = [subs / "agent-folder.jsonl", subs / "agent-nothing.jsonl"]
    odd[0].mkdir()
    odd[1].symlink_to(tmp_path / "gone.jsonl")

    def said(command: str) -> list[str]:
        return [f"session-watcher {command}: left out {p}: not a file it can read" for p in odd]

    for command in ("replay", "status", "health"):
        got = sw(command, "--json", str(transcript), env=wide)
        assert got.returncode == 0, got.stderr
        assert got.stderr.decode().splitlines() == said(command)
        if command == "replay":
            assert got.stdout == plain.stdout
    done = hook("Stop", payload(SID, transcript), env=wide)
    assert done.returncode == 0, done.stderr
    assert done.stdout == done.stderr == b""
    for command in ("status", "health"):  # the hooks' state now: read, the folder listed all the same
        got = sw(command, "--json", SID, env=wide)
        assert got.returncode == 0, got.stderr
        assert got.stderr.decode().splitlines() == said(command)


def test_export_since_a_time_no_session_reaches_says_so(tmp_path: Path) -> None:
    """A transcript touched since --since whose last call is older: nothing to send, said as for no
    transcript at all (it said "exported 0 sessions", and --dry-run printed a request of the cache
    lifetimes alone)."""
    copy_session(tmp_path)  # written now, its calls from February 2026
    wide = {**os.environ, "COLUMNS": "400"}
    url = f"http://127.0.0.1:{closed_port()}"
    said = f"no session to export active since 7d; looked in {tmp_path / 'proj'}\n"
    proc = sw("export", "--otlp", url, "--since", "7d", "--projects", str(tmp_path / "proj"), env=wide)
    assert (proc.returncode, proc.stdout.decode(), proc.stderr.decode()) == (0, said, "")
    proc = sw("export", "--otlp", url, "--since", "7d", "--projects", str(tmp_path / "proj"), "--dry-run", env=wide)
    assert (proc.returncode, proc.stdout.decode(), proc.stderr.decode()) == (0, "", said)
