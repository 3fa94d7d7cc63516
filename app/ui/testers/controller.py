"""State and actions of the Testers' screen. No Flet imports.

A tester picks a folder's worth of images and, optionally, a labels.csv; Run
sends every image through the app's one worker (the practice controller's, so
the model is loaded once) and the screen fills a row per image as answers
arrive. With labels, the confusion matrix, precision and recall per value, the
unknown rate and the yes-bias come from the evaluation run (`app.evaluation.run`) —
the same one `python -m app eval` prints — and the per-image rows export as CSV.

With a checklist running, every image has a row per signal (the checklist's order), the labels file is
a checklist's (a column per signal, `decode_checklist_labels`, as `eval` reads it) and the report is
`evaluate_checklist`'s, one per signal; the export is `eval --csv`'s, one row per image and signal.

How a run goes: the images are decoded here first, on a thread of their own
(never the UI's), so a file that is not an image is that row's error and gets
no keyframe; the rest go to `PracticeController.start_evaluation`, which runs
them as one practice session (recorded in the session log like any other) with
no image skipped as "unchanged". Each answer and each failure names the image
it came from (`source`), which is how it finds its row: names are unique in a
run (a second image of the same name is left out and said, as the labels file
could not tell the two apart either). A run is
a session on the shared worker: starting practice elsewhere (another tab)
stops it, and the rows not reached say so.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

from app.core.generation import ParseStatus
from app.core.names import printable
from app.core.notice import Notice
from app.core.observable import Observable, StagedState
from app.core.profile.checklist import Checklist
from app.core.profile.task import ProfileError
from app.evaluation.labels import ChecklistLabels, Labels, LabelsFileError, decode_labels, normalise_name
from app.evaluation.report import NONE_SHOWN, ChecklistReport, Prediction, Report, checklist_csv_text, csv_text, shown
from app.evaluation.run import SINGLE, EvaluationRun, Questions, answered, signal_values
from app.evaluation.score_cut import CutTrade
from app.frames.intake import ImageRejected, decode_image_bytes
from app.frames.jpeg import jpeg
from app.frames.listing import is_image
from app.ui.practice.controller import PracticeState
from app.worker.messages import WorkerStatus

ROW_THUMB_SIDE = 96  # a testers' row's picture
F = TypeVar("F", bound=Callable[..., Any])


def _notifies(method: F) -> F:
    """After the method (and its lock) is done, the listener sees the newest state."""

    @functools.wraps(method)
    def wrapper(self: TestersController, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        finally:
            self._notify()

    return cast(F, wrapper)


class Practice(Protocol):
    """What this screen needs of the practice controller (a fake in tests)."""

    @property
    def state(self) -> PracticeState: ...
    def subscribe(self, listener: Callable[[PracticeState], None]) -> None: ...
    def unsubscribe(self, listener: Callable[[PracticeState], None]) -> None: ...
    def start_evaluation(self, images: Sequence[tuple[str, bytes]], label: str) -> float | None: ...
    def stop_session(self) -> None: ...


@dataclass(frozen=True)
class TesterRow:
    name: str
    thumb: bytes | None = None  # small JPEG, once decoded
    signal: str = ""  # the checklist's signal this row answers ("": a one-signal profile's only row)
    expected: str | None = None
    observed: str | None = None  # None: not answered (yet, or an error)
    parse_status: ParseStatus | None = None  # None: waiting for its answer
    seconds: float | None = None
    detail: str = ""  # the parse reason, or the error
    score: float | None = None  # the constrained decoder's model score
    withheld: str | None = None  # the model's pick a score cut made unknown

    @property
    def finished(self) -> bool:
        return self.parse_status is not None


class TestersPhase(StrEnum):
    EMPTY = "empty"  # no image chosen
    READY = "ready"  # images chosen, not run yet
    PREPARING = "preparing"  # decoding the images
    RUNNING = "running"  # the model answers them
    DONE = "done"
    STOPPED = "stopped"  # by the tester, another session or a worker that gave up


@dataclass(frozen=True)
class TestersState:
    phase: TestersPhase = TestersPhase.EMPTY
    images: int = 0
    rows: tuple[TesterRow, ...] = ()
    skipped: tuple[str, ...] = ()  # chosen files that are not images (as `eval` leaves them out of a folder)
    labels_name: str = ""
    labels_count: int = 0
    label_errors: tuple[str, ...] = ()
    label_notes: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()  # labelled names that are not among the images
    unlabelled: tuple[str, ...] = ()  # images without a label (shown only when labels were given)
    values: tuple[str, ...] = ()  # the profile's answers (from the loaded model)
    report: Report | None = None
    model_ready: bool = False
    notice: Notice | None = None
    can_keep_cut: bool = False  # a cut can be saved into the running profile (a copy of a shipped one)
    checklist: Checklist | None = None  # the checklist the rows answer (None: a one-signal profile)
    checklist_report: ChecklistReport | None = None  # its report per signal, in place of `report`

    @property
    def per_image(self) -> int:
        """Rows per image: one per signal of a checklist, one otherwise."""
        return len(signals_of(self.checklist))

    @property
    def total(self) -> int:
        """Images in the table."""
        return len(self.rows) // self.per_image

    @property
    def done(self) -> int:
        """Images whose every answer is in (a checklist's come together, in one update)."""
        n = self.per_image
        return sum(all(r.finished for r in self.rows[i : i + n]) for i in range(0, len(self.rows), n))

    @property
    def running(self) -> bool:
        return self.phase in (TestersPhase.PREPARING, TestersPhase.RUNNING)

    @property
    def progress(self) -> float:
        return self.done / self.total if self.rows else 0.0


def signals_of(checklist: Checklist | None) -> tuple[str, ...]:
    """The signals an image's rows answer, in the checklist's order."""
    return (SINGLE,) if checklist is None else tuple(spec.signal for spec in checklist.signals)


TRADE_FIGURES = ("withheld", "given", "share", "before", "after")


def trade_figures(trade: CutTrade, none: str = NONE_SHOWN) -> tuple[tuple[str, str], ...]:
    """A cut's cost and gain as the Testers rows and the kept cut's notice word them (`TRADE_FIGURES`)."""
    rates = (none if x is None else shown(x) for x in (trade.before, trade.after))
    return tuple(zip(TRADE_FIGURES, (str(trade.withheld), str(trade.given), f"{trade.share:.0%}", *rates), strict=True))


def labels_header(checklist: Checklist) -> str:
    """The header row of a labels file for `checklist`, as `eval` reads it."""
    return ",".join(("file", *signals_of(checklist)))


@dataclass
class _Run:
    names: list[str]  # every image, in order
    index: dict[str, int] = field(default_factory=dict)  # image name as answers name it -> its place in `names`
    session_id: str | None = None


class TestersController(StagedState[TestersState]):
    def __init__(
        self,
        practice: Practice,
        on_change: Callable[[TestersState], None] | None = None,
        use_cut: Callable[[Path, float, str | None], Path] | None = None,
    ) -> None:
        """`use_cut(profile, min_score, signal)`: save the profile with that score cut (on that signal of a
        checklist; None: a one-signal profile's) as the person's own and ask it from then on (the app wires
        it to the profile store and the settings); returns the saved file."""
        self._practice = practice
        self._use_cut = use_cut
        self._lock = threading.RLock()
        self._states = Observable(TestersState(), "the Testers screen")
        self._on_change = on_change
        if on_change is not None:
            self._states.subscribe(on_change, now=False)
        self._images: list[tuple[str, bytes]] = []
        self._labels_data: bytes | None = None
        self._labels: Labels | ChecklistLabels | None = None
        self._run: _Run | None = None
        self._rows: list[TesterRow] = []  # image by image, a row per signal of `_checklist`
        self._checklist: Checklist | None = None  # the running checklist the rows are made for
        self._min_score: float | None = None  # the running profile's score cut, marked on the curve
        self._subscribed = False

    @property
    def state(self) -> TestersState:
        return self._state

    def listen(self, on_change: Callable[[TestersState], None]) -> None:
        """The view to render this run, replacing the one before (the page rebuilt in another
        language keeps its run); it gets the state at once."""
        if self._on_change is not None:
            self._states.unsubscribe(self._on_change)
        self._on_change = on_change
        self._states.subscribe(on_change)

    def attach(self) -> None:
        """Follow the practice controller (the worker's answers); call once the screen exists."""
        with self._lock:
            if self._subscribed:
                return
            self._subscribed = True
        self._practice.subscribe(self._on_practice)

    def detach(self) -> None:
        with self._lock:
            self._subscribed = False
        self._practice.unsubscribe(self._on_practice)

    # --- choices -------------------------------------------------------------------------------

    @_notifies
    def choose_images(self, images: Sequence[tuple[str, bytes]]) -> None:
        """The images to run (name, file bytes), in the order given; nothing runs yet."""
        with self._lock:
            if self._state.running:
                return
            ordered = sorted(((normalise_name(name), data) for name, data in images), key=lambda item: item[0])
            kept: list[tuple[str, bytes]] = []
            left_out: list[str] = []
            twice: list[str] = []  # a name already kept: labels (and answers) could not tell the two apart
            for name, data in ordered:
                if not is_image(name, data):
                    left_out.append(name)
                elif any(printable(name) == printable(k) for k, _ in kept):  # as answers name it
                    twice.append(name)
                else:
                    kept.append((name, data))
            self._images, skipped = kept, tuple(left_out)
            self._rows = self._blank_rows()
            self._run = None
            phase = TestersPhase.READY if self._images else TestersPhase.EMPTY
            notice = Notice("notice_same_name", (("names", ", ".join(dict.fromkeys(twice))),), True) if twice else None
            self._set(replace(self._state, phase=phase, images=len(self._images), skipped=skipped, notice=notice))

    @_notifies
    def choose_labels(self, name: str, data: bytes) -> None:
        with self._lock:
            self._labels_data = data
            self._labels = None
            self._set(replace(self._state, labels_name=name, notice=None))

    @_notifies
    def clear_labels(self) -> None:
        with self._lock:
            self._labels_data, self._labels = None, None
            self._set(replace(self._state, labels_name="", notice=None))

    @_notifies
    def report_error(self, key: str, **values: object) -> None:
        with self._lock:
            notice = Notice(key, tuple((k, str(v)) for k, v in values.items()), error=True)
            self._set(replace(self._state, notice=notice))

    @_notifies
    def save_cut(self, min_score: float, signal: str | None = None) -> bool:
        """Keep `min_score` as the running profile's score cut (a copy of a shipped one), on `signal` of a
        checklist: the next answers below it are withheld. The notice says where it was saved, or why not."""
        path = self._practice.state.profile_path
        if self._use_cut is None or not path:
            return False
        try:
            saved = self._use_cut(Path(path), min_score, signal)
        except ProfileError as exc:
            notice = Notice("notice_cut_refused", (("detail", str(exc)),), error=True)
        else:
            values: tuple[tuple[str, str], ...] = (("threshold", f"{min_score:.6g}"), ("file", saved.name))
            values += self._trade_values(min_score, signal)
            if signal is None:
                notice = Notice("notice_cut_saved", values)
            else:
                notice = Notice("notice_cut_saved_signal", (*values, ("signal", signal)))
        with self._lock:
            self._set(replace(self._state, notice=notice))
        return not notice.error

    def _trade_values(self, min_score: float, signal: str | None) -> tuple[tuple[str, str], ...]:
        """What the kept cut does on the images of the report it was kept from, for the notice."""
        state = self._state
        if signal is None:
            report = state.report
        else:
            report = None if state.checklist_report is None else state.checklist_report.signal(signal).report
        if report is None:  # no report to measure it on: every figure "—", never a made-up one
            return tuple((name, NONE_SHOWN) for name in TRADE_FIGURES)
        return trade_figures(report.curve.trade(min_score))

    @_notifies
    def dismiss_notice(self) -> None:
        with self._lock:
            self._set(replace(self._state, notice=None))

    # --- running -------------------------------------------------------------------------------

    @_notifies
    def run(self) -> None:
        """Analyse every chosen image; returns at once (decoding and the model run on other threads)."""
        with self._lock:
            if self._state.running:
                return
            if not self._images:
                self._set(replace(self._state, notice=Notice("notice_no_images", error=True)))
                return
            self._rows = self._blank_rows()
            names = [name for name, _ in self._images]
            run = self._run = _Run(names, {printable(name): i for i, name in enumerate(names)})
            images = list(self._images)
            self._set(replace(self._state, phase=TestersPhase.PREPARING, notice=None))
        worker = threading.Thread(
            target=self._prepare_and_start, args=(run, images), name="keyframe-testers", daemon=True
        )
        worker.start()

    @_notifies
    def stop(self) -> None:
        with self._lock:
            run = self._run
            if run is None or not self._state.running:
                return
            if run.session_id is None:  # still decoding: the thread sees this and starts nothing
                self._finish_run(run, TestersPhase.STOPPED)
                return
        self._practice.stop_session()  # the practice listener then marks the run stopped

    @_notifies
    def _prepare_and_start(self, run: _Run, images: list[tuple[str, bytes]]) -> None:
        good: list[tuple[str, bytes]] = []
        for index, (name, data) in enumerate(images):
            try:
                image = decode_image_bytes(data, name=name)
            except ImageRejected as exc:
                self._image_rows(run, index, parse_status=ParseStatus.ERROR, detail=f"{exc.reason}: {exc}")
                continue
            self._image_rows(run, index, thumb=jpeg(image.rgb, side=ROW_THUMB_SIDE))
            good.append((name, data))
        with self._lock:
            if self._run is not run or self._state.phase is not TestersPhase.PREPARING:
                return  # stopped while decoding
            if not good:
                self._finish_run(run, TestersPhase.DONE)
                return
        interval = self._practice.start_evaluation(good, f"testers · {len(images)} images")
        with self._lock:
            if self._run is not run:
                return
            if interval is None:
                self._finish_run(run, TestersPhase.STOPPED)
                return
            run.session_id = self._practice.state.session_id
            self._set(replace(self._state, phase=TestersPhase.RUNNING))
        self._on_practice(self._practice.state)  # answers that came before the session id was known

    @_notifies
    def _image_rows(self, run: _Run, index: int, **changes: object) -> None:
        """Every row of image `index` (one per signal) changed alike."""
        with self._lock:
            if self._run is not run:
                return
            for row in self._rows_of(index):
                self._rows[row] = replace(self._rows[row], **changes)  # type: ignore[arg-type]
            self._set(replace(self._state))

    def _blank_rows(self) -> list[TesterRow]:
        return [TesterRow(name, signal=signal) for name, _ in self._images for signal in signals_of(self._checklist)]

    def _rows_of(self, image: int) -> range:
        n = len(signals_of(self._checklist))
        return range(image * n, (image + 1) * n)

    def _answer_row(self, image: int, signal: str) -> int | None:
        """The row of `signal`'s answer on image `image` (a one-signal profile's answers name its signal, its
        row none); None for a signal the checklist does not have."""
        if self._checklist is None:
            return image
        signals = signals_of(self._checklist)
        return image * len(signals) + signals.index(signal) if signal in signals else None

    def _finish_run(self, run: _Run, phase: TestersPhase, why: str = "not_analysed") -> None:
        """Rows never reached become errors; the report is computed."""
        for i, row in enumerate(self._rows):
            if not row.finished:
                self._rows[i] = replace(row, parse_status=ParseStatus.ERROR, detail=why)
        self._set(replace(self._state, phase=phase))

    # --- answers from the worker (practice listener, any thread) -------------------------------

    @_notifies
    def _on_practice(self, practice: PracticeState) -> None:
        with self._lock:
            self._follow_checklist(practice.checklist)
            values = practice.answer_values
            self._min_score = practice.min_score
            can_keep = self._use_cut is not None and bool(practice.profile_path)
            if can_keep != self._state.can_keep_cut:
                self._set(replace(self._state, can_keep_cut=can_keep))
            model_ready = practice.worker_status == WorkerStatus.READY
            changed_values = values != self._state.values or model_ready != self._state.model_ready
            run = self._run
            if run is not None and run.session_id is not None and self._state.phase is TestersPhase.RUNNING:
                if practice.session_id != run.session_id:
                    self._finish_run(run, TestersPhase.STOPPED, "stopped")  # another session took the worker
                    return
                before = list(self._rows)
                self._apply_answers(run, practice)
                if not practice.running:
                    failed = practice.worker_status == WorkerStatus.FAILED
                    self._finish_run(run, TestersPhase.STOPPED if failed else TestersPhase.DONE, "not_analysed")
                    return
                if self._rows != before:  # streamed tokens and previews change nothing here
                    self._set(replace(self._state))
            if changed_values:
                self._labels = None  # checked again against this model's answers
                self._set(replace(self._state, values=values, model_ready=model_ready))

    def _follow_checklist(self, checklist: Checklist | None) -> None:
        """The worker's checklist (None: one signal). The same questions and answers (a kept cut, a reload)
        keep the rows and take its cuts; others make the rows anew once no run is going (a run is stopped
        when the worker changes its profile, and the next update comes after that)."""
        if checklist == self._checklist:
            return
        same = _questions(checklist) == _questions(self._checklist)
        if not same and self._state.running:
            return
        self._checklist, self._labels = checklist, None  # the labels are read again against its answers
        phase = self._state.phase
        if not same:
            self._run, self._rows = None, self._blank_rows()
            phase = TestersPhase.READY if self._images else TestersPhase.EMPTY
        self._set(replace(self._state, phase=phase))

    def _apply_answers(self, run: _Run, practice: PracticeState) -> None:
        for entry in practice.session.timeline:
            event = entry.event
            image = self._image_of(run, event.source)
            row = None if image is None else self._answer_row(image, event.signal)
            if row is None:
                continue
            seconds = event.timings.total_ms / 1000
            p = answered(
                self._rows[row].name,
                None,
                event.observation,
                event.parse_status,
                seconds,
                event.parse_reason,
                event.model_score,
                event.withheld or None,
            )
            self._rows[row] = replace(
                self._rows[row],
                observed=p.observed,
                parse_status=p.parse_status,
                seconds=p.seconds,
                detail=p.detail,
                score=p.score,
                withheld=p.picked,
            )
        for failure in practice.session.failures:
            image = self._image_of(run, failure.source)
            if image is not None:
                detail = f"{failure.error}: {failure.message}"
                for row in self._rows_of(image):
                    self._rows[row] = replace(self._rows[row], parse_status=ParseStatus.ERROR, detail=detail)

    @staticmethod
    def _image_of(run: _Run, source: str) -> int | None:
        """The image an answer or a failure came from, by its file name (names are unique in a run)."""
        return run.index.get(source)

    # --- export --------------------------------------------------------------------------------

    def export(self) -> tuple[str, bytes] | None:
        """(file name, CSV bytes) of the per-image rows (a checklist's: per image and signal, as `eval --csv`
        writes them); None before anything was run."""
        state = self._state
        if not any(r.finished for r in state.rows):
            return None
        if state.checklist_report is not None:
            return "keyframe-testers.csv", checklist_csv_text(state.checklist_report).encode("utf-8")
        if state.report is None:
            return None
        return "keyframe-testers.csv", csv_text(state.report).encode("utf-8")

    @_notifies
    def export_finished(self, file_name: str, where: str | None) -> None:
        notice = Notice("export_saved", (("where", where),)) if where else Notice("export_cancelled")
        with self._lock:
            self._set(replace(self._state, notice=notice))

    @_notifies
    def export_failed(self, file_name: str, detail: str) -> None:
        with self._lock:
            notice = Notice("export_failed", (("name", file_name), ("detail", detail)), error=True)
            self._set(replace(self._state, notice=notice))

    # --- state ---------------------------------------------------------------------------------

    def _notify(self) -> None:
        """Outside the lock: the listener gets the newest state (so a late caller never hands over an
        older one); an unchanged state is not sent again."""
        self._states.publish()

    def _set(self, state: TestersState) -> None:
        """Under the lock: labels, rows and the report brought up to date; `_notify` follows outside it."""
        checklist = self._checklist
        state, labels = self._read_labels(state)
        n = len(signals_of(checklist))
        names = [r.name for r in self._rows[::n]]  # each image's first row
        evaluation = EvaluationRun(names, self._questions(state), labels)
        rows = tuple(replace(r, expected=evaluation.expected(i // n, r.signal)) for i, r in enumerate(self._rows))
        # The report grows while the run goes on, image by image (a checklist's answers come together).
        for image in range(len(names)):
            answers = rows[image * n : (image + 1) * n]
            if all(r.finished for r in answers):
                evaluation.answer(image, {r.signal: _prediction(r) for r in answers})
        report = evaluation.report() if evaluation.answered and (checklist is not None or state.values) else None
        self._state = replace(
            state,
            rows=rows,
            missing=evaluation.missing,
            unlabelled=evaluation.unlabelled,
            report=report if isinstance(report, Report) else None,
            checklist=checklist,
            checklist_report=report if isinstance(report, ChecklistReport) else None,
        )

    def _questions(self, state: TestersState) -> Questions:
        """What the running profile asks of each image (its answers known once the model has loaded)."""
        if self._checklist is None:
            return Questions.one_signal(state.values, self._min_score)
        return Questions.of(self._checklist)

    def _read_labels(self, state: TestersState) -> tuple[TestersState, Labels | ChecklistLabels | None]:
        """The labels file read once the running profile's answers are known, as `eval` reads it for that
        profile, and its labels. A file made for the other kind of profile is said in a sentence, never a
        crash."""
        data, checklist, name = self._labels_data, self._checklist, state.labels_name
        if data is None:
            return replace(state, labels_count=0, label_errors=(), label_notes=()), None
        if not state.values:
            return replace(state, labels_count=0), None
        if self._labels is None:
            try:
                self._labels = self._questions(state).read_labels(data, name)
            except LabelsFileError as exc:
                self._labels_data = None
                notice = Notice("notice_labels_unreadable", (("detail", str(exc)),), True)
                if checklist is not None and _one_question_labels(data, checklist):
                    header = labels_header(checklist)
                    values = (("name", name), ("n", str(len(checklist.signals))), ("header", header))
                    notice = Notice("notice_labels_one_question", values, True)
                return replace(state, labels_name="", labels_count=0, notice=notice), None
            if checklist is None and self._labels.errors and not self._labels.expected:
                state = replace(state, notice=Notice("notice_labels_not_one_question", (("name", name),), True))
        labels = self._labels
        expected = labels.expected if isinstance(labels, ChecklistLabels) else {SINGLE: labels.expected}
        count = len({name for by_name in expected.values() for name in by_name})  # images labelled
        errors = tuple(str(e) for e in labels.errors)
        return replace(state, labels_count=count, label_errors=errors, label_notes=labels.notes), labels


def _questions(checklist: Checklist | None) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """What a checklist's rows and report are made for: each signal with its answers, in its order."""
    return () if checklist is None else tuple(signal_values(checklist).items())


def _one_question_labels(data: bytes, checklist: Checklist) -> bool:
    """Whether a file the checklist's reader refused reads as a one-signal labels file (file name, expected
    answer), in the checklist's answers: a file made for a one-signal profile."""
    answers = tuple(dict.fromkeys(value for spec in checklist.signals for value in spec.values))
    try:
        return bool(decode_labels(data, answers).expected)
    except LabelsFileError:
        return False


def _prediction(row: TesterRow) -> Prediction:
    assert row.parse_status is not None, "only finished rows are evaluated"
    return Prediction(
        row.name, row.expected, row.observed, row.parse_status, row.seconds, row.detail, row.score, row.withheld
    )
