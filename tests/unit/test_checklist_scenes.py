"""The checklist's training and test frames (tools/demo_model/checklist_scenes.py): their sizes, their
ground truth, and that truth agreeing with what the app shows a square model (the centred square)."""

from __future__ import annotations

import numpy as np
import pytest
from demo_model.checklist_scenes import (
    CHECKLIST_KINDS,
    FRAMINGS,
    HIDDEN_KINDS,
    ONE_HAND_KINDS,
    SIGNALS,
    checklist_jpegs,
    framings_for,
    render_checklist_scene,
    truth_for,
)

from app.core.vision_size import VisionPolicy, square_crop


@pytest.mark.parametrize("kind", CHECKLIST_KINDS)
def test_every_kind_renders_in_every_framing_it_allows_at_the_frame_size_a_webcam_gives(kind: str) -> None:
    rng = np.random.default_rng(3)
    sizes = {"square": (200, 200), "wide_4_3": (267, 200), "wide_16_9": (356, 200)}
    sizes |= {"crop_4_3": (200, 150), "crop_16_9": (200, 112)}
    for framing in framings_for(kind):
        img, scene = render_checklist_scene(rng, kind, framing, 200)
        assert img.size == sizes[framing] and img.mode == "RGB"
        width, height = img.size
        policy = VisionPolicy(max_side=128, align=32, square=True)
        top, left, side, _ = square_crop(height, width, policy)
        assert scene.view == (left, top, side), "the truth is decided on the square the app shows"
        assert scene.kind == kind and scene.framing == framing


def test_the_same_generator_state_gives_the_same_frame() -> None:
    a, sa = render_checklist_scene(np.random.default_rng(9), "one_hand_wrong", "crop_4_3")
    b, sb = render_checklist_scene(np.random.default_rng(9), "one_hand_wrong", "crop_4_3")
    assert a.tobytes() == b.tobytes() and sa == sb


def test_answers_follow_the_kind_and_a_closed_gate_leaves_the_others_unasked() -> None:
    assert truth_for("correct", True) == dict.fromkeys(SIGNALS, "yes")
    assert truth_for("side", True) == {"hands_visible": "yes", "hand_position_correct": "no", "hands_stacked": "yes"}
    assert truth_for("one_hand_correct", True)["hands_stacked"] == "no"
    assert truth_for("one_hand_correct", True)["hand_position_correct"] == "yes"
    for kind in CHECKLIST_KINDS:
        assert truth_for(kind, False) == {"hands_visible": "no", "hand_position_correct": None, "hands_stacked": None}
    with pytest.raises(ValueError, match="unknown checklist scene kind"):
        truth_for("two_left_feet", True)


def test_hands_in_the_picture_are_well_inside_the_shown_square_and_hidden_ones_are_not_there() -> None:
    rng = np.random.default_rng(21)
    seen = {True: 0, False: 0}
    for kind in CHECKLIST_KINDS:
        for framing in framings_for(kind):
            for _ in range(4):
                _, scene = render_checklist_scene(rng, kind, framing, 160, jpeg=False)
                visible = scene.truth["hands_visible"] == "yes"
                seen[visible] += 1
                if kind in HIDDEN_KINDS:
                    assert not visible and scene.hands_xy is None
                if visible:
                    x, y = scene.hands_xy
                    assert 0 < x < 1 and 0 < y < 1, (kind, framing, scene.hands_xy)
                    assert (scene.truth["hands_stacked"] == "no") == (kind in ONE_HAND_KINDS)
    assert seen[True] and seen[False]


def test_a_tight_frame_shows_the_chest_larger() -> None:
    """A 16:9 frame cut top and bottom, centre-cropped by the app, is the scene 16/9 times larger: the
    gap between low hands and the right spot grows with it."""
    rng = np.random.default_rng(5)
    gaps: dict[str, list[float]] = {"square": [], "crop_16_9": []}
    for _ in range(30):
        for framing, gap in gaps.items():
            _, scene = render_checklist_scene(rng, "too_low", framing, 160, jpeg=False)
            assert scene.truth["hands_visible"] == "yes"
            gap.append(scene.hands_xy[1] - scene.correct_xy[1])
    ratio = float(np.mean(gaps["crop_16_9"]) / np.mean(gaps["square"]))
    assert 1.4 < ratio < 2.0, ratio  # below 16/9: the lowest hands are framed only by a lower cut


def test_hands_beside_the_torso_are_only_framed_with_room_around_them() -> None:
    assert framings_for("off_torso") == ("square", "wide_4_3", "wide_16_9")
    assert framings_for("side") == tuple(FRAMINGS)
    with pytest.raises(ValueError, match="crop_16_9"):
        render_checklist_scene(np.random.default_rng(1), "off_torso", "crop_16_9")


def test_a_test_set_takes_the_framings_in_turn_for_every_kind() -> None:
    frames = checklist_jpegs(5, seed=4, size=96)
    assert len(frames) == 5 * len(CHECKLIST_KINDS)
    by_kind: dict[str, list[str]] = {}
    for kind, framing, data, truth in frames:
        by_kind.setdefault(kind, []).append(framing)
        assert data[:3] == b"\xff\xd8\xff" and set(truth) == set(SIGNALS)
    assert by_kind["side"] == list(FRAMINGS)
    assert by_kind["off_torso"] == ["square", "wide_4_3", "wide_16_9", "square", "wide_4_3"]
