"""A grouped bar chart as a PNG (Pillow): a title, a 0–100 % axis, a label under each group and a
legend, so the picture reads without the Markdown beside it. Colours are fixed per series so two
runs' plots compare at a glance.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

COLOURS = [(52, 101, 164), (204, 102, 0), (78, 154, 6), (117, 80, 123), (193, 125, 17)]
_BG, _AXIS, _GRID, _TEXT = (255, 255, 255), (60, 60, 60), (225, 225, 225), (30, 30, 30)


def bar_chart(path: Path, groups: list[list[float]], *, labels: list[str], series: list[str], title: str,
              width: int = 720, height: int = 360) -> None:
    """``groups[g][s]`` in [0, 1]: one group per label (category), one bar per series (condition)."""
    image = Image.new("RGB", (width, height), _BG)
    draw = ImageDraw.Draw(image)
    font, small = ImageFont.load_default(size=14), ImageFont.load_default(size=11)
    left, right, top, bottom = 44, 12, 34, 40
    plot_h, plot_w = height - top - bottom, width - left - right
    draw.text((left, 8), title, fill=_TEXT, font=font)
    for tenth in range(0, 11, 2):  # a grid line and a figure every 20 %
        y = top + plot_h - round(plot_h * tenth / 10)
        draw.line([(left, y), (width - right, y)], fill=_GRID)
        draw.text((left - 6, y), f"{tenth * 10}%", fill=_TEXT, font=small, anchor="rm")
    slot = plot_w / max(1, len(groups))
    for g, values in enumerate(groups):
        bar_w = max(2, int(slot * 0.8 / max(1, len(values))))
        for s, value in enumerate(values):
            x0 = int(left + g * slot + slot * 0.1 + s * bar_w)
            bar_h = round(plot_h * min(1.0, max(0.0, value)))
            if bar_h:
                draw.rectangle([(x0, top + plot_h - bar_h), (x0 + bar_w - 2, top + plot_h - 1)],
                               fill=COLOURS[s % len(COLOURS)])
        if g < len(labels):
            draw.text((left + (g + 0.5) * slot, top + plot_h + 6), labels[g], fill=_TEXT, font=small, anchor="mt")
    draw.line([(left, top), (left, top + plot_h)], fill=_AXIS)
    draw.line([(left, top + plot_h), (width - right, top + plot_h)], fill=_AXIS)
    x = left
    for s, name in enumerate(series):  # the legend, along the bottom
        draw.rectangle([(x, height - 16), (x + 10, height - 6)], fill=COLOURS[s % len(COLOURS)])
        draw.text((x + 14, height - 11), name, fill=_TEXT, font=small, anchor="lm")
        x += 24 + int(draw.textlength(name, font=small))
    image.save(path, format="PNG")
