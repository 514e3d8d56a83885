"""`core.named.NamedTuple`: the classes `typing.NamedTuple` makes, without importing typing; and a
warm report's process, which no longer imports typing at all."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import typing

import pytest

if typing.TYPE_CHECKING:
    from pathlib import Path
    from typing import NamedTuple  # what the class claims to be, as the package's modules write it
else:
    from session_watcher.core.named import NamedTuple


class Point(NamedTuple):
    """A point."""

    x: int
    y: int = 0
    label: str | None = None

    def moved(self, dx: int) -> Point:
        return self._replace(x=self.x + dx)

    @property
    def norm1(self) -> int:
        return abs(self.x) + abs(self.y)


class TypingPoint(typing.NamedTuple):
    """A point."""

    x: int
    y: int = 0
    label: str | None = None


def test_the_class_is_typings() -> None:
    p = Point(3)
    t = TypingPoint(3)
    assert p == t  # type: ignore[comparison-overlap]  # two classes, equal as tuples
    assert t == (3, 0, None)
    assert Point._fields == TypingPoint._fields == ("x", "y", "label")
    assert Point._field_defaults == TypingPoint._field_defaults == {"y": 0, "label": None}
    assert repr(p) == repr(t).replace("TypingPoint", "Point")
    assert Point.__doc__ == "A point."
    assert Point.__module__ == __name__
    assert Point.__qualname__ == "Point"
    assert p.moved(2) == Point(5)
    assert Point(-1, 2).norm1 == 3
    assert Point._make([1, 2, "a"]).label == "a"
    assert pickle.loads(pickle.dumps(Point(1, 2, "b"))) == Point(1, 2, "b")
    assert isinstance(p, tuple)
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]


def test_a_field_without_a_default_after_one_with_is_refused() -> None:
    with pytest.raises(TypeError, match="without a default"):
        type("Bad", (NamedTuple,), {"__annotations__": {"a": "int", "b": "int"}, "a": 1, "__module__": __name__})


@pytest.mark.slow
def test_a_warm_report_imports_no_typing(tmp_path: Path) -> None:
    """typing cost a warm report's process about a tenth of its start-up (docs/benchmarks.md); the
    sqlite3 package's datetime and the pool's signal are none of its business either."""
    from tests.test_report_index import call_line

    project = tmp_path / "projects" / "-home-a"
    project.mkdir(parents=True)
    (project / "s1.jsonl").write_bytes(call_line("m1", 10, 20) + b"\n" + call_line("m2", 30, 5) + b"\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "SESSION_WATCHER"))}
    env |= {"SESSION_WATCHER_HOME": str(tmp_path / "home"), "HOME": str(tmp_path / "home")}
    argv = [sys.executable, "-I", "-X", "importtime", "-m", "session_watcher", "report", "--json",
            "--projects", str(tmp_path / "projects"), "--index", str(tmp_path / "i.sqlite3")]
    for _ in range(2):  # cold, then warm
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
        assert '"sessions"' in done.stdout
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "session_watcher.reports.collect" in imported
    assert "_sqlite3" in imported
    assert not imported & {"typing", "datetime", "sqlite3.dbapi2", "signal"}
