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
from app.ui.timeline import mark_style, point_kind
from app.ui.widgets import clock, tagged

AllowedValues = Sequence[str] | Mapping[str, Sequence[str]]  # one list for all, or per event_id
Thumbnails = Callable[[str], bytes | None]  # event_id -> the keyframe's JPEG, kept beside the session log
ConfirmHandler = Callable[[str, str, bool], object]  # (event_id, note, revise)
CorrectHandler = Callable[[str, str, str, bool], object]  # (event_id, value, note, revise)
ConfirmAllHandler = Callable[[Sequence[str], str, bool], object]  # (event_ids, note, revise): all or none


def _values_for(allowed: AllowedValues, event_id: str) -> tuple[str, ...]:
    if isinstance(allowed, Mapping):
        return tuple(allowed.get(event_id, ()))
    return tuple(allowed)


@dataclass
class _Handlers:
    confirm: ConfirmHandler
    correct: CorrectHandler
    confirm_all: ConfirmAllHandler


def when_taken(s: Mapping[str, str], t: float, wall_time: float, source: str, still: bool) -> str:
    """Where and when a keyframe was taken: a still by its file name (its `t` is only its place in the
    list), a video or camera frame by its time in the session."""
    if still:
        return text(s, "review_still", name=source, clock=clock(wall_time))
    at = text(s, "review_at", t=f"{t:.1f}", clock=clock(wall_time))
    return text(s, "review_at_source", source=source, at=at) if source else at


def describe_review(s: Mapping[str, str], record: ReviewRecord) -> str:
    """One verdict of an answer's history: what, the note, by whom, when."""
    key = "review_history_confirmed" if record.verdict == "confirmed" else "review_history_corrected"
    return text(
        s,
        "review_history_item",
        verdict=text(s, key, answer=answer_word(s, record.observation)),
        note=text(s, "review_history_note", note=record.note) if record.note else "",
        by=text(s, "review_history_by", examiner=record.examiner) if record.examiner else "",
        clock=clock(record.wall_time),
    )


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
        self.history.controls = [ft.Text(describe_review(s, r), size=13) for r in entry.history]

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


class _SignalLine:
    """One signal's answer inside a keyframe's review: verdict, reason, history, its own correction."""

    def __init__(self, event_id: str, strings: Mapping[str, str], on_correct: Callable[[str, str], None]) -> None:
        self.event_id = event_id
        self.icon = ft.Icon(ft.Icons.CIRCLE, size=20)
        self.answer = ft.Text("", size=14, weight=ft.FontWeight.BOLD)
        self.reason = ft.Text("", size=12, color=ft.Colors.GREY_800)
        self.reason_box = ft.Container(self.reason, visible=False)
        self.history = ft.Column(spacing=2)
        self.correct: ft.Dropdown = ft.Dropdown(
            label=text(strings, "review_correct"),
            width=170,
            dense=True,
            on_select=lambda e: on_correct(event_id, e.control.value or ""),
        )
        self.correct_box = tagged(self.correct, f"correct-{event_id}")
        self.root = ft.Row(
            [
                self.icon,
                ft.Column([self.answer, self.reason_box, self.history], spacing=2, expand=True),
                self.correct_box,
            ],
            vertical_alignment=ft.CrossAxisAlignment.START,
        )


class KeyframeReviewRow:
    """A checklist's keyframe: its thumbnail once, every signal's answer, "Confirm all" in one tap, a
    correction per signal (to that signal's answers only) and one note for the keyframe."""

    def __init__(self, key: str, strings: Mapping[str, str], thumbnail: bytes | None = None) -> None:
        self.key = key  # the keyframe's first answer's event id: unique across sessions
        self._s = strings
        self._handlers: _Handlers | None = None
        self._revising = False
        self._reviews = 0
        self._entries: tuple[TimelineEntry, ...] = ()
        self._render_args: tuple[Mapping[str, tuple[str, ...]], bool] = ({}, False)
        self.lines: dict[str, _SignalLine] = {}
        self.thumb = ft.Image(src=thumbnail or b"", width=96, height=72, fit=ft.BoxFit.COVER, border_radius=4)
        self.thumb_box = tagged(self.thumb, f"thumb-{key}")
        self.thumb_box.visible = thumbnail is not None
        self.when = ft.Text("", size=12, color=ft.Colors.GREY_700)
        self.status = ft.Text("", size=13, weight=ft.FontWeight.W_500)
        self.line_column = ft.Column(spacing=6)
        self.note = ft.TextField(label=text(strings, "review_note"), dense=True)
        self.note_box = ft.Container(tagged(self.note, f"note-{key}"))
        self.confirm_all = ft.Button(
            text(strings, "review_confirm_all"), icon=ft.Icons.DONE_ALL, on_click=lambda _: self._on_confirm_all()
        )
        self.actions = ft.Row(
            [tagged(self.confirm_all, f"confirm-all-{key}"), self.note_box],
            spacing=8,
            run_spacing=8,
            vertical_alignment=ft.CrossAxisAlignment.CENTER,
        )
        self.change = ft.TextButton(
            text(strings, "review_change_all"), icon=ft.Icons.EDIT_OUTLINED, on_click=lambda _: self._toggle_change()
        )
        self.change_row = ft.Row([tagged(self.change, f"revise-{key}")])
        self.fit(wide=True)
        self.root = tagged(
            ft.Container(
                content=ft.Column(
                    [
                        ft.Row(
                            [ft.Column([self.status, self.when], spacing=2, expand=True), self.thumb_box],
                            vertical_alignment=ft.CrossAxisAlignment.START,
                        ),
                        self.line_column,
                        self.actions,
                        self.change_row,
                    ],
                    spacing=6,
                ),
                padding=ft.Padding.symmetric(horizontal=10, vertical=8),
                border=ft.Border.all(1, ft.Colors.GREY_300),
                border_radius=8,
            ),
            f"review-{key}",
        )

    def fit(self, wide: bool) -> None:
        self.actions.wrap = not wide
        self.note_box.expand, self.note_box.width = (True, None) if wide else (None, 320)

    def render(
        self,
        entries: tuple[TimelineEntry, ...],
        allowed: Mapping[str, tuple[str, ...]],
        handlers: _Handlers,
        read_only: bool,
    ) -> None:
        """`entries`: the keyframe's answers in the order asked; `allowed`: event id -> answers."""
        s = self._s
        self._entries, self._handlers, self._render_args = entries, handlers, (allowed, read_only)
        reviews = sum(len(e.history) for e in entries)
        if reviews != self._reviews:  # a verdict was recorded: the next one starts clean
            self._reviews, self._revising = reviews, False
            self.note.value = ""
        first = entries[0].event
        self.when.value = when_taken(s, first.t, first.wall_time, first.source, first.still)
        pending = [e for e in entries if e.review == "pending"]
        self.status.value = (
            text(s, "review_keyframe_pending", n=len(pending), m=len(entries))
            if pending
            else text(s, "review_keyframe_done", m=len(entries))
        )
        editing = not read_only and (bool(pending) or self._revising)
        if [e.event.event_id for e in entries] != list(self.lines):
            self.lines = {e.event.event_id: _SignalLine(e.event.event_id, s, self._on_correct) for e in entries}
            self.line_column.controls = [line.root for line in self.lines.values()]
        for entry in entries:
            self._render_line(self.lines[entry.event.event_id], entry, allowed.get(entry.event.event_id, ()), editing)
        self.actions.visible = editing
        self.change_row.visible = not read_only and not pending
        self.change.content = text(s, "review_cancel_change" if self._revising else "review_change_all")

    def _render_line(self, line: _SignalLine, entry: TimelineEntry, allowed: tuple[str, ...], editing: bool) -> None:
        s, e = self._s, entry.event
        kind = point_kind(entry)  # as the timeline marks it: a question the gate left unasked is "not checked"
        style = mark_style(kind)
        line.icon.icon, line.icon.color = style.icon, style.colour
        line.icon.semantics_label = text(s, "review_model_said", answer=answer_word(s, e.observation))
        answer = answer_word(s, kind)
        if entry.review == "corrected":
            answer = text(s, "review_verdict_over_model", answer=answer, model=answer_word(s, e.observation))
        line.answer.value = f"{signal_words(s, e.signal)} — {answer}"
        line.answer.color = style.colour
        line.reason_box.visible = e.parse_status != "valid"
        line.reason.value = reason_words(s, e.parse_reason) if line.reason_box.visible else ""
        line.history.controls = [ft.Text(describe_review(s, r), size=12) for r in entry.history]
        choices = [v for v in allowed if v != e.observation]
        line.correct.options = [ft.DropdownOption(key=v, text=answer_word(s, v)) for v in choices]
        line.correct.value = None
        line.correct.disabled = not choices
        line.correct_box.visible = editing and (entry.review == "pending" or self._revising)

    # --- events ---------------------------------------------------------------------

    def _on_confirm_all(self) -> None:
        if self._handlers is None:
            return
        # Revising: the model's answer is confirmed for every signal; otherwise the ones still waiting.
        targets = [e for e in self._entries if self._revising or e.review == "pending"]
        ids = [e.event.event_id for e in targets]
        if ids:
            self._handlers.confirm_all(ids, self.note.value or "", self._revising)

    def _on_correct(self, event_id: str, value: str) -> None:
        entry = next((e for e in self._entries if e.event.event_id == event_id), None)
        if self._handlers is not None and entry is not None and value:
            self._handlers.correct(event_id, value, self.note.value or "", entry.review != "pending")

    def _toggle_change(self) -> None:
        self._revising = not self._revising
        if self._handlers is not None and self._entries:
            allowed, read_only = self._render_args
            self.render(self._entries, allowed, self._handlers, read_only)


class ReviewList:
    """Pending answers first (oldest first), then the reviewed ones; `root` is the control to place."""

    def __init__(
        self, strings: Mapping[str, str] = EN, read_only: bool = False, thumbnails: Thumbnails = lambda _: None
    ) -> None:
        self._s = strings
        self._read_only = read_only
        self._thumbnails = thumbnails
        self.rows: dict[str, ReviewRow | KeyframeReviewRow] = {}  # by the (first) answer's event id
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
        on_confirm_all: ConfirmAllHandler | None = None,
    ) -> None:
        """Show `entries`; `allowed_values` is the profile's answers, or a mapping event_id -> answers.
        `question`: the sentence the answer card asks, so both read alike (default: the signal's words).
        A keyframe with several answers (a checklist's) is one row, confirmed at once by `on_confirm_all`
        (by default, one confirmation after another)."""
        handlers = _Handlers(on_confirm, on_correct, on_confirm_all or _one_by_one(on_confirm))
        rows: dict[str, ReviewRow | KeyframeReviewRow] = {}
        pending: list[ft.Control] = []
        done: list[ft.Control] = []
        for group in keyframe_groups(entries):
            key = group[0].event.event_id
            row = self.rows.get(key)
            if len(group) == 1:
                if not isinstance(row, ReviewRow):
                    row = ReviewRow(key, self._s, self._thumbnails(key))
                row.fit(self._wide)
                row.render(group[0], _values_for(allowed_values, key), handlers, self._read_only, question)
            else:
                if not isinstance(row, KeyframeReviewRow):
                    row = KeyframeReviewRow(key, self._s, self._thumbnails(key))
                row.fit(self._wide)
                allowed = {e.event.event_id: _values_for(allowed_values, e.event.event_id) for e in group}
                row.render(group, allowed, handlers, self._read_only)
            rows[key] = row
            waiting = any(e.review == "pending" for e in group)
            (pending if waiting else done).append(row.root)
        self.rows = rows
        self.pending.controls = pending
        self.done.controls = done
        self.pending_title.value = text(self._s, "review_pending_title", n=len(pending))
        self.done_title.value = text(self._s, "review_done_title", n=len(done))
        self.none_pending.visible = not pending
        self.done_box.visible = bool(done)


def keyframe_groups(entries: Sequence[TimelineEntry]) -> list[tuple[TimelineEntry, ...]]:
    """The entries by keyframe, oldest first; a keyframe's answers in the order they were recorded."""
    groups: dict[str, list[TimelineEntry]] = {}
    for entry in sorted(entries, key=lambda e: e.event.t):  # sorted() is stable: the recorded order stays
        groups.setdefault(entry.event.keyframe_id, []).append(entry)
    return [tuple(group) for group in groups.values()]


def _one_by_one(confirm: ConfirmHandler) -> ConfirmAllHandler:
    def confirm_all(event_ids: Sequence[str], note: str, revise: bool) -> None:
        for event_id in event_ids:
            confirm(event_id, note, revise)

    return confirm_all
