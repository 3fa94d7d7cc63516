"""Test videos of chest compressions at known rates, for the rhythm estimator (`app.core.rhythm`).

One scene of `scenes.py` (hands on the centre of the chest) is drawn once; every frame then moves
only the hands and the chest under them: a soft elliptical region around the hands is replaced by
the same region shifted down by the compression's depth. The camera's faults come after: a random
translation per frame (shake), a brightness modulation (flicker), sensor noise and JPEG. Framing:
the square scene letterboxed into a 4:3 or 16:9 frame (grey bars), or cropped from a wider one.

Each video comes with its ground truth: the time of every compression's bottom, the pauses, the
true rate at any time and the compression fraction (CCF). 20 s at 30 fps of 320x240 takes ~1 s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from demo_model.scenes import render_scene_info

ASPECTS = {"1:1": 1.0, "4:3": 4 / 3, "16:9": 16 / 9}
FITS = ("letterbox", "crop")
NEGATIVES = ("still", "shake", "flicker", "resting")
_FINE_HZ = 2000.0  # the motion is integrated on this grid, then sampled at the frame times
_BAR_GREY = 96


@dataclass(frozen=True)
class VideoSpec:
    seconds: float = 20.0
    fps: float = 30.0
    rate_per_min: float | None = 110.0  # None: no compressions (a negative video)
    duty: float = 0.5  # share of each period spent going down
    amplitude: float = 0.035  # depth at the bottom, share of the frame height (5 cm seen in ~1.5 m)
    pauses: tuple[tuple[float, float], ...] = ()  # (start_s, length_s); a start waits for the stroke under way
    rate_change: tuple[float, float] | None = None  # (at_s, new rate per minute)
    shake_px: float = 0.0  # standard deviation of the per-frame random translation, pixels
    noise: float = 2.0  # sensor noise, standard deviation in grey levels
    flicker: float = 0.0  # brightness modulation depth (0.05: ±5 %)
    flicker_hz: float = 100.0  # mains lighting; sampled at the frame rate it aliases, as a camera sees it
    jpeg_quality: int | None = 80  # None: no compression artefacts
    aspect: str = "4:3"
    fit: str = "letterbox"
    height: int = 240
    rest_sway: float = 0.0  # resting hands' slow irregular drift, share of the frame height

    def __post_init__(self) -> None:
        if self.aspect not in ASPECTS or self.fit not in FITS:
            raise ValueError(f"aspect must be one of {sorted(ASPECTS)}, fit one of {FITS}")
        if self.seconds <= 0 or self.fps <= 0 or self.height < 64:
            raise ValueError("seconds and fps must be positive, height at least 64")
        if not 0.1 <= self.duty <= 0.9:
            raise ValueError("duty must be 0.1..0.9")

    @property
    def width(self) -> int:
        return round(self.height * ASPECTS[self.aspect])


@dataclass(frozen=True)
class GroundTruth:
    compression_times: tuple[float, ...]  # the bottom of each compression
    pauses: tuple[tuple[float, float], ...]  # (start_s, length_s) as they happened (starts at a stroke's end)
    ccf: float  # time compressing ÷ video length
    depth_px: np.ndarray  # per frame: how far the hands are pushed down, output pixels
    rates: np.ndarray  # per frame: the rate being compressed at, NaN while not compressing
    hands_xy: tuple[float, float]  # the hands' rest position in the output frame, pixels

    @property
    def compressing(self) -> np.ndarray:
        return np.isfinite(self.rates)

    def window_rate(self, times: np.ndarray, t: float, window_s: float) -> float | None:
        """Mean rate over the compressing frames of (t - window_s, t]: what a window estimator should read."""
        inside = (times > t - window_s) & (times <= t) & self.compressing
        return float(self.rates[inside].mean()) if inside.any() else None


@dataclass(frozen=True)
class CompressionVideo:
    spec: VideoSpec
    frames: tuple[np.ndarray, ...]  # RGB uint8, height x width x 3
    times: np.ndarray  # seconds, from 0
    truth: GroundTruth


def negative_spec(kind: str, seconds: float = 20.0, fps: float = 30.0, **framing: object) -> VideoSpec:
    """A video that must show no rate: a still scene, camera shake only, flicker only, or a trainee
    resting with hands on the chest."""
    base = VideoSpec(seconds=seconds, fps=fps, rate_per_min=None, **framing)  # type: ignore[arg-type]
    if kind == "still":
        return base
    if kind == "shake":
        return VideoSpec(**{**base.__dict__, "shake_px": 2.0})
    if kind == "flicker":
        return VideoSpec(**{**base.__dict__, "flicker": 0.08, "flicker_hz": 100.0})
    if kind == "resting":
        return VideoSpec(**{**base.__dict__, "rest_sway": 0.004})
    raise ValueError(f"unknown negative kind {kind!r}; one of {NEGATIVES}")


def _stroke(phase: np.ndarray, duty: float) -> np.ndarray:
    """Depth 0..1 over one period: a half-cosine down in `duty` of it, a half-cosine back up."""
    down = 0.5 * (1 - np.cos(np.pi * phase / duty))
    up = 0.5 * (1 + np.cos(np.pi * (phase - duty) / (1 - duty)))
    return np.where(phase < duty, down, up)


def _motion(spec: VideoSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[tuple[float, float], ...]]:
    """On the fine grid: (time, cycles done, rate or NaN, the pauses as they happened)."""
    t = np.arange(round(spec.seconds * _FINE_HZ) + 1) / _FINE_HZ
    if spec.rate_per_min is None:
        return t, np.zeros_like(t), np.full_like(t, np.nan), ()
    rate = np.full_like(t, spec.rate_per_min)
    if spec.rate_change is not None:
        rate[t >= spec.rate_change[0]] = spec.rate_change[1]
    active = np.ones_like(t, dtype=bool)
    happened: list[tuple[float, float]] = []
    for start, length in sorted(spec.pauses):
        cycles = np.concatenate(([0.0], np.cumsum(active * rate / 60 / _FINE_HZ)[:-1]))
        # The hands stop at the top: the pause begins where the stroke under way ends.
        i = int(np.searchsorted(cycles, np.ceil(cycles[min(len(t) - 1, round(start * _FINE_HZ))] - 1e-9)))
        if i >= len(t):
            continue
        active &= ~((t >= t[i]) & (t < t[i] + length))
        happened.append((float(t[i]), float(min(length, spec.seconds - t[i]))))
    cycles = np.concatenate(([0.0], np.cumsum(active * rate / 60 / _FINE_HZ)[:-1]))
    return t, cycles, np.where(active, rate, np.nan), tuple(happened)


def _frame_base(rng: np.random.Generator, spec: VideoSpec) -> tuple[np.ndarray, tuple[float, float], float]:
    """The still scene framed to the output size (float32), the hands' position there, the torso width in px."""
    w, h = spec.width, spec.height
    size = h if spec.fit == "letterbox" or w < h else w
    img, info = render_scene_info(rng, "correct", size, jpeg=False)
    scene = np.asarray(img, dtype=np.float32)
    hx, hy = info.hands_xy[0] * size, info.hands_xy[1] * size
    if spec.fit == "letterbox":
        out = np.full((h, w, 3), _BAR_GREY, np.float32)
        left = (w - size) // 2
        out[:, left : left + size] = scene
        return out, (hx + left, hy), info.torso_width * size
    top = (size - h) // 2
    return scene[top : top + h].copy(), (hx, hy - top), info.torso_width * size


def _region_mask(shape: tuple[int, int], hands: tuple[float, float], torso_px: float) -> np.ndarray:
    """Soft ellipse over the hands and the chest under them: what a compression moves."""
    mask = np.zeros(shape, np.float32)
    axes = (round(0.42 * torso_px), round(0.3 * torso_px))
    cv2.ellipse(mask, (round(hands[0]), round(hands[1])), axes, 0, 0, 360, 1.0, -1)
    feather = max(3, round(0.06 * torso_px)) | 1
    return cv2.GaussianBlur(mask, (4 * feather + 1, 4 * feather + 1), feather)[..., None]


def _shift(img: np.ndarray, dx: float, dy: float) -> np.ndarray:
    m = np.float32([[1, 0, dx], [0, 1, dy]])
    return cv2.warpAffine(img, m, (img.shape[1], img.shape[0]), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def make_video(spec: VideoSpec, seed: int) -> CompressionVideo:
    rng = np.random.default_rng(seed)
    base, hands, torso_px = _frame_base(rng, spec)
    mask = _region_mask(base.shape[:2], hands, torso_px)
    # Only the mask's bounding box changes with the compression: shift and blend just that.
    rows = np.flatnonzero(mask[..., 0].max(axis=1) > 1e-3)
    cols = np.flatnonzero(mask[..., 0].max(axis=0) > 1e-3)
    y0, y1, x0, x1 = int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1
    patch, patch_mask = base[y0:y1, x0:x1], mask[y0:y1, x0:x1]

    fine_t, cycles, fine_rate, pauses = _motion(spec)
    n = round(spec.seconds * spec.fps)
    times = np.arange(n) / spec.fps
    idx = np.minimum(np.round(times * _FINE_HZ).astype(int), len(fine_t) - 1)
    depth = _stroke(cycles[idx] % 1.0, spec.duty) * spec.amplitude * spec.height
    if spec.rest_sway > 0:  # a smooth random walk, a few knots a second: not periodic
        knots = np.cumsum(rng.normal(0, 1, int(spec.seconds * 3) + 2))
        knots = (knots - knots.mean()) / max(float(np.abs(knots - knots.mean()).max()), 1e-9)
        depth = depth + spec.rest_sway * spec.height * np.interp(times, np.arange(len(knots)) / 3, knots)
    shakes = rng.normal(0, spec.shake_px, (n, 2)) if spec.shake_px > 0 else np.zeros((n, 2))
    gain = 1 + spec.flicker * np.sin(2 * np.pi * spec.flicker_hz * times + rng.uniform(0, 2 * np.pi))

    frames = []
    for i in range(n):
        frame = base.copy()
        if depth[i] != 0:
            moved = _shift(patch, 0.0, float(depth[i]))
            frame[y0:y1, x0:x1] = patch + patch_mask * (moved - patch)
        if shakes[i].any():
            frame = _shift(frame, float(shakes[i, 0]), float(shakes[i, 1]))
        frame *= np.float32(gain[i])
        if spec.noise > 0:
            frame += rng.standard_normal(frame.shape, dtype=np.float32) * np.float32(spec.noise)
        rgb = np.clip(frame, 0, 255).astype(np.uint8)
        if spec.jpeg_quality is not None:
            ok, data = cv2.imencode(".jpg", rgb, [cv2.IMWRITE_JPEG_QUALITY, spec.jpeg_quality])
            rgb = cv2.imdecode(data, cv2.IMREAD_UNCHANGED) if ok else rgb  # channel order kept: RGB in, RGB out
        frames.append(rgb)

    bottoms = np.flatnonzero(np.diff(np.floor(cycles - spec.duty)) > 0) + 1  # cycles crossing k + duty
    compressing = float(np.isfinite(fine_rate[:-1]).mean())
    truth = GroundTruth(
        compression_times=tuple(float(fine_t[i]) for i in bottoms),
        pauses=pauses,
        ccf=compressing,
        depth_px=depth,
        rates=fine_rate[idx],
        hands_xy=hands,
    )
    return CompressionVideo(spec, tuple(frames), times, truth)


def write_y4m(path: Path, frames: Sequence[np.ndarray], fps: int) -> None:
    """RGB `frames` (all one size, even sides) as a raw .y4m at `fps`, which Chromium's fake camera plays
    in a loop. Repeated frames (the same array) are converted once."""
    height, width = frames[0].shape[:2]
    converted: dict[int, bytes] = {}
    with open(path, "wb") as fh:
        fh.write(f"YUV4MPEG2 W{width} H{height} F{fps}:1 Ip A1:1 C420jpeg\n".encode())
        for rgb in frames:
            if id(rgb) not in converted:
                converted[id(rgb)] = cv2.cvtColor(rgb, cv2.COLOR_RGB2YUV_I420).tobytes()  # Y, then U, then V
            fh.write(b"FRAME\n" + converted[id(rgb)])
