"""What every headless command shares: exit codes, JSON output, the model options."""

from __future__ import annotations

import argparse
import json
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

# The one list of backends and the one bound on threads; the settings screen offers the same.
from app.core.settings import BACKENDS, MAX_THREADS, MIN_THREADS

# Exit codes of every command (the one place they are defined):
EXIT_OK = 0
EXIT_FAILED = 1  # a file or the operation failed (bad input, download, verification, import refused)
EXIT_SETUP = 2  # nothing could start: the model, a manifest, a mirror setting, the worker
EXIT_INTERRUPTED = 128 + signal.SIGINT  # 130: Ctrl-C (and a cancelled download), the shell's convention
EXIT_TERMINATED = 128 + signal.SIGTERM  # 143

if TYPE_CHECKING:
    from app.worker.messages import WorkerSpec

    # What `ArgumentParser.add_subparsers()` returns; each command adds its parser to it.
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]


def emit(out: TextIO, record: dict[str, Any], jsonl: bool) -> None:
    out.write(json.dumps(record, ensure_ascii=False, indent=None if jsonl else 2) + "\n")
    out.flush()


def _whole_number(text: str, lowest: int, highest: int, unit: str, suffix: str = "") -> int:
    """An argparse value: a clear one-line error for anything but a whole number in bounds."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of {unit}") from None
    if not lowest <= value <= highest:
        raise argparse.ArgumentTypeError(f"{value} is outside {lowest}-{highest}{suffix}")
    return value


def image_side(text: str) -> int:
    """argparse type of --image-max-side (below one 32 px cell MNN has no grid; far above it a
    decision never ends)."""
    from app.core.vision_size import MAX_USER_SIDE, MIN_USER_SIDE

    return _whole_number(text, MIN_USER_SIDE, MAX_USER_SIDE, "pixels", " px")


def thread_count(text: str) -> int:
    """argparse type of --threads: the bounds the settings screen has (0 or 2**31 threads mean nothing to MNN)."""
    return _whole_number(text, MIN_THREADS, MAX_THREADS, "threads")


def add_model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=None, help="model id from model_store/manifests or an MNN model folder")
    parser.add_argument("--profile", default=None, type=Path, help="task profile JSON (default: the model's own)")
    parser.add_argument(
        "--threads", type=thread_count, default=2, help=f"CPU threads for MNN, {MIN_THREADS}-{MAX_THREADS} (default 2)"
    )
    parser.add_argument(
        "--backend",
        default="cpu",
        choices=BACKENDS,
        help="MNN backend; a non-CPU backend is checked against CPU first (default cpu)",
    )
    parser.add_argument(
        "--image-max-side",
        type=image_side,
        default=None,
        metavar="N",
        help="downscale images to this longest side, 32-2048 px (never upscaled)",
    )
    parser.add_argument(
        "--free", action="store_true", help="free generation instead of constrained decoding over the profile's answers"
    )


def worker_spec(args: argparse.Namespace) -> WorkerSpec:
    from app.worker.messages import WorkerSpec

    return WorkerSpec(
        model=args.model,
        profile=args.profile,
        backend=args.backend,
        threads=args.threads,
        image_max_side=args.image_max_side,
        constrained=not args.free,
    )
