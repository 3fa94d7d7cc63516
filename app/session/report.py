"""A session's practice report: one self-contained, printable HTML page (no UI, no network).

Everything it needs is inline (styles, the rate chart as SVG) and its own Content-Security-Policy
forbids loading anything, so a saved copy opens the same anywhere and fetches nothing. It carries no
keyframe picture: a report is handed around, and the pictures of a trainee stay in the app.

What it claims is bounded on purpose: the model's answers are practice feedback with the examiner's
agreement labelled as agreement (not accuracy); the rhythm figures come with their method and the
error measured on the project's generated videos; guideline figures are quoted as targets; depth and
recoil are said to be not measured.

It is written in one language, English or Simplified Chinese (`app.session.report_words`), the same
claims and the same figures in both.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from html import escape

from app.core.rhythm_figures import (
    LONG_PAUSE_S,
    MEASURED_RATE_ERROR,
    MOVING_WITH_A_RATE,
    TARGET_RATE_PER_MIN,
    VIEW_ACCURACY,
    Pause,
    long_pauses,
    rate_band,
    shown_rate,
)
from app.core.rhythm_summary import RhythmSummary, summarise_rhythm
from app.core.session import PracticeEvent, RhythmSample, SessionAsked, SessionState
from app.core.session_summary import NOT_CHECKED, SessionSummary, SignalSummary, summarise, verdict_kind
from app.models.catalog import DEFAULT_MODEL_ID as DEMO
from app.session.report_words import EN, report_words, rhythm_figures, signal_words
from app.session.store import LoadedSession, session_facts

NOT_MEDICAL = EN["not_medical"]
# Under this many reviewed answers an agreement is said to be too few to mean much (1 of 2 is "50 %").
FEW_REVIEWS = 10
DEPTH_RECOIL = EN["depth_recoil"]

Words = Mapping[str, str]

_CSS = """
body { font: 15px/1.45 FONT_FAMILY; color: #111;
       max-width: 820px; margin: 24px auto; padding: 0 16px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; }
.sub { color: #444; margin: 0; } .notice { font-weight: 600; border-left: 4px solid #b26a00;
       padding: 6px 10px; background: #fff6e5; }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: 5px 8px;
       border-bottom: 1px solid #ccc; vertical-align: top; } th { background: #f2f2f2; }
table.narrow { width: auto; } .wide { overflow-x: auto; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.small { color: #444; font-size: 13px; } svg { max-width: 100%; height: auto; }
table.sign td { height: 34px; min-width: 120px; } .signoff { break-inside: avoid; }
@media print { body { margin: 0; max-width: none; } .notice { background: none; } }
"""


def _say(w: Words, key: str, **values: object) -> str:
    """A sentence of the table as HTML text: the words as they are, the values filled in escaped."""
    return escape(w[key], quote=False).format(**{name: escape(str(value)) for name, value in values.items()})


def _when(wall: float | None, w: Words) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(wall)) if wall is not None else w["no_keyframe_time"]


def _agreement(confirmed: int, reviewed: int, w: Words) -> str:
    if not reviewed:
        return _say(w, "agreement_none")
    key = "agreement_few" if reviewed < FEW_REVIEWS else "agreement"
    return _say(w, key, percent=f"{100 * confirmed / reviewed:.0f}", confirmed=confirmed, reviewed=reviewed)


def _checklist_rows(summary: SessionSummary, signal: str) -> list[SignalSummary]:
    if summary.signals:
        return list(summary.signals)
    return [
        SignalSummary(signal, summary.counts, summary.analysed, summary.reviewed, summary.confirmed, summary.corrected)
    ]


def _count_cell(verdicts: Counter[str], model: Counter[str], values: Sequence[str], w: Words) -> str:
    """The verdicts' count of `values`, with the model's beside it where an examiner changed it."""
    n, by_model = sum(verdicts[v] for v in values), sum(model[v] for v in values)
    beside = f' <span class="small">{_say(w, "model_count", n=by_model)}</span>' if by_model != n else ""
    return f'<td class="n">{n}{beside}</td>'


def _answers_section(loaded: LoadedSession, language: str, w: Words) -> str:
    state = loaded.state
    title = f"<h2>{_say(w, 'checklist_title')}</h2>"
    if not state.timeline:
        return f"{title}<p>{_say(w, 'checklist_none')}</p>"
    summary = summarise(state, len(loaded.damaged_lines))
    # Each question as the session asked it (its record, as its card showed it), else named as the report
    # names signals.
    asked = state.asked.questions(language) if state.asked is not None else {}
    rows = []
    shown = ("yes", "no", "unknown", NOT_CHECKED)
    for item in _checklist_rows(summary, state.signals[0]):
        verdicts = Counter(verdict_kind(e) for e in state.timeline if e.event.signal == item.signal)
        model = Counter(dict(item.counts))
        other = [v for v in {*verdicts, *model} if v not in shown]
        cells = [
            f"<td>{escape(asked.get(item.signal) or signal_words(language, item.signal))}</td>",
            *(_count_cell(verdicts, model, (v,), w) for v in shown),
            _count_cell(verdicts, model, other, w),
            f"<td>{_say(w, 'reviewed_of', reviewed=item.reviewed, analysed=item.analysed)}</td>",
            f"<td>{_agreement(item.confirmed, item.reviewed, w)}</td>",
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    columns = ("question", "yes", "no", "unknown", "not_checked", "other", "reviewed", "agreement")
    head = "<tr>" + "".join(f"<th>{_say(w, f'col_{c}')}</th>" for c in columns) + "</tr>"
    return (
        f"{title}<p>{_say(w, 'checklist_intro', n=summary.keyframes)}</p>"
        f'<div class="wide"><table>{head}{"".join(rows)}</table></div>'
        f'<p class="small">{_say(w, "checklist_note")}</p>'
        f"{_notes(state, asked, language, w)}"
    )


def _notes(state: SessionState, asked: Mapping[str, str], language: str, w: Words) -> str:
    """Every examiner's note, with the answer it was written for, in the order given."""
    items = [(record.wall_time, entry, record) for entry in state.timeline for record in entry.history if record.note]
    if not items:
        return ""
    lines = [
        "<li>"
        + _say(
            w,
            "note_item",
            t=f"{entry.event.t:.1f}",
            question=asked.get(entry.event.signal) or signal_words(language, entry.event.signal),
            verdict=w.get(f"verdict_{record.verdict}", record.verdict).format(answer=record.observation.upper()),
            note=record.note,
            by=record.examiner or w["none"],
        )
        + "</li>"
        for _, entry, record in sorted(items, key=lambda item: item[0])
    ]
    return f"<h3>{_say(w, 'notes_title')}</h3><ul>{''.join(lines)}</ul>"


def _seconds(value: float, w: Words, digits: int = 0) -> str:
    return w["seconds"].format(n=f"{value:.{digits}f}")


def _rate_chart(samples: Sequence[RhythmSample], pauses: Sequence[Pause], w: Words) -> str:
    """Rate over frame time, the target band shaded, pauses as grey bars along the bottom."""
    width, height, left, bottom, top = 640, 180, 44, 24, 8
    t0, t1 = samples[0].t, max(samples[-1].t, samples[0].t + 1)
    lo, hi = 40.0, 180.0

    def x(t: float) -> float:
        return left + (t - t0) / (t1 - t0) * (width - left - 8)

    def y(rate: float) -> float:
        clipped = min(hi, max(lo, rate))
        return top + (hi - clipped) / (hi - lo) * (height - top - bottom)

    band_lo, band_hi = TARGET_RATE_PER_MIN
    parts = [
        f'<rect x="{left}" y="{y(band_hi):.1f}" width="{width - left - 8}" height="{y(band_lo) - y(band_hi):.1f}" '
        'fill="#dff0d8"/>',
        *(
            f'<text x="{left - 6}" y="{y(r) + 4:.1f}" text-anchor="end" font-size="11">{r}</text>'
            f'<line x1="{left}" x2="{width - 8}" y1="{y(r):.1f}" y2="{y(r):.1f}" stroke="#ddd"/>'
            for r in (60, 100, 120, 160)
        ),
    ]
    for pause in pauses:
        parts.append(
            f'<rect x="{x(pause.start_s):.1f}" y="{height - bottom + 4}" '
            f'width="{max(1.0, x(pause.start_s + pause.length_s) - x(pause.start_s)):.1f}" height="8" fill="#777"/>'
        )
    run: list[str] = []
    for sample in [*samples, None]:
        if sample is not None and sample.rate_per_min is not None:
            run.append(f"{x(sample.t):.1f},{y(sample.rate_per_min):.1f}")
            continue
        if len(run) == 1:
            cx, cy = run[0].split(",")
            parts.append(f'<circle cx="{cx}" cy="{cy}" r="2" fill="#0b4f9c"/>')
        elif run:
            parts.append(f'<polyline points="{" ".join(run)}" fill="none" stroke="#0b4f9c" stroke-width="2"/>')
        run = []
    parts.append(
        f'<text x="{left}" y="{height - 2}" font-size="11">{escape(_seconds(0, w))}</text>'
        f'<text x="{width - 8}" y="{height - 2}" font-size="11" text-anchor="end">'
        f"{escape(_seconds(t1 - t0, w))}</text>"
    )
    label = w["chart_label"].format(low=band_lo, high=band_hi, n=len(pauses))
    return (
        f'<svg role="img" aria-label="{escape(label)}" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" xmlns="http://www.w3.org/2000/svg"><title>{escape(label)}</title>{"".join(parts)}</svg>'
    )


def _rhythm_section(samples: Sequence[RhythmSample], rhythm: RhythmSummary | None, language: str, w: Words) -> str:
    title = f"<h2>{_say(w, 'rhythm_title')}</h2>"
    if rhythm is None:
        return f"{title}<p>{_say(w, 'rhythm_none')}</p>"
    figures = "".join(f"<li>{escape(line, quote=False)}</li>" for line in rhythm_figures(rhythm, language))
    over = long_pauses(rhythm.pauses, ended=True)  # an interruption over the guidelines' limit, said so
    flag = f"<strong>{_say(w, 'pause_over', limit=f'{LONG_PAUSE_S:g}')}</strong>"
    pauses = "".join(
        f'<tr><td class="n">{escape(_seconds(p.start_s - samples[0].t, w, 1))}</td>'
        f'<td class="n">{escape(_seconds(p.length_s, w, 1))}{_say(w, "pause_ongoing") if p.ongoing else ""}'
        f"{flag if p in over else ''}</td></tr>"
        for p in rhythm.pauses
    )
    pause_table = (
        f'<table class="narrow"><tr><th>{_say(w, "pause_from")}</th><th>{_say(w, "pause_length")}</th></tr>'
        f"{pauses}</table>"
        if pauses
        else ""
    )
    last = samples[-1].rate_per_min
    words = "" if last is None else _say(w, "chart_last", rate=shown_rate(last), band=w[f"band_{rate_band(last)}"])
    err = MEASURED_RATE_ERROR
    method = _say(w, "method", videos=err.videos, median=f"{err.median_per_min:.1f}", p95=f"{err.p95_per_min:.1f}")
    return (
        f"{title}<ul>{figures}</ul>{_rate_chart(samples, rhythm.pauses, w)}"
        f'<p class="small">{_say(w, "chart_legend")}{words}</p>{pause_table}'
        f'<h3>{_say(w, "method_title")}</h3><p class="small">{method}</p>'
        f"{_views_table(w)}"
        f"<p><strong>{_say(w, 'depth_recoil')}</strong>{w['gap']}{_say(w, 'pixels')}</p>"
    )


def _views_table(w: Words) -> str:
    """The rate's measured error on each camera view: the app cannot tell which one a session used, so the
    reader finds the row for the view they filmed from."""
    head = "".join(
        f"<th>{_say(w, k)}</th>" for k in ("view_col", "view_shown", "view_median", "view_p95", "view_count")
    )
    rows = "".join(
        f'<tr><td>{_say(w, f"view_{v.view}")}</td><td class="n">{v.shown_percent} %</td>'
        f'<td class="n">{_say(w, "per_minute_short", n=f"{v.median_per_min:.1f}")}</td>'
        f'<td class="n">{_say(w, "per_minute_short", n=f"{v.p95_per_min:.1f}")}</td>'
        f'<td class="n">{v.worst_count_percent:.0f} %</td></tr>'
        for v in VIEW_ACCURACY
    )
    shown, total = MOVING_WITH_A_RATE
    return (
        f'<h3>{_say(w, "views_title")}</h3><p class="small">{_say(w, "views_intro")}</p>'
        f'<table class="narrow"><tr>{head}</tr>{rows}</table>'
        f'<p class="small">{_say(w, "views_moving", shown=shown, total=total)}</p>'
    )


def _targets_section(w: Words) -> str:
    low, high = TARGET_RATE_PER_MIN
    return (
        f"<h2>{_say(w, 'targets_title')}</h2><p>{_say(w, 'targets_intro')}</p><ul>"
        f"<li>{_say(w, 'target_rate', low=low, high=high)}</li>"
        f"<li>{_say(w, 'target_interruptions', limit=f'{LONG_PAUSE_S:g}')}</li>"
        f"<li>{_say(w, 'target_depth')}{w['gap']}{_say(w, 'depth_recoil')}</li>"
        "</ul>"
    )


def _source(loaded: LoadedSession, source: str, w: Words) -> str:
    """Where the frames came from, in words: the camera, a file's name, or how many images."""
    answers = [e for e in loaded.events if isinstance(e, PracticeEvent)]
    names = list(dict.fromkeys(e.source for e in answers if e.source))
    if len(names) > 1 and all(e.still for e in answers):
        return w["source_images"].format(n=len(names))
    if source == "camera" and not any(e.still for e in answers):
        return w["source_camera"]
    return source or w["none"]


def _asked(asked: SessionAsked | None, language: str, w: Words) -> str:
    """What the session asked and with which model, from its own first line (escaped)."""
    if asked is None:
        return _say(w, "asked_unknown")
    return _say(
        w,
        "asked",
        title=asked.title(language),
        profile=asked.profile_id,
        sha=asked.profile_sha256 or w["none"],
        model=asked.model_id,
        revision=asked.model_revision,
    )


def _sign_off(state: SessionState, w: Words) -> str:
    """Who practised and who examined, with lines to date and sign on paper (a name given is printed)."""
    rows = "".join(
        f"<tr><th>{_say(w, role)}</th><td>{escape(name)}</td><td></td><td></td></tr>"
        for role, name in (("sign_trainee", state.trainee), ("sign_examiner", state.examiner))
    )
    head = "".join(f"<th>{_say(w, key)}</th>" for key in ("sign_name", "sign_date", "sign_signature"))
    # Kept on one page when printed: the names belong with the lines to sign.
    table = f'<table class="sign"><tr><th></th>{head}</tr>{rows}</table>'
    return f'<div class="signoff"><h2>{_say(w, "sign_title")}</h2>{table}</div>'


def practice_report(loaded: LoadedSession, session_id: str, language: str = "en", print_nonce: str = "") -> str:
    """The report of one session as a complete HTML document, in `language` ("en" or "zh"; anything
    else gets English). With `print_nonce` it opens the browser's print dialog when loaded (the one
    script its policy allows, by that nonce): the copy the app opens in a tab to print or save as PDF."""
    w = report_words(language)
    state = loaded.state
    facts = session_facts(loaded)
    answers = [e for e in loaded.events if isinstance(e, PracticeEvent)]
    models = ", ".join(dict.fromkeys(e.model_id for e in answers if e.model_id)) or w["none"]
    # Keyframes span less than the frames the rhythm followed (the last keyframe is seconds before the end).
    spans = [facts.duration_s] if facts.duration_s is not None else []
    spans += [state.rhythm[-1].t - state.rhythm[0].t] if state.rhythm else []
    duration = _seconds(max(spans), w) if spans else w["none"]
    started = facts.started if facts.started is not None else (state.rhythm[0].wall_time if state.rhythm else None)
    damaged = f'<p class="small">{_say(w, "damaged", n=len(loaded.damaged_lines))}</p>' if loaded.damaged_lines else ""
    sub = _say(
        w,
        "sub",
        session=session_id,
        when=_when(started, w),
        duration=duration,
        source=_source(loaded, facts.source, w),
        models=models,
    )
    demo = f'<p class="notice">{_say(w, "demo_caveat")}</p>' if any(e.model_id == DEMO for e in answers) else ""
    people = _say(w, "people", trainee=state.trainee or w["none"], examiner=state.examiner or w["none"])
    css = _CSS.replace("FONT_FAMILY", w["font_family"])
    nonce = escape(print_nonce)
    policy = "default-src 'none'; style-src 'unsafe-inline'" + (f"; script-src 'nonce-{nonce}'" if print_nonce else "")
    print_script = f'<script nonce="{nonce}">addEventListener("load", () => print())</script>' if print_nonce else ""
    return (
        f'<!doctype html><html lang="{w["html_lang"]}"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_say(w, 'title', session=session_id)}</title><style>{css}</style></head><body>"
        f'<h1>{_say(w, "heading")}</h1><p class="sub">{sub}</p><p class="sub">{people}</p>'
        f'<p class="sub">{_asked(state.asked, language, w)}</p>'
        f'<p class="notice">{_say(w, "not_medical")}</p>{demo}'
        f"{_answers_section(loaded, language, w)}"
        f"{_rhythm_section(state.rhythm, summarise_rhythm(state.rhythm), language, w)}"
        f"{_targets_section(w)}{_sign_off(state, w)}{damaged}"
        f'<hr><p class="small">{_say(w, "footer")}{w["gap"]}{_say(w, "not_medical")}</p>{print_script}</body></html>\n'
    )
