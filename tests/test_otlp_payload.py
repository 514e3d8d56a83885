"""The OTLP documents (session_watcher.otlp.payload), the [otlp] config and where the export goes
(session_watcher.otlp.settings): values equal to the status document, valid for the official
opentelemetry-proto messages in both encodings, cumulative sums that repeat exactly, nothing of
the user's paths on the wire, and Claude Code's own precedence for its telemetry settings."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

from session_watcher.base import config
from session_watcher.core.usererrors import ConfigError, NoTarget
from session_watcher.otlp import exporter, payload, settings, wire
from session_watcher.sessions.replay import replay
from tests.oracle import FIXTURES

if TYPE_CHECKING:
    from session_watcher.core.shapes import OtlpConfig

COLD = FIXTURES / "cold-return" / "03a1382e-ecd5-42c4-b3d4-5c659e165904.jsonl"
CFG = config.merge()
NOW = 1_800_000_000.0


@pytest.fixture(scope="module")
def replayed() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    doc, trace = replay(str(COLD), cfg=CFG)
    alerts = [a for row in trace for a in row["alerts"]]
    return doc, alerts


def _values(req: dict[str, Any]) -> dict[tuple[str, tuple[tuple[str, str], ...]], dict[str, Any]]:
    """(metric, its distinguishing attributes) -> the point, from a metrics request document."""
    out = {}
    for rm in req["resourceMetrics"]:
        for sm in rm["scopeMetrics"]:
            for m in sm["metrics"]:
                data = m.get("gauge") or m["sum"]
                for p in data["dataPoints"]:
                    attrs = {a["key"]: next(iter(a["value"].values())) for a in p["attributes"]}
                    key = tuple(sorted((k, v) for k, v in attrs.items() if k in ("state", "kind", "type", "ttl")))
                    value = float(p["asInt"]) if "asInt" in p else p["asDouble"]
                    out[(m["name"], key)] = {**p, "value": value, "attrs": attrs, "metric": m}
    return out


def _request(doc: dict[str, Any], at: float = NOW, common: dict[str, Any] | None = None) -> dict[str, Any]:
    batch = payload.Batch()
    payload.add_session(batch, doc, payload.session_attributes(doc, common or {"user.id": "u1"}, None), at)
    payload.add_lifetimes(batch, {"5m": 420.0, "1h": None}, common or {"user.id": "u1"}, at)
    return batch.request({"service.name": "session-watcher"}, "0.1.0")


def test_every_figure_equals_the_status_document(replayed: tuple[dict[str, Any], list[Any]]) -> None:
    doc, _ = replayed
    got = _values(_request(doc))
    assert got[("session_watcher.x", ())]["value"] == doc["x"]
    assert got[("session_watcher.x_sweet", ())]["value"] == doc["xSweet"]
    assert got[("session_watcher.context.tokens", ())]["value"] == doc["L"]
    assert got[("session_watcher.baseline.tokens", ())]["value"] == doc["bDefault"]
    assert got[("session_watcher.restart.saving", ())]["value"] == doc["savingUsd"]
    assert got[("session_watcher.warmth", ())]["value"] == doc["warmth"]
    assert got[("session_watcher.calls", ())]["value"] == doc["calls"]
    assert {s: got[("session_watcher.lamp", (("state", s),))]["value"] for s in payload.LAMPS} == {
        s: float(s == doc["lamp"]) for s in payload.LAMPS}
    assert [got[("session_watcher.advice", (("kind", k),))]["value"] for k in ("gate", "reminder", "cold_return")] == [
        doc["advice"]["gate"], doc["advice"]["reminder"], doc["advice"]["coldReturn"]]
    assert got[("session_watcher.cold_returns", ())]["value"] == doc["coldReturns"]["n"] == 2
    assert got[("session_watcher.cold_return.tokens", ())]["value"] == doc["coldReturns"]["tokens"]
    assert got[("session_watcher.cold_return.cost", ())]["value"] == doc["coldReturns"]["usd"]
    assert got[("session_watcher.cache.tokens", (("type", "read"),))]["value"] == doc["warmthTokens"]["read"]
    assert got[("session_watcher.cache.lifetime", (("ttl", "5m"),))]["value"] == 420.0
    assert got[("session_watcher.cache.lifetime", (("ttl", "5m"),))]["attrs"]["source"] == "inferred"
    assert got[("session_watcher.cache.lifetime", (("ttl", "1h"),))]["attrs"]["source"] == "ttl"
    names = {name for name, _ in got}
    # no handoff here, and a restart's realized saving is priced by `export --otlp` only
    assert names == {m.name for m in payload.CATALOGUE} - {"session_watcher.restarts", payload.REALIZED.name}
    point = got[("session_watcher.x", ())]
    assert point["attrs"]["session.id"] == doc["sessionId"]
    assert point["attrs"]["model"] == doc["model"]
    assert point["attrs"]["user.id"] == "u1"


def test_counters_start_at_the_first_call_and_say_the_same_again(replayed: tuple[dict[str, Any], list[Any]]) -> None:
    """A repeated or a later export of the same state: the same start, the same cumulative value."""
    doc, _ = replayed
    one, two = _values(_request(doc, NOW)), _values(_request(doc, NOW + 60))
    counters = [k for k, p in one.items() if "sum" in p["metric"]]
    assert len(counters) == 9
    for k in counters:
        assert one[k]["metric"]["sum"]["aggregationTemporality"] == payload.CUMULATIVE
        assert one[k]["metric"]["sum"]["isMonotonic"] is True
        assert one[k]["startTimeUnixNano"] == two[k]["startTimeUnixNano"] == payload.nanos(doc["firstTs"])
        assert one[k]["value"] == two[k]["value"]
        assert int(two[k]["timeUnixNano"]) - int(one[k]["timeUnixNano"]) == 60 * 10**9


def test_both_encodings_are_the_same_official_message(replayed: tuple[dict[str, Any], list[Any]]) -> None:
    doc, alerts = replayed
    req = _request(doc)
    as_json, ctype = wire.encode(req, "http/json", "metrics")
    assert ctype == "application/json"
    from_json = json_format.Parse(as_json.decode(), ExportMetricsServiceRequest())
    as_proto, ctype = wire.encode(req, "http/protobuf", "metrics")
    assert ctype == "application/x-protobuf"
    assert ExportMetricsServiceRequest.FromString(as_proto) == from_json
    assert len(from_json.resource_metrics[0].scope_metrics[0].metrics) == len(payload.CATALOGUE) - 2
    records = [r for a in alerts if (r := payload.advice_record(a, {"session.id": doc["sessionId"]}, NOW))]
    logs = payload.logs_request(records, {"service.name": "session-watcher"}, "0.1.0")
    body, _ = wire.encode(logs, "http/protobuf", "logs")
    msg = ExportLogsServiceRequest.FromString(body)
    assert msg == json_format.Parse(wire.encode(logs, "http/json", "logs")[0].decode(), ExportLogsServiceRequest())
    got = msg.resource_logs[0].scope_logs[0].log_records
    assert len(got) == len(alerts) == sum(doc["advice"].values())
    assert {r.body.string_value for r in got} == {"session_watcher.advice"}


def otlp_keys(**keys: bool) -> OtlpConfig:
    """The [otlp] keys the payload reads (`project`, `events`); a loaded config has them all."""
    return cast("OtlpConfig", keys)


def test_no_path_leaves_the_machine_unless_the_project_is_opted_in(tmp_path: Path,
                                                                   replayed: tuple[dict[str, Any], list[Any]]) -> None:
    """The alerts carry the project's path and the status document the files': none of it is sent.
    Opted in, the project is named by its folder's name, never its path."""
    doc, alerts = replayed
    project = "/home/someone/work/secret-project"
    doc = {**doc, "project": project}
    alerts = [{**a, "project": project} for a in alerts]
    target = settings.Target({"metrics": "http://127.0.0.1:9/v1/metrics", "logs": "http://127.0.0.1:9/v1/logs"},
                             "http/json", {}, 1.0, ({"service.name": "session-watcher"}, {"user.id": "u"}))
    for opted in (False, True):
        otlp = otlp_keys(project=opted, events=True)
        metrics, logs, _ = exporter.build(target, otlp, [(doc, alerts)], {}, None, NOW)
        text = json.dumps(metrics) + json.dumps(logs)
        assert "/home/someone" not in text
        assert "/work/" not in text
        assert ('"secret-project"' in text) is opted
    full_doc, _ = replay(str(COLD), cfg=CFG)
    paths = [b["path"] for b in full_doc["buckets"] if b.get("path")]
    assert paths  # the session read files: their paths are in the document, not on the wire
    metrics, logs, _ = exporter.build(target, otlp_keys(project=False), [(full_doc, alerts)], {}, None, NOW)
    assert not any(p in json.dumps(metrics) + json.dumps(logs) for p in paths)


def test_a_worktrees_project_has_one_name_in_the_report_the_export_and_the_alert(
        replayed: tuple[dict[str, Any], list[Any]]) -> None:
    """A git worktree's project is `repo/1` in `report` (its tables, `projectName`); OTLP's `project`
    attribute (opted in) and an alert's words named it `1`, by its last folder alone: one project,
    two names where a dashboard joins them. Each place names a project by one function."""
    from session_watcher.notifier import message
    from session_watcher.reports.fmt import project_name

    doc, alerts = replayed
    target = settings.Target({"metrics": "http://127.0.0.1:9/v1/metrics", "logs": "http://127.0.0.1:9/v1/logs"},
                             "http/json", {}, 1.0, ({"service.name": "session-watcher"}, {"user.id": "u"}))
    for path, name in (("/home/u/cli/.worktrees/1", "cli/1"), ("/home/u/.claude-worktrees/cli/fox", "cli/fox"),
                       ("/home/u/cli/.claude/worktrees/feat/", "cli/feat"), ("C:\\src\\cli\\.worktrees\\2", "cli/2"),
                       ("/home/u/worktrees/x", "x"), ("/home/u/shop", "shop")):
        assert project_name(path, "folder") == name
        assert exporter.project_name(path, True) == name
        assert message.project_name(path) == name
        metrics, _logs, _ = exporter.build(target, otlp_keys(project=True, events=False),
                                           [({**doc, "project": path}, alerts)], {}, None, NOW)
        said = {a["value"]["stringValue"] for rm in metrics["resourceMetrics"] for sm in rm["scopeMetrics"]
                for m in sm["metrics"] for kind in m.values() if isinstance(kind, dict)
                for p in kind.get("dataPoints", []) for a in p["attributes"] if a["key"] == "project"}
        assert said == {name}, path


@pytest.mark.parametrize(("key", "value"), [
    ("endpoint", "ftp://collector:4318"), ("endpoint", "http://"), ("protocol", "grpc"), ("interval", 0),
    ("interval", 1e9), ("headers", {"a": "x\r\ny"}), ("enabled", "yes"), ("resource_attributes", ["team.id"]),
])
def test_a_bad_otlp_value_is_refused_naming_the_key(key: str, value: Any) -> None:
    with pytest.raises(ConfigError, match=f"otlp.{key}"):
        config.validate("c.toml", {"otlp": {key: value}})


def test_otlp_is_the_users_own_a_project_file_cannot_set_it(tmp_path: Path) -> None:
    """A repository could otherwise send the user's figures wherever it likes."""
    with pytest.raises(ConfigError, match="may only be set in your own config"):
        config.validate("p.toml", {"otlp": {"endpoint": "http://elsewhere:4318"}}, project=True)
    cfg = config.merge(config.validate("c.toml", {"otlp": {"enabled": True, "interval": 30}}))
    assert cfg["otlp"]["enabled"] is True
    assert cfg["otlp"]["interval"] == 30
    assert cfg["otlp"]["protocol"] == ""
    assert cfg["otlp"]["events"] is True


def _settings_files(tmp: Path, user_env: dict[str, str] | None, managed_env: dict[str, str] | None) -> dict[str, str]:
    claude = tmp / "claude"
    claude.mkdir(exist_ok=True)
    if user_env is not None:
        (claude / "settings.json").write_text(json.dumps({"env": user_env}))
    managed = tmp / "managed.json"
    if managed_env is not None:
        managed.write_text(json.dumps({"env": managed_env}))
    (claude / ".claude.json").write_text(json.dumps({"userID": "abc123", "oauthAccount": {
        "accountUuid": "acc-1", "organizationUuid": "org-1", "emailAddress": "dev@example.invalid"}}))
    return {"CLAUDE_CONFIG_DIR": str(claude), "SESSION_WATCHER_CLAUDE_MANAGED_SETTINGS": str(managed)}


def test_claude_codes_settings_say_where_in_its_own_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The managed env block over the user's over the process's; [otlp] over all; a URL over that."""
    env = {**_settings_files(tmp_path, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://user:4318",
                                        "OTEL_RESOURCE_ATTRIBUTES": "team.id=t-user,cost_center=cc%2C1",
                                        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
                                        "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20tok"},
                              {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://managed:4318/"}),
           "OTEL_EXPORTER_OTLP_ENDPOINT": "http://process:4318", "HOME": str(tmp_path)}
    otlp = config.DEFAULTS["otlp"].copy()
    t = settings.resolve(otlp, env, version="9")
    assert t.urls == {"metrics": "http://managed:4318/v1/metrics", "logs": "http://managed:4318/v1/logs"}
    assert t.protocol == "http/json"
    assert t.headers == {"Authorization": "Bearer tok"}
    assert t.resource["service.name"] == "session-watcher"
    assert t.resource["service.version"] == "9"
    assert t.resource["team.id"] == "t-user"
    assert t.common["cost_center"] == "cc,1"
    assert t.common["user.id"] == "abc123"
    assert t.common["user.account_uuid"] == "acc-1"
    assert t.common["organization.id"] == "org-1"
    assert t.common["user.email"] == "dev@example.invalid"
    assert "service.name" not in t.common  # the resource names the service; the points do not
    t = settings.resolve({**otlp, "endpoint": "http://mine:4318", "protocol": "http/protobuf"}, env)
    assert (t.urls["metrics"], t.protocol, t.source) == ("http://mine:4318/v1/metrics", "http/protobuf", "config")
    t = settings.resolve({**otlp, "endpoint": "http://mine:4318"}, env, url="http://arg:4318/v1/metrics")
    assert (t.urls["logs"], t.source) == ("http://arg:4318/v1/logs", "argument")
    env["OTEL_METRICS_INCLUDE_ACCOUNT_UUID"] = "false"
    assert "user.account_uuid" not in settings.resolve(otlp, env).common


def test_a_signals_own_endpoint_is_used_as_it_is_and_grpc_is_refused(tmp_path: Path) -> None:
    env = {**_settings_files(tmp_path, {"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://c:4318/custom/metrics",
                                        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, None), "HOME": str(tmp_path)}
    t = settings.resolve(config.DEFAULTS["otlp"].copy(), env)
    assert t.urls == {"metrics": "http://c:4318/custom/metrics", "logs": "http://c:4318/v1/logs"}
    env2 = {**_settings_files(tmp_path, {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
                                         "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317"}, None), "HOME": str(tmp_path)}
    with pytest.raises(NoTarget, match="grpc"):
        settings.resolve(config.DEFAULTS["otlp"].copy(), env2)


def test_auto_without_an_endpoint_in_the_settings_has_nowhere_to_go(tmp_path: Path) -> None:
    """Claude Code's telemetry on, its endpoint only in its own environment (which hooks never see):
    the exporter says so instead of guessing; `enabled = true` goes to the OTLP default."""
    env = {**_settings_files(tmp_path, {}, None), "HOME": str(tmp_path), "CLAUDE_CODE_ENABLE_TELEMETRY": "1"}
    with pytest.raises(NoTarget, match="set \\[otlp\\] endpoint"):
        settings.resolve(config.DEFAULTS["otlp"].copy(), env)
    t = settings.resolve({**config.DEFAULTS["otlp"], "enabled": True}, env)
    assert t.urls["metrics"] == "http://localhost:4318/v1/metrics"
    assert t.source == "default"
    assert os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") is None


def test_the_lifetime_classes_of_codex_threads_join_claude_codes() -> None:
    """Claude Code's TTL classes always (as before); a Codex thread's cache class where the export
    holds one (by its model: codex-30m from gpt-5.6, which charges for a write; codex-10m before),
    and an OpenAI class the user's cliff inferred; each class's lifetime its cliff, else its floor."""
    from session_watcher.core.prices_openai import FLOOR_NEW, FLOOR_OLD

    claude = {"agent": "claude-code", "model": "claude-opus-4-6"}
    assert payload.lifetime_classes([claude], None) == ["5m", "1h"]
    assert payload.lifetime_classes([claude, {"agent": "codex", "model": "gpt-5.6-sol"}], None) == \
        ["5m", "1h", "codex-30m"]
    assert payload.lifetime_classes([{"agent": "codex", "model": "gpt-5.5"}], {"codex-30m": 2000.0}) == \
        ["5m", "1h", "codex-10m", "codex-30m"]
    batch = payload.Batch()
    payload.add_lifetimes(batch, {"codex-10m": 2400.0}, {"user.id": "u1"}, NOW, ["5m", "codex-10m", "codex-30m"])
    got = _values(batch.request({"service.name": "session-watcher"}, "0.1.0"))
    lives = {k[1][0][1]: (v["value"], v["attrs"]["source"]) for k, v in got.items()
             if k[0] == "session_watcher.cache.lifetime"}
    assert lives == {"5m": (300.0, "ttl"), "codex-10m": (2400.0, "inferred"), "codex-30m": (FLOOR_NEW, "ttl")}
    assert FLOOR_OLD == 600.0


def test_a_lifetime_class_is_one_the_guard_prices_a_cache_by() -> None:
    """The classes follow the guard's rule (core.eoq.cache_class): a Codex thread with no model yet
    (no call: no cache) or on a model that is not OpenAI's `gpt-` line is priced at Claude Code's
    TTL classes, and adds no OpenAI class; the export sent codex-10m for them, a lifetime no
    session's cache had."""
    from session_watcher.core import eoq

    for model in (None, "", "o3", "llama3.1"):
        doc = {"agent": "codex", "model": model}
        assert eoq.cache_class("5m", model) == "5m"
        assert payload.lifetime_classes([doc], None) == ["5m", "1h"], model
    assert payload.lifetime_classes([{"agent": "codex", "model": "gpt-5.3-codex"}], None) == ["5m", "1h", "codex-10m"]
    assert payload.lifetime_classes([{"agent": "claude-code", "model": "GPT-6.2-sol"}], None) == \
        ["5m", "1h", "codex-30m"]


def _codex_home(tmp: Path, otel: str) -> str:
    """A Codex home whose config.toml holds `otel` (TOML) after a model setting, as a user's does."""
    home = tmp / "codex-home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text('model = "gpt-5.2-codex"\n\n' + otel)
    return str(home)


def test_codexs_otel_exporter_says_where_after_claude_codes_settings(tmp_path: Path) -> None:
    """Codex's `[otel]` OTLP/HTTP exporter (its `metrics_exporter`, else `exporter`, else
    `trace_exporter`) is the endpoint where Claude Code's settings name none: its protocol and headers
    with it, "auto" no longer nowhere to go; Claude Code's endpoint, [otlp] and a URL win over it, and
    its headers never go to another collector; a gRPC exporter, or a config that is no TOML, is none."""
    auto = config.DEFAULTS["otlp"].copy()
    codex = _codex_home(tmp_path, '[otel]\nenvironment = "dev"\n'
                                  '[otel.exporter."otlp-http"]\nendpoint = "http://127.0.0.1:4318/v1/logs"\n'
                                  'protocol = "json"\n[otel.exporter."otlp-http".headers]\n"x-otlp-api-key" = "k1"\n')
    env = {**_settings_files(tmp_path, {}, None), "CODEX_HOME": codex, "CLAUDE_CODE_ENABLE_TELEMETRY": "1"}
    t = settings.resolve(auto, env)
    assert t.urls == {"metrics": "http://127.0.0.1:4318/v1/metrics", "logs": "http://127.0.0.1:4318/v1/logs"}
    assert (t.protocol, t.headers, t.source) == ("http/json", {"x-otlp-api-key": "k1"}, "codex config")
    t = settings.resolve({**auto, "protocol": "http/protobuf", "headers": {"x-otlp-api-key": "k2"}}, env)
    assert (t.protocol, t.headers) == ("http/protobuf", {"x-otlp-api-key": "k2"})  # [otlp] over Codex's
    for endpoint in ("http://mine:4318", ""):
        t = settings.resolve({**auto, "endpoint": endpoint}, env, url=None if endpoint else "http://arg:4318")
        assert t.headers == {}  # Codex's headers stay with its collector
        assert "127.0.0.1" not in t.urls["metrics"]
    (tmp_path / "other").mkdir()
    claude = {**_settings_files(tmp_path / "other", {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://claude:4318"}, None),
              "CODEX_HOME": codex}
    t = settings.resolve(auto, claude)
    assert (t.urls["metrics"], t.source, t.headers) == ("http://claude:4318/v1/metrics", "environment", {})
    # the metrics exporter first; a gRPC one is no OTLP/HTTP endpoint: the next one is taken
    both = _codex_home(tmp_path, '[otel]\nexporter = { otlp-http = { endpoint = "http://logs:4318/v1/logs" } }\n'
                                 'metrics_exporter = { otlp-http = { endpoint = "https://m.example:443/v1/metrics", '
                                 'protocol = "binary" } }\n'
                                 'trace_exporter = { otlp-grpc = { endpoint = "http://t:4317" } }\n')
    t = settings.resolve(auto, {**env, "CODEX_HOME": both})
    assert (t.urls["logs"], t.protocol) == ("https://m.example:443/v1/logs", "http/protobuf")
    Path(both, "config.toml").write_text('[otel]\nexporter = { otlp-grpc = { endpoint = "http://g:4317" } }\n'
                                         'trace_exporter = { otlp-http = { endpoint = "http://t:4318/v1/traces" } }\n')
    assert settings.resolve(auto, {**env, "CODEX_HOME": both}).urls["metrics"] == "http://t:4318/v1/metrics"
    for text in ('[otel]\nexporter = { otlp-grpc = { endpoint = "http://g:4317" } }\n', "[otel\nexporter = 1"):
        Path(both, "config.toml").write_text(text)
        with pytest.raises(NoTarget, match="nor does Codex's"):
            settings.resolve(auto, {**env, "CODEX_HOME": both})


def test_a_forks_copied_calls_count_in_its_parent_only() -> None:
    """A fork's status document says how many of its calls are its parent's copies (the first ones,
    to `inheritedTo`): its calls counter leaves them out, and so do its advice events (the alerts its
    fold fired again on them were the parent's); another session's are as they were."""
    doc = {"sessionId": "f", "firstTs": 10.0, "calls": 5, "inheritedCalls": 4, "inheritedTo": 4}
    batch = payload.Batch()
    payload.add_session(batch, doc, {"session.id": "f"}, 20.0)
    assert [p["asInt"] for p in batch.points["session_watcher.calls"]] == ["1"]
    alerts = [{"kind": "gate", "call": 3}, {"kind": "gate", "call": 4}, {"kind": "backstop", "call": 5}]
    assert payload.own_alerts(doc, alerts) == [alerts[2]]
    assert payload.own_alerts({"calls": 5}, alerts) == alerts


def test_the_metrics_message_built_directly_is_the_one_parsedict_makes() -> None:
    """`protomsg` builds the request of every session of the fixtures (their replays, with the
    lifetimes, a restart's saving, user attributes of each kind) as the very bytes `json_format.ParseDict`
    makes of the document; a document of a shape it does not know goes ParseDict's way in `wire`."""
    import copy
    import glob

    from session_watcher.otlp import protomsg

    batch = payload.Batch()
    common = {"user.id": "u", "team.size": 3, "ratio": 0.5, "on": True}
    for path in sorted(glob.glob(str(FIXTURES / "**" / "*.jsonl"), recursive=True)):
        if "subagents" in path:
            continue
        doc, _ = replay(path, with_trace=False)
        payload.add_session(batch, doc, payload.session_attributes(doc, common, "proj"), NOW)
    payload.add_lifetimes(batch, None, common, NOW, ["5m", "1h", "codex-30m"])
    payload.add_restart(batch, {"kind": "handoff", "savingUsd": 0.0, "parent": "p", "firstCall": 2}, common, NOW)
    req = batch.request({"service.name": "session-watcher", "os.type": "linux"}, "0.1.0")
    assert len(batch.points) >= len(payload.CATALOGUE) - 1  # all but the restarts (no handoff among them)
    want = json_format.ParseDict(req, ExportMetricsServiceRequest()).SerializeToString(deterministic=True)
    assert protomsg.metrics_request(req).SerializeToString(deterministic=True) == want
    assert wire.encode(req, "http/protobuf", "metrics")[0] == want
    odd = copy.deepcopy(req)
    odd["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]["gauge"]["dataPoints"][0]["flags"] = 1
    with pytest.raises(ValueError, match=r"session_watcher\.lamp"):
        protomsg.metrics_request(odd)
    assert ExportMetricsServiceRequest.FromString(wire.encode(odd, "http/protobuf", "metrics")[0]) == \
        json_format.ParseDict(odd, ExportMetricsServiceRequest())


def test_claude_codes_otel_headers_and_endpoints_stay_off_codexs_collector(tmp_path: Path) -> None:
    """Codex's collector is used where Claude Code's settings name no endpoint: the OTEL_* headers
    those settings hold (for Claude Code's collector, the default one) never go to it, only Codex's
    own and [otlp]'s; and a logs endpoint Claude Code's settings name is one named: the logs go
    there, not to Codex's collector."""
    auto = config.DEFAULTS["otlp"].copy()
    codex = _codex_home(tmp_path, '[otel]\nexporter = { otlp-http = { endpoint = "https://codex.example/v1/logs", '
                                  'headers = { "x-codex" = "c1" } } }\n')
    env = {**_settings_files(tmp_path, {"OTEL_EXPORTER_OTLP_HEADERS": "x-claude=secret",
                                        "OTEL_EXPORTER_OTLP_METRICS_HEADERS": "x-claude-m=s2"}, None),
           "CODEX_HOME": codex, "CLAUDE_CODE_ENABLE_TELEMETRY": "1"}
    t = settings.resolve(auto, env)
    assert (t.urls["metrics"], t.source) == ("https://codex.example/v1/metrics", "codex config")
    assert t.headers == {"x-codex": "c1"}
    assert settings.resolve({**auto, "headers": {"x-mine": "m"}}, env).headers == {"x-codex": "c1", "x-mine": "m"}
    (tmp_path / "logs").mkdir()
    logs = {**_settings_files(tmp_path / "logs", {"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://127.0.0.1:4318/v1/logs"},
                              None), "CODEX_HOME": codex}
    t = settings.resolve({**auto, "enabled": True}, logs)
    assert t.urls["logs"] == "http://127.0.0.1:4318/v1/logs"
    assert "codex.example" not in t.urls["metrics"]
