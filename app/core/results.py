"""The record of one analysed image, as the CLI prints it and the UI shows it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from app.core.generation import FinishReason, ParseStatus, Timings
from app.core.parser import ParsedAnswer, ParseReason


class Decoding(StrEnum):
    FREE = "free"  # the model writes its answer; the parser reads it
    CONSTRAINED = "constrained"  # the model can only produce one of the profile's answers


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
    decoding: Decoding = Decoding.FREE
    model_score: float | None = None  # constrained only: a diagnostic, never a confidence
    note: str = ""  # what the user must know about how the image was fed (e.g. no declared image_size)

    @property
    def observation(self) -> str:
        return self.answer.observation

    @property
    def parse_status(self) -> ParseStatus:
        if self.answer.reason is ParseReason.NOT_VISIBLE:
            return ParseStatus.NOT_ASKED
        return ParseStatus.VALID if self.answer.valid else ParseStatus.REJECTED

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.source,
            "ok": True,
            **self.signal_dict(),
            "model": {"id": self.model_id, "revision": self.model_revision},
            "profile": self.profile_id,
            "timings_ms": self.timings.to_dict(),
            **({"note": self.note} if self.note else {}),
        }

    def signal_dict(self) -> dict[str, Any]:
        """The answer to this result's one question, as a record and a checklist's entry show it."""
        return {
            "signal": self.signal,
            "observation": self.answer.observation,
            "parse_status": self.parse_status,
            "parse_reason": self.answer.reason.value,
            "raw": self.answer.raw,
            "finish": self.finish.value,
            "decoding": self.decoding,
            "model_score": None if self.model_score is None else round(self.model_score, 4),
            **({"withheld": self.answer.withheld} if self.answer.withheld is not None else {}),
            "confidence": 0.0,  # generative answers are never confident; an examiner confirms
        }


@dataclass(frozen=True)
class ChecklistResult:
    """A keyframe's answers to every signal of a checklist, in the checklist's order, from one image encode."""

    source: str
    model_id: str
    model_revision: str
    profile_id: str
    results: tuple[AnalysisResult, ...]
    gate: str | None = None  # the signal asked first
    gate_open: bool | None = None  # its answer let the others be asked (None: no gate)
    note: str = ""

    def result(self, signal: str) -> AnalysisResult:
        return next(r for r in self.results if r.signal == signal)

    @property
    def total_ms(self) -> float:
        return sum(r.timings.total_ms for r in self.results)

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.source,
            "ok": True,
            "profile": self.profile_id,
            "gate": None if self.gate is None else {"signal": self.gate, "open": self.gate_open},
            "signals": [{**r.signal_dict(), "timings_ms": r.timings.to_dict()} for r in self.results],
            "confidence": 0.0,  # generative answers are never confident; an examiner confirms each signal
            "model": {"id": self.model_id, "revision": self.model_revision},
            "total_ms": round(self.total_ms, 1),
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
