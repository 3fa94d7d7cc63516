"""One wording for a size over its limit, wherever a file, upload or image is refused for its size."""

from __future__ import annotations

_UNITS = (("GB", 2**30), ("MB", 2**20), ("KB", 2**10))


def size_words(n: int) -> str:
    """Bytes in the largest unit that fits (binary, as the limits are set): 64 MB, 65.5 MB, 812 bytes."""
    for unit, scale in _UNITS:
        if n >= scale:
            value = n / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n} bytes"


def over_limit(name: str, size: int, limit: int) -> str:
    """The sentence for `name` refused for its size (`size` may be a lower bound: "over" holds)."""
    return f"{name} is {size_words(size)}, over the limit of {size_words(limit)}"
