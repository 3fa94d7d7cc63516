"""One image in, one strictly parsed answer out: intake -> engine -> parser.

Shared by the CLI and the UI so both give the same answer for the same input.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from app.core.generation import FinishReason, Generation, Timings
from app.core.parser import ParsedAnswer, ParseReason, parse_answer
from app.core.profile.checklist import Checklist
from app.core.profile.task import UNKNOWN, TaskProfile
from app.core.results import AnalysisResult, ChecklistResult, Decoding
from app.core.vision_size import VisionPolicy, choose_policy, square_crop, vision_size
from app.engine.mnn_vlm import CancelFlag, EngineOptions, MnnVlm, PhaseCallback, TokenCallback
from app.engine.model_folder import open_model_folder
from app.evaluation.score_cut import cut
from app.frames.intake import DecodedImage, resize_exact
from app.models.catalog import ModelRef
from app.storage.locations import engine_cache_dir
from app.storage.paths import PROFILES


@dataclass(frozen=True)
class AnalyzerSettings:
    backend: str = "cpu"
    threads: int = 2
    image_max_side: int | None = None  # None: the backend's default cap, or the model's smaller image_size
    # Constrained decoding: the model can only produce one of the profile's answers.
    constrained: bool = True


class Analyzer:
    """Owns one loaded model; call `analyze` from one thread at a time."""

    def __init__(
        self,
        model: ModelRef,
        profile: TaskProfile,
        settings: AnalyzerSettings | None = None,
        checklist: Checklist | None = None,
    ) -> None:
        """`checklist`: several signals to ask about each keyframe (`analyze_checklist`); `profile` is
        then its first signal, what the worker names when it is ready."""
        self.model = model
        self.profile = profile
        self.checklist = checklist
        self.settings = settings or AnalyzerSettings()
        model.require_verified()  # a pinned model must match its manifest before MNN sees it
        self.folder = open_model_folder(model.folder)
        options = EngineOptions(
            backend=self.settings.backend,
            threads=self.settings.threads,
            cache_dir=engine_cache_dir(model.id.replace(":", "_"), self.settings.backend),
        )
        self.engine = MnnVlm(self.folder, options)

    @property
    def vision_policy(self) -> VisionPolicy:
        """Vision cost grows faster than pixels, so the side is capped per backend
        (or by the user); a model that declares `image_size` gets squares no larger;
        sides snap to the model's own patch grid (28 px Qwen2/2.5-VL, 32 px Qwen3-VL)."""
        cap = self.settings.image_max_side or self.profile.image_max_side  # the user's choice, else the profile's
        return choose_policy(self.settings.backend, self.folder.image_size, cap, self.folder.vision_grid)

    def prepare(self, image: DecodedImage) -> np.ndarray:
        """The keyframe exactly as the model will see it."""
        policy = self.vision_policy
        top, left, h, w = square_crop(image.height, image.width, policy)
        height, width = vision_size(h, w, policy)
        return resize_exact(image.rgb[top : top + h, left : left + w], height, width)

    def load(self) -> float:
        return self.engine.load()

    def analyze(
        self,
        image: DecodedImage,
        source: str,
        on_token: TokenCallback | None = None,
        cancel: CancelFlag | None = None,
        on_phase: PhaseCallback | None = None,
    ) -> AnalysisResult:
        """The profile's one question about `image`."""
        rgb, preprocess_ms = self._prepared(image)
        return self._ask(self.profile, rgb, source, preprocess_ms, on_token, cancel, on_phase)

    def analyze_checklist(
        self,
        image: DecodedImage,
        source: str,
        checklist: Checklist,
        on_token: TokenCallback | None = None,
        cancel: CancelFlag | None = None,
        on_phase: PhaseCallback | None = None,
        on_signal: Callable[[str], None] | None = None,
    ) -> ChecklistResult:
        """Every signal of `checklist` about `image`, the gate first. Constrained: the image is encoded
        and prefilled once for all of them (MnnVlm.see). Free generation, and a checklist of one
        question asked before the image, ask each with the whole prompt. A closed gate leaves the
        others `unknown` (not_visible) at no model cost. `on_signal` hears each signal as it is asked."""
        rgb, preprocess_ms = self._prepared(image)
        order = checklist.ordered()
        seen = None
        if self.settings.constrained and not any(spec.question_first for spec in order):
            questions = [(spec.ask(True)[0], self._answers(spec)) for spec in order]
            seen = self.engine.see(
                rgb, questions, system=checklist.system, on_phase=on_phase, preprocess_ms=preprocess_ms
            )
        answered: dict[str, AnalysisResult] = {}
        gate_open: bool | None = None
        for i, spec in enumerate(order):
            if gate_open is False or (cancel is not None and cancel.is_set()):
                answered[spec.signal] = self._not_asked(spec, source, cancelled=gate_open is not False)
                continue
            if on_signal is not None:
                on_signal(spec.signal)
            if seen is not None:
                choice = seen.choose(i, on_token=on_token, cancel=cancel)
                answered[spec.signal] = self._result(spec, source, choice.generation, choice.score)
            else:
                answered[spec.signal] = self._ask(spec, rgb, source, preprocess_ms, on_token, cancel, on_phase)
            if spec.signal == checklist.gate:
                gate_open = answered[spec.signal].observation == checklist.gate_open
        return ChecklistResult(
            source=source,
            model_id=self.model.id,
            model_revision=self.model.revision,
            profile_id=checklist.id,
            results=tuple(answered[spec.signal] for spec in checklist.signals),
            gate=checklist.gate,
            gate_open=gate_open,
            note=self.folder.image_size_note or "",
        )

    def _prepared(self, image: DecodedImage) -> tuple[np.ndarray, float]:
        self.load()
        start = time.perf_counter()
        rgb = self.prepare(image)
        return rgb, (time.perf_counter() - start) * 1000.0

    @staticmethod
    def _answers(spec: TaskProfile) -> list[str]:
        return [spec.answer_text(v) for v in spec.values]

    def _ask(
        self,
        spec: TaskProfile,
        rgb: np.ndarray,
        source: str,
        preprocess_ms: float,
        on_token: TokenCallback | None,
        cancel: CancelFlag | None,
        on_phase: PhaseCallback | None,
    ) -> AnalysisResult:
        """One question with the whole prompt at once (a one-signal profile's way); the text before
        the image is prefilled once and kept for the keyframes after (MnnVlm)."""
        score = None
        prompt, system = spec.ask(self.settings.constrained)
        if self.settings.constrained:
            choice = self.engine.choose(
                rgb,
                prompt,
                self._answers(spec),
                system=system,
                question_first=spec.question_first,
                on_token=on_token,
                on_phase=on_phase,
                cancel=cancel,
                preprocess_ms=preprocess_ms,
            )
            generation, score = choice.generation, choice.score
        else:
            generation = self.engine.generate(
                rgb,
                prompt,
                system=system,
                question_first=spec.question_first,
                max_new_tokens=spec.max_new_tokens,
                on_token=on_token,
                on_phase=on_phase,
                cancel=cancel,
                preprocess_ms=preprocess_ms,
            )
        return self._result(spec, source, generation, score)

    def _result(self, spec: TaskProfile, source: str, generation: Generation, score: float | None) -> AnalysisResult:
        return AnalysisResult(
            source=source,
            model_id=self.model.id,
            model_revision=self.model.revision,
            profile_id=spec.id,
            signal=spec.signal,
            # Valid by construction when constrained, and still gated by the strict parser; then the
            # profile's score cut, if it has one.
            answer=cut(parse_answer(generation.text, spec, generation.finish), score, spec.min_score),
            finish=generation.finish,
            timings=generation.timings,
            decoding=Decoding.CONSTRAINED if self.settings.constrained else Decoding.FREE,
            model_score=score,
            note=self.folder.image_size_note or "",
        )

    def _not_asked(self, spec: TaskProfile, source: str, cancelled: bool) -> AnalysisResult:
        """A signal the model was not asked: the gate said no, or the keyframe was cancelled first."""
        finish = FinishReason.CANCELLED if cancelled else FinishReason.NOT_ASKED
        reason = ParseReason.TRUNCATED if cancelled else ParseReason.NOT_VISIBLE
        nothing = Generation("", finish, (), Timings(self.engine.load_ms, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0))
        return replace(self._result(spec, source, nothing, None), answer=ParsedAnswer(UNKNOWN, reason, ""))

    def close(self) -> None:
        self.engine.close()


def default_profile_path(model: ModelRef) -> Path:
    profile_id = model.manifest.profiles[0] if model.manifest and model.manifest.profiles else "hand_position_instruct"
    return PROFILES / f"{profile_id}.json"
