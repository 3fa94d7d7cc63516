from __future__ import annotations

import copy
import hashlib
from pathlib import Path

import pytest

from app.models.manifest import ManifestError, check_relative_path, manifest_from_dict
from app.models.verify import FileState, HashProgress, sha256_file, verify_folder

SHA = "a" * 64
REFERENCE = {
    "device": {"en": "2-core laptop CPU", "zh": "双核笔记本处理器"},
    "keyframe_s": 2.5,
    "peak_memory_mib": 1024,
    "command": "bench",
}
BASE = {
    "schema": 1,
    "id": "some-model",
    "revision": "r1",
    "files": [{"path": "config.json", "sha256": SHA, "size": 3}, {"path": "sub/llm.mnn", "sha256": SHA}],
}


@pytest.mark.parametrize(
    "path",
    ["/etc/passwd", "../x", "a/../../x", "a//b", "./a", "a/.", "C:/x", "c:x", "a\\b", "~/x", "", "a\x00b"],
)
def test_paths_that_could_escape_are_rejected(path: str) -> None:
    with pytest.raises(ManifestError):
        check_relative_path(path)
    data = copy.deepcopy(BASE)
    data["files"][0]["path"] = path
    with pytest.raises(ManifestError):
        manifest_from_dict(data)


@pytest.mark.parametrize(
    "change",
    [
        {"schema": 2},
        {"id": "Bad Id"},
        {"files": []},
        {"files": [{"path": "a", "sha256": "ABC"}]},
        {"files": [{"path": "a", "sha256": SHA, "size": -1}]},
        {"files": [{"path": "a", "sha256": SHA}, {"path": "A", "sha256": SHA}]},
        {"bundled": "../elsewhere"},
        {"purpose": "a sentence without its language"},
        {"purpose": {"en": "  "}},
        {"reference": {"device": "x", "keyframe_s": 1}},
        {"reference": {**REFERENCE, "keyframe_s": 0}},
        {"reference": {**REFERENCE, "peak_memory_mib": float("nan")}},
        {"reference": {**REFERENCE, "peak_memory_mib": True}},
        {"reference": {**REFERENCE, "device": ""}},
        {"reference": {**REFERENCE, "device": {}}},
        {"reference": {**REFERENCE, "extra": 1}},
    ],
)
def test_malformed_manifests_are_rejected(change: dict) -> None:
    with pytest.raises(ManifestError):
        manifest_from_dict({**BASE, **change})


def test_what_a_model_is_for_and_what_it_costs_are_read_in_every_language_given() -> None:
    plain = manifest_from_dict(BASE)
    assert (plain.purpose_in("zh"), plain.reference) == ("", None)
    said = manifest_from_dict({**BASE, "purpose": {"en": " For demos. ", "zh": "用于演示。"}, "reference": REFERENCE})
    assert (said.purpose_in("en"), said.purpose_in("zh"), said.purpose_in("fr")) == (
        "For demos.",
        "用于演示。",
        "For demos.",
    )
    assert said.reference is not None and said.reference.peak_memory_bytes == 1024 * 1024 * 1024
    reference = said.reference
    assert (reference.device_in("en"), reference.device_in("zh"), reference.device_in("fr")) == (
        "2-core laptop CPU",
        "双核笔记本处理器",
        "2-core laptop CPU",
    )
    assert (reference.keyframe_s, reference.command) == (2.5, "bench")


def test_total_size_only_when_every_size_is_known() -> None:
    assert manifest_from_dict(BASE).total_size is None
    data = copy.deepcopy(BASE)
    data["files"][1]["size"] = 5
    assert manifest_from_dict(data).total_size == 8


def test_verify_names_each_failing_file(tmp_path: Path) -> None:
    (tmp_path / "a.bin").write_bytes(b"hello")
    (tmp_path / "b.bin").write_bytes(b"world")
    (tmp_path / "c.bin").write_bytes(b"12345")
    good = sha256_file(tmp_path / "a.bin")
    manifest = manifest_from_dict(
        {
            "schema": 1,
            "id": "m",
            "revision": "r",
            "files": [
                {"path": "a.bin", "sha256": good, "size": 5},
                {"path": "b.bin", "sha256": good, "size": 5},
                {"path": "c.bin", "sha256": good, "size": 4},
                {"path": "d.bin", "sha256": good},
            ],
        }
    )
    report = verify_folder(tmp_path, manifest)
    states = {c.path: c.state for c in report.checks}
    assert states == {
        "a.bin": FileState.OK,
        "b.bin": FileState.WRONG_HASH,
        "c.bin": FileState.WRONG_SIZE,
        "d.bin": FileState.MISSING,
    }
    assert not report.ok
    assert "b.bin" in report.describe() and "a.bin" not in report.describe()


def test_a_symlink_is_not_accepted_as_a_model_file(tmp_path: Path) -> None:
    (tmp_path / "real.bin").write_bytes(b"x")
    (tmp_path / "link.bin").symlink_to(tmp_path / "real.bin")
    manifest = manifest_from_dict(
        {
            "schema": 1,
            "id": "m",
            "revision": "r",
            "files": [{"path": "link.bin", "sha256": sha256_file(tmp_path / "real.bin")}],
        }
    )
    assert verify_folder(tmp_path, manifest).checks[0].state is FileState.NOT_A_FILE


def test_verify_reports_the_bytes_it_has_hashed_before_each_chunk(tmp_path: Path) -> None:
    mib = 1 << 20
    contents = {"a.bin": b"a" * (2 * mib + mib // 2), "b.bin": b"b" * 10}
    for path, content in contents.items():
        (tmp_path / path).write_bytes(content)
    files = [{"path": "gone.bin", "sha256": SHA}]
    files += [{"path": p, "sha256": hashlib.sha256(c).hexdigest()} for p, c in contents.items()]
    manifest = manifest_from_dict({"schema": 1, "id": "m", "revision": "r", "files": files})
    seen: list[HashProgress] = []
    assert not verify_folder(tmp_path, manifest, seen.append).ok  # gone.bin is missing
    total = 2 * mib + mib // 2 + 10
    assert [(p.path, p.file_index, p.done) for p in seen] == [
        ("a.bin", 2, 0),
        ("a.bin", 2, mib),
        ("a.bin", 2, 2 * mib),
        ("b.bin", 3, total - 10),  # the short last chunk of a.bin counted as it was, not as a MiB
    ]
    assert {(p.file_count, p.total) for p in seen} == {(3, total)}
