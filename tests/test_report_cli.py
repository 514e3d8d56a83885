"""`session-watcher report` as a real process: text tables, JSON against its schema, the HTML page
rendered by a real browser."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from session_watcher.cli import build_parser
from session_watcher.cli import main as sw_main
from session_watcher.cli.report import report_args
from tests.oracle import one_message
from tests.test_report_fixtures import copy_fixtures
from tests.test_warmth import COLD, T0, WARM, Transcript, cliff_session

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "docs" / "report-schema.json").read_text())


def env_for(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["SESSION_WATCHER_HOME"] = str(tmp / "home")
    env["CLAUDE_CONFIG_DIR"] = str(tmp / "claude")
    env["PYTHONPATH"] = str(ROOT)
    return env


def report(tmp: Path, *args: str, columns: int = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "session_watcher", "report", *args],
        capture_output=True,
        text=True,
        env={**env_for(tmp), "COLUMNS": str(columns)},
        cwd=tmp,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def fixtures_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("cli")
    copy_fixtures(base / "claude")
    return base


@pytest.fixture(scope="module")
def cliff_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A corpus with a visible 5-minute cliff, a 1-hour cliff and a one-call session."""
    base = tmp_path_factory.mktemp("cliff")
    proj = base / "claude" / "projects" / "-home-u-p"
    cliff_session("five", "5m", [20, 45, 90, 190, 220, 250, 280, 299], [301, 420, 600, 900, 1150]).write(proj)
    cliff_session("hour", "1h", [30, 400, 900, 1900, 2500, 3000, 3300, 3590],
                  [3610, 4300, 5000, 6000, 7000]).write(proj)
    Transcript("single").call(T0, 0, 15_000).write(proj)
    Transcript("warmish").call(T0, *WARM).call(T0 + 9, *COLD).call(T0 + 20, *WARM).write(proj)
    return base


@pytest.mark.slow
def test_text_report_over_the_fixtures(fixtures_dir: Path) -> None:
    """The default sources ($CLAUDE_CONFIG_DIR/projects): tables and sentences on stdout, nothing else."""
    r = report(fixtures_dir)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""  # no progress bar when stderr is not a terminal
    out = r.stdout
    assert "no calls today; no calls this week" in out
    # per session: its short id (as every command takes it), when, how long, the project (its cwd's last
    # folder), model, calls, money, the break; the main conversation's calls and cost, as backtest's
    assert re.search(r"^ae4a77f8  2026-02-12 \d\d:\d\d  53m\s+spotter-4te\s+haiku-4-5\+1\s+217\s+\$4\.68\s+99 %\s+2\s+"
                     r"18m \$0\.15$", out, re.M)
    assert re.search(r"^short     2026-02-10 \d\d:\d\d  2s\s+spotter\s+opus-4-6\s+1\s+\$0\.14\s+-\s+1\s+-$", out, re.M)
    assert "sub-agents apart: 29 calls, $1.51 (in --json)" in " ".join(ln.strip() for ln in out.splitlines())
    assert re.search(r"^2026-02-12\s+2\s+374\s+\$13\.99\s+99 %$", out, re.M)  # by day: the two sessions' rows
    assert re.search(r"^2026-02-09\s+6\s+543\s+\$25\.71\s+98 %$", out, re.M)  # the week of Monday the 9th
    assert re.search(r"^spotter\s+3\s+17\s+\$0\.84\s+2026-02-10$", out, re.M)  # by project
    assert re.search(r"^model switch\s+1\s+17 %$", out, re.M)  # words, not the JSON's keys
    assert re.search(r"^idle gap\s+1\s+17 %$", out, re.M)  # 17.5 min of 5-minute writes (and a switch back)
    assert re.search(r"^unexplained\s+3\s+50 %$", out, re.M)
    assert "5m writes: not enough data yet to say where your cache expires, so the documented 5 min counts" in out
    assert re.search(r"^<1m\s+360\s+99 %\s+1 %$", out, re.M)  # the 5m table's first bucket
    assert max(len(line) for line in out.splitlines()) <= 120


@pytest.mark.slow
def test_one_sessions_calls_and_cost_agree_in_every_view_and_backtest(fixtures_dir: Path) -> None:
    """258c7280 (152 main calls, 4 of its sub-agents): the same calls and dollars in its row, its day,
    week and project, and backtest; the sub-agents apart, in every view's JSON."""
    doc = json.loads(report(fixtures_dir, "--json").stdout)
    row = {s["sessionId"][:8]: s for s in doc["sessions"]}["258c7280"]
    assert (row["calls"], round(row["cacheUsd"], 2), row["subagentCalls"], round(row["subagentUsd"], 2)) == (
        152, 10.88, 4, 0.37)
    day = {d["date"]: d for d in doc["totals"]["days"]}["2026-02-11"]
    project = {p["project"]: p for p in doc["totals"]["projects"]}["spotter-gqc"]
    for view in (day, project):
        assert (view["calls"], round(view["cacheUsd"], 2), view["subagentCalls"]) == (152, 10.88, 4)
    transcript = next((fixtures_dir / "claude" / "projects").glob("*/258c7280-*.jsonl"))
    bt = subprocess.run([sys.executable, "-m", "session_watcher", "backtest", str(transcript), "--json"],
                        capture_output=True, text=True, env=env_for(fixtures_dir), timeout=120, check=True)
    s = json.loads(bt.stdout)["sessions"][0]
    assert (s["calls"], round(s["policies"]["actual"]["usd"], 2)) == (152, 10.88)


@pytest.mark.slow
def test_within_columns_and_80_when_not_a_terminal(fixtures_dir: Path) -> None:
    """Every line within COLUMNS; unset and piped, within 80: the widest columns are left out, and
    the short id, date, project, model, calls and dollars stay."""
    env = {k: v for k, v in env_for(fixtures_dir).items() if k != "COLUMNS"}
    piped = subprocess.run([sys.executable, "-m", "session_watcher", "report"], capture_output=True, text=True,
                           env=env, timeout=120, check=True).stdout
    assert max(len(line) for line in piped.splitlines()) <= 80
    assert re.search(r"^ae4a77f8  2026-02-12 \d\d:\d\d  spotter-4te\s+haiku-4-5\+1\s+217\s+\$4\.68(  99 %)?\s+2$",
                     piped, re.M)
    for width in (60, 100):
        out = report(fixtures_dir, columns=width).stdout
        assert max(len(line) for line in out.splitlines()) <= width, width


@pytest.mark.slow
def test_json_validates_against_the_schema(fixtures_dir: Path) -> None:
    r = report(fixtures_dir, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.validate(doc, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert doc["ttl"] == {"5m": None, "1h": None}
    assert doc["causes"]["modelSwitch"] == 1  # the switch back to opus came after 17.5 min: an idle gap first
    assert doc["causes"]["idleGap"] == 1
    single = {s["sessionId"]: s for s in doc["sessions"]}["short"]
    assert single["warmth"] is None
    assert doc["restartsTaken"] == []  # piped (the cached text's path), as the text and the HTML have them


@pytest.mark.slow
def test_json_with_an_inferred_cliff_validates(cliff_dir: Path) -> None:
    r = report(cliff_dir, "--json", "--projects", str(cliff_dir / "claude" / "projects"))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert doc["ttl"]["5m"]["inferredSeconds"] == 300
    assert doc["ttl"]["1h"]["inferredSeconds"] == 3600
    assert doc["causes"] == {"firstCall": 1, "idleGap": 10, "modelSwitch": 0, "compaction": 0, "unexplained": 1}


@pytest.mark.slow
def test_text_states_the_inference_with_its_evidence(cliff_dir: Path) -> None:
    r = report(cliff_dir, "--projects", str(cliff_dir / "claude" / "projects"))
    assert r.returncode == 0, r.stderr
    text = " ".join(line.strip() for line in r.stdout.splitlines())  # the sentences are wrapped
    assert (
        "5m writes: inferred from your sessions (not documentation), the cache expires near 5 min: "
        "0 of 5 returns from 2 min to 5 min ran cold, 5 of 5 returns from 5 min to 20 min ran cold; "
        "the edge lies between a 4 min 59 s gap and a 5 min 01 s gap"
    ) in text
    assert ("1h writes: inferred from your sessions (not documentation), the cache expires near 60 min: 0 of 5 "
            "returns from 20 min to 60 min ran cold, 5 of 5 returns from 60 min to 2 h ran cold") in text


@pytest.mark.slow
def test_a_day_of_one_call_sessions_has_calls_but_no_warmth(tmp_path: Path) -> None:
    """Today's only session made one call (a Codex thread asked once, a question in print mode): the
    report's first line said "no calls today; no calls this week" above a table showing that call.
    A session's first call has nothing to be warm with, so the day has calls and no warmth yet."""
    import time

    Transcript("one-call").call(time.time() - 60, 0, 15_000).write(tmp_path / "claude" / "projects" / "-home-u-p")
    r = report(tmp_path, columns=200)
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first == "today 1 call, none after a session's first: no warmth yet; this week the same", r.stdout
    html = report(tmp_path, "--html", "-")
    assert "today 1 call, none after a session&#x27;s first: no warmth yet; this week the same." in html.stdout
    narrow = report(tmp_path, columns=40)
    assert max(len(line) for line in narrow.stdout.splitlines()[:3]) <= 40, narrow.stdout
    # its cliff: the call was a 5-minute write, and the text said "5m writes: no calls" under the table
    # counting it (Codex's classes say the same: tests/test_codex_cliff.py)
    assert "5m writes: no call yet after a 5m write (a first call has no gap before it)" in r.stdout, r.stdout
    assert "1h writes: no call yet after a 1h write" in r.stdout
    assert "no calls" not in r.stdout


@pytest.mark.slow
def test_a_day_whose_later_calls_used_no_cache_is_not_said_to_be_first_calls(tmp_path: Path) -> None:
    """Prompt caching turned off: the calls after a session's first read and write no cache, so the
    day has no warmth either, but not because its calls were sessions' first (the sentence said
    "today 3 calls, none after a session's first"); beside a one-call session too. The week's calls
    earlier than today are told apart from today's."""
    import time

    now = time.time()
    proj = tmp_path / "claude" / "projects" / "-home-u-p"
    Transcript("no-cache").call(now - 50, 0, 0).call(now - 40, 0, 0).write(proj)
    Transcript("one-call").call(now - 30, 0, 15_000).write(proj)
    first = report(tmp_path, columns=200).stdout.splitlines()[0]
    assert first == ("today 3 calls, no warmth yet: those after a session's first read and wrote no cache; "
                     "this week the same"), first
    Transcript("two-days-ago").call(now - 2 * 86400 - 60, 0, 9_000).write(proj)
    first = report(tmp_path, columns=200).stdout.splitlines()[0]
    assert first == ("today 3 calls, no warmth yet: those after a session's first read and wrote no cache; "
                     "this week 4 calls, no warmth yet: those after a session's first read and wrote no cache"), first
    (proj / "no-cache.jsonl").unlink()
    first = report(tmp_path, columns=200).stdout.splitlines()[0]
    assert first == ("today 1 call, none after a session's first: no warmth yet; "
                     "this week 2 calls, none after a session's first: no warmth yet"), first


@pytest.mark.slow
def test_since_and_bad_date(cliff_dir: Path) -> None:
    r = report(cliff_dir, "--json", "--projects", str(cliff_dir / "claude" / "projects"), "--since", "2030-01-01")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["sessions"] == []
    bad = report(cliff_dir, "--since", "yesterday-ish")
    assert bad.returncode == 2
    assert "'yesterday-ish' is not a date, a date-time or a span (use YYYY-MM-DD" in bad.stderr


@pytest.mark.slow
def test_since_a_local_date_time_a_zoned_one_and_a_span(tmp_path: Path) -> None:
    """--since 2026-03-02T12:30 is local time (here UTC+2, 10:30 UTC), with Z it is UTC; 12h and 2d
    count back from now; anything else is refused naming the forms (report and export alike)."""
    import time

    proj = tmp_path / "claude" / "projects" / "-home-u-p"
    Transcript("nine").call(T0, *WARM).write(proj)  # 09:00 UTC
    Transcript("eleven").call(T0 + 7200, *WARM).write(proj)  # 11:00 UTC
    Transcript("recent").call(time.time() - 3 * 3600, *WARM).write(proj)
    Transcript("yesterday").call(time.time() - 30 * 3600, *WARM).write(proj)

    def ids(since: str) -> list[str]:
        got = subprocess.run([sys.executable, "-m", "session_watcher", "report", "--json", "--projects",
                              str(tmp_path / "claude" / "projects"), "--since", since], capture_output=True, text=True,
                             env={**env_for(tmp_path), "TZ": "Etc/GMT-2"}, cwd=tmp_path, timeout=120, check=False)
        assert got.returncode == 0, got.stderr
        return sorted(s["sessionId"] for s in json.loads(got.stdout)["sessions"])

    assert ids("2026-03-02T12:30") == ["eleven", "recent", "yesterday"]
    assert ids("2026-03-02T10:30:00Z") == ["eleven", "recent", "yesterday"]
    assert ids("2026-03-02T12:30Z") == ["recent", "yesterday"]
    assert ids("12h") == ["recent"]
    assert ids("2d") == ["recent", "yesterday"]
    # seconds optional, and m minutes (not months): said
    forms = ("(use YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] (local unless it ends in Z or +02:00), or a span back: "
             "30m (minutes), 12h, 7d, 2w)")
    bad = report(tmp_path, "--since", "last week", columns=1000)
    assert bad.returncode == 2
    assert f"argument --since: 'last week' is not a date, a date-time or a span {forms}" in bad.stderr
    export = subprocess.run([sys.executable, "-m", "session_watcher", "export", "--otlp", "--dry-run", "--since", "3y"],
                            capture_output=True, text=True, env={**env_for(tmp_path), "COLUMNS": "1000"}, cwd=tmp_path,
                            timeout=120, check=False)
    assert export.returncode == 2  # a command line that cannot work, as report's
    assert f"argument --since: '3y' is not a date, a date-time or a span {forms}" in export.stderr
    empty = subprocess.run([sys.executable, "-m", "session_watcher", "export", "--otlp", "--dry-run", "--since", ""],
                           capture_output=True, text=True, env={**env_for(tmp_path), "COLUMNS": "1000"}, cwd=tmp_path,
                           timeout=120, check=False)  # it exported every session, where report refuses ""
    assert (empty.returncode, empty.stdout) == (2, "")
    assert f"argument --since: '' is not a date, a date-time or a span {forms}" in empty.stderr


@pytest.mark.slow
def test_json_and_html_are_exclusive(tmp_path: Path) -> None:
    r = report(tmp_path, "--json", "--html", str(tmp_path / "x.html"))
    assert r.returncode == 2


def test_empty_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """No transcripts anywhere: a report that says so, exit 0."""
    monkeypatch.setenv("SESSION_WATCHER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "nothing"))
    assert sw_main(["report", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["sessions"] == []
    assert doc["coldStarts"] == 0


def html_page(base: Path) -> tuple[Path, str]:
    out = base / "report.html"
    r = report(base, "--projects", str(base / "claude" / "projects"), "--html", str(out))
    assert r.returncode == 0, r.stderr
    return out, out.read_text()


@pytest.mark.slow
def test_html_is_self_contained_and_honest(cliff_dir: Path) -> None:
    """No network: no script, no external URL; the warning colour for re-created tokens, no danger colour;
    340k-style numbers with the exact figure on hover; tabular figures."""
    _, page = html_page(cliff_dir)
    assert "<script" not in page
    assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", page)
    assert "@import" not in page
    assert "--mv-danger" not in page
    assert 'class="recreated"' in page
    assert ".bar .recreated { background: var(--recreated); }" in page
    assert "--recreated:#d98b1c" in page  # the warning orange (light); the danger red is --error
    assert "font-variant-numeric: tabular-nums" in page
    assert 'title="one call: nothing earlier to be warm with">-</span>' in page
    assert page.count('class="inferred-ttl"') == 2 * 2  # the wide scatter and the phone's copy
    assert "inferred 5m-write TTL ≈ 5\u00a0min (n=5 below, 5 above)" in page  # 5 min: one unbreakable line


def find_browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.mark.slow
def test_html_renders_in_a_real_browser(cliff_dir: Path) -> None:
    """Chromium parses the page: the scatter with one point per gap, the boundary labelled inferred."""
    browser = find_browser()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("no chromium in CI (.ci/setup.d installs it)")
        pytest.skip("no chromium here")
    out, _ = html_page(cliff_dir)
    r = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            f"--user-data-dir={cliff_dir / 'chrome-profile'}",
            "--dump-dom",
            out.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    doc: dict[str, Any] = json.loads(
        report(cliff_dir, "--json", "--projects", str(cliff_dir / "claude" / "projects")).stdout
    )
    dom = dom.replace("&nbsp;", " ").replace("\u00a0", " ")  # a number keeps its unit on its line
    assert '<svg id="scatter"' in dom
    wide, narrow = dom.split('<svg id="scatter-narrow"')  # the phone's copy follows, then the points of both
    assert dom.count('<div class="points"') == 1
    assert narrow.count(" tokens re-created (") == len(doc["scatter"]) == 13 + 13 + 2
    assert " tokens re-created (" not in wide
    assert "inferred 1h-write TTL ≈ 60 min (n=5 below, 5 above)" in wide
    assert "1h TTL ≈ 60 min" in narrow
    assert "of today ran warm" in dom or "no calls today" in dom


@pytest.mark.parametrize(
    "argv",
    [
        ["--json"],
        ["--json", "--projects", "a", "b"],
        ["--projects", "a", "--json", "--projects", "c"],
        ["--since", "2026-02-12", "--json", "--index", "f.sqlite3", "--since", "2026-03-01"],
        ["--json", "--since", "2026-02-12T10:00:00+00:00"],
        [],  # the text report, as people run it
        ["--projects", "a"],
        ["--since", "7d", "--projects", "a", "b", "--index", "f.sqlite3"],
    ],
)
def test_the_quick_forms_read_as_argparse_reads_them(argv: list[str]) -> None:
    quick = report_args(argv)
    assert quick is not None
    assert vars(quick) == {k: v for k, v in vars(build_parser("report").parse_args(["report", *argv])).items()
                           if k != "func"}


@pytest.mark.parametrize(
    "argv",
    [
        ["--json", "--html", "x.html"],
        ["--html", "x.html"],
        ["--proj", "a", "--json"],  # argparse takes the prefix; the quick reader leaves it to it
        ["--projects=a", "--json"],
        ["--json", "--projects"],
        ["--json", "--projects", "-"],
        ["--json", "--index"],
        ["--json", "--since", "not a date"],
        ["--since", "not a date"],
        ["--json", "--", "x"],
        ["--pages", "--json"],
        ["--json", "-h"],
        ["-h"],
        ["session"],
        ["session", "abc", "--html", "x.html"],
    ],
)
def test_other_forms_are_left_to_argparse(argv: list[str]) -> None:
    assert report_args(argv) is None


@pytest.mark.slow
def test_report_json_for_a_program_loads_no_argparse(tmp_path: Path) -> None:
    """What a program runs (stdout not a terminal): the JSON, without argparse's imports."""
    copy_fixtures(tmp_path / "claude")
    code = ("import sys\nfrom session_watcher.cli import main\n"
            "rc = main(['report', '--json', '--index', sys.argv[1]])\n"
            "print('argparse' in sys.modules, 'shutil' in sys.modules, file=sys.stderr)\nsys.exit(rc)\n")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "i.sqlite3")], capture_output=True, text=True,
                       env=env_for(tmp_path), cwd=tmp_path, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    assert r.stderr.split() == ["False", "False"]
    assert json.loads(r.stdout)["sessions"]


@pytest.mark.slow
def test_the_text_report_loads_no_argparse_typing_nor_the_restarts_module(tmp_path: Path) -> None:
    """`session-watcher report` as people run it, no restart taken on the machine: the tables without
    argparse's imports (nor `report session`'s parser, which brings json and typing), without the
    module that prices restarts taken (none to list), and, warm (no msgspec), without typing."""
    copy_fixtures(tmp_path / "claude")
    code = ("import sys\nfrom session_watcher.cli import main\n"
            "rc = main(['report', '--index', sys.argv[1]])\n"
            "print('LOADED', *(m for m in ('argparse', 'typing', 'session_watcher.sessions.restarts',"
            " 'session_watcher.cli.report_session') if m in sys.modules), file=sys.stderr)\nsys.exit(rc)\n")
    loaded = []
    for _ in range(2):  # cold, then warm
        r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "i.sqlite3")], capture_output=True,
                           text=True, env=env_for(tmp_path), cwd=tmp_path, timeout=120, check=False)
        assert r.returncode == 0, r.stderr
        assert "calls" in r.stdout
        loaded.append(next(line.split()[1:] for line in r.stderr.splitlines() if line.startswith("LOADED")))
    assert set(loaded[0]) <= {"typing"}  # cold: msgspec's, where the read is large enough for it
    assert loaded[1] == []


@pytest.mark.slow
def test_a_warm_report_over_codex_rollouts_loads_neither_the_decoder_nor_the_summaries(tmp_path: Path) -> None:
    """A warm report over unchanged Codex rollouts, the guard's log empty: the kept text sent without
    the rollout decoder (`agents.codex.discover` lists the files by name alone) or the sessions'
    summaries (`reports.warmth`), each loaded by the cold run that read the files."""
    from tests.codex_lines import FIXTURES as CODEX

    day = tmp_path / "codex" / "sessions" / "2026" / "01" / "01"
    day.mkdir(parents=True)
    for p in sorted(CODEX.glob("rollout-*.jsonl"))[:3]:
        shutil.copyfile(p, day / p.name)
    code = ("import sys\nfrom session_watcher.cli import main\n"
            "rc = main(['report', '--json', '--index', sys.argv[1]])\n"
            "print('LOADED', *(m for m in ('session_watcher.agents.codex.rollout', 'session_watcher.reports.warmth')"
            " if m in sys.modules), file=sys.stderr)\nsys.exit(rc)\n")
    env = {**env_for(tmp_path), "CODEX_HOME": str(tmp_path / "codex")}
    loaded, docs = [], []
    for _ in range(2):  # cold, then warm
        r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "i.sqlite3")], capture_output=True,
                           text=True, env=env, cwd=tmp_path, timeout=120, check=False)
        assert r.returncode == 0, r.stderr
        docs.append(json.loads(r.stdout))
        loaded.append(next(line.split()[1:] for line in r.stderr.splitlines() if line.startswith("LOADED")))
    assert loaded == [["session_watcher.agents.codex.rollout", "session_watcher.reports.warmth"], []]
    assert docs[1]["index"]["cached"]
    assert len(docs[1]["sessions"]) == len(docs[0]["sessions"]) > 0
    assert {k: v for k, v in docs[1].items() if k not in ("index", "generatedAt")} == {
        k: v for k, v in docs[0].items() if k not in ("index", "generatedAt")}


@pytest.mark.slow
def test_a_warm_report_with_a_file_changed_imports_no_json(tmp_path: Path) -> None:
    """A warm `report --json` for a program, one transcript grown since the last run: the changed
    file read, the document merged and written, all without `json` in the process, nor `re` from the
    marker search (an editable install's finder imports `re` itself)."""
    copy_fixtures(tmp_path / "claude")
    code = ("import sys\nfrom session_watcher.cli import main\n"
            "rc = main(['report', '--json', '--index', sys.argv[1]])\n"
            "scan = sys.modules.get('session_watcher.core.markscan')\n"
            "print('json' in sys.modules, scan is None or hasattr(scan, 're') or scan._non_digit is not None,"
            " file=sys.stderr)\nsys.exit(rc)\n")

    def run() -> subprocess.CompletedProcess[str]:
        r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "i.sqlite3")], capture_output=True, text=True,
                           env=env_for(tmp_path), cwd=tmp_path, timeout=120, check=False)
        assert r.returncode == 0, r.stderr
        return r

    run()  # cold: builds the index
    grown = max((tmp_path / "claude").rglob("*.jsonl"), key=lambda p: p.stat().st_size)
    with grown.open("ab") as fh:
        fh.write(grown.read_bytes().splitlines()[-1] + b"\n")
    warm = run()
    assert warm.stderr.split() == ["False", "False"]
    doc = json.loads(warm.stdout)
    assert doc["index"]["appended"] == 1
    assert not doc["index"]["cached"]
    assert doc["sessions"]


@pytest.mark.slow
@pytest.mark.parametrize("how", [["-m", "session_watcher"], ["-c", "from session_watcher.cli import run; run()"]])
def test_report_leaves_through_a_flushed_exit(tmp_path: Path, how: list[str]) -> None:
    """The command line leaves a report through os._exit: every byte of the JSON and of stderr is
    out first, and the exit code is the report's."""
    copy_fixtures(tmp_path / "claude")
    env = {k: v for k, v in env_for(tmp_path).items() if k != "PYTHONUNBUFFERED"}  # stdout buffered, as usual
    r = subprocess.run([sys.executable, *how, "report", "--json", "--index", str(tmp_path / "i.sqlite3")],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.endswith("}\n")
    doc = json.loads(r.stdout)
    assert len(r.stdout) > 50_000
    assert doc["sessions"]
    bad = subprocess.run([sys.executable, *how, "report", "--json", "--since", "nope"], capture_output=True,
                         text=True, env=env, cwd=tmp_path, timeout=120, check=False)
    assert bad.returncode == 2
    assert "'nope' is not a date, a date-time or a span (use YYYY-MM-DD" in " ".join(bad.stderr.split())


@pytest.mark.slow
def test_html_has_the_texts_sessions_views_and_restarts(fixtures_dir: Path, tmp_path: Path) -> None:
    """The HTML report shows what the text does: each session's short id, started, span, project,
    model, calls, cache $ and longest break in one row; by day, by week, by project; the restarts
    taken; the cliff."""
    import html as html_lib

    text = report(fixtures_dir, columns=200).stdout
    out = tmp_path / "r.html"
    assert report(fixtures_dir, "--html", str(out)).returncode == 0
    page = out.read_text()
    rows = re.findall(r"<tr><td class=\"sid\".*?</tr>", page)
    cells = [[html_lib.unescape(re.sub(r"<[^>]+>", "", c)).replace("\u00a0", " ")
              for c in re.findall(r"<td[^>]*>(.*?)</td>", r)] for r in rows]
    table = [ln for ln in text.split("\n\n")[1].splitlines()[3:] if re.match(r"\S+ +\d{4}-", ln)]
    assert len(cells) == len(table) == 6
    for row, line in zip(cells, table, strict=True):
        sid, started, span, project, model, calls, usd, _warm, cold, gap = row
        assert line.split() == [sid, *started.split(), span, project, model, calls, usd,
                                *(_warm.split() if _warm != "-" else ["-"]), cold, *gap.split()]
    for ident in ("days", "weeks", "projects"):
        assert f'<table id="{ident}" class="totals">' in page
    assert '<td class="n">374</td><td class="n">$13.99</td>' in page  # the 12th, as the text's day row
    assert 'id="h-restarts">Restarts taken with a handoff</h2>' in page
    assert 'id="cliff"' in page


def _html_tables(page: str) -> dict[str, list[list[str]]]:
    """Each table of the page with an id: its body rows, each cell's visible text (spaces collapsed)."""
    from html.parser import HTMLParser

    class Tables(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.tables: dict[str, list[list[str]]] = {}
            self.table: str | None = None
            self.row: list[str] | None = None
            self.cell: list[str] | None = None
            self.body = False

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            ident = dict(attrs).get("id")
            if tag == "table" and ident:
                self.table = ident
                self.tables[ident] = []
            elif tag == "tbody":
                self.body = True
            elif tag == "tr" and self.table and self.body:
                self.row = []
            elif tag == "td" and self.row is not None:
                self.cell = []

        def handle_endtag(self, tag: str) -> None:
            if tag == "td" and self.row is not None and self.cell is not None:
                self.row.append(" ".join("".join(self.cell).split()))
                self.cell = None
            elif tag == "tr" and self.table and self.row is not None:
                self.tables[self.table].append(self.row)
                self.row = None
            elif tag == "tbody":
                self.body = False
            elif tag == "table":
                self.table = None

        def handle_data(self, data: str) -> None:
            if self.cell is not None:
                self.cell.append(data)

    parser = Tables()
    parser.feed(page)
    return parser.tables


def _text_table(out: str, title: str) -> list[list[str]]:
    """The rows of the text report's table under `title` (cells split at runs of two spaces)."""
    lines = out.splitlines()
    k = next(i for i, line in enumerate(lines) if line.startswith(title))
    width = len(re.split(r"\s{2,}", lines[k + 1].strip()))  # the header's columns
    rows = []
    for line in lines[k + 3:]:
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) != width:
            break
        rows.append(cells)
    return rows


@pytest.mark.slow
def test_text_html_json_and_backtest_show_the_same_sessions_and_figures(fixtures_dir: Path, tmp_path: Path) -> None:
    """`report` as text and as HTML: the same sessions, newest first, with the same short id, start,
    span, project, model, calls, dollars, warmth, cold starts and longest break; the same day, week and
    project rows. Each session's calls and cache dollars agree across its row, `report --json` and
    `backtest` (text and JSON, the session named by the same short id: backtest said `tool_heavy` where
    report says `tool_hea`), and the day, week and project views add up its sessions' figures."""
    text = report(fixtures_dir, columns=250).stdout
    doc = json.loads(report(fixtures_dir, "--json").stdout)
    page = tmp_path / "r.html"
    assert report(fixtures_dir, "--html", str(page)).returncode == 0
    html = _html_tables(page.read_text(encoding="utf-8"))
    sessions = _text_table(text, "sessions, newest first")
    assert [r[0] for r in sessions] == ["fa812bfe", "ae4a77f8", "258c7280", "tool_hea", "subagent", "short"]
    assert len(sessions[0]) == 10  # id, started, span, project, model, calls, cache $, warm, cold, longest break
    assert html["sessions"] == sessions
    for title, ident in (("by day", "days"), ("by week", "weeks"), ("by project", "projects")):
        assert html[ident] == _text_table(text, title), ident
    by_id = {s["sessionId"]: s for s in doc["sessions"]}
    bt_json = json.loads(subprocess.run([sys.executable, "-m", "session_watcher", "backtest", "--json"],
                                        capture_output=True, text=True, env=env_for(fixtures_dir), timeout=300,
                                        check=True).stdout)["sessions"]
    bt_text = subprocess.run([sys.executable, "-m", "session_watcher", "backtest"], capture_output=True, text=True,
                             env={**env_for(fixtures_dir), "COLUMNS": "250"}, timeout=300, check=True).stdout
    bt_rows = {r[0]: r for r in (re.split(r"\s{2,}", ln.strip()) for ln in bt_text.splitlines()) if r}
    assert {s["sessionId"] for s in bt_json} == set(by_id)
    for s in bt_json:
        mine = by_id[s["sessionId"]]
        row = next(r for r in sessions if s["sessionId"].startswith(r[0]))
        dollars = f"${mine['cacheUsd']:,.2f}"
        assert (s["calls"], round(s["policies"]["actual"]["usd"], 2)) == (mine["calls"], round(mine["cacheUsd"], 2))
        assert (row[5], row[6]) == (f"{mine['calls']:,}", dollars)
        assert bt_rows[row[0]][1:3] == [str(s["calls"]), dollars], s["sessionId"]  # the report's short id
    # 258c7280 alone on its day and in its project: its figures there; the week holds all six
    days = {r[0]: r for r in html["days"]}
    projects = {r[0]: r for r in html["projects"]}
    assert days["2026-02-11"][2:4] == projects["spotter-gqc"][2:4] == ["152", "$10.88"]
    week = html["weeks"][0]
    assert week[1:4] == [str(len(by_id)), f"{sum(s['calls'] for s in by_id.values()):,}",
                         f"${sum(s['cacheUsd'] for s in by_id.values()):,.2f}"]


@pytest.mark.slow
def test_pages_include_a_codex_thread(tmp_path: Path) -> None:
    """`--pages` writes a Codex thread's page too, linked from its row (it wrote only Claude Code
    sessions' pages: 18 of 28 on a machine with ten Codex threads), with a row per call."""
    thread = "019f1f6f-311c-7543-b0f9-f126da3c5434"
    proj = tmp_path / "projects" / "-home-u-p"
    proj.mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "fixtures" / "codex" / f"rollout-{thread}.jsonl",
                proj / f"rollout-2026-07-01T20-46-51-{thread}.jsonl")
    shutil.copy(ROOT / "tests" / "fixtures" / "transcripts" / "short.jsonl", proj / "short.jsonl")
    out = tmp_path / "r.html"
    proc = report(tmp_path, "--projects", str(tmp_path / "projects"), "--html", str(out), "--pages")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"wrote {out} and 2 session pages in {tmp_path / 'r-sessions'}/\n"
    page = tmp_path / "r-sessions" / f"{thread}.html"
    assert f'href="r-sessions/{thread}.html"' in out.read_text()
    assert page.read_text().count('"kind":"call"') == 101  # the thread's calls (`replay`: 101)


@pytest.mark.slow
def test_html_to_standard_output(fixtures_dir: Path, tmp_path: Path) -> None:
    """`--html -` is the page on standard output, and nothing else: the report's, and one session's
    (both wrote a file named `-` in the working folder). `--pages` with it, a folder of pages with
    nowhere to go, is a command line that cannot work: exit 2, one line, nothing written."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    projects = str(fixtures_dir / "claude" / "projects")
    page = report(cwd, "--projects", projects, "--html", "-")
    assert (page.returncode, page.stderr) == (0, ""), page.stderr
    assert page.stdout.lower().startswith("<!doctype html>"), page.stdout[:200]
    assert page.stdout.rstrip().endswith("</html>"), page.stdout[-200:]
    assert "cache warmth" in page.stdout
    assert not (cwd / "-").exists()
    assert not (cwd / "--sessions").exists()
    refused = report(cwd, "--projects", projects, "--html", "-", "--pages")
    assert (refused.returncode, refused.stdout) == (2, "")
    assert "--pages" in one_message(refused.stderr)
    assert not (cwd / "-").exists()
    assert not (cwd / "--sessions").exists()
    transcript = next((fixtures_dir / "claude" / "projects").rglob("*.jsonl"))
    one = report(cwd, "session", str(transcript), "--html", "-")
    assert (one.returncode, one.stderr) == (0, ""), one.stderr
    assert one.stdout.lower().startswith("<!doctype html>"), one.stdout[:200]
    assert one.stdout.rstrip().endswith("</html>"), one.stdout[-200:]
    assert not (cwd / "-").exists()
    written = tmp_path / "page.html"
    assert report(cwd, "session", str(transcript), "--html", str(written)).returncode == 0
    digits = re.compile(r"\d")  # the same page, but the figures priced at the clock's time
    assert digits.sub("", written.read_text()) == digits.sub("", one.stdout)


@pytest.mark.slow
def test_html_with_no_cold_start_has_no_table_of_causes(tmp_path: Path) -> None:
    """Sessions that never ran cold (a resumed one's first call read from the cache): the page says
    "Cold starts: 0", as the text report does, with no table of shares of nothing ("undefined" each)."""
    proj = tmp_path / "claude" / "projects" / "-home-u-p"
    Transcript("allwarm").call(T0, *WARM).call(T0 + 9, *WARM).call(T0 + 20, *WARM).write(proj)
    _, page = html_page(tmp_path)
    assert "<h2>Cold starts: 0</h2>" in page
    assert "undefined" not in page
    assert 'id="causes"' not in page
    assert report(tmp_path, "--projects", str(proj.parent)).stdout.count("cold starts: 0") == 1


@pytest.mark.slow  # one process: the handoff modules not imported
@pytest.mark.parametrize("kept", ["none", "folder", "index"])
def test_the_restarts_taken_read_wherever_a_handoff_was_taken(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kept: str) -> None:
    """`restarts_taken` reads the handoffs taken here (and prices them) when their folder or their
    index is there, each alone; with neither, none, and no handoff module's import."""
    import session_watcher.sessions.restarts as restarts_module
    from session_watcher.cli.report import restarts_taken
    from session_watcher.state import handoffs

    monkeypatch.setenv("SESSION_WATCHER_HOME", str(tmp_path / "home"))
    asked: list[bool] = []

    def from_machine() -> dict[str, Any]:
        asked.append(True)
        return {"restartsTaken": [{"kind": "handoff"}]}

    monkeypatch.setattr(restarts_module, "from_machine", from_machine)
    sid = "0a1b2c3d-0000-4000-8000-000000000001"
    os.makedirs(os.path.dirname(handoffs.folder("taken")), mode=0o700)
    if kept == "folder":
        os.makedirs(handoffs.folder("taken"), mode=0o700)
        Path(handoffs.taken_file(sid)).write_text("{}")
    elif kept == "index":
        Path(handoffs.index_file()).write_text(sid + "\n")
    got = restarts_taken()
    assert got == ([] if kept == "none" else [{"kind": "handoff"}])
    assert asked == ([] if kept == "none" else [True])
    probe = ("import sys; from session_watcher.cli.report import restarts_taken; "
             "print(restarts_taken(), 'session_watcher.state.handoffs' in sys.modules)")
    out = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True, check=True, timeout=60,
                         env={**env_for(tmp_path), "SESSION_WATCHER_HOME": str(tmp_path / "other")}, cwd=ROOT)
    assert out.stdout.split() == ["[]", "False"]


@pytest.mark.slow
def test_a_transcript_that_cannot_be_read_is_named_not_left_out_silently(tmp_path: Path) -> None:
    """A `.jsonl` the report cannot read (a folder so named, a link to nothing; a file of mode 000
    where the user is not root) was left out without a word, where `backtest` and `export` name
    theirs. `report` says so on stderr, on each run (the second from the index's kept listing), and
    its `--json` names them in `unreadable`; the figures are those of the readable ones alone."""
    import json
    import shutil

    from tests.oracle import TRANSCRIPTS

    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    shutil.copy(TRANSCRIPTS / "short.jsonl", proj / "short.jsonl")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    clean = report(tmp_path / "a", "--json", "--projects", str(tmp_path / "projects"))
    assert clean.returncode == 0, clean.stderr
    assert clean.stderr == ""
    assert "unreadable" not in json.loads(clean.stdout)  # none: the document as before
    unread = [proj / "folder.jsonl", proj / "nothing.jsonl"]
    unread[0].mkdir()
    unread[1].symlink_to(tmp_path / "gone.jsonl")
    if os.geteuid() != 0:  # root reads a file of mode 000
        shutil.copy(TRANSCRIPTS / "short.jsonl", proj / "locked.jsonl")
        (proj / "locked.jsonl").chmod(0)
        unread.insert(1, proj / "locked.jsonl")
    for run in ("first", "again"):
        got = report(tmp_path / "b", "--json", "--projects", str(tmp_path / "projects"), columns=1000)
        assert got.returncode == 0, got.stderr
        assert got.stderr.splitlines() == [f"session-watcher report: left out {p}: not a file it can read"
                                           for p in unread], run
        doc = json.loads(got.stdout)
        assert doc.pop("unreadable") == [str(p) for p in unread]
        want = json.loads(clean.stdout)
        assert doc["sessions"] == want["sessions"]
        assert doc["totals"] == want["totals"]
    text = report(tmp_path / "b", "--projects", str(tmp_path / "projects"), columns=1000)
    assert f"session-watcher report: left out {unread[0]}: not a file it can read" in text.stderr
