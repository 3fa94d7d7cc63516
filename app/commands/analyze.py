"""`analyze IMAGE…`: one strictly parsed JSON answer per image on stdout."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, TextIO

from app.commands.common import EXIT_FAILED, EXIT_OK, EXIT_SETUP, add_model_options, emit, worker_spec

if TYPE_CHECKING:
    from app.commands.common import Subparsers
    from app.frames.intake import ImageRejected
    from app.frames.listing import InputItem
    from app.worker.blocking import BlockingWorker, Outcome, WorkerUnavailable


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser("analyze", help="analyse still images and print one JSON object per image")
    parser.add_argument("images", nargs="+", help="image files or folders of images")
    add_model_options(parser)
    parser.add_argument("--jsonl", action="store_true", help="one compact JSON object per line")
    parser.add_argument("--show-tokens", action="store_true", help="echo tokens to stderr as they stream")


def analyse_each(
    worker: BlockingWorker, named: Iterable[tuple[str, InputItem]], on_token: Callable[[str], None] | None = None
) -> Iterator[tuple[str, Outcome | ImageRejected | WorkerUnavailable]]:
    """Each image read and analysed in turn (`analyze`, `eval`), as its name and what came of it: the
    file's ImageRejected, the worker's Outcome, or WorkerUnavailable, after which nothing more is tried."""
    from app.frames.intake import ImageRejected, read_image_file
    from app.worker.blocking import WorkerUnavailable

    for name, item in named:
        try:
            if item.error is not None:
                raise item.error
            assert item.path is not None
            image = read_image_file(item.path)
        except ImageRejected as exc:
            yield name, exc
            continue
        try:
            outcome = worker.analyze(image, name, on_token=on_token)
        except WorkerUnavailable as exc:
            yield name, exc
            return
        yield name, outcome


def run(args: argparse.Namespace, out: TextIO) -> int:
    from app.core.results import InputError
    from app.frames.intake import ImageRejected
    from app.frames.listing import list_inputs
    from app.worker.blocking import BlockingWorker, WorkerUnavailable
    from app.worker.messages import JobError

    def note(message: str) -> None:
        print(f"note: {message}", file=sys.stderr)

    def echo(piece: str) -> None:
        sys.stderr.write(piece)
        sys.stderr.flush()

    # The model loads and runs in a child process: a damaged model that crashes MNN in
    # native code becomes a clean error here (exit 2, or that image's error), never a segfault.
    spec = replace(worker_spec(args), checklists=True)  # a checklist profile: every signal per image
    with BlockingWorker(spec, host_kind="process", on_notice=note) as worker:
        try:
            ready = worker.start()
        except WorkerUnavailable as exc:
            print(f"error: the model could not be loaded: {exc}", file=sys.stderr)
            return EXIT_SETUP
        if ready.backend != args.backend:
            note(ready.backend_note)
        if ready.model_note:
            note(ready.model_note)
        report = list_inputs(args.images)
        for line in report.notes():
            note(line)
        status = EXIT_OK
        # Display names are printable and JSON-safe even for non-UTF-8 file names.
        named = ((item.display, item) for item in report.items)
        for name, outcome in analyse_each(worker, named, on_token=echo if args.show_tokens else None):
            if isinstance(outcome, ImageRejected):
                status = EXIT_FAILED
                print(f"error: {outcome}", file=sys.stderr)
                emit(out, InputError(name, outcome.reason, str(outcome)).to_dict(), args.jsonl)
                continue
            if isinstance(outcome, WorkerUnavailable):
                print(f"error: {name}: {outcome}; no further image can be analysed", file=sys.stderr)
                emit(out, InputError(name, JobError.WORKER_UNAVAILABLE, str(outcome)).to_dict(), args.jsonl)
                return EXIT_SETUP
            if args.show_tokens:
                sys.stderr.write("\n")
            if outcome.finished is not None:
                record = outcome.finished.result.to_dict()
            else:
                assert outcome.failed is not None
                status = EXIT_FAILED
                print(f"error: {name}: {outcome.failed.message}", file=sys.stderr)
                record = InputError(name, outcome.failed.error, outcome.failed.message).to_dict()
            emit(out, record, args.jsonl)
    return status
