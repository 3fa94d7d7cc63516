"""A compression video played as practice, then its session on the Sessions screen: the rhythm's figures,
the rhythm CSV and the practice report exported, and the report opened as a page and looked at."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from app.session.store import load_session
from tests.e2e.conftest import (
    AppServer,
    close_page,
    go_to,
    node,
    open_app_page,
    shot,
    text_of,
    wait_text,
)
from tests.e2e.test_practice import choose, start_with_files
from tests.integration.video import write_compression_video

pytestmark = pytest.mark.browser
RATE, SECONDS, FPS = 104, 20, 15


def write_video(path: Path) -> None:
    from demo_model.compressions import VideoSpec

    write_compression_video(path, VideoSpec(seconds=SECONDS, fps=FPS, rate_per_min=RATE, pauses=((8.0, 3.0),)), 12)


def test_a_practised_rhythm_is_summarised_exported_and_reported(browser, tmp_path: Path) -> None:
    video = tmp_path / "compressions.avi"
    write_video(video)
    data = tmp_path / "data"
    with AppServer(data) as server:
        page = open_app_page(browser, server.url)
        try:
            wait_text(page, "model-status", "Model ready")
            choose(page, "Video")
            start_with_files(page, [video])
            # The video plays to its end and the session ends by itself.
            wait_text(page, "start-stop", "Stop")
            wait_text(page, "rate", "/min")
            wait_text(page, "start-stop", "Start")
            (log,) = (data / "sessions").glob("*.jsonl")
            last = load_session(log).state.rhythm[-1]

            go_to(page, "Sessions", "sessions-refresh")
            node(page, f"session-row-{log.stem}").click()
            count = wait_text(page, "rhythm-summary-count", "Compressions counted")
            assert f"Compressions counted: {last.count}" in count
            assert f"{last.median_rate_per_min:.0f} /min" in text_of(page, "rhythm-summary-rate")
            assert "100–120" in text_of(page, "rhythm-summary-rate")
            assert text_of(page, "rhythm-summary-pauses").startswith("Pauses of 2 s or more: 1")
            assert "not measured by the camera" in text_of(page, "rhythm-summary-depth")
            shot(page, "sessions-rhythm")

            with page.expect_download() as download:
                node(page, "export-rhythm").click()
            rows = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text(encoding="utf-8"))))
            assert len(rows) == len(load_session(log).state.rhythm) and rows[-1]["compressions"] == str(last.count)

            with page.expect_download() as download:
                node(page, "export-report").click()
            assert download.value.suggested_filename.endswith("-report.html")
            report = Path(download.value.path()).read_text(encoding="utf-8")
            page.request_log.assert_local()
        finally:
            close_page(page)

    saved = tmp_path / "report.html"
    saved.write_text(report, encoding="utf-8")
    for claim in ("Practice feedback, not a medical assessment.", "Depth and recoil: not measured by the camera."):
        assert claim in report
    assert f"Compressions counted: {last.count} in" in report
    # Opened as the examiner would open the file: it asks for nothing from anywhere.
    opened = browser.new_page()
    try:
        requests: list[str] = []
        opened.on("request", lambda r: requests.append(r.url))
        opened.goto(saved.as_uri())
        assert opened.title().startswith("Practice report")
        assert opened.locator("svg[role=img]").count() == 1
        assert "Median rate" in opened.inner_text("body")
        assert requests == [saved.as_uri()], requests
        shot(opened, "practice-report")
    finally:
        opened.close()
