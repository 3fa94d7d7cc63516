"""The worker's side: build the analyzer once, then answer Analyze commands.

Shared by the process host (run in a child) and the thread host.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from app import logs
from app.core.backend_policy import BackendDecision, judge_backend
from app.core.generation import RunPhase
from app.core.profile.task import ProfileError
from app.engine.mnn_vlm import EngineError
from app.engine.model_folder import check_failed
from app.engine.stdio import capture_native_output, native_output_to
from app.frames.intake import read_image_file
from app.models.catalog import DEFAULT_MODEL_ID, ModelRef, resolve_model
from app.privacy.guard import ensure_installed
from app.privacy.isolation import Isolation
from app.storage.paths import REFERENCE_IMAGE
from app.storage.profile_file import load_checklist, load_profile
from app.worker.analyzer import Analyzer, AnalyzerSettings, default_profile_path
from app.worker.messages import (
    Analyze,
    Cancel,
    Checking,
    Command,
    Event,
    Finished,
    JobError,
    JobFailed,
    JobPhase,
    LoadFailed,
    Loading,
    Ready,
    Shutdown,
    Started,
    Token,
    WorkerSpec,
)

log = logging.getLogger("keyframe.worker")

Poll = Callable[[], "Command | None"]  # non-blocking: the next command or None
Wait = Callable[[], Command]  # blocking


def build_analyzer(spec: WorkerSpec, model: ModelRef, backend: str | None = None) -> Analyzer:
    path = spec.profile or default_profile_path(model)
    if spec.signal is not None:
        try:
            alone = load_checklist(path).signal(spec.signal)
        except KeyError:
            raise ProfileError(f"{path}: no signal {spec.signal!r}") from None
        return Analyzer(model, alone, _settings(spec, backend))
    checklist = load_checklist(path) if spec.checklists else None
    profile = checklist.signals[0] if checklist is not None else load_profile(path)
    several = None if checklist is None or checklist.is_single else checklist
    return Analyzer(model, profile, _settings(spec, backend), several)


def _settings(spec: WorkerSpec, backend: str | None) -> AnalyzerSettings:
    return AnalyzerSettings(
        backend=backend or spec.backend,
        threads=spec.threads,
        image_max_side=spec.image_max_side,
        constrained=spec.constrained,
    )


def loads_needed(spec: WorkerSpec) -> int:
    """The work before Ready, counted in model loads: checked_analyzer loads the model once, or three
    times (CPU, the other backend, then the one kept); the check on a built-in image counts as one more."""
    return (1 if spec.backend == "cpu" else 3) + 1


def check_model(analyzer: Analyzer, emit: Callable[[Event], None]) -> None:
    """The loaded model answers the built-in reference image as every keyframe will be asked (the same
    profile, checklist and decoding), so a model that loads but cannot answer (a damaged graph that
    crashes MNN, a tokenizer cut short, a chat template without the image) is refused here, naming
    its files, instead of failing every keyframe as if the images were bad. Its answer is not judged:
    a model may see the reference differently. Raises ModelCheckFailed; a native crash ends the
    process, and the host names the files from the last Checking step. The chat text it prefills
    stays in MNN's cache, so the first keyframe does not pay for it again."""
    verified = analyzer.model.manifest is not None  # Analyzer verified a pinned model's files before loading
    step: RunPhase | None = None

    def on_phase(phase: RunPhase | None) -> None:
        nonlocal step
        step = phase
        emit(Checking(phase, verified))

    on_phase(None)
    reference = read_image_file(REFERENCE_IMAGE)
    try:
        if analyzer.checklist is not None:
            analyzer.analyze_checklist(reference, "check", analyzer.checklist, on_phase=on_phase)
        else:
            analyzer.analyze(reference, "check", on_phase=on_phase)
    except Exception as exc:  # serve() logs it with its traceback
        what = str(exc) if isinstance(exc, EngineError) else f"{type(exc).__name__}: {exc}"
        raise ModelCheckFailed(check_failed(analyzer.model.folder, step, what, verified)) from exc


class ModelCheckFailed(Exception):
    """The loaded model could not answer the built-in image; the message is for users."""


def checked_analyzer(spec: WorkerSpec, model: ModelRef) -> tuple[Analyzer, BackendDecision]:
    """An analyzer on the requested backend if it agrees with CPU on the reference image, else on CPU."""
    if spec.backend == "cpu":
        return build_analyzer(spec, model), judge_backend("cpu", "", "")
    reference = read_image_file(REFERENCE_IMAGE)
    answers = {}
    error = ""
    for backend in ("cpu", spec.backend):
        # MNN says in its own output, and nowhere else, that it lacks a backend and runs CPU instead.
        with capture_native_output() as said:
            try:
                probe = build_analyzer(replace(spec, constrained=False), model, backend)
                try:
                    answers[backend] = probe.analyze(reference, "reference").answer.raw
                finally:
                    probe.close()
            except Exception as exc:  # a GPU backend that raises costs the check, not the model
                if backend == "cpu":
                    raise
                log.exception("the %s backend failed on the reference image", backend)
                error = f"{type(exc).__name__}: {exc}"
    missing = backend_missing(said.text)  # `said`: what MNN printed while loading and running the other backend
    decision = judge_backend(spec.backend, answers["cpu"], answers.get(spec.backend, ""), missing=missing, error=error)
    return build_analyzer(spec, model, decision.used), decision


def backend_missing(mnn_output: str) -> bool:
    """MNN's words when it has no such backend: "Can't Find type=3 backend, use 0 instead"."""
    return "Can't Find type=" in mnn_output and "backend, use 0 instead" in mnn_output


class _CommandsDuringJob:
    """The commands that arrive while one job runs: a Cancel for it, or a Shutdown.

    The engine checks its cancel flag before every step; `is_set` is that check,
    and it reads the commands queued since the last step (`read_pending`).
    Anything else queued meanwhile (a Cancel for another job) is dropped.
    """

    def __init__(self, job_id: str, poll: Poll) -> None:
        self.job_id = job_id
        self._poll = poll
        self.cancelled = False
        self.shutdown = False

    def read_pending(self) -> None:
        while (cmd := self._poll()) is not None:
            if isinstance(cmd, Cancel) and cmd.job_id == self.job_id:
                self.cancelled = True
            elif isinstance(cmd, Shutdown):
                self.shutdown = self.cancelled = True

    def is_set(self) -> bool:  # the engine's CancelFlag
        self.read_pending()
        return self.cancelled


# TEST-ONLY knob, never set by the app: benchmarks and fault tests set this environment
# variable (milliseconds) to make the worker hold the GIL that long per model phase and
# token, as MNN's forward() does on a real-size model. The worker reads it where it runs,
# so it crosses the spawn boundary (a child inherits the environment) and reaches a
# restarted child too; production messages carry no test knobs.
TEST_PACE_ENV = "KEYFRAME_TEST_PACE_MS"
# TEST-ONLY as well: the same, once, as the model loads (a load that hangs in native code).
TEST_LOAD_PACE_ENV = "KEYFRAME_TEST_LOAD_PACE_MS"


def _test_pace_ms(name: str = TEST_PACE_ENV) -> float:
    try:
        return max(0.0, float(os.environ.get(name) or 0.0))
    except ValueError:
        return 0.0


def _pace(ms: float) -> None:
    """Hold the GIL for `ms`, as MNN's forward() does on a real-size model.

    A call through ctypes.PyDLL keeps the GIL for its whole duration (a Python
    busy loop would hand it over every few ms and hide the very stall we emulate).
    """
    try:
        ctypes.PyDLL(None).usleep(int(ms * 1000))
    except (AttributeError, OSError):  # no usleep (Windows): a busy loop is the best stand-in
        end = time.perf_counter() + ms / 1000.0
        while time.perf_counter() < end:
            pass


def model_bytes(folder: Path, max_entries: int = 10_000) -> int:
    """What loading the model reads at most: the files under its folder, a linked file counted at its
    target's size (more time, never less, for the load). A folder that is not a model (a home folder,
    say) is counted only so far: the load refuses it anyway."""
    total = 0
    for count, path in enumerate(folder.rglob("*")):  # not into linked folders: no loops
        if count >= max_entries:
            break
        with contextlib.suppress(OSError):
            st = path.stat()
            total += st.st_size if stat.S_ISREG(st.st_mode) else 0
    return total


def peak_memory_bytes() -> int | None:
    """This process's largest resident size so far (None where the platform cannot say)."""
    try:
        import resource  # not on Windows
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)  # bytes on macOS, KiB elsewhere


def serve(
    spec: WorkerSpec,
    wait: Wait,
    poll: Poll,
    emit: Callable[[Event], None],
    isolation: Isolation,
    own_process: bool = False,
) -> None:
    """Loads the model, then answers commands until Shutdown; `isolation` is what already cut this process off.
    `own_process`: the model runs in a process of its own, so its peak memory is the model's."""
    guard = ensure_installed()  # before the model loads: nothing in here may reach the network
    log.info("network of the model's process: %s (%s)", isolation.level, isolation.how)
    try:
        model = resolve_model(spec.model)
        # The host's load watchdog starts from this; a crash while loading names the folder's files.
        emit(Loading(model_bytes(model.folder), loads_needed(spec), str(model.folder)))
        if load_pace_ms := _test_pace_ms(TEST_LOAD_PACE_ENV):
            _pace(load_pace_ms)
        # MNN's banner, and its own words on a model it cannot run, go to the log (kept there even
        # when MNN crashes): on the terminal the app says what went wrong, in one sentence.
        with native_output_to(logs.worker_log_file()):
            analyzer, decision = checked_analyzer(spec, model)
            load_ms = analyzer.load()
            checking = time.perf_counter()
            try:
                check_model(analyzer, emit)
            except ModelCheckFailed:
                analyzer.close()
                raise
            check_ms = (time.perf_counter() - checking) * 1000
    except Exception as exc:  # reported to the host, which shows it
        log.exception("the model could not be loaded")  # the traceback stays here; the host gets one line
        # The app's own errors are sentences for the user; a class name means nothing on a screen.
        emit(LoadFailed(str(exc) or type(exc).__name__))
        return
    log.info(
        "model %s@%s on %s loaded in %.0f ms (%s)",
        analyzer.model.id,
        analyzer.model.revision,
        decision.used,
        load_ms,
        decision.reason or "as asked",
    )
    emit(
        Ready(
            analyzer.model.id,
            analyzer.model.revision,
            decision.used,
            load_ms,
            analyzer.profile.ask(analyzer.settings.constrained)[0],
            decision.reason,
            tuple(analyzer.profile.values),
            "; ".join(note for note in (analyzer.folder.image_size_note, analyzer.engine.cache_note) if note),
            analyzer.profile.title,
            analyzer.model.id == DEFAULT_MODEL_ID,
            isolation.level,
            isolation.how,
            isolation.kind,
            analyzer.profile.labels,
            ()
            if analyzer.checklist is None
            else tuple((spec.signal, spec.values) for spec in analyzer.checklist.signals),
            analyzer.profile.min_score,
            str(spec.profile or default_profile_path(analyzer.model)),
            analyzer.checklist,
            analyzer.profile,
            check_ms,
            peak_memory_bytes() if own_process else None,
            analyzer.engine.threads,
        )
    )
    pace_ms = _test_pace_ms()
    try:
        while True:
            cmd = wait()
            if isinstance(cmd, Shutdown):
                return
            if not isinstance(cmd, Analyze):
                continue  # a Cancel for a job that already finished
            during = _CommandsDuringJob(cmd.job_id, poll)
            emit(Started(cmd.job_id))

            def on_token(piece: str, job_id: str = cmd.job_id) -> None:
                if pace_ms:
                    _pace(pace_ms)
                emit(Token(job_id, piece))

            def on_phase(phase: RunPhase, job_id: str = cmd.job_id) -> None:
                emit(JobPhase(job_id, phase))
                if pace_ms:
                    _pace(pace_ms)

            def on_signal(signal: str, job_id: str = cmd.job_id) -> None:
                emit(JobPhase(job_id, RunPhase.DECODE, signal))

            try:
                result = (
                    analyzer.analyze_checklist(
                        cmd.image, cmd.source, analyzer.checklist, on_token, during, on_phase, on_signal
                    )
                    if analyzer.checklist is not None
                    else analyzer.analyze(cmd.image, cmd.source, on_token=on_token, cancel=during, on_phase=on_phase)
                )
            except Exception as exc:
                log.exception("job %s failed in the engine", cmd.job_id)
                emit(JobFailed(cmd.job_id, JobError.ENGINE_ERROR, f"{type(exc).__name__}: {exc}"))
                continue
            if during.cancelled:
                emit(JobFailed(cmd.job_id, JobError.CANCELLED, "cancelled before the answer was complete"))
            else:
                emit(Finished(cmd.job_id, result, guard.blocked_count))
            if during.shutdown:
                return
    finally:
        analyzer.close()
