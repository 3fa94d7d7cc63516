"""Where text after an image sits in MNN's multimodal rotary positions (M-RoPE, Qwen2/2.5/3-VL).

A whole prompt numbers an image's tokens by their place in the image, not one after another: MNN
gives the token that opens the image one position, each of its `rows x cols` cells the position of
its row and its column (over three rotary sections) counted from there, and the token that closes
it the position after the last column. The text after the image goes on from there, so it sits
`rows x cols - cols` positions before its index in the cache. MNN numbers a forward after a prefill
by cache index instead; a question asked after an image already in the cache (the checklist) must
be moved back by this much to be the question asked with the whole prompt.
"""

from __future__ import annotations

from collections.abc import Sequence


def image_position_shift(ids: Sequence[int], vision_start: int, vision_end: int, rows: int, cols: int) -> int:
    """How many cache entries more than positions the last image in `ids` takes (0: none found, or
    its token count is not `rows x cols`, so MNN did not number it as a grid)."""
    try:
        end = len(ids) - 1 - list(reversed(ids)).index(vision_end)
        start = end - 1 - list(reversed(ids[:end])).index(vision_start)
    except ValueError:
        return 0
    cells = end - start - 1
    return cells - cols if rows > 0 and cols > 0 and cells == rows * cols else 0
