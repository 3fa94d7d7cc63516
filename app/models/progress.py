"""Download progress as a stream of immutable records, and a terminal renderer.

The same `DownloadProgress` records feed the app's UI and the CLI's progress bar.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TextIO

from app.core.durations import duration_words
from app.core.sizes import size_words


class Phase(StrEnum):
    CHECKING = "checking"  # hashing files already on disk
    DOWNLOADING = "downloading"
    WAITING = "waiting"  # backing off before a retry
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def final(self) -> bool:
        return self in (Phase.DONE, Phase.FAILED, Phase.CANCELLED)


@dataclass(frozen=True)
class DownloadProgress:
    model_id: str
    phase: Phase
    file: str | None = None
    file_index: int = 0  # 1-based among the files this run fetches
    file_count: int = 0
    file_done: int = 0
    file_total: int | None = None
    done: int = 0  # bytes of the model on disk and verified, plus the current file's
    total: int | None = None
    total_is_estimate: bool = False
    rate_bps: float | None = None
    eta_s: float | None = None
    message: str = ""

    @property
    def fraction(self) -> float | None:
        if not self.total:
            return None
        return min(1.0, self.done / self.total)


class RateMeter:
    """Transfer rate over a sliding window, so one stall or burst does not swing the ETA."""

    def __init__(self, window_s: float = 5.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._window_s = window_s
        self._clock = clock
        self._samples: deque[tuple[float, int]] = deque()

    def add(self, received_total: int) -> None:
        now = self._clock()
        self._samples.append((now, received_total))
        while len(self._samples) > 2 and now - self._samples[1][0] >= self._window_s:
            self._samples.popleft()

    def rate(self) -> float | None:
        if len(self._samples) < 2:
            return None
        (t0, b0), (t1, b1) = self._samples[0], self._samples[-1]
        if t1 - t0 < 0.25:
            return None
        return max(0.0, (b1 - b0) / (t1 - t0))


class ProgressTracker:
    """Turns the downloader's byte counts into throttled DownloadProgress records for one model."""

    def __init__(
        self,
        model_id: str,
        emit: Callable[[DownloadProgress], None],
        *,
        interval_s: float = 0.2,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._emit = emit
        self._interval_s = interval_s
        self._clock = clock
        self._meter = RateMeter(clock=clock)
        self._received = 0
        self._last_emit = float("-inf")
        self._base = 0  # bytes of files already complete in this run
        self.state = DownloadProgress(model_id, Phase.CHECKING)

    def set_totals(self, total: int | None, done: int, file_count: int, estimate: bool = False) -> None:
        self._base = done
        self._publish(
            replace(self.state, total=total, done=done, file_count=file_count, total_is_estimate=estimate), force=True
        )

    def checking(self, path: str) -> None:
        self._publish(replace(self.state, phase=Phase.CHECKING, file=path, message=""), force=True)

    def start_file(self, path: str, index: int, size: int | None) -> None:
        self._publish(
            replace(
                self.state,
                phase=Phase.DOWNLOADING,
                file=path,
                file_index=index,
                file_done=0,
                file_total=size,
                done=self._base,
                message="",
            ),
            force=True,
        )

    def on_bytes(self, have: int, file_total: int | None, received: int) -> None:
        """`have` bytes of the current file are on disk; `received` new bytes came off the network."""
        self._received += received
        self._meter.add(self._received)
        total = self.state.total
        rate = self._meter.rate()
        done = self._base + have
        eta = (total - done) / rate if rate and total is not None and total >= done else None
        self._publish(
            replace(
                self.state,
                phase=Phase.DOWNLOADING,
                file_done=have,
                file_total=file_total,
                done=done,
                total=total,
                rate_bps=rate,
                eta_s=eta,
                message="",
            ),
            force=False,
        )

    def file_finished(self, size: int) -> None:
        self._base += size

    def waiting(self, message: str) -> None:
        self._meter = RateMeter(clock=self._clock)  # idle time is not a slow network: start the rate afresh
        self._publish(replace(self.state, phase=Phase.WAITING, rate_bps=None, eta_s=None, message=message), force=True)

    def finish(self, phase: Phase, message: str = "") -> None:
        state = replace(self.state, phase=phase, message=message, eta_s=None)
        if phase is Phase.DONE:  # the real total is known now, even where only an estimate was
            state = replace(state, done=self._base, total=self._base, total_is_estimate=False)
        self._publish(state, force=True)

    def _publish(self, state: DownloadProgress, force: bool) -> None:
        self.state = state
        now = self._clock()
        if force or now - self._last_emit >= self._interval_s:
            self._last_emit = now
            self._emit(state)


def render_line(p: DownloadProgress, width: int = 24) -> str:
    """One line for a terminal: file, bar, bytes, rate, ETA or message."""
    parts = [p.model_id]
    if p.file:
        parts.append(f"{p.file} ({p.file_index}/{p.file_count})" if p.file_count else p.file)
    if p.phase in (Phase.DOWNLOADING, Phase.WAITING, Phase.DONE):
        fraction = p.fraction
        if fraction is not None:
            filled = int(fraction * width)
            parts.append(f"[{'#' * filled}{'-' * (width - filled)}] {fraction * 100:5.1f}%")
        approx = "~" if p.total_is_estimate else ""
        parts.append(f"{size_words(p.done)}/{approx}{size_words(p.total)}" if p.total else size_words(p.done))
    if p.phase is Phase.DOWNLOADING:
        if p.rate_bps:
            parts.append(f"{size_words(p.rate_bps)}/s")
        if p.eta_s is not None:
            parts.append(f"ETA {duration_words(p.eta_s)}")
    elif p.phase is not Phase.DONE:
        parts.append(p.phase.value)
    if p.message and p.phase is not Phase.FAILED:  # a failure is reported in full by whoever caught it
        parts.append(p.message)
    return "  ".join(parts)


class TerminalProgress:
    """Renders DownloadProgress on a terminal (rewriting one line) or as sparse lines in a log."""

    def __init__(
        self, stream: TextIO, *, log_every_s: float = 5.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._stream = stream
        self._tty = bool(getattr(stream, "isatty", lambda: False)())
        self._log_every_s = log_every_s
        self._clock = clock
        self._last_line = float("-inf")
        self._last_phase: Phase | None = None
        self._width = 0

    def __call__(self, p: DownloadProgress) -> None:
        line = render_line(p)
        if self._tty:
            pad = max(0, self._width - len(line))
            self._width = len(line)
            self._stream.write("\r" + line + " " * pad + ("\n" if p.phase.final else ""))
        else:
            now = self._clock()
            if p.phase is not self._last_phase or p.phase.final or now - self._last_line >= self._log_every_s:
                self._last_line = now
                self._stream.write(line + "\n")
        self._last_phase = p.phase
        self._stream.flush()
