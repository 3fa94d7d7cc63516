"""A cheap per-frame motion feature for the compression rhythm (`app.core.rhythm`).

Each frame becomes a 96x72 grey copy, scaled to a fixed mean brightness (so a light that dims or
brightens the whole picture changes nothing). Against the previous copy, a single least-squares
optical-flow step (Lucas–Kanade over the pixels that changed) is fitted in every region of the
picture (`REGIONS`: 2x2 tiles at every tile's step, 4x4 at every second, the whole picture): the
region's vertical step (+ is down, in pixels of the small copy) and its growth (a scale change about
its centre, as a trainee seen from above comes nearer and goes further with each compression), and
the horizontal step of its surroundings, which tells a hand waving sideways from a push. The
estimator follows whichever region compresses, wherever it is and whatever its size: a trainee far
away in a busy room, hands alone with the head out of the picture, a head and shoulders seen from
above. A 5 cm compression seen in a 1.5 m tall picture is about 2.4 small-copy pixels, a fraction
of a pixel per frame, where one step is accurate. A hand-held camera's own sub-pixel movement is
estimated on the outer ring of tiles and taken out first, so the hands' movement survives a shaking
camera. Alongside: the share of the picture's 8x6 tiles that still moved and the change of mean
brightness, which flag a global change (a jolt too large to take out, a light that lit the picture
unevenly) that the estimator must not read as compressions; and `displacement`, the whole picture's vertical step.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

SMALL = (96, 72)  # width, height: every aspect is squashed to it; the rhythm needs no geometry
TILE = 12  # 8x6 tiles of 12x12
MOVED_LEVEL = 6.0  # mean |change| of a tile, in grey levels, above which it moved (sensor noise is ~1)
GLOBAL_SHARE = 0.5  # more than half the tiles moved: the camera, not a pair of hands
GLOBAL_BRIGHTNESS = 6.0  # grey levels of mean change in one frame: a light, not a movement, when it
# was a step (the picture's brightness changed by over LIGHT_STEP, as |log| of the ratio: a light switched
# on or off) or lit the picture unevenly (the typical tile's brightness, relative to the picture's, changed
# by over UNEVEN_LIGHT: a lamp over part of the room). Mains flicker (a few % at 100 or 120 Hz, aliased by
# the frame rate) brightens and dims the whole picture alike, which the scaling to LEVEL takes out:
# flagging it blanked 2 frames of 3 at 15 fps and left the compressions aliased (seen: 60/min for 128).
LIGHT_STEP = 0.2
UNEVEN_LIGHT = 0.02
LEVEL = 128.0  # the mean every copy is scaled to
MIN_TEXTURE = 50.0  # sum of squared vertical gradients over the moving pixels: the wild fits had under 10
MAX_STEP = 4.0  # small-copy pixels per frame: a compression moves well under 1.5
MAX_SHAKE = 1.5  # small-copy pixels per frame the first-order shake correction is trusted for


@dataclass(frozen=True)
class MotionFeature:
    displacement: float  # vertical, small-copy pixels since the previous frame; + = down
    moved_share: float  # share of tiles that moved, 0..1
    brightness_change: float  # mean grey level minus the previous frame's, before normalising
    # Per region of `REGIONS` (`push_channels` each): its vertical step and its growth (a scale
    # change, in small-copy pixels at the region's edge; + = nearer), then `sideways`: for each vertical
    # step, the horizontal step of its region's surroundings (growth has no sideways to compare).
    pushes: tuple[float, ...] = ()
    sideways: tuple[float, ...] = ()
    light_step: float = 0.0  # |log| of the mean brightness's ratio to the previous frame's
    # The typical tile's change of brightness relative to the picture's (median |log ratio| of the scaled
    # copies' tile means): ~0 when the whole picture brightened or dimmed alike.
    uneven_light: float = 0.0

    @property
    def is_global(self) -> bool:
        a_light = self.light_step > LIGHT_STEP or self.uneven_light > UNEVEN_LIGHT
        return self.moved_share > GLOBAL_SHARE or (abs(self.brightness_change) > GLOBAL_BRIGHTNESS and a_light)


def _tile_means(a: np.ndarray) -> np.ndarray:
    """The mean of each 12x12 tile of a small copy (6x8)."""
    return np.asarray(a.reshape(SMALL[1] // TILE, TILE, SMALL[0] // TILE, TILE).mean(axis=(1, 3)))


def _small_grey(grey: np.ndarray) -> np.ndarray:
    # Exact halvings first: OpenCV's area resize is fast for 2x and slow for odd factors from 1080p.
    while grey.shape[0] >= 4 * SMALL[1] and grey.shape[1] >= 4 * SMALL[0]:
        grey = cv2.resize(grey, (grey.shape[1] // 2, grey.shape[0] // 2), interpolation=cv2.INTER_AREA)
    return cv2.resize(grey, SMALL, interpolation=cv2.INTER_AREA).astype(np.float32)


# The outer ring of tiles: the camera's own movement is judged there, where a trainee framed in the
# middle is least (a chest filling the middle would otherwise be taken for the camera moving).
def _outer_ring() -> np.ndarray:
    ring = np.ones((SMALL[1] // TILE, SMALL[0] // TILE), dtype=bool)
    ring[1:-1, 1:-1] = False
    return ring.ravel()


_RING = _outer_ring()


# Regions the rhythm may follow, in tiles (x0, y0, x1, y1): 2x2 tiles at every tile's step (a small or
# far trainee, hands alone with the head out of the picture), 4x4 at every second step, and the whole
# picture. The estimator judges each and follows the one whose push is periodic.
def _regions() -> np.ndarray:
    cols, rows = SMALL[0] // TILE, SMALL[1] // TILE
    out = [(x, y, x + 2, y + 2) for y in range(rows - 1) for x in range(cols - 1)]
    out += [(x, y, x + 4, y + 4) for y in range(0, rows - 3, 2) for x in range(0, cols - 3, 2)]
    out.append((0, 0, cols, rows))
    return np.array(out)


REGIONS = _regions()
# Each region's surroundings: one tile more on every side. A hand waving sideways across a region's
# edge looks like a push inside the region (the aperture problem: an edge's movement along itself
# is invisible); the surroundings see the whole hand go sideways.
_AROUND = np.column_stack(
    [np.maximum(REGIONS[:, :2] - 1, 0), np.minimum(REGIONS[:, 2:] + 1, [SMALL[0] // TILE, SMALL[1] // TILE])]
)
_FITTED = np.vstack([REGIONS, _AROUND])
PUSH_CHANNELS = 2 * len(REGIONS)  # each region's vertical step, then each region's growth
GROWTH_SUPPORT = 0.3
REGION_LEVEL = 3.0  # grey levels: a region's fit takes fainter changes than the global flag's tiles
_Y, _X = np.mgrid[0 : SMALL[1], 0 : SMALL[0]].astype(np.float32) + 0.5
# Sums by matrix products, the fastest way numpy has: pixel columns to tile columns, pixel rows to tile
# rows, then tiles to regions.
_COLS_TO_TILES = np.kron(np.eye(SMALL[0] // TILE, dtype=np.float32), np.ones((TILE, 1), np.float32))
_ROWS_TO_TILES = np.kron(np.eye(SMALL[1] // TILE, dtype=np.float32), np.ones((1, TILE), np.float32))
_TILES_TO_REGIONS = np.array(
    [
        [x0 <= tx < x1 and y0 <= ty < y1 for ty in range(SMALL[1] // TILE) for tx in range(SMALL[0] // TILE)]
        for x0, y0, x1, y1 in _FITTED
    ],
    dtype=np.float32,
).T
_CENTRES = (_FITTED[:, 0:2] + _FITTED[:, 2:4]) * (TILE / 2.0)  # x, y of each region's centre, pixels
_HALF = (_FITTED[:, 3] - _FITTED[:, 1]) * (TILE / 2.0)  # half a region's height: growth is measured there


def _region_steps(change: np.ndarray, gx: np.ndarray, gy: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per region: (horizontal step, vertical step, growth at half its height), small-copy pixels, by one
    least-squares optical-flow step over the pixels that changed, with the flow (vx + s·x, vy + s·y) about
    the region's centre: a trainee seen from above comes nearer and goes further with each compression,
    which grows and shrinks the head and shoulders without moving them. Per-tile sums make every region's
    normal equations from a few matrix products; a region without texture that moved says 0."""
    m = (np.abs(change) > REGION_LEVEL).astype(np.float32)
    a = gx * _X + gy * _Y
    products = np.stack([gx * gx, gx * gy, gy * gy, gx * a, gy * a, a * a, gx * change, gy * change, a * change])
    per_tile = _ROWS_TO_TILES @ ((products * m) @ _COLS_TO_TILES)  # 9 x tile rows x tile columns
    sxx, sxy, syy, sxa, sya, saa, sxt, syt, sat = per_tile.reshape(9, -1).astype(np.float64) @ _TILES_TO_REGIONS
    xc, yc, r = _CENTRES[:, 0], _CENTRES[:, 1], _HALF
    # The flow about each region's centre, its growth unknown scaled by r: all three unknowns in pixels.
    sxg = (sxa - xc * sxx - yc * sxy) / r
    syg = (sya - xc * sxy - yc * syy) / r
    sgg = (saa - 2 * xc * sxa - 2 * yc * sya + xc * xc * sxx + 2 * xc * yc * sxy + yc * yc * syy) / (r * r)
    sgt = (sat - xc * sxt - yc * syt) / r
    normal = np.stack([np.stack([sxx, sxy, sxg], -1), np.stack([sxy, syy, syg], -1), np.stack([sxg, syg, sgg], -1)], -2)
    trace = sxx + syy + sgg
    # A small ridge: a region whose moving pixels constrain one direction only says ~0 for the others.
    normal = normal + (0.01 * trace / 3 + 1.0)[:, None, None] * np.eye(3)
    steps = -np.linalg.solve(normal, np.stack([sxt, syt, sgt], -1)[..., None])[..., 0]
    steps[trace <= MIN_TEXTURE] = 0.0
    # Growth is told from a sideways step only by moving pixels on both sides of the centre: a hand
    # crossing a region's edge moves pixels on one side, where the two are the same fit (seen: a hand
    # waving sideways at 2 Hz read as growth). Where the growth's own information (its Schur
    # complement) is under GROWTH_SUPPORT of its total, the region says no growth.
    pair = normal[:, :2, :2]
    cross = normal[:, :2, 2:3]
    own = sgg - (np.swapaxes(cross, 1, 2) @ np.linalg.solve(pair, cross))[:, 0, 0]
    steps[own < GROWTH_SUPPORT * np.maximum(sgg, 1e-9), 2] = 0.0
    steps = np.clip(steps, -MAX_STEP, MAX_STEP)
    return steps[:, 0], steps[:, 1], steps[:, 2]


class MotionMeter:
    """One per session: `measure` each decoded RGB frame (HxWx3 uint8) in order."""

    def __init__(self) -> None:
        self._prev: np.ndarray | None = None  # normalised small copy of the previous frame
        self._prev_mean = 0.0

    def measure(self, rgb: np.ndarray) -> MotionFeature:
        return self.measure_grey(cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY))

    def measure_grey(self, frame: np.ndarray) -> MotionFeature:
        """The same for a grey frame (HxW uint8) of any size: what a live camera's page sends."""
        grey = _small_grey(frame)
        mean = float(grey.mean())
        norm = grey * (LEVEL / max(mean, 1.0))
        prev, prev_mean = self._prev, self._prev_mean
        self._prev, self._prev_mean = norm, mean
        if prev is None:
            still = (0.0,) * PUSH_CHANNELS
            return MotionFeature(0.0, 0.0, 0.0, pushes=still, sideways=still[: len(REGIONS)])
        change = norm - prev
        gy, gx = np.gradient((norm + prev) / 2)
        change = self._without_shake(change, gx, gy)
        moved_share = float((_tile_means(np.abs(change)) > MOVED_LEVEL).mean())
        moving = np.abs(change) > MOVED_LEVEL  # still pixels add only noise to the fit
        den = float((gy[moving] ** 2).sum())
        # A fit over a few faint pixels can say anything (seen: 80 000 px): below MIN_TEXTURE it says
        # nothing, and no real step is larger than MAX_STEP.
        raw = -float((change[moving] * gy[moving]).sum()) / den if den > MIN_TEXTURE else 0.0
        displacement = float(np.clip(raw, -MAX_STEP, MAX_STEP))
        vx, vy, grow = _region_steps(change, gx, gy)
        n = len(REGIONS)
        tiles_now, tiles_before = np.maximum(_tile_means(norm), 1.0), np.maximum(_tile_means(prev), 1.0)
        return MotionFeature(
            displacement,
            moved_share,
            mean - prev_mean,
            pushes=tuple(np.concatenate((vy[:n], grow[:n])).tolist()),
            sideways=tuple(vx[n:].tolist()),  # the surroundings': see _AROUND
            light_step=abs(float(np.log(max(mean, 1.0) / max(prev_mean, 1.0)))),
            uneven_light=float(np.median(np.abs(np.log(tiles_now / tiles_before)))),
        )

    @staticmethod
    def _without_shake(change: np.ndarray, gx: np.ndarray, gy: np.ndarray) -> np.ndarray:
        """The change with the camera's own sub-pixel translation taken out: each tile's optical-flow
        step (Lucas-Kanade, 2x2), and their median, which the background dominates when the hands
        and chest leave most of the outer ring of tiles to. First order: valid for the fraction of a pixel a
        hand-held camera moves between frames; a larger jump stays and is flagged global."""
        h, w = SMALL[1], SMALL[0]

        def per_tile(a: np.ndarray) -> np.ndarray:
            return np.asarray(a.reshape(h // TILE, TILE, w // TILE, TILE).sum(axis=(1, 3)).ravel())

        xx, yy, xy = per_tile(gx * gx), per_tile(gy * gy), per_tile(gx * gy)
        bx, by = per_tile(change * gx), per_tile(change * gy)
        det = xx * yy - xy * xy
        textured = (det > 1e-3 * max(float(det.max()), 1e-9)) & _RING
        if textured.sum() < 6:
            return change
        vx = -(yy * bx - xy * by)[textured] / det[textured]
        vy = -(xx * by - xy * bx)[textured] / det[textured]
        sx, sy = float(np.median(vx)), float(np.median(vy))
        if abs(sx) > MAX_SHAKE or abs(sy) > MAX_SHAKE:
            return change
        return change + sx * gx + sy * gy
