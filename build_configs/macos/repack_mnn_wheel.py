#!/usr/bin/env python3
"""Repack an MNN macOS wheel so that ``pip install --target`` keeps its dylibs.

Why: the PyPI wheel ``MNN==3.6.1`` for macOS puts ``libMNN.dylib`` (and
``libMNNConvertDeps.dylib``) under ``mnn-3.6.1.data/data/lib/``. A normal
``pip install`` into a venv copies them to ``<prefix>/lib``, which the extension
finds through its first LC_RPATH ``@loader_path/../../../lib``. ``pip install
--target`` (what serious-python, and so ``flet build macos``, uses) drops the
``.data/data`` files, and ``import _mnncengine`` then fails with "Library not
loaded: @rpath/libMNN.dylib".

The extension's second LC_RPATH is ``@loader_path/lib``. ``_mnncengine*.so`` sits
at the top of site-packages, so moving the dylibs to ``lib/`` at the wheel's root
satisfies it without rewriting any load command (no ``install_name_tool``, no
re-signing).

What this script does, with the standard library only:
  1. reads the Mach-O load commands (LC_RPATH, LC_LOAD_DYLIB, ...) of every
     binary in the wheel;
  2. moves every ``*.dylib`` found under ``<dist>.data/<scheme>/`` to the folder
     that the extensions' in-wheel ``@loader_path`` rpath names (``lib/`` for MNN),
     or to ``--dest``;
  3. checks that every ``@rpath/`` and ``@loader_path/`` dependency of every
     extension now resolves inside the wheel and that each binary has a slice
     for the wheel's platform tag (the x86_64 MNN 3.6.1 wheel fails here: it
     ships an arm64-only libMNN.dylib);
  4. appends a local version label (``3.6.1+keyframe1``), rewrites METADATA and
     RECORD (sha256 and size of every file) and writes a new wheel.

Usage::

    python build_configs/macos/repack_mnn_wheel.py mnn-3.6.1-cp311-cp311-macosx_11_0_arm64.whl \
        -o wheelhouse/ [--local-version keyframe1] [--drop-tools] [--dest lib] [--force]
"""

from __future__ import annotations

import argparse
import posixpath
import re
import struct
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from wheel_tools import WHEEL_RE, is_signature, write_wheel  # noqa: E402  (build_configs/common, shared with rename_wheel.py)

# --- Mach-O ----------------------------------------------------------------------------------

LC_REQ_DYLD = 0x80000000
LC_LOAD_DYLIB = 0xC
LC_ID_DYLIB = 0xD
LC_LOAD_WEAK_DYLIB = 0x18 | LC_REQ_DYLD
LC_RPATH = 0x1C | LC_REQ_DYLD
LC_REEXPORT_DYLIB = 0x1F | LC_REQ_DYLD
LC_LAZY_LOAD_DYLIB = 0x20
LC_LOAD_UPWARD_DYLIB = 0x23 | LC_REQ_DYLD
DEP_COMMANDS = {LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB, LC_REEXPORT_DYLIB, LC_LAZY_LOAD_DYLIB, LC_LOAD_UPWARD_DYLIB}

CPU_TYPES = {0x01000007: "x86_64", 0x0100000C: "arm64", 7: "i386", 12: "arm"}

MH_MAGIC = 0xFEEDFACE
MH_MAGIC_64 = 0xFEEDFACF
FAT_MAGIC = 0xCAFEBABE
FAT_MAGIC_64 = 0xCAFEBABF


class RepackError(Exception):
    """The wheel cannot be repacked into a layout that works under ``pip --target``."""


@dataclass
class MachO:
    """What dyld needs from one Mach-O file (all slices merged)."""

    archs: set[str] = field(default_factory=set)
    install_name: str | None = None
    rpaths: list[str] = field(default_factory=list)
    deps: list[str] = field(default_factory=list)
    weak_deps: set[str] = field(default_factory=set)


def _read_cstring(blob: bytes, start: int, end: int) -> str:
    raw = blob[start:end]
    nul = raw.find(b"\0")
    return (raw if nul < 0 else raw[:nul]).decode("utf-8", "replace")


def _parse_thin(blob: bytes, offset: int, out: MachO) -> None:
    magic_le = struct.unpack_from("<I", blob, offset)[0]
    if magic_le in (MH_MAGIC, MH_MAGIC_64):
        endian = "<"
    else:
        magic_be = struct.unpack_from(">I", blob, offset)[0]
        if magic_be not in (MH_MAGIC, MH_MAGIC_64):
            raise ValueError("not a Mach-O slice")
        endian = ">"
    magic, cputype, _sub, _ftype, ncmds, _sizeofcmds, _flags = struct.unpack_from(endian + "7I", blob, offset)
    header_size = 32 if magic == MH_MAGIC_64 else 28
    out.archs.add(CPU_TYPES.get(cputype, hex(cputype)))
    pos = offset + header_size
    for _ in range(ncmds):
        cmd, cmdsize = struct.unpack_from(endian + "2I", blob, pos)
        if cmdsize < 8:
            raise ValueError("corrupt load command")
        if cmd in DEP_COMMANDS or cmd == LC_ID_DYLIB or cmd == LC_RPATH:
            str_off = struct.unpack_from(endian + "I", blob, pos + 8)[0]
            text = _read_cstring(blob, pos + str_off, pos + cmdsize)
            if cmd == LC_RPATH:
                if text not in out.rpaths:
                    out.rpaths.append(text)
            elif cmd == LC_ID_DYLIB:
                out.install_name = text
            else:
                if text not in out.deps:
                    out.deps.append(text)
                if cmd == LC_LOAD_WEAK_DYLIB:
                    out.weak_deps.add(text)
        pos += cmdsize


def parse_macho(blob: bytes) -> MachO | None:
    """Load commands of a thin or fat Mach-O file; None when ``blob`` is not Mach-O."""
    if len(blob) < 8:
        return None
    out = MachO()
    magic_be = struct.unpack_from(">I", blob, 0)[0]
    try:
        if magic_be in (FAT_MAGIC, FAT_MAGIC_64):
            nfat = struct.unpack_from(">I", blob, 4)[0]
            if nfat > 64:  # Java class files share 0xCAFEBABE; they have a large "count" here
                return None
            entry = "5I" if magic_be == FAT_MAGIC else "2I2QII"
            size = struct.calcsize(">" + entry)
            for i in range(nfat):
                fields = struct.unpack_from(">" + entry, blob, 8 + i * size)
                _parse_thin(blob, int(fields[2]), out)
            return out
        _parse_thin(blob, 0, out)
        return out
    except (ValueError, struct.error):
        return None


# --- wheel names --------------------------------------------------------------------------


def with_local_version(version: str, local: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9]+(?:\.[A-Za-z0-9]+)*", local):
        raise RepackError(f"local version label {local!r} must be letters/digits separated by dots")
    return f"{version}.{local}" if "+" in version else f"{version}+{local}"


def _tag_archs(plat: str) -> set[str]:
    archs: set[str] = set()
    for tag in plat.split("."):
        if tag.endswith("universal2"):
            archs |= {"arm64", "x86_64"}
        elif tag.endswith("arm64"):
            archs.add("arm64")
        elif tag.endswith("x86_64"):
            archs.add("x86_64")
    return archs


# --- layout checks ------------------------------------------------------------------------

SYSTEM_PREFIXES = ("/usr/lib/", "/System/Library/")


def _resolve_loader_relative(binary: str, path: str) -> str | None:
    """``@loader_path/x`` of ``binary`` as a wheel-root-relative path; None if it leaves the wheel."""
    rel = path[len("@loader_path") :].lstrip("/")
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(binary), rel))
    if joined == ".":
        return ""
    if joined.startswith("../") or joined == ".." or joined.startswith("/"):
        return None
    return joined


def check_layout(files: dict[str, bytes], plat: str) -> list[str]:
    """Problems that would stop ``import`` of an extension in a ``pip --target`` install."""
    problems: list[str] = []
    machos = {name: m for name, data in files.items() if (m := parse_macho(data)) is not None}
    wanted = _tag_archs(plat)
    for name, m in sorted(machos.items()):
        if wanted and not wanted <= m.archs:
            problems.append(
                f"{name}: has {'/'.join(sorted(m.archs)) or 'no'} slices; the wheel tag {plat} needs "
                f"{'/'.join(sorted(wanted))}"
            )
    extensions = [n for n in machos if n.endswith(".so")]
    for ext in sorted(extensions):
        seen: set[str] = set()
        stack: list[tuple[str, list[str]]] = [(ext, [])]
        while stack:
            binary, inherited = stack.pop()
            if binary in seen:
                continue
            seen.add(binary)
            m = machos[binary]
            own = [
                r
                for rp in m.rpaths
                if rp.startswith("@loader_path") and (r := _resolve_loader_relative(binary, rp)) is not None
            ]
            rpaths = own + inherited  # dyld searches the loader chain's rpaths too
            for dep in m.deps:
                if dep.startswith(SYSTEM_PREFIXES) or dep in m.weak_deps and dep.startswith("/"):
                    continue
                found: str | None = None
                if dep.startswith("@rpath/"):
                    leaf = dep[len("@rpath/") :]
                    for rp in rpaths:
                        cand = posixpath.join(rp, leaf) if rp else leaf
                        if cand in files:
                            found = cand
                            break
                elif dep.startswith("@loader_path/"):
                    cand2 = _resolve_loader_relative(binary, dep)
                    if cand2 is not None and cand2 in files:
                        found = cand2
                if found is None:
                    problems.append(f"{ext}: dependency {dep} (of {binary}) is not inside the wheel")
                elif found in machos:
                    stack.append((found, rpaths))
    return problems


# --- repack -------------------------------------------------------------------------------


@dataclass
class RepackResult:
    path: Path
    moved: dict[str, str]
    dropped: list[str]
    problems: list[str]


def _pick_dest(files: dict[str, bytes]) -> str | None:
    """The first in-wheel ``@loader_path`` rpath of a top-level extension (``lib`` for MNN)."""
    for name in sorted(files):
        if not name.endswith(".so"):
            continue
        m = parse_macho(files[name])
        if m is None:
            continue
        for rp in m.rpaths:
            if rp.startswith("@loader_path"):
                rel = _resolve_loader_relative(name, rp)
                if rel:
                    return rel
    return None


TOOLS_PATTERNS = (
    re.compile(r"^_tools\.[^/]*\.so$"),
    re.compile(r"^MNN/tools/"),
    re.compile(r"(^|/)libMNNConvertDeps\.dylib$"),
)


def repack(
    wheel: Path,
    out_dir: Path,
    local_version: str = "keyframe1",
    dest: str | None = None,
    drop_tools: bool = False,
    force: bool = False,
) -> RepackResult:
    match = WHEEL_RE.match(wheel.name)
    if not match:
        raise RepackError(f"{wheel.name} is not a wheel file name")
    dist, version, build, py, abi, plat = (match.group(k) for k in ("name", "version", "build", "py", "abi", "plat"))
    new_version = with_local_version(version, local_version)

    with zipfile.ZipFile(wheel) as zf:
        infos = {i.filename: i for i in zf.infolist() if not i.is_dir()}
        files = {n: zf.read(n) for n in infos}

    dist_info = f"{dist}-{version}.dist-info"
    data_dir = f"{dist}-{version}.data"
    if f"{dist_info}/RECORD" not in files:
        # The dist-info folder may spell the name differently (case); find it.
        cands = [n.split("/")[0] for n in files if n.endswith(".dist-info/RECORD") and n.count("/") == 1]
        if len(cands) != 1:
            raise RepackError("cannot find the wheel's .dist-info/RECORD")
        dist_info = cands[0]
        data_dir = dist_info[: -len(".dist-info")] + ".data"
    prefix = dist_info[: -len(f"-{version}.dist-info")]
    new_dist_info = f"{prefix}-{new_version}.dist-info"
    new_data_dir = f"{prefix}-{new_version}.data"

    dest = dest if dest is not None else _pick_dest(files)
    if dest is None:
        dest = "lib"
    dest = dest.strip("/")

    new_files: dict[str, bytes] = {}
    modes: dict[str, int] = {}
    moved: dict[str, str] = {}
    dropped: list[str] = []
    for name, data in files.items():
        if name == f"{dist_info}/RECORD" or is_signature(name, dist_info):
            continue  # rewritten below; signatures (RECORD.jws/.p7s) no longer match
        if drop_tools and any(p.search(name) for p in TOOLS_PATTERNS):
            dropped.append(name)
            continue
        target = name
        if name.startswith(data_dir + "/"):
            if name.endswith(".dylib"):
                target = posixpath.join(dest, posixpath.basename(name)) if dest else posixpath.basename(name)
                moved[name] = target
            else:
                target = new_data_dir + name[len(data_dir) :]
        elif name.startswith(dist_info + "/"):
            target = new_dist_info + name[len(dist_info) :]
        if target in new_files:
            raise RepackError(f"{name} would overwrite {target}")
        new_files[target] = data
        modes[target] = infos[name].external_attr

    if drop_tools and f"{new_dist_info}/entry_points.txt" in new_files:
        # Its console scripts point into MNN.tools, which is gone.
        del new_files[f"{new_dist_info}/entry_points.txt"]
        dropped.append(f"{dist_info}/entry_points.txt")
    if drop_tools and f"{new_dist_info}/top_level.txt" in new_files:
        lines = new_files[f"{new_dist_info}/top_level.txt"].decode().splitlines()
        new_files[f"{new_dist_info}/top_level.txt"] = (
            "\n".join(x for x in lines if x.strip() != "_tools") + "\n"
        ).encode()

    meta_name = f"{new_dist_info}/METADATA"
    if meta_name not in new_files:
        raise RepackError("the wheel has no METADATA")
    meta = new_files[meta_name].decode("utf-8")
    meta, n = re.subn(r"(?m)^Version: .*$", f"Version: {new_version}", meta, count=1)
    if n != 1:
        raise RepackError("METADATA has no Version line")
    new_files[meta_name] = meta.encode("utf-8")

    problems = check_layout(new_files, plat)
    shipped = {posixpath.basename(t) for t in moved.values()}
    referenced = {
        posixpath.basename(d) for data in new_files.values() if (m := parse_macho(data)) is not None for d in m.deps
    }
    for lib in sorted(shipped - referenced):
        problems.append(f"{lib}: shipped, but no binary in the wheel loads it (linked with -undefined dynamic_lookup?)")
    if problems and not force:
        raise RepackError("the repacked layout would not load:\n  " + "\n  ".join(problems))

    parts = [dist, new_version] + ([build] if build else []) + [py, abi, plat]
    out_path = out_dir / ("-".join(parts) + ".whl")
    write_wheel(out_path, new_files, modes, new_dist_info)
    return RepackResult(out_path, moved, sorted(dropped), problems)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("wheel", type=Path, help="the MNN macOS wheel (e.g. mnn-3.6.1-cp311-cp311-macosx_11_0_arm64.whl)")
    ap.add_argument("-o", "--out-dir", type=Path, default=Path("wheelhouse"), help="where to write the new wheel")
    ap.add_argument("--local-version", default="keyframe1", help="local version label (default: keyframe1)")
    ap.add_argument("--dest", help="wheel-root folder for the dylibs (default: the extensions' @loader_path rpath)")
    ap.add_argument("--drop-tools", action="store_true", help="leave out _tools, MNN/tools and libMNNConvertDeps")
    ap.add_argument("--force", action="store_true", help="write the wheel even if the layout check fails")
    args = ap.parse_args(argv)
    try:
        res = repack(args.wheel, args.out_dir, args.local_version, args.dest, args.drop_tools, args.force)
    except (RepackError, OSError, zipfile.BadZipFile) as exc:
        print(f"repack_mnn_wheel: {exc}", file=sys.stderr)
        return 1
    for src, dst in sorted(res.moved.items()):
        print(f"moved   {src} -> {dst}")
    for name in res.dropped:
        print(f"dropped {name}")
    for problem in res.problems:
        print(f"WARNING {problem}", file=sys.stderr)
    print(res.path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
