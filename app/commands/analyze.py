"""`analyze IMAGE…`: one strictly parsed JSON answer per image on stdout."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from app.commands.common import EXIT_BAD_INPUT, EXIT_OK, EXIT_SETUP, add_model_options, emit, worker_spec

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".webp", ".gif", ".tif", ".tiff"}


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("analyze", help="analyse still images and print one JSON object per image")
    parser.add_argument("images", nargs="+", help="image files or folders of images")
    add_model_options(parser)
    parser.add_argument("--jsonl", action="store_true", help="one compact JSON object per line")
    parser.add_argument("--show-tokens", action="store_true", help="echo tokens to stderr as they stream")


def expand_inputs(items: Sequence[str]) -> Iterator[Path]:
    for item in items:
        path = Path(item)
        if path.is_dir():
            yield from sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
        else:
            yield path


def run(args: argparse.Namespace, out: TextIO) -> int:
    from app.core.profiles import ProfileError
    from app.core.results import InputError
    from app.engine.mnn_vlm import EngineError
    from app.engine.model_folder import ModelFolderError
    from app.frames.intake import ImageRejected, read_image_file
    from app.models.catalog import ModelNotFound, ModelNotVerified
    from app.models.manifest import ManifestError
    from app.worker.serve import checked_analyzer

    try:
        analyzer, decision = checked_analyzer(worker_spec(args))
        if decision.fell_back:
            print(f"note: {decision.reason}", file=sys.stderr)
        analyzer.load()
    except (ModelNotFound, ModelNotVerified, ManifestError, ModelFolderError, ProfileError, EngineError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_SETUP

    def echo(piece: str) -> None:
        sys.stderr.write(piece)
        sys.stderr.flush()

    status = EXIT_OK
    for path in expand_inputs(args.images):
        try:
            image = read_image_file(path)
            result = analyzer.analyze(image, str(path), on_token=echo if args.show_tokens else None)
            record = result.to_dict()
            if args.show_tokens:
                sys.stderr.write("\n")
        except ImageRejected as exc:
            status = EXIT_BAD_INPUT
            print(f"error: {exc}", file=sys.stderr)
            record = InputError(str(path), exc.reason, str(exc)).to_dict()
        except EngineError as exc:
            status = EXIT_BAD_INPUT
            print(f"error: {path}: {exc}", file=sys.stderr)
            record = InputError(str(path), "engine_error", str(exc)).to_dict()
        emit(out, record, args.jsonl)
    return status
