"""The UI traced with strace through a whole still-image session in Chromium.

Every process the app starts (the Flet server, the model worker, helpers) is traced;
Chromium is not (it is the user's browser). The only internet-family addresses any of
them may name: the app's own listening socket on 127.0.0.1, and the worker's failing
self-check of its isolation (tests/integration/network_trace.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import AppServer, close_page, open_app_page, wait_text
from tests.e2e.test_practice import choose, start_with_files
from tests.integration.conftest import held_out_scenes
from tests.integration.network_trace import addressed_calls, isolation_probes, strace_prefix

pytestmark = [pytest.mark.browser, pytest.mark.strace, pytest.mark.netns]


def test_a_traced_ui_session_connects_nowhere(browser, strace: str, netns: None, tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    trace.mkdir()
    scenes = held_out_scenes(count_per_kind=1, seed=59)
    image = tmp_path / "yes.jpg"
    image.write_bytes(next(data for _, data, expected in scenes if expected == "yes"))
    # As a user (uid 1000 in a user namespace), not root: the path people take, where the worker
    # needs a user namespace of its own and so must still be single-threaded when it isolates.
    as_user = ["unshare", "--user", "--map-user=1000", "--map-group=1000"]
    with AppServer(tmp_path / "data", wrap=[*as_user, *strace_prefix(strace, trace)]) as server:
        pg = open_app_page(browser, server.url)
        try:
            wait_text(pg, "model-status", "Model ready", timeout=120)
            choose(pg, "Image")
            start_with_files(pg, [image])
            wait_text(pg, "observation", "YES", timeout=120)
            pg.request_log.assert_local()
        finally:
            close_page(pg)
    calls, processes = addressed_calls(trace)
    report = "\n".join(map(str, calls))
    assert processes >= 2, report  # the app and its worker child were traced
    probes = isolation_probes(calls)
    internet = [c for c in calls if c.internet and c not in probes]
    # The server's own socket: bound on 127.0.0.1 at the app's port, nothing else named.
    assert internet and all(c.name == "bind" and c.loopback and c.port == server.port for c in internet), report
    # The worker isolated itself; the group's SIGTERM that ends the app is the app's to act on, so it
    # did not kill the worker first and make the app start another while it shut down (seen before).
    logs = _logs(server.data)
    assert len(probes) == 1 and "worker restarted" not in logs, report + logs
    assert all(p.errno == "ENETUNREACH" for p in probes), report
    assert "network of the model's process: os-isolated (Linux user + network namespace" in logs


def _logs(data: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in data.rglob("*.log*"))
