"""Bad-input corpus, still images: each case is a per-file ImageRejected with a sensible
reason or a correct decode; never another exception, never a hang (issue 7, items 9-11)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from app.frames.intake import ImageRejected, read_image_file
from tests.faults.corpus import DECODED, Case, image_cases, path_cases, run_bounded

PER_CASE_S = 10.0


def _judge(case: Case) -> str | None:
    """None when the case behaves, else what went wrong."""
    try:
        image = run_bounded(lambda: read_image_file(case.path), PER_CASE_S)
    except ImageRejected as exc:
        if exc.reason not in case.reasons:
            return f"rejected as {exc.reason!r} ({exc}), expected {sorted(case.reasons) or 'a decode'}"
        json.dumps({"message": str(exc)}, ensure_ascii=False).encode("utf-8")  # printable for any writer
        return None
    except AssertionError as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - exactly what must never happen
        return f"raised {type(exc).__name__}: {exc}"
    if case.reasons and DECODED not in case.reasons:
        return f"decoded {image.width}x{image.height}, expected {sorted(case.reasons)}"
    try:
        (case.check or (lambda _: None))(image)
    except AssertionError as exc:
        return f"wrong decode: {exc}"
    return None


def _run(cases: list[Case]) -> None:
    problems = {case.name: p for case in cases if (p := _judge(case)) is not None}
    assert not problems, "\n".join(f"{name}: {p}" for name, p in problems.items())


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> list[Case]:
    return image_cases(tmp_path_factory.mktemp("corpus"))


def test_image_corpus(images: list[Case]) -> None:
    start = time.perf_counter()
    _run(images)
    assert len(images) >= 80
    print(f"{len(images)} image cases in {time.perf_counter() - start:.2f} s")


def test_names_and_special_files(tmp_path: Path) -> None:
    cases = path_cases(tmp_path)
    _run(cases)
    assert len(cases) >= 15


def test_a_batch_goes_on_past_every_bad_file(images: list[Case], tmp_path: Path) -> None:
    """The whole corpus as one folder: every file has an outcome, in name order, nothing raises."""
    from app.frames.listing import list_inputs

    folder = images[0].path.parent
    report = list_inputs([str(folder)])
    outcomes = []
    for item in report.items:
        assert item.error is None
        try:
            read_image_file(item.path)
            outcomes.append("ok")
        except ImageRejected as exc:
            outcomes.append(exc.reason)
    assert len(outcomes) == len(images) and not report.skipped
    assert outcomes.count("ok") >= 50 and len(set(outcomes)) >= 7
