"""A model's card as a pure function of what is known of it: no Flet, no disk, no threads."""

from __future__ import annotations

from pathlib import Path

from app.models.manifest import Manifest, manifest_from_dict
from app.models.progress import DownloadProgress, Phase
from app.models.store import ModelState, ModelStatus
from app.ui.models.state import (
    Activity,
    ActivityKind,
    CardState,
    ModelFacts,
    ModelKind,
    card_order,
    download_activity,
    folder_card,
    pinned_card,
)

SHA = "a" * 64
FOLDER = Path("/models/tiny")


def manifest(bundled: bool = False, name: str = "Tiny") -> Manifest:
    data = {
        "schema": 1,
        "id": "demo" if bundled else "tiny",
        "display_name": name,
        "revision": "r",
        "files": [{"path": "a.bin", "sha256": SHA, "size": 600}, {"path": "b.bin", "sha256": SHA, "size": 400}],
    }
    return manifest_from_dict({**data, "bundled": "keyframe-demo"} if bundled else data)


def status(state: ModelState, verified: tuple[str, ...] = (), partial: int = 0) -> ModelStatus:
    pending = tuple(p for p in ("a.bin", "b.bin") if p not in verified)
    return ModelStatus("tiny", "Tiny", state, FOLDER, verified, pending, 1000, False, partial)


def test_a_model_not_downloaded_offers_its_whole_size() -> None:
    card = pinned_card(manifest(), status(ModelState.ABSENT), ModelFacts(), active=False)
    assert (card.state, card.kind, card.size_to_download, card.fraction) == (
        CardState.NOT_INSTALLED,
        ModelKind.PINNED,
        1000,
        None,
    )
    assert card.licence is None  # the manifest states none


def test_a_partial_download_counts_its_verified_files_and_its_part_files() -> None:
    facts = ModelFacts(on_disk=900, verified_bytes=600)
    card = pinned_card(manifest(), status(ModelState.PARTIAL, ("a.bin",), partial=300), facts, active=False)
    assert card.state is CardState.PARTIAL and card.fraction == 0.9 and card.size_to_download == 100


def test_a_running_download_shows_its_own_progress_until_the_status_is_read_again() -> None:
    facts = ModelFacts(
        on_disk=100, activity=Activity(ActivityKind.DOWNLOAD, phase=Phase.DOWNLOADING, done=250, total=1000)
    )
    card = pinned_card(manifest(), status(ModelState.PARTIAL, partial=100), facts, active=False)
    assert card.state is CardState.DOWNLOADING and card.fraction == 0.25
    assert card.size_on_disk == 250 and card.size_to_download == 750


def test_installed_is_verified_only_after_a_full_rehash_in_this_run() -> None:
    installed = status(ModelState.INSTALLED, ("a.bin", "b.bin"))
    assert pinned_card(manifest(), installed, ModelFacts(), active=True).state is CardState.INSTALLED
    card = pinned_card(manifest(), installed, ModelFacts(verified_now=True), active=True)
    assert card.state is CardState.VERIFIED and card.usable and card.active and card.size_to_download == 0


def test_a_failure_and_a_damaged_bundled_model_are_failed_cards_naming_the_files() -> None:
    failed = pinned_card(manifest(), status(ModelState.ABSENT), ModelFacts(error="HTTP 404"), active=False)
    assert failed.state is CardState.FAILED and failed.error == "HTTP 404"
    damaged = pinned_card(manifest(bundled=True), status(ModelState.DAMAGED, ("a.bin",)), ModelFacts(), active=True)
    assert damaged.kind is ModelKind.DEMO and damaged.state is CardState.FAILED
    assert damaged.failed_files == ("b.bin",) and damaged.error == "b.bin" and not damaged.usable


def test_a_folder_is_usable_only_with_its_config() -> None:
    assert folder_card(FOLDER, has_config=True, size_on_disk=5, active=False).state is CardState.INSTALLED
    missing = folder_card(FOLDER, has_config=False, size_on_disk=5, active=False)
    assert missing.state is CardState.FAILED and missing.failed_files == ("config.json",)


def test_the_demo_comes_first_then_by_name() -> None:
    models = [manifest(name="beta"), manifest(bundled=True, name="zed"), manifest(name="Alpha")]
    assert [m.display_name for m in sorted(models, key=card_order)] == ["zed", "Alpha", "beta"]


def test_a_progress_record_shows_a_rate_only_while_bytes_flow_and_a_failure_until_they_flow_again() -> None:
    flowing = download_activity(
        DownloadProgress("tiny", Phase.DOWNLOADING, rate_bps=5.0, eta_s=3.0, message="x"), "pause"
    )
    assert (flowing.rate_bps, flowing.eta_s, flowing.message, flowing.stopping) == (5.0, 3.0, "", "pause")
    waiting = download_activity(DownloadProgress("tiny", Phase.WAITING, rate_bps=5.0, eta_s=3.0, message="HTTP 503"))
    assert (waiting.rate_bps, waiting.eta_s, waiting.message) == (None, None, "HTTP 503")
    retrying = download_activity(DownloadProgress("tiny", Phase.DOWNLOADING, message="HTTP 503"))  # no byte since
    assert retrying.message == "HTTP 503"
    failed = download_activity(DownloadProgress("tiny", Phase.FAILED, message="could not be downloaded"))
    assert failed.message == ""  # the card's error says it, not a retry line
