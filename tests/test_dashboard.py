"""The team's Grafana dashboard (docs/grafana-dashboard.json): what Grafana's own Foundation SDK
builds (tools/dashboard.py) and reads back, every panel's PromQL accepted by Prometheus's own parser
(promtool, Debian's `prometheus` package, installed by .ci/setup.d/70-prometheus.sh), and every
metric it names one the collector's Prometheus exporter makes of ours or of Claude Code's."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from typing import TYPE_CHECKING

import pytest

from session_watcher.otlp import payload
from session_watcher.otlp.promnames import label_name, metric_name
from tests.oracle import REPO
from tools import dashboard

if TYPE_CHECKING:
    from pathlib import Path

DOC = json.loads((REPO / "docs" / "grafana-dashboard.json").read_text())
# Claude Code 2.1.332's own metrics as it sends them (name, unit, kind): tests/fixtures captured none of
# them, the e2e test receives them (tests/e2e/test_e2e_otlp.py)
CLAUDE = [("claude_code.token.usage", "tokens", "counter"), ("claude_code.cost.usage", "USD", "counter"),
          ("claude_code.session.count", "", "counter"), ("claude_code.active_time.total", "s", "counter")]
# Grafana's own variables, as Grafana fills them in before a query leaves for Prometheus
GRAFANA = {"$__range": "7d", "$__rate_interval": "1m", "$__interval": "30s", "$user": ".*", "$model": ".*",
           "$project": ".*"}


def test_the_file_is_what_the_foundation_sdk_builds() -> None:
    assert (REPO / "docs" / "grafana-dashboard.json").read_text() == dashboard.render()


def test_the_foundation_sdk_reads_it_back() -> None:
    from grafana_foundation_sdk.cog.plugins import register_default_plugins
    from grafana_foundation_sdk.models.dashboard import Dashboard

    register_default_plugins()
    back = Dashboard.from_json(DOC)
    assert back.title == DOC["title"]
    assert len(back.panels or []) == len(DOC["panels"]) == 22
    assert back.uid == "session-watcher-team"


def test_promnames_follows_the_collectors_translator() -> None:
    """The translator's own documented cases, and Claude Code's cost metric as dashboards know it."""
    assert metric_name("http.server.request.duration", "s", "histogram") == "http_server_request_duration_seconds"
    assert metric_name("requests.count", "1", "counter") == "requests_count_total"
    assert metric_name("memory.usage", "By", "gauge") == "memory_usage_bytes"
    assert metric_name("system.cpu.utilization", "1", "gauge") == "system_cpu_utilization_ratio"
    assert metric_name("http.server.duration", "ms", "gauge") == "http_server_duration_milliseconds"
    assert metric_name("net.throughput", "By/s", "gauge") == "net_throughput_bytes_per_second"
    assert metric_name("claude_code.cost.usage", "USD", "counter") == "claude_code_cost_usage_USD_total"
    assert metric_name("claude_code.token.usage", "tokens", "counter") == "claude_code_token_usage_tokens_total"
    assert metric_name("session_watcher.context.tokens", "{token}", "gauge") == "session_watcher_context_tokens"
    assert metric_name("requests__total", "", "counter") == "requests_total"
    assert label_name("session.id") == "session_id"
    assert label_name("2x") == "key_2x"


def _names() -> set[str]:
    ours = {metric_name(m.name, m.unit, m.kind) for m in payload.CATALOGUE}
    return ours | {metric_name(*c) for c in CLAUDE}


def _exprs() -> list[str]:
    found = dashboard.expressions(DOC)
    assert len(found) == 24
    return found


def test_every_query_names_a_series_the_collector_makes_of_ours_or_claude_codes() -> None:
    known = _names()
    used = set()
    for expr in _exprs():
        names = set(re.findall(r"\b(?:session_watcher|claude_code)_[A-Za-z0-9_]+", expr))
        assert names, expr
        assert names <= known, (names - known, expr)
        used |= names
    for var in DOC["templating"]["list"]:
        if var["type"] == "query":
            assert re.fullmatch(r"label_values\((session_watcher_\w+), (\w+)\)", var["query"])
            assert var["query"].split("(")[1].split(",")[0] in known
    ours = {metric_name(m.name, m.unit, m.kind) for m in payload.CATALOGUE}
    assert ours <= used | {metric_name(payload.CALLS.name, payload.CALLS.unit, "counter")}  # every metric shown
    labels = {label_name(a) for a in ("session.id", "user.id", "model", "project", "kind", "state", "type", "ttl",
                                      "source")}
    for expr in _exprs():
        for group in re.findall(r"by \(([^)]*)\)", expr) + re.findall(r"on \(([^)]*)\)", expr):
            assert {g.strip() for g in group.split(",")} <= labels, expr


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed (.ci/setup.d/70-prometheus.sh)")
def test_every_query_passes_prometheus_own_parser(tmp_path: Path) -> None:
    """promtool parses each rule's expression with Prometheus's PromQL parser: one rule per query."""
    rules = ["groups:", "  - name: session-watcher-dashboard", "    rules:"]
    for k, query in enumerate(_exprs()):
        expr = query
        for var, value in sorted(GRAFANA.items(), key=lambda kv: -len(kv[0])):
            expr = expr.replace(var, value)
        assert "$" not in expr, expr
        rules += [f"      - record: dashboard:query_{k}", f"        expr: {json.dumps(expr)}"]
    path = tmp_path / "rules.yml"
    path.write_text("\n".join(rules) + "\n")
    proc = subprocess.run(["promtool", "check", "rules", str(path)], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"SUCCESS: {len(_exprs())} rules found" in proc.stdout
    # and the parser does refuse a broken query: the check can fail
    path.write_text("\n".join([*rules[:3], "      - record: broken", '        expr: "sum by (x (y)"']) + "\n")
    bad = subprocess.run(["promtool", "check", "rules", str(path)], capture_output=True, text=True, timeout=60,
                         check=False)
    assert bad.returncode != 0


def test_the_docs_name_every_metric_as_the_collector_does() -> None:
    text = (REPO / "docs" / "otlp.md").read_text()
    for m in payload.CATALOGUE:
        assert f"`{m.name}`" in text, m.name
        assert f"`{metric_name(m.name, m.unit, m.kind)}`" in text, m.name
