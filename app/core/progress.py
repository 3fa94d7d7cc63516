"""A trainee's progress across sessions: the same figures, session by session, oldest first.

Pure. Per session: how long, the compression rate (median, share of time in the target band), the
compression fraction, pauses (and those over the guidelines' 10 s), and each question's YES share
counted over its verdicts (the examiner's where reviewed, else the model's answer, which is pending).
Sessions are told apart by start time; a session without rhythm (stills) has no rhythm figures, and a
question a session did not ask has no share there (never a zero).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from app.core.person_names import same_person
from app.core.rhythm_summary import summarise_rhythm
from app.core.session import Review, SessionState
from app.core.session_summary import NOT_CHECKED, verdict_kind


@dataclass(frozen=True)
class QuestionShare:
    """One question in one session: YES of the answers it got (a checklist's unasked ones left out)."""

    signal: str
    yes: int
    answered: int
    reviewed: int  # of `answered`, those the examiner gave a verdict
    questions: tuple[tuple[str, str], ...] = ()  # (language, the question as the session asked it)

    @property
    def share(self) -> float | None:
        return self.yes / self.answered if self.answered else None


@dataclass(frozen=True)
class ProgressPoint:
    """One session's figures in a trainee's progress."""

    session_id: str
    trainee: str
    started: float | None  # wall time of the first keyframe
    duration_s: float | None
    source: str
    images: int = 0  # several still images: how many
    median_rate_per_min: float | None = None
    in_band_share: float | None = None
    compression_fraction: float | None = None
    pauses: int | None = None  # None: no rhythm in this session
    long_pauses: int | None = None
    questions: tuple[QuestionShare, ...] = ()


def _shares(state: SessionState) -> tuple[QuestionShare, ...]:
    out = []
    for signal in state.signals:
        verdicts = [
            (verdict_kind(e), e.review is not Review.PENDING) for e in state.timeline if e.event.signal == signal
        ]
        asked = [(v, reviewed) for v, reviewed in verdicts if v != NOT_CHECKED]
        said = state.asked.signal(signal) if state.asked is not None else None
        out.append(
            QuestionShare(
                signal,
                yes=sum(v == "yes" for v, _ in asked),
                answered=len(asked),
                reviewed=sum(reviewed for _, reviewed in asked),
                questions=said.questions if said is not None else (),
            )
        )
    return tuple(out)


def progress_point(
    session_id: str,
    started: float | None,
    duration_s: float | None,
    source: str,
    state: SessionState,
    images: int = 0,
) -> ProgressPoint:
    """A session's figures, read once when it is listed."""
    point = ProgressPoint(session_id, state.trainee, started, duration_s, source, images, questions=_shares(state))
    rhythm = summarise_rhythm(state.rhythm)
    if rhythm is None:
        return point
    return replace(
        point,
        median_rate_per_min=rhythm.median_rate_per_min,
        in_band_share=rhythm.in_band_share,
        compression_fraction=rhythm.compression_fraction,
        pauses=len(rhythm.pauses),
        long_pauses=rhythm.long_pause_count,
    )


def progress(points: Sequence[ProgressPoint], trainee: str) -> tuple[ProgressPoint, ...]:
    """The sessions of `trainee` (as `same_person` tells names apart), oldest first."""
    key = same_person(trainee)
    mine = [p for p in points if key and same_person(p.trainee) == key]
    return tuple(sorted(mine, key=lambda p: p.started if p.started is not None else float("inf")))


def trainees(points: Sequence[ProgressPoint]) -> tuple[str, ...]:
    """Every trainee named, once each, in alphabetical order: spelt as most of their sessions spell
    them (the newest spelling on a tie), so one session typed "ana lima" does not rename Ana Lima."""
    spellings: dict[str, Counter[str]] = {}
    newest: dict[str, float] = {}
    for p in points:
        if p.trainee:
            spellings.setdefault(same_person(p.trainee), Counter())[p.trainee] += 1
            newest[p.trainee] = max(newest.get(p.trainee, float("-inf")), p.started or 0.0)
    chosen = (max(c, key=lambda name: (c[name], newest[name])) for c in spellings.values())
    return tuple(sorted(chosen, key=same_person))
