"""Append-only session log: one JSON line per event, flushed and fsynced.

An event is on disk before `append` returns, so a crash loses no event the UI
has shown. A torn last line (power cut mid-write) is reported and skipped on
load; every complete line before it is kept.
"""

from __future__ import annotations

import csv
import io
import json
import os
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from app.core.session import (
    PracticeEvent,
    SessionEvent,
    SessionState,
    event_from_dict,
    event_to_dict,
    reduce,
)


@dataclass(frozen=True)
class LoadedSession:
    events: tuple[SessionEvent, ...]
    damaged_lines: tuple[int, ...]  # 1-based line numbers that could not be read

    @property
    def state(self) -> SessionState:
        return reduce(self.events)


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]


class SessionLog:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._fh = open(self.path, "ab")
        self._end_torn_line()

    def _end_torn_line(self) -> None:
        # After a crash mid-write the file may end without a newline; the next
        # event must start on a line of its own, or it would be lost with the torn one.
        size = self.path.stat().st_size
        if size:
            with open(self.path, "rb") as fh:
                fh.seek(size - 1)
                if fh.read(1) != b"\n":
                    self._fh.write(b"\n")

    def append(self, event: SessionEvent) -> None:
        line = json.dumps(event_to_dict(event), ensure_ascii=False, separators=(",", ":")) + "\n"
        with self._lock:
            self._fh.write(line.encode("utf-8"))
            self._fh.flush()
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        with self._lock:
            if not self._fh.closed:
                self._fh.close()

    def __enter__(self) -> SessionLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def load_session(path: Path) -> LoadedSession:
    events: list[SessionEvent] = []
    damaged: list[int] = []
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                events.append(event_from_dict(json.loads(raw)))
            except (ValueError, TypeError, KeyError):
                damaged.append(number)
    return LoadedSession(tuple(events), tuple(damaged))


CSV_COLUMNS = (
    "event_id",
    "kind",
    "t",
    "wall_time",
    "keyframe_id",
    "signal",
    "observation",
    "parse_status",
    "parse_reason",
    "review",
    "final_observation",
    "confidence",
    "alert_tier",
    "model_id",
    "model_revision",
    "backend",
    "total_ms",
    "raw",
)


def export_csv(session: LoadedSession) -> str:
    """One row per analysed keyframe, with the examiner's review folded in."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for entry in session.state.timeline:
        e: PracticeEvent = entry.event
        writer.writerow(
            {
                "event_id": e.event_id,
                "kind": e.kind,
                "t": f"{e.t:.3f}",
                "wall_time": f"{e.wall_time:.3f}",
                "keyframe_id": e.keyframe_id,
                "signal": e.signal,
                "observation": e.observation,
                "parse_status": e.parse_status,
                "parse_reason": e.parse_reason,
                "review": entry.review,
                "final_observation": entry.final_observation or "",
                "confidence": entry.routing.confidence,
                "alert_tier": entry.routing.alert_tier,
                "model_id": e.model_id,
                "model_revision": e.model_revision,
                "backend": e.backend,
                "total_ms": f"{e.timings.total_ms:.1f}",
                "raw": e.raw,
            }
        )
    return buf.getvalue()


def export_jsonl(session: LoadedSession) -> str:
    return "".join(json.dumps(event_to_dict(e), ensure_ascii=False) + "\n" for e in session.events)


def summary_text(session: LoadedSession) -> str:
    state = session.state
    lines = [
        f"Keyframes analysed: {len(state.timeline)}",
        "Model answers: " + (", ".join(f"{k} {v}" for k, v in state.counts) or "none"),
        f"Skipped: {state.skipped} (unchanged {state.unchanged}); failed: {state.failed}",
        f"Pending examiner confirmation: {len(state.pending)}",
        f"Reviewed: {sum(1 for e in state.timeline if e.review != 'pending')} "
        f"(corrected {sum(1 for e in state.timeline if e.review == 'corrected')})",
        "All model answers are generative: confidence 0, for practice feedback only.",
    ]
    if session.damaged_lines:
        lines.append(f"Damaged log lines skipped: {', '.join(map(str, session.damaged_lines))}")
    return "\n".join(lines) + "\n"
