"""One trainee's progress on the Sessions screen: a line per session, oldest first, with the same figures
each time (rate, time in the target band, CCF, pauses, each question's YES share), so a change from one
practice to the next reads down the column. Lines of words, not a table: they wrap on a phone."""

from __future__ import annotations

import time
from collections.abc import Mapping

import flet as ft

from app.core.progress import ProgressPoint, QuestionShare
from app.core.rhythm_figures import TARGET_RATE_PER_MIN, shown_rate
from app.ui.parts.timeline import question_words
from app.ui.parts.widgets import panel, tagged
from app.ui.words import text
from app.ui.words.sessions import source_words


def _when(words: Mapping[str, str], point: ProgressPoint) -> str:
    started = time.strftime("%Y-%m-%d %H:%M", time.localtime(point.started)) if point.started else "—"
    parts = [started]
    if point.duration_s is not None:
        parts.append(text(words, "row_duration", seconds=f"{point.duration_s:.0f}"))
    if point.source:
        parts.append(source_words(words, point.source, point.images))
    return " · ".join(parts)


def progress_lines(words: Mapping[str, str], point: ProgressPoint) -> list[str]:
    """One session's figures in words: where and when, the rhythm (when it had one), each question."""
    figures: list[str] = []
    if point.pauses is not None:
        low, high = TARGET_RATE_PER_MIN
        if point.median_rate_per_min is None or point.in_band_share is None:
            figures.append(text(words, "progress_rate_none"))
        else:
            rate, band = shown_rate(point.median_rate_per_min), f"{100 * point.in_band_share:.0f}"
            figures.append(text(words, "progress_rate", rate=rate, band=band, low=low, high=high))
        if point.compression_fraction is not None:
            figures.append(text(words, "progress_ccf", percent=f"{100 * point.compression_fraction:.0f}"))
        figures.append(text(words, "progress_pauses", n=point.pauses, long=point.long_pauses or 0))
    lines = [_when(words, point)]
    if figures:
        lines.append(" · ".join(figures))
    lines += [_question(words, q) for q in point.questions if q.answered]
    return lines


def _question(words: Mapping[str, str], share: QuestionShare) -> str:
    asked = dict(share.questions).get(words.get("language", "en"), "")
    return text(
        words,
        "progress_question",
        question=question_words(words, share.signal, {share.signal: asked} if asked else None),
        percent=f"{100 * (share.share or 0):.0f}",
        yes=share.yes,
        answered=share.answered,
        reviewed=share.reviewed,
    )


class ProgressBlock:
    """The chosen trainee's sessions as lines; hidden when no trainee is chosen."""

    def __init__(self, words: Mapping[str, str]) -> None:
        self._w = words
        self.title = ft.Text("", weight=ft.FontWeight.BOLD, size=16)
        self.sessions = ft.Column(spacing=10)
        self.root = tagged(
            panel(
                ft.Column(
                    [
                        tagged(self.title, "progress-title"),  # its own node: the tagged lines split the block's
                        self.sessions,
                        ft.Text(text(words, "progress_generative"), size=11, color=ft.Colors.GREY_700),
                    ],
                    spacing=8,
                )
            ),
            "progress",
        )
        self.root.visible = False

    def render(self, trainee: str, points: tuple[ProgressPoint, ...]) -> None:
        self.root.visible = bool(trainee and points)
        if not self.root.visible:
            return
        key = "progress_title_one" if len(points) == 1 else "progress_title"
        self.title.value = text(self._w, key, trainee=trainee, n=len(points))
        self.sessions.controls = [
            tagged(
                ft.Column([ft.Text(line, size=13) for line in progress_lines(self._w, p)], spacing=2),
                f"progress-{p.session_id}",
            )
            for p in points
        ]
