"""Phone-camera videos of a trainee doing chest compressions on a manikin, with exact ground truth.

For benchmarking a camera-based compression-rate estimator on motion that looks like a person's
rather than a moving patch (`compressions.py`). A small 3-D scene is posed for every frame: a
torso manikin lying on the floor of a room (textured floor and wall, furniture, soft shadows), a
trainee kneeling beside it with straight arms and stacked hands on the lower sternum. It is seen
through a phone camera placed the way people place one: "side" (profile, chest height), "front"
(across the manikin), "oblique" (45° between them), "top_down" (1.2-1.6 m above the chest, any
rotation), "floor_up" (lying on the floor by the manikin's head, tilted up), "portrait_headless"
(portrait, head and shoulders cut off) and "far" (small and off-centre in a busy room, noisier).

Each body part is a capsule or ellipsoid of 3-D sample points hung on a skeleton. It is drawn
once, in the rest pose, as a textured and shaded sprite (heads ray-cast, so face and hair sit
where they are seen), and every frame warps that sprite by the affine that best maps its points'
rest projections to their current ones; parts are painted far to near. So what moves is what a
compression moves: the hands and the chest under them (a soft dent) straight down by the depth,
arms and shoulders down and a little forward, the head a little more (it is further from the
hips, which stay still, so the trunk pivots about them); seen from above this is mostly a change
of size. Strokes follow `compressions._stroke` at a duty of 0.4-0.6 per video, each stroke's
period jittered by about ±3 % (without drifting from the true rate) and its depth by ±15 %; in a
30:2 pause the trainee leans to the manikin's head, gives two breaths and comes back. Then the
phone: hand-held shake (smooth drift of a few pixels plus jitter, rendered with a margin so no
border shows), mains flicker aliased by the frame rate, motion blur (three poses averaged over a
~3/4-frame exposure) and defocus, vignetting and white balance, sensor noise, JPEG, and a variable
frame rate with dropped frames. Negatives show a person moving without compressing: talking,
waving (a steady 1.8-2.2 Hz side-to-side hand: periodic, in the compression band, but not a push),
resting (breathing) and repositioning (knees, leaning to the head, adjusting the hands).

Ground truth is `compressions.GroundTruth`: every compression's bottom, the pauses as they
happened (30:2 ventilations included), the rate per frame (NaN while not compressing), the CCF,
`depth_px` and `hands_xy` (the hands' rest position, output pixels). `depth_px` is how far the
push alone has moved the hands in the picture: the length of that displacement in output pixels,
always >= 0, 0 whenever not compressing (so not the ventilation lean, nor any negative's
movement; below 1 px for "top_down"). `make_phone_video` returns a `PhoneVideo`: a
`CompressionVideo` whose `spec` is the timing-only `VideoSpec` the strokes were timed with, plus
the `PhoneSpec` and `hands_px`, the hands' position in every frame whatever moves them (no shake).

What it does not show: a real person or manikin. Parts are rigid sprites, so nothing turns to
show another side (a turning head only shifts its face), cloth does not fold, skin does not
deform, limbs have no muscles; occlusion order is fixed per video; shadows do not move; no rolling
shutter, auto-exposure, focus hunting, hair or fingers moving on their own. Everything is drawn
from the one seed, deterministically. 20 s at 30 fps and 320x240 takes about 2-3 s (motion blur
draws three poses a frame: about twice that).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import cv2
import numpy as np
from demo_model.compressions import CompressionVideo, GroundTruth, VideoSpec, _motion, _stroke
from demo_model.scenes import _SLEEVES

VIEWS: tuple[str, ...] = ("side", "front", "oblique", "top_down", "floor_up", "portrait_headless", "far")
NEGATIVE_KINDS: tuple[str, ...] = ("talking", "waving", "resting", "repositioning")

TimeFn = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class PhoneSpec:
    view: str  # one of VIEWS
    seconds: float = 20.0
    fps: float = 30.0
    vfr: bool = False  # variable frame rate: intervals jitter ±30 %, ~3 % of frames dropped (gaps of 2-3 intervals)
    rate_per_min: float | None = 110.0  # None: no compressions
    rate_change: tuple[float, float] | None = None  # (at_s, new rate per minute)
    cycles_30_2: bool = False  # 30 compressions, then a 4-7 s ventilation pause, repeated
    pauses: tuple[tuple[float, float], ...] = ()  # extra pauses (start_s, length_s); a start waits for the stroke
    depth_cm: float = 5.5
    shake: float = 0.0  # 0: tripod; 1: typical hand-held (drift of a few px at 0.3-2 Hz, ~0.5 px jitter at 240 px)
    flicker: float = 0.0  # brightness modulation depth at 100 or 120 Hz, aliased by the frame rate
    blur: bool = False  # motion blur over the exposure and a slight defocus
    noise: float = 2.0  # sensor noise, standard deviation in grey levels
    jpeg_quality: int | None = 80
    width: int = 320
    height: int = 240  # portrait: width < height (e.g. 180x320)
    negative: str | None = None  # one of NEGATIVE_KINDS, with rate_per_min None

    def __post_init__(self) -> None:
        if self.view not in VIEWS:
            raise ValueError(f"view must be one of {VIEWS}")
        if self.negative is not None and (self.negative not in NEGATIVE_KINDS or self.rate_per_min is not None):
            raise ValueError(f"negative must be one of {NEGATIVE_KINDS}, with rate_per_min None")
        if self.seconds <= 0 or self.fps <= 0 or min(self.width, self.height) < 64:
            raise ValueError("seconds and fps must be positive, width and height at least 64")
        if self.rate_per_min is not None and not 20 <= self.rate_per_min <= 300:
            raise ValueError("rate_per_min must be 20..300")


@dataclass(frozen=True)
class PhoneVideo(CompressionVideo):
    """`spec` is the timing-only `VideoSpec` (seconds, fps, rates, pauses incl. 30:2 ones, duty); its framing
    fields do not apply. `hands_px`: per frame, where the hands are (output pixels, x, y; without shake)."""

    phone: PhoneSpec
    hands_px: np.ndarray


# ---------------------------------------------------------------------------------------------
# The skeleton. World: cm, z up, the floor at z = 0. The manikin lies along x (head at +x), its
# sternum's lower half at the origin. The trainee kneels on the -y side, facing +y; their right is +x.

(
    PELVIS,
    HIP_L,
    HIP_R,
    KNEE_L,
    KNEE_R,
    ANKLE_L,
    ANKLE_R,
    TOE_L,
    TOE_R,
    NECK,
    SHOULDER_L,
    SHOULDER_R,
    ELBOW_L,
    ELBOW_R,
    WRIST_L,
    WRIST_R,
    TIP_L,
    TIP_R,
    HEAD_BASE,
    HEAD_TOP,
    NOSE,
    M_HIP,
    M_SHOULDER,
    M_HEAD_BASE,
    M_HEAD_TOP,
    M_FACE,
) = range(26)
N_JOINTS = 26
UPPER = [NECK, SHOULDER_L, SHOULDER_R]
HEAD = [HEAD_BASE, HEAD_TOP, NOSE]
HANDS_L = [WRIST_L, TIP_L]
HANDS_R = [WRIST_R, TIP_R]
HANDS = HANDS_L + HANDS_R
LOWER = [PELVIS, HIP_L, HIP_R]
LEGS = [KNEE_L, KNEE_R, ANKLE_L, ANKLE_R, TOE_L, TOE_R]
CHEST = np.array([0.0, 0.0, 21.0])  # the manikin's chest surface under the hands
_UP = np.array([0.0, 0.0, 1.0])
_LIGHT = np.array([0.25, -0.3, 1.0]) / np.linalg.norm([0.25, -0.3, 1.0])

# Per cm of push: hands straight down; shoulders down and a little forward; the head a bit more (it
# is further from the hips the trunk pivots about); the hips still (so the legs need no redrawing).
_PUSH = np.zeros((N_JOINTS, 3))
_PUSH[HANDS] = (0.0, 0.0, -1.0)
_PUSH[UPPER] = (0.0, 0.25, -1.0)
_PUSH[HEAD] = (0.0, 0.5, -1.05)

# Leaning to the manikin's head (a ventilation): the trunk swings about the hips toward +x (keeping its
# length), the head bends further down, the hands go to the manikin's head.
_LEAN = np.zeros((N_JOINTS, 3))
_LEAN[LOWER] = (8.0, 0.0, -2.0)
_LEAN[UPPER] = (40.0, -2.0, -16.0)
_LEAN[HEAD] = (42.0, 0.0, -28.0)
_LEAN[HANDS] = (36.0, 4.0, 0.0)

# Sitting back on the heels, hands off the chest onto the thighs.
_SIT = np.zeros((N_JOINTS, 3))
_SIT[LOWER] = (0.0, -6.0, -14.0)
_SIT[UPPER] = (0.0, -22.0, -6.0)
_SIT[HEAD] = (0.0, -22.0, -4.0)
_SIT[HANDS] = (0.0, -28.0, 12.0)

_SKIN = np.array(
    [(255, 224, 196), (241, 194, 160), (224, 172, 130), (198, 134, 96), (161, 102, 70), (120, 74, 48), (88, 56, 38)],
    np.float32,
)
_HAIR = np.array(
    [(30, 22, 18), (60, 40, 25), (110, 75, 40), (175, 135, 85), (205, 175, 125), (125, 122, 120), (45, 30, 25)],
    np.float32,
)
# The drawn scenes' sleeve colours (their white a shade darker), and two more.
_SHIRTS = np.vstack([_SLEEVES[:3], [(228, 228, 228)], _SLEEVES[4:], [(150, 40, 80), (240, 200, 190)]])
_SHIRTS = _SHIRTS.astype(np.float32)
_TROUSERS = np.array(
    [(40, 55, 90), (30, 30, 35), (62, 65, 70), (150, 130, 100), (90, 70, 50), (25, 40, 75)], np.float32
)
_SHOES = np.array([(240, 240, 240), (30, 30, 30), (90, 60, 40), (60, 70, 120), (200, 60, 50)], np.float32)
_MANIKIN = np.array([(228, 208, 182), (200, 200, 205), (236, 222, 204), (172, 172, 178), (212, 182, 152)], np.float32)
_JACKETS = np.array([(30, 70, 160), (170, 30, 30), (45, 45, 55), (20, 110, 90)], np.float32)
_WOOD = np.array([(196, 152, 100), (130, 88, 55), (176, 164, 150), (208, 168, 112), (150, 110, 75)], np.float32)
_PAINT = np.array(
    [(236, 232, 222), (226, 216, 196), (206, 220, 230), (214, 226, 206), (200, 200, 204), (238, 226, 214)], np.float32
)
_THINGS = np.array(
    [
        (180, 40, 40),
        (40, 90, 170),
        (60, 140, 70),
        (220, 180, 50),
        (90, 90, 95),
        (230, 230, 230),
        (150, 100, 60),
        (30, 30, 35),
        (200, 110, 40),
        (120, 60, 140),
    ],
    np.float32,
)


def _pick(rng: np.random.Generator, palette: np.ndarray, spread: float = 8.0) -> np.ndarray:
    colour: np.ndarray = np.clip(palette[int(rng.integers(len(palette)))] + rng.normal(0, spread, 3), 0, 255)
    return colour.astype(np.float32)


def _unit(v: np.ndarray) -> np.ndarray:
    out: np.ndarray = v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-9)
    return out


def _ramp(x: np.ndarray) -> np.ndarray:
    x = np.clip(x, 0.0, 1.0)
    out: np.ndarray = x * x * (3 - 2 * x)
    return out


def _hold(t: np.ndarray, t0: float, rise: float, hold: float, fall: float) -> np.ndarray:
    """0 -> 1 over `rise` from t0, 1 for `hold`, back to 0 over `fall` (smoothstep edges)."""
    out: np.ndarray = _ramp((t - t0) / rise) * (1 - _ramp((t - t0 - rise - hold) / fall))
    return out


def _bump(t: np.ndarray, t0: float, length: float) -> np.ndarray:
    x = np.clip((t - t0) / length, 0.0, 1.0)
    out: np.ndarray = np.sin(np.pi * x) ** 2
    return out


def _wiggle(rng: np.random.Generator, lo: float, hi: float) -> TimeFn:
    """A smooth random signal of unit RMS, band-limited to lo..hi Hz: 48 sinusoids at random frequencies
    across the band. A handful of them (the first version had 3-7) made a quasi-periodic signal that a
    6 s window reads as a steady rate; people's sway, gestures and a hand-held phone are broadband."""
    comps = 48
    f = rng.uniform(lo, hi, comps)
    ph = rng.uniform(0, 2 * np.pi, comps)
    a = rng.uniform(0.5, 1.0, comps) * np.sqrt(lo / f)
    a = a / np.sqrt(np.sum(a**2) / 2)

    def fn(t: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.sin(2 * np.pi * t[:, None] * f + ph) @ a
        return out

    return fn


# ---------------------------------------------------------------------------------------------
# Timing of the strokes.


@dataclass(frozen=True)
class _Timeline:
    t: np.ndarray  # `_motion`'s fine grid, seconds
    depth: np.ndarray  # push on the fine grid, cm
    rates: np.ndarray  # on the fine grid, NaN while not compressing
    bottoms: tuple[float, ...]
    pauses: tuple[tuple[float, float], ...]
    vents: tuple[tuple[float, float], ...]  # the 30:2 pauses among them (the trainee ventilates)
    ccf: float
    spec: VideoSpec


def _merge(spans: Sequence[tuple[float, float]]) -> tuple[tuple[float, float], ...]:
    out: list[tuple[float, float]] = []
    for start, length in sorted(spans):
        if out and start <= out[-1][0] + out[-1][1] + 1e-9:
            s0, l0 = out[-1]
            out[-1] = (s0, max(l0, start + length - s0))
        else:
            out.append((start, length))
    return tuple(out)


def _timeline(spec: PhoneSpec, rng: np.random.Generator, duty: float) -> _Timeline:
    base = VideoSpec(
        seconds=spec.seconds,
        fps=spec.fps,
        rate_per_min=spec.rate_per_min,
        duty=duty,
        pauses=tuple(spec.pauses),
        rate_change=spec.rate_change,
        noise=spec.noise,
        flicker=spec.flicker,
        jpeg_quality=spec.jpeg_quality,
        height=max(64, spec.height),
    )
    asked: list[tuple[float, float]] = []
    if spec.rate_per_min is not None and spec.cycles_30_2:
        while True:  # each ventilation is placed after the 30th stroke since the last, counting all pauses so far
            t, cycles, _, _ = _motion(replace(base, pauses=base.pauses + tuple(asked)))
            i = int(np.searchsorted(cycles, 30 * (len(asked) + 1) - 1e-9))
            if i >= len(t) - 1:
                break
            # Just before the 30th stroke's end: `_motion` starts a pause where the stroke under way ends.
            asked.append((float(t[i - 1]), float(rng.uniform(4.0, 7.0))))
    vspec = replace(base, pauses=base.pauses + tuple(asked))
    t, cycles, rates, happened = _motion(vspec)
    if spec.rate_per_min is None:
        return _Timeline(t, np.zeros_like(t), rates, (), (), (), 0.0, vspec)
    step = float(t[1] - t[0])
    vents = tuple((s, n) for s, n in happened if any(abs(s - a) < 3 * step for a, _ in asked))
    # People are not metronomes: stroke k spans nominal cycles k+e_k .. k+1+e_(k+1), so each period varies by
    # about ±3 % (1.6 % standard deviation) without drifting from the true rate; e is pinned to 0 where the
    # hands rest (the start, pauses), so a pause still starts at the top.
    n_k = int(cycles[-1]) + 2
    e = rng.uniform(-0.02, 0.02, n_k + 1)
    e[0] = 0.0
    for start, _ in happened:
        e[int(round(cycles[min(len(t) - 1, round(start / step))]))] = 0.0
    warped = np.interp(cycles, np.arange(n_k + 1) + e, np.arange(n_k + 1, dtype=float))
    gains = rng.uniform(0.85, 1.15, n_k + 1)  # depth ±15 % per stroke
    k = np.floor(warped).astype(int)
    depth = np.where(np.isfinite(rates), _stroke(warped - k, duty) * gains[k] * spec.depth_cm, 0.0)
    bottoms = np.flatnonzero(np.diff(np.floor(warped - duty)) > 0) + 1
    ccf = float(np.isfinite(rates[:-1]).mean())
    return _Timeline(t, depth, rates, tuple(float(t[i]) for i in bottoms), _merge(happened), vents, ccf, vspec)


def _frame_times(spec: PhoneSpec, rng: np.random.Generator) -> np.ndarray:
    if not spec.vfr:
        return np.arange(round(spec.seconds * spec.fps)) / spec.fps
    n = int(spec.seconds * spec.fps * 1.5) + 4
    gaps = rng.uniform(0.7, 1.3, n) / spec.fps
    dropped = rng.random(n) < 0.03
    gaps[dropped] *= rng.integers(2, 4, int(dropped.sum()))
    times = np.concatenate(([0.0], np.cumsum(gaps)))
    out: np.ndarray = times[times < spec.seconds - 1e-9]
    return out


# ---------------------------------------------------------------------------------------------
# Poses and motion.


def _reach(shoulder: np.ndarray, wrist: np.ndarray, arm: float) -> np.ndarray:
    """The wrist moved toward the shoulder if the arm cannot reach it."""
    d = wrist - shoulder
    n = float(np.linalg.norm(d))
    out: np.ndarray = shoulder + d * min(1.0, 0.97 * arm / n)
    return out


@dataclass(frozen=True)
class _Pose:
    rest: np.ndarray  # (N_JOINTS, 3)
    arm: tuple[float, float]  # upper arm, forearm, cm
    poles: np.ndarray  # (2, 3): where each elbow points
    palms: np.ndarray  # (2, 3): each palm's normal (the back of the hand)


def _head(j: np.ndarray, b: float, tilt: float) -> None:
    """Head joints from the neck: `tilt` is the head axis' angle from vertical, toward +y."""
    spine = _unit(j[NECK] - j[PELVIS])
    hd = np.array([0.0, math.sin(tilt), math.cos(tilt)])
    fd = np.array([0.0, math.cos(tilt), -math.sin(tilt)])  # the face: perpendicular, forward and down
    j[HEAD_BASE] = j[NECK] + 7 * b * _unit(spine + hd)
    j[HEAD_TOP] = j[HEAD_BASE] + 22 * b * hd
    j[NOSE] = j[HEAD_BASE] + 11 * b * hd + 10 * b * fd


def _legs(j: np.ndarray, rng: np.random.Generator, b: float, knee_y: float) -> None:
    spread = rng.uniform(10, 15) * b
    for side, (knee, ankle, toe) in enumerate(((KNEE_L, ANKLE_L, TOE_L), (KNEE_R, ANKLE_R, TOE_R))):
        sx = -1.0 if side == 0 else 1.0
        j[knee] = (sx * spread, min(knee_y, -25.0), 6.5 * b)  # clear of the manikin's side (y = -19)
        j[ankle] = (sx * (spread + rng.uniform(-2, 3)), j[knee][1] - 38 * b, 5.0 * b)
        j[toe] = j[ankle] + (sx * rng.uniform(-1, 2), -13 * b, -1.5 * b)


def _pose(kind: str, rng: np.random.Generator, b: float) -> _Pose:
    """Rest joints: "compress" (leaning over the chest, arms straight, hands stacked), "upright" (kneeling
    up, hands in front: talking) or "wave" (kneeling, one hand raised over the chest, the other on a thigh)."""
    j = np.zeros((N_JOINTS, 3))
    j[M_HIP], j[M_SHOULDER] = (-32.0, 0.0, 10.5), (22.0, 0.0, 10.5)
    j[M_HEAD_BASE], j[M_HEAD_TOP], j[M_FACE] = (29.0, 0.0, 9.5), (51.0, 0.0, 9.5), (40.0, 0.0, 25.0)
    palms = np.array([_UP, _UP])
    if kind == "compress":
        j[WRIST_L], j[TIP_L] = (-2.0, -7.5, 24.0), (2.5, 9.5, 22.6)  # lower hand, fingers across the chest
        j[WRIST_R], j[TIP_R] = (3.0, -7.0, 27.3), (-5.0, 9.0, 26.2)  # upper hand, crossed over it
        sh_y, sh_z = -rng.uniform(3, 9), 24.0 + 56.0 * b
        lean = math.radians(rng.uniform(38, 52))
        j[NECK] = (0.0, sh_y - 1, sh_z + 3 * b)
        j[PELVIS] = j[NECK] - 50 * b * np.array([0.0, math.sin(lean), math.cos(lean)])
        tilt = lean + math.radians(rng.uniform(25, 45))
        poles = np.array([(-0.6, -0.6, 0.3), (0.6, -0.6, 0.3)])
    else:
        lean = math.radians(rng.uniform(0, 12) if kind == "upright" else rng.uniform(12, 24))
        knee_y = -rng.uniform(27, 34)
        j[PELVIS] = (0.0, knee_y - rng.uniform(3, 8), 6.5 * b + 42 * b)
        j[NECK] = j[PELVIS] + 50 * b * np.array([0.0, math.sin(lean), math.cos(lean)])
        sh_y, sh_z = j[NECK][1] - 1, j[NECK][2] - 3 * b
        tilt = lean + math.radians(rng.uniform(-5, 20))
        poles = np.array([(-0.45, -0.45, -0.75), (0.45, -0.45, -0.75)])
    j[SHOULDER_L] = (-18 * b, sh_y, sh_z)
    j[SHOULDER_R] = (18 * b, sh_y, sh_z)
    j[HIP_L] = j[PELVIS] + (-9.5 * b, 0.0, -3 * b)
    j[HIP_R] = j[PELVIS] + (9.5 * b, 0.0, -3 * b)
    if kind == "compress":
        dz = j[HIP_L][2] - 6.5 * b
        knee_y = j[PELVIS][1] + math.sqrt(max((44 * b) ** 2 - dz**2, 25.0)) * rng.uniform(0.5, 1.0)
    _legs(j, rng, b, knee_y)
    _head(j, b, tilt)
    if kind == "compress":
        arm = 1.003 * float(np.linalg.norm(j[SHOULDER_L] - j[WRIST_L]))  # locked, all but straight
        return _with_elbows(_Pose(j, (0.53 * arm, 0.47 * arm), poles, palms))
    arm = 58.0 * b
    if kind == "upright":
        for side, (sh, wr, tip) in enumerate(((SHOULDER_L, WRIST_L, TIP_L), (SHOULDER_R, WRIST_R, TIP_R))):
            sx = -1.0 if side == 0 else 1.0
            want = np.array(
                [sx * rng.uniform(10, 17) * b, j[NECK][1] + rng.uniform(18, 28), j[PELVIS][2] + rng.uniform(8, 22)]
            )
            j[wr] = _reach(j[sh], want, arm)
            j[tip] = j[wr] + 17 * b * _unit(np.array([-sx * 0.3, 0.9, 0.3]))
        palms = np.array([(1.0, 0.0, 0.0), (-1.0, 0.0, 0.0)])  # palms facing each other
    else:  # wave: the right hand up over the chest, the left resting on the left thigh
        thigh = j[HIP_L] + 0.45 * (j[KNEE_L] - j[HIP_L])
        j[WRIST_L] = _reach(j[SHOULDER_L], thigh + (1.0, -3.0, 8.0 * b), arm)
        j[TIP_L] = j[WRIST_L] + 16 * b * _unit(j[KNEE_L] - j[HIP_L] + (0.0, 0.0, 10.0))
        want = np.array([rng.uniform(-4, 8), rng.uniform(-12, -4), rng.uniform(48, 60)])
        j[WRIST_R] = _reach(j[SHOULDER_R], want, arm)
        j[TIP_R] = j[WRIST_R] + 17 * b * _unit(np.array([0.0, 0.2, 0.98]))
        poles = np.array([(-0.45, -0.45, -0.75), (0.7, -0.3, -0.65)])
        palms = np.array([_UP, (0.0, 1.0, 0.0)])  # set to face the camera once it is placed
    return _with_elbows(_Pose(j, (0.53 * arm, 0.47 * arm), poles, palms))


def _with_elbows(pose: _Pose) -> _Pose:
    j = pose.rest.copy()
    for side, (s, e, w) in enumerate(((SHOULDER_L, ELBOW_L, WRIST_L), (SHOULDER_R, ELBOW_R, WRIST_R))):
        j[e] = _elbows(j[None, s], j[None, w], *pose.arm, pose.poles[side])[0]
    return replace(pose, rest=j)


def _elbows(s: np.ndarray, w: np.ndarray, l1: float, l2: float, pole: np.ndarray) -> np.ndarray:
    """Two-bone IK: the elbow between shoulder `s` and wrist `w` (n, 3), bent toward `pole`."""
    dv = w - s
    d = np.maximum(np.linalg.norm(dv, axis=-1), 1e-6)
    u = dv / d[:, None]
    a = (l1**2 - l2**2 + d**2) / (2 * d)
    h = np.sqrt(np.clip(l1**2 - a**2, 0, None))
    straight = d >= l1 + l2
    a = np.where(straight, l1 * d / (l1 + l2), a)
    h = np.where(straight, 0.0, h)
    pv = _unit(pole - np.sum(pole * u, axis=-1, keepdims=True) * u)
    out: np.ndarray = s + a[:, None] * u + h[:, None] * pv
    return out


@dataclass
class _Rig:
    pose: _Pose
    moves: list[TimeFn]  # t (n,) -> displacement (n, N_JOINTS, 3), summed
    turns: list[TimeFn]  # t (n,) -> head (nod, turn) in radians (n, 2), summed

    def joints(self, t: np.ndarray) -> np.ndarray:
        d = np.zeros((len(t), N_JOINTS, 3))
        for move in self.moves:
            d += move(t)
        j: np.ndarray = self.pose.rest[None] + d
        if self.turns:
            ang = np.sum([turn(t) for turn in self.turns], axis=0)
            ca, sa, cb, sb = np.cos(ang[:, 0]), np.sin(ang[:, 0]), np.cos(ang[:, 1]), np.sin(ang[:, 1])
            base = j[:, HEAD_BASE]
            for k in (HEAD_TOP, NOSE):
                x, y, z = (j[:, k] - base).T
                y, z = y * ca - z * sa, y * sa + z * ca  # nod: about the trainee's left-right axis
                x, y = x * cb - y * sb, x * sb + y * cb  # turn: about the vertical
                j[:, k] = base + np.stack([x, y, z], axis=-1)
        for side, (s, e, w) in enumerate(((SHOULDER_L, ELBOW_L, WRIST_L), (SHOULDER_R, ELBOW_R, WRIST_R))):
            j[:, e] = _elbows(j[:, s], j[:, w], *self.pose.arm, self.pose.poles[side])
        return j


def _field(groups: Sequence[tuple[list[int], np.ndarray]]) -> np.ndarray:
    out = np.zeros((N_JOINTS, 3))
    for joints, vec in groups:
        out[joints] += vec
    return out


def _sway(
    rng: np.random.Generator, amp: float, lo: float = 0.05, hi: float = 0.4, hands: float = 0.0, hips: float = 0.3
) -> TimeFn:
    """Slow irregular sway of the upper body (`hands` and `hips` times it of those), amplitude ~`amp` cm."""
    fx, fy, fz = _wiggle(rng, lo, hi), _wiggle(rng, lo, hi), _wiggle(rng, lo, hi)

    def fn(t: np.ndarray) -> np.ndarray:
        v = amp * np.stack([fx(t), fy(t), 0.4 * fz(t)], axis=-1)
        d = np.zeros((len(t), N_JOINTS, 3))
        d[:, UPPER + HEAD] += v[:, None]
        d[:, LOWER] += hips * v[:, None]
        d[:, HANDS] += hands * v[:, None]
        return d

    return fn


def _lean_event(rng: np.random.Generator, t0: float, length: float) -> TimeFn:
    """Lean to the manikin's head and back within `length` s: hands lift off and onto the head, two breaths."""
    rise, fall = rng.uniform(0.6, 0.9), rng.uniform(0.6, 0.9)
    hold = max(0.2, length - rise - fall - 0.2)
    depth = rng.uniform(0.8, 1.1)
    dips = _field([(UPPER, np.array([0.0, 0.0, -4.0])), (HEAD, np.array([0.0, 2.0, -9.0]))])

    def fn(t: np.ndarray) -> np.ndarray:
        d = _hold(t, t0 + 0.05, rise, hold, fall)[:, None, None] * _LEAN * depth
        arc = _bump(t, t0 + 0.05, rise) + _bump(t, t0 + 0.05 + rise + hold, fall)
        d[:, HANDS, 2] += 7.0 * arc[:, None]
        for k in range(2):
            d += _bump(t, t0 + 0.05 + rise + 0.15 + k * hold / 2, max(0.3, hold / 2 - 0.2))[:, None, None] * dips
        return d

    return fn


def _push(tl: _Timeline) -> TimeFn:
    def fn(t: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.interp(t, tl.t, tl.depth)[:, None, None] * _PUSH
        return out

    return fn


@dataclass(frozen=True)
class _Gesture:
    """One hand gesturing: smooth random 0.5-3 Hz movement in bursts, a slow drift, the fingers wagging."""

    joints: list[int]  # wrist, fingertips
    axes: list[TimeFn]
    drift: list[TimeFn]
    amp: np.ndarray
    burst: TimeFn
    tip: list[TimeFn]

    def __call__(self, t: np.ndarray) -> np.ndarray:
        env = np.clip(0.55 + 0.6 * self.burst(t), 0.1, 1.0)
        v = np.stack([f(t) for f in self.axes], axis=-1) * self.amp * env[:, None]
        v += np.stack([f(t) for f in self.drift], axis=-1) * 4.0
        d = np.zeros((len(t), N_JOINTS, 3))
        d[:, self.joints] += v[:, None]
        d[:, self.joints[1]] += 2.5 * np.stack([f(t) for f in self.tip], axis=-1) * env[:, None]
        return d


@dataclass(frozen=True)
class _Nods:
    nod: TimeFn
    turn: TimeFn
    env: TimeFn
    a_nod: float
    a_turn: float

    def __call__(self, t: np.ndarray) -> np.ndarray:
        env = np.clip(0.6 + 0.5 * self.env(t), 0.1, 1.0)
        return np.stack([self.a_nod * env * self.nod(t), self.a_turn * self.turn(t)], axis=-1)


def _talking(rng: np.random.Generator) -> tuple[list[TimeFn], list[TimeFn]]:
    moves: list[TimeFn] = [_sway(rng, rng.uniform(1.5, 3.0), 0.08, 0.4)]
    for group in (HANDS_L, HANDS_R):
        moves.append(
            _Gesture(
                group,
                [_wiggle(rng, 0.5, 3.0) for _ in range(3)],
                [_wiggle(rng, 0.08, 0.3) for _ in range(3)],
                np.array([rng.uniform(5, 10), rng.uniform(4, 8), rng.uniform(5, 10)]),
                _wiggle(rng, 0.05, 0.25),
                [_wiggle(rng, 0.8, 3.0) for _ in range(3)],
            )
        )
    nods = _Nods(
        _wiggle(rng, 0.4, 2.5),
        _wiggle(rng, 0.05, 0.6),
        _wiggle(rng, 0.05, 0.3),
        rng.uniform(0.08, 0.15),
        rng.uniform(0.15, 0.35),
    )
    return moves, [nods]


def _waving(rng: np.random.Generator, seconds: float, wave_dir: np.ndarray) -> TimeFn:
    f = rng.uniform(1.8, 2.2)
    amp, tip_amp = rng.uniform(6, 11), rng.uniform(4, 7)
    t_on, t_off = rng.uniform(0.5, 2.0), seconds - rng.uniform(0.5, 2.0)
    ph0 = rng.uniform(0, 2 * np.pi)
    wobble, size = _wiggle(rng, 0.05, 0.2), _wiggle(rng, 0.05, 0.3)

    def fn(t: np.ndarray) -> np.ndarray:
        env = _ramp((t - t_on) / 0.4) * (1 - _ramp((t - t_off) / 0.4))
        ph = 2 * np.pi * f * t + ph0 + 0.15 * wobble(t)  # steady: a rhythm in the compression band
        a = amp * env * (1 + 0.1 * size(t))
        side = np.sin(ph)
        d = np.zeros((len(t), N_JOINTS, 3))
        d[:, HANDS_R] += (a * side)[:, None, None] * wave_dir
        d[:, HANDS_R, 2] -= (0.1 * a * side**2)[:, None]  # the hand swings on a shallow arc
        d[:, TIP_R] += (tip_amp * env * np.sin(ph + 0.3))[:, None] * wave_dir
        d[:, SHOULDER_R] += (0.08 * a * side)[:, None] * wave_dir
        return d

    return fn


def _resting(rng: np.random.Generator) -> TimeFn:
    f, amp = rng.uniform(0.2, 0.3), rng.uniform(0.5, 1.0)
    ph, ph2 = rng.uniform(0, 2 * np.pi, 2)

    def fn(t: np.ndarray) -> np.ndarray:
        breath = amp * (np.sin(2 * np.pi * f * t + ph) + 0.15 * np.sin(4 * np.pi * f * t + ph2))
        d = np.zeros((len(t), N_JOINTS, 3))
        d[:, UPPER + HEAD, 2] += breath[:, None]
        d[:, UPPER + HEAD, 1] -= 0.3 * breath[:, None]
        return d

    return fn


@dataclass(frozen=True)
class _Held:
    """A displacement field (N_JOINTS, 3) eased in from t0 over `rise`, held, eased out over `fall`."""

    field: np.ndarray
    t0: float
    rise: float
    hold: float
    fall: float

    def __call__(self, t: np.ndarray) -> np.ndarray:
        out: np.ndarray = _hold(t, self.t0, self.rise, self.hold, self.fall)[:, None, None] * self.field
        return out


@dataclass(frozen=True)
class _HeldTurn:
    """The head turned (and nodded) to `angles` and back."""

    angles: np.ndarray
    t0: float
    rise: float
    hold: float
    fall: float

    def __call__(self, t: np.ndarray) -> np.ndarray:
        out: np.ndarray = _hold(t, self.t0, self.rise, self.hold, self.fall)[:, None] * self.angles
        return out


@dataclass(frozen=True)
class _Shuffle:
    """The knees shuffled sideways one after the other (each lifted a little), the body following half way."""

    t0: float
    shift: np.ndarray
    first: list[int]
    second: list[int]

    def __call__(self, t: np.ndarray) -> np.ndarray:
        body = _field([(LOWER, 0.6 * self.shift), (UPPER + HEAD + HANDS, 0.3 * self.shift)])
        d: np.ndarray = _ramp((t - self.t0) / 1.2)[:, None, None] * body
        for k, group in enumerate((self.first, self.second)):
            d[:, group] += _ramp((t - self.t0 - 0.6 * k) / 0.6)[:, None, None] * self.shift
            d[:, group[0], 2] += 5.0 * _bump(t, self.t0 + 0.6 * k, 0.6)
        return d


@dataclass(frozen=True)
class _Replace:
    """The hands lifted off the chest and put down a little elsewhere."""

    t0: float
    length: float
    lift: float
    shift: np.ndarray

    def __call__(self, t: np.ndarray) -> np.ndarray:
        d = np.zeros((len(t), N_JOINTS, 3))
        d[:, HANDS, 2] += self.lift * _bump(t, self.t0, self.length)[:, None]
        d[:, HANDS] += _ramp((t - self.t0) / self.length)[:, None, None] * self.shift
        return d


def _repositioning(rng: np.random.Generator, seconds: float) -> tuple[list[TimeFn], list[TimeFn]]:
    """A few irregular movements one after another: knees shuffled, a lean to the head and back,
    sitting back, the hands lifted and put down elsewhere, a look around."""
    moves: list[TimeFn] = []
    turns: list[TimeFn] = []
    t = float(rng.uniform(0.3, 1.5))
    while t < seconds - 1.0:
        kind = str(rng.choice(["lean", "knees", "hands", "sit", "look"], p=[0.25, 0.25, 0.2, 0.15, 0.15]))
        if kind == "lean":
            length = float(rng.uniform(2.5, 4.5))
            moves.append(_lean_event(rng, t, length))
        elif kind == "knees":
            length = 1.8
            shift = np.array([rng.choice([-1, 1]) * rng.uniform(5, 12), rng.uniform(-4, 4), 0.0])
            first = [KNEE_L, ANKLE_L, TOE_L] if rng.random() < 0.5 else [KNEE_R, ANKLE_R, TOE_R]
            moves.append(_Shuffle(t, shift, first, [j for j in LEGS if j not in first]))
        elif kind == "hands":
            length = float(rng.uniform(1.0, 1.8))
            shift = np.array([rng.uniform(-3, 3), rng.uniform(-3, 3), 0.0])
            moves.append(_Replace(t, length, float(rng.uniform(4, 8)), shift))
        elif kind == "sit":
            rise, hold, fall = (float(x) for x in (rng.uniform(0.8, 1.2), rng.uniform(1.0, 3.0), rng.uniform(0.8, 1.2)))
            length = rise + hold + fall
            moves.append(_Held(_SIT, t, rise, hold, fall))
        else:
            rise, hold, fall = (float(x) for x in (rng.uniform(0.5, 0.9), rng.uniform(0.5, 2.0), rng.uniform(0.5, 0.9)))
            length = rise + hold + fall
            ang = np.array([rng.uniform(-0.2, 0.2), rng.choice([-1, 1]) * rng.uniform(0.4, 0.8)])
            turns.append(_HeldTurn(ang, t, rise, hold, fall))
        t += length + float(rng.uniform(0.3, 2.0))
    return moves, turns


# ---------------------------------------------------------------------------------------------
# Body parts: 3-D sample points (s along the segment ja->jb, ou along it in cm, ov/ow across it).

_Shape = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _tube(
    s: Sequence[float],
    rv: Sequence[float],
    rw: Sequence[float],
    caps: tuple[bool, bool] = (True, True),
    flat: bool = False,
    n: int = 14,
) -> _Shape:
    """Rings at `s` with half-widths rv (along v) and rw (along w), rounded ends; `flat`: a flat bottom (-v)."""
    th = np.linspace(0, 2 * np.pi, n, endpoint=False)
    c, sn = np.cos(th), np.sin(th)
    sv = np.where(sn > 0, sn, -(np.abs(sn) ** 0.3)) if flat else sn
    cols: list[list[np.ndarray]] = [[], [], [], []]

    def ring(sk: float, along: float, a: float, b: float) -> None:
        for col, val in zip(cols, (np.full(n, sk), np.full(n, along), a * sv, b * c), strict=True):
            col.append(val)

    for sk, a, b in zip(s, rv, rw, strict=True):
        ring(sk, 0.0, a, b)
    for end, sign in ((0, -1.0), (-1, 1.0)):
        if caps[0 if end == 0 else 1]:
            a, b = rv[end], rw[end]
            r = 0.5 * (a + b)
            for lat in (0.55, 1.05, 1.45):
                ring(s[end], sign * r * math.sin(lat), a * math.cos(lat), b * math.cos(lat))
    s_, ou, ov, ow = (np.concatenate(col) for col in cols)
    return s_, ou, ov, ow


def _ellipsoid(sc: float, ru: float, rv: float, rw: float, n: int = 14) -> _Shape:
    th = np.linspace(0, 2 * np.pi, n, endpoint=False)
    lats = np.linspace(-np.pi / 2, np.pi / 2, 9)[1:-1]
    ou = np.concatenate([np.full(n, ru * math.sin(lat)) for lat in lats] + [np.array([-ru, ru])])
    ov = np.concatenate([rv * math.cos(lat) * np.cos(th) for lat in lats] + [np.zeros(2)])
    ow = np.concatenate([rw * math.cos(lat) * np.sin(th) for lat in lats] + [np.zeros(2)])
    return np.full(len(ou), sc), ou, ov, ow


@dataclass(frozen=True)
class _Part:
    name: str
    ja: int
    jb: int
    shape: _Shape
    colour: np.ndarray
    pattern: str  # plain, skin, heather, stripes, checks, denim, plastic, shoe
    group: str  # "manikin", "legs" (may be behind the manikin) or "body"
    ref_vec: np.ndarray | None = None  # v axis from this world vector...
    ref_joints: tuple[int, int] | None = None  # ...or from this joint pair; neither: the camera's view direction
    bias: float = 0.0  # cm nearer than its centroid, for the drawing order
    ellipsoid: tuple[float, float, float, float] | None = None  # (s centre, ru, rv, rw): ray-cast
    on: str | None = None  # painted onto this part's sprite (same joints: it moves with it)


@dataclass(frozen=True)
class _Look:
    skin: np.ndarray
    hair: np.ndarray
    bald: bool
    shirt: np.ndarray
    shirt2: np.ndarray
    pattern: str
    period_cm: float
    short_sleeves: bool
    print_colour: np.ndarray | None
    trousers: np.ndarray
    shoes: np.ndarray
    manikin: np.ndarray
    jacket: np.ndarray | None


def _draw_look(rng: np.random.Generator) -> _Look:
    shirt = _pick(rng, _SHIRTS, 12)
    return _Look(
        skin=_pick(rng, _SKIN, 8),
        hair=_pick(rng, _HAIR, 6),
        bald=bool(rng.random() < 0.1),
        shirt=shirt,
        shirt2=np.clip(shirt * rng.uniform(0.4, 0.8) + rng.uniform(0, 120) * rng.random(3), 0, 255).astype(np.float32),
        pattern=str(rng.choice(["plain", "heather", "stripes", "checks"], p=[0.4, 0.25, 0.2, 0.15])),
        period_cm=float(rng.uniform(2.0, 6.0)),
        short_sleeves=bool(rng.random() < 0.5),
        print_colour=_pick(rng, _SHIRTS, 20) if rng.random() < 0.35 else None,
        trousers=_pick(rng, _TROUSERS, 8),
        shoes=_pick(rng, _SHOES, 8),
        manikin=_pick(rng, _MANIKIN, 6),
        jacket=_pick(rng, _JACKETS, 8) if rng.random() < 0.4 else None,
    )


def _parts(pose: _Pose, look: _Look, b: float) -> list[_Part]:
    shirt = look.pattern
    sleeve = (look.shirt, shirt) if not look.short_sleeves else (look.skin, "skin")
    parts = [
        _Part(
            "pelvis",
            PELVIS,
            NECK,
            _ellipsoid(0.06, 12 * b, 16.5 * b, 11.5 * b),
            look.trousers,
            "denim",
            "body",
            ref_joints=(HIP_L, HIP_R),
        ),
        _Part(
            "torso",
            PELVIS,
            NECK,
            _tube(
                [0.1, 0.35, 0.6, 0.82, 0.95, 1.02],
                [15 * b, 14 * b, 15.5 * b, 17.5 * b, 17.5 * b, 12 * b],
                [10.5 * b, 9.5 * b, 10.5 * b, 11 * b, 10 * b, 6.5 * b],
                caps=(False, False),
            ),
            look.shirt,
            shirt,
            "body",
            ref_joints=(SHOULDER_L, SHOULDER_R),
            bias=1.0,
        ),
        _Part(
            "neck",
            NECK,
            HEAD_BASE,
            _tube([-0.2, 1.05], [5.5 * b] * 2, [5.5 * b] * 2),
            look.skin,
            "skin",
            "body",
            bias=1.5,
        ),
        _Part(
            "head",
            HEAD_BASE,
            HEAD_TOP,
            _ellipsoid(0.5, 11.5 * b, 10 * b, 8.3 * b),
            look.skin,
            "skin",
            "body",
            ref_joints=(HEAD_BASE, NOSE),
            bias=4.0,
            ellipsoid=(0.5, 11.5 * b, 10 * b, 8.3 * b),
        ),
        _Part(
            "manikin",
            M_HIP,
            M_SHOULDER,
            _tube(
                [0.0, 0.15, 0.4, 0.6, 0.8, 0.93, 1.0],
                [8.5, 9.5, 10.5, 10.5, 10.3, 9.5, 7.5],
                [15, 16, 17.5, 18.5, 19, 18.5, 15],
                caps=(False, True),
                flat=True,
            ),
            look.jacket if look.jacket is not None else look.manikin,
            "plastic",
            "manikin",
            ref_vec=_UP,
        ),
        _Part(
            "manikin_neck",
            M_SHOULDER,
            M_HEAD_BASE,
            _tube([0.0, 1.0], [6.0, 5.5], [6.0, 5.5]),
            look.manikin,
            "plastic",
            "manikin",
        ),
        _Part(
            "manikin_head",
            M_HEAD_BASE,
            M_HEAD_TOP,
            _ellipsoid(0.5, 11.0, 9.5, 8.5),
            look.manikin,
            "plastic",
            "manikin",
            ref_joints=(M_HEAD_BASE, M_FACE),
            ellipsoid=(0.5, 11.0, 9.5, 8.5),
        ),
    ]
    for side, sfx in enumerate(("_l", "_r")):
        hip, knee, ankle, toe = (HIP_L, KNEE_L, ANKLE_L, TOE_L) if side == 0 else (HIP_R, KNEE_R, ANKLE_R, TOE_R)
        sh, el, wr, tip = (SHOULDER_L, ELBOW_L, WRIST_L, TIP_L) if side == 0 else (SHOULDER_R, ELBOW_R, WRIST_R, TIP_R)
        arm_colour, arm_pattern = (look.shirt, shirt) if not look.short_sleeves else (look.skin, "skin")
        parts += [
            _Part(
                "thigh" + sfx,
                hip,
                knee,
                _tube([0.0, 1.0], [8.5 * b, 6.5 * b], [8.5 * b, 6.5 * b]),
                look.trousers,
                "denim",
                "legs",
            ),
            _Part(
                "shin" + sfx,
                knee,
                ankle,
                _tube([0.0, 1.0], [6.2 * b, 4.2 * b], [6.2 * b, 4.2 * b]),
                look.trousers,
                "denim",
                "legs",
            ),
            _Part(
                "foot" + sfx,
                ankle,
                toe,
                _tube([-0.25, 0.4, 1.0], [4.5 * b, 4 * b, 2.5 * b], [4 * b, 4.5 * b, 3.5 * b], caps=(False, True)),
                look.shoes,
                "shoe",
                "legs",
                ref_vec=_UP,
            ),
            _Part(
                "upper_arm" + sfx,
                sh,
                el,
                _tube([0.0, 1.0], [5.8 * b, 4.6 * b], [5.8 * b, 4.6 * b]),
                arm_colour,
                arm_pattern,
                "body",
                bias=0.5,
            ),
            _Part(
                "forearm" + sfx,
                el,
                wr,
                _tube([0.0, 1.0], [4.4 * b, 3.1 * b], [4.4 * b, 3.1 * b]),
                sleeve[0],
                sleeve[1],
                "body",
                bias=1.5,
            ),
            _Part(
                "hand" + sfx,
                wr,
                tip,
                _tube(
                    [0.0, 0.3, 0.55, 0.75, 1.0],
                    [2.0 * b, 2.2 * b, 1.8 * b, 1.3 * b, 0.9 * b],
                    [3.6 * b, 4.6 * b, 4.4 * b, 4.0 * b, 3.0 * b],
                    caps=(False, True),
                ),
                look.skin,
                "skin",
                "body",
                ref_vec=pose.palms[side],
                bias=3.0,
            ),
        ]
        if look.short_sleeves:
            parts.append(
                _Part(
                    "sleeve" + sfx,
                    sh,
                    el,
                    _tube([-0.05, 0.45], [6.6 * b, 6.0 * b], [6.6 * b, 6.0 * b], caps=(True, False)),
                    look.shirt,
                    shirt,
                    "body",
                    on="upper_arm" + sfx,
                )
            )
    return parts


def _axes(a: np.ndarray, b: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Orthonormal (u along a->b, v toward `ref`, w = u x v), all (n, 3)."""
    u = _unit(b - a)
    ref = np.broadcast_to(ref, u.shape)
    v = ref - np.sum(ref * u, axis=-1, keepdims=True) * u
    weak = np.linalg.norm(v, axis=-1) < 1e-3
    if weak.any():  # ref along the segment: any perpendicular will do
        alt = np.cross(u[weak], [0.0, 0.0, 1.0])
        alt[np.linalg.norm(alt, axis=-1) < 1e-3] = (1.0, 0.0, 0.0)
        v[weak] = alt
    v = _unit(v)
    return u, v, np.cross(u, v)


def _ref(part: _Part, j: np.ndarray, view: np.ndarray) -> np.ndarray:
    if part.ref_joints is not None:
        out: np.ndarray = j[:, part.ref_joints[1]] - j[:, part.ref_joints[0]]
        return out
    return part.ref_vec if part.ref_vec is not None else view


def _points(part: _Part, j: np.ndarray, view: np.ndarray) -> np.ndarray:
    """The part's sample points for joints `j` (n, N_JOINTS, 3): (n, N, 3)."""
    a, b = j[:, part.ja], j[:, part.jb]
    u, v, w = _axes(a, b, _ref(part, j, view))
    s, ou, ov, ow = part.shape
    out: np.ndarray = (
        a[:, None]
        + s[None, :, None] * (b - a)[:, None]
        + ou[None, :, None] * u[:, None]
        + ov[None, :, None] * v[:, None]
        + ow[None, :, None] * w[:, None]
    )
    return out


# ---------------------------------------------------------------------------------------------
# The camera.


@dataclass(frozen=True)
class _Camera:
    pos: np.ndarray
    r: np.ndarray  # image x
    dn: np.ndarray  # image y (down)
    d: np.ndarray  # forward
    f: float
    cx: float  # principal point on the canvas (the output frame plus the shake margin)
    cy: float

    def project(self, p: np.ndarray) -> np.ndarray:
        rel = p - self.pos
        z = np.maximum(rel @ self.d, 1.0)
        return np.stack([self.f * (rel @ self.r) / z + self.cx, self.f * (rel @ self.dn) / z + self.cy], axis=-1)

    def depth(self, p: np.ndarray) -> np.ndarray:
        out: np.ndarray = (p - self.pos) @ self.d
        return out

    def rays(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        out: np.ndarray = (
            self.d + ((x - self.cx) / self.f)[..., None] * self.r + ((y - self.cy) / self.f)[..., None] * self.dn
        )
        return out


def _orient(d: np.ndarray, up: np.ndarray, roll: float) -> tuple[np.ndarray, np.ndarray]:
    r = _unit(np.cross(d, up))
    dn = np.cross(d, r)
    c, s = math.cos(roll), math.sin(roll)
    return c * r + s * dn, -s * r + c * dn


def _yaw(v: np.ndarray, deg: float) -> np.ndarray:
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1], v[2]])


@dataclass(frozen=True)
class _Shot:
    cam: _Camera
    h_dir: np.ndarray  # horizontal direction the camera looks (where the wall is)
    busy: bool


def _place_camera(
    view: str,
    rng: np.random.Generator,
    trainee: np.ndarray,
    manikin: np.ndarray,
    key: dict[str, np.ndarray],
    w: int,
    h: int,
    margin: int,
) -> _Shot:
    """Where the phone is, where it points and how the picture is framed (a shifted principal point: a crop)."""
    f = (max(w, h) / 2) / math.tan(math.radians(rng.uniform(62, 76)) / 2)  # phone main cameras
    roll = math.radians(rng.uniform(-2.5, 2.5))

    def norm(pos: np.ndarray, r: np.ndarray, dn: np.ndarray, d: np.ndarray, p: np.ndarray) -> np.ndarray:
        rel = p - pos
        z = np.maximum(rel @ d, 1.0)
        return np.stack([(rel @ r) / z, (rel @ dn) / z], axis=-1)

    if view == "top_down":
        # Over the chest, a little to the manikin's far side: straight above, the trainee's back hides the hands.
        pos = np.array([rng.uniform(-20, 20), rng.uniform(0, 30), CHEST[2] + rng.uniform(120, 160)])
        d = _unit(np.array([rng.uniform(-0.05, 0.05), rng.uniform(-0.05, 0.05), -1.0]))
        a = rng.uniform(0, 2 * np.pi)  # the trainee's body axis may point anywhere in the picture
        up = np.array([math.cos(a), math.sin(a), 0.0])
        r, dn = _orient(d, up, 0.0)
        c = norm(pos, r, dn, d, CHEST)
        cx = w / 2 - f * c[0] + rng.uniform(-0.05, 0.05) * w
        cy = h / 2 - f * c[1] + rng.uniform(-0.05, 0.05) * h
        return _Shot(_Camera(pos, r, dn, d, f, cx + margin, cy + margin), -up, False)
    if view == "floor_up":
        pos = np.array([rng.uniform(75, 100), rng.uniform(25, 50), rng.uniform(2, 4)])
        target = np.array([0.0, -15.0, rng.uniform(40, 55)])
        d = _unit(target - pos)
        r, dn = _orient(d, _UP, math.radians(rng.uniform(-4, 4)))
        p = norm(pos, r, dn, d, trainee)
        cx = w / 2 - f * 0.5 * (p[:, 0].min() + p[:, 0].max()) + rng.uniform(-0.05, 0.05) * w
        cy = h * rng.uniform(0.04, 0.12) - f * p[:, 1].min()  # the head near the top
        return _Shot(_Camera(pos, r, dn, d, f, cx + margin, cy + margin), _unit(d * (1, 1, 0)), False)

    sub = view
    if view == "far":
        sub = str(rng.choice(["side", "front"]))
    elif view == "portrait_headless":
        sub = str(rng.choice(["front", "oblique", "side"], p=[0.45, 0.35, 0.2]))
    sign = 1.0 if rng.random() < 0.5 else -1.0
    h_dir = {
        "side": np.array([sign, 0.0, 0.0]),
        "front": np.array([0.0, -1.0, 0.0]),
        "oblique": _unit(np.array([sign, -1.0, 0.0])),
    }[sub]
    h_dir = _yaw(h_dir, rng.uniform(-10, 10))
    height = {"side": (55, 90), "front": (70, 120), "oblique": (70, 120)}[sub]
    z_cam = rng.uniform(*height) if view != "far" else rng.uniform(90, 150)
    if view == "portrait_headless":  # held low and near: seen from high up, the head would hang below the hands
        z_cam = rng.uniform(55, 95)
    target = np.array([0.0, -18.0, 45.0]) + rng.uniform(-4, 4, 3)
    if view == "far":
        want = rng.uniform(0.25, 0.35) * h
    elif view == "portrait_headless":
        want = rng.uniform(0.8, 0.92) * h
    else:
        want = (rng.uniform(0.7, 0.9) if sub == "side" else rng.uniform(0.6, 0.82)) * h
    dist = 250.0
    for _ in range(8):  # size goes as 1/distance: a few rescalings converge
        pos = target - dist * h_dir
        pos[2] = z_cam
        d = _unit(target - pos)
        r, dn = _orient(d, _UP, roll)
        if view == "portrait_headless":  # from just below the head and shoulders to the manikin's bottom
            span = f * (norm(pos, r, dn, d, manikin)[:, 1].max() - norm(pos, r, dn, d, key["top"])[:, 1].max())
        else:
            ys = norm(pos, r, dn, d, trainee)[:, 1]
            span = f * (ys.max() - ys.min())
        # (A span that is not positive: the head is below the manikin in the picture; step back.)
        dist = max(45.0 if view == "portrait_headless" else 60.0, dist * span / want if span > 0 else dist * 1.5)
    pt, pm = norm(pos, r, dn, d, trainee), norm(pos, r, dn, d, manikin)
    ux0, ux1 = min(pt[:, 0].min(), pm[:, 0].min()), max(pt[:, 0].max(), pm[:, 0].max())
    ty0, ty1 = pt[:, 1].min(), pt[:, 1].max()
    if view == "portrait_headless":
        cy = -f * norm(pos, r, dn, d, key["top"])[:, 1].max() - rng.uniform(0.0, 0.04) * h
        cx = w / 2 - f * norm(pos, r, dn, d, key["hands"])[0] + rng.uniform(-0.06, 0.06) * w
    elif view == "far":
        place = rng.uniform(0.25, 0.36) if rng.random() < 0.5 else rng.uniform(0.64, 0.75)
        cx = place * w - f * 0.5 * (ux0 + ux1)
        cy = rng.uniform(0.42, 0.62) * h - f * 0.5 * (ty0 + ty1)
    else:
        cx = w / 2 - f * 0.5 * (ux0 + ux1) + rng.uniform(-0.05, 0.05) * w
        cy = h / 2 - f * 0.5 * (ty0 + ty1) + rng.uniform(-0.04, 0.04) * h
        cy = max(cy, 0.03 * h - f * ty0)  # the head inside the picture
    return _Shot(_Camera(pos, r, dn, d, f, cx + margin, cy + margin), _unit(h_dir), view == "far")


# ---------------------------------------------------------------------------------------------
# The room: floor and wall textures (0.5 cm a texel), ray-cast once, furniture as shaded boxes.

_TEX_CM = 0.5
_CEILING = 260.0


def _noise(rng: np.random.Generator, h: int, w: int, cells_y: int, cells_x: int) -> np.ndarray:
    """Smooth noise of about unit spread, `cells` random values across each side."""
    small = rng.standard_normal((max(2, cells_y), max(2, cells_x))).astype(np.float32)
    out: np.ndarray = cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
    return out


def _floor_texture(rng: np.random.Generator, busy: bool) -> np.ndarray:
    size = 1024
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    kind = str(rng.choice(["planks", "tiles", "carpet", "vinyl"], p=[0.4, 0.25, 0.2, 0.15]))
    fine = _noise(rng, size, size, size // 2, size // 2)
    if kind == "planks":
        base = _pick(rng, _WOOD, 10)
        rows = int(rng.integers(26, 52))
        pw = size / rows
        row = np.floor(yy / pw).astype(int)
        yl = yy - row * pw
        length = size / int(rng.integers(4, 10))
        xs = (xx + rng.uniform(0, size, rows)[row]) % size
        col = np.floor(xs / length).astype(int)
        tone = rng.uniform(0.8, 1.15, (rows, 12))[row, col]
        streak = _noise(rng, size, size, size // 3, 12)  # grain runs along the planks
        grain = np.sin(2 * np.pi * (yl / pw * rng.uniform(2, 5) + 0.7 * streak))
        seam = (yl < 1.3) | (xs - col * length < 1.6)
        shade = tone * (1 + 0.07 * grain + 0.04 * fine + 0.03 * _noise(rng, size, size, size // 8, size // 64))
        tex = base * np.where(seam, 0.55, shade)[..., None]
    elif kind == "tiles":
        base = _pick(
            rng,
            np.array([(220, 218, 210), (180, 178, 172), (200, 190, 170), (120, 122, 126), (235, 235, 235)], np.float32),
            8,
        )
        n = int(rng.integers(9, 26))
        tile = size / n
        grout = (xx % tile < 1.6) | (yy % tile < 1.6)
        tone = rng.uniform(0.95, 1.05, (n + 1, n + 1))[(yy // tile).astype(int), (xx // tile).astype(int)]
        marble = _noise(rng, size, size, 24, 24)
        shade = tone * (1 + 0.025 * fine + 0.035 * marble)
        tex = np.where(grout[..., None], base * rng.uniform(0.6, 0.85), base * shade[..., None])
    elif kind == "carpet":
        base = _pick(
            rng,
            np.array([(110, 100, 90), (70, 80, 100), (140, 60, 60), (90, 110, 80), (150, 140, 120)], np.float32),
            10,
        )
        shade = 1 + 0.11 * fine + 0.05 * _noise(rng, size, size, 128, 128) + 0.05 * _noise(rng, size, size, 10, 10)
        tex = base * shade[..., None]
    else:  # gym vinyl with court lines
        base = _pick(rng, np.array([(190, 150, 100), (80, 110, 150), (150, 80, 70), (120, 130, 120)], np.float32), 10)
        speck = (_noise(rng, size, size, size, size) > 2.2).astype(np.float32)
        tex = base * (1 + 0.03 * fine - 0.2 * speck)[..., None]
        for _ in range(int(rng.integers(1, 4))):
            line = _pick(rng, np.array([(240, 240, 240), (240, 210, 60)], np.float32), 5)
            pos, width = rng.uniform(0, size), rng.uniform(8, 14)
            on = np.abs((yy if rng.random() < 0.5 else xx) - pos) < width / 2
            tex[on] = line
    if busy:  # higher contrast for a cluttered scene
        tex = tex.mean() + (tex - tex.mean()) * 1.4
    out: np.ndarray = np.clip(tex, 0, 255).astype(np.float32)
    return out


def _wall_texture(rng: np.random.Generator, busy: bool) -> np.ndarray:
    wt, ht = 1024, int(280 / _TEX_CM)
    paint = _pick(rng, _PAINT, 6)
    tex = paint * (1 + 0.02 * _noise(rng, ht, wt, 6, 12) + 0.012 * _noise(rng, ht, wt, ht // 2, wt // 2))[..., None]

    def row(z_cm: float) -> int:
        return int((280 - z_cm) / _TEX_CM)

    def rect(a0: float, z0: float, a1: float, z1: float, colour: np.ndarray) -> None:
        cv2.rectangle(tex, (int(a0 / _TEX_CM), row(z1)), (int(a1 / _TEX_CM), row(z0)), colour.tolist(), -1)

    taken: list[tuple[float, float]] = []

    def free(a0: float, width: float) -> float | None:
        for _ in range(20):
            a = float(rng.uniform(a0, 512 - width - 5))
            if all(a + width < s or a > e for s, e in taken):
                taken.append((a, a + width))
                return a
        return None

    if rng.random() < (0.85 if busy else 0.55):  # a door
        a = free(5, 96)
        if a is not None:
            door = _pick(rng, np.vstack([_WOOD, _PAINT]), 8)
            rect(a - 5, 0, a + 95, 210, door * 0.8)
            rect(a, 0, a + 90, 205, door)
            for z0, z1 in ((20, 95), (115, 190)):
                cv2.rectangle(
                    tex,
                    (int((a + 12) / _TEX_CM), row(z1)),
                    (int((a + 78) / _TEX_CM), row(z0)),
                    (door * 0.88).tolist(),
                    2,
                )
            cv2.circle(tex, (int((a + 80) / _TEX_CM), row(100)), 5, (door * 0.4).tolist(), -1)
    if busy:  # shelves of books
        for _ in range(int(rng.integers(1, 3))):
            a = free(5, 100)
            if a is None:
                continue
            z = rng.uniform(80, 110)
            for level in range(int(rng.integers(2, 4))):
                zl = z + 35 * level
                rect(a, zl - 2, a + 100, zl, _pick(rng, _WOOD, 10) * 0.8)
                x = a + 2
                while x < a + 96:
                    bw = rng.uniform(2, 6)
                    rect(x, zl, x + bw, zl + rng.uniform(18, 30), _pick(rng, _THINGS, 25))
                    x += bw + rng.uniform(0, 1.5)
    for _ in range(int(rng.integers(4, 8) if busy else rng.integers(0, 3))):  # pictures and posters
        pw, ph = rng.uniform(25, 90), rng.uniform(20, 70)
        a = free(5, pw)
        if a is None:
            continue
        zp = rng.uniform(100, 190 - ph * 0.3)
        rect(a - 2, zp - 2, a + pw + 2, zp + ph + 2, _pick(rng, np.vstack([_WOOD, _THINGS[[4, 5, 7]]]), 10))
        c0, c1 = _pick(rng, _THINGS, 30), _pick(rng, _PAINT, 20)
        x0, x1, y0, y1 = int(a / _TEX_CM), int((a + pw) / _TEX_CM), row(zp + ph), row(zp)
        ramp = np.linspace(0, 1, max(1, y1 - y0))[:, None, None]
        tex[y0:y1, x0:x1] = c0 * (1 - ramp) + c1 * ramp
        for _ in range(int(rng.integers(1, 5))):
            cx, cy = rng.uniform(x0, x1), rng.uniform(y0, y1)
            rad = rng.uniform(0.1, 0.35) * (x1 - x0)
            cv2.circle(tex[y0:y1, x0:x1], (int(cx - x0), int(cy - y0)), int(rad), _pick(rng, _THINGS, 30).tolist(), -1)
    a = free(5, 8)
    if a is not None:  # a light switch
        rect(a, 100, a + 8, 112, np.array([245.0, 245.0, 240.0]))
    skirting = rng.uniform(6, 12)
    rect(0, 0, 512, skirting, _pick(rng, np.vstack([_WOOD, _PAINT]), 6) * rng.uniform(0.75, 1.0))
    out: np.ndarray = np.clip(tex, 0, 255).astype(np.float32)
    return out


def _boxes(
    rng: np.random.Generator, shot: _Shot, top_down: bool, q: np.ndarray, n: np.ndarray, tw: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Furniture as (8 corners, colour) boxes: against the wall (behind the scene), or for a camera looking
    down, a bag or an AED case on the floor clear of the manikin and trainee."""
    out: list[tuple[np.ndarray, np.ndarray]] = []

    def box(centre: np.ndarray, size: Sequence[float], z0: float, ax: np.ndarray, colour: np.ndarray) -> None:
        ay = np.array([-ax[1], ax[0], 0.0])
        corners = []
        for z in (z0, z0 + size[2]):
            for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                corners.append(centre + sx * size[0] / 2 * ax + sy * size[1] / 2 * ay + (0.0, 0.0, z))
        out.append((np.array(corners), colour))

    if top_down:
        for _ in range(int(rng.integers(0, 3))):
            ang = rng.uniform(-0.2, np.pi + 0.2)  # the far side of the manikin or beyond its ends
            centre = np.array([math.cos(ang), math.sin(ang), 0.0]) * rng.uniform(75, 110)
            kind = rng.random()
            size = (32.0, 25.0, 12.0) if kind < 0.5 else (40.0, 28.0, 25.0)
            colour = np.array([40.0, 150.0, 70.0]) if kind < 0.5 else _pick(rng, _THINGS, 20)
            box(centre, size, 0.0, _yaw(np.array([1.0, 0.0, 0.0]), rng.uniform(0, 180)), colour)
        return out
    count = int(rng.integers(3, 7) if shot.busy else rng.integers(0, 3))
    for _ in range(count):
        along = rng.uniform(-250, 250)
        piece = str(rng.choice(["cabinet", "chair", "table", "crate"]))
        if piece == "cabinet":
            wdt, dep, hgt = rng.uniform(50, 110), rng.uniform(35, 50), rng.uniform(70, 190)
            base = q + along * tw + (dep / 2 + 1) * n
            box(base, (wdt, dep, hgt), 0.0, tw, _pick(rng, np.vstack([_WOOD, _PAINT, _THINGS[[4, 7]]]), 10))
        elif piece == "crate":
            base = q + along * tw + rng.uniform(20, 60) * n
            box(
                base,
                (rng.uniform(30, 50), rng.uniform(25, 40), rng.uniform(20, 40)),
                0.0,
                _yaw(tw, rng.uniform(-20, 20)),
                _pick(rng, _THINGS, 20),
            )
        else:
            table = piece == "table"
            wdt, dep = (rng.uniform(100, 160), rng.uniform(60, 80)) if table else (45.0, 45.0)
            top = 72.0 if table else 44.0
            base = q + along * tw + (dep / 2 + rng.uniform(5, 40)) * n
            colour = _pick(rng, np.vstack([_WOOD, _THINGS[[4, 5, 7, 1, 2]]]), 10)
            box(base, (wdt, dep, 4.0), top, tw, colour)
            for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                leg = base + sx * (wdt / 2 - 3) * tw + sy * (dep / 2 - 3) * n
                box(leg, (3.0, 3.0, top), 0.0, tw, colour * 0.8)
            if not table:
                box(base - (dep / 2 - 2) * n, (wdt, 3.0, 45.0), top + 4, tw, colour)
    return out


def _background(
    rng: np.random.Generator, shot: _Shot, wc: int, hc: int, shadows: np.ndarray, top_down: bool
) -> np.ndarray:
    """The still room on the canvas, float32 RGB. `shadows`: (k, 5) soft floor shadows (x, y, sx, sy, strength)."""
    cam, ss = shot.cam, 2
    floor_tex, wall_tex = _floor_texture(rng, shot.busy), _wall_texture(rng, shot.busy)
    wall_dist = rng.uniform(150, 280)
    n = -_yaw(shot.h_dir, rng.uniform(-20, 20))  # the wall faces the camera, more or less
    q = np.array([0.0, -20.0, 0.0]) - n * wall_dist
    tw = np.array([-n[1], n[0], 0.0])
    ys, xs = np.mgrid[0 : hc * ss, 0 : wc * ss].astype(np.float32)
    dirs = cam.rays((xs + 0.5) / ss - 0.5, (ys + 0.5) / ss - 0.5)
    c = cam.pos
    dz = dirs[..., 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        t_floor = np.where(dz < -1e-6, -c[2] / dz, np.inf)
        t_ceil = np.where(dz > 1e-6, (_CEILING - c[2]) / dz, np.inf)
        denom = dirs @ n
        t_wall = np.where(denom < -1e-6, ((q - c) @ n) / denom, np.inf)
    t = np.minimum(np.minimum(t_floor, t_wall), t_ceil)
    t = np.where(np.isfinite(t), t, 1e4)
    p = c + t[..., None] * dirs
    which = np.where(t == t_floor, 0, np.where(t == t_wall, 1, 2))

    ang, off = rng.uniform(0, np.pi), rng.uniform(0, 1024, 2)
    fu = ((p[..., 0] * math.cos(ang) + p[..., 1] * math.sin(ang)) / _TEX_CM + off[0]) % 1024
    fv = ((-p[..., 0] * math.sin(ang) + p[..., 1] * math.cos(ang)) / _TEX_CM + off[1]) % 1024
    floor = cv2.remap(
        floor_tex, fu.astype(np.float32), fv.astype(np.float32), cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP
    )
    if rng.random() < 0.35:  # a training mat under the manikin and trainee
        mat = _pick(rng, np.array([(60, 90, 150), (70, 70, 75), (40, 120, 90), (150, 50, 50)], np.float32), 8)
        on = (np.abs(p[..., 0] - rng.uniform(-15, 15)) < rng.uniform(90, 120)) & (p[..., 1] > -rng.uniform(105, 125))
        on &= p[..., 1] < rng.uniform(35, 60)
        floor = np.where(on[..., None], mat * (1 + 0.03 * (floor / floor.mean() - 1)), floor)
    shade = 1.05 - 0.28 * np.clip(np.hypot(p[..., 0], p[..., 1] + 20) / 450, 0, 1)
    for x0, y0, sx, sy, a in shadows:
        shade *= 1 - a * np.exp(-0.5 * (((p[..., 0] - x0) / sx) ** 2 + ((p[..., 1] - y0) / sy) ** 2))
    shade *= 1 - 0.2 * np.exp(-np.maximum((p - q) @ n, 0) / 12)  # darker where the floor meets the wall
    floor *= shade[..., None]

    wu = (((p - q) @ tw) / _TEX_CM + 512) % 1024
    wv = np.clip((280 - p[..., 2]) / _TEX_CM, 0, wall_tex.shape[0] - 1)
    wall = cv2.remap(
        wall_tex, wu.astype(np.float32), wv.astype(np.float32), cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP
    )
    along = (p - q) @ tw
    wshade = (0.8 + 0.22 * np.exp(-((along / 280) ** 2))) * (1 - 0.15 * np.exp(-p[..., 2] / 12))
    wall *= wshade[..., None]
    ceiling = np.full_like(wall, 215.0) * (0.9 + 0.1 * np.exp(-((along / 300) ** 2)))[..., None]
    img = np.where((which == 0)[..., None], floor, np.where((which == 1)[..., None], wall, ceiling)).astype(np.float32)

    # Furniture: visible faces of convex boxes, far boxes first.
    boxes = _boxes(rng, shot, top_down, q, n, tw)
    faces = ((0, 1, 2, 3), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7))
    boxes.sort(key=lambda bx: -float(cam.depth(bx[0].mean(axis=0))))
    for corners, colour in boxes:
        if (cam.depth(corners) < 5).any():
            continue
        centre = corners.mean(axis=0)
        pix = (cam.project(corners) + 0.5) * ss - 0.5
        for face in faces:
            fc = corners[list(face)].mean(axis=0)
            normal = _unit(fc - centre)
            if float((c - fc) @ normal) <= 0:
                continue
            lit = 0.6 + 0.4 * max(0.0, float(normal @ _LIGHT))
            pts = np.round(pix[list(face)] * 16).astype(np.int32)
            cv2.fillPoly(img, [pts], (colour * lit).tolist(), lineType=cv2.LINE_AA, shift=4)
    out: np.ndarray = cv2.resize(img, (wc, hc), interpolation=cv2.INTER_AREA)
    return out


# ---------------------------------------------------------------------------------------------
# Sprites: each part drawn once at rest (3x supersampled), premultiplied RGBA.


@dataclass(frozen=True)
class _Sprite:
    rgb: np.ndarray  # (h, w, 3) float32 colour premultiplied by alpha
    trans: np.ndarray  # (h, w, 3) transmittance, 1 - alpha (three channels: numpy broadcasts one slowly)
    x0: int  # canvas position of the sprite's (0, 0) pixel
    y0: int
    rest: np.ndarray  # (N, 2) the sample points' rest projections, canvas pixels
    pinv: np.ndarray  # (3, N): least-squares affine from rest to current projections


_SS = 3


def _ray_ellipsoid(
    cam: _Camera, x: np.ndarray, y: np.ndarray, centre: np.ndarray, axes: Sequence[np.ndarray], radii: Sequence[float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per canvas point: hit?, the hit in the ellipsoid's unit-sphere coordinates (u, v, w), the world normal."""
    dirs = cam.rays(x, y)
    o = cam.pos - centre
    ol = np.array([float(o @ ax) / r for ax, r in zip(axes, radii, strict=True)])
    dl = np.stack([(dirs @ ax) / r for ax, r in zip(axes, radii, strict=True)], axis=-1)
    a = np.sum(dl * dl, axis=-1)
    b = 2 * (dl @ ol)
    disc = b * b - 4 * a * (float(ol @ ol) - 1)
    hit = disc > 0
    t = (-b - np.sqrt(np.maximum(disc, 0))) / (2 * a)
    qv = ol + t[..., None] * dl
    normal = _unit(sum(qv[..., k : k + 1] / radii[k] * axes[k] for k in range(3)))
    return hit, qv, normal


def _pattern(
    part: _Part,
    look: _Look,
    rng: np.random.Generator,
    x: np.ndarray,
    y: np.ndarray,
    axis: np.ndarray,
    px_per_cm: float,
    shape: tuple[int, int],
) -> np.ndarray:
    """Albedo (h, w, 3) at the supersampled canvas points (x, y); `axis`: the part's long axis in the image."""
    h, w = shape
    small = cv2.GaussianBlur(rng.standard_normal((max(2, h // _SS), max(2, w // _SS))).astype(np.float32), (0, 0), 0.6)
    fine = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR) * 1.6
    c = part.colour
    amount = {
        "plain": 0.05,
        "skin": 0.03,
        "heather": 0.12,
        "stripes": 0.04,
        "checks": 0.04,
        "denim": 0.09,
        "plastic": 0.015,
        "shoe": 0.05,
    }[part.pattern]
    albedo = c * (1 + amount * fine)[..., None]
    if part.pattern in ("stripes", "checks"):
        along = (x * axis[0] + y * axis[1]) / (look.period_cm * px_per_cm)
        m = 0.5 + 0.5 * np.tanh(3 * np.sin(2 * np.pi * along))
        if part.pattern == "checks":
            across = (-x * axis[1] + y * axis[0]) / (look.period_cm * px_per_cm)
            m = 0.5 * (m + 0.5 + 0.5 * np.tanh(3 * np.sin(2 * np.pi * across)))
        albedo = albedo * (1 - m[..., None]) + look.shirt2 * (1 + amount * fine)[..., None] * m[..., None]
    if part.pattern == "denim":  # twill: fine diagonal lines
        albedo *= (1 + 0.05 * np.sin(2 * np.pi * (x + y) / (0.4 * px_per_cm)))[..., None]
    out: np.ndarray = albedo.astype(np.float32)
    return out


def _make_sprite(
    part: _Part, look: _Look, rng: np.random.Generator, cam: _Camera, rest: np.ndarray, canvas: tuple[int, int]
) -> _Sprite | None:
    j = rest[None]
    pts3 = _points(part, j, cam.d)[0]
    p2 = cam.project(pts3)
    hc, wc = canvas
    pad = 0.3 * max(wc, hc)
    x0 = int(math.floor(max(p2[:, 0].min(), -pad))) - 2
    y0 = int(math.floor(max(p2[:, 1].min(), -pad))) - 2
    x1 = int(math.ceil(min(p2[:, 0].max(), wc + pad))) + 3
    y1 = int(math.ceil(min(p2[:, 1].max(), hc + pad))) + 3
    if x1 <= x0 + 2 or y1 <= y0 + 2 or x1 < 0 or y1 < 0 or x0 > wc or y0 > hc:
        return None
    w, h = x1 - x0, y1 - y0
    gy, gx = np.mgrid[0 : h * _SS, 0 : w * _SS].astype(np.float32)
    x = x0 + (gx + 0.5) / _SS - 0.5  # canvas coordinates of the supersamples
    y = y0 + (gy + 0.5) / _SS - 0.5

    def to_ss(p: np.ndarray) -> np.ndarray:
        out: np.ndarray = (p - (x0, y0) + 0.5) * _SS - 0.5
        return out

    a, b = rest[part.ja], rest[part.jb]
    u, v, wv = (ax[0] for ax in _axes(a[None], b[None], np.asarray(_ref(part, j, cam.d)).reshape(-1, 3)[:1]))
    pa, pb = cam.project(a), cam.project(b)
    axis = _unit(pb - pa) if np.linalg.norm(pb - pa) > 1e-3 else np.array([0.0, 1.0])
    centre3 = pts3.mean(axis=0)
    px_per_cm = cam.f / max(float(cam.depth(centre3)), 1.0) * _SS
    albedo = _pattern(part, look, rng, x * _SS, y * _SS, axis, px_per_cm, (h * _SS, w * _SS))

    if part.ellipsoid is not None:
        sc, ru, rv, rw = part.ellipsoid
        hit, qv, normal = _ray_ellipsoid(cam, x, y, a + sc * (b - a), (u, v, wv), (ru, rv, rw))
        mask = hit.astype(np.float32)
        qu, qf, ql = qv[..., 0], qv[..., 1], qv[..., 2]
        if part.name == "head":
            if not look.bald:
                hair = qu > -0.55 + 0.5 * (qf + 1)  # the hairline: low at the back, high on the forehead
                albedo[hair] = look.hair * (1 + 0.15 * (albedo[hair] / part.colour - 1) * 3)
            front = qf > 0.3
            eyes = front & (((qu - 0.1) / 0.075) ** 2 + ((np.abs(ql) - 0.37) / 0.14) ** 2 < 1)
            brows = (qf > 0.55) & (np.abs(qu - 0.27) < 0.035) & (np.abs(ql) > 0.17) & (np.abs(ql) < 0.55)
            mouth = front & (np.abs(qu + 0.45) < 0.04) & (np.abs(ql) < 0.24)
            nose = front & (qu > -0.3) & (qu < 0.05) & (np.abs(ql) < 0.1)
            ears = (np.abs(ql) > 0.85) & (np.abs(qu + 0.05) < 0.22) & (np.abs(qf) < 0.3)
            albedo[nose | ears] *= 0.86
            albedo[mouth] = look.skin * np.array([0.7, 0.48, 0.48])
            albedo[brows] = look.hair * 0.85
            albedo[eyes] = (45.0, 35.0, 32.0)
        else:  # the manikin's face looks up (v): closed eyes, nose, an open mouth, moulded hair
            front = qf > 0.4
            albedo[(qu > 0.45) & (qf < 0.85)] *= 0.88
            albedo[front & (np.abs(qu - 0.12) < 0.03) & (np.abs(ql) > 0.15) & (np.abs(ql) < 0.48)] *= 0.55
            albedo[front & (qu > -0.3) & (qu < 0.05) & (np.abs(ql) < 0.12)] *= 0.9
            albedo[front & (np.abs(qu + 0.45) < 0.05) & (np.abs(ql) < 0.22)] = (70.0, 45.0, 45.0)
        lit = 0.5 + 0.5 * np.clip(normal @ _LIGHT, 0, 1)
        albedo *= lit[..., None]
    else:
        hull = cv2.convexHull(np.round(to_ss(p2) * 16).astype(np.int32))
        mask_u8 = np.zeros((h * _SS, w * _SS), np.uint8)
        cv2.fillPoly(mask_u8, [hull], 255, lineType=cv2.LINE_8, shift=4)
        mask = (mask_u8 / 255).astype(np.float32)
        _decorate(part, look, cam, albedo, to_ss, rest, px_per_cm)
        # Soft shading: darker toward the outline (rounded), lighter where the world's "up" is.
        dist = cv2.distanceTransform(mask_u8, cv2.DIST_L2, 5)
        shade = 0.62 + 0.38 * np.sqrt(dist / max(float(dist.max()), 1e-6))
        up2 = cam.project(centre3 + 10 * _UP) - cam.project(centre3)
        if np.linalg.norm(up2) > 0.5:
            up2 = up2 / np.linalg.norm(up2)
            c2 = to_ss(cam.project(centre3))
            extent = max(h, w) * _SS / 2
            shade *= 1 - 0.12 * ((gx - c2[0]) * up2[0] + (gy - c2[1]) * up2[1]) / extent
        albedo *= shade[..., None]
    # Premultiplied colour and transmittance (1 - alpha): painting is then one multiply and one add, and
    # outside the sprite a warp's constant border (0, 0, 0, 1) leaves the picture as it is.
    rgb = cv2.resize(albedo * mask[..., None], (w, h), interpolation=cv2.INTER_AREA).astype(np.float32)
    trans = 1 - cv2.resize(mask, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32)
    if trans.min() > 1 - 1e-3:
        return None
    design = np.hstack([p2, np.ones((len(p2), 1))])
    return _Sprite(rgb, np.repeat(trans[..., None], 3, axis=2), x0, y0, p2, np.linalg.pinv(design))


def _decorate(
    part: _Part,
    look: _Look,
    cam: _Camera,
    albedo: np.ndarray,
    to_ss: Callable[[np.ndarray], np.ndarray],
    rest: np.ndarray,
    px_per_cm: float,
) -> None:
    """Details on a hull-filled part, drawn where their surface faces the camera."""
    a, b = rest[part.ja], rest[part.jb]
    u, v, w = (ax[0] for ax in _axes(a[None], b[None], np.asarray(_ref(part, rest[None], cam.d)).reshape(-1, 3)[:1]))

    def at(s: float, ov: float, ow: float) -> np.ndarray:
        out: np.ndarray = a + s * (b - a) + ov * v + ow * w
        return out

    def seen(p: np.ndarray, normal: np.ndarray) -> bool:
        return float((cam.pos - p) @ normal) > 0

    def poly(points: Sequence[np.ndarray], colour: np.ndarray) -> None:
        pts = np.round(to_ss(cam.project(np.array(points))) * 16).astype(np.int32)
        cv2.fillPoly(albedo, [pts], colour.tolist(), lineType=cv2.LINE_AA, shift=4)

    def line(p: np.ndarray, q: np.ndarray, colour: np.ndarray, width_cm: float) -> None:
        pp, qq = (np.round(to_ss(cam.project(x)) * 16).astype(int) for x in (p, q))
        thick = max(1, int(round(width_cm * px_per_cm)))
        cv2.line(albedo, (int(pp[0]), int(pp[1])), (int(qq[0]), int(qq[1])), colour.tolist(), thick, cv2.LINE_AA, 4)

    if part.name == "torso":
        front = w  # u x v with v the trainee's right: the chest
        if seen(at(0.7, 0, 10), front):
            poly([at(1.0, -5, 6), at(1.0, 5, 6), at(0.9, 0, 9)], look.skin * 0.95)  # the collar's opening
            if look.print_colour is not None:
                poly([at(0.62, -6, 10.5), at(0.62, 6, 10.5), at(0.8, 6, 11), at(0.8, -6, 11)], look.print_colour)
    elif part.name.startswith("hand"):
        side = v if seen(at(0.5, 2, 0), v) else -v  # finger gaps on whichever face is seen
        sgn = 1.0 if side is v else -1.0
        for off in (-2.1, 0.0, 2.1):
            line(at(0.62, sgn * 1.8, off), at(0.98, sgn * 1.0, off), part.colour * 0.62, 0.35)
        line(at(0.55, sgn * 2.0, -3.6), at(0.55, sgn * 2.0, 3.6), part.colour * 0.8, 0.3)
    elif part.name == "manikin" and cam.pos[2] > 25:
        top = 21.0

        def on_top(x: float, y: float) -> np.ndarray:
            return np.array([x, y, top - 0.002 * y * y])

        dark = part.colour * 0.6
        if look.jacket is not None:
            line(on_top(-31, 0), on_top(18, 0), np.array([50.0, 50.0, 55.0]), 0.8)  # zip
            poly([on_top(8, -14), on_top(14, -14), on_top(14, -8), on_top(8, -8)], look.manikin * 0.95)
        else:
            for y in (-8.5, 8.5):
                p = on_top(10, y)
                poly([p + (1.2 * math.cos(t), 1.2 * math.sin(t), 0) for t in np.linspace(0, 2 * np.pi, 10)], dark)
            line(on_top(-3, 0), on_top(16, 0), part.colour * 0.85, 0.5)  # sternum
            for y in (-1, 1):
                line(on_top(19, 2.5 * y), on_top(20.5, 15 * y), part.colour * 0.82, 0.6)  # collarbones
            p = on_top(-25, 0)
            poly([p + (1.0 * math.cos(t), 1.0 * math.sin(t), 0) for t in np.linspace(0, 2 * np.pi, 10)], dark)


# ---------------------------------------------------------------------------------------------
# Drawing the frames.


def _affines(part: _Part, sprite: _Sprite, j: np.ndarray, cam: _Camera) -> np.ndarray:
    """(n, 2, 3): per pose, the affine taking the part's rest projections to its current ones."""
    p2 = cam.project(_points(part, j, cam.d))
    out: np.ndarray = np.einsum("kn,fnd->fdk", sprite.pinv, p2)
    return out


def _composite(canvas: np.ndarray, rgb: np.ndarray, trans: np.ndarray, x0: int, y0: int) -> None:
    """Paint premultiplied `rgb` with transmittance `trans` at (x0, y0) of `canvas`, clipped."""
    h, w = rgb.shape[:2]
    cy0, cx0 = max(0, y0), max(0, x0)
    cy1, cx1 = min(canvas.shape[0], y0 + h), min(canvas.shape[1], x0 + w)
    if cy1 <= cy0 or cx1 <= cx0:
        return
    region = canvas[cy0:cy1, cx0:cx1]
    region *= trans[cy0 - y0 : cy1 - y0, cx0 - x0 : cx1 - x0]
    region += rgb[cy0 - y0 : cy1 - y0, cx0 - x0 : cx1 - x0]


@dataclass
class _Layer:
    part: _Part
    sprite: _Sprite
    m: np.ndarray | None  # (n, 2, 3) canvas affine per pose, None: still
    dent: np.ndarray | None = None  # manikin: (n, 2) image shift of the chest under the hands
    dent_mask: np.ndarray | None = None  # (h, w, 3) soft disc in sprite pixels
    dent_box: tuple[int, int, int, int] = (0, 0, 0, 0)  # y0, y1, x0, x1 in sprite pixels
    holed: tuple[np.ndarray, np.ndarray] | None = None  # the sprite with the dent box transparent
    local: np.ndarray | None = None  # (n, 2, 3): sprite pixels -> the box below (warpAffine's matrix)
    boxes: np.ndarray | None = None  # (n, 4): x0, y0, x1, y1 of the warped sprite in the redrawn region
    still: np.ndarray | None = None  # (n,): poses in which the sprite is where it was drawn

    def plan(self, origin: tuple[int, int], size: tuple[int, int]) -> None:
        """Precompute, for every pose, where the warped sprite lands in the region at `origin` of `size`."""
        assert self.m is not None
        sp = self.sprite
        h, w = sp.rgb.shape[:2]
        lin, tr = self.m[:, :, :2], self.m[:, :, 2]
        corners = np.array([[sp.x0, sp.x0 + w, sp.x0, sp.x0 + w], [sp.y0, sp.y0, sp.y0 + h, sp.y0 + h]], float)
        pts = np.einsum("fij,jk->fik", lin, corners) + tr[:, :, None]
        x0 = np.maximum(np.floor(pts[:, 0].min(axis=1)) - 1 - origin[0], 0)
        y0 = np.maximum(np.floor(pts[:, 1].min(axis=1)) - 1 - origin[1], 0)
        x1 = np.minimum(np.ceil(pts[:, 0].max(axis=1)) + 2 - origin[0], size[0])
        y1 = np.minimum(np.ceil(pts[:, 1].max(axis=1)) + 2 - origin[1], size[1])
        self.boxes = np.stack([x0, y0, x1, y1], axis=1).astype(int)
        rest = np.array([[sp.x0, sp.x0 + w, sp.x0, sp.x0 + w], [sp.y0, sp.y0, sp.y0 + h, sp.y0 + h]], float)
        self.still = np.abs(pts - rest[None]).max(axis=(1, 2)) < 0.005  # at rest in that pose: no warp needed
        shift = np.einsum("fij,j->fi", lin, [sp.x0, sp.y0]) + tr - np.stack([x0 + origin[0], y0 + origin[1]], axis=1)
        self.local = np.concatenate([lin, shift[:, :, None]], axis=2)

    def draw(self, canvas: np.ndarray, k: int, origin: tuple[int, int]) -> None:
        sp = self.sprite
        if self.dent is not None:
            self._draw_dented(canvas, k, origin)
        elif self.local is None or self.boxes is None or (self.still is not None and self.still[k]):
            _composite(canvas, sp.rgb, sp.trans, sp.x0 - origin[0], sp.y0 - origin[1])
        else:
            x0, y0, x1, y1 = self.boxes[k]
            if x1 <= x0 or y1 <= y0:
                return
            size = (int(x1 - x0), int(y1 - y0))
            rgb = cv2.warpAffine(
                sp.rgb,
                self.local[k],
                size,
                flags=cv2.INTER_LINEAR,
                borderMode=cv2.BORDER_CONSTANT,
                borderValue=(0, 0, 0),
            )
            trans = cv2.warpAffine(
                sp.trans,
                self.local[k],
                size,
                flags=cv2.INTER_LINEAR,
                borderMode=cv2.BORDER_CONSTANT,
                borderValue=(1, 1, 1),
            )
            region = canvas[y0:y1, x0:x1]
            region *= trans
            region += rgb

    def _draw_dented(self, canvas: np.ndarray, k: int, origin: tuple[int, int]) -> None:
        """The sprite with the chest under the hands pushed in: a soft disc of it shifted by the push. The
        sprite is painted with that box left out (`holed`), then the box."""
        sp = self.sprite
        assert self.dent is not None and self.dent_mask is not None and self.holed is not None
        y0, y1, x0, x1 = self.dent_box
        shift = np.array([[1, 0, self.dent[k][0]], [0, 1, self.dent[k][1]]], np.float64)
        out = []
        for img in (sp.rgb, sp.trans):
            patch = img[y0:y1, x0:x1]
            moved = cv2.warpAffine(
                patch, shift, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
            )
            out.append(patch + self.dent_mask * (moved - patch))
        _composite(canvas, *self.holed, sp.x0 - origin[0], sp.y0 - origin[1])
        _composite(canvas, out[0], out[1], sp.x0 + x0 - origin[0], sp.y0 + y0 - origin[1])


def _stack(below: _Sprite, above: _Sprite) -> _Sprite:
    """One sprite of `above` painted over `below`, warped as `below`."""
    x0, y0 = min(below.x0, above.x0), min(below.y0, above.y0)
    x1 = max(below.x0 + below.rgb.shape[1], above.x0 + above.rgb.shape[1])
    y1 = max(below.y0 + below.rgb.shape[0], above.y0 + above.rgb.shape[0])
    rgb = np.zeros((y1 - y0, x1 - x0, 3), np.float32)
    trans = np.ones((y1 - y0, x1 - x0, 3), np.float32)
    for sp in (below, above):
        _composite(rgb, sp.rgb, sp.trans, sp.x0 - x0, sp.y0 - y0)
        _composite(trans, np.zeros_like(sp.trans), sp.trans, sp.x0 - x0, sp.y0 - y0)  # transmittances multiply
    return _Sprite(rgb, trans, x0, y0, below.rest, below.pinv)


def _merge_still(layers: Sequence[_Layer]) -> list[_Layer]:
    """Runs of still layers composited into one sprite each (painting over is associative)."""
    out: list[_Layer] = []
    run: list[_Layer] = []

    def flush() -> None:
        if len(run) == 1:
            out.append(run[0])
        elif run:
            merged = run[0].sprite
            for ly in run[1:]:
                merged = _stack(merged, ly.sprite)
            out.append(_Layer(run[0].part, merged, None))
        run.clear()

    for ly in layers:
        if ly.m is None and ly.dent is None:
            run.append(ly)
        else:
            flush()
            out.append(ly)
    flush()
    return out


def _shake(rng: np.random.Generator, times: np.ndarray, amount: float, scale: float) -> np.ndarray:
    """(n, 3): dx, dy in output pixels and a roll in radians; smooth drift at 0.3-2 Hz plus per-frame jitter."""
    out = np.zeros((len(times), 3))
    if amount <= 0:
        return out
    for k, rms in enumerate((1.6 * scale, 1.6 * scale, math.radians(0.25))):
        out[:, k] = rms * amount * _wiggle(rng, 0.3, 2.0)(times)
    out[:, :2] += rng.normal(0, 0.5 * scale * amount, (len(times), 2))
    return out


def make_phone_video(spec: PhoneSpec, seed: int) -> PhoneVideo:  # noqa: C901 (one scene, built in order; to split)
    rng = np.random.default_rng(seed)
    w, h = spec.width, spec.height
    scale = min(w, h) / 240
    duty = float(rng.uniform(0.4, 0.6))
    b = float(rng.uniform(0.92, 1.07))
    look = _draw_look(rng)
    kind = {"talking": "upright", "waving": "wave"}.get(spec.negative or "", "compress")
    pose = _pose(kind, rng, b)
    tl = _timeline(spec, rng, duty)
    times = _frame_times(spec, rng)
    shake = _shake(rng, times, spec.shake, scale)
    diag = math.hypot(w, h) / 2
    margin = int(math.ceil(np.abs(shake[:, :2]).max() + np.abs(shake[:, 2]).max() * diag + 2)) if spec.shake > 0 else 0
    wc, hc = w + 2 * margin, h + 2 * margin

    # Framing from the rest pose (limb widths do not depend on the direction they are seen from).
    parts = _parts(pose, look, b)
    provisional = np.array([0.0, 1.0, 0.0])
    trainee = np.concatenate([_points(p, pose.rest[None], provisional)[0] for p in parts if p.group != "manikin"])
    manikin = np.concatenate([_points(p, pose.rest[None], provisional)[0] for p in parts if p.group == "manikin"])
    top = [_points(p, pose.rest[None], provisional)[0] for p in parts if p.name in ("head", "neck")]
    top.append(pose.rest[[SHOULDER_L, SHOULDER_R]] + (0.0, 0.0, 6.0 * b))
    key = {"top": np.concatenate(top), "hands": 0.5 * (pose.rest[WRIST_L] + pose.rest[TIP_L])}
    shot = _place_camera(spec.view, rng, trainee, manikin, key, w, h, margin)
    cam = shot.cam
    if kind == "wave":  # the waving palm faces the camera; the wave is side to side in the picture
        palms = pose.palms.copy()
        palms[1] = -_unit(cam.d * (1, 1, 0)) if abs(cam.d[2]) < 0.95 else _unit(cam.dn * (1, 1, 0))
        pose = replace(pose, palms=palms)
        parts = _parts(pose, look, b)
    wave_dir = _unit(cam.r * (1, 1, 0))

    moves: list[TimeFn] = [_sway(rng, rng.uniform(0.25, 0.5), hips=0.0)]
    turns: list[TimeFn] = []
    if spec.rate_per_min is not None:
        moves.append(_push(tl))
        moves += [_lean_event(rng, s, n) for s, n in tl.vents]
    elif spec.negative == "talking":
        more, turns = _talking(rng)
        moves += more
    elif spec.negative == "waving":
        moves.append(_waving(rng, spec.seconds, wave_dir))
    elif spec.negative == "resting":
        moves += [_resting(rng), _sway(rng, rng.uniform(0.5, 1.0), hands=0.15)]
    elif spec.negative == "repositioning":
        more, turns = _repositioning(rng, spec.seconds)
        moves += more
    rig = _Rig(pose, moves, turns)

    # Poses at each frame, or at three instants across the exposure for motion blur.
    offsets = np.array([-0.375, 0.0, 0.375]) / spec.fps if spec.blur else np.zeros(1)
    sub = len(offsets)
    sample_t = np.maximum((times[:, None] + offsets[None, :]).ravel(), 0.0)
    joints = rig.joints(sample_t)

    rest = pose.rest
    shadows = np.array(
        [
            (-5.0, 0.0, 33.0, 21.0, 0.38),
            (40.0, 0.0, 11.0, 11.0, 0.3),
            (rest[PELVIS][0], rest[PELVIS][1], 22.0, 18.0, 0.25),
            (0.0, -15.0, 25.0, 22.0, 0.15),
            *[
                (0.5 * (rest[k][0] + rest[a][0]), 0.5 * (rest[k][1] + rest[a][1]), 7.0, 22.0, 0.38)
                for k, a in ((KNEE_L, ANKLE_L), (KNEE_R, ANKLE_R))
            ],
        ]
    )
    background = _background(rng, shot, wc, hc, shadows, spec.view == "top_down")

    # Sprites, the drawing order, and which layers never move (drawn into the background once).
    layers: list[_Layer] = []
    depth_of: dict[str, float] = {}
    for part in parts:
        sprite = _make_sprite(part, look, rng, cam, rest, (hc, wc))
        if sprite is None:
            continue
        below = next((ly for ly in layers if ly.part.name == part.on), None)
        if below is not None:  # a sleeve: one sprite with its arm, one warp fewer a frame
            below.sprite = _stack(below.sprite, sprite)
            continue
        m = _affines(part, sprite, joints, cam)
        ident = np.array([[1.0, 0, 0], [0, 1.0, 0]])
        hs, ws = sprite.rgb.shape[:2]
        corners = np.array([[sprite.x0, sprite.x0 + ws], [sprite.y0, sprite.y0 + hs]])
        moved = np.abs(np.einsum("fij,jk->fik", m[:, :, :2] - ident[:, :2], corners) + (m[:, :, 2:] - 0)).max()
        layer = _Layer(part, sprite, m if moved > 0.01 else None)
        if part.name == "manikin" and spec.rate_per_min is not None:
            push = np.interp(sample_t, tl.t, tl.depth)
            c2 = cam.project(CHEST)
            layer.dent = cam.project(CHEST[None] - push[:, None] * _UP) - c2
            radius = cam.f * 15.0 / max(float(cam.depth(CHEST)), 1.0)
            cx, cy = c2[0] - sprite.x0, c2[1] - sprite.y0
            y0, y1 = max(0, int(cy - 1.6 * radius)), min(hs, int(cy + 1.6 * radius) + 1)
            x0, x1 = max(0, int(cx - 1.6 * radius)), min(ws, int(cx + 1.6 * radius) + 1)
            if y1 > y0 and x1 > x0:
                yy, xx = np.mgrid[y0:y1, x0:x1].astype(np.float32)
                r2 = ((xx - cx) ** 2 + (yy - cy) ** 2) / radius**2
                layer.dent_mask = np.repeat(np.exp(-1.5 * r2)[..., None], 3, axis=2).astype(np.float32)
                layer.dent_box = (y0, y1, x0, x1)
                rgb, trans = sprite.rgb.copy(), sprite.trans.copy()
                rgb[y0:y1, x0:x1], trans[y0:y1, x0:x1] = 0.0, 1.0
                layer.holed = (rgb, trans)
            else:
                layer.dent = None
        layers.append(layer)
        depth_of[part.name] = float(cam.depth(_points(part, rest[None], cam.d)[0].mean(axis=0))) - part.bias
    m_depth = depth_of.get("manikin", 0.0)
    behind = [ly for ly in layers if ly.part.group == "legs" and depth_of[ly.part.name] > m_depth]
    mani = [ly for ly in layers if ly.part.group == "manikin"]
    rest_layers = [ly for ly in layers if ly not in behind and ly not in mani]

    def order(group: list[_Layer]) -> list[_Layer]:
        return sorted(group, key=lambda ly: -depth_of[ly.part.name])

    ordered = order(behind) + order(mani) + order(rest_layers)
    base = background.copy()
    first = 0
    while first < len(ordered) and ordered[first].m is None and ordered[first].dent is None:
        sp = ordered[first].sprite
        _composite(base, sp.rgb, sp.trans, sp.x0, sp.y0)
        first += 1
    dynamic = _merge_still(ordered[first:])

    # The region anything moves in: only that is redrawn.
    rx0, ry0, rx1, ry1 = wc, hc, 0, 0
    for ly in dynamic:
        sp = ly.sprite
        hs, ws = sp.rgb.shape[:2]
        box = np.array([[sp.x0, sp.x0 + ws, sp.x0, sp.x0 + ws], [sp.y0, sp.y0, sp.y0 + hs, sp.y0 + hs]], float)
        pts = box[None] if ly.m is None else np.einsum("fij,jk->fik", ly.m[:, :, :2], box) + ly.m[:, :, 2:]
        rx0, ry0 = min(rx0, int(pts[:, 0].min()) - 2), min(ry0, int(pts[:, 1].min()) - 2)
        rx1, ry1 = max(rx1, int(pts[:, 0].max()) + 3), max(ry1, int(pts[:, 1].max()) + 3)
    rx0, ry0, rx1, ry1 = max(rx0, 0), max(ry0, 0), min(rx1, wc), min(ry1, hc)
    origin = (rx0, ry0)
    for ly in dynamic:
        if ly.m is not None and ly.dent is None:
            ly.plan(origin, (rx1 - rx0, ry1 - ry0))

    # The phone: vignetting, white balance, exposure, flicker, noise.
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    r2 = ((xx - w / 2) ** 2 + (yy - h / 2) ** 2) / (w * w / 4 + h * h / 4)
    gain_img = (
        (1 - rng.uniform(0.12, 0.3) * r2)[..., None] * rng.uniform(0.88, 1.08) * (1 + rng.normal(0, 0.035, 3))
    ).astype(np.float32)
    mains = 100.0 if rng.random() < 0.5 else 120.0
    gain_t = 1 + spec.flicker * np.sin(2 * np.pi * mains * times + rng.uniform(0, 2 * np.pi))
    sigma = spec.noise * (1.5 if spec.view == "far" else 1.0) + (1.0 if spec.view == "far" else 0.0)
    # Noise: a random contiguous stretch of a few frames' worth (cheaper than fresh noise every frame).
    bank = rng.standard_normal(h * w * 3 * 6, dtype=np.float32) * np.float32(sigma)
    starts = rng.integers(0, h * w * 3 * 5, len(times))
    defocus = float(rng.uniform(0.5, 0.9)) * scale

    frames: list[np.ndarray] = []
    canvas = base.copy()  # only the region anything moves in is redrawn
    shown = base * gain_img if not margin else None  # on a tripod the vignette stays put: apply it once
    for i in range(len(times)):
        if dynamic and rx1 > rx0 and ry1 > ry0:
            region = canvas[ry0:ry1, rx0:rx1]
            acc: np.ndarray | None = None
            for k in range(sub):
                region[:] = base[ry0:ry1, rx0:rx1]
                for ly in dynamic:
                    ly.draw(region, i * sub + k, origin)
                acc = region.copy() if acc is None else acc + region
            if sub > 1 and acc is not None:
                region[:] = acc / sub
            if shown is not None:
                np.multiply(region, gain_img[ry0:ry1, rx0:rx1], out=shown[ry0:ry1, rx0:rx1])
        if shown is None:
            dx, dy, roll = shake[i]
            c, s = math.cos(roll), math.sin(roll)
            lin = np.array([[c, -s], [s, c]])
            centre = np.array([w / 2, h / 2])
            tr = centre + (dx, dy) - lin @ (centre + margin)
            frame = cv2.warpAffine(
                canvas, np.hstack([lin, tr[:, None]]), (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT
            )
            frame = cv2.multiply(frame, gain_img)
        else:
            frame = shown
        if spec.blur:
            frame = cv2.GaussianBlur(frame, (0, 0), defocus)
        noise = bank[starts[i] : starts[i] + h * w * 3].reshape(h, w, 3)
        # Flicker, noise, then rounded and saturated to 0..255.
        rgb = np.asarray(cv2.addWeighted(frame, float(gain_t[i]), noise, 1.0, 0.0, dtype=cv2.CV_8U))
        if spec.jpeg_quality is not None:
            ok, data = cv2.imencode(".jpg", rgb, [cv2.IMWRITE_JPEG_QUALITY, spec.jpeg_quality])
            decoded = cv2.imdecode(data, cv2.IMREAD_UNCHANGED) if ok else None  # channel order kept: RGB in and out
            rgb = rgb if decoded is None else np.asarray(decoded)
        frames.append(rgb)

    # Ground truth. The hands' centre: between the two palms.
    def hands_centre(j: np.ndarray) -> np.ndarray:
        out: np.ndarray = 0.5 * (
            j[..., WRIST_L, :]
            + 0.4 * (j[..., TIP_L, :] - j[..., WRIST_L, :])
            + j[..., WRIST_R, :]
            + 0.4 * (j[..., TIP_R, :] - j[..., WRIST_R, :])
        )
        return out

    at_frames = joints[sub // 2 :: sub]
    h0 = hands_centre(rest)
    h0_px = cam.project(h0)
    push = np.interp(times, tl.t, tl.depth)
    pushed = cam.project(h0[None] - push[:, None] * _UP)
    step = float(tl.t[1] - tl.t[0])
    idx = np.minimum(np.round(times / step).astype(int), len(tl.t) - 1)
    truth = GroundTruth(
        compression_times=tl.bottoms,
        pauses=tl.pauses,
        ccf=tl.ccf,
        depth_px=np.linalg.norm(pushed - h0_px, axis=-1),
        rates=tl.rates[idx],
        hands_xy=(float(h0_px[0]) - margin, float(h0_px[1]) - margin),
    )
    hands_px = cam.project(hands_centre(at_frames)) - margin
    return PhoneVideo(tl.spec, tuple(frames), times, truth, spec, hands_px)


# ---------------------------------------------------------------------------------------------


def phone_set(seed: int, videos: int, seconds: float) -> list[tuple[str, PhoneSpec, int]]:
    """A varied benchmark set: (name, spec, per-video seed). `videos` positives cycling through VIEWS, then
    one negative of each kind per 8 positives (at least one each), in varied views."""
    rng = np.random.default_rng(seed)
    out: list[tuple[str, PhoneSpec, int]] = []

    def camera(view: str) -> tuple[dict[str, object], list[str]]:
        fps = int(rng.choice([15, 24, 30]))
        vfr = bool(rng.random() < 0.25)
        shake = float(rng.uniform(0.5, 1.5)) if rng.random() < 0.4 else 0.0
        flicker = float(rng.uniform(0.03, 0.08)) if rng.random() < 0.2 else 0.0
        blur = bool(rng.random() < 0.3)
        if view == "portrait_headless":
            width, height = ((180, 320), (240, 426))[int(rng.integers(2))]
        else:
            width, height = ((320, 240), (320, 240), (426, 240))[int(rng.integers(3))]
        kw: dict[str, object] = dict(
            fps=float(fps),
            vfr=vfr,
            shake=shake,
            flicker=flicker,
            blur=blur,
            noise=float(rng.uniform(1.5, 3.0)),
            jpeg_quality=int(rng.choice([70, 80, 90])),
            width=width,
            height=height,
        )
        tags = [f"{fps}fps"] + ["vfr"] * vfr + ["shake"] * (shake > 0) + ["flicker"] * (flicker > 0) + ["blur"] * blur
        return kw, tags

    for i in range(videos):
        view = VIEWS[i % len(VIEWS)]
        rate = float(round(rng.uniform(80, 150)))
        change = None
        if rng.random() < 0.3:
            new = float(np.clip(rate + rng.choice([-1, 1]) * round(rng.uniform(10, 30)), 60, 170))
            change = (float(round(rng.uniform(0.35, 0.65) * seconds, 1)), new)
        cycles = bool(rng.random() < 1 / 3)
        pauses: tuple[tuple[float, float], ...] = ()
        if not cycles and rng.random() < 0.2:
            pauses = ((float(round(rng.uniform(0.3, 0.6) * seconds, 1)), float(round(rng.uniform(2.0, 4.0), 1))),)
        kw, tags = camera(view)
        spec = PhoneSpec(
            view=view,
            seconds=seconds,
            rate_per_min=rate,
            rate_change=change,
            cycles_30_2=cycles,
            pauses=pauses,
            depth_cm=float(rng.uniform(4.5, 6.5)),
            **kw,
        )  # type: ignore[arg-type]
        rate_tag = f"{rate:.0f}/min" if change is None else f"{rate:.0f}->{change[1]:.0f}/min"
        name = " ".join([view, rate_tag, *tags, *(["pause"] if pauses else []), *(["30:2"] if cycles else [])])
        out.append((name, spec, int(rng.integers(2**31))))
    per_kind = max(1, videos // 8)
    offset = int(rng.integers(len(VIEWS)))
    for k, kind in enumerate(NEGATIVE_KINDS):
        for n in range(per_kind):  # every kind in different views, and the kinds in different views from each other
            view = VIEWS[(offset + k + len(NEGATIVE_KINDS) * n) % len(VIEWS)]
            kw, tags = camera(view)
            spec = PhoneSpec(view=view, seconds=seconds, rate_per_min=None, negative=kind, **kw)  # type: ignore[arg-type]
            out.append((" ".join([kind, view, *tags]), spec, int(rng.integers(2**31))))
    return out
