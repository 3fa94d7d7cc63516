"""The one-job-at-a-time contract both worker hosts keep."""

from __future__ import annotations

import threading

from app.worker.messages import Event, Finished, JobFailed


class InFlight:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._job: str | None = None

    @property
    def job(self) -> str | None:
        return self._job

    def claim(self, job_id: str) -> None:
        with self._lock:
            if self._job is not None:
                raise RuntimeError("a job is already in flight (the caller keeps one at a time)")
            self._job = job_id

    def settle(self, event: Event) -> None:
        """Frees the slot when the in-flight job's final event arrives."""
        if isinstance(event, (Finished, JobFailed)):
            with self._lock:
                if self._job == event.job_id:
                    self._job = None

    def take(self) -> str | None:
        """Frees the slot and returns the job that held it (the worker died)."""
        with self._lock:
            job, self._job = self._job, None
            return job
