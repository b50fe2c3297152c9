"""Image and file heuristics (spec §9.2), including the worked values of scenario 50."""

from __future__ import annotations

import base64
import struct

import pytest

from processors.tokens.attachments import ModelContext, estimate_attachment, is_image_like_file
from processors.tokens.image_size import image_dimensions
from processors.tokens.inline_assets import asset_stats, base64_size
from processors.tokens.tokenx import estimate_token_count

DEFAULT = ModelContext.parse("openai/gpt-4o")
URL = "https://example.com/cat.png"


def png(width: int, height: int) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I4sII", 13, b"IHDR", width, height) + b"\x08\x02\x00\x00\x00"


def gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00"


def jpeg(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + b"\x00" * 9
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 3) + b"\x00" * 6
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def webp_vp8x(width: int, height: int) -> bytes:
    body = b"\x00" * 4 + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", 30) + b"WEBP" + b"VP8X" + struct.pack("<I", 10) + body


def webp_vp8l(width: int, height: int) -> bytes:
    bits = (width - 1) | ((height - 1) << 14)
    return b"RIFF" + struct.pack("<I", 30) + b"WEBPVP8L" + struct.pack("<I", 5) + b"\x2f" + struct.pack("<I", bits)


def webp_vp8(width: int, height: int) -> bytes:
    frame = b"\x00\x00\x00\x9d\x01\x2a" + struct.pack("<HH", width, height)
    return b"RIFF" + struct.pack("<I", 30) + b"WEBPVP8 " + struct.pack("<I", 10) + frame


def data_uri(data: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64," + base64.b64encode(data).decode()


def estimate(part: dict, model: str | None = "openai/gpt-4o") -> int:
    return estimate_attachment(part, ModelContext.parse(model), estimate_token_count)


@pytest.mark.parametrize(
    ("blob", "size"),
    [(png(640, 480), (640, 480)), (gif(10, 20), (10, 20)), (jpeg(1024, 768), (1024, 768)),
     (webp_vp8x(3000, 2000), (3000, 2000)), (webp_vp8l(100, 50), (100, 50)), (webp_vp8(320, 240), (320, 240))],
)
def test_header_dimensions(blob: bytes, size: tuple[int, int]) -> None:
    assert image_dimensions(blob) == size


@pytest.mark.parametrize("blob", [b"", b"hello world", b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff\xe0\x00", png(0, 10)])
def test_header_garbage_is_unknown(blob: bytes) -> None:
    assert image_dimensions(blob) is None


class TestScenario50:
    def test_url_without_metadata_is_base_only(self) -> None:
        assert estimate({"type": "image", "image": URL}) == 85

    def test_declared_2048x1024_scales_to_six_tiles(self) -> None:
        part = {"type": "image", "image": URL,
                "providerMetadata": {"mastra": {"imageDimensions": {"width": 2048, "height": 1024}}}}
        assert estimate(part) == 85 + 6 * 170

    def test_two_million_base64_chars_is_high_detail_four_tiles(self) -> None:
        part = {"type": "image", "image": "data:image/png;base64," + "A" * 2_000_000}
        assert estimate(part) == 765

    def test_image_like_file_counts_as_image(self) -> None:
        for part in ({"type": "file", "data": URL, "mimeType": "image/png"},
                     {"type": "file", "data": "https://x.test/a", "mimeType": "application/octet-stream",
                      "filename": "photo.JPG"},
                     {"type": "file", "data": "https://x.test/pic.webp?size=big", "mimeType": "x/y"}):
            assert is_image_like_file(part)
            assert estimate(part) == 85


def test_inline_png_dimensions_drive_the_tiles() -> None:
    assert estimate({"type": "image", "image": data_uri(png(2048, 1024))}) == 1105
    assert estimate({"type": "image", "image": base64.b64encode(png(700, 700)).decode()}) == 85  # auto -> low
    assert estimate({"type": "image", "image": data_uri(png(700, 700)), "detail": "high"}) == 85 + 4 * 170


def test_detail_sources_in_order() -> None:
    big = {"providerMetadata": {"mastra": {"imageDimensions": {"width": 2048, "height": 1024}}}}
    assert estimate({"type": "image", "image": URL, "detail": "low", **big}) == 85
    assert estimate({"type": "image", "image": URL, "providerOptions": {"openai": {"imageDetail": "high"}}}) == 85 + 4 * 170
    assert estimate({"type": "image", "image": URL,
                     "providerMetadata": {"mastra": {"imageDetail": "high"}}}) == 85 + 4 * 170


@pytest.mark.parametrize(
    ("model", "tokens"),
    [("openai/gpt-5-mini", 70 + 6 * 140), ("openai/gpt-4o-mini", 2833 + 6 * 5667), ("openai/o3", 75 + 6 * 150),
     ("openai/computer-use-preview", 65 + 6 * 129), ("mistral/pixtral", 85 + 6 * 170), (None, 85 + 6 * 170)],
)
def test_openai_style_rates_per_model(model: str | None, tokens: int) -> None:
    part = {"type": "image", "image": URL,
            "providerMetadata": {"mastra": {"imageDimensions": {"width": 2048, "height": 1024}}}}
    assert estimate(part, model) == tokens


def test_google_rules() -> None:
    sized = {"type": "image", "image": URL, "width": 1600, "height": 800}
    assert estimate(sized, "google/gemini-2.5-flash") == 258 * 3 * 2
    assert estimate({"type": "image", "image": URL}, "google/gemini-2.5-flash") == 258
    assert estimate(sized, "google/gemini-3-pro") == 1120
    assert estimate({**sized, "providerOptions": {"google": {"mediaResolution": "low"}}}, "google/gemini-3-pro") == 280


def test_anthropic_rules() -> None:
    assert estimate({"type": "image", "image": URL, "width": 750, "height": 1000}, "anthropic/claude") == 1000
    # 3136x1568 scales to 1568x784: ceil(1568 * 784 / 750) = 1640
    assert estimate({"type": "image", "image": URL, "width": 3136, "height": 1568}, "anthropic/claude") == 1640
    assert estimate({"type": "image", "image": URL}, "anthropic/claude") == 1600
    assert estimate({"type": "image", "image": "A" * 1_000_000}, "anthropic/claude") == 1366  # 750 KB


@pytest.mark.parametrize(
    ("model", "tokens"), [("openai/gpt-4o", 500), ("google/gemini-2.5", 258), ("anthropic/claude", 1500)]
)
def test_small_pdf_floors(model: str, tokens: int) -> None:
    part = {"type": "file", "data": "JVBERi0xLjQK" * 10, "mimeType": "application/pdf"}
    assert estimate(part, model) == tokens


def test_big_pdf_per_provider() -> None:
    part = {"type": "file", "data": "data:application/pdf;base64," + "A" * 400_000, "mimeType": "Application/PDF; x=y"}
    assert estimate(part, "openai/gpt-4o") == 75_000  # 300 000 bytes / 4
    assert estimate(part, "google/gemini-2.5") == 15_000
    assert estimate(part, "anthropic/claude") == 100_000


def test_text_file_by_bytes_and_url_file_by_descriptor() -> None:
    assert estimate({"type": "file", "data": "A" * 4000, "mimeType": "text/plain"}) == 750
    url_file = {"type": "file", "data": "https://x.test/docs/Annual%20Report.pdf", "mimeType": "application/pdf"}
    descriptor = '{"type":"file","mimeType":"application/pdf","filename":"Annual Report.pdf"}'
    assert estimate(url_file) == estimate_token_count(descriptor)


def test_asset_stats() -> None:
    assert asset_stats(URL).size_bytes is None
    assert asset_stats("data:text/plain;base64,QUJD").size_bytes == 3
    assert base64_size("QUI=\n") == 2
    assert base64_size("QQ==") == 1
