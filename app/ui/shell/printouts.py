"""Practice reports waiting to be opened once in a browser tab, for printing or saving as PDF.

No Flet. The Sessions screen of the web app hands a report's HTML here and opens
`/print/<token>` on the app's own server (app.ui.shell.web_shell), where the browser's own print dialog
saves it as a PDF. A token is random, served once and forgotten after a few minutes, so no other
page can fetch a report by guessing a session's name; the server answers only its own page
(app.privacy.origin_guard) as it does for everything else.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable

TTL_S = 300.0  # a tab opens in a second; a token not used by then is dropped


class Printouts:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._waiting: dict[str, tuple[float, bytes]] = {}

    def add(self, html: str) -> str:
        """Keep `html` for one opening; the token that opens it."""
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._drop_stale()
            self._waiting[token] = (self._clock(), html.encode("utf-8"))
        return token

    def take(self, token: str) -> bytes | None:
        """The page for `token`, once; None for an unknown, used or stale token."""
        with self._lock:
            self._drop_stale()
            found = self._waiting.pop(token, None)
        return found[1] if found is not None else None

    def _drop_stale(self) -> None:
        now = self._clock()
        for token in [t for t, (made, _) in self._waiting.items() if now - made > TTL_S]:
            del self._waiting[token]
