"""The keyframe an examiner taps in the review list, shown large: what the model judged, where and when
it was taken (a video's time, the camera's time in the session, a still's file name) and what was said."""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence

import flet as ft
from PIL import Image

from app.ui.parts.widgets import tagged
from app.ui.words import text

MAX_SIDE = 960  # the review copy's own longest side: never scaled up
MARGIN = 112  # the dialog's insets and padding, so the picture never overflows the screen's width
# ... and above and below it the title, the caption, the answers and the button: all in view with it.
BELOW = 300


def _fitted(picture: bytes, room: tuple[float, float]) -> tuple[float, float]:
    """The picture's size on screen: as large as `room` allows at its own aspect, never above its own size
    (a box of the picture's shape: no bands above and below it on a phone)."""
    try:
        with Image.open(io.BytesIO(picture)) as image:  # reads the header only
            w, h = image.size
    except (OSError, ValueError, Image.DecompressionBombError):
        w, h = MAX_SIDE, MAX_SIDE
    scale = min(room[0] / w, room[1] / h, 1.0)
    return w * scale, h * scale


def keyframe_dialog(
    words: Mapping[str, str],
    picture: bytes,
    when: str,
    answers: Sequence[str],
    page_size: tuple[float | None, float | None],
    close: Callable[[], object],
    note: str = "",
) -> ft.AlertDialog:
    """`answers`: one line per question of the keyframe ("Hands stacked — YES"), as the row shows them;
    `note`: why the picture is smaller than asked (only a thumbnail was kept)."""
    room = (
        max(160.0, (page_size[0] or MAX_SIDE + MARGIN) - MARGIN),
        max(160.0, (page_size[1] or MAX_SIDE + BELOW) - BELOW),
    )
    width, height = _fitted(picture, room)
    image = ft.Image(src=picture, width=width, height=height, fit=ft.BoxFit.CONTAIN, border_radius=4)
    return ft.AlertDialog(
        title=ft.Text(text(words, "keyframe_title"), size=16),
        content=tagged(
            ft.Column(
                [
                    tagged(image, "keyframe-image"),
                    tagged(ft.Text(when, size=13, color=ft.Colors.GREY_800), "keyframe-when"),
                    tagged(ft.Column([ft.Text(line, size=13) for line in answers], spacing=4), "keyframe-answers"),
                    *([ft.Text(note, size=12, italic=True, color=ft.Colors.GREY_700)] if note else []),
                ],
                tight=True,
                spacing=6,
                width=max(width, min(room[0], 480.0)),  # the words need a line even beside a thumbnail
            ),
            "keyframe-large",
        ),
        actions=[tagged(ft.TextButton(text(words, "keyframe_close"), on_click=lambda _: close()), "keyframe-close")],
    )
