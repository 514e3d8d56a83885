"""Where the figures go, and as whom: the exporter's settings, from the `[otlp]` config, the standard
`OTEL_*` variables and the `env` blocks of Claude Code's managed and user settings.json, then the
OTLP/HTTP exporter of Codex's `[otel]` table (`$CODEX_HOME/config.toml`) where none of those names an
endpoint.

Claude Code strips `OTEL_*` from the environment of the hooks it runs (measured with 2.1.332: none of
them reached a hook, neither from the client's own environment nor from a settings `env` block,
while that block's other variables did), so a hook's exporter finds Claude Code's endpoint where
Claude Code does: in the settings files. The order for each variable is Claude Code's own (managed
settings over the user's over the process environment: with 2.1.332 a settings `env` value won over
the client's environment); the `[otlp]` keys win over all of them, and a URL given to `export --otlp`
over those. Only the user's and the managed settings are read: a project's `.claude/settings.json`
comes with a repository and must not redirect where the figures go.

The attributes are Claude Code's: `service.name=session-watcher` on the resource with the user's
`OTEL_RESOURCE_ATTRIBUTES` (which Claude Code also repeats on every point, and so do we), and
`user.id` (and for an OAuth login `user.account_uuid`, `organization.id`, `user.email`) from Claude
Code's `.claude.json`, as it exports them itself.
"""

from __future__ import annotations

import os
import sys
from urllib.parse import unquote

from session_watcher.core.usererrors import NoTarget

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from session_watcher.core.shapes import OtlpConfig

DEFAULT_ENDPOINT = "http://localhost:4318"  # the OTLP/HTTP default
CODEX_CONFIG = "$CODEX_HOME/config.toml"  # as a setting's name in a message
PROTOCOLS = ("http/protobuf", "http/json")
MAX_SETTINGS_BYTES = 16 << 20
# our own resource attributes: the user's OTEL_RESOURCE_ATTRIBUTES name Claude Code's service, not ours
OWN = ("service.name", "service.version", "os.type", "host.arch")


def managed_settings_files(env: Mapping[str, str]) -> list[str]:
    """Claude Code's managed settings, where its docs put them per platform
    (`SESSION_WATCHER_CLAUDE_MANAGED_SETTINGS` names another file: the tests' stand-in)."""
    override = env.get("SESSION_WATCHER_CLAUDE_MANAGED_SETTINGS")
    if override:
        return [override]
    if sys.platform == "darwin":
        return ["/Library/Application Support/ClaudeCode/managed-settings.json"]
    if sys.platform == "win32":  # pragma: no cover - not exercised on Linux
        return [r"C:\Program Files\ClaudeCode\managed-settings.json",
                r"C:\ProgramData\ClaudeCode\managed-settings.json"]
    return ["/etc/claude-code/managed-settings.json"]


def _claude_dir(env: Mapping[str, str]) -> str:
    configured = [p.strip() for p in env.get("CLAUDE_CONFIG_DIR", "").split(",") if p.strip()]
    return os.path.expanduser(configured[0]) if configured else os.path.expanduser("~/.claude")


def user_settings_file(env: Mapping[str, str]) -> str:
    return os.path.join(_claude_dir(env), "settings.json")


def claude_state_file(env: Mapping[str, str]) -> str:
    """Claude Code's `.claude.json`: inside CLAUDE_CONFIG_DIR when that is set, else in the home folder."""
    if env.get("CLAUDE_CONFIG_DIR", "").strip():
        return os.path.join(_claude_dir(env), ".claude.json")
    return os.path.expanduser("~/.claude.json")


IDENTITY_TRIES = 10


def _json_file(path: str) -> dict[str, Any]:
    import json

    from session_watcher.base.paths import read_file

    try:  # a regular file only (paths.read_file: a FIFO there never blocks), TooLarge past the limit
        doc = json.loads(read_file(path, MAX_SETTINGS_BYTES))
    except (OSError, ValueError, RecursionError):
        return {}
    return doc if isinstance(doc, dict) else {}


def codex_config_file(env: Mapping[str, str]) -> str:
    """Codex's user config: `$CODEX_HOME/config.toml` (default `~/.codex`)."""
    return os.path.join(env.get("CODEX_HOME") or os.path.expanduser("~/.codex"), "config.toml")


CODEX_PROTOCOLS = {"binary": "http/protobuf", "json": "http/json"}  # its otlp-http `protocol`


def codex_exporter(env: Mapping[str, str]) -> dict[str, Any] | None:
    """The OTLP/HTTP exporter Codex's `[otel]` table names, if any: `metrics_exporter`, else `exporter`
    (its log events), else `trace_exporter`, each `{ otlp-http = { endpoint, protocol, headers } }`
    (an `otlp-grpc` one, `none` or `statsig` is no place for OTLP/HTTP). {"endpoint", "protocol"
    (ours, or None), "headers"}; None for no such exporter, or a file that is not TOML."""
    import tomllib

    from session_watcher.base.paths import read_file

    try:
        doc = tomllib.loads(read_file(codex_config_file(env), MAX_SETTINGS_BYTES).decode("utf-8"))
    except (OSError, ValueError, RecursionError, MemoryError):  # TOMLDecodeError and UnicodeDecodeError are
        return None  # ValueErrors; a value nested too deep is a RecursionError (it ended export with a traceback)
    otel = doc.get("otel")
    for key in ("metrics_exporter", "exporter", "trace_exporter"):
        kind = otel.get(key) if isinstance(otel, dict) else None
        http = kind.get("otlp-http") if isinstance(kind, dict) else None
        endpoint = http.get("endpoint") if isinstance(http, dict) else None
        if isinstance(http, dict) and isinstance(endpoint, str) and endpoint.strip():
            headers = http.get("headers")
            return {"endpoint": endpoint.strip(), "protocol": CODEX_PROTOCOLS.get(str(http.get("protocol"))),
                    "headers": {str(k): str(v) for k, v in headers.items()} if isinstance(headers, dict) else {}}
    return None


def settings_env(env: Mapping[str, str]) -> dict[str, str]:
    """The variables Claude Code would see: the process environment, overlaid by the user's
    settings `env` block, overlaid by the managed one."""
    merged = {k: v for k, v in env.items() if k.startswith("OTEL_") or k == "CLAUDE_CODE_ENABLE_TELEMETRY"}
    for path in (user_settings_file(env), *managed_settings_files(env)):
        block = _json_file(path).get("env")
        if isinstance(block, dict):
            merged.update({str(k): str(v) for k, v in block.items() if isinstance(v, str | int | float | bool)})
    return merged


def pairs(text: str) -> dict[str, str]:
    """`k=v,k2=v2` (OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS), values percent-decoded."""
    out: dict[str, str] = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        if sep and key.strip():
            out[unquote(key.strip())] = unquote(value.strip())
    return out


def _signal_urls(base: str) -> dict[str, str]:
    """The two OTLP/HTTP paths under an endpoint that names the collector (the generic variable's rule)."""
    base = base.rstrip("/")
    for suffix in ("/v1/metrics", "/v1/logs", "/v1/traces"):
        base = base.removesuffix(suffix)
    return {"metrics": base + "/v1/metrics", "logs": base + "/v1/logs"}


class Target:
    """Everything one export needs: the URLs, the encoding, the headers, the timeout, who we are."""

    source = "default"  # where the endpoint came from: argument, config, environment, codex config, default
    named = ""  # the setting that named the metrics URL ("[otlp] endpoint", "[otel] in $CODEX_HOME/config.toml", ...)

    def __init__(self, urls: dict[str, str], protocol: str, headers: dict[str, str], timeout: float,
                 who: tuple[dict[str, Any], dict[str, Any]]) -> None:
        self.urls, self.protocol, self.headers, self.timeout = urls, protocol, headers, timeout
        self.resource, self.common = who  # the resource's attributes, and those on every point


def _endpoints(otlp: OtlpConfig, vars_: Mapping[str, str], url: str | None, codex: Mapping[str, Any] | None,
               ) -> tuple[dict[str, str], str, dict[str, str]]:
    """(the URL per signal, where they came from, the setting that named each URL). `codex`: the
    exporter Codex's config names (`codex_exporter`), used where nothing before it names one."""
    explicit = url or otlp.get("endpoint") or ""
    if explicit:
        name = "--otlp" if url else "[otlp] endpoint"
        return _signal_urls(explicit), "argument" if url else "config", {"metrics": name, "logs": name}
    generic = vars_.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    urls = _signal_urls(generic or DEFAULT_ENDPOINT)
    names = dict.fromkeys(urls, "OTEL_EXPORTER_OTLP_ENDPOINT" if generic else "the default endpoint")
    for signal in ("metrics", "logs"):
        own = vars_.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT", "").strip()
        if own:
            urls[signal] = own  # a signal's own endpoint is used as it is
            names[signal] = f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT"
    named = generic or vars_.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "").strip()
    if not named and codex is not None and "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT" not in names.values():
        # Codex's collector: its one endpoint names a signal's path
        name = f"[otel] in {CODEX_CONFIG}"
        return _signal_urls(codex["endpoint"]), "codex config", {"metrics": name, "logs": name}
    return urls, "environment" if named else "default", names


def check_url(url: str, name: str) -> None:
    """A URL the HTTP client can use, else NoTarget naming the setting: http(s), a host, a port that
    is a number, no control character or space."""
    from urllib.parse import urlsplit

    if not url.startswith(("http://", "https://")):
        raise NoTarget(f"{name}: the OTLP endpoint {url!r} is not an http:// or https:// URL")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is no number or out of range
    except ValueError as exc:
        raise NoTarget(f"{name}: the OTLP endpoint {url!r} is not a usable URL ({exc})") from None
    if not parts.hostname or any(ord(c) <= 0x20 or ord(c) >= 0x7F for c in url):
        raise NoTarget(f"{name}: the OTLP endpoint {url!r} is not a usable URL (no host, or a space or "
                       "control character in it)")


def _header_problem(key: str, value: str) -> str | None:
    """Why the HTTP client cannot send this header (None: it can): a name that is no token, a
    value outside Latin-1 or with a control character (CR/LF would start a header of its own)."""
    if not key or any(c in '()<>@,;:\\"/[]?={} \t' or not 0x20 < ord(c) < 0x7F for c in key):
        return f"header name {key!r} is not an HTTP token"
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        return f"header {key!r}: its value is not Latin-1 text"
    if any((ord(c) < 0x20 and c != "\t") or ord(c) == 0x7F for c in value):
        return f"header {key!r}: its value holds a control character (CR, LF, ...)"
    return None


def _headers(otlp: OtlpConfig, vars_: Mapping[str, str], codex: Mapping[str, Any] | None) -> dict[str, str]:
    """The request headers, later sources winning (`codex`: the headers of Codex's exporter, when
    the endpoint is its: then the OTEL_* headers, for Claude Code's collector, stay off it); NoTarget
    naming the setting of one that cannot be sent."""
    out: dict[str, str] = {}
    env = (("OTEL_EXPORTER_OTLP_HEADERS", pairs(vars_.get("OTEL_EXPORTER_OTLP_HEADERS", ""))),
           ("OTEL_EXPORTER_OTLP_METRICS_HEADERS", pairs(vars_.get("OTEL_EXPORTER_OTLP_METRICS_HEADERS", ""))))
    for name, given in ((f"[otel] in {CODEX_CONFIG}", dict((codex or {}).get("headers") or {})),
                        *(env if codex is None else ()),
                        ("[otlp] headers", dict(otlp.get("headers") or {}))):
        for key, value in given.items():
            problem = _header_problem(str(key), str(value))
            if problem:
                raise NoTarget(f"{name}: {problem}; fix it and export starts again")
            out[str(key)] = str(value)
    return out


def resolve(otlp: OtlpConfig, env: Mapping[str, str] = os.environ, url: str | None = None,
            version: str = "") -> Target:
    """The export's settings; raises NoTarget when export is on but cannot work as configured."""
    vars_ = settings_env(env)
    codex = codex_exporter(env) if not (url or otlp.get("endpoint")) else None
    urls, source, names = _endpoints(otlp, vars_, url, codex)
    if source != "codex config":
        codex = None
    if source == "default" and otlp.get("enabled") == "auto":
        raise NoTarget("Claude Code's telemetry is on but names no OTLP endpoint in its settings.json env block "
                       "(an endpoint in the client's own environment does not reach hooks), nor does Codex's [otel] "
                       "an OTLP/HTTP exporter: set [otlp] endpoint")
    for signal, u in urls.items():
        check_url(u, names[signal])
    protocol = (otlp.get("protocol") or (codex or {}).get("protocol")
                or vars_.get("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL") or vars_.get("OTEL_EXPORTER_OTLP_PROTOCOL")
                or "http/protobuf").strip()
    if protocol not in PROTOCOLS:
        raise NoTarget(f"OTLP protocol {protocol!r} is not supported (only OTLP/HTTP: {', '.join(PROTOCOLS)}); "
                       "set [otlp] endpoint to the collector's OTLP/HTTP address (port 4318) and [otlp] protocol")
    headers = _headers(otlp, vars_, codex)
    given: dict[str, str | int | float | bool] = {
        k: v for k, v in pairs(vars_.get("OTEL_RESOURCE_ATTRIBUTES", "")).items() if k not in OWN}
    given.update(otlp.get("resource_attributes") or {})
    import platform

    os_type = {"win32": "windows", "cygwin": "windows"}.get(sys.platform, sys.platform.rstrip("0123456789"))
    resource: dict[str, Any] = {"service.name": "session-watcher", "service.version": version, "os.type": os_type,
                                "host.arch": {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine().lower(),
                                                                                         platform.machine().lower())}
    resource.update(given)
    common: dict[str, Any] = {k: v for k, v in given.items() if k != "service.name"}
    common.update(identity(env, vars_))
    timeout = float(otlp.get("timeout") or 5)
    target = Target(urls, protocol, headers, timeout, (resource, common))
    target.source, target.named = source, names["metrics"]
    return target


def _claude_state(env: Mapping[str, str]) -> dict[str, Any]:
    """`.claude.json` as Claude Code last wrote it. The client rewrites the file in place while it
    runs (a reader can meet it empty or half written), and on its first start on a machine it writes
    the file several times before `userID` is in it: a file that exists but does not parse, or has no
    `userID` yet, is read again, a few times, 100 ms apart (this runs in the detached exporter, never
    in a hook); then what it last held."""
    import time

    path = claude_state_file(env)
    doc: dict[str, Any] = {}
    for attempt in range(IDENTITY_TRIES):
        doc = _json_file(path)
        if "userID" in doc or not os.path.exists(path):
            return doc
        if attempt + 1 < IDENTITY_TRIES:
            time.sleep(0.1)
    return doc


def identity(env: Mapping[str, str], vars_: Mapping[str, str]) -> dict[str, str]:
    """Claude Code's user attributes, from its `.claude.json`: `user.id` (its anonymous id), and for an
    OAuth login the account, organization and email (the account id unless
    OTEL_METRICS_INCLUDE_ACCOUNT_UUID is false, as Claude Code does)."""
    doc = _claude_state(env)
    out: dict[str, str] = {}
    if isinstance(doc.get("userID"), str):
        out["user.id"] = doc["userID"]
    account = doc.get("oauthAccount")
    if isinstance(account, dict):
        if isinstance(account.get("accountUuid"), str) and vars_.get("OTEL_METRICS_INCLUDE_ACCOUNT_UUID",
                                                                      "true").lower() != "false":
            out["user.account_uuid"] = account["accountUuid"]
        if isinstance(account.get("organizationUuid"), str):
            out["organization.id"] = account["organizationUuid"]
        if isinstance(account.get("emailAddress"), str):
            out["user.email"] = account["emailAddress"]
    return out

