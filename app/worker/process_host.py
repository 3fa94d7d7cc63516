"""Run the worker in a child process, so MNN never holds the UI process's GIL.

MNN's load(), forward() and tokenizer_encode() hold the GIL for their whole run;
in a thread they would freeze frame pumping and UI updates. The child is
spawned (not forked: the parent has threads and native state), commands go
through a multiprocessing queue (its feeder thread means `submit` never blocks
the caller) and events come back on a pipe read by one reader thread.

If the child dies — an exception, a native crash, or kill -9 — the reader sees
its sentinel, the job in flight is reported failed (`worker_died`), and a new
child is started; the model loads once per child.
"""

from __future__ import annotations

import multiprocessing as mp
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from queue import Empty

from app.worker.in_flight import InFlight
from app.worker.messages import (
    Analyze,
    Cancel,
    Event,
    JobFailed,
    LoadFailed,
    Ready,
    Shutdown,
    WorkerRestarted,
    WorkerSpec,
)

# A child that dies this many times in a row before it is ready is not restarted again.
MAX_FAILED_STARTS = 3


def _child_main(spec: WorkerSpec, commands: mp.Queue, events: Connection) -> None:
    from app.engine.stdio import claim_stdout
    from app.worker.serve import serve

    claim_stdout()  # fd 1 -> stderr for MNN's chatter; this process prints nothing itself

    def poll():
        try:
            return commands.get_nowait()
        except Empty:
            return None

    serve(spec, wait=commands.get, poll=poll, emit=events.send)
    events.close()


class ProcessWorkerHost:
    """Owns the child process and the reader thread; `stop` ends both."""

    def __init__(self, spec: WorkerSpec, on_event: Callable[[Event], None]) -> None:
        self.spec = spec
        self._on_event = on_event
        self._ctx = mp.get_context("spawn")
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._process: mp.process.BaseProcess | None = None
        self._commands: mp.Queue | None = None
        self._events: Connection | None = None
        self._in_flight = InFlight()
        self._restarts = 0
        self._failed_starts = 0
        self._ready = False
        self._load_failed = False  # deterministic (bad model files): restarting would not help
        self._reader: threading.Thread | None = None

    @property
    def pid(self) -> int | None:
        process = self._process
        return process.pid if process is not None else None

    @property
    def in_flight(self) -> str | None:
        return self._in_flight.job

    def start(self) -> None:
        self._spawn()
        self._reader = threading.Thread(target=self._read_loop, name="keyframe-worker-reader", daemon=True)
        self._reader.start()

    def _spawn(self) -> None:
        receiver, sender = self._ctx.Pipe(duplex=False)
        commands = self._ctx.Queue()
        process = self._ctx.Process(
            target=_child_main, args=(self.spec, commands, sender), name="keyframe-worker", daemon=True
        )
        process.start()
        sender.close()  # the child holds the only write end: EOF means it is gone
        with self._lock:
            self._process, self._commands, self._events = process, commands, receiver
            self._ready = False

    def submit(self, job: Analyze) -> None:
        self._in_flight.claim(job.job_id)
        with self._lock:
            commands = self._commands
        assert commands is not None
        commands.put(job)

    def cancel(self, job_id: str) -> None:
        with self._lock:
            commands = self._commands
        if commands is not None:
            commands.put(Cancel(job_id))

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        with self._lock:
            process, commands = self._process, self._commands
        if commands is not None:
            try:
                if self._in_flight.job is not None:
                    commands.put(Cancel(self._in_flight.job))
                commands.put(Shutdown())
            except (OSError, ValueError):
                pass
        if process is not None:
            process.join(timeout)
            if process.is_alive():
                process.kill()
                process.join(timeout)
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(timeout)
        self._close_channels()

    def _close_channels(self) -> None:
        with self._lock:
            events, commands = self._events, self._commands
        if events is not None:
            events.close()
        if commands is not None:
            commands.close()
            commands.cancel_join_thread()  # never block shutdown on a dead reader

    def _read_loop(self) -> None:
        while not self._stopping.is_set():
            with self._lock:
                process, events = self._process, self._events
            assert process is not None and events is not None
            ready = wait([events, process.sentinel], timeout=0.5)
            if not ready:
                continue
            if events in ready:
                try:
                    event = events.recv()
                except (EOFError, OSError):
                    event = None
                if event is not None:
                    self._deliver(event)
                    continue
            # EOF or the process sentinel: the child is gone (maybe after its last message).
            process.join(1.0)
            self._drain(events)
            if self._stopping.is_set() or self._load_failed:
                return
            self._child_died(process.exitcode)

    def _drain(self, events: Connection) -> None:
        try:
            while events.poll(0):
                self._deliver(events.recv())
        except (EOFError, OSError):
            pass

    def _deliver(self, event: Event) -> None:
        if isinstance(event, Ready):
            self._ready, self._failed_starts = True, 0
        if isinstance(event, LoadFailed):
            self._load_failed = True
        self._in_flight.settle(event)
        self._on_event(event)

    def _child_died(self, exitcode: int | None) -> None:
        how = f"exit code {exitcode}" if exitcode is None or exitcode >= 0 else f"signal {-exitcode}"
        job_id = self._in_flight.take()
        with self._lock:
            was_ready = self._ready
        if job_id is not None:
            self._on_event(JobFailed(job_id, "worker_died", f"the inference worker stopped ({how})"))
        self._close_channels()
        if not was_ready:
            self._failed_starts += 1
            if self._failed_starts >= MAX_FAILED_STARTS:
                self._on_event(
                    LoadFailed(f"the inference worker failed {self._failed_starts} times while starting ({how})")
                )
                self._stopping.set()
                return
        self._restarts += 1
        self._spawn()
        self._on_event(WorkerRestarted(how, self._restarts))
