#!/usr/bin/env python3
"""Assemble a binary wheel for a cross-built pymnn extension (standard library only).

setuptools cannot cross-compile pymnn without crossenv: it takes the platform,
the extension suffix and the link flags from the *host* interpreter (see
build_configs/patches/README.md). The build scripts therefore compile
``_mnncengine`` themselves and call this script to lay out the wheel::

    make_wheel.py --ext build/_mnncengine.so --package pymnn/pip_package/MNN \
        --name MNN --version 3.6.1+keyframe1 --python-tag cp312 \
        --platform-tag android_24_arm64_v8a -o wheelhouse/

The wheel holds ``_mnncengine.so`` at its root (plain ``.so`` is in
``importlib.machinery.EXTENSION_SUFFIXES`` on Android and iOS), the ``MNN``
package without ``MNN/tools`` (it needs the converter, which we do not build),
METADATA requiring numpy, WHEEL, top_level.txt and a RECORD with sha256 and size.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wheel_tools import escaped, write_wheel  # noqa: E402

EXCLUDE_DIRS = {"tools", "__pycache__"}


def collect_package(package: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for path in sorted(package.rglob("*")):
        rel = path.relative_to(package)
        if path.is_dir() or EXCLUDE_DIRS & set(rel.parts[:-1]) or rel.parts[0] in EXCLUDE_DIRS:
            continue
        if path.suffix in {".pyc", ".pyo"}:
            continue
        files[f"{package.name}/{rel.as_posix()}"] = path.read_bytes()
    return files


def make_wheel(
    ext: Path,
    package: Path,
    name: str,
    version: str,
    python_tag: str,
    platform_tag: str,
    out_dir: Path,
    requires: list[str],
) -> Path:
    if not re.fullmatch(r"[A-Za-z0-9._+]+", version):
        raise SystemExit(f"bad version {version!r}")
    dist = escaped(name)
    tag = f"{python_tag}-{python_tag}-{platform_tag}"
    di = f"{dist}-{version}.dist-info"
    files: dict[str, bytes] = {"_mnncengine.so": ext.read_bytes()}
    files.update(collect_package(package))
    meta = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        "Summary: MNN Python binding, cross-built for Keyframe (LLM, OpenCV; no converter, tools or training)",
        "License: Apache-2.0",
    ]
    meta += [f"Requires-Dist: {r}" for r in requires]
    files[f"{di}/METADATA"] = ("\n".join(meta) + "\n").encode()
    files[f"{di}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: keyframe-make_wheel\nRoot-Is-Purelib: false\nTag: {tag}\n"
    ).encode()
    files[f"{di}/top_level.txt"] = f"{package.name}\n_mnncengine\n".encode()
    out = out_dir / f"{dist}-{version}-{tag}.whl"
    modes = {fname: 0o755 << 16 for fname in files if fname.endswith(".so")}
    write_wheel(out, files, modes, di)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="assemble a cross-built pymnn wheel")
    ap.add_argument("--ext", type=Path, required=True, help="the built _mnncengine shared object")
    ap.add_argument("--package", type=Path, required=True, help="pymnn/pip_package/MNN (patched)")
    ap.add_argument("--name", default="MNN")
    ap.add_argument("--version", required=True, help="e.g. 3.6.1+keyframe1")
    ap.add_argument("--python-tag", required=True, help="cp312, cp311, ...")
    ap.add_argument("--platform-tag", required=True, help="android_24_arm64_v8a, ios_13_0_arm64_iphoneos, ...")
    ap.add_argument("--requires", action="append", default=None, help="Requires-Dist lines (default: numpy)")
    ap.add_argument("-o", "--out-dir", type=Path, default=Path("wheelhouse"))
    args = ap.parse_args(argv)
    out = make_wheel(
        args.ext,
        args.package,
        args.name,
        args.version,
        args.python_tag,
        args.platform_tag,
        args.out_dir,
        args.requires if args.requires is not None else ["numpy"],
    )
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
