"""All of a checklist's signals on every keyframe against the gate and a share of the others in turn: the
oldest answer each gives, from what keyframes cost (bench/_rotation.py, printed by bench.checklist)."""

from __future__ import annotations

import pytest

from bench._rotation import KeyframeCost, best_share, oldest_answer_s

# The real-size stand-in at 224² (bench/receipts/checklist-real-size-random-224-4-signals.json): the
# first answer with the image 5.31 s, each further one 1.15 s.
REAL_SIZE = KeyframeCost(first_s=5.31, each_s=1.15)


def test_the_oldest_answer_is_a_keyframe_late_plus_the_keyframes_until_its_signal_comes_round() -> None:
    # All three others on every keyframe: 8.76 s a keyframe, slower than a 3 s interval.
    assert oldest_answer_s(REAL_SIZE, True, 3, 3, 3.0) == pytest.approx(2 * 8.76)
    # One in turn: 6.46 s a keyframe, each other signal every third keyframe.
    assert oldest_answer_s(REAL_SIZE, True, 3, 1, 3.0) == pytest.approx(6.46 + 3 * 6.46)
    # A quick model keeps the interval: the period is the interval, not the keyframe's time.
    assert oldest_answer_s(KeyframeCost(0.5, 0.1), True, 3, 1, 3.0) == pytest.approx(0.6 + 3 * 3.0)


def test_where_the_image_is_most_of_the_cost_every_signal_is_asked_every_keyframe() -> None:
    assert best_share(REAL_SIZE, True, 3, 3.0) == 3
    assert best_share(KeyframeCost(0.004, 0.001), True, 3, 2.0) == 3  # the demo model


def test_an_image_cheaper_than_a_question_is_answered_sooner_one_signal_at_a_time() -> None:
    # F < E: an image encode cheaper than one question (not a model seen so far).
    cost = KeyframeCost(first_s=1.0, each_s=2.0)
    ages = {share: oldest_answer_s(cost, True, 3, share, 2.0) for share in (1, 2, 3)}
    assert ages[1] < ages[3]
    assert best_share(cost, True, 3, 2.0) == 1
    # F == E: every share gives the same oldest age for a slow model, and all answers are kept.
    assert best_share(KeyframeCost(2.0, 2.0), True, 3, 2.0) == 3


@pytest.mark.parametrize("each_s", [0.2, 1.15, 2.0])
@pytest.mark.parametrize("interval_s", [2.0, 3.0, 5.0])
def test_all_at_once_is_never_older_while_the_first_answer_costs_at_least_all_the_others(
    each_s: float, interval_s: float
) -> None:
    for others in range(1, 8):
        for first_s in (others * each_s, others * each_s * 1.5, 20.0):
            cost = KeyframeCost(first_s=first_s, each_s=each_s)
            every = oldest_answer_s(cost, True, others, others, interval_s)
            turns = [oldest_answer_s(cost, True, others, k, interval_s) for k in range(1, others)]
            assert all(every <= age + 1e-9 for age in turns), (cost, others)
            assert best_share(cost, True, others, interval_s) == others


def test_a_long_checklist_whose_questions_cost_more_than_the_image_is_younger_in_turns() -> None:
    # Seven others at 2 s each after a 2 s first answer: all at once 16 s a keyframe, 32 s old; two at a
    # time 6 s a keyframe, every fourth keyframe: 30 s.
    cost = KeyframeCost(first_s=2.0, each_s=2.0)
    assert oldest_answer_s(cost, True, 7, 2, 2.0) < oldest_answer_s(cost, True, 7, 7, 2.0)
    assert best_share(cost, True, 7, 2.0) < 7


def test_a_share_nearly_as_young_as_the_best_is_taken_when_it_asks_more() -> None:
    # No gate, two signals: one in turn 2 x 3 s = 6 + 1.0; both 3 + 1.2 = 4.2: both are better anyway.
    assert best_share(KeyframeCost(1.0, 0.2), False, 2, 3.0) == 2
    assert best_share(KeyframeCost(1.0, 0.2), True, 0, 3.0) == 0
