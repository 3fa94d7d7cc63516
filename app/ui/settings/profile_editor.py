"""The profile editor on the Settings screen: a checklist's title, questions, answers, score cuts, gate and
Chinese words, as plain fields. It only collects what is typed; checking and saving are the settings
controller's (`app.core.profile.draft`): every field it refuses shows why beside it, in the screen's
language, and a refusal only the whole can show goes under the form.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import flet as ft

from app.core.profile.checklist import MAX_SIGNALS
from app.core.profile.draft import MAX_QUESTION_CHARS, DraftRefused, ProfileDraft, SignalDraft, values_of
from app.core.profile.task import UNKNOWN, ProfileError
from app.ui.parts.widgets import tagged
from app.ui.settings.controller import EditedProfile
from app.ui.words import CJK_FONT, text

NO_GATE = "-"
# What a refusal can name beside its field: names typed as they are, in every language.
_EXAMPLES: dict[str, str | int] = {
    "n": MAX_QUESTION_CHARS,
    "example_name": "hands_visible",
    "example_answers": f"yes, no, {UNKNOWN}",
    "unknown": UNKNOWN,
}


class _QuestionFields:
    def __init__(self, s: Mapping[str, str], index: int, on_remove: Callable[[_QuestionFields], None]) -> None:
        self.heading = ft.Text("", weight=ft.FontWeight.W_500)
        self.signal = ft.TextField(label=text(s, "editor_signal"), dense=True)
        self.question = ft.TextField(label=text(s, "editor_prompt"), multiline=True, min_lines=1, max_lines=4)
        self.answers = ft.TextField(label=text(s, "editor_answers"), dense=True)
        chinese = ft.TextStyle(font_family=CJK_FONT)  # typed Chinese on any screen, from the bundled face
        self.question_zh = ft.TextField(label=text(s, "editor_question_zh"), dense=True, text_style=chinese)
        self.answers_zh = ft.TextField(label=text(s, "editor_answers_zh"), dense=True, text_style=chinese)
        self.min_score = ft.TextField(
            label=text(s, "editor_min_score"), helper=text(s, "editor_min_score_help"), dense=True, width=340
        )
        self.remove = ft.TextButton(
            text(s, "editor_remove"), icon=ft.Icons.DELETE_OUTLINE, on_click=lambda _: on_remove(self)
        )
        n = index + 1
        self.remove_box = tagged(self.remove, f"editor-remove-{n}")  # the wrapper hides, not the button
        self.root = ft.Container(
            ft.Column(
                [
                    ft.Row([self.heading, self.remove_box], wrap=True),
                    tagged(self.signal, f"editor-signal-{n}"),
                    tagged(self.question, f"editor-question-{n}"),
                    tagged(self.answers, f"editor-answers-{n}"),
                    tagged(self.question_zh, f"editor-question-zh-{n}"),
                    tagged(self.answers_zh, f"editor-answers-zh-{n}"),
                    tagged(self.min_score, f"editor-min-score-{n}"),
                ],
                spacing=8,
                horizontal_alignment=ft.CrossAxisAlignment.STRETCH,  # fields as wide as the card
            ),
            padding=12,
            border=ft.Border.all(1, ft.Colors.GREY_300),
            border_radius=8,
        )

    def fill(self, draft: SignalDraft) -> None:
        self.signal.value, self.question.value, self.answers.value = draft.signal, draft.question, draft.answers
        self.question_zh.value, self.answers_zh.value = draft.question_zh, draft.answers_zh
        self.min_score.value = draft.min_score

    def fields(self, n: int) -> dict[str, ft.TextField]:
        """The fields by the names `app.core.profile.draft.FieldProblem` gives them, as question `n`."""
        parts = (self.signal, self.question, self.answers, self.question_zh, self.answers_zh, self.min_score)
        names = ("signal", "question", "answers", "question_zh", "answers_zh", "min_score")
        return {f"{name}-{n}": field for name, field in zip(names, parts, strict=True)}

    def draft(self) -> SignalDraft:
        return SignalDraft(
            self.signal.value or "",
            self.question.value or "",
            self.answers.value or "",
            self.question_zh.value or "",
            self.answers_zh.value or "",
            self.min_score.value or "",
        )


class ProfileEditor:
    """`root` is hidden until `open`; `save` gets the edited profile and returns its refusal or None
    (saved); `closed` hears that the editor was closed."""

    def __init__(
        self,
        strings: Mapping[str, str],
        save: Callable[[EditedProfile], ProfileError | None],
        closed: Callable[[], None] = lambda: None,
    ) -> None:
        self._s = s = strings
        self._save = save
        self._closed = closed
        self._edited: EditedProfile | None = None
        self.heading = ft.Text("", size=15, weight=ft.FontWeight.BOLD)
        self.note = ft.Text("", size=12, color=ft.Colors.GREY_800)
        self.id = ft.TextField(label=text(s, "editor_id"), dense=True)
        self.title = ft.TextField(label=text(s, "editor_title"), dense=True)
        self.title_zh = ft.TextField(
            label=text(s, "editor_title_zh"), dense=True, text_style=ft.TextStyle(font_family=CJK_FONT)
        )
        self.questions: list[_QuestionFields] = []
        self.question_column = ft.Column(spacing=10, horizontal_alignment=ft.CrossAxisAlignment.STRETCH)
        self.add = ft.OutlinedButton(text(s, "editor_add"), icon=ft.Icons.ADD, on_click=lambda _: self._add())
        self.gate = ft.Dropdown(
            label=text(s, "editor_gate"), dense=True, width=340, on_select=lambda _: self._gate_changed()
        )
        self.gate_open = ft.Dropdown(label=text(s, "editor_gate_open"), dense=True, width=160)
        for field in (self.id, self.title, self.title_zh):
            field.on_change = self._field_changed
            field.error_max_lines = 3
        self.error = ft.Text("", color=ft.Colors.RED_800, size=13)
        self.error_box = tagged(self.error, "editor-error")
        self.error_box.visible = False
        save_button = ft.FilledButton(text(s, "editor_save"), icon=ft.Icons.SAVE, on_click=lambda _: self._on_save())
        cancel = ft.TextButton(text(s, "editor_cancel"), on_click=lambda _: self.close())
        self.root = tagged(
            ft.Container(
                ft.Column(
                    [
                        tagged(self.heading, "editor-heading"),
                        self.note,
                        tagged(self.id, "editor-id"),
                        tagged(self.title, "editor-title"),
                        tagged(self.title_zh, "editor-title-zh"),
                        self.question_column,
                        tagged(self.add, "editor-add"),
                        ft.Text(text(s, "editor_gate_help"), size=12, color=ft.Colors.GREY_700),
                        ft.Row(
                            [tagged(self.gate, "editor-gate"), tagged(self.gate_open, "editor-gate-open")],
                            wrap=True,
                        ),
                        self.error_box,
                        ft.Row([tagged(save_button, "editor-save"), tagged(cancel, "editor-cancel")], wrap=True),
                    ],
                    spacing=10,
                    horizontal_alignment=ft.CrossAxisAlignment.STRETCH,
                ),
                padding=12,
                border_radius=8,
                bgcolor=ft.Colors.WHITE,
            ),
            "profile-editor",
        )
        self.root.visible = False

    # --- opening and closing ----------------------------------------------------------

    def open(self, edited: EditedProfile, folder: str) -> None:
        s, draft = self._s, edited.draft
        self._edited = edited
        self.heading.value = text(s, "editor_heading_copy" if edited.copy else "editor_heading", name=draft.id)
        self.note.value = text(s, "editor_note", folder=folder, option="--profile")
        self.id.value, self.title.value, self.title_zh.value = draft.id, draft.title, draft.title_zh
        self.questions = []
        for signal in draft.signals:
            self._add(signal)
        self._refresh_gate(draft.gate, draft.gate_open)
        self._show_error("")
        self.root.visible = True

    def close(self) -> None:
        self.root.visible = False
        self._edited = None
        self._closed()

    # --- fields -----------------------------------------------------------------------

    def _add(self, draft: SignalDraft | None = None) -> None:
        if len(self.questions) >= MAX_SIGNALS:
            self._show_error(text(self._s, "editor_too_many", n=MAX_SIGNALS))
            return
        fields = _QuestionFields(self._s, len(self.questions), self._remove)
        fields.fill(draft or SignalDraft())
        for field in fields.fields(0).values():
            field.on_change = self._field_changed
            field.error_max_lines = field.helper_max_lines = 3  # a refusal in full on a phone
        fields.signal.on_blur = lambda _: self._refresh_gate(self.gate.value or "", self.gate_open.value or "")
        fields.answers.on_blur = fields.signal.on_blur
        self.questions.append(fields)
        self._relabel()

    def _remove(self, fields: _QuestionFields) -> None:
        if len(self.questions) > 1:  # a profile asks at least one question
            self.questions.remove(fields)
            self._relabel()
            self._refresh_gate(self.gate.value or "", self.gate_open.value or "")

    def _relabel(self) -> None:
        for i, fields in enumerate(self.questions):
            fields.heading.value = text(self._s, "editor_question_n", n=i + 1)
            fields.remove_box.visible = len(self.questions) > 1
        self.question_column.controls = [fields.root for fields in self.questions]
        self.add.disabled = len(self.questions) >= MAX_SIGNALS

    def _gate_changed(self) -> None:
        self._refresh_gate(self.gate.value or "", "")

    def _refresh_gate(self, gate: str, gate_open: str) -> None:
        """The gate's choices follow the questions' names, and its opening answer the gate's answers."""
        drafts = [f.draft() for f in self.questions]
        names = [d.signal.strip() for d in drafts if d.signal.strip()]
        self.gate.options = [ft.DropdownOption(key=NO_GATE, text=text(self._s, "editor_gate_none"))] + [
            ft.DropdownOption(key=n, text=n) for n in names
        ]
        self.gate.value = gate if gate in names else NO_GATE
        answers = next((values_of(d.answers) for d in drafts if d.signal.strip() == self.gate.value), [])
        self.gate_open.options = [ft.DropdownOption(key=v, text=v) for v in answers]
        self.gate_open.value = gate_open if gate_open in answers else ("yes" if "yes" in answers else None)
        self.gate_open.disabled = self.gate.value == NO_GATE

    def draft(self) -> ProfileDraft:
        """What the fields say now."""
        gate = self.gate.value if self.gate.value not in (None, NO_GATE) else ""
        return ProfileDraft(
            self.id.value or "",
            self.title.value or "",
            self.title_zh.value or "",
            gate or "",
            self.gate_open.value or "yes",
            tuple(f.draft() for f in self.questions),
        )

    # --- saving -----------------------------------------------------------------------

    def _on_save(self) -> None:
        if self._edited is None:
            return
        edited = EditedProfile(self.draft(), self._edited.base, self._edited.copy)
        refused = self._save(edited)
        if refused is None:
            self.close()
        elif isinstance(refused, DraftRefused):
            self._show_error(text(self._s, "editor_mend", n=len(refused.problems)))
            fields = self._fields()
            for problem in refused.problems:
                said = text(self._s, f"editor_problem_{problem.reason}", **(_EXAMPLES | dict(problem.values)))
                fields[problem.field].error = said
        else:
            self._show_error(text(self._s, "editor_refused", detail=refused))

    def _fields(self) -> dict[str, ft.TextField]:
        named = {"id": self.id, "title": self.title, "title_zh": self.title_zh}
        for n, question in enumerate(self.questions, start=1):
            named |= question.fields(n)
        return named

    def _field_changed(self, event: ft.Event[ft.TextField]) -> None:
        """A refusal is about the fields as they were: a field's goes once it changes, the one under the form
        with the first change, not at the next Save."""
        event.control.error = None
        if self.error_box.visible:
            self.error_box.visible = False

    def _show_error(self, message: str) -> None:
        """`message` under the form, and no field marked."""
        for field in self._fields().values():
            field.error = None
        self.error.value = message
        self.error_box.visible = bool(message)
