"""Where the text after an image sits among Qwen-VL's multimodal rotary positions, and which models the
checklist moves it for (the equality with asking alone itself: tests/integration/test_engine_checklist.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.engine.model_folder import open_model_folder
from app.engine.positions import image_position_shift
from tests.unit.test_model_folder import DEMO, edit

START, END, PAD = 7, 8, 9


def _prompt(before: int, rows: int, cols: int, after: int = 0) -> list[int]:
    return [1] * before + [START] + [PAD] * (rows * cols) + [END] + [2] * after


@pytest.mark.parametrize(("rows", "cols"), [(4, 4), (2, 4), (4, 2), (3, 5), (1, 1)])
def test_an_image_of_rows_by_cols_cells_takes_cols_positions_for_its_cells(rows: int, cols: int) -> None:
    # The cells share their row's and column's positions: the text after goes on `cols` past the opening
    # token (plus the closing one), not `rows x cols` past it.
    assert image_position_shift(_prompt(21, rows, cols), START, END, rows, cols) == rows * cols - cols


def test_the_last_image_counts_and_text_after_it_does_not_move_it() -> None:
    ids = _prompt(3, 2, 2) + _prompt(0, 3, 3, after=5)
    assert image_position_shift(ids, START, END, 3, 3) == 6


@pytest.mark.parametrize(
    "ids",
    [
        [1, 2, 3],  # no image
        [1, START, PAD, PAD, PAD],  # an image that never closes
        [1, PAD, PAD, END],  # one that never opens
        _prompt(3, 2, 3),  # six cells, not the 4 x 4 grid the image's size gives
    ],
    ids=["no-image", "unclosed", "unopened", "other-grid"],
)
def test_no_shift_where_the_tokens_are_not_the_grid_mnn_numbers(ids: list[int]) -> None:
    assert image_position_shift(ids, START, END, 4, 4) == 0


@pytest.mark.parametrize(
    ("changes", "moved"),
    [
        ({}, True),  # the demo model: M-RoPE, a float mask of full attention
        ({"is_mrope": None}, False),  # positions one after another: nothing to move
        ({"attention_mask": "int"}, False),  # the mask is sized by the sequence length MNN numbers from
        ({"attention_type": "mix"}, False),  # so is a sliding window's
    ],
)
def test_the_question_is_moved_only_where_the_sequence_length_numbers_positions_alone(
    tmp_path: Path, changes: dict[str, object], moved: bool
) -> None:
    folder = Path(shutil.copytree(DEMO, tmp_path / "model"))
    edit(folder, "llm_config.json", **changes)
    opened = open_model_folder(folder)
    assert opened.positions_follow_cache_length is moved
    assert opened.vision_token_ids == (488, 489)
