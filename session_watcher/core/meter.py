"""The token meter: durable usage buckets, one count per API call, last sample wins.

Claude Code writes one line per content block of a response, each repeating the response's usage;
the first may carry a partial output count. A later sample of a call replaces the earlier one:
its old numbers come out of the bucket and the new ones go in. Samples of the last RECENT_MAX calls
are kept for that; lines of one response are adjacent in practice (in 292 real sessions, 242 MB,
every one of 16,831 later samples followed its call's first at once, no other call between), so
the window is generous. It is saved with the state and read and rewritten by every hook run.
Compaction never touches the buckets.

A call whose `usage.iterations` list other requests (an advisor of another model) counts their
tokens under that model, in `other` (created when first needed), stream `OTHER + model`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is slow to import; this module is on the hot path
if TYPE_CHECKING:
    from session_watcher.core.shapes import Bucket, BucketField, Meter, Sample, Stream

RECENT_MAX = 32
OTHER = "model:"  # stream prefix of another model's iterations
FIELDS: tuple[BucketField, ...] = ("uncachedInput", "cacheRead", "cacheWrite", "output", "cacheWrite5m", "cacheWrite1h")


def new_bucket() -> Bucket:
    return {"uncachedInput": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
            "cacheWrite5m": 0, "cacheWrite1h": 0, "calls": 0}


def new_meter() -> Meter:
    return {"main": new_bucket(), "sub": new_bucket(), "recent": {}}


def _bucket(meter: Meter, stream: str) -> Bucket:
    if stream == "main":
        return meter["main"]
    if stream == "sub":
        return meter["sub"]
    other = meter.get("other")
    if other is None:
        other = meter["other"] = {}
    model = stream[len(OTHER):]
    bucket = other.get(model)
    if bucket is None:
        bucket = other[model] = new_bucket()
    return bucket


def add_sample(meter: Meter, stream: Stream | str, key: str, sample: Sample) -> bool:
    """Fold one usage sample into `stream` ("main", "sub", or OTHER + a model); True when it is a new call."""
    recent = meter["recent"]
    row = (stream, *sample)
    prev = recent.pop(key, None)  # re-inserted below: the newest stays last
    if prev == row:  # a later line repeating its call's usage, as most do: the buckets stay as they are
        recent[key] = row
        return False
    bucket = _bucket(meter, stream)
    if prev is not None:
        old_stream, inp, cr, cw, out, cw5, cw1 = prev
        old_bucket = _bucket(meter, old_stream)
        old_bucket["uncachedInput"] -= inp  # FIELDS, spelt out: once per transcript line
        old_bucket["cacheRead"] -= cr
        old_bucket["cacheWrite"] -= cw
        old_bucket["output"] -= out
        old_bucket["cacheWrite5m"] -= cw5
        old_bucket["cacheWrite1h"] -= cw1
        old_bucket["calls"] -= 1
    inp, cr, cw, out, cw5, cw1 = sample
    bucket["uncachedInput"] += inp
    bucket["cacheRead"] += cr
    bucket["cacheWrite"] += cw
    bucket["output"] += out
    bucket["cacheWrite5m"] += cw5
    bucket["cacheWrite1h"] += cw1
    bucket["calls"] += 1
    recent[key] = row
    while len(recent) > RECENT_MAX:
        del recent[next(iter(recent))]
    return prev is None
