"""Keyframe selection: one keyframe per interval, the sharpest, skipping near-duplicates.

Pure logic over per-frame statistics (computed elsewhere, see
`app.frames.metrics`), so it runs on timestamps and small arrays in tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, TypeVar

import numpy as np

P = TypeVar("P")  # whatever the caller needs to analyse the frame later (pixels, a path…)

MIN_INTERVAL_S = 2.0
MAX_INTERVAL_S = 5.0
DEFAULT_INTERVAL_S = 3.0
TILE_GRID = 8  # the change test splits the thumb into TILE_GRID x TILE_GRID tiles (8 x 8 px of a 64 px thumb)


@dataclass(frozen=True)
class FrameStats:
    sharpness: float  # e.g. variance of the Laplacian of a small grey copy
    thumb: np.ndarray  # small grey copy (same shape for every frame), uint8 or float


class Decision(StrEnum):
    KEYFRAME = "keyframe"  # send to the model
    UNCHANGED = "unchanged"  # barely differs from the last analysed keyframe: recorded, not analysed


@dataclass(frozen=True)
class Selection(Generic[P]):
    decision: Decision
    t: float  # timestamp of the chosen frame, seconds
    window_start: float
    sharpness: float
    change: float  # largest tile's mean absolute difference to the reference keyframe, 0..255
    payload: P


@dataclass(frozen=True)
class SamplerConfig:
    interval_s: float = DEFAULT_INTERVAL_S
    # Unchanged while every tile of the thumb (TILE_GRID x TILE_GRID) differs from the reference by less
    # than this mean absolute grey level (0..255); 0: never unchanged. Per tile because hands moved ~5 cm
    # on the chest are a local change: the whole-thumb mean often stayed under the old threshold of 4.
    # On 64 px thumbs of generated CPR scenes the largest tile is <= 2.2 for sensor noise + JPEG, <= 6.3
    # for a 3 % exposure change and >= 22.8 for hands moved ~5 cm (see tests/unit/test_sampler.py).
    change_threshold: float = 12.0
    # At most this many UNCHANGED in a row; the next window is a KEYFRAME whatever the change test says.
    # The test only compares small thumbs: a change it cannot see (a slight shift of the hands, the depth
    # of a push) or a wrong answer to an unchanged scene must not stand on screen for the whole session.
    max_unchanged: int = 2
    # A live session's first usable frame (not one flat colour) is a keyframe at once, so the first
    # answer does not wait a whole interval; windows then start from it.
    first_at_once: bool = False

    def __post_init__(self) -> None:
        if not MIN_INTERVAL_S <= self.interval_s <= MAX_INTERVAL_S:
            raise ValueError(f"interval must be {MIN_INTERVAL_S:g}–{MAX_INTERVAL_S:g} s, got {self.interval_s:g}")
        if self.change_threshold < 0:
            raise ValueError("change_threshold must be >= 0")
        if self.max_unchanged < 0:
            raise ValueError("max_unchanged must be >= 0")


def tile_change(a: np.ndarray, b: np.ndarray, grid: int = TILE_GRID) -> float:
    """The largest mean absolute difference over a grid x grid tiling of two grey thumbs."""
    if a.shape != b.shape:
        return 255.0  # a different frame size is a different scene
    diff = np.abs(a.astype(np.float32) - b.astype(np.float32))
    h, w = diff.shape[:2]
    rows = np.linspace(0, h, min(grid, h) + 1).astype(int)  # tile edges; never an empty tile
    cols = np.linspace(0, w, min(grid, w) + 1).astype(int)
    sums = np.add.reduceat(np.add.reduceat(diff, rows[:-1], axis=0), cols[:-1], axis=1)
    return float((sums / np.outer(np.diff(rows), np.diff(cols))).max())


class KeyframeSampler(Generic[P]):
    """Feed every frame with its timestamp; get a Selection when an interval closes.

    Windows are [start, start + interval). The best frame of a window is judged
    when the first frame of a later window arrives (or on `flush`). With
    `first_at_once`, the first frame with any detail is selected when it arrives
    and the first window starts after it.

    "Unchanged" is judged against the newest keyframe that was answered or may
    still be answered (in flight or waiting). The caller reports each keyframe's
    fate with `settle`: a failed or dropped keyframe stops being the reference, so
    a trainee who holds still after a failure gets an answer at the next interval.
    After `max_unchanged` UNCHANGED windows in a row the next one is a KEYFRAME.
    A window in which anything moved (a frame differs from the window's first by
    the change threshold) is never unchanged: while someone compresses, the
    sharpest frame is the same turning point of every stroke and looks like the
    last keyframe, but the scene is anything but still, and the model must keep
    looking.
    """

    def __init__(self, config: SamplerConfig | None = None) -> None:
        self.config = config or SamplerConfig()
        self._window_start: float | None = None
        self._best: tuple[float, FrameStats, P] | None = None
        self._answered: np.ndarray | None = None
        self._answered_t = float("-inf")
        self._pending: dict[float, np.ndarray] = {}  # keyframe time -> thumb, not yet settled
        self._first_due = self.config.first_at_once
        self._unchanged_run = 0  # UNCHANGED decisions since the last KEYFRAME
        self._window_first: np.ndarray | None = None  # the open window's first thumb
        self._window_moved = False  # a frame of the open window differed from its first

    def offer(self, t: float, stats: FrameStats, payload: P) -> Selection[P] | None:
        if self._first_due:
            if stats.sharpness <= 0:  # a black or flat frame (a camera still starting): not usable
                return None
            self._first_due = False
            self._window_start = t
            self._pending[t] = stats.thumb
            return Selection(Decision.KEYFRAME, t, t, stats.sharpness, 255.0, payload)
        if self._window_start is None:
            self._window_start = t
        selection = None
        if t >= self._window_start + self.config.interval_s:
            selection = self._close_window()
            # Jump over empty windows (a stalled source) so windows stay aligned to the clock.
            elapsed = t - self._window_start
            self._window_start += (elapsed // self.config.interval_s) * self.config.interval_s
        if self._best is None or stats.sharpness > self._best[1].sharpness:
            self._best = (t, stats, payload)
        self._watch_movement(stats.thumb)
        return selection

    def _watch_movement(self, thumb: np.ndarray) -> None:
        """Notes whether this window has moved yet (compared once per frame until it has)."""
        if self._window_first is None:
            self._window_first = thumb
        elif not self._window_moved and self.config.change_threshold > 0:
            self._window_moved = tile_change(thumb, self._window_first) >= self.config.change_threshold

    def flush(self) -> Selection[P] | None:
        """Judge the open window now (end of a video, or the source stopped)."""
        return self._close_window()

    def _close_window(self) -> Selection[P] | None:
        if self._best is None or self._window_start is None:
            return None
        t, stats, payload = self._best
        moved = self._window_moved
        self._best, self._window_first, self._window_moved = None, None, False
        reference = self._reference()
        change = 255.0 if reference is None else tile_change(stats.thumb, reference)
        still = change < self.config.change_threshold and not moved
        if still and self._unchanged_run < self.config.max_unchanged:
            decision = Decision.UNCHANGED
            self._unchanged_run += 1
        else:
            decision = Decision.KEYFRAME
            self._unchanged_run = 0
            self._pending[t] = stats.thumb
        return Selection(decision, t, self._window_start, stats.sharpness, change, payload)

    def settle(self, t: float, answered: bool) -> None:
        """The keyframe selected at `t` was answered, or failed / was dropped unanswered."""
        thumb = self._pending.pop(t, None)
        if answered and thumb is not None and t >= self._answered_t:
            self._answered, self._answered_t = thumb, t

    def _reference(self) -> np.ndarray | None:
        if self._pending:
            return self._pending[max(self._pending)]
        return self._answered
