"""What the compression rhythm says, as records and words: no numpy, no estimator.

The session log, its summary, the report and the screens need these; the estimator that makes them
(`app.core.rhythm`) needs numpy, which starts threads when imported, and the command line must stay
single-threaded until it has cut the process off the network.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pause:
    start_s: float  # on the clock the estimator was fed
    length_s: float
    ongoing: bool  # still no compression at the time of the snapshot


@dataclass(frozen=True)
class Rhythm:
    t_s: float  # time of the last frame fed
    rate_per_min: float | None  # over the sliding window; None: no periodic motion ("—")
    periodicity: float  # the window's autocorrelation peak, 0..1 (0 before there is enough signal)
    count: int  # compressions counted this session
    median_rate_per_min: float | None  # over the counted compressions
    pauses: tuple[Pause, ...]
    compression_fraction: float | None  # CCF: time compressing ÷ session time; None before any time


@dataclass(frozen=True)
class MeasuredError:
    """The rate error `bench.rhythm` measured on the held-out generated videos (its receipt), quoted by
    the practice report; a test keeps it equal to the receipt."""

    median_per_min: float
    p95_per_min: float
    videos: int
    receipt: str


MEASURED_RATE_ERROR = MeasuredError(
    median_per_min=0.18, p95_per_min=1.49, videos=24, receipt="bench/receipts/rhythm.json"
)


# The guideline target for the compression rate, per minute (quoted as a target, never a verdict).
TARGET_RATE_PER_MIN = (100, 120)


def rate_band(rate_per_min: float) -> str:
    """slow | in_band | fast against the guideline target, for the words a trainee reads."""
    low, high = TARGET_RATE_PER_MIN
    return "slow" if rate_per_min < low else "fast" if rate_per_min > high else "in_band"
