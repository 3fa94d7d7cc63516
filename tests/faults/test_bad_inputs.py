"""Bad-input corpus, still images: each case is a per-file ImageRejected with a sensible
reason or a correct decode; never another exception, never a hang."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.frames.intake import ImageRejected, read_image_file
from tests.faults.corpus import DECODED, Case, image_cases, path_cases, run_bounded

PER_CASE_S = 10.0


def _judge(case: Case) -> str | None:
    """None when the case behaves, else what went wrong."""
    try:
        image = run_bounded(lambda: read_image_file(case.path), PER_CASE_S)
    except ImageRejected as exc:
        if exc.reason not in case.reasons:
            return f"rejected as {exc.reason!r} ({exc}), expected {sorted(case.reasons) or 'a decode'}"
        json.dumps({"message": str(exc)}, ensure_ascii=False).encode("utf-8")  # printable for any writer
        return None
    except AssertionError as exc:
        return str(exc)
    except Exception as exc:
        return f"raised {type(exc).__name__}: {exc}"
    if case.reasons and DECODED not in case.reasons:
        return f"decoded {image.width}x{image.height}, expected {sorted(case.reasons)}"
    try:
        (case.check or (lambda _: None))(image)
    except AssertionError as exc:
        return f"wrong decode: {exc}"
    return None


def _run(cases: list[Case]) -> None:
    problems = {case.name: p for case in cases if (p := _judge(case)) is not None}
    assert not problems, "\n".join(f"{name}: {p}" for name, p in problems.items())


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> list[Case]:
    return image_cases(tmp_path_factory.mktemp("corpus"))


def test_image_corpus(images: list[Case]) -> None:
    start = time.perf_counter()
    _run(images)
    assert len(images) >= 80
    print(f"{len(images)} image cases in {time.perf_counter() - start:.2f} s")


def test_names_and_special_files(tmp_path: Path) -> None:
    cases = path_cases(tmp_path)
    _run(cases)
    assert len(cases) >= 15


def test_a_batch_goes_on_past_every_bad_file(images: list[Case], tmp_path: Path) -> None:
    """The whole corpus as one folder: every file has an outcome, in name order, nothing raises."""
    from app.frames.listing import list_inputs

    folder = images[0].path.parent
    report = list_inputs([str(folder)])
    outcomes = []
    for item in report.items:
        assert item.error is None
        try:
            read_image_file(item.path)
            outcomes.append("ok")
        except ImageRejected as exc:
            outcomes.append(exc.reason)
    assert len(outcomes) == len(images) and not report.skipped
    assert outcomes.count("ok") >= 50 and len(set(outcomes)) >= 7


# ---- the app's own small files ----------------------------------------------------------------------
# Each reader is handed a FIFO (open() would wait for a writer for ever), a device (read whole:
# /dev/zero never ends) and a regular file one byte over its cap. It must refuse each at once
# with a sentence naming the file; never hang, never read on.

DEMO_MODEL = Path(__file__).resolve().parents[2] / "model_store" / "keyframe-demo"


def _refusal(read: Callable[[], object], error: type[Exception]) -> str:
    try:
        run_bounded(read, PER_CASE_S)
    except error as exc:
        return str(exc)
    raise AssertionError("accepted")


def _settings(path: Path) -> str:
    from app.storage.settings_file import load_settings

    return run_bounded(lambda: load_settings(path), PER_CASE_S).problem or "accepted"


def _profile(path: Path) -> str:
    from app.core.profile.task import ProfileError
    from app.storage.profile_file import load_profile

    return _refusal(lambda: load_profile(path), ProfileError)


def _labels(path: Path) -> str:
    from app.evaluation.labels import LabelsFileError, read_labels_bytes

    return _refusal(lambda: read_labels_bytes(path), LabelsFileError)


def _mirror_setting(path: Path) -> str:
    from app.models.mirrors import MirrorError, load_download_settings

    return _refusal(lambda: load_download_settings({"FLET_APP_STORAGE_DATA": str(path.parent)}), MirrorError)


def _manifest(path: Path) -> str:
    from app.models.manifest import ManifestError, load_manifest

    return _refusal(lambda: load_manifest(path), ManifestError)


def _model_folder(path: Path) -> str:
    from app.engine.model_folder import ModelFolderError, open_model_folder

    return _refusal(lambda: open_model_folder(path.parent), ModelFolderError)


def _tokenizer(path: Path) -> str:
    from app.engine.tokenizer_header import TokenizerHeaderError, read_tokenizer_header

    return _refusal(lambda: read_tokenizer_header(path), TokenizerHeaderError)


@dataclass(frozen=True)
class SmallFile:
    name: str  # the file's name where the app looks for it
    read: Callable[[Path], str]  # the app reading it: its refusal as shown to the user
    cap: int | None  # None: only its first lines are read, so its size is not refused
    model_folder: bool = False  # lives in a copy of the demo model's folder


SMALL_FILES = [
    SmallFile("settings.json", _settings, 64 * 1024),
    SmallFile("profile.json", _profile, 256 * 1024),
    SmallFile("labels.csv", _labels, 16 * 1024 * 1024),
    SmallFile("model-mirror.json", _mirror_setting, 64 * 1024),
    SmallFile("manifest.json", _manifest, 1024 * 1024),
    SmallFile("llm_config.json", _model_folder, 1024 * 1024, model_folder=True),
    SmallFile("config.json", _model_folder, 1024 * 1024, model_folder=True),
    SmallFile("tokenizer.mtok", _tokenizer, None),
]


@pytest.fixture
def fifos() -> Iterator[list[Path]]:
    """FIFOs a test makes; at the end a writer opens each, so a reader stuck in open() (the bug) is let go."""
    made: list[Path] = []
    yield made
    for fifo in made:
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # ENXIO: no reader waits (the fix), or it is gone
            pass


def _place(tmp_path: Path, small: SmallFile) -> Path:
    folder = Path(shutil.copytree(DEMO_MODEL, tmp_path / "model")) if small.model_folder else tmp_path
    path = folder / small.name
    path.unlink(missing_ok=True)
    return path


@pytest.mark.parametrize("small", SMALL_FILES, ids=lambda s: s.name)
def test_a_fifo_in_place_of_a_small_file_is_refused_at_once(
    small: SmallFile, tmp_path: Path, fifos: list[Path]
) -> None:
    path = _place(tmp_path, small)
    os.mkfifo(path)
    fifos.append(path)
    message = small.read(path)
    assert path.name in message and "not a regular file" in message


@pytest.mark.parametrize("small", SMALL_FILES, ids=lambda s: s.name)
def test_a_device_in_place_of_a_small_file_is_refused_unread(small: SmallFile, tmp_path: Path) -> None:
    path = _place(tmp_path, small)
    path.symlink_to("/dev/null")  # /dev/zero would be read until memory runs out: the CLI test does that
    message = small.read(path)
    assert path.name in message and "not a regular file" in message


@pytest.mark.parametrize("small", [s for s in SMALL_FILES if s.cap is not None], ids=lambda s: s.name)
def test_a_small_file_over_its_cap_is_refused(small: SmallFile, tmp_path: Path) -> None:
    path = _place(tmp_path, small)
    assert small.cap is not None
    path.write_bytes(b" " * (small.cap + 1))
    message = small.read(path)
    assert path.name in message and "over the limit" in message


@pytest.mark.parametrize("kind", ["fifo", "device", "over its cap"])
def test_an_unusable_verified_marker_means_nothing_is_verified(kind: str, tmp_path: Path, fifos: list[Path]) -> None:
    """The marker only saves re-hashing: one that cannot be used costs that, never a hang."""
    from app.models.marker import MARKER_NAME, read_marker

    path = tmp_path / MARKER_NAME
    if kind == "fifo":
        os.mkfifo(path)
        fifos.append(path)
    elif kind == "device":
        path.symlink_to("/dev/null")
    else:
        path.write_bytes(b" " * (1024 * 1024 + 1))
    assert run_bounded(lambda: read_marker(tmp_path), PER_CASE_S) == {}


@pytest.mark.parametrize("reader", ["load_session", "session_locked", "append", "sha256_file"])
def test_a_fifo_in_place_of_a_session_log_or_a_model_file_is_refused_at_once(
    reader: str, tmp_path: Path, fifos: list[Path]
) -> None:
    """The files read whole or hashed that are not small: a session log (read, locked for a review,
    appended to) and a model's file (hashed by verify)."""
    from app.core.session import KeyframeSkipped, SkipReason
    from app.models.verify import sha256_file
    from app.session.store import SessionLog, load_session, session_locked

    path = tmp_path / "s.jsonl"
    os.mkfifo(path)
    fifos.append(path)

    def lock() -> None:
        with session_locked(path):
            pass

    def append() -> None:
        with SessionLog(path) as log:
            log.append(
                KeyframeSkipped(event_id="e", t=0.0, wall_time=0.0, keyframe_id="k", reason=SkipReason.UNCHANGED)
            )

    read = {"load_session": lambda: load_session(path), "session_locked": lock, "append": append}
    read["sha256_file"] = lambda: sha256_file(path)
    with pytest.raises(OSError, match="not a regular file"):
        run_bounded(read[reader], PER_CASE_S)
