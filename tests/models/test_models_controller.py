"""The Models screen's controller against a real nginx on 127.0.0.1: list, download with progress,
pause and resume (across a restart), cancel, verify naming a flipped file, delete, mirror and proxy settings."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.models.catalog import DEFAULT_MODEL_ID
from app.models.download import part_path
from app.models.manifest import load_manifest
from app.models.mirrors import SETTINGS_FILE, load_download_settings
from app.models.store import ModelStore
from app.storage.paths import MANIFESTS
from app.ui.models.controller import ModelsController
from app.ui.models.state import CardState, Confirm, ModelKind, ModelsState
from tests.conditions import wait_until
from tests.models.conftest import FAST, RecordingGuard, make_model
from tests.servers.forward_proxy import ForwardProxy
from tests.servers.nginx import Nginx

BIG = "llm.mnn.weight"
MODEL = make_model("tiny-vlm", {"config.json": 700, BIG: 1_200_000, "visual/visual.mnn": 300_000})


def publish(nginx: Nginx) -> None:
    for path, content in MODEL.files.items():
        target = nginx.docroot / "m" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)


class Screen:
    """A controller with what a view would see: every state, in order."""

    def __init__(self, tmp_path: Path, **kwargs: object) -> None:
        manifests = {MODEL.id: MODEL.manifest, DEFAULT_MODEL_ID: load_manifest(MANIFESTS / "keyframe-demo.json")}
        self.store = ModelStore(manifests, tmp_path / "models", policy=FAST)
        self.env = {"FLET_APP_STORAGE_DATA": str(tmp_path / "data")}
        self.states: list[ModelsState] = []
        self.chosen: list[str] = []
        self.guard = RecordingGuard()
        self.controller = ModelsController(
            self.store,
            self.states.append,
            on_choose=self.chosen.append,
            env=self.env,
            guard=self.guard,  # type: ignore[arg-type]
            **kwargs,  # type: ignore[arg-type]
        )
        self.controller.refresh()

    def card(self, model_id: str = MODEL.id):
        card = self.controller.state.card(model_id)
        assert card is not None
        return card

    def wait(self, check: Callable[[], bool], timeout: float = 30) -> None:
        assert wait_until(check, timeout=timeout), f"timed out; last card: {self.card()}"

    def close(self) -> None:
        assert self.controller.shutdown()


@pytest.fixture
def screen(tmp_path: Path) -> Iterator[Screen]:
    s = Screen(tmp_path)
    yield s
    s.close()


def test_every_known_model_is_listed_with_licence_sizes_state_and_free_space(screen: Screen) -> None:
    demo = screen.card(DEFAULT_MODEL_ID)
    assert demo.kind is ModelKind.DEMO and demo.state is CardState.VERIFIED and demo.active
    assert demo.licence and "Apache" in demo.licence and demo.size_on_disk > 0 and demo.size_to_download == 0
    card = screen.card()
    assert card.kind is ModelKind.PINNED and card.state is CardState.NOT_INSTALLED
    assert card.licence is None  # the test manifest states none: shown as "not stated"
    assert card.size_on_disk == 0 and card.size_to_download == sum(len(c) for c in MODEL.files.values())
    assert [c.model_id for c in screen.controller.state.cards][0] == DEFAULT_MODEL_ID  # the demo first
    state = screen.controller.state
    assert state.free_bytes and state.free_bytes > 0 and state.storage_folder == screen.store.root


@pytest.mark.nginx  # a real nginx; a skip fails under CI=true (tests/conftest.py)
def test_download_shows_moving_progress_and_ends_verified_then_the_model_can_be_chosen(
    screen: Screen, nginx: Nginx
) -> None:
    publish(nginx)
    assert screen.controller.set_mirror(nginx.url + "/slow/m")  # rate-limited: progress has time to show
    assert screen.controller.download(MODEL.id)
    screen.wait(lambda: screen.card().state is CardState.VERIFIED)
    downloading = [s.card(MODEL.id) for s in screen.states]
    downloading = [c for c in downloading if c and c.state is CardState.DOWNLOADING and c.activity]
    done = [c.activity.done for c in downloading if c.activity]
    assert len(set(done)) >= 3 and done == sorted(done), done  # the bar moves, never backwards
    assert any(c.activity and c.activity.rate_bps and c.activity.eta_s is not None for c in downloading)
    assert any(s.card(MODEL.id) and s.card(MODEL.id).state is CardState.VERIFYING for s in screen.states)  # type: ignore[union-attr]
    card = screen.card()
    assert card.size_to_download == 0 and card.size_on_disk >= sum(len(c) for c in MODEL.files.values())  # + marker
    assert screen.controller.state.notice and screen.controller.state.notice.key == "notice_downloaded"
    assert {frozenset({"127.0.0.1"})} == set(screen.guard.allowed)  # only the mirror's host was allowed
    screen.controller.choose(MODEL.id)
    assert screen.chosen == [MODEL.id] and screen.card().active and not screen.card(DEFAULT_MODEL_ID).active


@pytest.mark.nginx  # a real nginx; a skip fails under CI=true (tests/conftest.py)
def test_pause_keeps_the_part_files_and_a_restarted_app_resumes_with_a_range_request(
    tmp_path: Path, nginx: Nginx
) -> None:
    publish(nginx)
    first = Screen(tmp_path)
    first.controller.set_mirror(nginx.url + "/slow/m")
    first.controller.download(MODEL.id)
    first.wait(lambda: (a := first.card().activity) is not None and a.file == BIG and a.done > 200_000)
    first.controller.pause(MODEL.id)
    first.wait(lambda: first.card().state is CardState.PARTIAL)
    part = part_path(first.store.folder(MODEL.id) / BIG)
    kept = part.stat().st_size
    assert kept > 0 and first.controller.state.notice and first.controller.state.notice.key == "notice_paused"
    first.close()

    again = Screen(tmp_path)  # a new app: nothing in memory but the files
    card = again.card()
    assert card.state is CardState.PARTIAL and card.fraction and 0 < card.fraction < 1
    assert card.size_to_download is not None and card.size_to_download < sum(len(c) for c in MODEL.files.values())
    assert again.controller.state.mirror_url == nginx.url + "/slow/m"  # the mirror was saved
    again.controller.resume(MODEL.id)
    again.wait(lambda: again.card().state is CardState.VERIFIED)
    ranged = [e for e in nginx.log() if e.path.endswith(BIG) and e.range]
    assert ranged and ranged[-1].range == f"bytes={kept}-" and ranged[-1].status == 206
    assert (again.store.folder(MODEL.id) / BIG).read_bytes() == MODEL.files[BIG]
    again.close()


@pytest.mark.nginx  # a real nginx; a skip fails under CI=true (tests/conftest.py)
def test_cancel_asks_first_and_then_drops_the_partial_files(screen: Screen, nginx: Nginx) -> None:
    publish(nginx)
    screen.controller.set_mirror(nginx.url + "/slow/m")
    screen.controller.download(MODEL.id)
    screen.wait(lambda: (a := screen.card().activity) is not None and a.done > 100_000)
    screen.controller.request_cancel(MODEL.id)  # nothing happens yet
    assert screen.card().confirm is Confirm.CANCEL and screen.card().state is CardState.DOWNLOADING
    screen.controller.dismiss_confirm(MODEL.id)
    assert screen.card().confirm is None
    screen.controller.request_cancel(MODEL.id)
    screen.controller.confirm(MODEL.id)
    screen.wait(lambda: screen.card().state is CardState.NOT_INSTALLED)
    assert not screen.store.folder(MODEL.id).exists()
    assert screen.controller.state.notice and screen.controller.state.notice.key == "notice_cancelled"


@pytest.mark.nginx  # a real nginx; a skip fails under CI=true (tests/conftest.py)
def test_verify_names_a_flipped_byte_and_delete_needs_a_yes(screen: Screen, nginx: Nginx) -> None:
    publish(nginx)
    screen.controller.set_mirror(nginx.url + "/m")
    screen.controller.download(MODEL.id)
    screen.wait(lambda: screen.card().state is CardState.VERIFIED)
    target = screen.store.folder(MODEL.id) / "visual" / "visual.mnn"
    data = bytearray(target.read_bytes())
    data[1234] ^= 0x01
    stat = target.stat()
    target.write_bytes(bytes(data))
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size, same time: only a hash sees it
    screen.controller.refresh()
    assert screen.card().state is CardState.VERIFIED  # the quick check cannot tell
    screen.states.clear()
    screen.controller.verify(MODEL.id)
    screen.wait(lambda: screen.card().state is CardState.FAILED)
    assert screen.card().failed_files == ("visual/visual.mnn",)
    assert any(s.card(MODEL.id).state is CardState.VERIFYING for s in screen.states)  # type: ignore[union-attr]
    notice = screen.controller.state.notice
    assert notice and notice.error and dict(notice.values)["files"] == "visual/visual.mnn"

    # Downloading again repairs only that file.
    before = len(nginx.log())
    screen.controller.download(MODEL.id)
    screen.wait(lambda: screen.card().state is CardState.VERIFIED)
    assert [e.path for e in nginx.log()[before:]] == ["/m/visual/visual.mnn"]

    screen.controller.request_delete(MODEL.id)
    assert screen.card().confirm is Confirm.DELETE and screen.store.folder(MODEL.id).exists()
    screen.controller.confirm(MODEL.id)
    screen.wait(lambda: screen.card().state is CardState.NOT_INSTALLED)
    assert not screen.store.folder(MODEL.id).exists()


def test_a_verify_can_be_stopped(tmp_path: Path) -> None:
    big = make_model("big-vlm", {"config.json": 10, "a.bin": 8 << 20, "b.bin": 8 << 20})
    store = ModelStore({big.id: big.manifest}, tmp_path / "models", policy=FAST)
    folder = store.folder(big.id)
    for path, content in big.files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(content)
    seen: list[ModelsState] = []

    def on_change(state: ModelsState) -> None:
        seen.append(state)
        card = state.card(big.id)
        if card is not None and card.state is CardState.VERIFYING and card.activity and not card.activity.stopping:
            controller.stop(big.id)  # as the Stop button does, the moment the verify shows

    controller = ModelsController(store, on_change, env={"FLET_APP_STORAGE_DATA": str(tmp_path / "d")}, guard=None)
    controller.refresh()
    assert controller.verify(big.id)
    assert wait_until(lambda: not controller.busy() and controller.state.notice is not None, timeout=30)
    card = controller.state.card(big.id)
    assert card is not None and card.state is CardState.PARTIAL  # files there, never verified: not usable
    assert controller.state.notice and controller.state.notice.key == "notice_verify_stopped"
    assert controller.shutdown()


@pytest.mark.nginx  # a real nginx; a skip fails under CI=true (tests/conftest.py)
def test_a_mirror_setting_that_cannot_be_read_stops_downloads_with_a_sentence(screen: Screen, nginx: Nginx) -> None:
    publish(nginx)
    setting = Path(screen.env["FLET_APP_STORAGE_DATA"]) / SETTINGS_FILE
    setting.parent.mkdir(parents=True)
    setting.write_text("{broken")
    screen.controller.refresh()
    assert "not valid JSON" in screen.controller.state.mirror_error
    assert not screen.controller.download(MODEL.id)
    notice = screen.controller.state.notice
    assert notice and notice.error and notice.key == "notice_mirror_broken"
    assert nginx.log() == []  # never a silent fall-back to another mirror
    assert not screen.controller.set_mirror("ftp://nope")  # an invalid URL is refused, the file kept
    assert screen.controller.state.notice and screen.controller.state.notice.key == "notice_mirror_invalid"
    assert screen.controller.set_mirror(nginx.url + "/m")  # a valid one replaces the broken file
    assert screen.controller.state.mirror_error == ""
    assert screen.controller.download(MODEL.id)
    screen.wait(lambda: screen.card().state is CardState.VERIFIED)


def test_no_mirror_at_all_is_said_not_attempted(screen: Screen) -> None:
    assert not screen.controller.download(MODEL.id)  # the test manifest lists no mirror and none is set
    assert screen.controller.state.notice and screen.controller.state.notice.key == "notice_no_mirror"
    assert not screen.controller.download(DEFAULT_MODEL_ID)  # bundled: nothing to download
    assert screen.controller.state.notice and screen.controller.state.notice.key == "notice_bundled"


@pytest.mark.nginx  # a real nginx; a skip fails under CI=true (tests/conftest.py)
@pytest.mark.usefixtures("no_system_proxy")
def test_the_system_proxy_is_used_only_when_opted_in(
    screen: Screen, nginx: Nginx, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish(nginx)
    with ForwardProxy() as proxy:
        monkeypatch.setenv("http_proxy", proxy.url)
        screen.controller.set_mirror(nginx.url + "/m")
        assert screen.controller.download(MODEL.id)  # off by default: direct
        screen.wait(lambda: screen.card().state is CardState.VERIFIED)
        assert proxy.seen == []
        screen.controller.request_delete(MODEL.id)
        screen.controller.confirm(MODEL.id)
        screen.wait(lambda: screen.card().state is CardState.NOT_INSTALLED)

        assert screen.controller.set_use_system_proxy(True)
        assert load_download_settings(screen.env).use_system_proxy  # saved with the mirror
        assert load_download_settings(screen.env).mirror == nginx.url + "/m"
        assert screen.controller.download(MODEL.id)
        screen.wait(lambda: screen.card().state is CardState.VERIFIED)
        assert sorted(proxy.seen) == sorted(f"{nginx.url}/m/{p}" for p in MODEL.files)
        assert frozenset({"127.0.0.1"}) in screen.guard.allowed  # the proxy's host is allowed with the mirror's


@pytest.mark.nginx  # a real nginx; a skip fails under CI=true (tests/conftest.py)
def test_cancelling_a_repair_keeps_the_files_verified_before_it(screen: Screen, nginx: Nginx) -> None:
    publish(nginx)
    screen.controller.set_mirror(nginx.url + "/m")
    screen.controller.download(MODEL.id)
    screen.wait(lambda: screen.card().state is CardState.VERIFIED)
    big = screen.store.folder(MODEL.id) / BIG
    big.write_bytes(b"x" * len(MODEL.files[BIG]))  # damaged: the repair fetches it again
    screen.controller.verify(MODEL.id)
    screen.wait(lambda: screen.card().state is CardState.FAILED)
    assert screen.card().failed_files == (BIG,)
    screen.controller.set_mirror(nginx.url + "/slow/m")
    screen.controller.download(MODEL.id)
    screen.wait(lambda: (a := screen.card().activity) is not None and a.file == BIG and a.done > 100_000)
    screen.controller.request_cancel(MODEL.id)
    screen.controller.confirm(MODEL.id)
    screen.wait(lambda: screen.card().activity is None and screen.card().state is CardState.PARTIAL)
    folder = screen.store.folder(MODEL.id)
    assert not part_path(folder / BIG).exists()  # the repair's partial file is gone
    for path in ("config.json", "visual/visual.mnn"):
        assert (folder / path).read_bytes() == MODEL.files[path]  # what was verified before stays


@pytest.mark.usefixtures("no_system_proxy")
def test_the_proxy_choice_is_saved_with_the_mirror_and_a_broken_file_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.models.mirrors import (
        DownloadSettings,
        MirrorError,
        base_mirror,
        save_mirror_setting,
        save_proxy_setting,
        system_proxies,
    )

    env = {"FLET_APP_STORAGE_DATA": str(tmp_path)}
    setting = tmp_path / SETTINGS_FILE
    assert load_download_settings(env) == DownloadSettings()
    save_proxy_setting(True, env)
    assert load_download_settings(env) == DownloadSettings(None, True)
    save_mirror_setting("http://127.0.0.1:9/m", env)
    assert load_download_settings(env) == DownloadSettings("http://127.0.0.1:9/m", True)
    save_mirror_setting(None, env)  # clearing the mirror keeps the proxy choice
    assert load_download_settings(env) == DownloadSettings(None, True)
    save_proxy_setting(False, env)
    assert not setting.exists()  # the defaults leave no file
    for broken in ('{"use_system_proxy": "yes"}', "{}", "[]", '{"mirror_base_url": null}'):
        setting.write_text(broken)
        with pytest.raises(MirrorError):
            load_download_settings(env)
        with pytest.raises(MirrorError):
            save_proxy_setting(True, env)  # never silently rewrites a file it cannot read
    save_mirror_setting(None, env)  # clearing works on a broken file: that is how it is fixed
    assert not setting.exists()

    mirror = base_mirror("https://models.example.com/m")
    monkeypatch.setenv("https_proxy", "http://proxy.corp:3128")
    assert system_proxies([mirror]) == {"https": "http://proxy.corp:3128"}
    monkeypatch.setenv("no_proxy", "models.example.com")
    assert system_proxies([mirror]) == {}  # the mirror is exempt
    monkeypatch.delenv("no_proxy")
    monkeypatch.setenv("https_proxy", "socks5://proxy.corp:1080")
    with pytest.raises(MirrorError, match="not an http:// proxy"):
        system_proxies([mirror])  # never a silent direct connection instead


@pytest.mark.usefixtures("no_system_proxy")
def test_a_proxy_that_cannot_be_used_is_said_and_nothing_is_fetched(
    screen: Screen, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("http_proxy", "socks5://127.0.0.1:1080")
    screen.controller.set_mirror("http://127.0.0.1:9/m")
    screen.controller.set_use_system_proxy(True)
    assert not screen.controller.download(MODEL.id)
    notice = screen.controller.state.notice
    assert notice and notice.error and notice.key == "notice_proxy_unusable"
    assert screen.controller.state.mirror_error == "" and not screen.controller.busy()


@pytest.mark.nginx  # a real nginx; a skip fails under CI=true (tests/conftest.py)
def test_a_tab_that_fails_to_render_is_dropped_and_the_download_goes_on(screen: Screen, nginx: Nginx) -> None:
    publish(nginx)
    screen.controller.set_mirror(nginx.url + "/m")
    calls: list[int] = []

    def closed_tab(_: ModelsState) -> None:
        calls.append(1)
        raise RuntimeError("the page's socket is closed")

    screen.controller.subscribe(closed_tab)  # shows the state at once: it fails there and is dropped
    screen.controller.download(MODEL.id)
    screen.wait(lambda: screen.card().state is CardState.VERIFIED)
    assert len(calls) == 1  # never called again; the download and the other tab went on


def test_a_broken_manifest_costs_only_its_own_model(tmp_path: Path) -> None:
    """One unreadable model description must not take the app down: the Models screen says which
    file and lists the others, and the demo model still resolves for the practice screen."""
    from app.models.catalog import load_manifests, resolve_model
    from app.models.manifest import ManifestError

    folder = tmp_path / "manifests"
    folder.mkdir()
    (folder / "keyframe-demo.json").write_bytes((MANIFESTS / "keyframe-demo.json").read_bytes())
    (folder / "broken.json").write_text('{"id": 3', encoding="utf-8")
    env = {"KEYFRAME_MANIFESTS_DIR": str(folder), "FLET_APP_STORAGE_DATA": str(tmp_path / "data")}
    with pytest.raises(ManifestError, match="broken.json"):
        load_manifests(folder)  # the `models` command stays strict: it names the file and stops
    store = ModelStore.from_env(env, skip_broken=True)
    controller = ModelsController(store, env=env, guard=None)
    try:
        controller.refresh()
        notice = controller.state.notice
        assert notice and notice.error and notice.key == "notice_manifests_skipped"
        assert "broken.json" in dict(notice.values)["detail"]
        assert [c.model_id for c in controller.state.cards] == [DEFAULT_MODEL_ID]
    finally:
        assert controller.shutdown()
    assert resolve_model(None, env).id == DEFAULT_MODEL_ID
