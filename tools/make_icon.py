"""Draw the project icon: a pendant lamp giving a calm, warm light on a dusk-blue tile.

    python tools/make_icon.py [OUT]     (default: session_watcher/data/icon.png, 512 x 512 RGBA)

Pure standard library (zlib + struct), deterministic: the same pixels on every run, so the PNG in the
repository can always be regenerated and checked (tests/test_icon.py).
"""

from __future__ import annotations

import math
import os
import struct
import sys
import zlib

SIZE = 512
DEFAULT_OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "session_watcher", "data", "icon.png")

Rgba = tuple[float, float, float, float]


def _cover(distance: float) -> float:
    """Anti-aliased coverage of a shape from its signed distance in pixels (negative inside)."""
    return min(1.0, max(0.0, 0.5 - distance))


def _rounded_rect(x: float, y: float, box: tuple[float, float, float, float], r: float) -> float:
    """`box`: centre x, centre y, half width, half height."""
    cx, cy, hw, hh = box
    qx, qy = abs(x - cx) - hw + r, abs(y - cy) - hh + r
    outside = math.hypot(max(qx, 0.0), max(qy, 0.0))
    return outside + min(max(qx, qy), 0.0) - r


def _ellipse(x: float, y: float, box: tuple[float, float, float, float]) -> float:
    """`box`: centre x, centre y, semi-axes x and y."""
    cx, cy, rx, ry = box
    # a distance good enough for anti-aliasing: the normalised radius scaled by the smaller semi-axis
    k = math.hypot((x - cx) / rx, (y - cy) / ry)
    return (k - 1.0) * min(rx, ry)


def _over(dst: Rgba, rgb: tuple[float, float, float], alpha: float) -> Rgba:
    if alpha <= 0.0:
        return dst
    r, g, b, a = dst
    out_a = alpha + a * (1.0 - alpha)
    if out_a <= 0.0:
        return (0.0, 0.0, 0.0, 0.0)
    mix = [(c * alpha + d * a * (1.0 - alpha)) / out_a for c, d in zip(rgb, (r, g, b), strict=True)]
    return (mix[0], mix[1], mix[2], out_a)


def _hex(code: str) -> tuple[float, float, float]:
    return (int(code[1:3], 16) / 255, int(code[3:5], 16) / 255, int(code[5:7], 16) / 255)


TILE_TOP, TILE_BOTTOM = _hex("#22344a"), _hex("#142030")
CORD, SHADE, SHADE_RIM = _hex("#8fa3b8"), _hex("#e9e2d0"), _hex("#c9bfa6")
BULB, GLOW = _hex("#ffd98a"), _hex("#ffc561")


def pixel(px: int, py: int, size: int = SIZE) -> Rgba:
    s = size / 512.0
    x, y = (px + 0.5) / s, (py + 0.5) / s           # drawn in a 512-unit space
    aa = 1.0 / s                                     # one output pixel, in drawing units
    out: Rgba = (0.0, 0.0, 0.0, 0.0)
    tile = _rounded_rect(x, y, (256, 256, 240, 240), 96) / aa
    t = y / 512.0
    bg = tuple(a + (b - a) * t for a, b in zip(TILE_TOP, TILE_BOTTOM, strict=True))
    out = _over(out, (bg[0], bg[1], bg[2]), _cover(tile))
    if out[3] <= 0.0:
        return out
    inside = _cover(tile)
    # the pool of light under the lamp: a cone fading downwards, softened at its edges
    if y > 236:
        depth = (y - 236) / (470 - 236)
        half = 104 + 120 * depth
        edge = (half - abs(x - 256)) / 26.0
        if 0 < depth < 1 and edge > 0:
            out = _over(out, GLOW, inside * 0.20 * min(1.0, edge) * (1.0 - depth) ** 1.6)
    # a round halo about the bulb
    halo = math.hypot(x - 256, y - 250)
    out = _over(out, GLOW, inside * 0.30 * max(0.0, 1.0 - halo / 150.0) ** 2)
    # the cord and the cap it holds
    cord = max(abs(x - 256) - 3.0, y - 130.0, 16.0 - y) / aa
    out = _over(out, CORD, _cover(cord))
    cap = _rounded_rect(x, y, (256, 138, 20, 14), 6) / aa
    out = _over(out, SHADE_RIM, _cover(cap))
    # the dome shade: the upper half of an ellipse, with a rim line at its mouth
    dome = max(_ellipse(x, y, (256, 236, 118, 96)), y - 236.0) / aa
    out = _over(out, SHADE, _cover(dome))
    rim = _rounded_rect(x, y, (256, 236, 122, 6), 6) / aa
    out = _over(out, SHADE_RIM, _cover(rim))
    # the bulb, peeking out beneath the shade
    bulb = max(_ellipse(x, y, (256, 246, 34, 30)), 242.0 - y) / aa
    return _over(out, BULB, _cover(bulb))


def render(size: int = SIZE) -> bytes:
    """The raw PNG scanlines (filter byte 0 + RGBA), deterministic."""
    rows = bytearray()
    for py in range(size):
        rows.append(0)
        for px in range(size):
            r, g, b, a = pixel(px, py, size)
            rows += bytes((round(r * 255), round(g * 255), round(b * 255), round(a * 255)))
    return bytes(rows)


def png(raw: bytes, size: int = SIZE) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)   # 8-bit RGBA
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b""))


def main(argv: list[str]) -> int:
    out = argv[0] if argv else DEFAULT_OUT
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "wb") as fh:
        fh.write(png(render()))
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
