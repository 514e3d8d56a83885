"""The TOML config: defaults, validation, the hot-path cache, and `config set`.

Two files, the project's wins key by key: the user's `config.toml` in the config dir, and
`.claude/session-watcher.toml` in the project. Hooks read them with stdlib `tomllib`, and only when a
file's stamp (mtime, size) changed since the copy cached in the session state; `config set` edits
with tomlkit so the user's comments survive.
"""

from __future__ import annotations

import os

from session_watcher import paths

TYPE_CHECKING = False  # typing costs ~3 ms to import; this module is on the hot path
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

CHANNELS = ("desktop", "terminal", "message")

DEFAULTS: dict[str, Any] = {
    "include": [],
    "exclude": [],
    "cRatio": None,  # None: from the model and the cache TTL seen in usage
    "bp_amber": 0.10,
    "bp_red": 0.25,
    "notify_dwell": 3,
    "backstop_base": 2.0,
    "notify": {"channels": ["desktop"], "fallback": "message", "remind_min": 10},
    "guard": "warn",  # the cold-cache guard on each prompt: "warn" | "block" | "off"
}
GUARD_MODES = ("warn", "block", "off")


class ConfigError(ValueError):
    """A config file that cannot be used: names the file, the key and what was expected."""


def _is_num(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _check(file: str, key: str, value: object) -> object:
    def bad(expected: str) -> ConfigError:
        return ConfigError(f"{file}: key '{key}': expected {expected}, got {value!r}")

    if key in ("include", "exclude"):
        if not isinstance(value, list) or not all(isinstance(g, str) for g in value):
            raise bad("a list of glob strings")
        return list(value)
    if key == "cRatio":
        if not _is_num(value) or not value > 0:  # type: ignore[operator]
            raise bad("a positive number")
        return float(value)  # type: ignore[arg-type]
    if key in ("bp_amber", "bp_red", "backstop_base"):
        if not _is_num(value) or not value > 0:  # type: ignore[operator]
            raise bad("a positive number")
        return float(value)  # type: ignore[arg-type]
    if key == "notify_dwell":
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise bad("a whole number >= 1")
        return value
    if key == "guard":
        if value not in GUARD_MODES:
            raise bad(f"one of {list(GUARD_MODES)}")
        return value
    if key == "notify.channels":
        if not isinstance(value, list) or not all(c in CHANNELS for c in value):
            raise bad(f"a list drawn from {list(CHANNELS)}")
        return list(value)
    if key == "notify.fallback":
        if value not in (*CHANNELS, "none"):
            raise bad(f"one of {[*CHANNELS, 'none']}")
        return value
    if key == "notify.remind_min":
        if not _is_num(value) or not value >= 0:  # type: ignore[operator]
            raise bad("a number of minutes >= 0 (0: no limit)")
        return value
    raise ConfigError(f"{file}: unknown key '{key}' (known: {', '.join(known_keys())})")


def known_keys() -> list[str]:
    return [k for k in DEFAULTS if k != "notify"] + ["notify.channels", "notify.fallback", "notify.remind_min"]


def validate(file: str, doc: Mapping[str, Any]) -> dict[str, Any]:
    """Check a parsed document; return only the keys it sets, with plain values."""
    out: dict[str, Any] = {}
    for key, value in doc.items():
        if key == "notify":
            if not isinstance(value, dict):
                raise ConfigError(f"{file}: key 'notify': expected a table, got {value!r}")
            out["notify"] = {k: _check(file, f"notify.{k}", v) for k, v in value.items()}
        else:
            out[key] = _check(file, key, value)
    if "bp_amber" in out and "bp_red" in out and out["bp_red"] < out["bp_amber"]:
        raise ConfigError(f"{file}: key 'bp_red': expected a value >= bp_amber ({out['bp_amber']})")
    return out


def parse_file(file: str) -> dict[str, Any]:
    """Read and validate one file; a missing file is an empty one."""
    import tomllib

    try:
        with open(file, "rb") as fh:
            doc = tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot be read: {exc.strerror}") from None
    return validate(file, doc)


def merge(*layers: Mapping[str, Any]) -> dict[str, Any]:
    cfg: dict[str, Any] = {**DEFAULTS, "notify": dict(DEFAULTS["notify"])}
    for layer in layers:
        for key, value in layer.items():
            if key == "notify":
                cfg["notify"] = {**cfg["notify"], **value}
            else:
                cfg[key] = value
    return cfg


def config_files(project_dir: str | None) -> list[str]:
    files = [paths.user_config_file()]
    if project_dir:
        files.append(paths.project_config_file(project_dir))
    return files


def _stamp(files: list[str]) -> list[Any]:
    out: list[Any] = []
    for f in files:
        try:
            st = os.stat(f)
            out.append([f, st.st_mtime_ns, st.st_size])
        except OSError:
            out.append([f, None, None])
    return out


def load(project_dir: str | None) -> dict[str, Any]:
    """The effective config; raises ConfigError naming the bad file and key."""
    cfg = merge(*(parse_file(f) for f in config_files(project_dir)))
    cfg["cliff"] = load_cliff()
    return cfg


def load_cliff() -> dict[str, float | None]:
    """The TTL cliffs `report` inferred from the user's own gaps ({"5m": s, "1h": s}, None where the
    evidence was too thin); a missing or unreadable file gives none."""
    out: dict[str, float | None] = {"5m": None, "1h": None}
    try:
        with open(paths.cliff_file(), "rb") as fh:
            from core.fastjson import loads

            doc = loads(fh.read(1 << 16))
    except (OSError, ValueError):
        return out
    if isinstance(doc, dict):
        for cls in out:
            v = doc.get(cls)
            if isinstance(v, int | float) and not isinstance(v, bool) and 0 < v < 1e7:
                out[cls] = float(v)
    return out


def load_cached(cache: dict[str, Any], project_dir: str | None) -> tuple[dict[str, Any], str | None]:
    """Hot path: reuse `cache` (kept in the session state) while the files' stamps are unchanged.

    Returns the config and, when a file is bad, the error (defaults are used then; the caller logs
    the error once: the cache remembers it so it is not logged again).
    """
    files = config_files(project_dir)
    stamp = _stamp([*files, paths.cliff_file()])
    if cache.get("stamp") == stamp and isinstance(cache.get("values"), dict):
        return cache["values"], None
    error = None
    try:
        values = load(project_dir)
    except ConfigError as exc:
        values, error = merge(), str(exc)
        values["cliff"] = load_cliff()
    cache.clear()
    cache.update({"stamp": stamp, "values": values, "error": error})
    return values, error


def parse_cli_value(text: str) -> Any:
    """`config set` values are TOML literals (0.2, true, ["a"], "x"); anything else is a string."""
    import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def set_value(file: str, key: str, raw: str) -> Any:
    """Set `key` (dotted for tables) in `file`, keeping comments and layout; validated first."""
    import tomlkit

    value = parse_cli_value(raw)
    _check(file, key, value)
    try:
        with open(file, encoding="utf-8") as fh:
            doc = tomlkit.parse(fh.read())
    except FileNotFoundError:
        doc = tomlkit.document()
    except tomlkit.exceptions.ParseError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    if "." in key:
        table, sub = key.split(".", 1)
        if table not in doc:
            doc[table] = tomlkit.table()
        doc[table][sub] = value
    else:
        doc[key] = value
    validate(file, doc.unwrap())
    folder = os.path.dirname(file) or "."
    if file == paths.user_config_file():
        paths.ensure_private_dir(folder)  # 0700 like every folder of ours (doctor checks it)
    else:
        os.makedirs(folder, exist_ok=True)  # the project's .claude/, whose mode is the project's
    from state.atomic import write_atomic

    write_atomic(file, tomlkit.dumps(doc).encode("utf-8"), mode=0o600)
    return value
