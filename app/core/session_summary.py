"""A session's figures as its screens and report show them: answers per question, reviews, agreement.

Pure (no UI). Agreement is with the examiner (confirmed of reviewed), never called accuracy.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from app.core.generation import ParseStatus
from app.core.session import PracticeEvent, Review, SessionState, TimelineEntry, verdict_counts

# A checklist's answer its gate left unasked: the model said nothing, so it is counted apart from its unknowns.
NOT_CHECKED = "not_checked"


def is_checklist(state: SessionState) -> bool:
    """The session asks several questions (signals) per keyframe: each must be shown and counted apart."""
    return len(state.signals) > 1


def answer_kind(event: PracticeEvent) -> str:
    """The model's answer, or NOT_CHECKED where the checklist's gate left the question unasked."""
    return NOT_CHECKED if event.parse_status == ParseStatus.NOT_ASKED else event.observation


def verdict_kind(entry: TimelineEntry) -> str:
    """What counts for an answer: the examiner's correction once given, else the model's answer (which a
    confirmation agrees with; NOT_CHECKED where the gate left it unasked and no examiner corrected it)."""
    return entry.verdict if entry.review == "corrected" else answer_kind(entry.event)


def agreement(confirmed: int, reviewed: int) -> float | None:
    """Agreement with the examiner: confirmed / reviewed (the latest verdict counts); None before any review."""
    return confirmed / reviewed if reviewed else None


@dataclass(frozen=True)
class SignalSummary:
    """One question of a checklist session: the model's answers to it and how far the examiner got."""

    signal: str
    counts: tuple[tuple[str, int], ...]  # the model's answers, NOT_CHECKED apart
    analysed: int
    reviewed: int
    confirmed: int
    corrected: int

    @property
    def agreement(self) -> float | None:
        return agreement(self.confirmed, self.reviewed)


def _reviews(entries: Sequence[TimelineEntry]) -> tuple[int, int, int]:
    """(reviewed, confirmed, corrected) of these answers; each answer's latest verdict counts."""
    reviews = [e.review for e in entries]
    pending, confirmed, corrected = (reviews.count(r) for r in (Review.PENDING, Review.CONFIRMED, Review.CORRECTED))
    return len(reviews) - pending, confirmed, corrected


def _signal_summaries(state: SessionState) -> tuple[SignalSummary, ...]:
    """A checklist's figures per question; () for a one-question session, whose summary is that question's."""
    if not is_checklist(state):
        return ()
    out: list[SignalSummary] = []
    for signal in state.signals:
        entries = [e for e in state.timeline if e.event.signal == signal]
        counts = Counter(answer_kind(e.event) for e in entries)
        out.append(SignalSummary(signal, tuple(sorted(counts.items())), len(entries), *_reviews(entries)))
    return tuple(out)


@dataclass(frozen=True)
class SessionSummary:
    """The numbers the summary shows; agreement is confirmed / reviewed (the latest verdict counts).

    `analysed` counts answers: a checklist's keyframe has one per signal, and `keyframes` counts it once."""

    analysed: int
    counts: tuple[tuple[str, int], ...]  # the model's answers
    verdicts: tuple[tuple[str, int], ...]  # the examiner's where reviewed, else the model's
    skipped: int
    unchanged: int
    failed: int
    pending: int
    reviewed: int
    confirmed: int
    corrected: int
    revised: int
    damaged_lines: int
    keyframes: int
    signals: tuple[SignalSummary, ...]  # a checklist's questions, in the order first answered; () for one question

    @property
    def agreement(self) -> float | None:
        return agreement(self.confirmed, self.reviewed)

    def count(self, observation: str) -> int:
        return dict(self.counts).get(observation, 0)


def summarise(state: SessionState, damaged_lines: int = 0) -> SessionSummary:
    reviewed, confirmed, corrected = _reviews(state.timeline)
    return SessionSummary(
        analysed=len(state.timeline),
        counts=state.counts,
        verdicts=verdict_counts(state),
        skipped=state.skipped,
        unchanged=state.unchanged,
        failed=state.failed,
        pending=len(state.timeline) - reviewed,
        reviewed=reviewed,
        confirmed=confirmed,
        corrected=corrected,
        revised=sum(1 for e in state.timeline if e.revised),
        damaged_lines=damaged_lines,
        keyframes=state.keyframes_answered,
        signals=_signal_summaries(state),
    )
