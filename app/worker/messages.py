"""Messages between the UI-side host and the worker. All picklable, all frozen."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.generation import RunPhase
from app.core.isolation import IsolationKind, IsolationLevel
from app.core.profile.checklist import Checklist
from app.core.profile.task import ProfileLabels, TaskProfile
from app.core.results import AnalysisResult, ChecklistResult

if TYPE_CHECKING:
    # Not imported at run time: a new worker child unpickles these messages before it isolates
    # itself, and numpy/OpenCV start threads on import, after which Linux refuses it a user namespace.
    from app.frames.intake import DecodedImage


class WorkerStatus(StrEnum):
    """Where a worker host is. Screens show the first four: each begins at STARTING, and the pipeline
    reports READY, FAILED and RESTARTING from Ready, LoadFailed and WorkerRestarted. As a StrEnum each
    is its string wherever it goes (pickled, compared, formatted, in JSON)."""

    STARTING = "starting"  # the first worker is loading its model
    READY = "ready"
    RESTARTING = "restarting"  # a worker died and its replacement is loading the model
    FAILED = "failed"  # given up (LoadFailed says why): no keyframe can be answered any more
    STOPPED = "stopped"  # `stop` was called


class JobError(StrEnum):
    """Why a job got no answer: stable codes, kept in session logs and printed by `analyze`."""

    WORKER_DIED = "worker_died"  # its worker died while on it
    WORKER_HUNG = "worker_hung"  # its worker made no progress for too long and was killed
    WORKER_UNAVAILABLE = "worker_unavailable"  # no worker can take it: given up, or stopped
    ENGINE_ERROR = "engine_error"  # the engine raised on it
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class WorkerSpec:
    """Everything a fresh worker needs to build its analyzer (sent to a new process)."""

    model: str | None = None  # model id or folder; None = the bundled demo model
    profile: Path | None = None  # None = the model's own profile
    backend: str = "cpu"
    threads: int = 2
    image_max_side: int | None = None
    constrained: bool = True
    # The hang watchdog's floor (see app.core.watchdog); lowered only by fault tests.
    stall_floor_s: float = 30.0
    # The load watchdog's floor (app.core.watchdog.load_limit_s); lowered only by fault tests.
    load_floor_s: float = 60.0
    # A checklist profile (several signals) is accepted and every signal is answered per keyframe; off, a
    # checklist file is refused in words (for callers that read one answer per image).
    checklists: bool = False
    # One signal of a checklist profile, asked alone with its whole prompt (`bench` compares it with all).
    signal: str | None = None


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


Command = Analyze | Cancel | Shutdown


# --- worker -> host ---------------------------------------------------------------------


@dataclass(frozen=True)
class Ready:
    model_id: str
    model_revision: str
    backend: str
    load_ms: float
    question: str
    backend_note: str = ""  # why this backend (e.g. a GPU that disagreed with CPU)
    answer_values: tuple[str, ...] = ()  # the profile's allowed observations
    model_note: str = ""  # e.g. the model declares no image_size: how images are fed instead; a temporary cache
    title: str = ""  # the profile's title, for people
    demo: bool = False  # the bundled demo model: trained on synthetic drawings only
    isolation: IsolationLevel = IsolationLevel.GUARDED  # of the process running the model
    isolation_how: str = ""  # what enforces it there, in one sentence
    isolation_kind: IsolationKind | None = None  # the same as a code the screens translate
    labels: tuple[tuple[str, ProfileLabels], ...] = ()  # the profile's words for people, per language
    # A checklist's signals with the answers each allows, in its order (empty: one signal, `answer_values`).
    signal_values: tuple[tuple[str, tuple[str, ...]], ...] = ()
    min_score: float | None = None  # a one-signal profile's score cut (a checklist's are in its file)
    profile_path: str = ""  # the profile file the worker asks from
    checklist: Checklist | None = None  # several signals asked per keyframe (None: one signal)
    profile: TaskProfile | None = None  # the one signal asked, whole (a checklist's first, with `checklist`)
    check_ms: float | None = None  # the answer to the built-in picture after loading: measured on this device
    # The model's own process at its largest so far (load and check), in bytes; None where the model runs in
    # the app's process (a thread: that figure would be the app's) or the platform cannot say.
    peak_memory_bytes: int | None = None
    threads: int = 0  # the CPU threads MNN was given: the asked number, or fewer where OMP_NUM_THREADS caps it


@dataclass(frozen=True)
class Loading:
    """The worker found its model and starts loading it: the host's load watchdog allows this much."""

    model_bytes: int
    loads: int  # how many loads' worth of work come before Ready (app.worker.serve.loads_needed)
    folder: str = ""  # the model's folder: a crash while loading names its files


@dataclass(frozen=True)
class Checking:
    """The model loaded; before Ready the worker checks it by answering a built-in image, and this
    step of that check began (None: the chat text, then the model run's phases). A worker that dies
    in the check is named by its step: a crash there is the model's, not a keyframe's."""

    phase: RunPhase | None
    verified: bool = False  # its files matched a pinned manifest: not damaged, then


@dataclass(frozen=True)
class LoadFailed:
    message: str


@dataclass(frozen=True)
class Started:
    job_id: str


@dataclass(frozen=True)
class JobPhase:
    """A job entered a phase; a checklist's `signal` as it begins to answer it."""

    job_id: str
    phase: RunPhase
    signal: str = ""


@dataclass(frozen=True)
class Token:
    job_id: str
    text: str


@dataclass(frozen=True)
class Finished:
    job_id: str
    result: AnalysisResult | ChecklistResult  # a checklist's only for a spec with `checklists`
    network_blocked: int = 0  # outbound attempts the worker's guard has blocked so far

    @property
    def answer(self) -> AnalysisResult:
        """The one answer of a one-question job: what the live app, eval and bench ask for."""
        if isinstance(self.result, ChecklistResult):
            raise TypeError("a checklist's answers where one answer was expected (WorkerSpec.checklists)")
        return self.result


@dataclass(frozen=True)
class JobFailed:
    job_id: str
    error: JobError
    message: str


@dataclass(frozen=True)
class WorkerRestarted:
    reason: str
    restarts: int


@dataclass(frozen=True)
class ListenerFailed:
    """The host's own listener raised on an event; the host went on. For logs and screens."""

    event: str
    message: str


Event = (
    Loading
    | Checking
    | Ready
    | LoadFailed
    | Started
    | JobPhase
    | Token
    | Finished
    | JobFailed
    | WorkerRestarted
    | ListenerFailed
)
