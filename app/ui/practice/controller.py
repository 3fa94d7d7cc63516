"""The practice screen's state and work, shared by every browser tab of one app. No Flet imports.

One controller per running app owns one LivePipeline, so one worker process and
one loaded model serve every tab (a 1.5 GB model must not load once per tab);
every tab sees the same session. A practice run is a session: its events go to
the same append-only log the CLI writes, and an examiner confirms or corrects
answers into it. Frames come from a source thread (video file, stills, a camera
the app opens) or, for a browser or phone camera, from the view one picture at a
time; the UI never calls the model itself.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from app.core.generation import RunPhase
from app.core.isolation import IsolationKind
from app.core.notice import Notice
from app.core.observable import Observable
from app.core.person_names import NameRefused
from app.core.profile.checklist import Checklist
from app.core.profile.task import ProfileLabels
from app.core.rhythm_figures import Rhythm
from app.core.sampler import DEFAULT_INTERVAL_S, SamplerConfig
from app.core.session import CAMERA_SOURCE, KeyframeFailed, PracticeEvent, SessionState
from app.frames.intake import DecodedImage, ImageRejected, decode_image_bytes
from app.frames.jpeg import jpeg
from app.frames.motion_stream import MotionFrame
from app.frames.sources import FrameSource, OpenCvCameraSource, SourceEnded, StillsSource, VideoFileSource, refusal
from app.frames.video import VideoError
from app.pipeline.live import LivePipeline, PipelineUpdate
from app.session.naming import named
from app.session.review import ReviewError, Verdict, make_reviews, record_reviews
from app.session.store import SessionLog, load_session, new_session_id, read_thumbnail
from app.storage.paths import EXAMPLES
from app.ui.practice.latest_only import LatestOnly
from app.worker.messages import WorkerSpec, WorkerStatus

logger = logging.getLogger("keyframe.ui")


class SourceKind(StrEnum):
    """What a session reads."""

    CAMERA = "camera"
    VIDEO = "video"
    IMAGE = "image"  # one still
    FOLDER = "folder"  # several stills
    TESTERS = "testers"  # the Testers screen's images


RESTART_QUIET_S = 0.4  # settings clicks closer than this restart the worker once
PREVIEW_PERIOD_S = 0.25  # at most 4 preview frames a second: enough to see, cheap to send
NO_IMAGE = Notice("no_image_chosen", error=True)


@dataclass(frozen=True)
class PracticeState:
    worker_status: WorkerStatus = WorkerStatus.STARTING
    worker_message: str = ""
    model_id: str = ""
    model_asked: str = ""  # the model the worker was asked for: an id, a folder's name ("" for the demo)
    model_is_folder: bool = False  # it was asked for a folder (not a model the store can download)
    demo_model: bool = False
    title: str = ""
    question: str = ""
    answer_values: tuple[str, ...] = ()
    min_score: float | None = None  # the profile's score cut (app.evaluation.score_cut), if it saved one
    profile_path: str = ""  # the profile file the worker asks from
    running: bool = False
    source_label: str = ""
    source_kind: SourceKind | None = None  # what the running session reads
    camera_tab: str = ""  # the page whose camera feeds the session ("" for any other source)
    interval_s: float = DEFAULT_INTERVAL_S
    session_id: str | None = None
    session: SessionState = field(default_factory=SessionState)
    latest: PracticeEvent | None = None  # the newest answer, for the result card
    latest_failure: KeyframeFailed | None = None  # the newest keyframe that got no answer
    analysing: str | None = None  # the keyframe in the worker
    phase: RunPhase | None = None
    analysing_signal: str = ""  # a checklist's signal being answered now
    streamed: str = ""
    analysing_thumb: bytes | None = None  # JPEG of the keyframe being analysed
    preview: bytes | None = None  # JPEG of the newest frame
    model_seconds: float | None = None
    interval_stretched: bool = False
    effective_interval_s: float | None = None
    log_error: str = ""
    # Keys and values, worded by each tab in its own language (app.core.notice):
    notice: tuple[Notice, ...] = ()  # how the last source ended (skipped files, damaged frames)
    error: tuple[Notice, ...] = ()  # what stopped the user: camera denied, file too large, video unreadable
    blocked: int = 0  # outbound connections stopped by the guards (app + worker)
    isolation: str = ""  # the model worker's network isolation: os-isolated | guarded ("" before it is ready)
    isolation_how: str = ""  # what enforces it, in one sentence
    isolation_kind: IsolationKind | None = None  # the same as a code the screens translate
    labels: tuple[tuple[str, ProfileLabels], ...] = ()  # the profile's title/question/answers per language
    checklist: Checklist | None = None  # a profile of several signals, asked together on each keyframe
    profile_models: tuple[str, ...] = ()  # the models its profile was written for (empty: it names none)
    rhythm: Rhythm | None = None  # the compression rhythm of a camera or video session, from every frame
    backend_asked: str = ""  # the backend the worker was asked for (its spec)
    backend: str = ""  # the backend the worker uses after its self-check ("" before it is ready)
    backend_note: str = ""  # why: e.g. a GPU that disagreed with CPU on the reference image
    check_ms: float | None = None  # the loaded model's answer to the built-in picture, on this device
    peak_memory_bytes: int | None = None  # the model's own process at its largest (None: not measured apart)
    trainee: str = ""  # who practises: named on the running session and on each next one
    examiner: str = ""


def _remove(folder: Path | None) -> None:
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def _is_folder(spec: WorkerSpec) -> bool:
    return bool(spec.model) and Path(spec.model or "").is_dir()


def _model_name(spec: WorkerSpec) -> str:
    """How the screens name the model a worker is asked for: its id, or its folder's name."""
    return Path(spec.model).name if spec.model and _is_folder(spec) else spec.model or ""


def clean_card(state: PracticeState) -> PracticeState:
    """No answer, frame or failure of an earlier session: what a new session, an error or a new tab shows."""
    return replace(
        state,
        latest=None,
        latest_failure=None,
        analysing=None,
        streamed="",
        phase=None,
        analysing_signal="",
        analysing_thumb=None,
        preview=None,
        rhythm=None,
    )


class PracticeController:
    def __init__(
        self,
        spec: WorkerSpec,
        sessions_dir: Path,
        host_kind: str | None = None,
        restart_quiet_s: float = RESTART_QUIET_S,
    ) -> None:
        self._sessions_dir = sessions_dir
        self._lock = threading.RLock()
        self._states = Observable(
            PracticeState(backend_asked=spec.backend, model_asked=_model_name(spec), model_is_folder=_is_folder(spec)),
            "the Practice screen",
        )
        self._spec = spec
        self._host_kind = host_kind
        self._generation = 0  # which pipeline is current: updates of a replaced one are dropped
        self._wanted = spec  # the newest settings' worker; `_spec` is the one running
        self._closed = False
        self._restarter: LatestOnly[WorkerSpec] = LatestOnly(self._swap_worker, restart_quiet_s, "worker-restart")
        self._reload = False  # the next swap replaces the worker even on the same spec
        self._pipeline = LivePipeline(spec, self._listener(0), host_kind=host_kind)
        self._log: SessionLog | None = None
        self._source: FrameSource | None = None
        self._discard: Path | None = None  # an uploaded copy to remove when the session ends
        self._last_preview = 0.0
        self._camera_started: float | None = None
        self._motion_offset: float | None = None  # session time minus the camera page's clock
        self._guard_blocked = 0
        self._worker_blocked = 0
        self._started = False

    # --- lifecycle and listeners -------------------------------------------------------------

    @property
    def state(self) -> PracticeState:
        return self._states.value

    def start(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
        self._pipeline.start()

    def shutdown(self) -> None:
        with self._lock:
            self._closed = True
        self._restarter.stop()
        self.stop_session()
        self._pipeline.stop()

    def wait_settled(self, timeout: float | None = None) -> bool:
        """True once the newest settings' worker has replaced the old one (it may still be loading)."""
        return self._restarter.wait_idle(timeout)

    def subscribe(self, listener: Callable[[PracticeState], None]) -> None:
        """`listener` gets the state now, then every later one, in order (app.core.observable)."""
        self._states.subscribe(listener)

    def unsubscribe(self, listener: Callable[[PracticeState], None]) -> None:
        self._states.unsubscribe(listener)

    @property
    def _state(self) -> PracticeState:
        return self._states.value

    def _update(self, change: Callable[[PracticeState], PracticeState]) -> None:
        self._states.update(change)

    # --- settings ------------------------------------------------------------------------------

    def set_interval(self, seconds: float) -> None:
        SamplerConfig(interval_s=seconds)  # validates 2–5 s
        self._update(lambda s: replace(s, interval_s=seconds))

    def apply_settings(self, spec: WorkerSpec, interval_s: float) -> None:
        """New settings: a new worker only when `spec` differs from the current one, and the default interval.

        A running session is stopped at once (its keyframes belong to the old model); it stays on
        screen and can still be reviewed, and the next session starts on the new worker. The worker
        is replaced on the restarter's thread once the settings are quiet for `restart_quiet_s`: the
        caller (a click on the page's loop) never waits for a worker to stop, and three clicks on
        "more threads" restart it once. The old worker is stopped before the new one starts, so two
        models are never in memory at once. The interval applies to the next session; a running one
        keeps the interval it began with.
        """
        SamplerConfig(interval_s=interval_s)  # validates 2–5 s before anything is stopped
        with self._lock:
            wanted, self._wanted = self._wanted, spec
        if spec != wanted:
            self.stop_session()
            self._restarter.submit(spec)  # back to the running worker's spec: nothing is restarted
        if not self._state.running:
            self.set_interval(interval_s)

    def reload_worker(self) -> None:
        """A new worker on the same spec: a profile file it names was changed in place (a score cut kept)."""
        with self._lock:
            self._reload = True
            spec = self._wanted
        self.stop_session()
        self._restarter.submit(spec)

    def _swap_worker(self, spec: WorkerSpec) -> None:
        """On the restarter's thread: the newest settings' worker replaces the current one."""
        with self._lock:
            reload, self._reload = self._reload, False
            if (spec == self._spec and not reload) or self._closed:
                return
        self.stop_session()  # a session begun while the settings were settling ran on the old worker
        with self._lock:
            # The last session asked the old model and questions: its answer, rhythm and picture leave the
            # card (under the new question they would read as its answers), and the news says where it is.
            ended = bool(self._state.session_id and self._state.session.timeline)
            old = self._pipeline
            self._generation += 1
            self._spec = spec
            self._pipeline = LivePipeline(spec, self._listener(self._generation), host_kind=self._host_kind)
            started = self._started
        old.stop()
        self._update(
            lambda s: replace(
                clean_card(s) if ended else s,
                notice=(Notice("settings_changed"),) if ended else s.notice,
                worker_status=WorkerStatus.STARTING,
                worker_message="",
                model_id="",
                model_asked=_model_name(spec),
                model_is_folder=_is_folder(spec),
                demo_model=False,
                backend_asked=spec.backend,
                backend="",
                backend_note="",
                check_ms=None,
                peak_memory_bytes=None,
            )
        )
        if started:
            self._pipeline.start()

    def _listener(self, generation: int) -> Callable[[PipelineUpdate], None]:
        def on_update(update: PipelineUpdate) -> None:
            if generation == self._generation:  # a replaced worker's last words are not this screen's
                self._on_update(update)

        return on_update

    def report_error(self, notice: Notice) -> None:
        """Something the user tried could not start (a file over the limit, no camera). The last
        session's answer goes: beside an error it would read as the answer to what was tried."""
        self._update(lambda s: replace(s if s.running else clean_card(s), error=(notice,)))

    def network_blocked(self, app_count: int) -> None:
        self._guard_blocked = app_count
        self._update(lambda s: replace(s, blocked=self._guard_blocked + self._worker_blocked))

    # --- sessions ------------------------------------------------------------------------------

    def start_video(self, name: str, path: Path, discard: Path | None = None) -> None:
        """`discard`: the uploaded copy's folder, removed when the session ends, however it ends (a video
        of the trainee must not stay in a cache)."""
        try:
            source: FrameSource = VideoFileSource(path, name)
        except (VideoError, OSError) as exc:
            logger.info("video %s refused: %s", name, exc)  # the precise words (with the path) for the log
            said = refusal(exc, name)
            _remove(discard)
            self._update(lambda s: replace(s, error=(said,)))
            return
        self._begin(source, f"video · {name}", SourceKind.VIDEO)
        with self._lock:
            self._discard = discard

    @property
    def playing_upload(self) -> Path | None:
        """The uploaded copy the running video session reads (another tab's upload must not remove it)."""
        return self._discard

    def start_stills(self, images: Sequence[tuple[str, bytes]], label: str) -> None:
        """Each image is one keyframe; one that cannot be used (too large, damaged) is that file's error."""
        if not images:
            self._update(lambda s: replace(s, error=(NO_IMAGE,)))
            return
        self._begin(
            StillsSource(images, self._state.interval_s),
            label,
            SourceKind.IMAGE if len(images) == 1 else SourceKind.FOLDER,
        )

    def try_examples(self) -> None:
        """The example pictures shipped with the app as a session of stills: a demo with no file at hand."""
        try:
            images = [(path.name, path.read_bytes()) for path in sorted(EXAMPLES.glob("*.jpg"))]
        except OSError:
            images = []
        self.start_stills(images, "examples")

    def start_evaluation(self, images: Sequence[tuple[str, bytes]], label: str) -> float | None:
        """Testers' mode: like `start_stills`, but no image is skipped as "unchanged" (two similar
        test images must both be scored). Each answer and failure names the image it came from
        (`source`). Returns the interval used; None when nothing started."""
        if not images:
            self._update(lambda s: replace(s, error=(NO_IMAGE,)))
            return None
        self._begin(None, label, SourceKind.TESTERS)
        interval = self._state.interval_s
        with self._lock:
            log = self._log
        # The session is still empty: begun again with a sampler that never judges a keyframe unchanged.
        self._pipeline.begin_session(log, SamplerConfig(interval_s=interval, change_threshold=0.0))
        source = StillsSource(images, interval)
        with self._lock:
            self._source = source
        source.start(PipelineSink(self._pipeline, self._frame), self._source_ended)
        return interval

    def prepare_camera(self) -> None:
        """Start was pressed for a camera, which takes a moment to open: the previous session's answer
        and frame go at once, not when the first picture arrives."""
        self.stop_session()
        self._update(lambda s: replace(clean_card(s), error=(), notice=()))

    def start_camera(self, label: str = "camera", tab: str = "") -> None:
        """Frames will arrive through `offer_picture` from the page `tab` (a browser or phone camera)."""
        self._begin(None, label, SourceKind.CAMERA, camera_tab=tab)
        with self._lock:
            self._camera_started = time.monotonic()
            self._motion_offset = None

    def camera_tab_gone(self, tab: str) -> bool:
        """The page whose camera fed the session was reloaded, closed or lost its connection: the
        session ends (saved) and every tab says why, with no last frame or answer left looking current
        (the session's timeline and reviews stay). True when that ended a session."""
        with self._lock:
            owned = self._state.running and self._state.camera_tab == tab and tab != ""
        if not owned:
            return False
        self.stop_session()
        self._update(lambda s: replace(clean_card(s), notice=(Notice("camera_tab_gone"),)))
        return True

    def start_opencv_camera(self, index: int = 0) -> None:
        """A camera this process opens itself (packaged desktop apps); its frames feed the preview."""
        self._begin(OpenCvCameraSource(index), "camera on this computer", SourceKind.CAMERA)

    def offer_picture(self, data: bytes) -> None:
        """One camera picture (JPEG) from the view; ignored when no camera session runs."""
        if self._camera_started is None:
            return
        try:
            image = decode_image_bytes(data, name=CAMERA_SOURCE)
        except ImageRejected as exc:
            said = refusal(exc, "camera")
            self._update(lambda s: replace(s, error=(said,)))
            return
        self._frame(time.monotonic() - self._camera_started, image)

    def offer_motion(self, tab: str, frame: MotionFrame) -> None:
        """A small grey frame of the live camera at its own rate (the page's script, or a phone's image
        stream) for the compression rhythm; dropped unless `tab`'s camera session runs. The frame's own
        clock (the page's) is put on the session's at its first frame, so delivery jitter does not
        become timing jitter."""
        with self._lock:
            started = self._camera_started
            if started is None or self._state.camera_tab != tab:
                return
            if self._motion_offset is None:
                self._motion_offset = (time.monotonic() - started) - frame.t
            t = frame.t + self._motion_offset
        self._pipeline.offer_motion(t, frame.grey)

    def camera_failed(self, notice: Notice) -> None:
        self.stop_session()
        # No earlier session's answer or picture under a camera error.
        self._update(lambda s: replace(clean_card(s), error=(notice,)))

    def _begin(self, source: FrameSource | None, label: str, kind: SourceKind, camera_tab: str = "") -> None:
        self.stop_session()
        session_id = new_session_id()
        self._sessions_dir.mkdir(parents=True, exist_ok=True)
        log = SessionLog(self._sessions_dir / f"{session_id}.jsonl")
        with self._lock:
            self._log, self._source = log, source
        self._update(
            lambda s: replace(
                clean_card(s),
                running=True,
                source_label=label,
                source_kind=kind,
                camera_tab=camera_tab,
                session_id=session_id,
                session=SessionState(),
                notice=(),
                error=(),
                log_error="",
            )
        )
        # The first usable frame is answered at once, then one keyframe per interval.
        self._pipeline.begin_session(log, SamplerConfig(interval_s=self._state.interval_s, first_at_once=True))
        trainee, examiner = self._state.trainee, self._state.examiner
        if trainee or examiner:
            self._pipeline.record_event(named(trainee, examiner))
        if source is not None:
            source.start(PipelineSink(self._pipeline, self._frame), self._source_ended)

    def stop_session(self) -> None:
        with self._lock:
            source, log, discard = self._source, self._log, self._discard
            self._source, self._log, self._discard = None, None, None
            self._camera_started = None
        if source is not None:
            source.stop()
        _remove(discard)
        if log is not None:
            self._pipeline.end_session()
            log.close()
        if self._state.running:
            self._update(
                lambda s: replace(
                    s, running=False, camera_tab="", analysing=None, streamed="", phase=None, analysing_signal=""
                )
            )

    def pause_for_background(self) -> bool:
        """The app went to the background on a phone: the session stops (saved, as by Stop) and the
        keyframe in flight is cancelled, so no model call starts while hidden (MNN's Metal backend
        crashes in the background, MNN issue #4292). True when a session was running."""
        if not self._state.running:
            return False
        self.stop_session()
        self._update(lambda s: replace(s, notice=(Notice("paused_in_background"),)))
        return True

    def _source_ended(self, ended: SourceEnded) -> None:
        with self._lock:
            if self._source is None:
                return  # stopped by the user
        kind = self._state.source_kind
        self.stop_session()
        said = () if ended.by_user else ended.said
        if ended.ok and not ended.by_user and kind is SourceKind.VIDEO:  # said, or the end looks like nothing happened
            said = (Notice("video_finished"), *said)
        self._update(lambda s: replace(s, notice=said if ended.ok else (), error=() if ended.ok else said))

    # --- frames --------------------------------------------------------------------------------

    def _frame(self, t: float, image: DecodedImage) -> None:
        self._pipeline.offer_frame(t, image)
        now = time.monotonic()
        if now - self._last_preview >= PREVIEW_PERIOD_S:
            self._last_preview = now
            self._update(lambda s: replace(s, preview=jpeg(image.rgb)))

    # --- examiner ------------------------------------------------------------------------------

    def set_names(self, trainee: str, examiner: str) -> str | None:
        """Who practises and who examines, for the running session (recorded in its log) and each next one:
        None when kept, else the reason code of a name refused."""
        try:
            event = named(trainee, examiner)
        except NameRefused as refused:
            return refused.reason
        self._update(lambda s: replace(s, trainee=event.trainee, examiner=event.examiner))
        if self._state.running:
            self._pipeline.record_event(event)
        return None

    def thumbnail(self, event_id: str, large: bool = False) -> bytes | None:
        """The keyframe thumbnail of an answer of the session on screen, or with `large` its review copy
        (None: none was kept)."""
        session_id = self._state.session_id
        return read_thumbnail(self._sessions_dir / f"{session_id}.jsonl", event_id, large) if session_id else None

    def review(self, verdicts: Sequence[Verdict], revise: bool = False) -> Notice | None:
        """Record the examiner's verdicts on answers of the session on screen (one answer's, a checklist
        keyframe's, or every waiting one's), each with its own note: all of them, or none and why
        (words in strings_sessions).

        Also after Stop: the session stays on screen, and its log takes the review.
        """
        session_id = self._state.session_id
        if session_id is None or not verdicts:
            return Notice("review_refused_no_event", error=True)
        if self._state.running:
            try:
                events = make_reviews(self._state.session, verdicts, revise=revise)
            except ReviewError as exc:
                return exc.notice()
            for event in events:
                self._pipeline.record_event(event)  # into the open log, then onto the screen
            return None
        # A stopped session may be reviewed from Sessions or the CLI too: checked against the log as
        # it is now, under the lock they all take, and shown as the log now reads.
        path = self._sessions_dir / f"{session_id}.jsonl"
        refused: Notice | None = None
        try:
            try:
                record_reviews(path, verdicts, revise=revise)
            except ReviewError as exc:
                refused = exc.notice()  # e.g. reviewed elsewhere meanwhile: the screen then shows that verdict
            reviewed = load_session(path).state
        except OSError as exc:
            return Notice("notice_review_refused", (("detail", f"{path.name}: {exc.strerror or exc}"),), error=True)
        self._update(lambda s: replace(s, session=reviewed) if s.session_id == session_id else s)
        return refused

    # --- pipeline updates (delivery thread) ----------------------------------------------------

    def _on_update(self, update: PipelineUpdate) -> None:
        model = self._pipeline.model if update.worker_status == WorkerStatus.READY else None
        thumb = update.keyframe_thumb
        if update.worker_blocked is not None:
            self._worker_blocked = update.worker_blocked
        blocked = self._guard_blocked + self._worker_blocked

        def change(s: PracticeState) -> PracticeState:
            s = replace(
                s,
                session=update.state,
                model_seconds=update.model_seconds,
                interval_stretched=update.interval_stretched,
                effective_interval_s=update.effective_interval_s,
                log_error=update.log_error,
                blocked=blocked if update.worker_blocked is not None else s.blocked,
            )
            if update.worker_status:
                s = replace(s, worker_status=update.worker_status, worker_message=self._said(update.worker_message))
            if update.rhythm is not None:
                s = replace(s, rhythm=update.rhythm)
            if model is not None:
                s = replace(
                    s,
                    model_id=model.model_id,
                    demo_model=model.demo,
                    title=model.title,
                    question=model.question,
                    answer_values=model.answer_values,
                    min_score=model.min_score,
                    profile_path=model.profile_path,
                    isolation=model.isolation,
                    isolation_how=model.isolation_how,
                    isolation_kind=model.isolation_kind,
                    labels=model.labels,
                    checklist=model.checklist,
                    profile_models=model.profile.models if model.profile is not None else (),  # a checklist's too
                    backend_asked=self._spec.backend,
                    backend=model.backend,
                    backend_note=model.backend_note,
                    check_ms=model.check_ms,
                    peak_memory_bytes=model.peak_memory_bytes,
                )
            event = update.event
            if isinstance(event, PracticeEvent):
                s = replace(s, latest=event, analysing=None, streamed="", phase=None, analysing_signal="")
            elif isinstance(event, KeyframeFailed):
                s = replace(s, latest_failure=event, analysing=None, streamed="", phase=None, analysing_signal="")
            if update.streaming_keyframe:
                new_signal = update.signal != s.analysing_signal  # the next question: its own tokens
                s = replace(
                    s,
                    analysing=update.streaming_keyframe,
                    analysing_thumb=thumb if thumb is not None else s.analysing_thumb,
                    phase=update.phase or s.phase,
                    analysing_signal=update.signal or s.analysing_signal,
                    streamed=update.streamed_text or ("" if new_signal and update.signal else s.streamed),
                )
            return s

        self._update(change)

    def _said(self, message: str) -> str:
        """A worker's sentence for the screen: a model folder by its name, not its full path (the log has it)."""
        folder = self._spec.model
        return message.replace(folder, Path(folder).name) if folder and _is_folder(self._spec) else message


class PipelineSink:
    """What a source thread sees: frames go through the controller (for the preview), the rest to the pipeline."""

    def __init__(self, pipeline: LivePipeline, on_frame: Callable[[float, DecodedImage], None]) -> None:
        self._pipeline = pipeline
        self.offer_frame = on_frame

    def flush(self) -> None:
        self._pipeline.flush()

    def frame_times_guessed(self) -> None:
        self._pipeline.frame_times_guessed()

    def wait_idle(self, timeout: float | None = None) -> bool:
        return self._pipeline.wait_idle(timeout)

    @property
    def failed(self) -> bool:
        return self._pipeline.failure is not None
