"""What the compression rhythm says, as records and words: no numpy, no estimator.

The session log, its summary, the report and the screens need these; the estimator that makes them
(`app.core.rhythm`) needs numpy, which starts threads when imported, and the command line must stay
single-threaded until it has cut the process off the network.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Pause:
    start_s: float  # on the clock the estimator was fed
    length_s: float
    ongoing: bool  # still no compression at the time of the snapshot


# Below this many frames a second the estimator judges no window: 170 per minute (the top of its search
# range) is 2.8 Hz, which needs more than 5.7 frames a second (Nyquist); 7 keeps a margin and still
# admits a webcam that halves to 7.5 in dim light. At the 2.5 pictures a second a browser's
# take_picture gives, 108 per minute read as 56.
MIN_FRAME_RATE = 7.0


@dataclass(frozen=True)
class Rhythm:
    t_s: float  # time of the last frame fed
    rate_per_min: float | None  # over the sliding window; None: no periodic motion ("—")
    periodicity: float  # the window's autocorrelation peak, 0..1 (0 before there is enough signal)
    count: int  # compressions counted this session
    median_rate_per_min: float | None  # over the counted compressions
    pauses: tuple[Pause, ...]
    compression_fraction: float | None  # CCF: time compressing ÷ session time; None before any time
    # Frames a second that reached the estimator over its window; None before a second of frames.
    frame_rate: float | None = None

    @property
    def too_few_frames(self) -> bool:
        """The frames are too sparse to carry a compression rate: none is judged, and the screen says why."""
        return self.frame_rate is not None and self.frame_rate < MIN_FRAME_RATE


@dataclass(frozen=True)
class MeasuredError:
    """The rate error `bench.rhythm` measured on the held-out generated videos (its receipt), quoted by
    the practice report; a test keeps it equal to the receipt."""

    median_per_min: float
    p95_per_min: float
    videos: int
    receipt: str


MEASURED_RATE_ERROR = MeasuredError(
    median_per_min=0.17, p95_per_min=0.99, videos=24, receipt="bench/receipts/rhythm.json"
)


@dataclass(frozen=True)
class ViewAccuracy:
    """How the rate held on one camera view of `bench.rhythm_views`' held-out generated phone videos (its
    receipt): the report lists every view, as the app does not detect which one a session was filmed from;
    a test keeps these equal to the receipt."""

    view: str  # side | front | oblique | top_down | floor_up | portrait_headless | far
    shown_percent: int  # of compression time with a rate shown (after the first 5 s)
    median_per_min: float
    p95_per_min: float
    worst_count_percent: float  # the largest count error of its videos


VIEWS_RECEIPT = "bench/receipts/rhythm_views.json"
VIEW_ACCURACY = (
    ViewAccuracy("side", 100, 0.20, 1.30, 2.4),
    ViewAccuracy("front", 100, 0.14, 0.42, 1.2),
    ViewAccuracy("oblique", 100, 0.15, 1.21, 1.3),
    ViewAccuracy("top_down", 100, 0.22, 0.60, 1.8),
    ViewAccuracy("floor_up", 100, 0.21, 0.73, 1.1),
    ViewAccuracy("portrait_headless", 100, 0.21, 0.94, 1.5),
    ViewAccuracy("far", 100, 0.33, 2.28, 1.6),
)
# Of the same receipt's videos of people moving without compressing (talking, waving, resting,
# repositioning): how many still showed a rate. Said in the report: a rate is not proof of compressions.
MOVING_WITH_A_RATE = (4, 8)


# The guideline target for the compression rate, per minute (quoted as a target, never a verdict).
TARGET_RATE_PER_MIN = (100, 120)


def shown_rate(rate_per_min: float) -> int:
    """A rate as a person reads it, in whole compressions per minute: every screen, the report and the
    summary show this number, and `rate_band` judges it, so "100/min" is never "a little slow"."""
    return round(rate_per_min)


# Pauses in compressions longer than this many seconds are flagged wherever pauses are shown: "as few
# interruptions as possible, none over 10 s" (AHA and ERC 2021; unchanged in AHA 2025 and ERC 2025).
LONG_PAUSE_S = 10.0


def is_long_pause(length_s: float) -> bool:
    """Over `LONG_PAUSE_S`, judged on the length as shown (one decimal): "10.0 s" is never "over 10 s"."""
    return round(length_s, 1) > LONG_PAUSE_S


def long_pauses(pauses: Sequence[Pause], ended: bool = True) -> tuple[Pause, ...]:
    """The pauses over the guideline's limit (`LONG_PAUSE_S`). While a session runs (`ended` False) the
    ongoing one counts as soon as it is over the limit; once it ended, a pause still going on at its end
    is the attempt's end (the trainee getting up to stop the app), not an interruption, and does not."""
    return tuple(p for p in pauses if is_long_pause(p.length_s) and not (ended and p.ongoing))


def rate_band(rate_per_min: float) -> str:
    """slow | in_band | fast against the guideline target, for the words a trainee reads: judged on the
    number shown (`shown_rate`), not on the unrounded estimate (99.7 is shown 100, in the band)."""
    low, high = TARGET_RATE_PER_MIN
    rate = shown_rate(rate_per_min)
    return "slow" if rate < low else "fast" if rate > high else "in_band"
