"""A session's practice report: one self-contained, printable HTML page (no UI, no network).

Everything it needs is inline (styles, the rate chart as SVG) and its own Content-Security-Policy
forbids loading anything, so a saved copy opens the same anywhere and fetches nothing. It carries no
keyframe picture: a report is handed around, and the pictures of a trainee stay in the app.

What it claims is bounded on purpose: the model's answers are practice feedback with the examiner's
agreement labelled as agreement (not accuracy); the rhythm figures come with their method and the
error measured on the project's generated videos; guideline figures are quoted as targets; depth and
recoil are said to be not measured.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from html import escape

from app.core.rhythm import MEASURED_RATE_ERROR, TARGET_RATE_PER_MIN, Pause, rate_band
from app.core.rhythm_summary import RhythmSummary, rhythm_lines, summarise_rhythm
from app.core.session import PracticeEvent, RhythmSample
from app.core.session_summary import NOT_CHECKED, SessionSummary, SignalSummary, summarise
from app.session.store import LoadedSession, session_facts

NOT_MEDICAL = "Practice feedback, not a medical assessment."
DEPTH_RECOIL = "Depth and recoil: not measured by the camera."

_CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #111;
       max-width: 820px; margin: 24px auto; padding: 0 16px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; }
.sub { color: #444; margin: 0; } .notice { font-weight: 600; border-left: 4px solid #b26a00;
       padding: 6px 10px; background: #fff6e5; }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: 5px 8px;
       border-bottom: 1px solid #ccc; vertical-align: top; } th { background: #f2f2f2; }
table.narrow { width: auto; } .wide { overflow-x: auto; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.small { color: #444; font-size: 13px; } svg { max-width: 100%; height: auto; }
@media print { body { margin: 0; max-width: none; } .notice { background: none; } }
"""


def _readable(signal: str) -> str:
    return signal.replace("_", " ").capitalize() or "The question"


def _when(wall: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(wall)) if wall is not None else "no keyframe recorded"


def _count(counts: Sequence[tuple[str, int]], value: str) -> int:
    return dict(counts).get(value, 0)


def _agreement(confirmed: int, reviewed: int) -> str:
    return f"{100 * confirmed / reviewed:.0f} % ({confirmed} of {reviewed})" if reviewed else "— (nothing reviewed)"


def _checklist_rows(summary: SessionSummary, signal: str) -> list[SignalSummary]:
    if summary.signals:
        return list(summary.signals)
    return [
        SignalSummary(signal, summary.counts, summary.analysed, summary.reviewed, summary.confirmed, summary.corrected)
    ]


def _answers_section(loaded: LoadedSession) -> str:
    state = loaded.state
    if not state.timeline:
        return "<h2>Checklist</h2><p>No keyframe was answered in this session.</p>"
    summary = summarise(state, len(loaded.damaged_lines))
    rows = []
    for item in _checklist_rows(summary, state.signals[0]):
        others = sum(n for value, n in item.counts if value not in ("yes", "no", "unknown", NOT_CHECKED))
        cells = [
            f"<td>{escape(_readable(item.signal))}</td>",
            *(f'<td class="n">{_count(item.counts, v)}</td>' for v in ("yes", "no", "unknown", NOT_CHECKED)),
            f'<td class="n">{others}</td>' if others else '<td class="n">0</td>',
            f"<td>{item.reviewed} of {item.analysed}</td>",
            f"<td>{_agreement(item.confirmed, item.reviewed)}</td>",
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    head = (
        "<tr><th>Question</th><th>Yes</th><th>No</th><th>Unknown</th><th>Not checked</th><th>Other</th>"
        "<th>Reviewed by the examiner</th><th>Agreement with the examiner</th></tr>"
    )
    return (
        f"<h2>Checklist</h2><p>Keyframes answered by the on-device model: {summary.keyframes}; "
        f"the counts are the model's answers.</p>"
        f'<div class="wide"><table>{head}{"".join(rows)}</table></div>'
        '<p class="small">Every answer is generative (confidence 0) and waits for an examiner. '
        "Agreement is how often the examiner confirmed the model's answer among the answers the examiner "
        "reviewed: agreement, not accuracy. \u201cNot checked\u201d: the checklist's first question did not "
        "open, so the model was not asked.</p>"
    )


def _rate_chart(samples: Sequence[RhythmSample], pauses: Sequence[Pause]) -> str:
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
        f'<text x="{left}" y="{height - 2}" font-size="11">0 s</text>'
        f'<text x="{width - 8}" y="{height - 2}" font-size="11" text-anchor="end">{t1 - t0:.0f} s</text>'
    )
    label = (
        f"Compression rate per minute over the session, against the target band {band_lo} to {band_hi}; "
        f"{len(pauses)} pauses"
    )
    return (
        f'<svg role="img" aria-label="{escape(label)}" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" xmlns="http://www.w3.org/2000/svg"><title>{escape(label)}</title>{"".join(parts)}</svg>'
    )


def _rhythm_section(samples: Sequence[RhythmSample], rhythm: RhythmSummary | None) -> str:
    if rhythm is None:
        return (
            "<h2>Compression rhythm</h2><p>Not measured: the rhythm is measured from the frames of a camera or "
            "video session, and this session had none (still images, or recorded by an earlier version).</p>"
        )
    figures = "".join(f"<li>{escape(line)}</li>" for line in rhythm_lines(rhythm) if not line.startswith("Depth"))
    pauses = "".join(
        f'<tr><td class="n">{p.start_s - samples[0].t:.1f} s</td><td class="n">{p.length_s:.1f} s'
        f"{' (until the end)' if p.ongoing else ''}</td></tr>"
        for p in rhythm.pauses
    )
    pause_table = f'<table class="narrow"><tr><th>Pause from</th><th>Length</th></tr>{pauses}</table>' if pauses else ""
    last = samples[-1].rate_per_min
    words = "" if last is None else f" The last rate measured was {last:.0f} per minute ({_band_words(last)})."
    err = MEASURED_RATE_ERROR
    return (
        f"<h2>Compression rhythm</h2><ul>{figures}</ul>{_rate_chart(samples, rhythm.pauses)}"
        f'<p class="small">Green: the target band. Grey bars: pauses.{words}</p>{pause_table}'
        "<h3>How it is measured</h3>"
        '<p class="small">From the movement between consecutive frames (every frame, not only keyframes), '
        "without the model: the regularity of that movement over the last 6 s gives the rate, each "
        "compression is counted at the bottom of its movement, and 2 s or more without one is a pause. "
        "Camera shake and changes of light are not counted as movement. "
        f"Measured error on the project's {err.videos} generated test videos of compressions at known rates: "
        f"median {err.median_per_min:.1f} per minute, 95th percentile {err.p95_per_min:.1f} per minute. "
        "Generated videos are not a manikin with sensors: real sessions (clothing, camera angle, a second "
        "person moving) can be worse.</p>"
        f"<p><strong>{DEPTH_RECOIL}</strong> One camera sees movement in pixels, not centimetres of chest.</p>"
    )


def _band_words(rate: float) -> str:
    return {"slow": "below the target", "fast": "above the target", "in_band": "in the target band"}[rate_band(rate)]


def _targets_section() -> str:
    low, high = TARGET_RATE_PER_MIN
    return (
        "<h2>Guideline targets</h2><p>Quoted as targets for practice, not as a verdict on this session "
        "(adult CPR, resuscitation council guidelines):</p><ul>"
        f"<li>Rate: {low}–{high} compressions per minute.</li>"
        "<li>Interruptions: as few and as short as possible, none longer than 10 s; a compression fraction "
        "of at least 60 %.</li>"
        f"<li>Depth 5–6 cm, and full recoil of the chest after each compression. {DEPTH_RECOIL}</li>"
        "</ul>"
    )


def practice_report(loaded: LoadedSession, session_id: str) -> str:
    """The report of one session as a complete HTML document."""
    state = loaded.state
    facts = session_facts(loaded)
    answers = [e for e in loaded.events if isinstance(e, PracticeEvent)]
    models = ", ".join(dict.fromkeys(e.model_id for e in answers if e.model_id)) or "—"
    # Keyframes span less than the frames the rhythm followed (the last keyframe is seconds before the end).
    spans = [facts.duration_s] if facts.duration_s is not None else []
    spans += [state.rhythm[-1].t - state.rhythm[0].t] if state.rhythm else []
    duration = f"{max(spans):.0f} s" if spans else "—"
    started = facts.started if facts.started is not None else (state.rhythm[0].wall_time if state.rhythm else None)
    damaged = (
        f'<p class="small">{len(loaded.damaged_lines)} damaged lines of the session log were skipped.</p>'
        if loaded.damaged_lines
        else ""
    )
    title = f"Practice report — session {session_id}"
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>"
        f'<h1>Practice report</h1><p class="sub">Session {escape(session_id)} · {_when(started)} · '
        f"{duration} · {escape(facts.source or '—')} · model {escape(models)}</p>"
        f'<p class="notice">{NOT_MEDICAL}</p>'
        f"{_answers_section(loaded)}{_rhythm_section(state.rhythm, summarise_rhythm(state.rhythm))}"
        f"{_targets_section()}{damaged}"
        f'<hr><p class="small">Made on this device by Keyframe. The pictures never left the device and are not '
        f"in this report. {NOT_MEDICAL}</p></body></html>\n"
    )
