"""A score cut: the model score below which an answer is withheld as `unknown` (reason `low_score`),
and the coverage–accuracy curve a tester picks it from.

Pure logic: `app.evaluation.report` puts the curve in every report, so `python -m app eval` and the
testers' screen show the same one.

The score is the constrained decoder's product of the chosen answer tokens' probabilities: a
diagnostic of the model's own preference, never a confidence (an examiner still confirms every
answer). A cut trades answers for accuracy: at threshold t every answer scoring below t becomes
`unknown`. Over the labelled answered images of one signal:

- coverage(t) = answers still given (not `unknown`) / labelled answered images;
- accuracy(t) = those answers that match the label / answers still given ("—" when none is).

An answer the model gave without a score (free decoding) is never withheld, and one that is
`unknown` before any cut (rejected by the parser, or the model's own `unknown`) is never given.
The curve is computed from the model's picks *before* a profile's saved cut, so it is the same
whichever threshold is saved.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from app.core.parser import ParsedAnswer, ParseReason
from app.core.profile.task import UNKNOWN

# Rows a terminal table shows: the highest threshold that still keeps at least this share of answers.
SUMMARY_COVERAGES = (1.0, 0.95, 0.9, 0.8, 0.7, 0.5)


def withheld(score: float | None, min_score: float | None) -> bool:
    """Whether a cut at `min_score` withholds an answer of `score` (no score, or no cut: never)."""
    return min_score is not None and score is not None and score < min_score


def cut(answer: ParsedAnswer, score: float | None, min_score: float | None) -> ParsedAnswer:
    """`answer` after a cut at `min_score`: a valid answer scoring below it becomes `unknown` (low_score),
    its value kept as `withheld`; any other answer is as it was."""
    if not answer.valid or answer.observation == UNKNOWN or not withheld(score, min_score):
        return answer
    return ParsedAnswer(UNKNOWN, ParseReason.LOW_SCORE, answer.raw, withheld=answer.observation)


@dataclass(frozen=True)
class CutPoint:
    threshold: float  # answers scoring below it are withheld; 0 withholds none
    kept: int  # labelled answers still given (not unknown)
    correct: int  # of those, the ones that match the label
    labelled: int  # labelled answered images: coverage's denominator

    @property
    def coverage(self) -> float | None:
        return None if self.labelled == 0 else self.kept / self.labelled

    @property
    def accuracy(self) -> float | None:
        return None if self.kept == 0 else self.correct / self.kept

    def to_dict(self) -> dict[str, Any]:
        return {
            "threshold": round(self.threshold, 6),
            "kept": self.kept,
            "correct": self.correct,
            "coverage": None if self.coverage is None else round(self.coverage, 4),
            "accuracy": None if self.accuracy is None else round(self.accuracy, 4),
        }


@dataclass(frozen=True)
class CutCurve:
    answers: tuple[tuple[float | None, bool], ...]  # (score, matches the label) of each answer given before a cut
    labelled: int  # labelled answered images
    points: tuple[CutPoint, ...]  # at 0 (nothing withheld), then at every score given, ascending

    @property
    def scored(self) -> int:
        """Labelled answers given with a score: the ones a cut can withhold."""
        return sum(score is not None for score, _ in self.answers)

    @property
    def unscored(self) -> int:
        """Labelled answers given without one (free decoding): never withheld."""
        return len(self.answers) - self.scored

    def at(self, threshold: float | None) -> CutPoint:
        """What a cut at `threshold` leaves (None: no cut)."""
        kept = [right for score, right in self.answers if not withheld(score, threshold)]
        return CutPoint(threshold or 0.0, len(kept), sum(kept), self.labelled)

    def summary(self, coverages: Sequence[float] = SUMMARY_COVERAGES) -> tuple[CutPoint, ...]:
        """For each coverage, the highest threshold that keeps at least that share; each point once."""
        chosen: list[CutPoint] = []
        for target in coverages:
            fits = [p for p in self.points if p.coverage is not None and p.coverage >= target - 1e-12]
            if fits and fits[-1] not in chosen:
                chosen.append(fits[-1])
        return tuple(chosen)

    def shown_rows(self, min_score: float | None = None) -> tuple[CutPoint, ...]:
        """What a table shows: the summary, and the saved cut's own point, by threshold."""
        rows = [*self.summary(), *([] if min_score is None else [self.at(min_score)])]
        return tuple(sorted(set(rows), key=lambda p: p.threshold))

    def trade(self, threshold: float) -> CutTrade:
        """What a cut at `threshold` costs and gains against no cut."""
        before, after = self.at(None), self.at(threshold)
        return CutTrade(before.kept - after.kept, before.kept, before.accuracy, after.accuracy)

    def to_dict(self) -> dict[str, Any]:
        return {"scored": self.scored, "unscored": self.unscored, "points": [p.to_dict() for p in self.points]}


@dataclass(frozen=True)
class CutTrade:
    """A cut against no cut: the answers it withholds (of those given), and how often the answers are
    right before and after it."""

    withheld: int
    given: int
    before: float | None
    after: float | None

    @property
    def share(self) -> float:
        """The share of the given answers the cut withholds."""
        return self.withheld / self.given if self.given else 0.0

    @property
    def gains(self) -> bool:
        """Whether the answers kept are right more often than all of them were. Counts of a few hundred
        answers differ by at least 1/n², far above float error: any rise is a real one."""
        return self.before is not None and self.after is not None and self.after > self.before + 1e-12


def threshold_words(thresholds: Sequence[float]) -> list[str]:
    """The thresholds written with the fewest significant digits (from 2) that still tell them apart:
    scores near 1 can share their first six (0.9999551 and 0.9999554)."""
    for digits in range(2, 17):
        words = [f"{t:.{digits}g}" for t in thresholds]
        if len(set(words)) == len(set(thresholds)):
            return words
    return [repr(t) for t in thresholds]


class LabelledAnswer(Protocol):
    """What the curve reads of a prediction (the report's `Prediction`): its label, its answer, the answer
    before a cut withheld it, and the decoder's score."""

    @property
    def expected(self) -> str | None: ...
    @property
    def observed(self) -> str | None: ...
    @property
    def picked(self) -> str | None: ...
    @property
    def score(self) -> float | None: ...


def cut_curve(predictions: Iterable[LabelledAnswer]) -> CutCurve:
    """The coverage–accuracy curve over one signal's labelled answered predictions."""
    given: list[tuple[float | None, bool]] = []
    labelled = 0
    for p in predictions:
        if p.expected is None or p.observed is None:
            continue
        labelled += 1
        pick = p.picked if p.picked is not None else p.observed
        if pick != UNKNOWN:
            given.append((p.score, pick == p.expected))
    curve = CutCurve(tuple(given), labelled, ())
    # A cut at the lowest score keeps every answer, as no cut does: the curve starts at the next one.
    thresholds = [None, *sorted({s for s, _ in given if s is not None})[1:]]
    return replace(curve, points=tuple(curve.at(t) for t in thresholds))
