"""What the practice card says for a checklist: one line per signal of the newest keyframe. No Flet.

The gate comes first, then the other signals as the profile lists them (the order of asking). Each
line carries the verdict shown (the examiner's once given, else the model's, pending), whether the
gate left it unasked, and whether the worker is answering it right now, so the view only picks
colours, shapes and words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.core.generation import ParseStatus
from app.core.profile.checklist import Checklist
from app.core.profile.task import UNKNOWN, TaskProfile
from app.core.session import Review, TimelineEntry


@dataclass(frozen=True)
class CardLine:
    signal: str
    words: str  # the signal in the screen's language
    question: str  # the question as asked, in the screen's language where the profile has it
    value: str | None  # the verdict shown; None: not answered yet in this session
    model_value: str | None  # what the model said
    review: Review | None  # None before an answer
    reason: str  # why the model's answer is unknown ("" when it is not)
    gate: bool  # the signal that decides whether the others are asked
    not_checked: bool  # the gate left it unasked
    answering: bool  # the worker is answering it now, for a newer keyframe


def signal_question(spec: TaskProfile, language: str) -> str:
    """The profile's words for people; else its short constrained question; its prompt only as a last
    resort (an instruct prompt is a paragraph of JSON instructions, not a question for a person)."""
    labels = dict(spec.labels).get(language)
    return (labels.question if labels else "") or spec.constrained_prompt or spec.prompt


def signal_name(spec: TaskProfile, language: str, table: Mapping[str, str]) -> str:
    """Short words for a signal: the screen's table has them for the shipped signals; a person's own
    signal is named by its question."""
    return table.get(f"signal_{spec.signal}") or signal_question(spec, language)


def keyframe_entries(timeline: Sequence[TimelineEntry], keyframe_id: str | None) -> dict[str, TimelineEntry]:
    """The answers of one keyframe, by signal."""
    return {e.event.signal: e for e in timeline if keyframe_id is not None and e.event.keyframe_id == keyframe_id}


def checklist_lines(
    checklist: Checklist,
    timeline: Sequence[TimelineEntry],
    keyframe_id: str | None,
    analysing_signal: str,
    language: str,
    table: Mapping[str, str],
) -> tuple[CardLine, ...]:
    """The card's lines for keyframe `keyframe_id` (None: nothing answered yet), gate first."""
    answers = keyframe_entries(timeline, keyframe_id)
    lines = []
    for spec in checklist.ordered():
        entry = answers.get(spec.signal)
        event = entry.event if entry is not None else None
        lines.append(
            CardLine(
                signal=spec.signal,
                words=signal_name(spec, language, table),
                question=signal_question(spec, language),
                value=entry.verdict if entry is not None else None,
                model_value=event.observation if event is not None else None,
                review=entry.review if entry is not None else None,
                reason=event.parse_reason if event is not None and event.observation == UNKNOWN else "",
                gate=spec.signal == checklist.gate,
                not_checked=event is not None and event.parse_status == ParseStatus.NOT_ASKED,
                answering=spec.signal == analysing_signal,
            )
        )
    return tuple(lines)


def reviewed_count(lines: Sequence[CardLine]) -> tuple[int, int]:
    """(reviewed, answered) among the lines."""
    answered = [line for line in lines if line.value is not None]
    return sum(1 for line in answered if line.review is not Review.PENDING), len(answered)
