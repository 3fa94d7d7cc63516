"""Strict parser: exactly one valid object passes, everything else is `unknown` with a reason."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.generation import FinishReason
from app.core.parser import ParseReason, parse_answer
from app.core.profile.task import UNKNOWN, TaskProfile

PROFILE = TaskProfile(
    id="hand_position", signal="hand_position_correct", values=("yes", "no", "unknown"), prompt="Is it right?"
)


@pytest.mark.parametrize("value", ["yes", "no", "unknown"])
def test_exact_answer_is_accepted(value: str) -> None:
    raw = PROFILE.answer_text(value)
    parsed = parse_answer(raw, PROFILE)
    assert parsed.valid and parsed.observation == value and parsed.raw == raw


def test_whitespace_around_and_inside_is_fine() -> None:
    parsed = parse_answer('\n  { "observation" : "no",\n "signal": "hand_position_correct" }  \n', PROFILE)
    assert parsed.observation == "no" and parsed.reason is ParseReason.OK


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("", ParseReason.EMPTY),
        ("   \n", ParseReason.EMPTY),
        ("yes", ParseReason.INVALID_JSON),
        ('{"signal":"hand_position_correct","observation":"yes"', ParseReason.INVALID_JSON),
        ('```json\n{"signal":"hand_position_correct","observation":"yes"}\n```', ParseReason.INVALID_JSON),
        ('{"signal":"hand_position_correct","observation":"yes"} Sure!', ParseReason.EXTRA_TEXT),
        ('{"signal":"hand_position_correct","observation":"yes"}{"a":1}', ParseReason.EXTRA_TEXT),
        ('["yes"]', ParseReason.NOT_OBJECT),
        ('"yes"', ParseReason.NOT_OBJECT),
        ('{"signal":"hand_position_correct","observation":"yes","confidence":0.9}', ParseReason.EXTRA_KEYS),
        ('{"signal":"hand_position_correct"}', ParseReason.MISSING_KEYS),
        ("{}", ParseReason.MISSING_KEYS),
        ('{"signal":"hand_position_correct","observation":true}', ParseReason.WRONG_TYPE),
        ('{"signal":"hand_position_correct","observation":null}', ParseReason.WRONG_TYPE),
        ('{"signal":"compression_depth","observation":"yes"}', ParseReason.WRONG_SIGNAL),
        ('{"signal":"hand_position_correct","observation":"Yes"}', ParseReason.INVALID_VALUE),
        ('{"signal":"hand_position_correct","observation":"maybe"}', ParseReason.INVALID_VALUE),
        ('{"signal":"hand_position_correct","observation":"no","observation":"yes"}', ParseReason.DUPLICATE_KEYS),
        ('{"signal":"hand_position_correct","observation":NaN}', ParseReason.INVALID_JSON),
    ],
)
def test_rejections_have_reasons(raw: str, reason: ParseReason) -> None:
    parsed = parse_answer(raw, PROFILE)
    assert parsed.reason is reason
    assert parsed.observation == UNKNOWN
    assert parsed.raw == raw


def test_cut_off_generation_is_truncated_not_invalid() -> None:
    raw = '{"signal":"hand_position_correct","obs'
    assert parse_answer(raw, PROFILE, FinishReason.LENGTH).reason is ParseReason.TRUNCATED
    assert parse_answer(raw, PROFILE, FinishReason.CANCELLED).reason is ParseReason.TRUNCATED
    assert parse_answer(raw, PROFILE, FinishReason.STOP).reason is ParseReason.INVALID_JSON
    assert parse_answer("", PROFILE, FinishReason.LENGTH).reason is ParseReason.TRUNCATED


def test_complete_answer_at_the_token_limit_still_counts() -> None:
    assert parse_answer(PROFILE.answer_text("no"), PROFILE, FinishReason.LENGTH).observation == "no"


# --- properties -------------------------------------------------------------------------

json_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


@given(st.text(max_size=200))
@settings(max_examples=400)
def test_any_text_gives_a_known_value_or_unknown(raw: str) -> None:
    parsed = parse_answer(raw, PROFILE)
    assert parsed.raw == raw
    assert parsed.observation in PROFILE.values
    if parsed.valid:
        assert json.loads(raw) == {"signal": PROFILE.signal, "observation": parsed.observation}
    else:
        assert parsed.observation == UNKNOWN


@given(st.dictionaries(st.text(max_size=12), json_values, max_size=4))
@settings(max_examples=400)
def test_only_the_exact_schema_is_valid(obj: dict) -> None:
    parsed = parse_answer(json.dumps(obj), PROFILE)
    exact = (
        set(obj) == {"signal", "observation"}
        and obj["signal"] == PROFILE.signal
        and obj["observation"] in PROFILE.values
    )
    assert parsed.valid == exact


@given(
    st.sampled_from(PROFILE.values), st.text(alphabet=" \t\r\n", max_size=5), st.text(alphabet=" \t\r\n", max_size=5)
)
def test_valid_answers_survive_whitespace_and_key_order(value: str, before: str, after: str) -> None:
    raw = before + json.dumps({"observation": value, "signal": PROFILE.signal}, indent=1) + after
    assert parse_answer(raw, PROFILE).observation == value


@given(
    st.sampled_from(PROFILE.values),
    st.dictionaries(
        st.text(min_size=1, max_size=8).filter(lambda k: k not in ("signal", "observation")),
        json_values,
        min_size=1,
        max_size=3,
    ),
)
def test_any_extra_key_rejects(value: str, extra: dict) -> None:
    obj = {"signal": PROFILE.signal, "observation": value, **extra}
    parsed = parse_answer(json.dumps(obj), PROFILE)
    assert parsed.reason is ParseReason.EXTRA_KEYS and parsed.observation == UNKNOWN


@given(st.sampled_from(PROFILE.values), st.integers(min_value=1, max_value=40))
def test_every_strict_prefix_of_a_valid_answer_is_rejected(value: str, cut: int) -> None:
    full = PROFILE.answer_text(value)
    raw = full[: max(0, len(full) - cut)]
    assert not parse_answer(raw, PROFILE).valid
    assert parse_answer(raw, PROFILE, FinishReason.LENGTH).reason in (ParseReason.TRUNCATED,)
