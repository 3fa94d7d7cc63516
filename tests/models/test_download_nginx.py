"""The normal and resume paths against a real nginx on 127.0.0.1 (its own Range handling)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from app.models.download import Cancelled, part_path
from app.models.mirrors import base_mirror
from app.models.progress import DownloadProgress, Phase
from app.models.store import ModelState
from tests.conditions import wait_until
from tests.models.conftest import Model, assert_nothing_corrupt_installed, make_model, make_store
from tests.servers.nginx import Nginx

pytestmark = pytest.mark.nginx  # a real nginx; a skip fails under CI=true (tests/conftest.py)

BIG = "llm.mnn.weight"


def publish(nginx: Nginx, model: Model) -> None:
    for path, content in model.files.items():
        target = nginx.docroot / "m" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)


def test_download_installs_every_file_once_and_a_second_run_fetches_nothing(
    tmp_path: Path, model: Model, nginx: Nginx
) -> None:
    publish(nginx, model)
    store = make_store(tmp_path / "models", model)
    events: list[DownloadProgress] = []
    status = store.download(model.id, [base_mirror(nginx.url + "/m")], on_progress=events.append)
    assert status.state is ModelState.INSTALLED and status.pending == ()
    assert_nothing_corrupt_installed(store, model)
    assert wait_until(lambda: len(nginx.log()) == len(model.files))
    assert sorted((e.path, e.status, e.sent, e.range) for e in nginx.log()) == sorted(
        (f"/m/{p}", 200, len(c), None) for p, c in model.files.items()
    )
    assert events[-1].phase is Phase.DONE and events[-1].fraction == 1.0

    again = store.download(model.id, [base_mirror(nginx.url + "/m")])
    assert again.state is ModelState.INSTALLED
    assert len(nginx.log()) == len(model.files)  # verified files are never fetched again


def test_a_cancelled_download_resumes_with_only_the_missing_bytes(tmp_path: Path, model: Model, nginx: Nginx) -> None:
    publish(nginx, model)
    store = make_store(tmp_path / "models", model)
    cancel = threading.Event()

    def stop_midway(p: DownloadProgress) -> None:
        if p.file == BIG and p.file_done > 150_000:
            cancel.set()

    # /slow/ is rate-limited by nginx, so the cancel lands mid-file.
    with pytest.raises(Cancelled):
        store.download(model.id, [base_mirror(nginx.url + "/slow/m")], cancel=cancel, on_progress=stop_midway)
    have = part_path(store.folder(model.id) / BIG).stat().st_size
    size = len(model.files[BIG])
    assert 150_000 < have < size
    status = store.status(model.id)
    assert status.state is ModelState.PARTIAL and status.partial_bytes == have and BIG in status.pending
    assert wait_until(lambda: any(e.path == f"/slow/m/{BIG}" for e in nginx.log()))

    store.download(model.id, [base_mirror(nginx.url + "/m")])
    assert wait_until(lambda: any(e.path.startswith("/m/") for e in nginx.log()))
    resumed = [e for e in nginx.log() if e.path.startswith("/m/")]
    # Only the rest of the interrupted file and the file never started; config.json was done.
    assert sorted((e.path, e.status, e.range, e.sent) for e in resumed) == sorted(
        [
            (f"/m/{BIG}", 206, f"bytes={have}-", size - have),
            ("/m/visual/visual.mnn", 200, None, len(model.files["visual/visual.mnn"])),
        ]
    )
    assert store.status(model.id).usable
    assert_nothing_corrupt_installed(store, model)


def test_a_part_left_by_a_killed_run_is_resumed(tmp_path: Path, model: Model, nginx: Nginx) -> None:
    publish(nginx, model)
    store = make_store(tmp_path / "models", model)
    folder = store.folder(model.id)
    folder.mkdir(parents=True)
    part_path(folder / BIG).write_bytes(model.files[BIG][:333_333])
    store.download(model.id, [base_mirror(nginx.url + "/m")])
    assert wait_until(lambda: len(nginx.log()) == len(model.files))
    big = [e for e in nginx.log() if e.path == f"/m/{BIG}"]
    assert [(e.status, e.range, e.sent) for e in big] == [(206, "bytes=333333-", len(model.files[BIG]) - 333_333)]
    assert_nothing_corrupt_installed(store, model)


def test_a_complete_part_without_a_manifest_size_is_finished_by_a_416(tmp_path: Path, nginx: Nginx) -> None:
    model = make_model("sizeless", with_sizes=False)
    publish(nginx, model)
    store = make_store(tmp_path / "models", model)
    folder = store.folder(model.id)
    folder.mkdir(parents=True)
    size = len(model.files[BIG])
    part_path(folder / BIG).write_bytes(model.files[BIG])  # killed after the last byte, before the rename
    store.download(model.id, [base_mirror(nginx.url + "/m")])
    assert wait_until(lambda: len(nginx.log()) == len(model.files))
    assert [(e.status, e.range) for e in nginx.log() if e.path == f"/m/{BIG}"] == [(416, f"bytes={size}-")]
    assert store.status(model.id).usable
    assert_nothing_corrupt_installed(store, model)


def test_a_complete_part_with_a_known_size_needs_no_request(tmp_path: Path, model: Model, nginx: Nginx) -> None:
    publish(nginx, model)
    store = make_store(tmp_path / "models", model)
    folder = store.folder(model.id)
    folder.mkdir(parents=True)
    part_path(folder / BIG).write_bytes(model.files[BIG])
    store.download(model.id, [base_mirror(nginx.url + "/m")])
    assert wait_until(lambda: len(nginx.log()) == len(model.files) - 1)
    assert all(e.path != f"/m/{BIG}" for e in nginx.log())
    assert store.status(model.id).usable
