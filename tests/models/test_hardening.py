"""What a review and a fault probe found in the model store: removal, imports, verification, markers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from app.models import catalog
from app.models.catalog import (
    DEFAULT_MODEL_ID,
    MnnTooOld,
    ModelNotVerified,
    ModelRef,
    check_mnn_version,
    resolve_model,
)
from app.models.download import DownloadError, part_path
from app.models.manifest import manifest_from_dict
from app.models.marker import all_quick_ok
from app.models.mirrors import MirrorError, base_mirror, load_mirror_setting
from app.models.progress import DownloadProgress
from app.models.store import ModelState, ModelStore
from tests.conditions import HANG_S
from tests.models.conftest import FAST, ROOT, Model, make_store
from tests.models.test_cli import env as env
from tests.models.test_cli import models, write_source
from tests.servers.faulty import Faults, FaultyServer

DEMO = ROOT / "model_store" / "keyframe-demo"
DATA = {"FLET_APP_STORAGE_DATA": "/nonexistent-keyframe-test"}


def installed(tmp_path: Path, model: Model) -> ModelStore:
    store = make_store(tmp_path / "models", model)
    store.import_folder(model.id, write_source(tmp_path / "src", model))
    return store


# -- 15: a byte-identical copy of a pinned model is that model ------------------------------------


def test_a_copy_of_the_demo_is_pinned_and_a_damaged_copy_names_its_file(tmp_path: Path) -> None:
    copy = shutil.copytree(DEMO, tmp_path / "copy")
    assert resolve_model(str(copy), DATA).manifest is not None
    data = bytearray((copy / "visual.mnn").read_bytes())
    data[len(data) // 2] ^= 1
    (copy / "visual.mnn").write_bytes(bytes(data))
    ref = resolve_model(str(copy / "config.json"), DATA)
    assert ref.id == DEFAULT_MODEL_ID
    with pytest.raises(ModelNotVerified, match=r"visual\.mnn: wrong_hash"):
        ref.require_verified()


def test_another_model_with_the_same_file_names_stays_unpinned_and_is_cheap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "own-export"
    shutil.copytree(DEMO, other)
    for name in ("llm.mnn.weight", "visual.mnn.weight", "llm_config.json"):  # a fine-tune: new weights
        data = bytearray((other / name).read_bytes())
        data[-1] ^= 1
        (other / name).write_bytes(bytes(data))
    hashed: list[str] = []
    real = catalog.check_file
    monkeypatch.setattr(catalog, "check_file", lambda folder, entry: hashed.append(entry.path) or real(folder, entry))
    ref = resolve_model(str(other), DATA)
    assert ref.manifest is None and ref.id == "local:own-export"
    # Smallest files first, stopping at the second mismatch: the 400 KB weight is never hashed.
    assert "visual.mnn.weight" not in hashed
    hashed.clear()
    unrelated = tmp_path / "unrelated"
    unrelated.mkdir()
    (unrelated / "config.json").write_text("{}")
    assert resolve_model(str(unrelated), DATA).manifest is None
    assert hashed == []  # names and sizes rule it out without reading a byte


# -- 17: an in-place edit that keeps size and mtime is caught at load ------------------------------


def test_an_in_place_edit_keeping_size_and_mtime_is_refused_at_load(tmp_path: Path, model: Model) -> None:
    store = installed(tmp_path, model)
    folder = store.folder(model.id)
    ref = ModelRef(model.id, folder, model.manifest)
    ref.require_verified()
    target = folder / "llm.mnn.weight"
    before = target.stat()
    with open(target, "r+b") as fh:
        fh.seek(1234)
        byte = fh.read(1)
        fh.seek(1234)
        fh.write(bytes([byte[0] ^ 0x01]))
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert target.stat().st_size == before.st_size and target.stat().st_mtime_ns == before.st_mtime_ns
    assert all_quick_ok(folder, model.manifest)  # the start-up marker cannot see it...
    with pytest.raises(ModelNotVerified, match=r"llm\.mnn\.weight: wrong_hash"):
        ref.require_verified()  # ...the load-time check does


# -- 18: a file is never larger than the manifest's total ------------------------------------------


def _unsized(model: Model) -> Model:
    """The real model's kind of manifest: no per-file sizes, only an approximate total."""
    data = json.loads(json.dumps(model.data))
    for entry in data["files"]:
        entry.pop("size", None)
    data["approx_total_size"] = sum(map(len, model.files.values()))
    return replace(model, data=data)


def test_an_endless_body_is_cut_at_the_manifest_total_and_its_part_dropped(tmp_path: Path, model: Model) -> None:
    model = _unsized(model)
    cap = model.data["approx_total_size"] * 101 // 100 + (1 << 20)
    store = make_store(tmp_path / "models", model)
    events: list[DownloadProgress] = []
    # A mirror that streams zeros without end (20 MB/s: bounded even if the cap were missing).
    faults = {"/m/config.json": Faults(endless=True, rate_bps=20e6)}
    with FaultyServer(model.served(), faults) as server:
        with pytest.raises(DownloadError, match="config.json"):
            store.download(model.id, [base_mirror(server.url + "/m")], on_progress=events.append)
    assert max(e.file_done for e in events if e.file == "config.json") <= cap
    assert not part_path(store.folder(model.id) / "config.json").exists()


def test_a_content_length_beyond_the_manifest_total_is_refused_before_the_body(tmp_path: Path, model: Model) -> None:
    model = _unsized(model)
    store = make_store(tmp_path / "models", model)
    events: list[DownloadProgress] = []
    faults = {"/m/config.json": Faults(inflate_to=64 << 20)}  # "config.json is 64 MiB"
    with FaultyServer(model.served(), faults) as server:
        with pytest.raises(DownloadError, match="more than"):
            store.download(model.id, [base_mirror(server.url + "/m")], on_progress=events.append)
    assert max((e.file_done for e in events if e.file == "config.json"), default=0) == 0
    assert not part_path(store.folder(model.id) / "config.json").exists()


def test_a_leftover_part_larger_than_the_model_is_not_resumed(tmp_path: Path, model: Model) -> None:
    model = _unsized(model)
    store = make_store(tmp_path / "models", model)
    folder = store.folder(model.id)
    folder.mkdir(parents=True)
    with open(part_path(folder / "config.json"), "wb") as fh:
        fh.truncate(8 << 20)  # sparse: from a mirror that streamed garbage before the cap existed
    with FaultyServer(model.served()) as server:
        store.download(model.id, [base_mirror(server.url + "/m")])
        assert [s.range for s in server.seen("/m/config.json")] == [None]
    assert store.status(model.id).usable


# -- 19: links planted in the store are never written through --------------------------------------


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "precious.txt"
    path.parent.mkdir()
    path.write_bytes(b"not the store's to touch\n" * 100)
    return path


def test_a_linked_part_file_is_not_written_through(tmp_path: Path, model: Model, victim: Path) -> None:
    store = make_store(tmp_path / "models", model)
    folder = store.folder(model.id)
    folder.mkdir(parents=True)
    before = victim.read_bytes()
    part_path(folder / "llm.mnn.weight").symlink_to(victim)
    with FaultyServer(model.served()) as server:
        status = store.download(model.id, [base_mirror(server.url + "/m")])
    assert status.usable and victim.read_bytes() == before


def test_a_linked_lock_file_is_not_truncated_by_remove(tmp_path: Path, model: Model, victim: Path) -> None:
    store = installed(tmp_path, model)
    before = victim.read_bytes()
    lock = store.lock(model.id).path
    lock.unlink()
    lock.symlink_to(victim)
    assert store.remove(model.id)
    assert victim.read_bytes() == before


@pytest.mark.parametrize("name", [".keyframe-verified.json.tmp", "config.json"])
def test_a_linked_file_in_the_model_folder_is_replaced_not_followed(
    tmp_path: Path, model: Model, victim: Path, name: str
) -> None:
    """A planted link (the marker's temp file, a model file) never lets a download write outside the store."""
    store = make_store(tmp_path / "models", model)
    folder = store.folder(model.id)
    folder.mkdir(parents=True)
    (folder / name).symlink_to(victim)
    before = victim.read_bytes()
    with FaultyServer(model.served()) as server:
        assert store.download(model.id, [base_mirror(server.url + "/m")]).usable
    assert victim.read_bytes() == before
    assert not (folder / name).is_symlink()


def test_a_linked_model_folder_is_refused_and_remove_drops_only_the_link(tmp_path: Path, model: Model) -> None:
    store = make_store(tmp_path / "models", model)
    outside = tmp_path / "outside-folder"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    store.root.mkdir(parents=True)
    store.folder(model.id).symlink_to(outside, target_is_directory=True)
    with FaultyServer(model.served()) as server:
        with pytest.raises(OSError, match="symbolic link"):
            store.download(model.id, [base_mirror(server.url + "/m")])
        assert server.seen() == []
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    assert store.remove(model.id)
    assert not store.folder(model.id).exists() and (outside / "keep.txt").read_text() == "mine"


def test_a_linked_staging_folder_is_not_emptied_by_import(tmp_path: Path, model: Model) -> None:
    store = make_store(tmp_path / "models", model)
    outside = tmp_path / "outside-staging"
    (outside / model.id).mkdir(parents=True)
    (outside / model.id / "keep.txt").write_text("mine")
    store.root.mkdir(parents=True)
    (store.root / ".staging").symlink_to(outside, target_is_directory=True)
    store.import_folder(model.id, write_source(tmp_path / "src", model))
    assert (outside / model.id / "keep.txt").read_text() == "mine"
    assert store.status(model.id).usable


# -- 20: the CLI tells the truth -------------------------------------------------------------------


def test_removing_a_model_that_is_not_installed_fails_despite_a_leftover_folder(
    env: dict[str, str],
    model: Model,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A download that failed before its first byte leaves an empty folder behind.
    with FaultyServer({}) as empty:  # answers 404 to everything
        code, out = models("download", model.id, "--mirror", empty.url + "/m")
    assert code == 1
    capsys.readouterr()
    assert models("remove", model.id) == (1, "")
    assert "not installed" in capsys.readouterr().err


def test_models_download_json_prints_an_error_object_on_failure(
    env: dict[str, str],
    model: Model,
) -> None:
    with FaultyServer({}) as empty:  # answers 404 to everything
        code, out = models("download", model.id, "--mirror", empty.url + "/m", "--json")
    assert code == 1
    record = json.loads(out)
    assert record["ok"] is False and record["id"] == model.id and "could not be downloaded" in record["message"]
    code, out = models("download", "no-such-model", "--json")
    assert code == 2 and json.loads(out)["error"] == "UnknownModel"


@pytest.mark.parametrize("content", [b"{broken", b'{"mirror_base_url": 7}', b'{"mirror_base_url": "ftp://x"}', b"\xff"])
def test_an_unreadable_mirror_setting_is_an_error_not_the_public_mirrors(
    env: dict[str, str],
    model: Model,
    content: bytes,
    capsys: pytest.CaptureFixture[str],
) -> None:
    setting = Path(env["FLET_APP_STORAGE_DATA"]) / "model-mirror.json"
    setting.parent.mkdir(parents=True, exist_ok=True)
    setting.write_bytes(content)
    with pytest.raises(MirrorError, match="mirror setting"):
        load_mirror_setting()
    code, out = models("download", model.id, "--json")
    assert code == 2 and json.loads(out)["error"] == "MirrorError"
    assert "mirror setting" in capsys.readouterr().err
    assert models("mirror")[0] == 2
    assert models("mirror", "--clear")[0] == 0 and load_mirror_setting() is None


def test_a_bundled_model_with_a_damaged_file_is_reported_damaged_not_usable(tmp_path: Path) -> None:
    shipped = shutil.copytree(DEMO, tmp_path / "shipped" / "keyframe-demo")
    manifests = catalog.load_manifests()
    store = ModelStore(manifests, tmp_path / "models", bundled_root=tmp_path / "shipped", policy=FAST)
    assert store.status(DEFAULT_MODEL_ID).state is ModelState.BUNDLED
    (shipped / "tokenizer.mtok").write_bytes((shipped / "tokenizer.mtok").read_bytes()[:-1] + b"!")
    status = store.status(DEFAULT_MODEL_ID)
    assert status.state is ModelState.DAMAGED and not status.usable and status.pending == ("tokenizer.mtok",)


def test_a_manifests_min_mnn_version_is_enforced_before_a_load(tmp_path: Path) -> None:
    data = json.loads((ROOT / "model_store" / "manifests" / "keyframe-demo.json").read_text())
    manifest = manifest_from_dict({**data, "min_mnn_version": "99.1"})
    ref = ModelRef(manifest.id, DEMO, manifest)
    with pytest.raises(MnnTooOld, match=r"needs MNN 99\.1 or newer, but MNN 3\.6\.1 is installed"):
        ref.require_verified(mnn_version="3.6.1")
    with pytest.raises(MnnTooOld):
        ref.require_verified()  # the installed MNN (3.6.x here) is older than 99.1
    for installed, required in [("3.6.1", "3.6.1"), ("3.6.1.post2", "3.6"), ("3.10.0", "3.9.9"), ("4", "3.6.1")]:
        check_mnn_version(replace(manifest, min_mnn_version=required), installed)
    with pytest.raises(MnnTooOld):
        check_mnn_version(replace(manifest, min_mnn_version="3.6.1"), "3.6.0")


def test_the_mnn_version_is_read_without_importing_mnn() -> None:
    code = (
        "import sys; from app.models.catalog import installed_mnn_version as v; "
        "print(v()); assert not any(m == 'MNN' or m.startswith('MNN.') for m in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=HANG_S)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()[:1].isdigit()
