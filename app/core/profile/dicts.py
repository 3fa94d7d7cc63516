"""A checklist (or one-signal profile) written back as the JSON its file holds.

The inverse of `checklist_from_dict`: `checklist_from_dict(checklist_dict(c)) == c` for every checklist
the reader accepts, so a profile edited or given a score cut in the app is saved in the same format a
person writes and `--profile` reads. A checklist of one signal read from a one-signal profile file is
written as one; either form reads back to the same checklist.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.core.profile.checklist import Checklist
from app.core.profile.task import PROFILE_SCHEMA, ProfileLabels, QuestionPlace, TaskProfile


def checklist_dict(checklist: Checklist) -> dict[str, Any]:
    """The file's JSON object for `checklist`: a one-signal profile's when it has one signal and no gate."""
    first = checklist.signals[0]
    if checklist.is_single and checklist.gate is None:
        return _single(first)
    data: dict[str, Any] = {"schema": PROFILE_SCHEMA, "id": checklist.id, "title": checklist.title}
    data["system"] = checklist.system
    data.update(_shared_options(first))
    titles = {code: {"title": words.title} for code, words in checklist.labels if words.title}
    if titles:
        data["labels"] = titles
    if checklist.gate is not None:
        data["gate"] = {"signal": checklist.gate, "open": checklist.gate_open}
    data["signals"] = [_signal(spec) for spec in checklist.signals]
    return data


def with_min_score(checklist: Checklist, signal: str, min_score: float | None) -> Checklist:
    """`checklist` with `signal`'s score cut set (None: removed); KeyError for a signal it does not have."""
    checklist.signal(signal)
    specs = tuple(replace(s, min_score=min_score) if s.signal == signal else s for s in checklist.signals)
    return replace(checklist, signals=specs)


def renamed(checklist: Checklist, new_id: str) -> Checklist:
    """`checklist` under another id (a shipped template saved as the person's own); the id is checked on save."""
    return replace(checklist, id=new_id, signals=tuple(replace(s, id=new_id) for s in checklist.signals))


def _single(spec: TaskProfile) -> dict[str, Any]:
    data: dict[str, Any] = {"schema": PROFILE_SCHEMA, "id": spec.id, "title": spec.title}
    data.update({"signal": spec.signal, "values": list(spec.values), "prompt": spec.prompt, "system": spec.system})
    if spec.constrained_prompt is not None:
        data["constrained"] = {"prompt": spec.constrained_prompt, "system": spec.constrained_system}
    data["max_new_tokens"] = spec.max_new_tokens
    data.update(_shared_options(spec))
    if spec.min_score is not None:
        data["min_score"] = spec.min_score
    labels = {code: _words(words, with_title=True) for code, words in spec.labels}
    if labels:
        data["labels"] = labels
    return data


def _shared_options(spec: TaskProfile) -> dict[str, Any]:
    """The options a checklist shares with all its signals, written only when they differ from the default."""
    data: dict[str, Any] = {}
    if spec.question_place is not QuestionPlace.AFTER_IMAGE:
        data["question_place"] = spec.question_place.value
    if spec.image_max_side is not None:
        data["image_max_side"] = spec.image_max_side
    if spec.models:
        data["models"] = list(spec.models)
    return data


def _signal(spec: TaskProfile) -> dict[str, Any]:
    data: dict[str, Any] = {"signal": spec.signal, "values": list(spec.values), "prompt": spec.prompt}
    if spec.constrained_prompt is not None:
        data["constrained"] = {"prompt": spec.constrained_prompt}  # its system is the checklist's
    data["max_new_tokens"] = spec.max_new_tokens
    if spec.min_score is not None:
        data["min_score"] = spec.min_score
    labels = {code: _words(words, with_title=False) for code, words in spec.labels}
    labels = {code: words for code, words in labels.items() if words}
    if labels:
        data["labels"] = labels
    return data


def _words(words: ProfileLabels, with_title: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if with_title and words.title:
        out["title"] = words.title
    if words.question:
        out["question"] = words.question
    if words.values:
        out["values"] = dict(words.values)
    return out
