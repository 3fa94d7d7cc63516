"""Every signal of a checklist on every keyframe, or the gate and a share of the others in turn: which
keeps the card's oldest answer younger, from what keyframes cost (`bench.checklist` measures it).

The image is encoded once per keyframe whatever the keyframe asks; each question after it costs its own
prefill and picks. Asking every signal makes each keyframe as slow as the image and all the questions;
asking a share makes keyframes quicker, but each other signal is answered only every few keyframes.
With `F` the first answer's time (the image and one question) and `E` each further one's, `m` other
signals asked `k` at a time on a model slower than the interval, the oldest answer is
`(F + kE)(1 + ceil(m/k))`, about `F + mE + Fm/k + kE`: all at once (`k = m`) is the youngest whenever
`F >= mE`, the first answer costing at least all the others together (the measured models: the demo's
3.8 ms against 2 x 1.1 ms; the real-size stand-in's 2.4-2.8 s against 3 x 0.6 s). Only a long checklist on
a device whose image encode is cheap against its questions would answer sooner in turns; a model that
keeps the interval waits the same interval per keyframe either way, so turns only add keyframes to
wait. That is why the app asks every signal on every keyframe.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# A share that makes the oldest answer at most this much older than the best is taken if it asks more:
# a few percent of age are not worth answers left out.
AGE_SLACK = 1.05


@dataclass(frozen=True)
class KeyframeCost:
    """Seconds a keyframe's answers take, measured: the first (which carries the image's encode and
    prefill) and each one after it."""

    first_s: float
    each_s: float

    def keyframe_s(self, questions: int) -> float:
        return self.first_s + max(0, questions - 1) * self.each_s


def oldest_answer_s(cost: KeyframeCost, gated: bool, others: int, share: int, interval_s: float) -> float:
    """How old an answer other than the gate's gets before it is replaced, from its picture: a keyframe's
    answers arrive `busy` seconds after its picture, keyframes come one `max(interval, busy)` apart, and
    a signal asked once in every `ceil(others / share)` keyframes is replaced by the answer to a picture
    that many keyframes later."""
    busy = cost.keyframe_s(int(gated) + share)
    return busy + math.ceil(others / share) * max(interval_s, busy)


def best_share(cost: KeyframeCost, gated: bool, others: int, interval_s: float) -> int:
    """How many of the `others` (the signals besides the gate) each keyframe asks: the most whose oldest
    answer is within `AGE_SLACK` of the youngest any share gives."""
    if others <= 0:
        return 0
    ages = {share: oldest_answer_s(cost, gated, others, share, interval_s) for share in range(1, others + 1)}
    youngest = min(ages.values())
    return max(share for share, age in ages.items() if age <= youngest * AGE_SLACK)
