from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.servers.nginx import Nginx, nginx_binary

# One thread for each native pool (MNN's, OpenBLAS's) in every test process and what it starts: the suite
# runs four workers on two cores, and a pool that spins while its threads wait for a core made model tests
# 50-100 times slower beside a busy machine (docs/testing.md). The app honours OMP_NUM_THREADS as a cap.
os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parents[1]
# tools/ is not part of the installed app; tests use its scene generator for held-out images.
sys.path.insert(0, str(ROOT / "tools"))

# Hypothesis fails an example that takes over 200 ms by default: a timed test, which a busy machine
# (CI here runs at a load of about 10) fails at random. The properties are what the tests judge.
settings.register_profile("keyframe", deadline=None)
settings.load_profile("keyframe")


@pytest.fixture(autouse=True)
def _isolated_storage(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the user's real data and cache folders."""
    base = tmp_path_factory.getbasetemp() / "storage"
    monkeypatch.setenv("FLET_APP_STORAGE_DATA", str(base / "data"))
    monkeypatch.setenv("FLET_APP_STORAGE_CACHE", str(base / "cache"))


@pytest.fixture
def nginx(tmp_path: Path) -> Iterator[Nginx]:
    """A real nginx on 127.0.0.1 serving tmp_path/docroot (the download and Models-screen tests)."""
    binary = nginx_binary()
    if binary is None:
        pytest.skip("nginx is not installed (Debian: apt-get install nginx); the nginx download tests need it")
    (tmp_path / "docroot").mkdir()
    with Nginx(binary, tmp_path / "docroot", tmp_path / "nginx") as server:
        yield server


def pytest_sessionstart(session: pytest.Session) -> None:
    from app.privacy.guard import NetworkGuard, install

    # The same guard the app installs: any outbound connection from test code fails.
    session.config._keyframe_guard = install(NetworkGuard())  # type: ignore[attr-defined]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    guard = getattr(config, "_keyframe_guard", None)
    if guard is None:
        return
    counts = (guard.blocked_count, guard.outbound_count)
    if hasattr(config, "workeroutput"):  # a pytest-xdist worker: its counts go to the controller
        config.workeroutput["privacy_guard"] = counts
        return
    # Under pytest-xdist the tests ran in the workers: their guards' counts, summed as each ended.
    for worker in getattr(config, "_keyframe_worker_guards", []):
        counts = (counts[0] + worker[0], counts[1] + worker[1])
    blocked, outbound = counts
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    line = f"privacy guard: {blocked} outbound connections blocked, {outbound} let through"
    if reporter is not None:
        reporter.write_line(line)
    if blocked or outbound:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """A worker ended: keep what its privacy guard counted (a worker that crashed has no counts, and
    its crash fails the run by itself)."""
    counts = getattr(node, "workeroutput", {}).get("privacy_guard")
    if counts is not None:
        node.config.__dict__.setdefault("_keyframe_worker_guards", []).append(tuple(counts))


def netns_unavailable() -> str | None:
    """Why this machine cannot make an unprivileged user + network namespace, or None when it can."""
    if shutil.which("unshare") is None:
        return "unshare is not installed (Debian: util-linux)"
    probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True, text=True, timeout=10)
    return None if probe.returncode == 0 else f"unshare -rn fails here: {probe.stderr.strip()}"


@pytest.fixture(scope="session")
def netns() -> None:
    """Skips (a failure under CI=true) where the kernel refuses unprivileged network namespaces."""
    reason = netns_unavailable()
    if reason is not None:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def strace() -> str:
    """The strace binary; skips (a failure under CI=true) where it is missing or cannot trace."""
    path = shutil.which("strace")
    if path is None:
        pytest.skip("strace is not installed (Debian: strace)")
    probe = subprocess.run(
        [path, "-f", "-e", "trace=network", "-o", os.devnull, "true"], capture_output=True, text=True
    )
    if probe.returncode != 0:
        pytest.skip(f"strace cannot trace here: {probe.stderr.strip()}")
    return path


@pytest.fixture
def real_tmpfs(tmp_path: Path) -> None:
    """Skips (a failure under CI=true) where no tmpfs can be mounted in a user namespace (`unshare -rm`):
    the full-disk and read-only-disk tests, whose ENOSPC and EROFS come from the kernel."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare is not installed (Debian: util-linux); the real full and read-only disk tests need it")
    probe = tmp_path / "probe"
    probe.mkdir()
    result = subprocess.run(
        ["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs '{probe}'"], capture_output=True, timeout=10
    )
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs in a user namespace here (unshare -rm): {result.stderr.decode().strip()}")


def pytest_report_header(config: pytest.Config) -> str:
    return f"keyframe root: {ROOT} (CI={os.environ.get('CI', '')})"


# --- kinds of test: what ran, and no silent skip of a real browser, nginx or full disk in CI ----------

# Markers for tests that need a real outside tool; each is set in its test modules (pytestmark).
TOOL_MARKERS = ("browser", "nginx", "enospc", "netns", "strace")
FOLDER_KINDS = ("unit", "integration", "faults", "models", "e2e")


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def _folder_of(nodeid: str) -> str:
    """`unit` for "tests/unit/test_x.py::test_y"; "tests" for a test directly in tests/."""
    parts = nodeid.split("::")[0].split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "tests" else "tests"


def _folder_kind(item: pytest.Item) -> str:
    return _folder_of(item.nodeid)


def _tool_kinds(item: pytest.Item) -> tuple[str, ...]:
    return tuple(m for m in TOOL_MARKERS if item.get_closest_marker(m) is not None)


def report_kinds(report: pytest.TestReport) -> tuple[str, tuple[str, ...]]:
    """The folder and tool markers of a report's test, read off the report itself: under pytest-xdist
    the process that prints the summary never collected the tests."""
    return _folder_of(report.nodeid), tuple(m for m in TOOL_MARKERS if m in report.keywords)


def marker_mismatches(items: list[pytest.Item]) -> list[str]:
    """Each marker selects what it says: `browser` = tests/e2e, `nginx` = tests using the real nginx server,
    `enospc` = tests that mount a real tiny filesystem (`real_tmpfs` fixture), `netns` = tests that need
    unprivileged network namespaces (`netns` fixture), `strace` = tests that trace syscalls (`strace` fixture)."""
    rules = {
        "browser": lambda i: _folder_kind(i) == "e2e",
        "nginx": lambda i: "nginx" in getattr(i, "fixturenames", ()),
        "enospc": lambda i: "real_tmpfs" in getattr(i, "fixturenames", ()),
        "netns": lambda i: "netns" in getattr(i, "fixturenames", ()),
        "strace": lambda i: "strace" in getattr(i, "fixturenames", ()),
    }
    wrong = []
    for item in items:
        for marker, should in rules.items():
            has = item.get_closest_marker(marker) is not None
            if has != should(item):
                wrong.append(f"{item.nodeid}: {'has' if has else 'lacks'} the {marker!r} marker")
    return wrong


# The quick tier (`./scripts/test.sh -m quick`, for the edit–test loop): the pure logic of tests/unit
# (parser, sampler, reducer, estimators, views without a client), without its two fuzzers (half its time).
NOT_QUICK = frozenset({"test_fuzz_parser.py", "test_fuzz_intake.py"})


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "quick: the quick tier for the edit-test loop (tests/unit but its fuzzers)")


def pytest_collection_finish(session: pytest.Session) -> None:
    # After collecting, not before: xdist schedules nothing until every worker has collected, and at nice 19
    # beside a loaded machine a spare worker had not finished collecting after eight minutes.
    if is_spare_worker(os.environ.get("PYTEST_XDIST_WORKER", "")):
        os.nice(SPARE_NICE)  # what it starts (workers, servers) inherits it


# The first three xdist workers run the browser tests first, then the rest. A fourth one and any after it are
# spare: they take only tests without a browser, two at most in hand, at a low CPU priority, so they use the CPU
# the browser tests leave idle while they wait on video, camera and download time and take little from them.
# Three browsers, not two: the browser tests wait on that time more than on the CPU (without WebGL their
# Chromium needs a fifth less), and a third one ended a fresh-clone run 28 s sooner (docs/testing.md).
# Nice 10, not 19: beside four busy processes a nice-19 test gets under 1 % of a core, and the suite's end
# would wait on it.
MAIN_WORKERS = ("gw0", "gw1", "gw2")
SPARE_NICE = 10


def is_spare_worker(worker: str) -> bool:
    return worker.startswith("gw") and worker not in MAIN_WORKERS


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects: the check sees every collected test
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    wrong = marker_mismatches(items)
    if wrong:
        raise pytest.UsageError("markers do not select what they say:\n  " + "\n  ".join(wrong))
    for item in items:
        if _folder_kind(item) == "unit" and Path(str(item.path)).name not in NOT_QUICK:
            item.add_marker(pytest.mark.quick)


# Browser tests that need the machine to themselves: Chromium's fake camera plays its clip frame by frame
# on a timer, and beside a second browser it fell 3-5 % behind, so the clip's compressions were slower than
# the clip says (108/min read for 112, twice in five runs).
ALONE = ("tests/e2e/test_camera_rhythm.py::",)
# The longest browser tests (30-57 s each on a quiet machine, `--durations` of the CI log) start before the
# others, so the workers end together: in collection order the 47 s trainees test started last and one
# worker idled 29 s at the end (a run's timeline, docs/testing.md). A test missing here only runs later.
LONG_FIRST = (
    "tests/e2e/test_models_screen.py::test_download_cancel_pause_resume",
    "tests/e2e/test_trainees_in_sessions.py::",
    "tests/e2e/test_language.py::test_switching_to_chinese",
    "tests/e2e/test_profile_editor.py::",
    "tests/e2e/test_practice.py::test_a_camera_session_",
    "tests/e2e/test_rhythm_report.py::",
    "tests/e2e/test_testers_per_question.py::test_each_signal",
)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """Under `-n 2` or more each worker takes one test at a time (a spare worker: see MAIN_WORKERS). First the
    browser tests that need to be the only browser (`ALONE`) on the first worker while the other main ones run
    tests without a browser; then the other browser tests on every main worker, the longest (`LONG_FIRST`)
    first; then what is left. A browser test kept about one and a half cores busy (Chromium draws Flutter's
    canvas in software) and other tests beside it ran at half their speed: the tests without a browser took
    506 s of worker time beside the browser tests, 254 s after them (docs/testing.md). (xdist's `--dist load`
    sends the first 200 tests, every browser test among them, to one worker.)"""
    from xdist.scheduler import LoadScopeScheduling

    def browser(nodeid: str) -> bool:
        return nodeid.startswith("tests/e2e/")

    def alone(nodeid: str) -> bool:
        return nodeid.startswith(ALONE)

    def long_browser(nodeid: str) -> bool:
        return nodeid.startswith(LONG_FIRST)

    def other_browser(nodeid: str) -> bool:
        return browser(nodeid) and not alone(nodeid)

    class BrowserTestsFirst(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return nodeid

        def _alone_unfinished(self) -> bool:
            waiting = any(alone(s) for s in self.workqueue)
            units = [(s, done) for assigned in self.assigned_work.values() for s, done in assigned.items()]
            running = any(alone(s) and not all(done.values()) for s, done in units)
            return waiting or running

        def _assign_work_unit(self, node) -> None:
            worker = node.gateway.id
            if is_spare_worker(worker):
                unit = next((s for s in self.workqueue if not browser(s)), None)
                # Two in hand, not more (an xdist worker runs a test once it holds the next one, or at the end);
                # browser tests stay with the main workers.
                if unit is None or self._pending_of(self.assigned_work.get(node, {})) >= 2:
                    return
                self.workqueue.move_to_end(unit, last=False)
                super()._assign_work_unit(node)
                return
            if worker == MAIN_WORKERS[0]:
                wanted = [alone, long_browser, other_browser]
            elif self._alone_unfinished():
                wanted = [lambda s: not browser(s)]
            else:
                wanted = [long_browser, other_browser]
            unit = next((s for want in wanted for s in self.workqueue if want(s)), None)
            unit = unit if unit is not None else next(iter(self.workqueue))
            self.workqueue.move_to_end(unit, last=False)  # the base class takes the first unit
            super()._assign_work_unit(node)

    return BrowserTestsFirst(config, log)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    kinds = _tool_kinds(item)
    if report.skipped and kinds and in_ci() and not hasattr(report, "wasxfail"):
        # In CI the tool must be there (scripts/test.sh installs it): a skip would hide that nothing was tested.
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"a {'/'.join(kinds)} test was skipped under CI=true, which counts as a failure: {reason}"


_KINDS: dict[str, tuple[str, tuple[str, ...]]] = {}  # nodeid -> (folder, tool markers)
_OUTCOMES: dict[str, str] = {}  # nodeid -> passed | failed | skipped
_SECONDS: Counter[str] = Counter()  # nodeid -> seconds of setup, call and teardown


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _KINDS[report.nodeid] = report_kinds(report)
    _SECONDS[report.nodeid] += report.duration
    outcomes = _OUTCOMES
    previous = outcomes.get(report.nodeid)
    if report.failed:
        outcomes[report.nodeid] = "failed"
    elif report.skipped and previous is None:
        outcomes[report.nodeid] = "skipped"
    elif report.when == "call" and report.passed and previous is None:
        outcomes[report.nodeid] = "passed"


def kind_counts(
    kinds: dict[str, tuple[str, tuple[str, ...]]], outcomes: dict[str, str], seconds: Counter[str]
) -> list[str]:
    """One line per kind that had a test, with the time its tests took (setup and teardown included:
    where the suite's time goes): `unit: 300 passed in 61 s`, `browser: 9 passed, 1 failed in 240 s`."""
    tally: dict[str, Counter[str]] = {}
    spent: Counter[str] = Counter()
    for nodeid, outcome in outcomes.items():
        folder, tools = kinds.get(nodeid, ("tests", ()))
        for kind in (folder, *tools):
            tally.setdefault(kind, Counter())[outcome] += 1
            spent[kind] += seconds[nodeid]
    order = [*FOLDER_KINDS, "tests", *TOOL_MARKERS]
    lines = []
    for kind in sorted(tally, key=lambda k: order.index(k) if k in order else len(order)):
        counts = tally[kind]
        text = ", ".join(f"{counts[o]} {o}" for o in ("passed", "failed", "skipped") if counts[o])
        lines.append(f"{kind}: {text} in {spent[kind]:.0f} s")
    for tool in TOOL_MARKERS:
        if tool not in tally:
            lines.append(f"{tool}: 0 ran")
    return lines


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if not _KINDS or config.option.collectonly:
        return
    terminalreporter.section("tests by kind")
    for line in kind_counts(_KINDS, _OUTCOMES, _SECONDS):
        terminalreporter.write_line(line)
