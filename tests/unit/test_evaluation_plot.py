"""`eval --plot`: the matrix cells are shaded by their count, right answers green and wrong ones red."""

from __future__ import annotations

from app.evaluation.plot import _CELL, _CURVE_W, _HEAD, _PAD, _PLOT_H, layout, render_report
from app.evaluation.report import Prediction, evaluate

VALUES = ("yes", "no", "unknown")


def _cell_centre(row: int, column: int) -> tuple[int, int]:
    label_w = 96
    return _PAD + label_w + column * _CELL + _CELL // 4, _PAD + 28 + _HEAD + row * _CELL + _CELL // 4


def test_cells_are_coloured_by_whether_and_how_often_the_model_was_right() -> None:
    predictions = [
        Prediction("a.jpg", "yes", "yes", "valid", 0.1),
        Prediction("b.jpg", "yes", "no", "valid", 0.3),
        Prediction("c.jpg", "no", "no", "valid", 0.2),
    ]
    image = render_report(evaluate(predictions, VALUES), "title")
    right, wrong, empty = (image.getpixel(_cell_centre(r, c)) for r, c in ((0, 0), (0, 1), (1, 0)))
    assert right[1] > right[0] and right[1] > right[2]  # green: yes answered yes (half the row)
    assert wrong[0] > wrong[1] and wrong[0] > wrong[2]  # red: yes answered no
    assert empty == (255, 255, 255)  # no image there
    full = image.getpixel(_cell_centre(1, 1))  # no answered no: the whole row, the deepest green
    assert sum(full) < sum(right)


def test_a_report_without_timings_still_draws() -> None:
    image = render_report(evaluate([Prediction("a.jpg", None, "yes", "valid")], VALUES), "no labels")
    assert image.width > 0 and image.height > 0


def test_no_text_overlaps_another_or_leaves_the_picture() -> None:
    """The caption sat on the first column's name; a long title ran off the edge."""
    predictions = [Prediction(f"{i}.jpg", "yes", ("yes", "no", "unknown")[i % 3], "valid", 0.5) for i in range(1234)]
    title = "keyframe-demo-cpr on 1234 images from " + "a-very-long-folder-name/" * 8
    (width, height), labels = layout(evaluate(predictions, VALUES), title)
    for k, a in enumerate(labels):
        assert 0 <= a.box[0] and a.box[2] <= width and 0 <= a.box[1] and a.box[3] <= height, a
        for b in labels[k + 1 :]:
            apart = a.box[2] <= b.box[0] or b.box[2] <= a.box[0] or a.box[3] <= b.box[1] or b.box[3] <= a.box[1]
            assert apart, (a.text, b.text)


def test_the_curve_panel_rings_the_saved_cut_where_it_falls() -> None:
    """The score cut's square: accuracy against coverage, the profile's saved cut ringed in red."""
    predictions = [
        Prediction("a.jpg", "yes", "yes", "valid", 0.1, "ok", 0.9),
        Prediction("b.jpg", "no", "yes", "valid", 0.1, "ok", 0.2),  # wrong and unsure: the cut at 0.5 drops it
    ]
    report = evaluate(predictions, VALUES, min_score=0.5)
    (width, _), labels = layout(report, "title")
    image = render_report(report, "title")
    assert any(label.text == "cut 0.5: keeps 1/2" for label in labels)
    left, top = width - _PAD - _CURVE_W, _PAD + 28 + _HEAD
    x, y = left + 0.5 * _CURVE_W, top  # coverage 1/2, accuracy 1
    ring = [image.getpixel((round(x + dx), round(y + dy))) for dx, dy in ((6, 0), (-6, 0), (0, 6))]
    assert all(p[0] > 150 and p[1] < 100 for p in ring), ring  # red around the saved cut's point
    uncut = image.getpixel((round(left + _CURVE_W), round(top + 0.5 * _PLOT_H)))  # coverage 1, accuracy 1/2
    assert uncut[1] > uncut[0], uncut  # the curve's own colour where no cut is
