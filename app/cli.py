"""`python -m app`: the UI by default, headless commands for testers and benchmarks.

Headless commands print JSON only on stdout (MNN's own chatter is moved to
stderr at the descriptor level); messages for people go to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".webp", ".gif", ".tif", ".tiff"}

EXIT_OK, EXIT_BAD_INPUT, EXIT_SETUP = 0, 1, 2


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m app", description="Keyframe: on-device VLM practice coach.")
    sub = parser.add_subparsers(dest="command")

    ui = sub.add_parser("ui", help="start the app (default)")
    ui.add_argument("--web", action="store_true", help="serve the web UI on 127.0.0.1 even when a display exists")
    ui.add_argument("--port", type=int, default=None, help="port of the web UI (default 8550)")
    ui.add_argument("--model", default=None, help="model id or MNN model folder (default: the bundled demo model)")
    ui.add_argument("--profile", default=None, type=Path, help="task profile JSON (default: the model's own)")

    analyze = sub.add_parser("analyze", help="analyse still images and print one JSON object per image")
    analyze.add_argument("images", nargs="+", help="image files or folders of images")
    analyze.add_argument("--model", default=None, help="model id from model_store/manifests or an MNN model folder")
    analyze.add_argument("--profile", default=None, type=Path, help="task profile JSON (default: the model's own)")
    analyze.add_argument("--jsonl", action="store_true", help="one compact JSON object per line")
    analyze.add_argument("--image-max-side", type=int, default=None, help="downscale images to this longest side")
    analyze.add_argument("--threads", type=int, default=2, help="CPU threads for MNN (default 2)")
    analyze.add_argument("--show-tokens", action="store_true", help="echo tokens to stderr as they stream")
    return parser


def _expand_inputs(items: Sequence[str]) -> Iterator[Path]:
    for item in items:
        path = Path(item)
        if path.is_dir():
            yield from sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
        else:
            yield path


def _emit(out: TextIO, record: dict, jsonl: bool) -> None:
    out.write(json.dumps(record, ensure_ascii=False, indent=None if jsonl else 2) + "\n")
    out.flush()


def run_analyze(args: argparse.Namespace, out: TextIO) -> int:
    from app.analyzer import Analyzer, AnalyzerSettings, default_profile_path
    from app.core.profiles import ProfileError, load_profile
    from app.core.results import InputError
    from app.engine.mnn_vlm import EngineError
    from app.engine.model_folder import ModelFolderError
    from app.frames.intake import ImageRejected, read_image_file
    from app.models.catalog import ModelNotFound, ModelNotVerified, resolve_model
    from app.models.manifest import ManifestError

    try:
        model = resolve_model(args.model)
        profile = load_profile(args.profile or default_profile_path(model))
        settings = AnalyzerSettings(threads=args.threads, image_max_side=args.image_max_side)
        analyzer = Analyzer(model, profile, settings)
        analyzer.load()
    except (ModelNotFound, ModelNotVerified, ManifestError, ModelFolderError, ProfileError, EngineError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_SETUP

    def echo(piece: str) -> None:
        sys.stderr.write(piece)
        sys.stderr.flush()

    status = EXIT_OK
    for path in _expand_inputs(args.images):
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
        _emit(out, record, args.jsonl)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    if args.command == "analyze":
        from app.engine.stdio import claim_stdout

        return run_analyze(args, claim_stdout())
    from app.ui.launch import launch

    return launch(
        web=getattr(args, "web", False),
        port=getattr(args, "port", None),
        model=getattr(args, "model", None),
        profile=getattr(args, "profile", None),
    )
