"""Chest-compression rhythm from a per-frame motion signal: rate, count, pauses, compression fraction.

Pure logic (numpy only). Fed one signed movement per frame (e.g. `app.frames.motion`'s vertical
displacement since the previous frame; + = down), at whatever irregular times the frames came.

Method, and why: the movements are summed into a position, resampled onto a regular 50 Hz grid
(frames drop and cameras run at 10–30 fps), and every 0.25 s the last 6 s are judged:

- **rate**: the normalised autocorrelation of the velocity, the classic periodicity (pitch)
  estimator. Its peak lag in 0.35–1.1 s (55–170 per minute) gives the period, refined between
  grid samples by a parabola; the peak's height (1 = perfectly periodic) is the periodicity, and
  below `min_periodicity` there is no rate. The velocity, not the position, is judged because
  white noise in the movement stays white there (no correlation at any lag) while its running sum
  would be a random walk with most of its energy near 1 Hz, right in the compression band. A step
  (a light switched on) is one spike, correlated with nothing. Published camera methods (frame
  differences or optical flow, then the dominant frequency) reach about ±2.7 per minute.
- **count**: peaks of the band-passed position (the bottom of each compression), at least 0.6
  periods apart, counted only while the window is periodic and only where the movement swings about
  as far as the window's compressions (a wiggle in a pause does not). Pauses and the compression fraction
  follow from the counted compressions: each covers one period around its peak; uncovered time of
  `pause_s` or more is a pause, shorter hiccups belong to the run around them. Session time runs
  from the first frame: time before the first compression lowers the CCF but is not a pause.

What it cannot measure: depth and recoil (one camera sees a movement in pixels, not centimetres
of chest; published camera studies agreed with sensor manikins 39 % and 34 % of the time), hand
position, or anything whose motion it is not given. Periodic movement that is not compressions
(a rocking body, a periodic camera wobble the motion feature does not flag as global) reads as a
rate. A rate shows about 1.5 s after compressions start (3 s into a session: the window fills)
and goes `pause_s` after they stop; the newest ~0.6 s of compressions are not counted yet.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from app.core.rhythm_figures import MIN_FRAME_RATE, Pause, Rhythm


@dataclass(frozen=True)
class RhythmConfig:
    window_s: float = 6.0  # sliding window the current rate is measured over
    grid_hz: float = 50.0
    hop_s: float = 0.25  # how often the window is judged
    min_rate_per_min: float = 55.0  # search range: a little beyond the 60–160 it must handle
    max_rate_per_min: float = 170.0
    min_periodicity: float = 0.6  # white noise reaches ~0.4 over a 6 s window
    min_swing: float = 0.3  # peak-to-peak position in the motion value's units; below: a still scene
    pause_s: float = 2.0
    local_swing: float = 0.4  # of the window's swing: what a counted compression swings around its peak
    min_frame_rate: float = MIN_FRAME_RATE  # frames a second below which no window is judged (aliasing)

    def __post_init__(self) -> None:
        if not 0 < self.min_rate_per_min < self.max_rate_per_min:
            raise ValueError("need 0 < min_rate_per_min < max_rate_per_min")
        if self.window_s < 3 * 60 / self.min_rate_per_min:
            raise ValueError("the window must hold at least three of the slowest periods")
        if self.grid_hz < 4 * self.max_rate_per_min / 60 or self.hop_s <= 0 or self.pause_s <= 0:
            raise ValueError("grid_hz, hop_s or pause_s out of range")
        if self.min_frame_rate <= 2 * self.max_rate_per_min / 60:
            raise ValueError("min_frame_rate must be above twice the fastest rate searched (in Hz), or it aliases")


def _moving_average(x: np.ndarray, n: int) -> np.ndarray:
    """Centred moving average, 'valid' part only (len(x) - n + 1 values)."""
    c = np.cumsum(np.concatenate(([0.0], x)))
    return np.asarray((c[n:] - c[:-n]) / n)


def _periodicity(v: np.ndarray, min_lag: int, max_lag: int) -> tuple[float, float]:
    """(best lag in grid samples, refined; its normalised autocorrelation), or (0, 0)."""
    v = v - v.mean()
    energy = float(np.dot(v, v))
    n = len(v)
    if energy <= 0 or n <= max_lag + 1:
        return 0.0, 0.0
    spectrum = np.fft.rfft(v, 2 * n)
    ac = np.fft.irfft(spectrum * np.conj(spectrum))[: max_lag + 2]
    ac = ac / energy * n / (n - np.arange(len(ac)))  # unbiased: long lags overlap fewer samples
    lags = np.arange(min_lag, max_lag + 1)
    inner = ac[lags]
    is_peak = (inner >= ac[lags - 1]) & (inner > ac[lags + 1])
    if not is_peak.any():
        return 0.0, 0.0
    best = float(inner[is_peak].max())
    if best <= 0:
        return 0.0, 0.0
    # The first peak nearly as high as the best: at 160/min the lag of two periods is in range too.
    k = int(lags[is_peak & (inner >= 0.85 * best)][0])
    a, b, c = ac[k - 1], ac[k], ac[k + 1]
    denom = a - 2 * b + c
    shift = 0.5 * (a - c) / denom if denom < 0 else 0.0
    return k + float(shift), float(b)


def _peaks(x: np.ndarray, min_distance: int, height: float) -> list[int]:
    """Local maxima above `height`, the highest kept where two are closer than `min_distance`."""
    inner = x[1:-1]
    candidates = np.flatnonzero((inner >= x[:-2]) & (inner > x[2:]) & (inner > height)) + 1
    kept: list[int] = []
    for i in sorted(candidates, key=lambda j: -x[j]):
        if all(abs(int(i) - k) >= min_distance for k in kept):
            kept.append(int(i))
    return sorted(kept)


class RhythmEstimator:
    """One per session. `update` per frame (cheap; the window is judged once per hop), `snapshot` any time."""

    def __init__(self, config: RhythmConfig | None = None) -> None:
        self._cfg = config or RhythmConfig()
        fs = self._cfg.grid_hz
        self._dt = 1.0 / fs
        self._n_window = round(self._cfg.window_s * fs)
        self._hp = round(60 / self._cfg.min_rate_per_min * fs) | 1  # high-pass: minus ~1 slowest period
        self._lp = max(3, round(0.1 * fs)) | 1  # low-pass 0.1 s: jitter of interpolated frames
        self._min_lag = int(np.floor(60 / self._cfg.max_rate_per_min * fs))
        self._max_lag = int(np.ceil(60 / self._cfg.min_rate_per_min * fs))
        self._hop = max(1, round(self._cfg.hop_s * fs))
        self._buf = np.zeros(2 * (self._n_window + self._hp + self._lp))  # grid positions, newest at _len - 1
        self._len = 0
        self._grid_t0 = 0.0  # time of the first grid sample ever
        self._grid_count = 0  # grid samples ever made
        self._since_judged = 0
        self._t_first: float | None = None
        self._t_last = 0.0
        self._pos = 0.0  # summed movement at _t_last
        self._rate: float | None = None
        self._periodicity = 0.0
        self._frame_times: deque[float] = deque()  # of the frames within the window, for the frame rate
        # Session: the window's rate at each counted compression, and the runs and pauses they make.
        self._rates: list[float] = []
        self._last_peak_t: float | None = None
        self._last_period = 0.0
        self._run_start = 0.0
        self._closed_compressing_s = 0.0
        self._closed_pauses: tuple[Pause, ...] = ()

    def update(self, t_s: float, movement: float, global_motion: bool = False) -> None:
        """A frame at `t_s` moved by `movement` since the previous one. A frame whose change was
        global (the feature says the whole picture moved or changed brightness) adds no movement:
        shake and flicker must not make a rhythm."""
        step = 0.0 if global_motion or not np.isfinite(movement) else float(movement)
        if self._t_first is None:
            # Still before the first frame: lets the centred filters judge the session's first second.
            pad = self._hp // 2 + self._lp // 2
            self._t_first = self._t_last = t_s
            self._frame_times.append(t_s)
            self._grid_t0 = t_s - pad * self._dt
            self._push(np.zeros(pad + 1))
            return
        if t_s <= self._t_last:  # a repeated or late timestamp: keep the movement, make no time
            self._pos += step
            return
        self._frame_times.append(t_s)
        while self._frame_times[0] <= t_s - self._cfg.window_s:
            self._frame_times.popleft()
        new_pos = self._pos + step
        first_t = self._grid_t0 + self._grid_count * self._dt  # the next grid sample's time
        n = int(np.floor((t_s - first_t) / self._dt)) + 1 if t_s >= first_t else 0
        if n > 0:
            times = first_t + np.arange(n) * self._dt
            self._push(self._pos + (new_pos - self._pos) * (times - self._t_last) / (t_s - self._t_last))
        self._t_last, self._pos = t_s, new_pos

    def _push(self, values: np.ndarray) -> None:
        for start in range(0, len(values), self._hop):
            chunk = values[start : start + self._hop]
            if self._len + len(chunk) > len(self._buf):
                keep = self._n_window + self._hp + self._lp
                self._buf[:keep] = self._buf[self._len - keep : self._len]
                self._len = keep
            self._buf[self._len : self._len + len(chunk)] = chunk
            self._len += len(chunk)
            self._grid_count += len(chunk)
            self._since_judged += len(chunk)
            if self._since_judged >= self._hop:
                self._since_judged = 0
                self._judge()

    def frame_rate(self) -> float | None:
        """Frames a second over the window (None before a second of frames)."""
        times = self._frame_times
        covered = times[-1] - times[0] if len(times) > 1 else 0.0
        return (len(times) - 1) / covered if covered >= 1.0 else None

    def _judge(self) -> None:
        """Judge the newest window: its rate, and the compressions in it not counted yet. Frames too
        sparse to represent the search range would make a wrong rate (aliasing), worse than none."""
        fps = self.frame_rate()
        if fps is not None and fps < self._cfg.min_frame_rate:
            self._rate, self._periodicity = None, 0.0
            return
        span = self._n_window + self._hp + self._lp
        pos = self._buf[max(0, self._len - span) : self._len]
        if len(pos) < self._hp + self._lp + 2 * self._max_lag + 2:
            return
        velocity = _moving_average(np.diff(pos), self._lp)
        lag, periodicity = _periodicity(velocity[-self._n_window :], self._min_lag, self._max_lag)
        band = _moving_average(pos[self._hp // 2 : len(pos) - self._hp // 2] - _moving_average(pos, self._hp), self._lp)
        swing = float(np.percentile(band, 95) - np.percentile(band, 5)) if len(band) else 0.0
        self._periodicity = periodicity
        if periodicity < self._cfg.min_periodicity or swing < self._cfg.min_swing or lag <= 0:
            self._rate = None
            return
        rate = 60 * self._cfg.grid_hz / lag
        self._rate = rate
        # Grid index of band[0]: the centred filters drop half their length at each end.
        first = self._grid_count - len(pos) + self._hp // 2 + self._lp // 2
        period = lag / self._cfg.grid_hz
        half = max(1, int(lag / 2))
        for i in _peaks(band, max(1, int(0.6 * lag)), 0.125 * swing):
            # A compression swings about as far as the others; a wiggle in a pause (noise, shake) while
            # the window is still periodic from the compressions before it does not.
            around = band[max(0, i - half) : i + half + 1]
            if float(around.max() - around.min()) < self._cfg.local_swing * swing:
                continue
            t = self._grid_t0 + (first + i) * self._dt
            if self._last_peak_t is None or t > self._last_peak_t + 0.6 * period:
                self._count(t, rate, period)

    def _count(self, t: float, rate: float, period: float) -> None:
        if self._last_peak_t is None:
            self._run_start = t - period / 2
        else:
            run_end = self._last_peak_t + self._last_period / 2
            gap = (t - period / 2) - run_end
            if gap >= self._cfg.pause_s:
                self._closed_compressing_s += run_end - self._run_start
                self._closed_pauses += (Pause(run_end, gap, ongoing=False),)
                self._run_start = t - period / 2
        self._rates.append(rate)
        self._last_peak_t, self._last_period = t, period

    def snapshot(self) -> Rhythm:
        t = self._t_last
        pauses = self._closed_pauses
        compressing = self._closed_compressing_s
        rate = self._rate
        if self._last_peak_t is not None:
            run_end = self._last_peak_t + self._last_period / 2
            trailing = t - run_end
            if trailing >= self._cfg.pause_s:
                pauses += (Pause(run_end, trailing, ongoing=True),)
                compressing += run_end - self._run_start
                rate = None  # the window may still hold the last compressions: they have stopped
            else:
                compressing += max(t, run_end) - self._run_start
        else:
            rate = None  # periodic, but no compression counted yet (the window is still filling)
        session = t - (self._t_first if self._t_first is not None else t)
        return Rhythm(
            t_s=t,
            rate_per_min=rate,
            periodicity=self._periodicity,
            count=len(self._rates),
            median_rate_per_min=float(np.median(self._rates)) if self._rates else None,
            pauses=pauses,
            compression_fraction=min(1.0, max(0.0, compressing / session)) if session > 0 else None,
            frame_rate=self.frame_rate(),
        )
