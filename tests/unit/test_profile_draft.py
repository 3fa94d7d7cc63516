"""The profile editor's fields into a checklist: every shipped profile reads back unchanged, a copy keeps
what the form does not show, and each way a form can be wrong is refused with a sentence naming it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from app.core.profile.draft import (
    MAX_QUESTION_CHARS,
    DraftRefused,
    ProfileDraft,
    SignalDraft,
    checklist_from_draft,
    draft_from_checklist,
    draft_problems,
)
from app.core.profile.task import ProfileError
from app.storage.paths import PROFILES
from app.storage.profile_file import load_checklist
from app.storage.profile_store import save_profile
from app.ui.settings.controller import EditedProfile
from app.ui.settings.profile_editor import ProfileEditor
from app.ui.words import settings as strings_settings

SHIPPED = sorted(PROFILES.glob("*.json"))


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_shipped_profile_opened_in_the_editor_and_saved_unchanged_reads_back_the_same(path: Path) -> None:
    checklist = load_checklist(path)
    assert checklist_from_draft(draft_from_checklist(checklist), checklist) == checklist


def test_a_changed_question_drops_its_short_constrained_form_and_the_rest_is_kept() -> None:
    base = load_checklist(PROFILES / "cpr_checklist_instruct.json")
    draft = draft_from_checklist(base, "mine")
    changed = replace(draft.signals[1], question="Are the hands on the lower sternum?")
    edited = checklist_from_draft(replace(draft, signals=(draft.signals[0], changed, *draft.signals[2:])), base)
    assert edited.id == "mine" and edited.system == base.system  # the system turn, not on the form, is kept
    assert edited.models == base.models == ("qwen3-vl-2b-instruct-mnn",)  # so is the model it was written for
    position = edited.signal("hand_position_correct")
    assert position.prompt == "Are the hands on the lower sternum?"
    assert position.ask(constrained=True)[0] == "Are the hands on the lower sternum?"  # not the old short form
    unchanged = edited.signal("hands_visible")
    assert unchanged.constrained_prompt == base.signal("hands_visible").constrained_prompt


def new(**fields: object) -> ProfileDraft:
    signal = SignalDraft("hands_stacked", "Are the hands stacked?", "yes, no, unknown", "双手叠放吗？", "是，否，未知")
    return replace(ProfileDraft("mine", "Mine", "我的", signals=(signal,)), **fields)  # type: ignore[arg-type]


def test_a_new_checklist_with_a_gate_and_chinese_words() -> None:
    gate = SignalDraft("hands_visible", "Are the hands visible?", "yes no unknown")
    made = checklist_from_draft(new(gate="hands_visible", signals=(gate, *new().signals)))
    assert made.gate == "hands_visible" and [s.signal for s in made.signals] == ["hands_visible", "hands_stacked"]
    words = made.signal("hands_stacked").labels_for("zh")
    assert words.question == "双手叠放吗？" and words.value_words("unknown") == "未知"  # a Chinese comma splits too
    assert made.labels_for("zh").title == "我的"


@pytest.mark.parametrize(
    ("change", "field", "reason"),
    [
        ({"title": "  "}, "title", "title_empty"),
        ({"id": "My List"}, "id", "name_form"),
        ({"id": ""}, "id", "id_empty"),
        ({"title_zh": "我的\u200b"}, "title_zh", "text_control"),
        ({"signals": (SignalDraft("hands_stacked", "", "yes, no"),)}, "question-1", "question_empty"),
        ({"signals": (SignalDraft("", "Stacked?", "yes, no"),)}, "signal-1", "signal_empty"),
        ({"signals": (SignalDraft("Hands", "Stacked?", "yes, no"),)}, "signal-1", "name_form"),
        ({"signals": (SignalDraft("a", "Stacked?", "yes, yes"),)}, "answers-1", "answers_twice"),
        ({"signals": (SignalDraft("a", "Stacked?", ""),)}, "answers-1", "answers_few"),
        ({"signals": (SignalDraft("a", "Stacked?", "Yes, No"),)}, "answers-1", "answers_form"),
        # One answer: every keyframe would get it and "Correct to…" would have nothing to offer.
        ({"signals": (SignalDraft("a", "Stacked?", "yes"),)}, "answers-1", "answers_few"),
        ({"signals": (SignalDraft("a", "Stacked?\x07", "yes, no"),)}, "question-1", "text_control"),
        ({"signals": (SignalDraft("a", "Stacked \ud800?", "yes, no"),)}, "question-1", "text_broken"),
        ({"signals": (SignalDraft("a", "x" * (MAX_QUESTION_CHARS + 1), "yes, no"),)}, "question-1", "text_too_long"),
        ({"signals": (SignalDraft("a", "Stacked?", "yes, no", "叠放吗？", "是"),)}, "answers_zh-1", "answers_zh_count"),
        ({"signals": (SignalDraft("a", "Stacked?", "yes, no", "", "是, 否"),)}, "question_zh-1", "question_zh_missing"),
        (
            {"signals": (SignalDraft("a", "Q?", "yes, no"), SignalDraft("a", "Q?", "yes, no"))},
            "signal-2",
            "signal_twice",
        ),
        (
            {"signals": (SignalDraft("a", "Q?", "yes, no"), SignalDraft("b", "Q?", "yes, no")), "gate": "a"},
            "answers-2",
            "answers_need_unknown",
        ),
    ]
    + [
        ({"signals": (SignalDraft("a", "Q?", "yes, no", min_score=cut),)}, "min_score-1", "min_score_form")
        for cut in ("0", "1.5", "-0.2", "high", "nan", "inf", "120 %")
    ],
)
def test_each_wrong_field_is_named_with_its_reason_and_nothing_is_made(change: dict, field: str, reason: str) -> None:
    with pytest.raises(DraftRefused) as refused:
        checklist_from_draft(new(**change))
    assert [(p.field, p.reason) for p in refused.value.problems] == [(field, reason)]
    assert str(refused.value).startswith("profile ") and field in str(refused.value)


def test_every_wrong_field_is_named_at_once_in_words_of_both_languages() -> None:
    draft = ProfileDraft(
        "My List",
        "",
        "",
        "a",
        "yes",
        (
            SignalDraft("a", "", "yes", "", "是, 否", "1.5"),
            SignalDraft("a", "Q?", "yes, Yes", "", "", "80 %"),
            SignalDraft("b", "Q?", "yes, no", "问？", "是"),
        ),
    )
    problems = draft_problems(draft)
    assert [(p.field, p.reason) for p in problems] == [
        ("id", "name_form"),
        ("title", "title_empty"),
        ("question-1", "question_empty"),
        ("answers-1", "answers_few"),
        ("question_zh-1", "question_zh_missing"),  # its words are not counted against answers to be mended
        ("min_score-1", "min_score_form"),
        ("signal-2", "signal_twice"),
        ("answers-2", "answers_form"),
        ("answers-3", "answers_need_unknown"),
    ]
    for words in (strings_settings.EN, strings_settings.ZH):
        for problem in problems:  # a reason without words would show its code
            assert f"editor_problem_{problem.reason}" in words, problem.reason


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"gate": "nothing"}, "the gate names 'nothing'"),
        ({"signals": tuple(SignalDraft(f"s{i}", "Q?", "yes, unknown") for i in range(9))}, "more than the 8"),
    ],
)
def test_what_only_the_whole_shows_is_refused_with_the_readers_sentence(change: dict, said: str) -> None:
    with pytest.raises(ProfileError) as refused:
        checklist_from_draft(new(**change))
    assert not isinstance(refused.value, DraftRefused) and said in str(refused.value)


@pytest.mark.parametrize(("typed", "cut"), [("0.8", 0.8), ("0,8", 0.8), (" 80 % ", 0.8), ("1", 1.0), ("", None)])
def test_a_score_cut_is_typed_as_people_write_it(typed: str, cut: float | None) -> None:
    made = checklist_from_draft(new(signals=(replace(new().signals[0], min_score=typed),)))
    assert made.signals[0].min_score == cut


def test_a_saved_cut_shows_in_its_field_and_goes_when_the_field_is_emptied() -> None:
    base = checklist_from_draft(new(signals=(replace(new().signals[0], min_score="0.75"),)))
    draft = draft_from_checklist(base)
    assert draft.signals[0].min_score == "0.75"
    assert checklist_from_draft(draft, base) == base
    emptied = replace(draft, signals=(replace(draft.signals[0], min_score=""),))
    assert checklist_from_draft(emptied, base).signals[0].min_score is None  # not kept from the base behind the form


def test_a_chinese_question_alone_is_kept_and_its_answers_read_in_english() -> None:
    made = checklist_from_draft(new(signals=(replace(new().signals[0], answers_zh=""),)))
    words = made.signals[0].labels_for("zh")
    assert words.question == "双手叠放吗？" and words.values == ()


def test_a_shipped_id_is_refused_on_saving(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="shipped profile, kept as a template"):
        save_profile(checklist_from_draft(new(id="cpr_checklist")), tmp_path)
    assert not list(tmp_path.iterdir())


def test_the_editor_collects_its_fields_and_shows_each_refusal_beside_its_field() -> None:
    seen: list[EditedProfile] = []

    def save(edited: EditedProfile) -> ProfileError | None:
        seen.append(edited)
        try:
            checklist_from_draft(edited.draft, edited.base)
        except ProfileError as refused:
            return refused
        return None

    editor = ProfileEditor(strings_settings.EN, save)
    base = load_checklist(PROFILES / "cpr_checklist.json")
    editor.open(EditedProfile(draft_from_checklist(base, "cpr_checklist_copy"), base, copy=True), "/profiles")
    assert editor.root.visible and editor.heading.value == "Edit a copy: cpr_checklist_copy"
    assert editor.gate.value == "hands_visible" and editor.gate_open.value == "yes"
    assert all(f.remove_box.visible and f.remove.visible for f in editor.questions)
    assert editor.draft() == draft_from_checklist(base, "cpr_checklist_copy")
    editor.title.value = ""
    editor.questions[1].answers.value = "yes"
    editor.questions[2].min_score.value = "80 %"
    editor._on_save()
    assert editor.error.value == "Not saved: mend what is marked in red (2)."
    assert editor.title.error == "Give the checklist a title."
    assert editor.questions[1].answers.error.startswith("Give at least two answers")
    assert editor.questions[2].min_score.error is None and editor.id.error is None
    assert editor.root.visible  # the fields stay, to be mended
    editor.title.value = "Mine"
    editor.title.on_change(SimpleNamespace(control=editor.title))  # typing: that field's refusal goes
    assert editor.title.error is None and editor.questions[1].answers.error and not editor.error_box.visible
    editor.questions[1].answers.value = "yes, no, unknown"
    editor._on_save()
    assert not editor.root.visible and seen[-1].draft.signals[2].min_score == "80 %"
    editor.open(EditedProfile(draft_from_checklist(base, "cpr_checklist_copy"), base, copy=True), "/profiles")
    for fields in editor.questions[1:]:
        editor._remove(fields)
    assert len(editor.questions) == 1 and not editor.questions[0].remove_box.visible  # one question stays
    assert editor.questions[0].remove.visible  # a hidden control inside a Semantics breaks the page
    editor.title.value = "Mine"
    editor._on_save()
    assert not editor.root.visible and seen[-1].draft.title == "Mine" and seen[-1].base == base


def test_a_refusal_only_the_whole_shows_goes_under_the_form() -> None:
    editor = ProfileEditor(strings_settings.EN, lambda _: ProfileError("profile cpr_checklist: a shipped profile"))
    base = load_checklist(PROFILES / "cpr_checklist.json")
    editor.open(EditedProfile(draft_from_checklist(base), base, copy=False), "/profiles")
    editor._on_save()
    assert editor.error.value == "Not saved: profile cpr_checklist: a shipped profile" and editor.error_box.visible
    assert all(field.error is None for field in editor._fields().values())


def test_english_words_the_form_does_not_show_are_kept_with_their_question_and_dropped_with_it() -> None:
    """Saved from the editor, a profile lost its English words for the card (not on the form), and the card
    then fell back to the title."""
    base = load_checklist(PROFILES / "hand_position.json")
    draft = draft_from_checklist(base, "mine")
    kept = checklist_from_draft(draft, base).signals[0]
    assert kept.labels_for("en").question == "Is the hand position correct?"
    changed = replace(draft.signals[0], question="Are both hands on the lower sternum?")
    dropped = checklist_from_draft(replace(draft, signals=(changed,)), base).signals[0]
    assert dropped.labels_for("en").question == "" and dropped.labels_for("zh").question == "手的位置正确吗？"
