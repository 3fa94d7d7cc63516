"""The practice screen: source, preview, the answer in words, the live session. Renders state only.

Events go to the PracticeController; the camera pump and file pickers live in
`app_main`, which owns the page's async tasks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import flet as ft

from app.core.generation import ParseStatus, RunPhase
from app.core.profile.checklist import Checklist
from app.core.profile.task import UNKNOWN, written_for
from app.core.rhythm_figures import LONG_PAUSE_S, TARGET_RATE_PER_MIN, Pause, long_pauses, rate_band, shown_rate
from app.core.session import KeyframeFailed, PracticeEvent, Review, SessionState, TimelineEntry
from app.session.review import Verdict
from app.ui.parts.checklist_lines import checklist_lines, keyframe_entries, reviewed_count
from app.ui.parts.names_dialog import SaveNames, names_dialog, names_line
from app.ui.parts.review_list import ReviewList, Thumbnails, no_pictures, when_taken
from app.ui.parts.timeline import TimelineChart, mark_style
from app.ui.parts.widgets import panel, tagged
from app.ui.practice.checklist_card import ChecklistLine
from app.ui.practice.controller import PracticeState, SourceKind, clean_card
from app.ui.practice.metronome import DEFAULT_RATE, RATES
from app.ui.words import mono_font, notices_text
from app.ui.words.main import EN
from app.ui.words.sessions import EN as WORDS
from app.ui.words.sessions import answer_word, reason_words, session_questions, signal_words
from app.worker.messages import WorkerStatus

SOURCES = (SourceKind.CAMERA, SourceKind.VIDEO, SourceKind.IMAGE, SourceKind.FOLDER)  # the trainee's choices
RHYTHM_SOURCES = (SourceKind.CAMERA, SourceKind.VIDEO)  # moving pictures: a rhythm to measure and to keep
INTERVALS = (2, 3, 4, 5)
STAGE_HEIGHT = 340  # px on a wide window: the timeline stays above the fold at 1280×800
STILL_SOURCES = (
    SourceKind.IMAGE,
    SourceKind.FOLDER,
    SourceKind.TESTERS,
)  # answered in turn: an answer's age says nothing
OLDER_OPACITY = 0.4  # an answer older than the next keyframe being analysed: still legible, plainly not current


@dataclass(frozen=True)
class PracticeActions:
    start: Callable[[SourceKind, int], object]  # (source kind, interval seconds); the result is ignored
    stop: Callable[[], None]
    interval: Callable[[int], None]
    review: Callable[[Sequence[Verdict], bool], None]  # (verdicts, revise): all recorded or none
    open_models: Callable[[], None] = lambda: None  # to the Models screen (a model that cannot be used)
    open_settings: Callable[[], None] = lambda: None  # to Settings, where the questions' profile is chosen
    thumbnail: Thumbnails = no_pictures  # an answer's keyframe thumbnail, or its review copy
    metronome: Callable[[bool, int], object] = lambda on, rate: None  # (on, clicks per minute)
    play_held_sound: Callable[[], object] = lambda: None  # the trainee's tap to hear the sound the browser held
    rate_tones: Callable[[bool], object] = lambda on: None  # the rate tones on or off
    names: SaveNames = lambda trainee, examiner: None  # the session's trainee and examiner, and the next ones'
    try_examples: Callable[[], object] = lambda: None  # a session of the example pictures shipped with the app
    open_session: Callable[[str], None] = lambda session_id: None  # that session, opened in Sessions


class PracticeView:
    def __init__(
        self,
        actions: PracticeActions,
        camera: ft.Control,
        strings: Mapping[str, str] = EN,
        words: Mapping[str, str] = WORDS,
        language: str = "en",
        now: Callable[[], float] = time.time,
    ) -> None:
        """`strings` is this screen's table (app.ui.words.main), `words` the answers' and sessions' (strings_sessions).
        `now`: the wall clock the answer's age is measured on (a test gives its own)."""
        self._actions = actions
        self._now = now
        self._shown: PracticeState | None = None  # the state last rendered, for `tick`
        t = self._t = strings
        self._w = words
        self._language = language
        # Segmented buttons, not menus: every choice is visible and one tap away.
        self.source = ft.SegmentedButton(
            selected=[SourceKind.VIDEO.value],
            # Each label may take two lines: four choices then share a phone's width, none cut off.
            segments=[
                ft.Segment(value=k.value, label=ft.Text(t[f"source_{k}"], max_lines=2, text_align=ft.TextAlign.CENTER))
                for k in SOURCES
            ],
            show_selected_icon=False,
            on_change=self._source_chosen,
        )
        self._chosen = SourceKind.VIDEO  # this page's choice; a running session shows its own source instead
        self.tab = ""  # this page's id: which tab's camera feeds a camera session
        self.hidden_session: str | None = None
        self.interval = ft.SegmentedButton(
            selected=["3"],
            segments=[ft.Segment(value=str(n), label=ft.Text(t["seconds"].format(n=n))) for n in INTERVALS],
            show_selected_icon=False,
            on_change=lambda e: actions.interval(int(e.control.selected[0])),
        )
        # A demo with no file at hand: the example pictures shipped with the app, one tap.
        self.try_examples = ft.TextButton(
            t["try_examples"], icon=ft.Icons.PHOTO_LIBRARY_OUTLINED, on_click=lambda _: actions.try_examples()
        )
        self.start_stop = ft.FilledButton(t["start"], icon=ft.Icons.PLAY_ARROW, on_click=self._start_stop)
        self.camera = camera
        # gapless: a new frame replaces the old one when decoded, not after a blank moment (a quarter of
        # the samples of a playing video's preview were an empty panel).
        self.preview = ft.Image(
            src=b"", fit=ft.BoxFit.CONTAIN, visible=False, gapless_playback=True, semantics_label=t["preview_label"]
        )
        self.preview_hint = ft.Text(t["preview_idle"], color=ft.Colors.GREY_300, text_align=ft.TextAlign.CENTER)
        self.inset = ft.Image(src=b"", width=96, height=96, fit=ft.BoxFit.COVER, visible=False, gapless_playback=True)
        # The model's tokens as they stream: in Details (the trainee's overlay says in words what is happening).
        self.stream = ft.Text("", font_family=mono_font(language), size=12, selectable=True)
        self.activity = ft.Text("", size=12, color=ft.Colors.WHITE)
        self.busy = ft.ProgressRing(width=14, height=14, stroke_width=2, color=ft.Colors.WHITE, visible=False)
        self.inset_panel = inset_panel = ft.Container(
            content=ft.Row(
                [
                    self.inset,
                    ft.Column(
                        [ft.Row([self.busy, ft.Container(tagged(self.activity, "activity"), expand=True)], spacing=6)],
                        spacing=4,
                        expand=True,
                    ),
                ],
                spacing=8,
                vertical_alignment=ft.CrossAxisAlignment.START,
            ),
            bgcolor=ft.Colors.with_opacity(0.72, ft.Colors.BLACK),
            padding=8,
            border_radius=8,
        )
        self.cover = ft.Container(bgcolor=ft.Colors.BLUE_GREY_900, left=0, top=0, right=0, bottom=0)
        self.stage = ft.Container(
            content=ft.Stack(
                [
                    ft.Container(self.camera, alignment=ft.Alignment.CENTER, left=0, top=0, right=0, bottom=0),
                    self.cover,
                    ft.Container(self.preview, alignment=ft.Alignment.CENTER, left=0, top=0, right=0, bottom=0),
                    ft.Container(self.preview_hint, alignment=ft.Alignment.CENTER, left=0, top=0, right=0, bottom=0),
                    ft.Container(inset_panel, left=8, right=8, bottom=8),
                ],
            ),
            bgcolor=ft.Colors.BLUE_GREY_900,
            border_radius=10,
            height=STAGE_HEIGHT,
            clip_behavior=ft.ClipBehavior.ANTI_ALIAS,
        )
        self.model_status = ft.Text("", size=13)
        self.model_hint = ft.Text(t["worker_failed_hint"], size=12, color=ft.Colors.RED_900, visible=False)
        # No dead end: the way to a model that works is one tap away.
        self.open_models = ft.OutlinedButton(
            t["open_models"],
            icon=ft.Icons.DOWNLOAD_FOR_OFFLINE_OUTLINED,
            on_click=lambda _: actions.open_models(),
        )
        self.open_models_box = tagged(self.open_models, "open-models")  # the wrapper hides (see tagged)
        self.open_models_box.visible = False
        self.error = ft.Text("", color=ft.Colors.RED_800, size=13)
        # How the last session ended (a video's end, the camera's tab reloaded): news a person must not miss,
        # with the way to the answers still waiting for the examiner.
        self.notice = ft.Text("", color=ft.Colors.BLUE_GREY_900, size=14, weight=ft.FontWeight.W_500)
        self.ended_pending = ft.Text("", size=13, color=ft.Colors.BLUE_GREY_900)
        self._ended_session = ""
        self.open_ended = ft.OutlinedButton(
            t["review_in_sessions"],
            icon=ft.Icons.HISTORY,
            on_click=lambda _: self._actions.open_session(self._ended_session),
        )
        self._open_ended_box = tagged(self.open_ended, "review-in-sessions")
        self._ended_pending_box = tagged(self.ended_pending, "ended-pending")  # the wrapper hides (see tagged)
        self.log_error = ft.Text("", color=ft.Colors.RED_800, size=12)

        # The result card: the question, the answer in words, then what it is waiting for.
        self.question = ft.Text("", size=15, weight=ft.FontWeight.W_500)
        # Read from a metre away, by a trainee kneeling at the manikin.
        self.answer_icon = ft.Icon(ft.Icons.HOURGLASS_EMPTY, size=56, color=ft.Colors.GREY_500)
        self.answer = ft.Text(t["no_answer_yet"], size=30, weight=ft.FontWeight.BOLD, color=ft.Colors.GREY_600)
        self.why = ft.Text("", size=13, color=ft.Colors.BLUE_GREY_800)
        self.review_state = ft.Text("", size=13, color=ft.Colors.GREY_800)
        self.taken = ft.Text("", size=12, color=ft.Colors.GREY_700)
        # How old the answer is ("answered 9 s ago"), refreshed every second while a session runs (`tick`).
        self.age = ft.Text("", size=13, color=ft.Colors.GREY_800)
        self.slower = ft.Text("", size=13, color=ft.Colors.ORANGE_900)
        self.failure = ft.Text("", size=12, color=ft.Colors.RED_800)
        self.details = ft.Text("", size=12, font_family=mono_font(language), selectable=True)
        self.details_tile = ft.ExpansionTile(
            title=ft.Text(t["details"], size=13),
            controls=[
                ft.Container(
                    ft.Column([tagged(self.stream, "token-stream"), self.details], spacing=6),
                    padding=ft.Padding.only(left=16, bottom=8),
                )
            ],
            expanded=False,
            tile_padding=ft.Padding.symmetric(horizontal=0),
        )
        self._card_lines = {
            line: tagged(line, name)
            for line, name in (
                (self.age, "answer-age"),
                (self.why, "parse-status"),
                (self.review_state, "review-state"),
                (self.taken, "taken-at"),
                (self.slower, "slower-note"),
                (self.failure, "keyframe-failure"),
            )
        }
        self.answer_row = ft.Row([self.answer_icon, tagged(self.answer, "observation")], spacing=10)
        # A checklist: one line per signal instead of the one large answer (ChecklistLine, made per profile).
        self.checklist_column = ft.Column(spacing=8)
        self.checklist_box = ft.Container(self.checklist_column)  # each line is a node of its own
        self.checklist_box.visible = False
        self._checklist_rows: dict[str, ChecklistLine] = {}
        self._checklist_shown: Checklist | None = None
        card = ft.Card(
            content=ft.Container(
                ft.Column(
                    [
                        tagged(self.question, "question"),
                        self.answer_row,
                        self.checklist_box,
                        *self._card_lines.values(),
                        tagged(self.details_tile, "details"),
                    ],
                    spacing=6,
                ),
                padding=16,
            )
        )
        # The compression rate from every frame (camera and video sessions): large, with the target band.
        self.rate_title = ft.Text(t["rate_title"], size=13, weight=ft.FontWeight.W_500)
        self.rate = ft.Text("—", size=40, weight=ft.FontWeight.BOLD)
        self.rate_words = ft.Text("", size=14)
        self.rate_details = ft.Text("", size=12, color=ft.Colors.GREY_800)
        # What the rate needs, in one word read from 2 m by a trainee compressing with the phone on the
        # floor: a word, an arrow and a colour (never the colour alone). 72 px bold (capitals ~8 mm tall on
        # a phone, ~13 mm on a laptop): "Slower" with its arrow (~300 px) fits the 334 px a 390 px phone
        # leaves the box.
        self.rate_cue_icon = ft.Icon(ft.Icons.ARROW_UPWARD, size=64, color=ft.Colors.WHITE)
        self.rate_cue = ft.Text("", size=72, weight=ft.FontWeight.BOLD, color=ft.Colors.WHITE)
        self.rate_cue_box = ft.Container(
            ft.Row(
                [self.rate_cue_icon, tagged(self.rate_cue, "rate-cue")],
                alignment=ft.MainAxisAlignment.CENTER,
                vertical_alignment=ft.CrossAxisAlignment.CENTER,
                spacing=8,
            ),
            padding=ft.Padding.symmetric(horizontal=8, vertical=0),
            border_radius=8,
            visible=False,
        )
        self.cue_band: str | None = None  # the band of the cue shown (the rate tones follow it); None: none
        # A pause over the guidelines' 10 s, flagged in words, an icon and colour (live, and after).
        self.pause_flag = ft.Text("", size=16, weight=ft.FontWeight.BOLD, color=ft.Colors.RED_800)
        self.pause_flag_row = ft.Row(
            [
                ft.Icon(ft.Icons.WARNING_AMBER_ROUNDED, size=22, color=ft.Colors.RED_800),
                ft.Container(tagged(self.pause_flag, "pause-flag"), expand=True),  # wraps on a phone
            ],
            spacing=6,
            vertical_alignment=ft.CrossAxisAlignment.START,
            visible=False,
        )
        self._rate_words_box = ft.Container(tagged(self.rate_words, "rate-words"), expand=True)
        self._rate_tag = tagged(self.rate, "rate")
        self._rate_row = ft.Row(
            [self._rate_tag, self._rate_words_box],
            vertical_alignment=ft.CrossAxisAlignment.CENTER,
        )
        self._rate_cue_slot = ft.Container(self.rate_cue_box)  # the cue's place: above the rate, or beside it
        self._rhythm_column = ft.Column(
            [
                self.rate_title,
                self._rate_cue_slot,
                self._rate_row,
                self.pause_flag_row,
                tagged(self.rate_details, "rate-details"),
                ft.Text(t["rate_not_measured"], size=11, color=ft.Colors.GREY_600),
            ],
            spacing=2,
        )
        self._compact: bool | None = None
        self._width: float | None = None
        self.rhythm_box = panel(self._rhythm_column, visible=False)
        # The rate lane too: the live figure above says now, the lane how the rate went (a camera or
        # a video; stills have no rhythm and keep it hidden).
        self.timeline = TimelineChart(strings=words, rhythm=True)
        self.reviews = ReviewList(words, thumbnails=actions.thumbnail)
        # Hidden when empty: the Semantics wrapper is what hides (its content must stay visible).
        self._status_lines = {
            line: tagged(line, name) for line, name in ((self.error, "error"), (self.log_error, "log-error"))
        }
        self._ended_box = ft.Container(
            ft.Row(
                [
                    ft.Icon(ft.Icons.INFO_OUTLINE, color=ft.Colors.BLUE_700),
                    ft.Column(
                        [
                            tagged(self.notice, "notice"),
                            self._ended_pending_box,
                            self._open_ended_box,
                        ],
                        spacing=6,
                        expand=True,
                    ),
                ],
                vertical_alignment=ft.CrossAxisAlignment.START,
            ),
            bgcolor=ft.Colors.BLUE_50,
            border=ft.Border.all(1, ft.Colors.BLUE_200),
            border_radius=8,
            padding=12,
            visible=False,
        )
        # What is asked, and the way to change it (Settings → Question: a profile or checklist, the editor).
        self.asking = ft.Text("", size=12, color=ft.Colors.GREY_800)
        # A question written for another model (an instruct prompt on the demo model) is answered, but
        # maybe wrongly: said beside it, with the way to choose one made for this model.
        self.written_for = ft.Text("", size=12, color=ft.Colors.ORANGE_900)
        self._written_for_box = tagged(self.written_for, "written-for")
        # A score cut in force withholds the answers the model is unsure of: said, so an UNKNOWN is understood.
        self.score_cut = ft.Text("", size=12, color=ft.Colors.BLUE_GREY_800)
        self._score_cut_box = tagged(self.score_cut, "score-cut")
        self.change_questions = ft.TextButton(
            t["change_questions"], icon=ft.Icons.TUNE, on_click=lambda _: actions.open_settings()
        )
        # Who practises and who examines: the running session's and the next ones' (Sessions renames any).
        self.names = ft.Text("", size=12, color=ft.Colors.GREY_800)
        self.names_edit = ft.TextButton(
            words["names_button"], icon=ft.Icons.PERSON_OUTLINE, on_click=lambda _: self._edit_names()
        )
        self._named = ("", "")
        # An optional metronome for camera and video practice, off until the trainee turns it on.
        self.metronome = ft.Switch(label=t["metronome"], value=False, on_change=lambda _: self._metronome_changed())
        self.metronome_rate = ft.Dropdown(
            value=str(DEFAULT_RATE),
            options=[ft.DropdownOption(key=str(r), text=t["metronome_rate"].format(rate=r)) for r in RATES],
            width=200,
            dense=True,
            on_select=lambda _: self._metronome_changed(),
        )
        # Shown while a rebuilt page's browser holds its sound until a tap (app.ui.practice.metronome.SoundHold).
        self.sound_held = tagged(
            ft.FilledTonalButton(
                t["sound_held"], icon=ft.Icons.VOLUME_UP, on_click=lambda _: actions.play_held_sound()
            ),
            "sound-held",
        )
        self.sound_held.visible = False
        # Rate tones beside it, off until turned on: high when the rate shown is too slow, low when too fast.
        self.rate_tones = ft.Switch(
            label=t["rate_cue_sound"], value=False, on_change=lambda _: self._rate_tones_changed()
        )
        self.metronome_row = ft.Row(
            [
                tagged(self.metronome, "metronome"),
                tagged(self.metronome_rate, "metronome-rate"),
                self.sound_held,
                tagged(self.rate_tones, "rate-tones"),
            ],
            wrap=True,
            spacing=12,
            vertical_alignment=ft.CrossAxisAlignment.CENTER,
        )
        controls_row = ft.Column(
            [
                ft.Row(
                    [ft.Text(t["source"], size=12), tagged(self.try_examples, "try-examples")],
                    spacing=8,
                    vertical_alignment=ft.CrossAxisAlignment.CENTER,
                ),
                ft.Row([ft.Container(tagged(self.source, "source"), expand=True)]),
                ft.Row(
                    [
                        ft.Text(t["every"], size=12),
                        tagged(self.interval, "interval"),
                        tagged(self.start_stop, "start-stop"),
                    ],
                    wrap=True,
                    spacing=12,
                    run_spacing=8,
                    vertical_alignment=ft.CrossAxisAlignment.CENTER,
                ),
                self.metronome_row,
                ft.Row(
                    [
                        tagged(self.asking, "asking"),
                        tagged(self.change_questions, "change-questions"),
                        tagged(self.names, "practice-names"),
                        tagged(self.names_edit, "practice-names-edit"),
                    ],
                    wrap=True,
                    spacing=4,
                    vertical_alignment=ft.CrossAxisAlignment.CENTER,
                ),
                self._written_for_box,
                self._score_cut_box,
            ],
            spacing=6,
        )
        self._controls_row = controls_row
        self._status_block = [
            tagged(ft.Column([self.model_status, self.model_hint], spacing=2), "model-status"),
            self.open_models_box,
            *self._status_lines.values(),
        ]
        self._live = ft.Column(spacing=10)
        self._card = tagged(card, "result-card")
        self._right = ft.Column(spacing=16)
        not_medical = ft.Text(t["not_medical"], size=11, color=ft.Colors.GREY_600)
        self._review_block = ft.Column([self.reviews.root, not_medical])
        self._columns = (
            ft.Container(ft.Column([self._live, self.timeline.root], spacing=16)),
            ft.Container(self._right),
        )
        self._scroller = ft.Column(
            [ft.ResponsiveRow(list(self._columns), spacing=20, run_spacing=16)],
            scroll=ft.ScrollMode.AUTO,
            expand=True,
        )
        self.root = ft.Container(self._scroller, padding=16, expand=True)
        self.wide: bool | None = None
        self.arrange(wide=True)
        self._running = False

    def arrange(self, wide: bool, width: float | None = None) -> None:
        """A wide window: (preview, controls, timeline | card, examiner's list), so the list sits under
        the answer instead of below the fold. A phone: one column in the order a trainee needs while
        running: preview, what went wrong if anything, the whole answer, controls, timeline, list.
        The stage keeps its place in the tree: a camera control that moves is rebuilt, and its stream
        ends."""
        # A phone's stage is 4:3 across its width. A height, not an aspect ratio: Flet wraps a control
        # with one in another widget, and a camera whose parents change is rebuilt and its stream ends.
        self._width = width
        self._size_stage()
        if wide == self.wide:
            return
        self.wide = wide
        self.reviews.fit(wide)
        left, right = self._columns
        left.col, right.col = ({"xs": 7}, {"xs": 5}) if wide else ({"xs": 12}, {"xs": 12})
        # On a phone what went wrong (a model that cannot be used, a camera refused) comes before the card.
        if wide:
            self._live.controls = [self.stage, self._controls_row, *self._status_block]
        else:
            ended, card = self._ended_box, self._card
            self._live.controls = [self.stage, *self._status_block, ended, self.rhythm_box, card, self._controls_row]
        # Wide: the news of an ended session above the card, where the eye goes, not under the stage.
        self._right.controls = (
            [self._ended_box, self.rhythm_box, self._card, self._review_block] if wide else [self._review_block]
        )

    def _size_stage(self) -> None:
        width = self._width
        if self.wide or not width:
            self.stage.height = STAGE_HEIGHT
        else:  # 4:3 across a phone's width; 2.4:1 while a checklist and the rate share the screen with it
            self.stage.height = (width - 32) * 0.42 if self._compact else max(160.0, (width - 32) * 3 / 4)

    def _fit_compact(self, compact: bool) -> None:
        """A phone running a checklist with a rate: the rate panel and every line of the card in view
        together (they did not fit: the last line went below the fold). The preview goes 2.4:1 (a wide strip), and the
        cue sits beside the rate, smaller (still ~5 mm capitals, read from 1-2 m), the band's words left
        to the cue and its colour."""
        if compact == self._compact:
            return
        self._compact = compact
        self._size_stage()
        self.rate_title.visible = not compact
        self._rate_words_box.visible = not compact
        self.rate_cue.size, self.rate_cue_icon.size = (40, 34) if compact else (72, 64)
        self.rate.size = 32 if compact else 40
        self._rate_cue_slot.content = None if compact else self.rate_cue_box
        self._rate_row.controls = [
            *([self.rate_cue_box] if compact else []),
            self._rate_tag,
            self._rate_words_box,
        ]

    def show_metronome(self, on: bool, rate: int, sound_held: bool = False) -> None:
        """The metronome as it is (a page built again while it plays); `sound_held`: the metronome's or the
        rate tones' sound waits for a tap."""
        self.metronome.value, self.metronome_rate.value = on, str(rate)
        self.sound_held.visible = sound_held

    def show_rate_tones(self, on: bool) -> None:
        """The rate tones as they are (a page built again while they are on)."""
        self.rate_tones.value = on

    def _rate_tones_changed(self) -> None:
        self._actions.rate_tones(bool(self.rate_tones.value))

    def _metronome_changed(self) -> None:
        self._actions.metronome(bool(self.metronome.value), int(self.metronome_rate.value or DEFAULT_RATE))

    @property
    def chosen(self) -> SourceKind:
        """The source this page's trainee chose (a page built again keeps it)."""
        return self._chosen

    def choose(self, kind: SourceKind) -> None:
        """Shows `kind` (one of SOURCES) as chosen, as if tapped: a page built again keeps the trainee's choice."""
        _select(self.source, kind.value)
        self._source_chosen(None)

    def _source_chosen(self, e: ft.Event[Any] | None) -> None:
        self._chosen = SourceKind(self.source.selected[0])
        self.metronome_row.visible = self._chosen in RHYTHM_SOURCES
        if not self.metronome_row.visible and self.metronome.value:  # a hidden switch must not keep clicking
            self.metronome.value = False
            self._metronome_changed()
        if not self.metronome_row.visible and self.rate_tones.value:
            self.rate_tones.value = False
            self._rate_tones_changed()

    def _start_stop(self, _: object) -> None:
        if self._running:
            self._actions.stop()
        else:
            self._actions.start(self._chosen, int(self.interval.selected[0]))

    def _scroll_to_top(self) -> None:
        """On a phone Start sits below the card: a person scrolled down to it, and the preview, the rate
        and the answer they now need are above the fold."""
        try:
            page = self.root.page
        except RuntimeError:  # not on a page yet: it opens at the top
            return
        page.run_task(self._scroller.scroll_to, offset=0, duration=300)

    def _cut_words(self, state: PracticeState) -> str:
        """The score cuts the questions asked carry, in words ("" when none is in force)."""
        t, checklist = self._t, state.checklist
        if checklist is None:
            return t["score_cut_one"].format(cut=f"{state.min_score:.2f}") if state.min_score is not None else ""
        cuts = [
            t["score_cut_item"].format(
                question=spec.labels_for(self._language).question or signal_words(self._w, spec.signal),
                cut=f"{spec.min_score:.2f}",
            )
            for spec in checklist.signals
            if spec.min_score is not None
        ]
        return t["score_cut_many"].format(cuts="; ".join(cuts)) if cuts else ""

    def _edit_names(self) -> None:
        page = self.root.page
        page.show_dialog(names_dialog(self._w, *self._named, self._actions.names, page.pop_dialog))

    def hide_session(self, session_id: str | None) -> None:
        """An ended session this page does not show: a tab opened after it ends starts from a clean card
        (its last frame could show the previous trainee). Its reviews stay in Sessions."""
        self.hidden_session = session_id

    # --- rendering ------------------------------------------------------------------------------

    def render(self, state: PracticeState) -> None:
        ended = state  # the ended session as it is, for its pending answers, even where this tab hides it
        if state.running or state.session_id != self.hidden_session:
            self.hidden_session = None
        else:
            state = replace(clean_card(state), session=SessionState())
        if state.running and not self._running and self.wide is False:
            self._scroll_to_top()
        self._running = state.running
        self.start_stop.content = self._t["stop"] if state.running else self._t["start"]
        self.start_stop.icon = ft.Icons.STOP if state.running else ft.Icons.PLAY_ARROW
        self.start_stop.disabled = state.worker_status == WorkerStatus.FAILED
        self.source.disabled = self.interval.disabled = self.try_examples.disabled = state.running
        running = state.source_kind if state.running and state.source_kind in SOURCES else None
        _select(self.source, (running or self._chosen).value)
        _select(self.interval, f"{state.interval_s:g}")
        self._named = (state.trainee, state.examiner)
        self.names.value = names_line(self._w, state.trainee, state.examiner)
        self._render_worker(state)
        self._render_stage(state)
        self._render_rhythm(state)
        self._fit_compact(not self.wide and state.checklist is not None and state.running and self.rhythm_box.visible)
        shown = state.source_kind if state.running else self._chosen
        self.metronome_row.visible = shown in RHYTHM_SOURCES  # stills have no rhythm to keep
        self.error.value = notices_text(self._t, state.error)
        self.notice.value = notices_text(self._t, state.notice)
        self._render_ended(ended)
        self.log_error.value = self._t["log_error"].format(reason=state.log_error) if state.log_error else ""

        labels = dict(state.labels).get(self._language)
        checklist = state.checklist
        if checklist is not None:
            self.question.value = checklist.labels_for(self._language).title or checklist.title
        else:
            # The profile's short words for people; never its prompt, which may be a paragraph of instructions
            # meant for another model ("Answer with only this JSON object…").
            self.question.value = (labels.question if labels else "") or (labels.title if labels else "") or state.title
        if checklist is not None:
            title = checklist.labels_for(self._language).title or checklist.title
            self.asking.value = self._t["asking_n"].format(title=title, n=len(checklist.signals))
        else:
            title = (labels.title if labels else "") or state.title
            self.asking.value = self._t["asking_one"].format(title=title) if title else ""
        models = state.profile_models
        if state.model_id and not written_for(models, state.model_id):
            self.written_for.value = self._t["written_for_other"].format(models=", ".join(models), model=state.model_id)
        else:
            self.written_for.value = ""
        self._written_for_box.visible = bool(self.written_for.value)
        self.score_cut.value = self._cut_words(state)
        self._score_cut_box.visible = bool(self.score_cut.value)
        self.change_questions.disabled = state.running  # a new profile would end the running session
        self.answer_row.visible = checklist is None
        self.checklist_box.visible = checklist is not None
        self._render_answer(state.latest, state)
        if checklist is not None:
            self._render_checklist(state, checklist)
        self._render_failure(state.latest_failure, state.latest)
        self._shown = state
        self._render_age(state)
        self.slower.value = (
            self._t["slower"].format(need=state.model_seconds, every=state.effective_interval_s, n=state.interval_s)
            if state.interval_stretched and state.model_seconds and state.effective_interval_s
            else ""
        )
        self.timeline.update(state.session)
        self.reviews.render(
            state.session.timeline,
            state.answer_values,
            self._actions.review,
            session_questions(self._w, state.session),
        )
        for line, box in (*self._status_lines.items(), *self._card_lines.items()):
            box.visible = bool(line.value)  # an empty line would still take its height

    def _render_ended(self, state: PracticeState) -> None:
        """The news of how the last session ended, with how many of its answers wait for the examiner and
        the way to them: the same in every tab, one opened since too (which does not list them here)."""
        waiting = 0 if state.running else len(state.session.pending)
        self._ended_box.visible = bool(self.notice.value)
        self._ended_session = state.session_id or ""
        words = self._t["ended_pending_one"] if waiting == 1 else self._t["ended_pending"].format(n=waiting)
        self.ended_pending.value = words if waiting else ""
        self._ended_pending_box.visible = bool(waiting)
        self._open_ended_box.visible = bool(self._ended_session) and self._ended_box.visible and not state.running

    def _render_worker(self, state: PracticeState) -> None:
        status = state.worker_status
        if status == WorkerStatus.READY:
            text = self._t["worker_ready"].format(model=state.model_id)
        elif status == WorkerStatus.FAILED:
            model = state.model_asked or self._t["demo_model_name"]
            text = self._t["worker_failed"].format(model=model, reason=state.worker_message)
        elif status == WorkerStatus.RESTARTING:
            text = self._t["worker_restarting"].format(reason=state.worker_message)
        else:
            text = self._t["worker_starting"]
        self.model_status.value = text
        self.model_status.color = ft.Colors.RED_800 if status == WorkerStatus.FAILED else ft.Colors.GREY_800
        self.model_hint.visible = self.open_models_box.visible = status == WorkerStatus.FAILED
        self.model_hint.value = self._t["worker_failed_folder_hint" if state.model_is_folder else "worker_failed_hint"]

    def _render_stage(self, state: PracticeState) -> None:
        # The camera control stays mounted (an invisible control has no client side to talk to);
        # outside this tab's camera session the stage's own layers cover it. Another tab's camera
        # session shows its pictures here.
        camera_live = state.running and state.camera_tab == self.tab and self.tab != ""
        camera_elsewhere = state.running and state.source_kind is SourceKind.CAMERA and not camera_live
        self.cover.visible = not camera_live
        self.preview.visible = state.preview is not None and not camera_live
        if state.preview is not None:
            self.preview.src = state.preview
        self.preview_hint.visible = not camera_live and state.preview is None
        self.inset.visible = state.analysing is not None and state.analysing_thumb is not None
        if state.analysing_thumb is not None:
            self.inset.src = state.analysing_thumb
        self.busy.visible = state.analysing is not None
        self.inset_panel.visible = state.running or state.analysing is not None
        if state.analysing is not None and state.checklist is not None and state.analysing_signal:
            self.activity.value = self._answering_text(state.checklist, state.analysing_signal)
        elif state.analysing is not None:
            phase = self._t[f"phase_{state.phase or RunPhase.VISION}"]
            self.activity.value = self._t["analysing_phase"].format(phase=phase)
        elif camera_elsewhere and state.camera_tab:
            self.activity.value = self._t["camera_in_other_tab"]
        else:
            self.activity.value = self._t["waiting_keyframe"] if state.running else ""
        self.stream.value = self._t["streaming"].format(text=state.streamed) if state.analysing is not None else ""

    def _render_answer(self, event: PracticeEvent | None, state: PracticeState) -> None:
        self.answer.size = 30 if event is None else 48  # the answer large; the placeholder need not be
        if event is None:
            # After a session that ended on its own (a video's end, the camera's tab gone): said on the card too.
            placeholder = "session_ended" if state.notice and not state.running else "no_answer_yet"
            self.answer.value, self.answer.color = self._t[placeholder], ft.Colors.GREY_600
            self.answer_icon.icon, self.answer_icon.color = ft.Icons.HOURGLASS_EMPTY, ft.Colors.GREY_500
            self.why.value = self.review_state.value = self.taken.value = self.details.value = ""
            return
        # The examiner's verdict, once given, is the answer shown; review_state says what the model said.
        entry = next((e for e in state.session.timeline if e.event.event_id == event.event_id), None)
        verdict = entry.verdict if entry is not None else event.observation
        style = mark_style(verdict)  # the same colour and shape as on the timeline
        labels = dict(state.labels).get(self._language)
        self.answer.value = (labels.value_words(verdict) if labels else None) or answer_word(self._w, verdict)
        self.answer.color, self.answer_icon.icon, self.answer_icon.color = style.colour, style.icon, style.colour
        self.why.value = (
            self._t["why_unknown"].format(reason=reason_words(self._w, event.parse_reason))
            if event.observation == UNKNOWN
            else ""
        )
        self.review_state.value = _review_text(self._t, self._w, entry)
        if state.checklist is not None:  # each line says its own answer, reason and verdict
            self.why.value = ""
        self.taken.value = when_taken(self._w, event.t, event.wall_time, event.source, event.still)
        # Details are the model's record of the keyframe: a question its gate left unasked has none (no
        # text, no time), so the last question it was asked speaks for the keyframe.
        same = [e.event for e in keyframe_entries(state.session.timeline, event.keyframe_id).values()]
        event = next((e for e in reversed(same) if e.parse_status != ParseStatus.NOT_ASKED), event)
        score = "—" if event.model_score is None else f"{event.model_score:.3g}"
        tm = event.timings
        interval = f"{state.effective_interval_s:.1f} s" if state.effective_interval_s else "—"
        self.details.value = "\n".join(
            [
                f"{self._t['detail_raw']}: {event.raw}",
                f"{self._t['detail_parse']}: {event.parse_status} ({event.parse_reason})",
                f"{self._t['detail_score']}: {score} · {self._t['detail_confidence']}",
                f"{self._t['detail_timings']}: "
                + self._t["detail_timing_values"].format(
                    total=tm.total_ms,
                    vision=tm.vision_ms,
                    prefill=tm.prefill_ms,
                    first=tm.first_token_ms,
                    decode=tm.decode_ms,
                ),
                f"{self._t['detail_model']}: {event.model_id} @ {event.model_revision} · {event.backend}",
                f"{self._t['detail_interval']}: {interval}",
                f"{self._t['detail_latency']}: {_latency_strip(state.session.timeline)}",
            ]
        )

    def _render_rhythm(self, state: PracticeState) -> None:
        """The rate while a camera or video session runs (the session's median once it ended), in words
        against the guideline target; '—' when no steady compressions are seen."""
        rhythm = state.rhythm
        self.rhythm_box.visible = rhythm is not None and state.source_kind in RHYTHM_SOURCES
        self.cue_band = None
        self.rate_cue_box.visible = self.pause_flag_row.visible = False
        if rhythm is None or not self.rhythm_box.visible:
            return
        t = self._t
        rate = rhythm.rate_per_min if state.running else rhythm.median_rate_per_min
        self.rate_title.value = t["rate_title"] if state.running else t["rate_title_ended"]
        fps = "—" if rhythm.frame_rate is None else f"{rhythm.frame_rate:.{0 if rhythm.frame_rate >= 10 else 1}f}"
        if rate is None:
            self.rate.value, self.rate.color = "—", ft.Colors.GREY_600
            # Never "no compressions seen" when the camera's frames are too few to see them.
            too_few = state.running and rhythm.too_few_frames
            self.rate_words.value = t["rate_too_few_frames"].format(fps=fps) if too_few else t["rate_none"]
        else:
            band = rate_band(rate)
            self.rate.value = t["rate_value"].format(rate=shown_rate(rate))
            self.rate.color = ft.Colors.GREEN_800 if band == "in_band" else ft.Colors.ORANGE_900
            low, high = TARGET_RATE_PER_MIN
            self.rate_words.value = t[f"rate_{band}"].format(low=low, high=high)
            if state.running:  # a cue is for now: the ended session's median needs none
                self._render_cue(band)
        self._render_pause_flag(rhythm.pauses, state.running)
        if rhythm.pauses:
            longest = max(p.length_s for p in rhythm.pauses)
            pauses = t["rate_pauses"].format(n=len(rhythm.pauses), longest=f"{longest:.1f}")
        else:
            pauses = t["rate_pauses_none"]
        ccf = "—" if rhythm.compression_fraction is None else f"{100 * rhythm.compression_fraction:.0f} %"
        frames = t["rate_frames"].format(fps=fps)
        self.rate_details.value = t["rate_details"].format(count=rhythm.count, pauses=pauses, ccf=ccf, frames=frames)

    def _render_cue(self, band: str) -> None:
        """The one-word cue for the band of the rate shown (`rate_band`: judged on the rounded figure)."""
        word, icon, colour = {
            "slow": ("rate_cue_faster", ft.Icons.ARROW_UPWARD, ft.Colors.ORANGE_900),
            "fast": ("rate_cue_slower", ft.Icons.ARROW_DOWNWARD, ft.Colors.ORANGE_900),
            "in_band": ("rate_cue_good", ft.Icons.CHECK_CIRCLE_OUTLINE, ft.Colors.GREEN_800),
        }[band]
        self.rate_cue.value, self.rate_cue_icon.icon, self.rate_cue_box.bgcolor = self._t[word], icon, colour
        self.rate_cue_box.visible = True
        self.cue_band = band

    def _render_pause_flag(self, pauses: Sequence[Pause], running: bool) -> None:
        """Pauses over the guidelines' limit (`LONG_PAUSE_S`): the one going on now while it is over, else
        the longest; once the session ended, a pause that lasted until its end is not counted (`long_pauses`)."""
        over = long_pauses(pauses, ended=not running)
        if not over:
            return
        now = next((p for p in over if p.ongoing), None)
        key, shown = ("rate_pause_long_now", now) if now is not None else ("rate_pause_long", max(over, key=_length))
        self.pause_flag.value = self._t[key].format(
            longest=f"{shown.length_s:.1f}", limit=f"{LONG_PAUSE_S:g}", n=len(over)
        )
        self.pause_flag_row.visible = True

    def _answering_text(self, checklist: Checklist, signal: str) -> str:
        order = [spec.signal for spec in checklist.ordered()]
        if signal not in order:
            return self._t["analysing_phase"].format(phase=self._t["phase_decode"])
        line = checklist_lines(checklist, (), None, signal, self._language, self._w)[order.index(signal)]
        return self._t["answering_signal"].format(signal=line.words, i=order.index(signal) + 1, n=len(order))

    def _render_checklist(self, state: PracticeState, checklist: Checklist) -> None:
        """A line per signal of the newest keyframe, gate first; the rows are kept while the profile is."""
        keyframe = state.latest.keyframe_id if state.latest is not None else None
        lines = checklist_lines(
            checklist, state.session.timeline, keyframe, state.analysing_signal, self._language, self._w
        )
        if checklist != self._checklist_shown:
            self._checklist_shown = checklist
            self._checklist_rows = {line.signal: ChecklistLine(line.signal) for line in lines}
            self.checklist_column.controls = [row.root for row in self._checklist_rows.values()]
        gate = next((line for line in lines if line.gate), None)
        labels = {spec.signal: spec.labels_for(self._language) for spec in checklist.signals}
        for line in lines:
            self._checklist_rows[line.signal].render(line, gate, labels[line.signal], self._t, self._w)
        if state.latest is not None:
            reviewed, answered = reviewed_count(lines)
            if reviewed == 0:
                self.review_state.value = self._t["waiting_examiner"]
            else:
                self.review_state.value = self._t["reviewed_n_of_m"].format(n=reviewed, m=answered)
            # Details: every signal's raw reply first, then the keyframe's timings and model.
            answers = keyframe_entries(state.session.timeline, keyframe)
            raw = [
                f"{signal}: {self._t['detail_not_asked']}"
                if e.event.parse_status == ParseStatus.NOT_ASKED
                else f"{signal}: {e.event.raw or '—'} ({e.event.parse_reason})"
                for signal, e in answers.items()
            ]
            self.details.value = "\n".join([*raw, self.details.value])

    def tick(self) -> None:
        """Once a second while a session runs (the page's ticker): the answer's age and freshness only,
        from the state last rendered (no new state comes while an unchanged scene or a still is up)."""
        if self._shown is not None:
            self._render_age(self._shown)

    def _render_age(self, state: PracticeState) -> None:
        """The answer's age under it ("answered 9 s ago") in a running camera or video session; the answer dimmed,
        and said to be older, while the next keyframe is analysed and it is older than the time between
        answers. Stills are answered in turn, so their age says nothing: none is shown."""
        event = state.latest
        still = event is not None and (event.still or state.source_kind in STILL_SOURCES)
        said, older = "", False
        if event is not None and state.running and not still:
            # The answer's wall_time (when it arrived, on this machine's clock) against the wall clock now:
            # the frame's own `t` is on the session's clock (a video's time from its start), which no
            # clock here can be compared with, and how long the card has shown the answer is what a
            # trainee needs to judge it by.
            age = max(0.0, self._now() - event.wall_time)
            said = _age_words(self._t, age)
            # The time between answers: the interval, or the longer one a slower model stretched it to.
            between = max(state.interval_s, state.effective_interval_s or 0.0)
            older = state.analysing is not None and age > between
            if older:
                said = self._t["answer_older"].format(age=said)
        self.age.value = said
        self.age.color = ft.Colors.ORANGE_900 if older else ft.Colors.GREY_800
        self.answer_row.opacity = OLDER_OPACITY if older else 1.0
        for row in self._checklist_rows.values():
            row.dim(older, OLDER_OPACITY)
        self._card_lines[self.age].visible = bool(said)

    def _render_failure(self, failure: KeyframeFailed | None, latest: PracticeEvent | None) -> None:
        newer = failure is not None and (latest is None or failure.wall_time >= latest.wall_time)
        said = self._t["keyframe_failed"].format(t=failure.t, message=failure.message) if failure is not None else ""
        self.failure.value = said if newer else ""


def _select(buttons: ft.SegmentedButton, value: str) -> None:
    """Selects `value`, touching the control only when that changes: a new list on every render (4 a
    second while a preview plays) made Flet send the buttons again, rebuilt under the user's finger."""
    if list(buttons.selected or []) != [value]:
        buttons.selected = [value]


def _age_words(t: Mapping[str, str], age: float) -> str:
    """'answered just now', 'answered 9 s ago', 'answered 2 min ago' (whole seconds and minutes, rounded down)."""
    if age < 1:
        return t["answered_now"]
    if age < 60:
        return t["answered_s_ago"].format(n=int(age))
    return t["answered_min_ago"].format(n=int(age // 60))


def _length(pause: Pause) -> float:
    return pause.length_s


def _review_text(t: Mapping[str, str], w: Mapping[str, str], entry: TimelineEntry | None) -> str:
    if entry is None or entry.review is Review.PENDING:
        return t["waiting_examiner"]
    if entry.review is Review.CONFIRMED:
        return t["confirmed"]
    return t["corrected"].format(model=answer_word(w, entry.event.observation))


def _latency_strip(timeline: tuple[TimelineEntry, ...], last: int = 8) -> str:
    """Time to a parsed answer of the latest keyframes, oldest first: a slowdown shows at a glance."""
    recent = timeline[-last:]
    return " · ".join(f"{e.event.timings.total_ms:.0f}" for e in recent) + " ms" if recent else "—"
