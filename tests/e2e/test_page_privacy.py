"""The page talks only to the app's own 127.0.0.1 server, and it is Keyframe's page, not Flet's.

Flet's web client asks a public CDN for `rive_native.js` on every load (the URL is
compiled into it). Keyframe's page (assets/index.html, app/ui/shell/web_shell.py) points
that script at its own server (`assets/local-only.js`), and its Content-Security-
Policy refuses anything else that would leave, inside the browser.
"""

from __future__ import annotations

import json
import os
import struct
import time
import urllib.request
from pathlib import Path

import pytest

from app.storage.paths import ASSETS
from tests.e2e.conftest import (
    RequestLog,
    close_page,
    collect_csp_violations,
    evaluate,
    open_app_page,
    record_requests,
    wait_until_loaded,
)

pytestmark = pytest.mark.browser

SIZES = {"desktop": (1280, 800), "phone": (390, 844)}
# Resolves once the page's own "Keyframe SC" face has loaded (the browser loads it only for text it draws).
BUNDLED_FACE_LOADED = """() => new Promise(done => {
    const poll = setInterval(() => {
        if ([...document.fonts].some(f => f.family.includes("Keyframe SC") && f.status === "loaded")) {
            clearInterval(poll);
            done(true);
        }
    }, 100);
})"""


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as resp:
        return resp.read()


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def _wait_model_status(pg) -> None:
    pg.wait_for_function(
        """() => {
            const el = document.querySelector("[flt-semantics-identifier='model-status']");
            return el && /Model ready|Model unavailable/.test(el.innerText);
        }""",
        timeout=90_000,
    )


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Screenshots go to $KEYFRAME_SCREENSHOTS when set (to look at them), else a temporary folder."""
    wanted = os.environ.get("KEYFRAME_SCREENSHOTS")
    folder = Path(wanted) if wanted else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_every_request_of_a_page_load_goes_to_the_apps_own_server(fresh_browser, app_url: str) -> None:
    origin = app_url.rstrip("/")
    log = RequestLog(origin=origin)
    context = fresh_browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        pg = context.new_page()
        record_requests(context, pg, log)
        pg.goto(app_url)
        wait_until_loaded(pg)
        _wait_model_status(pg)
        time.sleep(2)  # anything the client fetches late (plugins initialise after the first frame)
        collect_csp_violations(pg, log)
    finally:
        context.close()
    print("\n" + log.summary())
    urls = log.urls()
    # The recorders did record: the page itself, its script and its websocket were seen.
    assert app_url in urls and f"{origin}/flutter_bootstrap.js" in urls
    assert origin.replace("http://", "ws://") + "/ws" in urls
    assert not log.outside(), log.summary()
    # The CanvasKit build, never the WebAssembly one whose render thread crashes in Chromium
    # (app/ui/shell/web_shell.py says why): a frozen page mid-session is worse than a slower start.
    assert f"{origin}/main.dart.js" in urls and any(u.endswith("canvaskit.wasm") for u in urls), log.summary()
    assert not any(u.endswith(("main.dart.wasm", "skwasm.wasm", "skwasm_heavy.wasm")) for u in urls), log.summary()
    # Flet's client did ask for rive_native.js, and the page kept it on this server.
    assert any("/_not_fetched/cdn.jsdelivr.net/" in url for url in urls), log.summary()
    # Nothing of the app's own was refused by its policy (nothing else had to be).
    assert log.csp_blocked == [], log.summary()


def test_the_policy_refuses_every_other_host_inside_the_browser(fresh_browser, app_url: str) -> None:
    """The backstop: were the page to ask another host for anything, the browser refuses before connecting."""
    log = RequestLog(origin=app_url.rstrip("/"))
    context = fresh_browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        pg = context.new_page()
        record_requests(context, pg, log)
        pg.goto(app_url)
        wait_until_loaded(pg)
        # `.invalid` never resolves: even a policy that failed could not reach anyone.
        pg.evaluate(
            """async () => {
                const img = new Image();
                img.src = 'https://images.example.invalid/pixel.png';
                document.body.append(img);
                try { await fetch('https://upload.example.invalid/frame', {method: 'POST', body: 'x'}); } catch (e) {}
                try { new WebSocket('wss://socket.example.invalid/'); } catch (e) {}
                const font = new FontFace('Remote', 'url(https://fonts.example.invalid/f.woff2)');
                try { await font.load(); } catch (e) {}
                // Code the page writes itself cannot run either: a blob script, a blob worker.
                const code = URL.createObjectURL(new Blob(['window.__blobRan = true;'], {type: 'text/javascript'}));
                const script = document.createElement('script');
                script.src = code;
                document.body.append(script);
                try { new Worker(code); } catch (e) {}
                await new Promise((resolve) => setTimeout(resolve, 500));
            }"""
        )
        blob_ran = pg.evaluate("() => window.__blobRan === true")
        collect_csp_violations(pg, log)
    finally:
        context.close()
    print("\n" + log.summary())
    refused = {v["blocked"] for v in log.csp_blocked}
    for url in ("https://images.example.invalid/pixel.png", "https://upload.example.invalid/frame"):
        assert url in refused, log.summary()
    assert any(u.startswith("wss://socket.example.invalid") for u in refused), log.summary()
    assert not blob_ran, "a script the page made from a blob ran"
    blob_directives = {v["directive"] for v in log.csp_blocked if v["blocked"] in ("blob", "blob:")}
    assert {"script-src-elem", "worker-src"} <= blob_directives, log.summary()
    # Whatever the recorders saw go elsewhere was refused by the policy, never sent.
    for url in log.outside():
        assert log.failures.get(url) == "csp" or url.startswith("wss://"), log.summary()


def test_the_served_page_names_keyframe_and_carries_the_policy(app_url: str) -> None:
    from app.ui.shell import web_shell

    index = _get(app_url).decode()
    assert "<title>Keyframe</title>" in index
    assert 'http-equiv="Content-Security-Policy"' in index
    assert web_shell.CONTENT_SECURITY_POLICY in index
    assert "default-src 'self'" in web_shell.CONTENT_SECURITY_POLICY
    assert web_shell.PURPOSE in index
    # Flet still fills in its configuration (local CanvasKit, no CDN) into our page.
    assert "flet.noCdn=true;" in index and 'flet.canvasKitBaseUrl="/canvaskit/";' in index
    # Nothing on the page points elsewhere: no CDN, no web font.
    assert "https://" not in index and "http://" not in index

    manifest = json.loads(_get(app_url + "manifest.json"))
    assert manifest["name"] == "Keyframe" and manifest["short_name"] == "Keyframe"
    for icon in manifest["icons"]:
        width, height = _png_size(_get(app_url + icon["src"]))
        assert f"{width}x{height}" == icon["sizes"]
    assert _get(app_url + "favicon.png") == (ASSETS / "favicon.png").read_bytes()
    for script in ("local-only.js", "loading.js"):
        assert _get(app_url + script) == (ASSETS / script).read_bytes()


def test_screenshots_of_the_loading_screen_and_the_loaded_page(fresh_browser, app_url: str, shots: Path) -> None:
    from app.ui.shell import web_shell

    for name, (width, height) in SIZES.items():
        context = fresh_browser.new_context(viewport={"width": width, "height": height})
        try:
            # The loading screen, held: without Flutter's bootstrap the first frame never comes.
            pg = context.new_page()
            pg.route("**/flutter_bootstrap.js", lambda route: route.abort())
            pg.goto(app_url)
            loading = pg.locator("#loading")
            loading.wait_for(state="visible")
            said = loading.inner_text()
            assert "Keyframe" in said and web_shell.PURPOSE in said and web_shell.PURPOSE_ZH in said, said
            assert pg.title() == "Keyframe"
            # The Chinese line in the bundled face (a system without one would show boxes).
            evaluate(pg, BUNDLED_FACE_LOADED, timeout=30)
            pg.wait_for_timeout(400)
            pg.screenshot(path=str(shots / f"loading-{name}.png"))
            pg.close()

            pg = context.new_page()
            pg.goto(app_url)
            wait_until_loaded(pg)
            _wait_model_status(pg)
            pg.wait_for_timeout(500)
            pg.screenshot(path=str(shots / f"loaded-{name}.png"))
        finally:
            context.close()
    print(f"\nscreenshots in {shots}")


def test_the_privacy_sheet_says_what_isolates_the_worker_on_this_machine(browser, app_url: str, shots: Path) -> None:
    for name, (width, height) in SIZES.items():
        pg = open_app_page(browser, app_url, viewport={"width": width, "height": height})
        try:
            _wait_model_status(pg)
            pg.locator("[flt-semantics-identifier='privacy-notice']").click()
            sheet = pg.locator("[flt-semantics-identifier='privacy-sheet']")
            sheet.wait_for(state="visible", timeout=10_000)
            text = sheet.inner_text()
            # The level the worker reported in its Ready, with the mechanism: Linux here.
            assert "Model worker: OS-isolated" in text, text
            assert "network namespace with no network interface up" in text, text
            assert "This app's own process: guarded" in text and "python -m app doctor" in text, text
            pg.wait_for_timeout(300)
            pg.screenshot(path=str(shots / f"privacy-sheet-{name}.png"))
            pg.request_log.assert_local()
        finally:
            close_page(pg)


def test_the_app_refuses_to_serve_a_page_without_the_policy(tmp_path: Path) -> None:
    from app.ui.shell import web_shell

    web_shell.check()  # the page in assets/ is fine
    page = (ASSETS / "index.html").read_text(encoding="utf-8")
    stripped = tmp_path / "index.html"
    stripped.write_text(page.replace(web_shell.CONTENT_SECURITY_POLICY, "default-src *"), encoding="utf-8")
    with pytest.raises(web_shell.WebShellError, match="Content-Security-Policy"):
        web_shell.check(stripped)
    stripped.write_text(page.replace('<script src="local-only.js"></script>', ""), encoding="utf-8")
    with pytest.raises(web_shell.WebShellError, match="local-only.js"):
        web_shell.check(stripped)
