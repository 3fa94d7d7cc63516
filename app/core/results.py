"""The record of one analysed image, as the CLI prints it and the UI shows it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.generation import FinishReason, Timings
from app.core.parser import ParsedAnswer


@dataclass(frozen=True)
class AnalysisResult:
    source: str
    model_id: str
    model_revision: str
    profile_id: str
    signal: str
    answer: ParsedAnswer
    finish: FinishReason
    timings: Timings
    decoding: str = "free"  # free | constrained
    model_score: float | None = None  # constrained only: a diagnostic, never a confidence
    note: str = ""  # what the user must know about how the image was fed (e.g. no declared image_size)

    @property
    def observation(self) -> str:
        return self.answer.observation

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.source,
            "ok": True,
            "signal": self.signal,
            "observation": self.answer.observation,
            "parse_status": "valid" if self.answer.valid else "rejected",
            "parse_reason": self.answer.reason.value,
            "raw": self.answer.raw,
            "finish": self.finish.value,
            "decoding": self.decoding,
            "model_score": None if self.model_score is None else round(self.model_score, 4),
            "confidence": 0.0,  # generative answers are never confident; an examiner confirms
            "model": {"id": self.model_id, "revision": self.model_revision},
            "profile": self.profile_id,
            "timings_ms": self.timings.to_dict(),
            **({"note": self.note} if self.note else {}),
        }


@dataclass(frozen=True)
class InputError:
    """An input that could not be analysed; the other inputs still are."""

    source: str
    reason: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.source, "ok": False, "error": self.reason, "message": self.message}
