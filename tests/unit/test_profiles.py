from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.profiles import ProfileError, profile_from_dict
from app.paths import PROFILES
from app.profile_file import load_profile

BASE = {"schema": 1, "id": "p", "signal": "hand_position_correct", "values": ["yes", "no"], "prompt": "Q?"}


def test_shipped_profiles_load() -> None:
    paths = sorted(PROFILES.glob("*.json"))
    assert paths, "the app ships at least one profile"
    for path in paths:
        profile = load_profile(path)
        assert profile.signal and profile.values and profile.prompt


def test_answer_text_is_compact_json() -> None:
    profile = profile_from_dict(BASE)
    assert profile.answer_text("yes") == '{"signal":"hand_position_correct","observation":"yes"}'


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"schema": 2}, "schema"),
        ({"signal": "Hand Position"}, "signal"),
        ({"values": []}, "values"),
        ({"values": ["yes", "yes"]}, "duplicates"),
        ({"values": ["yes", 1]}, "values"),
        ({"prompt": "  "}, "prompt"),
        ({"system": 3}, "system"),
        ({"max_new_tokens": 0}, "max_new_tokens"),
        ({"max_new_tokens": True}, "max_new_tokens"),
        ({"colour": "red"}, "unknown keys"),
    ],
)
def test_bad_profiles_are_refused_with_a_reason(change: dict, message: str) -> None:
    with pytest.raises(ProfileError, match=message):
        profile_from_dict({**BASE, **change})


def test_unreadable_and_invalid_files(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="cannot read"):
        load_profile(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(ProfileError, match="not valid JSON"):
        load_profile(bad)
    good = tmp_path / "good.json"
    good.write_text(json.dumps({**BASE, "system": "Be brief."}))
    assert load_profile(good).system == "Be brief."
