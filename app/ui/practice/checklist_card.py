"""One line of the practice card for a checklist: a signal, its answer in words, colour and shape.

Read from a metre away by a trainee at the manikin: the answer large, the signal above it, and one
small line for what qualifies it (not checked because of the gate, why it is unknown, the examiner's
verdict). The controls live as long as the profile, so a render only sets properties.
"""

from __future__ import annotations

from collections.abc import Mapping

import flet as ft

from app.core.profile.task import ProfileLabels
from app.core.session import Review
from app.core.session_summary import NOT_CHECKED
from app.ui.parts.checklist_lines import CardLine
from app.ui.parts.timeline import mark_style
from app.ui.parts.widgets import tagged
from app.ui.words.sessions import answer_word, reason_words


class ChecklistLine:
    def __init__(self, signal: str) -> None:
        self.icon = ft.Icon(ft.Icons.HOURGLASS_EMPTY, size=30, color=ft.Colors.GREY_500)
        self.words = ft.Text("", size=13, color=ft.Colors.GREY_800)
        self.answer = ft.Text("", size=22, weight=ft.FontWeight.BOLD)
        self.note = ft.Text("", size=12, color=ft.Colors.BLUE_GREY_800)
        self.note_box = tagged(self.note, f"check-note-{signal}")
        self.busy = ft.ProgressRing(width=16, height=16, stroke_width=2)
        self.busy_box = ft.Container(self.busy, visible=False)
        # Each text is tagged on its own: Flutter merges the texts of a row into a parent's node, where a
        # tag on the row itself was lost in half of the page loads.
        self.texts = ft.Column(
            [
                tagged(self.words, f"check-words-{signal}"),
                tagged(self.answer, f"check-{signal}"),
                self.note_box,
            ],
            spacing=0,
            expand=True,
        )
        self.root = ft.Row(
            [
                self.icon,
                self.texts,
                self.busy_box,
            ],
            spacing=10,
            vertical_alignment=ft.CrossAxisAlignment.START,
        )

    def dim(self, older: bool, opacity: float = 0.4) -> None:
        """The answer faded (marker and words, not the busy ring) while a newer keyframe is analysed."""
        self.icon.opacity = self.texts.opacity = opacity if older else 1.0

    def render(
        self,
        line: CardLine,
        gate: CardLine | None,
        labels: ProfileLabels,
        t: Mapping[str, str],
        w: Mapping[str, str],
    ) -> None:
        """`t`: the practice screen's strings, `w`: the answers' (strings_sessions)."""
        self.words.value = line.words
        self.busy_box.visible = line.answering

        def word(value: str) -> str:
            return labels.value_words(value) or answer_word(w, value)

        if line.value is None:
            self.answer.value, self.answer.color = t["check_no_answer"], ft.Colors.GREY_600
            self.icon.icon, self.icon.color = ft.Icons.HOURGLASS_EMPTY, ft.Colors.GREY_500
            self.note.value = ""
        elif line.not_checked and line.review is Review.PENDING:
            style = mark_style(NOT_CHECKED)  # the timeline's and the examiner's list's marker
            self.answer.value, self.answer.color = t["check_not_checked"], style.colour
            self.icon.icon, self.icon.color = style.icon, style.colour
            gate_said = word(gate.value) if gate is not None and gate.value is not None else "—"
            gate_words = gate.words if gate is not None else ""
            self.note.value = t["check_not_checked_because"].format(gate=gate_words, answer=gate_said)
        else:
            style = mark_style(line.value)
            self.answer.value, self.answer.color = word(line.value), style.colour
            self.icon.icon, self.icon.color = style.icon, style.colour
            if line.review is Review.CORRECTED:
                self.note.value = t["corrected"].format(model=word(line.model_value or ""))
            elif line.review is Review.CONFIRMED:
                self.note.value = t["confirmed"]
            elif line.reason:
                self.note.value = t["why_unknown"].format(reason=reason_words(w, line.reason))
            else:
                self.note.value = ""
        self.note_box.visible = bool(self.note.value)
