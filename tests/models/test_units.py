"""Pure pieces: header parsing, mirror URLs, progress arithmetic and rendering, locks, backup exclusion."""

from __future__ import annotations

import email.utils
import io
import json
import random
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.models.download import (
    ContentRange,
    FileFetcher,
    RetryPolicy,
    parse_content_range,
    parse_retry_after,
    parse_unsatisfied_range,
)
from app.models.locks import ModelBusy, ModelLock
from app.models.manifest import ManifestError, manifest_from_dict
from app.models.mirrors import (
    MirrorError,
    base_mirror,
    choose_mirrors,
    load_mirror_setting,
    manifest_mirrors,
    save_mirror_setting,
)
from app.models.progress import DownloadProgress, Phase, ProgressTracker, RateMeter, TerminalProgress, render_line
from app.storage.locations import exclude_from_backup
from app.storage.paths import MANIFESTS


@given(st.integers(0, 2**40), st.integers(0, 2**40), st.integers(1, 2**41))
def test_content_range_round_trips_valid_headers(start: int, length: int, extra: int) -> None:
    end = start + length
    total = end + extra
    assert parse_content_range(f"bytes {start}-{end}/{total}") == ContentRange(start, end, total)
    assert parse_content_range(f"bytes {start}-{end}/*") == ContentRange(start, end, None)


@pytest.mark.parametrize(
    "header", [None, "", "bytes 5-4/10", "bytes 0-10/10", "items 0-1/2", "bytes */10", "bytes -1-5/10", "bytes 0-5"]
)
def test_content_range_rejects_what_cannot_be_trusted(header: str | None) -> None:
    assert parse_content_range(header) is None


def test_unsatisfied_range_and_retry_after() -> None:
    assert parse_unsatisfied_range("bytes */1234") == 1234 and parse_unsatisfied_range("bytes 0-1/2") is None
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after(email.utils.formatdate(1_000_030, usegmt=True), now=1_000_000) == pytest.approx(30)
    assert parse_retry_after(email.utils.formatdate(999_000, usegmt=True), now=1_000_000) == 0.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_backoff_grows_is_capped_and_jittered() -> None:
    policy = RetryPolicy(backoff_s=1.0, max_backoff_s=8.0)
    fetcher = FileFetcher(None, cancel=threading.Event(), policy=policy, rng=random.Random(3))  # type: ignore[arg-type]
    delays = {n: [fetcher._backoff(n) for _ in range(50)] for n in (1, 2, 3, 10)}
    assert all(0.5 <= d <= 1.0 for d in delays[1]) and all(1.0 <= d <= 2.0 for d in delays[2])
    assert all(4.0 <= d <= 8.0 for d in delays[10]) and len(set(delays[3])) > 1


def test_the_real_manifest_gives_pinned_hugging_face_and_modelscope_urls() -> None:
    manifest = manifest_from_dict(json.loads((MANIFESTS / "qwen3-vl-2b-instruct-mnn.json").read_text()))
    hf, ms = manifest_mirrors(manifest)
    assert hf.url_for("llm.mnn.weight") == (
        "https://huggingface.co/taobao-mnn/Qwen3-VL-2B-Instruct-MNN/resolve/"
        "9e49ec71ded22500a997ed0f9961e1e92b85bbc9/llm.mnn.weight"
    )
    assert ms.url_for("sub dir/a&b.json") == (
        "https://modelscope.cn/api/v1/models/MNN/Qwen3-VL-2B-Instruct-MNN/repo"
        "?Revision=master&FilePath=sub%20dir%2Fa%26b.json"
    )
    # Every host a download may reach: the hubs and the CDN hosts the manifest pins for each, nothing else.
    assert {h for h in hf.hosts | ms.hosts if not h.endswith((".hf.co", ".huggingface.co", ".modelscope.cn"))} == {
        "huggingface.co",
        "modelscope.cn",
    }
    assert manifest.approx_total_size == 1475228382
    # A user mirror replaces the public ones: nothing falls back to the internet behind the user's back.
    (user,) = choose_mirrors(manifest, ["http://models.corp.example:8080/keyframe/"])
    assert user.url_for("visual.mnn") == "http://models.corp.example:8080/keyframe/visual.mnn"
    assert user.hosts == {"models.corp.example"}  # and may be redirected nowhere else


def test_a_hugging_face_mirror_must_be_pinned_to_a_commit() -> None:
    data = {
        "schema": 1,
        "id": "m",
        "revision": "main",
        "files": [{"path": "a", "sha256": "a" * 64}],
        "mirrors": [{"kind": "huggingface", "repo": "org/m"}],
    }
    with pytest.raises(MirrorError, match="40-hex commit"):
        manifest_mirrors(manifest_from_dict(data))
    with pytest.raises(ManifestError):
        manifest_from_dict({**data, "approx_total_size": -1})


@pytest.mark.parametrize("url", ["ftp://x/y", "models.example.com", "http://", "http://h/p?x=1", ""])
def test_bad_mirror_urls_are_refused(url: str, tmp_path: Path) -> None:
    with pytest.raises(MirrorError):
        base_mirror(url)
    with pytest.raises(MirrorError):
        save_mirror_setting(url, {"FLET_APP_STORAGE_DATA": str(tmp_path)})
    assert load_mirror_setting({"FLET_APP_STORAGE_DATA": str(tmp_path)}) is None


# A password in the URL was saved in clear text in model-mirror.json.
CREDENTIAL_URLS = ["http://user:s3cret@host/m", "https://s3cret@host/m", "http://u:s3cret/x@host/m", "s3cret@host/m"]


@pytest.mark.parametrize("url", CREDENTIAL_URLS)
def test_a_mirror_url_with_credentials_is_refused_without_repeating_them(url: str, tmp_path: Path) -> None:
    """Saved (`models mirror`, Settings) or given for one download (`--mirror`): refused, and nothing written."""
    manifest = manifest_from_dict(json.loads((MANIFESTS / "keyframe-demo.json").read_text()))
    for use in (
        lambda: save_mirror_setting(url, {"FLET_APP_STORAGE_DATA": str(tmp_path)}),
        lambda: choose_mirrors(manifest, [url]),
    ):
        with pytest.raises(MirrorError) as caught:
            use()
        assert "s3cret" not in str(caught.value) and "***@host/m" in str(caught.value)
    assert not list(tmp_path.iterdir())


def test_a_saved_mirror_with_credentials_is_refused_without_repeating_them(tmp_path: Path) -> None:
    """A file written before credentials were refused: the error says to clear it and keeps the secret out."""
    (tmp_path / "model-mirror.json").write_text(json.dumps({"mirror_base_url": "http://user:s3cret@host/m"}))
    with pytest.raises(MirrorError, match="user name or password") as caught:
        load_mirror_setting({"FLET_APP_STORAGE_DATA": str(tmp_path)})
    assert "s3cret" not in str(caught.value)


def test_rate_meter_uses_a_sliding_window() -> None:
    now = [0.0]
    meter = RateMeter(window_s=5.0, clock=lambda: now[0])
    for second in range(10):
        now[0] = float(second)
        meter.add(second * 1000)  # 1 kB/s for 10 s
    assert meter.rate() == pytest.approx(1000)
    for second in range(10, 16):
        now[0] = float(second)
        meter.add(9000 + (second - 9) * 10_000)  # then 10 kB/s
    assert meter.rate() == pytest.approx(10_000, rel=0.01)


def test_tracker_reports_done_total_rate_and_eta() -> None:
    now = [0.0]
    events: list[DownloadProgress] = []
    tracker = ProgressTracker("m", events.append, interval_s=0.0, clock=lambda: now[0])
    tracker.set_totals(total=10_000, done=2_000, file_count=1)
    tracker.start_file("w", 1, 8_000)
    for second in range(1, 5):
        now[0] = float(second)
        tracker.on_bytes(second * 1_000, 8_000, 1_000)
    last = events[-1]
    assert (last.done, last.total, last.file_done) == (6_000, 10_000, 4_000)
    assert last.rate_bps == pytest.approx(1_000) and last.eta_s == pytest.approx(4.0)
    tracker.file_finished(8_000)
    tracker.finish(Phase.DONE)
    assert events[-1].phase is Phase.DONE and events[-1].fraction == 1.0


def test_tracker_throttles_byte_updates_but_not_phase_changes() -> None:
    now = [0.0]
    events: list[DownloadProgress] = []
    tracker = ProgressTracker("m", events.append, interval_s=1.0, clock=lambda: now[0])
    tracker.start_file("w", 1, 100)
    for i in range(50):
        tracker.on_bytes(i, 100, 1)
    assert len(events) == 1
    tracker.waiting("HTTP 503")
    assert events[-1].phase is Phase.WAITING and events[-1].message == "HTTP 503"


def test_render_line_and_terminal_output() -> None:
    p = DownloadProgress(
        "qwen",
        Phase.DOWNLOADING,
        file="llm.mnn.weight",
        file_index=2,
        file_count=8,
        done=512 << 20,
        total=1 << 30,
        rate_bps=2.5 * (1 << 20),
        eta_s=200,
    )
    line = render_line(p)
    assert "llm.mnn.weight (2/8)" in line and " 50.0%" in line and "512 MB/1 GB" in line
    assert "2.5 MB/s" in line and "ETA 3 min 20 s" in line
    log = io.StringIO()
    bar = TerminalProgress(log, log_every_s=60)
    bar(p)
    bar(p)  # same phase, within the interval: not repeated in a log
    bar(DownloadProgress("qwen", Phase.FAILED, message="boom"))
    lines = log.getvalue().splitlines()
    assert len(lines) == 2 and lines[1].endswith("failed")


def test_lock_excludes_a_second_holder_and_is_reusable(tmp_path: Path) -> None:
    first = ModelLock(tmp_path / "m.lock", "m")
    with first, pytest.raises(ModelBusy, match="m is busy"):
        ModelLock(tmp_path / "m.lock", "m").acquire()
    with ModelLock(tmp_path / "m.lock", "m"):
        pass


def test_backup_exclusion_is_a_no_op_off_apple_platforms(tmp_path: Path) -> None:
    assert exclude_from_backup(tmp_path, platform="linux") is False
    assert exclude_from_backup(tmp_path, platform="android") is False
