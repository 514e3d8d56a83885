"""What the hooks' import diet changed must mean what it meant: `clean`'s shortcut for ASCII text
gives what its character rule gives, and the pending handoff's stale limit read without the key
table is the config's own (tests/test_hot_imports.py holds the modules each path imports)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hypothesis import example, given
from hypothesis import strategies as st

from session_watcher.core.text import clean, is_control

if TYPE_CHECKING:
    import pytest


def by_character(text: str, keep: str) -> str:
    """`clean`'s rule, one character at a time (its loop, without the shortcuts)."""
    out = []
    for ch in text:
        if ch in keep or not is_control(ch):
            out.append(ch)
        elif ord(ch) <= 0xFF:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
    return "".join(out)


@given(st.text(st.characters(max_codepoint=0x7F)), st.sampled_from(["\n", "", "\n\t"]))
@example("a note\nits second line\n", "\n")
@example("a\tb\nc", "\n")
@example("a\x1b[2Jb\n", "\n")
@example("del\x7f\n", "\n")
@example("\n\t", "\n\t")
def test_clean_of_ascii_text_is_the_character_rule(text: str, keep: str) -> None:
    assert clean(text, keep) == by_character(text, keep)


@given(st.text(), st.sampled_from(["\n", "", "\n\t"]))
@example("a\nb\U000e0101", "\n")  # a variation selector after a kept newline: not ASCII, the loop
@example("a\u202eb\n", "\n")
def test_clean_of_any_text_escapes_what_the_rule_escapes(text: str, keep: str) -> None:
    got = clean(text, keep)
    if not text.isprintable():  # the one shortcut before the rule: a printable text as it is
        assert got == by_character(text, keep)


def test_the_handoff_stale_limit_is_the_default_without_a_config_file_and_the_files_else(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from session_watcher.base import config, config_cache, paths
    from session_watcher.hooks.inject import stale_s

    monkeypatch.setenv("SESSION_WATCHER_HOME", str(tmp_path / "home"))
    project = tmp_path / "proj"
    project.mkdir()
    assert config_cache.HANDOFF_STALE_MIN == config.DEFAULTS["handoff_stale_min"] == 180
    assert stale_s(str(project)) == 180 * 60.0
    user = Path(paths.user_config_file())
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("handoff_stale_min = 7\n")
    assert stale_s(str(project)) == 7 * 60.0
    user.write_text("handoff_stale_min = 'soon'\n")  # a file that cannot be used: the default
    assert stale_s(str(project)) == 180 * 60.0
    user.unlink()
    own = Path(paths.project_config_file(str(project)))
    own.parent.mkdir(parents=True, exist_ok=True)
    own.write_text("handoff_stale_min = 7\n")  # a user's key in a project's file: refused, the default
    assert stale_s(str(project)) == 180 * 60.0
