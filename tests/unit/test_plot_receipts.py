"""The receipts plot draws what the receipts say: taller bars for slower sizes, in order of size."""

from __future__ import annotations

import json
from pathlib import Path

from bench.plot_receipts import _PREFILL, _VISION, bar_from_receipt, draw

RECEIPTS = Path(__file__).resolve().parents[2] / "bench" / "receipts"


def _coloured_rows(image, x: int, colour: tuple[int, int, int]) -> int:
    return sum(image.getpixel((x, y)) == colour for y in range(image.height))


def test_bars_follow_the_receipts() -> None:
    files = sorted(RECEIPTS.glob("real-size-random-[0-9][0-9][0-9].json"))
    bars = [bar_from_receipt(json.loads(p.read_text())) for p in files]
    assert len(bars) >= 2
    image = draw(list(reversed(bars)), "t", goal_s=2.5)  # drawn in size order whatever order they come in
    ordered = sorted(bars, key=lambda b: b.side)
    slot = (image.width - 64 - 24) / len(ordered)
    # beside each bar's middle, where the whisker is drawn
    centres = [round(64 + slot * (i + 0.5)) + 10 for i in range(len(ordered))]
    vision = [_coloured_rows(image, x, _VISION) for x in centres]
    prefill = [_coloured_rows(image, x, _PREFILL) for x in centres]
    # Pixel heights keep the receipts' ratios (to two pixels of rounding).
    for bar, v, p in zip(ordered, vision, prefill, strict=True):
        assert abs(v - (v + p) * bar.vision_s / (bar.vision_s + bar.prefill_s)) <= 2
    assert vision == sorted(vision) and vision[-1] > vision[0]
