"""The versions a generator's receipt records (shared by generate.py and tools/real_size)."""

from __future__ import annotations

import platform
from collections.abc import Iterable
from importlib import metadata


def versions(packages: Iterable[str]) -> dict[str, str]:
    """Python's and each package's installed version ("missing" when it is not installed)."""
    out = {"python": platform.python_version()}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "missing"
    return out
