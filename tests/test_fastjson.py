"""core.fastjson: the same answers as json, on every CPython it runs on, without importing json or re.

Syntax errors surface differently by version (3.11: SystemError from the C scanner; 3.12+: it
imports json.decoder and raises JSONDecodeError); both must come out as JSONError. The interpreter
checks run under this venv's Python and, when present, every other CPython 3.11+ that pyenv has
(3.13 on the CI image), as whole processes with only the project folder on the path.
"""

from __future__ import annotations

import ast
import glob
import json
import subprocess
import sys
from pathlib import Path

import pytest

from session_watcher.core import fastjson
from session_watcher.core.errors import JSONError

ROOT = Path(__file__).resolve().parent.parent

BROKEN = [
    b"{",
    b'{"a":}',
    b"[1,]",
    b"nul",
    b'"abc',
    b'{"a" 1}',
    b'{"a":1}x',
    b"\xff\xfe",
    b"",
    b"   ",
    b"[" * 100_000,
    b'{"a":1,}',
    b"NaN-",
]
GOOD = [b'{"a":[1,2.5,"x\\u00e9",null,true,false,{"b":{}}]}', b"  [ ]  ", b'"\\ud800"', b"-0", b"1.5e10"]


@pytest.mark.parametrize("raw", BROKEN)
def test_broken_is_jsonerror(raw: bytes) -> None:
    with pytest.raises(JSONError):
        fastjson.loads(raw)


@pytest.mark.parametrize("raw", GOOD)
def test_same_as_json(raw: bytes) -> None:
    assert fastjson.loads(raw) == json.loads(raw)
    assert fastjson.dumps(json.loads(raw)) == json.dumps(json.loads(raw), separators=(",", ":"))


def _interpreters() -> list[str]:
    found = {sys.executable}
    for exe in sorted(glob.glob("/root/.pyenv/versions/3.1[1-9]*/bin/python3.1[1-9]")):
        found.add(exe)
    return sorted(found)


CHECK = r"""
import sys
sys.path.insert(0, sys.argv[1])
from session_watcher.core import fastjson
doc = fastjson.loads(b'{"usage":{"input_tokens":3},"x":[1,"\\u00e9"]}')
assert doc == {"usage": {"input_tokens": 3}, "x": [1, "\u00e9"]}, doc
heavy = sorted(m for m in ("json", "re", "enum", "typing") if m in sys.modules)
bad = []
for raw in (b"{", b"[1,]", b'"abc', b'{"a" 1}', b"[" * 100000, b"\xff"):
    try:
        fastjson.loads(raw)
        bad.append(raw[:10])
    except fastjson.JSONError:
        pass
    except BaseException as exc:
        bad.append(type(exc).__name__)
print(repr((heavy, bad)))
"""


@pytest.mark.slow
@pytest.mark.parametrize("python", _interpreters())
def test_each_interpreter(python: str) -> None:
    r = subprocess.run([python, "-I", "-S", "-c", CHECK, str(ROOT)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    heavy, bad = ast.literal_eval(r.stdout.strip())
    assert heavy == []  # valid JSON imported none of json/re/enum/typing
    assert bad == []  # every broken document was a JSONError
