"""The Testers' screen: pick images and a labels file, run, read the matrix, export the rows.

The view renders a `TestersState` and forwards clicks to the controller; it keeps no
state of its own beyond its controls. Files arrive through `pick` (the shell's picker
and upload: the view never touches the page or the file system, except reading the
files the shell hands it), an export leaves through `save_file` (`file_picker_saver`).
A report's figures are a `ReportPanel`: one for a one-signal profile; for a checklist one per
signal, under its name (`SignalSection`), each with its own Keep this cut.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

import flet as ft

from app.core.durations import model_time_words
from app.core.generation import ParseStatus
from app.core.notice import Notice
from app.core.profile.checklist import Checklist
from app.evaluation.labels import MAX_LABELS_BYTES
from app.evaluation.report import ChecklistReport, Report, SignalReport, shown, signed
from app.evaluation.score_cut import CutTrade, threshold_words
from app.frames.limits import MAX_FILE_BYTES
from app.ui.parts.checklist_lines import signal_name
from app.ui.parts.widgets import NoticeBar, panel, tagged
from app.ui.testers.controller import (
    TesterRow,
    TestersController,
    TestersPhase,
    TestersState,
    labels_header,
    trade_figures,
)
from app.ui.testers.cut_chart import cut_chart
from app.ui.words import sessions as strings_sessions
from app.ui.words import text
from app.ui.words.sessions import answer_word
from app.ui.words.testers import EN

# (file name, contents) -> where it was saved, None if cancelled (see app.ui.sessions.view.file_picker_saver).
SaveFile = Callable[[str, bytes], Awaitable[str | None]]
Picked = Callable[[list[tuple[str, Path]]], None]
# (file type, several files?, size limit per file, what to do with the local copies) — the shell's
# `_pick_and_start`, run as a page task: it checks sizes before upload and uploads from a browser.
Pick = Callable[[ft.FilePickerFileType, bool, int, Picked], object]

THUMB = 44
WIDTHS = {"thumb": THUMB, "file": 170, "question": 170, "answer": 84, "expected": 84, "status": 84, "time": 70}
COLUMNS = ("file", "answer", "expected", "status", "time")
CHECKLIST_COLUMNS = ("file", "question", "answer", "expected", "status", "time")  # a row per image and signal
CELL = 96  # width of a confusion-matrix cell ("UNKNOWN" on one line)
# A ResponsiveRow's column: beside another on a wide window (HALF), or under it (WHOLE).
HALF: dict[str | ft.ResponsiveRowBreakpoint, int | float] = {"xs": 12, "lg": 6}
WHOLE: dict[str | ft.ResponsiveRowBreakpoint, int | float] = {"xs": 12}
ANSWER_COLOURS = {"yes": ft.Colors.GREEN_800, "no": ft.Colors.RED_800}
_PHASE_KEYS = {  # the phases a line under the progress bar names
    TestersPhase.PREPARING: "phase_preparing",
    TestersPhase.RUNNING: "phase_running",
    TestersPhase.DONE: "phase_done",
    TestersPhase.STOPPED: "phase_stopped",
}


class TestersView:
    def __init__(
        self,
        controller: TestersController,
        pick: Pick | None = None,
        save_file: SaveFile | None = None,
        strings: Mapping[str, str] = EN,
        language: str = "en",
    ) -> None:
        self._controller = controller
        self._pick = pick
        self._save_file = save_file
        self._s = s = strings
        self._language = language
        self._session_words = strings_sessions.TABLES[language]  # the shipped signals' short names
        self._row_keys: tuple[tuple[str, str], ...] = ()
        self._row_controls: list[dict[str, ft.Control]] = []

        title = ft.Text(text(s, "testers_title"), size=22, weight=ft.FontWeight.BOLD)
        intro = ft.Text(text(s, "testers_intro"), size=13, color=ft.Colors.GREY_800)
        self.pick_images = ft.OutlinedButton(
            text(s, "pick_images"), icon=ft.Icons.FOLDER_OPEN, on_click=lambda _: self._pick_images()
        )
        self.pick_labels = ft.OutlinedButton(
            text(s, "pick_labels"), icon=ft.Icons.LABEL_OUTLINE, on_click=lambda _: self._pick_labels()
        )
        self.clear_labels = ft.TextButton(text(s, "clear_labels"), on_click=lambda _: controller.clear_labels())
        # Hidden by its wrapper: a Semantics node's content must stay visible (app.ui.parts.widgets.tagged).
        self.clear_labels_box = tagged(self.clear_labels, "testers-clear-labels", text(s, "clear_labels"))
        self.run = ft.FilledButton(text(s, "run"), icon=ft.Icons.PLAY_ARROW, on_click=lambda _: self._run_or_stop())
        self.export = ft.OutlinedButton(text(s, "export_csv"), icon=ft.Icons.DOWNLOAD, on_click=self._export_handler())
        buttons = ft.Row(
            [
                tagged(self.pick_images, "testers-pick-images", text(s, "pick_images")),
                tagged(self.pick_labels, "testers-pick-labels", text(s, "pick_labels")),
                self.clear_labels_box,
                tagged(self.run, "testers-run", text(s, "run")),
                tagged(self.export, "testers-export", text(s, "export_csv")),
            ],
            wrap=True,
            spacing=8,
            run_spacing=8,
        )

        self.images_text = ft.Text("")
        self.labels_text = ft.Text("")
        self.label_problems = ft.Column(spacing=2)
        self.model_text = ft.Text(text(s, "model_loading"), color=ft.Colors.GREY_700, size=12)
        chosen = tagged(
            ft.Column([self.images_text, self.labels_text, self.label_problems, self.model_text], spacing=4),
            "testers-chosen",
        )

        self.notice = NoticeBar("testers-notice", text(s, "dismiss"), controller.dismiss_notice)

        self.progress_bar = ft.ProgressBar(value=0, bar_height=8, border_radius=4)
        self.progress_text = ft.Text(text(s, "progress_idle"))
        self.phase_text = ft.Text("", size=12, color=ft.Colors.GREY_700)
        progress = ft.Column(
            [
                tagged(self.progress_bar, "testers-progress-bar"),
                ft.Row(
                    [tagged(self.progress_text, "testers-progress"), tagged(self.phase_text, "testers-phase")],
                    wrap=True,
                    spacing=12,
                ),
            ],
            spacing=4,
        )

        # Against the labels: a one-signal profile's report, or a checklist's, one section per signal.
        self.panel = ReportPanel(s, "testers", controller.save_cut)
        self.labelled_box, self.matrix = self.panel.labelled_box, self.panel.matrix  # by the names tests read
        # Two signals side by side on a wide window: each one's matrix and curve as wide as a one-signal report's.
        self.signals_box = ft.ResponsiveRow(spacing=24, run_spacing=20, vertical_alignment=ft.CrossAxisAlignment.START)
        self._sections: dict[str, SignalSection] = {}
        self.summary_box = tagged(
            panel(
                ft.Column(
                    [
                        ft.Text(text(s, "summary_title"), weight=ft.FontWeight.BOLD, size=16),
                        self.panel.root,
                        self.signals_box,
                        ft.Text(text(s, "generative"), size=12, color=ft.Colors.GREY_700),
                    ],
                    spacing=6,
                )
            ),
            "testers-summary",
        )
        self.summary_cell = ft.Container(self.summary_box, col=HALF)

        # Per image
        self.table = ft.Column(spacing=2)
        # Where a checklist's time goes: one encode per picture, in its first question's time.
        time_note = ft.Text(text(s, "time_note_checklist"), size=12, color=ft.Colors.GREY_700)
        self.time_note_box = tagged(time_note, "testers-time-note")
        self.rows_box = ft.Column(
            [
                ft.Text(text(s, "rows_title"), weight=ft.FontWeight.BOLD, size=16),
                ft.Row([tagged(self.table, "testers-rows")], scroll=ft.ScrollMode.AUTO),
                self.time_note_box,
            ],
            spacing=6,
        )
        self.rows_cell = ft.Container(self.rows_box, col=HALF)

        body = ft.Column(
            [
                intro,
                buttons,
                chosen,
                ft.Text(text(s, "shared_worker"), size=12, color=ft.Colors.GREY_700),
                progress,
                # Side by side on a wide window, one under the other on a phone; a checklist's, with a row per
                # image and signal and a report per signal, one under the other on any window.
                ft.ResponsiveRow(
                    [self.summary_cell, self.rows_cell],
                    spacing=16,
                    run_spacing=16,
                    vertical_alignment=ft.CrossAxisAlignment.START,
                ),
            ],
            spacing=12,
            scroll=ft.ScrollMode.AUTO,
            expand=True,
        )
        self.root = ft.Container(
            content=ft.Column([title, self.notice.root, body], expand=True, spacing=8),
            padding=16,
            expand=True,
        )
        self.render(controller.state)

    # --- rendering ------------------------------------------------------------------

    def render(self, state: TestersState) -> None:
        """Show `state`; the caller then calls `page.update()`."""
        s = self._s
        self._render_notice(state.notice, state.checklist)
        running = state.running
        self.run.content = text(s, "stop" if running else "run")
        self.run.icon = ft.Icons.STOP if running else ft.Icons.PLAY_ARROW
        self.run.disabled = not running and not state.images
        self.pick_images.disabled = self.pick_labels.disabled = running
        self.clear_labels_box.visible = bool(state.labels_name)
        self.export.disabled = running or (state.report is None and state.checklist_report is None)
        chosen = text(s, "images_chosen", n=state.images) if state.images else text(s, "images_none")
        if state.skipped:
            chosen += " · " + text(s, "images_skipped", n=len(state.skipped), names=_few(state.skipped))
        self.images_text.value = chosen
        self._render_labels(state)
        self.model_text.visible = not state.model_ready
        total = state.total
        self.progress_bar.value = state.progress
        self.progress_text.value = (
            text(s, "progress", done=state.done, total=total) if total else text(s, "progress_idle")
        )
        key = _PHASE_KEYS.get(state.phase)
        self.phase_text.value = text(s, key, done=state.done, total=total) if key else ""
        self.summary_cell.col = self.rows_cell.col = HALF if state.checklist is None else WHOLE
        self._render_report(state)
        self._render_rows(state.rows, state.checklist)

    def _render_notice(self, notice: Notice | None, checklist: Checklist | None) -> None:
        if notice is None:
            self.notice.show(None)
            return
        values = dict(notice.values)
        if "signal" in values:
            values["signal"] = self._words(checklist, values["signal"])
        self.notice.show(text(self._s, notice.key, **values), notice.error)

    def _words(self, checklist: Checklist | None, signal: str) -> str:
        """A signal as the practice card names it, in this screen's language."""
        spec = next((spec for spec in checklist.signals if spec.signal == signal), None) if checklist else None
        if spec is None:
            return strings_sessions.signal_words(self._session_words, signal)
        return signal_name(spec, self._language, self._session_words)

    def _render_labels(self, state: TestersState) -> None:
        s = self._s
        if not state.labels_name and state.checklist is not None:
            self.labels_text.value = text(s, "labels_none_checklist", header=labels_header(state.checklist))
        elif not state.labels_name:
            self.labels_text.value = text(s, "labels_none")
        elif not state.values:
            self.labels_text.value = text(s, "labels_waiting", name=state.labels_name)
        else:
            self.labels_text.value = text(s, "labels_chosen", name=state.labels_name, n=state.labels_count)
        problems: list[ft.Control] = [
            ft.Text(text(s, "labels_row_error", detail=e), color=ft.Colors.RED_900, size=12) for e in state.label_errors
        ]
        problems += [ft.Text(text(s, "labels_note", detail=n), size=12) for n in state.label_notes]
        if state.missing:
            problems.append(
                ft.Text(text(s, "labels_missing", n=len(state.missing), names=_few(state.missing)), size=12)
            )
        if state.unlabelled:
            problems.append(
                ft.Text(text(s, "labels_unlabelled", n=len(state.unlabelled), names=_few(state.unlabelled)), size=12)
            )
        self.label_problems.controls = problems

    def _render_report(self, state: TestersState) -> None:
        report, checklist, per_signal = state.report, state.checklist, state.checklist_report
        self.summary_box.visible = report is not None or per_signal is not None
        self.panel.root.visible = report is not None
        if report is not None:
            self.panel.render(report, state.can_keep_cut)
        self.signals_box.visible = per_signal is not None
        if per_signal is not None and checklist is not None:
            self._render_signals(checklist, per_signal, state.can_keep_cut)

    def _render_signals(self, checklist: Checklist, report: ChecklistReport, can_keep_cut: bool) -> None:
        """A section per signal, in the checklist's order: its name, what the gate did, its figures."""
        names = tuple(s.signal for s in report.signals)
        if names != tuple(self._sections):
            self._sections = {
                name: SignalSection(self._s, name, functools.partial(self._controller.save_cut, signal=name))
                for name in names
            }
            self.signals_box.controls = [section.root for section in self._sections.values()]
        for signal in report.signals:
            words = self._words(checklist, signal.signal)
            gate = self._words(checklist, report.gate) if report.gate is not None else ""
            self._sections[signal.signal].render(signal, words, gate, report.gate_open, can_keep_cut)

    def _render_rows(self, rows: tuple[TesterRow, ...], checklist: Checklist | None) -> None:
        """A row per image; a checklist's, a row per image and signal, the image named on its first."""
        s = self._s
        columns = COLUMNS if checklist is None else CHECKLIST_COLUMNS
        keys = tuple((r.name, r.signal) for r in rows)
        if keys != self._row_keys:  # a new choice of images: new controls, then only values change
            self._row_keys = keys
            self._row_controls = [self._new_row(columns) for _ in rows]
            header = ft.Row(
                [
                    tagged(_cell("", WIDTHS["thumb"] + 8), "testers-col-image", text(s, "col_image")),
                    *(_cell(text(s, f"col_{k}"), WIDTHS[k], bold=True, right=k == "time") for k in columns),
                ],
                spacing=0,
            )
            self.table.controls = [header] + [
                tagged(ft.Row(list(c.values()), spacing=0), f"testers-row-{i}")
                for i, c in enumerate(self._row_controls)
            ]
        self.time_note_box.visible = checklist is not None
        self.rows_box.visible = bool(rows)
        none, waiting = text(s, "cell_none"), text(s, "cell_waiting")
        first_signal = rows[0].signal if rows else ""
        for row, controls in zip(rows, self._row_controls, strict=True):
            first = row.signal == first_signal  # an image's first row shows its picture and name
            thumb = controls["thumb"]
            assert isinstance(thumb, ft.Container)
            image = thumb.content
            assert isinstance(image, ft.Image)
            image.src = row.thumb or b""
            image.visible = row.thumb is not None and first
            _set_text(controls["file"], row.name if first else "")
            if checklist is not None:
                _set_text(controls["question"], self._words(checklist, row.signal))
            answer = answer_word(s, row.observed) if row.observed else (waiting if not row.finished else none)
            _set_text(controls["answer"], answer, ANSWER_COLOURS.get(row.observed or ""))
            _set_text(controls["expected"], answer_word(s, row.expected) if row.expected else none)
            status = text(s, f"status_{row.parse_status}") if row.parse_status else waiting
            _set_text(controls["status"], status, ft.Colors.RED_900 if row.parse_status == ParseStatus.ERROR else None)
            controls["status"].tooltip = _detail(s, row)
            _set_text(controls["time"], model_time_words(row.seconds, s) if row.seconds is not None else none)

    @staticmethod
    def _new_row(columns: tuple[str, ...]) -> dict[str, ft.Control]:
        image = ft.Image(src=b"", width=THUMB, height=THUMB, fit=ft.BoxFit.COVER, visible=False)
        return {
            "thumb": ft.Container(image, width=WIDTHS["thumb"] + 8, height=THUMB + 4, padding=ft.Padding.only(right=8)),
            **{k: _cell("", WIDTHS[k], right=k == "time") for k in columns},
        }

    # --- actions --------------------------------------------------------------------

    def _pick_images(self) -> None:
        if self._pick is not None:
            self._pick(ft.FilePickerFileType.IMAGE, True, MAX_FILE_BYTES, self._images_picked)

    def _pick_labels(self) -> None:
        if self._pick is not None:
            self._pick(ft.FilePickerFileType.ANY, False, MAX_LABELS_BYTES, self._labels_picked)

    def _images_picked(self, files: list[tuple[str, Path]]) -> None:
        # Read at once: the shell keeps only the newest upload, and a labels file may follow.
        try:
            images = [(name, path.read_bytes()) for name, path in files]
        except OSError as exc:
            self._controller.report_error("notice_upload_failed", detail=exc.strerror or str(exc))
            return
        self._controller.choose_images(images)

    def _labels_picked(self, files: list[tuple[str, Path]]) -> None:
        if not files:
            return
        name, path = files[0]
        try:
            data = path.read_bytes()
        except OSError as exc:
            self._controller.report_error("notice_upload_failed", detail=exc.strerror or str(exc))
            return
        self._controller.choose_labels(name, data)

    def _run_or_stop(self) -> None:
        if self._controller.state.running:
            self._controller.stop()
        else:
            self._controller.run()

    def _export_handler(self) -> Callable[[object], Awaitable[None]]:
        # Flet awaits a handler only when it is itself a coroutine function (not a lambda returning one).
        async def handler(_: object) -> None:
            await self.export_csv()

        return handler

    async def export_csv(self) -> None:
        export = self._controller.export()
        if export is None or self._save_file is None:
            return
        file_name, data = export
        try:
            where = await self._save_file(file_name, data)
        except Exception as exc:  # a dialog or write failure is the user's to read, never a crashed handler
            self._controller.export_failed(file_name, str(exc) or type(exc).__name__)
        else:
            self._controller.export_finished(file_name, where)


class ReportPanel:
    """One report's figures: counts, accuracy, unknown rate, yes-bias, the confusion matrix, precision and
    recall per answer, and the score cut's rows, each with Keep this cut (`keep(threshold)`). `tag` starts
    every node's identifier: "testers" for a one-signal profile's, "testers-<signal>" for a checklist's."""

    def __init__(self, strings: Mapping[str, str], tag: str, keep: Callable[[float], object]) -> None:
        self._s = s = strings
        self._tag = tag
        self._keep = keep
        self.counts_label = ft.Text("")
        self.accuracy_label = ft.Text("", weight=ft.FontWeight.W_500)
        self.unknown_label = ft.Text("")
        self.bias_label = ft.Text("")
        self.accuracy_text = tagged(self.accuracy_label, f"{tag}-accuracy")
        self.bias_text = tagged(self.bias_label, f"{tag}-yes-bias")
        self.summary_none = ft.Text(text(s, "summary_none"), color=ft.Colors.GREY_700)
        self.matrix = ft.Column(spacing=0)
        self.scores = ft.Column(spacing=0)
        self.curve = ft.Column(spacing=0)
        self.labelled_box = ft.Column(
            [
                ft.Text(text(s, "matrix_title"), weight=ft.FontWeight.W_500),
                ft.Row([tagged(self.matrix, f"{tag}-matrix")], scroll=ft.ScrollMode.AUTO),
                ft.Text(text(s, "scores_title"), weight=ft.FontWeight.W_500),
                ft.Row([tagged(self.scores, f"{tag}-scores")], scroll=ft.ScrollMode.AUTO),
                ft.Text(text(s, "curve_title"), weight=ft.FontWeight.W_500),
                ft.Text(text(s, "curve_help"), size=12, color=ft.Colors.GREY_700),
                ft.Row([tagged(self.curve, f"{tag}-curve")], scroll=ft.ScrollMode.AUTO),
            ],
            spacing=8,
        )
        self.root = ft.Column(
            [
                tagged(self.counts_label, f"{tag}-counts"),
                self.accuracy_text,
                tagged(self.unknown_label, f"{tag}-unknown-rate"),
                self.bias_text,
                self.summary_none,
                self.labelled_box,
            ],
            spacing=6,
        )

    def render(self, report: Report, can_keep_cut: bool) -> None:
        s = self._s
        c = report.counts
        none = text(s, "undefined")
        self.counts_label.value = text(
            s, "counts", images=c.images, answered=c.answered, errors=c.errors, unlabelled=c.unlabelled
        )
        labelled = report.has_labels
        self.accuracy_text.visible = labelled
        self.accuracy_label.value = text(
            s, "accuracy", value=_rate(report.accuracy, none), correct=c.correct, n=c.labelled_answered
        )
        self.unknown_label.value = text(
            s, "unknown_rate", value=_rate(report.unknown_rate, none), unknown=c.unknown, n=c.answered
        )
        self.bias_text.visible = labelled
        self.bias_label.value = text(
            s,
            "yes_bias",
            value=signed(report.yes_bias).replace("—", none),
            answer=answer_word(s, report.positive),
            predicted=_rate(report.predicted_positive_rate, none),
            true=_rate(report.true_positive_rate, none),
        )
        self.summary_none.visible = not labelled
        self.labelled_box.visible = labelled
        if labelled:
            self._render_matrix(report)
            self._render_scores(report)
            self._render_curve(report, can_keep_cut)

    def _render_matrix(self, report: Report) -> None:
        s = self._s
        head: list[ft.Control] = [_cell(text(s, "matrix_corner"), 130, bold=True)]
        head += [_cell(answer_word(s, c), CELL, bold=True, right=True) for c in report.columns]
        head.append(_cell(text(s, "matrix_total"), CELL, bold=True, right=True))
        rows: list[ft.Control] = [ft.Row(head, spacing=0)]
        for value, counts in zip(report.values, report.matrix, strict=True):
            cells: list[ft.Control] = [_cell(answer_word(s, value), 130, bold=True)]
            for column, n in zip(report.columns, counts, strict=True):
                box = _cell(str(n), CELL, right=True, strong=value == column and n > 0)
                cells.append(tagged(box, f"{self._tag}-cell-{value}-{column}"))
            cells.append(_cell(str(sum(counts)), CELL, right=True))
            rows.append(ft.Row(cells, spacing=0))
        totals = [sum(r[j] for r in report.matrix) for j in range(len(report.columns))]
        foot: list[ft.Control] = [_cell(text(s, "matrix_total"), 130, bold=True)]
        foot += [_cell(str(n), CELL, right=True) for n in totals]
        foot.append(_cell(str(sum(totals)), CELL, right=True))
        rows.append(ft.Row(foot, spacing=0))
        self.matrix.controls = rows

    def _render_scores(self, report: Report) -> None:
        s = self._s
        none = text(s, "undefined")
        keys = ("score_value", "precision", "recall", "score_expected", "score_predicted")
        rows: list[ft.Control] = [
            ft.Row(
                [_cell(text(s, k), 130 if i == 0 else 90, bold=True, right=i > 0) for i, k in enumerate(keys)],
                spacing=0,
            )
        ]
        for score in report.scores:
            tag = self._tag
            rows.append(
                ft.Row(
                    [
                        _cell(answer_word(s, score.value), 130, bold=True),
                        tagged(_cell(_rate(score.precision, none), 90, right=True), f"{tag}-precision-{score.value}"),
                        tagged(_cell(_rate(score.recall, none), 90, right=True), f"{tag}-recall-{score.value}"),
                        _cell(str(score.expected), 90, right=True),
                        _cell(str(score.predicted), 90, right=True),
                    ],
                    spacing=0,
                )
            )
        self.scores.controls = rows

    def _render_curve(self, report: Report, keep: bool) -> None:
        """The score cut's curve drawn, then its rows as `eval` prints them (the same points,
        app.evaluation.score_cut), each saying what it costs in answers and gains in accuracy."""
        s = self._s
        none = text(s, "undefined")
        curve = report.curve
        if not curve.scored:
            self.curve.controls = [tagged(ft.Text(text(s, "curve_no_scores")), f"{self._tag}-curve-none")]
            return
        keys = ("curve_threshold", "curve_coverage", "curve_accuracy", "curve_kept")
        widths = (110, 70, 70, 70)
        rows: list[ft.Control] = [
            cut_chart(s, curve, report.min_score, self._tag),
            ft.Row(
                [
                    _cell(text(s, k), w, bold=True, right=i > 0)
                    for i, (k, w) in enumerate(zip(keys, widths, strict=True))
                ],
                spacing=0,
            ),
        ]
        points = curve.shown_rows(report.min_score)
        for i, (point, threshold) in enumerate(
            zip(points, threshold_words([p.threshold for p in points]), strict=True)
        ):
            saved = report.min_score is not None and point.threshold == report.min_score
            if saved:
                threshold = text(s, "curve_saved", threshold=threshold)
            trade = curve.trade(point.threshold)
            cells: list[ft.Control] = [
                _cell(threshold, widths[0], bold=True),
                _cell(_rate(point.coverage, none), widths[1], right=True),
                _cell(_rate(point.accuracy, none), widths[2], right=True),
                _cell(f"{point.kept}/{point.labelled}", widths[3], right=True),
            ]
            # What the cut costs and gains, under its numbers (a narrow column could not hold it), in orange
            # when it gains nothing.
            warn = point.threshold > 0 and not trade.gains
            effect = ft.Text(
                self._effect(trade, point.threshold),
                size=12,
                color=ft.Colors.DEEP_ORANGE_900 if warn else ft.Colors.GREY_800,
            )
            # The numbers tagged apart from the button: a node holding a button reads as the button only.
            numbers = tagged(
                ft.Column(
                    [ft.Row(cells, spacing=0), ft.Container(effect, padding=ft.Padding.only(left=6, bottom=4))],
                    spacing=0,
                ),
                f"{self._tag}-cut-{i}",
            )
            row: list[ft.Control] = [numbers]
            if keep and point.threshold > 0 and not saved:
                word = text(s, "curve_keep" if trade.gains else "curve_keep_nothing")
                button = ft.TextButton(word, on_click=lambda _, t=point.threshold: self._keep(t))
                row.append(tagged(button, f"{self._tag}-keep-cut-{i}", word))
            rows.append(ft.Row(row, spacing=0, wrap=True))
        self.curve.controls = rows

    def _effect(self, trade: CutTrade, threshold: float) -> str:
        """A row's cost in answers and gain in accuracy against no cut, warned when it gains nothing."""
        if threshold <= 0:
            return text(self._s, "curve_no_cut")
        figures = trade_figures(trade, text(self._s, "undefined"))
        return text(self._s, "curve_trade" if trade.gains else "curve_trade_nothing", **dict(figures))


class SignalSection:
    """One signal of a checklist: its name (and, for the gate, what it decides), how often the gate left it
    unasked, then its `ReportPanel`, tagged "testers-<signal>-…"."""

    def __init__(self, strings: Mapping[str, str], signal: str, keep: Callable[[float], object]) -> None:
        self._s = strings
        self.title = ft.Text("", weight=ft.FontWeight.BOLD, size=15)
        self.role = ft.Text("", size=12, color=ft.Colors.GREY_800)
        self.role_box = tagged(self.role, f"testers-{signal}-gate")
        self.panel = ReportPanel(strings, f"testers-{signal}", keep)
        self.root = ft.Container(
            tagged(
                ft.Column([ft.Divider(height=1), self.title, self.role_box, self.panel.root], spacing=6),
                f"testers-signal-{signal}",
            ),
            col=HALF,
        )

    def render(self, signal: SignalReport, words: str, gate: str, gate_open: str, can_keep_cut: bool) -> None:
        s = self._s
        self.title.value = words
        answer = answer_word(s, gate_open)
        if signal.gate:
            self.role.value = text(s, "signal_gate", answer=answer)
        else:
            answered = signal.report.counts.answered
            self.role.value = text(
                s, "signal_not_asked", n=signal.not_asked, answered=answered, gate=gate, answer=answer
            )
        self.role_box.visible = bool(gate)
        self.panel.render(signal.report, can_keep_cut)


def _cell(value: str, width: float, bold: bool = False, right: bool = False, strong: bool = False) -> ft.Container:
    label = ft.Text(
        value,
        weight=ft.FontWeight.BOLD if bold or strong else None,
        text_align=ft.TextAlign.RIGHT if right else ft.TextAlign.START,
        max_lines=2,
        overflow=ft.TextOverflow.ELLIPSIS,
    )
    return ft.Container(
        label,
        width=width,
        padding=ft.Padding.symmetric(horizontal=6, vertical=4),
        bgcolor=ft.Colors.TEAL_100 if strong else None,
    )


def _set_text(cell: ft.Control, value: str, color: str | None = None) -> None:
    assert isinstance(cell, ft.Container) and isinstance(cell.content, ft.Text)
    cell.content.value = value
    cell.content.color = color


def _rate(x: float | None, none: str) -> str:
    return none if x is None else shown(x)


def _detail(strings: Mapping[str, str], row: TesterRow) -> str | None:
    if row.parse_status == ParseStatus.NOT_ASKED:
        return text(strings, "detail_not_asked")
    if row.detail in ("not_analysed", "stopped"):
        return text(strings, f"detail_{row.detail}")
    return row.detail or None


def _few(names: tuple[str, ...], limit: int = 8) -> str:
    more = f" … (+{len(names) - limit})" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more
