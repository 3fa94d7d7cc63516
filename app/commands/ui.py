"""Start the UI: served on 127.0.0.1 from the installed web client, opened in the browser.

The page is Keyframe's own (title, icons, loading screen) and its
Content-Security-Policy keeps the browser to this server: see `app.ui.shell.web_shell`.

A Flet desktop window is not an option when running from source: flet-desktop
downloads its client from the internet at first start, which the app's privacy
guard (rightly) blocks and which breaks offline use. Built apps (`flet build`)
embed their client and do not come through here.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

from flet.utils import is_linux_server, open_in_browser

from app.commands.interrupts import run_interruptible
from app.ui.shell import web_shell
from app.ui.shell.app_main import build_app

DEFAULT_PORT = 8550


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        # As uvicorn binds: connections of an earlier run in TIME_WAIT do not count.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def launch(port: int | None = None, model: str | None = None, profile: Path | None = None) -> int:
    port = port or int(os.environ.get("FLET_SERVER_PORT", DEFAULT_PORT))
    if not _port_free(port):
        print(f"error: port {port} on 127.0.0.1 is in use (another Keyframe?); try --port N", file=sys.stderr)
        return 2
    try:
        web_shell.check()
    except web_shell.WebShellError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    url = f"http://127.0.0.1:{port}"
    print(f"open {url} in your browser · Ctrl+C to stop", file=sys.stderr, flush=True)

    def open_tab() -> None:  # where there is a display, as Flet's own web mode does; without one, only serve
        if not is_linux_server():  # type: ignore[no-untyped-call]  # flet leaves it unannotated
            open_in_browser(url)

    def serve() -> int:
        app = build_app(model, profile)
        try:
            web_shell.serve(app.main, port, open_tab, app.motion, app.printouts)
        except web_shell.WebShellError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        finally:
            app.close()  # the server has ended: downloads stop (resumable), the session is written, the worker stops
        return 0

    # Ctrl-C and SIGTERM end the server cleanly, then the command with 130 / 143 and one line.
    return run_interruptible(serve)
