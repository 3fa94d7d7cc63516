"""Scenes for the CPR checklist: hands visible, on the right spot, stacked; square and webcam frames.

Builds on `scenes.py` (same torso, hands, floors and degradations) and adds what the checklist
asks about: one hand instead of two, no hands, hands outside the picture, and the non-square
frames a webcam gives (4:3 and 16:9). Ground truth is decided on the part of the frame the app
shows a square model: `app.core.vision_size.square_crop` takes the centred square, so a frame
with room at the sides ("wide") shows the whole scene, and a tight frame ("crop", top and bottom
cut) shows the middle of the scene larger, where hands far off the torso fall outside.

Pure Pillow + numpy, deterministic for a given generator state, like `scenes.py`.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
from demo_model.scenes import (
    CORRECT_POINT,
    NO_KINDS,
    SCENE_KINDS,
    _background,
    _degrade,
    _draw_hands,
    _draw_torso,
    _layout,
    sample_hands_uv,
)
from PIL import Image, ImageDraw

SIGNALS: tuple[str, ...] = ("hands_visible", "hand_position_correct", "hands_stacked")
ONE_HAND_KINDS: tuple[str, ...] = ("one_hand_correct", "one_hand_wrong")
HIDDEN_KINDS: tuple[str, ...] = ("no_hands", "out_of_frame")
CHECKLIST_KINDS: tuple[str, ...] = SCENE_KINDS + ONE_HAND_KINDS + HIDDEN_KINDS
FRAMINGS: dict[str, tuple[str, float]] = {
    "square": ("square", 1.0),
    "wide_4_3": ("wide", 4 / 3),
    "wide_16_9": ("wide", 16 / 9),
    "crop_4_3": ("crop", 4 / 3),
    "crop_16_9": ("crop", 16 / 9),
}
# Hands beside the torso are outside a tight frame's square, or on its edge: that kind is only
# framed with room around it.
TIGHT_FRAMINGS: tuple[str, ...] = ("crop_4_3", "crop_16_9")


def framings_for(kind: str) -> tuple[str, ...]:
    """The framings a scene of ``kind`` can be shown in with a clear answer."""
    return tuple(f for f in FRAMINGS if not (kind == "off_torso" and f in TIGHT_FRAMINGS))


# A hand counts as in the picture when its palm's centre is this far inside the shown square, and
# as out of it when this far outside (torso widths): the palm is 0.24 wide, the fingers as long again.
INSIDE_MARGIN = 0.1
OUTSIDE_MARGIN = 0.35

Truth = dict[str, str | None]  # signal -> "yes" / "no", None where the checklist's gate does not ask it


@dataclass(frozen=True)
class ChecklistScene:
    """Ground truth of one frame; points in the shown square's coordinates (0..1)."""

    kind: str
    framing: str
    truth: Truth
    hands_xy: tuple[float, float] | None  # None without hands in the picture
    correct_xy: tuple[float, float]
    view: tuple[int, int, int]  # (left, top, side) of the shown square in the frame, px


def truth_for(kind: str, visible: bool) -> Truth:
    """The checklist's answers for a scene of ``kind`` whose hands are (not) in the shown square."""
    if kind not in CHECKLIST_KINDS:
        raise ValueError(f"unknown checklist scene kind {kind!r}")
    if not visible:
        return {"hands_visible": "no", "hand_position_correct": None, "hands_stacked": None}
    position = "yes" if kind in ("correct", "one_hand_correct") else "no"
    stacked = "no" if kind in ONE_HAND_KINDS else "yes"
    return {"hands_visible": "yes", "hand_position_correct": position, "hands_stacked": stacked}


def _crop_cut(rng: np.random.Generator, size: int, height: int) -> int:
    """Rows cut off the top of a ``size`` scene by a tight frame ``height`` high, aimed near the chest."""
    centre = size * rng.uniform(0.44, 0.6)
    return int(np.clip(round(centre - height / 2), 0, size - height))


def _place_outside(
    rng: np.random.Generator, left: float, top: float, side: float, tw: float
) -> tuple[float, float, float]:
    """A hand point past an edge of the shown square, and the rescuer's side that keeps the arms out too."""
    edge = int(rng.integers(3))  # 0 left, 1 right, 2 bottom
    beyond = rng.uniform(OUTSIDE_MARGIN + 0.05, 0.7) * tw
    along = rng.uniform(0.15, 0.85) * side
    if edge == 0:
        return left - beyond, top + along, -1.0
    if edge == 1:
        return left + side + beyond, top + along, 1.0
    return left + along, top + side + beyond, 1.0 if along > side / 2 else -1.0


def render_checklist_scene(
    rng: np.random.Generator, kind: str, framing: str = "square", size: int = 256, jpeg: bool = True
) -> tuple[Image.Image, ChecklistScene]:
    """One frame of ``kind`` (see ``CHECKLIST_KINDS``) in ``framing`` (see ``FRAMINGS``); ``size`` is
    the scene's square side, so a 16:9 frame is ``size`` high when wide and ``size`` wide when cropped."""
    if kind not in CHECKLIST_KINDS:
        raise ValueError(f"unknown checklist scene kind {kind!r}")
    if framing not in framings_for(kind):
        raise ValueError(f"framing {framing!r} is not one of {framings_for(kind)} for {kind}")
    mode, aspect = FRAMINGS[framing]
    # Scene coordinates: the scene's square has its top left at (scene_left, 0); a tight frame is
    # the rows [cut, cut + height) of it, a wide one has floor either side.
    width = round(size * aspect) if mode == "wide" else size
    height = round(size / aspect) if mode == "crop" else size
    scene_left = (width - size) // 2
    lay = _layout(rng, size, scene_left, 0)
    fr = lay.fr
    tw = fr.w
    count = 1 if kind in ONE_HAND_KINDS or (kind == "out_of_frame" and rng.random() < 0.4) else 2
    shown = min(width, height)  # the app's centred square of the frame
    view_left = (width - shown) / 2
    # The cut and the hands' place are drawn together until the hands are clearly in or clearly
    # out of the shown square: a palm on its edge has no honest answer.
    for _ in range(50):
        cut = _crop_cut(rng, size, height) if mode == "crop" else 0
        rescuer: float | None = None
        hands: tuple[float, float] | None
        if kind == "no_hands":
            hands = None
        elif kind == "out_of_frame":
            hx, hy, rescuer = _place_outside(rng, view_left, cut, shown, tw)
            hands = (hx, hy)
        else:
            if kind in SCENE_KINDS:
                base = kind
            else:
                base = "correct" if kind == "one_hand_correct" else str(rng.choice(NO_KINDS))
            x, y = fr.px(*sample_hands_uv(rng, base))
            hands = (float(x), float(y))
        if hands is None:
            visible = False
            break
        x, y = hands[0] - view_left, hands[1] - cut
        inside = min(x, shown - x, y, shown - y)
        if inside >= INSIDE_MARGIN * tw or inside <= -OUTSIDE_MARGIN * tw:
            visible = inside > 0
            break
    else:
        raise RuntimeError(f"no clear hand placement for {kind} in {framing}")

    fr.cy -= cut  # to the frame's rows
    img = _background(rng, max(width, height), width, height)
    draw = ImageDraw.Draw(img)
    _draw_torso(draw, fr, rng, lay.torso, size)
    if hands is not None:
        hands = (hands[0], hands[1] - cut)
        _draw_hands(draw, fr, rng, hands[0], hands[1], lay.hands, lay.sleeve, size, count=count, side=rescuer)
    img = _degrade(rng, img, jpeg)
    qx, qy = fr.px(*CORRECT_POINT)
    to_view = lambda x, y: ((x - view_left) / shown, y / shown)  # noqa: E731
    scene = ChecklistScene(
        kind=kind,
        framing=framing,
        truth=truth_for(kind, visible),
        hands_xy=to_view(*hands) if visible and hands is not None else None,
        correct_xy=to_view(float(qx), float(qy)),
        view=(int(view_left), 0, int(shown)),
    )
    return img, scene


def checklist_jpegs(
    count: int, seed: int, size: int = 256, quality: int = 90, framings: tuple[str, ...] = tuple(FRAMINGS)
) -> list[tuple[str, str, bytes, Truth]]:
    """(kind, framing, JPEG bytes, truth): ``count`` scenes of every kind, framings taken in turn."""
    rng = np.random.default_rng(seed)
    out = []
    for kind in CHECKLIST_KINDS:
        usable = [f for f in framings if f in framings_for(kind)]
        for i in range(count):
            framing = usable[i % len(usable)]
            img, scene = render_checklist_scene(rng, kind, framing, size)
            buf = io.BytesIO()
            img.save(buf, "JPEG", quality=quality)
            out.append((kind, framing, buf.getvalue(), scene.truth))
    return out
