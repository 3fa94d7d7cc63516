"""A checklist written back as its file's JSON (app.core.profile.dicts) reads back to the same checklist."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.profile.checklist import checklist_from_dict
from app.core.profile.dicts import checklist_dict, with_min_score
from app.storage.paths import PROFILES

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12).filter(str.strip)


@st.composite
def signals(draw: st.DrawFn, name: str, gated: bool) -> dict:
    values = draw(st.lists(NAMES, min_size=2, max_size=3, unique=True))
    if gated and "unknown" not in values:
        values.append("unknown")
    entry: dict = {"signal": name, "values": values, "prompt": draw(TEXT)}
    if draw(st.booleans()):
        entry["constrained"] = {"prompt": draw(TEXT)}
    if draw(st.booleans()):
        entry["max_new_tokens"] = draw(st.integers(1, 4096))
    if draw(st.booleans()):
        entry["min_score"] = draw(st.floats(0.0, 1.0, exclude_min=True))
    if draw(st.booleans()):
        words = {v: draw(TEXT) for v in values if draw(st.booleans())}
        entry["labels"] = {"zh": {"question": draw(TEXT), **({"values": words} if words else {})}}
    return entry


@st.composite
def checklists(draw: st.DrawFn) -> dict:
    names = draw(st.lists(NAMES, min_size=1, max_size=4, unique=True))
    gate = draw(st.sampled_from([None, *names]))
    data: dict = {"schema": 1, "id": draw(NAMES), "title": draw(st.text(max_size=10))}
    data["signals"] = [draw(signals(n, gated=gate is not None and n != gate)) for n in names]
    if gate is not None:
        spec = next(s for s in data["signals"] if s["signal"] == gate)
        data["gate"] = {"signal": gate, "open": draw(st.sampled_from(spec["values"]))}
    if draw(st.booleans()):
        data["system"] = draw(TEXT)
    if draw(st.booleans()):
        data["image_max_side"] = draw(st.integers(32, 1024))
    if len(names) == 1 and draw(st.booleans()):
        data["question_place"] = "before_image"
    if draw(st.booleans()):
        data["labels"] = {"zh": {"title": draw(TEXT)}}
    if draw(st.booleans()):
        data["models"] = draw(st.lists(st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,12}", fullmatch=True), unique=True))
    return data


@given(checklists())
def test_any_checklist_reads_back_the_same(data: dict) -> None:
    checklist = checklist_from_dict(data)
    written = checklist_dict(checklist)
    assert checklist_from_dict(json.loads(json.dumps(written, ensure_ascii=False))) == checklist


@pytest.mark.parametrize("path", sorted(PROFILES.glob("*.json")), ids=lambda p: p.name)
def test_every_shipped_profile_reads_back_the_same(path) -> None:
    checklist = checklist_from_dict(json.loads(path.read_text(encoding="utf-8")))
    written = checklist_dict(checklist)
    assert checklist_from_dict(written) == checklist
    assert ("signals" in written) == (not checklist.is_single)  # a one-signal profile stays one


def test_a_score_cut_is_set_on_one_signal_and_saved() -> None:
    checklist = checklist_from_dict(json.loads((PROFILES / "cpr_checklist.json").read_text(encoding="utf-8")))
    cut = with_min_score(checklist, "hands_stacked", 0.8)
    assert [s.min_score for s in cut.signals] == [None, None, 0.8]
    assert checklist_from_dict(checklist_dict(cut)) == cut
    assert with_min_score(cut, "hands_stacked", None) == checklist
    with pytest.raises(KeyError):
        with_min_score(checklist, "arms_straight", 0.5)
