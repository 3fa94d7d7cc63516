"""Keyframe selection: one keyframe per interval, the sharpest, skipping near-duplicates.

Pure logic over per-frame statistics (computed elsewhere, see
`app.frames.metrics`), so it runs on timestamps and small arrays in tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Generic, TypeVar

import numpy as np

P = TypeVar("P")  # whatever the caller needs to analyse the frame later (pixels, a path…)

MIN_INTERVAL_S = 2.0
MAX_INTERVAL_S = 5.0
DEFAULT_INTERVAL_S = 3.0


@dataclass(frozen=True)
class FrameStats:
    sharpness: float  # e.g. variance of the Laplacian of a small grey copy
    thumb: np.ndarray  # small grey copy (same shape for every frame), uint8 or float


class Decision(str, Enum):
    KEYFRAME = "keyframe"  # send to the model
    UNCHANGED = "unchanged"  # barely differs from the last analysed keyframe: recorded, not analysed


@dataclass(frozen=True)
class Selection(Generic[P]):
    decision: Decision
    t: float  # timestamp of the chosen frame, seconds
    window_start: float
    sharpness: float
    change: float  # mean absolute difference to the reference keyframe, 0..255
    payload: P


@dataclass(frozen=True)
class SamplerConfig:
    interval_s: float = DEFAULT_INTERVAL_S
    # Mean absolute grey-level difference (0..255) below which a keyframe counts as unchanged.
    change_threshold: float = 4.0
    # A live session's first usable frame (not one flat colour) is a keyframe at once, so the first
    # answer does not wait a whole interval; windows then start from it.
    first_at_once: bool = False

    def __post_init__(self) -> None:
        if not MIN_INTERVAL_S <= self.interval_s <= MAX_INTERVAL_S:
            raise ValueError(f"interval must be {MIN_INTERVAL_S:g}–{MAX_INTERVAL_S:g} s, got {self.interval_s:g}")
        if self.change_threshold < 0:
            raise ValueError("change_threshold must be >= 0")


def mean_abs_change(a: np.ndarray, b: np.ndarray) -> float:
    if a.shape != b.shape:
        return 255.0  # a different frame size is a different scene
    return float(np.mean(np.abs(a.astype(np.float32) - b.astype(np.float32))))


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
    """

    def __init__(self, config: SamplerConfig | None = None) -> None:
        self.config = config or SamplerConfig()
        self._window_start: float | None = None
        self._best: tuple[float, FrameStats, P] | None = None
        self._answered: np.ndarray | None = None
        self._answered_t = float("-inf")
        self._pending: dict[float, np.ndarray] = {}  # keyframe time -> thumb, not yet settled
        self._first_due = self.config.first_at_once

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
        return selection

    def flush(self) -> Selection[P] | None:
        """Judge the open window now (end of a video, or the source stopped)."""
        return self._close_window()

    def _close_window(self) -> Selection[P] | None:
        if self._best is None or self._window_start is None:
            return None
        t, stats, payload = self._best
        self._best = None
        reference = self._reference()
        change = 255.0 if reference is None else mean_abs_change(stats.thumb, reference)
        if change < self.config.change_threshold:
            decision = Decision.UNCHANGED
        else:
            decision = Decision.KEYFRAME
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
