"""Processes as the kernel sees them (Linux /proc): who is still alive after a fault."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from tests.conditions import wait_until


def _ppid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name may contain spaces and parentheses; the fields after the last ")" do not.
    return int(stat.rsplit(")", 1)[1].split()[1])


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its parent's wait is missing


def children(parent: int) -> set[int]:
    return {int(e) for e in os.listdir("/proc") if e.isdigit() and _ppid(int(e)) == parent}


def descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            parent = _ppid(int(entry))
            if parent is not None:
                children.setdefault(parent, []).append(int(entry))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def wait_gone(pids: set[int], timeout: float) -> set[int]:
    """The pids still alive after `timeout` seconds."""
    left = set(pids)

    def none_left() -> bool:
        left.difference_update([p for p in left if not alive(p)])
        return not left

    wait_until(none_left, timeout, interval=0.05)
    return left


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def workers(pids: Iterable[int]) -> set[int]:
    """The model workers among `pids`: the children multiprocessing spawned (their command runs
    spawn_main); its resource tracker is not one."""
    return {pid for pid in pids if b"spawn_main" in cmdline(pid)}


def with_environment(entry: str) -> set[int]:
    """Live processes whose environment holds `entry` ("NAME=value"): all that a run started, even those
    an exit left behind and the kernel handed to another parent."""
    wanted = entry.encode()
    found = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                environ = Path(f"/proc/{name}/environ").read_bytes()
            except OSError:
                continue
            if wanted in environ.split(b"\0") and alive(int(name)):
                found.add(int(name))
    return found


def runs_own_imports(pid: int) -> bool:
    """The interpreter has started and runs the program's own imports: a compiled extension module
    (none is loaded while Python starts) is mapped."""
    try:
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False
    return ".cpython-" in maps
