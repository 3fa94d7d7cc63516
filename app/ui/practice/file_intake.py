"""Files a user picks in the page: checked against a size limit before a byte is sent, then local paths.

On desktop the picker gives real paths. From a browser each file is uploaded to this app's own
server (127.0.0.1) into a fresh folder under `upload_dir`, and the pick waits until every file has
arrived (or failed, or UPLOAD_TIMEOUT_S passed). Problems are notices for the screen that asked.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

import flet as ft

from app.core.notice import Notice
from app.core.sizes import size_words

log = logging.getLogger("keyframe.ui")

UPLOAD_TIMEOUT_S = 600  # a 500 MB video over loopback takes seconds; a stuck upload must end
UPLOAD_URL_EXPIRES_S = 600

Picked = list[tuple[str, Path]]  # (the name the user sees, where the bytes are)


class FileIntake:
    """One page's file picks and their uploads. `keep`: an upload folder not to clear (the video a
    session is playing from), asked at each pick."""

    def __init__(
        self,
        page: ft.Page,
        picker: ft.FilePicker,
        uploads: Path,
        keep: Callable[[], Path | None],
    ) -> None:
        self._page = page
        self._picker = picker
        self._uploads_dir = uploads
        self._keep = keep
        self._waiting: dict[str, asyncio.Future[None]] = {}  # file name -> done, for the upload in progress
        picker.on_upload = self._on_upload

    async def pick(
        self,
        file_type: ft.FilePickerFileType,
        many: bool,
        limit: int,
        start: Callable[[Picked], None],
        report: Callable[[Notice], None],
    ) -> None:
        """Files the user picks, checked against `limit` before upload, go to `start`; problems to `report`."""
        # No data with the pick: sizes are checked before a single byte is sent or decoded.
        try:
            files = await self._picker.pick_files(file_type=file_type, allow_multiple=many)
        except (RuntimeError, TimeoutError) as exc:  # the browser never answered (Flet raises RuntimeError)
            log.warning("the file chooser did not answer: %s", exc)  # the detail is for the log, not the screen
            report(Notice("picker_failed", error=True))
            return
        if not files:
            return
        fitting = [f for f in files if f.size <= limit]
        if len(fitting) < len(files):
            big = next(f for f in files if f.size > limit)
            report(
                Notice.of(
                    "file_too_large", error=True, name=big.name, size=size_words(big.size), limit=size_words(limit)
                )
            )
        if not fitting:
            return
        try:
            paths = await self._fetch(fitting)
        except (OSError, RuntimeError) as exc:
            report(Notice.of("upload_failed", error=True, reason=exc))
            return
        start(paths)

    def is_upload(self, path: Path) -> bool:
        """A copy made for this app (to be deleted when its session ends), not the user's own file."""
        return path.parent.parent == self._uploads_dir

    async def _fetch(self, files: list[ft.FilePickerFile]) -> Picked:
        """Local paths of the picked files: as they are on desktop, uploaded to 127.0.0.1 from a browser."""
        if all(f.path for f in files):
            return [(f.name, Path(f.path)) for f in files if f.path]
        kept = self._keep()
        for old in self._uploads_dir.glob("*"):  # earlier uploads, but never the video a session is playing
            if old != kept:
                shutil.rmtree(old, ignore_errors=True)
        folder = uuid.uuid4().hex
        loop = asyncio.get_running_loop()
        done = {f.name: loop.create_future() for f in files}
        self._waiting = done
        await self._picker.upload(
            [
                ft.FilePickerUploadFile(
                    id=f.id,
                    name=f.name,
                    upload_url=self._page.get_upload_url(f"{folder}/{f.name}", UPLOAD_URL_EXPIRES_S),
                )
                for f in files
            ]
        )
        await asyncio.wait_for(asyncio.gather(*done.values()), timeout=UPLOAD_TIMEOUT_S)
        return [(f.name, self._uploads_dir / folder / f.name) for f in files]

    def _on_upload(self, e: ft.FilePickerUploadEvent) -> None:
        waiter = self._waiting.get(e.file_name)
        if waiter is None or waiter.done():
            return
        if e.error:
            waiter.set_exception(RuntimeError(f"{e.file_name}: {e.error}"))
        elif e.progress is not None and e.progress >= 1.0:
            waiter.set_result(None)

    def read(
        self, files: Picked, start: Callable[[list[tuple[str, bytes]]], None], report: Callable[[Notice], None]
    ) -> None:
        """The files' bytes to `start`, read on Flet's thread pool: a folder of photos must not freeze every tab."""

        def read_all() -> None:
            try:
                images = [(name, path.read_bytes()) for name, path in files]
            except OSError as exc:
                report(Notice.of("upload_failed", error=True, reason=exc.strerror or exc))
                return
            start(images)

        self._page.run_thread(read_all)
