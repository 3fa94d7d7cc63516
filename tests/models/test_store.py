"""The model store on disk: quick checks, full verification, import, removal, locks, the job thread."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from app.models.download_job import DownloadJob, Ending
from app.models.importer import ImportRejected
from app.models.locks import ModelBusy
from app.models.marker import MARKER_NAME, read_marker
from app.models.mirrors import base_mirror
from app.models.progress import Phase
from app.models.store import BundledModel, ModelState, ModelStore
from app.models.verify import FileState
from tests.models.conftest import FAST, Model, assert_nothing_corrupt_installed, make_model, make_store
from tests.servers.faulty import Faults, FaultyServer

BIG = "llm.mnn.weight"


def installed(tmp_path: Path, model: Model) -> tuple[ModelStore, Path]:
    """A store with `model` imported from a plain folder (no network needed)."""
    source = tmp_path / "source"
    for path, content in model.files.items():
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        (source / path).write_bytes(content)
    store = make_store(tmp_path / "models", model)
    store.import_folder(model.id, source)
    return store, store.folder(model.id)


def test_a_new_store_has_nothing_installed(tmp_path: Path, model: Model) -> None:
    status = make_store(tmp_path / "models", model).status(model.id)
    assert status.state is ModelState.ABSENT and not status.usable
    assert set(status.pending) == set(model.files) and status.size == sum(map(len, model.files.values()))


def test_the_start_up_check_uses_the_marker_not_a_re_hash(
    tmp_path: Path, model: Model, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, folder = installed(tmp_path, model)
    marker = read_marker(folder)
    assert set(marker) == set(model.files)
    for path, record in marker.items():
        st = (folder / path).stat()
        assert (record.size, record.mtime_ns) == (st.st_size, st.st_mtime_ns)

    def no_hashing(*args: object) -> str:
        raise AssertionError("the quick check must not hash")

    monkeypatch.setattr("app.models.store._hash_file", no_hashing)
    monkeypatch.setattr("app.models.verify.sha256_file", no_hashing)
    assert store.status(model.id).state is ModelState.INSTALLED


def test_a_truncated_file_fails_the_quick_check_and_only_it_is_downloaded(tmp_path: Path, model: Model) -> None:
    store, folder = installed(tmp_path, model)
    with open(folder / BIG, "r+b") as fh:
        fh.truncate(1000)
    status = store.status(model.id)
    assert status.state is ModelState.PARTIAL and status.pending == (BIG,)
    with FaultyServer(model.served()) as server:
        store.download(model.id, [base_mirror(server.url + "/m")])
    assert [s.path for s in server.seen()] == [f"/m/{BIG}"]
    assert store.status(model.id).usable
    assert_nothing_corrupt_installed(store, model)


def test_an_edit_that_keeps_size_and_mtime_is_caught_by_verify_only(tmp_path: Path, model: Model) -> None:
    store, folder = installed(tmp_path, model)
    target = folder / "visual/visual.mnn"
    st = target.stat()
    data = bytearray(target.read_bytes())
    data[4242] ^= 0x01
    target.write_bytes(bytes(data))
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert store.status(model.id).state is ModelState.INSTALLED  # the quick check's documented blind spot
    report = store.verify(model.id)
    assert [(c.path, c.state) for c in report.failures] == [("visual/visual.mnn", FileState.WRONG_HASH)]
    status = store.status(model.id)  # verify rewrote the marker without it
    assert status.state is ModelState.PARTIAL and status.pending == ("visual/visual.mnn",)
    with FaultyServer(model.served()) as server:
        store.download(model.id, [base_mirror(server.url + "/m")])
    assert [s.path for s in server.seen()] == ["/m/visual/visual.mnn"]
    assert_nothing_corrupt_installed(store, model)
    assert store.verify(model.id).ok


def test_a_lost_marker_is_rebuilt_by_hashing_without_downloading(tmp_path: Path, model: Model) -> None:
    store, folder = installed(tmp_path, model)
    (folder / MARKER_NAME).write_text("{not json")
    assert store.status(model.id).state is ModelState.PARTIAL
    with FaultyServer(model.served()) as server:
        status = store.download(model.id, [base_mirror(server.url + "/m")])
    assert server.seen() == [] and status.state is ModelState.INSTALLED


def test_import_copies_verifies_and_installs(tmp_path: Path, model: Model) -> None:
    store, _ = installed(tmp_path, model)
    assert store.status(model.id).state is ModelState.INSTALLED
    assert_nothing_corrupt_installed(store, model)
    assert not (tmp_path / "models" / ".staging" / model.id).exists()


def test_import_follows_symlinks_like_a_hugging_face_cache(tmp_path: Path, model: Model) -> None:
    blobs, snapshot = tmp_path / "blobs", tmp_path / "snapshot"
    for i, (path, content) in enumerate(model.files.items()):
        (blobs / str(i)).parent.mkdir(parents=True, exist_ok=True)
        (blobs / str(i)).write_bytes(content)
        (snapshot / path).parent.mkdir(parents=True, exist_ok=True)
        (snapshot / path).symlink_to(blobs / str(i))
    store = make_store(tmp_path / "models", model)
    store.import_folder(model.id, snapshot)
    assert store.status(model.id).usable and not (store.folder(model.id) / BIG).is_symlink()


@pytest.mark.parametrize("damage", ["flip", "missing", "short"])
def test_import_rejects_a_wrong_file_naming_it_and_installs_nothing(tmp_path: Path, model: Model, damage: str) -> None:
    source = tmp_path / "source"
    for path, content in model.files.items():
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        (source / path).write_bytes(content)
    bad = source / "visual/visual.mnn"
    if damage == "flip":
        data = bytearray(bad.read_bytes())
        data[-1] ^= 0x80
        bad.write_bytes(bytes(data))
    elif damage == "missing":
        bad.unlink()
    else:
        bad.write_bytes(bad.read_bytes()[:-1])
    store = make_store(tmp_path / "models", model)
    with pytest.raises(ImportRejected) as caught:
        store.import_folder(model.id, source)
    assert caught.value.path == "visual/visual.mnn"
    assert not store.folder(model.id).exists() and store.status(model.id).state is ModelState.ABSENT
    assert not any((tmp_path / "models" / ".staging").rglob("*.mnn"))


def test_a_rejected_import_leaves_an_existing_install_untouched(tmp_path: Path, model: Model) -> None:
    store, _ = installed(tmp_path, model)
    other = tmp_path / "other"
    for path in model.files:
        (other / path).parent.mkdir(parents=True, exist_ok=True)
        (other / path).write_bytes(b"not the model")
    with pytest.raises(ImportRejected):
        store.import_folder(model.id, other)
    assert store.status(model.id).state is ModelState.INSTALLED
    assert_nothing_corrupt_installed(store, model)


def test_remove_deletes_files_and_partial_downloads(tmp_path: Path, model: Model) -> None:
    store, folder = installed(tmp_path, model)
    (folder / "extra.part").write_bytes(b"x")
    assert store.remove(model.id) is True
    assert not folder.exists() and store.status(model.id).state is ModelState.ABSENT
    assert store.remove(model.id) is False


def test_the_bundled_model_is_always_installed_and_cannot_be_changed(tmp_path: Path, model: Model) -> None:
    bundled = make_model("demo-bundled", {"config.json": 10}, bundled="demo")
    (tmp_path / "shipped" / "demo").mkdir(parents=True)
    (tmp_path / "shipped" / "demo" / "config.json").write_bytes(bundled.files["config.json"])
    store = ModelStore(
        {bundled.id: bundled.manifest}, tmp_path / "models", bundled_root=tmp_path / "shipped", policy=FAST
    )
    assert store.status(bundled.id).state is ModelState.BUNDLED and store.status(bundled.id).usable
    assert store.folder(bundled.id) == tmp_path / "shipped" / "demo"
    with pytest.raises(BundledModel):
        store.download(bundled.id, [base_mirror("http://127.0.0.1:9")])
    with pytest.raises(BundledModel):
        store.remove(bundled.id)
    with pytest.raises(BundledModel):
        store.import_folder(bundled.id, tmp_path)


def test_a_second_writer_of_the_same_model_fails_fast(tmp_path: Path, model: Model) -> None:
    store = make_store(tmp_path / "models", model)
    other = make_store(tmp_path / "models", model)  # another store object: same files, same lock
    with FaultyServer(model.served()) as server:
        with store.lock(model.id):
            started = time.monotonic()
            with pytest.raises(ModelBusy, match=rf"{model.id} is busy.*pid {os.getpid()}"):
                other.download(model.id, [base_mirror(server.url + "/m")])
            with pytest.raises(ModelBusy):
                other.remove(model.id)
            assert time.monotonic() - started < 1 and server.seen() == []
        assert other.download(model.id, [base_mirror(server.url + "/m")]).usable  # released with its holder


def test_a_download_job_streams_progress_to_the_end(tmp_path: Path, model: Model) -> None:
    store = make_store(tmp_path / "models", model)
    with FaultyServer(model.served()) as server:
        job = DownloadJob(store, model.id, [base_mirror(server.url + "/m")])
        job.start()
        events = list(job.events())
        assert job.join(timeout=10)
    outcome = job.wait()
    assert outcome.ending is Ending.INSTALLED and outcome.status is not None and outcome.status.usable
    assert events[0].phase is Phase.CHECKING and events[-1].phase is Phase.DONE
    done = [e.done for e in events if e.phase is Phase.DOWNLOADING]
    assert done == sorted(done) and events[-1].done == events[-1].total


@pytest.mark.parametrize(("discard", "ending"), [(False, Ending.STOPPED), (True, Ending.CANCELLED)])
def test_a_download_job_can_be_stopped_and_its_thread_ends(
    tmp_path: Path, model: Model, discard: bool, ending: Ending
) -> None:
    store = make_store(tmp_path / "models", model)
    faults = {f"/m/{BIG}": Faults(rate_bps=200_000)}
    with FaultyServer(model.served(), faults) as server:
        job = DownloadJob(store, model.id, [base_mirror(server.url + "/m")])
        job.start()
        for event in job.events():
            if event.file == BIG and event.file_done > 50_000:
                job.stop(discard=discard)
                job.stop()  # e.g. the app closing during a cancel: a discard asked for stays
        assert job.join(timeout=5)
    assert job.wait().ending is ending and event.phase is Phase.CANCELLED
    assert store.status(model.id).partial_bytes > 50_000  # kept by the job: dropping them is its owner's call
    assert not job.running


def test_a_download_job_says_when_the_model_is_busy_or_a_file_could_not_be_fetched(
    tmp_path: Path, model: Model
) -> None:
    """One outcome, computed in the job: the CLI and the Models screen only word it."""
    store = make_store(tmp_path / "models", model)
    with FaultyServer({}) as empty:  # 404 for every file
        with store.lock(model.id):
            busy = DownloadJob(store, model.id, [base_mirror(empty.url + "/m")])
            busy.start()
            outcome = busy.wait()
        assert outcome.ending is Ending.BUSY and isinstance(outcome.error, ModelBusy)
        failing = DownloadJob(store, model.id, [base_mirror(empty.url + "/m")])
        failing.start()
        outcome = failing.wait()
    assert outcome.ending is Ending.FAILED and outcome.failed_file in model.files


def test_progress_is_reported_from_the_job_thread(tmp_path: Path, model: Model) -> None:
    seen_threads: set[str] = set()
    store = make_store(tmp_path / "models", model)
    with FaultyServer(model.served()) as server:
        job = DownloadJob(
            store,
            model.id,
            [base_mirror(server.url + "/m")],
            on_progress=lambda p: seen_threads.add(threading.current_thread().name),
        )
        job.start()
        list(job.events())
        job.join(timeout=10)
    assert seen_threads == {f"download-{model.id}"}
