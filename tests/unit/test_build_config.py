"""The `flet build ipa|apk|macos` configuration, resolved offline by flet-cli 1.0.5's own code.

flet-cli's real `flet build` command is parsed by its real parser (`flet_cli.cli.get_parser`) and
run through its real `handle()` pipeline; only what needs the Flutter SDK or the network is
stubbed: finding/downloading Flutter, the JDK and Android SDK, rendering the downloaded Flutter
template, icons and splash, `flutter build`, signing, and the one subprocess (`dart run
serious_python:main package ...`), whose command line is captured instead of run. So
`setup_template_data` (bundle id, Info.plist, entitlements, Android permissions) and
`package_python_app` (the exclude list and the whole package command line) run for real on a
copy of this project. The host is pretended to be a Mac for ipa/macos (flet-cli refuses those on
Linux before configuring anything).

The bundled-Python list normally comes from python-build's manifest.json on GitHub; the test
hands flet-cli a local copy (FLET_PYTHON_BUILD_MANIFEST, flet-cli's own override).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from flet_cli.cli import get_parser
from flet_cli.commands.build import Command
from flet_cli.utils import python_versions

PROJECT = Path(__file__).resolve().parents[2]
# flet-cli 1.0.5 bundles Python 3.12-3.14 only; 3.12 is the nearest to the tested 3.11.
MOBILE_PYTHON = "3.12"
DART = "/stub/flutter/bin/dart"

# python-build's manifest.json at its release 20260730 (the newest readable here; flet-cli 1.0.5
# pins 20260921). Only the short versions and Android ABIs matter to the configuration.
PYTHON_BUILD_MANIFEST = {
    "default_python_version": "3.14",
    "dart_bridge_version": "1.7.1",
    "pythons": {
        short: {
            "full_version": full,
            "standalone_release_date": "20260623",
            "pyodide_version": pyodide,
            "pyodide_platform_tag": tag,
            "android_abis": ["arm64-v8a", "x86_64", "armeabi-v7a"],
            "prerelease": False,
        }
        for short, full, pyodide, tag in (
            ("3.12", "3.12.13", "0.27.7", "pyodide-2024.0-wasm32"),
            ("3.13", "3.13.14", "0.29.4", "pyemscripten-2025.0-wasm32"),
            ("3.14", "3.14.6", "314.0.3", "pyemscripten-2026.0-wasm32"),
        )
    },
}

IOS_CAMERA = "Keyframe uses the camera to analyse your practice on this device. Images never leave it."
MACOS_CAMERA = "Keyframe uses the camera to analyse your practice on this Mac. Images never leave it."
FLET_DEFAULT_CAMERA = "This app uses the camera to capture photos and videos."

# [project].dependencies as flet-cli passes them: sorted, a space before `<`/`>` (for Windows' cmd).
# Plain `flet`: flet[all]'s web server and CLI tools have no iOS/Android wheels (the `desktop` extra).
REQUIREMENTS = [
    "-r", "MNN==3.6.1",
    "-r", "flet-audio==1.0.5",
    "-r", "flet-camera==1.0.5",
    "-r", "flet-charts==1.0.5",
    "-r", "flet==1.0.5",
    "-r", "httpx <1, >=0.28",
    "-r", "numpy >=1.26",
    "-r", "opencv-python-headless >=4.10",
    "-r", "pillow >=10.4",
    "-r", "platformdirs >=4.2",
]  # fmt: skip
EXCLUDES = [
    "--exclude", "build",
    "--exclude", "tests",
    "--exclude", "tools",
    "--exclude", "bench",
    "--exclude", "docs",
    "--exclude", "scripts",
    "--exclude", "build_configs",
    "--exclude", "keyframe.egg-info",
    "--exclude", "README.md",
    "--exclude", ".venv",
    "--exclude", ".venv-gen",
    "--exclude", "model_store/qwen3-vl-2b-instruct-mnn",
]  # fmt: skip
CLEANUP = [
    "--compile-app",
    "--compile-packages",
    "--cleanup-app-files", "**.safetensors",
    "--cleanup-app-files", "**.gguf",
    "--cleanup-app-files", "**.onnx",
    "--cleanup-app-files", "**.onnx.data",
    "--cleanup-app-files", "**.pt",
    "--cleanup-app-files", "**.pth",
    "--cleanup-app-files", "**.ckpt",
    "--cleanup-app-files", "**.part",
    "--cleanup-app-files", "**.incomplete",
    "--cleanup-app",
    "--cleanup-packages",
]  # fmt: skip


def package_command(app: Path, platform: str, arch: str | None) -> list[str]:
    """The exact `serious_python package` command line flet-cli runs for this project."""
    head = [DART, "run", "--suppress-analytics", "serious_python:main", "package", str(app)]
    head += ["--platform", platform, "--python-version", MOBILE_PYTHON]
    return head + (["--arch", arch] if arch else []) + REQUIREMENTS + EXCLUDES + CLEANUP


class Stopped(Exception):
    """flet-cli's `cleanup(code != 0, message)`: the build would have stopped here."""


@dataclass
class Build:
    command: Command
    app: Path
    runs: list[tuple[list[str], str, dict[str, str]]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    finished: bool = False

    @property
    def data(self) -> dict[str, Any]:
        assert self.command.template_data is not None
        return self.command.template_data

    @property
    def package(self) -> tuple[list[str], str, dict[str, str]]:
        (call,) = [run for run in self.runs if run[0][3:5] == ["serious_python:main", "package"]]
        return call

    def flutter_args(self) -> list[str]:
        args: list[str] = []
        self.command.add_flutter_command_args(args)
        return args


def project_copy(dest: Path) -> Path:
    """This project's files as a clean checkout has them (tracked and new, not ignored), without
    top-level hidden entries (.git, .github, .ci: flet-cli's default excludes, which vary by
    checkout) and without __pycache__, so the command line is the same on every machine."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=PROJECT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        source = PROJECT / rel
        if rel.startswith(".") or not source.is_file():  # hidden, or deleted in the work tree
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    return dest


def run_build(monkeypatch: pytest.MonkeyPatch, app: Path, target: str, *extra: str) -> Build:
    """`flet build <target> <app> --python-version 3.12 <extra>` through flet-cli's real handle()."""
    options = get_parser().parse_args(["build", target, str(app), "--python-version", MOBILE_PYTHON, *extra])
    command = options.handler.__self__
    assert isinstance(command, Command)
    build = Build(command, app)

    def skip(name: str, result: Any = None):
        def stub(*_args: Any, **_kwargs: Any) -> Any:
            build.skipped.append(name)
            return result

        return stub

    def no_download(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("flet-cli tried to download the Flutter SDK")

    def run(args: list[str], cwd: str, env: dict[str, str] | None = None, capture_output: bool = True):
        build.runs.append(([str(a) for a in args], cwd, dict(env or {})))
        (app / "build" / "python-app").mkdir(parents=True, exist_ok=True)  # what serious_python stages
        return subprocess.CompletedProcess(args, 0, "", "")

    def cleanup(exit_code: int, message: Any = None, no_border: bool = False) -> None:
        if exit_code:
            raise Stopped(f"exit {exit_code}: {message}")
        build.finished = True

    # The Flutter SDK: found (at a stub path) and of the right version, never downloaded.
    monkeypatch.setattr(command, "find_flutter_batch", lambda exe: f"/stub/flutter/bin/{exe}")
    monkeypatch.setattr(command, "flutter_version_valid", lambda: True)
    monkeypatch.setattr(command, "install_flutter", no_download)
    # Android: JDK and SDK (downloads).
    monkeypatch.setattr(command, "_confirm_android_sdk_installation", lambda: True)
    monkeypatch.setattr(command, "install_jdk", skip("install_jdk"))
    monkeypatch.setattr(command, "install_android_sdk", skip("install_android_sdk"))
    # Steps that need the Flutter template (downloaded), Flutter itself or Xcode.
    monkeypatch.setattr(command, "create_flutter_project", skip("create_flutter_project", False))
    for name in (
        "register_flutter_extensions",
        "update_flutter_dependencies",
        "customize_icons",
        "customize_splash_images",
        "run_flutter",
        "copy_build_output",
        "sign_macos_app",
    ):
        monkeypatch.setattr(command, name, skip(name))
    monkeypatch.setattr(command, "run", run)
    monkeypatch.setattr(command, "cleanup", cleanup)
    if target in ("ipa", "macos"):
        monkeypatch.setattr(command, "current_platform", "Darwin")

    command.handle(options)
    assert build.finished, "flet-cli did not reach the end of its build pipeline"
    return build


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    manifest = tmp_path / "python-build-manifest.json"
    manifest.write_text(json.dumps(PYTHON_BUILD_MANIFEST), encoding="utf-8")
    monkeypatch.setenv(python_versions.MANIFEST_PATH_ENV, str(manifest))
    for name in list(os.environ):  # signing and web settings a developer's shell may carry
        if name.startswith(("FLET_MACOS_", "FLET_ANDROID_", "FLET_WEB_", "APPLE_API_", "SERIOUS_PYTHON_")):
            monkeypatch.delenv(name)
    python_versions._load_data.cache_clear()
    yield project_copy(tmp_path / "keyframe")
    python_versions._load_data.cache_clear()


def package_env(app: Path, *, darwin: bool) -> dict[str, str]:
    env = {
        "SERIOUS_PYTHON_VERSION": MOBILE_PYTHON,
        "SERIOUS_PYTHON_SITE_PACKAGES": str(app / "build" / "site-packages"),
        "SERIOUS_PYTHON_APP": str(app / "build" / "python-app"),
        "SERIOUS_PYTHON_BUNDLE_ID": "dev.keyframe.app",
        "SERIOUS_PYTHON_FLUTTER_PACKAGES": str(app / "build" / "flutter-packages-temp"),
    }
    if darwin:
        env["SERIOUS_PYTHON_DARWIN_SPM"] = "true"
        env["SERIOUS_PYTHON_SPM_KEY_FILE"] = str(app / "build" / ".serious_python_spm_key")
    return env


def check_identity(build: Build) -> None:
    assert build.data["bundle_id"] == "dev.keyframe.app"
    assert build.data["org_name"] == "dev.keyframe"
    assert build.data["product_name"] == "Keyframe"
    assert build.data["python_module_name"] == "main"
    assert build.data["options"]["python_version"] == MOBILE_PYTHON


def test_ios(monkeypatch: pytest.MonkeyPatch, offline: Path) -> None:
    build = run_build(monkeypatch, offline, "ipa")
    check_identity(build)
    options = build.data["options"]
    assert options["info_plist"]["NSCameraUsageDescription"] == IOS_CAMERA
    assert options["target_arch"] == ["iphoneos.arm64", "iphonesimulator.arm64"]

    args, cwd, env = build.package
    assert args == package_command(offline, "iOS", "iphoneos.arm64,iphonesimulator.arm64")
    assert cwd == str(offline / "build" / "flutter")
    assert env == package_env(offline, darwin=True)
    assert build.flutter_args() == ["build", "ipa", "--no-codesign", "--build-name", "0.1.0"]
    assert "install_jdk" not in build.skipped


def test_macos(monkeypatch: pytest.MonkeyPatch, offline: Path) -> None:
    build = run_build(monkeypatch, offline, "macos")
    check_identity(build)
    options = build.data["options"]
    assert options["info_plist"]["NSCameraUsageDescription"] == MACOS_CAMERA
    assert options["macos_entitlements"]["com.apple.security.device.camera"] is True
    assert options["macos_entitlements"]["com.apple.security.network.client"] is True  # model downloads
    assert options["target_arch"] == []  # arm64 and x86_64: serious_python installs both

    args, _, env = build.package
    assert args == package_command(offline, "Darwin", None)
    assert env == package_env(offline, darwin=True)
    assert build.flutter_args() == ["build", "macos", "--build-name", "0.1.0"]


def test_android(monkeypatch: pytest.MonkeyPatch, offline: Path) -> None:
    build = run_build(monkeypatch, offline, "apk")
    check_identity(build)
    options = build.data["options"]
    assert options["android_permissions"] == {"android.permission.INTERNET": True, "android.permission.CAMERA": True}
    assert options["android_features"]["android.hardware.camera"] is False  # not required to install
    assert options["target_arch"] == ["arm64-v8a"]
    assert sorted(options["android_excluded_abis"]) == ["armeabi-v7a", "x86_64"]

    args, _, env = build.package
    assert args == package_command(offline, "Android", "arm64-v8a")
    assert env == package_env(offline, darwin=False)
    # OpenCV ships unzipped: flet-cli hands it to the Gradle build.
    assert build.command._serious_python_build_env()["SERIOUS_PYTHON_ANDROID_EXTRACT_PACKAGES"] == "cv2"
    assert build.flutter_args() == ["build", "apk", "--target-platform", "android-arm64", "--build-name", "0.1.0"]
    assert build.skipped[:2] == ["install_jdk", "install_android_sdk"]


def packaged_files(app: Path, args: list[str]) -> set[str]:
    """What serious_python 4.5 puts in the app package: it copies the app leaving out every
    `--exclude` path that equals an entry's path relative to the app (no globs), then deletes what
    matches a `--cleanup-app-files` glob. Only `**.<suffix>` globs are modelled here."""
    excludes = {args[i + 1] for i, a in enumerate(args) if a == "--exclude"}
    globs = [args[i + 1] for i, a in enumerate(args) if a == "--cleanup-app-files"]
    assert all(g.startswith("**.") and "*" not in g[3:] for g in globs), globs
    suffixes = tuple(g[2:] for g in globs)
    kept: set[str] = set()

    def copy(folder: Path) -> None:
        for entry in folder.iterdir():
            rel = entry.relative_to(app).as_posix()
            if rel in excludes:
                continue
            if entry.is_dir():
                copy(entry)
            elif not rel.endswith(suffixes):
                kept.add(rel)

    copy(app)
    return kept


def test_model_weights_stay_out_except_the_demo_model(monkeypatch: pytest.MonkeyPatch, offline: Path) -> None:
    manifests = [json.loads(p.read_text()) for p in sorted((PROJECT / "model_store" / "manifests").glob("*.json"))]
    downloaded = [m["id"] for m in manifests if not m.get("bundled")]
    bundled = [m["bundled"] for m in manifests if m.get("bundled")]
    assert bundled == ["keyframe-demo"] and downloaded, (bundled, downloaded)

    # A model downloaded (or copied by hand) into the project, stray weights, a partial download.
    fakes = [
        *(f"model_store/{model}/{name}" for model in downloaded for name in ("llm.mnn", "llm.mnn.weight")),
        "model_store/stray.safetensors",
        "model_store/keyframe-demo/llm.mnn.weight.part",
        "assets/examples/model.gguf",
        "app/engine/weights.onnx",
        "tools/demo_model/out/llm.mnn.weight",
        ".venv-gen/lib/torch/model.pt",
    ]
    for rel in fakes:
        (offline / rel).parent.mkdir(parents=True, exist_ok=True)
        (offline / rel).write_bytes(b"\0" * 16)

    build = run_build(monkeypatch, offline, "apk")
    args = build.package[0]
    excludes = [args[i + 1] for i, a in enumerate(args) if a == "--exclude"]
    for model in downloaded:
        assert f"model_store/{model}" in excludes
    assert not {"model_store", "model_store/keyframe-demo", "app", "assets", "main.py"} & set(excludes)

    packaged = packaged_files(offline, args)
    demo = {f"model_store/keyframe-demo/{p.name}" for p in (PROJECT / "model_store" / "keyframe-demo").iterdir()}
    assert {"llm.mnn", "llm.mnn.weight", "visual.mnn", "visual.mnn.weight"} <= {Path(p).name for p in demo}
    assert demo <= packaged
    assert not set(fakes) & packaged
    in_store = {p for p in packaged if p.startswith("model_store/")}
    assert {p.split("/")[1] for p in in_store} == {"keyframe-demo", "manifests", "profiles"}
    assert {p.split("/")[0] for p in packaged} == {"app", "assets", "model_store", "main.py", "pyproject.toml"}


def test_bundled_python_needs_the_flag(monkeypatch: pytest.MonkeyPatch, offline: Path) -> None:
    """Without --python-version flet-cli takes the highest version requires-python allows (3.14);
    3.11, the version the tests run on, is not one flet-cli 1.0.5 can bundle."""
    from flet_cli.utils.pyproject_toml import load_pyproject_toml

    get_pyproject = load_pyproject_toml(offline)
    assert python_versions.resolve_python_version(None, get_pyproject).short == "3.14"
    assert python_versions.resolve_python_version(MOBILE_PYTHON, get_pyproject).short == MOBILE_PYTHON
    with pytest.raises(python_versions.UnsupportedPythonVersionError):
        python_versions.resolve_python_version("3.11", get_pyproject)
