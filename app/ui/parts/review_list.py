"""The examiner's list: answers waiting for confirmation, then the reviewed ones with their history.

Each answer shows its keyframe's thumbnail and source (the camera, a video's or an
image's file name; a still gets no made-up time), the answer in words (with
the marker of the timeline: colour and shape), a **Correct to…** dropdown limited
to the profile's other answers, its own optional note, and **Confirm** — which
becomes **Save correction** once a correction is picked: nothing is recorded until
then, so a note written after picking still goes with that verdict. A checklist's
keyframe is one row with a line per question (each with its own correction and
note) and **Confirm all**, which records every line's verdict with its own note;
several waiting one-question answers get **Confirm all waiting**. A reviewed answer
shows every verdict in order and offers "Change verdict", which records a revision
(the earlier verdict stays in the history).

The list only renders entries and forwards the examiner's choices to the
handlers given to `render`; it records nothing itself. Rows are kept per event
id between renders, so a note being typed survives a re-render caused by a new
keyframe in a live session.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import flet as ft

from app.core.generation import ParseStatus
from app.core.session import Review, ReviewRecord, TimelineEntry
from app.session.review import Verdict
from app.ui.parts.keyframe_view import keyframe_dialog
from app.ui.parts.timeline import mark_style, point_kind
from app.ui.parts.widgets import clock, tagged
from app.ui.words import text
from app.ui.words.sessions import EN, answer_word, reason_words, signal_words, source_words

AllowedValues = Sequence[str] | Mapping[str, Sequence[str]]  # one list for all, or per event_id
Enlarge = Callable[[str], object]  # a row's key (its first answer's event id): show its keyframe large


class Thumbnails(Protocol):
    def __call__(self, event_id: str, large: bool = False) -> bytes | None:
        """The keyframe's JPEG kept beside the session log: its thumbnail, or with `large` its review copy."""


def no_pictures(event_id: str, large: bool = False) -> bytes | None:
    return None


ReviewHandler = Callable[[Sequence[Verdict], bool], object]  # (verdicts, revise): all recorded or none


def _values_for(allowed: AllowedValues, event_id: str) -> tuple[str, ...]:
    if isinstance(allowed, Mapping):
        return tuple(allowed.get(event_id, ()))
    return tuple(allowed)


def when_taken(s: Mapping[str, str], t: float, wall_time: float, source: str, still: bool) -> str:
    """Where and when a keyframe was taken: a still by its file name (its `t` is only its place in the
    list), a video or camera frame by its time in the session."""
    if still:
        return text(s, "review_still", name=source, clock=clock(wall_time))
    at = text(s, "review_at", t=f"{t:.1f}", clock=clock(wall_time))
    return text(s, "review_at_source", source=source_words(s, source), at=at) if source else at


def describe_review(s: Mapping[str, str], record: ReviewRecord) -> str:
    """One verdict of an answer's history: what, the note, by whom, when."""
    key = "review_history_confirmed" if record.verdict is Review.CONFIRMED else "review_history_corrected"
    return text(
        s,
        "review_history_item",
        verdict=text(s, key, answer=answer_word(s, record.observation)),
        note=text(s, "review_history_note", note=record.note) if record.note else "",
        by=text(s, "review_history_by", examiner=record.examiner) if record.examiner else "",
        clock=clock(record.wall_time),
    )


def _thumb(
    key: str, strings: Mapping[str, str], thumbnail: bytes | None, size: tuple[int, int], enlarge: Enlarge | None
) -> ft.Control:
    """A row's keyframe thumbnail, which shows the keyframe large when tapped (hidden when none was kept)."""
    image = ft.Image(src=thumbnail or b"", width=size[0], height=size[1], fit=ft.BoxFit.COVER, border_radius=4)
    box = ft.Container(
        image,
        on_click=(lambda _: enlarge(key)) if enlarge is not None else None,
        tooltip=text(strings, "keyframe_enlarge") if enlarge is not None else None,
        border_radius=4,
    )
    tag = tagged(box, f"thumb-{key}", label=text(strings, "keyframe_enlarge"))
    tag.visible = thumbnail is not None
    return tag


class ReviewRow:
    """One answer; its controls live as long as the event is listed."""

    def __init__(
        self,
        event_id: str,
        strings: Mapping[str, str],
        thumbnail: bytes | None = None,
        enlarge: Enlarge | None = None,
    ) -> None:
        self.event_id = event_id
        self._s = strings
        self._on_review: ReviewHandler | None = None
        self._revising = False
        self.staged: str | None = None  # a correction picked and not saved yet
        self._history_len = 0
        self._allowed: tuple[str, ...] = ()
        self._question = ""
        self.entry: TimelineEntry | None = None

        self.icon = ft.Icon(ft.Icons.CIRCLE, size=24)
        # What was judged, as the model got it (read once: a row lives as long as its event is listed).
        self.thumb_box = _thumb(event_id, strings, thumbnail, (64, 48), enlarge)
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
            label=text(strings, "review_correct"), width=170, dense=True, on_select=lambda _: self._on_pick()
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
        self,
        entry: TimelineEntry,
        allowed: tuple[str, ...],
        on_review: ReviewHandler,
        read_only: bool,
        question: str = "",
    ) -> None:
        s, e = self._s, entry.event
        self.entry, self._on_review, self._allowed, self._question = entry, on_review, allowed, question
        if len(entry.history) != self._history_len:  # a verdict was recorded: start the next one clean
            self._history_len = len(entry.history)
            self._revising = False
            self.note.value = ""
            self.staged = None
        # The examiner's verdict leads once given; what the model said stays beside it.
        style = mark_style(entry.verdict)
        self.icon.icon, self.icon.color = style.icon, style.colour
        answer = answer_word(s, entry.verdict)
        if entry.review is Review.CORRECTED:
            answer = text(s, "review_verdict_over_model", answer=answer, model=answer_word(s, e.observation))
        self.answer.value = f"{question or signal_words(s, e.signal)} — {answer}"
        self.answer.color = style.colour
        self.icon.semantics_label = text(s, "review_model_said", answer=answer_word(s, e.observation))
        self.when.value = when_taken(s, e.t, e.wall_time, e.source, e.still)
        self.reason.visible = e.parse_status != ParseStatus.VALID
        self.reason.value = reason_words(s, e.parse_reason) if self.reason.visible else ""

        reviewed = entry.review is not Review.PENDING
        self.history_box.visible = reviewed
        self.history.controls = [ft.Text(describe_review(s, r), size=13) for r in entry.history]

        choices = [v for v in allowed if v != e.observation]
        self.correct.options = [ft.DropdownOption(key=v, text=answer_word(s, v)) for v in choices]
        self.staged = self.staged if self.staged in choices else None
        self.correct.value = self.staged  # a pick survives a live session's re-render until saved
        self.correct.disabled = not choices
        self.correct.tooltip = (
            None if choices else text(s, "review_answers_unknown" if not allowed else "review_correct_none")
        )
        self._label_confirm()

        editing = not read_only and (not reviewed or self._revising)
        self.actions.visible = editing
        self.change_row.visible = not read_only and reviewed
        self.change.content = text(s, "review_cancel_change" if self._revising else "review_change")

    def said(self) -> list[str]:
        """The answer as the row shows it, for the enlarged keyframe."""
        return [self.answer.value or ""]

    # --- events ---------------------------------------------------------------------

    def verdict(self) -> Verdict:
        """What this row records now: the picked correction or a confirmation, with its note."""
        return Verdict(self.event_id, self.staged, self.note.value or "")

    def _label_confirm(self) -> None:
        saving = self.staged is not None
        self.confirm.content = text(self._s, "review_save_correction" if saving else "review_confirm")
        self.confirm.icon = ft.Icons.SAVE if saving else ft.Icons.CHECK

    def _on_pick(self) -> None:
        self.staged = self.correct.value or None
        self._label_confirm()

    def _on_confirm(self) -> None:
        if self._on_review is not None:
            self._on_review([self.verdict()], self._revise_flag())

    def _revise_flag(self) -> bool:
        return self.entry is not None and self.entry.review is not Review.PENDING

    def _toggle_change(self) -> None:
        # View-local: shows the verdict controls again. Flet updates the page after a handler.
        self._revising = not self._revising
        if self.entry is not None and self._on_review is not None:
            self.render(self.entry, self._allowed, self._on_review, read_only=False, question=self._question)


class _SignalLine:
    """One signal's answer inside a keyframe's review: verdict, reason, history, its own correction
    (picked, saved with the keyframe's verdicts) and its own note."""

    def __init__(self, event_id: str, strings: Mapping[str, str], on_pick: Callable[[str, str], None]) -> None:
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
            on_select=lambda e: on_pick(event_id, e.control.value or ""),
        )
        self.note = ft.TextField(label=text(strings, "review_note"), dense=True, width=170)
        self.correct_box = tagged(self.correct, f"correct-{event_id}")
        self._edit_controls: list[ft.Control] = [self.correct_box, tagged(self.note, f"note-{event_id}")]
        # Shown while this answer may be given a verdict; a Semantics' own visibility is never changed.
        self.edit = ft.Container()
        self.fit(wide=True)
        self.root = ft.Row(
            [
                self.icon,
                ft.Column([self.answer, self.reason_box, self.history], spacing=2, expand=True),
                self.edit,
            ],
            vertical_alignment=ft.CrossAxisAlignment.START,
        )

    def fit(self, wide: bool) -> None:
        """The correction and the note side by side on a wide window, one above the other on a phone."""
        self.edit.content = (
            ft.Row(self._edit_controls, spacing=8) if wide else ft.Column(self._edit_controls, spacing=4)
        )


class KeyframeReviewRow:
    """A checklist's keyframe: its thumbnail once, every signal's answer with its own correction (to
    that signal's answers only) and note, and "Confirm all", which records every line's verdict at once:
    the corrections picked, the model's answer confirmed on the other lines."""

    def __init__(
        self,
        key: str,
        strings: Mapping[str, str],
        thumbnail: bytes | None = None,
        roomy: bool = False,
        enlarge: Enlarge | None = None,
    ) -> None:
        """`roomy`: the list has the window's width (Sessions), not a column beside the preview."""
        self.key = key
        self._roomy = roomy  # the keyframe's first answer's event id: unique across sessions
        self._s = strings
        self._on_review: ReviewHandler | None = None
        self._revising = False
        self.staged: dict[str, str] = {}  # event id -> a correction picked and not saved yet
        self._reviews = 0
        self._entries: tuple[TimelineEntry, ...] = ()
        self._render_args: tuple[Mapping[str, tuple[str, ...]], bool, Mapping[str, str]] = ({}, False, {})
        self.lines: dict[str, _SignalLine] = {}
        self._wide = True
        self.thumb_box = _thumb(key, strings, thumbnail, (96, 72), enlarge)
        self.when = ft.Text("", size=12, color=ft.Colors.GREY_700)
        self.status = ft.Text("", size=13, weight=ft.FontWeight.W_500)
        self.line_column = ft.Column(spacing=6)
        self.confirm_all = ft.Button(
            text(strings, "review_confirm_all"), icon=ft.Icons.DONE_ALL, on_click=lambda _: self._on_confirm_all()
        )
        self.actions = ft.Row([tagged(self.confirm_all, f"confirm-all-{key}")])
        self.change = ft.TextButton(
            text(strings, "review_change_all"), icon=ft.Icons.EDIT_OUTLINED, on_click=lambda _: self._toggle_change()
        )
        self.change_row = ft.Row([tagged(self.change, f"revise-{key}")])
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
        self._wide = wide
        for line in self.lines.values():
            line.fit(wide and self._roomy)

    def render(
        self,
        entries: tuple[TimelineEntry, ...],
        allowed: Mapping[str, tuple[str, ...]],
        on_review: ReviewHandler,
        read_only: bool,
        questions: Mapping[str, str] | None = None,
    ) -> None:
        """`entries`: the keyframe's answers in the order asked; `allowed`: event id -> answers;
        `questions`: signal -> its words as the session asked it."""
        s = self._s
        self._entries, self._on_review = entries, on_review
        self._render_args = (allowed, read_only, questions or {})
        reviews = sum(len(e.history) for e in entries)
        fresh = reviews != self._reviews  # a verdict was recorded: the next one starts clean
        if fresh:
            self._reviews, self._revising = reviews, False
            self.staged = {}
        first = entries[0].event
        self.when.value = when_taken(s, first.t, first.wall_time, first.source, first.still)
        pending = [e for e in entries if e.review is Review.PENDING]
        self.status.value = (
            text(s, "review_keyframe_pending", n=len(pending), m=len(entries))
            if pending
            else text(s, "review_keyframe_done", m=len(entries))
        )
        editing = not read_only and (bool(pending) or self._revising)
        if [e.event.event_id for e in entries] != list(self.lines):
            self.lines = {e.event.event_id: _SignalLine(e.event.event_id, s, self._on_pick) for e in entries}
            self.fit(self._wide)
            self.line_column.controls = [line.root for line in self.lines.values()]
        for entry in entries:
            line = self.lines[entry.event.event_id]
            if fresh:
                line.note.value = ""
            words = (questions or {}).get(entry.event.signal) or signal_words(s, entry.event.signal)
            self._render_line(line, entry, allowed.get(entry.event.event_id, ()), editing, words)
        self._label_confirm_all()
        self.actions.visible = editing
        self.change_row.visible = not read_only and not pending
        self.change.content = text(s, "review_cancel_change" if self._revising else "review_change_all")

    def _render_line(
        self, line: _SignalLine, entry: TimelineEntry, allowed: tuple[str, ...], editing: bool, question: str
    ) -> None:
        s, e = self._s, entry.event
        kind = point_kind(entry)  # as the timeline marks it: a question the gate left unasked is "not checked"
        style = mark_style(kind)
        line.icon.icon, line.icon.color = style.icon, style.colour
        line.icon.semantics_label = text(s, "review_model_said", answer=answer_word(s, e.observation))
        answer = answer_word(s, kind)
        if entry.review is Review.CORRECTED:
            answer = text(s, "review_verdict_over_model", answer=answer, model=answer_word(s, e.observation))
        line.answer.value = f"{question} — {answer}"
        line.answer.color = style.colour
        line.reason_box.visible = e.parse_status != ParseStatus.VALID
        line.reason.value = reason_words(s, e.parse_reason) if line.reason_box.visible else ""
        line.history.controls = [ft.Text(describe_review(s, r), size=12) for r in entry.history]
        choices = [v for v in allowed if v != e.observation]
        line.correct.options = [ft.DropdownOption(key=v, text=answer_word(s, v)) for v in choices]
        if self.staged.get(e.event_id) not in choices:
            self.staged.pop(e.event_id, None)
        line.correct.value = self.staged.get(e.event_id)  # a pick survives a live session's re-render
        line.correct.disabled = not choices
        line.edit.visible = editing and (entry.review is Review.PENDING or self._revising)

    def said(self) -> list[str]:
        """Every question's answer as the row shows it, for the enlarged keyframe."""
        return [line.answer.value or "" for line in self.lines.values()]

    # --- events ---------------------------------------------------------------------

    def verdicts(self) -> list[Verdict]:
        """What "Confirm all" records now: every answer still waiting (every one when revising), each
        with the correction picked on its line, or confirmed, and its own line's note."""
        return [
            Verdict(e.event.event_id, self.staged.get(e.event.event_id), self.lines[e.event.event_id].note.value or "")
            for e in self._entries
            if self._revising or e.review is Review.PENDING
        ]

    def _label_confirm_all(self) -> None:
        saving = bool(self.staged)
        self.confirm_all.content = text(self._s, "review_save_all" if saving else "review_confirm_all")
        self.confirm_all.icon = ft.Icons.SAVE if saving else ft.Icons.DONE_ALL

    def _on_pick(self, event_id: str, value: str) -> None:
        if value:
            self.staged[event_id] = value
        self._label_confirm_all()

    def _on_confirm_all(self) -> None:
        verdicts = self.verdicts()
        if self._on_review is not None and verdicts:
            self._on_review(verdicts, self._revising)

    def _toggle_change(self) -> None:
        self._revising = not self._revising
        self.staged = {}
        if self._on_review is not None and self._entries:
            allowed, read_only, questions = self._render_args
            self.render(self._entries, allowed, self._on_review, read_only, questions)


class ReviewList:
    """Pending answers first (oldest first), then the reviewed ones; `root` is the control to place."""

    def __init__(
        self,
        strings: Mapping[str, str] = EN,
        read_only: bool = False,
        thumbnails: Thumbnails = no_pictures,
        roomy: bool = False,
    ) -> None:
        """`roomy`: the list has the window's width (Sessions), not a column beside the preview (Practice)."""
        self._s = strings
        self._roomy = roomy
        self._read_only = read_only
        self._thumbnails = thumbnails
        self.rows: dict[str, ReviewRow | KeyframeReviewRow] = {}  # by the (first) answer's event id
        self._wide = True
        self.pending_title = ft.Text(text(strings, "review_pending_title", n=0), weight=ft.FontWeight.BOLD, size=16)
        self.none_pending = ft.Text(text(strings, "review_none_pending"), color=ft.Colors.GREY_700)
        self.pending = ft.Column(spacing=8)
        # Several waiting one-question answers: every one's verdict (its pick or a confirmation, its note) at once.
        self.confirm_waiting = ft.Button(
            text(strings, "review_confirm_waiting", n=0), icon=ft.Icons.DONE_ALL, on_click=lambda _: self._on_waiting()
        )
        self.confirm_waiting_box = tagged(self.confirm_waiting, "confirm-all-waiting")
        self._on_review: ReviewHandler | None = None
        self.done_title = ft.Text(text(strings, "review_done_title", n=0), weight=ft.FontWeight.BOLD, size=16)
        self.done = ft.Column(spacing=8)
        # The wrapper hides, not the title: a Semantics node's content must stay visible.
        self.done_box = tagged(self.done_title, "review-done-title")
        self.root = ft.Column(
            [
                tagged(self.pending_title, "review-pending-title"),
                self.confirm_waiting_box,
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
        on_review: ReviewHandler,
        questions: Mapping[str, str] | None = None,
    ) -> None:
        """Show `entries`; `allowed_values` is the profile's answers, or a mapping event_id -> answers.
        `questions`: signal -> its question as the session asked it (`session_questions`), so the list
        reads as the card did (default: the signal's words). A keyframe with several answers (a
        checklist's) is one row. `on_review` records the verdicts a row (or "Confirm all waiting")
        gives, all or none."""
        questions = questions or {}
        self._on_review = on_review
        rows: dict[str, ReviewRow | KeyframeReviewRow] = {}
        pending: list[ft.Control] = []
        done: list[ft.Control] = []
        for group in keyframe_groups(entries):
            key = group[0].event.event_id
            row = self.rows.get(key)
            if len(group) == 1:
                if not isinstance(row, ReviewRow):
                    row = ReviewRow(key, self._s, self._thumbnails(key), self._enlarge)
                row.fit(self._wide)
                question = questions.get(group[0].event.signal, "")
                row.render(group[0], _values_for(allowed_values, key), on_review, self._read_only, question)
            else:
                if not isinstance(row, KeyframeReviewRow):
                    row = KeyframeReviewRow(key, self._s, self._thumbnails(key), self._roomy, self._enlarge)
                row.fit(self._wide)
                allowed = {e.event.event_id: _values_for(allowed_values, e.event.event_id) for e in group}
                row.render(group, allowed, on_review, self._read_only, questions)
            rows[key] = row
            waiting = any(e.review is Review.PENDING for e in group)
            (pending if waiting else done).append(row.root)
        self.rows = rows
        self.pending.controls = pending
        self.done.controls = done
        self.pending_title.value = text(self._s, "review_pending_title", n=len(pending))
        self.done_title.value = text(self._s, "review_done_title", n=len(done))
        self.none_pending.visible = not pending
        self.done_box.visible = bool(done)
        single_waiting = len(self._waiting_rows())
        self.confirm_waiting_box.visible = not self._read_only and single_waiting > 1
        self.confirm_waiting.content = text(self._s, "review_confirm_waiting", n=single_waiting)

    def enlarged(self, key: str, page_size: tuple[float | None, float | None]) -> ft.AlertDialog | None:
        """The dialog showing row `key`'s keyframe large, with where and when it was taken and what each
        question got; None when no picture of it was kept."""
        row = self.rows.get(key)
        picture, note = self._thumbnails(key, large=True), ""
        if picture is None:  # an older session, or a full disk: the thumbnail is what there is
            picture, note = self._thumbnails(key), text(self._s, "keyframe_no_copy")
        if row is None or picture is None:
            return None
        return keyframe_dialog(self._s, picture, row.when.value or "", row.said(), page_size, self._close, note)

    def _enlarge(self, key: str) -> None:
        page = self.root.page
        dialog = self.enlarged(key, (page.width, page.height))
        if dialog is not None:
            page.show_dialog(dialog)

    def _close(self) -> None:
        self.root.page.pop_dialog()

    def _waiting_rows(self) -> list[ReviewRow]:
        return [
            row
            for row in self.rows.values()
            if isinstance(row, ReviewRow) and row.entry is not None and row.entry.review is Review.PENDING
        ]

    def _on_waiting(self) -> None:
        verdicts = [row.verdict() for row in self._waiting_rows()]
        if self._on_review is not None and verdicts:
            self._on_review(verdicts, False)


def keyframe_groups(entries: Sequence[TimelineEntry]) -> list[tuple[TimelineEntry, ...]]:
    """The entries by keyframe, oldest first; a keyframe's answers in the order they were recorded."""
    groups: dict[str, list[TimelineEntry]] = {}
    for entry in sorted(entries, key=lambda e: e.event.t):  # sorted() is stable: the recorded order stays
        groups.setdefault(entry.event.keyframe_id, []).append(entry)
    return [tuple(group) for group in groups.values()]
