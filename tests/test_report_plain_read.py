"""A run that reads little (`parse.PLAIN_BELOW`: a warm report after a few calls were appended) reads
its lines the JSON way and never imports msgspec; one that reads more takes the schema's decoder.
Both give the same document (their rows line by line: `tests/test_decoders.py`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.reports import parse
from tests.test_report_index import call_line
from tests.test_report_warm import AE, copy_session, report
from tests.test_report_warm import projects as projects  # noqa: PLC0414 (the fixture)

if TYPE_CHECKING:
    from pathlib import Path


def grow(projects: Path, mid: str) -> None:
    with (projects / "-home-b" / "short.jsonl").open("ab") as fh:
        fh.write(call_line(mid, 40_000, 1_200, ts="2026-02-14T09:30:00.000Z"))


def without_index(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k != "index"}


def test_a_small_read_never_decodes_through_the_schema(
        projects: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(_line: bytes | bytearray, _digits: int) -> None:
        raise AssertionError("the schema's decoder on a small read")

    index = tmp_path / "i.sqlite3"
    first = report(projects, index)
    monkeypatch.setattr(parse, "decode_call", refused, raising=False)
    grow(projects, "msg_plain_1")
    warm = report(projects, index)
    assert warm["index"]["appended"] == 1
    assert without_index(warm) != without_index(first)
    monkeypatch.undo()
    assert without_index(warm) == without_index(report(projects, tmp_path / "cold.sqlite3"))


def test_a_large_read_takes_the_schema_with_the_same_document(
        projects: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = report(projects, tmp_path / "plain.sqlite3")
    decoded: list[int] = []
    real = parse._decoded

    def counting(line: bytes | bytearray, digits: int) -> Any:
        decoded.append(len(line))
        return real(line, digits)

    monkeypatch.setattr(parse, "_decoded", counting)
    monkeypatch.setattr(parse, "PLAIN_BELOW", 0)
    schema = report(projects, tmp_path / "schema.sqlite3")
    assert decoded
    assert without_index(schema) == without_index(plain)


@pytest.mark.slow
def test_a_warm_report_after_an_append_imports_no_msgspec(projects: Path, tmp_path: Path) -> None:
    """The CLI's `report --json` as programs run it: the cold run imports the schema, the warm run
    after one call was appended does not, and prints what a cold build prints."""
    code = ("import sys\nfrom session_watcher.cli import main\n"
            "rc = main(sys.argv[1:])\nsys.stdout.flush()\n"
            "sys.stderr.write('msgspec' in sys.modules and 'imported' or 'none')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SESSION_WATCHER")}
    env |= {"SESSION_WATCHER_HOME": str(tmp_path / "home"), "HOME": str(tmp_path / "home")}

    def run(index: str) -> tuple[dict[str, Any], str]:
        got = subprocess.run([sys.executable, "-c", code, "report", "--json", "--projects", str(projects),
                              "--index", str(tmp_path / index)], capture_output=True, text=True, env=env,
                             check=True, timeout=120)
        doc = json.loads(got.stdout)
        doc.pop("generatedAt")
        return without_index(doc), got.stderr

    grow(projects, "msg_cold_big")
    big = tmp_path / "big"  # a cold run over more than PLAIN_BELOW: the schema's decoder
    copy_session(AE, big)
    with (big / f"{AE}.jsonl").open("ab") as fh:
        fh.write(b'{"type":"progress","pad":"' + b"x" * parse.PLAIN_BELOW + b'"}\n')
    os.rename(big, projects / "-home-c")
    _cold, imported = run("i.sqlite3")
    assert imported == "imported"
    grow(projects, "msg_warm_small")
    warm, imported = run("i.sqlite3")
    assert imported == "none"
    cold, _ = run("cold.sqlite3")
    assert warm == cold
