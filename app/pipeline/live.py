"""Frames in, practice events out, without ever making the frame source wait on the model.

One object owns the whole flow: it computes cheap frame statistics, lets the
sampler pick keyframes, keeps one keyframe in flight and one waiting, turns
worker answers into session events (appended to the log before anyone sees
them) and reports every change to one listener.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from app.core.asked import session_asked
from app.core.generation import RunPhase
from app.core.results import AnalysisResult, ChecklistResult
from app.core.rhythm import RhythmEstimator
from app.core.rhythm_figures import Rhythm
from app.core.sampler import Decision, KeyframeSampler, SamplerConfig, Selection
from app.core.session import (
    KeyframeFailed,
    KeyframeSkipped,
    PracticeEvent,
    RhythmSample,
    SessionEvent,
    SessionState,
    SkipReason,
    apply,
)
from app.core.slot import InFlightSlot
from app.frames.intake import DecodedImage
from app.frames.jpeg import REVIEW_SIDE, THUMB_SIDE, jpeg
from app.frames.metrics import frame_grey, grey_stats
from app.frames.motion import MotionFeature, MotionMeter
from app.logs import answers_logged
from app.session.store import SessionLog
from app.worker.hosts import make_host
from app.worker.messages import (
    Analyze,
    Event,
    Finished,
    JobFailed,
    JobPhase,
    ListenerFailed,
    LoadFailed,
    Ready,
    Started,
    Token,
    WorkerRestarted,
    WorkerSpec,
    WorkerStatus,
)

logger = logging.getLogger("keyframe.pipeline")
RHYTHM_EVERY_S = 1.0  # of frame time: the screen's rate changes about once a second, not per frame


@dataclass(frozen=True)
class Keyframe:
    keyframe_id: str
    t: float
    image: DecodedImage
    session: int = 0  # the session it belongs to; answers of an ended session are dropped

    @cached_property
    def thumbnail(self) -> bytes:
        """Its JPEG thumbnail, encoded once: the screen's inset while it is analysed, then the file kept
        beside each answer."""
        return jpeg(self.image.rgb, side=THUMB_SIDE)

    @cached_property
    def review_copy(self) -> bytes:
        """The copy the examiner enlarges from the review list: what was judged, at a size to see it."""
        return jpeg(self.image.rgb, side=REVIEW_SIDE)


@dataclass(frozen=True)
class PipelineUpdate:
    """What changed; the listener re-renders from `state`."""

    state: SessionState
    event: SessionEvent | None = None  # the last of `events`
    # Every event this update recorded: one, or a checklist keyframe's answers (one per signal, in order).
    events: tuple[SessionEvent, ...] = ()
    streaming_keyframe: str | None = None
    streamed_text: str = ""
    phase: RunPhase | None = None  # while a keyframe is analysed
    signal: str = ""  # the checklist signal being answered now ("" for one signal, or not yet known)
    worker_status: WorkerStatus | None = None  # when it changed: READY, FAILED or RESTARTING
    worker_message: str = ""
    effective_interval_s: float | None = None
    interval_stretched: bool = False  # the model needs longer per keyframe than the interval
    model_seconds: float | None = None  # median time per keyframe lately
    keyframe_thumb: bytes | None = None  # the JPEG thumbnail of the keyframe the worker just started on
    worker_blocked: int | None = None  # outbound attempts the worker's own guard has blocked
    log_error: str = ""  # the session log could not be written: events are only in memory
    rhythm: Rhythm | None = None  # the compression rhythm so far, about once a second of frames


@dataclass
class _Stream:
    keyframe_id: str
    signal: str = ""
    pieces: list[str] = field(default_factory=list)


def _log_event(event: SessionEvent) -> None:
    """One line per event; the answer itself only when the user allowed answers in the log."""
    if isinstance(event, PracticeEvent):
        timing = f"{event.timings.total_ms:.0f} ms"
        if answers_logged():
            logger.info(
                "%s answered %s (%s) in %s: %r",
                event.keyframe_id,
                event.observation,
                event.parse_reason,
                timing,
                event.raw,
            )
        else:
            logger.info("%s answered in %s", event.keyframe_id, timing)
    elif isinstance(event, KeyframeFailed):
        logger.warning("%s failed: %s (%s)", event.keyframe_id, event.error, event.message)
    elif isinstance(event, KeyframeSkipped):
        logger.debug("%s skipped: %s", event.keyframe_id, event.reason.value)


def _new_id() -> str:
    return uuid.uuid4().hex[:12]


def _file_sha256(path: Path) -> str:
    """The profile file's hash as it was asked ("" when it cannot be read now: the record still says
    every question)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


class LivePipeline:
    def __init__(
        self,
        spec: WorkerSpec,
        on_update: Callable[[PipelineUpdate], None],
        sampler: SamplerConfig | None = None,
        log: SessionLog | None = None,
        host_kind: str | None = None,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.sampler_config = sampler or SamplerConfig()
        self._sampler: KeyframeSampler[DecodedImage] = KeyframeSampler(self.sampler_config)
        self._slot: InFlightSlot[Keyframe] = InFlightSlot()
        self._log = log
        self._log_error = ""
        self.listener_errors = 0
        self._on_update = on_update
        self._wall = wall_clock
        self._lock = threading.RLock()
        self._idle = threading.Condition(self._lock)
        # Updates are queued under the state lock and delivered outside it, in order,
        # so a slow listener (a UI redraw) never holds up frames or the worker.
        self._outbox: deque[PipelineUpdate] = deque()
        self._deliver_lock = threading.Lock()
        self._state = SessionState()
        self._stream: _Stream | None = None
        self._jobs: dict[str, Keyframe] = {}
        self._count = 0
        # Every frame of a moving source feeds the compression rhythm (no model, no keyframe).
        self._motion = MotionMeter()
        self._rhythm = RhythmEstimator()
        # A live camera's motion frames (`offer_motion`) replace the pictures' movement once they come.
        self._motion_streamed = False
        self._frame_times_guessed = False  # this session's source times its frames by a guess
        self._rhythm_said_t: float | None = None  # frame time of the last sample recorded
        self._rhythm_fed_t: float | None = None  # of the last frame fed
        self._session = 0
        self._ready = threading.Event()
        self._failed: str | None = None
        self._model = ("", "", spec.backend)
        self._answer_values: dict[str, tuple[str, ...]] = {}  # signal -> the answers its profile allows
        self._ready_event: Ready | None = None
        self._constrained = spec.constrained
        self._host = make_host(spec, self._on_worker_event, host_kind)

    # --- lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        self._host.start()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """True once the model is loaded; False on timeout or a load failure."""
        return self._ready.wait(timeout) and self._failed is None

    @property
    def failure(self) -> str | None:
        return self._failed

    @property
    def state(self) -> SessionState:
        return self._state

    @property
    def model(self) -> Ready | None:
        """What the worker said when its model was loaded (None before that)."""
        return self._ready_event

    @property
    def worker_pid(self) -> int | None:
        """The worker child's pid (None for a thread host): for diagnostics and fault tests."""
        return getattr(self._host, "pid", None)

    def stop(self) -> None:
        self._host.stop()
        with self._idle:
            self._idle.notify_all()

    # --- sessions: the worker (and its loaded model) outlives them ---------------------

    def record_event(self, event: SessionEvent) -> None:
        """An event about this session from outside the worker (an examiner's verdict, the names): into
        its log, then into its state."""
        with self._lock:
            self._record(event)
        self._deliver()

    def begin_session(self, log: SessionLog | None, sampler: SamplerConfig | None = None) -> None:
        """A fresh session on the same worker: new log, sampler and state.

        A keyframe of the previous session still in the worker finishes there and
        its answer is dropped; the new session's first keyframe waits behind it.
        """
        with self._lock:
            self.sampler_config = sampler or self.sampler_config
            self._sampler = KeyframeSampler(self.sampler_config)
            self._log, self._log_error = log, ""
            self._state = SessionState()
            self._stream = None
            self._count = 0
            self._motion, self._rhythm = MotionMeter(), RhythmEstimator()
            self._motion_streamed = self._frame_times_guessed = False
            self._rhythm_said_t = self._rhythm_fed_t = None
            self._session += 1
            self._say_asked()
            self._notify()
        logger.info(
            "session %d begun (%s, every %.1f s)",
            self._session,
            getattr(log, "path", "no log"),
            self.sampler_config.interval_s,
        )
        self._deliver()

    def end_session(self) -> None:
        """The user stopped: the keyframe in flight is cancelled and recorded as stopped, a waiting one as
        superseded, so the log accounts for every keyframe selected."""
        with self._lock:
            self._say_last_rhythm()
            in_flight = self._slot.in_flight
            if in_flight is not None and in_flight.session == self._session:
                self._skip(in_flight, SkipReason.STOPPED)
            waiting = self._slot.drop_waiting()
            if waiting is not None:  # never dispatched: no job to forget
                self._skip(waiting, SkipReason.SUPERSEDED)
            self._log = None  # the caller closes it; late answers must not reach it
            self._session += 1
            self._stream = None
            self._notify(streaming_keyframe=None)
        logger.info("session ended: %d keyframes analysed", len(self._state.timeline))
        if in_flight is not None:
            self._host.cancel(self._job_id(in_flight))
        self._deliver()

    # --- frames -----------------------------------------------------------------------

    def offer_frame(self, t: float, image: DecodedImage) -> None:
        """Called by the frame source for every frame; returns at once."""
        if self._failed is not None:
            return  # the worker gave up (shown once); no keyframe could be answered
        grey = frame_grey(image.rgb)  # one grey copy for the sampler and the motion meter
        stats = grey_stats(grey)
        with self._lock:
            # A list of stills has no movement between them; a camera's motion frames, once they
            # come, carry its movement at a rate its pictures cannot.
            if not image.still and not self._motion_streamed:
                self._follow_rhythm(t, self._motion.measure_grey(grey))
            selection = self._sampler.offer(t, stats, image)
            if selection is not None:
                self._handle_selection(selection)
        self._deliver()

    def frame_times_guessed(self) -> None:
        """The source says its frame times are a guess (a video without a usable frame rate or
        times of its own): this session's rhythm samples say so, and so does every view of them."""
        with self._lock:
            self._frame_times_guessed = True

    def offer_motion(self, t: float, grey: np.ndarray) -> None:
        """A live camera's small grey frame at `t` (session time), at the camera's own rate: the rhythm's
        input from now on (the pictures' movement, a few a second, stops feeding it). Returns at once."""
        if self._failed is not None:
            return
        with self._lock:
            if not self._motion_streamed:
                self._motion_streamed = True
                self._motion = MotionMeter()  # no movement measured across the two kinds of frame
            meter, session = self._motion, self._session
        # Measured outside the lock: frames and the worker's answers must not wait on each other.
        motion = meter.measure_grey(grey)
        with self._lock:
            if session != self._session:
                return  # the session ended while this frame was measured
            self._follow_rhythm(t, motion)
        self._deliver()

    def _follow_rhythm(self, t: float, motion: MotionFeature) -> None:
        self._rhythm.follow(t, motion)
        self._rhythm_fed_t = t
        if self._rhythm_said_t is None or t - self._rhythm_said_t >= RHYTHM_EVERY_S:
            self._say_rhythm()

    def _say_rhythm(self) -> None:
        """The rhythm so far: a sample in the session (log and state) and the live figure on screen."""
        rhythm = self._rhythm.snapshot()
        self._rhythm_said_t = self._rhythm_fed_t
        # One update for both: the screen redraws once a second for the rhythm, not twice.
        sample = RhythmSample.of(
            rhythm, event_id=_new_id(), wall_time=self._wall(), frame_times_guessed=self._frame_times_guessed
        )
        self._record(sample, rhythm=rhythm)

    def _say_last_rhythm(self) -> None:
        """The source ended or the user stopped: frames fed since the last sample make one more, so the
        session's last sample holds its totals."""
        if self._rhythm_fed_t is not None and self._rhythm_fed_t != self._rhythm_said_t:
            self._say_rhythm()

    def flush(self) -> None:
        """The source ended: judge the last open interval."""
        with self._lock:
            self._say_last_rhythm()
            selection = self._sampler.flush()
            if selection is not None:
                self._handle_selection(selection)
        self._deliver()

    @property
    def busy(self) -> bool:
        with self._lock:
            return self._slot.in_flight is not None

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Blocks until no keyframe is in flight or waiting (headless runs, tests)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._idle:
            while self._slot.in_flight is not None or self._slot.waiting is not None:
                if self._failed is not None:
                    return False
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._idle.wait(remaining)
            return True

    def _handle_selection(self, selection: Selection[DecodedImage]) -> None:
        self._count += 1
        keyframe = Keyframe(f"kf-{self._count:05d}", selection.t, selection.payload, self._session)
        if selection.decision is Decision.UNCHANGED:
            self._skip(keyframe, SkipReason.UNCHANGED)
            return
        dispatch, superseded = self._slot.submit(keyframe)
        if superseded is not None:
            self._sampler.settle(superseded.t, answered=False)
            self._skip(superseded, SkipReason.SUPERSEDED)
        if dispatch is not None:
            self._dispatch(dispatch)

    def _skip(self, keyframe: Keyframe, reason: SkipReason) -> None:
        self._record(
            KeyframeSkipped(
                event_id=_new_id(),
                t=keyframe.t,
                wall_time=self._wall(),
                keyframe_id=keyframe.keyframe_id,
                reason=reason,
            )
        )

    @staticmethod
    def _job_id(keyframe: Keyframe) -> str:
        # Unique across sessions on one worker: keyframe ids restart with each session.
        return f"s{keyframe.session}/{keyframe.keyframe_id}"

    def _dispatch(self, keyframe: Keyframe) -> None:
        job_id = self._job_id(keyframe)
        self._jobs[job_id] = keyframe
        self._host.submit(Analyze(job_id, keyframe.image, keyframe.keyframe_id))

    # --- worker events (reader thread) -------------------------------------------------

    def _on_worker_event(self, event: Event) -> None:
        with self._lock:
            if isinstance(event, Ready):
                self._model = (event.model_id, event.model_revision, event.backend)
                self._answer_values = dict(event.signal_values)
                self._answer_values.setdefault("", event.answer_values)  # a one-signal profile's
                self._ready_event = event
                self._ready.set()
                self._say_asked()
                notes = "; ".join(n for n in (event.backend_note, event.model_note) if n)
                note = f" ({notes})" if notes else ""
                self._notify(
                    worker_status=WorkerStatus.READY,
                    worker_message=f"{event.model_id} on {event.backend} loaded in {event.load_ms:.0f} ms{note}",
                )
            elif isinstance(event, LoadFailed):
                self._failed = event.message
                self._ready.set()
                self._idle.notify_all()
                self._notify(worker_status=WorkerStatus.FAILED, worker_message=event.message)
            elif isinstance(event, WorkerRestarted):
                self._notify(
                    worker_status=WorkerStatus.RESTARTING, worker_message=f"worker restarted after {event.reason}"
                )
            elif isinstance(event, ListenerFailed):
                self._notify(worker_message=f"an update could not be shown ({event.message})")
            elif isinstance(event, (Started, JobPhase, Token, Finished, JobFailed)):
                self._job_event(event)
        self._deliver()

    def _job_event(self, event: Started | JobPhase | Token | Finished | JobFailed) -> None:
        keyframe = self._jobs.get(event.job_id)
        if keyframe is None or keyframe.session != self._session:
            if isinstance(event, (Finished, JobFailed)):  # a stopped session's last keyframe: dropped
                self._jobs.pop(event.job_id, None)
                self._advance()
            return
        kid = keyframe.keyframe_id
        if isinstance(event, Started):
            self._stream = _Stream(kid)
            self._notify(streaming_keyframe=kid, keyframe_thumb=keyframe.thumbnail)
        elif isinstance(event, JobPhase):
            if event.signal:  # a checklist's next answer: its tokens stream on their own
                self._stream = _Stream(kid, signal=event.signal)
            signal = self._stream.signal if self._stream is not None else ""
            self._notify(streaming_keyframe=kid, phase=event.phase, signal=signal)
        elif isinstance(event, Token):
            if self._stream is not None and self._stream.keyframe_id == kid:
                self._stream.pieces.append(event.text)
                text = "".join(self._stream.pieces)
                self._notify(streaming_keyframe=kid, streamed_text=text, signal=self._stream.signal)
        elif isinstance(event, Finished):
            self._notify(worker_blocked=event.network_blocked)
            self._finish(keyframe, *self._practice_events(keyframe, event.result))
        else:
            failed = KeyframeFailed(
                event_id=_new_id(),
                t=keyframe.t,
                wall_time=self._wall(),
                keyframe_id=kid,
                error=event.error,
                message=event.message,
                source=keyframe.image.name,
            )
            self._finish(keyframe, failed)

    def _practice_events(
        self, keyframe: Keyframe, result: AnalysisResult | ChecklistResult
    ) -> tuple[PracticeEvent, ...]:
        """One event per answer: a checklist's keyframe gives one per signal, each reviewed on its own."""
        if isinstance(result, AnalysisResult):
            return (self._practice_event(keyframe, result, self._answer_values.get("", ())),)
        gated_by = result.gate if result.gate_open is False else None
        return tuple(
            self._practice_event(
                keyframe,
                answer,
                self._answer_values.get(answer.signal, ()),
                gated_by if answer.signal != gated_by else None,
            )
            for answer in result.results
        )

    def _practice_event(
        self, keyframe: Keyframe, result: AnalysisResult, allowed: tuple[str, ...], gated_by: str | None = None
    ) -> PracticeEvent:
        model_id, revision, backend = self._model
        return PracticeEvent(
            event_id=_new_id(),
            t=keyframe.t,
            wall_time=self._wall(),
            keyframe_id=keyframe.keyframe_id,
            signal=result.signal,
            observation=result.observation,
            parse_status=result.parse_status,
            parse_reason=result.answer.reason.value,
            raw=result.answer.raw,
            timings=result.timings,
            model_id=result.model_id or model_id,
            model_revision=result.model_revision or revision,
            backend=backend,
            model_score=result.model_score,
            profile_id=result.profile_id,
            allowed_values=allowed,
            source=keyframe.image.name,
            still=keyframe.image.still,
            gated_by=gated_by or "",
            withheld=result.answer.withheld or "",
        )

    def _finish(self, keyframe: Keyframe, *events: SessionEvent) -> None:
        self._jobs.pop(self._job_id(keyframe), None)
        self._sampler.settle(keyframe.t, answered=isinstance(events[0], PracticeEvent))
        self._stream = None
        answers = [e for e in events if isinstance(e, PracticeEvent)]
        if answers and self._log is not None:
            self._save_thumbnails(self._log, answers, keyframe)
        self._record(*events)
        self._advance()

    @staticmethod
    def _save_thumbnails(log: SessionLog, answers: list[PracticeEvent], keyframe: Keyframe) -> None:
        """Before the answers are recorded, so a screen showing one finds its picture (each answer of a
        checklist's keyframe has the thumbnail under its own id: reviews and screens look answers up by
        id; the review copy, larger, is kept once, under the first answer's id, which names the
        keyframe's row)."""
        try:
            for answer in answers:
                log.save_thumbnail(answer.event_id, keyframe.thumbnail)
            log.save_thumbnail(answers[0].event_id, keyframe.review_copy, large=True)
        except OSError as exc:  # a full disk: the answers are kept, only their picture is missing
            logger.warning("keyframe thumbnail not saved (%s)", exc.strerror or exc)

    def _say_asked(self) -> None:
        """The session's first line, once the worker has said what it asks: the profile, every question
        and the model, so the session is read with them later whatever the settings are then."""
        ready = self._ready_event
        if ready is None or ready.profile is None or self._state.asked is not None:
            return
        model_id, model_revision, _ = self._model
        self._record(
            session_asked(
                ready.profile,
                ready.checklist,
                constrained=self._constrained,
                event_id=_new_id(),
                wall_time=self._wall(),
                profile_sha256=_file_sha256(Path(ready.profile_path)) if ready.profile_path else "",
                model_id=model_id,
                model_revision=model_revision,
            )
        )

    def _advance(self) -> None:
        following = self._slot.done()
        if following is not None:
            self._dispatch(following)
        self._idle.notify_all()

    def _record(self, *events: SessionEvent, rhythm: Rhythm | None = None) -> None:
        # On disk (fsynced) before the UI can show them: a crash loses nothing that was seen.
        # A log that cannot be written (disk full) must not stop the session: the event is
        # kept in memory and the failure is shown with every update until a write succeeds.
        # A checklist keyframe's answers are shown together, in one update, once all are on disk.
        for event in events:
            if self._log is not None:
                try:
                    self._log.append(event)
                    self._log_error = ""
                except OSError as exc:
                    self._log_error = f"the session log cannot be written ({exc.strerror or exc})"
                    logger.error("%s: %s", self._log_error, event.event_id)
            self._state = apply(self._state, event)
            _log_event(event)
        self._notify(events=events, rhythm=rhythm)

    def _notify(
        self,
        *,
        events: tuple[SessionEvent, ...] = (),
        streaming_keyframe: str | None = None,
        streamed_text: str = "",
        phase: RunPhase | None = None,
        signal: str = "",
        worker_status: WorkerStatus | None = None,
        worker_message: str = "",
        keyframe_thumb: bytes | None = None,
        worker_blocked: int | None = None,
        rhythm: Rhythm | None = None,
    ) -> None:
        """Queue an update: what changed (the arguments) plus the state and timing every update carries."""
        interval = self.sampler_config.interval_s
        update = PipelineUpdate(
            state=self._state,
            event=events[-1] if events else None,
            events=events,
            streaming_keyframe=streaming_keyframe,
            streamed_text=streamed_text,
            phase=phase,
            signal=signal,
            worker_status=worker_status,
            worker_message=worker_message,
            effective_interval_s=self._slot.effective_interval(interval),
            interval_stretched=self._slot.stretched(interval),
            model_seconds=self._slot.model_seconds(),
            keyframe_thumb=keyframe_thumb,
            worker_blocked=worker_blocked,
            log_error=self._log_error,
            rhythm=rhythm,
        )
        self._outbox.append(update)

    def _deliver(self) -> None:
        with self._deliver_lock:
            while True:
                with self._lock:
                    if not self._outbox:
                        return
                    update = self._outbox.popleft()
                try:
                    self._on_update(update)
                except Exception:
                    # A listener's failure is its own: frames and answers go on.
                    self.listener_errors += 1
                    logger.exception("the pipeline listener failed")
