#!/usr/bin/env python3
"""Draws the console's app icons (PNG) into Resources/console/icons/.

Run once when the design changes (the PNGs are committed and embedded like every console file):
a white speech bubble with three dots on the console's accent blue. "any" icons have rounded
corners; the maskable one fills the square and keeps the drawing inside the central 80 % safe
zone, so a phone may cut it to a circle or a squircle. Pure Python (zlib + struct), 4x4
supersampling for smooth edges.
"""
import os
import struct
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Resources", "console", "icons")
BLUE = (0x24, 0x63, 0xEB)
WHITE = (0xFF, 0xFF, 0xFF)
SAMPLES = 4


def in_round_rect(x, y, cx, cy, hw, hh, r):
    dx = max(abs(x - cx) - (hw - r), 0.0)
    dy = max(abs(y - cy) - (hh - r), 0.0)
    return abs(x - cx) <= hw and abs(y - cy) <= hh and dx * dx + dy * dy <= r * r


def in_triangle(x, y, a, b, c):
    def side(p, q):
        return (x - q[0]) * (p[1] - q[1]) - (p[0] - q[0]) * (y - q[1])
    d1, d2, d3 = side(a, b), side(b, c), side(c, a)
    return not ((d1 < 0 or d2 < 0 or d3 < 0) and (d1 > 0 or d2 > 0 or d3 > 0))


def colour_at(u, v, maskable):
    """The colour at (u, v) in the unit square, or None outside the icon."""
    if not maskable and not in_round_rect(u, v, 0.5, 0.5, 0.5, 0.5, 0.2):
        return None
    # The drawing, scaled into the safe zone for the maskable icon.
    s = 0.72 if maskable else 1.0
    x, y = 0.5 + (u - 0.5) / s, 0.5 + (v - 0.5) / s
    for dot in (0.36, 0.5, 0.64):
        if (x - dot) ** 2 + (y - 0.45) ** 2 <= 0.045 ** 2:
            return BLUE
    if in_round_rect(x, y, 0.5, 0.45, 0.3, 0.2, 0.09):
        return WHITE
    if in_triangle(x, y, (0.3, 0.6), (0.44, 0.6), (0.27, 0.78)):
        return WHITE
    return BLUE


def draw(size, maskable):
    rows = []
    for py in range(size):
        row = bytearray(b"\x00")  # filter: none
        for px in range(size):
            acc = [0, 0, 0, 0]
            for sy in range(SAMPLES):
                for sx in range(SAMPLES):
                    c = colour_at((px + (sx + 0.5) / SAMPLES) / size, (py + (sy + 0.5) / SAMPLES) / size, maskable)
                    if c is None:
                        continue
                    acc[0] += c[0]
                    acc[1] += c[1]
                    acc[2] += c[2]
                    acc[3] += 1
            n = acc[3]
            if n == 0:
                row += b"\x00\x00\x00\x00"
            else:
                row += bytes((acc[0] // n, acc[1] // n, acc[2] // n, 255 * n // (SAMPLES * SAMPLES)))
        rows.append(bytes(row))
    return png(size, size, b"".join(rows))


def png(width, height, raw):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b""))


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, size, maskable in (("icon-192.png", 192, False), ("icon-512.png", 512, False),
                                 ("icon-maskable-512.png", 512, True), ("apple-touch-icon.png", 180, True)):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(draw(size, maskable))
        print("wrote", os.path.join("Resources/console/icons", name))


if __name__ == "__main__":
    main()
