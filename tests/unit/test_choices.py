from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.choices import build_choice_tree, pick


def test_shared_prefix_is_forced_and_branches_remain() -> None:
    tree = build_choice_tree([[1, 2, 3, 10, 9], [1, 2, 3, 11, 9], [1, 2, 3, 11, 12, 9]])
    assert tree.prefix == (1, 2, 3)
    assert tree.allowed(()) == {10, 11}
    assert tree.matching((11,)) == [1, 2]
    assert tree.allowed((11,)) == {9, 12}
    assert tree.matching((11, 12)) == [2]


def test_invalid_answer_sets() -> None:
    with pytest.raises(ValueError):
        build_choice_tree([[1, 2], [1, 2]])
    with pytest.raises(ValueError):
        build_choice_tree([[1, 2], [1, 2, 3]])
    with pytest.raises(ValueError):
        build_choice_tree([[]])


def test_pick_only_from_allowed_tokens_with_full_softmax_probability() -> None:
    logits = np.array([0.0, 5.0, 1.0, 2.0])
    token, p = pick(logits, {2, 3})
    assert token == 3
    assert p == pytest.approx(np.exp(2.0) / np.exp(logits).sum())


@given(st.lists(st.lists(st.integers(0, 5), min_size=1, max_size=5), min_size=2, max_size=5, unique_by=tuple))
def test_walking_the_tree_always_ends_in_exactly_one_answer(seqs: list[list[int]]) -> None:
    terminated = [s + [99] for s in seqs]  # like the closing '"}' every answer ends with
    tree = build_choice_tree(terminated)
    for target in range(len(terminated)):
        path: list[int] = []
        while len(tree.matching(path)) > 1:
            branch = tree.branches[target]
            assert branch[len(path)] in tree.allowed(path)
            path.append(branch[len(path)])
        assert tree.matching(path) == [target]
        assert tree.prefix + tree.branches[target] == tuple(terminated[target])
