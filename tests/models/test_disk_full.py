"""A full disk: the free-space check, a failing write, and (where the kernel allows) a real tiny tmpfs.

What is simulated: `Disk` is the downloader's only view of free space and of
writes, so the first tests substitute a small free-space figure or a write that
fails with ENOSPC/EIO after N bytes. The last two are real: the CLI runs in a
user+mount namespace (`unshare -rm`) with a tmpfs of a few MB mounted over its
data folder, so statvfs and ENOSPC come from the kernel. They are marked
`enospc` and skipped where unprivileged namespaces or tmpfs mounts are not allowed — a
failure under CI=true.
"""

from __future__ import annotations

import errno
import json
import subprocess
from pathlib import Path

import pytest

from app.models.download import Disk, DiskFull, DownloadError, NotEnoughSpace, part_path
from app.models.mirrors import base_mirror
from app.models.store import ModelState
from tests.models.conftest import (
    CLI,
    ROOT,
    Model,
    assert_nothing_corrupt_installed,
    cli_env,
    make_model,
    make_store,
)
from tests.servers.faulty import Faults, FaultyServer

BIG = "llm.mnn.weight"


class TinyDisk(Disk):
    def __init__(self, free: int) -> None:
        self.free = free

    def free_bytes(self, path: Path) -> int:
        return self.free


class FailingDisk(Disk):
    """Writes succeed until `budget` bytes have gone to files, then fail with `code`."""

    def __init__(self, budget: int, code: int = errno.ENOSPC) -> None:
        self.budget = budget
        self.code = code

    def write(self, fd: int, data: memoryview) -> int:
        if self.budget <= 0:
            raise OSError(self.code, errno.errorcode[self.code])
        n = min(len(data), self.budget)
        self.budget -= n
        return super().write(fd, data[:n])  # short writes on the way, as a real disk may do


def test_not_enough_free_space_fails_before_any_request(tmp_path: Path, model: Model) -> None:
    store = make_store(tmp_path / "models", model, disk=TinyDisk(500_000))
    with FaultyServer(model.served()) as server, pytest.raises(NotEnoughSpace, match="not enough free space"):
        store.download(model.id, [base_mirror(server.url + "/m")])
    assert server.seen() == []


def test_the_free_space_check_counts_what_is_already_downloaded(tmp_path: Path, model: Model) -> None:
    total = sum(map(len, model.files.values()))
    store = make_store(tmp_path / "models", model, disk=TinyDisk(total - 800_000))
    folder = store.folder(model.id)
    folder.mkdir(parents=True)
    part_path(folder / BIG).write_bytes(model.files[BIG][:850_000])
    with FaultyServer(model.served()) as server:
        assert store.download(model.id, [base_mirror(server.url + "/m")]).usable


def test_without_sizes_the_manifest_estimate_is_checked(tmp_path: Path) -> None:
    model = make_model("sizeless", with_sizes=False, approx_total_size=1_200_000)
    store = make_store(tmp_path / "models", model, disk=TinyDisk(1_000_000))
    with FaultyServer(model.served()) as server, pytest.raises(NotEnoughSpace):
        store.download(model.id, [base_mirror(server.url + "/m")])
    assert server.seen() == []


def test_a_disk_that_fills_up_mid_file_stops_cleanly_and_the_next_run_resumes(tmp_path: Path, model: Model) -> None:
    budget = len(model.files["config.json"]) + 400_000
    store = make_store(tmp_path / "models", model, disk=FailingDisk(budget))
    with FaultyServer(model.served()) as server:
        with pytest.raises(DiskFull, match="disk is full") as caught:
            store.download(model.id, [base_mirror(server.url + "/m")])
        assert caught.value.path == BIG
        folder = store.folder(model.id)
        assert not (folder / BIG).exists() and part_path(folder / BIG).stat().st_size == 400_000
        assert_nothing_corrupt_installed(store, model)
        assert store.status(model.id).state is ModelState.PARTIAL

        make_store(tmp_path / "models", model).download(model.id, [base_mirror(server.url + "/m")])
    assert [s.range for s in server.seen(f"/m/{BIG}")] == [None, "bytes=400000-"]
    assert_nothing_corrupt_installed(store, model)
    assert store.status(model.id).usable


def test_another_write_error_is_reported_not_retried(tmp_path: Path, model: Model) -> None:
    store = make_store(tmp_path / "models", model, disk=FailingDisk(100, errno.EIO))
    with FaultyServer(model.served()) as server, pytest.raises(DownloadError, match="cannot write"):
        store.download(model.id, [base_mirror(server.url + "/m")])
    assert len(server.seen("/m/config.json")) == 1
    assert_nothing_corrupt_installed(store, model)


def _run_on_tmpfs(tmp_path: Path, env: dict[str, str], size: str, *download_args: str) -> tuple[int, str, list]:
    data = env["FLET_APP_STORAGE_DATA"]
    Path(data).mkdir(parents=True, exist_ok=True)
    cli = " ".join(f"'{a}'" for a in CLI)
    script = (
        f"mount -t tmpfs -o size={size} tmpfs '{data}' || exit 99\n"
        f"{cli} download {' '.join(download_args)}; code=$?\n"
        f"{cli} list --json\n"
        "exit $code\n"
    )
    proc = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode != 99, proc.stderr
    return proc.returncode, proc.stderr, json.loads(proc.stdout)


@pytest.mark.enospc
@pytest.mark.usefixtures("real_tmpfs")
def test_a_real_tiny_filesystem_is_refused_by_the_free_space_check(tmp_path: Path, model: Model) -> None:
    env = cli_env(tmp_path, tmp_path / "manifests")
    model.write_manifest(tmp_path / "manifests")
    with FaultyServer(model.served()) as server:
        code, stderr, listing = _run_on_tmpfs(tmp_path, env, "1m", model.id, "--mirror", server.url + "/m")
    assert code == 1 and "not enough free space" in stderr
    assert server.seen() == []
    assert listing[0]["state"] == "not installed"


@pytest.mark.enospc
@pytest.mark.usefixtures("real_tmpfs")
def test_a_real_enospc_mid_file_installs_nothing(tmp_path: Path) -> None:
    # No sizes anywhere (manifest or Content-Length), so no check can see it coming: the
    # kernel's ENOSPC is what stops the write. The file is bigger than the CLI's 64 MB reserve.
    big = bytes(range(256)) * (300 * 1024)  # 75 MB
    model = make_model("sizeless", contents={"config.json": b"{}" * 350, BIG: big}, with_sizes=False)
    env = cli_env(tmp_path, tmp_path / "manifests")
    model.write_manifest(tmp_path / "manifests")
    faults = {f"/m/{BIG}": Faults(no_length=True)}
    with FaultyServer(model.served(), faults) as server:
        code, stderr, listing = _run_on_tmpfs(tmp_path, env, "70m", model.id, "--mirror", server.url + "/m")
    assert code == 1 and "disk is full" in stderr and BIG in stderr
    assert listing[0]["verified_files"] == ["config.json"] and listing[0]["pending_files"] == [BIG]
    assert listing[0]["state"] == "partial" and 60_000_000 < listing[0]["partial_bytes"] < len(big)
