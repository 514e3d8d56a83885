"""msgspec for the agents' schema modules (`claude_code.records`, `codex.lines`), imported without
typing_extensions: msgspec imports that module (and with it inspect and ast) only to recognize its
TypedDict, which no struct here uses; without it, msgspec takes `typing`'s. The real module stays
importable afterwards. Not for hooks: msgspec costs an import they need not pay."""

import sys

_HIDE = "typing_extensions" not in sys.modules
if _HIDE:
    sys.modules["typing_extensions"] = None  # type: ignore[assignment]
try:
    import msgspec as msgspec  # noqa: PLC0414 - re-exported: the schema modules take it from here
finally:
    if _HIDE and sys.modules.get("typing_extensions", 0) is None:
        del sys.modules["typing_extensions"]  # a later import finds the real module
