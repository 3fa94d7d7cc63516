"""One wording for sizes over a limit."""

from __future__ import annotations

from app.core.sizes import over_limit, size_words


def test_sizes_read_in_the_unit_that_fits() -> None:
    assert [size_words(n) for n in (0, 812, 2048, 64 * 2**20, 65 * 2**20 + 2**19, 3 * 2**30)] == [
        "0 bytes",
        "812 bytes",
        "2 KB",
        "64 MB",
        "65.5 MB",
        "3 GB",
    ]


def test_over_the_limit_names_the_file_its_size_and_the_limit() -> None:
    assert over_limit("huge.jpg", 65 * 2**20, 64 * 2**20) == "huge.jpg is 65 MB, over the limit of 64 MB"
