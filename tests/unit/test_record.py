"""The one way the app reads a record's fields: rules in words and as tests, refused in the reader's words."""

from __future__ import annotations

import math

import pytest

from app.core.record import (
    FLAG,
    Rule,
    check_fields,
    is_number,
    is_whole,
    list_of,
    number,
    one_of,
    optional,
    read_field,
    text,
    unknown_keys,
    whole,
)


def _refuse(key: str, rule: Rule, value: object) -> ValueError:
    return ValueError(f"f.json: '{key}' must be {rule.words}, got {value!r}")


def test_true_is_not_a_number_and_nan_is_not_json_but_a_huge_whole_number_is_one() -> None:
    assert not is_whole(True) and not is_number(False)
    assert not is_number(math.nan) and not is_number(math.inf)
    assert is_number(10**400) and is_whole(10**400)


@pytest.mark.parametrize(
    ("rule", "words"),
    [
        (whole(1, 16), "a whole number from 1 to 16"),
        (whole(32, 2048, "pixels"), "a whole number of pixels from 32 to 2048"),
        (whole(1), "a positive whole number"),
        (whole(0), "a non-negative whole number"),
        (number(), "a number"),
        (one_of(("cpu", "metal")), "one of cpu, metal"),
        (optional(whole(1, 5), "the default"), "null (the default) or a whole number from 1 to 5"),
        (optional(text(), said=False), "a non-empty string"),
        (FLAG, "true or false"),
    ],
)
def test_each_rule_says_what_it_takes(rule: Rule, words: str) -> None:
    assert rule.words == words


def test_a_field_is_read_or_refused_in_the_readers_words() -> None:
    data = {"threads": 0, "name": "a", "sides": [1, 2]}
    with pytest.raises(ValueError, match=r"^f\.json: 'threads' must be a whole number from 1 to 16, got 0$"):
        read_field(data, "threads", whole(1, 16), _refuse)
    assert read_field(data, "name", text(), _refuse) == "a"
    assert read_field(data, "missing", whole(), _refuse, 7) == 7  # left out: its default
    with pytest.raises(ValueError, match="'missing' must be a whole number, got None"):
        read_field(data, "missing", whole(), _refuse)  # left out, and no default
    assert read_field(data, "sides", list_of(whole(1), "a list of sides", length=2), _refuse) == [1, 2]
    with pytest.raises(ValueError, match="a list of sides"):
        read_field(data, "sides", list_of(whole(1), "a list of sides", length=3), _refuse)


def test_check_fields_judges_only_the_fields_with_a_rule() -> None:
    check_fields({"a": 1, "other": object()}, {"a": whole()}, _refuse)
    with pytest.raises(ValueError, match="'a' must be true or false"):
        check_fields({"a": 1}, {"a": FLAG}, _refuse)
    assert unknown_keys({"b": 1, "a": 2, "c": 3}, {"a"}) == ["b", "c"]
