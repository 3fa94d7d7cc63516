"""The real MNN runtime on the bundled demo model: answers, streaming, timings."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from app.core.generation import FinishReason
from app.core.parser import ParseReason
from app.engine.mnn_vlm import _Clock
from app.engine.stdio import native_stdout_to_stderr
from app.frames.intake import decode_image_bytes
from app.worker.analyzer import Analyzer
from tests.conditions import HANG_S
from tests.conftest import ROOT
from tests.integration.conftest import held_out_scenes


def test_exact_answers_on_held_out_scenes(demo_analyzer: Analyzer) -> None:
    scenes = held_out_scenes(count_per_kind=20)
    wrong = []
    for kind, data, expected in scenes:
        result = demo_analyzer.analyze(decode_image_bytes(data), kind)
        assert result.answer.reason is ParseReason.OK, result.answer.raw
        assert result.answer.raw == demo_analyzer.profile.answer_text(result.observation)  # the exact answer text
        if result.observation != expected:
            wrong.append(kind)
        free = demo_analyzer.engine.generate(
            demo_analyzer.prepare(decode_image_bytes(data)), demo_analyzer.profile.prompt
        )
        # Constrained decoding must not change the model's mind (it did while the
        # answers were tokenised after the image prompt, which clobbered MNN's vision state).
        assert free.text == result.answer.raw, kind
    # The receipt reaches >= 96 % per kind on 250 scenes; 100 fresh scenes may hold two misses.
    assert len(wrong) <= 2, wrong


def test_streamed_text_equals_non_streamed_response(demo_analyzer: Analyzer) -> None:
    engine = demo_analyzer.engine
    llm = engine._llm  # the same loaded model, asked through MNN's own response()
    for kind, data, _ in held_out_scenes(count_per_kind=1, seed=7):
        rgb = demo_analyzer.prepare(decode_image_bytes(data))
        pieces: list[str] = []
        generation = engine.generate(rgb, demo_analyzer.profile.prompt, on_token=pieces.append, max_new_tokens=64)
        assert generation.finish is FinishReason.STOP
        assert len(pieces) >= 2, "tokens arrive one by one, not as one block"
        assert "".join(pieces) == generation.text
        llm.reset()
        reference = llm.response(
            {"text": "<img>image_0</img>" + demo_analyzer.profile.prompt, "images": [engine._image_part(rgb)]}
        )
        # response() appends MNN's default end_with ("\n") after the stop token.
        assert reference == generation.text + "\n", kind


def test_timings_are_present_and_positive(demo_analyzer: Analyzer) -> None:
    _, data, _ = held_out_scenes(count_per_kind=1, seed=11)[0]
    image = decode_image_bytes(data)
    constrained = demo_analyzer.analyze(image, "scene").timings
    free = demo_analyzer.engine.generate(demo_analyzer.prepare(image), demo_analyzer.profile.prompt).timings
    for t in (constrained, free):
        for name in ("load_ms", "vision_ms", "prefill_ms", "first_token_ms", "decode_ms", "total_ms"):
            assert getattr(t, name) > 0, name
        assert t.first_token_ms >= t.vision_ms + t.prefill_ms * 0.99
        assert t.total_ms >= t.first_token_ms
        assert t.prompt_tokens > 0
    assert (
        constrained.preprocess_ms > 0 and constrained.total_ms >= constrained.preprocess_ms + constrained.first_token_ms
    )
    assert free.generated_tokens >= 5  # the whole JSON answer, token by token
    assert constrained.generated_tokens <= 2  # only where the answers branch
    # The constrained prompt carries the forced JSON prefix, so it is longer than the free one.
    assert constrained.prompt_tokens > free.prompt_tokens


def test_token_limit_truncates_and_cancel_stops(demo_analyzer: Analyzer) -> None:
    _, data, _ = held_out_scenes(count_per_kind=1, seed=12)[0]
    rgb = demo_analyzer.prepare(decode_image_bytes(data))
    short = demo_analyzer.engine.generate(rgb, demo_analyzer.profile.prompt, max_new_tokens=3)
    assert short.finish is FinishReason.LENGTH and short.timings.generated_tokens == 3

    cancel = threading.Event()
    seen: list[str] = []

    def stop_after_two(piece: str) -> None:
        seen.append(piece)
        if len(seen) == 2:
            cancel.set()

    cancelled = demo_analyzer.engine.generate(rgb, demo_analyzer.profile.prompt, on_token=stop_after_two, cancel=cancel)
    assert cancelled.finish is FinishReason.CANCELLED
    assert cancelled.timings.generated_tokens == 2  # took effect before the next decode step


def _header_stop_ids(tokenizer: Path) -> frozenset[int]:
    """Read here, not through the app's reader: line 2 counts special, stop and prefix ids; line 3 lists them."""
    lines = tokenizer.read_bytes().split(b"\n", 3)
    n_special, n_stop, _ = (int(x) for x in lines[1].split())
    ids = [int(x) for x in lines[2].split()]
    return frozenset(ids[n_special : n_special + n_stop])


def test_stop_ids_come_from_the_tokenizer_file(demo_analyzer: Analyzer) -> None:
    expected = _header_stop_ids(demo_analyzer.engine.folder.tokenizer_path)
    assert expected, "the demo model's tokenizer header names its stop ids"
    # Exactly the header's ids: the fallback list (ids found by encoding stop texts) gives another set.
    assert demo_analyzer.engine.stop_ids == expected
    llm = demo_analyzer.engine._llm
    assert any(llm.tokenizer_encode("<|im_end|>") == [i] for i in expected)


def test_every_token_decodes_without_raising(demo_analyzer: Analyzer) -> None:
    engine = demo_analyzer.engine
    _, data, _ = held_out_scenes(count_per_kind=1, seed=13)[0]
    rgb = demo_analyzer.prepare(decode_image_bytes(data))
    with native_stdout_to_stderr():
        _, _, logits = engine._prefill(rgb, engine.build_prompt("Hi"), _Clock(0.0), None)
    vocab = engine._last_row(logits).shape[0]
    del logits  # an MNN Var alive at interpreter exit can crash the teardown
    pieces = [engine._decode_piece(t) for t in range(vocab)]
    # Byte-level BPE: single bytes 0x80-0xFF are not UTF-8 on their own; MNN raises on them.
    assert "\ufffd" in pieces
    assert all(isinstance(p, str) for p in pieces)


def test_constrained_decoding_reads_the_profiles_short_question() -> None:
    """The instruct profile's format instruction is for free generation only: constrained, the
    model reads the short question, and the prefill is that much shorter."""
    from dataclasses import replace

    from app.models.catalog import DEFAULT_MODEL_ID, resolve_model
    from app.storage.paths import PROFILES
    from app.storage.profile_file import load_profile
    from app.worker.analyzer import AnalyzerSettings

    profile = load_profile(PROFILES / "hand_position_instruct.json")
    assert profile.constrained_prompt and profile.constrained_prompt in profile.prompt
    model = resolve_model(DEFAULT_MODEL_ID)
    image = decode_image_bytes(held_out_scenes(count_per_kind=1, seed=13)[0][1])
    tokens = {}
    for name, p, constrained in (
        ("short", profile, True),
        ("long", replace(profile, constrained_prompt=None), True),
        ("free", profile, False),
    ):
        analyzer = Analyzer(model, p, AnalyzerSettings(constrained=constrained))
        try:
            tokens[name] = analyzer.analyze(image, "scene").timings.prompt_tokens
        finally:
            analyzer.close()
    assert tokens["short"] < tokens["long"], tokens
    assert tokens["long"] >= tokens["free"], tokens  # the long path reads the free prompt (+ the answers' prefix)


def test_a_webcams_wide_frame_of_a_scene_is_answered_like_the_square_scene(demo_analyzer: Analyzer) -> None:
    """A 4:3 or 16:9 frame with the square scene centred (side bars, as a webcam gives) is shown to a
    square model as its centred square, not squashed: the same answer as the square scene."""
    import numpy as np

    from app.frames.intake import DecodedImage

    scenes = held_out_scenes(count_per_kind=6, seed=77)
    differ = []
    for ratio in (4 / 3, 16 / 9):
        for kind, data, expected in scenes:
            square = decode_image_bytes(data)
            side = square.height
            width = round(side * ratio)
            wide = np.full((side, width, 3), 40, np.uint8)  # a dark room around the manikin
            left = (width - side) // 2
            wide[:, left : left + side] = square.rgb
            square_answer = demo_analyzer.analyze(square, kind).observation
            wide_answer = demo_analyzer.analyze(DecodedImage(wide, "jpeg"), kind).observation
            if wide_answer != square_answer:
                differ.append((round(ratio, 2), kind, expected, square_answer, wide_answer))
    assert differ == []


# Loads the demo model with the threads asked for and prints how many OS threads the load started.
_COUNT_LOAD_THREADS = """
import os, sys
from app.worker.analyzer import Analyzer, AnalyzerSettings
from app.models.catalog import DEFAULT_MODEL_ID, resolve_model
from app.storage.paths import PROFILES
from app.storage.profile_file import load_profile
analyzer = Analyzer(resolve_model(DEFAULT_MODEL_ID), load_profile(PROFILES / "hand_position.json"),
                    AnalyzerSettings(threads=int(sys.argv[1])))
before = len(os.listdir("/proc/self/task"))
analyzer.load()
print(len(os.listdir("/proc/self/task")) - before)
"""


def _threads_started_by_load(threads: int, omp: str | None) -> int:
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}  # the suite caps it (conftest)
    if omp is not None:
        env["OMP_NUM_THREADS"] = omp
    command = [sys.executable, "-c", _COUNT_LOAD_THREADS, str(threads)]
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=HANG_S)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return int(proc.stdout.split()[-1])


def test_the_thread_setting_reaches_the_vision_encoder_too() -> None:
    # The demo model's config.json asks for two threads for its vision encoder: one thread asked for
    # in the settings must start no thread pool at all (it started one when the encoder kept the file's number).
    assert _threads_started_by_load(1, omp=None) == 0
    assert _threads_started_by_load(2, omp=None) > 0  # MNN's pool: a second thread works beside this one
    assert _threads_started_by_load(2, omp="1") == 0  # OMP_NUM_THREADS caps it
