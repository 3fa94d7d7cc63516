"""build_configs/common/make_wheel.py: the cross-built pymnn extension and package become a wheel
that pip installs for the phone's platform tag, without MNN/tools."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "build_configs" / "common" / "make_wheel.py"
sys.path.insert(0, str(SCRIPT.parent))
from wheel_tools import record_problems  # noqa: E402

from tests.unit.wheels import pip_install_target  # noqa: E402

TAG = "android_24_arm64_v8a"


def test_the_wheel_installs_for_the_phone_and_leaves_out_the_tools(tmp_path: Path) -> None:
    package = tmp_path / "pymnn" / "MNN"
    (package / "tools").mkdir(parents=True)
    (package / "__init__.py").write_text("from _mnncengine import *\n")
    (package / "tools" / "mnnconvert.py").write_text("raise SystemExit\n")
    ext = tmp_path / "_mnncengine.so"
    ext.write_bytes(b"\x7fELF" + bytes(60))
    args = ["--ext", ext, "--package", package, "--name", "MNN", "--version", "3.6.1+keyframe1"]
    args += ["--python-tag", "cp312", "--platform-tag", TAG, "-o", tmp_path / "wh"]
    subprocess.run([sys.executable, SCRIPT, *map(str, args)], check=True, capture_output=True)
    (wheel,) = (tmp_path / "wh").glob("*.whl")
    assert wheel.name == f"mnn-3.6.1+keyframe1-cp312-cp312-{TAG}.whl"
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        assert zf.getinfo("_mnncengine.so").external_attr >> 16 == 0o755
        files = {n: zf.read(n) for n in names}
    assert record_problems(files, "mnn-3.6.1+keyframe1.dist-info") == []  # every file's sha256 and size
    assert not any("tools" in n for n in names) and "MNN/__init__.py" in names
    target = tmp_path / "site"
    assert pip_install_target(wheel, target, TAG, "3.12").returncode == 0
    assert (target / "_mnncengine.so").read_bytes() == ext.read_bytes()
