"""A model download on its own thread, with its progress as a stream of records (for screens and the CLI),
and how it ended as one typed outcome that every caller words in its own way."""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from app.models.download import Cancelled, DownloadError
from app.models.errors import StoreError
from app.models.locks import ModelBusy
from app.models.mirrors import Mirror
from app.models.progress import DownloadProgress

if TYPE_CHECKING:
    from app.models.store import ModelStatus, ModelStore
    from app.privacy.guard import NetworkGuard


class Ending(StrEnum):
    INSTALLED = "installed"  # every file fetched (or already there) and verified
    STOPPED = "stopped"  # stopped on request; the .part files stay for a resume (a pause, Ctrl-C, the app closing)
    CANCELLED = "cancelled"  # stopped on request to be thrown away: the owner drops what was fetched
    FAILED = "failed"  # the network, a mirror, a hash or the disk: trying again may work
    BUSY = "busy"  # another Keyframe process is downloading, importing or removing this model
    REFUSED = "refused"  # the store would not download it (bundled, no mirror, a folder in the way)
    CRASHED = "crashed"  # an error no download raises by design: a bug, shown or re-raised by the owner


@dataclass(frozen=True)
class DownloadOutcome:
    ending: Ending
    status: ModelStatus | None = None  # INSTALLED: the model's status afterwards
    error: BaseException | None = None  # FAILED, BUSY, REFUSED, CRASHED: what was raised
    failed_file: str | None = None  # FAILED on one of the manifest's files: its path


class DownloadJob:
    """One model download on a thread this object owns; progress comes out as DownloadProgress records.

    `events()` yields them until the download ends (UI or terminal); `stop()` stops it
    between chunks (or during a retry wait), keeping the .part for a later resume;
    `wait()` gives the outcome.
    """

    _MAX_QUEUED = 1000

    def __init__(
        self,
        store: ModelStore,
        model_id: str,
        mirrors: Sequence[Mirror],
        *,
        guard: NetworkGuard | None = None,
        on_progress: Callable[[DownloadProgress], None] | None = None,
        proxies: Mapping[str, str] | None = None,
    ) -> None:
        self._store = store
        self._model_id = model_id
        self._mirrors = tuple(mirrors)
        self._guard = guard
        self._on_progress = on_progress
        self._proxies = dict(proxies or {})
        self._cancel = threading.Event()
        self._discard = False
        self._events: queue.Queue[DownloadProgress | None] = queue.Queue(maxsize=self._MAX_QUEUED)
        self._thread = threading.Thread(target=self._run, name=f"download-{model_id}", daemon=True)
        self._outcome: DownloadOutcome | None = None

    def start(self) -> None:
        self._thread.start()

    def stop(self, *, discard: bool = False) -> None:
        """Stops the download; `discard` says its owner will drop the files (CANCELLED, not STOPPED).
        A discard once asked for stays: the app closing during a cancel does not keep the files."""
        self._discard |= discard
        self._cancel.set()

    def join(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def wait(self) -> DownloadOutcome:
        """Waits for the end (at once when events() has ended) and says how the download ended."""
        self._thread.join()
        assert self._outcome is not None  # set before the thread ends
        return self._outcome

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def events(self) -> Iterator[DownloadProgress]:
        while (item := self._events.get()) is not None:
            yield item

    def _run(self) -> None:
        try:
            status = self._store.download(
                self._model_id,
                self._mirrors,
                cancel=self._cancel,
                on_progress=self._publish,
                guard=self._guard,
                proxies=self._proxies,
            )
            self._outcome = DownloadOutcome(Ending.INSTALLED, status=status)
        except BaseException as exc:  # handed to the owner rather than lost on a thread
            self._outcome = self._ended_by(exc)
        finally:
            self._put(None)

    def _ended_by(self, exc: BaseException) -> DownloadOutcome:
        if isinstance(exc, Cancelled):
            return DownloadOutcome(Ending.CANCELLED if self._discard else Ending.STOPPED)
        if isinstance(exc, DownloadError):
            files = {f.path for f in self._store.manifest(self._model_id).files}
            return DownloadOutcome(Ending.FAILED, error=exc, failed_file=exc.path if exc.path in files else None)
        if isinstance(exc, OSError):
            return DownloadOutcome(Ending.FAILED, error=exc)
        if isinstance(exc, ModelBusy):
            return DownloadOutcome(Ending.BUSY, error=exc)
        if isinstance(exc, StoreError):
            return DownloadOutcome(Ending.REFUSED, error=exc)
        return DownloadOutcome(Ending.CRASHED, error=exc)

    def _publish(self, progress: DownloadProgress) -> None:
        if self._on_progress is not None:
            self._on_progress(progress)
        self._put(progress)

    def _put(self, item: DownloadProgress | None) -> None:
        # Nobody may be reading events(): drop the oldest record rather than block the download.
        while True:
            try:
                self._events.put_nowait(item)
                return
            except queue.Full:
                with contextlib.suppress(queue.Empty):
                    self._events.get_nowait()
