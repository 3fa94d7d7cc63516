"""`eval DIR --labels labels.csv`: testers' mode on the command line.

Every image of DIR goes through the same worker path as `analyze` (the model in
a child process, `BlockingWorker`); the answers are compared with labels.csv by
the evaluation run (`app.evaluation.run`), the same one the testers' screen uses.
stdout gets the report (a table, or one JSON object with `--json`); progress,
notes and per-file errors go to stderr; `--csv OUT` writes one row per image.

A checklist profile (`--profile`, several signals) has every signal of an image
asked from one encode of it, as `analyze` does; its labels.csv has a column per
signal under a header, and the report is one per signal:
one table each, one JSON object holding them all, one CSV row per image and signal.

Exit status: 0 when every image was answered and every label row was usable;
1 when a file, an analysis or a label row failed (the rest is still reported),
or the CSV cannot be written; 2 when nothing could start (no such folder, a
labels file that cannot be read, the model, the worker).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from app.commands.common import EXIT_FAILED, EXIT_OK, EXIT_SETUP, add_model_options, worker_spec

if TYPE_CHECKING:
    from app.commands.common import Subparsers
    from app.core.profile.checklist import Checklist
    from app.core.results import AnalysisResult
    from app.evaluation.labels import ChecklistLabels, Labels
    from app.evaluation.report import ChecklistReport, Prediction
    from app.evaluation.run import EvaluationRun, Questions
    from app.frames.intake import ImageRejected
    from app.frames.listing import ListingReport
    from app.worker.blocking import Outcome
    from app.worker.messages import Ready

DEFAULT_LABELS = "labels.csv"


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "eval",
        help="testers' mode: answer every image of a folder and compare with labels.csv",
        description="Run every image of DIR through the model and compare the answers with a labels file "
        "(rows: file name, expected value). Prints the confusion matrix, precision and recall per value, "
        "the unknown rate and the yes-bias. With a checklist profile the labels file has a header row "
        "(file, then a column per signal) and the report is one per signal.",
    )
    parser.add_argument("folder", metavar="DIR", help="a folder of images (read one level deep)")
    parser.add_argument(
        "--labels",
        type=Path,
        default=None,
        help=f"CSV of 'file name, expected value' (default: DIR/{DEFAULT_LABELS} when it exists)",
    )
    add_model_options(parser)
    parser.add_argument("--csv", type=Path, default=None, metavar="OUT", help="write one row per image to OUT")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.add_argument(
        "--plot", type=Path, default=None, metavar="PNG", help="draw the confusion matrix and latencies to PNG"
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    from app.commands.analyze import analyse_each
    from app.evaluation.run import EvaluationRun, Questions
    from app.frames.intake import display_name
    from app.worker.blocking import BlockingWorker, WorkerUnavailable

    folder = Path(args.folder)
    if not folder.is_dir():
        _error(f"{display_name(args.folder)}: not a folder of images")
        return EXIT_SETUP
    labels_file = _labels_file(args.labels, folder)
    if labels_file is None:
        return EXIT_SETUP
    labels_path, labels_data = labels_file
    checklist = _checklist(args.profile)
    labels: Labels | ChecklistLabels | None = None
    if checklist is not None and labels_data is not None and labels_path is not None:
        # A checklist's columns are known before the model loads: a misnamed one costs no wait either.
        labels = _decode(labels_data, labels_path, Questions.of(checklist))
        if labels is None:
            return EXIT_SETUP

    spec = worker_spec(args) if checklist is None else replace(worker_spec(args), checklists=True)
    with BlockingWorker(spec, host_kind="process", on_notice=_note) as worker:
        try:
            ready = worker.start()
        except WorkerUnavailable as exc:
            _error(f"the model could not be loaded: {exc}")
            return EXIT_SETUP
        if ready.backend != args.backend:
            _note(ready.backend_note)
        if ready.model_note:
            _note(ready.model_note)
        questions = (
            Questions.one_signal(ready.answer_values, ready.min_score) if checklist is None else Questions.of(checklist)
        )
        status = EXIT_OK
        label_errors: list[str] = []
        if labels_data is not None and labels_path is not None:
            if labels is None:  # a one-signal profile's answers are known once the model has loaded
                labels = _decode(labels_data, labels_path, questions)
                if labels is None:
                    return EXIT_SETUP
            label_errors = _say_labels(labels, labels_path)
            if label_errors:
                status = EXIT_FAILED

        listing = _listing(folder, labels_path)
        items = [i for i in listing.items if i.path is not None and i.path != folder]
        names = [_name(i.path) for i in items if i.path is not None]
        evaluation = EvaluationRun(names, questions, labels)
        for index, (name, outcome) in enumerate(analyse_each(worker, zip(names, items, strict=True))):
            if isinstance(outcome, WorkerUnavailable):
                _error(f"{name}: the worker stopped; no further image can be analysed")
                return EXIT_SETUP
            predictions = _predictions(evaluation, index, outcome)
            evaluation.answer(index, predictions)
            failed = next((p for p in predictions.values() if p.observed is None), None)
            if failed is not None:
                status = EXIT_FAILED
                _error(f"{name}: {failed.detail}")
            print(f"[{index + 1}/{len(items)}] {name}: {_progress(predictions)}", file=sys.stderr)
        for item in listing.items:  # the folder itself could not be listed
            if item.error is not None and item.path == folder:
                status = EXIT_FAILED
                _error(str(item.error))

    missing, unlabelled = evaluation.missing, evaluation.unlabelled
    if missing:
        _note(f"{len(missing)} labelled file(s) not in the folder: {_few(missing)}")
    if unlabelled:
        _note(f"{len(unlabelled)} image(s) without a label: {_few(unlabelled)}")
    output = _output(evaluation)
    if args.json:
        record = {
            "folder": display_name(folder),
            "labels": None if labels_path is None else display_name(labels_path),
            "model": {"id": ready.model_id, "revision": ready.model_revision},
            **output.report,
            "label_errors": label_errors,
            "missing_images": list(missing),
            "unlabelled_images": list(unlabelled),
            "images": output.images,
        }
        out.write(json.dumps(record, ensure_ascii=False, indent=2) + "\n")
    else:
        what = "" if checklist is None else f" · checklist {checklist.id}"
        out.write(f"model {ready.model_id} · folder {display_name(folder)}{what}\n")
        out.write(output.table)
    out.flush()
    return _write_files(args, output, ready, folder, status)


def _labels_file(given: Path | None, folder: Path) -> tuple[Path | None, bytes | None] | None:
    """The labels file (`--labels`, or the folder's own) and its bytes, read before the model loads: a typo
    costs no wait. (None, None): answers only; None: it cannot be read (said on stderr)."""
    from app.evaluation.labels import LabelsFileError, read_labels_bytes

    path = given
    if path is None and (folder / DEFAULT_LABELS).is_file():
        path = folder / DEFAULT_LABELS
    if path is None:
        _note(f"no labels file (--labels, or {DEFAULT_LABELS} in the folder): answers only, no confusion matrix")
        return None, None
    try:
        return path, read_labels_bytes(path)
    except LabelsFileError as exc:
        _error(str(exc))
        return None


def _say_labels(labels: Labels | ChecklistLabels, path: Path) -> list[str]:
    """The labels file's notes and row errors on stderr; the errors, for the JSON object."""
    from app.frames.intake import display_name

    for line in labels.notes:
        _note(f"{display_name(path)} {line}")
    for row_error in labels.errors:
        _error(f"{display_name(path)} {row_error}")
    return [str(e) for e in labels.errors]


def _listing(folder: Path, labels_path: Path | None) -> ListingReport:
    """The folder's inputs, its notes said; the labels file in the folder is not an image: no note for it."""
    from app.frames.intake import display_name
    from app.frames.listing import list_inputs

    listing = list_inputs([folder])
    if labels_path is not None:
        own = display_name(folder / labels_path.name) if labels_path.parent.resolve() == folder.resolve() else ""
        listing.skipped = [s for s in listing.skipped if s.display != own]
    for line in listing.notes():
        _note(line)
    return listing


@dataclass(frozen=True)
class _Output:
    """The report in every form the command gives it."""

    report: dict[str, Any]  # the JSON object's report fields
    images: list[dict[str, Any]]  # the JSON object's per-image answers
    table: str
    csv: str
    plot: Callable[[str, Path], None]  # draws the PNG: (title, path)


def _output(evaluation: EvaluationRun) -> _Output:
    from app.evaluation.plot import write_checklist_png, write_report_png
    from app.evaluation.report import Report, checklist_csv_text, csv_text, format_checklist_table, format_table

    report = evaluation.report()
    checklist = evaluation.questions.checklist
    if isinstance(report, Report):
        images = [{"file": p.name, **_answer(p)} for p in report.rows]
        return _Output(
            report.to_dict(),
            images,
            format_table(report),
            csv_text(report),
            lambda t, p: write_report_png(report, t, p),
        )
    assert checklist is not None
    return _Output(
        {"profile": checklist.id, **report.to_dict()},
        _checklist_images(report),
        format_checklist_table(report),
        checklist_csv_text(report),
        lambda t, p: write_checklist_png(report, t, p),
    )


def _write_files(args: argparse.Namespace, output: _Output, ready: Ready, folder: Path, status: int) -> int:
    """--csv and --plot; `status` unless one cannot be written."""
    from app.frames.intake import display_name

    if args.csv is not None:
        try:
            args.csv.write_text(output.csv, encoding="utf-8", newline="")
        except OSError as exc:
            _error(f"{display_name(args.csv)}: the CSV cannot be written ({exc.strerror or exc})")
            return EXIT_FAILED
        _note(f"per-image CSV written to {display_name(args.csv)}")
    if args.plot is not None:
        try:
            output.plot(f"{ready.model_id} · {display_name(folder)}", args.plot)
        except OSError as exc:
            _error(f"{display_name(args.plot)}: the plot cannot be written ({exc.strerror or exc})")
            return EXIT_FAILED
        _note(f"plot written to {display_name(args.plot)}")
    return status


def _note(message: str) -> None:
    print(f"note: {message}", file=sys.stderr)


def _error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


def _checklist(profile: Path | None) -> Checklist | None:
    """The checklist `--profile` names; None for a one-signal profile, or one that cannot be read (the
    worker says why, in the words it has for every command)."""
    from app.core.profile.task import ProfileError
    from app.storage.profile_file import load_checklist

    if profile is None:
        return None  # the model's own profile: one signal
    try:
        checklist = load_checklist(profile)
    except ProfileError:
        return None
    return None if checklist.is_single else checklist


def _decode(data: bytes, path: Path, questions: Questions) -> Labels | ChecklistLabels | None:
    """The labels in `data` for these questions; None (said on stderr) when the file cannot be used."""
    from app.evaluation.labels import LabelsFileError
    from app.frames.intake import display_name

    try:
        return questions.read_labels(data, display_name(path))
    except LabelsFileError as exc:
        _error(str(exc))
        return None


def _name(path: Path) -> str:
    from app.evaluation.labels import normalise_name
    from app.frames.intake import display_name

    return normalise_name(display_name(os.path.basename(path)))


def _few(names: tuple[str, ...], limit: int = 10) -> str:
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _progress(predictions: Mapping[str, Prediction]) -> str:
    """An image's answers on its progress line: "no (expected yes)", each signal named in a checklist."""
    parts = []
    for signal, p in predictions.items():
        shown = p.observed if p.observed is not None else "error"
        versus = f" (expected {p.expected})" if p.expected is not None else ""
        parts.append(f"{signal} {shown}{versus}" if signal else f"{shown}{versus}")
    return " · ".join(parts)


def _predictions(evaluation: EvaluationRun, index: int, outcome: Outcome | ImageRejected) -> dict[str, Prediction]:
    """Image `index`'s Prediction per signal: error rows when it could not be read or analysed."""
    from app.core.results import AnalysisResult
    from app.evaluation.run import SINGLE, failed
    from app.frames.intake import ImageRejected

    name, signals = evaluation.names[index], evaluation.questions.signals
    if isinstance(outcome, ImageRejected):
        detail = f"{outcome.reason}: {outcome}"
    elif outcome.finished is None:
        error = outcome.failed
        assert error is not None
        detail = f"{error.error}: {error.message}"
    else:
        result = outcome.finished.result
        answers = {SINGLE: result} if isinstance(result, AnalysisResult) else {r.signal: r for r in result.results}
        return {s: _answered(name, evaluation.expected(index, s), answers[s]) for s in signals}
    return {s: failed(name, evaluation.expected(index, s), detail) for s in signals}


def _answered(name: str, expected: str | None, result: AnalysisResult) -> Prediction:
    from app.evaluation.run import answered

    answer = result.answer
    seconds = result.timings.total_ms / 1000
    return answered(
        name,
        expected,
        result.observation,
        result.parse_status,
        seconds,
        answer.reason.value,
        result.model_score,
        answer.withheld,
    )


def _answer(p: Prediction) -> dict[str, Any]:
    """One image's answer to one signal in the JSON object."""
    return {
        "expected": p.expected,
        "observed": p.observed,
        "parse_status": p.parse_status,
        "detail": p.detail,
        "seconds": None if p.seconds is None else round(p.seconds, 3),
        "model_score": None if p.score is None else round(p.score, 6),
        **({"withheld": p.picked} if p.picked is not None else {}),
    }


def _checklist_images(report: ChecklistReport) -> list[dict[str, Any]]:
    """Per image, each signal's answer (every signal's rows are in the images' order)."""
    first = report.signals[0].report.rows
    return [
        {"file": p.name, "signals": {s.signal: _answer(s.report.rows[i]) for s in report.signals}}
        for i, p in enumerate(first)
    ]
