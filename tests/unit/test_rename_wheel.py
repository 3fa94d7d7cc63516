"""build_configs/common/rename_wheel.py on a synthetic wheel laid out like flet's mobile OpenCV wheel.

pypi.flet.dev publishes the Android/iOS OpenCV build as ``opencv-python``; the build-apps workflow
renames it to ``opencv-python-headless`` (our requirement). The fake below has the same shape as
mobile-forge's wheels: a build tag, an android platform tag, a ``cv2`` package with a native
extension, a ``.data`` folder and a license in the ``.dist-info``. No network is needed.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata
import importlib.util
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from tests.conditions import HANG_S
from tests.unit.wheels import pip_install_target

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "build_configs" / "common" / "rename_wheel.py"

OLD_DI = "opencv_python-5.0.0.93.dist-info"
NEW_DI = "opencv_python_headless-5.0.0.93.dist-info"
WHEEL_NAME = "opencv_python-5.0.0.93-1-cp312-cp312-android_24_arm64_v8a.whl"
RENAMED = "opencv_python_headless-5.0.0.93-1-cp312-cp312-android_24_arm64_v8a.whl"
SO = "cv2/python-3.12/cv2.cpython-312-aarch64-linux-android.so"
METADATA = (
    "Metadata-Version: 2.4\nName: opencv-python\nVersion: 5.0.0.93\nRequires-Dist: numpy>=2\n\n"
    "Description body that quotes a header:\nName: opencv-python\n"
)


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rename_wheel", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


rw = _load()


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def source_files() -> dict[str, bytes]:
    return {
        "cv2/__init__.py": b"from .load import bootstrap\nbootstrap()\n",
        SO: b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8,
        "opencv_python-5.0.0.93.data/platlib/cv2/config-3.12.py": b"PYTHON_EXTENSIONS_PATHS = []\n",
        f"{OLD_DI}/METADATA": METADATA.encode(),
        f"{OLD_DI}/WHEEL": b"Wheel-Version: 1.0\nGenerator: forge\nRoot-Is-Purelib: false\n"
        b"Build: 1\nTag: cp312-cp312-android_24_arm64_v8a\n",
        f"{OLD_DI}/top_level.txt": b"cv2\n",
        f"{OLD_DI}/licenses/LICENSE.txt": b"Apache-2.0\n",
    }


def make_wheel(tmp: Path, files: dict[str, bytes] | None = None, *, record: dict[str, bytes] | None = None) -> Path:
    """Write a wheel holding ``files`` with a RECORD computed from ``record`` (default: the same files)."""
    files = source_files() if files is None else files
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for name, data in (files if record is None else record).items():
        writer.writerow([name, _digest(data), len(data)])
    writer.writerow([f"{OLD_DI}/RECORD", "", ""])
    path = tmp / WHEEL_NAME
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in {**files, f"{OLD_DI}/RECORD": buf.getvalue().encode()}.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            zf.writestr(info, data)
    return path


def run_script(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=HANG_S
    )


def test_rename_moves_the_metadata_and_keeps_every_file(tmp_path: Path) -> None:
    run = run_script(make_wheel(tmp_path), "opencv-python-headless", "-o", tmp_path / "wh")
    assert run.returncode == 0, run.stderr
    out = Path(run.stdout.strip())
    assert out == tmp_path / "wh" / RENAMED  # PEP 427/491: "-" in the name becomes "_", build tag kept

    with zipfile.ZipFile(out) as zf:
        files = {n: zf.read(n) for n in zf.namelist()}
        so_mode = zf.getinfo(SO).external_attr >> 16
    src = source_files()
    renamed = {n.replace("opencv_python-5.0.0.93.", "opencv_python_headless-5.0.0.93."): d for n, d in src.items()}
    assert set(files) == set(renamed) | {f"{NEW_DI}/RECORD"}
    assert not any(n.startswith("opencv_python-") for n in files)
    assert "opencv_python_headless-5.0.0.93.data/platlib/cv2/config-3.12.py" in files
    assert so_mode & 0o777 == 0o755
    for name, data in renamed.items():
        if not name.endswith("/METADATA"):
            assert files[name] == data, name  # bytes untouched

    meta = files[f"{NEW_DI}/METADATA"].decode()
    head, _, body = meta.partition("\n\n")
    assert head.splitlines()[1] == "Name: opencv-python-headless"
    assert "Version: 5.0.0.93" in head and "Requires-Dist: numpy>=2" in head
    assert body.endswith("Name: opencv-python\n")  # only the header field is renamed

    rows = {row[0]: row[1:] for row in csv.reader(io.StringIO(files[f"{NEW_DI}/RECORD"].decode()))}
    assert set(rows) == set(files)
    assert rows[f"{NEW_DI}/RECORD"] == ["", ""]
    for name, data in files.items():
        if name != f"{NEW_DI}/RECORD":
            assert rows[name] == [_digest(data), str(len(data))], name
    # an unchanged file keeps the hash its original RECORD gave it
    assert rows[SO][0] == _digest(src[SO])


def test_pip_installs_it_as_opencv_python_headless(tmp_path: Path) -> None:
    out = rw.rename(make_wheel(tmp_path), "opencv-python-headless", tmp_path / "wh")
    target = tmp_path / "site"
    run = pip_install_target(out, target, "android_24_arm64_v8a", "3.12")
    assert run.returncode == 0, run.stdout + run.stderr
    assert (target / SO).is_file() and (target / "cv2" / "config-3.12.py").is_file()
    (dist,) = importlib.metadata.distributions(path=[str(target)])
    assert dist.metadata["Name"] == "opencv-python-headless" and dist.version == "5.0.0.93"
    assert {str(f) for f in dist.files or []} >= {"cv2/__init__.py", SO}
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "list", "--path", str(target), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == [{"name": "opencv-python-headless", "version": "5.0.0.93"}]


def _refused(run: subprocess.CompletedProcess[str], words: str) -> None:
    assert run.returncode == 1, run.stdout
    assert run.stderr.startswith("rename_wheel: ") and run.stderr.count("\n") == 1, run.stderr
    assert words in run.stderr


def test_refuses_what_is_not_a_wheel(tmp_path: Path) -> None:
    not_zip = tmp_path / WHEEL_NAME
    not_zip.write_text("<html>404</html>")
    _refused(run_script(not_zip, "opencv-python-headless", "-o", tmp_path / "wh"), "is not a wheel")
    odd_name = tmp_path / "opencv_python.zip"
    odd_name.write_bytes(make_wheel(tmp_path).read_bytes())
    _refused(run_script(odd_name, "opencv-python-headless", "-o", tmp_path / "wh"), "is not a wheel file name")
    no_dist_info = {n: d for n, d in source_files().items() if not n.startswith(OLD_DI)}
    with zipfile.ZipFile(not_zip, "w") as zf:
        for name, data in no_dist_info.items():
            zf.writestr(name, data)
    _refused(run_script(not_zip, "opencv-python-headless", "-o", tmp_path / "wh"), "no single opencv_python-")
    _refused(run_script(make_wheel(tmp_path), "opencv python", "-o", tmp_path / "wh"), "not a valid distribution")
    _refused(run_script(make_wheel(tmp_path), "OpenCV.Python", "-o", tmp_path / "wh"), "already named")
    assert not (tmp_path / "wh").exists() or not list((tmp_path / "wh").iterdir())


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ("tampered", "cv2/__init__.py does not match its RECORD hash"),
        ("unlisted", f"{SO} is not listed in RECORD"),
        ("missing", "RECORD lists cv2/gone.py, which is not in the wheel"),
    ],
)
def test_refuses_a_record_that_does_not_match(tmp_path: Path, change: str, words: str) -> None:
    files = source_files()
    record = dict(files)
    if change == "tampered":
        files["cv2/__init__.py"] = b"import os\n"
    elif change == "unlisted":
        del record[SO]
    else:
        record["cv2/gone.py"] = b""
    run = run_script(make_wheel(tmp_path, files, record=record), "opencv-python-headless", "-o", tmp_path / "wh")
    _refused(run, "RECORD does not match its files")
    assert words in run.stderr
    assert not (tmp_path / "wh" / RENAMED).exists()
