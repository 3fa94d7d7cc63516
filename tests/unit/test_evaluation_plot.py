"""`eval --plot`: the matrix cells are shaded by their count, right answers green and wrong ones red."""

from __future__ import annotations

from app.core.evaluation import Prediction, evaluate
from app.evaluation_plot import _CELL, _HEAD, _PAD, layout, render_report

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
