"""Installing a wheel the way serious_python (flet build) does: pip --target with a faked platform."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conditions import HANG_S


def pip_install_target(wheel: Path, target: Path, platform: str, python_version: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--disable-pip-version-check"]
    command += ["--only-binary", ":all:", "--platform", platform, "--python-version", python_version]
    command += ["--target", str(target), str(wheel)]
    return subprocess.run(command, capture_output=True, text=True, timeout=HANG_S)
