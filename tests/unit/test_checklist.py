"""Checklist profiles: several signals per keyframe, a gate asked first, one-signal profiles unchanged."""

from __future__ import annotations

import copy
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from app.core.profile.checklist import MAX_SIGNALS, checklist_from_dict
from app.core.profile.task import ProfileError, QuestionPlace, profile_from_dict
from app.session.review import ReviewError, allowed_answers
from app.storage.paths import PROFILES
from app.storage.profile_file import load_checklist, load_profile
from tests.unit.test_session import practice

YES_NO_UNKNOWN = ["yes", "no", "unknown"]


def _signal(name: str, **more: Any) -> dict[str, Any]:
    return {"signal": name, "values": YES_NO_UNKNOWN, "prompt": f"{name}?", **more}


CHECKLIST: dict[str, Any] = {
    "schema": 1,
    "id": "cpr",
    "title": "CPR",
    "system": "Look closely.",
    "max_new_tokens": 20,
    "labels": {"zh": {"title": "心肺复苏"}},
    "gate": {"signal": "visible", "open": "yes"},
    "signals": [
        _signal("stacked", labels={"zh": {"question": "叠放吗？", "values": {"yes": "是"}}}),
        _signal("position", constrained={"prompt": "Short?"}, max_new_tokens=9),
        _signal("visible"),
    ],
}


def _write(folder: Path, data: Any, name: str = "checklist.json") -> Path:
    path = folder / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["hand_position.json", "hand_position_instruct.json"])
def test_a_one_signal_profile_is_a_checklist_of_exactly_that_profile(name: str) -> None:
    path = PROFILES / name
    profile = profile_from_dict(json.loads(path.read_text(encoding="utf-8")), source=str(path))
    checklist = load_checklist(path)
    assert checklist.signals == (profile,) and checklist.ordered() == (profile,)
    assert checklist.is_single and checklist.gate is None
    assert (checklist.id, checklist.title, checklist.system) == (profile.id, profile.title, profile.system)
    assert checklist.labels_for("zh").title == profile.labels_for("zh").title != ""
    assert load_profile(path) == profile


def test_signals_share_the_checklists_id_title_system_and_defaults() -> None:
    checklist = checklist_from_dict(CHECKLIST, "c.json")
    assert (checklist.id, checklist.title, checklist.system, checklist.gate) == (
        "cpr",
        "CPR",
        "Look closely.",
        "visible",
    )
    assert not checklist.is_single and [s.signal for s in checklist.signals] == ["stacked", "position", "visible"]
    for spec in checklist.signals:
        assert (spec.id, spec.title, spec.system) == ("cpr", "CPR", "Look closely.")
        assert spec.ask(constrained=True)[1] == spec.ask(constrained=False)[1] == "Look closely."
    position = checklist.signal("position")
    assert position.ask(constrained=True) == ("Short?", "Look closely.")
    assert position.ask(constrained=False) == ("position?", "Look closely.")
    assert (position.max_new_tokens, checklist.signal("stacked").max_new_tokens) == (9, 20)
    zh = checklist.signal("stacked").labels_for("zh")
    assert (zh.title, zh.question, zh.values) == ("心肺复苏", "叠放吗？", (("yes", "是"),))
    assert checklist.signal("visible").labels_for("zh").title == "心肺复苏"  # the title, with no question of its own
    assert checklist.labels_for("zh").title == "心肺复苏" and checklist.labels_for("fr").title == ""
    with pytest.raises(KeyError):
        checklist.signal("depth")


def test_the_gate_is_asked_first_then_the_others_in_file_order() -> None:
    checklist = checklist_from_dict(CHECKLIST, "c.json")
    assert [s.signal for s in checklist.ordered()] == ["visible", "stacked", "position"]
    ungated = checklist_from_dict({k: v for k, v in CHECKLIST.items() if k != "gate"}, "c.json")
    assert ungated.gate is None and ungated.ordered() == ungated.signals
    opens_on_no = checklist_from_dict({**CHECKLIST, "gate": {"signal": "stacked", "open": "no"}}, "c.json")
    assert (opens_on_no.gate, opens_on_no.gate_open) == ("stacked", "no")
    assert [s.signal for s in opens_on_no.ordered()] == ["stacked", "position", "visible"]
    assert checklist_from_dict({**CHECKLIST, "gate": {"signal": "visible"}}, "c.json").gate_open == "yes"


def test_the_shipped_checklists_load() -> None:
    one_question = load_profile(PROFILES / "hand_position.json")
    demo = load_checklist(PROFILES / "cpr_checklist.json")
    assert (demo.gate, demo.gate_open, demo.system) == ("hands_visible", "yes", None)
    assert [s.signal for s in demo.ordered()] == ["hands_visible", "hand_position_correct", "hands_stacked"]
    assert demo.signal("hand_position_correct").prompt == one_question.prompt
    assert demo.signal("hands_visible").prompt == "Are the trainee's hands in the picture?"

    instruct = load_checklist(PROFILES / "cpr_checklist_instruct.json")
    assert [s.signal for s in instruct.ordered()] == [
        "hands_visible",
        "hand_position_correct",
        "hands_stacked",
        "arms_straight",
        "shoulders_over_hands",
    ]
    assert instruct.gate == "hands_visible" and instruct.system
    for spec in instruct.signals:
        free, _ = spec.ask(constrained=False)
        short, _ = spec.ask(constrained=True)
        assert all(spec.answer_text(v) in free for v in spec.values), spec.signal  # its own signal's JSON only
        assert '"signal"' not in short and short in free, spec.signal
    for checklist in (demo, instruct):
        assert checklist.labels_for("zh").title
        for spec in checklist.signals:
            assert spec.values == ("yes", "no", "unknown")
            zh = spec.labels_for("zh")
            assert zh.question and [v for v, _ in zh.values] == list(spec.values), spec.signal


def _changed(change: Any) -> dict[str, Any]:
    data = copy.deepcopy(CHECKLIST)
    change(data)
    return data


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(colour="red"), "unknown keys ['colour']"),
        (lambda d: d.pop("id"), "'id' must be a lower_snake_case name, got None"),
        (lambda d: d.update(signals=[]), "'signals' must be a non-empty list"),
        (lambda d: d.update(signals="visible"), "'signals' must be a non-empty list"),
        (
            lambda d: d.update(signals=[_signal(f"s{i}") for i in range(MAX_SIGNALS + 1)], gate=None),
            "9 signals, more than the 8",
        ),
        (lambda d: d["signals"].append(_signal("stacked")), "named more than once: ['stacked']"),
        (lambda d: d.update(gate={"signal": "depth"}), "the gate names 'depth', which is not one of the signals"),
        (lambda d: d.update(gate={"signal": "visible", "open": "maybe"}), "opens on 'maybe', which 'visible' cannot"),
        (lambda d: d.update(gate="visible"), "'gate' must be an object"),
        (lambda d: d["signals"][1].update(values=["yes", "no"]), "['position'] cannot answer 'unknown'"),
        (lambda d: d["signals"][0].update(system="Mine."), "signal 'stacked': unknown keys ['system']"),
        (lambda d: d["signals"][1]["constrained"].update(system="Mine."), "'constrained.system' is the checklist's"),
        (lambda d: d["signals"][2].update(values=[]), "signal 'visible': 'values' must be a non-empty list"),
        (lambda d: d["signals"][0].pop("signal"), "signals[0]: 'signal' must be a lower_snake_case name"),
        (lambda d: d["signals"].append("visible"), "signals[3] must be an object"),
        (lambda d: d.update(max_new_tokens=0), "'max_new_tokens' must be a whole number from 1 to 4096"),
        (lambda d: d.update(system=3), "'system' must be a string or null"),
        (lambda d: d.update(schema=2), "unsupported profile schema 2"),
        (lambda d: d["labels"]["zh"].update(question="?"), "holds its 'title' only"),
        (lambda d: d["signals"][0]["labels"]["zh"].update(title="T"), "the title is the checklist's"),
        (lambda d: d["signals"][0]["labels"]["zh"]["values"].update(maybe="也许"), "does not allow: ['maybe']"),
        (lambda d: d["signals"][0]["labels"].update(zh=""), "must be an object with 'title', 'question'"),
        (lambda d: d.update(labels={"Chinese": {"title": "T"}}), "language codes"),
        (lambda d: d.update(question_place="before_image"), '"before_image" needs a checklist of one signal'),
        (lambda d: d.update(question_place="first"), "'question_place' must be 'after_image' or 'before_image'"),
        (lambda d: d["signals"][0].update(question_place="after_image"), "unknown keys ['question_place']"),
    ],
)
def test_a_damaged_checklist_is_refused_with_a_sentence_naming_the_file(
    tmp_path: Path, change: Any, message: str
) -> None:
    path = _write(tmp_path, _changed(change))
    with pytest.raises(ProfileError, match=re.escape(message)) as err:
        load_checklist(path)
    assert str(err.value).startswith(f"{path}: ")


def test_files_that_cannot_be_read_are_refused_naming_them(tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps(CHECKLIST)[:-20], encoding="utf-8")
    with pytest.raises(ProfileError, match=rf"^{re.escape(str(damaged))}: .*not valid JSON"):
        load_checklist(damaged)
    with pytest.raises(ProfileError, match="cannot read profile"):
        load_checklist(tmp_path / "missing.json")


def test_a_checklist_is_refused_where_one_question_is_needed(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match=r"cpr_checklist\.json: a checklist of 3 signals, where one question"):
        load_profile(PROFILES / "cpr_checklist.json")
    single = _write(tmp_path, {**CHECKLIST, "gate": None, "signals": [_signal("visible")]})
    assert load_profile(single) == load_checklist(single).signals[0]  # a list of one is that one question


def test_reviews_of_old_logs_find_a_checklists_signal(tmp_path: Path) -> None:
    old = replace(practice(1, "no"), signal="hands_stacked")  # no allowed_values recorded
    named = allowed_answers(replace(old, profile_id="cpr_checklist"))
    assert (named.values, named.source) == (("yes", "no", "unknown"), "profile cpr_checklist")
    by_signal = allowed_answers(old)  # no profile id: every shipped file asking for it
    assert by_signal.values == ("yes", "no", "unknown") and "cpr_checklist_instruct" in by_signal.source

    _write(tmp_path, {**CHECKLIST, "id": "cpr"}, "cpr.json")
    _write(
        tmp_path, {"schema": 1, "id": "strict", "signal": "stacked", "values": ["yes", "no"], "prompt": "?"}, "s.json"
    )
    _write(tmp_path, {**CHECKLIST, "signals": []}, "damaged.json")  # skipped, as a damaged profile is
    stacked = replace(old, signal="stacked")
    assert allowed_answers(replace(stacked, profile_id="cpr"), profiles_dir=tmp_path).values == tuple(YES_NO_UNKNOWN)
    with pytest.raises(ReviewError, match="several bundled profiles disagree"):
        allowed_answers(stacked, profiles_dir=tmp_path)
    assert allowed_answers(replace(old, signal="position"), profiles_dir=tmp_path).source == "profile cpr"


def test_where_the_question_goes_is_the_checklists_and_before_the_image_only_for_one_signal(tmp_path: Path) -> None:
    after = checklist_from_dict({**CHECKLIST, "question_place": "after_image"}, "c.json")
    assert after == checklist_from_dict(CHECKLIST, "c.json")  # the default
    assert not any(spec.question_first for spec in after.signals)
    one = _write(
        tmp_path, {**CHECKLIST, "gate": None, "question_place": "before_image", "signals": [_signal("visible")]}
    )
    (spec,) = load_checklist(one).signals
    assert spec.question_place is QuestionPlace.BEFORE_IMAGE and spec.question_first
    assert load_profile(one) == spec
