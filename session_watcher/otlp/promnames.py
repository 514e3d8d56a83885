"""The Prometheus names an OpenTelemetry Collector's `prometheus` exporter gives our metrics and
attributes: the OTel-to-Prometheus compatibility spec as the collector implements it (its translator,
prometheus/otlptranslator, with unit and type suffixes on and UTF-8 names off: the default).

* A metric name is split into tokens at every character outside [a-zA-Z0-9:], so dots and runs of
  underscores become one underscore.
* The unit is appended when the name does not hold it already: UCUM units spelled out (s -> seconds,
  By -> bytes, ...), a unit in braces ({token}) left out, "1" left out, anything else as it is (USD);
  `a/b` becomes `a_per_b`.
* A monotonic sum (a counter) ends in `_total`; a gauge whose unit is "1" ends in `_ratio`.
* An attribute becomes a label with every character outside [a-zA-Z0-9_] replaced by `_`.

Pure; used by the dashboard's builder (tools/dashboard.py), its tests and docs/otlp.md's table.
"""

from __future__ import annotations

import re

UNITS = {
    "d": "days", "h": "hours", "min": "minutes", "s": "seconds", "ms": "milliseconds", "us": "microseconds",
    "ns": "nanoseconds", "By": "bytes", "KiBy": "kibibytes", "MiBy": "mebibytes", "GiBy": "gibibytes",
    "TiBy": "tibibytes", "KBy": "kilobytes", "MBy": "megabytes", "GBy": "gigabytes", "TBy": "terabytes",
    "m": "meters", "V": "volts", "A": "amperes", "J": "joules", "W": "watts", "g": "grams", "Cel": "celsius",
    "Hz": "hertz", "1": "", "%": "percent",
}
PER_UNITS = {"s": "second", "m": "minute", "h": "hour", "d": "day", "w": "week", "mo": "month", "y": "year"}
_TOKEN = re.compile(r"[a-zA-Z0-9:]+")
_INVALID = re.compile(r"[^a-zA-Z0-9:]")


def _clean(unit: str) -> str:
    return re.sub(r"_+", "_", _INVALID.sub("_", unit)).lstrip("_")


def _unit_suffixes(unit: str) -> tuple[str, str]:
    main, _, per = unit.partition("/")
    main, per = main.strip(), per.strip()
    main_suffix = UNITS.get(main, main) if main and "{" not in main and "}" not in main else ""
    per_suffix = ""
    if per and "{" not in per and "}" not in per:
        per_suffix = "per_" + PER_UNITS.get(per, per)
    return _clean(main_suffix), _clean(per_suffix)


def metric_name(name: str, unit: str, kind: str) -> str:
    """`kind`: "gauge", "counter" (a monotonic sum) or "sum" (a non-monotonic one: a gauge there)."""
    tokens = _TOKEN.findall(name)
    main, per = _unit_suffixes(unit)
    if main and main in tokens:
        main = ""
    if per == "per_":
        per = ""
    else:
        per = per.removesuffix("_")
        if per in tokens:
            per = ""
    if per:
        main = main.removesuffix("_")
    tokens += [t for t in (main, per) if t]
    if kind == "counter":
        tokens = [t for t in tokens if t != "total"] + ["total"]
    if unit == "1" and kind == "gauge":
        tokens = [t for t in tokens if t != "ratio"] + ["ratio"]
    out = "_".join(tokens)
    return "_" + out if out[:1].isdigit() else out


def label_name(attribute: str) -> str:
    out = re.sub(r"[^a-zA-Z0-9_]", "_", attribute)
    return "key_" + out if out[:1].isdigit() else out
