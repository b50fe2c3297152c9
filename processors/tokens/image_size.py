"""Pixel dimensions from the first bytes of a PNG, GIF, JPEG or WebP file.

Image token heuristics need width and height; decoding a whole image (Pillow) would be slow on the
hot path and would run a full decoder over untrusted bytes. These formats state their size in a
header, so reading a few fields is enough. Anything unrecognised or truncated gives ``None``
("dimensions unknown"), never an exception. Orientation metadata is ignored, as Mastra does.
"""

from __future__ import annotations

import struct

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# JPEG start-of-frame markers carry the size; C4 (DHT), C8 (JPG) and CC (DAC) share the range.
_JPEG_SOF_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
# Markers that stand alone, without a length field.
_JPEG_STANDALONE = frozenset(range(0xD0, 0xDA)) | {0x01}


def image_dimensions(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` in pixels if ``data`` starts like a supported image with a sane size."""
    if data.startswith(_PNG_SIGNATURE):
        size = _png(data)
    elif data[:6] in (b"GIF87a", b"GIF89a"):
        size = _gif(data)
    elif data.startswith(b"\xff\xd8"):
        size = _jpeg(data)
    elif data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        size = _webp(data)
    else:
        return None
    if size is None or size[0] <= 0 or size[1] <= 0:
        return None
    return size


def _png(data: bytes) -> tuple[int, int] | None:
    # Signature, then the IHDR chunk: length(4) "IHDR"(4) width(4) height(4), big-endian.
    if len(data) < 24 or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _gif(data: bytes) -> tuple[int, int] | None:
    if len(data) < 10:
        return None
    width, height = struct.unpack("<HH", data[6:10])
    return width, height


def _jpeg(data: bytes) -> tuple[int, int] | None:
    """Walk the marker segments up to the first start-of-frame."""
    offset = 2
    end = len(data)
    while offset + 4 <= end:
        if data[offset] != 0xFF:
            return None
        marker = data[offset + 1]
        if marker == 0xFF:  # fill byte before a marker
            offset += 1
            continue
        if marker in _JPEG_STANDALONE:
            offset += 2
            continue
        if marker in (0xD9, 0xDA):  # end of image / start of scan before any frame header
            return None
        (length,) = struct.unpack(">H", data[offset + 2 : offset + 4])
        if length < 2:
            return None
        if marker in _JPEG_SOF_MARKERS:
            if offset + 9 > end:
                return None
            height, width = struct.unpack(">HH", data[offset + 5 : offset + 9])
            return width, height
        offset += 2 + length
    return None


def _webp(data: bytes) -> tuple[int, int] | None:
    """The first chunk after the RIFF header says which of the three WebP flavours this is."""
    chunk = data[12:16]
    body = data[20:]
    if chunk == b"VP8 " and len(body) >= 10 and body[3:6] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", body[6:10])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(body) >= 5 and body[0] == 0x2F:
        (bits,) = struct.unpack("<I", body[1:5])
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(body) >= 10:
        width = int.from_bytes(body[4:7], "little") + 1
        height = int.from_bytes(body[7:10], "little") + 1
        return width, height
    return None
