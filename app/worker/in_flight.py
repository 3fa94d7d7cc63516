"""The one-job-at-a-time contract both worker hosts keep."""

from __future__ import annotations

import threading

from app.worker.messages import Analyze, Event, Finished, JobFailed, JobPhase, Started, Token


class InFlight:
    """The job a worker holds, and whether the worker has begun it.

    A job the worker never began can be handed to a replacement worker; only a
    job that was running when its worker died has failed.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._job: Analyze | None = None
        self._started = False

    @property
    def job(self) -> str | None:
        job = self._job
        return job.job_id if job is not None else None

    def claim(self, job: Analyze) -> None:
        with self._lock:
            if self._job is not None:
                raise RuntimeError("a job is already in flight (the caller keeps one at a time)")
            self._job, self._started = job, False

    def settle(self, event: Event) -> None:
        """Notes that the job began; frees the slot when its final event arrives."""
        with self._lock:
            if self._job is None or getattr(event, "job_id", None) != self._job.job_id:
                return
            if isinstance(event, (Started, JobPhase, Token)):
                self._started = True
            elif isinstance(event, (Finished, JobFailed)):
                self._job = None

    def take(self) -> tuple[Analyze | None, bool]:
        """Frees the slot (the worker is gone); returns the job and whether it had begun."""
        with self._lock:
            job, started = self._job, self._started
            self._job, self._started = None, False
            return job, started
