"""What the installers say, at a terminal-less run's 80 columns, in process: the lines of `link`, of
Codex's untrust and of a settings file that stops the install wrap at their spaces (core.text.fit, as
the rest of the CLI), a path whole, a line to copy whole on its own. They read 120-230 columns."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from session_watcher.cli import install

if TYPE_CHECKING:
    from pathlib import Path

DEEP = "a-folder-deep-enough-that-its-paths-are-long"


@pytest.fixture(autouse=True)
def _no_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # the width of a run without a terminal: 80


def _fits(lines: list[str], whole: tuple[str, ...] = ()) -> None:
    """Each line within 80 columns, but a lone word (a path) and the lines to copy (`whole`)."""
    long = [line for line in lines if len(line) > 80 and line not in whole]
    assert all(" " not in line.strip() for line in long), long


def test_the_link_step_wraps_its_words_and_keeps_the_line_to_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / DEEP / "home"
    home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_BIN_HOME", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    target = str(tmp_path / DEEP / "data" / "session-watcher" / "venv" / "bin" / "session-watcher")
    assert install.link(target) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    export = '    export PATH="$HOME/.local/bin:$PATH"'
    _fits(lines)
    folder = home / ".local" / "bin"
    assert len(str(folder / "session-watcher")) > 80  # a path longer than the room: alone, whole
    assert lines[:2] == ["command:", str(folder / "session-watcher")]
    assert lines[-2:] == ["", export]
    assert " ".join(out.split()) == " ".join(
        f"command: {folder / 'session-watcher'} {folder} is not on your PATH: add this line to ~/.profile (or "
        f"your shell's startup file), then open a new terminal: {export}".split())
    # on PATH: one line of words
    monkeypatch.setenv("PATH", f"{folder}:/usr/bin")
    assert install.link(target) == 0
    out = capsys.readouterr().out
    _fits(out.splitlines())
    assert len(out.splitlines()) > 1
    assert " ".join(out.split()) == f"command: session-watcher ({folder / 'session-watcher'}; {folder} is on your PATH)"


def test_a_settings_file_that_stops_the_install_is_named_in_wrapped_lines(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """`main`, as install.sh runs it: the message of a settings.json it cannot merge (`//` comments)
    wrapped as the rest, nothing changed."""
    claude = tmp_path / DEEP / "claude"
    claude.mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    text = '{\n  // my model\n  "model": "opus"\n}\n'
    (claude / "settings.json").write_text(text)
    with pytest.raises(SystemExit) as stopped:
        install.main(["add", str(tmp_path / "venv" / "bin")])
    said = str(stopped.value.code)
    lines = said.splitlines()
    assert len(lines) > 1
    _fits(lines)
    assert " ".join(said.split()).startswith(f"{claude / 'settings.json'}: not valid JSON (line 2, column 3: ")
    assert " ".join(said.split()).endswith("comments (// or /* */) and trailing commas are not JSON: nothing was "
                                           "changed; fix it, or add session-watcher's hooks by hand (README: Install)")
    assert (claude / "settings.json").read_text() == text


def test_codex_untrust_wraps_what_it_says(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from session_watcher.cli.codex_trust import untrust

    home = tmp_path / DEEP / "codex"
    home.mkdir(parents=True)
    key = f"{home / 'hooks.json'}:stop:0:0"
    (home / "config.toml").write_text(f'model = "gpt-5.5"\n\n[hooks.state."{key}"]\ntrusted_hash = "sha256:aa"\n')
    assert untrust(str(home), {key: "sha256:aa"}) == 1
    out = capsys.readouterr().out
    _fits(out.splitlines())
    [backup] = [p for p in home.iterdir() if ".bak-session-watcher-" in p.name]
    assert " ".join(out.split()) == (
        f"codex: removed the 1 trust entries the install wrote from {home / 'config.toml'} "
        f"backup: made {backup} (the file as it was; it holds settings of yours)")
