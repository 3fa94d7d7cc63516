"""A model download on its own thread, with its progress as a stream of records (for screens and the CLI)."""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from app.models.mirrors import Mirror
from app.models.progress import Progress

if TYPE_CHECKING:
    from app.models.store import ModelStatus, ModelStore
    from app.privacy.guard import NetworkGuard


class DownloadJob:
    """One model download on a thread this object owns; progress comes out as Progress records.

    `events()` yields them until the download ends (UI or terminal); `cancel()` stops it
    between chunks (or during a retry wait), keeping the .part for a later resume.
    """

    _MAX_QUEUED = 1000

    def __init__(
        self,
        store: ModelStore,
        model_id: str,
        mirrors: Sequence[Mirror],
        *,
        guard: NetworkGuard | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        proxies: Mapping[str, str] | None = None,
    ) -> None:
        self._store = store
        self._model_id = model_id
        self._mirrors = tuple(mirrors)
        self._guard = guard
        self._on_progress = on_progress
        self._proxies = dict(proxies or {})
        self._cancel = threading.Event()
        self._events: queue.Queue[Progress | None] = queue.Queue(maxsize=self._MAX_QUEUED)
        self._thread = threading.Thread(target=self._run, name=f"download-{model_id}", daemon=True)
        self.result: ModelStatus | None = None
        self.error: BaseException | None = None

    def start(self) -> None:
        self._thread.start()

    def cancel(self) -> None:
        self._cancel.set()

    def join(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def events(self) -> Iterator[Progress]:
        while (item := self._events.get()) is not None:
            yield item

    def _run(self) -> None:
        try:
            self.result = self._store.download(
                self._model_id,
                self._mirrors,
                cancel=self._cancel,
                on_progress=self._publish,
                guard=self._guard,
                proxies=self._proxies,
            )
        except BaseException as exc:  # handed to the owner (cancel, busy, failure) rather than lost on a thread
            self.error = exc
        finally:
            self._put(None)

    def _publish(self, progress: Progress) -> None:
        if self._on_progress is not None:
            self._on_progress(progress)
        self._put(progress)

    def _put(self, item: Progress | None) -> None:
        # Nobody may be reading events(): drop the oldest record rather than block the download.
        while True:
            try:
                self._events.put_nowait(item)
                return
            except queue.Full:
                with contextlib.suppress(queue.Empty):
                    self._events.get_nowait()
