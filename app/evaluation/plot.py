"""A testers' report as one PNG: the confusion matrix, the time each image took, and the score cut's
curve (accuracy against coverage, app.evaluation.score_cut) with the profile's saved cut marked.

Drawn with Pillow (already a dependency) so `eval --plot` needs no plotting library. The
matrix cells are shaded by their share of the row (a correct answer on the diagonal is
green, a wrong one red); the latency panel is a bar per image in the report's order, with
the median marked, so a slow image or a slowdown over the run shows at a glance. A checklist's
report is one such panel per signal, stacked in the checklist's order.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from app.core.figures import spread
from app.evaluation.report import ChecklistReport, Report

_CELL = 76  # wide enough for UNKNOWN above its column
_PAD = 16
_HEAD = 40  # the matrix's header: its caption, then the column names
_PLOT_W, _PLOT_H = 420, 220
_CURVE_W = 220  # the score cut's square: coverage 0..1 across, accuracy 0..1 up (height _PLOT_H)
_INK, _GRID, _RIGHT, _WRONG, _BAR = (33, 33, 33), (200, 200, 200), (46, 125, 50), (198, 40, 40), (0, 105, 92)


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size)


def _shade(colour: tuple[int, int, int], share: float) -> tuple[int, int, int]:
    """White for none of the row, the full colour for all of it."""
    return tuple(round(255 - (255 - c) * share) for c in colour)  # type: ignore[return-value]


@dataclass(frozen=True)
class Label:
    """A text drawn on the report, with its box (for drawing, and for the test that none overlap)."""

    xy: tuple[float, float]
    text: str
    size: int
    box: tuple[float, float, float, float]


def _label(
    draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, size: int, anchor_centre: bool = False
) -> Label:
    font = _font(size)
    if anchor_centre:  # centred on xy
        left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
        xy = (xy[0] - (right - left) / 2, xy[1] - (bottom - top) / 2)
    return Label(xy, text, size, draw.textbbox(xy, text, font=font))


def _fit(draw: ImageDraw.ImageDraw, text: str, size: int, width: float) -> str:
    """`text` cut with an ellipsis to `width` pixels (a long folder name in the title)."""
    font = _font(size)
    if draw.textlength(text, font=font) <= width:
        return text
    while text and draw.textlength(text + "…", font=font) > width:
        text = text[:-1]
    return text + "…"


def _row_label_width(report: Report) -> int:
    """Room for the longest row name (the expected answers), at least 96 px."""
    measure = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    names = [measure.textlength(v.upper()[:12], font=_font(12)) for v in report.values]
    return max(96, round(max(names, default=0)) + 12)


def layout(report: Report, title: str) -> tuple[tuple[int, int], list[Label]]:
    """The report's size and every text on it, placed so that none overlaps another."""
    measure = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    label_w = _row_label_width(report)
    matrix_w = label_w + _CELL * len(report.columns)
    matrix_h = _HEAD + _CELL * max(1, len(report.values))
    width = _PAD * 4 + matrix_w + _PLOT_W + _CURVE_W
    height = _PAD * 2 + 28 + max(matrix_h, _HEAD + _PLOT_H + 44)  # the plots, then their notes
    top = _PAD + 28
    labels = [
        _label(measure, (_PAD, _PAD), _fit(measure, title, 14, width - 2 * _PAD), 14),
        # Its own line: the column names go under it, above their cells.
        _label(measure, (_PAD, top), "rows: expected · columns: answered", 12),
    ]
    for j, column in enumerate(report.columns):
        name = _fit(measure, column.upper(), 12, _CELL - 6)
        labels.append(_label(measure, (_PAD + label_w + j * _CELL + _CELL / 2, top + 26), name, 12, anchor_centre=True))
    for i, value in enumerate(report.values):
        y = top + _HEAD + i * _CELL
        labels.append(_label(measure, (_PAD, y + _CELL // 2 - 7), value.upper()[:12], 12))
        for j in range(len(report.columns)):
            centre = (_PAD + label_w + j * _CELL + (_CELL - 2) / 2, y + (_CELL - 2) / 2)
            labels.append(_label(measure, centre, str(report.matrix[i][j]), 14, anchor_centre=True))
    left = _PAD * 2 + matrix_w
    labels.append(_label(measure, (left, top), "seconds per image", 12))
    seconds = [p.seconds for p in report.rows if p.seconds is not None]
    if seconds:
        summary = spread(seconds)
        note = f"median {summary.median:.3f} s · max {summary.high:.3f} s · n={summary.n}"
        labels.append(_label(measure, (left, top + _HEAD + _PLOT_H + 8), note, 12))
    left += _PLOT_W + _PAD
    labels.append(_label(measure, (left, top), "accuracy vs coverage (score cut)", 12))
    labels.append(_label(measure, (left, top + _HEAD + _PLOT_H + 8), _curve_note(report), 12))
    return (width, height), labels


def _curve_note(report: Report) -> str:
    curve = report.curve
    if not curve.scored:
        return "no model scores"
    if report.min_score is None:
        return "no cut saved"
    point = curve.at(report.min_score)
    return f"cut {report.min_score:.4g}: keeps {point.kept}/{point.labelled}"


def render_report(report: Report, title: str) -> Image.Image:
    (width, height), labels = layout(report, title)
    label_w = _row_label_width(report)
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    top = _PAD + 28
    # The matrix: rows expected, columns what the model answered.
    for i, value in enumerate(report.values):
        y = top + _HEAD + i * _CELL
        row_total = sum(report.matrix[i]) or 1
        for j, column in enumerate(report.columns):
            x = _PAD + label_w + j * _CELL
            colour = _RIGHT if column == value else _WRONG
            share = report.matrix[i][j] / row_total
            draw.rectangle((x, y, x + _CELL - 2, y + _CELL - 2), fill=_shade(colour, share), outline=_GRID)
    # The latencies: one bar per answered image, in order, with the median line.
    seconds = [p.seconds for p in report.rows if p.seconds is not None]
    left = _PAD * 2 + label_w + _CELL * len(report.columns)
    base = top + _HEAD + _PLOT_H
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
    _draw_curve(draw, report, left + _PLOT_W + _PAD, top + _HEAD)
    for label in labels:
        draw.text(label.xy, label.text, fill=_INK, font=_font(label.size))
    return image


def _draw_curve(draw: ImageDraw.ImageDraw, report: Report, left: float, top: float) -> None:
    """Each cut's (coverage, accuracy) joined from no cut (right) to the highest (left); the saved cut ringed."""
    draw.rectangle((left, top, left + _CURVE_W, top + _PLOT_H), outline=_GRID)

    def at(coverage: float, accuracy: float) -> tuple[float, float]:
        return left + coverage * _CURVE_W, top + (1 - accuracy) * _PLOT_H

    points = [
        at(p.coverage, p.accuracy) for p in report.curve.points if p.coverage is not None and p.accuracy is not None
    ]
    if len(points) > 1:
        draw.line(points, fill=_BAR, width=2)
    for x, y in points:
        draw.ellipse((x - 2, y - 2, x + 2, y + 2), fill=_BAR)
    if report.min_score is not None and report.curve.scored:
        saved = report.curve.at(report.min_score)
        if saved.coverage is not None and saved.accuracy is not None:
            x, y = at(saved.coverage, saved.accuracy)
            draw.ellipse((x - 6, y - 6, x + 6, y + 6), outline=_WRONG, width=2)


def write_report_png(report: Report, title: str, path: Path) -> None:
    render_report(report, title).save(path, format="PNG")


def render_checklist(report: ChecklistReport, title: str) -> Image.Image:
    """Each signal's panel (its matrix and the time its question took per image), one under the other."""
    panels = [render_report(s.report, f"{title} · {s.signal}{' (the gate)' if s.gate else ''}") for s in report.signals]
    image = Image.new("RGB", (max(p.width for p in panels), sum(p.height for p in panels)), "white")
    top = 0
    for panel in panels:
        image.paste(panel, (0, top))
        top += panel.height
    return image


def write_checklist_png(report: ChecklistReport, title: str, path: Path) -> None:
    render_checklist(report, title).save(path, format="PNG")
