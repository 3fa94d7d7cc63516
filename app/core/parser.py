"""Strict parser for model answers.

Only one JSON object with exactly the keys ``signal`` and ``observation``, the
profile's signal and one of its allowed values counts. Everything else becomes
``unknown`` with a reason code; the raw text is always kept for audit. The parser
never guesses: no fence stripping, no key repair, no fuzzy matching.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum

from app.core.generation import FinishReason
from app.core.profile.task import UNKNOWN, TaskProfile


class ParseReason(StrEnum):
    OK = "ok"
    EMPTY = "empty"
    INVALID_JSON = "invalid_json"
    EXTRA_TEXT = "extra_text"  # a valid object with anything but whitespace around it
    NOT_OBJECT = "not_object"
    DUPLICATE_KEYS = "duplicate_keys"
    EXTRA_KEYS = "extra_keys"
    MISSING_KEYS = "missing_keys"
    WRONG_TYPE = "wrong_type"
    WRONG_SIGNAL = "wrong_signal"
    INVALID_VALUE = "invalid_value"
    TRUNCATED = "truncated"  # generation stopped (token limit, cancel) before a valid answer
    NOT_VISIBLE = "not_visible"  # a checklist's gate said no: not asked, nothing the model said
    LOW_SCORE = "low_score"  # a valid answer whose model score is below the profile's min_score: withheld


@dataclass(frozen=True)
class ParsedAnswer:
    observation: str
    reason: ParseReason
    raw: str
    withheld: str | None = None  # LOW_SCORE: the valid answer the score cut turned into unknown

    @property
    def valid(self) -> bool:
        return self.reason is ParseReason.OK


class _DuplicateKey(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _DuplicateKey
    return dict(pairs)


def _reject_constant(name: str) -> None:
    # NaN / Infinity are not JSON; Python's json accepts them unless told not to.
    raise ValueError(name)


def parse_answer(raw: str, profile: TaskProfile, finish: FinishReason = FinishReason.STOP) -> ParsedAnswer:
    reason, observation = _check(raw, profile)
    if reason is not ParseReason.OK and finish is not FinishReason.STOP:
        if reason in (ParseReason.EMPTY, ParseReason.INVALID_JSON):
            reason = ParseReason.TRUNCATED
    return ParsedAnswer(observation, reason, raw)


def _check(raw: str, profile: TaskProfile) -> tuple[ParseReason, str]:
    """Returns the reason code and, only when it is OK, the observation."""
    text = raw.strip()
    if not text:
        return ParseReason.EMPTY, UNKNOWN
    decoder = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    try:
        value, end = decoder.raw_decode(text)
    except _DuplicateKey:
        return ParseReason.DUPLICATE_KEYS, UNKNOWN
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return ParseReason.INVALID_JSON, UNKNOWN
    if end != len(text):
        return ParseReason.EXTRA_TEXT, UNKNOWN
    if not isinstance(value, dict):
        return ParseReason.NOT_OBJECT, UNKNOWN
    keys = set(value)
    if keys - {"signal", "observation"}:
        return ParseReason.EXTRA_KEYS, UNKNOWN
    if keys != {"signal", "observation"}:
        return ParseReason.MISSING_KEYS, UNKNOWN
    signal, observation = value["signal"], value["observation"]
    if not isinstance(signal, str) or not isinstance(observation, str):
        return ParseReason.WRONG_TYPE, UNKNOWN
    if signal != profile.signal:
        return ParseReason.WRONG_SIGNAL, UNKNOWN
    if observation not in profile.values:
        return ParseReason.INVALID_VALUE, UNKNOWN
    return ParseReason.OK, observation
