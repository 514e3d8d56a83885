"""`report` over every agent's sessions on the machine: Claude Code's projects and Codex's rollouts
(`$CODEX_HOME/sessions`, archived ones too), each session with its agent, the totals by agent, and a
Codex thread's calls and tokens those of `replay` (the rollout decoder the hooks use); the text
gains an agent column and a table by agent only when two agents are there."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.codex_lines import FIXTURES
from tests.oracle import TRANSCRIPTS, sw

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

THREADS = ("019f1f6f-311c-7543-b0f9-f126da3c5434", "019f6bcb-eb00-7ea1-99ef-7fe2d29e2bba")
CLAUDE = "fa812bfe-b295-4cca-9c2f-fdf01028cb46"


def _machine(home: Path, archived: bool = True) -> None:
    live = home / ".codex" / "sessions" / "2026" / "07" / "01"
    old = home / ".codex" / "archived_sessions"
    for folder, thread in zip((live, old if archived else live), THREADS, strict=True):
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURES / f"rollout-{thread}.jsonl", folder / f"rollout-2026-07-01T00-00-00-{thread}.jsonl")
    project = Path(os.environ.get("CLAUDE_CONFIG_DIR") or home / ".claude") / "projects" / "-proj"
    project.mkdir(parents=True)
    shutil.copy(TRANSCRIPTS / f"{CLAUDE}.jsonl", project / f"{CLAUDE}.jsonl")


def _report(*args: str) -> dict[str, Any]:
    got = sw("report", "--json", *args)
    assert got.returncode == 0, got.stderr
    return dict(json.loads(got.stdout))


def test_every_agents_sessions_with_their_agent_and_totals_by_agent() -> None:
    home = Path(os.environ["HOME"])
    _machine(home)
    doc = _report()
    schema = json.loads((Path(__file__).resolve().parents[1] / "docs" / "report-schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    by_id = {s["sessionId"]: s for s in doc["sessions"]}
    agent = {k: s["agent"] for k, s in by_id.items()}
    assert agent == {THREADS[0]: "codex", THREADS[1]: "codex", CLAUDE: "claude-code"}
    for thread in THREADS:
        got = sw("replay", "--json", thread)
        assert got.returncode == 0, got.stderr
        replayed = json.loads(got.stdout)
        assert by_id[thread]["calls"] == replayed["calls"]
        t = by_id[thread]["tokens"]
        assert (t["cacheRead"], t["cacheWrite"], t["output"]) == (
            replayed["tokenUsage"]["cacheRead"], replayed["tokenUsage"]["cacheWrite"], replayed["tokenUsage"]["output"])
    assert by_id[THREADS[0]]["calls"] == 101
    agents = {a["agent"]: a for a in doc["totals"]["agents"]}
    assert agents["codex"]["sessions"] == 2
    assert agents["codex"]["calls"] == by_id[THREADS[0]]["calls"] + by_id[THREADS[1]]["calls"]
    assert agents["claude-code"]["calls"] == by_id[CLAUDE]["calls"]
    assert agents["codex"]["cacheUsd"] == pytest.approx(sum(by_id[t]["cacheUsd"] for t in THREADS))
    # a second run reads nothing again and gives the same
    again = _report()
    assert again["index"]["skipped"] == 3
    assert again["totals"]["agents"] == doc["totals"]["agents"]
    text = sw("report", env={**os.environ, "COLUMNS": "160"}).stdout.decode()
    assert "agent" in text.splitlines()[text.splitlines().index("sessions, newest first") + 1]
    assert "by agent" in text
    page = Path(os.environ["HOME"]) / "report.html"
    assert sw("report", "--html", str(page)).returncode == 0
    html = page.read_text()
    assert "<thead><tr><th>id</th><th>agent</th>" in html
    agents_table = html[html.index('<table id="agents"'):]
    assert '<tr><td>codex</td><td class="n">2</td>' in agents_table[:agents_table.index("</table>")]


def test_a_grown_rollout_is_read_again_from_its_start() -> None:
    """A rollout's line means what the lines before it say (the model, the running total): the
    index reads a grown one whole, and its calls are those of replay."""
    home = Path(os.environ["HOME"])
    _machine(home, archived=False)
    path = next((home / ".codex" / "sessions").rglob(f"*{THREADS[0]}.jsonl"))
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[: len(lines) // 2]))
    first = {s["sessionId"]: s for s in _report()["sessions"]}
    with path.open("ab") as fh:
        fh.write(b"".join(lines[len(lines) // 2:]))
    doc = _report()
    assert doc["index"]["reread"] == 1
    assert first[THREADS[0]]["calls"] < {s["sessionId"]: s for s in doc["sessions"]}[THREADS[0]]["calls"] == 101


def test_with_projects_named_only_those_are_read(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    _machine(home)
    only = tmp_path / "only"
    only.mkdir()
    shutil.copy(TRANSCRIPTS / f"{CLAUDE}.jsonl", only / f"{CLAUDE}.jsonl")
    doc = _report("--projects", str(only))
    assert [(s["sessionId"], s["agent"]) for s in doc["sessions"]] == [(CLAUDE, "claude-code")]
    text = sw("report", "--projects", str(only), env={**os.environ, "COLUMNS": "160"}).stdout.decode()
    assert "by agent" not in text  # one agent: the text as it was
    page = tmp_path / "report.html"
    assert sw("report", "--projects", str(only), "--html", str(page)).returncode == 0
    assert 'id="agents"' not in page.read_text()
    assert "<th>agent</th>" not in page.read_text()


def test_every_fixture_threads_calls_and_tokens_are_replays() -> None:
    """Each of the ten fixture rollouts counts in the report as `replay` counts it; three end in a
    `token_count` line without its newline (019d7739, 019dc0d3, 019e260b): the report read one call
    fewer than replay until it took such a last line as the hooks do (`state.reader.whole_record`)."""
    doc = _report("--projects", str(FIXTURES))
    by_id = {s["sessionId"]: s for s in doc["sessions"]}
    rollouts = sorted(FIXTURES.glob("rollout-*.jsonl"))
    assert len(by_id) == len(rollouts) == 10
    unterminated = [p for p in rollouts if not p.read_bytes().endswith(b"\n")]
    assert len(unterminated) >= 3
    for path in rollouts:
        got = sw("replay", "--json", str(path))
        assert got.returncode == 0, got.stderr
        replayed = json.loads(got.stdout)
        mine = by_id[replayed["sessionId"]]
        t, r = mine["tokens"], replayed["tokenUsage"]
        assert (mine["calls"], t["cacheRead"], t["cacheWrite"], t["output"]) == (
            replayed["calls"], r["cacheRead"], r["cacheWrite"], r["output"]), path.name


@pytest.mark.parametrize("command", ["report", "export"])
def test_projects_help_names_codex_rollouts_too(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`--projects` takes a folder of Codex rollouts as well (agents.claimed); its help said "folders
    of Claude Code projects" to a Codex user."""
    from session_watcher import cli

    assert cli.main([command, "--help"]) == 0  # argparse's exit is the handler's (cli.handle)
    text = " ".join(capsys.readouterr().out.split())
    assert "(Claude Code projects, Codex rollouts)" in text


def test_a_codex_threads_project_is_its_working_folders_as_claude_codes_is() -> None:
    """A Codex thread's `project` is the project folder of its working folder, the name Claude Code
    gives that folder's sessions (`-Users-jdx-src-fnox` for /Users/jdx/src/fnox), so one folder's
    sessions of both agents have one `project`; it was `codex`, the agent's name, for every thread."""
    home = Path(os.environ["HOME"])
    _machine(home)
    by_id = {s["sessionId"]: s for s in _report()["sessions"]}
    thread = by_id[THREADS[0]]
    assert (thread["cwd"], thread["projectName"]) == ("/Users/jdx/src/fnox", "fnox")
    assert thread["project"] == "-Users-jdx-src-fnox"
    assert by_id[CLAUDE]["project"] == "-proj"  # Claude Code's: the folder it is in, as ever


@pytest.mark.parametrize(("cwd", "folder"), [
    ("/work/my app", "-work-my-app"),
    ("D:\\x", "D--x"),
    # past U+FFFF a character is two UTF-16 units, two dashes (JavaScript's replace); é is one
    ("/w/a\U0001f600b \u00e9", "-w-a--b--"),
    # over 200: the first 200 and Claude Code's base-36 hash of the whole folder (a negative one too)
    ("/Users/jdx/" + "deep-folder/" * 20 + "fn\u00f8x \U0001f600",
     "-Users-jdx" + "-deep-folder" * 15 + "-deep-fold-bun8dw"),
    ("/" + "z" * 230, "-" + "z" * 199 + "-xzspxt"),
])
def test_a_working_folder_is_named_as_claude_code_names_its_project_folder(cwd: str, folder: str) -> None:
    """The names Claude Code's own function gives these folders (its bundle's, run under Node:
    `replace(/[^a-zA-Z0-9]/g, "-")`, past 200 the first 200 and `-` a base-36 hash): a Codex thread in
    one of them is named as Claude Code's sessions there are. An emoji was one dash, and a long
    folder had no hash and all its characters."""
    from session_watcher.reports.collect import project_folder

    assert project_folder(cwd) == folder


def test_a_rollout_that_cannot_be_read_is_named_as_a_transcript_is() -> None:
    """A `rollout-*.jsonl` the report cannot read (a folder so named, a link to nothing; a file of mode
    000 where the user is not root) was left out without a word, where an unreadable Claude Code
    transcript is named: now both the same way, on stderr and in `--json`'s `unreadable`, the figures
    those of the readable logs alone."""
    home = Path(os.environ["HOME"])
    _machine(home, archived=False)
    clean = _report()
    day = home / ".codex" / "sessions" / "2026" / "07" / "01"
    folder = day / "rollout-2026-07-01T00-00-00-019f0000-0000-7000-8000-000000000001.jsonl"
    folder.mkdir()
    archived = home / ".codex" / "archived_sessions"
    nothing = archived / "rollout-2026-07-01T00-00-00-019f0000-0000-7000-8000-000000000002.jsonl"
    nothing.parent.mkdir(parents=True)
    nothing.symlink_to(home / "gone.jsonl")
    transcript = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / "-proj" / "folder.jsonl"
    transcript.mkdir()
    unread = sorted(map(str, (folder, nothing, transcript)))
    for run in ("first", "again"):
        got = sw("report", "--json", env={**os.environ, "COLUMNS": "1000"})
        assert got.returncode == 0, got.stderr
        assert sorted(got.stderr.decode().splitlines()) == sorted(
            f"session-watcher report: left out {p}: not a file it can read" for p in unread), run
        doc = json.loads(got.stdout)
        assert doc.pop("unreadable") == unread, run
        assert doc["sessions"] == clean["sessions"]
        assert doc["totals"] == clean["totals"]
