"""Facts about the machine a benchmark ran on, for its receipt: the CPU, a package's version, a process's
memory. Shared by `bench`, `bench --checklist` and the scripts in bench/."""

from __future__ import annotations

import os
import platform
from importlib import metadata


def memory_kib(pid: int | None) -> dict[str, int] | None:
    """Resident and peak resident memory of `pid` (Linux /proc; None elsewhere)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            fields = dict(line.split(":", 1) for line in fh if ":" in line)
        return {"rss": int(fields["VmRSS"].split()[0]), "peak": int(fields["VmHWM"].split()[0])}
    except (OSError, KeyError, ValueError):
        return None


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            names = [line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")]
        if names:
            return f"{names[0]} ({len(names)} logical CPUs)"
    except OSError:
        pass
    return f"{platform.processor() or platform.machine()} ({os.cpu_count()} logical CPUs)"


def package_version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"
