"""The same worker interface in a thread, for platforms without child processes
(where: `app.worker.hosts.default_host_kind`).

MNN holds the GIL during its calls, so here the UI thread does stall while a
step runs; the camera preview must not depend on Python on those platforms.
A native crash takes the app with it here: there is no process boundary.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable

from app.privacy.isolation import current_isolation
from app.worker.listener import HostLedger
from app.worker.messages import Analyze, Cancel, Command, Event, LoadFailed, Ready, Shutdown, WorkerSpec, WorkerStatus
from app.worker.serve import serve


class ThreadWorkerHost(HostLedger):
    def __init__(self, spec: WorkerSpec, on_event: Callable[[Event], None]) -> None:
        self.spec = spec
        super().__init__(on_event)
        self._commands: queue.Queue[Command] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="keyframe-worker", daemon=True)

    @property
    def pid(self) -> int | None:
        return os.getpid()  # the model runs in this process

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        def poll() -> Command | None:
            try:
                return self._commands.get_nowait()
            except queue.Empty:
                return None

        # The app's UI process keeps its loopback socket, so only analyze/watch (isolated whole) are isolated here.
        isolation = current_isolation("the model runs in a thread of the app's own process (no child processes here)")
        serve(self.spec, wait=self._commands.get, poll=poll, emit=self._deliver, isolation=isolation)
        with self._lock:
            self._become(WorkerStatus.STOPPED)  # unless it failed: that reason stays
            why = self._unavailable
            orphaned, _ = self._in_flight.take()
        assert why is not None  # stopped or failed
        if orphaned is not None:
            self._refuse(orphaned.job_id, why)

    def _deliver(self, event: Event) -> None:
        with self._lock:
            if isinstance(event, Ready):
                self._become(WorkerStatus.READY)
            elif isinstance(event, LoadFailed):
                self._become(WorkerStatus.FAILED, event.message)
        self._in_flight.settle(event)
        self._emit(event)

    def submit(self, job: Analyze) -> None:
        """Never raises into the caller's thread: a worker that ended answers JobFailed at once."""
        with self._lock:
            unavailable = self._unavailable
            if unavailable is None:
                self._in_flight.claim(job)
                self._commands.put(job)
        if unavailable is not None:
            self._refuse(job.job_id, unavailable)

    def cancel(self, job_id: str) -> None:
        self._commands.put(Cancel(job_id))

    def stop(self, timeout: float = 5.0) -> None:
        if self._in_flight.job is not None:
            self._commands.put(Cancel(self._in_flight.job))
        self._commands.put(Shutdown())
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)
