"""What every headless command shares: exit codes, JSON output, the model options."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, TextIO

EXIT_OK, EXIT_BAD_INPUT, EXIT_SETUP = 0, 1, 2
BACKENDS = ("cpu", "metal", "opencl", "vulkan")


def emit(out: TextIO, record: dict[str, Any], jsonl: bool) -> None:
    out.write(json.dumps(record, ensure_ascii=False, indent=None if jsonl else 2) + "\n")
    out.flush()


def add_model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=None, help="model id from model_store/manifests or an MNN model folder")
    parser.add_argument("--profile", default=None, type=Path, help="task profile JSON (default: the model's own)")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads for MNN (default 2)")
    parser.add_argument(
        "--backend",
        default="cpu",
        choices=BACKENDS,
        help="MNN backend; a non-CPU backend is checked against CPU first (default cpu)",
    )
    parser.add_argument("--image-max-side", type=int, default=None, help="downscale images to this longest side")
    parser.add_argument(
        "--free", action="store_true", help="free generation instead of constrained decoding over the profile's answers"
    )


def worker_spec(args: argparse.Namespace) -> Any:
    from app.worker.messages import WorkerSpec

    return WorkerSpec(
        model=args.model,
        profile=args.profile,
        backend=args.backend,
        threads=args.threads,
        image_max_side=args.image_max_side,
        constrained=not args.free,
    )
