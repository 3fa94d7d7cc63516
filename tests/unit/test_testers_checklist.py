"""The Testers' screen with a checklist running (app.ui.testers.controller, app.ui.testers.view): a row per
image and signal, the labels file `eval` reads for a checklist, a report per signal from the same
`evaluate_checklist`, and Keep this cut saved into that signal only. The worker is a fake that records a
checklist keyframe's answers as the live pipeline does: one event per signal, on the same keyframe."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import flet as ft

from app.core.generation import ParseStatus, Timings
from app.core.session import PracticeEvent, SessionState, apply
from app.evaluation.report import Prediction, checklist_csv_text, evaluate_checklist
from app.storage.paths import EXAMPLES, PROFILES
from app.storage.profile_file import load_checklist
from app.storage.profile_store import save_cut
from app.ui.testers.controller import TestersController as Controller  # not a test class to collect
from app.ui.testers.view import TestersView as View
from app.ui.words import text
from app.ui.words.sessions import TABLES as SESSION_WORDS
from app.ui.words.testers import TABLES
from tests.unit.test_evaluation import FakePractice, _wait

SHIPPED = PROFILES / "cpr_checklist.json"
CHECKLIST = load_checklist(SHIPPED)
SIGNALS = tuple(spec.signal for spec in CHECKLIST.signals)  # hands_visible (the gate), then the others
VALUES = ("yes", "no", "unknown")
# A reduced run: three images, each signal's answer and model score in SIGNALS' order; the gate's "no" leaves
# the others unasked (no score).
ANSWERS: dict[str, tuple[tuple[str, float | None], ...]] = {
    "correct-1.jpg": (("yes", 0.99), ("yes", 0.98), ("yes", 0.6)),
    "side-1.jpg": (("yes", 0.7), ("no", 0.95), ("no", 0.9)),
    "too_high-1.jpg": (("no", 0.97), ("unknown", None), ("unknown", None)),
}
# Columns in another order than the checklist's; no label for hands_stacked on side-1.jpg.
LABELS = (
    "file,hands_stacked,hands_visible,hand_position_correct\n"
    "correct-1.jpg,yes,yes,yes\n"
    "side-1.jpg,,yes,yes\n"
    "too_high-1.jpg,no,no,no\n"
)


class ChecklistPractice(FakePractice):
    """The practice controller with the shipped checklist loaded: every image's signals answered at once."""

    def __init__(self) -> None:
        super().__init__({})
        self.state = replace(self.state, checklist=CHECKLIST, profile_path=str(SHIPPED))

    def start_evaluation(self, images: Sequence[tuple[str, bytes]], label: str) -> float | None:
        self.started = [name for name, _ in images]
        self.publish(running=True, session_id="s1", session=SessionState())
        session = SessionState()
        for i, (name, _) in enumerate(images):
            for signal, (observation, score) in zip(SIGNALS, ANSWERS[name], strict=True):
                session = apply(session, _event(i, name, signal, observation, score))
        return 3.0 if self._finish(session) else None


def _event(image: int, name: str, signal: str, observation: str, score: float | None) -> PracticeEvent:
    """Image `image` (`name`)'s answer to `signal`, as the live pipeline records it (no score: the gate left it
    unasked)."""
    unasked = score is None
    return PracticeEvent(
        event_id=f"e{image}-{signal}",
        t=image * 3.0,
        wall_time=0.0,
        keyframe_id=f"kf-{image + 1:05d}",
        signal=signal,
        observation=observation,
        parse_status=ParseStatus.NOT_ASKED if unasked else ParseStatus.VALID,
        parse_reason="not_visible" if unasked else "ok",
        raw="" if unasked else "{}",
        timings=Timings(0, 0, 0, 0, 0, 0, 0.0 if unasked else 250.0, 0, 0),
        model_id="m",
        model_revision="r",
        backend="cpu",
        model_score=score,
        gated_by="hands_visible" if unasked else "",
        source=name,
        still=True,
    )


def _images() -> list[tuple[str, bytes]]:
    return [(name, (EXAMPLES / name).read_bytes()) for name in ANSWERS]


def _expected_predictions() -> dict[str, list[Prediction]]:
    """What `eval` builds for these answers (app.commands.eval._answered): a signal not asked has no time."""
    labels = {
        "correct-1.jpg": {"hands_visible": "yes", "hand_position_correct": "yes", "hands_stacked": "yes"},
        "side-1.jpg": {"hands_visible": "yes", "hand_position_correct": "yes"},
        "too_high-1.jpg": {"hands_visible": "no", "hand_position_correct": "no", "hands_stacked": "no"},
    }
    out: dict[str, list[Prediction]] = {signal: [] for signal in SIGNALS}
    for name, answers in ANSWERS.items():
        for signal, (observation, score) in zip(SIGNALS, answers, strict=True):
            expected = labels[name].get(signal)
            if score is None:
                out[signal].append(Prediction(name, expected, observation, ParseStatus.NOT_ASKED, None, "not_visible"))
            else:
                out[signal].append(Prediction(name, expected, observation, ParseStatus.VALID, 0.25, "ok", score))
    return out


def _run(controller: Controller, labels: str | None = LABELS) -> None:
    controller.attach()
    controller.choose_images(_images())
    if labels is not None:
        controller.choose_labels("labels.csv", labels.encode())
    controller.run()
    _wait(controller)


def test_a_checklist_run_has_a_row_per_image_and_signal_and_eval_s_report_per_signal() -> None:
    controller = Controller(ChecklistPractice())
    _run(controller)
    state = controller.state
    assert state.phase == "done" and state.total == state.done == len(ANSWERS) and state.progress == 1.0
    assert [(r.name, r.signal) for r in state.rows] == [(name, signal) for name in ANSWERS for signal in SIGNALS]
    unasked = [r for r in state.rows if r.name == "too_high-1.jpg" and r.signal != "hands_visible"]
    assert {(r.observed, r.parse_status, r.seconds) for r in unasked} == {("unknown", ParseStatus.NOT_ASKED, None)}
    assert state.labels_count == len(ANSWERS) and not state.label_errors and state.unlabelled == ()
    # The same report `eval` computes from the same answers: every figure, the curve's points included.
    expected = evaluate_checklist(
        _expected_predictions(),
        {signal: VALUES for signal in SIGNALS},
        "hands_visible",
        "yes",
        dict.fromkeys(SIGNALS),
    )
    assert state.report is None and state.checklist_report is not None
    assert state.checklist_report.to_dict() == expected.to_dict()
    assert state.checklist_report.signal("hand_position_correct").not_asked == 1
    name, data = controller.export() or ("", b"")
    assert name.endswith(".csv") and data.decode() == checklist_csv_text(expected)  # eval --csv's rows


def test_a_labels_file_for_the_other_kind_of_profile_is_a_sentence() -> None:
    one_signal_file = "file,expected\ncorrect-1.jpg,yes\nside-1.jpg,no\n"
    controller = Controller(ChecklistPractice())
    controller.attach()
    controller.choose_images(_images())
    controller.choose_labels("labels.csv", one_signal_file.encode())
    notice = controller.state.notice
    assert notice is not None and notice.error and notice.key == "notice_labels_one_question"
    assert dict(notice.values) == {"name": "labels.csv", "n": "3", "header": "file," + ",".join(SIGNALS)}
    assert controller.state.labels_name == ""  # dropped: the run goes on without labels
    controller.run()
    _wait(controller)
    assert controller.state.checklist_report is not None and controller.state.unlabelled == ()

    # The reverse: a one-signal profile running, a checklist's labels file.
    single = Controller(FakePractice({name: "yes" for name in ANSWERS}))
    single.attach()
    single.choose_images(_images())
    single.choose_labels("labels.csv", LABELS.encode())
    notice = single.state.notice
    assert notice is not None and notice.error and notice.key == "notice_labels_not_one_question"
    assert single.state.label_errors and single.state.labels_count == 0  # each row still says what is wrong
    single.run()
    _wait(single)
    assert single.state.report is not None and single.state.checklist_report is None


def test_a_cut_kept_on_a_signal_is_saved_into_that_signal_only_and_the_rows_stay(tmp_path: Path) -> None:
    own = tmp_path / "profiles"
    practice = ChecklistPractice()
    kept: list[tuple[str | None, float]] = []

    def use_cut(profile: Path, min_score: float, signal: str | None) -> Path:
        kept.append((signal, min_score))
        return save_cut(profile, min_score, own, signal=signal)

    controller = Controller(practice, use_cut=use_cut)
    _run(controller)
    assert controller.state.can_keep_cut
    assert controller.save_cut(0.9, "hands_stacked")
    notice = controller.state.notice
    assert notice is not None and notice.key == "notice_cut_saved_signal" and not notice.error
    said = dict(notice.values)
    assert said.pop("signal") == "hands_stacked" and said.pop("file") == "cpr_checklist_cut.json"
    # What the cut does on the images it was kept from: this signal's one labelled answer is withheld.
    trade = {"withheld": "1", "given": "1", "share": "100%", "before": "1.000", "after": "—"}
    assert said == {"threshold": "0.9", **trade}
    saved = load_checklist(own / "cpr_checklist_cut.json")
    assert {s.signal: s.min_score for s in saved.signals} == {
        "hands_visible": None,
        "hand_position_correct": None,
        "hands_stacked": 0.9,
    }
    assert load_checklist(SHIPPED).signal("hands_stacked").min_score is None  # the template as it was
    # The worker reloads with the saved copy: the same questions, so the run's rows and report stay,
    # the curve of that signal marking its cut.
    rows = controller.state.rows
    practice.publish(checklist=saved, profile_path=str(own / "cpr_checklist_cut.json"))
    report = controller.state.checklist_report
    assert controller.state.rows == rows and report is not None
    assert {s.signal: s.report.min_score for s in report.signals} == {
        "hands_visible": None,
        "hand_position_correct": None,
        "hands_stacked": 0.9,
    }
    assert controller.save_cut(0.95, "hand_position_correct")  # the person's own copy: changed in place
    again = load_checklist(own / "cpr_checklist_cut.json")
    assert again.signal("hands_stacked").min_score == 0.9 and again.signal("hand_position_correct").min_score == 0.95
    assert kept == [("hands_stacked", 0.9), ("hand_position_correct", 0.95)]


def test_another_profile_s_questions_make_the_rows_anew() -> None:
    practice = ChecklistPractice()
    controller = Controller(practice)
    _run(controller)
    # The same signals with other answers (edited in Settings): the run's answers may not be among them.
    edited = replace(CHECKLIST, signals=(replace(CHECKLIST.signals[0], values=("no", "yes")), *CHECKLIST.signals[1:]))
    practice.publish(checklist=edited)
    assert controller.state.phase == "ready" and controller.state.checklist_report is None
    assert not any(r.finished for r in controller.state.rows)
    controller.run()
    _wait(controller)
    assert controller.state.checklist_report is not None
    practice.publish(checklist=None)  # a one-signal profile chosen in Settings
    state = controller.state
    assert state.phase == "ready" and [r.signal for r in state.rows] == [""] * len(ANSWERS)
    assert state.checklist is None and state.checklist_report is None and state.report is None


def _texts(control: ft.Control) -> list[str]:
    """Every text under `control`, in order."""
    if isinstance(control, ft.Text):
        return [str(control.value or "")]
    children: list[ft.Control] = []
    for name in ("content", "controls"):
        value = getattr(control, name, None)
        children += value if isinstance(value, list) else [value] if isinstance(value, ft.Control) else []
    return [t for child in children for t in _texts(child)]


def _tagged(control: ft.Control, found: dict[str, ft.Control] | None = None) -> dict[str, ft.Control]:
    """Every tagged node under `control` by its identifier."""
    found = {} if found is None else found
    if isinstance(control, ft.Semantics) and control.identifier:
        found[control.identifier] = control
    for name in ("content", "controls"):
        value = getattr(control, name, None)
        for child in value if isinstance(value, list) else [value] if isinstance(value, ft.Control) else []:
            _tagged(child, found)
    return found


def test_the_view_shows_a_section_per_signal_with_its_own_cut_buttons_in_both_languages() -> None:
    practice = ChecklistPractice()
    cuts: list[tuple[float, str | None]] = []
    controller = Controller(practice, use_cut=lambda path, score, signal: cuts.append((score, signal)) or path)
    views = {code: View(controller, strings=table, language=code) for code, table in TABLES.items()}
    controller.attach()
    for view in views.values():  # before a labels file: the header a checklist's needs
        view.render(controller.state)
        assert view.labels_text.value and view.labels_text.value.endswith("file," + ",".join(SIGNALS))
    _run(controller)
    report = controller.state.checklist_report
    assert report is not None
    for code, view in views.items():
        view.render(controller.state)
        assert view.summary_box.visible and view.signals_box.visible and not view.panel.root.visible
        nodes = _tagged(view.summary_box)
        for signal in report.signals:
            for value, row in signal.report.to_dict()["confusion_matrix"].items():
                for column, count in row.items():
                    assert _texts(nodes[f"testers-{signal.signal}-cell-{value}-{column}"]) == [str(count)]
        gate = SESSION_WORDS[code]["signal_hands_visible"]
        said = text(TABLES[code], "signal_not_asked", n=1, answered=3, gate=gate, answer=TABLES[code]["answer_yes"])
        assert _texts(nodes["testers-hands_stacked-gate"]) == [said]  # unasked on one image of three
        assert len(view.table.controls) == 1 + len(ANSWERS) * len(SIGNALS)  # header + a row per image and signal
        rows = [_texts(row) for row in view.table.controls[1:]]
        assert rows[0][0] == "correct-1.jpg" and rows[1][0] == ""  # the image named on its first row
        questions = {row[1] for row in rows}
        if code == "zh":
            assert questions == {"画面里能看到双手", "双手放在胸骨下半部", "双手上下叠放"}
        else:
            assert "Hands stacked, one on top of the other" in questions
        # The gate's curve: 0 keeps all three answers, 0.97 half of them (`eval`'s summary rows).
        keep = [n for i, n in nodes.items() if i.startswith("testers-hands_visible-keep-cut-")]
        assert len(keep) == 1 and not any(i.startswith("testers-keep-cut-") for i in nodes)
        button = keep[0].content
        assert isinstance(button, ft.TextButton) and button.on_click is not None
        button.on_click(None)  # type: ignore[call-arg]
        assert cuts[-1] == (0.97, "hands_visible")  # into that signal
