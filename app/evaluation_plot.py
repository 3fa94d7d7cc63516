"""A testers' report as one PNG: the confusion matrix beside the time each image took.

Drawn with Pillow (already a dependency) so `eval --plot` needs no plotting library. The
matrix cells are shaded by their share of the row (a correct answer on the diagonal is
green, a wrong one red); the latency panel is a bar per image in the report's order, with
the median marked, so a slow image or a slowdown over the run shows at a glance.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from app.core.evaluation import Report
from app.core.figures import spread

_CELL = 64
_PAD = 16
_PLOT_W, _PLOT_H = 420, 220
_INK, _GRID, _RIGHT, _WRONG, _BAR = (33, 33, 33), (200, 200, 200), (46, 125, 50), (198, 40, 40), (0, 105, 92)


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size)


def _shade(colour: tuple[int, int, int], share: float) -> tuple[int, int, int]:
    """White for none of the row, the full colour for all of it."""
    return tuple(round(255 - (255 - c) * share) for c in colour)  # type: ignore[return-value]


def render_report(report: Report, title: str) -> Image.Image:
    small, normal = _font(12), _font(14)
    label_w = 96
    matrix_w = label_w + _CELL * len(report.columns)
    matrix_h = 24 + _CELL * max(1, len(report.values))
    width = _PAD * 3 + matrix_w + _PLOT_W
    height = _PAD * 2 + 28 + max(matrix_h, _PLOT_H + 40)
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    draw.text((_PAD, _PAD), title, fill=_INK, font=normal)
    top = _PAD + 28
    # The matrix: rows expected, columns what the model answered.
    draw.text((_PAD, top), "expected \\ answered", fill=_INK, font=small)
    for j, column in enumerate(report.columns):
        draw.text((_PAD + label_w + j * _CELL + 4, top), column.upper()[:8], fill=_INK, font=small)
    for i, value in enumerate(report.values):
        y = top + 24 + i * _CELL
        draw.text((_PAD, y + _CELL // 2 - 7), value.upper()[:12], fill=_INK, font=small)
        row_total = sum(report.matrix[i]) or 1
        for j, column in enumerate(report.columns):
            x = _PAD + label_w + j * _CELL
            n = report.matrix[i][j]
            colour = _RIGHT if column == value else _WRONG
            draw.rectangle((x, y, x + _CELL - 2, y + _CELL - 2), fill=_shade(colour, n / row_total), outline=_GRID)
            draw.text((x + _CELL // 2 - 8, y + _CELL // 2 - 7), str(n), fill=_INK, font=normal)
    # The latencies: one bar per answered image, in order, with the median line.
    seconds = [p.seconds for p in report.rows if p.seconds is not None]
    left = _PAD * 2 + matrix_w
    draw.text((left, top), "seconds per image", fill=_INK, font=small)
    base = top + 24 + _PLOT_H
    draw.line((left, base, left + _PLOT_W, base), fill=_GRID)
    if seconds:
        summary = spread(seconds)
        scale = _PLOT_H / (summary.high or 1.0)
        step = _PLOT_W / len(seconds)
        for k, s in enumerate(seconds):
            x0 = left + k * step
            draw.rectangle((x0 + 1, base - s * scale, x0 + max(2.0, step - 1), base), fill=_BAR)
        median_y = base - summary.median * scale
        draw.line((left, median_y, left + _PLOT_W, median_y), fill=_WRONG, width=2)
        note = f"median {summary.median:.3f} s · max {summary.high:.3f} s · n={summary.n}"
        draw.text((left, base + 8), note, fill=_INK, font=small)
    return image


def write_report_png(report: Report, title: str, path: Path) -> None:
    render_report(report, title).save(path, format="PNG")
