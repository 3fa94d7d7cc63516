"""Task profiles: the one question a model is asked and the answers it may give.

A profile is a small JSON file::

    {"schema": 1, "id": "hand_position", "signal": "hand_position_correct",
     "values": ["yes", "no", "unknown"], "prompt": "Is the hand position correct?",
     "system": null, "max_new_tokens": 32,
     "labels": {"zh": {"title": "…", "question": "手的位置正确吗？", "values": {"yes": "是"}}}}

The strict parser checks every answer against it. `labels` are for people, per UI language:
the title, the question as shown (the prompt is what the model reads) and words for values.

`constrained` (optional) is what the model reads when decoding is constrained: `{"prompt": "…",
"system": null}`. A long format instruction ("answer with only this JSON…") is needed for free
generation only; under constrained decoding the answer's form is forced, and every prompt token
costs prefill time (on a 2B model about 12 ms each on 2 cores), so the question alone is asked.

`question_place` (optional) is where the question goes in the user's turn: `"after_image"` (the
default, what the bundled demo model was trained on) or `"before_image"`. Text before the image is
the same on every keyframe, so the engine keeps it in the model's cache and prefills only the image
and what follows it: before the image, the question costs nothing after the first keyframe.

`image_max_side` (optional) is the longest side this profile's images are fed at: fewer visual tokens
cost less (on the real-size stand-in, bare MNN: 2.38 s at 224², 2.00 s at 192², 1.71 s at 160²), but
whether a model's answers hold there is the profile's to show, so no shipped profile sets it.

`min_score` (optional, above 0 and at most 1) is a score cut a tester chose on labelled images
(app.evaluation.score_cut): under constrained decoding an answer whose model score is below it is shown
as `unknown` (reason `low_score`), the model's pick kept beside it. It is a diagnostic cut, never a
confidence; free generation gives no score, so it is not cut.

`models` (optional) lists the ids of the models the profile was written and checked for (a manifest's
`id`, e.g. `"keyframe-demo-cpr"`). Wording that one model answers well can make another answer the
same on every picture (the demo model says YES to every question of the instruction-following
checklist), so the app warns when the loaded model is not one of them. Empty: no claim, no warning.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import Enum
from typing import Any

from app.core.record import (
    TEXT,
    Refuse,
    Rule,
    is_number,
    list_of,
    matching,
    optional,
    read_field,
    text,
    unknown_keys,
    whole,
)
from app.core.vision_size import MAX_USER_SIDE, MIN_USER_SIDE

PROFILE_SCHEMA = 1
# The answer every signal allows and every failure becomes (the strict parser's "never a guess").
UNKNOWN = "unknown"
# Signal and value names end up as JSON strings and in CSV exports: keep them plain.
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
NAME = matching(_NAME, "a lower_snake_case name")
_VALUES = list_of(NAME, "a non-empty list of lower_snake_case names", nonempty=True)
_MAX_NEW_TOKENS = whole(1, 4096)
# Whole pixels within what --image-max-side takes; null (as absent): the model's own size.
_IMAGE_SIDE = optional(whole(MIN_USER_SIDE, MAX_USER_SIDE, "pixels"), said=False)
# The score is a probability: a cut at 0 withholds nothing, one above 1 everything; null (as absent): no cut.
_MIN_SCORE = optional(Rule("a number above 0 and at most 1", lambda v: is_number(v) and 0 < v <= 1), said=False)
_DEFAULT_MAX_NEW_TOKENS = 48


def is_name(text: str) -> bool:
    """Whether `text` is a name a profile can use for its id, a signal or an answer (lower_snake_case)."""
    return bool(_NAME.match(text))


class ProfileError(ValueError):
    """A profile file that cannot be used, with a message a user can act on."""


_LANGUAGE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$")
# A model id as manifests and model folders spell it.
_MODEL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_MODELS = list_of(matching(_MODEL_ID, "a model id"), 'a list of model ids such as "keyframe-demo-cpr"')


class QuestionPlace(Enum):
    """Where the question goes in the user's turn, relative to the keyframe's image."""

    AFTER_IMAGE = "after_image"
    BEFORE_IMAGE = "before_image"


def question_place_from(value: Any, source: str) -> QuestionPlace:
    """The `question_place` setting of a profile or checklist; ProfileError naming `source`."""
    for place in QuestionPlace:
        if value == place.value:
            return place
    choices = " or ".join(repr(p.value) for p in QuestionPlace)
    raise ProfileError(f"{source}: 'question_place' must be {choices}, got {value!r}")


@dataclass(frozen=True)
class ProfileLabels:
    """What people read in one language; empty = not translated (the UI falls back)."""

    title: str = ""
    question: str = ""
    values: tuple[tuple[str, str], ...] = ()  # (value, words), in the profile's value order

    def value_words(self, value: str) -> str | None:
        return dict(self.values).get(value)


@dataclass(frozen=True)
class TaskProfile:
    id: str
    signal: str
    values: tuple[str, ...]
    prompt: str
    system: str | None = None
    max_new_tokens: int = _DEFAULT_MAX_NEW_TOKENS
    title: str = ""
    labels: tuple[tuple[str, ProfileLabels], ...] = ()  # (language code, labels)
    constrained_prompt: str | None = None  # None: the same prompt and system as free generation
    constrained_system: str | None = None
    question_place: QuestionPlace = QuestionPlace.AFTER_IMAGE
    # The longest image side this profile's questions were found to hold at (fewer visual tokens, less
    # time); None: the backend's default. An explicit --image-max-side or Settings value wins.
    image_max_side: int | None = None
    min_score: float | None = None  # constrained answers scoring below it are withheld (app.evaluation.score_cut)
    models: tuple[str, ...] = ()  # the model ids it was written for; () = no claim

    def written_for(self, model_id: str) -> bool:
        return written_for(self.models, model_id)

    @property
    def question_first(self) -> bool:
        return self.question_place is QuestionPlace.BEFORE_IMAGE

    def ask(self, constrained: bool) -> tuple[str, str | None]:
        """(prompt, system) the model reads for this kind of decoding."""
        if constrained and self.constrained_prompt is not None:
            return self.constrained_prompt, self.constrained_system
        return self.prompt, self.system

    def labels_for(self, language: str) -> ProfileLabels:
        return dict(self.labels).get(language, ProfileLabels())

    def answer_text(self, value: str) -> str:
        """The exact compact JSON a model should produce for `value`."""
        return json.dumps({"signal": self.signal, "observation": value}, separators=(",", ":"))


def profile_from_dict(data: Any, source: str = "profile") -> TaskProfile:
    if not isinstance(data, dict):
        raise ProfileError(f"{source}: a profile must be a JSON object")
    schema = data.get("schema", PROFILE_SCHEMA)
    if schema != PROFILE_SCHEMA:
        raise ProfileError(f"{source}: unsupported profile schema {schema!r} (expected {PROFILE_SCHEMA})")
    known = {
        "schema", "id", "signal", "values", "prompt", "system", "max_new_tokens", "title", "labels", "constrained",
        "question_place", "image_max_side", "min_score", "models",
    }  # fmt: skip
    unknown = unknown_keys(data, known)
    if unknown:
        raise ProfileError(f"{source}: unknown keys {unknown}")
    refuse = refusal(source)
    signal = read_field(data, "signal", NAME, refuse)
    values = read_field(data, "values", _VALUES, refuse)
    if len(set(values)) != len(values):
        raise ProfileError(f"{source}: 'values' has duplicates")
    if len(values) < 2:
        raise ProfileError(
            f"{source}: 'values' needs at least two answers (with one, every keyframe would get it and no "
            "answer could be corrected)"
        )
    prompt, system = _prompt_and_system(data, source, "")
    constrained_prompt, constrained_system = None, None
    if "constrained" in data:
        constrained = data["constrained"]
        if not isinstance(constrained, dict) or set(constrained) - {"prompt", "system"}:
            raise ProfileError(f"{source}: 'constrained' must be an object with 'prompt' and optionally 'system'")
        constrained_prompt, constrained_system = _prompt_and_system(constrained, source, "constrained.")
    max_new = read_field(data, "max_new_tokens", _MAX_NEW_TOKENS, refuse, _DEFAULT_MAX_NEW_TOKENS)
    pid = read_field(data, "id", NAME, refuse, signal)
    title = read_field(data, "title", TEXT, refuse, "")
    return TaskProfile(
        id=pid,
        signal=signal,
        values=tuple(values),
        prompt=prompt,
        system=system,
        max_new_tokens=max_new,
        title=title,
        labels=_labels(data.get("labels", {}), values, source),
        constrained_prompt=constrained_prompt,
        constrained_system=constrained_system,
        question_place=question_place_from(data.get("question_place", QuestionPlace.AFTER_IMAGE.value), source),
        image_max_side=read_field(data, "image_max_side", _IMAGE_SIDE, refuse, None),
        min_score=_min_score(read_field(data, "min_score", _MIN_SCORE, refuse, None)),
        models=models_from(data.get("models", []), source),
    )


def written_for(models: tuple[str, ...], model_id: str) -> bool:
    """Whether `model_id` is one of the models a profile was written for (any model when it names none)."""
    return not models or model_id in models


def models_from(value: Any, source: str) -> tuple[str, ...]:
    """A profile's `models`: model ids, each once."""
    value = read_field({"models": value}, "models", _MODELS, refusal(source))
    if len(set(value)) != len(value):
        raise ProfileError(f"{source}: 'models' names a model twice")
    return tuple(value)


def _min_score(value: float | None) -> float | None:
    """A profile's `min_score`: None, or a number above 0 and at most 1 (the score is a probability)."""
    return None if value is None else float(value)


def refusal(source: str) -> Refuse:
    """How a profile or checklist file refuses a field: naming the file, the field and the value."""

    def refuse(key: str, rule: Rule, value: object) -> ProfileError:
        return ProfileError(f"{source}: '{key}' must be {rule.words}, got {value!r}")

    return refuse


def _prompt_and_system(data: dict[str, Any], source: str, where: str) -> tuple[str, str | None]:
    refuse = refusal(source)
    prompt = read_field({f"{where}prompt": data.get("prompt")}, f"{where}prompt", text(), refuse)
    system = read_field({f"{where}system": data.get("system")}, f"{where}system", optional(TEXT), refuse)
    return prompt, system or None


def _labels(data: Any, values: list[str], source: str) -> tuple[tuple[str, ProfileLabels], ...]:
    if not isinstance(data, dict):
        raise ProfileError(f"{source}: 'labels' must be an object of language code -> labels")
    result = []
    for code, entry in data.items():
        where = f"{source}: labels[{code!r}]"
        if not isinstance(code, str) or not _LANGUAGE.match(code):
            raise ProfileError(f"{source}: 'labels' keys must be language codes such as 'zh', got {code!r}")
        if not isinstance(entry, dict) or set(entry) - {"title", "question", "values"}:
            raise ProfileError(f"{where} must be an object with 'title', 'question' and/or 'values'")
        texts = {k: entry.get(k, "") for k in ("title", "question")}
        if not all(isinstance(t, str) for t in texts.values()):
            raise ProfileError(f"{where}: 'title' and 'question' must be strings")
        words = entry.get("values", {})
        if not isinstance(words, dict) or not all(isinstance(w, str) and w.strip() for w in words.values()):
            raise ProfileError(f"{where}: 'values' must map answer values to non-empty words")
        strangers = sorted(set(words) - set(values))
        if strangers:
            raise ProfileError(f"{where}: 'values' names answers the profile does not allow: {strangers}")
        ordered = tuple((v, words[v]) for v in values if v in words)
        result.append((code, ProfileLabels(texts["title"], texts["question"], ordered)))
    return tuple(sorted(result, key=lambda item: item[0]))  # by language: the same profile whatever the key order
