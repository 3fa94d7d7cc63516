"""`models` commands: in-process for the quick ones, real processes for kill/resume and locking."""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from app.commands.models import add_models_parser, run_models
from app.models.download import part_path
from app.storage.locations import downloaded_models_dir
from tests.conditions import wait_until
from tests.models.conftest import CLI, ROOT, Model, cli_env, make_model, run_cli
from tests.servers.faulty import Faults, FaultyServer
from tests.servers.forward_proxy import ForwardProxy

BIG = "llm.mnn.weight"


@pytest.fixture
def env(tmp_path: Path, model: Model, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The test's own manifests (one downloadable model, one bundled) and data folder."""
    manifests = tmp_path / "manifests"
    model.write_manifest(manifests)
    # The bundled entry pins the real shipped config.json: `models list` checks bundled files.
    shipped = {"config.json": (ROOT / "model_store" / "keyframe-demo" / "config.json").read_bytes()}
    make_model("demo-bundled", contents=shipped, bundled="keyframe-demo").write_manifest(manifests)
    values = cli_env(tmp_path, manifests)
    for key in ("FLET_APP_STORAGE_DATA", "FLET_APP_STORAGE_CACHE", "KEYFRAME_MANIFESTS_DIR"):
        monkeypatch.setenv(key, values[key])
    monkeypatch.delenv("FLET_PLATFORM", raising=False)
    return values


def models(*argv: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="python -m app")
    add_models_parser(parser.add_subparsers(dest="command"))
    out = io.StringIO()
    code = run_models(parser.parse_args(["models", *argv]), out)
    return code, out.getvalue()


def write_source(folder: Path, model: Model) -> Path:
    for path, content in model.files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(content)
    return folder


def listing() -> dict[str, dict]:
    code, out = models("list", "--json")
    assert code == 0
    return {entry["id"]: entry for entry in json.loads(out)}


def test_list_shows_each_manifest_and_its_state(env: dict[str, str], model: Model, tmp_path: Path) -> None:
    states = listing()
    assert states[model.id]["state"] == "not installed" and not states[model.id]["usable"]
    assert states["demo-bundled"]["state"] == "bundled" and states["demo-bundled"]["usable"]
    assert models("import", model.id, str(write_source(tmp_path / "src", model)))[0] == 0
    assert listing()[model.id]["state"] == "installed"
    code, table = models("list")
    assert code == 0
    row = next(line for line in table.splitlines() if line.startswith(model.id))
    assert "installed" in row and "3/3" in row


def test_download_with_mirror_then_path(env: dict[str, str], model: Model) -> None:
    with FaultyServer(model.served()) as server:
        code, out = models("download", model.id, "--mirror", server.url + "/m")
    assert code == 0 and out.strip().endswith(str(Path(env["FLET_APP_STORAGE_DATA"]) / "models" / model.id))
    assert models("path") == (0, f"{Path(env['FLET_APP_STORAGE_DATA']) / 'models'}\n")
    assert models("path", model.id)[1].strip() == str(Path(env["FLET_APP_STORAGE_DATA"]) / "models" / model.id)
    assert listing()[model.id]["usable"]


@pytest.mark.parametrize("victim", ["config.json", BIG, "visual/visual.mnn"])
def test_verify_names_a_file_with_one_flipped_byte_and_download_refetches_only_it(
    env: dict[str, str], model: Model, tmp_path: Path, victim: str
) -> None:
    assert models("import", model.id, str(write_source(tmp_path / "src", model)))[0] == 0
    target = Path(env["FLET_APP_STORAGE_DATA"]) / "models" / model.id / victim
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x04
    target.write_bytes(bytes(data))

    code, out = models("verify", model.id)
    assert code == 1
    failed = [line for line in out.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 1 and failed[0].startswith(f"FAILED  {victim}: wrong_hash")
    assert sum(line.startswith("ok") for line in out.splitlines()) == len(model.files) - 1
    code, out = models("verify", model.id, "--json")
    assert code == 1 and [f["path"] for f in json.loads(out)["files"] if f["state"] != "ok"] == [victim]

    with FaultyServer(model.served()) as server:
        assert models("download", model.id, "--mirror", server.url + "/m")[0] == 0
    assert [s.path for s in server.seen()] == [f"/m/{victim}"]
    assert models("verify", model.id)[0] == 0


def test_import_rejects_a_wrong_file_naming_it(
    env: dict[str, str], model: Model, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_source(tmp_path / "src", model)
    (source / BIG).write_bytes(b"\0" * len(model.files[BIG]))
    code, out = models("import", model.id, str(source))
    assert code == 1 and out == ""
    assert f"import rejected: {BIG}:" in capsys.readouterr().err
    assert listing()[model.id]["state"] == "not installed"


def test_remove_and_the_bundled_model(
    env: dict[str, str], model: Model, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    models("import", model.id, str(write_source(tmp_path / "src", model)))
    assert models("remove", model.id) == (0, f"removed {model.id}\n")
    capsys.readouterr()
    assert models("remove", model.id) == (1, "")  # not "removed", and not success
    assert f"{model.id} is not installed" in capsys.readouterr().err
    assert listing()[model.id]["state"] == "not installed"
    assert models("remove", "demo-bundled")[0] == 2
    assert models("download", "demo-bundled")[0] == 2
    assert "bundled with the app" in capsys.readouterr().err
    assert models("download", "no-such-model")[0] == 2
    assert "known: demo-bundled, tiny-vlm" in capsys.readouterr().err


def test_the_saved_mirror_setting_is_used_and_can_be_cleared(env: dict[str, str], model: Model) -> None:
    assert models("mirror", "not a url")[0] == 2
    with FaultyServer(model.served("/company/models")) as server:
        assert models("mirror", server.url + "/company/models/")[0] == 0
        assert models("mirror") == (0, server.url + "/company/models/\n")
        assert models("download", model.id)[0] == 0
    assert len(server.seen()) == len(model.files) and all(s.path.startswith("/company/models/") for s in server.seen())
    assert models("mirror", "--clear")[0] == 0 and models("mirror") == (0, "")


def test_models_are_kept_out_of_android_backups() -> None:
    android = {"FLET_APP_STORAGE_DATA": "/data/user/0/dev.keyframe.keyframe/app_flutter", "FLET_PLATFORM": "android"}
    assert downloaded_models_dir(android) == Path("/data/user/0/dev.keyframe.keyframe/no_backup/models")
    desktop = {"FLET_APP_STORAGE_DATA": "/home/u/.local/share/Keyframe"}
    assert downloaded_models_dir(desktop) == Path("/home/u/.local/share/Keyframe/models")


def test_killed_mid_file_then_run_again_resumes_with_a_range(tmp_path: Path) -> None:
    model = make_model("kill-test", {"config.json": 700, BIG: 2_000_000}, seed=7)
    model.write_manifest(tmp_path / "manifests")
    env = cli_env(tmp_path, tmp_path / "manifests")
    part = downloaded_models_dir(env) / model.id / part_path(Path(BIG)).name
    faults = {f"/m/{BIG}": Faults(rate_bps=400_000)}  # slow, so the kill lands mid-file
    with FaultyServer(model.served(), faults) as server:
        mirror = server.url + "/m"
        first = subprocess.Popen(
            [*CLI, "download", model.id, "--mirror", mirror],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            assert wait_until(lambda: part.exists() and part.stat().st_size > 300_000, timeout=20), (
                first.stderr.read().decode() if first.poll() is not None and first.stderr else "no progress"
            )
            # A second downloader of the same model fails fast and says why.
            started = time.monotonic()
            second = run_cli(env, "download", model.id, "--mirror", mirror, timeout=20)
            assert second.returncode == 2 and "is busy" in second.stderr and f"pid {first.pid}" in second.stderr
            assert time.monotonic() - started < 10 and first.poll() is None
            os.kill(first.pid, signal.SIGKILL)
            first.wait(timeout=10)
        finally:
            if first.poll() is None:
                first.kill()
                first.wait()
            for stream in (first.stdout, first.stderr):
                if stream:
                    stream.close()
        have = part.stat().st_size
        assert 300_000 < have < len(model.files[BIG])
        faults[f"/m/{BIG}"].rate_bps = None
        # The server logs a response when it ends: here, when it notices the dead client.
        assert wait_until(lambda: len(server.seen(f"/m/{BIG}")) == 1)
        (killed,) = server.seen(f"/m/{BIG}")
        assert killed.range is None and killed.sent >= have
        seen_before = 1
        third = run_cli(env, "download", model.id, "--mirror", mirror)
        assert third.returncode == 0, third.stderr
    resumed = server.seen(f"/m/{BIG}")[seen_before:]
    assert [(s.range, s.status, s.sent) for s in resumed] == [(f"bytes={have}-", 206, len(model.files[BIG]) - have)]
    assert [s.range for s in server.seen("/m/config.json")] == [None]  # verified before the kill: not refetched
    final = downloaded_models_dir(env) / model.id / BIG
    assert final.read_bytes() == model.files[BIG] and not part.exists()
    verify = run_cli(env, "verify", model.id)
    assert verify.returncode == 0 and "all 2 files verified" in verify.stdout


def test_python_m_app_models_is_wired(tmp_path: Path, model: Model) -> None:
    model.write_manifest(tmp_path / "manifests")
    env = cli_env(tmp_path, tmp_path / "manifests")
    proc = subprocess.run(
        [CLI[0], "-m", "app", "models", "path"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{downloaded_models_dir(env)}\n"


@pytest.mark.usefixtures("no_system_proxy")
def test_download_uses_the_system_proxy_only_when_chosen(
    env: dict[str, str], model: Model, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FaultyServer(model.served()) as server, ForwardProxy() as proxy:
        monkeypatch.setenv("http_proxy", proxy.url)
        assert models("proxy") == (0, "off\n")  # off by default: a direct connection
        assert models("download", model.id, "--mirror", server.url + "/m")[0] == 0
        assert proxy.seen == []
        assert models("remove", model.id)[0] == 0

        assert models("proxy", "on") == (0, "system proxy on\n")
        assert models("proxy") == (0, "on\n")
        assert models("download", model.id, "--mirror", server.url + "/m")[0] == 0
        assert sorted(proxy.seen) == sorted(f"{server.url}/m/{p}" for p in model.files)
        assert models("remove", model.id)[0] == 0

        proxy.seen.clear()
        assert models("download", model.id, "--mirror", server.url + "/m", "--no-system-proxy")[0] == 0
        assert proxy.seen == []  # the command line overrides the saved choice for this run
        assert models("remove", model.id)[0] == 0

        monkeypatch.setenv("http_proxy", "socks5://127.0.0.1:1080")
        code, _ = models("download", model.id, "--mirror", server.url + "/m")
        assert code == 2  # a proxy Keyframe cannot use is an error, never a silent direct connection
        assert not listing()[model.id]["usable"]


def test_import_refuses_a_fifo_among_the_files_at_once(
    env: dict[str, str], model: Model, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """open() on a FIFO waits for a writer for ever: `models import` hung on one."""
    from tests.faults.corpus import run_bounded

    source = write_source(tmp_path / "src", model)
    (source / BIG).unlink()
    os.mkfifo(source / BIG)
    try:
        code, out = run_bounded(lambda: models("import", model.id, str(source)), 30)
    finally:
        try:  # a reader stuck in open() (the bug) is let go
            os.close(os.open(source / BIG, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
    assert code == 1 and out == ""
    assert BIG in capsys.readouterr().err
    assert listing()[model.id]["state"] == "not installed"
