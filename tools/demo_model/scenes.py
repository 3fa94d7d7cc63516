"""Synthetic top-down CPR scenes: a manikin torso with two stacked hands.

Pure Pillow + numpy (no torch), so the app's tests can import it to make
fixture images and videos.  Everything is drawn in *torso-relative*
coordinates (u, v): u runs across the chest (-0.5 = left edge, 0 = sternum,
+0.5 = right edge), v runs down the torso (0 = shoulders, 1 = waist).  The
correct compression point is u = 0, v = 0.36 (lower half of the sternum).

The framing is deliberately steady (torso position ±4 %, scale ±6 %,
rotation ±4°): a tiny vision tower learns a steady scene in minutes, while a
freely placed torso did not learn at all in the earlier experiments.

Determinism: every random draw comes from the ``numpy.random.Generator``
passed in, in a fixed order, so the same generator state gives the same
image.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

SCENE_KINDS: tuple[str, ...] = ("correct", "too_high", "too_low", "side", "off_torso")
NO_KINDS: tuple[str, ...] = SCENE_KINDS[1:]

SIGNAL = "hand_position_correct"
QUESTION = "Is the hand position correct?"

# The correct zone (torso-relative) and the point it is centred on.
CORRECT_POINT: tuple[float, float] = (0.0, 0.36)
CORRECT_HALF_U = 0.05
CORRECT_HALF_V = 0.06

# Where each kind puts the hands: (u range, v range); u is mirrored at random
# for "side" and "off_torso".  Each "no" range keeps a clear gap (>= 0.1 torso
# units) from the correct zone so the label is never ambiguous.
_PLACEMENT: dict[str, tuple[tuple[float, float], tuple[float, float]]] = {
    "correct": (
        (-CORRECT_HALF_U, CORRECT_HALF_U),
        (CORRECT_POINT[1] - CORRECT_HALF_V, CORRECT_POINT[1] + CORRECT_HALF_V),
    ),
    "too_high": ((-0.07, 0.07), (0.05, 0.19)),
    "too_low": ((-0.07, 0.07), (0.56, 0.78)),
    # Side starts at 0.25: with the fingers pointing inwards, hands at 0.22
    # reached over the sternum line and were ambiguous even to look at.
    "side": ((0.25, 0.36), (0.24, 0.48)),
    "off_torso": ((0.70, 0.80), (0.20, 0.70)),
}

_SKIN = np.array(
    [
        (255, 224, 196),
        (241, 194, 160),
        (224, 172, 130),
        (198, 134, 96),
        (161, 102, 70),
        (120, 74, 48),
        (88, 56, 38),
    ],
    dtype=np.float32,
)
# Manikins are often not skin-coloured at all.
_MANIKIN_EXTRA = np.array(
    [
        (200, 200, 205),
        (150, 170, 200),
        (230, 215, 190),
        (120, 125, 135),
    ],
    dtype=np.float32,
)
_SLEEVES = np.array(
    [
        (30, 60, 150),
        (180, 30, 40),
        (40, 40, 45),
        (230, 230, 230),
        (30, 120, 60),
        (240, 140, 20),
        (110, 80, 160),
        (90, 90, 90),
        (20, 140, 170),
        (200, 190, 60),
    ],
    dtype=np.float32,
)

BACKGROUND_KINDS: tuple[str, ...] = ("flat", "gradient", "tiles", "planks", "noise", "mat")


def expected_answer(kind: str) -> str:
    """'yes' for a correct placement, 'no' for every other kind."""
    if kind not in SCENE_KINDS:
        raise ValueError(f"unknown scene kind {kind!r}")
    return "yes" if kind == "correct" else "no"


def answer_json(observation: str) -> str:
    """The exact JSON line the model is trained to answer."""
    return f'{{"signal":"{SIGNAL}","observation":"{observation}"}}'


def classify_hands(u: float, v: float) -> str | None:
    """Kind of an explicit torso-relative hand position, None when ambiguous.

    Used for hand-made positions (videos): inside the correct zone -> yes;
    clearly outside (the gap used by the generator) -> the matching kind.
    """
    if abs(u - CORRECT_POINT[0]) <= CORRECT_HALF_U and abs(v - CORRECT_POINT[1]) <= CORRECT_HALF_V:
        return "correct"
    if abs(u) >= 0.62:
        return "off_torso"
    if abs(u) >= 0.25 and 0.0 <= v <= 1.0:
        return "side"
    if abs(u) <= 0.15 and v <= CORRECT_POINT[1] - CORRECT_HALF_V - 0.1:
        return "too_high"
    if abs(u) <= 0.15 and v >= CORRECT_POINT[1] + CORRECT_HALF_V + 0.1:
        return "too_low"
    return None


@dataclass(frozen=True)
class SceneInfo:
    """Ground truth of one rendered scene (normalised image coordinates 0..1)."""

    kind: str
    answer: str
    hands_uv: tuple[float, float]
    hands_xy: tuple[float, float]
    correct_xy: tuple[float, float]
    torso_width: float  # fraction of the image side


def sample_hands_uv(rng: np.random.Generator, kind: str) -> tuple[float, float]:
    """Draw a torso-relative hand position for ``kind``."""
    (u0, u1), (v0, v1) = _PLACEMENT[kind]
    u = float(rng.uniform(u0, u1))
    v = float(rng.uniform(v0, v1))
    if kind in ("side", "off_torso") and rng.random() < 0.5:
        u = -u
    return u, v


class _Frame:
    """Maps torso-relative (u, v) to pixels: scale, rotate, translate."""

    def __init__(self, cx: float, cy: float, width: float, height: float, angle: float) -> None:
        self.cx, self.cy, self.w, self.h = cx, cy, width, height
        self.cos, self.sin = math.cos(angle), math.sin(angle)

    def px(self, u: np.ndarray | float, v: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
        x = np.asarray(u, dtype=np.float64) * self.w
        y = (np.asarray(v, dtype=np.float64) - 0.5) * self.h
        return (self.cx + x * self.cos - y * self.sin, self.cy + x * self.sin + y * self.cos)

    def poly(self, u: np.ndarray, v: np.ndarray) -> list[tuple[float, float]]:
        x, y = self.px(u, v)
        return list(zip(x.tolist(), y.tolist(), strict=True))


def _ellipse_pts(cx: float, cy: float, rx: float, ry: float, angle: float, n: int = 28) -> list[tuple[float, float]]:
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    x, y = rx * np.cos(t), ry * np.sin(t)
    c, s = math.cos(angle), math.sin(angle)
    return list(zip((cx + x * c - y * s).tolist(), (cy + x * s + y * c).tolist(), strict=True))


def _jitter(rng: np.random.Generator, colour: np.ndarray, amount: float) -> tuple[int, int, int]:
    c = colour + rng.normal(0, amount, 3)
    return tuple(int(x) for x in np.clip(c, 0, 255))  # type: ignore[return-value]


def _shade(colour: tuple[int, int, int], factor: float) -> tuple[int, int, int]:
    return tuple(int(max(0, min(255, c * factor))) for c in colour)  # type: ignore[return-value]


def _background(
    rng: np.random.Generator, size: int, width: int | None = None, height: int | None = None
) -> Image.Image:
    """A floor of side ``size``; a ``width`` x ``height`` canvas is cut from its top left."""
    img = _square_background(rng, size)
    if width is None or height is None:
        return img
    return img.crop((0, 0, width, height))


def _square_background(rng: np.random.Generator, size: int) -> Image.Image:
    kind = BACKGROUND_KINDS[int(rng.integers(len(BACKGROUND_KINDS)))]
    base = rng.uniform(30, 230, 3)
    other = np.clip(base + rng.normal(0, 60, 3), 0, 255)
    if kind == "flat":
        arr = np.broadcast_to(base, (size, size, 3)).copy()
    elif kind == "gradient":
        ang = rng.uniform(0, 2 * np.pi)
        ramp = np.linspace(-0.5, 0.5, size, dtype=np.float32)
        t = np.clip(0.5 + ramp[None, :] * math.cos(ang) + ramp[:, None] * math.sin(ang), 0, 1)[..., None]
        arr = base.astype(np.float32) * (1 - t) + other.astype(np.float32) * t
    elif kind == "tiles":
        step = int(size * rng.uniform(0.12, 0.3))
        arr = np.broadcast_to(base, (size, size, 3)).copy()
        line = max(1, size // 120)
        off = int(rng.integers(step))
        for p in range(off, size, step):
            arr[:, p : p + line] = other
            arr[p : p + line, :] = other
    elif kind == "planks":
        step = int(size * rng.uniform(0.08, 0.2))
        arr = np.empty((size, size, 3))
        shades = rng.uniform(0.8, 1.15, size // step + 2)
        for i, p in enumerate(range(0, size, step)):
            arr[p : p + step] = base * shades[i]
        arr[::step] *= 0.6
        if rng.random() < 0.5:
            arr = arr.transpose(1, 0, 2)
    elif kind == "noise":
        cells = int(rng.integers(4, 16))
        low = rng.uniform(0, 1, (cells, cells, 1))
        img = Image.fromarray((low[..., 0] * 255).astype(np.uint8)).resize((size, size), Image.BICUBIC)
        t = (np.asarray(img, dtype=np.float32) / 255.0)[..., None]
        arr = base.astype(np.float32) * (1 - t) + other.astype(np.float32) * t
    else:  # mat: a coloured training mat on the floor, larger than the torso
        arr = np.broadcast_to(other, (size, size, 3)).copy()
        mat = rng.uniform(20, 200, 3)
        m = int(size * rng.uniform(0.0, 0.08))
        arr[:, m : size - m] = mat
    return Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8), "RGB")


def _draw_torso(
    draw: ImageDraw.ImageDraw, fr: _Frame, rng: np.random.Generator, colour: tuple[int, int, int], size: int
) -> None:
    # Head and neck first (the torso outline covers the neck's lower end).
    head_r = rng.uniform(0.17, 0.22)
    hx, hy = fr.px(0.0, -0.1 - head_r * fr.w / fr.h)
    draw.polygon(
        _ellipse_pts(float(hx), float(hy), head_r * fr.w, head_r * fr.w * 1.15, math.atan2(fr.sin, fr.cos)), fill=colour
    )
    neck = 0.11
    draw.polygon(
        fr.poly(np.array([-neck, neck, neck, -neck]), np.array([-0.12, -0.12, 0.05, 0.05])), fill=_shade(colour, 0.93)
    )
    # Torso outline: a tapered superellipse (shoulders a bit wider than the waist).
    n_exp = rng.uniform(2.5, 5.0)
    taper = rng.uniform(0.0, 0.12)
    t = np.linspace(0, 2 * np.pi, 72, endpoint=False)
    cu = np.sign(np.cos(t)) * np.abs(np.cos(t)) ** (2 / n_exp) * 0.5
    sv = np.sign(np.sin(t)) * np.abs(np.sin(t)) ** (2 / n_exp) * 0.5 + 0.5
    cu = cu * (1.0 - taper * sv)
    draw.polygon(fr.poly(cu, sv), fill=colour)
    # Chest highlight: a lighter ellipse, breaks up the flat colour.
    if rng.random() < 0.6:
        cx, cy = fr.px(0.0, rng.uniform(0.25, 0.45))
        draw.polygon(
            _ellipse_pts(float(cx), float(cy), 0.32 * fr.w, 0.2 * fr.h, math.atan2(fr.sin, fr.cos)),
            fill=_shade(colour, rng.uniform(1.03, 1.1)),
        )
    lw = max(1, size // 160)
    if rng.random() < 0.6:  # sternum line
        x, y = fr.px(np.array([0.0, 0.0]), np.array([0.08, rng.uniform(0.5, 0.6)]))
        draw.line(list(zip(x.tolist(), y.tolist(), strict=True)), fill=_shade(colour, 0.75), width=lw)
    if rng.random() < 0.6:  # nipples
        r = 0.025 * fr.w
        for side in (-1, 1):
            x, y = fr.px(side * 0.22, 0.24)
            draw.ellipse([float(x) - r, float(y) - r, float(x) + r, float(y) + r], fill=_shade(colour, 0.65))
    if rng.random() < 0.4:  # navel
        r = 0.02 * fr.w
        x, y = fr.px(0.0, 0.78)
        draw.ellipse([float(x) - r, float(y) - r, float(x) + r, float(y) + r], fill=_shade(colour, 0.6))


def _draw_hands(
    draw: ImageDraw.ImageDraw,
    fr: _Frame,
    rng: np.random.Generator,
    hx: float,
    hy: float,
    skin: tuple[int, int, int],
    sleeve: tuple[int, int, int] | None,
    size: int,
    count: int = 2,
    side: float | None = None,
) -> None:
    """``count`` hands (2: stacked) at pixel (hx, hy), an arm to a frame edge for each.

    A person always has arms: without a sleeve they are bare. The top hand of a stacked
    pair lies across the lower one at an angle, fingers interlaced, as trainees are
    taught; at 128 px the crossing fingers and the two forearms are what tell two
    stacked hands from one hand.
    """
    drawn = 1.0 if rng.random() < 0.5 else -1.0  # rescuer kneels on this side, unless told
    side = drawn if side is None else side
    # Arms come from that side and usually a little from below.
    arm_ang = math.atan2(rng.uniform(-0.3, 0.9), side)
    cross = rng.uniform(0.45, 0.85) * (1.0 if rng.random() < 0.5 else -1.0)
    ca, sa = math.cos(arm_ang), math.sin(arm_ang)
    palm_rx, palm_ry = 0.12 * fr.w, 0.095 * fr.w
    arm_w = 0.19 * fr.w
    bare = _shade(skin, 0.95)
    arm_colour = sleeve if sleeve is not None else bare
    skin_len = rng.uniform(0.0, 0.25) * size if sleeve is not None else 0.0  # bare forearm, then the sleeve
    far = 1.6 * size
    # Two arms come from two shoulders: they meet at the wrists and part towards the elbows, so
    # the floor shows between them (a V), which is what tells two hands from one at 128 px.
    part = rng.uniform(0.16, 0.26)
    for spread in (-1.0, 1.0) if count == 2 else (0.0,):
        a = arm_ang + spread * part
        c, s_ = math.cos(a), math.sin(a)
        wx = hx + ca * palm_rx * 0.7 - sa * spread * palm_ry * 0.3
        wy = hy + sa * palm_rx * 0.7 + ca * spread * palm_ry * 0.3
        draw.line([(wx, wy), (wx + c * far, wy + s_ * far)], fill=arm_colour, width=int(arm_w))
        if skin_len > 0:
            draw.line([(wx, wy), (wx + c * skin_len, wy + s_ * skin_len)], fill=bare, width=int(arm_w * 0.85))
    lower = _shade(skin, rng.uniform(0.85, 0.95))
    hands = ((lower, -0.25, 0.0), (skin, 0.2, cross)) if count == 2 else ((skin, 0.0, 0.0),)
    # Lower hand first: palm plus fingers pointing away from the rescuer.
    for colour, off, turn in hands:
        ang = arm_ang + turn
        c, s_ = math.cos(ang), math.sin(ang)
        px_, py_ = hx + ca * palm_rx * off, hy + sa * palm_rx * off
        finger_len = 0.12 * fr.w
        for k in range(4):
            lateral = (k - 1.5) * 0.33 * palm_ry
            fx = px_ - c * (palm_rx + finger_len * 0.45) - s_ * lateral
            fy = py_ - s_ * (palm_rx + finger_len * 0.45) + c * lateral
            draw.polygon(_ellipse_pts(fx, fy, finger_len * 0.55, palm_ry * 0.17, ang, 12), fill=_shade(colour, 0.97))
        draw.polygon(_ellipse_pts(px_, py_, palm_rx, palm_ry, ang), fill=colour)
        # Thumb along the top side of the palm.
        tx, ty = px_ - c * palm_rx * 0.2 + s_ * palm_ry * 0.9, py_ - s_ * palm_rx * 0.2 - c * palm_ry * 0.9
        draw.polygon(
            _ellipse_pts(tx, ty, palm_rx * 0.55, palm_ry * 0.28, ang + 0.5 * side, 12), fill=_shade(colour, 0.93)
        )
        # Knuckle line across the back of the hand gives it some texture.
        kx, ky = px_ - c * palm_rx * 0.55, py_ - s_ * palm_rx * 0.55
        draw.line(
            [(kx - s_ * palm_ry * 0.7, ky + c * palm_ry * 0.7), (kx + s_ * palm_ry * 0.7, ky - c * palm_ry * 0.7)],
            fill=_shade(colour, 0.8),
            width=max(1, size // 200),
        )


def _degrade(rng: np.random.Generator, img: Image.Image, jpeg: bool) -> Image.Image:
    arr = np.asarray(img, dtype=np.float32)
    contrast = rng.uniform(0.7, 1.3)
    bright = rng.uniform(-35, 35)
    cast = rng.normal(0, 8, 3)
    # One fused affine per channel (float32 keeps this cheap for training).
    arr = arr * np.float32(contrast) + (128.0 * (1 - contrast) + bright + cast).astype(np.float32)
    sigma = rng.uniform(0, 9)
    arr += rng.standard_normal(arr.shape, dtype=np.float32) * np.float32(sigma)
    out = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8), "RGB")
    blur = rng.uniform(0, 1.3) * out.size[0] / 256
    if rng.random() < 0.5 and blur > 0.1:
        out = out.filter(ImageFilter.GaussianBlur(blur))
    quality = int(rng.integers(30, 96))
    if jpeg:
        buf = io.BytesIO()
        out.save(buf, format="JPEG", quality=quality)
        buf.seek(0)
        out = Image.open(buf).convert("RGB")
    return out


@dataclass(frozen=True)
class _Layout:
    """Torso placement and colours, drawn before anything else so a seed fixes the scene."""

    fr: _Frame
    torso: tuple[int, int, int]
    hands: tuple[int, int, int]
    sleeve: tuple[int, int, int] | None


def _layout(rng: np.random.Generator, size: int, left: float = 0.0, top: float = 0.0) -> _Layout:
    """The torso of a ``size`` square scene whose top left corner is at (left, top) on the canvas."""
    cx = left + size * (0.5 + rng.uniform(-0.04, 0.04))
    cy = top + size * (0.60 + rng.uniform(-0.04, 0.04))
    k = 1.0 + rng.uniform(-0.06, 0.06)
    angle = math.radians(rng.uniform(-4, 4))
    fr = _Frame(cx, cy, 0.46 * size * k, 0.80 * size * k, angle)
    palette = _SKIN if rng.random() < 0.7 else _MANIKIN_EXTRA
    torso_colour = _jitter(rng, palette[int(rng.integers(len(palette)))], 10)
    # Hands must stand out from the torso a little, or even a person could
    # not tell where they are at 128 px; redraw (deterministically) if too close.
    for _ in range(8):
        hand_colour = _jitter(rng, _SKIN[int(rng.integers(len(_SKIN)))], 10)
        if np.linalg.norm(np.subtract(hand_colour, torso_colour)) >= 80:
            break
    sleeve = _jitter(rng, _SLEEVES[int(rng.integers(len(_SLEEVES)))], 15) if rng.random() < 0.8 else None
    return _Layout(fr, torso_colour, hand_colour, sleeve)


def render_scene_info(
    rng: np.random.Generator, kind: str, size: int = 256, hands_at: tuple[float, float] | None = None, jpeg: bool = True
) -> tuple[Image.Image, SceneInfo]:
    """Render one scene and return it with its ground truth.

    ``hands_at`` (torso-relative u, v) overrides the kind's random placement;
    the returned ``SceneInfo.kind`` is then the classification of that point
    (``kind`` when it is ambiguous).
    """
    if kind not in SCENE_KINDS:
        raise ValueError(f"unknown scene kind {kind!r}")
    # Draw the layout first so the same seed gives the same torso whatever
    # the hands do (lets a video move only the hands).
    lay = _layout(rng, size)
    fr = lay.fr
    sampled = sample_hands_uv(rng, kind)
    u, v = hands_at if hands_at is not None else sampled
    label = kind if hands_at is None else (classify_hands(u, v) or kind)

    img = _background(rng, size)
    draw = ImageDraw.Draw(img)
    _draw_torso(draw, fr, rng, lay.torso, size)
    hx, hy = fr.px(u, v)
    _draw_hands(draw, fr, rng, float(hx), float(hy), lay.hands, lay.sleeve, size)
    img = _degrade(rng, img, jpeg)
    qx, qy = fr.px(*CORRECT_POINT)
    info = SceneInfo(
        kind=label,
        answer=expected_answer(label),
        hands_uv=(u, v),
        hands_xy=(float(hx) / size, float(hy) / size),
        correct_xy=(float(qx) / size, float(qy) / size),
        torso_width=fr.w / size,
    )
    return img, info


def render_scene(
    rng: np.random.Generator, kind: str, size: int = 256, hands_at: tuple[float, float] | None = None, jpeg: bool = True
) -> Image.Image:
    """Render one RGB scene of ``kind`` (see ``SCENE_KINDS``), ``size`` x ``size`` px."""
    return render_scene_info(rng, kind, size, hands_at, jpeg)[0]


def hand_path(n_frames: int) -> list[tuple[float, float]]:
    """Torso-relative hand positions for a test video: side -> centre -> side.

    Frames in the first and last quarter are clearly off-centre ("side"),
    the middle half sits in the correct zone.
    """
    out = []
    for i in range(n_frames):
        t = i / max(1, n_frames - 1)
        if t < 0.25:
            out.append((0.32 - 0.04 * t / 0.25, 0.36))
        elif t <= 0.75:
            out.append((0.0, CORRECT_POINT[1]))
        else:
            out.append((-0.28 - 0.04 * (t - 0.75) / 0.25, 0.36))
    return out


def make_video_frames(seed: int, n_frames: int = 24, size: int = 256) -> list[tuple[Image.Image, str]]:
    """Frames of one steady scene whose hands move side -> centre -> side.

    Returns (image, expected answer) pairs.  The scene layout, colours and
    degradations are identical in every frame (same seed), only the hands move.
    """
    frames = []
    for u, v in hand_path(n_frames):
        img, info = render_scene_info(np.random.default_rng(seed), "correct", size, hands_at=(u, v))
        frames.append((img, info.answer))
    return frames


def scene_jpegs(count_per_kind: int, seed: int, size: int = 256, quality: int = 90) -> list[tuple[str, bytes, str]]:
    """(kind, JPEG file bytes, expected answer): ``count_per_kind`` fresh scenes of every kind,
    as a camera or a file would give them. Tests and benchmarks take their held-out images here."""
    rng = np.random.default_rng(seed)
    out = []
    for kind in SCENE_KINDS:
        for _ in range(count_per_kind):
            buf = io.BytesIO()
            render_scene(rng, kind, size).save(buf, "JPEG", quality=quality)
            out.append((kind, buf.getvalue(), expected_answer(kind)))
    return out
