"""The TOML config: defaults, validation, the hot-path cache, and `config set`.

Two files, the project's wins key by key: the user's `config.toml` in the config dir, and the
project's `.claude/session-watcher.toml` or `.codex/session-watcher.toml` (`paths.project_config_file`:
the one there, for both agents; both there: `.claude/`'s). Hooks read them with stdlib `tomllib`, and only when a
file's stamp (mtime, size) changed since the copy cached in the session state; `config set` edits
with tomlkit so the user's comments survive.

Every key is one line of KEYS (its kind, default, range or choices, whether a project's file may
set it, and its doc); the defaults, the checks and their errors, PROJECT_KEYS and the docs' tables
(tools/config_table.py) come from it. Every value is checked for its type and its range (finite
numbers only); the merged values are checked together (bp_red >= bp_amber). A project file comes
with the repository, so it may set only PROJECT_KEYS: which files count (`include`, `exclude`) and
the model's tuning, each within its range, which are also all the core reads (`model_params`);
how and whether the user is alerted (`notify`) and what leaves the machine (`otlp`) are the
user's own. A file that cannot be used
(not TOML, binary, nested too deep, a bad value) is left out as a whole and named in one error; the
other file still applies, and the CLI can show and repair it. A user-only key in a project file is
refused on its own, with an error naming it: the file's other keys still apply.
"""

from __future__ import annotations

import os
import time

from session_watcher.base import paths
from session_watcher.base.config_cache import HANDOFF_STALE_MIN, cached, stamp, use_prices
from session_watcher.base.paths import config_files as config_files  # noqa: PLC0414 (the CLI's name for it)
from session_watcher.core.errors import TooLarge
from session_watcher.core.usererrors import ConfigError

TYPE_CHECKING = False  # typing is slow to import; this module is on the hot path
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from session_watcher.core.shapes import Cliff, Config, ConfigCache, ModelParams

CHANNELS = ("desktop", "terminal", "message")
GUARD_MODES = ("ask", "warn", "block", "off")
OTLP_PROTOCOLS = ("http/protobuf", "http/json")
MAX_TABLE = 64  # entries of a headers or attributes table
# the least price a [prices] field takes, USD per million tokens: below it a write priced at 10,000
# costs more than 1e300 reads, and figures in read units overflow to infinities JSON cannot hold
# (every figure stays a number from this floor up to the ceiling, 10,000: tests/test_json_finite.py)
PRICE_FLOOR = 1e-6
MAX_TEXT = 4096
# glob text is bounded before it costs: each list is compiled into one pattern per process and kept
# in every session's cached config (long glob lists made every hook run slow)
MAX_GLOBS = 256
MAX_GLOB_CHARS = 512  # one glob
MAX_GLOBS_CHARS = 8192  # all the globs of one key
MAX_FILE_BYTES = 1 << 20


class Key:
    """One config key: its name (`table.key` inside a table), its kind, its default, its range
    (numbers: low to high, ends included) or choices, whether a project's file may set it, and one
    line of what it does. DEFAULTS, PROJECT_KEYS, the checks, their error messages, and the tables
    of config.example.toml and docs/configuration.md (tools/config_table.py) all come from KEYS.

    Kinds: "number" (kept as a float), "whole" (an int), "minutes" and "seconds" (a number of them,
    kept as written); "choice" (one of `choices`), "list" (drawn from `choices`), "flag" (true or
    false, or one of `choices`); "url" (http or https); "globs"; "strings" and "values" (a table
    of names and strings, or of strings, numbers and booleans)."""

    __slots__ = ("aliases", "choices", "default", "doc", "high", "kind", "low", "name", "note", "project", "unset")

    def __init__(self, name: str, kind: str, default: object, doc: str, *,  # noqa: PLR0913  # a record's fields
                 low: float = 0, high: float = 0, choices: tuple[object, ...] = (), project: bool = False,
                 note: str = "", unset: str = "", aliases: dict[str, str] | None = None) -> None:
        self.name, self.kind, self.default, self.doc = name, kind, default, doc
        self.low, self.high, self.choices, self.project = low, high, choices, project
        self.note = note  # said after the expected value in an error
        self.unset = unset  # what "" means, where a text key may be "" (empty: it may not)
        self.aliases = aliases or {}  # an earlier name of a choice: read as the new one


# every key of the Config type (core/shapes.py) but the cliff (read, not set); a new key is one line here.
# The gate's values are the closed-loop backtest's (docs/model.md, "Defaults chosen by backtest").
KEYS = (
    Key("include", "globs", [], "project-relative globs of files a restart carries although the work did not "
        "read them (or git ignores them); never a file outside the project", project=True),
    Key("exclude", "globs", [], "project-relative globs of files a restart never carries; wins over include",
        project=True),
    Key("cRatio", "number", None, "cache write / cache read price ratio; unset: from the model and the cache "
        "TTL seen in usage (5-minute / 1-hour writes: 12.5 / 20 on most Claude models, 25 / 40 on Opus and Sonnet "
        "5.5, 50 / 80 on Fable and Mythos 5.1; a Codex thread's: 10 on gpt-5.5 and older, 25 on gpt-6.1-sol and "
        "gpt-6.2-sol, else 12.5)", low=1.0, high=1000.0, project=True),
    Key("bp_amber", "number", 0.001, "bill premium at which the lamp turns amber and deep water begins",
        low=0.001, high=10.0, project=True),
    Key("bp_red", "number", 0.25, "bill premium at which the lamp turns red (at least bp_amber, with both files "
        "together)", low=0.001, high=10.0, project=True),
    Key("notify_dwell", "whole", 1, "calls in deep water before the alert, which also needs a bill cycle in them "
        "or in the bill_lookback calls before", low=1, high=1000, project=True),
    Key("bill_lookback", "whole", 30, "calls before the dwell in which a completed bill cycle still counts "
        "for the alert", low=0, high=100_000, project=True),
    Key("backstop_base", "number", 2.0, "the first reminder after ceil(backstop_base * 0.4142 / mf) bill cycles "
        "in deep water", low=0.1, high=1000.0, project=True),
    Key("guard_x", "number", 1.0, "a cold return (the cache expired while you were away) advises a restart "
        "from this x = L / B on", low=1.0, high=1000.0, project=True),
    # the advice's floors and its reminders (docs/model.md, "Reminders and the advice floor": bench/advice.py)
    Key("gate_min_calls", "whole", 10, "a segment's calls before its gate may speak", low=1, high=100_000,
        project=True),
    Key("remind_backoff", "number", 2.0, "each ignored reminder multiplies the next one's interval by this "
        "(1: no back-off)", low=1.0, high=100.0, project=True),
    Key("remind_cap", "whole", 3, "reminders in a segment; past them, one more only once the saving reaches "
        "twice the gate's, then four times, eight times, ...", low=0, high=1000, project=True),
    Key("advice_min_usd", "number", 0.01, "no gate or reminder whose saving over its cycle is under this many "
        "dollars", low=0.0, high=1000.0, project=True),
    Key("advice_min_share", "number", 0.05, "no gate or reminder whose saving is under this share of the "
        "segment's cache cost so far", low=0.0, high=10.0, project=True),
    Key("compact_reserve", "whole", None, "the agent compacts the context on its own at its window less "
        "this many tokens, until the session has shown where (a gate or reminder prices a restart only up "
        "to it); unset: by the client (Claude Code from 2.1.22: 33000, before: 45000), else 45000",
        low=0, high=500_000, project=True),
    Key("compact_payback", "number", 1.5, "no gate or reminder while the automatic compaction is nearer "
        "than this many times the calls a restart needs to pay back its carry (0: no such hold)", low=0.0,
        high=100.0, project=True),
    Key("notify.channels", "list", ["desktop"], "how alerts reach you: desktop, terminal (an OSC 777/9 "
        "escape, works over SSH), message (shown by Claude Code or Codex, never sent to the model)", choices=CHANNELS),
    Key("notify.fallback", "choice", "message", "used when no listed channel can reach you",
        choices=(*CHANNELS, "none")),
    Key("notify.remind_min", "minutes", 10, "minutes between a session's alerts (gates, reminders; advice "
        "at a cold return always comes)", low=0, high=10080, note="0: no limit"),
    Key("guard", "choice", "ask", "the cold-cache guard before each prompt: ask (hold the prompt back once, "
        "priced choices, the handoff prepared; only once the cache has surely expired), warn, off (no line "
        "of the guard's; a cold return past guard_x is still an alert, its message / terminal channels "
        "shown at that prompt)",
        choices=GUARD_MODES, aliases={"block": "ask"}),
    Key("handoff_stale_min", "minutes", HANDOFF_STALE_MIN,
        "minutes a handoff waits for the project's next fresh session", low=1, high=10080),
    Key("prices", "prices", {}, 'your own prices over the built-in tables, Claude\'s and OpenAI\'s: [prices."MODEL"] '
        "(a model id or its prefix) with input, cache_read, cache_write (5-minute class), cache_write_1h in USD "
        "per million tokens; a field left out keeps the built-in ratio to input", low=PRICE_FLOOR, high=10_000.0),
    Key("otlp.enabled", "flag", "auto", "export to an OpenTelemetry collector (docs/otlp.md); auto: when "
        "Claude Code's own telemetry is on", choices=("auto",)),
    Key("otlp.endpoint", "url", "", "the collector's OTLP/HTTP address", unset="from "
        "OTEL_EXPORTER_OTLP_ENDPOINT or Claude Code's settings, else Codex's [otel] exporter"),
    Key("otlp.protocol", "choice", "", "the OTLP/HTTP encoding", choices=OTLP_PROTOCOLS,
        unset="from OTEL_EXPORTER_OTLP_PROTOCOL, or Codex's [otel] exporter where its endpoint is used"),
    Key("otlp.headers", "strings", {}, "sent with every request, over OTEL_EXPORTER_OTLP_HEADERS"),
    Key("otlp.interval", "seconds", 60, "seconds between exports while a session is live", low=1, high=3600),
    Key("otlp.timeout", "seconds", 5, "seconds one request may take", low=0.5, high=60),
    Key("otlp.resource_attributes", "values", {}, "added to the resource and every point, over "
        "OTEL_RESOURCE_ATTRIBUTES"),
    Key("otlp.project", "flag", False, "send the project's folder name (never its path)"),
    Key("otlp.events", "flag", True, "send each advice as an OTLP log event too"),
)
SPECS = {k.name: k for k in KEYS}
TABLES = tuple(dict.fromkeys(k.name.split(".")[0] for k in KEYS if "." in k.name))  # the user's own
# the keys a project's own file may set (see the module's docstring)
PROJECT_KEYS = tuple(k.name for k in KEYS if k.project)


def model_params(cfg: Config) -> ModelParams:
    """What the core reads of `cfg` (core/shapes.py `ModelParams`): the model's parameters, which
    are the keys a project's file may set, and the cliff the loader added."""
    return {k: cfg[k] for k in (*PROJECT_KEYS, "cliff") if k in cfg}  # type: ignore[return-value,literal-required]


def _defaults() -> Config:
    out: dict[str, Any] = {}
    for k in KEYS:
        table, _, sub = k.name.rpartition(".")
        (out.setdefault(table, {}) if table else out)[sub] = k.default
    return out  # type: ignore[return-value]  # every key of the type, from KEYS (tests/test_config.py)


DEFAULTS: Config = _defaults()


def _is_num(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _in_range(k: Key, value: object) -> bool:
    return _is_num(value) and k.low <= value <= k.high  # type: ignore[operator]  # NaN, inf fail too


def _text(value: object) -> bool:
    """A short single-line string (a header or attribute value goes on the wire as it is)."""
    return isinstance(value, str) and len(value) <= MAX_TEXT and "\r" not in value and "\n" not in value


def _url(value: object) -> bool:
    text = value if _text(value) else ""
    return str(text).startswith(("http://", "https://")) and len(str(text).split("://", 1)[1].split("/", 1)[0]) > 0


def _table(k: Key, value: object) -> bool:
    ok_value = _text if k.kind == "strings" else (lambda v: _text(v) or _is_num(v) or isinstance(v, bool))
    return (isinstance(value, dict) and len(value) <= MAX_TABLE
            and all(_text(name) and name and ok_value(v) for name, v in value.items()))


def _globs(value: object) -> bool:
    return (isinstance(value, list) and len(value) <= MAX_GLOBS
            and all(isinstance(g, str) and len(g) <= MAX_GLOB_CHARS for g in value)
            and sum(map(len, value)) <= MAX_GLOBS_CHARS)


BAD = object()  # a value its key's check refused


def _settle(k: Key, value: object) -> object:
    """The value as the config keeps it, or BAD."""
    kind = k.kind
    if kind == "number":
        return float(value) if _in_range(k, value) else BAD  # type: ignore[arg-type]
    if kind == "whole":
        return value if isinstance(value, int) and _in_range(k, value) else BAD
    if kind in ("minutes", "seconds"):
        return value if _in_range(k, value) else BAD
    if k.unset and value == "":
        return value
    if kind == "choice":
        return k.aliases.get(value, value) if value in k.choices else BAD  # type: ignore[call-overload]
    if kind == "flag":
        return value if isinstance(value, bool) or value in k.choices else BAD
    if kind == "url":
        return value if _url(value) else BAD
    if kind in ("globs", "list"):
        ok = _globs(value) if kind == "globs" else isinstance(value, list) and all(c in k.choices for c in value)
        return list(value) if ok else BAD  # type: ignore[call-overload]
    if kind == "prices":
        if price_problem(k, value):
            return BAD
        return {m.lower(): {f: float(v) for f, v in row.items()} for m, row in value.items()}  # type: ignore[attr-defined]
    return dict(value) if _table(k, value) else BAD  # type: ignore[call-overload]  # strings, values


def price_problem(k: Key, value: object) -> str | None:
    """What is wrong with a `prices` table, in words (None: nothing)."""
    from session_watcher.core import prices

    if not isinstance(value, dict) or len(value) > MAX_TABLE:
        return f"expected a table of at most {MAX_TABLE} models, got {_short(repr(value))}"
    for model, row in value.items():
        if not (_text(model) and model.strip()):
            return f"expected a model id, got {_short(repr(model))}"
        name = f'[prices."{_short(model, 60)}"]'
        if not isinstance(row, dict) or not row:
            return f"{name}: expected a table of {', '.join(prices.FIELDS)}, got {_short(repr(row))}"
        for field, v in row.items():
            if field not in prices.FIELDS:
                return f"{name}: unknown field {_short(repr(field), 60)} (known: {', '.join(prices.FIELDS)})"
            if not (_is_num(v) and k.low <= v <= k.high):
                return (f"{name} {field}: expected USD per million tokens, at least {k.low:f} and at most "
                        f"{k.high:g}, got {_short(repr(v))}")
        if "input" not in row and not prices.in_tables(model):
            return f"{name}: no built-in price for this model, so it needs input"
    return None


def expected(k: Key) -> str:
    """What a key takes, as its error says it (docs/configuration.md says the same: tools/config_table.py)."""
    kind = k.kind
    if kind == "globs":
        text = (f"a list of glob strings (at most {MAX_GLOBS}, each of {MAX_GLOB_CHARS} characters at most, "
                f"{MAX_GLOBS_CHARS} in all)")
    elif kind == "whole":
        text = f"a whole number from {k.low:.0f} to {k.high:.0f}"
    elif kind in ("number", "minutes", "seconds"):
        text = f"a number{'' if kind == 'number' else ' of ' + kind} from {k.low:g} to {k.high:g}"
    elif kind in ("choice", "list"):  # as TOML writes them, as docs/configuration.md; an old name unsaid
        shown = ", ".join(f'"{c}"' for c in k.choices if c not in k.aliases)
        text = f"{'one of' if kind == 'choice' else 'a list drawn from'} {shown}"
    elif kind == "flag":
        text = "true or false" + "".join(f' or "{c}"' for c in k.choices)
    elif kind == "url":
        text = "an http:// or https:// URL"
    else:
        text = f"a table of at most {MAX_TABLE} names and {kind}"
    return text + (f" ({k.note})" if k.note else "") + (f' (or "": {k.unset})' if k.unset else "")


def _check(file: str, key: str, value: object) -> object:
    k = SPECS.get(key)
    if k is None:
        # the key a typo most likely meant, where one is close (then not a list of 31: `config show` has them)
        hint = _did_you_mean(key)
        known = "`config show` lists every key" if hint else f"known: {', '.join(known_keys())}"
        raise ConfigError(f"{file}: unknown key '{_short(key)}' ({hint}{known})", keep=[file])
    out = _settle(k, value)
    if out is BAD and k.kind == "prices":
        raise ConfigError(f"{file}: key 'prices': {price_problem(k, value)}", keep=[file])
    if out is BAD:
        raise ConfigError(f"{file}: key '{_short(key)}': expected {expected(k)}, got {_got(file, k, value)}",
                          keep=[file])
    return out


def _got(file: str, k: Key, value: object) -> str:
    """The value a key refused, as its error shows it; a number written in quotes (`"0.2"`, a string
    to TOML) and one name where a list goes say how to write them (`got '0.2'` read as a number), in
    the form `file` takes: a file's line, `config set`'s or `backtest --set`'s words (a shell takes
    `["desktop"]` unquoted as a pattern); the example only where the key takes it."""
    import re
    import shlex

    shown = _short(repr(value))
    if not isinstance(value, str):
        return shown
    if k.kind in ("whole", "number", "minutes", "seconds") \
            and re.fullmatch(r"[+-]?[0-9][0-9_]*(\.[0-9]+)?([eE][+-]?[0-9]+)?", value.strip()):
        said, text = "a string: a number is written without quotes", value.strip()
    elif k.kind == "list" and value in k.choices:
        said, text = "one name: a list is written in brackets", f'["{value}"]'
    else:
        return shown
    if _settle(k, parse_cli_value(text)) is BAD:  # `"3.5"` for a whole number: no example it refuses too
        return f"{shown}, {said}"
    example = (f"config set {k.name} {shlex.quote(text)}" if file == "config set" else
               f"--set {shlex.quote(f'{k.name}={text}')}" if file == "--set" else
               f"{k.name.split('.')[-1]} = {text}")
    return f"{shown}, {said} ({example})"


def _short(text: str, limit: int = 200) -> str:
    """Text from a file, shortened for an error message (errors are logged and kept in states)."""
    return text if len(text) <= limit else text[:limit] + "..."


def _did_you_mean(key: str) -> str:
    """`did you mean 'KEY'? ` for an unknown key: the one key it names without its table (`remind_min`
    for `notify.remind_min`), else the one known key spelt closest (`bp_ambr`: `bp_amber`); else ""."""
    import difflib

    near = [n for n in known_keys() if n.endswith("." + key)] \
        or difflib.get_close_matches(key, known_keys(), n=1, cutoff=0.75)
    return f"did you mean '{near[0]}'? " if len(near) == 1 else ""


def known_keys() -> list[str]:
    """Every key `config set` takes: the top-level ones, then each table's."""
    return [k.name for k in KEYS if "." not in k.name] + [k.name for k in KEYS if "." in k.name]


def validate(file: str, doc: Mapping[str, Any], project: bool = False) -> dict[str, Any]:
    """Check a parsed document; return only the keys it sets, with plain values. A `project` file
    may set only PROJECT_KEYS."""
    out: dict[str, Any] = {}
    for key, value in doc.items():
        if project and key not in PROJECT_KEYS and (key in TABLES or key in known_keys()):
            raise ConfigError(f"{file}: key '{key}' may only be set in your own config "
                              f"({paths.user_config_file()}); a project file may set {', '.join(PROJECT_KEYS)}",
                              keep=[file, paths.user_config_file()])
        if key in TABLES:
            if not isinstance(value, dict):
                raise ConfigError(f"{file}: key '{key}': expected a table, got {_short(repr(value))}", keep=[file])
            out[key] = {k: _check(file, f"{key}.{k}", v) for k, v in value.items()}
        else:
            out[key] = _check(file, key, value)
    if "bp_amber" in out and "bp_red" in out and out["bp_red"] < out["bp_amber"]:
        raise ConfigError(f"{file}: key 'bp_red': expected a value >= bp_amber ({out['bp_amber']})", keep=[file])
    return out


def _together(file: str, cfg: Config, layer: Mapping[str, Any]) -> None:
    """The merged values' own rule: a file (its keys `layer`) that breaks it together with the
    defaults and the file before it; the key blamed is the one the file sets."""
    if cfg["bp_red"] < cfg["bp_amber"]:
        key = "bp_amber" if "bp_amber" in layer and "bp_red" not in layer else "bp_red"
        raise ConfigError(f"{file}: key '{key}': the effective bp_red ({cfg['bp_red']:g}) would be below "
                          f"bp_amber ({cfg['bp_amber']:g}); bp_red must be at least bp_amber", keep=[file])


def _read_toml(file: str) -> dict[str, Any]:
    try:
        data = paths.read_file(file, MAX_FILE_BYTES)  # a FIFO or /dev/tty there never blocks: refused
    except FileNotFoundError:
        return {}
    except TooLarge:
        raise ConfigError(f"{file}: not a config file (over {MAX_FILE_BYTES >> 20} MiB)", keep=[file]) from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot be read: {exc.strerror}", keep=[file]) from None
    import tomllib  # only for a file that exists: tomllib brings re, typing, datetime and enum

    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{file}: not valid TOML: not UTF-8 text", keep=[file]) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}", keep=[file]) from None
    except ValueError as exc:  # the parser's own: an integer of more digits than int() takes, and the like
        raise ConfigError(f"{file}: not valid TOML: {_short(str(exc))}", keep=[file]) from None
    except (RecursionError, MemoryError):
        raise ConfigError(f"{file}: not valid TOML: nested too deep", keep=[file]) from None


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
    return values  # type: ignore[return-value]  # typing.cast would import typing on the hot path


def load_layers(project_dir: str | None) -> tuple[Config, list[str]]:
    """The effective config from the files that can be used, and an error for each that cannot."""
    cfg, _, errors = load_sources(project_dir)
    return cfg, errors


def load_sources(project_dir: str | None) -> tuple[Config, list[tuple[str, dict[str, Any]]], list[str]]:
    """`load_layers`, with the files that count and the keys each sets (the later winning)."""
    layers: list[dict[str, Any]] = []
    used: list[tuple[str, dict[str, Any]]] = []
    errors: list[str] = []
    for i, file in enumerate(config_files(project_dir)):
        try:
            doc = _read_toml(file)
            if i > 0:  # the project's file: its user-only keys are refused, its other keys still apply
                refused = [k for k in doc if k not in PROJECT_KEYS and (k in TABLES or k in known_keys())]
                if refused:
                    errors.append(f"{file}: {', '.join(repr(k) for k in refused)} may only be set in your own config "
                                  f"({paths.user_config_file()}); ignored here, {OTHER_KEYS_APPLY}")
                    doc = {k: v for k, v in doc.items() if k not in refused}
            layer = validate(file, doc, project=i > 0)
            if i > 0 and project_dir and layer.get("include"):
                layer["include"] = anchored(project_dir, layer["include"])
            _together(file, merge(*layers, layer), layer)
        except ConfigError as exc:
            errors.append(str(exc))
            continue
        layers.append(layer)
        used.append((file, layer))
    cfg = merge(*layers)
    cfg["cliff"] = load_cliff()
    use_prices(cfg)
    return cfg, used, errors


OTHER_KEYS_APPLY = "the file's other keys apply"  # a project file's user-only keys refused, the file used


def left_out(error: str) -> str:
    """A config file that cannot be used (`error`, one of `load_layers`'), in the words `doctor` says it
    and every command that reads the config says once on stderr (`cli.messages.say_left_out`; the hooks and
    the status line only log it): the file, what is wrong, that it is left out, where to see more."""
    said = error if error.endswith(OTHER_KEYS_APPLY) else f"{error}; the file is left out (none of its settings apply)"
    return f"{said}: `{_command()} config show` says more"


# what an old name's value means now, as `doctor` and `config show` say it
NOW_MEANS = {("guard", "ask"): "the prompt held back once, with priced choices and the handoff prepared, "
                               "only once the cache has surely expired"}


def now_named(key: str, value: Any) -> Any:
    """`value` by its name now where it is a choice's earlier name (`guard`'s "block": "ask"), else as
    it is: what `config set` writes."""
    k = next((k for k in KEYS if k.name == key), None)
    return k.aliases.get(value, value) if k is not None and isinstance(value, str) else value


def old_names(project_dir: str | None) -> list[str]:
    """Each value a file that counts spells by an earlier name (`guard = "block"`), said with the name
    it is read as and what that means now (`doctor`, `config show`): the config reads it so without a
    word, and the user who wrote it meant something else once."""
    said = []
    for file, _layer in load_sources(project_dir)[1]:
        try:
            doc = _read_toml(file)
        except ConfigError:
            continue
        for k in KEYS:
            if not k.aliases:
                continue
            value: object = doc
            for part in k.name.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            if isinstance(value, str) and value in k.aliases:
                now = k.aliases[value]
                means = NOW_MEANS.get((k.name, now))
                said.append(f'{file}: {k.name} = "{value}" is an old name, read as "{now}"'
                            + (f": {means}" if means else "") + f' (`config set {k.name} {now}` writes it so)')
    return said


def get_value(project_dir: str | None, key: str) -> tuple[Any, str | None, list[str]]:
    """`key`'s effective value (None: not set, worked out at run time), the file it comes from (None:
    the default, or the built-in prices) and the errors of the files left out (`config get`). An
    unknown key is the command line's (UsageError, exit 2), as for `config unset`."""
    _known(key)
    cfg, used, errors = load_sources(project_dir)
    names = key_path(key)
    value: Any = cfg
    for name in names:
        value = value.get(name) if isinstance(value, dict) else None
    source = None
    for file, layer in used:  # the later file wins
        found: Any = layer
        for name in names:
            found = found.get(name, _MISSING) if isinstance(found, dict) else _MISSING
        if found is not _MISSING:
            source = file
    return value, source, errors


_MISSING = object()


def _known(key: str) -> None:
    """UsageError for a key no file may set (`prices.MODEL[.FIELD]` aside: any model id)."""
    from session_watcher.core.usererrors import UsageError

    if key.startswith("prices."):
        _price_parts(key)
        return
    if key not in known_keys():
        # the command line's own fault: the key it may have meant, not the file, nor a list of 31
        hint = _did_you_mean(key)
        # `config show`: the subcommand of the command just run, whichever route's it is (kept short)
        raise UsageError(f"unknown key '{_short(key)}' ({hint}`config show` lists every key)")


def _price_parts(key: str) -> tuple[str, str | None]:
    """`prices.MODEL` or `prices.MODEL.FIELD` taken apart, strictly: a model id may hold dots where a
    digit follows (`gpt-5.5`, `claude-3.5-sonnet`) or be quoted (`prices."my.model".input`); a last
    part that starts with a letter and is no price field is a field misspelt or unknown (UsageError,
    exit 2: `prices.claude-opus-4-6.output` was read as a model id that the tables priced as
    claude-opus-4's, and `config get` printed that)."""
    from session_watcher.core.prices import FIELDS
    from session_watcher.core.usererrors import UsageError

    rest = key[len("prices."):]

    def unknown(field: str, quoted: bool) -> UsageError:
        what = f"unknown field {_short(repr(field), 40)}" if field else "a field expected after the dot"
        more = "" if quoted else '; a model id with such a dot goes in quotes: prices."MODEL"'
        return UsageError(f"key '{_short(key)}': {what} (a price row's fields are {', '.join(FIELDS)}{more})")

    if rest.startswith('"') and rest.count('"') >= 2:
        model, tail = rest[1:].split('"', 1)
        field: str | None = tail[1:] if tail.startswith(".") else tail
        if tail and field not in FIELDS:
            raise unknown(field or "", quoted=True)
        field = field or None
    elif '"' in rest:  # `prices."a`: a quote without its pair was read as model `a`
        raise UsageError(f"key '{_short(key)}': a quote without its pair (a model id goes in quotes whole: "
                         'prices."MODEL" or prices."MODEL".FIELD)')
    else:
        model, dot, field = rest.rpartition(".")
        if not (dot and field in FIELDS):
            if dot and not field[:1].isdigit():  # `.output`, `.input.extra`, a trailing dot
                raise unknown(field, quoted=False)
            model, field = rest, None
    if not model:
        raise UsageError(f"key '{_short(key)}': expected a model id after 'prices.'")  # `prices.""` named as typed
    return model, field


def _command() -> str:
    """The command a config message names (base.route: the plugin's by its path on the plugin route)."""
    from session_watcher.base.route import cli_command

    return cli_command()


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
        raise ConfigError(errors[0], keep=config_files(project_dir))
    return cfg


# the classes of cliff.json: Claude Code's TTLs, then an OpenAI model's (core.prices_openai.CLASSES)
CLIFF_CLASSES = ("5m", "1h", "codex-30m", "codex-10m")


def load_cached(cache: ConfigCache, project_dir: str | None) -> tuple[Config, str | None]:
    """`cache` (kept in the session state) while it is current (`config_cache.cached`: the files' and
    the key table's stamps unchanged), else the files read again and kept in it.

    Returns the config and, when a file is bad, the error (that file is left out; the caller logs
    the error once: the cache remembers it so it is not logged again).
    """
    values = cached(cache, project_dir)
    if values is not None:
        return values, None
    now = stamp(project_dir)
    values, errors = load_layers(project_dir)
    error = "; ".join(errors) or None
    cache.update({"stamp": now, "values": values, "params": model_params(values), "error": error})
    return values, error


def load_cliff() -> Cliff:
    """The TTL cliffs `report` inferred from the user's own gaps ({"5m": s, "1h": s}, None where the
    evidence was too thin; an OpenAI class only where there is one), and under "evidence" the
    returns each rests on ({class: [returns below, cold of them, returns above, cold of them]}); a
    missing or unreadable file gives none."""
    out: Cliff = {"5m": None, "1h": None}
    try:
        from session_watcher.core.fastjson import loads

        doc = loads(paths.read_file(paths.cliff_file(), 1 << 16))
    except (OSError, ValueError):
        return out
    if isinstance(doc, dict):
        evidence = doc.get("evidence")
        evidence = evidence if isinstance(evidence, dict) else {}
        for cls in CLIFF_CLASSES:
            v = doc.get(cls)
            if isinstance(v, int | float) and not isinstance(v, bool) and 0 < v < 1e7:
                out[cls] = float(v)  # type: ignore[literal-required]  # one of the Cliff's classes
                ev = evidence.get(cls)
                if isinstance(ev, list) and len(ev) == 4 and all(type(n) is int and 0 <= n < 1 << 40 for n in ev):
                    out.setdefault("evidence", {})[cls] = ev
    return out


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

    from session_watcher.core.usererrors import UsageError

    try:
        _known(key)
        written = value = parse_cli_value(raw)
        key, value = _price_key(file, key, value)
        if key != "prices":  # the value given, named as given (not the file's); a price row is checked
            _check("config set", key, value)  # merged with the file's (below)
        value = now_named(key, value)  # `guard block` written "ask": `doctor` would say the old name
        if project and key not in PROJECT_KEYS:
            raise ConfigError(f"{file}: key '{key}' may only be set in your own config "
                              f"({paths.user_config_file()}); a project file may set {', '.join(PROJECT_KEYS)}",
                              keep=[file, paths.user_config_file()])
    except ConfigError as exc:  # the key or the value given: a command line that cannot work (exit 2)
        raise UsageError(str(exc), keep=exc.keep) from None
    from session_watcher.base.atomic import user_file, write_atomic, write_user_file

    # the user's own file is written through its link (a dotfiles repository keeps it); a project's
    # comes with the repository, so a link there (to ~/.bashrc?) is refused, never followed
    follow = not project
    target, _mode = user_file(file, follow=follow)  # read-only, a FIFO, a device: refused, said so
    moved = None
    before: dict[str, Any] = {}  # the file as it was: its own faults are not the command line's
    try:
        text = _read_text(target)
        doc = tomlkit.parse(text)
        before = doc.unwrap()
    except FileNotFoundError:
        doc = tomlkit.document()
    except (tomlkit.exceptions.ParseError, UnicodeDecodeError, RecursionError, ValueError):
        moved = f"{file}.broken-{int(time.time())}"  # kept for the user to look at, never lost
        doc = tomlkit.document()  # moved aside below, once the value given is known to be set
    if key == "prices" and "prices" in doc and isinstance(doc["prices"], dict):
        for model, row in value.items():  # one model's row set, the others kept
            doc["prices"][model] = {**doc["prices"].get(model, {}), **row}
    elif "." in key:
        table, sub = key.split(".", 1)
        if table not in doc:
            doc[table] = tomlkit.table()
        doc[table][sub] = value
    else:
        doc[key] = value
    try:
        layer = validate(file, doc.unwrap(), project)
        together(file, layer, over_user=project)  # as `load_layers` will
    except ConfigError as exc:
        if _usable(file, before, project):  # the file was sound: the value given breaks it (exit 2)
            raise UsageError(str(exc), keep=exc.keep) from None
        raise  # a fault of the file's own (a key set by hand): the file's, named (exit 1)
    if moved is not None:  # a value refused (above) leaves the file where it is
        if target != file:  # a link: its target keeps its place, a copy of the bytes goes aside
            write_atomic(moved, paths.read_file(target, MAX_FILE_BYTES << 6), fsync=False)
        else:
            os.replace(file, moved)
    folder = os.path.dirname(file) or "."
    if not project:
        paths.ensure_private_dir(folder)  # 0700 like every folder of ours (doctor checks it)
    else:
        os.makedirs(folder, exist_ok=True)  # the project's .claude/ or .codex/, whose mode is the project's
    write_user_file(file, tomlkit.dumps(doc).encode("utf-8"), follow=follow)
    return written, moved


def unset_value(file: str, key: str, project: bool = False) -> bool:
    """Take `key` (dotted for tables, `prices.MODEL` for one model's row) out of `file`, keeping its
    comments and layout, so the default (or the layer below) counts again; a table left empty goes.
    False when the file does not set it (nothing written). An unknown key, or a removal that breaks
    the merged values' rule (bp_red above bp_amber), is the command line's (UsageError, exit 2); a
    file that cannot be read as TOML is named (ConfigError, exit 1): `config set` moves it aside."""
    import tomlkit

    from session_watcher.core.usererrors import UsageError

    _known(key)
    names = key_path(key) if key.startswith("prices.") else key.split(".")
    from session_watcher.base.atomic import user_file, write_user_file

    follow = not project
    target, _mode = user_file(file, follow=follow)
    try:
        doc = tomlkit.parse(_read_text(target))
    except FileNotFoundError:
        return False
    except (tomlkit.exceptions.ParseError, UnicodeDecodeError, RecursionError, ValueError):
        raise ConfigError(f"{file}: could not be read as TOML (`{_command()} config set` moves it aside and "
                          "starts it afresh)", keep=[file]) from None
    before = doc.unwrap()
    if not _remove(doc, names, fold=1 if names[0] == "prices" else -1):
        return False
    try:
        layer = validate(file, doc.unwrap(), project)
        together(file, layer, over_user=project)
    except ConfigError as exc:
        if _usable(file, before, project):  # sound before: the removal breaks it (exit 2)
            raise UsageError(str(exc), keep=exc.keep) from None
        raise
    write_user_file(file, tomlkit.dumps(doc).encode("utf-8"), follow=follow)
    return True


def _remove(table: Any, names: list[str], fold: int = -1) -> bool:
    """Take `names` (a path of keys) out of `table`, a table left empty going with its last key;
    False when it is not there. The key at depth `fold` is matched in any case (a model's row under
    `prices`: the config reads its id in lower case, `[prices."My-Model"]` prices my-model), so
    every row of that id goes."""
    head, rest = names[0], names[1:]
    keys = [k for k in table if str(k).lower() == head] if fold == 0 else [head] if head in table else []
    gone = False
    for k in keys:
        inner = table[k]
        if rest and not (isinstance(inner, dict) and _remove(inner, rest, fold - 1)):
            continue
        if not rest or not inner:  # the key itself, or a table it left empty
            del table[k]
        gone = True
    return gone


def _usable(file: str, doc: Mapping[str, Any], project: bool) -> bool:
    """Whether `doc` (`file`'s values) passes the checks `load_layers` makes of it."""
    try:
        together(file, validate(file, doc, project), over_user=project)
    except ConfigError:
        return False
    return True


def together(file: str, layer: Mapping[str, Any], over_user: bool) -> None:
    """`layer`'s keys (of `file`) over the defaults (`over_user`: and over the user's own file) keep
    the merged values' rule; ConfigError naming the key the layer sets where they do not."""
    _together(file, merge(*([_user_layer()] if over_user else []), layer), layer)


def _user_layer() -> dict[str, Any]:
    """The user's own file's keys, or none where it cannot be used (`load_layers` says why): not
    valid, or breaking the merged values' rule over the defaults (`load_layers` leaves it out whole)."""
    file = paths.user_config_file()
    try:
        layer = validate(file, _read_toml(file))
        _together(file, merge(layer), layer)
    except ConfigError:
        return {}
    return layer


def key_path(key: str) -> list[str]:
    """The names leading to `key`'s value in the config: ["notify", "channels"], ["prices",
    "gpt-5.5", "input"] (a model id may hold dots; the config keeps it in lower case)."""
    if key.startswith("prices."):
        _, value = _price_key("", key, 0)
        model, row = next(iter(value.items()))
        return ["prices", model.lower(), *(row if isinstance(row, dict) else [])]
    return key.split(".")


def _price_key(file: str, key: str, value: Any) -> tuple[str, Any]:
    """`prices.MODEL` with a table, or `prices.MODEL.FIELD` with a number (a model id may hold dots;
    quotes around it are dropped), as the key `prices` with a one-model table."""
    if not key.startswith("prices."):
        return key, value
    from session_watcher.core.prices import FIELDS

    model, _, field = key[len("prices."):].rpartition(".")
    if field in FIELDS and model:
        value = {field: value}
    else:
        model = key[len("prices."):]
    model = model.strip('"')
    if not model:
        raise ConfigError(f"{file}: key 'prices.': expected a model id after 'prices.'", keep=[file])
    return "prices", {model: value}


def _read_text(file: str) -> str:
    try:
        return paths.read_file(file, MAX_FILE_BYTES).decode("utf-8")
    except TooLarge:
        raise ValueError("too large") from None


def show_toml(files: list[str], effective: Mapping[str, Any], width: int = 80, unread: list[str] | None = None,
              renamed: list[str] | None = None) -> str:
    """The effective config as TOML (what `config show` prints): the files it came from, in the order
    they count, as comments (and a project's file that is there but not read, `unread`; a value spelt
    by an old name, `renamed`: `old_names`); a key with
    no value (derived at run time) as a comment too; the comments wrapped within `width` columns (a
    path is never cut)."""
    import tomlkit

    from session_watcher.core.text import wrap

    def comment(text: str) -> None:
        for line in wrap(text, width - 2):
            doc.add(tomlkit.comment(line.replace("\0", " ")))

    doc = tomlkit.document()
    comment("session-watcher config: the defaults, then each file below that exists, the later winning")
    for f in files:  # a path one word for `wrap`: its spaces held as NULs (no path holds one) till written
        comment(f"  {f.replace(' ', chr(0))}{'' if os.path.exists(f) else '  (not present)'}")
    # a project's file not read; a value spelt by its earlier name and what it means now (`old_names`)
    for said in [f"not read: {f.replace(' ', chr(0))} (a project has one file: the one above counts)"
                 for f in unread or ()] + list(renamed or ()):
        comment(said)
    unset = []
    tables = []
    for key, value in effective.items():
        if key == "cliff":  # read from report's cliff.json, not a key of the files: said below, as a comment
            continue
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
        comment(f"not set (worked out at run time): {', '.join(unset)}")
    cliff = effective.get("cliff")
    if isinstance(cliff, dict):
        from session_watcher.core.numbers import duration
        from session_watcher.core.prices_openai import class_words

        found = [f"the {class_words(cls)} cache after {duration(v).replace(' ', chr(0))}" for cls, v in cliff.items()
                 if cls != "evidence" and isinstance(v, int | float)]
        doc.add(tomlkit.nl())
        head = "not a setting: where your cache expires, for the cold-cache guard: "
        report = f"`{_command().replace(' ', chr(0))} report`"  # the route's command, kept whole
        if not os.path.exists(paths.cliff_file()):  # no report has run: no file, no reason to give
            comment(head + f"not inferred yet: {report} infers it from your own sessions")
        else:
            comment(head + f"as {report} inferred it from your own sessions, "
                    + (", ".join(found) if found else "not yet (too few returns)") + "; kept in")
            comment(f"  {paths.cliff_file().replace(' ', chr(0))}")  # a path on a line of its own, as the files
    return tomlkit.dumps(doc)


def show_value(value: Any) -> str:
    """One value as TOML on one line, as `config set` echoes it: a table inline
    (`{input = 4.0, cache_read = 0.4}`), never as a block of `key = value` lines."""
    import tomlkit

    def inline(v: Any) -> Any:
        if isinstance(v, dict):
            table = tomlkit.inline_table()
            for k, x in v.items():
                table[k] = inline(x)
            return table
        if isinstance(v, list):
            array = tomlkit.array()
            for x in v:
                array.append(inline(x))
            return array
        return tomlkit.item(v)

    return str(inline(value).as_string())
