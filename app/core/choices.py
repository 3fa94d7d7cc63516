"""Constrained decoding over a finite set of answers, as token sequences. Pure logic.

Every allowed answer is tokenised in full (so the split matches how the model
produces it). The tokens all answers share are forced — appended to the prompt
and prefilled in one forward — and the model only chooses where answers
branch; once one answer is left, the rest of it is forced too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ChoiceTree:
    prefix: tuple[int, ...]  # shared by every answer: prefilled, never sampled
    branches: tuple[tuple[int, ...], ...]  # what follows the prefix, one per answer

    def matching(self, path: Sequence[int]) -> list[int]:
        n = len(path)
        return [i for i, b in enumerate(self.branches) if tuple(b[:n]) == tuple(path)]

    def allowed(self, path: Sequence[int]) -> set[int]:
        n = len(path)
        return {self.branches[i][n] for i in self.matching(path) if len(self.branches[i]) > n}


def build_choice_tree(sequences: Sequence[Sequence[int]]) -> ChoiceTree:
    seqs = [tuple(s) for s in sequences]
    if len(seqs) < 1 or any(not s for s in seqs):
        raise ValueError("need at least one non-empty answer")
    if len(set(seqs)) != len(seqs):
        raise ValueError("answers must tokenise differently")
    common = 0
    shortest = min(len(s) for s in seqs)
    while common < shortest and len({s[common] for s in seqs}) == 1:
        common += 1
    if len(seqs) > 1 and common == shortest:
        raise ValueError("one answer is a token prefix of another")
    return ChoiceTree(prefix=seqs[0][:common], branches=tuple(s[common:] for s in seqs))


def pick(logits: np.ndarray, allowed: set[int]) -> tuple[int, float]:
    """The most likely allowed token and its probability under the full softmax."""
    flat = np.asarray(logits, dtype=np.float64).reshape(-1)
    shifted = np.exp(flat - flat.max())
    probs = shifted / shifted.sum()
    token = max(allowed, key=lambda t: flat[t])
    return token, float(probs[token])
