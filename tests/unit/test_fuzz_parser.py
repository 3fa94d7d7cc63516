"""Bounded-time fuzzing of the strict parser: it never raises, and anything that is
not exactly one valid answer is `unknown` (checked against an independent oracle)."""

from __future__ import annotations

import json
import os

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.generation import FinishReason
from app.core.parser import ParseReason, parse_answer
from app.core.profile.task import UNKNOWN, TaskProfile

EXAMPLES = int(os.environ.get("KEYFRAME_FUZZ_EXAMPLES", "4000"))
PROFILE = TaskProfile(
    id="hand_position", signal="hand_position_correct", values=("yes", "no", "unknown"), prompt="Is it right?"
)
VALID = [PROFILE.answer_text(v) for v in PROFILE.values] + [
    ' { "observation" : "no" , "signal" : "hand_position_correct" } ',
    '{"signal":"hand_position_correct","observation":"yes"}',
]
ALPHABET = st.sampled_from(list('{}[]":,\\ \t\n\r0123456789.-+eEtrufalsnyoNaI') + ["\u00a0", "\u2028", "\x00", "é"])


def _oracle(raw: str) -> str | None:
    """The observation when `raw` is exactly one valid answer, else None."""

    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        if len({k for k, _ in items}) != len(items):
            raise ValueError("duplicate key")
        return dict(items)

    def no_constants(name: str) -> None:
        raise ValueError(name)

    try:
        value = json.loads(raw.strip(), object_pairs_hook=pairs, parse_constant=no_constants)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or set(value) != {"signal", "observation"}:
        return None
    obs = value["observation"]
    ok = value["signal"] == PROFILE.signal and isinstance(obs, str) and obs in PROFILE.values
    return obs if ok else None


@st.composite
def mutated_answers(draw: st.DrawFn) -> str:
    text = list(draw(st.sampled_from(VALID)))
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["insert", "delete", "replace", "duplicate", "truncate"]))
        pos = draw(st.integers(0, len(text)))
        if op == "insert":
            text.insert(pos, draw(ALPHABET))
        elif op == "delete" and pos < len(text):
            del text[pos]
        elif op == "replace" and pos < len(text):
            text[pos] = draw(ALPHABET)
        elif op == "duplicate":
            end = draw(st.integers(pos, len(text)))
            text[pos:pos] = text[pos:end]
        elif op == "truncate":
            del text[pos:]
    return "".join(text)


def _check(raw: str, finish: FinishReason) -> None:
    parsed = parse_answer(raw, PROFILE, finish)  # must never raise
    expected = _oracle(raw)
    assert parsed.raw == raw
    if expected is None:
        assert parsed.observation == UNKNOWN and parsed.reason is not ParseReason.OK, (raw, parsed)
    else:
        assert parsed.reason is ParseReason.OK and parsed.observation == expected, (raw, parsed)


@settings(max_examples=EXAMPLES, deadline=None)
@given(mutated_answers(), st.sampled_from(list(FinishReason)))
def test_mutated_answers(raw: str, finish: FinishReason) -> None:
    _check(raw, finish)


@settings(max_examples=max(100, EXAMPLES // 3), deadline=None)
@given(st.text(max_size=200), st.sampled_from(list(FinishReason)))
def test_arbitrary_text(raw: str, finish: FinishReason) -> None:
    _check(raw, finish)


def test_deep_nesting_is_unknown() -> None:
    for raw in ("[" * 100_000, '{"a":' * 50_000, "[" * 100_000 + "]" * 100_000):
        assert parse_answer(raw, PROFILE).observation == UNKNOWN
