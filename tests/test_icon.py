"""The project icon is the one tools/make_icon.py draws, a square PNG of 512-2048 px."""

from __future__ import annotations

import importlib.util
import os
import struct
import zlib
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _chunks(data: bytes) -> dict[bytes, bytes]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    out: dict[bytes, bytes] = {}
    pos = 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + body), kind
        out[kind] = out.get(kind, b"") + body
        pos += 12 + length
    return out


def test_icon_is_square_package_data_and_regenerates_to_the_same_pixels() -> None:
    data = resources.files("session_watcher").joinpath("data", "icon.png").read_bytes()
    chunks = _chunks(data)
    width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert width == height
    assert 512 <= width <= 2048
    assert (depth, colour) == (8, 6)
    spec = importlib.util.spec_from_file_location("make_icon", ROOT / "tools" / "make_icon.py")
    assert spec
    assert spec.loader
    make_icon = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_icon)
    raw = zlib.decompress(chunks[b"IDAT"])
    # every 7th scanline drawn again (every one with SW_RUN_SLOW=1: the whole icon is ~1M pixels of Python)
    step = 1 if os.environ.get("SW_RUN_SLOW") == "1" else 7
    line = 1 + width * 4
    for py in range(0, width, step):
        want = bytearray([0])
        for px in range(width):
            want += bytes(round(c * 255) for c in make_icon.pixel(px, py, width))
        assert raw[py * line:(py + 1) * line] == want, py
    assert len(raw) == width * line
    # not a blank tile: the corners are transparent, the bulb is warm and opaque
    row = 1 + width * 4
    assert raw[1 + 3] == 0
    bulb = raw[row * 260 + 1 + 256 * 4: row * 260 + 1 + 256 * 4 + 4]
    assert bulb[3] == 255
    assert bulb[0] > 200
    assert bulb[2] < 180
