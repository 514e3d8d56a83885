"""The calibration sessions (tests/fixtures/calibration/, gzip) as plain transcripts in a temp folder."""

from __future__ import annotations

import gzip
from pathlib import Path

CALIBRATION = Path(__file__).resolve().parent / "fixtures" / "calibration"
LONG_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "transcripts"
ADVISOR_SESSION = "da81b1d5-eb50-45b5-b9c2-a57df460d77b"  # calls with server-side advisor iterations


def session_ids() -> list[str]:
    return sorted(p.name.removesuffix(".jsonl.gz") for p in CALIBRATION.glob("*.jsonl.gz"))


def unpack(session_id: str, into: Path) -> Path:
    """The session's transcript as `into/<id>.jsonl` (written once per folder)."""
    out = into / f"{session_id}.jsonl"
    if not out.exists():
        into.mkdir(parents=True, exist_ok=True)
        out.write_bytes(gzip.decompress((CALIBRATION / f"{session_id}.jsonl.gz").read_bytes()))
    return out


def all_sessions(into: Path) -> list[Path]:
    """The 15 calibration transcripts: the 12 of the folder, unpacked, and the three long fixtures."""
    long = sorted(LONG_FIXTURES.glob("*-*-*-*-*.jsonl"))
    return [unpack(s, into) for s in session_ids()] + long
