"""How the page is served: Flet's web client from the installed wheel, in Keyframe's own shell.

Flet 1.0.5's server (`flet_web.fastapi.FletStaticFiles`) builds the page from
`index.html` and `manifest.json` taken from the app's assets folder when they are
there (its supported override), and serves every other file from the assets folder
before its own web client. So `assets/` carries:

- `index.html`: Flet's page (same scripts, same `<!-- fletAppConfig -->` marker
  Flet fills in) with our title, icons and loading screen, and a
  Content-Security-Policy that allows nothing but this server.
- `local-only.js`, loaded first: Flet's client inserts
  `<script src="https://cdn.jsdelivr.net/…/rive_native.js">` on every load (the
  URL is compiled into `main.dart.js`/`main.dart.wasm`, for the Rive animation
  plugin, which Keyframe does not use). The script points any script of another
  host at `_not_fetched/<host>/<path>` on this server (an empty script), so the browser never
  attempts the CDN; should anything get past it, the policy refuses it inside the
  browser. Rive stays unloaded either way, exactly as when offline.
- `camera-motion.js`: the live camera's movement at the camera's own rate (small grey frames of
  the preview the page shows) to this server's `/camera-motion` websocket, for the compression
  rhythm (`app.frames.motion_stream`).
- `loading.js`: Flutter's first frame is empty; a copy of the loading screen
  waits behind it until the app's page (opaque) paints over it.
- `manifest.json`, `favicon.png`, `icons/`, `icon.png` (what `flet build` takes):
  name and icons, drawn by `tools/branding/make_icons.py`.

No Flet internals are patched. The page is a copy of Flet 1.0.5's (pinned in
pyproject.toml): on a Flet upgrade compare it with
`flet_web/web/index.html`; `check()` and tests/e2e/test_page_privacy.py catch a
page that lost its policy or no longer loads.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import secrets
import shutil
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import flet as ft

from app.frames.motion_stream import BadMotionMessage, MotionStreams, frame_of, page_of
from app.privacy.origin_guard import LOOPBACK, Message, OriginGuard, Receive, Scope, Send
from app.storage.locations import upload_dir
from app.storage.paths import ASSETS
from app.ui.shell.printouts import Printouts

log = logging.getLogger("keyframe.ui")

PURPOSE = "On-device practice feedback — images stay on this device"
# The page is loading before the app knows the chosen language: the loading screen says it in both.
PURPOSE_ZH = "设备端练习反馈——图像只留在本设备"
FLET_VERSION = "1.0.5"  # the Flet whose index.html assets/index.html is a copy of
INDEX_HTML = ASSETS / "index.html"
NOT_FETCHED_SCRIPT = "/* Keyframe: not fetched; this page loads nothing from other hosts */\n"
PRINT_GONE = "This printout was opened already or is older than 5 minutes: print it again from Sessions.\n"

# Only this server. 'self' covers ws://127.0.0.1:PORT/ws, the page's websocket.
# 'wasm-unsafe-eval': CanvasKit compiles WebAssembly;
# no blob: scripts or workers: only Skwasm starts a worker from a blob URL, and it is not
# served (see asgi_app), so a script the page makes itself cannot run either;
# 'unsafe-inline' scripts: Flet writes its configuration into the page as an
# inline script at serve time (the content depends on the server's settings, so
# it cannot be pinned by hash); no remote source is allowed either way.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; "
    "script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval'; "
    "worker-src 'self'; "
    "connect-src 'self' blob: data:; "
    "style-src 'self' 'unsafe-inline'; "
    "img-src 'self' blob: data:; "
    "font-src 'self' blob: data:; "
    "media-src 'self' blob: data: mediastream:; "
    "frame-src 'self'; "
    "object-src 'none'; "
    "base-uri 'self'; "
    "form-action 'self'; "
    "manifest-src 'self'"
)


class WebShellError(RuntimeError):
    """The page in assets/ would not keep the browser to this server."""


def check(index_html: Path = INDEX_HTML) -> None:
    """Refuses to serve a page without the policy or without Flet's hooks; warns on another Flet."""
    try:
        page = index_html.read_text(encoding="utf-8")
    except OSError as exc:
        raise WebShellError(f"the app's page {index_html} cannot be read ({exc.strerror})") from exc
    if f'content="{CONTENT_SECURITY_POLICY}"' not in page:
        raise WebShellError(f"{index_html} lacks the Content-Security-Policy that keeps the page to this server")
    hooks = (
        'src="local-only.js"',
        'src="camera-motion.js"',
        "<!-- fletAppConfig -->",
        'src="python.js"',
        'src="flutter_bootstrap.js"',
    )
    for hook in (*hooks, 'id="loading"'):
        if hook not in page:
            raise WebShellError(f"{index_html} lacks {hook}")
    if importlib.util.find_spec("flet_web") is None:
        raise WebShellError(
            "Flet's web server is not installed: install the app with its desktop extra "
            "(scripts/run-app.sh does; by hand: pip install -e '.[desktop]')"
        )
    if ft.__version__ != FLET_VERSION:
        print(
            f"warning: {index_html.name} was written for Flet {FLET_VERSION}, this is Flet {ft.__version__}; "
            "compare it with flet_web/web/index.html",
            file=sys.stderr,
        )


# What ft.run takes: a sync or async function of the page.
PageMain = Callable[[ft.Page], Awaitable[None] | None]


def asgi_app(
    main: PageMain,
    port: int,
    on_startup: Callable[[], None] | None = None,
    motion: MotionStreams | None = None,
    printouts: Printouts | None = None,
) -> OriginGuard:
    """Flet's web app for `main` in Keyframe's page, answering only requests from that page on `port`;
    the camera's motion frames go to `motion` (frames nothing is attached to are dropped)."""
    import flet_web.fastapi as flet_fastapi  # type: ignore[import-untyped]  # desktop extra only (no web server in packaged apps)

    flet_app = flet_fastapi.app(
        main,
        # index.html, manifest.json and the icons here replace Flet's.
        assets_dir=str(ASSETS),
        # The web client, fonts and CanvasKit come from the installed wheel, never a CDN.
        no_cdn=True,
        # Flet's "auto" gives Chromium the WebAssembly build (skwasm), whose render thread dies
        # with "function signature mismatch" / "memory access out of bounds" in Flutter 3.41
        # (flutter/flutter#182734, #182367; without GPU acceleration #172158) and leaves the page
        # frozen mid-session. CanvasKit is the build every browser can take, and Flet's own note
        # says it is faster at the byte buffers every UI update sends.
        web_renderer=ft.WebRenderer.CANVAS_KIT,
        # Picked files travel from the page to this folder over HTTP on 127.0.0.1 (signed URLs),
        # not through the websocket: a 500 MB video must not be held in one message.
        upload_dir=str(upload_dir()),
    )
    # Flet's FastAPI starts and stops its session manager with the server, then runs `on_startup`.
    root = flet_fastapi.FastAPI(
        on_startup=[on_startup] if on_startup else None, docs_url=None, redoc_url=None, openapi_url=None
    )
    root.add_api_route("/_not_fetched/{kept:path}", _not_fetched, methods=["GET"])
    # A plain Starlette route: FastAPI would inject by annotation, which a lazily imported type defeats.
    root.router.add_websocket_route("/camera-motion", _motion_endpoint(motion or MotionStreams()))
    root.add_api_route("/print/{token}", _print_endpoint(printouts or Printouts()), methods=["GET"])
    root.mount("/", flet_app)
    return OriginGuard(root, port)


def _not_fetched(kept: str) -> object:
    """A script of another host that local-only.js kept on this server: an empty script, not a 404
    (the page's log stays free of errors; Rive stays unloaded as before)."""
    from starlette.responses import Response

    return Response(NOT_FETCHED_SCRIPT, media_type="text/javascript", headers={"Cache-Control": "no-store"})


def _print_endpoint(printouts: Printouts) -> Callable[[str], object]:
    """A report the Sessions screen opened for printing: served once, never cached."""
    from starlette.responses import Response

    def endpoint(token: str) -> object:
        page = printouts.take(token)
        if page is None:
            return Response(PRINT_GONE, status_code=404, media_type="text/plain; charset=utf-8")
        return Response(page, media_type="text/html; charset=utf-8", headers={"Cache-Control": "no-store"})

    return endpoint


def _motion_endpoint(streams: MotionStreams) -> Callable[[Any], Awaitable[None]]:
    """The websocket `camera-motion.js` sends to: the page's id first, then one frame per message.
    Each frame goes to the page's camera session in order, off the event loop (the motion meter
    takes a millisecond or two; pages' updates must not wait on it). A message the page's script
    would never send closes the connection with a line in the log."""
    from starlette.websockets import WebSocket, WebSocketDisconnect

    async def endpoint(websocket: WebSocket) -> None:
        await websocket.accept()
        try:
            page = page_of(await websocket.receive_text())
            while True:
                frame = frame_of(await websocket.receive_bytes())
                sink = streams.sink(page)
                if sink is not None:
                    await asyncio.to_thread(sink, frame)
        except WebSocketDisconnect:
            pass
        except (BadMotionMessage, KeyError) as exc:  # KeyError: text where bytes belong, or the reverse
            log.warning("a camera motion connection was closed: %s", exc)
            await websocket.close(code=1003)

    return endpoint


def serve(
    main: PageMain,
    port: int,
    on_startup: Callable[[], None] | None = None,
    motion: MotionStreams | None = None,
    printouts: Printouts | None = None,
) -> None:
    """Serves `main` on 127.0.0.1:port until SIGINT or SIGTERM, which uvicorn raises again once it has
    shut down, so the caller's interrupt handling ends the command.

    Flet's `ft.run` serves the same app, but to any Host and Origin (see app.privacy.origin_guard):
    here the server is put together from Flet's FastAPI app and uvicorn, as `flet_web` does itself.
    """
    import uvicorn

    check()
    # Upload URLs are signed; a key per run is enough (they live for minutes).
    os.environ.setdefault("FLET_SECRET_KEY", secrets.token_hex(32))
    # Copies uploaded for an earlier run's sessions (a killed app) are not kept: they may show a trainee.
    shutil.rmtree(upload_dir(), ignore_errors=True)
    upload_dir().mkdir(parents=True, exist_ok=True)
    guarded = asgi_app(main, port, on_startup, motion, printouts)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            send = _drops_sends_after_disconnect(send)
        try:
            await guarded(scope, receive, send)
        except asyncio.CancelledError:
            # uvicorn cancels the pages still connected once its graceful shutdown has waited 3 s:
            # that is the end of the app, not an error to print as a traceback.
            if scope["type"] != "websocket":
                raise

    # A tab still open, or a client gone without closing its websocket, must not hold the exit up.
    config = uvicorn.Config(
        app, host=LOOPBACK, port=port, ws="websockets-sansio", timeout_graceful_shutdown=3, log_config=_LOG_CONFIG
    )
    server = uvicorn.Server(config)
    try:
        server.run()
    except SystemExit:  # uvicorn's answer to a failed start (it logged why)
        pass
    if not server.started:
        raise WebShellError(f"the web server could not start on {LOOPBACK}:{port} (the log says why)")


def _drops_sends_after_disconnect(send: Send) -> Send:
    """A message for a page whose connection just closed is dropped instead of raising.

    Flet 1.0.5 (flet_web FletApp.handle) tells the page's session that its browser left only when
    its send loop ends quietly; a send that fails while the socket closes (a reload while the
    camera pump sends a picture request: likely) raises out of the handler first, so the session
    never hears of it, `page.on_disconnect` never fires, and a camera session waits on a tab that
    is gone. Dropped here, the receive loop sees the disconnect and ends the session as it should.
    """

    async def sender(message: Message) -> None:
        try:
            await send(message)
        except OSError:  # uvicorn's ClientDisconnected: the browser is gone, the message has nowhere to go
            if message.get("type") != "websocket.send":
                raise

    return sender


class _ToAppLog(logging.Handler):
    """uvicorn's lines go to the app's log (keyframe.log), not the terminal: no tracebacks for the user."""

    def emit(self, record: logging.LogRecord) -> None:
        logging.getLogger("keyframe.web").handle(record)


_LOG_CONFIG = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"app": {"()": _ToAppLog}},
    "loggers": {
        "uvicorn": {"handlers": ["app"], "level": "INFO", "propagate": False},
        "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
    },
}
