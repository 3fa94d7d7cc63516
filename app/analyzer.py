"""One image in, one strictly parsed answer out: intake -> engine -> parser.

Shared by the CLI and the UI so both give the same answer for the same input.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.core.parser import parse_answer
from app.core.profiles import TaskProfile
from app.core.results import AnalysisResult
from app.core.vision_size import VisionPolicy, choose_policy, square_crop, vision_size
from app.engine.mnn_vlm import CancelFlag, EngineOptions, MnnVlm, PhaseCallback, TokenCallback
from app.engine.model_folder import open_model_folder
from app.frames.intake import DecodedImage, resize_exact
from app.locations import engine_cache_dir
from app.models.catalog import ModelRef
from app.paths import PROFILES


@dataclass(frozen=True)
class AnalyzerSettings:
    backend: str = "cpu"
    threads: int = 2
    image_max_side: int | None = None  # None: the backend's default cap, or the model's smaller image_size
    # Constrained decoding: the model can only produce one of the profile's answers.
    constrained: bool = True


class Analyzer:
    """Owns one loaded model; call `analyze` from one thread at a time."""

    def __init__(self, model: ModelRef, profile: TaskProfile, settings: AnalyzerSettings | None = None) -> None:
        self.model = model
        self.profile = profile
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
        return choose_policy(
            self.settings.backend, self.folder.image_size, self.settings.image_max_side, self.folder.vision_grid
        )

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
        self.load()
        start = time.perf_counter()
        rgb = self.prepare(image)
        preprocess_ms = (time.perf_counter() - start) * 1000.0
        score = None
        prompt, system = self.profile.ask(self.settings.constrained)
        if self.settings.constrained:
            answers = [self.profile.answer_text(v) for v in self.profile.values]
            choice = self.engine.choose(
                rgb,
                prompt,
                answers,
                system=system,
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
                max_new_tokens=self.profile.max_new_tokens,
                on_token=on_token,
                on_phase=on_phase,
                cancel=cancel,
                preprocess_ms=preprocess_ms,
            )
        return AnalysisResult(
            source=source,
            model_id=self.model.id,
            model_revision=self.model.revision,
            profile_id=self.profile.id,
            signal=self.profile.signal,
            # Valid by construction when constrained, and still gated by the strict parser.
            answer=parse_answer(generation.text, self.profile, generation.finish),
            finish=generation.finish,
            timings=generation.timings,
            decoding="constrained" if self.settings.constrained else "free",
            model_score=score,
            note=self.folder.image_size_note or "",
        )

    def close(self) -> None:
        self.engine.close()


def default_profile_path(model: ModelRef) -> Path:
    profile_id = model.manifest.profiles[0] if model.manifest and model.manifest.profiles else "hand_position_instruct"
    return PROFILES / f"{profile_id}.json"
