"""build_configs/macos/repack_mnn_wheel.py on synthetic wheels laid out like MNN 3.6.1's macOS wheel.

The real wheel (``mnn-3.6.1-cp311-cp311-macosx_11_0_arm64.whl``) keeps ``libMNN.dylib`` in
``mnn-3.6.1.data/data/lib/``; ``_mnncengine.cpython-311-darwin.so`` sits at the wheel root with
LC_LOAD_DYLIB ``@rpath/libMNN.dylib`` and LC_RPATHs ``@loader_path/../../../lib`` and
``@loader_path/lib``. The fakes below carry the same load commands in minimal Mach-O headers, so
no network and no Mac are needed.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.util
import io
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from tests.conditions import HANG_S
from tests.unit.wheels import pip_install_target

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "build_configs" / "macos" / "repack_mnn_wheel.py"

ARM64 = 0x0100000C
X86_64 = 0x01000007


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("repack_mnn_wheel", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["repack_mnn_wheel"] = mod  # dataclasses look the module up while the class is made
    spec.loader.exec_module(mod)
    return mod


rp = _load()


def _lc_str(cmd: int, text: str, extra: bytes = b"") -> bytes:
    """A load command whose first field after cmd/cmdsize is an lc_str offset."""
    head = 8 + 4 + len(extra)
    body = text.encode() + b"\0"
    size = (head + len(body) + 7) // 8 * 8
    return struct.pack("<3I", cmd, size, head) + extra + body.ljust(size - head, b"\0")


def macho(
    cputype: int, *, install_name: str | None = None, deps: tuple[str, ...] = (), rpaths: tuple[str, ...] = ()
) -> bytes:
    dylib_extra = struct.pack("<3I", 2, 0x10000, 0x10000)  # timestamp, current, compatibility version
    cmds = []
    if install_name:
        cmds.append(_lc_str(rp.LC_ID_DYLIB, install_name, dylib_extra))
    cmds += [_lc_str(rp.LC_LOAD_DYLIB, d, dylib_extra) for d in deps]
    cmds += [_lc_str(rp.LC_RPATH, r) for r in rpaths]
    body = b"".join(cmds)
    header = struct.pack("<8I", rp.MH_MAGIC_64, cputype, 0, 6 if install_name else 8, len(cmds), len(body), 0, 0)
    return header + body + b"\x00" * 64


def fat(*slices: bytes) -> bytes:
    offset = 4096
    head = struct.pack(">2I", rp.FAT_MAGIC, len(slices))
    blobs = b""
    for s in slices:
        cputype = struct.unpack_from("<I", s, 4)[0]
        head += struct.pack(">5I", cputype, 0, offset + len(blobs), len(s), 12)
        blobs += s
    return head.ljust(offset, b"\0") + blobs


def ext_so(cputype: int = ARM64) -> bytes:
    return macho(
        cputype,
        deps=("@rpath/libMNN.dylib", "/usr/lib/libc++.1.dylib", "/usr/lib/libSystem.B.dylib"),
        rpaths=("@loader_path/../../../lib", "@loader_path/lib"),
    )


def tools_so(cputype: int = ARM64) -> bytes:
    return macho(
        cputype,
        deps=("@rpath/libMNN.dylib", "@rpath/libMNNConvertDeps.dylib", "/usr/lib/libSystem.B.dylib"),
        rpaths=("@loader_path/../../../lib", "@loader_path/lib"),
    )


def libmnn(cputype: int = ARM64) -> bytes:
    return macho(cputype, install_name="@rpath/libMNN.dylib", deps=("/usr/lib/libc++.1.dylib",))


def libconvert(cputype: int = ARM64) -> bytes:
    return macho(
        cputype,
        install_name="@rpath/libMNNConvertDeps.dylib",
        deps=("@rpath/libMNN.dylib",),
        rpaths=("/Users/runner/work/MNN/MNN/pymnn_build",),
    )


def _record(files: dict[str, bytes], record_name: str) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        w.writerow([name, f"sha256={digest}", len(data)])
    w.writerow([record_name, "", ""])
    return buf.getvalue().encode()


def make_wheel(
    tmp: Path,
    plat: str = "macosx_11_0_arm64",
    *,
    so: bytes | None = None,
    dylib: bytes | None = None,
    with_tools: bool = True,
) -> Path:
    di = "mnn-3.6.1.dist-info"
    files: dict[str, bytes] = {
        "_mnncengine.cpython-311-darwin.so": so if so is not None else ext_so(),
        "MNN/__init__.py": b"from _mnncengine import *\n",
        "MNN/llm/__init__.py": b"import _mnncengine.llm as _F\n",
        "mnn-3.6.1.data/data/lib/libMNN.dylib": dylib if dylib is not None else libmnn(),
        f"{di}/METADATA": b"Metadata-Version: 2.4\nName: mnn\nVersion: 3.6.1\nRequires-Dist: numpy\n",
        f"{di}/WHEEL": (
            f"Wheel-Version: 1.0\nGenerator: setuptools\nRoot-Is-Purelib: false\nTag: cp311-cp311-{plat}\n"
        ).encode(),
        f"{di}/top_level.txt": b"MNN\n_mnncengine\n_tools\n",
    }
    if with_tools:
        files["_tools.cpython-311-darwin.so"] = tools_so()
        files["MNN/tools/__init__.py"] = b""
        files["mnn-3.6.1.data/data/lib/libMNNConvertDeps.dylib"] = libconvert()
        files[f"{di}/entry_points.txt"] = b"[console_scripts]\nmnn = MNN.tools.mnn:main\n"
    files[f"{di}/RECORD"] = _record(files, f"{di}/RECORD")
    path = tmp / f"mnn-3.6.1-cp311-cp311-{plat}.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o755 if name.endswith((".so", ".dylib")) else 0o644) << 16
            zf.writestr(info, data)
    return path


def check_record(wheel: Path) -> dict[str, bytes]:
    """Every file is in RECORD with its right sha256 and size, and RECORD lists nothing else."""
    with zipfile.ZipFile(wheel) as zf:
        files = {n: zf.read(n) for n in zf.namelist()}
    (record_name,) = [n for n in files if n.endswith(".dist-info/RECORD")]
    rows = list(csv.reader(io.StringIO(files[record_name].decode())))
    listed = {row[0]: row for row in rows}
    assert set(listed) == set(files)
    assert listed[record_name][1:] == ["", ""]
    for name, data in files.items():
        if name == record_name:
            continue
        algo, _, digest = listed[name][1].partition("=")
        assert algo == "sha256"
        assert base64.urlsafe_b64decode(digest + "=" * (-len(digest) % 4)) == hashlib.sha256(data).digest()
        assert int(listed[name][2]) == len(data)
    return files


def test_parser_reads_the_load_commands_mnn_ships() -> None:
    m = rp.parse_macho(ext_so())
    assert m is not None
    assert m.archs == {"arm64"}
    assert m.deps[0] == "@rpath/libMNN.dylib"
    assert m.rpaths == ["@loader_path/../../../lib", "@loader_path/lib"]
    lib = rp.parse_macho(libmnn())
    assert lib is not None and lib.install_name == "@rpath/libMNN.dylib"
    universal = rp.parse_macho(fat(libmnn(ARM64), libmnn(X86_64)))
    assert universal is not None and universal.archs == {"arm64", "x86_64"}
    assert rp.parse_macho(b"#!/bin/sh\necho not a binary\n") is None
    assert rp.parse_macho(b"\xca\xfe\xba\xbe\x00\x00\x00\x33 java class") is None


def test_dylibs_move_next_to_the_extension_and_record_is_valid(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path)
    res = rp.repack(wheel, tmp_path / "out")
    assert res.path.name == "mnn-3.6.1+keyframe1-cp311-cp311-macosx_11_0_arm64.whl"
    assert res.moved == {
        "mnn-3.6.1.data/data/lib/libMNN.dylib": "lib/libMNN.dylib",
        "mnn-3.6.1.data/data/lib/libMNNConvertDeps.dylib": "lib/libMNNConvertDeps.dylib",
    }
    assert res.problems == []
    files = check_record(res.path)
    assert "lib/libMNN.dylib" in files
    assert not any(".data/" in n for n in files)
    assert files["lib/libMNN.dylib"] == libmnn()  # bytes untouched: no install_name_tool, no re-signing
    meta = files["mnn-3.6.1+keyframe1.dist-info/METADATA"].decode()
    assert "Version: 3.6.1+keyframe1\n" in meta and "Requires-Dist: numpy" in meta
    with zipfile.ZipFile(res.path) as zf:
        assert (zf.getinfo("lib/libMNN.dylib").external_attr >> 16) & 0o777 == 0o755


def test_pip_install_target_keeps_the_dylib_where_the_rpath_points(tmp_path: Path) -> None:
    res = rp.repack(make_wheel(tmp_path), tmp_path / "out")
    target = tmp_path / "site"
    run = pip_install_target(res.path, target, "macosx_11_0_arm64", "3.11")
    assert run.returncode == 0, run.stdout + run.stderr
    so = target / "_mnncengine.cpython-311-darwin.so"
    assert so.is_file()
    m = rp.parse_macho(so.read_bytes())
    assert m is not None
    # @loader_path/lib, resolved from the extension's folder, holds the library dyld will look for.
    assert (so.parent / "lib" / "libMNN.dylib").read_bytes() == libmnn()
    assert (target / "lib" / "libMNNConvertDeps.dylib").is_file()
    assert (target / "mnn-3.6.1+keyframe1.dist-info" / "METADATA").is_file()


def test_the_original_layout_fails_the_same_check(tmp_path: Path) -> None:
    # What pip --target keeps of the unrepacked wheel: the .data files are gone.
    with zipfile.ZipFile(make_wheel(tmp_path)) as zf:
        kept = {n: zf.read(n) for n in zf.namelist() if ".data/" not in n}
    problems = rp.check_layout(kept, "macosx_11_0_arm64")
    assert any("@rpath/libMNN.dylib" in p for p in problems)


def test_drop_tools_leaves_out_the_converter(tmp_path: Path) -> None:
    res = rp.repack(make_wheel(tmp_path), tmp_path / "out", local_version="keyframe1", drop_tools=True)
    files = check_record(res.path)
    assert "_tools.cpython-311-darwin.so" not in files
    assert not any(n.startswith("MNN/tools/") for n in files)
    assert "lib/libMNNConvertDeps.dylib" not in files
    assert "mnn-3.6.1+keyframe1.dist-info/entry_points.txt" not in files
    assert b"_tools" not in files["mnn-3.6.1+keyframe1.dist-info/top_level.txt"]
    assert res.problems == []


def test_a_dylib_without_the_wheels_architecture_is_refused(tmp_path: Path) -> None:
    # MNN 3.6.1's x86_64 wheel ships an arm64-only libMNN.dylib and an extension that does not load it.
    wheel = make_wheel(
        tmp_path,
        "macosx_11_0_x86_64",
        so=macho(X86_64, deps=("/usr/lib/libSystem.B.dylib",), rpaths=("@loader_path/lib",)),
        dylib=libmnn(ARM64),
        with_tools=False,
    )
    with pytest.raises(rp.RepackError, match="arm64 slices"):
        rp.repack(wheel, tmp_path / "out")
    forced = rp.repack(wheel, tmp_path / "out", force=True)
    assert any("no binary in the wheel loads it" in p for p in forced.problems)
    check_record(forced.path)


def test_a_universal_wheel_with_universal_dylibs_passes(tmp_path: Path) -> None:
    wheel = make_wheel(
        tmp_path,
        "macosx_11_0_universal2",
        so=fat(ext_so(ARM64), ext_so(X86_64)),
        dylib=fat(libmnn(ARM64), libmnn(X86_64)),
        with_tools=False,
    )
    res = rp.repack(wheel, tmp_path / "out", local_version="kf.2")
    assert res.path.name == "mnn-3.6.1+kf.2-cp311-cp311-macosx_11_0_universal2.whl"
    assert res.problems == []


def test_command_line(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path)
    run = subprocess.run(
        [sys.executable, str(SCRIPT), str(wheel), "-o", str(tmp_path / "wh"), "--local-version", "keyframe7"],
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert run.returncode == 0, run.stderr
    out = Path(run.stdout.strip().splitlines()[-1])
    assert out == tmp_path / "wh" / "mnn-3.6.1+keyframe7-cp311-cp311-macosx_11_0_arm64.whl"
    assert "moved   mnn-3.6.1.data/data/lib/libMNN.dylib -> lib/libMNN.dylib" in run.stdout
    bad = subprocess.run(
        [sys.executable, str(SCRIPT), str(wheel), "-o", str(tmp_path / "wh"), "--local-version", "no-dash"],
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert bad.returncode == 1 and "local version label" in bad.stderr
