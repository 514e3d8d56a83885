"""The key table of docs/configuration.md and the key list of config.example.toml, written from the
one key table (session_watcher/base/config.py, KEYS) between each file's markers.

    .venv/bin/python tools/config_table.py            (rewrites what lies between the markers)
    .venv/bin/python tools/config_table.py --check    (exit 1, naming the file, when one has drifted)

tests/test_config_table.py runs the check: a key added, or a default or range changed, in KEYS
without running this fails there.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from session_watcher.base import config  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable

    from session_watcher.base.config import Key

GENERATED = "generated from session_watcher/base/config.py (KEYS) by tools/config_table.py; edit there"
DOCS_BEGIN, DOCS_END = f"<!-- keys: {GENERATED} -->", "<!-- end of keys -->"
EXAMPLE_BEGIN, EXAMPLE_END = f"# --- keys: {GENERATED} ---", "# --- end of keys ---"


def literal(value: object) -> str:
    """A default as TOML writes it (None: the key is unset)."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict):
        return "{}" if not value else "{ " + ", ".join(f"{k} = {literal(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def takes(k: Key) -> str:
    """What a key takes, in words (its error says the same: config.expected)."""
    shown = [literal(c) for c in k.choices if c not in k.aliases]
    if k.kind == "globs":
        text = (f"up to {config.MAX_GLOBS} globs of {config.MAX_GLOB_CHARS} characters, "
                f"{config.MAX_GLOBS_CHARS} in all")
    elif k.kind in ("number", "minutes", "seconds"):
        text = f"{k.low:g} to {k.high:g}" + ("" if k.kind == "number" else f" {k.kind}")
    elif k.kind == "whole":
        text = f"a whole number, {k.low:.0f} to {k.high:.0f}"
    elif k.kind == "choice":
        text = ", ".join(shown)
    elif k.kind == "list":
        text = "a list of " + ", ".join(shown)
    elif k.kind == "flag":
        text = ", ".join(["true", "false", *shown])
    elif k.kind == "url":
        text = "an http:// or https:// URL"
    else:
        text = f"a table of up to {config.MAX_TABLE} {k.kind}"
    if k.note:
        text += f" ({k.note})"
    if k.unset:
        text += f'; "": {k.unset}'
    return text


def docs_table() -> list[str]:
    rows = ["| key | default | takes | project file | |", "|---|---|---|---|---|"]
    for k in config.KEYS:
        cells = [f"`{k.name}`", f"`{literal(k.default)}`", takes(k), "yes" if k.project else "no", k.doc]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return rows


def example_list() -> list[str]:
    rows = [("key", "default", "project", "takes")]
    rows += [(k.name, literal(k.default), "yes" if k.project else "no", takes(k)) for k in config.KEYS]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return [("# " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[3]).rstrip()
            for r in rows]


def replaced(text: str, begin: str, end: str, body: list[str]) -> str:
    """`text` with the lines between the line `begin` and the line `end` replaced by `body`."""
    lines = text.split("\n")
    if lines.count(begin) != 1 or lines.count(end) != 1 or lines.index(begin) > lines.index(end):
        raise ValueError(f"expected one line {begin!r} and after it one line {end!r}")
    return "\n".join([*lines[: lines.index(begin) + 1], *body, *lines[lines.index(end):]])


FILES: dict[str, tuple[str, str, Callable[[], list[str]]]] = {
    "docs/configuration.md": (DOCS_BEGIN, DOCS_END, docs_table),
    "config.example.toml": (EXAMPLE_BEGIN, EXAMPLE_END, example_list),
}


def rendered(name: str, text: str) -> str:
    begin, end, body = FILES[name]
    return replaced(text, begin, end, body())


def stale(root: Path = ROOT) -> list[str]:
    """The files whose generated part differs from what KEYS gives."""
    return [name for name in FILES if rendered(name, (root / name).read_text()) != (root / name).read_text()]


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        drifted = stale()
        for name in drifted:
            print(f"{name}: its key table differs from KEYS; run tools/config_table.py", file=sys.stderr)
        return 1 if drifted else 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    for name in FILES:
        path = ROOT / name
        path.write_text(rendered(name, path.read_text()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
