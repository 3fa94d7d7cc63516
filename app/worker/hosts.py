"""Choosing where the worker runs: one interface, two hosts."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Protocol

from app.worker.messages import Analyze, Event, WorkerSpec
from app.worker.process_host import ProcessWorkerHost
from app.worker.thread_host import ThreadWorkerHost


class WorkerHost(Protocol):
    @property
    def in_flight(self) -> str | None: ...
    @property
    def pid(self) -> int | None: ...  # the process the model runs in (None before it starts)

    def start(self) -> None: ...
    def submit(self, job: Analyze) -> None: ...
    def cancel(self, job_id: str) -> None: ...
    def stop(self, timeout: float = 5.0) -> None: ...


PHONES = ("ios", "android")  # FLET_PLATFORM / page.platform values where the app runs on a phone


def default_host_kind() -> str:
    """Where the thread worker is used: the one statement of it (README and docstrings refer here).

    Child processes everywhere but iOS and Android, where an embedded Python cannot spawn.
    """
    return "thread" if os.environ.get("FLET_PLATFORM", "") in PHONES else "process"


def pauses_in_background(platform: str, web: bool) -> bool:
    """Whether a session stops when the app goes to the background: in the iOS and Android apps,
    where the model runs in the app's own process on the phone (and Metal must not run hidden);
    not in a browser, whose model runs on the server, nor on desktops."""
    return not web and platform.lower() in PHONES


def make_host(spec: WorkerSpec, on_event: Callable[[Event], None], kind: str | None = None) -> WorkerHost:
    kind = kind or default_host_kind()
    if kind not in ("process", "thread"):
        raise ValueError(f"unknown worker host {kind!r}")
    return (ProcessWorkerHost if kind == "process" else ThreadWorkerHost)(spec, on_event)
