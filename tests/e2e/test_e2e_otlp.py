"""The team's view end to end: the real Claude Code 2.1.332, offline against the loopback mock, with its
own telemetry on, and the plugin installed by ./install.sh, both exporting to one loopback OTLP/HTTP
receiver that decodes with the official opentelemetry-proto messages.

The rollout is a team's: Claude Code's telemetry settings in the user's settings.json `env` block (a
managed settings file works the same way), session-watcher's config only shortening the interval.
Claude Code strips OTEL_* from its hooks' environment, so the plugin finds the endpoint in that block;
CLAUDE_CODE_ENABLE_TELEMETRY does reach the hooks and switches the default `enabled = "auto"` on.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import pytest

from tests.otlp_receiver import Receiver, stop_exporters

from . import plugin
from .harness import make_world, run_print
from .mock_api import MockAPI, Usage, bash, read, say

if TYPE_CHECKING:
    from pathlib import Path

    from tests.otlp_receiver import Point

    from .harness import World

pytestmark = pytest.mark.e2e
WAIT = 90.0  # bounds a hang only


def _latest(points: list[Point]) -> dict[tuple[str, tuple[tuple[str, Any], ...]], Point]:
    out: dict[tuple[str, tuple[tuple[str, Any], ...]], Point] = {}
    for p in points:
        key = (p.name, tuple(sorted((k, v) for k, v in p.attributes.items() if k in ("state", "kind", "type", "ttl"))))
        if key not in out or p.time >= out[key].time:
            out[key] = p
    return out


def _telemetry_settings(world: World, url: str) -> None:
    path = world.config / "settings.json"
    settings = json.loads(path.read_text())
    settings["env"] = {
        "CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_METRICS_EXPORTER": "otlp", "OTEL_LOGS_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": url,
        "OTEL_METRIC_EXPORT_INTERVAL": "1000", "OTEL_LOGS_EXPORT_INTERVAL": "1000",
        "OTEL_RESOURCE_ATTRIBUTES": "team.id=platform",
    }
    path.write_text(json.dumps(settings))


def test_our_metrics_and_claude_codes_arrive_with_the_same_session_id(claude_bin: Path, tmp_path: Path) -> None:
    world = make_world(tmp_path)
    cfg = world.sw_home / "config" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(plugin.CONFIG_TOML + "\n[otlp]\ninterval = 1\n")  # enabled = "auto": Claude Code's telemetry
    proc = plugin.install(world)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    script = [
        read(str(world.tracked), Usage(input_tokens=4, cache_write_5m=18_000, output_tokens=41)),
        bash("echo otlp-$((6*7))", Usage(input_tokens=6, cache_read=18_000, cache_write_5m=1_150, output_tokens=33)),
        say("All done.", Usage(input_tokens=7, cache_read=19_150, cache_write_5m=61, output_tokens=12)),
    ]
    try:
        with Receiver() as r, MockAPI(script) as api:
            _telemetry_settings(world, r.url)
            run = run_print(claude_bin, world, api.base_url, "read the engine file, then run a command")
            assert run.returncode == 0, run.stderr[-2000:]
            sid = run.session_id
            doc = plugin.status(world, sid)

            def both(rv: Receiver) -> bool:
                ours = [p for p in rv.points("session_watcher.calls") if p.attributes.get("session.id") == sid]
                theirs = [p for p in rv.points("claude_code.token.usage") if p.attributes.get("session.id") == sid]
                return bool(theirs) and any(p.value == doc["calls"] for p in ours)

            assert r.wait(both, WAIT), (r.rejected, [q.path for q in r.requests])
            points = r.points()
    finally:
        env_home = str(world.sw_home)
        stop_exporters(env_home)
    ours = [p for p in points if p.name.startswith("session_watcher.") and p.attributes.get("session.id") == sid]
    theirs = [p for p in points if p.name == "claude_code.token.usage" and p.attributes.get("session.id") == sid]
    assert {p.resource["service.name"] for p in theirs} == {"claude-code"}
    assert {p.resource["service.name"] for p in ours} == {"session-watcher"}
    # the join: the same session, the same user, the same team attribute, on both sides. The user id
    # is the client's, written into .claude.json during its first start: a pass sent before that (a
    # loaded machine) carries none, so the join is read where a backend reads it, the latest points
    uid = json.loads((world.config / ".claude.json").read_text())["userID"]
    assert {p.attributes.get("user.id") for p in _latest(ours).values()} == {uid}
    assert {p.attributes.get("user.id") for p in _latest(theirs).values()} == {uid}
    assert {p.attributes["user.id"] for p in ours + theirs if "user.id" in p.attributes} == {uid}
    assert {p.attributes["team.id"] for p in ours} == {p.attributes["team.id"] for p in theirs} == {"platform"}
    got = _latest(ours)
    assert {got[("session_watcher.x", ())].attributes["model"]} == {p.attributes["model"] for p in theirs}
    assert got[("session_watcher.calls", ())].value == doc["calls"] == 3
    assert got[("session_watcher.context.tokens", ())].value == doc["L"]
    assert got[("session_watcher.baseline.tokens", ())].value == doc["bDefault"]
    assert got[("session_watcher.x", ())].value == doc["x"]
    assert got[("session_watcher.x_sweet", ())].value == doc["xSweet"]
    assert got[("session_watcher.warmth", ())].value == doc["warmth"]
    assert got[("session_watcher.lamp", (("state", doc["lamp"]),))].value == 1
    assert got[("session_watcher.cache.tokens", (("type", "read"),))].value == doc["warmthTokens"]["read"]
    # Claude Code's own count of the session's cache reads equals the mock's; ours counts calls 2..n
    cache_read = sum(p.value for p in theirs if p.attributes.get("type") == "cacheRead")
    assert cache_read == 18_000 + 19_150 == doc["tokenUsage"]["cacheRead"]
    assert doc["warmthTokens"]["read"] == 18_000 + 19_150
    assert os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") is None  # nothing leaked into this process
