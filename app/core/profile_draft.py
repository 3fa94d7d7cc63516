"""A profile as a person edits it in the app: plain text fields, checked into a Checklist. No I/O.

The editor's fields are what a tester types: per question, the signal's name, the question the model
reads (English screens show it too), the answers as a comma-separated list, and the Chinese question
and answer words (empty: the screens show the English words). `checklist_from_draft` turns them into
the file format and reads that back with the same reader as `--profile`, so whatever the editor
accepts, the command line accepts, and every sentence that refuses it is the reader's or one of the
few checks here that only a form needs (an empty title, Chinese words half given, text that is not
text).

Editing keeps what the form does not show (the system turn, the shared image side, the models it was
written for, a signal's token budget and score cut): from the profile it started from, by signal name.
A constrained prompt (a short form of the question) is kept only while the question is unchanged, or
the model would go on reading the old question.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from app.core.checklist import Checklist, checklist_from_dict
from app.core.profile_dict import checklist_dict
from app.core.profiles import PROFILE_SCHEMA, ProfileError, ProfileLabels

MAX_QUESTION_CHARS = 2000  # every character is prefilled on every keyframe; a free-form prompt with its format is ~400
_SPLIT = re.compile(r"[,，、\s]+")


@dataclass(frozen=True)
class SignalDraft:
    signal: str = ""
    question: str = ""  # what the model reads (the prompt), shown on English screens
    answers: str = "yes, no, unknown"  # the allowed values, comma-separated
    question_zh: str = ""
    answers_zh: str = ""  # words for the answers, in the same order (empty: English words)


@dataclass(frozen=True)
class ProfileDraft:
    id: str = ""
    title: str = ""
    title_zh: str = ""
    gate: str = ""  # the signal asked first ("" for none)
    gate_open: str = "yes"  # its answer that lets the others be asked
    signals: tuple[SignalDraft, ...] = field(default_factory=lambda: (SignalDraft(),))


def draft_from_checklist(checklist: Checklist, new_id: str | None = None) -> ProfileDraft:
    """The fields for editing `checklist` (under `new_id`: a copy of a shipped template)."""
    signals = []
    for spec in checklist.signals:
        zh = spec.labels_for("zh")
        words = dict(zh.values)
        signals.append(
            SignalDraft(
                spec.signal,
                spec.prompt,
                ", ".join(spec.values),
                zh.question,
                ", ".join(words[v] for v in spec.values) if all(v in words for v in spec.values) else "",
            )
        )
    return ProfileDraft(
        new_id or checklist.id,
        checklist.title,
        checklist.labels_for("zh").title,
        checklist.gate or "",
        checklist.gate_open,
        tuple(signals),
    )


def values_of(answers: str) -> list[str]:
    """The answers field as the values it lists."""
    return [v for v in _SPLIT.split(answers.strip()) if v]


def checklist_from_draft(draft: ProfileDraft, base: Checklist | None = None) -> Checklist:
    """The checklist `draft` describes; ProfileError with a sentence naming the field when it cannot be one.
    `base`: the profile the edit began from (what the form does not show is kept from it)."""
    source = f"profile {draft.id.strip() or '(no id)'}"
    _text(draft.title, "the title", source, required=True)
    _text(draft.title_zh, "the Chinese title", source)
    entries = [_signal(s, i, base, source) for i, s in enumerate(draft.signals)]
    data: dict[str, Any] = {"schema": PROFILE_SCHEMA, "id": draft.id.strip(), "title": draft.title.strip()}
    if base is not None:
        kept = checklist_dict(base)
        data.update({k: kept[k] for k in ("system", "question_place", "image_max_side", "models") if k in kept})
    if draft.title_zh.strip():
        data["labels"] = {"zh": {"title": draft.title_zh.strip()}}
    if draft.gate:
        data["gate"] = {"signal": draft.gate, "open": draft.gate_open}
    if len(entries) == 1 and not draft.gate:
        return checklist_from_dict(_single(data, entries[0], base), source)
    data["signals"] = entries
    return checklist_from_dict(data, source)


def _single(shared: dict[str, Any], entry: dict[str, Any], base: Checklist | None) -> dict[str, Any]:
    """One question, written as a one-signal profile: its constrained prompt may have a system of its own."""
    ours, theirs = shared.get("labels", {}), entry.get("labels", {})
    labels = {code: {**ours.get(code, {}), **theirs.get(code, {})} for code in (*ours, *theirs)}
    single = {k: v for k, v in shared.items() if k != "labels"} | {k: v for k, v in entry.items() if k != "labels"}
    if labels:
        single["labels"] = labels
    before = _base_signal(base, entry["signal"])
    if "constrained" in entry and before is not None:
        single["constrained"] = {**entry["constrained"], "system": before.constrained_system}
    return single


def _signal(draft: SignalDraft, index: int, base: Checklist | None, source: str) -> dict[str, Any]:
    where = f"question {index + 1}" + (f" ({draft.signal.strip()})" if draft.signal.strip() else "")
    question = _text(draft.question, f"{where}: the question", source, required=True)
    values = values_of(draft.answers)
    entry: dict[str, Any] = {"signal": draft.signal.strip(), "values": values, "prompt": question}
    before = _base_signal(base, entry["signal"])
    if before is not None:
        entry["max_new_tokens"] = before.max_new_tokens
        if before.min_score is not None:
            entry["min_score"] = before.min_score
        if before.constrained_prompt is not None and before.prompt == question:
            entry["constrained"] = {"prompt": before.constrained_prompt}
        if before.prompt == question:
            # Words for people in languages the form does not show (English): kept while the question they
            # word is unchanged, dropped with it, as its short constrained form is.
            kept = {code: _labels_dict(words) for code, words in before.labels if code != "zh"}
            if kept:
                entry["labels"] = kept
    question_zh = _text(draft.question_zh, f"{where}: the Chinese question", source)
    words = values_of(draft.answers_zh)
    if question_zh or words:
        if not question_zh:
            raise ProfileError(f"{source}: {where}: the Chinese answer words are given but not the Chinese question")
        if len(words) != len(values):
            raise ProfileError(
                f"{source}: {where}: {len(values)} answers ({', '.join(values)}) but {len(words)} Chinese words "
                "for them; give one word per answer, in the same order, or none"
            )
        zh = {"question": question_zh, "values": dict(zip(values, words, strict=True))}
        entry["labels"] = {**entry.get("labels", {}), "zh": zh}
    return entry


def _labels_dict(words: ProfileLabels) -> dict[str, Any]:
    """A language's labels as the profile file writes them (empty parts left out)."""
    given = {"title": words.title, "question": words.question, "values": dict(words.values)}
    return {key: value for key, value in given.items() if value}


def _base_signal(base: Checklist | None, name: str) -> Any:
    if base is None:
        return None
    try:
        return base.signal(name)
    except KeyError:
        return None


def _text(value: str, what: str, source: str, required: bool = False) -> str:
    """`value` stripped; refused when empty (if required), too long, or not text a model can be given."""
    text = value.strip()
    if required and not text:
        raise ProfileError(f"{source}: {what} is empty")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ProfileError(f"{source}: {what} holds characters that cannot be encoded (a broken surrogate)") from None
    controls = sorted({f"U+{ord(c):04X}" for c in text if unicodedata.category(c) in ("Cc", "Cf")})
    if controls:
        raise ProfileError(f"{source}: {what} holds invisible control characters ({', '.join(controls)})")
    if len(text) > MAX_QUESTION_CHARS:
        raise ProfileError(
            f"{source}: {what} is {len(text)} characters long; at most {MAX_QUESTION_CHARS}, as every one is read "
            "by the model on every keyframe"
        )
    return text
