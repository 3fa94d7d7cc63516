"""The examiner's list: answers waiting for confirmation, then the reviewed ones with their history.

Each answer shows its keyframe's thumbnail and source (the camera, a video's or an
image's file name; a still gets no made-up time), the answer in words (with
the marker of the timeline: colour and shape), **Confirm**, a **Correct to…**
dropdown limited to the profile's other answers, and an optional note. A
reviewed answer shows every verdict in order and offers "Change verdict", which
records a revision (the earlier verdict stays in the history).

The list only renders entries and forwards the examiner's choices to the
handlers given to `render`; it records nothing itself. Rows are kept per event
id between renders, so a note being typed survives a re-render caused by a new
keyframe in a live session.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import flet as ft

from app.core.session import ReviewRecord, TimelineEntry
from app.ui.i18n import text
from app.ui.strings_sessions import EN, answer_word, reason_words, signal_words
from app.ui.timeline import mark_style
from app.ui.widgets import clock, tagged

AllowedValues = Sequence[str] | Mapping[str, Sequence[str]]  # one list for all, or per event_id
Thumbnails = Callable[[str], bytes | None]  # event_id -> the keyframe's JPEG, kept beside the session log
ConfirmHandler = Callable[[str, str, bool], object]  # (event_id, note, revise)
CorrectHandler = Callable[[str, str, str, bool], object]  # (event_id, value, note, revise)


def _values_for(allowed: AllowedValues, event_id: str) -> tuple[str, ...]:
    if isinstance(allowed, Mapping):
        return tuple(allowed.get(event_id, ()))
    return tuple(allowed)


@dataclass
class _Handlers:
    confirm: ConfirmHandler
    correct: CorrectHandler


def when_taken(s: Mapping[str, str], t: float, wall_time: float, source: str, still: bool) -> str:
    """Where and when a keyframe was taken: a still by its file name (its `t` is only its place in the
    list), a video or camera frame by its time in the session."""
    if still:
        return text(s, "review_still", name=source, clock=clock(wall_time))
    at = text(s, "review_at", t=f"{t:.1f}", clock=clock(wall_time))
    return text(s, "review_at_source", source=source, at=at) if source else at


class ReviewRow:
    """One answer; its controls live as long as the event is listed."""

    def __init__(self, event_id: str, strings: Mapping[str, str], thumbnail: bytes | None = None) -> None:
        self.event_id = event_id
        self._s = strings
        self._handlers: _Handlers | None = None
        self._revising = False
        self._history_len = 0
        self._allowed: tuple[str, ...] = ()
        self._question = ""
        self.entry: TimelineEntry | None = None

        self.icon = ft.Icon(ft.Icons.CIRCLE, size=24)
        # What was judged, as the model got it (read once: a row lives as long as its event is listed).
        self.thumb = ft.Image(src=thumbnail or b"", width=64, height=48, fit=ft.BoxFit.COVER, border_radius=4)
        self.thumb_box = tagged(self.thumb, f"thumb-{event_id}")
        self.thumb_box.visible = thumbnail is not None
        self.answer = ft.Text("", size=14, weight=ft.FontWeight.BOLD)
        self.when = ft.Text("", size=12, color=ft.Colors.GREY_700)
        self.reason = ft.Text("", size=12, color=ft.Colors.GREY_800, visible=False)
        self.history = ft.Column(spacing=2)
        # One row of actions: a pending answer takes about 110 px, so several fit beside the card.
        self.note = ft.TextField(label=text(strings, "review_note"), dense=True)
        self.confirm = ft.Button(
            text(strings, "review_confirm"), icon=ft.Icons.CHECK, on_click=lambda _: self._on_confirm()
        )
        self.correct = ft.Dropdown(
            label=text(strings, "review_correct"), width=170, dense=True, on_select=lambda _: self._on_correct()
        )
        self.change = ft.TextButton(
            text(strings, "review_change"), icon=ft.Icons.EDIT_OUTLINED, on_click=lambda _: self._toggle_change()
        )
        self.note_box = ft.Container(tagged(self.note, f"note-{event_id}"))
        self.actions = ft.Row(
            [
                tagged(self.confirm, f"confirm-{event_id}"),
                tagged(self.correct, f"correct-{event_id}"),
                self.note_box,
            ],
            spacing=8,
            run_spacing=8,
            vertical_alignment=ft.CrossAxisAlignment.CENTER,
        )
        self.fit(wide=True)
        # Visibility is set on these wrappers, never on a control inside a Semantics.
        self.history_box = tagged(self.history, f"history-{event_id}")
        self.change_row = ft.Row([tagged(self.change, f"revise-{event_id}")])
        body = ft.Column(
            [
                ft.Row(
                    [
                        self.icon,
                        ft.Column([self.answer, self.when, self.reason], spacing=2, expand=True),
                        self.thumb_box,
                    ],
                    vertical_alignment=ft.CrossAxisAlignment.START,
                ),
                self.history_box,
                self.actions,
                self.change_row,
            ],
            spacing=6,
        )
        self.root = tagged(
            ft.Container(
                content=body,
                padding=ft.Padding.symmetric(horizontal=10, vertical=8),
                border=ft.Border.all(1, ft.Colors.GREY_300),
                border_radius=8,
            ),
            f"review-{event_id}",
        )

    def fit(self, wide: bool) -> None:
        """One row of actions beside the card on a wide window (the note takes the rest of it, about
        110 px an answer); on a phone they wrap, the note on its own line."""
        self.actions.wrap = not wide
        self.note_box.expand, self.note_box.width = (True, None) if wide else (None, 320)

    # --- rendering ------------------------------------------------------------------

    def render(
        self, entry: TimelineEntry, allowed: tuple[str, ...], handlers: _Handlers, read_only: bool, question: str = ""
    ) -> None:
        s, e = self._s, entry.event
        self.entry, self._handlers, self._allowed, self._question = entry, handlers, allowed, question
        if len(entry.history) != self._history_len:  # a verdict was recorded: start the next one clean
            self._history_len = len(entry.history)
            self._revising = False
            self.note.value = ""
        # The examiner's verdict leads once given; what the model said stays beside it.
        style = mark_style(entry.verdict)
        self.icon.icon, self.icon.color = style.icon, style.colour
        answer = answer_word(s, entry.verdict)
        if entry.review == "corrected":
            answer = text(s, "review_verdict_over_model", answer=answer, model=answer_word(s, e.observation))
        self.answer.value = f"{question or signal_words(s, e.signal)} — {answer}"
        self.answer.color = style.colour
        self.icon.semantics_label = text(s, "review_model_said", answer=answer_word(s, e.observation))
        self.when.value = when_taken(s, e.t, e.wall_time, e.source, e.still)
        self.reason.visible = e.parse_status != "valid"
        self.reason.value = reason_words(s, e.parse_reason) if self.reason.visible else ""

        reviewed = entry.review != "pending"
        self.history_box.visible = reviewed
        self.history.controls = [ft.Text(self._describe(r), size=13) for r in entry.history]

        choices = [v for v in allowed if v != e.observation]
        self.correct.options = [ft.DropdownOption(key=v, text=answer_word(s, v)) for v in choices]
        self.correct.value = None
        self.correct.disabled = not choices
        self.correct.tooltip = (
            None if choices else text(s, "review_answers_unknown" if not allowed else "review_correct_none")
        )

        editing = not read_only and (not reviewed or self._revising)
        self.actions.visible = editing
        self.change_row.visible = not read_only and reviewed
        self.change.content = text(s, "review_cancel_change" if self._revising else "review_change")

    def _describe(self, record: ReviewRecord) -> str:
        s = self._s
        key = "review_history_confirmed" if record.verdict == "confirmed" else "review_history_corrected"
        return text(
            s,
            "review_history_item",
            verdict=text(s, key, answer=answer_word(s, record.observation)),
            note=text(s, "review_history_note", note=record.note) if record.note else "",
            by=text(s, "review_history_by", examiner=record.examiner) if record.examiner else "",
            clock=clock(record.wall_time),
        )

    # --- events ---------------------------------------------------------------------

    def _on_confirm(self) -> None:
        if self._handlers is not None:
            self._handlers.confirm(self.event_id, self.note.value or "", self._revise_flag())

    def _on_correct(self) -> None:
        value = self.correct.value
        if self._handlers is not None and value:
            self._handlers.correct(self.event_id, value, self.note.value or "", self._revise_flag())

    def _revise_flag(self) -> bool:
        return self.entry is not None and self.entry.review != "pending"

    def _toggle_change(self) -> None:
        # View-local: shows the verdict controls again. Flet updates the page after a handler.
        self._revising = not self._revising
        if self.entry is not None and self._handlers is not None:
            self.render(self.entry, self._allowed, self._handlers, read_only=False, question=self._question)


class ReviewList:
    """Pending answers first (oldest first), then the reviewed ones; `root` is the control to place."""

    def __init__(
        self, strings: Mapping[str, str] = EN, read_only: bool = False, thumbnails: Thumbnails = lambda _: None
    ) -> None:
        self._s = strings
        self._read_only = read_only
        self._thumbnails = thumbnails
        self.rows: dict[str, ReviewRow] = {}
        self._wide = True
        self.pending_title = ft.Text(text(strings, "review_pending_title", n=0), weight=ft.FontWeight.BOLD, size=16)
        self.none_pending = ft.Text(text(strings, "review_none_pending"), color=ft.Colors.GREY_700)
        self.pending = ft.Column(spacing=8)
        self.done_title = ft.Text(text(strings, "review_done_title", n=0), weight=ft.FontWeight.BOLD, size=16)
        self.done = ft.Column(spacing=8)
        # The wrapper hides, not the title: a Semantics node's content must stay visible.
        self.done_box = tagged(self.done_title, "review-done-title")
        self.root = ft.Column(
            [
                tagged(self.pending_title, "review-pending-title"),
                self.none_pending,
                self.pending,
                self.done_box,
                self.done,
            ],
            spacing=10,
        )

    def fit(self, wide: bool) -> None:
        self._wide = wide
        for row in self.rows.values():
            row.fit(wide)

    def clear(self) -> None:
        """Forget every row (another session is shown): no note or open change carries over."""
        self.rows = {}
        self.pending.controls = []
        self.done.controls = []

    def render(
        self,
        entries: Sequence[TimelineEntry],
        allowed_values: AllowedValues,
        on_confirm: ConfirmHandler,
        on_correct: CorrectHandler,
        question: str = "",
    ) -> None:
        """Show `entries`; `allowed_values` is the profile's answers, or a mapping event_id -> answers.
        `question`: the sentence the answer card asks, so both read alike (default: the signal's words)."""
        handlers = _Handlers(on_confirm, on_correct)
        ordered = sorted(entries, key=lambda e: e.event.t)
        listed = {e.event.event_id for e in ordered}
        self.rows = {k: row for k, row in self.rows.items() if k in listed}
        pending: list[ft.Control] = []
        done: list[ft.Control] = []
        for entry in ordered:
            event_id = entry.event.event_id
            row = self.rows.get(event_id)
            if row is None:
                row = self.rows[event_id] = ReviewRow(event_id, self._s, self._thumbnails(event_id))
                row.fit(self._wide)
            row.render(entry, _values_for(allowed_values, event_id), handlers, self._read_only, question)
            (pending if entry.review == "pending" else done).append(row.root)
        self.pending.controls = pending
        self.done.controls = done
        self.pending_title.value = text(self._s, "review_pending_title", n=len(pending))
        self.done_title.value = text(self._s, "review_done_title", n=len(done))
        self.none_pending.visible = not pending
        self.done_box.visible = bool(done)
