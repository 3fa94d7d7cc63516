"""State and actions of the Sessions screen. No Flet imports.

The controller lists the session logs in one folder, opens one (it records no
new keyframes, but the examiner may still review its answers: that is what the
screen is for), appends Confirm / Correct verdicts through the shared review
rules (`app.session.review`), and prepares exports. Every change produces a new
immutable `SessionsState` handed to `on_change`; the view only renders it.

Methods are synchronous and thread-safe; they read and fsync files, so a shell
may call them from `page.run_thread`. `on_change` is called on the calling
thread, outside the controller's lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from app.core.names import printable
from app.core.notice import Notice
from app.core.observable import Observable
from app.core.person_names import NameRefused, same_person
from app.core.progress import ProgressPoint, progress, progress_point, trainees
from app.core.rhythm_summary import RhythmSummary, summarise_rhythm
from app.core.session import (
    ExaminerCorrected,
    KeyframeSkipped,
    PracticeEvent,
    SessionState,
)
from app.core.session_summary import SessionSummary, summarise
from app.session.naming import name_session
from app.session.report import practice_report
from app.session.review import ReviewError, Verdict, allowed_answers, record_reviews
from app.session.store import (
    LoadedSession,
    delete_session,
    export_csv,
    export_jsonl,
    export_rhythm_csv,
    load_session,
    read_thumbnail,
    session_facts,
    session_files,
)
from app.storage.paths import PROFILES

# csv / jsonl: the session log; rhythm: its rhythm samples (camera and video sessions only); report: the
# practice report, one printable HTML page.
EXPORT_FORMATS: tuple[str, ...] = ("csv", "jsonl", "rhythm", "report")


@dataclass(frozen=True)
class SessionRow:
    """One line of the sessions list."""

    session_id: str  # the file's stem; what `open` takes
    label: str  # the stem as printable text
    path: Path
    modified: float  # file mtime, the list's order (newest first)
    started: float | None = None  # wall time of the first keyframe, None for an empty log
    duration_s: float | None = None  # first to last keyframe
    source: str = ""  # "camera", the video's or the image's name, "3 images"
    images: int = 0  # several still images: how many (said in the screen's language)
    model_id: str = ""  # the model of the first analysed keyframe
    summary: SessionSummary | None = None  # None when the file cannot be read
    error: str = ""  # why it cannot be read
    trainee: str = ""  # as last named ("" for none)
    examiner: str = ""
    progress: ProgressPoint | None = None  # its figures in its trainee's progress; None when unreadable

    @property
    def readable(self) -> bool:
        return self.summary is not None


@dataclass(frozen=True)
class OpenedSession:
    row: SessionRow
    loaded: LoadedSession
    state: SessionState
    summary: SessionSummary
    # event_id -> the answers a correction may give; () when they cannot be told
    allowed: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # The compression rhythm's figures; None for a session without rhythm samples (stills, an older log)
    rhythm: RhythmSummary | None = None

    @property
    def skipped_events(self) -> tuple[KeyframeSkipped, ...]:
        return self.state.skips


@dataclass(frozen=True)
class SessionsState:
    folder: Path
    rows: tuple[SessionRow, ...] = ()
    listed: bool = False  # False until the first `refresh`
    opened: OpenedSession | None = None
    notice: Notice | None = None
    trainee: str = ""  # the list shows this trainee's sessions and progress ("" for every session)

    @property
    def shown_rows(self) -> tuple[SessionRow, ...]:
        """The rows of the trainee chosen (all of them when none is)."""
        if not self.trainee:
            return self.rows
        key = same_person(self.trainee)
        return tuple(r for r in self.rows if same_person(r.trainee) == key)

    @property
    def progress(self) -> tuple[ProgressPoint, ...]:
        """The chosen trainee's sessions, oldest first (() when none is chosen)."""
        return progress(tuple(r.progress for r in self.rows if r.progress is not None), self.trainee)

    @property
    def trainees(self) -> tuple[str, ...]:
        return trainees(tuple(r.progress for r in self.rows if r.progress is not None))


@dataclass(frozen=True)
class ExportFile:
    file_name: str
    data: bytes
    mime: str


def _row(path: Path, modified: float, loaded: LoadedSession | None, error: str = "") -> SessionRow:
    base = SessionRow(path.stem, printable(path.stem), path, modified, error=error)
    if loaded is None:
        return base
    state = loaded.state
    first = next((e for e in loaded.events if isinstance(e, PracticeEvent)), None)
    facts = session_facts(loaded)
    return replace(
        base,
        started=facts.started,
        duration_s=facts.duration_s,
        source=facts.source,
        images=facts.images,
        model_id=first.model_id if first else "",
        summary=summarise(state, len(loaded.damaged_lines)),
        trainee=state.trainee,
        examiner=state.examiner,
        progress=progress_point(path.stem, facts.started, facts.duration_s, facts.source, state, facts.images),
    )


def _allowed(state: SessionState, profiles_dir: Path) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for entry in state.timeline:
        try:
            out[entry.event.event_id] = allowed_answers(entry.event, profiles_dir=profiles_dir).values
        except ReviewError:
            out[entry.event.event_id] = ()
    return out


def _seconds(t: float) -> str:
    return f"{t:.1f}"


class SessionsController:
    def __init__(
        self,
        sessions_dir: Path,
        on_change: Callable[[SessionsState], None],
        *,
        examiner: str = "",
        profiles_dir: Path = PROFILES,
        is_live: Callable[[str], bool] = lambda _: False,
        language: str = "en",
    ) -> None:
        """`is_live(session_id)`: that session is being recorded now (it cannot be deleted).
        `language`: the screen's ("en", "zh"), the language of the exported practice report."""
        self._folder = Path(sessions_dir)
        self._language = language
        self._is_live = is_live
        self._examiner = examiner
        self._profiles_dir = profiles_dir
        self._lock = threading.RLock()
        self._state = SessionsState(self._folder)  # the working copy; pages get it at _emit
        self._states = Observable(self._state, "the Sessions screen")
        self._states.subscribe(on_change, now=False)
        # Each file's row as last read, by path, with the mtime it was read at: a refresh reads only
        # new or changed files (300 sessions of 200 answers took 1.5 s to read every time).
        self._rows: dict[Path, tuple[float, SessionRow]] = {}

    @property
    def state(self) -> SessionsState:
        return self._state

    # --- the list -------------------------------------------------------------------

    def refresh(self) -> None:
        """List the folder again (newest first); an opened session is reloaded from its file too."""
        with self._lock:
            notice: Notice | None = None
            rows: list[SessionRow] = []
            try:
                files = session_files(self._folder) if self._folder.is_dir() else []
            except OSError as exc:
                files = []
                notice = Notice("notice_list_failed", (("detail", exc.strerror or str(exc)),), error=True)
            for modified, path in files:
                cached = self._rows.get(path)
                if cached is not None and cached[0] == modified:
                    rows.append(cached[1])
                    continue
                row = self._load_row(path, modified)[0]
                if not row.error:  # an unreadable file is tried again next time
                    self._rows[path] = (modified, row)
                rows.append(row)
            for gone in set(self._rows) - {path for _, path in files}:
                del self._rows[gone]
            # Newest start first (a review changes a file, not when its session began); no start: last.
            rows.sort(key=lambda r: r.started if r.started is not None else float("-inf"), reverse=True)
            opened = self._state.opened
            self._set(replace(self._state, rows=tuple(rows), listed=True, notice=notice or self._state.notice))
            if opened is not None:
                self._reopen(opened.row.session_id, keep_notice=True)
        self._emit()

    def _load_row(self, path: Path, modified: float) -> tuple[SessionRow, LoadedSession | None]:
        try:
            loaded = load_session(path)
        except OSError as exc:
            return _row(path, modified, None, exc.strerror or str(exc)), None
        return _row(path, modified, loaded), loaded

    # --- one session ----------------------------------------------------------------

    def thumbnail(self, event_id: str, large: bool = False) -> bytes | None:
        """The opened session's keyframe thumbnail, or with `large` its review copy (None: none was kept)."""
        opened = self._state.opened
        return read_thumbnail(opened.row.path, event_id, large) if opened is not None else None

    def open(self, session_id: str) -> None:
        with self._lock:
            self._reopen(session_id, keep_notice=False)
        self._emit()

    def close(self) -> None:
        """Back to the list."""
        with self._lock:
            self._set(replace(self._state, opened=None, notice=None))
        self._emit()

    def delete(self, session_id: str) -> None:
        """Deletes a session (its log and thumbnails); the one Practice is recording cannot be deleted."""
        with self._lock:
            path = self._folder / f"{session_id}.jsonl"
            if self._is_live(session_id):
                self._set(replace(self._state, notice=Notice("notice_delete_live", error=True)))
            else:
                try:
                    delete_session(path)
                except OSError as exc:
                    detail = (("detail", exc.strerror or str(exc)),)
                    self._set(replace(self._state, notice=Notice("notice_delete_failed", detail, error=True)))
                else:
                    self._set(replace(self._state, opened=None, notice=Notice("notice_deleted")))
        self.refresh()

    def dismiss_notice(self) -> None:
        with self._lock:
            self._set(replace(self._state, notice=None))
        self._emit()

    def _reopen(self, session_id: str, keep_notice: bool) -> None:
        row = next((r for r in self._state.rows if r.session_id == session_id), None)
        path = row.path if row is not None else self._folder / f"{session_id}.jsonl"
        try:
            modified = path.stat().st_mtime
        except OSError:
            self._set(replace(self._state, opened=None, notice=Notice("notice_missing", error=True)))
            return
        new_row, loaded = self._load_row(path, modified)
        if loaded is None:
            self._set(
                replace(
                    self._state,
                    opened=None,
                    notice=Notice("notice_open_failed", (("detail", new_row.error),), error=True),
                )
            )
            return
        state = loaded.state
        opened = OpenedSession(
            new_row,
            loaded,
            state,
            summarise(state, len(loaded.damaged_lines)),
            _allowed(state, self._profiles_dir),
            rhythm=summarise_rhythm(state.rhythm),
        )
        rows = tuple(new_row if r.session_id == session_id else r for r in self._state.rows)
        self._set(replace(self._state, opened=opened, rows=rows, notice=self._state.notice if keep_notice else None))

    def show_trainee(self, trainee: str) -> None:
        """The list narrowed to one trainee's sessions, with their progress ("" for every session)."""
        with self._lock:
            self._set(replace(self._state, trainee=trainee))
        self._emit()

    def name(self, trainee: str, examiner: str) -> str | None:
        """Name the opened session's trainee and examiner: None when kept, else the reason it was not (a
        name refused, or the file could not be written), worded by the screen."""
        with self._lock:
            opened = self._state.opened
            if opened is None:
                return "names_not_saved"
            try:
                name_session(opened.row.path, trainee, examiner)
            except NameRefused as refused:
                return refused.reason
            except OSError:
                return "names_not_saved"
            self._reopen(opened.row.session_id, keep_notice=True)
        self._emit()
        return None

    # --- reviews --------------------------------------------------------------------

    def review(self, verdicts: Sequence[Verdict], revise: bool = False) -> bool:
        """The examiner's verdicts on answers of the opened session (one answer's, a checklist keyframe's,
        or every waiting one's), each with its own note: all recorded, or none. True when recorded."""
        with self._lock:
            opened = self._state.opened
            if opened is None or not verdicts:
                return False
            first = verdicts[0].target_id
            entry = next((e for e in opened.state.timeline if e.event.event_id == first), None)
            t = _seconds(entry.event.t) if entry is not None else "?"
            try:
                # Checked against the file as it is now, under the lock the CLI takes too: not against what
                # this screen read when it opened the session.
                events = record_reviews(
                    opened.row.path, verdicts, examiner=self._examiner, revise=revise, profiles_dir=self._profiles_dir
                )
            except ReviewError as exc:
                self._reopen(opened.row.session_id, keep_notice=False)  # e.g. the verdict given elsewhere
                self._set(replace(self._state, notice=exc.notice()))
                recorded = False
            except OSError as exc:
                self._set(
                    replace(
                        self._state,
                        notice=Notice("notice_review_failed", (("detail", exc.strerror or str(exc)),), error=True),
                    )
                )
                recorded = False
            else:
                event = events[-1]
                corrected = sum(isinstance(e, ExaminerCorrected) for e in events)
                ids = {v.target_id for v in verdicts}
                keyframes = {e.event.keyframe_id for e in opened.state.timeline if e.event.event_id in ids}
                if len(keyframes) > 1:  # every waiting answer at once
                    notice = Notice("notice_review_many", (("n", str(len(events))), ("corrected", str(corrected))))
                elif len(events) > 1 and corrected:
                    notice = Notice(
                        "notice_review_saved", (("t", t), ("n", str(len(events))), ("corrected", str(corrected)))
                    )
                elif isinstance(event, ExaminerCorrected):
                    notice = Notice("notice_review_corrected", (("t", t), ("answer", event.observation)))
                elif len(events) > 1:
                    notice = Notice("notice_review_confirmed_all", (("t", t), ("n", str(len(events)))))
                else:
                    notice = Notice("notice_review_confirmed", (("t", t),))
                self._reopen(opened.row.session_id, keep_notice=False)  # the file is the truth
                self._set(replace(self._state, notice=notice))
                recorded = True
        self._emit()
        return recorded

    # --- export ---------------------------------------------------------------------

    def export(self, fmt: str) -> ExportFile | None:
        """The opened session as a file to save (one of `EXPORT_FORMATS`); None when nothing is open, or
        for `rhythm` when the session has no rhythm samples."""
        if fmt not in EXPORT_FORMATS:
            raise ValueError(f"unknown export format {fmt!r}")
        opened = self._state.opened
        if opened is None:
            return None
        name = opened.row.session_id.encode("ascii", "replace").decode().replace("?", "_")
        if fmt == "csv":
            text, mime, file_name = export_csv(opened.loaded), "text/csv", f"{name}.csv"
        elif fmt == "jsonl":
            text, mime, file_name = export_jsonl(opened.loaded), "application/x-ndjson", f"{name}.jsonl"
        elif fmt == "rhythm":
            if not opened.state.rhythm:
                return None
            text, mime, file_name = export_rhythm_csv(opened.loaded), "text/csv", f"{name}-rhythm.csv"
        else:
            report = practice_report(opened.loaded, opened.row.session_id, self._language)
            text, mime, file_name = report, "text/html", f"{name}-report.html"
        return ExportFile(f"keyframe-session-{file_name}", text.encode("utf-8"), mime)

    def printable_report(self, print_nonce: str) -> str | None:
        """The opened session's report as a page that opens the print dialog (see `practice_report`)."""
        opened = self._state.opened
        if opened is None:
            return None
        return practice_report(opened.loaded, opened.row.session_id, self._language, print_nonce)

    def export_finished(self, file_name: str, where: str | None) -> None:
        """The save dialog returned: `where` is the saved path, or None when it was cancelled."""
        notice = Notice("export_saved", (("where", where),)) if where else Notice("export_cancelled")
        with self._lock:
            self._set(replace(self._state, notice=notice))
        self._emit()

    def export_failed(self, file_name: str, detail: str) -> None:
        with self._lock:
            self._set(
                replace(
                    self._state, notice=Notice("export_failed", (("name", file_name), ("detail", detail)), error=True)
                )
            )
        self._emit()

    # --- plumbing -------------------------------------------------------------------

    def _set(self, state: SessionsState) -> None:
        self._state = state

    def _emit(self) -> None:
        self._states.set(self._state)
