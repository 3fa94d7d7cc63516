"""One image encode for several questions (MnnVlm.see), on the demo model and on a model folder the app did
not make (its own chat template and system prompt):
- each answer is exactly the one that question gets when it is the only one asked after the image, so
  rolling the KV cache back to the image leaves nothing of the questions before it;
- against asking with the whole prompt at once (`choose`, what a one-signal profile does), the trained
  question gets the same answer on every scene. Its score moves a little: after the image the question's
  tokens are numbered as MNN numbers generated tokens, not as prompt text after an image."""

from __future__ import annotations

import math
from pathlib import Path

from app.core.profile.task import profile_from_dict
from app.engine.mnn_vlm import Choice
from app.frames.intake import decode_image_bytes
from app.models.catalog import resolve_model
from app.worker.analyzer import Analyzer
from tests.integration.conftest import held_out_scenes

FOREIGN = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "foreign_qwen3vl"
QUESTIONS = (
    "Is the hand position correct?",  # the demo model's trained question
    "Are the trainee's hands in the picture?",
    "Are both hands stacked, one on top of the other?",
)


def _same(a: Choice, b: Choice) -> bool:
    """The same pick and text, and the same score up to float noise: MNN may clone a module between two
    runs of the same forward (its "module need new clone" warning), which moves the last digits
    (0.14054066692 against 0.14054065915 seen on the foreign model)."""
    close = a.score == b.score or (
        a.score is not None and b.score is not None and math.isclose(a.score, b.score, rel_tol=1e-6)
    )
    return (a.index, a.generation.text) == (b.index, b.generation.text) and close


def _check_one_encode(analyzer: Analyzer, data: bytes, system: str | None) -> tuple[Choice, Choice]:
    """Asserts the rollback equalities; returns the trained question asked (alone with the whole prompt,
    after the one encode)."""
    answers = [analyzer.profile.answer_text(v) for v in analyzer.profile.values]
    rgb = analyzer.prepare(decode_image_bytes(data))
    seen = analyzer.engine.see(rgb, [(q, answers) for q in QUESTIONS], system=system)
    together = [seen.choose(i) for i in range(len(QUESTIONS))]
    again = seen.choose(0)
    assert _same(again, together[0]), "asked again after the others: the same answer and score"
    for i, question in enumerate(QUESTIONS):
        single = analyzer.engine.see(rgb, [(question, answers)], system=system).choose(0)
        assert _same(single, together[i]), question
    return analyzer.engine.choose(rgb, QUESTIONS[0], answers, system=system), together[0]


def test_one_encode_answers_each_question_as_if_it_were_asked_alone_on_the_demo_model(
    demo_analyzer: Analyzer,
) -> None:
    differences = []
    for kind, data, _ in held_out_scenes(count_per_kind=3, seed=31):
        whole, after = _check_one_encode(demo_analyzer, data, None)
        assert (after.index, after.generation.text) == (whole.index, whole.generation.text), kind
        differences.append(abs((after.score or 0) - (whole.score or 0)))
    assert max(differences) < 0.02, max(differences)  # 0.014 at most with the model of 2026-12-02


def test_only_the_first_answer_carries_the_image_encode(demo_analyzer: Analyzer) -> None:
    profile = demo_analyzer.profile
    rgb = demo_analyzer.prepare(decode_image_bytes(held_out_scenes(count_per_kind=1, seed=3)[0][1]))
    seen = demo_analyzer.engine.see(rgb, [(q, [profile.answer_text(v) for v in profile.values]) for q in QUESTIONS])
    first, *later = (seen.choose(i).generation.timings for i in range(len(QUESTIONS)))
    assert first.vision_ms > 0 and first.prefill_ms > 0
    assert all(t.vision_ms == 0 and t.prefill_ms > 0 for t in later)


def test_one_encode_answers_each_question_as_if_asked_alone_on_a_foreign_model_with_a_system_prompt() -> None:
    profile = profile_from_dict(
        {"schema": 1, "id": "scene", "signal": "scene_ok", "values": ["yes", "no", "unknown"], "prompt": QUESTIONS[0]}
    )
    analyzer = Analyzer(resolve_model(str(FOREIGN)), profile)
    analyzer.load()
    try:
        for _, data, _ in held_out_scenes(count_per_kind=1, seed=5):
            _check_one_encode(analyzer, data, "You are terse.")
    finally:
        analyzer.close()
