"""The CLI's messages on stderr: one per error or note, within COLUMNS (`say`). Apart from the
package's front door (`session_watcher.cli`), so the command modules it dispatches to use it too
without an import cycle."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

# why a log named as one is left out where it is no file (a folder so named, a link to nothing):
# `report`, `export`, `backtest`, and of a session's `subagents/` folder `replay`, `status`, `health`
NOT_A_FILE = "not a file it can read"


def say(message: str, keep: Sequence[str] = (), prog: str = "session-watcher") -> None:
    """One message on stderr, `prog: message`, whatever it holds (a newline, an escape, a lone
    surrogate: one field's escapes), wrapped at spaces within COLUMNS (stderr's terminal, else 80) as
    every command's text, its later lines indented by two; each of `keep` (a path, which may hold a
    space) is never broken, and no word is cut (a path or an id stays whole, to be copied)."""
    from session_watcher.base.terminal import columns
    from session_watcher.core.text import one_line, wrap

    lines = wrap(one_line(f"{prog}: {message}"), columns(2), keep=[one_line(k) for k in keep if k])
    try:
        print("\n".join(lines), file=sys.stderr, flush=True)
    except OSError:  # stderr gone too: the exit code says it
        pass


# what the commands that read the config (`cli.READS_CONFIG`) say in their help of a config file that cannot be used
LEFT_OUT_HELP = "A config file left out for an error is named once on stderr, in the words of `doctor`."

_said: set[str] = set()  # the config errors `say_left_out` said in this process


def say_left_out(errors: Sequence[str], files: Sequence[str]) -> None:
    """Say on stderr, once per process and error, each config file a command (`cli.READS_CONFIG`) ran
    without (`errors`: `config.load_layers`' for the config `files`, each path kept whole), in the
    words `doctor` uses (`config.left_out`)."""
    from session_watcher.base import config

    for error in errors:
        if error not in _said:
            _said.add(error)
            say(config.left_out(error), keep=files)


def json_text(doc: object, indent: int | None = None, separators: tuple[str, str] | None = None) -> str:
    """`json.dumps(doc, ...)` as every JSON the CLI writes: standard JSON, so a figure JSON cannot hold
    (NaN, an infinity; no price the config takes makes one: `config.PRICE_FLOOR`) is written null.
    On one line (no `indent`), through `reports.jsontext`'s encoders, which write the report's text
    by the same rule without `json`'s imports (`report --json` to a pipe or a file: its text kept in
    the index is made only by them and sent as it is)."""
    if indent is None and separators in (None, (", ", ": "), (",", ":")):
        from session_watcher.reports import jsontext

        return jsontext.dumps(doc) if separators == (",", ":") else jsontext.dumps_spaced(doc)
    import json

    try:
        return json.dumps(doc, indent=indent, separators=separators, allow_nan=False)
    except ValueError:
        from session_watcher.core.fastjson import finite

        return json.dumps(finite(doc), indent=indent, separators=separators, allow_nan=False)
