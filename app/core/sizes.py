"""How a number of bytes reads, everywhere: limits, model sizes, download progress, free space.

Binary units, as the limits are set (a 64 MiB limit reads "64 MB", never "67.1 MB"),
written KB, MB and GB as people say them.
"""

from __future__ import annotations

_UNITS = (("GB", 2**30), ("MB", 2**20), ("KB", 2**10))


def size_words(n: float | None) -> str:
    """Bytes in the largest unit that fits, to one decimal with ".0" dropped: 812 B, 2 KB, 65.5 MB;
    "?" for a size that is not known."""
    if n is None:
        return "?"
    for unit, scale in _UNITS:
        if n >= scale:
            return f"{n / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{n:.0f} B"


def over_limit(name: str, size: int, limit: int) -> str:
    """The sentence for `name` refused for its size (`size` may be a lower bound: "over" holds)."""
    return f"{name} is {size_words(size)}, over the limit of {size_words(limit)}"
