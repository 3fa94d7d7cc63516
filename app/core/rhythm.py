"""Chest-compression rhythm from a per-frame motion signal: rate, count, pauses, compression fraction.

Pure logic (numpy only). Fed one signed movement per frame, or one per channel (`app.frames.motion`
gives every region of the picture's vertical step and growth since the previous frame, + = down or
nearer, and each region's surroundings' sideways step), at whatever irregular times the frames came.
Every channel is judged and the estimator follows the one whose push is periodic.

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
- **not compressions**: a rate is first shown once a second of windows agreed on the period, the
  window holds six compressions one period apart (a person talking or gesturing is periodic for a
  moment) and several channels move at that period (compressions move arms, shoulders and head
  together; a gesture is one hand); movement at the period that swings sideways further than anything
  pushes and comes nearer (a hand waving above the chest at 2 Hz, seen from the side) is not compressions.
- **count**: peaks of the band-passed position (the bottom of each compression), at least 0.6
  periods apart, counted only while the window is periodic, only where the movement swings about
  as far as the window's compressions (a wiggle in a pause does not) and only with a neighbour one
  period away (the hands going back to the chest after the breaths are not a compression), and only
  where the chest comes back up about as far as it went down (a stroke comes back up; the lean to the head
  for the breaths goes down and stays, and the move back comes up from where it stayed). A run of
  compressions counts the periods its peaks span, so a peak that hops half a period (the region
  followed changed to one whose strokes peak later) loses no compression. A period far from the one counted is
  a new series that must prove itself again (the lean to the head for the breaths). A pause
  once shown is kept unless a series one period apart bridges it. Pauses and the compression fraction
  follow from the counted compressions: each covers one period around its peak; uncovered time of
  `pause_s` or more is a pause, shorter hiccups belong to the run around them. Session time runs
  from the first frame: time before the first compression lowers the CCF but is not a pause.
- **stalls**: frames more than `stall_s` apart (a busy page or phone delays the camera's pictures) show
  nothing, which is not stillness: a stall shorter than `pause_s` inside a run is counted by the
  periods it spans, and only time seen still makes a pause. A longer stall is not guessed at.

What it cannot measure: depth and recoil (one camera sees a movement in pixels, not centimetres
of chest; published camera studies agreed with sensor manikins 39 % and 34 % of the time), hand
position, or anything whose motion it is not given. Periodic movement that is not compressions
(a rocking body, a periodic camera wobble the motion feature does not flag as global) reads as a
rate. A rate shows about 3–4 s after compressions start (six of them and a steady second) and goes
`pause_s` after they stop; the newest ~0.6 s of compressions and half a period more (until the way
back up is seen) are not counted yet (then they are, from the start of the series).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

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
    # Frames further apart than this are a stall of the source (a busy page, a phone's camera catching up),
    # not a still scene: compressions go on unseen, so a stall shorter than `pause_s` inside a run is
    # bridged by its periods rather than counted as one compression or shown as a pause.
    stall_s: float = 0.25
    local_swing: float = 0.4  # of the window's swing: what a counted compression swings around its peak
    # A compression goes down and comes back: within half a period on each side of its bottom, the chest
    # rises at least this share of the way it went down, and went down at least this share of the way
    # it rises. The lean to the head for the breaths goes down and stays; the move back to the chest
    # comes up from a bottom it stayed at (seen on phone views of 30:2: both counted, 3 too many a cycle).
    # On the development phone views 0.4-0.5 counted best; 0.6 lost strokes of fast, faint ones.
    rise_share: float = 0.45
    min_frame_rate: float = MIN_FRAME_RATE  # frames a second below which no window is judged (aliasing)
    steady_s: float = 1.0  # and the period agreed (within `steady_lag`) over this long of windows
    steady_lag: float = 0.1
    min_series: int = 6  # compressions one period apart in the window before a rate is first shown
    # Movement that swings sideways at its period more than this times as far as anything pushes (and grows) is not
    # compressions (arms converging on the hands seen head-on reach ~1.2: an edge moving down along itself
    # looks partly sideways; a trainee seen from above at 15 fps 1.33; a hand waving at 2 Hz 1.4-2.1).
    sideways_ratio: float = 1.4
    keep_channel: float = 0.05  # channels this close to the best periodicity are alike: the widest swing is followed
    # Channels periodic at the followed period (within `steady_lag`) before a rate is first shown: compressions
    # move arms, shoulders and head together, seen in several overlapping regions; a gesture moves one.
    min_coherent: int = 4
    # A period this many times longer or shorter than the one counted starts a new series (a real change of
    # pace within a run is 10-30 %).
    new_series: float = 1.4

    def __post_init__(self) -> None:
        if not 0 < self.min_rate_per_min < self.max_rate_per_min:
            raise ValueError("need 0 < min_rate_per_min < max_rate_per_min")
        if self.window_s < 3 * 60 / self.min_rate_per_min:
            raise ValueError("the window must hold at least three of the slowest periods")
        if self.grid_hz < 4 * self.max_rate_per_min / 60 or self.hop_s <= 0 or self.pause_s <= 0:
            raise ValueError("grid_hz, hop_s or pause_s out of range")
        if self.min_frame_rate <= 2 * self.max_rate_per_min / 60:
            raise ValueError("min_frame_rate must be above twice the fastest rate searched (in Hz), or it aliases")
        if self.min_series < 1 or self.sideways_ratio <= 0 or self.new_series <= 1:
            raise ValueError("min_series must be >= 1, sideways_ratio > 0 and new_series > 1")
        if not 0 <= self.rise_share < 1:
            raise ValueError("need 0 <= rise_share < 1")
        if not 0 < self.stall_s < self.pause_s:
            raise ValueError("need 0 < stall_s < pause_s")


def _moving_average(x: np.ndarray, n: int) -> np.ndarray:
    """Centred moving average along the first axis, 'valid' part only (len(x) - n + 1 rows)."""
    c = np.cumsum(np.concatenate((np.zeros((1,) + x.shape[1:]), x)), axis=0)
    return np.asarray((c[n:] - c[:-n]) / n)


def _autocorrelation(v: np.ndarray, max_lag: int) -> tuple[np.ndarray, np.ndarray]:
    """Per column of `v` (samples x channels): the normalised, unbiased autocorrelation at lags 0..max_lag + 1
    (0 for a column without energy), and each column's energy."""
    v = v - v.mean(axis=0)
    energy = (v * v).sum(axis=0)
    n = len(v)
    spectrum = np.fft.rfft(v, 2 * n, axis=0)
    ac = np.fft.irfft(spectrum * np.conj(spectrum), axis=0)[: max_lag + 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        ac = ac / energy * (n / (n - np.arange(len(ac))))[:, None]  # unbiased: long lags overlap fewer samples
    ac[:, energy <= 0] = 0.0
    return ac, energy


def _periodicity(ac: np.ndarray, min_lag: int, max_lag: int) -> tuple[np.ndarray, np.ndarray]:
    """Per column of autocorrelations `ac`: (best lag in grid samples, refined; its height), (0, 0) for a
    column without a peak in range."""
    channels = ac.shape[1]
    lag_out, height_out = np.zeros(channels), np.zeros(channels)
    lags = np.arange(min_lag, max_lag + 1)
    inner = ac[lags]
    is_peak = (inner >= ac[lags - 1]) & (inner > ac[lags + 1])
    best = np.where(is_peak, inner, -np.inf).max(axis=0)
    found = np.isfinite(best) & (best > 0)
    # The first peak nearly as high as the best: at 160/min the lag of two periods is in range too, and at
    # 15 fps a stroke's samples fall unevenly, so two periods may correlate better than one (seen: 74/min
    # for 147 while the single period's peak was 0.8 of the double's).
    first = np.argmax(is_peak & (inner >= 0.7 * best), axis=0)
    k = lags[first]
    cols = np.arange(channels)
    a, b, c = ac[k - 1, cols], ac[k, cols], ac[k + 1, cols]
    denom = a - 2 * b + c
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = np.where(denom < 0, 0.5 * (a - c) / denom, 0.0)
    lag_out[found] = (k + shift)[found]
    height_out[found] = b[found]
    return lag_out, height_out


@dataclass(frozen=True)
class _Gap:
    """The time between two counted compressions of a run."""

    seconds: float
    clean: bool  # about one period (up to 1.6 of the window's): it measures the pace
    fallback: float  # the period to measure it in when no clean gap is near it (the window's)
    fixed: float | None = None  # the periods it counts for whatever the pace (a late movement in a pause: 1)


def _gap_periods(gaps: Sequence[_Gap], i: int) -> float:
    """Periods gap `i` spans: in the pace of the clean gaps up to it (the last five, itself among them) or,
    once they have come, of the three clean gaps after it, whichever makes it more nearly whole or half
    periods (a stroke, a stroke not seen, a region followed whose strokes peak half a period later). A
    gap unlike those before it comes where a change of pace moves the region followed: measured in the
    pace before it, the strokes after 100/min turned to 130/min counted as 0.7-0.9 of one each, and two
    compressions were lost."""
    gap = gaps[i]
    if gap.fixed is not None:
        return gap.fixed
    before = [g.seconds for g in gaps[max(0, i - 4) : i + 1] if g.clean]
    after = [g.seconds for g in gaps[i + 1 :] if g.clean][:3]
    paces = [float(np.median(before)) if before else gap.fallback]
    if len(after) == 3:
        paces.append(float(np.median(after)))
    return min((gap.seconds / pace for pace in paces), key=lambda x: abs(x - max(1.0, round(2 * x) / 2)))


def _peaks(x: np.ndarray, min_distance: int, height: float) -> list[int]:
    """Local maxima above `height`, the highest kept where two are closer than `min_distance`."""
    inner = x[1:-1]
    candidates = np.flatnonzero((inner >= x[:-2]) & (inner > x[2:]) & (inner > height)) + 1
    kept: list[int] = []
    for i in sorted(candidates, key=lambda j: -x[j]):
        if all(abs(int(i) - k) >= min_distance for k in kept):
            kept.append(int(i))
    return sorted(kept)


def _comes_back_up(low: np.ndarray, i: int, half: int, share: float) -> bool | None:
    """Whether the bottom at `i` of `low` (the position, + = down) is a stroke's: in the half period before it
    the position went down, and in the half period after it came back up, each at least `share` of the other.
    None while the half period after it is not seen yet; true where the window cut off the half period
    before it (the windows before judged it)."""
    if i + half >= len(low):
        return None
    if i - half < 0:
        return True
    rise = float(low[i] - low[i : i + half + 1].min())
    drop = float(low[i] - low[i - half : i].min())
    return min(drop, rise) >= share * max(drop, rise)


def _one_period_apart(a: int, b: int, lag: float) -> bool:
    """Two compressions of one series: 0.6–1.5 periods apart (people are not metronomes)."""
    return 0.6 * lag <= abs(b - a) <= 1.5 * lag


def _in_a_chain(peaks: list[int], lag: float) -> list[int]:
    """The peaks with a neighbour about one period away: a compression is one of a series; a single
    large movement (the hands going back to the chest after the breaths) is not."""
    return [
        p
        for i, p in enumerate(peaks)
        if any(_one_period_apart(p, q, lag) for q in peaks[max(0, i - 1) : i] + peaks[i + 1 : i + 2])
    ]


def _longest_series(peaks: list[int], lag: float) -> int:
    """The most peaks in a row, each one period after the one before."""
    longest = run = min(1, len(peaks))
    for a, b in zip(peaks, peaks[1:], strict=False):
        run = run + 1 if _one_period_apart(a, b, lag) else 1
        longest = max(longest, run)
    return longest


class Movement(Protocol):
    """One frame's movement as a motion feature (`app.frames.motion.MotionFeature`) gives it."""

    @property
    def pushes(self) -> Sequence[float]: ...
    @property
    def sideways(self) -> Sequence[float]: ...
    @property
    def is_global(self) -> bool: ...


class RhythmEstimator:
    """One per session. `update` per frame (cheap; the window is judged once per hop), `snapshot` any time.

    The movement may come as one number a frame or as several channels (`app.frames.motion` gives each
    region of the picture's push and growth): every channel is judged, and the rate and the count follow
    the one whose push is periodic, so the compressing trainee is found wherever they are in the picture
    and whatever their size, and a periodic movement elsewhere (a hand waving) is not mixed in."""

    def __init__(self, config: RhythmConfig | None = None) -> None:
        self._cfg = config or RhythmConfig()
        fs = self._cfg.grid_hz
        self._dt = 1.0 / fs
        self._n_window = round(self._cfg.window_s * fs)
        self._hp = round(60 / self._cfg.min_rate_per_min * fs) | 1  # high-pass: minus ~1 slowest period
        self._lp = max(3, round(0.1 * fs)) | 1  # low-pass 0.1 s: jitter of interpolated frames
        # The velocity judged for periodicity: low-passed twice over 0.14 s (zero gain at 7 Hz, 0.57 at the
        # 2.8 Hz of 170/min), so a far trainee's faint movement is not drowned by per-frame noise above the
        # compression band; noise so smoothed stays correlated for 0.28 s, under the shortest lag searched.
        self._smooth = max(3, round(0.14 * fs)) | 1
        self._min_lag = int(np.floor(60 / self._cfg.max_rate_per_min * fs))
        self._max_lag = int(np.ceil(60 / self._cfg.min_rate_per_min * fs))
        self._hop = max(1, round(self._cfg.hop_s * fs))
        # Grid positions (rows: grid samples, newest at _len - 1; columns: channels), made on the first frame.
        self._buf = np.zeros((0, 0))
        self._side = np.zeros((0, 0))
        self._len = 0
        self._grid_t0 = 0.0  # time of the first grid sample ever
        self._grid_count = 0  # grid samples ever made
        self._since_judged = 0
        self._t_first: float | None = None
        self._t_last = 0.0
        self._pos = np.zeros(0)  # summed push per channel at _t_last
        self._side_pos = np.zeros(0)
        self._rate: float | None = None
        self._periodicity = 0.0
        self._channel = -1  # the channel followed, -1 before one was periodic
        self._confirmed = False
        self._lags: deque[float] = deque(maxlen=max(1, round(self._cfg.steady_s / self._cfg.hop_s)))
        self._frame_times: deque[float] = deque()  # of the frames within the window, for the frame rate
        # Session: the window's rate at each counted compression, and the runs and pauses they make.
        self._rates: list[float] = []
        self._last_peak_t: float | None = None
        # (t, rate, period) of a compression whose way back up is not seen yet
        self._pending: tuple[float, float, float] | None = None
        self._last_period = 0.0
        self._run_start = 0.0
        self._closed_compressing_s = 0.0
        # Compressions are counted by the periods the run's peaks span, not by its peaks: when the region
        # followed changes, its strokes may peak half a period later, and one of a pair is dropped.
        # The period the gaps are measured in: the gaps between counted compressions around each, which follow
        # a change of pace at once (the window's period lags it by seconds: 130/min measured in 100/min periods
        # would lose a compression in four).
        self._run_gaps: list[_Gap] = []  # of the open run
        self._settled_periods = 0.0  # periods of the run's gaps whose pace is known (three clean gaps after them)
        self._settled = 0  # how many gaps those are
        self._closed_count = 0  # compressions of the runs a pause closed
        self._closed_pauses: tuple[Pause, ...] = ()
        self._pause_shown = False  # a pause was shown since the last compression: kept unless never real
        self._stalls: deque[tuple[float, float]] = deque()  # (from, to): source stalls shorter than pause_s

    def update(
        self,
        t_s: float,
        movement: float | Sequence[float] | np.ndarray,
        global_motion: bool = False,
        sideways: Sequence[float] | np.ndarray | None = None,
    ) -> None:
        """A frame at `t_s` moved by `movement` since the previous one: one number, or one per channel (the
        same channels every frame), with the sideways movement of the leading channels that have one (the
        motion feature's vertical steps; its growth channels have none). A frame whose change was
        global (the feature says the whole picture moved or changed brightness) adds no movement: shake
        and flicker must not make a rhythm."""
        push = np.atleast_1d(np.asarray(movement, dtype=float))
        side = np.zeros(0) if sideways is None else np.atleast_1d(np.asarray(sideways, dtype=float))
        if self._t_first is None:
            if len(side) > len(push):
                raise ValueError(f"{len(side)} sideways movements for {len(push)} channels")
            self._start(t_s, len(push), len(side))
            return
        if push.shape != self._pos.shape or side.shape != self._side_pos.shape:
            raise ValueError(
                f"{self._pos.size} channels, {self._side_pos.size} sideways expected; got {push.size}, {side.size}"
            )
        if global_motion:
            push, side = np.zeros_like(push), np.zeros_like(side)
        push = np.where(np.isfinite(push), push, 0.0)
        side = np.where(np.isfinite(side), side, 0.0)
        if t_s <= self._t_last:  # a repeated or late timestamp: keep the movement, make no time
            self._pos, self._side_pos = self._pos + push, self._side_pos + side
            return
        if self._cfg.stall_s < t_s - self._t_last < self._cfg.pause_s:
            self._stalls.append((self._t_last, t_s))
        # Before the last compression counted, or before any window still judged: no gap left to bridge.
        oldest = max(self._last_peak_t or -np.inf, t_s - 2 * self._cfg.window_s)
        while self._stalls and self._stalls[0][1] < oldest:
            self._stalls.popleft()
        self._frame_times.append(t_s)
        while self._frame_times[0] <= t_s - self._cfg.window_s:
            self._frame_times.popleft()
        new_pos, new_side = self._pos + push, self._side_pos + side
        first_t = self._grid_t0 + self._grid_count * self._dt  # the next grid sample's time
        n = int(np.floor((t_s - first_t) / self._dt)) + 1 if t_s >= first_t else 0
        if n > 0:
            frac = ((first_t + np.arange(n) * self._dt - self._t_last) / (t_s - self._t_last))[:, None]
            self._push(self._pos + (new_pos - self._pos) * frac, self._side_pos + (new_side - self._side_pos) * frac)
        self._t_last, self._pos, self._side_pos = t_s, new_pos, new_side

    def follow(self, t_s: float, movement: Movement) -> None:
        """`update` with a motion feature's channels."""
        self.update(t_s, movement.pushes, movement.is_global, movement.sideways)

    def _start(self, t_s: float, channels: int, sideways: int) -> None:
        """The first frame: still before it, which lets the centred filters judge the session's first second."""
        pad = self._hp // 2 + self._lp // 2
        rows = 2 * (self._n_window + self._hp + self._lp)
        self._buf, self._side = np.zeros((rows, channels)), np.zeros((rows, sideways))
        self._pos, self._side_pos = np.zeros(channels), np.zeros(sideways)
        self._t_first = self._t_last = t_s
        self._frame_times.append(t_s)
        self._grid_t0 = t_s - pad * self._dt
        self._push(np.zeros((pad + 1, channels)), np.zeros((pad + 1, sideways)))

    def _push(self, values: np.ndarray, side: np.ndarray) -> None:
        for start in range(0, len(values), self._hop):
            chunk = values[start : start + self._hop]
            if self._len + len(chunk) > len(self._buf):
                keep = self._n_window + self._hp + self._lp
                self._buf[:keep] = self._buf[self._len - keep : self._len]
                self._side[:keep] = self._side[self._len - keep : self._len]
                self._len = keep
            self._buf[self._len : self._len + len(chunk)] = chunk
            self._side[self._len : self._len + len(chunk)] = side[start : start + self._hop]
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
        """Judge the newest window: which channel pushes periodically, its rate, and the compressions in it
        not counted yet. Frames too sparse to represent the search range would make a wrong rate
        (aliasing), worse than none."""
        fps = self.frame_rate()
        if fps is not None and fps < self._cfg.min_frame_rate:
            self._no_rate()
            return
        span = self._n_window + self._hp + self._lp
        pos = self._buf[max(0, self._len - span) : self._len]
        if len(pos) < self._hp + 2 * self._smooth + 2 * self._max_lag + 2:
            return
        ac, energy = _autocorrelation(self._smoothed_velocity(pos), self._max_lag)
        lags, periodicity = _periodicity(ac, self._min_lag, self._max_lag)
        band = _moving_average(pos[self._hp // 2 : len(pos) - self._hp // 2] - _moving_average(pos, self._hp), self._lp)
        swings = np.percentile(band, 95, axis=0) - np.percentile(band, 5, axis=0)
        eligible = (periodicity >= self._cfg.min_periodicity) & (swings >= self._cfg.min_swing) & (lags > 0)
        self._periodicity = float(periodicity[self._channel]) if self._channel >= 0 else float(periodicity.max())
        if not eligible.any():
            self._no_rate()
            return
        # Of the channels nearly as periodic as the best, the one that swings furthest: the region the
        # compressions fill, not one they graze (which keeps its periodicity from the window's past
        # while the hands leave it). The channel followed stays while it is still among them and swings
        # nearly as far, so the count does not flip between regions.
        near = eligible & (periodicity >= periodicity[eligible].max() - self._cfg.keep_channel)
        widest = float(swings[near].max())
        ch = self._channel
        if not (ch >= 0 and near[ch] and swings[ch] >= 0.7 * widest):
            ch = self._channel = int(np.argmax(np.where(near, swings, -1.0)))
            self._count_pending()
        if self._goes_sideways(span, ac, energy, ch, int(round(lags[ch]))):
            self._no_rate()
            return
        lag, swing = float(lags[ch]), float(swings[ch])
        self._periodicity = float(periodicity[ch])
        half = max(1, int(lag / 2))
        # A compression swings about as far as the others; a wiggle in a pause (noise, shake) while the
        # window is still periodic from the compressions before it does not.
        trace = band[:, ch]
        # The position without the high-pass, aligned with `band`: a stroke's way back up is judged on it.
        low = _moving_average(pos[self._hp // 2 : len(pos) - self._hp // 2, ch], self._lp)
        swinging = [
            i
            for i in _peaks(trace, max(1, int(0.6 * lag)), 0.125 * swing)
            if float(np.ptp(trace[max(0, i - half) : i + half + 1])) >= self._cfg.local_swing * swing
        ]
        # First shown once the window holds a series of `min_series` compressions one period apart: a
        # person talking or gesturing makes a periodic moment, compressions a series.
        # ... and once `steady_s` of windows in a row agreed on the period: noise, smoothed into the band and
        # judged on many channels, makes one channel periodic for a window or two, never for a second.
        # A period far from the one counted is another movement, not the series going on (seen: the lean
        # to the head for the breaths of 30:2, periodic at half the rate, counted as compressions): it must
        # prove itself as a series again.
        counted_lag = self._last_period * self._cfg.grid_hz or lag
        if self._confirmed and not 1 / self._cfg.new_series <= lag / counted_lag <= self._cfg.new_series:
            self._confirmed = False
            self._lags.clear()
        self._lags.append(lag)
        steady = len(self._lags) == self._lags.maxlen and max(self._lags) <= (1 + self._cfg.steady_lag) * min(
            self._lags
        )
        # ... and once several channels move at that period (one number a frame has no picture to judge).
        coherent = int((eligible & (np.abs(lags - lag) <= self._cfg.steady_lag * lag)).sum())
        self._confirmed = self._confirmed or (
            steady
            and coherent >= min(self._cfg.min_coherent, len(lags))
            and _longest_series(swinging, lag) >= self._cfg.min_series
        )
        if not self._confirmed:
            self._no_rate(keep_lags=True)
            return
        rate = 60 * self._cfg.grid_hz / lag
        self._rate = rate
        # Grid index of band[0]: the centred filters drop half their length at each end.
        first = self._grid_count - len(pos) + self._hp // 2 + self._lp // 2
        period = lag / self._cfg.grid_hz
        chain = _in_a_chain(swinging, lag)
        # The way back up is judged only where the window's own strokes show it: a movement measured
        # mostly one way (a large bright block at 1080p read as steps down and little back) makes every
        # stroke a step, and the test would refuse them all.
        back_up = {i: _comes_back_up(low, i, half, self._cfg.rise_share) for i in chain}
        seen = [b for b in back_up.values() if b is not None]
        judged = len(seen) >= 3 and sum(seen) >= len(seen) / 2
        for i in chain:
            t = self._grid_t0 + (first + i) * self._dt
            if self._last_peak_t is not None and t <= self._last_peak_t + 0.6 * period:
                continue
            came_back = back_up[i] if judged else True
            if came_back is None:
                self._pending = (t, rate, period)  # judged on the next hop, once its way back up is seen
                break
            # Across a stall of the source the position is a straight line, not a movement to judge.
            if came_back or self._unseen(t - period / 2, t + period / 2):
                self._count(t, rate, period)
            self._pending = None
        self._see_pause(self._grid_t0 + (first + len(trace)) * self._dt)

    def _goes_sideways(self, span: int, ac: np.ndarray, energy: np.ndarray, channel: int, lag: int) -> bool:
        """Whether the vertical movement followed is a sideways one: a hand waving above the chest at 2 Hz
        is periodic and in the band, and the edge of its forearm (or the arc it draws, at twice its rate)
        may look like a push somewhere, but somewhere in the picture it swings sideways further than
        anything pushes and grows together. Seen from above, a compression is a growth (the head and
        shoulders come nearer) and the head moves along the picture, whichever way the phone lies: the
        growth counts with the push (seen: a push followed from above, its growth nearly as large, refused
        for its sideways 1.43 times as large, and 59 of 83 compressions lost). Judged on the movement at
        this period alone, not its harmonics: a channel's energy times (autocorrelation at the lag - at
        half the lag) / 2 is its fundamental's. A growth followed has no sideways to compare with."""
        sideways = self._side.shape[1]
        if channel >= sideways:
            return False
        side_ac, side_energy = _autocorrelation(
            self._smoothed_velocity(self._side[max(0, self._len - span) : self._len]), self._max_lag
        )

        def fundamental(a: np.ndarray, e: np.ndarray) -> float:
            return float((e * np.maximum(a[lag] - a[lag // 2], 0.0) / 2).max())

        push = fundamental(ac[:, :sideways], energy[:sideways]) + fundamental(ac[:, sideways:], energy[sideways:])
        return fundamental(side_ac, side_energy) > self._cfg.sideways_ratio**2 * push

    def _smoothed_velocity(self, pos: np.ndarray) -> np.ndarray:
        return _moving_average(_moving_average(np.diff(pos, axis=0), self._smooth), self._smooth)[-self._n_window :]

    def _no_rate(self, keep_lags: bool = False) -> None:
        """No rate from this window. The periods agreed so far are kept while a series is still awaited, and
        a series confirmed stays so through a dip while compressions go on (a change of pace mixes two
        periods in the window for a moment): only once they stopped must the next series prove itself."""
        self._rate = None
        self._count_pending()
        stopped = self._last_peak_t is None or self._t_last - self._last_peak_t > self._cfg.pause_s
        if not keep_lags and stopped:
            self._confirmed = False
            self._lags.clear()
        if self._t_first is not None:
            self._see_pause(self._t_last - (self._hp // 2 + self._lp // 2 + 1) * self._dt)

    def _count_pending(self) -> None:
        """A compression waiting for its way back up, counted without it: the region followed changed (its strokes
        may peak elsewhere) or the window stopped giving a rate (as the count did before that was judged)."""
        if self._pending is not None:
            self._count(*self._pending)
            self._pending = None

    def _unseen(self, start: float, end: float) -> float:
        """Seconds of (start, end) the source stalled in (stalls shorter than `pause_s`)."""
        return sum(max(0.0, min(b, end) - max(a, start)) for a, b in self._stalls)

    def _still_for(self, end: float) -> float:
        """Seconds seen without a compression from the last one's end to `end` (0 before any)."""
        if self._last_peak_t is None:
            return 0.0
        run_end = self._last_peak_t + self._last_period / 2
        return end - run_end - self._unseen(run_end, end)

    def _see_pause(self, known_until: float) -> None:
        """Remember that a pause was shown: compressions are known up to `known_until` (the centred filters
        lag the newest frame), and none seen for `pause_s` before it."""
        if self._still_for(known_until) >= self._cfg.pause_s:
            self._pause_shown = True

    def _count(self, t: float, rate: float, period: float) -> None:
        # Since the last compression: the time seen (a stall of the source hides strokes), and the stillness
        # seen between the two strokes.
        last = self._last_peak_t
        seen_gap = t - last - self._unseen(last, t) if last is not None else 0.0
        still = self._still_for(t - period / 2)
        if self._pause_shown and last is not None:
            if still < self._cfg.pause_s and seen_gap > 1.5 * period:
                # A movement found late inside a pause already shown (the hands going back to the chest),
                # not the next of the series: counting it would erase the pause. A pause that was never
                # real is bridged by a series of compressions one period apart, and those are counted.
                return
        self._pause_shown = False
        if self._last_peak_t is None:
            self._run_start = t - period / 2
        else:
            run_end = self._last_peak_t + self._last_period / 2
            gap = (t - period / 2) - run_end
            if still >= self._cfg.pause_s:
                self._closed_compressing_s += run_end - self._run_start
                self._closed_pauses += (Pause(run_end, gap, ongoing=False),)
                self._closed_count += self._run_count()
                self._run_start = t - period / 2
                self._run_gaps.clear()
                self._settled_periods, self._settled = 0.0, 0
            else:
                # Up to two and a half periods: peaks that hopped (the region followed changed to one whose
                # strokes peak later) or a stroke not seen. Longer, under a pause: a movement that is not
                # one of the series, one compression at most, unless the source stalled through the gap.
                between = t - self._last_peak_t
                self._run_gaps.append(_Gap(between, between <= 1.6 * period, period))
                if _gap_periods(self._run_gaps, len(self._run_gaps) - 1) > 2.5 and seen_gap > 1.6 * period:
                    self._run_gaps[-1] = _Gap(between, between <= 1.6 * period, period, fixed=1.0)
                while sum(g.clean for g in self._run_gaps[self._settled + 1 :]) >= 3:
                    self._settled_periods += _gap_periods(self._run_gaps, self._settled)
                    self._settled += 1
        self._rates.append(rate)
        self._last_peak_t, self._last_period = t, period

    def _run_count(self) -> int:
        unsettled = sum(_gap_periods(self._run_gaps, i) for i in range(self._settled, len(self._run_gaps)))
        return 1 + round(self._settled_periods + unsettled)

    def snapshot(self) -> Rhythm:
        t = self._t_last
        pauses = self._closed_pauses
        compressing = self._closed_compressing_s
        rate = self._rate
        if self._last_peak_t is not None:
            run_end = self._last_peak_t + self._last_period / 2
            trailing = t - run_end
            if self._still_for(t) >= self._cfg.pause_s:
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
            count=self._closed_count + (self._run_count() if self._last_peak_t is not None else 0),
            median_rate_per_min=float(np.median(self._rates)) if self._rates else None,
            pauses=pauses,
            compression_fraction=min(1.0, max(0.0, compressing / session)) if session > 0 else None,
            frame_rate=self.frame_rate(),
        )
