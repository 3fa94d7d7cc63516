"""The chat text before the image (template start, system turn, a question asked before the image) is
prefilled once and kept in MNN's KV cache across keyframes (MnnVlm): each keyframe's answer is the one
it gets on a fresh history, over different images (and image sizes) in a row, with the question after
or before the image, on the demo model and on a model folder the app did not make; a cancel or a failure
mid-keyframe leaves the next keyframe's answer fresh too. Scores agree within SCORE_TOLERANCE: on the
demo model they were bit-identical in every scene checked, on the foreign model (8-bit, system prompt)
they moved by up to 0.004 in one scene of 20 (its logits by 0.07), as MNN's kernels round a little
differently when the kept text was computed in an earlier forward."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.core.profile.checklist import checklist_from_dict
from app.core.profile.task import QuestionPlace, TaskProfile, profile_from_dict
from app.engine.mnn_vlm import Choice, EngineError, MnnVlm
from app.frames.intake import decode_image_bytes, resize_exact
from app.models.catalog import DEFAULT_MODEL_ID, resolve_model
from app.storage.paths import PROFILES
from app.storage.profile_file import load_checklist
from app.worker.analyzer import Analyzer
from tests.integration.conftest import held_out_scenes

FOREIGN = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "foreign_qwen3vl"
TRAINED = "Is the hand position correct?"
OTHER = "Are both hands stacked, one on top of the other?"
SCORE_TOLERANCE = 0.01
PLACES = pytest.mark.parametrize("question_first", [False, True], ids=["after_image", "before_image"])


def _answers(profile: TaskProfile) -> list[str]:
    return [profile.answer_text(v) for v in profile.values]


def _images(analyzer: Analyzer, seed: int, per_kind: int = 2) -> list[np.ndarray]:
    """Held-out scenes as the model sees them, and one at another size (a different image token count)."""
    images = [analyzer.prepare(decode_image_bytes(data)) for _, data, _ in held_out_scenes(per_kind, seed)]
    side = images[0].shape[0]
    return [*images, resize_exact(images[1], side // 2, side)]


def _fresh(engine: MnnVlm, ask: Callable[[], Any]) -> Any:
    engine.forget_prefix()
    answer = ask()
    assert engine.kept_tokens > 0, "a fresh keyframe keeps its text for the next"
    return answer


def _assert_same(kept: list[Choice], fresh: list[Choice]) -> None:
    assert [(c.index, c.generation.text) for c in kept] == [(c.index, c.generation.text) for c in fresh]
    assert [c.generation.timings.prompt_tokens for c in kept] == [c.generation.timings.prompt_tokens for c in fresh]
    worst = max(abs((k.score or 0.0) - (f.score or 0.0)) for k, f in zip(kept, fresh, strict=True))
    assert worst <= SCORE_TOLERANCE, worst


def _in_a_row(
    engine: MnnVlm, images: list[np.ndarray], ask: Callable[[np.ndarray], Any]
) -> tuple[list[Any], list[Any]]:
    """Each image asked with the text kept from the keyframe before (one after another), then each fresh."""
    ask(images[-1])  # the first keyframe of a worker: it prefills the text and keeps it
    kept = []
    for rgb in images:
        tokens = engine.kept_tokens
        assert tokens > 0
        kept.append(ask(rgb))
        assert engine.kept_tokens == tokens
    return kept, [_fresh(engine, lambda rgb=rgb: ask(rgb)) for rgb in images]


@PLACES
def test_kept_text_gives_the_fresh_answers_over_different_images_in_a_row(
    demo_analyzer: Analyzer, question_first: bool
) -> None:
    engine, answers = demo_analyzer.engine, _answers(demo_analyzer.profile)
    images = _images(demo_analyzer, seed=41)

    def choose(rgb: np.ndarray) -> Choice:
        return engine.choose(rgb, TRAINED, answers, question_first=question_first)

    _assert_same(*_in_a_row(engine, images, choose))
    kept, fresh = _in_a_row(
        engine, images, lambda rgb: engine.generate(rgb, TRAINED, question_first=question_first, max_new_tokens=24)
    )
    assert [g.text for g in kept] == [g.text for g in fresh]
    assert all(g.text.startswith('{"signal"') for g in kept[:-1]), "the trained scenes get real answers"


def test_kept_text_gives_the_fresh_answers_to_every_question_of_one_encode(demo_analyzer: Analyzer) -> None:
    engine, answers = demo_analyzer.engine, _answers(demo_analyzer.profile)

    def both(rgb: np.ndarray) -> list[Choice]:
        seen = engine.see(rgb, [(TRAINED, answers), (OTHER, answers)])
        return [seen.choose(0), seen.choose(1)]

    kept, fresh = _in_a_row(engine, _images(demo_analyzer, seed=43), both)
    _assert_same([c for pair in kept for c in pair], [c for pair in fresh for c in pair])


@pytest.fixture(scope="module")
def foreign_analyzer() -> Iterator[Analyzer]:
    profile = profile_from_dict(
        {"id": "scene", "signal": "scene_ok", "values": ["yes", "no", "unknown"], "prompt": TRAINED}
    )
    analyzer = Analyzer(resolve_model(str(FOREIGN)), profile)
    analyzer.load()
    yield analyzer
    analyzer.close()


@PLACES
def test_kept_text_with_a_system_prompt_gives_the_fresh_answers_on_a_foreign_model(
    foreign_analyzer: Analyzer, question_first: bool
) -> None:
    engine, answers = foreign_analyzer.engine, _answers(foreign_analyzer.profile)
    images = _images(foreign_analyzer, seed=45, per_kind=1)

    def choose(rgb: np.ndarray) -> Choice:
        return engine.choose(rgb, TRAINED, answers, system="You are terse.", question_first=question_first)

    _assert_same(*_in_a_row(engine, images, choose))
    if not question_first:
        seen = lambda rgb: engine.see(rgb, [(TRAINED, answers)], system="You are terse.").choose(0)  # noqa: E731
        _assert_same(*_in_a_row(engine, images, seen))


def _two_scenes(analyzer: Analyzer) -> tuple[np.ndarray, np.ndarray]:
    scenes = {kind: data for kind, data, _ in held_out_scenes(count_per_kind=1, seed=47)}
    return analyzer.prepare(decode_image_bytes(scenes["correct"])), analyzer.prepare(
        decode_image_bytes(scenes["off_torso"])
    )


def test_a_cancel_mid_keyframe_leaves_the_next_keyframe_its_fresh_answer(demo_analyzer: Analyzer) -> None:
    engine, answers = demo_analyzer.engine, _answers(demo_analyzer.profile)
    first, second = _two_scenes(demo_analyzer)

    def next_keyframe() -> None:
        tokens = engine.kept_tokens
        assert tokens > 0
        kept = engine.choose(second, TRAINED, answers)
        assert engine.kept_tokens == tokens, "the kept text was used"
        _assert_same([kept], [_fresh(engine, lambda: engine.choose(second, TRAINED, answers))])

    engine.choose(first, TRAINED, answers)
    cancel = threading.Event()
    cancelled = engine.choose(first, TRAINED, answers, on_token=lambda _: cancel.set(), cancel=cancel)
    assert cancelled.index is None  # after the image's prefill, before the pick
    next_keyframe()

    cancel.clear()
    pieces: list[str] = []

    def stop_after_two(piece: str) -> None:
        pieces.append(piece)
        if len(pieces) == 2:
            cancel.set()

    assert engine.generate(first, TRAINED, on_token=stop_after_two, cancel=cancel).timings.generated_tokens == 2
    next_keyframe()

    cancel.clear()
    seen = engine.see(first, [(TRAINED, answers), (OTHER, answers)])
    assert seen.choose(0, on_token=lambda _: cancel.set(), cancel=cancel).index is None
    next_keyframe()


def test_a_failure_mid_keyframe_leaves_the_next_keyframe_its_fresh_answer(demo_analyzer: Analyzer) -> None:
    """Not the failed keyframe's image either: MNN keeps an image that was encoded but never prefilled
    queued (even across reset()), and its next prefill would take it for the new keyframe's."""
    engine, answers = demo_analyzer.engine, _answers(demo_analyzer.profile)
    first, second = _two_scenes(demo_analyzer)
    on_first = _fresh(engine, lambda: engine.choose(first, TRAINED, answers))
    on_second = _fresh(engine, lambda: engine.choose(second, TRAINED, answers))
    assert on_first.index != on_second.index, "the two scenes must be told apart for this test to mean anything"

    tokens = engine.kept_tokens
    with pytest.raises(EngineError, match="RGB"):
        engine.choose(first.astype(np.float32), TRAINED, answers)  # refused before MNN sees it
    assert engine.kept_tokens == tokens, "nothing reached MNN: the kept text stays"
    _assert_same([engine.choose(second, TRAINED, answers)], [on_second])

    def fail_at(phase: str) -> Callable[[str], None]:
        def listener(now: str) -> None:
            if now == phase:
                raise RuntimeError(f"a listener failed at {phase}")

        return listener

    # The image encoded and not prefilled (the keyframe's own prefill, and one encode for several
    # questions), then prefilled and not answered.
    for ask in (
        lambda: engine.choose(first, TRAINED, answers, on_phase=fail_at("prefill")),
        lambda: engine.see(first, [(TRAINED, answers)], on_phase=fail_at("prefill")),
        lambda: engine.choose(first, TRAINED, answers, on_phase=fail_at("decode")),
    ):
        with pytest.raises(RuntimeError, match="a listener failed"):
            ask()
        _assert_same([engine.choose(second, TRAINED, answers)], [on_second])

    def fail(_: str) -> None:
        raise RuntimeError("a token listener failed")

    with pytest.raises(RuntimeError, match="token"):
        engine.choose(first, TRAINED, answers, on_token=fail)
    kept = engine.choose(second, TRAINED, answers)
    assert engine.kept_tokens == tokens
    _assert_same([kept], [on_second])


def test_a_seen_image_refuses_questions_once_another_keyframe_was_prefilled(demo_analyzer: Analyzer) -> None:
    engine, answers = demo_analyzer.engine, _answers(demo_analyzer.profile)
    first, second = _two_scenes(demo_analyzer)
    seen = engine.see(first, [(TRAINED, answers)])
    engine.choose(second, TRAINED, answers)
    with pytest.raises(EngineError, match="another one was prefilled"):
        seen.choose(0)


def test_analyze_asks_a_question_placed_before_the_image_and_keeps_it(demo_analyzer: Analyzer) -> None:
    """A one-signal profile whose question comes before the image: `analyze` caches the whole question,
    and a checklist of that one signal is answered the same way."""
    question = {"signal": "hand_position_correct", "values": ["yes", "no", "unknown"], "prompt": TRAINED}
    profile = profile_from_dict({"id": "first", "question_place": "before_image", **question})
    assert profile.question_place is QuestionPlace.BEFORE_IMAGE
    checklist = checklist_from_dict({"id": "first", "question_place": "before_image", "signals": [question]})
    assert checklist.signals == (profile,)
    analyzer = Analyzer(resolve_model(DEFAULT_MODEL_ID), profile)
    engine = analyzer.engine
    try:
        images = [decode_image_bytes(d) for _, d, _ in held_out_scenes(count_per_kind=1, seed=49)]
        analyzer.analyze(images[-1], "warm")
        head = engine.build_prompt(TRAINED, question_first=True).split("<img>")[0]
        assert head.endswith(TRAINED)
        assert engine.kept_tokens == len(engine._encode_text(head)), "the template's start and the question are kept"
        for image in images:
            kept = analyzer.analyze(image, "kept")
            engine.forget_prefix()
            fresh = analyzer.analyze(image, "fresh")
            listed = analyzer.analyze_checklist(image, "listed", checklist).results[0]
            assert kept.answer == fresh.answer == listed.answer
            assert kept.model_score == pytest.approx(fresh.model_score, abs=SCORE_TOLERANCE)
    finally:
        analyzer.close()


@pytest.mark.parametrize("name", sorted(p.name for p in PROFILES.glob("*.json")))
def test_every_shipped_profile_gives_the_same_answers_with_its_text_kept(name: str) -> None:
    checklist = load_checklist(PROFILES / name)
    analyzer = Analyzer(resolve_model(DEFAULT_MODEL_ID), checklist.signals[0])
    try:
        for _, data, _ in held_out_scenes(count_per_kind=1, seed=51):
            image = decode_image_bytes(data)
            kept = analyzer.analyze_checklist(image, "kept", checklist)
            assert analyzer.engine.kept_tokens > 0
            analyzer.engine.forget_prefix()
            fresh = analyzer.analyze_checklist(image, "fresh", checklist)
            assert [r.answer for r in kept.results] == [r.answer for r in fresh.results]
            for k, f in zip(kept.results, fresh.results, strict=True):
                assert (k.model_score or 0.0) == pytest.approx(f.model_score or 0.0, abs=SCORE_TOLERANCE)
    finally:
        analyzer.close()
