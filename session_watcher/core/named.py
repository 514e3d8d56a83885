"""`typing.NamedTuple`'s class syntax without importing `typing` (a report's process does not need it
otherwise, and importing it was a tenth of a warm report's start-up: docs/benchmarks.md). A module
on that path writes

    TYPE_CHECKING = False
    if TYPE_CHECKING:
        from typing import NamedTuple
    else:
        from session_watcher.core.named import NamedTuple

and its classes are what `typing.NamedTuple` makes of them: a `collections.namedtuple` of the
annotated fields, in order, with the class's values as the defaults, and its methods and docstring
(tests/test_named.py)."""

from __future__ import annotations

from collections import namedtuple

_OWN = frozenset({"__module__", "__qualname__", "__annotations__", "__orig_bases__", "__classcell__"})


class _Maker(type):
    def __new__(mcs, name: str, bases: tuple[type, ...], ns: dict[str, object]) -> type:
        if ns.get("_named_root"):
            return super().__new__(mcs, name, bases, ns)
        fields = list(ns.get("__annotations__", {}))  # type: ignore[call-overload]
        defaults = [ns[f] for f in fields if f in ns]
        if defaults and any(f not in ns for f in fields[len(fields) - len(defaults):]):
            raise TypeError(f"{name}: a field without a default follows one with a default")
        cls = namedtuple(name, fields, defaults=defaults, module=str(ns["__module__"]))  # type: ignore[misc]
        for key, value in ns.items():
            if key not in _OWN and key not in fields:
                setattr(cls, key, value)
        cls.__qualname__ = str(ns.get("__qualname__", name))
        return cls


class NamedTuple(metaclass=_Maker):
    """The base to write a named tuple's class on (its fields annotated)."""

    _named_root = True
