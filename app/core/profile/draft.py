"""A profile as a person edits it in the app: plain text fields, checked into a Checklist. No I/O.

The editor's fields are what a tester types: per question, the signal's name, the question the model
reads (English screens show it too), the answers as a comma-separated list, and the Chinese question
and answer words (empty: the screens show the English words). `checklist_from_draft` turns them into
the file format and reads that back with the same reader as `--profile`, so whatever the editor
accepts, the command line accepts.

Before that, `draft_problems` checks each field the way a person fills it in and names every problem
at once, by field and reason (the screens word the reasons beside their fields, in their language):
a name that is not lower_snake_case, a question with one answer or an answer twice, Chinese words
half given, a score cut that is not a probability, text that is not text. What it lets through and
the reader still refuses (a gate on a question that was removed) is the reader's sentence.

Editing keeps what the form does not show (the system turn, the shared image side, the models it was
written for, a signal's token budget): from the profile it started from, by signal name.
A constrained prompt (a short form of the question) is kept only while the question is unchanged, or
the model would go on reading the old question.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from app.core.profile.checklist import Checklist, checklist_from_dict
from app.core.profile.dicts import checklist_dict
from app.core.profile.task import PROFILE_SCHEMA, UNKNOWN, ProfileError, ProfileLabels, is_name

MAX_QUESTION_CHARS = 2000  # every character is prefilled on every keyframe; a free-form prompt with its format is ~400
_SPLIT = re.compile(r"[,，、\s]+")


@dataclass(frozen=True)
class SignalDraft:
    signal: str = ""
    question: str = ""  # what the model reads (the prompt), shown on English screens
    answers: str = "yes, no, unknown"  # the allowed values, comma-separated
    question_zh: str = ""
    answers_zh: str = ""  # words for the answers, in the same order (empty: English words)
    min_score: str = ""  # the score cut, as typed ("0.8", "0,8" or "80 %"; empty: none)


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
                "" if spec.min_score is None else f"{spec.min_score:g}",
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


@dataclass(frozen=True)
class FieldProblem:
    """What is wrong with one field: `field` is "id", "title", "title_zh" or "<part>-<n>" for question n's
    part (signal, question, answers, question_zh, answers_zh, min_score); `reason` a code the screens
    word (`editor_problem_<reason>`) with `values`."""

    field: str
    reason: str
    values: tuple[tuple[str, str | int], ...] = ()


class DraftRefused(ProfileError):
    """The fields `problems` name are wrong; the message lists them for a log."""

    def __init__(self, source: str, problems: tuple[FieldProblem, ...]) -> None:
        self.problems = problems
        super().__init__(f"{source}: " + "; ".join(f"{p.field}: {p.reason.replace('_', ' ')}" for p in problems))


def draft_problems(draft: ProfileDraft) -> tuple[FieldProblem, ...]:
    """Every field of `draft` a person must mend, the first problem of each, in the form's order."""
    problems: list[FieldProblem] = []

    def check(name: str, reason: str | None, **values: str | int) -> None:
        if reason:
            problems.append(FieldProblem(name, reason, tuple(values.items())))

    pid = draft.id.strip()
    check("id", "id_empty" if not pid else None if is_name(pid) else "name_form")
    check("title", _text_problem(draft.title, required=True, empty="title_empty"))
    check("title_zh", _text_problem(draft.title_zh))
    names: set[str] = set()
    for n, signal in enumerate(draft.signals, start=1):
        name = signal.signal.strip()
        check(f"signal-{n}", _name_problem(name, names))
        names.add(name)
        check(f"question-{n}", _text_problem(signal.question, required=True, empty="question_empty"))
        values = values_of(signal.answers)
        needs_unknown = bool(draft.gate) and name != draft.gate
        reason, bad = _answers_problem(values, needs_unknown)
        check(f"answers-{n}", reason, **({"names": ", ".join(bad)} if bad else {}))
        words = values_of(signal.answers_zh)
        given_zh = signal.question_zh.strip()
        check(
            f"question_zh-{n}",
            _text_problem(signal.question_zh) or (None if given_zh or not words else "question_zh_missing"),
        )
        if words and len(words) != len(values) and reason is None:  # else counted against answers to be mended
            check(f"answers_zh-{n}", "answers_zh_count", answers=len(values), words=len(words))
        check(f"min_score-{n}", None if _score_cut(signal.min_score) is not False else "min_score_form")
    return tuple(problems)


def _name_problem(name: str, taken: set[str]) -> str | None:
    if not name:
        return "signal_empty"
    if not is_name(name):
        return "name_form"
    return "signal_twice" if name in taken else None


def _answers_problem(values: list[str], needs_unknown: bool) -> tuple[str | None, list[str]]:
    """The answers field's first problem, and the answers it is about."""
    bad = [v for v in values if not is_name(v)]
    if bad:
        return "answers_form", bad
    twice = sorted({v for v in values if values.count(v) > 1})
    if twice:
        return "answers_twice", twice
    if len(values) < 2:
        return "answers_few", []  # with one, every keyframe gets it and no answer could be corrected
    if needs_unknown and UNKNOWN not in values:
        return "answers_need_unknown", []  # a shut gate leaves this question unasked: `unknown`
    return None, []


def _text_problem(value: str, required: bool = False, empty: str = "") -> str | None:
    """Why `value` cannot be given to a model: empty (if required), too long, or not text."""
    text = value.strip()
    if required and not text:
        return empty
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "text_broken"  # a lone surrogate, e.g. half an emoji pasted
    if any(unicodedata.category(c) in ("Cc", "Cf") for c in text):
        return "text_control"
    return "text_too_long" if len(text) > MAX_QUESTION_CHARS else None


def _score_cut(typed: str) -> float | None | bool:
    """The score cut typed: None for none, False when it is not a number above 0 and at most 1.
    A comma decimal ("0,8") and a percentage ("80 %") are read as people write them."""
    text = typed.strip().replace(",", ".")
    if not text:
        return None
    percent = text.endswith("%")
    try:
        value = float(text.rstrip("%").strip()) / (100 if percent else 1)
    except ValueError:
        return False
    return value if math.isfinite(value) and 0 < value <= 1 else False


def checklist_from_draft(draft: ProfileDraft, base: Checklist | None = None) -> Checklist:
    """The checklist `draft` describes: DraftRefused naming every field to mend, or ProfileError with the
    reader's sentence for what only the whole can show. `base`: the profile the edit began from (what the
    form does not show is kept from it)."""
    source = f"profile {draft.id.strip() or '(no id)'}"
    problems = draft_problems(draft)
    if problems:
        raise DraftRefused(source, problems)
    entries = [_signal(s, base) for s in draft.signals]
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


def _signal(draft: SignalDraft, base: Checklist | None) -> dict[str, Any]:
    """Question `draft` as the file writes it (its fields already checked by `draft_problems`)."""
    question, values = draft.question.strip(), values_of(draft.answers)
    entry: dict[str, Any] = {"signal": draft.signal.strip(), "values": values, "prompt": question}
    cut = _score_cut(draft.min_score)
    if isinstance(cut, float):
        entry["min_score"] = cut
    before = _base_signal(base, entry["signal"])
    if before is not None:
        entry["max_new_tokens"] = before.max_new_tokens
        if before.constrained_prompt is not None and before.prompt == question:
            entry["constrained"] = {"prompt": before.constrained_prompt}
        if before.prompt == question:
            # Words for people in languages the form does not show (English): kept while the question they
            # word is unchanged, dropped with it, as its short constrained form is.
            kept = {code: _labels_dict(words) for code, words in before.labels if code != "zh"}
            if kept:
                entry["labels"] = kept
    question_zh, words = draft.question_zh.strip(), values_of(draft.answers_zh)
    if question_zh:
        zh: dict[str, Any] = {"question": question_zh}
        if words:
            zh["values"] = dict(zip(values, words, strict=True))
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
