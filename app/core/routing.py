"""Confidence routing: how much weight an answer gets and who must look at it.

A generative answer is never confident: confidence 0, alert tier `low`,
pending examiner confirmation, and never a strong alert — whatever the model
said and however sure its token probabilities looked.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Routing:
    confidence: float
    alert_tier: str  # low | (medium | high reserved for validated, non-generative detectors)
    status: str  # pending_examiner_confirmation
    strong_alert: bool


# Every answer today comes from a generative model, valid or not, so every answer gets this.
GENERATIVE = Routing(confidence=0.0, alert_tier="low", status="pending_examiner_confirmation", strong_alert=False)
