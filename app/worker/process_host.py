"""Run the worker in a child process, so MNN never holds the UI process's GIL.

MNN's load(), forward() and tokenizer_encode() hold the GIL for their whole run;
in a thread they would freeze frame pumping and UI updates. The child is
spawned (not forked: the parent has threads and native state), commands go
through a multiprocessing queue (its feeder thread means `submit` never blocks
the caller) and events come back on a pipe read by one reader thread.

If the child dies (an exception, a native crash, kill -9) or hangs (no progress
for longer than the watchdog allows), the reader replaces it *before* telling
anyone, so a listener that reacts by submitting the next keyframe reaches the
new child. Only a job the dead child had begun fails; a job it never began is
handed to the new child. A model that cannot start, that crashes in its check on
the built-in image (app.worker.serve.check_model: the same image again would crash
it again), or that crashes on several keyframes in a row, is given up with
LoadFailed instead of a restart loop; so is
a child that does not get its model loaded within a bound set by the model's size
(app.core.watchdog.load_limit_s): a hung load used to leave `analyze` waiting forever.

Before anything else the child cuts itself off the network with the OS's help
(app.privacy.isolation), so native code in it (MNN, FFmpeg) cannot connect
anywhere either; Ready says which level is in force.

The child dies with its parent: on Linux the kernel kills it (PR_SET_PDEATHSIG,
which works even while native code holds the GIL), everywhere a thread in the
child watches the parent's sentinel.
"""

from __future__ import annotations

import atexit
import logging
import multiprocessing as mp
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from queue import Empty

from app import logs
from app.core.sizes import size_words
from app.core.watchdog import ProgressClock, StallLimit, load_limit_s
from app.engine.model_folder import check_failed, stopped_while_loading
from app.logs import LogSettings
from app.privacy.isolation import Isolation
from app.worker.child_guard import spawned_with_signals_blocked
from app.worker.listener import HostLedger
from app.worker.messages import (
    Analyze,
    Cancel,
    Checking,
    Command,
    Event,
    Finished,
    JobError,
    JobFailed,
    JobPhase,
    LoadFailed,
    Loading,
    Ready,
    Shutdown,
    Started,
    Token,
    WorkerRestarted,
    WorkerSpec,
    WorkerStatus,
)
from app.worker.tracker import spawn_context

log = logging.getLogger("keyframe.worker")

# A child that dies this many times in a row before it is ready is not restarted again.
MAX_FAILED_STARTS = 3
# A model that crashes (or hangs) on this many keyframes in a row, with no answer between, is given up.
MAX_CRASHES_IN_A_ROW = 3
_POLL_S = 0.25  # how often the reader looks at the watchdog when nothing arrives


def _isolate_first() -> Isolation:
    """The child's first step, while it has one thread (Linux requires it: so nothing imported
    before this point may start one — numpy and OpenCV do) and before any image or model byte
    arrives: from here on neither Python nor native code in this process has a network."""
    from app.privacy.isolation import isolate_this_process

    return isolate_this_process()


def isolation_probe(spec: WorkerSpec, port: int, report: Connection) -> None:
    """A child started like the worker takes the same first step, then tries a native connect()
    to `port` on 127.0.0.1 (what `python -m app doctor` checks); reports (isolation, outcome)."""
    isolation = _isolate_first()
    from app.privacy.native_connect import native_connect

    report.send((isolation, native_connect("127.0.0.1", port) or "connected"))
    report.close()


def _child_main(
    spec: WorkerSpec, commands: mp.Queue[Command], events: Connection, log_settings: LogSettings | None
) -> None:
    isolation = _isolate_first()
    from app.engine.stdio import claim_stdout
    from app.logs import setup_child
    from app.worker.child_guard import die_with_parent, leave_group_signals_to_parent
    from app.worker.serve import serve

    setup_child(log_settings)  # first: fd 2 may become the log file, and claim_stdout sends fd 1 there too
    die_with_parent()
    leave_group_signals_to_parent()  # Ctrl-C and a group SIGTERM reach it too; the parent decides
    claim_stdout()  # fd 1 -> stderr for MNN's chatter; this process prints nothing itself

    def poll() -> Command | None:
        try:
            return commands.get_nowait()
        except Empty:
            return None

    serve(spec, wait=commands.get, poll=poll, emit=events.send, isolation=isolation, own_process=True)
    events.close()


@dataclass
class _Child:
    process: mp.process.BaseProcess
    commands: mp.Queue[Command]
    events: Connection
    load_due: tuple[float, str]  # until Ready: when its load is overdue, and what to say then
    loading: str = ""  # the folder of the model it is loading (its Loading message)
    checking: Checking | None = None  # the step its check of the loaded model had reached
    killed: str | None = None  # why the watchdog killed it (hung)


class ProcessWorkerHost(HostLedger):
    """Owns the child process and the reader thread; `stop` ends both."""

    def __init__(
        self, spec: WorkerSpec, on_event: Callable[[Event], None], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.spec = spec
        super().__init__(on_event)
        self._clock = clock
        self._ctx = spawn_context()
        self._child: _Child | None = None
        self._stall = StallLimit(floor_s=spec.stall_floor_s)
        self._progress = ProgressClock()
        self._restarts = 0
        self._failed_starts = 0
        self._crashes_in_a_row = 0
        self._spawned = threading.Event()
        self._reader: threading.Thread | None = None

    @property
    def pid(self) -> int | None:
        child = self._child
        return child.process.pid if child is not None else None

    def start(self) -> None:
        # At exit multiprocessing ends daemon children with SIGTERM, which the worker leaves to its
        # parent (leave_group_signals_to_parent), and then waits for them: an app that exits without
        # stop() (the web server after SIGTERM) would wait forever. Stopped here first instead.
        atexit.register(self.stop)
        # Children are spawned from the reader thread, which lives as long as the host:
        # Linux's parent-death signal fires when the *thread* that forked the child ends.
        reader = threading.Thread(target=self._read_loop, name="keyframe-worker-reader", daemon=True)
        reader.start()
        # Kept only once started: a signal inside start() left a thread that stop() could not join
        # ("cannot join thread before it is started"); a reader that begins after stop() spawns nothing.
        self._reader = reader
        self._spawned.wait()

    def _try_spawn_locked(self) -> _Child | None:
        """None (and the host gives up) when no process can be started: no memory, no fds."""
        try:
            return self._spawn_locked()
        except (OSError, RuntimeError) as exc:
            self._become(
                WorkerStatus.FAILED, f"the inference worker could not be started ({type(exc).__name__}: {exc})"
            )
            return None

    def _spawn_locked(self) -> _Child:
        receiver, sender = self._ctx.Pipe(duplex=False)
        commands = self._ctx.Queue()
        process = self._ctx.Process(
            target=_child_main, args=(self.spec, commands, sender, logs.current()), name="keyframe-worker", daemon=True
        )
        with spawned_with_signals_blocked():
            process.start()
        sender.close()  # the child holds the only write end: EOF means it is gone
        floor = self.spec.load_floor_s  # until the child says how big its model is (Loading)
        due = (self._clock() + floor, f"the inference worker did not start within {floor:.0f} s")
        self._child = _Child(process, commands, receiver, due)
        return self._child

    # --- caller side ---------------------------------------------------------------------

    def submit(self, job: Analyze) -> None:
        """Never raises into the caller's thread: a host that gave up answers JobFailed at once."""
        with self._lock:
            unavailable = self._unavailable
            if unavailable is None:
                assert self._child is not None
                self._in_flight.claim(job)
                if self._status is WorkerStatus.READY:
                    self._progress.begin(self._clock())
                self._child.commands.put(job)
        if unavailable is not None:
            self._refuse(job.job_id, unavailable)

    def cancel(self, job_id: str) -> None:
        with self._lock:
            if self._child is not None and self._unavailable is None:
                self._child.commands.put(Cancel(job_id))

    def stop(self, timeout: float = 5.0) -> None:
        with self._lock:
            child, ready = self._child, self._status is WorkerStatus.READY
            self._become(WorkerStatus.STOPPED)  # or it stays FAILED: either way no child is spawned from here on
            if child is not None and ready:
                try:
                    if self._in_flight.job is not None:
                        child.commands.put(Cancel(self._in_flight.job))
                    child.commands.put(Shutdown())
                except (OSError, ValueError):
                    pass  # its channels are already closed
        if child is not None:
            if ready:  # a child still loading reads no command before its model is in: killed at once
                child.process.join(timeout)
            if child.process.is_alive():
                child.process.kill()
                child.process.join(timeout)
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(timeout)
        with self._lock:
            child = self._child
        if child is not None:
            if child.process.is_alive():  # spawned by a restart that raced this stop
                child.process.kill()
                child.process.join(timeout)
            self._close(child)
        atexit.unregister(self.stop)  # only now: a stop cut short (by Ctrl-C, say) runs again at exit

    @staticmethod
    def _close(child: _Child) -> None:
        child.events.close()
        child.commands.close()
        child.commands.cancel_join_thread()  # never block shutdown on a dead reader

    # --- reader thread -------------------------------------------------------------------

    def _read_loop(self) -> None:
        with self._lock:
            if self._status is WorkerStatus.STARTING:  # not stopped before the reader began
                self._try_spawn_locked()
            failure = self._failure if self._status is WorkerStatus.FAILED else None
        self._spawned.set()
        if failure is not None:
            self._emit(LoadFailed(failure))
            return
        while True:
            with self._lock:
                child = self._child
                if self._unavailable is not None or child is None:
                    return
            ready = wait([child.events, child.process.sentinel], timeout=_POLL_S)
            if not ready:
                self._watch_for_hang(child)
                continue
            if child.events in ready:
                try:
                    event = child.events.recv()
                except (EOFError, OSError):
                    event = None
                if event is not None:
                    self._deliver(child, event)
                    continue
            # EOF or the process sentinel: the child is gone (maybe after its last message).
            child.process.join(1.0)
            self._drain(child)
            self._child_died(child)

    def _drain(self, child: _Child) -> None:
        try:
            while child.events.poll(0):
                self._deliver(child, child.events.recv())
        except (EOFError, OSError):
            pass

    def _watch_for_hang(self, child: _Child) -> None:
        with self._lock:
            if child.killed is not None or self._unavailable is not None:
                return  # a stopping host's child is stop()'s to end
            ready = self._status is WorkerStatus.READY
            child.killed = self._job_overdue() if ready else self._load_overdue(child)
            if child.killed is None:
                return
        child.process.kill()  # the reader sees its sentinel next and restarts it (or gives up on a load)

    def _job_overdue(self) -> str | None:
        silent = self._progress.silent_for(self._clock())
        limit = self._stall.limit_s()
        if self._in_flight.job is None or silent <= limit:
            return None
        return f"no progress for {silent:.0f} s (limit {limit:.0f} s)"

    def _load_overdue(self, child: _Child) -> str | None:
        due, what = child.load_due
        return f"{what}; it was stopped" if self._clock() > due else None

    def _deliver(self, child: _Child, event: Event) -> None:
        now = self._clock()
        with self._lock:
            if isinstance(event, Loading):
                limit = load_limit_s(event.model_bytes, event.loads, self.spec.load_floor_s)
                size = f"{size_words(event.model_bytes)} of model files"
                child.load_due = (now + limit, f"the model did not load within {limit:.0f} s ({size})")
                child.loading = event.folder
            elif isinstance(event, Checking):
                child.checking = event
            elif isinstance(event, Ready):
                self._become(WorkerStatus.READY)
                self._failed_starts = 0
                self._stall.loaded(event.load_ms / 1000.0)
                if self._in_flight.job is not None:
                    self._progress.begin(now)  # a job queued while the model loaded starts its clock now
            elif isinstance(event, (Started, JobPhase, Token)):
                self._progress.tick(now)
            elif isinstance(event, (Finished, JobFailed)) and event.job_id == self._in_flight.job:
                self._stall.observe(self._progress.end())
                if isinstance(event, Finished):
                    self._crashes_in_a_row = 0
            self._in_flight.settle(event)
            orphaned = None
            if isinstance(event, LoadFailed):
                # Deterministic (bad model files): restarting would not help.
                self._become(WorkerStatus.FAILED, event.message)
                orphaned, _ = self._in_flight.take()
            failure = self._failure
        if orphaned is not None:
            self._refuse(orphaned.job_id, failure)
        self._emit(event)

    def _child_died(self, child: _Child) -> None:
        exitcode = child.process.exitcode
        how = f"exit code {exitcode}" if exitcode is None or exitcode >= 0 else f"signal {-exitcode}"
        with self._lock:
            self._close(child)
            if self._unavailable is not None:
                return
            ready, hung = self._status is WorkerStatus.READY, child.killed is not None
            reason = child.killed or how
            if not ready and not hung and child.checking is not None:
                # Loaded, then crashed on the built-in image: the step names the likely files.
                step = child.checking
                reason = check_failed(Path(child.loading), step.phase, f"stopped, {how}", step.verified)
            elif not ready and not hung and child.loading:
                # Past the up-front checks, MNN itself met something it could not use: name the files.
                reason = stopped_while_loading(Path(child.loading), how)
            job, started = self._in_flight.take()
            self._progress.end()
            failed_job = job if started else None
            given_up = None
            if not ready and (hung or child.checking is not None):
                given_up = reason  # the same model on the same disk (or image) would hang or crash again
            elif not ready:
                self._failed_starts += 1
                if self._failed_starts >= MAX_FAILED_STARTS:
                    given_up = f"the inference worker failed {self._failed_starts} times while starting ({reason})"
            elif failed_job is not None:
                self._crashes_in_a_row += 1
                if self._crashes_in_a_row >= MAX_CRASHES_IN_A_ROW:
                    given_up = f"the model crashed on {self._crashes_in_a_row} keyframes in a row ({reason})"
            if given_up is not None:
                self._become(WorkerStatus.FAILED, given_up)
            elif (new_child := self._try_spawn_locked()) is not None:
                self._become(WorkerStatus.RESTARTING)
                self._restarts += 1
                if job is not None and failed_job is None:
                    self._in_flight.claim(job)  # never begun: the new child takes it over
                    new_child.commands.put(job)
            restarts, dead = self._restarts, self._unavailable
        if dead is not None:
            log.error("worker given up: %s", dead)
        else:
            log.warning("worker restarted (%d) after %s", restarts, reason)
        # Told only now, with the new child in place: a listener may submit at once.
        if failed_job is not None:
            code = JobError.WORKER_HUNG if hung else JobError.WORKER_DIED
            self._emit(JobFailed(failed_job.job_id, code, f"the inference worker stopped ({reason})"))
        if dead is not None:
            if job is not None and failed_job is None:
                self._refuse(job.job_id, dead)
            self._emit(LoadFailed(dead))
            return
        self._emit(WorkerRestarted(reason, restarts))
