"""Checklists: several questions about one keyframe, asked on one encode of its image.

A checklist file lists its signals; each is asked like a one-signal profile::

    {"schema": 1, "id": "cpr_checklist", "title": "CPR checklist", "system": null, "max_new_tokens": 32,
     "labels": {"zh": {"title": "心肺复苏检查"}},
     "gate": {"signal": "hands_visible", "open": "yes"},
     "signals": [
       {"signal": "hands_visible", "values": ["yes", "no", "unknown"], "prompt": "Are the hands visible?",
        "labels": {"zh": {"question": "手可见吗？", "values": {"yes": "是", "no": "否", "unknown": "未知"}}}},
       {"signal": "hands_stacked", "values": ["yes", "no", "unknown"], "prompt": "Are the hands stacked?",
        "constrained": {"prompt": "Stacked?"}, "max_new_tokens": 24}]}

The system turn comes before the image, which is encoded once for all signals, so it is the
checklist's (top level) and no signal has its own, for free or constrained decoding alike. For the
same reason the questions come after the image: `question_place` may be given at the top level, but
`"before_image"` only for a checklist of one signal. The gate is asked first; an answer other than
its `open` value leaves the others unasked (`unknown`), so each of them must allow "unknown". A
file without `signals` is a one-signal profile, read unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.profile.task import (
    NAME,
    UNKNOWN,
    ProfileError,
    ProfileLabels,
    QuestionPlace,
    TaskProfile,
    profile_from_dict,
    question_place_from,
    refusal,
)
from app.core.record import Rule, read_field, unknown_keys

# Every signal costs its question's prefill and decoding on each keyframe: a checklist stays short.
MAX_SIGNALS = 8
_KEYS = {
    "schema", "id", "title", "system", "max_new_tokens", "question_place", "image_max_side", "labels", "gate",
    "signals", "models",
}  # fmt: skip
_SIGNALS = Rule("a non-empty list of signals", lambda v: isinstance(v, list) and bool(v))
_SIGNAL_KEYS = {"signal", "values", "prompt", "constrained", "max_new_tokens", "labels", "min_score"}
# Handed to every signal; the image is encoded once for all of them, so its side is the checklist's.
_SHARED = ("schema", "id", "title", "system", "max_new_tokens", "question_place", "image_max_side", "models")


@dataclass(frozen=True)
class Checklist:
    id: str
    title: str
    system: str | None  # every signal's, for both kinds of decoding (one-signal profiles: its free one)
    signals: tuple[TaskProfile, ...]  # in file order; each carries the checklist's id, title and system
    gate: str | None = None  # the signal asked first; not `gate_open` -> the others are not asked
    gate_open: str = "yes"
    labels: tuple[tuple[str, ProfileLabels], ...] = ()  # (language code, labels with the title only)

    @property
    def is_single(self) -> bool:
        return len(self.signals) == 1

    def signal(self, name: str) -> TaskProfile:
        """The signal called `name`; KeyError if the checklist has none."""
        for spec in self.signals:
            if spec.signal == name:
                return spec
        raise KeyError(name)

    @property
    def models(self) -> tuple[str, ...]:
        """The model ids the checklist was written for (shared by its signals); () = no claim."""
        return self.signals[0].models

    def written_for(self, model_id: str) -> bool:
        return self.signals[0].written_for(model_id)

    def ordered(self) -> tuple[TaskProfile, ...]:
        """The order of asking: the gate first, then the others as the file lists them."""
        return tuple(sorted(self.signals, key=lambda spec: spec.signal != self.gate))  # sorted() is stable

    def labels_for(self, language: str) -> ProfileLabels:
        return dict(self.labels).get(language, ProfileLabels())


def checklist_from_dict(data: Any, source: str = "profile") -> Checklist:
    """The checklist in `data`; a dict without `signals` is a one-signal profile. ProfileError naming `source`."""
    if not isinstance(data, dict) or "signals" not in data:
        return _checklist((profile_from_dict(data, source),), None, "yes")
    unknown = unknown_keys(data, _KEYS)
    if unknown:
        raise ProfileError(f"{source}: unknown keys {unknown}")
    refuse = refusal(source)
    read_field(data, "id", NAME, refuse)
    entries = read_field(data, "signals", _SIGNALS, refuse)
    if len(entries) > MAX_SIGNALS:
        raise ProfileError(f"{source}: {len(entries)} signals, more than the {MAX_SIGNALS} a checklist may ask")
    place = question_place_from(data.get("question_place", QuestionPlace.AFTER_IMAGE.value), source)
    if place is QuestionPlace.BEFORE_IMAGE and len(entries) > 1:
        raise ProfileError(
            f"{source}: 'question_place' \"before_image\" needs a checklist of one signal: with {len(entries)} the "
            "image is encoded once and every question is asked after it"
        )
    _check_titles(data.get("labels", {}), source)
    shared = {key: data[key] for key in _SHARED if key in data}
    signals = tuple(_signal(entry, i, shared, data.get("labels", {}), source) for i, entry in enumerate(entries))
    names = [spec.signal for spec in signals]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ProfileError(f"{source}: signals named more than once: {twice}")
    gate, gate_open = _gate(data.get("gate"), signals, source)
    return _checklist(signals, gate, gate_open)


def _checklist(signals: tuple[TaskProfile, ...], gate: str | None, gate_open: str) -> Checklist:
    first = signals[0]
    titles = tuple((code, ProfileLabels(title=words.title)) for code, words in first.labels if words.title)
    return Checklist(first.id, first.title, first.system, signals, gate, gate_open, titles)


def _signal(entry: Any, index: int, shared: dict[str, Any], titles: Any, source: str) -> TaskProfile:
    """One signal, checked by the one-signal rules: the entry with the checklist's shared keys."""
    name = entry.get("signal") if isinstance(entry, dict) else None
    where = f"{source}: signal {name!r}" if isinstance(name, str) else f"{source}: signals[{index}]"
    if not isinstance(entry, dict):
        raise ProfileError(f"{where} must be an object")
    unknown = unknown_keys(entry, _SIGNAL_KEYS)
    if unknown:
        raise ProfileError(
            f"{where}: unknown keys {unknown} (a checklist's system, id, title and question_place are shared)"
        )
    spec = {**shared, **entry, "labels": _merged_labels(titles, entry.get("labels", {}), where)}
    constrained = entry.get("constrained")
    if isinstance(constrained, dict):
        if "system" in constrained:
            raise ProfileError(f"{where}: 'constrained.system' is the checklist's 'system', not a signal's")
        spec["constrained"] = {**constrained, "system": shared.get("system")}
    return profile_from_dict(spec, where)


def _check_titles(labels: Any, source: str) -> None:
    if not isinstance(labels, dict):
        return  # every signal's parse names it
    for code, entry in labels.items():
        if isinstance(entry, dict) and set(entry) - {"title"}:
            raise ProfileError(
                f"{source}: labels[{code!r}] of a checklist holds its 'title' only (questions are per signal)"
            )


def _merged_labels(titles: Any, own: Any, where: str) -> Any:
    """The checklist's titles with this signal's questions and answer words, per language."""
    if not isinstance(titles, dict) or not isinstance(own, dict):
        return own if not isinstance(own, dict) else titles  # malformed: the one-signal rules name it
    merged: dict[Any, Any] = {}
    for code in {**titles, **own}:
        title, words = titles.get(code, {}), own.get(code, {})
        if isinstance(words, dict) and "title" in words:
            raise ProfileError(
                f"{where}: labels[{code!r}] holds 'question' and 'values' (the title is the checklist's)"
            )
        whole = isinstance(title, dict) and isinstance(words, dict)
        merged[code] = {**title, **words} if whole else words if not isinstance(words, dict) else title
    return merged


def _gate(gate: Any, signals: tuple[TaskProfile, ...], source: str) -> tuple[str | None, str]:
    if gate is None:
        return None, "yes"
    if not isinstance(gate, dict) or set(gate) - {"signal", "open"} or "signal" not in gate:
        raise ProfileError(f"{source}: 'gate' must be an object with 'signal' and optionally 'open'")
    name, open_value = gate["signal"], gate.get("open", "yes")
    spec = next((s for s in signals if s.signal == name), None)
    if spec is None:
        raise ProfileError(f"{source}: the gate names {name!r}, which is not one of the signals")
    if open_value not in spec.values:
        raise ProfileError(f"{source}: the gate opens on {open_value!r}, which {name!r} cannot answer")
    mute = [s.signal for s in signals if s is not spec and UNKNOWN not in s.values]
    if mute:
        raise ProfileError(f"{source}: {mute} cannot answer 'unknown', which they are when the gate stays shut")
    return name, open_value
