"""Downloads against a misbehaving HTTP server on 127.0.0.1.

In every case: nothing but the exact right bytes ever sits at a file's final
path or is reported verified, and after a cut only the missing bytes are
fetched again (asserted on the server's own request log).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from app.models.download import Cancelled, DownloadError, part_path
from app.models.mirrors import base_mirror
from app.models.progress import DownloadProgress, Phase
from app.models.store import ModelState
from app.privacy.guard import NetworkGuard, active_guard, install
from tests.conditions import wait_for, wait_until
from tests.models.conftest import (
    FAST,
    Model,
    RecordingGuard,
    assert_nothing_corrupt_installed,
    make_model,
    make_store,
)
from tests.servers.faulty import Faults, FaultyServer

BIG = "llm.mnn.weight"


def ranges(server: FaultyServer, path: str) -> list[str | None]:
    return [s.range for s in server.seen(path)]


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_cuts_at_random_offsets_resume_exactly_where_they_stopped(tmp_path: Path, model: Model, seed: int) -> None:
    rng = random.Random(seed)
    cuts = {
        path: sorted(rng.sample(range(1, len(content)), k=min(3, len(content) - 1)))
        for path, content in model.files.items()
    }
    faults = {f"/m/{path}": Faults(cut_at=list(offsets)) for path, offsets in cuts.items()}
    store = make_store(tmp_path / "models", model)
    events: list[DownloadProgress] = []
    with FaultyServer(model.served(), faults) as server:
        status = store.download(model.id, [base_mirror(server.url + "/m")], on_progress=events.append)
    assert status.state is ModelState.INSTALLED
    assert_nothing_corrupt_installed(store, model)
    for path, offsets in cuts.items():
        seen = server.seen(f"/m/{path}")
        # Each retry asks for exactly the byte after the last one received, never earlier.
        assert [s.range for s in seen] == [None] + [f"bytes={o}-" for o in offsets]
        assert [s.start for s in seen] == [0, *offsets]
        assert sum(s.sent for s in seen) == len(model.files[path])  # no byte fetched twice
    assert events[-1].phase is Phase.DONE and events[-1].done == events[-1].total == sum(map(len, model.files.values()))
    assert {s.accept_encoding for s in server.seen()} == {"identity"}
    assert any(e.phase is Phase.WAITING for e in events)


def test_a_server_that_ignores_range_restarts_the_file(tmp_path: Path, model: Model) -> None:
    faults = {f"/m/{BIG}": Faults(cut_at=[250_000], ignore_range=True)}
    store = make_store(tmp_path / "models", model)
    with FaultyServer(model.served(), faults) as server:
        store.download(model.id, [base_mirror(server.url + "/m")])
    seen = server.seen(f"/m/{BIG}")
    assert [(s.range, s.status, s.sent) for s in seen] == [
        (None, 200, 250_000),
        ("bytes=250000-", 200, len(model.files[BIG])),
    ]
    assert store.status(model.id).usable
    assert_nothing_corrupt_installed(store, model)


def test_a_wrong_content_range_is_never_appended(tmp_path: Path, model: Model) -> None:
    faults = {f"/m/{BIG}": Faults(cut_at=[300_000], range_shift=1000)}
    store = make_store(tmp_path / "models", model)
    with FaultyServer(model.served(), faults) as server:
        store.download(model.id, [base_mirror(server.url + "/m")])
    seen = server.seen(f"/m/{BIG}")
    assert [(s.range, s.status, s.start) for s in seen] == [
        (None, 200, 0),
        ("bytes=300000-", 206, 299_000),
        (None, 200, 0),
    ]  # that mirror: no more ranges
    assert store.status(model.id).usable
    assert_nothing_corrupt_installed(store, model)


def test_corrupted_bytes_on_the_only_mirror_install_nothing_and_name_the_file(tmp_path: Path, model: Model) -> None:
    faults = {f"/m/{BIG}": Faults(corrupt_at=[123_456])}
    store = make_store(tmp_path / "models", model)
    with FaultyServer(model.served(), faults) as server, pytest.raises(DownloadError) as caught:
        store.download(model.id, [base_mirror(server.url + "/m")])
    assert caught.value.path == BIG and "SHA-256" in str(caught.value)
    assert len(server.seen(f"/m/{BIG}")) == 2  # the only mirror is asked once more, then not again
    folder = store.folder(model.id)
    assert not (folder / BIG).exists() and not part_path(folder / BIG).exists()
    status = store.status(model.id)
    assert status.state is ModelState.PARTIAL and BIG in status.pending and "config.json" in status.verified
    assert_nothing_corrupt_installed(store, model)


def test_a_response_damaged_once_on_the_only_mirror_is_fetched_again_and_installed(
    tmp_path: Path, model: Model
) -> None:
    """A one-off corrupt response failed the whole download ("does not match; nothing was installed")."""
    faults = {f"/m/{BIG}": Faults(corrupt_at=[123_456], corrupt_responses=1)}
    store = make_store(tmp_path / "models", model)
    with FaultyServer(model.served(), faults) as server:
        store.download(model.id, [base_mirror(server.url + "/m")])
    assert ranges(server, f"/m/{BIG}") == [None, None]  # the second try from byte 0
    assert store.status(model.id).usable
    assert_nothing_corrupt_installed(store, model)


def test_corrupted_bytes_fall_back_to_the_next_mirror(tmp_path: Path, model: Model) -> None:
    faults = {f"/bad/{BIG}": Faults(corrupt_at=[5, 800_000])}
    store = make_store(tmp_path / "models", model)
    with FaultyServer({**model.served("/bad"), **model.served("/good")}, faults) as server:
        store.download(model.id, [base_mirror(server.url + "/bad", "bad"), base_mirror(server.url + "/good")])
    assert [s.status for s in server.seen(f"/bad/{BIG}")] == [200]
    assert [s.status for s in server.seen(f"/good/{BIG}")] == [200]
    assert server.seen("/good/config.json") == []  # the good files came from the first mirror
    assert store.status(model.id).usable
    assert_nothing_corrupt_installed(store, model)


def test_a_bad_prefix_kept_from_before_a_cut_is_refetched_from_zero(tmp_path: Path, model: Model) -> None:
    # The first response is corrupt and cut; the resumed tail is fine, so only the
    # final hash can tell: the whole file is fetched again, once, from byte 0.
    faults = {f"/m/{BIG}": Faults(cut_at=[400_000], corrupt_at=[1000], corrupt_responses=1)}
    store = make_store(tmp_path / "models", model)
    with FaultyServer(model.served(), faults) as server:
        store.download(model.id, [base_mirror(server.url + "/m")])
    assert ranges(server, f"/m/{BIG}") == [None, "bytes=400000-", None]
    assert store.status(model.id).usable
    assert_nothing_corrupt_installed(store, model)


def test_garbage_in_a_leftover_part_never_reaches_the_installed_file(tmp_path: Path, model: Model) -> None:
    store = make_store(tmp_path / "models", model)
    folder = store.folder(model.id)
    folder.mkdir(parents=True)
    part_path(folder / BIG).write_bytes(b"\0" * 77_777)  # e.g. left by another tool
    with FaultyServer(model.served()) as server:
        store.download(model.id, [base_mirror(server.url + "/m")])
    assert ranges(server, f"/m/{BIG}") == ["bytes=77777-", None]
    assert_nothing_corrupt_installed(store, model)
    assert store.status(model.id).usable


def test_a_404_moves_on_to_the_next_mirror_without_retrying(tmp_path: Path, model: Model) -> None:
    store = make_store(tmp_path / "models", model)
    with FaultyServer(model.served("/good")) as server:
        store.download(model.id, [base_mirror(server.url + "/gone", "gone"), base_mirror(server.url + "/good")])
    for path in model.files:
        assert [s.status for s in server.seen(f"/gone/{path}")] == [404]
        assert [s.status for s in server.seen(f"/good/{path}")] == [200]
    assert store.status(model.id).usable


def test_a_404_on_the_only_mirror_fails_naming_the_file_and_leaves_no_part(tmp_path: Path, model: Model) -> None:
    store = make_store(tmp_path / "models", model)
    served = model.served()
    del served[f"/m/{BIG}"]
    with FaultyServer(served) as server, pytest.raises(DownloadError) as caught:
        store.download(model.id, [base_mirror(server.url + "/m")])
    assert caught.value.path == BIG and "HTTP 404" in str(caught.value)
    assert len(server.seen(f"/m/{BIG}")) == 1
    assert not store.status(model.id).usable
    assert not part_path(store.folder(model.id) / BIG).exists()  # no empty leftovers


def test_a_mirror_serving_another_file_does_not_cost_the_bytes_already_downloaded(tmp_path: Path, model: Model) -> None:
    store = make_store(tmp_path / "models", model)
    folder = store.folder(model.id)
    folder.mkdir(parents=True)
    part_path(folder / BIG).write_bytes(model.files[BIG][:333_333])
    served = {**model.served("/m"), f"/other/{BIG}": b"a different file"}
    faults = {f"/other/{BIG}": Faults(ignore_range=True)}
    with FaultyServer(served, faults) as server:
        store.download(model.id, [base_mirror(server.url + "/other"), base_mirror(server.url + "/m")])
    assert [(s.range, s.status) for s in server.seen(f"/other/{BIG}")] == [("bytes=333333-", 200)]
    assert ranges(server, f"/m/{BIG}") == ["bytes=333333-"]  # the kept prefix survived the refusal
    assert_nothing_corrupt_installed(store, model)
    assert store.status(model.id).usable


def test_a_503_and_a_500_are_retried_honouring_retry_after(tmp_path: Path, model: Model) -> None:
    faults = {f"/m/{BIG}": Faults(statuses=[(503, {"Retry-After": "2"}), (500, {})])}
    waits: list[float] = []
    store = make_store(tmp_path / "models", model)
    with FaultyServer(model.served(), faults) as server:
        store.download(model.id, [base_mirror(server.url + "/m")], wait=waits.append)
    assert [s.status for s in server.seen(f"/m/{BIG}")] == [503, 500, 200]
    assert waits[0] == 2.0  # exactly what the server asked for
    assert 0 < waits[1] <= 0.05  # our own (jittered) backoff
    assert store.status(model.id).usable


def test_retry_after_is_really_waited_for(tmp_path: Path, model: Model) -> None:
    faults = {"/m/config.json": Faults(statuses=[(503, {"Retry-After": "1"})])}
    store = make_store(tmp_path / "models", model)
    with FaultyServer(model.served(), faults) as server:
        started = time.monotonic()
        store.download(model.id, [base_mirror(server.url + "/m")])
    assert time.monotonic() - started >= 1.0
    assert [s.status for s in server.seen("/m/config.json")] == [503, 200]


def test_a_retry_after_beyond_the_limit_skips_the_mirror(tmp_path: Path, model: Model) -> None:
    faults = {f"/slow/{BIG}": Faults(statuses=[(503, {"Retry-After": "3600"})])}
    waits: list[float] = []
    store = make_store(tmp_path / "models", model)
    with FaultyServer({**model.served("/slow"), **model.served("/m")}, faults) as server:
        store.download(model.id, [base_mirror(server.url + "/slow"), base_mirror(server.url + "/m")], wait=waits.append)
    assert waits == [] and [s.status for s in server.seen(f"/m/{BIG}")] == [200]


def test_a_mirror_that_keeps_failing_is_given_up_after_the_policy_attempts(tmp_path: Path, model: Model) -> None:
    faults = {f"/m/{BIG}": Faults(statuses=[(500, {})] * 10)}
    store = make_store(tmp_path / "models", model)
    with FaultyServer(model.served(), faults) as server, pytest.raises(DownloadError, match="gave up after 3"):
        store.download(model.id, [base_mirror(server.url + "/m")], wait=lambda s: None)
    assert len(server.seen(f"/m/{BIG}")) == 3
    assert_nothing_corrupt_installed(store, model)


def test_a_stalled_connection_is_dropped_at_the_read_timeout_and_resumed(tmp_path: Path, model: Model) -> None:
    faults = {f"/m/{BIG}": Faults(stall_after=200_000, stall_s=10.0)}
    store = make_store(tmp_path / "models", model)
    with FaultyServer(model.served(), faults) as server:
        started = time.monotonic()
        store.download(model.id, [base_mirror(server.url + "/m")])
        elapsed = time.monotonic() - started
    assert elapsed < 5  # the 10 s stall was not sat out
    # The stalled response is recorded when its handler ends, which stop() released: on a busy
    # machine that thread may not have run yet.
    both = wait_for(lambda: ranges(server, f"/m/{BIG}"), lambda r: len(r) >= 2, 30, "both requests recorded")
    assert both == [None, "bytes=200000-"]
    assert server.seen(f"/m/{BIG}")[0].sent == 200_000
    assert store.status(model.id).usable


def test_never_more_bytes_than_the_manifest_size(tmp_path: Path, model: Model) -> None:
    served = model.served()
    served["/m/config.json"] += b"trailing bytes the manifest does not have"
    faults = {"/m/config.json": Faults(no_length=True)}
    store = make_store(tmp_path / "models", model)
    with FaultyServer(served, faults) as server:
        store.download(model.id, [base_mirror(server.url + "/m")])
    dest = store.folder(model.id) / "config.json"
    assert dest.stat().st_size == len(model.files["config.json"])
    assert store.status(model.id).usable


def test_a_compressed_answer_is_refused(tmp_path: Path, model: Model) -> None:
    faults = {"/m/config.json": Faults(extra_headers={"Content-Encoding": "gzip"})}
    store = make_store(tmp_path / "models", model)
    with FaultyServer(model.served(), faults) as server, pytest.raises(DownloadError, match="gzip-encoded"):
        store.download(model.id, [base_mirror(server.url + "/m")])
    assert not (store.folder(model.id) / "config.json").exists()


def test_a_mirror_serving_another_size_is_refused(tmp_path: Path, model: Model) -> None:
    served = model.served()
    served["/m/config.json"] += b"x"
    store = make_store(tmp_path / "models", model)
    with FaultyServer(served) as server, pytest.raises(DownloadError, match="serves 701 bytes, the manifest says 700"):
        store.download(model.id, [base_mirror(server.url + "/m")])
    assert not (store.folder(model.id) / "config.json").exists()


def test_without_manifest_sizes_the_server_total_is_used_and_the_hash_still_decides(tmp_path: Path) -> None:
    model = make_model("sizeless", with_sizes=False)
    faults = {f"/m/{BIG}": Faults(cut_at=[100_000, 500_000]), "/m/visual/visual.mnn": Faults(no_length=True)}
    store = make_store(tmp_path / "models", model)
    with FaultyServer(model.served(), faults) as server:
        store.download(model.id, [base_mirror(server.url + "/m")])
    assert ranges(server, f"/m/{BIG}") == [None, "bytes=100000-", "bytes=500000-"]
    assert store.status(model.id).usable
    assert_nothing_corrupt_installed(store, model)


def test_unknown_size_and_corrupt_bytes_still_install_nothing(tmp_path: Path) -> None:
    model = make_model("sizeless", with_sizes=False)
    faults = {"/m/visual/visual.mnn": Faults(no_length=True, corrupt_at=[10])}
    store = make_store(tmp_path / "models", model)
    with FaultyServer(model.served(), faults) as server, pytest.raises(DownloadError, match="SHA-256"):
        store.download(model.id, [base_mirror(server.url + "/m")])
    assert not (store.folder(model.id) / "visual/visual.mnn").exists()
    assert_nothing_corrupt_installed(store, model)


def test_redirects_are_followed_within_the_mirrors_hosts_and_each_hop_is_let_through_the_guard(
    tmp_path: Path, model: Model
) -> None:
    guard = RecordingGuard()
    store = make_store(tmp_path / "models", model)
    with FaultyServer(model.served()) as server:
        port = server.url.rsplit(":", 1)[1]
        for path in model.files:  # a relative redirect, then one to a host name the manifest pins
            server.faults[f"/r/{path}"] = Faults(statuses=[(302, {"Location": f"/hop/{path}"})])
            server.faults[f"/hop/{path}"] = Faults(statuses=[(307, {"Location": f"http://localhost:{port}/m/{path}"})])
        mirror = replace(base_mirror(server.url + "/r", "pinned"), redirect_hosts=("localhost",))
        store.download(model.id, [mirror], guard=guard)  # type: ignore[arg-type]
    assert store.status(model.id).usable
    # One allowance per request, for that request's host only: never the whole download, never two hosts.
    hops = [frozenset({"127.0.0.1"}), frozenset({"127.0.0.1"}), frozenset({"localhost"})]
    assert guard.allowed == hops * len(model.files)
    for path in model.files:
        assert [s.status for s in server.seen(f"/r/{path}")] == [302]
        assert [s.status for s in server.seen(f"/hop/{path}")] == [307]
        assert [s.status for s in server.seen(f"/m/{path}")] == [200]


def test_a_redirect_to_another_scheme_is_refused(tmp_path: Path, model: Model) -> None:
    faults = {"/m/config.json": Faults(statuses=[(302, {"Location": "file:///etc/passwd"})])}
    store = make_store(tmp_path / "models", model)
    with FaultyServer(model.served(), faults) as server, pytest.raises(DownloadError, match="refused a redirect"):
        store.download(model.id, [base_mirror(server.url + "/m")])
    assert not (store.folder(model.id) / "config.json").exists()


@pytest.mark.parametrize("headers", [{}, {"Location": ""}], ids=["none", "empty"])
def test_a_redirect_without_a_usable_location_fails_that_mirror_in_words(
    tmp_path: Path, model: Model, headers: dict[str, str]
) -> None:
    """A 302 without Location was a KeyError traceback; an empty one a redirect to itself."""
    faults = {"/m/config.json": Faults(statuses=[(302, headers)])}
    store = make_store(tmp_path / "models", model)
    with FaultyServer(model.served(), faults) as server, pytest.raises(DownloadError, match="config.json") as caught:
        store.download(model.id, [base_mirror(server.url + "/m")])
    assert "redirect" in str(caught.value) and not (store.folder(model.id) / "config.json").exists()


def test_a_host_the_privacy_guard_blocks_is_not_retried(tmp_path: Path, model: Model) -> None:
    # A redirect to a pinned non-loopback host, but no allowance from the guard (no guard passed
    # to the download): the installed guard blocks the lookup before any packet, and the
    # mirror fails at once instead of retrying.
    faults = {"/m/config.json": Faults(statuses=[(302, {"Location": "http://203.0.113.9/config.json"})])}
    store = make_store(tmp_path / "models", model)
    session_guard = active_guard()
    guard = install(NetworkGuard())
    try:
        with FaultyServer(model.served(), faults) as server, pytest.raises(DownloadError, match="privacy guard"):
            mirror = replace(base_mirror(server.url + "/m"), redirect_hosts=("203.0.113.9",))
            store.download(model.id, [mirror], wait=lambda s: None)
    finally:
        if session_guard is not None:
            install(session_guard)
    assert guard.blocked_count == 1 and guard.outbound_count == 0
    assert guard.attempts()[0].event == "socket.getaddrinfo"


def test_cancel_during_a_retry_wait_stops_promptly(tmp_path: Path, model: Model) -> None:
    faults = {"/m/config.json": Faults(statuses=[(503, {"Retry-After": "4"})])}
    store = make_store(tmp_path / "models", model)
    cancel = threading.Event()

    def on_progress(p: DownloadProgress) -> None:
        if p.phase is Phase.WAITING:
            threading.Timer(0.2, cancel.set).start()

    with FaultyServer(model.served(), faults) as server, pytest.raises(Cancelled):
        started = time.monotonic()
        store.download(model.id, [base_mirror(server.url + "/m")], cancel=cancel, on_progress=on_progress)
    assert time.monotonic() - started < 2
    assert not store.status(model.id).usable


# --- requests that block without end, and a cancel that waited for the read timeout ---------


class Background:
    """A download on its own thread, as the Models screen and the CLI run it; `outcome` once it ends."""

    def __init__(self, download: Callable[[], object]) -> None:
        self.outcome: BaseException | object | None = None
        self.ended_at: float | None = None

        def run() -> None:
            try:
                self.outcome = download()
            except BaseException as exc:
                self.outcome = exc
            self.ended_at = time.monotonic()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()

    def join(self, timeout: float) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()


def test_a_mirror_that_answers_100_continue_forever_is_left_soon_after_the_read_timeout(
    tmp_path: Path, model: Model
) -> None:
    """Every interim answer restarted httpx's read timeout: the download sat at 0 bytes for as long as
    the mirror liked (500 s and counting). Now the next mirror is tried soon after one read timeout."""
    faults = {"/stuck/config.json": Faults(interim_every_s=0.1)}
    store = make_store(tmp_path / "models", model)
    with FaultyServer({**model.served("/stuck"), **model.served("/m")}, faults) as server:
        mirrors = [base_mirror(server.url + "/stuck", "stuck"), base_mirror(server.url + "/m")]
        started = time.monotonic()
        run = Background(lambda: store.download(model.id, mirrors))
        assert run.join(20), "the download still waits for an answer"
        # Its one request ends once the server notices the client has gone: left at once, not retried.
        assert wait_until(lambda: [s.status for s in server.seen("/stuck/config.json")] == [100])
    assert not isinstance(run.outcome, BaseException), run.outcome
    assert store.status(model.id).usable
    assert run.ended_at is not None and run.ended_at - started < FAST.read_timeout_s + 4


def test_the_only_mirror_answering_100_continue_forever_fails_in_words(tmp_path: Path, model: Model) -> None:
    faults = {"/m/config.json": Faults(interim_every_s=0.1)}
    store = make_store(tmp_path / "models", model)
    with FaultyServer(model.served(), faults) as server:
        run = Background(lambda: store.download(model.id, [base_mirror(server.url + "/m")]))
        assert run.join(20), "the download still waits for an answer"
    assert isinstance(run.outcome, DownloadError) and run.outcome.path == "config.json"
    assert "kept the request waiting 2 s without an answer" in str(run.outcome)


@pytest.mark.parametrize("when", ["before the answer", "mid-file"])
def test_a_cancel_against_a_silent_server_acts_at_once(tmp_path: Path, model: Model, when: str) -> None:
    """Cancel (Ctrl-C, the Cancel button) was seen between chunks: against a server that says nothing,
    only after the read timeout (30 s by default, as here)."""
    patient = replace(FAST, read_timeout_s=30.0)
    if when == "mid-file":
        faults = {f"/m/{BIG}": Faults(stall_after=200_000, stall_s=60)}
    else:
        faults = {"/m/config.json": Faults(silent_s=60)}
    store = make_store(tmp_path / "models", model, policy=patient)
    part = part_path(store.folder(model.id) / BIG)
    cancel = threading.Event()
    with FaultyServer(model.served(), faults) as server:
        run = Background(lambda: store.download(model.id, [base_mirror(server.url + "/m")], cancel=cancel))
        if when == "mid-file":
            waiting = wait_until(lambda: part.exists() and part.stat().st_size == 200_000)
        else:
            waiting = wait_until(lambda: server.arrivals == 1)
        assert waiting, "the download never reached the silent server"
        time.sleep(0.3)  # the request is now blocked in a read
        cancelled_at = time.monotonic()
        cancel.set()
        assert run.join(10)
    assert isinstance(run.outcome, Cancelled), run.outcome
    assert run.ended_at is not None and run.ended_at - cancelled_at < 1.5
    if when == "mid-file":
        assert part.stat().st_size == 200_000  # kept: the next download resumes from it


def test_a_folder_where_the_partial_download_goes_is_a_sentence(tmp_path: Path, model: Model) -> None:
    """It gave a raw "[Errno 21] Is a directory"; the folder is not removed (it may hold files)."""
    store = make_store(tmp_path / "models", model)
    part = part_path(store.folder(model.id) / BIG)
    part.mkdir(parents=True)
    (part / "keep.txt").write_text("someone's")
    with FaultyServer(model.served()) as server, pytest.raises(DownloadError) as caught:
        store.download(model.id, [base_mirror(server.url + "/m")])
    assert caught.value.path == BIG and "is a folder where the partial download goes" in str(caught.value)
    assert "Errno" not in str(caught.value) and (part / "keep.txt").read_text() == "someone's"
