"""A metrics request document (`payload`'s OTLP/JSON) as the official `opentelemetry-proto` message,
built with the message classes' own constructors: the message `json_format.ParseDict` makes of the
same document (tests/test_otlp_payload.py compares their bytes), in a fifth of its CPU (a year's
export: docs/benchmarks.md). Only the shapes `payload` writes; anything else raises, and `wire`
then takes `ParseDict`'s way. Imported only where `http/protobuf` is sent.
"""

from __future__ import annotations

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.metrics.v1.metrics_pb2 import NumberDataPoint
from opentelemetry.proto.resource.v1.resource_pb2 import Resource

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


def _value(v: Mapping[str, Any]) -> AnyValue:
    [(kind, x)] = v.items()
    if kind == "stringValue":
        return AnyValue(string_value=x)
    if kind == "intValue":
        return AnyValue(int_value=int(x))
    if kind == "doubleValue":
        return AnyValue(double_value=x)
    if kind == "boolValue":
        return AnyValue(bool_value=x)
    raise ValueError(kind)


def _attrs(kvs: list[Mapping[str, Any]]) -> list[KeyValue]:
    return [KeyValue(key=kv["key"], value=_value(kv["value"])) for kv in kvs]


def _point(p: Mapping[str, Any]) -> NumberDataPoint:
    out = NumberDataPoint(attributes=_attrs(p["attributes"]), time_unix_nano=int(p["timeUnixNano"]))
    if "startTimeUnixNano" in p:
        out.start_time_unix_nano = int(p["startTimeUnixNano"])
    if "asInt" in p:
        out.as_int = int(p["asInt"])
    else:
        out.as_double = p["asDouble"]
    return out


KNOWN_POINT = {"attributes", "timeUnixNano", "startTimeUnixNano", "asInt", "asDouble"}


def metrics_request(doc: Mapping[str, Any]) -> ExportMetricsServiceRequest:
    """The ExportMetricsServiceRequest of `payload.Batch.request`'s document (KeyError, ValueError,
    TypeError for a document of another shape)."""
    out = ExportMetricsServiceRequest()
    for rm in doc["resourceMetrics"]:
        if set(rm) != {"resource", "scopeMetrics"}:
            raise ValueError("resourceMetrics")
        r = out.resource_metrics.add(resource=Resource(attributes=_attrs(rm["resource"]["attributes"])))
        for sm in rm["scopeMetrics"]:
            scope = sm["scope"]
            s = r.scope_metrics.add(scope=InstrumentationScope(name=scope["name"], version=scope["version"]))
            for m in sm["metrics"]:
                got = s.metrics.add(name=m["name"], description=m["description"], unit=m["unit"])
                if set(m) == {"name", "description", "unit", "gauge"}:
                    points, into = m["gauge"]["dataPoints"], got.gauge.data_points
                elif set(m) == {"name", "description", "unit", "sum"}:
                    points, into = m["sum"]["dataPoints"], got.sum.data_points
                    got.sum.aggregation_temporality = m["sum"]["aggregationTemporality"]
                    got.sum.is_monotonic = m["sum"]["isMonotonic"]
                else:
                    raise ValueError(m["name"])
                for p in points:
                    if not p.keys() <= KNOWN_POINT:
                        raise ValueError(m["name"])
                    into.append(_point(p))
    return out
