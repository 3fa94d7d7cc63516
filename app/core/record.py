"""One way to read a record (a JSON object a file or a log line holds): each field has a rule that says
what it may be, in words and as a test, and a value that breaks it is refused in the reader's own
sentence, which names the file and the field. The app's records (settings, task profiles and checklists,
model manifests, MNN's model configs, session log lines) state their fields with these rules instead of
checking each by hand. Pure: no I/O."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Rule:
    """What a field's value must be: `words` as a sentence says it ("a whole number from 1 to 16"),
    `test` whether a value is one."""

    words: str
    test: Callable[[Any], bool]

    def __call__(self, value: object) -> bool:
        return self.test(value)


# A field, its rule and the value that broke it -> the reader's error, in its own sentence.
Refuse = Callable[[str, Rule, object], Exception]


def is_whole(value: object) -> bool:
    """A JSON whole number: `true` is an int in Python, but not 1 of anything."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> bool:
    """A JSON number: finite (Python's json reads NaN and Infinity, which JSON has not)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))  # a 400-digit int is finite


def _range_words(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f" from {low:g} to {high:g}"
    if low is not None:
        return f" of at least {low:g}"
    return "" if high is None else f" of at most {high:g}"


def whole(low: int | None = None, high: int | None = None, unit: str = "") -> Rule:
    """A whole number within [low, high] (either end open), of `unit` ("pixels") when given."""
    of = f" of {unit}" if unit else ""
    if low == 1 and high is None and not unit:
        words = "a positive whole number"
    elif low == 0 and high is None and not unit:
        words = "a non-negative whole number"
    else:
        words = f"a whole number{of}{_range_words(low, high)}"
    return Rule(
        words,
        lambda v: is_whole(v) and (low is None or v >= low) and (high is None or v <= high),
    )


def number(low: float | None = None, high: float | None = None) -> Rule:
    return Rule(
        f"a number{_range_words(low, high)}",
        lambda v: is_number(v) and (low is None or v >= low) and (high is None or v <= high),
    )


FLAG = Rule("true or false", lambda v: isinstance(v, bool))
OBJECT = Rule("a JSON object", lambda v: isinstance(v, dict))
TEXT = Rule("a string", lambda v: isinstance(v, str))
# Any character counts (a manifest or MNN config value is used as written); `text()` wants more than spaces.
NONEMPTY = Rule("a non-empty string", lambda v: isinstance(v, str) and bool(v))


def text(words: str = "a non-empty string") -> Rule:
    """A string with something in it besides spaces."""
    return Rule(words, lambda v: isinstance(v, str) and bool(v.strip()))


def one_of(choices: Sequence[str]) -> Rule:
    return Rule(f"one of {', '.join(choices)}", lambda v: isinstance(v, str) and v in choices)


def matching(pattern: re.Pattern[str], words: str) -> Rule:
    return Rule(words, lambda v: isinstance(v, str) and pattern.fullmatch(v) is not None)


def optional(rule: Rule, none_means: str = "", said: bool = True) -> Rule:
    """`rule`, or null (saying what null means, when it means something; not said at all when null is
    only the field left out, written out)."""
    words = f"null ({none_means}) or {rule.words}" if none_means else f"{rule.words} or null"
    return Rule(words if said else rule.words, lambda v: v is None or rule(v))


def list_of(rule: Rule, words: str, length: int | None = None, nonempty: bool = False) -> Rule:
    """A list whose every item keeps `rule` (`length` items when given; at least one when `nonempty`)."""
    return Rule(
        words,
        lambda v: (
            isinstance(v, list)
            and (length is None or len(v) == length)
            and (not nonempty or bool(v))
            and all(rule(x) for x in v)
        ),
    )


_MISSING: Any = object()


def read_field(data: Mapping[str, Any], key: str, rule: Rule, refuse: Refuse, default: Any = _MISSING) -> Any:
    """`data[key]` when it keeps `rule`; `default` when it is absent (absent without a default is refused
    as the rule's words say)."""
    if key not in data and default is not _MISSING:
        return default
    value = data.get(key)
    if not rule(value):
        raise refuse(key, rule, value)
    return value


def check_fields(data: Mapping[str, Any], rules: Mapping[str, Rule], refuse: Refuse) -> None:
    """Every field of `data` that has a rule keeps it (fields without one are the reader's to judge)."""
    for key, value in data.items():
        rule = rules.get(key)
        if rule is not None and not rule(value):
            raise refuse(key, rule, value)


def unknown_keys(data: Mapping[str, Any], known: Sequence[str] | set[str]) -> list[str]:
    """The keys of `data` a reader does not know, sorted (a record from a newer version, or a typo)."""
    return sorted(str(k) for k in data if k not in known)
