"""Testers' mode: how a model's answers on labelled images compare with the labels.

Pure logic (no Flet, no MNN, no file access): the CLI (`python -m app eval`) and
the testers' screen both build `Prediction` records and call `evaluate`, so the
two can never disagree on a number.

Definitions (every rate is a fraction 0..1, or None when its denominator is 0,
shown as "—"):

- An image is *answered* when the model gave an answer (valid, or rejected by the
  strict parser and therefore `unknown`); an image whose file or analysis failed
  is an *error*: it gets a row but is in no rate and no matrix cell.
- The confusion matrix counts the *labelled answered* images: rows are the
  expected values (the profile's values), columns the observed values (the
  profile's values, plus `unknown` when the profile does not list it — a rejected
  answer is always `unknown`).
- precision(v) = matrix[v][v] / (column v total); recall(v) = matrix[v][v] /
  (row v total). accuracy = diagonal / labelled answered.
- unknown rate = answers that are `unknown` / answered images (labelled or not:
  it needs no label).
- yes-bias = predicted-positive rate − true-positive rate over the labelled
  answered images, where the positive value is "yes" when the profile has it and
  otherwise the profile's first value. Above 0 the model says yes more often than
  the labels do; an `unknown` answer counts as "not yes".

A checklist (several signals asked about each image) gets one such report per signal
(`evaluate_checklist`), each from `evaluate` over that signal's predictions. A signal
its gate left unasked is answered `unknown` (parse status `not_asked`): it counts as
an unknown answer, in neither the valid nor the rejected count, and the signal's
report says how many there were.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.csv_text import table_csv
from app.core.generation import ParseStatus
from app.evaluation.score_cut import CutCurve, cut_curve

UNKNOWN = "unknown"
NONE_SHOWN = "—"  # a rate with an empty denominator
CSV_COLUMNS = ("file", "expected", "observed", "correct", "parse_status", "detail", "seconds", "model_score")
CHECKLIST_CSV_COLUMNS = ("file", "signal", *CSV_COLUMNS[1:])  # one row per image and signal


@dataclass(frozen=True)
class Prediction:
    """One image: what the label says (None: no label), what the model said (None: no answer, an error)."""

    name: str
    expected: str | None
    observed: str | None
    parse_status: ParseStatus
    seconds: float | None = None  # the model's time for this image (None: an error, or a signal not asked)
    detail: str = ""  # the parse reason, or what went wrong
    score: float | None = None  # the constrained decoder's model score (a diagnostic, app.evaluation.score_cut)
    picked: str | None = None  # the model's answer before a profile's score cut withheld it (None: not withheld)

    @property
    def answered(self) -> bool:
        return self.observed is not None

    @property
    def correct(self) -> bool | None:
        """None when there is nothing to compare (no label, or no answer)."""
        if self.expected is None or self.observed is None:
            return None
        return self.expected == self.observed


@dataclass(frozen=True)
class ValueScore:
    value: str
    expected: int  # labelled answered images whose label is this value (row total)
    predicted: int  # labelled answered images the model gave this value (column total)
    correct: int
    precision: float | None
    recall: float | None


@dataclass(frozen=True)
class Counts:
    images: int = 0
    answered: int = 0
    errors: int = 0
    labelled: int = 0  # images with a label, answered or not
    labelled_answered: int = 0  # the images in the matrix
    unlabelled: int = 0
    valid: int = 0
    rejected: int = 0
    unknown: int = 0  # answers that are `unknown` (valid or rejected)
    correct: int = 0


@dataclass(frozen=True)
class Report:
    values: tuple[str, ...]  # matrix rows: expected values
    columns: tuple[str, ...]  # matrix columns: observed values
    matrix: tuple[tuple[int, ...], ...]
    scores: tuple[ValueScore, ...]
    counts: Counts
    accuracy: float | None
    unknown_rate: float | None
    positive: str
    predicted_positive_rate: float | None
    true_positive_rate: float | None
    yes_bias: float | None
    rows: tuple[Prediction, ...]
    curve: CutCurve  # coverage and accuracy for every score cut (app.evaluation.score_cut)
    min_score: float | None = None  # the profile's saved cut, already applied to `rows`

    def cell(self, expected: str, observed: str) -> int:
        return self.matrix[self.values.index(expected)][self.columns.index(observed)]

    def score(self, value: str) -> ValueScore:
        return next(s for s in self.scores if s.value == value)

    @property
    def has_labels(self) -> bool:
        return self.counts.labelled_answered > 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "values": list(self.values),
            "columns": list(self.columns),
            "confusion_matrix": {
                v: {c: self.matrix[i][j] for j, c in enumerate(self.columns)} for i, v in enumerate(self.values)
            },
            "per_value": {
                s.value: {
                    "precision": _round(s.precision),
                    "recall": _round(s.recall),
                    "expected": s.expected,
                    "predicted": s.predicted,
                    "correct": s.correct,
                }
                for s in self.scores
            },
            "accuracy": _round(self.accuracy),
            "unknown_rate": _round(self.unknown_rate),
            "positive_value": self.positive,
            "predicted_positive_rate": _round(self.predicted_positive_rate),
            "true_positive_rate": _round(self.true_positive_rate),
            "yes_bias": _round(self.yes_bias),
            "counts": dict(vars(self.counts)),
            "min_score": self.min_score,
            "score_cut": self.curve.to_dict(),
        }


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def _ratio(numerator: int, denominator: int) -> float | None:
    return None if denominator == 0 else numerator / denominator


def positive_value(values: Sequence[str]) -> str:
    """The value yes-bias is about: "yes" when the profile has it, else its first value."""
    if not values:
        raise ValueError("a profile has at least one value")
    return "yes" if "yes" in values else values[0]


def columns_for(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(values) if UNKNOWN in values else (*values, UNKNOWN)


def evaluate(predictions: Iterable[Prediction], values: Sequence[str], min_score: float | None = None) -> Report:
    """The report over `predictions` for a profile whose answers are `values` (and score cut `min_score`,
    which the answers already had applied when they were given).

    Raises ValueError for a label outside `values` or an answer outside the columns:
    labels are checked when they are read (`app.evaluation.labels`), answers by the parser.
    """
    values = tuple(dict.fromkeys(values))
    columns = columns_for(values)
    positive = positive_value(values)
    rows = tuple(predictions)
    matrix = [[0] * len(columns) for _ in values]
    answered = errors = labelled = labelled_answered = valid = rejected = unknown = 0
    predicted_positive = true_positive = 0
    for p in rows:
        if p.expected is not None:
            if p.expected not in values:
                raise ValueError(f"{p.name}: the label {p.expected!r} is not one of {', '.join(values)}")
            labelled += 1
        if p.observed is None:
            errors += 1
            continue
        if p.observed not in columns:
            raise ValueError(f"{p.name}: the answer {p.observed!r} is not one of {', '.join(columns)}")
        answered += 1
        valid += p.parse_status == ParseStatus.VALID
        rejected += p.parse_status == ParseStatus.REJECTED
        unknown += p.observed == UNKNOWN
        if p.expected is None:
            continue
        labelled_answered += 1
        matrix[values.index(p.expected)][columns.index(p.observed)] += 1
        predicted_positive += p.observed == positive
        true_positive += p.expected == positive
    scores = []
    for i, v in enumerate(values):
        j = columns.index(v)
        row_total = sum(matrix[i])
        column_total = sum(matrix[r][j] for r in range(len(values)))
        hit = matrix[i][j]
        scores.append(ValueScore(v, row_total, column_total, hit, _ratio(hit, column_total), _ratio(hit, row_total)))
    correct = sum(s.correct for s in scores)
    predicted_rate = _ratio(predicted_positive, labelled_answered)
    true_rate = _ratio(true_positive, labelled_answered)
    return Report(
        values=values,
        columns=columns,
        matrix=tuple(tuple(r) for r in matrix),
        scores=tuple(scores),
        counts=Counts(
            images=len(rows),
            answered=answered,
            errors=errors,
            labelled=labelled,
            labelled_answered=labelled_answered,
            unlabelled=len(rows) - labelled,
            valid=valid,
            rejected=rejected,
            unknown=unknown,
            correct=correct,
        ),
        accuracy=_ratio(correct, labelled_answered),
        unknown_rate=_ratio(unknown, answered),
        positive=positive,
        predicted_positive_rate=predicted_rate,
        true_positive_rate=true_rate,
        yes_bias=None if predicted_rate is None or true_rate is None else predicted_rate - true_rate,
        rows=rows,
        curve=cut_curve(rows),
        min_score=min_score,
    )


@dataclass(frozen=True)
class SignalReport:
    """One signal of a checklist: its report, as a one-signal profile's would be."""

    signal: str
    report: Report
    gate: bool = False  # this signal is the checklist's gate

    @property
    def not_asked(self) -> int:
        """Its answers that are `unknown` only because the gate left it unasked."""
        return sum(p.parse_status == ParseStatus.NOT_ASKED for p in self.report.rows)

    def to_dict(self) -> dict[str, Any]:
        return {"gate": self.gate, "not_asked": self.not_asked, **self.report.to_dict()}


@dataclass(frozen=True)
class ChecklistReport:
    signals: tuple[SignalReport, ...]  # in the checklist's order
    gate: str | None = None
    gate_open: str = "yes"  # the gate's answer that lets the others be asked

    def signal(self, name: str) -> SignalReport:
        return next(s for s in self.signals if s.signal == name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "gate": None if self.gate is None else {"signal": self.gate, "open": self.gate_open},
            "signals": {s.signal: s.to_dict() for s in self.signals},
        }


def evaluate_checklist(
    predictions: Mapping[str, Sequence[Prediction]],
    values: Mapping[str, Sequence[str]],
    gate: str | None = None,
    gate_open: str = "yes",
    min_scores: Mapping[str, float | None] | None = None,
) -> ChecklistReport:
    """A report per signal of `values` (signal -> its answers, in the checklist's order) over that signal's
    predictions, one per image in the same order for every signal (ValueError otherwise: the per-image
    rows of the export pair them by position)."""
    names = {signal: [p.name for p in predictions.get(signal, ())] for signal in values}
    if len({tuple(n) for n in names.values()}) > 1:
        raise ValueError("every signal needs one prediction per image, in the same order")
    reports = (
        SignalReport(
            signal, evaluate(predictions.get(signal, ()), answers, (min_scores or {}).get(signal)), signal == gate
        )
        for signal, answers in values.items()
    )
    return ChecklistReport(tuple(reports), gate, gate_open)


# --- labels against the images found -------------------------------------------------------


@dataclass(frozen=True)
class Matched:
    expected: dict[str, str | None]  # every image name -> its label (None: no label)
    missing: tuple[str, ...]  # names in the labels that are not among the images
    unlabelled: tuple[str, ...]  # images without a label


def match_labels(image_names: Sequence[str], labels: Mapping[str, str]) -> Matched:
    """Pair images with labels by file name; what does not pair is reported, never fatal."""
    found = set(image_names)
    return Matched(
        expected={name: labels.get(name) for name in image_names},
        missing=tuple(name for name in labels if name not in found),
        unlabelled=tuple(name for name in image_names if name not in labels),
    )


# --- output --------------------------------------------------------------------------------


def shown(x: float | None, digits: int = 3) -> str:
    """A rate as a person reads it; "—" when it is undefined (empty denominator)."""
    return NONE_SHOWN if x is None else f"{x:.{digits}f}"


def signed(x: float | None, digits: int = 3) -> str:
    return NONE_SHOWN if x is None else f"{x:+.{digits}f}"


def csv_rows(report: Report) -> list[dict[str, str]]:
    """The per-image rows of the export, in the images' order."""
    out = []
    for p in report.rows:
        correct = p.correct
        out.append(
            {
                "file": p.name,
                "expected": p.expected or "",
                "observed": p.observed if p.observed is not None else "",
                "correct": "" if correct is None else ("yes" if correct else "no"),
                "parse_status": p.parse_status,
                "detail": p.detail,
                "seconds": "" if p.seconds is None else f"{p.seconds:.3f}",
                "model_score": "" if p.score is None else f"{p.score:.6g}",
            }
        )
    return out


def csv_text(report: Report) -> str:
    return table_csv(CSV_COLUMNS, csv_rows(report))


def checklist_csv_text(report: ChecklistReport) -> str:
    """One row per image and signal, image by image, with the one-signal export's columns and the signal's
    name: a spreadsheet's filter on `signal` shows one signal's rows as the one-signal export has them."""
    per_signal = [(s.signal, csv_rows(s.report)) for s in report.signals]  # signals are lower_snake_case names
    images = len(per_signal[0][1]) if per_signal else 0
    rows = [{"signal": signal, **answers[i]} for i in range(images) for signal, answers in per_signal]
    return table_csv(CHECKLIST_CSV_COLUMNS, rows)


def format_table(report: Report) -> str:
    """The report as plain text for a terminal (the CLI's default output)."""
    c = report.counts
    lines = [
        f"images {c.images} · answered {c.answered} · errors {c.errors} · labelled {c.labelled}"
        f" · unlabelled {c.unlabelled} · rejected by the parser {c.rejected}",
        "",
    ]
    if report.has_labels:
        head = ["expected \\ observed", *report.columns, "total"]
        body = [[v, *map(str, row), str(sum(row))] for v, row in zip(report.values, report.matrix, strict=True)]
        totals = [sum(row[j] for row in report.matrix) for j in range(len(report.columns))]
        body.append(["total", *map(str, totals), str(sum(totals))])
        lines += ["Confusion matrix (rows: expected, columns: observed)", *_grid([head, *body]), ""]
        score_rows = [["value", "precision", "recall", "expected", "predicted"]]
        score_rows += [
            [s.value, shown(s.precision), shown(s.recall), str(s.expected), str(s.predicted)] for s in report.scores
        ]
        lines += [*_grid(score_rows), ""]
        lines.append(f"{'accuracy':<14}{shown(report.accuracy)} ({c.correct}/{c.labelled_answered})")
    else:
        lines.append("No labelled image was answered: no confusion matrix, precision or recall.")
    lines.append(f"{'unknown rate':<14}{shown(report.unknown_rate)} ({c.unknown}/{c.answered})")
    lines.append(
        f"{report.positive + '-bias':<13}{signed(report.yes_bias):>6} (predicted {report.positive}"
        f" {shown(report.predicted_positive_rate)} − true {report.positive} {shown(report.true_positive_rate)})"
    )
    if report.has_labels:
        lines += ["", format_curve(report.curve, report.min_score).rstrip("\n")]
    return "\n".join(lines) + "\n"


def format_curve(curve: CutCurve, min_score: float | None = None) -> str:
    """The curve's summary rows as plain text, with the saved cut's own row when there is one."""
    if not curve.scored:
        return "score cut: no answer has a model score (constrained decoding gives one)\n"
    lines = ["score cut (coverage: answers still given; accuracy: of those, the label's)"]
    lines.append(f"  {'threshold':>10}  {'coverage':>8}  {'accuracy':>8}  {'kept':>9}")
    for point in curve.shown_rows(min_score):
        mark = "  <- the profile's min_score" if min_score is not None and point.threshold == min_score else ""
        lines.append(
            # Six digits: a model sure of itself scores 0.9995 and 0.9998, and the cut must read as it acts.
            f"  {point.threshold:>10.6g}  {shown(point.coverage):>8}  {shown(point.accuracy):>8}"
            f"  {f'{point.kept}/{point.labelled}':>9}{mark}"
        )
    if curve.unscored:
        lines.append(f"  {curve.unscored} answer(s) without a score are never withheld")
    return "\n".join(lines) + "\n"


def format_checklist_table(report: ChecklistReport) -> str:
    """A checklist's report as plain text: each signal's table under its name, in the checklist's order."""
    parts = []
    for s in report.signals:
        role = f" (the gate: the others are asked when it says {report.gate_open})" if s.gate else ""
        lines = [f"== {s.signal}{role}", format_table(s.report).rstrip("\n")]
        if report.gate is not None and not s.gate:
            lines.append(
                f"{'not asked':<14}{s.not_asked} of {s.report.counts.answered} answered images: the gate"
                f" {report.gate} did not say {report.gate_open} (counted as unknown)"
            )
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


def _grid(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths, strict=True)))
        for r in rows
    ]
