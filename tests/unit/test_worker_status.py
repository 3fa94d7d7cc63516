"""A worker host's status and a job's error code are enums that travel as the strings they replaced."""

from __future__ import annotations

import json
import pickle

import pytest

from app.core.session import KeyframeFailed, event_to_dict
from app.worker.listener import HostLedger
from app.worker.messages import JobError, JobFailed, WorkerStatus


def moves(host: HostLedger, *steps: WorkerStatus, failure: str = "") -> list[WorkerStatus]:
    """The status after each step (`failure`: the reason a step to FAILED gives)."""
    seen = []
    with host._lock:
        for step in steps:
            host._become(step, failure)
            seen.append(host.status)
    return seen


def test_a_host_starts_loads_restarts_and_then_fails_for_good() -> None:
    host = HostLedger(lambda _event: None)
    assert host.status is WorkerStatus.STARTING and host._unavailable is None
    S = WorkerStatus
    steps = (S.READY, S.RESTARTING, S.READY, S.FAILED, S.STOPPED, S.READY)
    assert moves(host, *steps, failure="the model crashed") == [S.READY, S.RESTARTING, S.READY] + [S.FAILED] * 3
    assert host._unavailable == "the model crashed"


def test_a_stopped_host_refuses_a_late_ready_but_takes_a_late_load_failure() -> None:
    host = HostLedger(lambda _event: None)
    assert moves(host, WorkerStatus.STOPPED, WorkerStatus.READY) == [WorkerStatus.STOPPED] * 2
    assert host._unavailable == "the inference worker is stopped"
    assert moves(host, WorkerStatus.FAILED, failure="no model files") == [WorkerStatus.FAILED]
    assert host._unavailable == "no model files"


def test_the_status_changes_only_under_the_hosts_lock() -> None:
    with pytest.raises(AssertionError, match="under its lock"):
        HostLedger(lambda _event: None)._become(WorkerStatus.READY)


def test_codes_pickle_as_themselves_and_reach_a_session_log_as_their_strings() -> None:
    failed = pickle.loads(pickle.dumps(JobFailed("j", JobError.WORKER_HUNG, "no progress")))
    assert failed.error is JobError.WORKER_HUNG and failed.error == "worker_hung"
    assert pickle.loads(pickle.dumps(WorkerStatus.RESTARTING)) is WorkerStatus.RESTARTING

    def line(error: str) -> str:
        event = KeyframeFailed(event_id="f", t=1.0, wall_time=2.0, keyframe_id="k", error=error, message="m")
        return json.dumps(event_to_dict(event))

    assert line(JobError.WORKER_HUNG) == line("worker_hung")
    assert f"{JobError.CANCELLED}" == "cancelled" and "%s" % WorkerStatus.READY == "ready"  # noqa: UP031 (the old spelling must work too)
