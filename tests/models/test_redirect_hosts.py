"""A download follows a redirect only to a host of the mirror it is fetching from.

The mirror's own host, plus the `redirect_hosts` its manifest entry pins (Hugging
Face sends file bodies to its Xet and LFS CDNs); a user's mirror has only its own
host. The privacy guard always allows loopback, so these tests prove the rule in
the download code itself: a mirror on 127.0.0.1 redirecting to 127.0.0.2 (another
loopback address, so another host) or to an unpinned name is refused, naming the
host, before any request goes there; a pinned host is followed. The real
manifest's https hosts are exercised through httpx's in-process MockTransport, so
nothing here opens a socket to anything but 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from app.models.download import DownloadError, FileFetcher
from app.models.manifest import ManifestError, ManifestFile, manifest_from_dict
from app.models.mirrors import Mirror, MirrorError, base_mirror, choose_mirrors, manifest_mirrors
from app.privacy.guard import NetworkGuard, active_guard, install
from app.storage.paths import MANIFESTS
from tests.models.conftest import FAST, Model, RecordingGuard, make_model, make_store
from tests.servers.faulty import Faults, FaultyServer


@pytest.fixture
def fresh_guard() -> Iterator[NetworkGuard]:
    """A guard of this test's own: whatever it counts does not count against the session."""
    session_guard = active_guard()
    guard = install(NetworkGuard())
    try:
        yield guard
    finally:
        if session_guard is not None:
            install(session_guard)


def _redirect_all(server: FaultyServer, model: Model, to: Callable[[str], str], prefix: str = "/r") -> None:
    for path in model.files:
        server.faults[f"{prefix}/{path}"] = Faults(statuses=[(302, {"Location": to(path)})])


# --- against a real HTTP server on 127.0.0.1 -------------------------------------------------------------


def test_a_user_mirror_is_not_redirected_to_another_host_name(
    tmp_path: Path, model: Model, fresh_guard: NetworkGuard
) -> None:
    store = make_store(tmp_path / "models", model)
    recording = RecordingGuard()
    with FaultyServer(model.served()) as server:
        port = server.url.rsplit(":", 1)[1]
        _redirect_all(server, model, lambda path: f"http://localhost:{port}/m/{path}")
        with pytest.raises(DownloadError, match=r"refused a redirect to localhost, which is not one of") as caught:
            store.download(model.id, [base_mirror(server.url + "/r")], guard=recording)  # type: ignore[arg-type]
    assert "user mirror" in str(caught.value) and "(127.0.0.1)" in str(caught.value)
    assert server.seen("/m/config.json") == []  # the redirect target was never asked for anything
    assert recording.allowed == [frozenset({"127.0.0.1"})]  # and never let through the guard
    assert fresh_guard.blocked_count == 0  # refused by the download code, not left to the guard
    assert not store.status(model.id).usable


def test_another_loopback_address_is_another_host(tmp_path: Path, model: Model) -> None:
    # 127.0.0.2 is loopback (the guard would let it through), but it is not this mirror's host.
    store = make_store(tmp_path / "models", model)
    with FaultyServer(model.served()) as server:
        port = server.url.rsplit(":", 1)[1]
        _redirect_all(server, model, lambda path: f"http://127.0.0.2:{port}/m/{path}")
        with pytest.raises(DownloadError, match=r"refused a redirect to 127\.0\.0\.2"):
            store.download(model.id, [base_mirror(server.url + "/r")])
    assert server.seen("/m/config.json") == []


def test_a_manifest_mirror_follows_its_pinned_host_and_refuses_any_other(
    tmp_path: Path, fresh_guard: NetworkGuard
) -> None:
    with FaultyServer({}) as server:
        port = server.url.rsplit(":", 1)[1]
        entry = {"kind": "base", "name": "company", "url": server.url + "/r", "redirect_hosts": ["localhost"]}
        model = make_model(mirrors=[entry])
        server.files.update(model.served())
        (mirror,) = manifest_mirrors(model.manifest)
        assert mirror.hosts == {"127.0.0.1", "localhost"}

        # Pinned: followed (the body comes from localhost, which is this same server).
        _redirect_all(server, model, lambda path: f"http://localhost:{port}/m/{path}")
        store = make_store(tmp_path / "a", model)
        assert store.download(model.id, [mirror], guard=fresh_guard).usable
        assert all([s.status for s in server.seen(f"/m/{path}")] == [200] for path in model.files)

        # Not pinned: refused, named, and never handed to the guard.
        _redirect_all(server, model, lambda path: f"http://cdn.untrusted.example:{port}/m/{path}")
        store = make_store(tmp_path / "b", model)
        with pytest.raises(DownloadError, match=r"company: refused a redirect to cdn\.untrusted\.example"):
            store.download(model.id, [mirror], guard=fresh_guard)
    assert fresh_guard.blocked_count == 0 and fresh_guard.outbound_count == 0  # everything was loopback


def test_a_refused_redirect_fails_that_mirror_and_the_next_one_is_used(tmp_path: Path, model: Model) -> None:
    store = make_store(tmp_path / "models", model)
    with FaultyServer(model.served()) as server:
        port = server.url.rsplit(":", 1)[1]
        _redirect_all(server, model, lambda path: f"http://127.0.0.2:{port}/m/{path}")
        mirrors = [base_mirror(server.url + "/r", "first"), base_mirror(server.url + "/m", "second")]
        assert store.download(model.id, mirrors).usable
    for path in model.files:
        assert [s.status for s in server.seen(f"/r/{path}")] == [302]  # tried once, not retried
        assert [s.status for s in server.seen(f"/m/{path}")] == [200]  # from the second mirror


def test_a_user_mirror_gets_no_redirect_hosts_from_the_manifest() -> None:
    manifest = manifest_from_dict(json.loads((MANIFESTS / "qwen3-vl-2b-instruct-mnn.json").read_text()))
    (user,) = choose_mirrors(manifest, ["https://models.corp.example/keyframe"])
    assert user.redirect_hosts == () and user.hosts == {"models.corp.example"}


# --- the real manifest's hosts, through an in-process transport (no socket at all) -------------------------

CONTENT = b'{"model_type": "qwen3_vl"}\n'
ENTRY = ManifestFile("config.json", hashlib.sha256(CONTENT).hexdigest(), len(CONTENT))


def _file_response() -> httpx.Response:
    return httpx.Response(200, headers={"Content-Length": str(len(CONTENT))}, stream=httpx.ByteStream(CONTENT))


def _real_mirrors() -> tuple[Mirror, Mirror]:
    manifest = manifest_from_dict(json.loads((MANIFESTS / "qwen3-vl-2b-instruct-mnn.json").read_text()))
    hf, ms = manifest_mirrors(manifest)
    return hf, ms


def _fetch(
    tmp_path: Path, mirror: Mirror, answer: Callable[[httpx.Request], httpx.Response]
) -> tuple[list[str], list[frozenset[str]]]:
    """Fetches config.json from `mirror` with `answer` as the whole internet; returns the URLs asked
    for and the hosts each request was allowed."""
    asked: list[str] = []
    allowed: list[frozenset[str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        return answer(request)

    @contextlib.contextmanager
    def allow(hosts: frozenset[str]) -> Iterator[None]:
        allowed.append(hosts)
        yield

    with httpx.Client(transport=httpx.MockTransport(handler), follow_redirects=False) as client:
        fetcher = FileFetcher(client, cancel=threading.Event(), policy=FAST, allow=allow, wait=lambda s: None)
        fetcher.fetch([mirror], ENTRY, tmp_path / "config.json")
    return asked, allowed


def test_hugging_face_is_followed_to_its_xet_bridge(tmp_path: Path) -> None:
    hf, _ = _real_mirrors()
    cdn = "https://cas-bridge.xethub.hf.co/xet-bridge-us/abc/def?X-Amz-Signature=1"

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.host == "huggingface.co":
            return httpx.Response(302, headers={"Location": cdn})
        return _file_response()

    asked, allowed = _fetch(tmp_path, hf, answer)
    assert (tmp_path / "config.json").read_bytes() == CONTENT
    assert [httpx.URL(u).host for u in asked] == ["huggingface.co", "cas-bridge.xethub.hf.co"]
    assert allowed == [frozenset({"huggingface.co"}), frozenset({"cas-bridge.xethub.hf.co"})]


@pytest.mark.parametrize(
    ("location", "refused"),
    [
        ("https://evil.example/config.json", r"refused a redirect to evil\.example"),
        ("https://modelscope.cn/config.json", r"refused a redirect to modelscope\.cn"),  # another mirror's host
        ("https://cdn-lfs.hf.co.evil.example/x", r"refused a redirect to cdn-lfs\.hf\.co\.evil\.example"),
        ("http://cdn-lfs.hf.co/x", r"refused a redirect from https://huggingface\.co/.* to http://cdn-lfs"),
    ],
)
def test_hugging_face_is_not_followed_anywhere_else(tmp_path: Path, location: str, refused: str) -> None:
    hf, _ = _real_mirrors()
    with pytest.raises(DownloadError, match=refused):
        _fetch(tmp_path, hf, lambda request: httpx.Response(302, headers={"Location": location}))
    assert not (tmp_path / "config.json").exists()


def test_modelscope_is_followed_to_its_lfs_cdn_only(tmp_path: Path) -> None:
    _, ms = _real_mirrors()

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.host == "modelscope.cn":
            return httpx.Response(302, headers={"Location": "https://cdn-lfs-cn-1.modelscope.cn/prod/x?auth_key=1"})
        return _file_response()

    asked, _ = _fetch(tmp_path, ms, answer)
    assert [httpx.URL(u).host for u in asked] == ["modelscope.cn", "cdn-lfs-cn-1.modelscope.cn"]
    with pytest.raises(DownloadError, match=r"refused a redirect to cas-bridge\.xethub\.hf\.co"):
        _fetch(
            tmp_path / "b",
            ms,
            lambda request: httpx.Response(302, headers={"Location": "https://cas-bridge.xethub.hf.co/x"}),
        )


def test_the_real_manifest_pins_the_hubs_cdn_hosts() -> None:
    hf, ms = _real_mirrors()
    assert {"huggingface.co", "cas-bridge.xethub.hf.co", "cdn-lfs.hf.co", "cdn-lfs-us-1.hf.co"} <= hf.hosts
    assert {"modelscope.cn", "cdn-lfs-cn-1.modelscope.cn"} <= ms.hosts
    assert not hf.hosts & ms.hosts  # neither hub may send a download to the other


# --- the manifest field is checked strictly -------------------------------------------------------------


@pytest.mark.parametrize(
    "hosts",
    [
        "localhost",  # a string, not a list (read letter by letter, each letter would pass as a host)
        ["*.hf.co"],
        ["https://cdn-lfs.hf.co"],
        ["cdn-lfs.hf.co:443"],
        ["cdn-lfs.hf.co/path"],
        ["CDN-LFS.hf.co"],
        ["cdn-lfs.hf.co."],
        ["cdn..hf.co"],
        ["-cdn.hf.co"],
        ["cdn-lfs.hf.co\n"],
        ["user@cdn-lfs.hf.co"],
        ["::1"],
        [""],
        [7],
        {"host": "cdn-lfs.hf.co"},
    ],
)
def test_bad_redirect_hosts_are_refused(hosts: object) -> None:
    data = make_model(mirrors=[{"kind": "base", "url": "https://models.example/m", "redirect_hosts": hosts}]).data
    with pytest.raises(ManifestError, match="redirect"):
        manifest_from_dict(data)
    # A Manifest built without manifest_from_dict is checked again when its mirrors are made.
    unchecked = replace(
        make_model().manifest, mirrors=({"kind": "base", "url": "https://m.example", "redirect_hosts": hosts},)
    )
    with pytest.raises(MirrorError, match="redirect"):
        manifest_mirrors(unchecked)
