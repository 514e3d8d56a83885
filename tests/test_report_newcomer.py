"""`report` for a newcomer: an empty one says which folders it searched; a warm break reads as warm;
`--html --pages` links each session row to its page."""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING

import pytest

from tests.oracle import sw

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

if TYPE_CHECKING:
    from pathlib import Path


def test_empty_report_names_the_folders_it_searched(tmp_path: Path) -> None:
    """It names the folders that are there, only those (it listed the four folders both agents may
    use, on a new user's machine none of them there), or says that none is."""
    fresh = tmp_path / "home"
    claude = fresh / ".claude"
    env = {**os.environ, "HOME": str(fresh), "CLAUDE_CONFIG_DIR": str(claude),
           "XDG_CONFIG_HOME": str(fresh / ".config")}
    proc = sw("report", env=env)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert " ".join(out.split()).startswith("no Claude Code or Codex sessions found: no folder of Claude Code's or "
                                            "Codex's sessions exists yet ("), out
    assert max(map(len, out.splitlines())) <= 80, out  # within the width, as every command's text (it was 95)
    assert str(fresh) not in out
    assert "--projects DIR" in out
    html = tmp_path / "none.html"
    assert sw("report", "--html", str(html), env=env).returncode == 0
    assert ('<p id="empty">No Claude Code or Codex sessions found: no folder of Claude Code&#x27;s or Codex&#x27;s '
            "sessions exists yet.</p>") in html.read_text()
    (claude / "projects").mkdir(parents=True)
    out = sw("report", env=env).stdout.decode()
    assert out.startswith(f"no Claude Code or Codex sessions found; searched:\n  {claude}/projects\n"), out
    assert max(len(x) for x in out.splitlines() if str(claude) not in x) <= 80, out  # a path: a line of its own
    out = sw("report", "--since", "1d", env=env).stdout.decode()
    assert out.startswith("no Claude Code or Codex session has calls since "), out
    assert out.endswith(f"; searched:\n  {claude}/projects\n"), out
    assert ".codex" not in out  # not there: not named
    empty = tmp_path / "nowhere"
    empty.mkdir()
    out = sw("report", "--projects", str(empty), env=env).stdout.decode()
    assert f"searched:\n  {empty}\n" in out
    assert str(claude) not in out
    html = tmp_path / "empty.html"
    assert sw("report", "--projects", str(empty), "--html", str(html)).returncode == 0
    assert f'<p id="empty">No Claude Code or Codex sessions found; searched: {empty}.</p>' in html.read_text()
    doc = json.loads(sw("report", "--projects", str(empty), "--json").stdout)
    assert doc["index"]["roots"] == [str(empty)]
    assert doc["sessions"] == []


def test_warm_break_does_not_read_as_a_cost() -> None:
    from session_watcher.reports.fmt import gap_sentence

    text = gap_sentence({"seconds": 4, "cold": False, "tokensRecreated": 4500, "usd": 0.03})
    assert text == ("your longest break (4 s) stayed warm: the next call read the cache; "
                    "it wrote 4.5k new tokens ($0.03)")
    cold = gap_sentence({"seconds": 3 * 3600, "cold": True, "tokensRecreated": 340_000, "usd": 3.4})
    assert cold == "your 3 h break cost 340k tokens of re-reading ($3.40)"


def test_report_html_pages_link_each_row_to_its_session_page(tmp_path: Path) -> None:
    from tests.oracle import TRANSCRIPTS

    out = tmp_path / "out" / "report.html"
    out.parent.mkdir()
    proc = sw("report", "--projects", str(TRANSCRIPTS), "--html", str(out), "--pages",
              "--index", str(tmp_path / "index.db"))
    assert proc.returncode == 0, proc.stderr
    page = out.read_text()
    ids = sorted(p.stem for p in TRANSCRIPTS.glob("*.jsonl"))
    pages = out.parent / "report-sessions"
    assert proc.stdout.decode().strip() == f"wrote {out} and {len(ids)} session pages in {pages}/"
    # the cell shows the short id every command takes; its title holds the whole id
    links = re.findall(r'<td class="sid"[^>]*title="([^"]+)"><a href="([^"]+)">([^<]+)</a>', page)
    assert sorted(sid for sid, _, _ in links) == ids
    for sid, href, short in links:
        assert sid.startswith(short)
        assert len(short) >= 8 or short == sid
        assert href == f"report-sessions/{sid}.html"
        target = out.parent / href
        assert '<svg id="waterfall"' in target.read_text()  # the session page itself
        assert oct(target.stat().st_mode & 0o777) == "0o600"
    # without --pages: the same rows, no links and no folder
    plain = tmp_path / "plain.html"
    assert sw("report", "--projects", str(TRANSCRIPTS), "--html", str(plain),
              "--index", str(tmp_path / "index.db")).returncode == 0
    assert "<a href=" not in plain.read_text()
    assert not (tmp_path / "plain-sessions").exists()
    assert sw("report", "--pages").returncode == 2  # --pages needs --html


def _report_names(tmp_path: Path, name: str, lines: list[bytes]) -> list[tuple[object, object]]:
    """`report --json`'s (projectName, cwd) of each session, over a Claude Code folder holding one
    transcript of `lines`, in a home of its own."""
    claude = tmp_path / name / ".claude"
    folder = claude / "projects" / "-x"
    folder.mkdir(parents=True)
    (folder / "short.jsonl").write_bytes(b"".join(lines))
    env = {**os.environ, "HOME": str(tmp_path / name), "CLAUDE_CONFIG_DIR": str(claude),
           "SESSION_WATCHER_HOME": str(tmp_path / name / "sw"), "CODEX_HOME": str(tmp_path / name / "codex")}
    proc = sw("report", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    return [(s["projectName"], s["cwd"]) for s in json.loads(proc.stdout)["sessions"]]


def test_a_spaced_transcript_names_its_project_as_a_compact_one(tmp_path: Path) -> None:
    """A transcript written as spaced JSON (`"cwd": "/x"`, keys in another order) is named by its
    working folder as the same transcript written compact (it fell back to the projects folder's
    name); a `"cwd"` that is a value, or a key whose value is null, is passed over as before."""
    from tests.test_report_fast_path import FIXTURES

    compact = (FIXTURES / "transcripts" / "short.jsonl").read_bytes().splitlines(keepends=True)
    spaced = [json.dumps(dict(reversed(list(json.loads(x).items())))).encode() + b"\n" for x in compact]
    assert b'"cwd": "/home/marco/projects/spotter"' in b"".join(spaced)
    assert _report_names(tmp_path, "compact", compact) == [("spotter", "/home/marco/projects/spotter")]
    assert _report_names(tmp_path, "spaced", spaced) == [("spotter", "/home/marco/projects/spotter")]
    other = [b'{"type": "x", "name": "cwd", "cwd" :\tnull}\n', *spaced]
    assert _report_names(tmp_path, "other", other) == [("spotter", "/home/marco/projects/spotter")]


def test_replay_names_the_project_of_a_transcript_opened_by_many_summaries_as_report(tmp_path: Path) -> None:
    """A transcript whose first 250 lines are `summary` records (a resumed session's) names its cwd
    past them: `report` found it (its search reads the first 64 kB), `replay` (and the hooks, the live
    exporter and `export --otlp`, `transcript_cwd`) read 201 lines and named no project."""
    from tests.test_report_fast_path import FIXTURES

    summaries = [json.dumps({"type": "summary", "summary": f"earlier work {i}", "leafUuid": f"u{i}"},
                            separators=(",", ":")).encode() + b"\n" for i in range(250)]
    lines = [*summaries, *(FIXTURES / "transcripts" / "short.jsonl").read_bytes().splitlines(keepends=True)]
    assert sum(map(len, summaries)) < 64 << 10
    assert _report_names(tmp_path, "many", lines) == [("spotter", "/home/marco/projects/spotter")]
    home = tmp_path / "many"
    env = {**os.environ, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"), "COLUMNS": "200",
           "SESSION_WATCHER_HOME": str(home / "sw"), "CODEX_HOME": str(home / "codex")}
    proc = sw("replay", str(home / ".claude" / "projects" / "-x" / "short.jsonl"), env=env)
    assert proc.returncode == 0, proc.stderr
    said = [x.split() for x in proc.stdout.decode().splitlines() if x.startswith("project ")]
    assert said == [["project", "/home/marco/projects/spotter"]], proc.stdout


def test_a_folder_nested_in_a_record_names_no_project_in_report_as_in_replay(tmp_path: Path) -> None:
    """A transcript opening with a record that has no `cwd` of its own but a tool's result holding
    `{"cwd": "/a/nested"}`, then records naming the session's folder: `report` named the project
    `nested` (the first "cwd" key at any depth), `replay` (a record's own `cwd`) `spotter`; both say
    `spotter` now."""
    from tests.test_report_fast_path import FIXTURES

    first = (b'{"type":"user","message":{"role":"user","content":"x"},'
             b'"toolUseResult":{"stdout":"","cwd":"/a/nested"},"uuid":"n1"}\n')
    lines = [first, *(FIXTURES / "transcripts" / "short.jsonl").read_bytes().splitlines(keepends=True)]
    assert _report_names(tmp_path, "nested", lines) == [("spotter", "/home/marco/projects/spotter")]
    home = tmp_path / "nested"
    env = {**os.environ, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"), "COLUMNS": "200",
           "SESSION_WATCHER_HOME": str(home / "sw"), "CODEX_HOME": str(home / "codex")}
    proc = sw("replay", str(home / ".claude" / "projects" / "-x" / "short.jsonl"), env=env)
    assert proc.returncode == 0, proc.stderr
    said = [x.split() for x in proc.stdout.decode().splitlines() if x.startswith("project ")]
    assert said == [["project", "/home/marco/projects/spotter"]], proc.stdout
