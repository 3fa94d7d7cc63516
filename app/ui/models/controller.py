"""The actions of the Models screen and the work they start. No Flet imports.

Every known model is one `ModelCard`: the bundled demo (always present), each
pinned model of the store's manifests, and model folders the user chose; the
cards are a pure function of what this controller gathers (app/ui/models/state.py).
Downloads are planned by app/models/download_plan.py and run as a `DownloadJob`
(its own thread, which says how it ended), and a thread of
this controller turns the job's progress records into state; a full
re-hash (verify) runs on a thread of this controller too. Both are stoppable,
and every method returns at once: the UI thread never waits for the network
or for hashing. `refresh()` reads the store's status (a marker check, and a
hash of the few MB of the bundled demo), cheap enough for a click.

Every change produces a new immutable `ModelsState` handed to `on_change` and
to every subscriber (one controller serves all tabs of the app), called outside
the controller's lock on whichever thread made the change (the caller's, a
download's or a verify's); the view only renders it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.notice import Notice
from app.core.observable import Observable, StagedState
from app.models.catalog import DEFAULT_MODEL_ID
from app.models.disk_usage import files_bytes, folder_bytes, free_bytes
from app.models.download import Cancelled
from app.models.download_job import DownloadJob, Ending
from app.models.download_plan import DownloadRefused, Refusal, plan_download
from app.models.errors import StoreError
from app.models.locks import ModelBusy
from app.models.mirrors import (
    MirrorError,
    base_mirror,
    load_download_settings,
    save_mirror_setting,
    save_proxy_setting,
)
from app.models.progress import DownloadProgress
from app.models.store import ModelState, ModelStatus, ModelStore
from app.models.verify import HashProgress
from app.ui.models.state import (
    Activity,
    ActivityKind,
    Confirm,
    MeasuredHere,
    ModelCard,
    ModelFacts,
    ModelsState,
    Stopping,
    card_order,
    download_activity,
    folder_card,
    pinned_card,
)
from app.worker.messages import WorkerStatus

if TYPE_CHECKING:
    from app.core.session import PracticeEvent
    from app.privacy.guard import NetworkGuard
    from app.ui.practice.controller import PracticeState

logger = logging.getLogger("keyframe.models")


def _seconds(ms: float | None) -> float | None:
    return None if ms is None else ms / 1000


def _keyframe_seconds(practice: PracticeState, latest: PracticeEvent) -> float:
    """The model time of `latest`'s keyframe: every question of it answered so far (a checklist's arrive one
    by one, and a screen update may carry several), read from the end of the session's timeline."""
    total, seen = 0.0, False
    for entry in reversed(practice.session.timeline):
        if entry.event.keyframe_id == latest.keyframe_id:
            total, seen = total + entry.event.timings.total_ms, True
        elif seen:
            break
    return (total if seen else latest.timings.total_ms) / 1000


_EMIT_EVERY_S = 0.2  # verify progress is published this often at most


@dataclass
class _Record(ModelFacts):
    """What the controller knows of one model: the store's status, the card's facts, the work running on it."""

    status: ModelStatus | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    job: DownloadJob | None = None
    repairing: bool = False  # the download began with verified files: a cancel keeps those
    thread: threading.Thread | None = None


_DEFAULT_GUARD: object = object()


class ModelsController(StagedState[ModelsState]):
    def __init__(
        self,
        store: ModelStore,
        on_change: Callable[[ModelsState], None] | None = None,
        *,
        on_choose: Callable[[str], None] | None = None,
        active: str | None = None,
        folders: Sequence[Path] = (),
        env: Mapping[str, str] | None = None,
        guard: NetworkGuard | None | object = _DEFAULT_GUARD,
    ) -> None:
        """`on_choose(model id or folder)` is called when the user picks the model to use;
        `active` is the one in use now (None: the bundled demo). `guard` is the privacy
        guard downloads run under (by default the app's, installed if it is not yet)."""
        self._store = store
        self._on_choose = on_choose
        self._active = active or DEFAULT_MODEL_ID
        self._folders = tuple(Path(f) for f in folders)
        self._env = env
        self._guard = guard
        self._lock = threading.RLock()
        self._records: dict[str, _Record] = {}
        self._here: MeasuredHere | None = None  # the model in use, measured on this device
        self._last_answer = ""  # the event id of the last answer counted into `_here`
        broken = "; ".join(store.problems)
        notice = Notice("notice_manifests_skipped", (("detail", broken),), error=True) if broken else None
        self._states = Observable(ModelsState(store.root, notice=notice), "the Models screen")
        if on_change is not None:
            self._states.subscribe(on_change, now=False)
        self._closed = False

    @property
    def state(self) -> ModelsState:
        return self._state

    # --- reading ----------------------------------------------------------------------

    def refresh(self) -> None:
        """Reads every model's status, the settings and the free space again."""
        statuses: dict[str, ModelStatus] = {}
        errors: dict[str, str] = {}
        for model_id in sorted(self._store.manifests):
            try:
                statuses[model_id] = self._store.status(model_id)
            except (OSError, StoreError) as exc:
                errors[model_id] = str(exc)
        sizes = {mid: folder_bytes(s.folder) for mid, s in statuses.items()}
        verified_sizes = {mid: files_bytes(s.folder, s.verified) for mid, s in statuses.items()}
        mirror_url, mirror_error, proxy = "", "", False
        try:
            settings = load_download_settings(self._env)
            mirror_url, proxy = settings.mirror or "", settings.use_system_proxy
        except MirrorError as exc:
            mirror_error = str(exc)
        try:
            free: int | None = free_bytes(self._store.root)
        except OSError:
            free = None
        with self._lock:
            for model_id, status in statuses.items():
                record = self._records.setdefault(model_id, _Record())
                record.status = status
                record.on_disk = sizes[model_id]
                record.verified_bytes = verified_sizes[model_id]
                if status.state is ModelState.ABSENT and record.activity is None:
                    record.verified_now = False
                    record.failed_files = ()
                    record.error = ""
            for model_id, message in errors.items():
                record = self._records.setdefault(model_id, _Record())
                record.error = message
            self._state = replace(
                self._state,
                free_bytes=free,
                mirror_url=mirror_url,
                mirror_error=mirror_error,
                use_system_proxy=proxy,
                listed=True,
            )
            self._rebuild()
        self._emit()

    # --- the model in use -------------------------------------------------------------

    def choose(self, model_id: str) -> None:
        """Use this model from now on (only an installed or verified one); the shell saves it."""
        card = self._state.card(model_id)
        if card is None or not card.usable:
            about = self._about(model_id, card.name if card else model_id)
            self._notify(Notice("notice_not_usable", about, error=True))
            return
        with self._lock:
            self._active = model_id
            self._state = replace(self._state, notice=Notice("notice_chosen", self._about(model_id, card.name)))
            self._rebuild()
        self._emit()
        if self._on_choose is not None:
            self._on_choose(model_id)

    def set_active(self, model_id: str | None) -> None:
        """The shell says which model is in use (e.g. after the settings changed)."""
        with self._lock:
            if self._active == (model_id or DEFAULT_MODEL_ID):
                return
            self._active = model_id or DEFAULT_MODEL_ID
            self._here = None  # another model's figures are not this one's
            self._rebuild()
        self._emit()

    def follow_practice(self, practice: PracticeState) -> None:
        """Practice's state, as it changes: the model in use measured on this device as it loads (its check
        answer, its process's peak memory) and as it answers keyframes. Cheap when nothing new: it is
        called on every change of Practice."""
        with self._lock:
            here = self._here
            if practice.worker_status is not WorkerStatus.READY or not practice.backend:
                return
            loaded = (practice.backend, _seconds(practice.check_ms), practice.peak_memory_bytes)
            if here is None or (here.backend, here.check_s, here.peak_memory_bytes) != loaded:
                here = MeasuredHere(*loaded)  # a (re)loaded model: its answers start again
            latest = practice.latest
            if latest is not None and latest.event_id != self._last_answer and latest.model_id == practice.model_id:
                self._last_answer = latest.event_id
                here = here.with_keyframe(latest.keyframe_id, _keyframe_seconds(practice, latest))
            if here == self._here:
                return
            self._here = here
            # Only the figures change: the cards are not read from disk again for them.
            cards = tuple(replace(c, here=here if c.active else None) for c in self._state.cards)
            self._state = replace(self._state, cards=cards)
        self._emit()

    # --- download, pause, resume, cancel ----------------------------------------------

    def download(self, model_id: str) -> bool:
        """Starts (or resumes: the .part files are kept) a download; True when it started."""
        try:
            plan = plan_download(self._store, model_id, env=self._env)
        except DownloadRefused as refused:
            self._refused(model_id, refused)
            return False
        with self._lock:
            if self._closed:
                return False
            record = self._records.setdefault(model_id, _Record())
            if record.activity is not None:
                return False  # already running
            job = plan.job(self._resolve_guard())
            record.job = job
            record.repairing = bool(record.status and record.status.verified)
            record.stop = threading.Event()
            record.failed_files = ()
            record.error = ""
            record.verified_now = False
            record.confirm = None
            record.activity = Activity(ActivityKind.DOWNLOAD)
            thread = threading.Thread(
                target=self._follow_download, args=(model_id, job), name=f"models-{model_id}", daemon=True
            )
            record.thread = thread
            host = ", ".join(m.host for m in plan.mirrors)
            via = " + proxy" if plan.proxies else ""
            self._state = replace(self._state, notice=Notice("notice_downloading", (("hosts", host + via),)))
            self._rebuild()
            job.start()
            thread.start()
        self._emit()
        return True

    resume = download

    def _refused(self, model_id: str, refused: DownloadRefused) -> None:
        detail = (("detail", str(refused)),)
        match refused.refusal:
            case Refusal.BUNDLED:
                notice = Notice("notice_bundled", self._about(model_id))
            case Refusal.NO_MIRROR:
                notice = Notice("notice_no_mirror", self._about(model_id), error=True)
            case Refusal.SETTINGS:
                with self._lock:
                    self._state = replace(self._state, mirror_error=str(refused))
                notice = Notice("notice_mirror_broken", detail, error=True)
            case Refusal.PROXY:
                notice = Notice("notice_proxy_unusable", detail, error=True)
            case Refusal.UNKNOWN:
                notice = Notice("notice_failed", detail, error=True)
        self._notify(notice)

    def pause(self, model_id: str) -> None:
        """Stops the download and keeps the .part files: `resume` (even after a restart) goes on from there."""
        self._stop_download(model_id, Stopping.PAUSE)

    def request_cancel(self, model_id: str) -> None:
        """Asks for confirmation before a cancel drops the partial files."""
        self._ask(model_id, Confirm.CANCEL)

    def request_delete(self, model_id: str) -> None:
        self._ask(model_id, Confirm.DELETE)

    def dismiss_confirm(self, model_id: str) -> None:
        with self._lock:
            record = self._records.get(model_id)
            if record is None:
                return
            record.confirm = None
            self._rebuild()
        self._emit()

    def confirm(self, model_id: str) -> None:
        """The user said yes to the pending cancel or delete."""
        with self._lock:
            record = self._records.get(model_id)
            action = record.confirm if record else None
            if record is None or not action:
                return
            record.confirm = None
            running = record.activity is not None and record.activity.kind is ActivityKind.DOWNLOAD
        if action is Confirm.CANCEL and running:
            self._stop_download(model_id, Stopping.CANCEL)  # the download's thread drops the files when it has stopped
        else:
            self._start_thread(model_id, self._discard, model_id, action)

    def _ask(self, model_id: str, action: Confirm) -> None:
        with self._lock:
            record = self._records.get(model_id)
            status = record.status if record else None
            if record is None or status is None or self._store.manifest(model_id).bundled:
                return
            if action is Confirm.DELETE and record.activity is not None:
                return  # pause or cancel first
            record.confirm = action
            self._rebuild()
        self._emit()

    def _stop_download(self, model_id: str, how: Stopping) -> None:
        with self._lock:
            record = self._records.get(model_id)
            if record is None or record.job is None or record.activity is None:
                return
            record.activity = replace(record.activity, stopping=how)
            record.job.stop(discard=how is Stopping.CANCEL)
            self._rebuild()
        self._emit()

    def _follow_download(self, model_id: str, job: DownloadJob) -> None:
        for progress in job.events():
            self._on_progress(model_id, progress)
        outcome = job.wait()
        with self._lock:
            record = self._records[model_id]
            record.job = None
        if outcome.ending is Ending.CANCELLED:
            self._discard(model_id, Confirm.CANCEL)
            return
        if outcome.ending is Ending.STOPPED:
            self._finish(model_id, Notice("notice_paused", self._about(model_id)))
            return
        if outcome.error is not None:
            detail = str(outcome.error) or type(outcome.error).__name__
            if outcome.ending is Ending.BUSY:
                detail = f"{detail} (another Keyframe is working on this model)"
            with self._lock:
                record.failed_files = (outcome.failed_file,) if outcome.failed_file else ()
                record.error = detail
            self._finish(model_id, Notice("notice_download_failed", (("detail", detail),), error=True))
            return
        if self._closed:
            self._finish(model_id, None)
            return
        # Files already on record were not re-hashed by the download: a full verify makes "verified" true.
        self._verify_body(model_id, after_download=True)

    def _on_progress(self, model_id: str, p: DownloadProgress) -> None:
        with self._lock:
            record = self._records.get(model_id)
            if record is None or record.activity is None:
                return
            record.activity = download_activity(p, record.activity.stopping)
            self._rebuild()
        self._emit()

    def _discard(self, model_id: str, action: Confirm) -> None:
        about = self._about(model_id)
        try:
            if action is Confirm.DELETE:
                removed = self._store.remove(model_id)
                notice = Notice("notice_deleted" if removed else "notice_nothing_deleted", about)
            else:
                # A fresh download goes entirely; a repair keeps the files that were verified before it.
                with self._lock:
                    repairing = self._records.setdefault(model_id, _Record()).repairing
                if repairing:
                    self._store.discard_partial(model_id)
                else:
                    self._store.remove(model_id)
                notice = Notice("notice_cancelled", about)
        except (OSError, StoreError, ModelBusy) as exc:
            notice = Notice("notice_failed", (("detail", str(exc)),), error=True)
        else:
            with self._lock:
                record = self._records.setdefault(model_id, _Record())
                record.verified_now = False
                record.failed_files = ()
                record.error = ""
        self._finish(model_id, notice)

    # --- verify -----------------------------------------------------------------------

    def verify(self, model_id: str) -> bool:
        """A full re-hash of every file on a thread, with progress; a failing file is named."""
        with self._lock:
            record = self._records.setdefault(model_id, _Record())
            if record.activity is not None or self._closed:
                return False
        return self._start_thread(model_id, self._verify_body, model_id)

    def stop(self, model_id: str) -> None:
        """Stops a running verify (a download is stopped by `pause` or `cancel`)."""
        with self._lock:
            record = self._records.get(model_id)
            if record is None or record.activity is None or record.activity.kind is not ActivityKind.VERIFY:
                return
            record.stop.set()
            record.activity = replace(record.activity, stopping=Stopping.STOP)
            self._rebuild()
        self._emit()

    def _verify_body(self, model_id: str, after_download: bool = False) -> None:
        with self._lock:
            record = self._records.setdefault(model_id, _Record())
            stop = record.stop = threading.Event()
            file_count = len(self._store.manifest(model_id).files)
            record.activity = Activity(ActivityKind.VERIFY, phase=None, file_count=file_count)
            record.confirm = None
            self._rebuild()
        self._emit()
        last = [0.0]

        def on_progress(p: HashProgress) -> None:
            if stop.is_set() or self._closed:
                raise Cancelled()
            now = time.monotonic()
            if now - last[0] < _EMIT_EVERY_S:
                return
            last[0] = now
            with self._lock:
                if record.activity is not None:
                    record.activity = replace(
                        record.activity, file=p.path, file_index=p.file_index, done=p.done, total=p.total
                    )
                    self._rebuild()
            self._emit()

        about = self._about(model_id)
        try:
            report = self._store.verify(model_id, on_progress)
        except Cancelled:
            self._finish(model_id, Notice("notice_verify_stopped", about))
            return
        except (OSError, StoreError) as exc:
            with self._lock:
                record.error = str(exc)
            self._finish(model_id, Notice("notice_failed", (("detail", str(exc)),), error=True))
            return
        with self._lock:
            record.verified_now = report.ok
            record.failed_files = tuple(c.path for c in report.failures)
            record.error = "" if report.ok else report.describe()
        if report.ok:
            key = "notice_downloaded" if after_download else "notice_verified"
            notice = Notice(key, (*about, ("n", str(len(report.checks)))))
        else:
            notice = Notice("notice_verify_failed", (*about, ("files", ", ".join(record.failed_files))), error=True)
        self._finish(model_id, notice)

    # --- settings ---------------------------------------------------------------------

    def set_mirror(self, url: str) -> bool:
        """Saves the mirror base URL ("" clears it: the manifests' mirrors). True when saved."""
        url = url.strip()

        def save() -> None:
            if url:
                base_mirror(url)
            save_mirror_setting(url or None, self._env)

        if not self._saved(save, "notice_mirror_invalid"):
            return False
        with self._lock:
            self._state = replace(
                self._state,
                mirror_url=url,
                mirror_error="",
                notice=Notice("notice_mirror_saved", (("url", url),)) if url else Notice("notice_mirror_cleared"),
            )
        self.refresh()
        return True

    def set_use_system_proxy(self, on: bool) -> bool:
        """Downloads go through the system's proxy settings (on) or connect directly (off, the default)."""
        if not self._saved(lambda: save_proxy_setting(on, self._env), "notice_mirror_broken"):
            return False
        with self._lock:
            self._state = replace(
                self._state,
                use_system_proxy=on,
                notice=Notice("notice_proxy_on" if on else "notice_proxy_off"),
            )
        self._emit()
        return True

    def _saved(self, save: Callable[[], None], refused_key: str) -> bool:
        """Runs a save of the download settings; a refusal or a disk error becomes a notice (False)."""
        try:
            save()
        except MirrorError as exc:
            self._notify(Notice(refused_key, (("detail", str(exc)),), error=True))
            return False
        except OSError as exc:
            self._notify(Notice("notice_failed", (("detail", exc.strerror or str(exc)),), error=True))
            return False
        return True

    def dismiss_notice(self) -> None:
        with self._lock:
            self._state = replace(self._state, notice=None)
        self._emit()

    # --- lifecycle --------------------------------------------------------------------

    def busy(self) -> bool:
        with self._lock:
            return any(r.activity is not None for r in self._records.values())

    def shutdown(self, timeout: float = 10.0) -> bool:
        """Stops every download (its .part files stay for a resume) and verify; True when all ended."""
        with self._lock:
            self._closed = True
            threads = []
            for record in self._records.values():
                record.stop.set()
                if record.job is not None:
                    record.job.stop()
                if record.thread is not None:
                    threads.append(record.thread)
        deadline = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in threads)

    # --- plumbing ---------------------------------------------------------------------

    def _resolve_guard(self) -> NetworkGuard | None:
        if self._guard is _DEFAULT_GUARD:
            from app.privacy.guard import ensure_installed

            return ensure_installed()
        return self._guard  # type: ignore[return-value]

    def _start_thread(self, model_id: str, target: Callable[..., None], *args: object) -> bool:
        with self._lock:
            if self._closed:
                return False
            record = self._records.setdefault(model_id, _Record())
            if record.thread is not None and record.thread.is_alive():
                return False
            thread = threading.Thread(target=target, args=args, name=f"models-{model_id}", daemon=True)
            record.thread = thread
            thread.start()
        return True

    def _finish(self, model_id: str, notice: Notice | None) -> None:
        with self._lock:
            record = self._records.setdefault(model_id, _Record())
            record.activity = None
            if notice is not None:
                self._state = replace(self._state, notice=notice)
        self.refresh()

    def _about(self, model_id: str, name: str = "") -> tuple[tuple[str, str], ...]:
        """A notice's values for one model: its name, and its id so that the view names it in the
        screen's language."""
        if not name:
            name = model_id
            with contextlib.suppress(StoreError):
                name = self._store.manifest(model_id).display_name
        return (("name", name), ("model", model_id))

    def _notify(self, notice: Notice) -> None:
        with self._lock:
            self._state = replace(self._state, notice=notice)
            self._rebuild()
        self._emit()

    def _rebuild(self) -> None:
        """New cards from what is known; call with the lock held."""
        cards: list[ModelCard] = []
        for manifest in sorted(self._store.manifests.values(), key=card_order):
            record = self._records.get(manifest.id)
            if record is not None and record.status is not None:
                active = manifest.id == self._active
                cards.append(pinned_card(manifest, record.status, record, active=active, here=self._here))
        for folder in self._folders:
            has_config = (folder / "config.json").is_file()
            size = folder_bytes(folder)
            active = str(folder) == self._active
            cards.append(folder_card(folder, has_config=has_config, size_on_disk=size, active=active, here=self._here))
        self._state = replace(self._state, cards=tuple(cards))

    def subscribe(self, listener: Callable[[ModelsState], None]) -> None:
        """One controller serves every tab of the app: each page listens while it is open
        (a download goes on when the tab that started it closes). The listener gets the state at once."""
        self._states.subscribe(listener)

    def unsubscribe(self, listener: Callable[[ModelsState], None]) -> None:
        self._states.unsubscribe(listener)

    def _emit(self) -> None:
        # The newest state: the download thread and a tab's click both emit, and a tab never sees an
        # older state after a newer one (app.core.observable).
        self._states.publish()
