"""Settings: strict validation of every field, the JSON round trip, the controller (saves, refusals,
apply, reset, the worker's backend report), the view without a client, and both string tables."""

from __future__ import annotations

import re
import string
from dataclasses import replace
from pathlib import Path

import pytest

from app.commands.common import BACKENDS as CLI_BACKENDS
from app.core.settings import (
    BACKENDS,
    FIELDS,
    Settings,
    SettingsError,
    changed,
    settings_from_dict,
    settings_to_dict,
    worker_changed,
)
from app.core.vision_size import MAX_USER_SIDE, MIN_USER_SIDE
from app.storage.settings_file import LoadedSettings
from app.ui.settings.controller import SettingsController, WorkerReport, worker_spec
from app.ui.settings.view import SettingsView, backend_line
from app.ui.words.settings import EN, ZH
from app.worker.messages import WorkerSpec

# --- the dataclass and its JSON ---------------------------------------------------------------


def test_defaults() -> None:
    s = Settings()
    assert (s.backend, s.threads, s.image_max_side, s.constrained, s.interval_s, s.language, s.model) == (
        "cpu",
        2,
        None,
        True,
        3,
        "en",
        None,
    )


def test_one_list_of_backends() -> None:
    assert CLI_BACKENDS is BACKENDS


GOOD = {
    "backend": list(BACKENDS),
    "threads": [1, 2, 16],
    "image_max_side": [None, MIN_USER_SIDE, 448, MAX_USER_SIDE],
    "constrained": [True, False],
    "interval_s": [2, 3, 5],
    "language": ["en", "zh"],
    "model": [None, "qwen3-vl-2b-instruct-mnn", "/models/my qwen"],
    "profile": [None, "/profiles/my cut.json"],
}
BAD = {
    "backend": ["gpu", "CPU", "", None, 1],
    "threads": [0, 17, -1, 2.0, "2", None, True, False],
    "image_max_side": [MIN_USER_SIDE - 1, MAX_USER_SIDE + 1, 0, 448.0, "448", True],
    "constrained": [1, 0, "true", None],
    "interval_s": [1, 6, 3.0, 2.5, "3", None, True],
    "language": ["de", "EN", "zh-CN", None, 0],
    "model": ["", "   ", 3, ["a"]],
    "profile": ["", " ", 1, ["p.json"]],
}


@pytest.mark.parametrize(("name", "value"), [(n, v) for n, vs in GOOD.items() for v in vs])
def test_every_allowed_value_is_taken(name: str, value: object) -> None:
    s = settings_from_dict({name: value})
    assert getattr(s, name) == value
    assert settings_from_dict(settings_to_dict(s)) == s


@pytest.mark.parametrize(("name", "value"), [(n, v) for n, vs in BAD.items() for v in vs])
def test_every_bad_value_is_refused_naming_the_field(name: str, value: object) -> None:
    with pytest.raises(SettingsError) as caught:
        settings_from_dict({name: value})
    assert caught.value.field == name
    assert str(caught.value).startswith(name)
    with pytest.raises(SettingsError):
        changed(Settings(), **{name: value})


def test_the_message_says_the_allowed_range() -> None:
    with pytest.raises(SettingsError, match="from 1 to 16"):
        settings_from_dict({"threads": 40})
    with pytest.raises(SettingsError, match=f"from {MIN_USER_SIDE} to {MAX_USER_SIDE}"):
        settings_from_dict({"image_max_side": 4})
    with pytest.raises(SettingsError, match="from 2 to 5"):
        settings_from_dict({"interval_s": 9})
    with pytest.raises(SettingsError, match="cpu, metal, opencl, vulkan"):
        settings_from_dict({"backend": "cuda"})


def test_bool_is_not_an_int() -> None:
    with pytest.raises(SettingsError, match="threads"):
        Settings(threads=True)
    with pytest.raises(SettingsError, match="interval_s"):
        settings_from_dict({"interval_s": True})


def test_unknown_keys_and_non_objects_are_refused() -> None:
    with pytest.raises(SettingsError, match="unknown setting theme") as caught:
        settings_from_dict({"threads": 2, "theme": "dark"})
    assert caught.value.field == "theme"
    for data in ([], "cpu", None, 3, [{"threads": 2}]):
        with pytest.raises(SettingsError, match="JSON object"):
            settings_from_dict(data)
    with pytest.raises(SettingsError, match="unknown setting"):
        changed(Settings(), colour="red")


def test_round_trip_of_a_full_settings_object() -> None:
    s = Settings("opencl", 8, 448, False, 5, "zh", "qwen3-vl-2b-instruct-mnn")
    data = settings_to_dict(s)
    assert list(data) == list(FIELDS)
    assert settings_from_dict(data) == s
    assert settings_from_dict({}) == Settings()  # a missing field takes its default


def test_what_restarts_the_worker() -> None:
    base = Settings()
    for name, value in [("backend", "vulkan"), ("threads", 4), ("image_max_side", 320), ("constrained", False)]:
        assert worker_changed(base, replace(base, **{name: value}))
    assert worker_changed(base, replace(base, model="x"))
    assert worker_changed(base, replace(base, profile="/p/mine.json"))
    assert not worker_changed(base, replace(base, language="zh"))
    assert not worker_changed(base, replace(base, interval_s=5))


def test_worker_spec_keeps_what_settings_do_not_hold() -> None:
    base = WorkerSpec(model="cli-model", profile=Path("p.json"), stall_floor_s=1.0)
    spec = worker_spec(Settings("metal", 4, 320, False), base)
    assert spec == WorkerSpec("cli-model", Path("p.json"), "metal", 4, 320, False, 1.0)
    assert worker_spec(Settings(model="chosen"), base).model == "chosen"
    assert worker_spec(Settings(profile="/p/mine.json"), base).profile == Path("/p/mine.json")  # over --profile


# --- the controller --------------------------------------------------------------------------


class Recorder:
    def __init__(self, fail: OSError | None = None) -> None:
        self.saved: list[Settings] = []
        self.applied: list[Settings] = []
        self.fail = fail

    def save(self, settings: Settings, path: Path) -> None:
        if self.fail is not None:
            raise self.fail
        self.saved.append(settings)

    def apply(self, settings: Settings) -> None:
        self.applied.append(settings)


def controller(rec: Recorder, loaded: LoadedSettings | None = None) -> SettingsController:
    return SettingsController(
        loaded or LoadedSettings(Settings()), path=Path("/nowhere/settings.json"), save=rec.save, apply=rec.apply
    )


def test_every_change_is_saved_and_worker_changes_are_applied() -> None:
    rec = Recorder()
    c = controller(rec)
    seen = []
    c.subscribe(seen.append)
    assert c.update(threads=4)
    assert rec.saved == [Settings(threads=4)] and rec.applied == [Settings(threads=4)]
    assert c.update(language="zh")  # saved, but the worker does not care
    assert rec.saved[-1].language == "zh" and len(rec.applied) == 1
    assert c.update(interval_s=5)  # the practice controller's default interval
    assert rec.applied[-1].interval_s == 5
    assert c.update(threads=4)  # no change: nothing written, nothing restarted
    assert len(rec.saved) == 3 and len(rec.applied) == 2
    assert seen[-1].settings == Settings(threads=4, language="zh", interval_s=5)


def test_a_refused_value_is_said_and_nothing_is_saved() -> None:
    rec = Recorder()
    c = controller(rec)
    assert not c.update(threads=99)
    assert c.state.error_field == "threads" and "from 1 to 16" in c.state.error
    assert not c.update(interval_s=True)
    assert rec.saved == [] and rec.applied == [] and c.settings == Settings()
    assert c.update(threads=3)
    assert c.state.error == ""  # the next accepted change clears it


def test_reset_goes_back_to_the_defaults_but_keeps_the_model() -> None:
    rec = Recorder()
    c = controller(rec, LoadedSettings(Settings("opencl", 8, 448, False, 5, "zh", "m")))
    assert c.reset()
    assert c.settings == Settings(model="m")
    assert rec.saved == [Settings(model="m")] and rec.applied == [Settings(model="m")]


def test_a_failed_save_is_said_and_the_settings_still_hold() -> None:
    rec = Recorder(fail=PermissionError(13, "Permission denied", "/nowhere/settings.json"))
    c = controller(rec)
    assert c.update(threads=6)
    assert c.settings.threads == 6 and "Permission denied" in c.state.save_error
    assert rec.applied == [Settings(threads=6)]


def test_a_failed_apply_is_said() -> None:
    def refuse(_: Settings) -> None:
        raise ValueError("the worker is busy")

    c = SettingsController(LoadedSettings(Settings()), path=Path("/x"), save=lambda s, p: None, apply=refuse)
    assert not c.update(backend="vulkan")
    assert c.settings.backend == "vulkan" and c.state.error_field == "apply" and "busy" in c.state.error


def test_a_file_problem_is_in_the_state_until_dismissed() -> None:
    loaded = LoadedSettings(
        Settings(), "The settings file ... could not be used", "it is not valid JSON", Path("/s.bad")
    )
    c = controller(Recorder(), loaded)
    assert c.state.file_problem == "it is not valid JSON" and c.state.file_kept_as == "/s.bad"
    c.update(threads=3)
    assert c.state.file_problem  # a save does not hide that the old file was set aside
    c.dismiss_problem()
    assert c.state.file_problem == ""


def test_the_worker_report_and_its_words() -> None:
    c = controller(Recorder())
    seen = []
    c.subscribe(seen.append)
    c.worker_update("ready", "opencl", "cpu", "opencl returned an empty answer on the reference image; using CPU")
    c.worker_update("ready", "opencl", "cpu", "opencl returned an empty answer on the reference image; using CPU")
    assert len(seen) == 2  # an unchanged report is not shown again
    line, bad = backend_line(EN, c.state.worker)
    assert line == (
        "Backend in use: CPU (asked: OpenCL — fell back: "
        "opencl returned an empty answer on the reference image; using CPU)"
    )
    assert bad
    assert backend_line(EN, WorkerReport("ready", "cpu", "cpu", "CPU requested")) == ("Backend in use: CPU", False)
    assert backend_line(EN, WorkerReport("ready", "metal", "metal", "metal matched CPU on the reference image"))[0] == (
        "Backend in use: Metal (metal matched CPU on the reference image)"
    )
    assert backend_line(EN, WorkerReport("starting", "vulkan"))[0] == "Backend: checking Vulkan…"
    assert backend_line(EN, WorkerReport("failed", "vulkan", message="boom")) == (
        "The model could not be loaded on Vulkan: boom",
        True,
    )
    assert "已回退" in backend_line(ZH, c.state.worker)[0]


def test_the_view_renders_the_state_without_a_client() -> None:
    rec = Recorder()
    loaded = LoadedSettings(Settings(threads=16, image_max_side=500), "bad", "it is not valid JSON", None)
    c = controller(rec, loaded)
    view = SettingsView(c, cores=16)  # threads up to the cores: here 16, the top
    c.subscribe(view.render)
    assert view.threads_value.value == "16" and view.more.disabled and not view.fewer.disabled
    assert view.image.value == "500" and "500" in [o.key for o in view.image.options]  # a value of the file is offered
    assert view.problem_box.visible and "next change replaces it" in view.problem_text.value
    view._step_threads(1)  # at the top: nothing happens
    assert rec.saved == []
    view._step_threads(-1)
    view._choose_image("auto")
    assert c.settings.threads == 15 and c.settings.image_max_side is None
    c.update(threads=0)
    assert view.error_box.visible and "Not changed" in view.error_text.value
    zh = SettingsView(c, ZH)
    assert zh.title.value == "设置"


def test_no_choice_of_question_is_named_for_what_it_asks() -> None:
    """Started with --profile, Settings called its default "The model's own question", which it was not."""
    c = controller(Recorder())
    view = SettingsView(c)
    c.subscribe(view.render)
    assert view.profile.options[0].text == "The model's own question"
    c.set_started_profile(Path("/profiles/arms_straight.json"))
    assert view.profile.options[0].text == "As the app was started: arms_straight.json"
    assert SettingsView(c, ZH).profile.options[0].text == "启动应用时指定的：arms_straight.json"


# --- the string tables -------------------------------------------------------------------------

NAMES = {"Keyframe", "MNN", "CPU", "GPU", "OpenCL", "Metal", "Vulkan", "JSON"}


def _placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_both_tables_have_the_same_keys_and_placeholders() -> None:
    assert EN.keys() == ZH.keys()
    for key in EN:
        assert _placeholders(EN[key]) == _placeholders(ZH[key]), key


def test_the_chinese_table_has_no_english_words_left() -> None:
    for key, value in ZH.items():
        words = set(re.findall(r"[A-Za-z]+", re.sub(r"\{[a-z_]+\}", "", value)))
        assert words <= NAMES, (key, words - NAMES)


def test_the_settings_offer_the_languages_the_ui_has() -> None:
    from app.core.settings import LANGUAGES as SETTINGS_LANGUAGES
    from app.ui.words import LANGUAGES as UI_LANGUAGES

    assert set(SETTINGS_LANGUAGES) == set(UI_LANGUAGES)


def test_only_what_the_machine_has_is_offered() -> None:
    from app.core.settings import MAX_THREADS, backends_for, threads_cap

    assert backends_for("linux") == ("cpu", "opencl", "vulkan")  # no Metal off Apple
    assert backends_for("darwin") == ("cpu", "metal")
    assert backends_for("linux", current="metal") == ("cpu", "opencl", "vulkan", "metal")  # shown, as chosen
    assert (threads_cap(2), threads_cap(64), threads_cap(None), threads_cap(0)) == (2, MAX_THREADS, MAX_THREADS, 16)


def test_the_profiles_offered_are_the_shipped_ones_then_the_persons(tmp_path: Path) -> None:
    """One-signal profiles and checklists can be chosen; a damaged file is listed but not offered."""
    import json

    from app.storage.paths import PROFILES

    own = tmp_path / "profiles"
    rec = Recorder()
    c = SettingsController(LoadedSettings(Settings()), path=tmp_path / "s.json", save=rec.save, profiles_dir=own)
    shipped = {Path(p.path).name: p for p in c.state.profiles}
    assert sorted(shipped) == sorted(p.name for p in PROFILES.glob("*.json")) and c.state.profiles_dir == str(own)
    assert shipped["hand_position.json"].usable and shipped["cpr_checklist.json"].usable
    assert shipped["cpr_checklist.json"].signals == 3
    own.mkdir()
    mine = json.loads((PROFILES / "hand_position.json").read_text(encoding="utf-8")) | {"id": "mine", "min_score": 0.9}
    (own / "mine.json").write_text(json.dumps(mine), encoding="utf-8")
    (own / "broken.json").write_text("{", encoding="utf-8")
    c.refresh_profiles()
    theirs = {Path(p.path).name: p for p in c.state.profiles if not p.shipped}
    assert theirs["mine.json"].usable and theirs["mine.json"].id == "mine"
    assert not theirs["broken.json"].usable and theirs["broken.json"].error
    assert c.update(profile=str(own / "mine.json")) and rec.saved[-1].profile == str(own / "mine.json")
    view = SettingsView(c, EN)
    view.render(c.state)
    assert view.profile.value == str(own / "mine.json")
    texts = {o.key: (o.text, o.disabled) for o in view.profile.options}
    assert texts[str(own / "broken.json")] == ("broken.json: cannot be used", True)
    assert texts[str(PROFILES / "cpr_checklist.json")] == (
        "CPR checklist: hands on the chest (cpr_checklist.json): a checklist of 3 questions",
        False,
    )
    assert texts[str(own / "mine.json")][1] is False
    assert texts[str(PROFILES / "hand_position.json")][0] == "CPR: hand position on the chest (hand_position.json)"
    c.update(language="zh")
    zh = SettingsView(c, ZH)
    zh.render(c.state)
    words = {o.key: o.text for o in zh.profile.options}
    assert words[str(PROFILES / "hand_position.json")] == "心肺复苏：手在胸部的位置（hand_position.json）"  # zh title


def test_profiles_past_the_listed_ones_are_counted_and_said_and_never_written_over(tmp_path: Path) -> None:
    """250 saved profiles: the first 200 by file name are listed, the screen says 50 more are not and why,
    and a new profile's id is free of the unlisted files too."""
    import json

    from app.storage.paths import PROFILES
    from app.storage.profile_store import MAX_USER_PROFILES

    own = tmp_path / "profiles"
    own.mkdir()
    base = json.loads((PROFILES / "hand_position.json").read_text(encoding="utf-8"))
    names = [f"p{i:03d}" for i in range(MAX_USER_PROFILES + 50)] + ["my_checklist"]  # sorts after p…
    for name in names:
        (own / f"{name}.json").write_text(json.dumps(base | {"id": name}), encoding="utf-8")
    c = SettingsController(LoadedSettings(Settings()), path=tmp_path / "s.json", save=Recorder().save, profiles_dir=own)
    assert len([p for p in c.state.profiles if not p.shipped]) == MAX_USER_PROFILES
    assert c.state.profiles_unlisted == 51
    view = SettingsView(c, EN)
    view.render(c.state)
    said = f"51 more of your profiles in {own} are not listed: the list shows the first 200 by file name."
    assert said in str(view.profile_help.value)
    assert c.new_draft().draft.id == "my_checklist_2"  # my_checklist.json exists, unlisted: not taken over
    zh = SettingsView(c, ZH)
    zh.render(c.state)
    assert f"{own} 中还有 51 个你的配置没有列出" in str(zh.profile_help.value)
    (own / "p000.json").unlink()
    c.refresh_profiles()
    assert c.state.profiles_unlisted == 50


def test_a_profile_written_for_another_model_is_said_under_the_choice(tmp_path: Path) -> None:
    """An instruct checklist asked of the demo model answers, but maybe wrongly: Settings says so, in both
    languages, and says nothing for a profile written for the loaded model or one that names no model."""
    from app.storage.paths import PROFILES

    c = SettingsController(LoadedSettings(Settings()), path=tmp_path / "s.json", save=Recorder().save)
    view = SettingsView(c, EN)
    instruct = str(PROFILES / "cpr_checklist_instruct.json")
    c.update(profile=instruct)
    view.render(c.state)
    assert view.profile_fit.value == ""  # the loaded model is not known yet: no guess
    c.worker_update("ready", "cpu", "cpu", "", profile_path=instruct, model_id="keyframe-demo-cpr")
    view.render(c.state)
    assert view.profile_fit.value == (
        "Written for qwen3-vl-2b-instruct-mnn; the model in use (keyframe-demo-cpr) may answer these questions wrongly."
    )
    assert view._profile_fit_box.visible
    zh = SettingsView(c, ZH)
    zh.render(c.state)
    assert "qwen3-vl-2b-instruct-mnn" in zh.profile_fit.value and "可能答错" in zh.profile_fit.value
    c.update(profile=str(PROFILES / "cpr_checklist.json"))
    view.render(c.state)
    assert view.profile_fit.value == "" and not view._profile_fit_box.visible
    c.worker_update("ready", "cpu", "cpu", "", profile_path=instruct, model_id="qwen3-vl-2b-instruct-mnn")
    c.update(profile=None)  # the worker's own profile, written for the model it loaded
    view.render(c.state)
    assert view.profile_fit.value == ""
