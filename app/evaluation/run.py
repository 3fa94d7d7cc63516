"""One evaluation run, shared by `python -m app eval` and the Testers screen: what is asked of each
image, its labels read for those questions, labels paired with the images by file name (what does not
pair is reported, never fatal), each image's answers taken as they come (by the image's place in the
run) and the report over the images answered so far. The command and the screen only say it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.core.generation import ParseStatus
from app.core.profile.checklist import Checklist
from app.evaluation.labels import ChecklistLabels, Labels, decode_checklist_labels, decode_labels
from app.evaluation.report import ChecklistReport, Prediction, Report, evaluate, evaluate_checklist, match_labels

SINGLE = ""  # the one signal of a one-signal profile: its rows and outputs name no signal


def signal_values(checklist: Checklist) -> dict[str, tuple[str, ...]]:
    """Each signal's answers, in the checklist's order (its file's, as `analyze` prints them)."""
    return {spec.signal: tuple(spec.values) for spec in checklist.signals}


@dataclass(frozen=True)
class Questions:
    """What a run asks of every image: each signal's answers in order ({SINGLE: answers} for a one-signal
    profile), with the checklist's gate and score cuts, or the one-signal profile's cut."""

    answers: Mapping[str, tuple[str, ...]]
    checklist: Checklist | None = None
    min_score: float | None = None  # a one-signal profile's score cut (a checklist's are its signals')

    @staticmethod
    def one_signal(values: Sequence[str], min_score: float | None = None) -> Questions:
        return Questions({SINGLE: tuple(values)}, None, min_score)

    @staticmethod
    def of(checklist: Checklist) -> Questions:
        return Questions(signal_values(checklist), checklist)

    @property
    def signals(self) -> tuple[str, ...]:
        return tuple(self.answers)

    def read_labels(self, data: bytes, shown: str) -> Labels | ChecklistLabels:
        """A labels file for these questions: (file name, expected answer) rows for one signal, a header
        and a column per signal for a checklist. Raises LabelsFileError when it cannot be used."""
        if self.checklist is None:
            return decode_labels(data, self.answers[SINGLE], shown)
        return decode_checklist_labels(data, self.answers, shown)


def answered(
    name: str,
    expected: str | None,
    observed: str,
    status: ParseStatus,
    seconds: float,
    detail: str,
    score: float | None = None,
    withheld: str | None = None,
) -> Prediction:
    """One signal's answer on one image. A signal the checklist's gate left unasked is unknown and took no
    model time: its seconds are not counted."""
    if status is ParseStatus.NOT_ASKED:
        return Prediction(name, expected, observed, status, None, detail)
    return Prediction(name, expected, observed, status, seconds, detail, score, withheld)


def failed(name: str, expected: str | None, detail: str) -> Prediction:
    """An image that could not be read or analysed: an error row for each of its signals."""
    return Prediction(name, expected, None, ParseStatus.ERROR, None, detail)


class EvaluationRun:
    """The images of one run (their file names, in order), the questions and the labels (None: answers
    only). Answers are given per image index, each signal's `Prediction` made with `answered` or
    `failed`; the report covers the images whose every signal is in, in the images' order."""

    def __init__(self, names: Sequence[str], questions: Questions, labels: Labels | ChecklistLabels | None) -> None:
        self.names = tuple(names)
        self.questions = questions
        if labels is None:
            by_signal: Mapping[str, Mapping[str, str]] = {signal: {} for signal in questions.signals}
        elif isinstance(labels, ChecklistLabels):
            by_signal = labels.expected
        else:
            by_signal = {SINGLE: labels.expected}
        self._labels = {signal: by_signal.get(signal, {}) for signal in questions.signals}
        self._matched = {signal: match_labels(self.names, self._labels[signal]) for signal in questions.signals}
        self._answers: dict[int, dict[str, Prediction]] = {}

    def expected(self, index: int, signal: str = SINGLE) -> str | None:
        """The label of image `index` for `signal` (None: not labelled)."""
        return self._matched[signal].expected[self.names[index]]

    @property
    def labelled(self) -> bool:
        return any(self._labels.values())

    @property
    def missing(self) -> tuple[str, ...]:
        """Labelled file names (for any signal) that are not among the images."""
        return tuple(dict.fromkeys(name for m in self._matched.values() for name in m.missing))

    @property
    def unlabelled(self) -> tuple[str, ...]:
        """Images labelled for no signal; none when nothing is labelled (answers only)."""
        if not self.labelled:
            return ()
        return tuple(name for name in self.names if not any(name in self._labels[s] for s in self.questions.signals))

    def answer(self, index: int, answers: Mapping[str, Prediction]) -> None:
        """Image `index`'s answer to every signal (a later one replaces it)."""
        if set(answers) != set(self.questions.signals):
            raise ValueError(f"answers for {sorted(answers)}, asked {sorted(self.questions.signals)}")
        self._answers[index] = dict(answers)

    @property
    def answered(self) -> int:
        """Images whose answers are in."""
        return len(self._answers)

    def report(self) -> Report | ChecklistReport:
        """The report over the images answered so far, in the images' order."""
        done = sorted(self._answers)
        q = self.questions
        if q.checklist is None:
            return evaluate((self._answers[i][SINGLE] for i in done), q.answers[SINGLE], q.min_score)
        return evaluate_checklist(
            {signal: [self._answers[i][signal] for i in done] for signal in q.signals},
            q.answers,
            q.checklist.gate,
            q.checklist.gate_open,
            {spec.signal: spec.min_score for spec in q.checklist.signals},
        )
