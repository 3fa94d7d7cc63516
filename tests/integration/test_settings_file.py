"""The settings file on a real disk (missing, corrupt, invalid, unreadable, atomic save, reload), and
settings applied to the practice controller's real worker."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app.core.settings import Settings, settings_to_dict
from app.storage.locations import settings_path
from app.storage.settings_file import load_settings, save_settings
from app.ui.practice.controller import PracticeController
from app.ui.settings.controller import SettingsController, worker_spec
from app.worker.messages import WorkerSpec
from tests.integration.conftest import wait


def test_where_the_file_lives(tmp_path: Path) -> None:
    assert settings_path({"FLET_APP_STORAGE_DATA": str(tmp_path)}) == tmp_path / "settings.json"
    assert settings_path({}).name == "settings.json" and "Keyframe" in str(settings_path({}))
    # The tests' isolated storage (tests/conftest.py) is what the app uses here.
    assert settings_path() == Path(os.environ["FLET_APP_STORAGE_DATA"]) / "settings.json"


def test_a_missing_file_is_the_defaults_without_a_problem(tmp_path: Path) -> None:
    loaded = load_settings(tmp_path / "settings.json")
    assert loaded.settings == Settings() and loaded.problem is None
    assert not (tmp_path / "settings.json").exists()  # reading writes nothing


def test_save_then_reload(tmp_path: Path) -> None:
    path = tmp_path / "config" / "settings.json"
    chosen = Settings("vulkan", 6, 320, False, 4, "zh", "qwen3-vl-2b-instruct-mnn")
    save_settings(chosen, path)
    assert json.loads(path.read_text()) == settings_to_dict(chosen)
    assert load_settings(path).settings == chosen
    assert not path.with_name("settings.json.tmp").exists()


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b'{"threads": 4', "not valid JSON"),
        (b"", "not valid JSON"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b'{"threads": 99}', "threads must be a whole number from 1 to 16"),
        (b'{"threads": true}', "threads must be"),
        (b'{"backend": "cuda"}', "backend must be one of"),
        (b'{"theme": "dark"}', "unknown setting theme"),
        (b"[1, 2]", "JSON object"),
        (b" " * (70 * 1024), "70 KB, over the limit of 64 KB"),
    ],
)
def test_an_unusable_file_gives_defaults_a_problem_and_is_kept(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    loaded = load_settings(path)
    assert loaded.settings == Settings()
    assert loaded.problem is not None and reason in loaded.problem and reason in loaded.reason
    bad = tmp_path / "settings.json.bad"
    assert loaded.kept_as == bad and bad.read_bytes() == content and str(bad) in loaded.problem
    # The next save writes a new file and never touches the kept one.
    save_settings(Settings(threads=3), path)
    assert bad.read_bytes() == content and load_settings(path).settings == Settings(threads=3)


def test_a_folder_in_place_of_the_file_is_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.mkdir()
    loaded = load_settings(path)
    assert loaded.settings == Settings() and "cannot be read" in (loaded.problem or "")
    assert (tmp_path / "settings.json.bad").is_dir()


def test_a_file_that_cannot_be_opened_is_a_problem(tmp_path: Path) -> None:
    """A symlink loop: open() fails (ELOOP) for every user, root included (chmod 0 would not stop root)."""
    path = tmp_path / "settings.json"
    path.symlink_to(path)
    loaded = load_settings(path)
    assert loaded.settings == Settings() and "cannot be read" in (loaded.problem or "")


def test_an_interrupted_save_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "settings.json"
    save_settings(Settings(threads=4), path)

    def crash(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)  # the rename never happens: a crash before it
    with pytest.raises(OSError):
        save_settings(Settings(threads=8), path)
    monkeypatch.undo()
    assert load_settings(path).settings == Settings(threads=4)


def test_a_link_planted_at_the_temporary_name_is_not_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    path = tmp_path / "settings.json"
    path.with_name("settings.json.tmp").symlink_to(outside)
    save_settings(Settings(threads=5), path)
    assert outside.read_text() == "keep me" and load_settings(path).settings == Settings(threads=5)


def test_the_controller_survives_a_reload(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    first = SettingsController(path=path)
    assert first.update(threads=7) and first.update(language="zh") and first.update(interval_s=2)
    again = SettingsController(path=path)
    assert again.settings == Settings(threads=7, interval_s=2, language="zh")
    assert again.state.file_problem == ""


def test_the_controller_shows_a_corrupt_file_and_keeps_it(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{not json")
    c = SettingsController(path=path)
    assert "not valid JSON" in c.state.file_problem and c.state.file_kept_as.endswith("settings.json.bad")
    assert c.update(threads=3)
    assert (tmp_path / "settings.json.bad").read_text() == "{not json"
    assert load_settings(path).settings == Settings(threads=3)


# --- applied to the real worker ------------------------------------------------------------------


def test_settings_restart_the_worker_only_when_its_spec_changes(tmp_path: Path) -> None:
    # Clicks closer than the quiet time (the app's: 0.4 s) are one burst. On a busy machine this test's
    # were once further apart (two restarts, generation 2): with 5 s they are one burst at any speed.
    practice = PracticeController(WorkerSpec(), tmp_path / "sessions", restart_quiet_s=5.0)
    base = WorkerSpec()
    settings = SettingsController(
        path=tmp_path / "settings.json",
        apply=lambda s: practice.apply_settings(worker_spec(s, base), s.interval_s),
    )
    practice.subscribe(
        lambda s: settings.worker_update(s.worker_status, s.backend_asked, s.backend, s.backend_note, s.worker_message)
    )
    practice.start()
    try:
        ready = wait(practice, lambda s: s.worker_status == "ready")
        assert (ready.backend_asked, ready.backend) == ("cpu", "cpu")
        assert settings.state.worker.status == "ready" and settings.state.worker.used == "cpu"
        first_pid = practice._pipeline.worker_pid

        settings.update(interval_s=5)  # not the worker's business: same worker
        assert practice.state.interval_s == 5 and practice._pipeline.worker_pid == first_pid

        practice.start_camera()  # a running session is stopped before the worker is replaced
        assert practice.state.running
        for threads in (3, 4, 1):  # a burst of clicks: one restart, on the newest settings
            settings.update(threads=threads, image_max_side=224)
        assert not practice.state.running
        assert practice.wait_settled(30)
        ready = wait(practice, lambda s: s.worker_status == "ready")
        assert practice._pipeline.worker_pid not in (None, first_pid)
        assert practice._generation == 1 and practice._spec.threads == 1
        assert settings.state.worker.status == "ready"

        # Sessions keep working on the new worker.
        practice.set_interval(2)
        stills = sorted((Path(__file__).resolve().parents[2] / "assets" / "examples").glob("*.jpg"))[:1]
        practice.start_stills([(p.name, p.read_bytes()) for p in stills], "stills")
        done = wait(practice, lambda s: not s.running and len(s.session.timeline) == 1)
        assert done.session.timeline[0].event.observation in ("yes", "no", "unknown")

        # More threads, then fewer again before the settings are quiet: the worker is not restarted.
        pid = practice._pipeline.worker_pid
        settings.update(threads=2)
        settings.update(threads=1)
        assert practice.wait_settled(30)
        assert practice._pipeline.worker_pid == pid and practice._generation == 1
    finally:
        practice.shutdown()
