"""A grouped bar chart as a PNG, written with zlib and struct only (no plotting dependency).

Bars only, no text: the legend and axis go in the Markdown report beside it. Colours are fixed per
series so two runs' plots compare at a glance.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

COLOURS = [(52, 101, 164), (204, 102, 0), (78, 154, 6), (117, 80, 123), (193, 125, 17)]
_BG, _AXIS, _GRID = (255, 255, 255), (60, 60, 60), (225, 225, 225)


def bar_chart(path: Path, groups: list[list[float]], width: int = 640, height: int = 320) -> None:
    """``groups[g][s]`` in [0, 1]: one group per category, one bar per series (condition)."""
    pixels = [[_BG] * width for _ in range(height)]
    margin, top = 30, 10
    plot_h = height - margin - top
    for tenth in range(11):  # a grid line every 10 %
        y = top + plot_h - round(plot_h * tenth / 10)
        for x in range(margin, width - 10):
            pixels[y][x] = _GRID
    n = max(1, len(groups))
    slot = (width - margin - 10) / n
    for g, values in enumerate(groups):
        bar_w = max(2, int(slot * 0.8 / max(1, len(values))))
        for s, value in enumerate(values):
            x0 = int(margin + g * slot + slot * 0.1 + s * bar_w)
            bar_h = round(plot_h * min(1.0, max(0.0, value)))
            for y in range(top + plot_h - bar_h, top + plot_h):
                for x in range(x0, min(width - 10, x0 + bar_w - 1)):
                    pixels[y][x] = COLOURS[s % len(COLOURS)]
    for y in range(top, top + plot_h + 1):
        pixels[y][margin - 1] = _AXIS
    for x in range(margin - 1, width - 10):
        pixels[top + plot_h][x] = _AXIS
    _write(path, pixels)


def _write(path: Path, pixels: list[list[tuple[int, int, int]]]) -> None:
    height, width = len(pixels), len(pixels[0])
    raw = b"".join(b"\x00" + bytes(c for pixel in row for c in pixel) for row in pixels)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9))
                     + chunk(b"IEND", b""))
