"""A person's profiles in the config folder beside the shipped templates (app.storage.profile_store)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.profile.dicts import renamed, with_min_score
from app.core.profile.task import ProfileError
from app.storage.locations import settings_path, user_profiles_dir
from app.storage.paths import PROFILES
from app.storage.profile_file import load_checklist
from app.storage.profile_store import list_profiles, save_profile

SHIPPED = sorted(p.name for p in PROFILES.glob("*.json"))


def _own(tmp_path: Path) -> Path:
    return tmp_path / "profiles"


def test_the_shipped_profiles_come_first_and_are_marked_as_templates(tmp_path: Path) -> None:
    entries = list_profiles(_own(tmp_path))  # no folder yet: nothing of the person's
    assert [e.path.name for e in entries] == SHIPPED and all(e.shipped and e.checklist for e in entries)


def test_a_saved_profile_is_listed_and_reads_back_on_the_command_line(tmp_path: Path) -> None:
    checklist = load_checklist(PROFILES / "cpr_checklist.json")
    mine = renamed(with_min_score(checklist, "hands_stacked", 0.75), "my_checklist")
    path = save_profile(mine, _own(tmp_path))
    assert path == _own(tmp_path) / "my_checklist.json"
    assert load_checklist(path) == mine  # what --profile reads
    assert "学员" in path.read_text(encoding="utf-8")  # written as text a person can read and edit
    (entry,) = [e for e in list_profiles(_own(tmp_path)) if not e.shipped]
    assert entry.checklist == mine and entry.error == ""
    assert not list(_own(tmp_path).glob("*.tmp"))


def test_a_shipped_id_is_refused_with_a_sentence_and_nothing_is_written(tmp_path: Path) -> None:
    checklist = load_checklist(PROFILES / "cpr_checklist.json")
    with pytest.raises(ProfileError, match="'cpr_checklist' is a shipped profile, kept as a template"):
        save_profile(with_min_score(checklist, "hands_stacked", 0.5), _own(tmp_path))
    assert not _own(tmp_path).exists()


def test_damaged_and_clashing_files_are_listed_with_why(tmp_path: Path) -> None:
    own = _own(tmp_path)
    own.mkdir()
    (own / "broken.json").write_text("{", encoding="utf-8")
    (own / "thief.json").write_bytes((PROFILES / "hand_position.json").read_bytes())  # a shipped id
    mine = json.loads((PROFILES / "hand_position.json").read_text(encoding="utf-8")) | {"id": "mine"}
    (own / "a.json").write_text(json.dumps(mine), encoding="utf-8")
    (own / "b.json").write_text(json.dumps(mine), encoding="utf-8")  # the same id again
    (own / "notes.txt").write_text("not a profile", encoding="utf-8")
    errors = {e.path.name: e.error for e in list_profiles(own) if not e.shipped}
    assert list(errors) == ["a.json", "b.json", "broken.json", "thief.json"]
    assert errors["a.json"] == ""
    assert errors["b.json"].endswith("the id 'mine' is also the id of a.json")
    assert "broken.json" in errors["broken.json"] and errors["broken.json"] != ""
    assert errors["thief.json"].endswith("the id 'hand_position' is a shipped profile's")


def test_a_write_the_disk_refuses_is_a_sentence_and_the_old_file_stays(tmp_path: Path) -> None:
    own = _own(tmp_path)
    mine = renamed(load_checklist(PROFILES / "hand_position.json"), "mine")
    path = save_profile(mine, own)
    before = path.read_bytes()
    (own / "mine.json.tmp").mkdir()  # the temporary file cannot be created (as root too): EISDIR
    with pytest.raises(ProfileError, match=r"mine\.json: the profile cannot be saved \(Is a directory\)"):
        save_profile(with_min_score(mine, mine.signals[0].signal, 0.5), own)
    assert path.read_bytes() == before


def test_the_profiles_folder_is_beside_the_settings(tmp_path: Path) -> None:
    env = {"FLET_APP_STORAGE_DATA": str(tmp_path)}
    assert user_profiles_dir(env) == settings_path(env).parent / "profiles" == tmp_path / "profiles"


def test_an_id_that_is_not_a_name_is_refused_on_save(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="'id' must be a lower_snake_case name"):
        save_profile(renamed(load_checklist(PROFILES / "hand_position.json"), "../../etc/x"), _own(tmp_path))
    assert not _own(tmp_path).exists()


def test_a_cut_kept_on_a_shipped_profile_is_saved_as_a_copy_and_then_changed_in_place(tmp_path: Path) -> None:
    from app.storage.profile_store import save_cut

    own = _own(tmp_path)
    first = save_cut(PROFILES / "hand_position.json", 0.75, own)
    assert first == own / "hand_position_cut.json"  # the template stays as it is
    saved = load_checklist(first)
    assert saved.id == "hand_position_cut" and saved.signals[0].min_score == 0.75
    assert load_checklist(PROFILES / "hand_position.json").signals[0].min_score is None
    again = save_cut(first, 0.5, own)  # the person's own: changed in place
    assert again == first and load_checklist(first).signals[0].min_score == 0.5
    with pytest.raises(ProfileError, match="a checklist's score cuts are set per signal"):
        save_cut(PROFILES / "cpr_checklist.json", 0.5, own)


def test_a_cut_kept_on_a_checklist_s_signal_goes_into_that_signal_only(tmp_path: Path) -> None:
    from app.storage.profile_store import save_cut

    own = _own(tmp_path)
    shipped = load_checklist(PROFILES / "cpr_checklist.json")
    first = save_cut(PROFILES / "cpr_checklist.json", 0.8, own, signal="hands_stacked")
    assert first == own / "cpr_checklist_cut.json"  # a copy, as for a one-signal profile
    assert load_checklist(first) == renamed(with_min_score(shipped, "hands_stacked", 0.8), "cpr_checklist_cut")
    again = save_cut(first, 0.6, own, signal="hands_visible")  # the person's own: changed in place
    cuts = {spec.signal: spec.min_score for spec in load_checklist(again).signals}
    assert again == first and cuts == {"hands_visible": 0.6, "hand_position_correct": None, "hands_stacked": 0.8}
    with pytest.raises(ProfileError, match="'cpr_checklist_cut' has no signal 'hand_visible'"):
        save_cut(first, 0.5, own, signal="hand_visible")
    with pytest.raises(ProfileError, match="a checklist's score cuts are set per signal; none was named"):
        save_cut(first, 0.5, own)
    assert load_checklist(first).signal("hands_visible").min_score == 0.6  # nothing written by a refusal
