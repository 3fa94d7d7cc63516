from __future__ import annotations

import pytest

from app.core.figures import spread


def test_median_of_odd_and_even_counts_and_the_range() -> None:
    assert spread([3.0, 1.0, 2.0]).median == 2.0
    s = spread([4.0, 1.0, 3.0, 2.0])
    assert (s.median, s.low, s.high, s.n) == (2.5, 1.0, 4.0, 4)


def test_p95_is_the_nearest_rank() -> None:
    samples = [float(i) for i in range(1, 101)]
    assert spread(samples).p95 == 95.0
    assert spread([1.0, 2.0, 3.0]).p95 == 3.0  # below 20 samples it is the maximum


def test_no_samples_is_an_error_not_a_zero() -> None:
    with pytest.raises(ValueError):
        spread([])
