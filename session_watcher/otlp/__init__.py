"""session-watcher's figures over OpenTelemetry (OTLP/HTTP), beside Claude Code's own telemetry.

Nothing here runs in a hook but `trigger` (a stat and, once per interval, a spawn). The detached
`exporter` reads the saved session states, makes the metrics and events (`payload`, pure: gauges and
cumulative sums recomputed from the state, so a lost or repeated export never counts twice), and sends
them (`wire`) where `settings` says: the `[otlp]` config, the `OTEL_EXPORTER_OTLP_*` variables, or the
`env` block of Claude Code's user and managed settings. `backfill` replays finished transcripts for
`session-watcher export --otlp`. docs/otlp.md has the metric names, the wiring and the dashboard.
"""
