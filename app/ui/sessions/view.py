"""The Sessions screen: the list of recorded sessions, and one session with its summary,
timeline, answers to confirm or correct, and export.

The view renders a `SessionsState` and forwards clicks to the controller; it keeps
no state of its own beyond its controls. Saving an export goes through `save_file`
(see `file_picker_saver`), so the view never touches the page or the file system.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping

import flet as ft

from app.core.notice import Notice
from app.core.rhythm import RhythmConfig
from app.core.rhythm_figures import LONG_PAUSE_S, shown_rate
from app.core.rhythm_summary import RhythmSummary
from app.core.session import SessionAsked
from app.core.session_summary import SessionSummary, SignalSummary
from app.ui.parts.names_dialog import names_dialog, names_line
from app.ui.parts.review_list import ReviewList
from app.ui.parts.timeline import TimelineChart, ordered_counts, question_words
from app.ui.parts.widgets import NoticeBar, panel, tagged
from app.ui.sessions.controller import (
    EXPORT_FORMATS,
    OpenedSession,
    SessionRow,
    SessionsController,
    SessionsState,
)
from app.ui.sessions.progress_view import ProgressBlock
from app.ui.words import text
from app.ui.words.sessions import EN, answer_word, session_questions, sessions_notice_text, source_words

# The rhythm block's figures, in the order shown; each Text is tagged `rhythm-summary-<key>`.
RHYTHM_FIGURES = ("times_guessed", "count", "rate", "band", "pauses", "long_pauses", "ccf", "depth")

# (file name, contents) -> where it was saved (a path, or the name the browser downloads), None if cancelled.
SaveFile = Callable[[str, bytes], Awaitable[str | None]]


def file_picker_saver(picker: ft.FilePicker) -> SaveFile:
    """A `SaveFile` over the page's FilePicker service (create the picker inside the page's session)."""

    async def save(file_name: str, data: bytes) -> str | None:
        extension = file_name.rsplit(".", 1)[-1]
        where = await picker.save_file(
            file_name=file_name,
            src_bytes=data,  # required on web and mobile; on desktop Flet writes it to the chosen path
            file_type=ft.FilePickerFileType.CUSTOM,
            allowed_extensions=[extension],
        )
        if where is None and picker.page.web:
            return file_name  # the browser downloads the bytes and reports no path
        return where

    return save


def _one(many: str, one: str, n: int) -> str:
    """The string key for a count: English says "1 keyframe", not "1 keyframes"."""
    return one if n == 1 else many


def _date(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


class SessionsView:
    def __init__(
        self,
        controller: SessionsController,
        save_file: SaveFile | None = None,
        strings: Mapping[str, str] = EN,
        background: Callable[[Callable[[], None]], object] = lambda work: work(),
        print_report: Callable[[], object] | None = None,
    ) -> None:
        """`background` runs a refresh off the page's loop (the shell gives `page.run_thread`):
        reading many session files must not freeze every tab."""
        self._controller = controller
        self._background = background
        self._save_file = save_file
        self._s = s = strings
        self._questions: dict[str, str] = {}  # signal -> its words as the opened session asked it
        self._shown_session: str | None = None

        self.title = ft.Text(text(s, "sessions_title"), size=22, weight=ft.FontWeight.BOLD, expand=True)
        self.back = ft.IconButton(ft.Icons.ARROW_BACK, tooltip=text(s, "back"), on_click=lambda _: controller.close())
        self.back_box = tagged(self.back, "sessions-back", text(s, "back"))
        self.refresh = ft.IconButton(
            ft.Icons.REFRESH, tooltip=text(s, "sessions_refresh"), on_click=lambda _: self.reload()
        )
        header = ft.Row(
            [self.back_box, self.title, tagged(self.refresh, "sessions-refresh", text(s, "sessions_refresh"))]
        )

        self.notice = NoticeBar("sessions-notice", text(s, "dismiss"), controller.dismiss_notice)

        # The list, narrowed to one trainee (with their progress) when one is chosen
        self.trainee_filter = ft.Dropdown(
            label=text(s, "filter_label"),
            width=260,
            dense=True,
            on_select=lambda e: controller.show_trainee(e.control.value or ""),
        )
        self.trainee_filter_box = tagged(self.trainee_filter, "trainee-filter")
        self.progress = ProgressBlock(s)
        self.rows = ft.Column(spacing=4)
        self.empty = tagged(ft.Text(text(s, "sessions_empty"), color=ft.Colors.GREY_700), "sessions-empty")
        self.folder = ft.Text("", size=12, color=ft.Colors.GREY_700, selectable=True)
        self.list_box = ft.Column(
            [self.trainee_filter_box, self.progress.root, self.empty, self.rows, self.folder], spacing=8
        )

        # One session
        self.names = ft.Text("", weight=ft.FontWeight.W_500)
        self.names_edit = ft.TextButton(
            text(s, "names_button"), icon=ft.Icons.PERSON_OUTLINE, on_click=lambda _: self._edit_names()
        )
        self.names_row = ft.Row(
            [tagged(self.names, "session-names"), tagged(self.names_edit, "session-names-edit")],
            wrap=True,
            spacing=8,
            vertical_alignment=ft.CrossAxisAlignment.CENTER,
        )
        self.summary = ft.Column(spacing=4)
        # A camera or video session's compression rhythm: each figure its own tagged Text (Flutter would
        # merge a tagged row's texts into one node), the block hidden for a session without rhythm.
        self.rhythm_texts = {key: ft.Text("") for key in RHYTHM_FIGURES}
        self._rhythm_tags = {key: tagged(t, f"rhythm-summary-{key}") for key, t in self.rhythm_texts.items()}
        # Its own box, beside the summary's: tagged nodes inside the tagged summary split it, and the
        # summary's node then read only the rhythm's lines.
        rhythm_title = ft.Text(text(s, "rhythm_title"), weight=ft.FontWeight.BOLD)
        self.rhythm_box = panel(ft.Column([rhythm_title, *self._rhythm_tags.values()], spacing=4), visible=False)
        self.summary_box = tagged(
            panel(
                ft.Column(
                    [ft.Text(text(s, "summary_title"), weight=ft.FontWeight.BOLD, size=16), self.summary], spacing=6
                )
            ),
            "sessions-summary",
        )
        self.export_buttons = {
            fmt: ft.OutlinedButton(text(s, f"export_{fmt}"), icon=ft.Icons.DOWNLOAD, on_click=self._export_handler(fmt))
            for fmt in EXPORT_FORMATS
        }
        # The report in a tab of the browser, which prints it or saves it as a PDF (the web app only).
        self.print_button = ft.OutlinedButton(
            text(s, "print_report"), icon=ft.Icons.PRINT, on_click=lambda _: print_report() if print_report else None
        )
        self.delete = ft.TextButton(
            text(s, "delete_session"), icon=ft.Icons.DELETE_OUTLINE, on_click=lambda _: self._ask_delete(True)
        )
        self.delete_yes = ft.FilledButton(text(s, "delete_yes"), on_click=lambda _: self._delete())
        self.delete_no = ft.TextButton(text(s, "delete_no"), on_click=lambda _: self._ask_delete(False))
        self.delete_confirm = ft.Row(
            [
                ft.Text(text(s, "delete_confirm"), color=ft.Colors.RED_900),
                tagged(self.delete_yes, "session-delete-yes", text(s, "delete_yes")),
                tagged(self.delete_no, "session-delete-no", text(s, "delete_no")),
            ],
            wrap=True,
        )
        self.delete_confirm_box = tagged(self.delete_confirm, "session-delete-confirm")
        self.delete_confirm_box.visible = False
        exports = ft.Row(
            [
                *(
                    tagged(button, f"export-{fmt}", text(s, f"export_{fmt}"))
                    for fmt, button in self.export_buttons.items()
                ),
                *([tagged(self.print_button, "export-print", text(s, "print_report"))] if print_report else []),
                tagged(self.delete, "session-delete", text(s, "delete_session")),
            ],
            wrap=True,
            spacing=8,
        )
        self.timeline = TimelineChart(strings=s, rhythm=True)
        self.review_list = ReviewList(strings=s, thumbnails=controller.thumbnail, roomy=True)
        self.detail_box = ft.Column(
            [
                self.names_row,
                self.summary_box,
                self.rhythm_box,
                exports,
                self.delete_confirm_box,
                self.timeline.root,
                ft.Divider(),
                self.review_list.root,
            ],
            spacing=12,
        )

        body = ft.Column([self.list_box, self.detail_box], scroll=ft.ScrollMode.AUTO, expand=True)
        self.root = ft.Container(
            content=ft.Column([header, self.notice.root, body], expand=True, spacing=8),
            padding=16,
            expand=True,
        )
        self.render(controller.state)

    # --- rendering ------------------------------------------------------------------

    def arrange(self, wide: bool) -> None:
        self.review_list.fit(wide)

    def reload(self) -> None:
        """The folder listed again, off the page's loop."""
        self._background(self._controller.refresh)

    def render(self, state: SessionsState) -> None:
        """Show `state`; the caller then calls `page.update()`."""
        opened = state.opened
        self._render_notice(state.notice)
        self.back_box.visible = opened is not None
        self.list_box.visible = opened is None
        self.detail_box.visible = opened is not None
        if opened is None:
            self._shown_session = None
            self.title.value = text(self._s, "sessions_title")
            self._render_list(state)
        else:
            self._render_session(opened)

    def _render_notice(self, notice: Notice | None) -> None:
        if notice is None:
            self.notice.show(None)
        else:
            self.notice.show(sessions_notice_text(self._s, notice), notice.error)

    def _render_list(self, state: SessionsState) -> None:
        named = state.trainees
        self.trainee_filter_box.visible = bool(named)
        self.trainee_filter.options = [
            ft.DropdownOption(key="", text=text(self._s, "filter_all")),
            *(ft.DropdownOption(key=name, text=name) for name in named),
        ]
        self.trainee_filter.value = state.trainee
        self.progress.render(state.trainee, state.progress)
        self.rows.controls = [self._row(r) for r in state.shown_rows]
        self.empty.visible = state.listed and not state.rows
        self.folder.value = text(self._s, "sessions_folder", folder=str(state.folder))

    def _row(self, row: SessionRow) -> ft.Control:
        s = self._s
        if not row.readable or row.summary is None:
            tile = ft.ListTile(
                leading=ft.Icon(ft.Icons.ERROR_OUTLINE, color=ft.Colors.RED_800),
                title=ft.Text(text(s, "row_unreadable", name=row.label, detail=row.error)),
                disabled=True,
            )
            return tagged(tile, f"session-row-{row.session_id}")
        summary = row.summary
        date = _date(row.started if row.started is not None else row.modified)
        # Start, length and source first: what tells one practice from the next.
        heading = [text(s, "row_title", date=date)]
        if row.duration_s is not None:
            heading.append(text(s, "row_duration", seconds=f"{row.duration_s:.0f}"))
        if row.source:
            heading.append(source_words(s, row.source, row.images))
        parts = [text(s, "row_model", model=row.model_id) if row.model_id else text(s, "row_no_model")]
        if row.trainee or row.examiner:
            parts.insert(0, names_line(s, row.trainee, row.examiner))
        if summary.signals:  # answers to different questions are never added up as if they were one
            parts.append(text(s, "row_checklist", n=summary.keyframes, questions=len(summary.signals)))
            parts.append(text(s, "row_reviewed_answers", n=summary.reviewed, m=summary.analysed))
        else:
            parts.append(
                text(
                    s, "row_counts", yes=summary.count("yes"), no=summary.count("no"), unknown=summary.count("unknown")
                )
            )
            parts.append(text(s, "row_reviewed", n=summary.reviewed, m=summary.analysed))
        if summary.damaged_lines:
            parts.append(text(s, "row_damaged", n=summary.damaged_lines))
        tile = ft.ListTile(
            leading=ft.Icon(ft.Icons.HISTORY),
            title=ft.Text(" · ".join(heading), weight=ft.FontWeight.W_500),
            subtitle=ft.Text(" · ".join(parts)),
            trailing=ft.Icon(ft.Icons.CHEVRON_RIGHT),
            on_click=lambda _, sid=row.session_id: self._controller.open(sid),
        )
        return tagged(tile, f"session-row-{row.session_id}", text(s, "open_session", date=date))

    def _ask_delete(self, asking: bool) -> None:
        self.delete_confirm_box.visible = asking
        self.delete.disabled = asking
        self.delete_confirm_box.update()
        self.delete.update()

    def _delete(self) -> None:
        opened = self._controller.state.opened
        self.delete_confirm_box.visible = False
        self.delete.disabled = False
        if opened is not None:
            self._background(lambda: self._controller.delete(opened.row.session_id))

    def _render_session(self, opened: OpenedSession) -> None:
        s = self._s
        row = opened.row
        if self._shown_session != row.session_id:
            self._shown_session = row.session_id
            self.review_list.clear()
            self.delete_confirm_box.visible = False
            self.delete.disabled = False
        self.title.value = text(s, "session_heading", date=_date(row.started if row.started else row.modified))
        self.names.value = names_line(s, opened.state.trainee, opened.state.examiner)
        self._questions = session_questions(s, opened.state)  # the session's own words, not today's profile's
        asked = self.asked_line(opened.state.asked)
        self.summary.controls = [ft.Text(line) for line in (asked, *self.summary_lines(opened.summary))]
        self._render_rhythm(opened.rhythm)
        self.timeline.update(opened.state)
        self.review_list.render(
            opened.state.timeline,
            opened.allowed,
            self._controller.review,
            session_questions(s, opened.state),
        )
        for fmt, button in self.export_buttons.items():
            button.disabled = self._save_file is None or (fmt == "rhythm" and opened.rhythm is None)
        rhythm_button = self.export_buttons.get("rhythm")
        if rhythm_button is not None:  # why it is greyed out, in words
            rhythm_button.tooltip = text(s, "export_rhythm_none") if opened.rhythm is None else None

    def _edit_names(self) -> None:
        opened = self._controller.state.opened
        if opened is None:
            return
        page = self.root.page
        state = opened.state
        page.show_dialog(names_dialog(self._s, state.trainee, state.examiner, self._controller.name, page.pop_dialog))

    def _render_rhythm(self, rhythm: RhythmSummary | None) -> None:
        self.rhythm_box.visible = rhythm is not None
        if rhythm is not None:
            for key, line in self.rhythm_lines(rhythm).items():
                self.rhythm_texts[key].value = line
            # A pause over the guidelines' 10 s in colour and bold as well as in words.
            self._rhythm_tags["times_guessed"].visible = rhythm.frame_times_guessed  # said first, as a warning
            self.rhythm_texts["times_guessed"].color = ft.Colors.ORANGE_900
            long_pauses = self.rhythm_texts["long_pauses"]
            long_pauses.color = ft.Colors.RED_800 if rhythm.long_pause_count else None
            long_pauses.weight = ft.FontWeight.BOLD if rhythm.long_pause_count else None

    def rhythm_lines(self, rhythm: RhythmSummary) -> dict[str, str]:
        """The rhythm's figures in words, by the Text they go to (`RHYTHM_FIGURES`)."""
        s = self._s
        low, high = rhythm.target
        if rhythm.median_rate_per_min is None:
            rate = text(s, "rhythm_rate_none", low=low, high=high)
        else:
            rate = text(s, "rhythm_rate", rate=shown_rate(rhythm.median_rate_per_min), low=low, high=high)
        share = rhythm.in_band_share
        if share is None:
            band = text(s, "rhythm_band_none")
        else:
            band = text(
                s,
                "rhythm_band",
                in_band=f"{rhythm.seconds_in_band:.0f}",
                with_rate=f"{rhythm.seconds_with_rate:.0f}",
                percent=f"{100 * share:.0f}",
                slow=f"{rhythm.seconds_slow:.0f}",
                fast=f"{rhythm.seconds_fast:.0f}",
            )
        pause_s = f"{RhythmConfig().pause_s:g}"
        longest = rhythm.longest_pause_s
        if longest is None:
            pauses = text(s, "rhythm_pauses_none", seconds=pause_s)
        else:
            pauses = text(s, "rhythm_pauses", seconds=pause_s, n=len(rhythm.pauses), longest=f"{longest:.1f}")
        ccf = rhythm.compression_fraction
        fps = "—" if rhythm.frame_rate is None else f"{rhythm.frame_rate:.0f}"
        return {
            "times_guessed": text(s, "rhythm_times_guessed", fps=fps) if rhythm.frame_times_guessed else "",
            "count": text(s, "rhythm_count", count=rhythm.count, seconds=f"{rhythm.seconds:.0f}"),
            "rate": rate,
            "band": band,
            "pauses": pauses,
            "long_pauses": text(s, "rhythm_long_pauses", limit=f"{LONG_PAUSE_S:g}", n=rhythm.long_pause_count),
            "ccf": text(s, "rhythm_ccf_none") if ccf is None else text(s, "rhythm_ccf", percent=f"{100 * ccf:.0f}"),
            "depth": text(s, "rhythm_not_measured"),
        }

    def asked_line(self, asked: SessionAsked | None) -> str:
        """What the session asked and with which model, from its own first line."""
        s = self._s
        if asked is None:
            return text(s, "summary_asked_unknown")
        return text(
            s,
            "summary_asked",
            title=asked.title(s.get("language", "en")),
            profile=asked.profile_id,
            sha=asked.profile_sha256[:12] or "—",
            model=asked.model_id,
            revision=asked.model_revision,
        )

    def summary_lines(self, summary: SessionSummary) -> list[str]:
        s = self._s
        checklist = bool(summary.signals)
        if checklist:  # each question apart: answers to different questions never add up
            lines = [
                text(
                    s,
                    _one("summary_keyframes_questions", "summary_keyframe_questions", summary.keyframes),
                    n=summary.keyframes,
                    questions=len(summary.signals),
                ),
                *(line for signal in summary.signals for line in self._signal_lines(signal)),
            ]
        else:
            lines = [
                text(
                    s,
                    _one("summary_counts", "summary_counts_one", summary.analysed),
                    n=summary.analysed,
                    counts=self._listed(summary.counts),
                ),
                text(s, "summary_verdicts", counts=self._listed(summary.verdicts)),
            ]
        lines.append(
            text(s, "summary_skipped", skipped=summary.skipped, unchanged=summary.unchanged, failed=summary.failed)
        )
        lines.append(
            text(
                s,
                "summary_reviewed_answers" if checklist else "summary_reviewed",
                reviewed=summary.reviewed,
                analysed=summary.analysed,
                pending=summary.pending,
            )
        )
        if not checklist:  # a checklist's agreement is said per question, above
            lines.append(self._agreement(summary))
        if summary.revised:
            lines.append(text(s, "summary_revised", n=summary.revised))
        if summary.damaged_lines:
            lines.append(text(s, "summary_damaged", n=summary.damaged_lines))
        lines.append(text(s, "summary_generative"))
        return lines

    def _signal_lines(self, signal: SignalSummary) -> list[str]:
        """One question of a checklist: the model's answers, then the examiner's progress and agreement."""
        s = self._s
        return [
            text(
                s,
                "signal_counts",
                question=question_words(s, signal.signal, self._questions),
                counts=self._listed(signal.counts),
            ),
            text(
                s,
                "summary_signal_review",
                reviewed=signal.reviewed,
                analysed=signal.analysed,
                agreement=self._agreement(signal),
            ),
        ]

    def _listed(self, counts: tuple[tuple[str, int], ...]) -> str:
        s = self._s
        said = (text(s, "summary_count_item", n=n, answer=answer_word(s, value)) for value, n in ordered_counts(counts))
        return ", ".join(said) or text(s, "summary_no_answers")

    def _agreement(self, figures: SessionSummary | SignalSummary) -> str:
        """Agreement with the examiner (confirmed of reviewed), never called accuracy: the examiner is the reference."""
        if figures.agreement is None:
            return text(self._s, "summary_agreement_none")
        return text(
            self._s,
            "summary_agreement",
            percent=f"{100 * figures.agreement:.0f}",
            confirmed=figures.confirmed,
            reviewed=figures.reviewed,
            corrected=figures.corrected,
        )

    # --- export ---------------------------------------------------------------------

    def _export_handler(self, fmt: str) -> Callable[[object], Awaitable[None]]:
        # Flet awaits a handler only when it is itself a coroutine function (not a lambda returning one).
        async def handler(_: object) -> None:
            await self.export(fmt)

        return handler

    async def export(self, fmt: str) -> None:
        """Ask the save dialog for the opened session as `fmt` (one of `EXPORT_FORMATS`); the outcome becomes a
        notice."""
        export = self._controller.export(fmt)
        if export is None or self._save_file is None:
            return
        try:
            where = await self._save_file(export.file_name, export.data)
        except Exception as exc:  # a dialog or write failure is the user's to read, never a crashed handler
            self._controller.export_failed(export.file_name, str(exc) or type(exc).__name__)
        else:
            self._controller.export_finished(export.file_name, where)
