"""The report's JSON text without `json`'s imports (`reports.jsontext`): `json.dumps`'s text, a
figure JSON cannot hold null (`cli.messages.json_text`'s rule); and the guard's log lines read as
`json.loads` reads them (`collect._guard_line`)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from session_watcher.core.fastjson import finite
from session_watcher.reports.collect import _guard_line
from session_watcher.reports.jsontext import dumps, dumps_spaced

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20)


@given(VALUES)
@example(math.nan)
@example({"a": [math.inf, -math.inf, 0.1 + 0.2, 1 << 80], "é\u2028\"": None})
def test_the_text_is_json_dumps_text(value: object) -> None:
    assert dumps(value) == json.dumps(finite(value), separators=(",", ":"), allow_nan=False)
    assert dumps_spaced(value) == json.dumps(finite(value), allow_nan=False)


def test_what_json_cannot_write_is_refused_alike() -> None:
    with pytest.raises(TypeError):
        dumps({"a": object()})
    with pytest.raises(TypeError):
        json.dumps({"a": object()})


@pytest.mark.parametrize("line", [
    b'{"sessionId":"s","ts":1.5,"afterTs":1}',
    b'\xef\xbb\xbf{"sessionId":"s"}',  # a byte-order mark: json reads past it, the C scanner alone does not
    b'{"ts":NaN}',
    b'  [1, 2] ',
    '{"a":"é"}'.encode("utf-16"),
])
def test_a_guard_line_is_read_as_json_reads_it(line: bytes) -> None:
    got, want = _guard_line(line), json.loads(line)
    assert json.dumps(got) == json.dumps(want)


@pytest.mark.parametrize("line", [b"garbage{", b"", b'{"a":1} x', b"\xff\xfe\xfa"])
def test_a_guard_line_json_refuses_is_refused(line: bytes) -> None:
    with pytest.raises(ValueError, match=r"\w"):
        json.loads(line)
    with pytest.raises(ValueError, match=r"\w"):
        _guard_line(line)


def test_another_c_encoder_falls_back_to_json(monkeypatch: pytest.MonkeyPatch) -> None:
    """`_json` is CPython's private module: where it is missing or its encoder takes other arguments,
    the text is `json.dumps`' all the same (never an error at the report's start)."""
    from session_watcher.reports import jsontext

    class Other:
        @staticmethod
        def make_encoder(*args: object) -> None:
            raise TypeError("make_encoder() takes 10 arguments")

    value = {"a": [1.5, math.inf, "é"], "b": None}
    for stand_in in (None, Other()):
        monkeypatch.setattr(jsontext, "_json", stand_in)
        assert jsontext._encoder(",", ":")(value) == json.dumps(finite(value), separators=(",", ":"))
        assert jsontext._encoder(", ", ": ")(value) == json.dumps(finite(value))
        assert "null" in jsontext._encoder(",", ":")(value)
