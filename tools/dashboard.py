"""Build the team's Grafana dashboard (docs/grafana-dashboard.json) with Grafana's own Foundation SDK.

    .venv/bin/python tools/dashboard.py [OUT]     (default: docs/grafana-dashboard.json)
    .venv/bin/python tools/dashboard.py --check   (exit 1 when the file is not what this builds)

Every query names the Prometheus series an OpenTelemetry Collector's `prometheus` exporter makes of
our metrics (session_watcher.otlp.promnames over the payload's catalogue) and of Claude Code's own
(`claude_code_*`, which need the collector's `deltatocumulative` processor: Claude Code sends delta
sums). Our counters are one series per session whose value only grows, from the session's first
call: a period's total is the sum over sessions of each series' largest value in it
(`max_over_time(...[$__range])`), not `increase()`, which would lose each session's first sample.
tests/test_dashboard.py checks the file against this builder, every query with promtool, and every
metric name against the catalogue.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from grafana_foundation_sdk.builders import bargauge, common, dashboard, prometheus, stat, table, timeseries
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.common import (
    BigValueGraphMode,
    LegendDisplayMode,
    LegendPlacement,
    SortOrder,
    TooltipDisplayMode,
)
from grafana_foundation_sdk.models.dashboard import DataSourceRef, DataTransformerConfig, GridPos

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from session_watcher.otlp import payload  # noqa: E402 - after the repository is on the path
from session_watcher.otlp.promnames import metric_name  # noqa: E402

OUT = ROOT / "docs" / "grafana-dashboard.json"
DS = DataSourceRef(type_val="prometheus", uid="${datasource}")
SEL = 'user_id=~"$user", model=~"$model", project=~"$project"'  # the variables' filters


def prom(m: payload.Metric) -> str:
    return metric_name(m.name, m.unit, m.kind)


# the Prometheus names of Claude Code's own metrics (unit and kind as 2.1.332 sends them)
CLAUDE_COST = metric_name("claude_code.cost.usage", "USD", "counter")
CLAUDE_TOKENS = metric_name("claude_code.token.usage", "tokens", "counter")


def q(expr: str, legend: str = "", ref: str = "A", instant: bool = False) -> prometheus.Dataquery:
    query = prometheus.Dataquery().expr(expr).ref_id(ref).datasource(DS)
    if legend:
        query = query.legend_format(legend)
    return query.instant() if instant else query.range()


def period_total(m: payload.Metric, by: str = "", extra: str = "") -> str:
    """A counter's total over the dashboard's period: per session its largest value, summed."""
    grouping = f" by ({by})" if by else ""
    return f"sum{grouping} (max_over_time({prom(m)}{{{SEL}{extra}}}[$__range]))"


def last() -> common.ReduceDataOptions:
    return common.ReduceDataOptions().calcs(["lastNotNull"]).values(False)


def stat_panel(title: str, expr: str, unit: str, description: str, at: tuple[int, int],
               size: tuple[int, int] = (6, 4)) -> stat.Panel:
    """A single figure at `at` (x, y), `size` (columns, rows)."""
    return (stat.Panel().title(title).description(description).unit(unit).datasource(DS)
            .reduce_options(last()).graph_mode(BigValueGraphMode.NONE)
            .with_target(q(expr, instant=True)).grid_pos(_pos(*at, *size)))


def gauge_panel(title: str, unit: str, description: str) -> bargauge.Panel:
    return bargauge.Panel().title(title).description(description).unit(unit).datasource(DS).reduce_options(last())


def series_panel(title: str, unit: str, description: str) -> timeseries.Panel:
    legend = (common.VizLegendOptions().show_legend(True).display_mode(LegendDisplayMode.LIST)
              .placement(LegendPlacement.BOTTOM).calcs([]))
    tooltip = common.VizTooltipOptions().mode(TooltipDisplayMode.MULTI).sort(SortOrder.DESCENDING)
    return (timeseries.Panel().title(title).description(description).unit(unit).datasource(DS)
            .legend(legend).tooltip(tooltip))


def table_panel(title: str, description: str) -> table.Panel:
    """A table of instant queries, their columns joined on the labels they share (Grafana's merge)."""
    return (table.Panel().title(title).description(description).datasource(DS).show_header(True)
            .with_transformation(DataTransformerConfig(id_val="merge", options={})))


def _pos(x: int, y: int, w: int, h: int) -> GridPos:
    return GridPos(h=h, w=w, x=x, y=y)


def variable(name: str, label: str, metric: payload.Metric) -> dashboard.QueryVariable:
    return (dashboard.QueryVariable(name).label(label).datasource(DS)
            .query(f"label_values({prom(metric)}, {name if name != 'user' else 'user_id'})")
            .include_all(True).all_value(".*").multi(True))


def warmth(by: str) -> str:
    """Cache reads over reads and writes, summed by `by` over the period's sessions."""
    cache = prom(payload.CACHE)
    return (f'sum by ({by}) (max_over_time({cache}{{{SEL}, type="read"}}[$__range])) / '
            f"sum by ({by}) (max_over_time({cache}{{{SEL}}}[$__range]))")


def live(m: payload.Metric, ref: str) -> prometheus.Dataquery:
    """A gauge's value per session live in the last 5 minutes."""
    return q(f"max by (session_id, user_id) (last_over_time({prom(m)}{{{SEL}}}[5m]))", ref=ref, instant=True)


def build() -> dashboard.Dashboard:
    lamp, saving, advice, restarts = prom(payload.LAMP), prom(payload.SAVING), payload.ADVICE, payload.RESTARTS
    d = (dashboard.Dashboard("session-watcher: the team's cache money")
         .uid("session-watcher-team").tags(["session-watcher", "claude-code", "opentelemetry"])
         .description("session-watcher's figures over OpenTelemetry, joined with Claude Code's own telemetry "
                      "on session_id (docs/otlp.md)")
         .time("now-7d", "now").refresh("1m").timezone("browser")
         .with_variable(dashboard.DatasourceVariable("datasource").label("Prometheus").type("prometheus"))
         .with_variable(variable("user", "Person (user.id)", payload.CALLS))
         .with_variable(variable("model", "Model", payload.CALLS))
         .with_variable(variable("project", "Project (opt-in)", payload.CALLS)))

    d = d.with_row(dashboard.Row("Money: left on the table and captured"))
    d = d.with_panel(stat_panel(
        "Left on the table now", f"sum(clamp_min(last_over_time({saving}{{{SEL}}}[5m]), 0))", "currencyUSD",
        "What restarting now would save over the next cycle, summed over the sessions live in the last 5 "
        "minutes (sessions where a restart would cost more count 0)", (0, 1)))
    d = d.with_panel(stat_panel(
        "Spent on cold returns", period_total(payload.COLD_COST), "currencyUSD",
        "Cache writes of calls made after the cache had expired (a gap longer than its lifetime), in the period",
        (6, 1)))
    d = d.with_panel(stat_panel(
        "Claude Code's cost", f'sum(increase({CLAUDE_COST}{{user_id=~"$user", model=~"$model"}}[$__range]))',
        "currencyUSD", "Claude Code's own claude_code.cost.usage in the period (needs deltatocumulative)", (12, 1)))
    d = d.with_panel(stat_panel(
        "Cold returns' share of the cost",
        f"{period_total(payload.COLD_COST)} / "
        f'sum(increase({CLAUDE_COST}{{user_id=~"$user", model=~"$model"}}[$__range]))',
        "percentunit", "Spent on cold returns over Claude Code's cost, same sessions' period", (18, 1)))

    d = d.with_row(dashboard.Row("Restarts: advised against taken"))
    d = d.with_panel(
        gauge_panel("Advice given, by kind", "short",
                    "gate: overstaying past the sweet spot; reminder: the backstop's repeat; cold_return: a "
                    "restart advised as the cache had expired")
        .with_target(q(period_total(advice, "kind"), "{{kind}}", instant=True)).grid_pos(_pos(0, 6, 6, 6)))
    d = d.with_panel(
        gauge_panel("Restarts advised and taken", "short",
                    "Advice given in the period, and the restarts taken with a handoff (the fresh sessions "
                    "that name their parent)")
        .with_target(q(period_total(advice), "advised", instant=True))
        .with_target(q(period_total(restarts), "taken", "B", instant=True)).grid_pos(_pos(6, 6, 6, 6)))
    d = d.with_panel(stat_panel(
        "Captured by restarts taken",
        f"sum(max_over_time({prom(payload.REALIZED)}{{{SEL}}}[$__range]))", "currencyUSD",
        "What the restarts taken (handoffs, and the client's idle compactions) saved against continuing, as "
        "`backtest` prices them (sent by `export --otlp`)", (12, 6), (6, 6)))
    d = d.with_panel(
        series_panel("Live sessions by lamp", "short",
                     "How many sessions show each colour (amber, red: past the sweet spot, restart advised)")
        .with_target(q(f"count by (state) ({lamp}{{{SEL}}} == 1)", "{{state}}")).grid_pos(_pos(18, 6, 6, 6)))

    d = d.with_row(dashboard.Row("Cold returns and what they cost"))
    d = d.with_panel(stat_panel("Cold returns", period_total(payload.COLD), "short",
                                "Calls made after the cache had expired, in the period", (0, 13)))
    d = d.with_panel(stat_panel("Tokens written again", period_total(payload.COLD_TOKENS), "short",
                                "What the cold returns wrote to the cache again", (6, 13)))
    d = d.with_panel(
        table_panel("Costliest sessions' cold returns",
                    "Per session: its cold returns' cache writes in dollars, and Claude Code's cost of the same "
                    "session (joined on session_id)").unit("currencyUSD")
        .with_target(q(f"topk(10, {period_total(payload.COLD_COST, 'session_id, user_id')})", instant=True))
        .with_target(q(f"sum by (session_id) (increase({CLAUDE_COST}[$__range])) and on (session_id) "
                       f"{period_total(payload.COLD_COST, 'session_id')}", ref="B", instant=True))
        .grid_pos(_pos(12, 13, 12, 8)))

    cache = prom(payload.CACHE)
    d = d.with_row(dashboard.Row("Warmth by person and project"))
    d = d.with_panel(
        gauge_panel("Warmth by person", "percentunit",
                    "Cache reads / (reads + writes) of the calls after each session's first, by user.id").min(0).max(1)
        .with_target(q(warmth("user_id"), "{{user_id}}", instant=True)).grid_pos(_pos(0, 22, 8, 7)))
    d = d.with_panel(
        gauge_panel("Warmth by project", "percentunit",
                    "The same by project: only projects whose users opted in ([otlp] project = true) are named")
        .min(0).max(1)
        .with_target(q(warmth("project"), "{{project}}", instant=True)).grid_pos(_pos(8, 22, 8, 7)))
    d = d.with_panel(
        table_panel("Cache lifetime per TTL class",
                    "How long a cache write stays warm: inferred from each person's own gaps by `report`, or the "
                    "TTL when the evidence is thin").unit("s")
        .with_target(q(f'max by (user_id, ttl, source) ({prom(payload.LIFETIME)}{{user_id=~"$user"}})',
                       instant=True)).grid_pos(_pos(16, 22, 8, 7)))

    d = d.with_panel(
        table_panel("Live sessions",
                    "Per session live in the last 5 minutes: context (L), what a restart carries (B), its "
                    "warmth and what restarting now saves (one column per query, joined on session_id)")
        .with_target(live(payload.CONTEXT, "L")).with_target(live(payload.BASELINE, "B"))
        .with_target(live(payload.WARMTH, "warmth")).with_target(live(payload.SAVING, "saving"))
        .grid_pos(_pos(0, 29, 24, 7)))

    d = d.with_row(dashboard.Row("Joined with Claude Code"))
    d = d.with_panel(
        series_panel("Context against the sweet spot", "short",
                     "x (context over what a restart carries) and xSweet per live session")
        .with_target(q(f"max by (session_id) ({prom(payload.X)}{{{SEL}}})", "x {{session_id}}"))
        .with_target(q(f"max by (session_id) ({prom(payload.X_SWEET)}{{{SEL}}})", "sweet {{session_id}}", "B"))
        .grid_pos(_pos(0, 37, 12, 8)))
    d = d.with_panel(
        series_panel("Cache tokens per session: Claude Code's count and ours", "short",
                     "claude_code.token.usage (cacheRead) beside session-watcher's cache reads, per session_id: "
                     "the join a collector makes")
        .with_target(q(f'sum by (session_id) ({CLAUDE_TOKENS}{{type="cacheRead", user_id=~"$user"}})',
                       "claude {{session_id}}"))
        .with_target(q(f'sum by (session_id) ({cache}{{{SEL}, type="read"}})', "ours {{session_id}}", "B"))
        .grid_pos(_pos(12, 37, 12, 8)))
    return d


def render() -> str:
    return JSONEncoder(sort_keys=True, indent=2).encode(build().build()) + "\n"


def expressions(doc: dict[str, Any]) -> list[str]:
    """Every PromQL expression of a dashboard document (parsed JSON): its panels' targets and its variables'
    queries."""
    out = []
    for panel in doc.get("panels") or []:
        for target in panel.get("targets") or []:
            out.append(target["expr"])
    return out


def main(argv: list[str]) -> int:
    text = render()
    if argv[:1] == ["--check"]:
        ok = OUT.read_text() == text
        if not ok:
            print(f"{OUT} is not what tools/dashboard.py builds: run it", file=sys.stderr)
        return 0 if ok else 1
    out = Path(argv[0]) if argv else OUT
    out.write_text(text)
    print(f"wrote {out} ({len(json.loads(text)['panels'])} panels)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
