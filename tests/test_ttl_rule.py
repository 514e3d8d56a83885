"""tools/ttl_rule.py: a claimed TTL edge judged against the class's documented TTL; an OpenAI class,
which documents none, gets its claims counted, not judged (the tool used to stop with a KeyError)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tools import ttl_rule

if TYPE_CHECKING:
    import pytest

CODEX = Path(__file__).resolve().parent / "fixtures" / "codex"


def test_an_edge_is_right_within_one_bucket_of_the_documented_ttl() -> None:
    assert [ttl_rule.judged(e, "5m") for e in (None, 240, 300, 360, 600)] == ["none", "right", "right", "right",
                                                                              "wrong"]
    assert [ttl_rule.judged(e, "1h") for e in (1800, 3600)] == ["wrong", "right"]
    assert [ttl_rule.judged(e, "codex-10m") for e in (None, 600, 900)] == ["none", "claimed", "claimed"]


def test_codex_rollouts_get_their_claims_counted(capsys: pytest.CaptureFixture[str]) -> None:
    assert ttl_rule.main([str(CODEX)]) == 0
    lines = capsys.readouterr().out.splitlines()
    codex = [line for line in lines if " rule, codex-10m: " in line]
    assert len(codex) == 2  # the old rule and the new
    assert all("claimed" in line and "wrong 0.0%" in line for line in codex)
    # the Claude classes, without a return here, claim nothing
    assert all("none 100.0%" in line for line in lines if " rule, 5m: " in line or " rule, 1h: " in line)
