#!/usr/bin/env python3
"""Rename a wheel's distribution, keeping its files byte for byte (standard library only).

Why: Keyframe depends on ``opencv-python-headless``, but pypi.flet.dev (flet's mobile index)
publishes the Android/iOS OpenCV wheels as ``opencv-python`` (flet-dev/mobile-forge recipe), so
``flet build apk|aab|ipa`` would find no mobile wheel for our requirement, and flet-cli can add
dependencies per platform but not replace one. The mobile builds have no GUI backend either, so
the renamed wheel is what the headless name promises. Usage::

    python build_configs/common/rename_wheel.py \
        opencv_python-5.0.0.93-1-cp312-cp312-android_24_arm64_v8a.whl opencv-python-headless -o wheelhouse/

writes ``wheelhouse/opencv_python_headless-5.0.0.93-1-cp312-cp312-android_24_arm64_v8a.whl``:
the ``.dist-info`` (and ``.data``) folders renamed, ``Name:`` in METADATA replaced, and RECORD
rewritten with every new path (sha256 and size; unchanged files keep theirs). It refuses a file
that is not a wheel and a wheel whose RECORD does not match its files.
"""

from __future__ import annotations

import argparse
import re
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wheel_tools import WHEEL_RE, escaped, is_signature, record_problems, write_wheel  # noqa: E402

# PEP 508 names; wheel file names and .dist-info folders use the normalised form with "_".
NAME_RE = re.compile(r"^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$", re.IGNORECASE)


class RenameError(Exception):
    """The input is not a wheel this script can rename faithfully."""


def rename(wheel: Path, new_name: str, out_dir: Path) -> Path:
    if not NAME_RE.match(new_name):
        raise RenameError(f"{new_name!r} is not a valid distribution name")
    match = WHEEL_RE.match(wheel.name)
    if not match:
        raise RenameError(f"{wheel.name} is not a wheel file name (name-version[-build]-py-abi-platform.whl)")
    if escaped(match["name"]) == escaped(new_name):
        raise RenameError(f"{wheel.name} is already named {new_name}")
    try:
        with zipfile.ZipFile(wheel) as zf:
            infos = [i for i in zf.infolist() if not i.is_dir()]
            files = {i.filename: zf.read(i) for i in infos}
            modes = {i.filename: i.external_attr for i in infos}
    except zipfile.BadZipFile as exc:
        raise RenameError(f"{wheel.name} is not a wheel ({exc})") from exc

    prefixes = {n.split("/", 1)[0].removesuffix(".dist-info") for n in files if ".dist-info/" in n}
    dist_infos = [
        f"{p}.dist-info" for p in prefixes if "-" in p and escaped(p.rsplit("-", 1)[0]) == escaped(match["name"])
    ]
    if len(dist_infos) != 1:
        raise RenameError(f"{wheel.name} is not a wheel: it has no single {match['name']}-*.dist-info folder")
    dist_info = dist_infos[0]
    if problems := record_problems(files, dist_info):
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise RenameError(f"{wheel.name}: its RECORD does not match its files: {problems[0]}{more}")

    old_prefix = dist_info[: -len(".dist-info")]
    version = old_prefix.rsplit("-", 1)[1]
    new_prefix = f"{escaped(new_name)}-{version}"
    moves = {f"{old_prefix}.dist-info/": f"{new_prefix}.dist-info/", f"{old_prefix}.data/": f"{new_prefix}.data/"}
    new_files: dict[str, bytes] = {}
    new_modes: dict[str, int] = {}
    for name, data in files.items():
        if name == f"{dist_info}/RECORD" or is_signature(name, dist_info):
            continue  # RECORD is rewritten; a signature of the old RECORD would no longer match
        target = next((new + name[len(old) :] for old, new in moves.items() if name.startswith(old)), name)
        new_files[target] = data
        new_modes[target] = modes[name]

    meta_name = f"{new_prefix}.dist-info/METADATA"
    meta = new_files.get(meta_name, b"").decode("utf-8")
    head, sep, body = meta.partition("\n\n")  # the description body may contain "Name:" lines of its own
    head, n = re.subn(r"(?m)^Name:[ \t]*\S.*$", f"Name: {new_name}", head, count=1)
    if n != 1:
        raise RenameError(f"{wheel.name} is not a wheel: its METADATA has no Name field")
    new_files[meta_name] = (head + sep + body).encode("utf-8")

    parts = [escaped(new_name), version] + ([match["build"]] if match["build"] else [])
    out = out_dir / ("-".join([*parts, match["py"], match["abi"], match["plat"]]) + ".whl")
    write_wheel(out, new_files, new_modes, f"{new_prefix}.dist-info")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("wheel", type=Path, help="the wheel to rename")
    ap.add_argument("new_name", help="the new distribution name, e.g. opencv-python-headless")
    ap.add_argument("-o", "--out-dir", type=Path, required=True, help="where to write the renamed wheel")
    args = ap.parse_args(argv)
    try:
        out = rename(args.wheel, args.new_name, args.out_dir)
    except (RenameError, OSError, ValueError) as exc:  # ValueError: e.g. a METADATA that is not UTF-8
        print(f"rename_wheel: {exc}", file=sys.stderr)
        return 1
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
