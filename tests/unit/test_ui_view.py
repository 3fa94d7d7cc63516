"""The view renders every state without a browser (Flet controls are plain objects)."""

from __future__ import annotations

from pathlib import Path

from app.core.generation import FinishReason, Timings
from app.core.parser import parse_answer
from app.core.profiles import TaskProfile
from app.core.results import AnalysisResult
from app.ui.controller import ScreenState
from app.ui.view import MainView

PROFILE = TaskProfile(id="p", signal="hand_position_correct", values=("yes", "no", "unknown"), prompt="Q?")


def result(raw: str) -> AnalysisResult:
    return AnalysisResult(
        source="a.jpg",
        model_id="m",
        model_revision="r",
        profile_id="p",
        signal=PROFILE.signal,
        answer=parse_answer(raw, PROFILE),
        finish=FinishReason.STOP,
        timings=Timings(1, 1, 1, 1, 3, 1, 5, 10, 2),
    )


def test_states_render(tmp_path: Path) -> None:
    example = tmp_path / "correct-1.jpg"
    example.write_bytes(b"\xff\xd8fake")
    view = MainView([example], on_pick_file=lambda: None, on_example=lambda p: None)

    view.render(ScreenState())
    assert view.pick_button.disabled and view.observation.value == "—"

    view.render(ScreenState(model_status="ready", model_label="m", question="Q?", network_blocked=2))
    assert not view.pick_button.disabled and "blocked: 2" in view.privacy_count.value

    view.render(ScreenState(model_status="ready", busy=True, image_bytes=b"x", streamed='{"sig'))
    assert view.observation.value == "Analysing…" and view.stream.value == '{"sig' and view.progress.visible

    view.render(ScreenState(model_status="ready", result=result(PROFILE.answer_text("no"))))
    assert view.observation.value == "NO" and "valid answer" in view.parse.value and view.pending.visible

    view.render(ScreenState(model_status="ready", result=result("nonsense")))
    assert view.observation.value == "UNKNOWN" and "invalid_json" in view.parse.value

    view.render(ScreenState(model_status="error", model_detail="boom", error="bad.jpg: damaged"))
    assert "unavailable" in view.model_status.value and view.error.value == "bad.jpg: damaged"
