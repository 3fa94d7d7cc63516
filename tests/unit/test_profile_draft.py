"""The profile editor's fields into a checklist: every shipped profile reads back unchanged, a copy keeps
what the form does not show, and each way a form can be wrong is refused with a sentence naming it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.core.profile_draft import (
    MAX_QUESTION_CHARS,
    ProfileDraft,
    SignalDraft,
    checklist_from_draft,
    draft_from_checklist,
)
from app.core.profiles import ProfileError
from app.paths import PROFILES
from app.profile_file import load_checklist
from app.profile_store import save_profile
from app.ui import strings_settings
from app.ui.profile_editor import ProfileEditor
from app.ui.settings_controller import EditedProfile

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
    ("change", "said"),
    [
        ({"title": "  "}, "the title is empty"),
        ({"id": "My List"}, "'id' must be a lower_snake_case name"),
        (
            {"signals": (SignalDraft("hands_stacked", "", "yes, no"),)},
            "question 1 (hands_stacked): the question is empty",
        ),
        ({"signals": (SignalDraft("Hands", "Stacked?", "yes, no"),)}, "'signal' must be a lower_snake_case name"),
        ({"signals": (SignalDraft("a", "Stacked?", "yes, yes"),)}, "'values' has duplicates"),
        ({"signals": (SignalDraft("a", "Stacked?", ""),)}, "'values' must be a non-empty list"),
        # One answer: every keyframe would get it and "Correct to…" would have nothing to offer.
        ({"signals": (SignalDraft("a", "Stacked?", "yes"),)}, "'values' needs at least two answers"),
        ({"signals": (SignalDraft("a", "Stacked?\x07", "yes"),)}, "invisible control characters (U+0007)"),
        ({"signals": (SignalDraft("a", "Stacked \ud800?", "yes"),)}, "cannot be encoded"),
        ({"signals": (SignalDraft("a", "x" * (MAX_QUESTION_CHARS + 1), "yes"),)}, "at most 2000"),
        (
            {"signals": (SignalDraft("a", "Stacked?", "yes, no", "叠放吗？", "是"),)},
            "2 answers (yes, no) but 1 Chinese",
        ),
        ({"signals": (SignalDraft("a", "Stacked?", "yes, no", "", "是, 否"),)}, "but not the Chinese question"),
        ({"gate": "nothing"}, "the gate names 'nothing'"),
        (
            {"signals": (SignalDraft("a", "Q?", "yes, no"), SignalDraft("b", "Q?", "yes, no")), "gate": "a"},
            "cannot answer 'unknown'",
        ),
        ({"signals": tuple(SignalDraft(f"s{i}", "Q?", "yes, unknown") for i in range(9))}, "more than the 8"),
    ],
)
def test_each_wrong_form_is_refused_with_a_sentence(change: dict, said: str) -> None:
    with pytest.raises(ProfileError) as refused:
        checklist_from_draft(new(**change))
    assert said in str(refused.value) and str(refused.value).startswith("profile ")


def test_a_shipped_id_is_refused_on_saving(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="shipped profile, kept as a template"):
        save_profile(checklist_from_draft(new(id="cpr_checklist")), tmp_path)
    assert not list(tmp_path.iterdir())


def test_the_editor_collects_its_fields_and_shows_a_refusal() -> None:
    seen: list[EditedProfile] = []

    def save(edited: EditedProfile) -> str | None:
        seen.append(edited)
        return "profile mine: the title is empty" if not edited.draft.title else None

    editor = ProfileEditor(strings_settings.EN, save)
    base = load_checklist(PROFILES / "cpr_checklist.json")
    editor.open(EditedProfile(draft_from_checklist(base, "cpr_checklist_copy"), base, copy=True), "/profiles")
    assert editor.root.visible and editor.heading.value == "Edit a copy: cpr_checklist_copy"
    assert editor.gate.value == "hands_visible" and editor.gate_open.value == "yes"
    assert all(f.remove_box.visible and f.remove.visible for f in editor.questions)
    assert editor.draft() == draft_from_checklist(base, "cpr_checklist_copy")
    editor.title.value = ""
    editor._on_save()
    assert editor.error_box.visible and "Not saved: profile mine: the title is empty" in editor.error.value
    assert editor.root.visible  # the fields stay, to be mended
    editor.title.value = "Mine"
    editor.title.on_change(None)  # typing into any field: the refusal of the old fields goes
    assert not editor.error_box.visible
    for fields in editor.questions[1:]:
        editor._remove(fields)
    assert len(editor.questions) == 1 and not editor.questions[0].remove_box.visible  # one question stays
    assert editor.questions[0].remove.visible  # a hidden control inside a Semantics breaks the page
    editor._on_save()
    assert not editor.root.visible and seen[-1].draft.title == "Mine" and seen[-1].base == base


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
