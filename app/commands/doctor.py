"""`doctor`: what keeps images on this device, checked on this machine now.

The model worker's isolation is not taken on trust: a child process started as
the worker is (same spawn, same module, same first step) sets it up, then makes
a native connect() — the kind the audit hook cannot see — to a listener this
process opens on 127.0.0.1. The listener's accept count is the verdict.
"""

from __future__ import annotations

import asyncio
import select
import socket
import sys
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, TextIO

from app.commands.common import EXIT_FAILED, EXIT_OK, emit
from app.core.isolation import IsolationLevel
from app.privacy.isolation import HOOK_ONLY, Isolation
from app.worker.child_guard import spawned_with_signals_blocked
from app.worker.messages import WorkerSpec
from app.worker.process_host import isolation_probe
from app.worker.tracker import spawn_context

if TYPE_CHECKING:
    from app.commands.common import Subparsers

UI_PROCESS = (
    f"guarded: it serves the page on 127.0.0.1 and so keeps a network; {HOOK_ONLY}. Videos are opened only "
    "as local files with FFmpeg limited to its file protocol, and the page may load nothing but its own origin"
)
WEB_SERVER = (
    "answers only its own page: a request must name 127.0.0.1 or localhost on its port, a websocket must come "
    "from that page's origin; anything else gets 403, so no other web page can drive or watch the app"
)
PHONES = "iOS and Android: the model runs in a thread of the app (no child processes there), guarded by the hook only"
DOWNLOADS = (
    "only when you start one; only to the model's mirror hosts and the redirect hosts its manifest names; "
    "every file is checked against the manifest's SHA-256"
)


@dataclass(frozen=True)
class WorkerCheck:
    level: IsolationLevel
    how: str
    native_connect: str  # the error the probe's connect() got, or "connected"
    listener_accepted: int  # connections that reached the loopback listener

    @property
    def holds(self) -> bool:
        return self.level is IsolationLevel.OS_ISOLATED and self.listener_accepted == 0


@dataclass(frozen=True)
class WebServerCheck:
    """The UI's web server, assembled as `ui` serves it and asked in this process (no socket)."""

    own_page: int  # HTTP status of the app's own page
    wildcard_cors: bool  # the own page carried Access-Control-Allow-Origin: *
    foreign_host: int  # status for a request naming another host (DNS rebinding)
    foreign_origin_websocket: int  # status for a websocket opened by a page of another origin

    @property
    def holds(self) -> bool:
        return (
            self.own_page == 200
            and not self.wildcard_cors
            and self.foreign_host == self.foreign_origin_websocket == 403
        )


def add_parser(sub: Subparsers) -> None:
    doctor = sub.add_parser(
        "doctor",
        help="print what keeps images on this device, after checking it (exit 1 when only the hook guards them)",
    )
    doctor.add_argument("--json", action="store_true", help="one JSON object instead of text")


def check_worker(timeout_s: float = 30.0) -> WorkerCheck:
    """Runs the worker's isolation in a fresh child and tries a native connect() back to this process."""
    ctx = spawn_context()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        receiver, sender = ctx.Pipe(duplex=False)
        child = ctx.Process(
            target=isolation_probe, args=(WorkerSpec(), listener.getsockname()[1], sender), name="keyframe-doctor"
        )
        with spawned_with_signals_blocked():  # a Ctrl-C meanwhile is the parent's to act on
            child.start()
        sender.close()
        try:
            if not receiver.poll(timeout_s):
                raise RuntimeError(f"the probe process gave no answer in {timeout_s:.0f} s")
            isolation, outcome = receiver.recv()
        except EOFError:
            raise RuntimeError(f"the probe process ended with status {child.exitcode}") from None
        finally:
            child.join(timeout_s)
        accepted = 0
        while select.select([listener], [], [], 0.2)[0]:
            listener.accept()[0].close()
            accepted += 1
    assert isinstance(isolation, Isolation)
    return WorkerCheck(isolation.level, isolation.how, str(outcome), accepted)


def check_web_server(port: int = 8550) -> WebServerCheck:
    from app.privacy.origin_guard import ask
    from app.ui.shell.web_shell import asgi_app

    app = asgi_app(lambda page: None, port)
    own = {"host": f"127.0.0.1:{port}"}

    async def answers() -> WebServerCheck:
        page = await ask(app, "http", own)
        rebound = await ask(app, "http", {"host": "evil.example"})
        socket_ = await ask(app, "websocket", {**own, "origin": "http://evil.example"}, "/ws")
        wildcard = page.headers.get("access-control-allow-origin") == "*"
        return WebServerCheck(page.status, wildcard, rebound.status, socket_.status)

    return asyncio.run(answers())


def run(args: object, out: TextIO) -> int:
    try:
        worker = check_worker()
    except (OSError, RuntimeError) as exc:
        print(f"error: the isolation check could not run: {exc}", file=sys.stderr)
        return EXIT_FAILED
    try:
        server = check_web_server()
    except (ImportError, RuntimeError, OSError) as exc:
        print(f"error: the web server check could not run: {exc}", file=sys.stderr)
        return EXIT_FAILED
    holds = worker.holds and server.holds
    if getattr(args, "json", False):
        record = {"worker": asdict(worker), "web_server": {**asdict(server), "holds": server.holds}}
        emit(out, {**record, "ui": UI_PROCESS, "phones": PHONES, "downloads": DOWNLOADS}, False)
        return EXIT_OK if holds else EXIT_FAILED
    reached = "reached" if worker.listener_accepted else "did not reach"
    same = "the same, set up when the command starts" if worker.holds else worker.level
    lines = [
        f"What keeps images on this device ({sys.platform})",
        "",
        "Model worker (the child process that gets keyframes and runs the model)",
        f"  {worker.level}: {worker.how}",
        f"  checked now: a native connect() to a listener on 127.0.0.1 {reached} it ({worker.native_connect})",
        "analyze and watch (the whole command process, which also decodes videos)",
        f"  {same}",
        "App window and web UI (this process receives camera frames and serves the page)",
        f"  {UI_PROCESS}",
        "The app's web server (127.0.0.1 only)",
        f"  {WEB_SERVER}",
        f"  checked now: its own page {server.own_page}"
        f"{', with a wildcard CORS header' if server.wildcard_cors else ', no wildcard CORS header'}; "
        f"another Host {server.foreign_host}; a websocket from another origin {server.foreign_origin_websocket}",
        "Model downloads",
        f"  {DOWNLOADS}",
        PHONES,
    ]
    out.write("\n".join(lines) + "\n")
    return EXIT_OK if holds else EXIT_FAILED
