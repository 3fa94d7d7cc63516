"""User-facing text in one place, so a second language is a table, not a hunt."""

from __future__ import annotations

EN: dict[str, str] = {
    "title": "Keyframe",
    "privacy": "Images never leave this device: analysis runs on-device and nothing is uploaded.",
    "privacy_count": "Outbound connections blocked: {n}",
    "choose_image": "Choose image…",
    "examples": "Example scenes",
    "question": "Question",
    "live_output": "Live model output",
    "result": "Result",
    "model_loading": "Loading model…",
    "model_ready": "Model ready",
    "model_error": "Model unavailable",
    "no_image": "Choose an image or an example scene to analyse it.",
    "analysing": "Analysing…",
    "pending": "Pending examiner confirmation · generative answer, confidence 0, alert tier low",
    "not_medical": "Practice feedback only: not a medical device and not a clinical assessment.",
    "valid": "valid answer",
    "rejected": "answer rejected",
}
