"""Print / Save as PDF from Sessions: the report opens in a tab of the app's own server, once, and prints
as PDF pages that read as the report (rendered to pictures here and looked at)."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest

from tests.conditions import wait_until
from tests.e2e.conftest import SHOTS, AppServer, close_page, go_to, node, open_app_page, wait_text
from tests.e2e.test_practice import choose, sessions, start_with_files
from tests.integration.conftest import held_out_scenes

pytestmark = pytest.mark.browser


def status_of(url: str, host: str | None = None) -> int:
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as refused:
        return int(refused.code)


def test_print_opens_the_report_once_in_a_tab_that_prints_as_pdf(fresh_browser, tmp_path: Path) -> None:
    # A context of its own: it changes `window.print` for every page of it, the printout's tab too.
    import pypdfium2

    image = tmp_path / "yes.jpg"
    image.write_bytes(next(data for _, data, expected in held_out_scenes(1, seed=8) if expected == "yes"))
    with AppServer(tmp_path / "data") as app:
        page = open_app_page(fresh_browser, app.url)
        try:
            wait_text(page, "model-status", "Model ready")
            choose(page, "Image")
            start_with_files(page, [image])
            wait_text(page, "observation", "YES")
            assert wait_until(lambda: sessions(app.data), timeout=30), "a session"
            log = sessions(app.data)[-1]
            # The browser's print dialog would hold the headless tab: it is noted instead, then printed here.
            page.context.add_init_script("window.print = () => { window.printAsked = true; }")
            go_to(page, "Sessions", f"session-row-{log.stem}")
            node(page, f"session-row-{log.stem}").click()
            with page.context.expect_page(timeout=60_000) as opened:
                node(page, "export-print").click()
            tab = opened.value
            tab.wait_for_load_state()
            assert tab.url.startswith(f"{app.url.rstrip('/')}/print/"), tab.url
            assert "Practice report" in tab.title() and "Sign-off" in tab.content()
            assert wait_until(lambda: tab.evaluate("window.printAsked === true"), timeout=30), "it asks to print"
            pdf = tab.pdf(format="A4")
            # Once: the same address again, or the same from another site's name, gets nothing.
            assert status_of(tab.url) == 404
            assert status_of(tab.url, host="evil.example") == 403
            tab.close()
            page.request_log.assert_local()
        finally:
            close_page(page)
    document = pypdfium2.PdfDocument(pdf)
    assert 1 <= len(document) <= 2, f"{len(document)} A4 pages"
    SHOTS.mkdir(parents=True, exist_ok=True)
    for number, sheet in enumerate(document, start=1):
        picture = sheet.render(scale=1.2).to_pil()
        picture.save(SHOTS / f"report-printed-page-{number}.png")
        assert picture.convert("L").getextrema()[0] < 64, f"page {number} holds text, not a blank sheet"
