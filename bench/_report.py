"""How every benchmark reports: a table of figures, each beside its goal and whether it was met,
and optionally the same as a JSON receipt with the machine it ran on."""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import NoReturn, TextIO

from app.commands.machine import cpu_name, package_version
from app.core.figures import Spread, spread
from app.engine.mnn_vlm import EngineError
from app.models.catalog import ModelUnusable


@dataclass(frozen=True)
class Row:
    name: str
    figure: str
    goal: str = ""  # empty: reported, no goal
    met: bool | None = None  # None: no goal, or nothing to judge


def spread_text(s: Spread, unit: str = "ms", digits: int = 2) -> str:
    """`median (min–max, n, p95)`, the form every receipt quotes."""
    f = f"{{:.{digits}f}}"
    return f"{f.format(s.median)} {unit} ({f.format(s.low)}–{f.format(s.high)}, n={s.n}, p95 {f.format(s.p95)})"


def add_receipt_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--receipt", type=Path, default=None, help="also write the figures as JSON to this file")


def add_model_options(parser: argparse.ArgumentParser, profile_default: Path | None = None) -> None:
    parser.add_argument("--model", default=None, help="model id or MNN model folder (default: the bundled demo)")
    parser.add_argument(
        "--profile", type=Path, default=profile_default, help="task profile JSON (default: the model's own)"
    )


def add_image_side_option(parser: argparse.ArgumentParser) -> None:
    """--image-max-side, checked as the app checks it (`app.commands.common.image_side`)."""
    from app.commands.common import image_side

    parser.add_argument(
        "--image-max-side", type=image_side, default=None, metavar="N", help="as the app's --image-max-side"
    )


def add_rounds_options(parser: argparse.ArgumentParser, images: int = 10, rounds: int = 3) -> None:
    """--images and --rounds (at least 1 each: `check_rounds` after parsing)."""
    parser.add_argument("--images", type=int, default=images, help=f"held-out scenes (default {images})")
    parser.add_argument("--rounds", type=int, default=rounds, help=f"passes over the images (default {rounds})")


def check_rounds(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.images < 1 or args.rounds < 1:
        parser.error("--images and --rounds must be at least 1")


FRAME_GOAL = 1.2  # p95 frame interval with a busy worker at most this times the idle one
THREAD_HOST_NOTE = "the thread host is the phones' path: it meets the goal only where MNN's binding releases the GIL"


def frame_interval_rows(idle: Spread, name: str, intervals: Sequence[float], answered: int) -> list[Row]:
    """A busy host's frame intervals beside the idle ones, judged against FRAME_GOAL."""
    busy = spread(intervals)
    ratio = busy.p95 / idle.p95
    return [
        Row(f"frame interval, busy {name}", spread_text(busy, digits=1)),
        Row("  p95 / idle", f"{ratio:.2f}x", f"<= {FRAME_GOAL:g}x", ratio <= FRAME_GOAL),
        Row("  keyframes answered", str(answered)),
    ]


def machine() -> str:
    return (
        f"{platform.system()} {platform.release()}, {cpu_name()}, "
        f"Python {platform.python_version()}, MNN {package_version('MNN')}"
    )


def report(out: TextIO, title: str, rows: Sequence[Row], receipt: Path | None = None, notes: Sequence[str] = ()) -> int:
    """Print the table; write the receipt if asked. Returns 0 when every goal with a verdict was met, else 1."""
    width = max(len(r.name) for r in rows)
    fig_width = max(len(r.figure) for r in rows)
    where = machine()
    out.write(f"{title}\n{where}\n")
    for r in rows:
        verdict = "" if r.met is None else ("  met" if r.met else "  MISSED")
        goal = f"   [goal {r.goal}{verdict}]" if r.goal else ""
        out.write(f"  {r.name:<{width}}  {r.figure:<{fig_width}}{goal}\n")
    for note in notes:
        out.write(f"  note: {note}\n")
    out.flush()
    if receipt is not None:
        receipt.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "bench": title,
            "machine": where,
            "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "command": " ".join(["python -m bench." + Path(sys.argv[0]).stem, *sys.argv[1:]]),
            "rows": [asdict(r) for r in rows],
            "notes": list(notes),
        }
        receipt.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0 if all(r.met is not False for r in rows) else 1


# What a benchmark's user can get wrong: a model, profile or file that cannot be found, read or used.
USER_ERRORS = (OSError, ValueError, LookupError, ModelUnusable, EngineError)


def run_benchmark(main: Callable[[], int]) -> NoReturn:
    """A benchmark's entry point: a bad model, profile or file is one sentence and exit 2, Ctrl-C is
    exit 130; neither is a traceback."""
    try:
        code = main()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except USER_ERRORS as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    sys.exit(code)
