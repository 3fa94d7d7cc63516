"""A practice session as an event log, folded by a pure reducer.

Everything that happens is an event: an analysed keyframe (PracticeEvent), a
keyframe that was skipped or failed, an examiner's confirmation or correction.
The state the UI shows is `reduce(events)`, so a session replays exactly from
its log.

A later review of the same keyframe never overwrites an earlier one silently:
the timeline entry keeps every review in order (`history`), so an export shows
"corrected yes -> confirmed no" rather than only the last word.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from enum import StrEnum
from typing import Any, TypeVar

from app.core.generation import ParseStatus, Timings
from app.core.person_names import NameRefused, person_name
from app.core.record import FLAG, OBJECT, TEXT, Rule, is_number, is_whole, list_of, optional, read_field
from app.core.rhythm_figures import Pause, Rhythm
from app.core.routing import GENERATIVE, Routing

CAMERA_SOURCE = "camera"  # a keyframe's `source` when it came from a camera (the screens translate it)


# Events take keywords only: their field order is the key order of a log line, so it stays as it is,
# and siblings differ in it (ExaminerConfirmed and ExaminerCorrected put `note` and `examiner` apart).
@dataclass(frozen=True, kw_only=True)
class PracticeEvent:
    event_id: str
    t: float  # seconds since the session started (frame time)
    wall_time: float  # unix time when the answer arrived
    keyframe_id: str
    signal: str
    observation: str
    parse_status: ParseStatus  # never ERROR: a keyframe that failed is a KeyframeFailed
    parse_reason: str
    raw: str
    timings: Timings
    model_id: str
    model_revision: str
    backend: str
    model_score: float | None = None  # diagnostic only (constrained decoding), never confidence
    # The profile the question came from and the answers it allows, so an examiner's
    # correction can be checked against them. Empty in logs written before they were recorded.
    profile_id: str = ""
    allowed_values: tuple[str, ...] = ()
    # What the keyframe came from: CAMERA_SOURCE, a video's or an image's file name ("" in older logs);
    # `still`: a still image, whose `t` is only its place in the list, not a time.
    source: str = ""
    still: bool = False
    # A checklist's signal its gate left unasked: the gate's signal (its own event on the same
    # keyframe says what it answered). Written only when set, so one-signal records stay as they were.
    gated_by: str = ""
    # An answer the profile's score cut withheld (observation unknown, reason low_score): what the model
    # picked. Written only when set, as `gated_by` is.
    withheld: str = ""
    kind: str = field(default="practice", init=False)


class SkipReason(StrEnum):
    UNCHANGED = "unchanged"
    SUPERSEDED = "superseded"
    STOPPED = "stopped"  # in the worker when the user stopped: cancelled, so the log has no hole


@dataclass(frozen=True, kw_only=True)
class KeyframeSkipped:
    event_id: str
    t: float
    wall_time: float
    keyframe_id: str
    reason: SkipReason
    kind: str = field(default="skipped", init=False)


@dataclass(frozen=True, kw_only=True)
class KeyframeFailed:
    event_id: str
    t: float
    wall_time: float
    keyframe_id: str
    error: str
    message: str
    # What the keyframe came from, as a PracticeEvent's `source` ("" in older logs; written only when set).
    source: str = ""
    kind: str = field(default="failed", init=False)


@dataclass(frozen=True, kw_only=True)
class ExaminerConfirmed:
    event_id: str
    target_id: str
    wall_time: float
    examiner: str = ""
    note: str = ""
    revises: str = ""  # event_id of the earlier review this one deliberately replaces
    kind: str = field(default="confirmed", init=False)


@dataclass(frozen=True, kw_only=True)
class ExaminerCorrected:
    event_id: str
    target_id: str
    wall_time: float
    observation: str
    note: str = ""
    examiner: str = ""
    revises: str = ""  # event_id of the earlier review this one deliberately replaces
    kind: str = field(default="corrected", init=False)


@dataclass(frozen=True, kw_only=True)
class RhythmSample:
    """The compression rhythm as the estimator saw it at `t` (about once a second of frames, and once
    when the source ends): the window's rate and the session's figures so far, so the last sample of
    a session holds its totals. Measured from motion, not by the model: no review applies."""

    event_id: str
    t: float  # frame time, like a keyframe's
    wall_time: float
    rate_per_min: float | None  # None: no periodic motion in the window ("—")
    periodicity: float
    count: int  # compressions counted so far
    median_rate_per_min: float | None
    compression_fraction: float | None
    pauses: tuple[Pause, ...] = ()  # every pause so far; the last may be ongoing
    frame_rate: float | None = None  # frames a second the rhythm was measured from (None: not recorded)
    # The frames' times are a guess (a video whose header rate was refused and whose frames carry no
    # times of their own): every rate, pause and time here scales with that guess.
    frame_times_guessed: bool = False
    kind: str = field(default="rhythm", init=False)

    @classmethod
    def of(cls, rhythm: Rhythm, *, event_id: str, wall_time: float, frame_times_guessed: bool = False) -> RhythmSample:
        return cls(
            frame_times_guessed=frame_times_guessed,
            event_id=event_id,
            t=rhythm.t_s,
            wall_time=wall_time,
            rate_per_min=rhythm.rate_per_min,
            periodicity=rhythm.periodicity,
            count=rhythm.count,
            median_rate_per_min=rhythm.median_rate_per_min,
            compression_fraction=rhythm.compression_fraction,
            pauses=rhythm.pauses,
            frame_rate=rhythm.frame_rate,
        )

    @property
    def rhythm(self) -> Rhythm:
        return Rhythm(
            t_s=self.t,
            rate_per_min=self.rate_per_min,
            periodicity=self.periodicity,
            count=self.count,
            median_rate_per_min=self.median_rate_per_min,
            pauses=self.pauses,
            compression_fraction=self.compression_fraction,
            frame_rate=self.frame_rate,
        )


@dataclass(frozen=True, kw_only=True)
class AskedSignal:
    """One question as the session asked it: its answers, its words per language as shown then, and the
    score cut in force (None: none)."""

    signal: str
    values: tuple[str, ...]
    prompt: str = ""  # what the model read (as asked: the constrained decoder's when it differs)
    questions: tuple[tuple[str, str], ...] = ()  # (language, the question in words for people)
    answer_words: tuple[tuple[str, str, str], ...] = ()  # (language, value, its words) where the profile has them
    min_score: float | None = None

    def question(self, language: str) -> str:
        """Its words for people in `language` ("" where the profile had none: views fall back as then)."""
        return dict(self.questions).get(language, "")


@dataclass(frozen=True, kw_only=True)
class SessionAsked:
    """What a session asked, from its first line: the profile (id, title, a hash of its file), every
    question and the model. Every view of the session reads this, never the settings of the day."""

    event_id: str
    wall_time: float
    profile_id: str
    profile_sha256: str  # of the profile file as it was asked ("" when it could not be read)
    titles: tuple[tuple[str, str], ...]  # (language, the profile's title)
    signals: tuple[AskedSignal, ...]
    gate: str = ""  # a checklist's first question, which decides whether the others are asked
    model_id: str = ""
    model_revision: str = ""
    kind: str = field(default="asked", init=False)

    def signal(self, name: str) -> AskedSignal | None:
        return next((s for s in self.signals if s.signal == name), None)

    def title(self, language: str) -> str:
        """The profile's title in `language`, else its file's own."""
        titles = dict(self.titles)
        return titles.get(language) or titles.get("", "") or self.profile_id

    def questions(self, language: str) -> dict[str, str]:
        """signal -> its question in `language` as the card showed it: the profile's words in that language,
        else a one-question session's title; never the prompt (instructions for the model). A checklist's
        question without words is left out: views name it by its signal, as its card line did."""
        single = len(self.signals) == 1
        titled = self.title(language) if single else ""
        return {s.signal: q for s in self.signals if (q := s.question(language) or titled)}


@dataclass(frozen=True, kw_only=True)
class SessionNamed:
    """Who practised and who examined, set at Start or afterwards (names tidied by
    `app.core.person_names.person_name`; "" for none). The latest line counts; earlier ones stay in the
    log, as every review does."""

    event_id: str
    wall_time: float
    trainee: str = ""
    examiner: str = ""
    kind: str = field(default="named", init=False)


SessionEvent = (
    SessionAsked
    | PracticeEvent
    | KeyframeSkipped
    | KeyframeFailed
    | ExaminerConfirmed
    | ExaminerCorrected
    | RhythmSample
    | SessionNamed
)


class Review(StrEnum):
    """Where a keyframe's answer stands with the examiner."""

    PENDING = "pending"  # the model's answer, waiting
    CONFIRMED = "confirmed"  # the model's answer, as the examiner confirmed it
    CORRECTED = "corrected"  # the examiner's answer instead


@dataclass(frozen=True)
class ReviewRecord:
    """One examiner verdict on one keyframe, as it was given."""

    event_id: str
    verdict: Review  # CONFIRMED or CORRECTED
    observation: str  # the value the examiner settled on
    note: str
    examiner: str
    wall_time: float

    def describe(self) -> str:
        return f"{self.verdict} {self.observation}"


@dataclass(frozen=True)
class TimelineEntry:
    event: PracticeEvent
    routing: Routing
    review: Review = Review.PENDING  # the latest verdict
    final_observation: str | None = None  # the examiner's value once reviewed
    history: tuple[ReviewRecord, ...] = ()  # every review in log order; the last one counts

    @property
    def latest_review(self) -> ReviewRecord | None:
        return self.history[-1] if self.history else None

    @property
    def verdict(self) -> str:
        """What counts as the answer: the examiner's once reviewed, else the model's (pending)."""
        if self.review is not Review.PENDING and self.final_observation:
            return self.final_observation
        return self.event.observation

    @property
    def revised(self) -> bool:
        return len(self.history) > 1


@dataclass(frozen=True)
class SessionState:
    """A checklist's keyframe is one timeline entry per signal (same keyframe_id), each reviewed on its own."""

    timeline: tuple[TimelineEntry, ...] = ()
    counts: tuple[tuple[str, int], ...] = ()  # observation -> count (model answers, every signal)
    signal_counts: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = ()  # signal -> its counts, first seen first
    # The skipped keyframes themselves: their count, the Sessions summary's and every timeline's points
    # (Practice's live one too) all come from here, so no screen can count them differently.
    skips: tuple[KeyframeSkipped, ...] = ()
    failed: int = 0
    failures: tuple[KeyframeFailed, ...] = ()
    last_t: float = 0.0
    rhythm: tuple[RhythmSample, ...] = ()  # a camera or video session's compression rhythm, in frame order
    asked: SessionAsked | None = None  # what the session asked (None: a log written before it was recorded)
    trainee: str = ""  # who practised, as last named ("" for no name)
    examiner: str = ""  # who examined, as last named

    @property
    def skipped(self) -> int:
        return len(self.skips)

    @property
    def unchanged(self) -> int:
        """Of the skipped keyframes, those skipped because the picture had not changed."""
        return sum(1 for s in self.skips if s.reason is SkipReason.UNCHANGED)

    @property
    def pending(self) -> tuple[TimelineEntry, ...]:
        return tuple(e for e in self.timeline if e.review is Review.PENDING)

    @property
    def signals(self) -> tuple[str, ...]:
        """The signals answered, in the order they first appeared (one for a one-signal profile)."""
        return tuple(signal for signal, _ in self.signal_counts)

    @property
    def keyframes_answered(self) -> int:
        """Keyframes with answers: a checklist's keyframe has one entry per signal but counts once."""
        return len({e.event.keyframe_id for e in self.timeline})

    def count(self, observation: str, signal: str | None = None) -> int:
        counts = self.counts if signal is None else dict(self.signal_counts).get(signal, ())
        return dict(counts).get(observation, 0)


def _bump(pairs: tuple[tuple[str, int], ...], key: str) -> tuple[tuple[str, int], ...]:
    d = dict(pairs)
    d[key] = d.get(key, 0) + 1
    return tuple(sorted(d.items()))


def _bump_signal(
    per_signal: tuple[tuple[str, tuple[tuple[str, int], ...]], ...], signal: str, observation: str
) -> tuple[tuple[str, tuple[tuple[str, int], ...]], ...]:
    d = dict(per_signal)  # keeps first-seen order
    d[signal] = _bump(d.get(signal, ()), observation)
    return tuple(d.items())


def _review(state: SessionState, event: ExaminerConfirmed | ExaminerCorrected) -> SessionState:
    def reviewed(entry: TimelineEntry) -> TimelineEntry:
        # A confirmation is of the model's answer, whatever an earlier review said.
        observation = event.observation if isinstance(event, ExaminerCorrected) else entry.event.observation
        verdict = Review.CORRECTED if isinstance(event, ExaminerCorrected) else Review.CONFIRMED
        record = ReviewRecord(event.event_id, verdict, observation, event.note, event.examiner, event.wall_time)
        return replace(entry, review=verdict, final_observation=observation, history=entry.history + (record,))

    timeline = tuple(reviewed(e) if e.event.event_id == event.target_id else e for e in state.timeline)
    return replace(state, timeline=timeline)


def apply(state: SessionState, event: SessionEvent) -> SessionState:
    """The reducer: a new state, the old one untouched. Unknown targets are ignored."""
    if isinstance(event, PracticeEvent):
        return replace(
            state,
            timeline=state.timeline + (TimelineEntry(event, GENERATIVE),),
            counts=_bump(state.counts, event.observation),
            signal_counts=_bump_signal(state.signal_counts, event.signal, event.observation),
            last_t=max(state.last_t, event.t),
        )
    if isinstance(event, KeyframeSkipped):
        return replace(state, skips=state.skips + (event,), last_t=max(state.last_t, event.t))
    if isinstance(event, KeyframeFailed):
        return replace(
            state, failed=state.failed + 1, failures=state.failures + (event,), last_t=max(state.last_t, event.t)
        )
    if isinstance(event, (ExaminerConfirmed, ExaminerCorrected)):
        return _review(state, event)
    if isinstance(event, RhythmSample):
        return replace(state, rhythm=state.rhythm + (event,), last_t=max(state.last_t, event.t))
    if isinstance(event, SessionAsked):
        return state if state.asked is not None else replace(state, asked=event)  # the first says it
    if isinstance(event, SessionNamed):
        return replace(state, trainee=event.trainee, examiner=event.examiner)
    raise TypeError(f"not a session event: {event!r}")


def reduce(events: list[SessionEvent] | tuple[SessionEvent, ...], state: SessionState | None = None) -> SessionState:
    state = state or SessionState()
    for event in events:
        state = apply(state, event)
    return state


# --- serialisation (one JSON object per event) ------------------------------------------

_KINDS: dict[str, type[SessionEvent]] = {
    "asked": SessionAsked,
    "practice": PracticeEvent,
    "skipped": KeyframeSkipped,
    "failed": KeyframeFailed,
    "confirmed": ExaminerConfirmed,
    "corrected": ExaminerCorrected,
    "rhythm": RhythmSample,
    "named": SessionNamed,
}


def event_to_dict(event: SessionEvent) -> dict[str, Any]:
    data = asdict(event)
    if isinstance(event, KeyframeSkipped):
        data["reason"] = event.reason.value
    if isinstance(event, PracticeEvent):
        data["allowed_values"] = list(event.allowed_values)
        for optional in ("gated_by", "withheld"):
            if not data[optional]:
                del data[optional]
    if isinstance(event, KeyframeFailed) and not event.source:
        del data["source"]
    return data


# Far beyond any time (s), duration (ms) or count a session holds, and within what every export can
# format: a 400-digit integer or 1e400 (inf) in a damaged line is damage, not a number.
_MAX_MAGNITUDE = 1e15


def _is_number(value: Any) -> bool:
    return is_number(value) and -_MAX_MAGNITUDE <= value <= _MAX_MAGNITUDE


_NUMBER = Rule("a number", _is_number)
# Each field type as annotated (string annotations, `from __future__ import annotations`): its rule.
_RULES_BY_TYPE: dict[str, Rule] = {
    "str": TEXT,
    "float": _NUMBER,
    "int": Rule("a whole number", lambda v: is_whole(v) and _is_number(v)),
    "bool": FLAG,
    "float | None": optional(_NUMBER),
    "tuple[str, ...]": list_of(TEXT, "a list of strings"),
    "tuple[Pause, ...]": list_of(OBJECT, "a list of objects"),
}


# The physical range of each number a session holds; every other number (times, milliseconds, counts)
# is ≥ 0. A hand-edited line with a compression fraction of 50 printed "CCF: 5000 %": outside its range
# a line is damage, counted and left out like any other. Rates: no hand compresses 300 times a minute.
_RANGES: dict[str, tuple[float, float]] = {
    "rate_per_min": (0.0, 300.0),
    "median_rate_per_min": (0.0, 300.0),
    # An unbiased autocorrelation's height: a little over 1 at long lags (1.0013 seen from a camera),
    # never over 1.5 (the longest lag is a third of the window).
    "periodicity": (0.0, 2.0),
    "compression_fraction": (0.0, 1.0),
    # The constrained decoder's diagnostic (a probability as written today); no physical range is
    # claimed for it beyond the magnitude every number has.
    "model_score": (-_MAX_MAGNITUDE, _MAX_MAGNITUDE),
}
_ROUNDING = 1e-9  # a fraction computed as 1.0000000000000002 is still 1


def _in_range(name: str, value: Any) -> bool:
    if not _is_number(value):
        return True  # None, or not a number: the type check decides
    low, high = _RANGES.get(name, (0.0, _MAX_MAGNITUDE))
    return bool(low - _ROUNDING <= value <= high + _ROUNDING)


def _checked_fields(cls: type[Any], data: dict[str, Any]) -> dict[str, Any]:
    """The init fields of `cls` from `data`, type-checked and each number within its range.

    A line that parses as JSON but holds the wrong types or impossible figures (a damaged or
    hand-edited log) must be rejected here, not crash the reducer or be printed as real later.
    Keys this version does not know (written by a newer one) are ignored.
    """

    def refuse(key: str, rule: Rule, value: object) -> ValueError:
        return ValueError(f"{cls.__name__}.{key}: unexpected {type(value).__name__}")

    out: dict[str, Any] = {}
    for f in fields(cls):
        if not f.init or f.name not in data:
            continue  # a missing field without a default fails in cls(**out)
        value = data[f.name]
        rule = _RULES_BY_TYPE.get(str(f.type))
        if rule is not None:
            read_field(data, f.name, rule, refuse)
        if not _in_range(f.name, value):
            raise ValueError(f"{cls.__name__}.{f.name}: {value!r} is outside its range")
        out[f.name] = tuple(value) if f.type == "tuple[str, ...]" else value
    return out


# Compressions a second at most (300 a minute), for a count "within the session".
_MAX_COMPRESSIONS_PER_S = 5.0


def _check_within(sample: RhythmSample) -> None:
    """A sample's count and pauses fit in the time it was taken at (its figures are "so far")."""
    if sample.count > _MAX_COMPRESSIONS_PER_S * sample.t + 1:
        raise ValueError(f"RhythmSample.count: {sample.count} compressions in {sample.t:g} s")
    for pause in sample.pauses:
        if pause.start_s + pause.length_s > sample.t + 1:
            raise ValueError(f"RhythmSample.pauses: a pause ends after the sample's time {sample.t:g} s")


def _string_rows(value: Any, width: int, where: str) -> tuple[tuple[str, ...], ...]:
    """A list of `width`-string lists (pairs, triples) as tuples; anything else is damage."""
    if not isinstance(value, list) or not all(
        isinstance(row, list) and len(row) == width and all(isinstance(x, str) for x in row) for row in value
    ):
        raise ValueError(f"{where}: expected lists of {width} strings")
    return tuple(tuple(row) for row in value)


def _asked_signal(data: dict[str, Any]) -> AskedSignal:
    values = _checked_fields(AskedSignal, data)
    values["questions"] = _string_rows(data.get("questions", []), 2, "AskedSignal.questions")
    values["answer_words"] = _string_rows(data.get("answer_words", []), 3, "AskedSignal.answer_words")
    return AskedSignal(**values)


_State = TypeVar("_State", bound=StrEnum)


def _member(kind: type[_State], value: Any, where: str) -> _State:
    """`value` as one of `kind`'s states; anything else is damage, said with the states this version knows."""
    if not isinstance(value, str):
        raise ValueError(f"{where}: expected a string")
    try:
        return kind(value)
    except ValueError:
        raise ValueError(f"{where}: {value!r} is not one of {', '.join(kind)}") from None


def _kept_name(name: str) -> bool:
    try:
        return person_name(name) == name
    except NameRefused:
        return False


def event_from_dict(data: dict[str, Any]) -> SessionEvent:
    if not isinstance(data, dict):
        raise ValueError("an event must be a JSON object")
    kind = data.get("kind")
    cls = _KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown event kind {kind!r}")
    values = _checked_fields(cls, data)
    if cls is PracticeEvent:
        if not isinstance(data.get("timings"), dict):
            raise ValueError("PracticeEvent.timings: expected an object")
        values["timings"] = Timings(**_checked_fields(Timings, data["timings"]))
    if cls is PracticeEvent:
        values["parse_status"] = _member(ParseStatus, data.get("parse_status"), "PracticeEvent.parse_status")
    if cls is KeyframeSkipped:
        values["reason"] = _member(SkipReason, data.get("reason"), "KeyframeSkipped.reason")
    if cls is RhythmSample:
        values["pauses"] = tuple(Pause(**_checked_fields(Pause, p)) for p in data.get("pauses", []))
    if cls is SessionAsked:
        values["titles"] = _string_rows(data.get("titles"), 2, "SessionAsked.titles")
        signals = data.get("signals")
        if not isinstance(signals, list) or not all(isinstance(x, dict) for x in signals):
            raise ValueError("SessionAsked.signals: expected a list of objects")
        values["signals"] = tuple(_asked_signal(x) for x in signals)
    if cls is SessionNamed:
        for who in ("trainee", "examiner"):  # as the screens keep them: a hand-edited paragraph is damage
            if who in values and not _kept_name(values[who]):
                raise ValueError(f"SessionNamed.{who}: not a name as the app keeps one")
    event: SessionEvent = cls(**values)
    if isinstance(event, RhythmSample):
        _check_within(event)
    return event


def verdict_counts(state: SessionState, signal: str | None = None) -> tuple[tuple[str, int], ...]:
    """How many answers have each verdict (the examiner's where reviewed, else the model's answer),
    of one signal or of every signal."""
    counts: dict[str, int] = {}
    for entry in state.timeline:
        if signal is None or entry.event.signal == signal:
            counts[entry.verdict] = counts.get(entry.verdict, 0) + 1
    return tuple(sorted(counts.items()))
