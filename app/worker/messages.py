"""Messages between the UI-side host and the worker. All picklable, all frozen."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Union

from app.core.results import AnalysisResult
from app.frames.intake import DecodedImage


@dataclass(frozen=True)
class WorkerSpec:
    """Everything a fresh worker needs to build its analyzer (sent to a new process)."""

    model: str | None = None  # model id or folder; None = the bundled demo model
    profile: Path | None = None  # None = the model's own profile
    backend: str = "cpu"
    threads: int = 2
    image_max_side: int | None = None
    constrained: bool = True
    # Benchmarks and fault tests only: hold the GIL at least this long per model
    # step, as MNN's forward() does on a real-size model.
    pace_ms: float = 0.0


# --- host -> worker ---------------------------------------------------------------------


@dataclass(frozen=True)
class Analyze:
    job_id: str
    image: DecodedImage
    source: str


@dataclass(frozen=True)
class Cancel:
    job_id: str


@dataclass(frozen=True)
class Shutdown:
    pass


Command = Union[Analyze, Cancel, Shutdown]


# --- worker -> host ---------------------------------------------------------------------


@dataclass(frozen=True)
class Ready:
    model_id: str
    model_revision: str
    backend: str
    load_ms: float
    question: str
    network_guard: bool  # the worker's process blocks outbound connections
    backend_note: str = ""  # why this backend (e.g. a GPU that disagreed with CPU)


@dataclass(frozen=True)
class LoadFailed:
    message: str


@dataclass(frozen=True)
class Started:
    job_id: str


@dataclass(frozen=True)
class Token:
    job_id: str
    text: str


@dataclass(frozen=True)
class Finished:
    job_id: str
    result: AnalysisResult
    network_blocked: int = 0  # outbound attempts the worker's guard has blocked so far


@dataclass(frozen=True)
class JobFailed:
    job_id: str
    error: str  # stable code: worker_died | engine_error | cancelled | ...
    message: str


@dataclass(frozen=True)
class WorkerRestarted:
    reason: str
    restarts: int


Event = Union[Ready, LoadFailed, Started, Token, Finished, JobFailed, WorkerRestarted]
