"""Flet entry point: wires the view to the controller and the page's lifecycle."""

from __future__ import annotations

from pathlib import Path

import flet as ft

from app.paths import EXAMPLES
from app.privacy.guard import NetworkGuard, ensure_installed
from app.ui.controller import AnalysisController, ScreenState
from app.ui.strings import EN
from app.ui.view import MainView
from app.worker.messages import WorkerSpec


def build_main(model_ref: str | None = None, profile_path: Path | None = None):
    """Returns the `main(page)` for ft.run, bound to a model (id or folder) and a profile."""

    async def main(page: ft.Page) -> None:
        page.title = EN["title"]
        page.padding = 0
        page.theme_mode = ft.ThemeMode.LIGHT
        picker = ft.FilePicker()
        examples = sorted(EXAMPLES.glob("*.jpg")) if EXAMPLES.is_dir() else []

        def on_change(state: ScreenState) -> None:
            view.render(state)
            page.update()

        controller = AnalysisController(WorkerSpec(model=model_ref, profile=profile_path), on_change)

        async def pick_file() -> None:
            files = await picker.pick_files(file_type=ft.FilePickerFileType.IMAGE, with_data=True)
            if not files:
                return
            chosen = files[0]
            data = chosen.bytes
            if data is None and chosen.path:  # desktop gives a path, web gives bytes
                data = Path(chosen.path).read_bytes()
            controller.submit(chosen.name, data or b"")

        def on_example(path: Path) -> None:
            controller.submit(path.name, path.read_bytes())

        view = MainView(examples, on_pick_file=lambda: page.run_task(pick_file), on_example=on_example)
        guard = ensure_installed()

        def on_guard(g: NetworkGuard) -> None:
            controller.network_blocked(g.blocked_count)

        def close(_: object) -> None:
            guard.remove_listener(on_guard)
            controller.stop()

        page.on_close = close
        page.on_disconnect = close
        page.add(view.root)
        guard.add_listener(on_guard)
        controller.network_blocked(guard.blocked_count)  # renders the first state
        controller.start()

    return main
