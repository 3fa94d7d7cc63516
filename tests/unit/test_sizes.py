"""One wording for sizes: limits, model sizes, progress and free space (binary units, as the limits are set)."""

from __future__ import annotations

from app.core.durations import duration_words
from app.core.sizes import over_limit, size_words


def test_sizes_read_in_the_unit_that_fits() -> None:
    sizes = (0, 812, 2048, 64 * 2**20, 65 * 2**20 + 2**19, 3 * 2**30, 1_475_228_382)
    assert [size_words(n) for n in sizes] == ["0 B", "812 B", "2 KB", "64 MB", "65.5 MB", "3 GB", "1.4 GB"]
    assert size_words(None) == "?"  # e.g. a model whose manifest pins no sizes


def test_over_the_limit_names_the_file_its_size_and_the_limit() -> None:
    assert over_limit("huge.jpg", 65 * 2**20, 64 * 2**20) == "huge.jpg is 65 MB, over the limit of 64 MB"


def test_durations_read_in_seconds_minutes_or_hours() -> None:
    assert [duration_words(s) for s in (-1, 59.4, 65, 3725)] == ["0 s", "59 s", "1 min 05 s", "1 h 02 min"]
