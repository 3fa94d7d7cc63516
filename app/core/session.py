"""A practice session as an event log, folded by a pure reducer.

Everything that happens is an event: an analysed keyframe (PracticeEvent), a
keyframe that was skipped or failed, an examiner's confirmation or correction.
The state the UI shows is `reduce(events)`, so a session replays exactly from
its log.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from typing import Any, Union

from app.core.generation import Timings
from app.core.routing import Routing, route


@dataclass(frozen=True)
class PracticeEvent:
    event_id: str
    t: float  # seconds since the session started (frame time)
    wall_time: float  # unix time when the answer arrived
    keyframe_id: str
    signal: str
    observation: str
    parse_status: str  # valid | rejected
    parse_reason: str
    raw: str
    timings: Timings
    model_id: str
    model_revision: str
    backend: str
    model_score: float | None = None  # diagnostic only (constrained decoding), never confidence
    kind: str = field(default="practice", init=False)


class SkipReason(str, Enum):
    UNCHANGED = "unchanged"
    SUPERSEDED = "superseded"


@dataclass(frozen=True)
class KeyframeSkipped:
    event_id: str
    t: float
    wall_time: float
    keyframe_id: str
    reason: SkipReason
    kind: str = field(default="skipped", init=False)


@dataclass(frozen=True)
class KeyframeFailed:
    event_id: str
    t: float
    wall_time: float
    keyframe_id: str
    error: str
    message: str
    kind: str = field(default="failed", init=False)


@dataclass(frozen=True)
class ExaminerConfirmed:
    event_id: str
    target_id: str
    wall_time: float
    examiner: str = ""
    kind: str = field(default="confirmed", init=False)


@dataclass(frozen=True)
class ExaminerCorrected:
    event_id: str
    target_id: str
    wall_time: float
    observation: str
    note: str = ""
    examiner: str = ""
    kind: str = field(default="corrected", init=False)


SessionEvent = Union[PracticeEvent, KeyframeSkipped, KeyframeFailed, ExaminerConfirmed, ExaminerCorrected]


@dataclass(frozen=True)
class TimelineEntry:
    event: PracticeEvent
    routing: Routing
    review: str = "pending"  # pending | confirmed | corrected
    final_observation: str | None = None  # the examiner's value once reviewed


@dataclass(frozen=True)
class SessionState:
    timeline: tuple[TimelineEntry, ...] = ()
    counts: tuple[tuple[str, int], ...] = ()  # observation -> count (model answers)
    skipped: int = 0
    unchanged: int = 0
    failed: int = 0
    current_streak: tuple[str, int] | None = None  # (observation, length) of the latest run
    longest_streaks: tuple[tuple[str, int], ...] = ()
    failures: tuple[KeyframeFailed, ...] = ()
    last_t: float = 0.0

    @property
    def pending(self) -> tuple[TimelineEntry, ...]:
        return tuple(e for e in self.timeline if e.review == "pending")

    def count(self, observation: str) -> int:
        return dict(self.counts).get(observation, 0)


def _bump(pairs: tuple[tuple[str, int], ...], key: str, value: int | None = None) -> tuple[tuple[str, int], ...]:
    d = dict(pairs)
    d[key] = d.get(key, 0) + 1 if value is None else max(d.get(key, 0), value)
    return tuple(sorted(d.items()))


def _review(state: SessionState, target_id: str, review: str, observation: str | None) -> SessionState:
    timeline = tuple(
        replace(e, review=review, final_observation=observation or e.event.observation)
        if e.event.event_id == target_id
        else e
        for e in state.timeline
    )
    return replace(state, timeline=timeline)


def apply(state: SessionState, event: SessionEvent) -> SessionState:
    """The reducer: a new state, the old one untouched. Unknown targets are ignored."""
    if isinstance(event, PracticeEvent):
        streak = state.current_streak
        length = streak[1] + 1 if streak and streak[0] == event.observation else 1
        return replace(
            state,
            timeline=state.timeline + (TimelineEntry(event, route(event)),),
            counts=_bump(state.counts, event.observation),
            current_streak=(event.observation, length),
            longest_streaks=_bump(state.longest_streaks, event.observation, length),
            last_t=max(state.last_t, event.t),
        )
    if isinstance(event, KeyframeSkipped):
        return replace(
            state,
            skipped=state.skipped + 1,
            unchanged=state.unchanged + (event.reason is SkipReason.UNCHANGED),
            last_t=max(state.last_t, event.t),
        )
    if isinstance(event, KeyframeFailed):
        return replace(
            state, failed=state.failed + 1, failures=state.failures + (event,), last_t=max(state.last_t, event.t)
        )
    if isinstance(event, ExaminerConfirmed):
        return _review(state, event.target_id, "confirmed", None)
    if isinstance(event, ExaminerCorrected):
        return _review(state, event.target_id, "corrected", event.observation)
    raise TypeError(f"not a session event: {event!r}")


def reduce(events: list[SessionEvent] | tuple[SessionEvent, ...], state: SessionState | None = None) -> SessionState:
    state = state or SessionState()
    for event in events:
        state = apply(state, event)
    return state


# --- serialisation (one JSON object per event) ------------------------------------------

_KINDS: dict[str, type] = {
    "practice": PracticeEvent,
    "skipped": KeyframeSkipped,
    "failed": KeyframeFailed,
    "confirmed": ExaminerConfirmed,
    "corrected": ExaminerCorrected,
}


def event_to_dict(event: SessionEvent) -> dict[str, Any]:
    data = asdict(event)
    if isinstance(event, KeyframeSkipped):
        data["reason"] = event.reason.value
    return data


def event_from_dict(data: dict[str, Any]) -> SessionEvent:
    data = dict(data)
    kind = data.pop("kind", None)
    cls = _KINDS.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise ValueError(f"unknown event kind {kind!r}")
    if cls is PracticeEvent:
        data["timings"] = Timings(**data["timings"])
    if cls is KeyframeSkipped:
        data["reason"] = SkipReason(data["reason"])
    return cls(**data)
