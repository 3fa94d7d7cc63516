"""The checklist questions the demo model is trained to answer, read from the shipped profile so the
model and the app ask the same words."""

from __future__ import annotations

import json
from pathlib import Path

from checklist_scenes import SIGNALS

CHECKLIST_PROFILE = Path(__file__).resolve().parents[2] / "model_store" / "profiles" / "cpr_checklist.json"


def checklist_questions() -> dict[str, str]:
    """signal -> question, in SIGNALS order."""
    profile = json.loads(CHECKLIST_PROFILE.read_text(encoding="utf-8"))
    questions = {s["signal"]: s["prompt"] for s in profile["signals"]}
    if tuple(questions) != SIGNALS:
        raise SystemExit(f"{CHECKLIST_PROFILE} asks {tuple(questions)}, the scenes know {SIGNALS}")
    return questions


def answer_json_for(signal: str, observation: str) -> str:
    """The exact JSON line the model answers for ``signal``."""
    return f'{{"signal":"{signal}","observation":"{observation}"}}'
