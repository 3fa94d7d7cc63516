from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.core.profile.checklist import checklist_from_dict
from app.core.profile.task import ProfileError, ProfileLabels, QuestionPlace, TaskProfile, profile_from_dict
from app.models.manifest import load_manifest
from app.storage.paths import MANIFESTS, PROFILES
from app.storage.profile_file import load_checklist, load_profile

BASE = {"schema": 1, "id": "p", "signal": "hand_position_correct", "values": ["yes", "no"], "prompt": "Q?"}


def _shipped_signals() -> list[tuple[str, TaskProfile]]:
    """Every question the shipped profiles and checklists ask, with its file's name."""
    return [(path.name, spec) for path in sorted(PROFILES.glob("*.json")) for spec in load_checklist(path).signals]


def test_shipped_profiles_load() -> None:
    shipped = _shipped_signals()
    assert {name for name, _ in shipped} >= {"hand_position.json", "hand_position_instruct.json"}
    for _, profile in shipped:
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
        ({"constrained": "Q?"}, "'constrained' must be an object"),
        ({"constrained": {"prompt": "Q?", "colour": "red"}}, "'constrained' must be an object"),
        ({"constrained": {"system": "Be brief."}}, "'constrained.prompt' must be a non-empty string"),
        ({"constrained": {"prompt": "Q?", "system": 3}}, "'constrained.system' must be a string or null"),
        ({"question_place": "before"}, "'question_place' must be 'after_image' or 'before_image', got 'before'"),
        ({"question_place": None}, "'question_place' must be 'after_image' or 'before_image', got None"),
        ({"question_place": ["before_image"]}, "'question_place' must be"),
        ({"image_max_side": 16}, "'image_max_side' must be a whole number of pixels from 32 to 2048"),
        ({"image_max_side": 4096}, "'image_max_side' must be"),
        ({"image_max_side": 192.0}, "'image_max_side' must be"),
        ({"image_max_side": True}, "'image_max_side' must be"),
        ({"models": "keyframe-demo-cpr"}, "'models' must be a list of model ids"),
        ({"models": [""]}, "'models' must be a list of model ids"),
        ({"models": ["a model"]}, "'models' must be a list of model ids"),
        ({"models": ["m", "m"]}, "'models' names a model twice"),
    ],
)
def test_bad_profiles_are_refused_with_a_reason(change: dict, message: str) -> None:
    with pytest.raises(ProfileError, match=message):
        profile_from_dict({**BASE, **change})


def test_a_profile_says_which_models_it_was_written_for_and_one_that_names_none_claims_nothing() -> None:
    written = profile_from_dict({**BASE, "models": ["keyframe-demo-cpr", "my.model_v2"]})
    assert written.written_for("my.model_v2") and not written.written_for("qwen3-vl-2b-instruct-mnn")
    assert profile_from_dict(BASE).written_for("any-model")
    entry = {"signal": "a", "values": ["yes", "no"], "prompt": "Q?"}
    checklist = checklist_from_dict(
        {"schema": 1, "id": "c", "models": ["m1"], "signals": [entry, {**entry, "signal": "b"}]}
    )
    assert [spec.models for spec in checklist.signals] == [("m1",), ("m1",)] and checklist.models == ("m1",)
    assert not checklist.written_for("m2")


def test_each_shipped_profile_names_the_models_whose_manifests_offer_it() -> None:
    """The two sides agree: a manifest's `profiles` are the ones written for its model, and back."""
    offered = {(m.id, p) for m in map(load_manifest, MANIFESTS.glob("*.json")) for p in m.profiles}
    claimed = {(model, path.stem) for path in PROFILES.glob("*.json") for model in load_checklist(path).models}
    assert offered == claimed and len(claimed) >= 4


def test_constrained_decoding_reads_its_own_prompt_and_free_generation_the_full_one() -> None:
    long = {**BASE, "prompt": "Q? Answer with only this JSON: …", "system": "Reply with JSON."}
    profile = profile_from_dict({**long, "constrained": {"prompt": "Q?"}})
    assert profile.ask(constrained=True) == ("Q?", None)  # no system unless the profile gives one
    assert profile.ask(constrained=False) == ("Q? Answer with only this JSON: …", "Reply with JSON.")
    same = profile_from_dict(long)  # without `constrained`, both read the same
    assert same.ask(constrained=True) == same.ask(constrained=False) == (long["prompt"], long["system"])
    both = profile_from_dict({**long, "constrained": {"prompt": "Q?", "system": "Look closely."}})
    assert both.ask(constrained=True) == ("Q?", "Look closely.")


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


def _with_labels(labels: object) -> dict:
    return {"signal": "hand_position_correct", "values": ["yes", "no", "unknown"], "prompt": "Q?", "labels": labels}


def test_labels_give_people_a_title_question_and_answer_words_per_language() -> None:
    profile = profile_from_dict(
        _with_labels({"zh": {"title": "标题", "question": "手的位置正确吗？", "values": {"no": "否", "yes": "是"}}})
    )
    zh = profile.labels_for("zh")
    assert (zh.title, zh.question) == ("标题", "手的位置正确吗？")
    assert zh.values == (("yes", "是"), ("no", "否"))  # in the profile's order
    assert zh.value_words("unknown") is None  # not translated: the UI falls back
    assert profile.labels_for("fr") == ProfileLabels()


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ([], "'labels' must be an object"),
        ({"Chinese": {}}, "language codes"),
        ({"zh": {"title": "t", "prompt": "p"}}, "'title', 'question' and/or 'values'"),
        ({"zh": {"question": 3}}, "must be strings"),
        ({"zh": {"values": {"yes": ""}}}, "non-empty words"),
        ({"zh": {"values": {"maybe": "也许"}}}, "does not allow: ['maybe']"),
    ],
)
def test_bad_labels_are_refused_naming_the_problem(labels: object, message: str) -> None:
    with pytest.raises(ProfileError, match=re.escape(message)):
        profile_from_dict(_with_labels(labels))


def test_the_shipped_profiles_carry_chinese_labels_for_every_answer() -> None:
    for name, profile in _shipped_signals():
        zh = profile.labels_for("zh")
        assert zh.title and zh.question and [v for v, _ in zh.values] == list(profile.values), (name, profile.signal)


def test_the_question_goes_after_the_image_unless_the_profile_puts_it_before(tmp_path: Path) -> None:
    assert profile_from_dict(BASE).question_place is QuestionPlace.AFTER_IMAGE  # every existing profile's way
    assert profile_from_dict({**BASE, "question_place": "after_image"}) == profile_from_dict(BASE)
    first = profile_from_dict({**BASE, "question_place": "before_image"})
    assert first.question_place is QuestionPlace.BEFORE_IMAGE and first.question_first
    bad = tmp_path / "first.json"
    bad.write_text(json.dumps({**BASE, "question_place": "above"}))
    with pytest.raises(ProfileError, match=rf"^{re.escape(str(bad))}: 'question_place' must be"):
        load_profile(bad)


def test_a_profile_may_ask_for_a_smaller_image_and_a_checklist_shares_it() -> None:
    assert profile_from_dict(BASE).image_max_side is None
    assert profile_from_dict({**BASE, "image_max_side": 192}).image_max_side == 192
    checklist = load_checklist(PROFILES / "cpr_checklist.json")
    data = {**json.loads((PROFILES / "cpr_checklist.json").read_text()), "image_max_side": 160}
    assert {spec.image_max_side for spec in checklist.signals} == {None}
    assert {spec.image_max_side for spec in checklist_from_dict(data).signals} == {160}
    with pytest.raises(ProfileError, match="unknown keys"):  # one image encode for all: not a signal's own
        checklist_from_dict({**data, "signals": [{**data["signals"][0], "image_max_side": 96}, *data["signals"][1:]]})
