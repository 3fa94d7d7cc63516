"""Summaries of repeated measurements as benchmarks and receipts quote them: median with
min–max and n, and a p95 that says how it was taken (no I/O, no MNN)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Spread:
    n: int
    median: float
    p95: float  # nearest-rank: with fewer than 20 samples this is the maximum
    low: float
    high: float

    def to_dict(self, digits: int = 1) -> dict[str, float | int]:
        return {
            "n": self.n,
            "median": round(self.median, digits),
            "p95": round(self.p95, digits),
            "min": round(self.low, digits),
            "max": round(self.high, digits),
        }


def spread(samples: Sequence[float]) -> Spread:
    if not samples:
        raise ValueError("no samples")
    ordered = sorted(samples)
    n = len(ordered)
    middle = n // 2
    median = ordered[middle] if n % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    p95 = ordered[max(0, math.ceil(0.95 * n) - 1)]
    return Spread(n, median, p95, ordered[0], ordered[-1])
