"""`eval DIR --labels labels.csv`: testers' mode on the command line.

Every image of DIR goes through the same worker path as `analyze` (the model in
a child process, `BlockingWorker`); the answers are compared with labels.csv by
`app.core.evaluation.evaluate`, the same function the testers' screen uses.
stdout gets the report (a table, or one JSON object with `--json`); progress,
notes and per-file errors go to stderr; `--csv OUT` writes one row per image.

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
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from app.commands.common import EXIT_FAILED, EXIT_OK, EXIT_SETUP, add_model_options, worker_spec

if TYPE_CHECKING:
    from app.commands.common import Subparsers
    from app.core.evaluation import Prediction
    from app.frames.intake import ImageRejected
    from app.worker.blocking import Outcome

DEFAULT_LABELS = "labels.csv"


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "eval",
        help="testers' mode: answer every image of a folder and compare with labels.csv",
        description="Run every image of DIR through the model and compare the answers with a labels file "
        "(rows: file name, expected value). Prints the confusion matrix, precision and recall per value, "
        "the unknown rate and the yes-bias.",
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
    from app.core.evaluation import csv_text, evaluate, format_table, match_labels
    from app.evaluation_labels import LabelsFileError, decode_labels, read_labels_bytes
    from app.frames.intake import display_name
    from app.frames.listing import list_inputs
    from app.worker.blocking import BlockingWorker, WorkerUnavailable

    def note(message: str) -> None:
        print(f"note: {message}", file=sys.stderr)

    def error(message: str) -> None:
        print(f"error: {message}", file=sys.stderr)

    folder = Path(args.folder)
    if not folder.is_dir():
        error(f"{display_name(args.folder)}: not a folder of images")
        return EXIT_SETUP
    labels_path: Path | None = args.labels
    if labels_path is None and (folder / DEFAULT_LABELS).is_file():
        labels_path = folder / DEFAULT_LABELS
    labels_data: bytes | None = None
    if labels_path is not None:
        try:
            labels_data = read_labels_bytes(labels_path)  # before the model loads: a typo costs no wait
        except LabelsFileError as exc:
            error(str(exc))
            return EXIT_SETUP
    else:
        note(f"no labels file (--labels, or {DEFAULT_LABELS} in the folder): answers only, no confusion matrix")

    with BlockingWorker(worker_spec(args), host_kind="process", on_notice=note) as worker:
        try:
            ready = worker.start()
        except WorkerUnavailable as exc:
            error(f"the model could not be loaded: {exc}")
            return EXIT_SETUP
        if ready.backend != args.backend:
            note(ready.backend_note)
        if ready.model_note:
            note(ready.model_note)
        values = ready.answer_values
        status = EXIT_OK
        labelled: dict[str, str] = {}
        label_errors: list[str] = []
        if labels_data is not None and labels_path is not None:
            try:
                labels = decode_labels(labels_data, values, display_name(labels_path))
            except LabelsFileError as exc:
                error(str(exc))
                return EXIT_SETUP
            for line in labels.notes:
                note(f"{display_name(labels_path)} {line}")
            for row_error in labels.errors:
                label_errors.append(str(row_error))
                error(f"{display_name(labels_path)} {row_error}")
            if labels.errors:
                status = EXIT_FAILED
            labelled = labels.expected

        listing = list_inputs([folder])
        if labels_path is not None:  # the labels file in the folder is not an image: no note for it
            own = display_name(folder / labels_path.name) if labels_path.parent.resolve() == folder.resolve() else ""
            listing.skipped = [s for s in listing.skipped if s.display != own]
        for line in listing.notes():
            note(line)
        items = [i for i in listing.items if i.path is not None and i.path != folder]
        names = [_name(i.path) for i in items if i.path is not None]
        matched = match_labels(names, labelled)
        predictions: list[Prediction] = []
        for index, (name, outcome) in enumerate(analyse_each(worker, zip(names, items, strict=True)), start=1):
            if isinstance(outcome, WorkerUnavailable):
                error(f"{name}: the worker stopped; no further image can be analysed")
                return EXIT_SETUP
            expected = matched.expected[name]
            prediction = _prediction(name, expected, outcome)
            if prediction.observed is None:
                status = EXIT_FAILED
                error(f"{name}: {prediction.detail}")
            shown = prediction.observed if prediction.observed is not None else "error"
            versus = f" (expected {expected})" if expected is not None else ""
            print(f"[{index}/{len(items)}] {name}: {shown}{versus}", file=sys.stderr)
            predictions.append(prediction)
        for item in listing.items:  # the folder itself could not be listed
            if item.error is not None and item.path == folder:
                status = EXIT_FAILED
                error(str(item.error))

    if matched.missing:
        note(f"{len(matched.missing)} labelled file(s) not in the folder: {_few(matched.missing)}")
    if labelled and matched.unlabelled:
        note(f"{len(matched.unlabelled)} image(s) without a label: {_few(matched.unlabelled)}")
    report = evaluate(predictions, values)
    if args.json:
        record = {
            "folder": display_name(folder),
            "labels": None if labels_path is None else display_name(labels_path),
            "model": {"id": ready.model_id, "revision": ready.model_revision},
            **report.to_dict(),
            "label_errors": label_errors,
            "missing_images": list(matched.missing),
            "unlabelled_images": list(matched.unlabelled),
            "images": [
                {
                    "file": p.name,
                    "expected": p.expected,
                    "observed": p.observed,
                    "parse_status": p.parse_status,
                    "detail": p.detail,
                    "seconds": None if p.seconds is None else round(p.seconds, 3),
                }
                for p in report.rows
            ],
        }
        out.write(json.dumps(record, ensure_ascii=False, indent=2) + "\n")
    else:
        out.write(f"model {ready.model_id} · folder {display_name(folder)}\n")
        out.write(format_table(report))
    out.flush()
    if args.csv is not None:
        try:
            args.csv.write_text(csv_text(report), encoding="utf-8", newline="")
        except OSError as exc:
            error(f"{display_name(args.csv)}: the CSV cannot be written ({exc.strerror or exc})")
            return EXIT_FAILED
        note(f"per-image CSV written to {display_name(args.csv)}")
    if args.plot is not None:
        from app.evaluation_plot import write_report_png

        try:
            write_report_png(report, f"{ready.model_id} · {display_name(folder)}", args.plot)
        except OSError as exc:
            error(f"{display_name(args.plot)}: the plot cannot be written ({exc.strerror or exc})")
            return EXIT_FAILED
        note(f"plot written to {display_name(args.plot)}")
    return status


def _name(path: Path) -> str:
    from app.evaluation_labels import normalise_name
    from app.frames.intake import display_name

    return normalise_name(display_name(os.path.basename(path)))


def _few(names: tuple[str, ...], limit: int = 10) -> str:
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _prediction(name: str, expected: str | None, outcome: Outcome | ImageRejected) -> Prediction:
    """One image's Prediction: an error row when it could not be read or analysed."""
    from app.core.evaluation import ERROR, REJECTED, VALID, Prediction
    from app.frames.intake import ImageRejected

    if isinstance(outcome, ImageRejected):
        return Prediction(name, expected, None, ERROR, None, f"{outcome.reason}: {outcome}")
    if outcome.finished is None:
        failed = outcome.failed
        assert failed is not None
        return Prediction(name, expected, None, ERROR, None, f"{failed.error}: {failed.message}")
    result = outcome.finished.answer
    return Prediction(
        name,
        expected,
        result.observation,
        VALID if result.answer.valid else REJECTED,
        result.timings.total_ms / 1000,
        result.answer.reason.value,
    )
