"""The Models screen without a browser: the view over a controller over a real store in a temp folder.

Each state shows the buttons it allows; a click is a plain call into the controller;
a delete waits for its confirmation; the Chinese table renders every state.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import flet as ft
import pytest

from app.core.durations import duration_words
from app.core.generation import Timings
from app.core.session import PracticeEvent, reduce
from app.models.catalog import DEFAULT_MODEL_ID
from app.models.manifest import load_manifest, manifest_from_dict
from app.models.progress import Phase
from app.models.store import ModelStore
from app.storage.paths import MANIFESTS
from app.ui.models.controller import ModelsController
from app.ui.models.state import Activity, ActivityKind, CardState, ModelsState
from app.ui.models.view import ModelsView
from app.ui.practice.controller import PracticeState
from app.ui.words import models as strings_models
from app.worker.messages import WorkerStatus
from tests.conditions import wait_until
from tests.unit.test_session import practice
from tests.unit.test_sessions_view import is_visible, tagged

FILES = {"config.json": b"{}" * 100, "llm.mnn.weight": bytes(range(256)) * 400}


def manifest(model_id: str = "tiny-vlm"):
    files = [{"path": p, "sha256": hashlib.sha256(c).hexdigest(), "size": len(c)} for p, c in FILES.items()]
    return manifest_from_dict(
        {"schema": 1, "id": model_id, "display_name": "Tiny test VLM", "revision": "t1", "files": files}
    )


def build(
    tmp_path: Path, strings: dict[str, str] = strings_models.EN, language: str = "en"
) -> tuple[ModelsController, ModelsView, list]:
    store = ModelStore(
        {"tiny-vlm": manifest(), DEFAULT_MODEL_ID: load_manifest(MANIFESTS / "keyframe-demo.json")}, tmp_path / "m"
    )
    states: list[ModelsState] = []
    chosen: list[str] = []
    holder: dict[str, ModelsView] = {}

    def on_change(state: ModelsState) -> None:
        states.append(state)
        if "view" in holder:
            holder["view"].render(state)

    controller = ModelsController(
        store, on_change, on_choose=chosen.append, env={"FLET_APP_STORAGE_DATA": str(tmp_path / "d")}, guard=None
    )
    view = holder["view"] = ModelsView(controller, strings, language)
    controller.refresh()
    return controller, view, chosen


def visible(view: ModelsView, identifier: str) -> bool:
    return is_visible(view.root, tagged(view.root, identifier))


def install(controller: ModelsController) -> None:
    folder = controller.state.storage_folder / "tiny-vlm"
    folder.mkdir(parents=True, exist_ok=True)
    for path, content in FILES.items():
        (folder / path).write_bytes(content)


def test_cards_show_state_licence_sizes_and_only_the_buttons_their_state_allows(tmp_path: Path) -> None:
    controller, view, _ = build(tmp_path)
    assert visible(view, "model-card-tiny-vlm") and visible(view, f"model-card-{DEFAULT_MODEL_ID}")
    assert visible(view, "model-download-tiny-vlm") and not visible(view, "model-delete-tiny-vlm")
    assert not visible(view, "model-progress-tiny-vlm")
    card_view = view._cards["tiny-vlm"]
    assert "Licence: not stated" in (card_view.facts.value or "")
    assert "To download: 100.2 KB" in (card_view.facts.value or "")
    assert card_view.state_text.value == "Not installed"
    demo = view._cards[DEFAULT_MODEL_ID]
    assert demo.demo_badge.visible and demo.active_badge.visible and "synthetic" in (demo.kind.value or "")
    assert visible(view, f"model-verify-{DEFAULT_MODEL_ID}") and not visible(view, f"model-delete-{DEFAULT_MODEL_ID}")
    assert "Free space there" in (view.storage_free.value or "")

    # A partial download: resume and cancel, a bar at its percent.
    folder = controller.state.storage_folder / "tiny-vlm"
    folder.mkdir(parents=True)
    (folder / "llm.mnn.weight.part").write_bytes(FILES["llm.mnn.weight"][:51_200])
    controller.refresh()
    assert card_view.state_text.value == "Partly downloaded: 50 %"
    assert visible(view, "model-resume-tiny-vlm") and visible(view, "model-cancel-tiny-vlm")
    assert visible(view, "model-progress-tiny-vlm") and card_view.bar.value == pytest.approx(0.494, abs=0.01)


def test_verify_then_use_then_delete_after_a_yes(tmp_path: Path) -> None:
    controller, view, chosen = build(tmp_path)
    install(controller)
    controller.refresh()
    card_view = view._cards["tiny-vlm"]
    assert controller.state.card("tiny-vlm").state is CardState.PARTIAL  # type: ignore[union-attr] # not on record
    card_view.button_controls["verify"].on_click(None)  # type: ignore[misc,call-arg]
    assert wait_until(lambda: card_view.state_text.value == "Verified: every file matches its SHA-256", timeout=20)
    assert visible(view, "model-use-tiny-vlm")
    card_view.button_controls["use"].on_click(None)  # type: ignore[misc,call-arg]
    assert chosen == ["tiny-vlm"] and card_view.active_badge.visible
    assert not visible(view, "model-use-tiny-vlm")  # already in use

    card_view.button_controls["delete"].on_click(None)  # type: ignore[misc,call-arg]
    assert visible(view, "model-confirm-tiny-vlm") and not visible(view, "model-delete-tiny-vlm")
    assert "Delete Tiny test VLM from this device?" in (card_view.confirm_text.value or "")
    assert (controller.state.storage_folder / "tiny-vlm").exists()  # nothing yet
    card_view.confirm_no.on_click(None)  # type: ignore[misc,call-arg]
    assert not visible(view, "model-confirm-tiny-vlm")
    card_view.button_controls["delete"].on_click(None)  # type: ignore[misc,call-arg]
    card_view.confirm_yes.on_click(None)  # type: ignore[misc,call-arg]
    assert wait_until(lambda: card_view.state_text.value == "Not installed", timeout=20)
    assert not (controller.state.storage_folder / "tiny-vlm").exists()
    assert controller.shutdown()


def test_a_broken_mirror_setting_is_shown_and_the_field_saves_and_clears(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "model-mirror.json").write_text("[]")
    controller, view, _ = build(tmp_path)
    assert visible(view, "mirror-broken") and "cannot be used" in (view.mirror_broken.value or "")
    view.mirror_field.value = "http://127.0.0.1:9/m"
    view.mirror_save.on_click(None)  # type: ignore[misc,call-arg]
    assert not visible(view, "mirror-broken") and view.mirror_now.value == "Downloads come from http://127.0.0.1:9/m"
    view.mirror_field.value = "not a url"
    view.mirror_save.on_click(None)  # type: ignore[misc,call-arg]
    assert "was not saved" in (view.notice.text.value or "") and controller.state.mirror_url == "http://127.0.0.1:9/m"
    view.proxy.value = True
    view.proxy.on_change(None)  # type: ignore[misc,call-arg]
    assert controller.state.use_system_proxy and view.proxy.value
    view.mirror_clear.on_click(None)  # type: ignore[misc,call-arg]
    assert controller.state.mirror_url == "" and view.mirror_field.value == "" and view.proxy.value  # proxy kept


def test_every_state_renders_in_chinese(tmp_path: Path) -> None:
    controller, view, _ = build(tmp_path, strings_models.ZH, "zh")
    assert view._cards["tiny-vlm"].state_text.value == "未安装"
    controller.verify(DEFAULT_MODEL_ID)  # a notice names the model as its card does, in Chinese
    assert wait_until(lambda: "Keyframe 演示模型（心肺复苏手位小模型）" in (view.notice.text.value or ""), timeout=20)
    assert "Keyframe demo" not in (view.notice.text.value or "")
    install(controller)
    controller.refresh()
    controller.verify("tiny-vlm")
    assert wait_until(lambda: view._cards["tiny-vlm"].state_text.value == "已校验：每个文件都与其 SHA-256 一致")
    assert view.title.value == "模型" and "可用空间" in (view.storage_free.value or "")
    assert isinstance(view.root, ft.Container)
    assert controller.shutdown()


def test_durations_read_in_the_screens_language() -> None:
    assert duration_words(75, strings_models.EN) == "1 min 15 s"
    assert duration_words(3725, strings_models.ZH) == "1 小时 02 分"


def test_a_folder_in_use_is_listed_as_the_users_own(tmp_path: Path) -> None:
    mine = tmp_path / "my-qwen"
    mine.mkdir()
    (mine / "config.json").write_text("{}")
    store = ModelStore({DEFAULT_MODEL_ID: load_manifest(MANIFESTS / "keyframe-demo.json")}, tmp_path / "m")
    chosen: list[str] = []
    controller = ModelsController(
        store,
        None,
        on_choose=chosen.append,
        active=str(mine),
        folders=[mine],
        env={"FLET_APP_STORAGE_DATA": str(tmp_path / "d")},
        guard=None,
    )
    view = ModelsView(controller)
    controller.subscribe(view.render)
    controller.refresh()
    card = controller.state.card(str(mine))
    assert card is not None and card.kind.value == "folder" and card.active and card.licence is None
    assert not controller.state.card(DEFAULT_MODEL_ID).active  # type: ignore[union-attr]
    assert "Your own folder" in (view._cards[str(mine)].kind.value or "")
    controller.choose(DEFAULT_MODEL_ID)
    assert chosen == [DEFAULT_MODEL_ID] and controller.state.card(DEFAULT_MODEL_ID).active  # type: ignore[union-attr]


def answered(event_id: str, keyframe_id: str, ms: float) -> PracticeEvent:
    timings = Timings(0, 0, 0, 0, 0, 0, ms, 0, 0)
    return replace(practice(1, "yes"), event_id=event_id, keyframe_id=keyframe_id, timings=timings)


def test_each_card_says_what_its_model_is_for_and_what_it_costs_here_and_where_measured(tmp_path: Path) -> None:
    controller, view, _ = build(tmp_path)
    demo, tiny = view._cards[DEFAULT_MODEL_ID], view._cards["tiny-vlm"]
    assert (demo.purpose.value or "").startswith("Shows the app working offline")
    assert demo.cost.value == (
        "Measured on 2-core x86-64 CPU (AMD EPYC), 2 threads: 14 ms per keyframe (one question), peak memory 82.4 MB"
    )
    assert tiny.purpose.value == "What it is for: not stated (no manifest says it)"
    assert tiny.cost.value == "Speed and memory: not measured for this model"

    # The model in use loads: its check answer and its process's peak memory, on this device.
    ready = replace(
        PracticeState(),
        worker_status=WorkerStatus.READY,
        model_id="m",
        backend="cpu",
        check_ms=52.0,
        peak_memory_bytes=90 * 1024 * 1024,
    )
    controller.follow_practice(ready)
    here = (demo.cost.value or "").splitlines()[1]
    assert (
        here == "On this device (CPU): the check picture answered in 52 ms after loading; its process peaked at 90 MB"
    )
    assert tiny.cost.value == "Speed and memory: not measured for this model"  # only the model in use

    # Keyframes answered: a checklist's questions add up to their keyframe's time; the median of the latest.
    seen = []
    controller.subscribe(seen.append)
    seen.clear()
    events = [answered("e1", "k1", 20), answered("e2", "k1", 10), answered("e3", "k2", 40)]
    controller.follow_practice(replace(ready, latest=events[1], session=reduce(events[:2])))  # two in one update
    controller.follow_practice(replace(ready, latest=events[2], session=reduce(events)))
    assert (
        (demo.cost.value or "")
        .splitlines()[1]
        .startswith("On this device (CPU): 35 ms per keyframe, the median of the last 2")
    )
    count = len(seen)
    controller.follow_practice(replace(ready, latest=events[2], session=reduce(events)))  # the same answer again
    controller.follow_practice(replace(ready, worker_status=WorkerStatus.RESTARTING))  # not loaded: no figures
    assert len(seen) == count

    # A model run in the app's own process: its memory is not the model's to show.
    controller.follow_practice(replace(ready, check_ms=60.0, peak_memory_bytes=None))
    assert (demo.cost.value or "").endswith("its memory is the app's own (not measured apart)")
    assert "the check picture answered in 60 ms" in (demo.cost.value or "")  # a reload starts the count again

    # Another model chosen: the figures were the other one's.
    controller.set_active("tiny-vlm")
    assert "On this device" not in (demo.cost.value or "") and "On this device" not in (tiny.cost.value or "")


def test_the_costs_read_in_chinese(tmp_path: Path) -> None:
    controller, view, _ = build(tmp_path, strings_models.ZH, "zh")
    ready = replace(PracticeState(), worker_status=WorkerStatus.READY, backend="cpu", check_ms=1500.0)
    controller.follow_practice(ready)
    demo = view._cards[DEFAULT_MODEL_ID]
    assert (demo.purpose.value or "").startswith("用于离线演示")
    assert "在本设备上（CPU）：加载后回答检查图片用时 1.50 秒" in (demo.cost.value or "")
    assert view._cards["tiny-vlm"].purpose.value == "用途：未注明（没有清单说明）"


def test_a_download_that_is_not_moving_says_whether_it_waits_for_the_server_or_retries(tmp_path: Path) -> None:
    """A dead mirror kept the card at "Downloading: 0 %" for ~22 s (a 15 s connect timeout, then backoff)
    with nothing saying it was trying again."""
    _, view, _ = build(tmp_path)
    card_view = view._cards["tiny-vlm"]
    base = next(c for c in view._controller.state.cards if c.model_id == "tiny-vlm")
    downloading = replace(base, state=CardState.DOWNLOADING, fraction=0.0)

    def shown(activity: Activity) -> tuple[str, str]:
        card_view.render(replace(downloading, activity=activity))
        return card_view.state_text.value or "", card_view.detail.value or ""

    start = Activity(ActivityKind.DOWNLOAD, phase=Phase.DOWNLOADING, done=0, total=6_100_000)
    state, detail = shown(start)
    assert state == "Downloading: 0 %" and detail.startswith("Waiting for the server's first bytes · 0 B of 5.8 MB")
    state, detail = shown(replace(start, phase=Phase.WAITING, message="mirror: HTTP 503; retrying in 2 s"))
    assert state == "Interrupted, trying again: 0 %"
    assert detail == "Waiting to try again: mirror: HTTP 503; retrying in 2 s"
    state, detail = shown(replace(start, message="mirror: HTTP 503; retrying in 2 s"))  # the next try, no byte yet
    assert detail.startswith("Trying again after: mirror: HTTP 503")
    state, detail = shown(replace(start, done=1_000_000, rate_bps=500_000.0, eta_s=10.0))
    assert "Trying again" not in detail and "Waiting for the server" not in detail
