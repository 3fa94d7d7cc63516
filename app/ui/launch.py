"""Start the UI: a desktop window where there is a display, else a local web app."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import flet as ft

from app.paths import ASSETS
from app.ui.app_main import build_main

DEFAULT_PORT = 8550


def _has_display() -> bool:
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        # As uvicorn binds: connections of an earlier run in TIME_WAIT do not count.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def launch(web: bool = False, port: int | None = None, model: str | None = None, profile: Path | None = None) -> int:
    main = build_main(model, profile)
    if web or not _has_display():
        port = port or int(os.environ.get("FLET_SERVER_PORT", DEFAULT_PORT))
        if not _port_free(port):
            print(f"error: port {port} on 127.0.0.1 is in use (another Keyframe?); try --port N", file=sys.stderr)
            return 2
        print(f"Keyframe is served at http://127.0.0.1:{port} (local only; open it in a browser)", file=sys.stderr)
        # no_cdn: the web client, fonts and CanvasKit come from the installed wheel, never a CDN.
        ft.run(main, view=ft.AppView.WEB_BROWSER, host="127.0.0.1", port=port, no_cdn=True, assets_dir=str(ASSETS))
    else:
        ft.run(main, assets_dir=str(ASSETS))
    return 0
