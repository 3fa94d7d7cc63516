"""Append-only session log: one JSON line per event, flushed and fsynced.

An event is on disk before `append` returns, so a crash loses no event the UI
has shown. A torn last line (power cut mid-write) is reported and skipped on
load; every complete line before it is kept.

The file is created on the first append, not when the log is opened: a session
that records nothing (a `watch` whose model or video fails before the first
keyframe) leaves no empty file behind. A newly created file or folder is made
durable by fsyncing the folder that holds it (POSIX), or a power cut could lose
the whole file although every line in it was fsynced.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from app.core.csv_text import table_csv
from app.core.rhythm_summary import summarise_rhythm
from app.core.session import (
    PracticeEvent,
    Review,
    SessionEvent,
    SessionState,
    TimelineEntry,
    event_from_dict,
    event_to_dict,
    reduce,
    verdict_counts,
)
from app.models.locks import held
from app.session.report_words import rhythm_figures
from app.storage.durable_files import fsync_dir
from app.storage.small_file import NotAFile, open_regular


@dataclass(frozen=True)
class LoadedSession:
    events: tuple[SessionEvent, ...]
    damaged_lines: tuple[int, ...]  # 1-based line numbers that could not be read

    @property
    def state(self) -> SessionState:
        return reduce(self.events)


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]


def make_dirs_durable(folder: Path) -> None:
    """`mkdir -p` that fsyncs the parent of every folder it creates."""
    missing: list[Path] = []
    while not folder.is_dir():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    for created in reversed(missing):
        try:
            created.mkdir()
        except FileExistsError:
            if not created.is_dir():
                raise
        fsync_dir(created.parent)


@dataclass(frozen=True)
class SessionFacts:
    """What tells sessions apart in a list."""

    started: float | None  # wall time of its first keyframe (None: no keyframe yet)
    duration_s: float | None  # first to last keyframe; reviews made later do not count
    source: str  # "camera", the video's name, the image's name, "3 images"; "" when not recorded
    images: int = 0  # several still images: how many (the screens say it in their language)


def session_facts(session: LoadedSession) -> SessionFacts:
    keyframes = [e for e in session.events if getattr(e, "keyframe_id", None) is not None]
    times = [e.wall_time for e in keyframes]
    answers = [e for e in keyframes if isinstance(e, PracticeEvent)]
    sources = list(dict.fromkeys(e.source for e in answers if e.source))
    images = len(sources) if len(sources) > 1 and all(e.still for e in answers) else 0
    source = f"{images} images" if images else sources[0] if sources else ""
    started = min(times) if times else None
    return SessionFacts(started, max(times) - min(times) if times else None, source, images)


@dataclass(frozen=True)
class NotASession:
    path: Path
    why: str  # "not a regular file", "a broken link", or the OS's reason


def session_files(folder: Path, skipped: list[NotASession] | None = None) -> list[tuple[float, Path]]:
    """The folder's regular `*.jsonl` files (a link to one counts) with their mtime, newest first
    (ties by name). What looks like one but is not goes to `skipped`. OSError if unlistable."""
    found: list[tuple[float, Path]] = []
    for path in folder.glob("*.jsonl"):
        try:
            st = path.stat()  # follows a link: a link to a session file is a session file
        except OSError as exc:  # a broken link, or a file removed while listing
            why = "a broken link" if path.is_symlink() else str(exc.strerror or exc)
            if skipped is not None:
                skipped.append(NotASession(path, why))
            continue
        if stat.S_ISREG(st.st_mode):
            found.append((st.st_mtime, path))
        elif skipped is not None:
            skipped.append(NotASession(path, "not a regular file"))
    return sorted(found, key=lambda item: (item[0], item[1].name), reverse=True)


def delete_session(log_path: Path) -> None:
    """Removes a session: its log and its keyframe thumbnails. OSError if the log could not be removed."""
    log_path.unlink()  # first: a session whose log is gone is gone, whatever its pictures do
    shutil.rmtree(thumbnails_of(log_path), ignore_errors=True)
    fsync_dir(log_path.parent)


def thumbnails_of(log_path: Path) -> Path:
    return log_path.with_suffix(".thumbs")


MAX_PICTURE_BYTES = 4 << 20  # a review copy is ~100 KB; a planted huge file is read no further


def _picture_name(event_id: str, large: bool) -> str:
    return f"{event_id}.large.jpg" if large else f"{event_id}.jpg"


def read_thumbnail(log_path: Path, event_id: str, large: bool = False) -> bytes | None:
    """A keyframe's thumbnail, or with `large` its review-sized copy (kept under the keyframe's first
    answer's id only); None for an older session, a failed write, a damaged id."""
    if not event_id.isalnum():  # ids are hex: nothing else may name a file
        return None
    try:
        # Never blocks on a FIFO planted in its place, and reads a bounded amount of a regular file only.
        path = thumbnails_of(log_path) / _picture_name(event_id, large)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        try:
            return fh.read(MAX_PICTURE_BYTES) if stat.S_ISREG(os.fstat(fd).st_mode) else None
        except OSError:
            return None


class SessionLog:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._fh: BinaryIO | None = None  # opened on the first append
        self._closed = False

    @property
    def thumbnails(self) -> Path:
        """The folder of this session's keyframe thumbnails, beside the log (deleted with it)."""
        return thumbnails_of(self.path)

    def save_thumbnail(self, event_id: str, data: bytes, large: bool = False) -> None:
        """One keyframe's thumbnail (JPEG), or with `large` its review-sized copy, so the examiner sees
        what was judged. OSError if it cannot be written; the caller goes on without it (the answer
        itself is in the log)."""
        folder = self.thumbnails
        folder.mkdir(exist_ok=True)
        name = _picture_name(event_id, large)
        tmp = folder / f".{name}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, folder / name)

    def _open(self) -> BinaryIO:
        make_dirs_durable(self.path.parent)
        # O_NONBLOCK: a FIFO in the log's place fails at once (ENXIO) instead of waiting for a reader.
        flags = os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK | getattr(os, "O_BINARY", 0)
        try:
            fd = os.open(self.path, flags | os.O_CREAT | os.O_EXCL, 0o644)
            created = True
        except FileExistsError:
            try:
                fd = os.open(self.path, flags)  # reopening (a review): append, never truncate
            except OSError as exc:
                if exc.errno == errno.ENXIO:  # what a FIFO with no reader answers to O_NONBLOCK
                    raise NotAFile(errno.EINVAL, "not a regular file (a FIFO)", str(self.path)) from exc
                raise
            created = False
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise NotAFile(errno.EINVAL, "not a regular file", str(self.path))
        os.set_blocking(fd, True)  # a regular file: writes as usual
        # Unbuffered: a write that fails (a full disk, `ulimit -f`) leaves no bytes behind to fail again
        # when the log is closed (it ended a complete `watch` with a traceback).
        fh = os.fdopen(fd, "ab", buffering=0)
        if created:
            fsync_dir(self.path.parent)
        else:
            self._end_torn_line(fh)
        return fh

    def _end_torn_line(self, fh: BinaryIO) -> None:
        # After a crash mid-write the file may end without a newline; the next
        # event must start on a line of its own, or it would be lost with the torn one.
        size = self.path.stat().st_size
        if size:
            with open_regular(self.path) as reader:
                reader.seek(size - 1)
                if reader.read(1) != b"\n":
                    fh.write(b"\n")

    @property
    def created(self) -> bool:
        """Whether anything was written through this log (its file exists)."""
        return self._fh is not None

    def append(self, event: SessionEvent) -> None:
        line = json.dumps(event_to_dict(event), ensure_ascii=False, separators=(",", ":")) + "\n"
        with self._lock:
            if self._closed:
                raise ValueError(f"session log {self.path} is closed")
            if self._fh is None:
                self._fh = self._open()
            data = memoryview(line.encode("utf-8"))
            while data:  # an unbuffered write may take part of the line
                data = data[self._fh.write(data) or 0 :]
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        """Never raises: every event was fsynced, or its failure said, when it was appended."""
        with self._lock:
            self._closed = True
            if self._fh is not None and not self._fh.closed:
                with contextlib.suppress(OSError):
                    self._fh.close()

    def __enter__(self) -> SessionLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.contextmanager
def session_locked(path: Path) -> Iterator[None]:
    """While held, no other holder of this session's lock runs, in any process: for reading the log and
    appending what the reading allowed as one step (a review). Waits for the holder; OSError if the log
    cannot be opened. A lock on the log itself, so nothing is left beside it."""
    # flock needs no write access: on a read-only disk the append says why. Not a FIFO's open, which waits.
    with open_regular(path) as fh, held(fh.fileno()):
        yield


def load_session(path: Path) -> LoadedSession:
    """Every readable event; damaged lines are counted, never fatal. OSError if unreadable."""
    events: list[SessionEvent] = []
    damaged: list[int] = []
    with open_regular(path) as fh:  # a FIFO or device named *.jsonl is refused, never waited on
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                events.append(event_from_dict(json.loads(raw)))
            except (ValueError, TypeError, KeyError, RecursionError):  # RecursionError: absurdly nested JSON
                damaged.append(number)
    return LoadedSession(tuple(events), tuple(damaged))


CSV_COLUMNS = (
    "event_id",
    "kind",
    "t",
    "wall_time",
    "keyframe_id",
    "source",
    "still",
    "signal",
    "question",  # as the session asked it (its first line): the profile's words, else the prompt; empty in older logs
    "observation",
    "parse_status",
    "parse_reason",
    "review",
    "final_observation",
    "verdict",
    "review_note",
    "reviewed_by",
    "review_history",
    "confidence",
    "alert_tier",
    "model_id",
    "model_revision",
    "backend",
    "total_ms",
    "model_score",  # a diagnostic of the constrained decoder, never confidence
    "withheld",  # what the model picked when the profile's score cut made it unknown
    "raw",
)


def review_history(entry: TimelineEntry) -> str:
    """Every verdict on one keyframe in order, e.g. "corrected yes -> confirmed no"."""
    return " -> ".join(r.describe() for r in entry.history)


def export_csv(session: LoadedSession) -> str:
    """One row per analysed keyframe, with the examiner's reviews folded in (the last one counts)."""
    rows: list[dict[str, object]] = []
    asked = session.state.asked
    questions = asked.questions("en") if asked is not None else {}
    for entry in session.state.timeline:
        e: PracticeEvent = entry.event
        latest = entry.latest_review
        rows.append(
            {
                "event_id": e.event_id,
                "kind": e.kind,
                "t": f"{e.t:.3f}",
                "wall_time": f"{e.wall_time:.3f}",
                "keyframe_id": e.keyframe_id,
                "source": e.source,  # the camera, or the video's or the image's file name
                "still": "yes" if e.still else "",  # a still's t is only its place in the list
                "signal": e.signal,
                "question": questions.get(e.signal, ""),
                "observation": e.observation,
                "parse_status": e.parse_status,
                "parse_reason": e.parse_reason,
                "review": entry.review,
                "final_observation": entry.final_observation or "",
                "verdict": entry.verdict,  # what counts: the examiner's once reviewed, else the model's
                "review_note": latest.note if latest else "",
                "reviewed_by": latest.examiner if latest else "",
                "review_history": review_history(entry),
                "confidence": entry.routing.confidence,
                "alert_tier": entry.routing.alert_tier,
                "model_id": e.model_id,
                "model_revision": e.model_revision,
                "backend": e.backend,
                "total_ms": f"{e.timings.total_ms:.1f}",
                "model_score": "" if e.model_score is None else f"{e.model_score:.6g}",
                "withheld": e.withheld,
                "raw": e.raw,
            }
        )
    return table_csv(CSV_COLUMNS, rows)


RHYTHM_CSV_COLUMNS = (
    "event_id",
    "t",
    "wall_time",
    "rate_per_min",  # over the last 6 s of frames; empty: no periodic motion
    "periodicity",
    "compressions",  # counted so far
    "median_rate_per_min",
    "compression_fraction",
    "pauses",
    "paused_s",  # length of the pause going on at t; empty when compressing
    "frames_per_s",  # frames a second the rhythm was measured from; empty: not recorded
    "frame_times",  # "guessed": the video gave no usable frame rate or times (every figure scales with it)
)


def _figure(value: float | None, digits: int = 1) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def export_rhythm_csv(session: LoadedSession) -> str:
    """One row per rhythm sample (about one a second of a camera or video session)."""
    rows: list[dict[str, object]] = []
    for sample in session.state.rhythm:
        ongoing = next((p for p in sample.pauses if p.ongoing), None)
        rows.append(
            {
                "event_id": sample.event_id,
                "t": f"{sample.t:.3f}",
                "wall_time": f"{sample.wall_time:.3f}",
                "rate_per_min": _figure(sample.rate_per_min),
                "periodicity": f"{sample.periodicity:.3f}",
                "compressions": sample.count,
                "median_rate_per_min": _figure(sample.median_rate_per_min),
                "compression_fraction": _figure(sample.compression_fraction, 3),
                "pauses": len(sample.pauses),
                "paused_s": _figure(ongoing.length_s if ongoing else None),
                "frames_per_s": _figure(sample.frame_rate),
                "frame_times": "guessed" if sample.frame_times_guessed else "",
            }
        )
    return table_csv(RHYTHM_CSV_COLUMNS, rows)


def export_jsonl(session: LoadedSession) -> str:
    return "".join(json.dumps(event_to_dict(e), ensure_ascii=False) + "\n" for e in session.events)


def _listed(counts: tuple[tuple[str, int], ...]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts) or "none"


def summary_text(session: LoadedSession) -> str:
    state = session.state
    revised = [e for e in state.timeline if e.revised]
    if len(state.signals) > 1:  # a checklist: counts of different questions do not add up
        answers = [f"Model answers, {signal}: {_listed(dict(state.signal_counts)[signal])}" for signal in state.signals]
        verdicts = [f"Verdicts, {signal}: {_listed(verdict_counts(state, signal))}" for signal in state.signals]
        counted = [
            f"Keyframes analysed: {state.keyframes_answered} (a checklist of {len(state.signals)} signals)",
            *answers,
            "Verdicts are the examiner's where reviewed:",
            *verdicts,
        ]
    else:
        counted = [
            f"Keyframes analysed: {len(state.timeline)}",
            f"Model answers: {_listed(state.counts)}",
            f"Verdicts (the examiner's where reviewed): {_listed(verdict_counts(state))}",
        ]
    asked = state.asked
    lines = [
        (
            f"Asked: {asked.title('en')} (profile {asked.profile_id}, file SHA-256 {asked.profile_sha256 or '-'}); "
            f"model {asked.model_id} {asked.model_revision}"
            if asked is not None
            else "What was asked: not recorded (a session from an earlier version)"
        ),
        *(
            [f"Trainee: {state.trainee or '-'}; examiner: {state.examiner or '-'}"]
            if state.trainee or state.examiner
            else []
        ),
        *counted,
        f"Skipped: {state.skipped} (unchanged {state.unchanged}); failed: {state.failed}",
        f"Pending examiner confirmation: {len(state.pending)}",
        f"Reviewed: {sum(1 for e in state.timeline if e.review is not Review.PENDING)} "
        f"(corrected {sum(1 for e in state.timeline if e.review is Review.CORRECTED)}, revised {len(revised)})",
    ]
    lines += [
        f"  revised {e.event.event_id} at {e.event.t:.1f} s: model {e.event.observation}; {review_history(e)}"
        for e in revised
    ]
    rhythm = summarise_rhythm(state.rhythm)
    if rhythm is not None:
        lines.append("Compression rhythm (measured from motion in every frame, not by the model):")
        said = [*rhythm_figures(rhythm), "Depth and recoil: not measured by the camera"]
        lines += [f"  {line}" for line in said]
    lines.append("All model answers are generative: confidence 0, for practice feedback only.")
    if session.damaged_lines:
        lines.append(f"Damaged log lines skipped: {', '.join(map(str, session.damaged_lines))}")
    return "\n".join(lines) + "\n"
