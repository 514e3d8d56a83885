"""The TOML config: defaults, validation, the hot-path cache, and `config set`.

Two files, the project's wins key by key: the user's `config.toml` in the config dir, and
`.claude/session-watcher.toml` in the project. Hooks read them with stdlib `tomllib`, and only when a
file's stamp (mtime, size) changed since the copy cached in the session state; `config set` edits
with tomlkit so the user's comments survive.

Every value is checked for its type and its range (finite numbers only); the merged values are
checked together (bp_red >= bp_amber). A project file comes with the repository, so it may set only
PROJECT_KEYS: which files count (`include`, `exclude`) and the model's tuning, each within its
range; how and whether the user is alerted (`notify`) and what leaves the machine (`otlp`) are the
user's own. A file that cannot be used
(not TOML, binary, nested too deep, a bad value) is left out as a whole and named in one error; the
other file still applies, and the CLI can show and repair it. A user-only key in a project file is
refused on its own, with an error naming it: the file's other keys still apply.
"""

from __future__ import annotations

import os
import time

from session_watcher.base import paths
from session_watcher.core.errors import ConfigError, TooLarge

TYPE_CHECKING = False  # typing costs ~3 ms to import; this module is on the hot path
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TypeGuard

    from session_watcher.core.shapes import Cliff, Config, ConfigCache

CHANNELS = ("desktop", "terminal", "message")

DEFAULTS: Config = {  # every key of the Config type (core/shapes.py), but the cliff (read, not set)
    "include": [],
    "exclude": [],
    "cRatio": None,  # None: from the model and the cache TTL seen in usage
    # the gate (docs/model.md, "Defaults chosen by backtest": closed loop, leave-one-session-out)
    "bp_amber": 0.001,  # deep water from just past the sweet spot
    "bp_red": 0.25,
    "notify_dwell": 1,
    "bill_lookback": 30,  # calls before the dwell in which a completed bill cycle still counts for the gate
    "backstop_base": 2.0,
    "guard_x": 1.0,  # a cold return advises a restart from this x on (chosen the same way)
    # the advice's floors and its reminders (docs/model.md, "Reminders and the advice floor": bench/advice.py)
    "gate_min_calls": 10,  # a segment's calls before its gate may speak
    "remind_backoff": 2.0,  # each ignored reminder doubles the next one's interval
    "remind_cap": 3,  # reminders per segment; more only each time the saving doubles again
    "advice_min_usd": 0.01,  # no gate or reminder saving less than this over its horizon
    "advice_min_share": 0.05,  # ... or less than this share of the segment's cache cost so far
    "notify": {"channels": ["desktop"], "fallback": "message", "remind_min": 10},
    # the cold-cache guard on each prompt: "ask" (block once with the priced choices) | "warn" | "off";
    # "block", its name before "ask", is read as "ask"
    "guard": "ask",
    "handoff_stale_min": 180,  # a handoff not taken by a fresh session within this many minutes is stale
    # OpenTelemetry export (docs/otlp.md); "" / empty: from OTEL_EXPORTER_OTLP_* or Claude Code's settings
    # enabled "auto": when Claude Code's own telemetry is on (CLAUDE_CODE_ENABLE_TELEMETRY reaches the hooks)
    "otlp": {"enabled": "auto", "endpoint": "", "protocol": "", "headers": {}, "interval": 60, "timeout": 5,
             "resource_attributes": {}, "project": False, "events": True},
}
GUARD_MODES = ("ask", "warn", "block", "off")
TABLES = ("notify", "otlp")  # the user's own tables: a project file sets none of their keys
OTLP_PROTOCOLS = ("http/protobuf", "http/json")
MAX_TABLE = 64  # entries of a headers or attributes table
MAX_TEXT = 4096


# the keys a project's own file may set (see the module's docstring)
PROJECT_KEYS = ("include", "exclude", "cRatio", "bp_amber", "bp_red", "notify_dwell", "bill_lookback", "backstop_base",
                "guard_x", "gate_min_calls", "remind_backoff", "remind_cap", "advice_min_usd", "advice_min_share")

# (low, high) of each number: finite, and where the model's arithmetic stays meaningful
RANGES: dict[str, tuple[float, float]] = {
    "cRatio": (1.0, 1000.0),  # cache write / cache read price: 12.5 to 50 for today's models
    "bp_amber": (0.001, 10.0),
    "bp_red": (0.001, 10.0),
    "backstop_base": (0.1, 1000.0),
    "guard_x": (1.0, 1000.0),  # an x below 1 is never past the baseline
    "gate_min_calls": (1, 100_000),
    "remind_backoff": (1.0, 100.0),  # 1: no back-off
    "remind_cap": (0, 1000),
    "advice_min_usd": (0.0, 1000.0),
    "advice_min_share": (0.0, 10.0),
    "notify_dwell": (1, 1000),
    "bill_lookback": (0, 100_000),  # a lookback longer than any segment: any bill cycle since it began
    "notify.remind_min": (0, 10080),  # a week
    "handoff_stale_min": (1, 10080),
    "otlp.interval": (1, 3600),  # seconds between exports while a session is live
    "otlp.timeout": (0.5, 60),  # seconds one request may take
}
# glob text is bounded before it costs: each list is compiled into one pattern per process and kept
# in every session's cached config (250 globs of 4 KB cost 3.4-4.8 s a hook run)
MAX_GLOBS = 256
MAX_GLOB_CHARS = 512  # one glob
MAX_GLOBS_CHARS = 8192  # all the globs of one key
MAX_FILE_BYTES = 1 << 20


def _is_num(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _in_range(key: str, value: object) -> bool:
    low, high = RANGES[key]
    return _is_num(value) and low <= value <= high  # type: ignore[operator]  # NaN, inf fail too


def _check(file: str, key: str, value: object) -> object:
    def bad(expected: str) -> ConfigError:
        return ConfigError(f"{file}: key '{_short(key)}': expected {expected}, got {_short(repr(value))}")

    if key in ("include", "exclude"):
        if (not isinstance(value, list) or len(value) > MAX_GLOBS
                or not all(isinstance(g, str) and len(g) <= MAX_GLOB_CHARS for g in value)
                or sum(map(len, value)) > MAX_GLOBS_CHARS):
            raise bad(f"a list of glob strings (at most {MAX_GLOBS}, each of {MAX_GLOB_CHARS} characters "
                      f"at most, {MAX_GLOBS_CHARS} in all)")
        return list(value)
    if key in ("cRatio", "bp_amber", "bp_red", "backstop_base", "guard_x", "remind_backoff", "advice_min_usd",
               "advice_min_share"):
        if not _in_range(key, value):
            low, high = RANGES[key]
            raise bad(f"a number from {low:g} to {high:g}")
        return float(value)  # type: ignore[arg-type]
    if key in ("notify_dwell", "bill_lookback", "gate_min_calls", "remind_cap"):
        if not isinstance(value, int) or isinstance(value, bool) or not _in_range(key, value):
            low, high = RANGES[key]
            raise bad(f"a whole number from {low:,.0f} to {high:,.0f}".replace(",", ""))
        return value
    if key == "guard":
        if value not in GUARD_MODES:
            raise bad(f"one of {list(GUARD_MODES)}")
        return "ask" if value == "block" else value
    if key == "handoff_stale_min":
        if not _in_range(key, value):
            raise bad("a number of minutes from 1 to 10080")
        return value
    if key in ("notify.channels", "notify.fallback", "notify.remind_min"):
        return _check_notify(key, value, bad)
    if key.startswith("otlp.") and key[5:] in DEFAULTS["otlp"]:
        return _check_otlp(key, value, bad)
    raise ConfigError(f"{file}: unknown key '{_short(key)}' (known: {', '.join(known_keys())})")


def _short(text: str, limit: int = 200) -> str:
    """Text from a file, shortened for an error message (errors are logged and kept in states)."""
    return text if len(text) <= limit else text[:limit] + "..."


def _text(value: object) -> bool:
    """A short single-line string (a header or attribute value goes on the wire as it is)."""
    return isinstance(value, str) and len(value) <= MAX_TEXT and "\r" not in value and "\n" not in value


def _check_notify(key: str, value: object, bad: Any) -> object:
    if key == "notify.channels":
        if not isinstance(value, list) or not all(c in CHANNELS for c in value):
            raise bad(f"a list drawn from {list(CHANNELS)}")
        return list(value)
    if key == "notify.fallback":
        if value not in (*CHANNELS, "none"):
            raise bad(f"one of {[*CHANNELS, 'none']}")
        return value
    if not _in_range(key, value):
        raise bad("a number of minutes from 0 to 10080 (0: no limit)")
    return value


def _check_otlp(key: str, value: object, bad: Any) -> object:
    name = key[5:]
    if name in ("enabled", "project", "events"):
        if not isinstance(value, bool) and not (name == "enabled" and value == "auto"):
            raise bad("true or false" + (' or "auto"' if name == "enabled" else ""))
        return value
    if name == "endpoint":
        if not (value == "" or (_text(value) and str(value).startswith(("http://", "https://"))
                                and len(str(value).split("://", 1)[1].split("/", 1)[0]) > 0)):
            raise bad("an http:// or https:// URL (the collector's OTLP/HTTP address), or \"\"")
        return value
    if name == "protocol":
        if value not in ("", *OTLP_PROTOCOLS):
            raise bad(f"one of {list(OTLP_PROTOCOLS)} (or \"\": from OTEL_EXPORTER_OTLP_PROTOCOL)")
        return value
    if name in ("interval", "timeout"):
        if not _in_range(key, value):
            low, high = RANGES[key]
            raise bad(f"a number of seconds from {low:g} to {high:g}")
        return value
    ok_value = _text if name == "headers" else (lambda v: _text(v) or _is_num(v) or isinstance(v, bool))
    if (not isinstance(value, dict) or len(value) > MAX_TABLE
            or not all(_text(k) and k and ok_value(v) for k, v in value.items())):
        raise bad(f"a table of at most {MAX_TABLE} names and {'strings' if name == 'headers' else 'values'}")
    return dict(value)


def known_keys() -> list[str]:
    plain = [k for k in DEFAULTS if k not in TABLES]
    return plain + ["notify.channels", "notify.fallback", "notify.remind_min"] + [f"otlp.{k}" for k in DEFAULTS["otlp"]]


def validate(file: str, doc: Mapping[str, Any], project: bool = False) -> dict[str, Any]:
    """Check a parsed document; return only the keys it sets, with plain values. A `project` file
    may set only PROJECT_KEYS."""
    out: dict[str, Any] = {}
    for key, value in doc.items():
        if project and key not in PROJECT_KEYS and (key in TABLES or key in known_keys()):
            raise ConfigError(f"{file}: key '{key}' may only be set in your own config "
                              f"({paths.user_config_file()}); a project file may set {', '.join(PROJECT_KEYS)}")
        if key in TABLES:
            if not isinstance(value, dict):
                raise ConfigError(f"{file}: key '{key}': expected a table, got {_short(repr(value))}")
            out[key] = {k: _check(file, f"{key}.{k}", v) for k, v in value.items()}
        else:
            out[key] = _check(file, key, value)
    if "bp_amber" in out and "bp_red" in out and out["bp_red"] < out["bp_amber"]:
        raise ConfigError(f"{file}: key 'bp_red': expected a value >= bp_amber ({out['bp_amber']})")
    return out


def _together(file: str, cfg: Config) -> None:
    """The merged values' own rule: a file that breaks it together with the file before it."""
    if cfg["bp_red"] < cfg["bp_amber"]:
        raise ConfigError(f"{file}: key 'bp_red': with the other config file the effective bp_red "
                          f"({cfg['bp_red']:g}) would be below bp_amber ({cfg['bp_amber']:g})")


def _read_toml(file: str) -> dict[str, Any]:
    try:
        data = paths.read_file(file, MAX_FILE_BYTES)  # a FIFO or /dev/tty there never blocks: refused
    except FileNotFoundError:
        return {}
    except TooLarge:
        raise ConfigError(f"{file}: not a config file (over {MAX_FILE_BYTES >> 20} MiB)") from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot be read: {exc.strerror}") from None
    import tomllib  # only for a file that exists: tomllib brings re, typing, datetime and enum

    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{file}: not valid TOML: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    except ValueError as exc:  # the parser's own: an integer of more digits than int() takes, and the like
        raise ConfigError(f"{file}: not valid TOML: {_short(str(exc))}") from None
    except (RecursionError, MemoryError):
        raise ConfigError(f"{file}: not valid TOML: nested too deep") from None


def merge(*layers: Mapping[str, Any]) -> Config:
    """The defaults with each layer (what `validate` returned for a file, or a merged config) on top,
    key by key and, in the tables, key by key of the table."""
    cfg: dict[str, Any] = {**DEFAULTS, "notify": dict(DEFAULTS["notify"]), "otlp": dict(DEFAULTS["otlp"])}
    for layer in layers:
        for key, value in layer.items():
            if key in TABLES:
                cfg[key] = {**cfg[key], **value}
            else:
                cfg[key] = value
    return _settled(cfg)


def _settled(values: dict[str, Any]) -> Config:
    """`values` as the typed config: the defaults' keys, each value checked by `_check` (or a default)."""
    return values  # type: ignore[return-value]  # typing.cast would import typing (~3 ms) on the hot path


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


def load_layers(project_dir: str | None) -> tuple[Config, list[str]]:
    """The effective config from the files that can be used, and an error for each that cannot."""
    layers: list[dict[str, Any]] = []
    errors: list[str] = []
    for i, file in enumerate(config_files(project_dir)):
        try:
            doc = _read_toml(file)
            if i > 0:  # the project's file: its user-only keys are refused, its other keys still apply
                refused = [k for k in doc if k not in PROJECT_KEYS and (k in TABLES or k in known_keys())]
                if refused:
                    errors.append(f"{file}: {', '.join(repr(k) for k in refused)} may only be set in your own config "
                                  f"({paths.user_config_file()}); ignored here, the file's other keys apply")
                    doc = {k: v for k, v in doc.items() if k not in refused}
            layer = validate(file, doc, project=i > 0)
            if i > 0 and project_dir and layer.get("include"):
                layer["include"] = anchored(project_dir, layer["include"])
            _together(file, merge(*layers, layer))
        except ConfigError as exc:
            errors.append(str(exc))
            continue
        layers.append(layer)
    cfg = merge(*layers)
    cfg["cliff"] = load_cliff()
    return cfg, errors


def anchored(project_dir: str, globs: list[str]) -> list[str]:
    """A project file's `include` globs, each made to match only inside the project: prefixed with
    the project's real path (its glob characters escaped). A repository may widen what is carried
    within itself, never outside (`include = ["*"]` would otherwise carry `~/.aws/credentials`);
    an absolute glob of a project file matches nothing. Your own file's globs are kept as written."""
    import glob

    from session_watcher.core.paths import windows_form

    if windows_form(project_dir):
        root = glob.escape(project_dir.rstrip("\\/")) + "\\"
        return [root + g.replace("/", "\\") for g in globs]
    root = glob.escape(os.path.realpath(project_dir).rstrip("/")) + "/"
    return [root + g for g in globs]


def load(project_dir: str | None) -> Config:
    """The effective config; raises ConfigError naming the bad file and key."""
    cfg, errors = load_layers(project_dir)
    if errors:
        raise ConfigError(errors[0])
    return cfg


def load_cliff() -> Cliff:
    """The TTL cliffs `report` inferred from the user's own gaps ({"5m": s, "1h": s}, None where the
    evidence was too thin), and under "evidence" the returns each rests on ({class: [returns below,
    cold of them, returns above, cold of them]}); a missing or unreadable file gives none."""
    out: Cliff = {"5m": None, "1h": None}
    try:
        from session_watcher.core.fastjson import loads

        doc = loads(paths.read_file(paths.cliff_file(), 1 << 16))
    except (OSError, ValueError):
        return out
    if isinstance(doc, dict):
        evidence = doc.get("evidence")
        evidence = evidence if isinstance(evidence, dict) else {}
        for cls in ("5m", "1h"):
            v = doc.get(cls)
            if isinstance(v, int | float) and not isinstance(v, bool) and 0 < v < 1e7:
                out[cls] = float(v)
                ev = evidence.get(cls)
                if isinstance(ev, list) and len(ev) == 4 and all(type(n) is int and 0 <= n < 1 << 40 for n in ev):
                    out.setdefault("evidence", {})[cls] = ev
    return out


def load_cached(cache: ConfigCache, project_dir: str | None) -> tuple[Config, str | None]:
    """Hot path: reuse `cache` (kept in the session state) while the files' stamps are unchanged and
    it holds every key this version has (a cache an older version wrote is read again).

    Returns the config and, when a file is bad, the error (that file is left out; the caller logs
    the error once: the cache remembers it so it is not logged again).
    """
    files = config_files(project_dir)
    stamp = _stamp([*files, paths.cliff_file()])
    values = cache.get("values")
    if cache.get("stamp") == stamp and _whole(values):  # checked when it was read
        return values, None
    values, errors = load_layers(project_dir)
    error = "; ".join(errors) or None
    cache.update({"stamp": stamp, "values": values, "error": error})
    return values, error


def _whole(values: object) -> TypeGuard[Config]:
    """A config with every key of DEFAULTS (and perhaps a cliff), the tables' keys too."""
    return (isinstance(values, dict) and values.keys() - {"cliff"} == DEFAULTS.keys()
            and isinstance(values["notify"], dict) and values["notify"].keys() == DEFAULTS["notify"].keys()
            and isinstance(values["otlp"], dict) and values["otlp"].keys() == DEFAULTS["otlp"].keys())


def parse_cli_value(text: str) -> Any:
    """`config set` values are TOML literals (0.2, true, ["a"], "x"); anything else is a string."""
    import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except (ValueError, RecursionError):  # TOMLDecodeError, or an integer too long for int()
        return text


def set_value(file: str, key: str, raw: str, project: bool = False) -> tuple[Any, str | None]:
    """Set `key` (dotted for tables) in `file`, keeping comments and layout; validated first.

    Returns the value and, when the file could not be parsed (binary, nested too deep), where it was
    moved to: the file is started afresh, so the CLI can always repair what it reads."""
    import tomlkit

    value = parse_cli_value(raw)
    _check(file, key, value)
    if project and key not in PROJECT_KEYS:
        raise ConfigError(f"{file}: key '{key}' may only be set in your own config "
                          f"({paths.user_config_file()}); a project file may set {', '.join(PROJECT_KEYS)}")
    from session_watcher.base.atomic import user_file, write_atomic, write_user_file

    # the user's own file is written through its link (a dotfiles repository keeps it); a project's
    # comes with the repository, so a link there (to ~/.bashrc?) is refused, never followed
    follow = not project
    target, _mode = user_file(file, follow=follow)  # read-only, a FIFO, a device: refused, said so
    moved = None
    try:
        text = _read_text(target)
        doc = tomlkit.parse(text)
        doc.unwrap()
    except FileNotFoundError:
        doc = tomlkit.document()
    except (tomlkit.exceptions.ParseError, UnicodeDecodeError, RecursionError, ValueError):
        moved = f"{file}.broken-{int(time.time())}"  # kept for the user to look at, never lost
        if target != file:  # a link: its target keeps its place, a copy of the bytes goes aside
            write_atomic(moved, paths.read_file(target, MAX_FILE_BYTES << 6), fsync=False)
        else:
            os.replace(file, moved)
        doc = tomlkit.document()
    if "." in key:
        table, sub = key.split(".", 1)
        if table not in doc:
            doc[table] = tomlkit.table()
        doc[table][sub] = value
    else:
        doc[key] = value
    validate(file, doc.unwrap(), project)
    folder = os.path.dirname(file) or "."
    if not project:
        paths.ensure_private_dir(folder)  # 0700 like every folder of ours (doctor checks it)
    else:
        os.makedirs(folder, exist_ok=True)  # the project's .claude/, whose mode is the project's
    write_user_file(file, tomlkit.dumps(doc).encode("utf-8"), follow=follow)
    return value, moved


def _read_text(file: str) -> str:
    try:
        return paths.read_file(file, MAX_FILE_BYTES).decode("utf-8")
    except TooLarge:
        raise ValueError("too large") from None


def show_toml(files: list[str], effective: Mapping[str, Any]) -> str:
    """The effective config as TOML (what `config show` prints): the files it came from, in the order
    they count, as comments; a key with no value (derived at run time) as a comment too."""
    import tomlkit

    doc = tomlkit.document()
    doc.add(tomlkit.comment("session-watcher config: the defaults, then each file below that exists, the later "
                            "winning"))
    for f in files:
        doc.add(tomlkit.comment(f"  {f}{'' if os.path.exists(f) else '  (not present)'}"))
    unset = []
    tables = []
    for key, value in effective.items():
        if value is None:
            unset.append(key)
        elif isinstance(value, dict):
            tables.append((key, value))
        else:
            doc.add(key, value)
    for key, value in tables:
        table = tomlkit.table()
        for sub, v in value.items():
            if v is None:
                unset.append(f"{key}.{sub}")
            else:
                table.add(sub, v)
        doc.add(tomlkit.nl())
        doc.add(key, table)
    if unset:
        doc.add(tomlkit.nl())
        doc.add(tomlkit.comment(f"not set (worked out at run time): {', '.join(unset)}"))
    return tomlkit.dumps(doc)


def show_value(value: Any) -> str:
    """One value as `config show` writes it (TOML)."""
    import tomlkit

    return str(tomlkit.item(value).as_string())
