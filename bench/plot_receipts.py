"""Latency against image size, drawn from `python -m app bench --receipt` files.

One stacked bar per receipt (vision, then prefill, then the rest of the keyframe's way to a
parsed answer), its median, with the min–max of the whole answer as a whisker and the figure
written above. Drawn with Pillow (already a dependency), so no plotting library is needed::

    .venv/bin/python -m bench.plot_receipts bench/receipts/real-size-random-*.json --out docs/receipts/latency.png
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from bench._report import run_benchmark

_W, _H = 760, 420
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 24, 72, 56
_INK, _GRID, _GOAL = (33, 33, 33), (215, 215, 215), (198, 40, 40)
_VISION, _PREFILL, _REST = (0, 105, 92), (77, 182, 172), (178, 223, 219)


@dataclass(frozen=True)
class Bar:
    side: int
    answer_s: float
    low_s: float
    high_s: float
    vision_s: float
    prefill_s: float
    n: int


def bar_from_receipt(data: dict[str, Any]) -> Bar:
    if not isinstance(data, dict) or not isinstance(data.get("answer_ms"), dict) or not data.get("image_max_side"):
        raise ValueError("not a receipt of `python -m app bench --image-max-side N --receipt F`")
    answer = data["answer_ms"]
    return Bar(
        side=int(data["image_max_side"]),
        answer_s=answer["median"] / 1000,
        low_s=answer["min"] / 1000,
        high_s=answer["max"] / 1000,
        vision_s=(data.get("vision_ms") or {}).get("median", 0.0) / 1000,
        prefill_s=(data.get("prefill_ms") or {}).get("median", 0.0) / 1000,
        n=int(answer["n"]),
    )


def _axis_top(value: float) -> float:
    """A round top for the axis with some room above the tallest whisker."""
    magnitude = 10 ** math.floor(math.log10(value * 1.12))
    return math.ceil(value * 1.12 / magnitude) * magnitude


def draw(bars: list[Bar], title: str, goal_s: float | None = None) -> Image.Image:
    bars = sorted(bars, key=lambda b: b.side)
    image = Image.new("RGB", (_W, _H), "white")
    d = ImageDraw.Draw(image)
    small, normal = ImageFont.load_default(12), ImageFont.load_default(15)
    d.text((_LEFT, 16), title, fill=_INK, font=normal)
    top = _axis_top(max(b.high_s for b in bars))
    plot_h = _H - _TOP - _BOTTOM

    def y(seconds: float) -> float:
        return _H - _BOTTOM - plot_h * seconds / top

    ticks = 5
    for i in range(ticks + 1):
        value = top * i / ticks
        d.line((_LEFT, y(value), _W - _RIGHT, y(value)), fill=_GRID)
        d.text((_LEFT - 8, y(value)), f"{value:g} s", fill=_INK, font=small, anchor="rm")
    if goal_s is not None:
        for x in range(_LEFT, _W - _RIGHT, 12):  # dashed
            d.line((x, y(goal_s), x + 6, y(goal_s)), fill=_GOAL, width=2)
        x = _LEFT + 3 * 110
        d.line((x, 48, x + 12, 48), fill=_GOAL, width=2)
        d.text((x + 18, 48), f"goal {goal_s:g} s", fill=_GOAL, font=small, anchor="lm")
    slot = (_W - _LEFT - _RIGHT) / len(bars)
    width = slot * 0.5
    for i, b in enumerate(bars):
        x0 = _LEFT + slot * i + (slot - width) / 2
        x1 = x0 + width
        rest = max(0.0, b.answer_s - b.vision_s - b.prefill_s)
        base = 0.0
        for part, colour in ((b.vision_s, _VISION), (b.prefill_s, _PREFILL), (rest, _REST)):
            if part > 0:
                d.rectangle((x0, y(base + part), x1, y(base)), fill=colour)
            base += part
        mid = (x0 + x1) / 2
        d.line((mid, y(b.low_s), mid, y(b.high_s)), fill=_INK, width=1)
        for edge in (b.low_s, b.high_s):
            d.line((mid - 6, y(edge), mid + 6, y(edge)), fill=_INK)
        label_at, label = (mid, y(b.high_s) - 4), f"{b.answer_s:.2f} s (n={b.n})"
        left, upper, right, lower = d.textbbox(label_at, label, font=small, anchor="ms")
        d.rectangle((left - 3, upper - 3, right + 3, lower + 3), fill="white")  # readable over the goal line
        d.text(label_at, label, fill=_INK, font=small, anchor="ms")
        d.text((mid, _H - _BOTTOM + 8), f"{b.side} x {b.side}", fill=_INK, font=normal, anchor="mt")
    d.text(((_W + _LEFT) / 2, _H - 18), "image fed to the model (px)", fill=_INK, font=small, anchor="mm")
    for j, (name, colour) in enumerate((("vision", _VISION), ("prefill", _PREFILL), ("rest of the way", _REST))):
        x = _LEFT + j * 110
        d.rectangle((x, 42, x + 12, 54), fill=colour)
        d.text((x + 18, 48), name, fill=_INK, font=small, anchor="lm")
    return image


def main() -> int:
    parser = argparse.ArgumentParser(description="Plot keyframe-to-answer latency against image size.")
    parser.add_argument("receipts", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--goal-s", type=float, default=None, help="draw a goal line at this many seconds")
    parser.add_argument("--title", default="Keyframe to parsed answer (median; whisker: min to max)")
    args = parser.parse_args()
    bars = [_read(p) for p in args.receipts]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    draw(bars, args.title, args.goal_s).save(args.out)
    print(f"wrote {args.out}")
    return 0


def _read(path: Path) -> Bar:
    try:
        return bar_from_receipt(json.loads(path.read_text(encoding="utf-8")))
    except ValueError as exc:  # not JSON, or not a receipt: name the file
        raise ValueError(f"{path}: {exc}") from None


if __name__ == "__main__":
    run_benchmark(main)
