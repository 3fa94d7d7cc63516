"""The rhythm as a session records it: samples in the log, the session's figures, the CSV, the report."""

from __future__ import annotations

import ast
import csv
import io
import json
import re
import string
from dataclasses import replace
from pathlib import Path

import pytest

from app.core.rhythm_figures import (
    MEASURED_RATE_ERROR,
    MOVING_WITH_A_RATE,
    VIEW_ACCURACY,
    VIEWS_RECEIPT,
    Pause,
    Rhythm,
    rate_band,
    shown_rate,
)
from app.core.rhythm_summary import summarise_rhythm
from app.core.session import ExaminerConfirmed, ExaminerCorrected, RhythmSample, event_from_dict, event_to_dict, reduce
from app.session import report_words
from app.session.report import DEPTH_RECOIL, NOT_MEDICAL, practice_report
from app.session.report_words import rhythm_figures
from app.session.review import ReviewError, record_review
from app.session.store import SessionLog, export_csv, export_rhythm_csv, load_session, summary_text
from tests.unit.test_session import practice

ROOT = Path(__file__).resolve().parents[2]


def sample(t: float, rate: float | None, count: int = 0, pauses: tuple[Pause, ...] = (), ccf: float | None = None):
    rhythm = Rhythm(t, rate, 0.9 if rate else 0.1, count, 110.0 if count else None, pauses, ccf)
    return RhythmSample.of(rhythm, event_id=f"r{t:g}".replace(".", "_"), wall_time=1000 + t)


def test_a_sample_reads_back_as_written_and_a_damaged_one_is_refused() -> None:
    s = sample(12.0, 111.5, count=20, pauses=(Pause(4.0, 2.5, False), Pause(10.0, 2.0, True)), ccf=0.7)
    line = json.loads(json.dumps(event_to_dict(s)))
    assert line["kind"] == "rhythm" and line["pauses"][1] == {"start_s": 10.0, "length_s": 2.0, "ongoing": True}
    assert event_from_dict(line) == s and event_from_dict(line).rhythm == s.rhythm
    for damage in (
        {"pauses": [{"start_s": "4", "length_s": 2.5, "ongoing": False}]},
        {"pauses": [[4.0, 2.5]]},
        {"pauses": {"start_s": 4.0}},
        {"count": 2.5},
        {"rate_per_min": "fast"},
        {"rate_per_min": 1e400},
        # Numbers of the right type that no session can hold (a hand-edited log printed "CCF: 5000 %").
        {"compression_fraction": 50},
        {"compression_fraction": -0.1},
        {"rate_per_min": -5.0},
        {"rate_per_min": 1e14},
        {"median_rate_per_min": 400.0},
        {"periodicity": 2.5},
        {"frame_rate": -1.0},
        {"t": -1.0},
        {"wall_time": -1e14},
        {"count": -1},
        {"count": 100},  # 100 compressions in 12 s: over 5 a second
        {"pauses": [{"start_s": 4.0, "length_s": -1e14, "ongoing": False}]},
        {"pauses": [{"start_s": 40.0, "length_s": 2.0, "ongoing": False}]},  # after the sample's time
    ):
        with pytest.raises((ValueError, TypeError)):
            event_from_dict({**line, **damage})
    # The edges of each range are figures a session can hold.
    edges = {"rate_per_min": 300.0, "compression_fraction": 1.0, "periodicity": 0.0, "count": 61, "t": 12.0}
    assert event_from_dict({**line, **edges}).compression_fraction == 1.0
    # A camera's sample as written in CI: the unbiased autocorrelation a little over 1, 30 frames a second.
    camera = {"periodicity": 1.001256926314825, "frame_rate": 30.048453130678993, "rate_per_min": 129.96}
    assert event_from_dict({**line, **camera}).periodicity == camera["periodicity"]


def test_a_tampered_figure_is_left_out_and_said_never_printed(tmp_path: Path) -> None:
    path = rhythm_session(tmp_path)
    lines = path.read_text().splitlines()
    tampered = json.loads(lines[3])  # sample(2, 131, count=3, ccf=0.9)
    assert tampered["kind"] == "rhythm"
    tampered.update(compression_fraction=50.0, median_rate_per_min=-1e14)
    lines[3] = json.dumps(tampered)
    path.write_text("\n".join(lines) + "\n")
    loaded = load_session(path)
    assert loaded.damaged_lines == (4,) and len(loaded.state.rhythm) == 3
    summary = summary_text(loaded)
    assert "5000" not in summary and "1e+14" not in summary and "Damaged log lines skipped: 4" in summary
    report = practice_report(loaded, "s")
    assert (
        "5000" not in report
        and "1e+14" not in report
        and "Damaged lines of the session log left out of this report: 1." in report
    )


def test_time_in_the_band_counts_only_time_with_a_rate() -> None:
    samples = [
        sample(0, None),
        sample(1, 110),  # 0-1 in band
        sample(2, 112),  # 1-2 in band
        sample(3, 95),  # 2-3 slow
        sample(4, None),  # 3-4 resting: neither in nor out
        sample(5, None),
        sample(6, 125, count=9, pauses=(Pause(3.0, 2.2, False),), ccf=0.6),  # 5-6 fast
    ]
    summary = summarise_rhythm(list(reversed(samples)))  # order of arrival does not matter: frame time does
    assert summary is not None
    assert (summary.seconds, summary.seconds_with_rate) == (6, 4)
    assert (summary.seconds_in_band, summary.seconds_slow, summary.seconds_fast) == (2, 1, 1)
    assert summary.in_band_share == 0.5 and summary.count == 9 and summary.longest_pause_s == 2.2
    assert summary.compression_fraction == 0.6 and summary.median_rate_per_min == 110
    assert summarise_rhythm([]) is None
    resting = summarise_rhythm([sample(0, None), sample(1, None)])
    assert resting is not None and resting.in_band_share is None


# (estimate, the number a person reads, its band): the band follows the number shown, never the
# unrounded estimate, so "100/min" is never called slow nor "120/min" fast.
SHOWN_BANDS = ((99.7, 100, "in_band"), (120.4, 120, "in_band"), (120.6, 121, "fast"), (99.4, 99, "slow"))


@pytest.mark.parametrize(("rate", "shown", "band"), SHOWN_BANDS)
def test_the_band_is_judged_on_the_rate_shown(rate: float, shown: int, band: str) -> None:
    assert shown_rate(rate) == shown and f"{rate:.0f}" == str(shown)  # rounds as a format of the rate would
    assert rate_band(rate) == band


def test_time_in_the_band_agrees_with_the_rates_shown(tmp_path: Path) -> None:
    rates = [rate for rate, _, _ in SHOWN_BANDS]  # 100, 120, 121, 99 shown: 2 s in the band, 1 fast, 1 slow
    samples = [sample(0, None), *(sample(t, rate) for t, rate in enumerate(rates, start=1))]
    summary = summarise_rhythm(samples)
    assert summary is not None
    assert (summary.seconds_in_band, summary.seconds_fast, summary.seconds_slow) == (2, 1, 1)
    # The report's last rate: the number and its words agree (99.7 is 100, in the band).
    path = write(tmp_path / "s.jsonl", [*samples, sample(5, 99.7)])
    assert "The last rate measured was 100 per minute (in the target band)." in practice_report(load_session(path), "s")


def write(path: Path, events) -> Path:
    with SessionLog(path) as log:
        for event in events:
            log.append(event)
    return path


def rhythm_session(tmp_path: Path) -> Path:
    events = [
        sample(0, None),
        replace(practice(1, "yes"), t=2.0),
        sample(1, 108, count=1),
        sample(2, 131, count=3, ccf=0.9),
        replace(practice(2, "no"), t=5.0),
        sample(3, None, count=4, pauses=(Pause(1.0, 2.0, True),), ccf=0.8),
    ]
    return write(tmp_path / "s.jsonl", events)


def test_the_summary_and_the_rhythm_csv_carry_the_samples_and_the_answers_csv_does_not(tmp_path: Path) -> None:
    loaded = load_session(rhythm_session(tmp_path))
    assert len(loaded.state.rhythm) == 4 and len(loaded.state.timeline) == 2
    rows = list(csv.DictReader(io.StringIO(export_rhythm_csv(loaded))))
    assert [r["t"] for r in rows] == ["0.000", "1.000", "2.000", "3.000"]
    assert rows[0]["rate_per_min"] == "" and rows[1]["rate_per_min"] == "108.0"
    assert rows[3]["paused_s"] == "2.0" and rows[3]["pauses"] == "1" and rows[2]["paused_s"] == ""
    assert [r["kind"] for r in csv.DictReader(io.StringIO(export_csv(loaded)))] == ["practice", "practice"]
    text = summary_text(loaded)
    assert "Compressions counted: 4 in 3 s" in text
    assert "Time in the target band: 1 s of 2 s with a rate (50 %); too slow 0 s, too fast 1 s" in text
    assert "Compression fraction (CCF): 80 %" in text and "Depth and recoil: not measured by the camera" in text


def test_a_rhythm_sample_cannot_be_reviewed(tmp_path: Path) -> None:
    path = rhythm_session(tmp_path)
    with pytest.raises(ReviewError):
        record_review(path, "r1", correct=None)


def test_the_report_of_a_checklist_labels_agreement_and_of_stills_says_the_rhythm_was_not_measured(
    tmp_path: Path,
) -> None:
    gate = replace(practice(1, "yes"), signal="hands_visible")
    stacked = replace(practice(2, "no"), signal="hands_stacked", keyframe_id=gate.keyframe_id)
    later = replace(practice(3, "no"), signal="hands_visible")
    unasked = replace(
        practice(4, "unknown"), signal="hands_stacked", keyframe_id=later.keyframe_id, parse_status="not_asked"
    )
    reviews = [
        ExaminerConfirmed(event_id="c1", target_id=gate.event_id, wall_time=2000),
        ExaminerCorrected(event_id="c2", target_id=later.event_id, wall_time=2001, observation="yes"),
        ExaminerConfirmed(event_id="c3", target_id=stacked.event_id, wall_time=2002),
    ]
    events = [gate, stacked, later, unasked, *reviews]
    hostile = replace(gate, source="<script>alert(1)</script>.jpg", still=True)
    html = practice_report(load_session(write(tmp_path / "c.jsonl", [hostile, *events[1:]])), "c")
    assert NOT_MEDICAL in html and DEPTH_RECOIL in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    rows = html.split("<tr>")[2:4]
    assert "Hands visible" in rows[0] and "2 of 2" in rows[0]
    assert "50 % (1 of 2: too few reviewed to mean much)" in rows[0], "two reviews are said to mean little"
    assert "Hands stacked" in rows[1] and "1 of 2" in rows[1] and "100 % (1 of 1: too few" in rows[1]
    assert "Not measured: the rhythm is measured from the frames of a camera or video session" in html
    assert reduce(events).rhythm == ()


def test_the_report_quotes_the_error_bench_rhythm_measured() -> None:
    receipt = json.loads((ROOT / MEASURED_RATE_ERROR.receipt).read_text())
    row = next(r for r in receipt["rows"] if r["name"] == "rate error, per minute")
    videos = next(r for r in receipt["rows"] if r["name"] == "videos")
    assert row["figure"].startswith(f"{MEASURED_RATE_ERROR.median_per_min:.2f} /min")
    assert f"p95 {MEASURED_RATE_ERROR.p95_per_min:.2f}" in row["figure"]
    assert videos["figure"].startswith(f"{MEASURED_RATE_ERROR.videos} with compressions")


def test_the_report_quotes_each_views_figures_as_bench_rhythm_views_measured_them() -> None:
    rows = {r["name"]: r["figure"] for r in json.loads((ROOT / VIEWS_RECEIPT).read_text())["rows"]}
    for v in VIEW_ACCURACY:
        assert rows[f"{v.view}: rate shown"] == f"{v.shown_percent}% of compression time"
        assert rows[f"{v.view}: rate error"].startswith(f"{v.median_per_min:.2f} /min")
        assert f"p95 {v.p95_per_min:.2f})" in rows[f"{v.view}: rate error"]
        assert rows[f"{v.view}: count error"] == f"worst {v.worst_count_percent:.1f}%"
    views = {name.split(":")[0] for name in rows if name.endswith(": rate shown") and not name.startswith("all")}
    assert views == {v.view for v in VIEW_ACCURACY}  # every view the receipt measured, none it did not
    moving = [f for name, f in rows.items() if name.startswith("without compressions:")]
    assert (sum(f.startswith("a rate shown") for f in moving), len(moving)) == MOVING_WITH_A_RATE


ZH_NOT_MEDICAL, ZH_DEPTH_RECOIL = "练习反馈，不是医学评估。", "按压深度与回弹：摄像头无法测量。"


def visible_text(html: str) -> str:
    """What a reader sees: no style sheet, no tags (the chart's title and axis labels stay)."""
    return re.sub(r"<[^>]+>", " ", re.sub(r"<style>.*?</style>", " ", html, flags=re.S))


def numbers(html: str) -> list[str]:
    return sorted(re.findall(r"\d+(?:\.\d+)?", visible_text(html)))


def test_the_chinese_report_says_the_same_figures_and_claims_in_chinese(tmp_path: Path) -> None:
    path = rhythm_session(tmp_path)
    record_review(path, "e1", correct=None)  # an examiner's agreement to report
    loaded = load_session(path)
    english, chinese = practice_report(loaded, "s"), practice_report(loaded, "s", "zh")
    assert '<html lang="zh-Hans">' in chinese and '<html lang="en">' in english
    assert ZH_NOT_MEDICAL in chinese and ZH_DEPTH_RECOIL in chinese
    assert NOT_MEDICAL not in chinese and DEPTH_RECOIL not in chinese
    for phrase in (
        "Practice report",
        "Guideline targets",
        "Agreement with the examiner",
        "agreement, not accuracy",
        "Compression rhythm",
        "Compressions counted",
        "How it is measured",
        "per minute",
        "Quoted as targets",
        "Made on this device",
    ):
        assert phrase in english and phrase not in chinese, phrase
    # No English word a reader sees but the names the Chinese UI keeps too (and the session and model ids).
    latin = set(re.findall(r"[A-Za-z]{2,}", visible_text(chinese)))
    assert latin <= {"Keyframe", "CPR", "CCF", "AHA", "ERC"}, latin
    for report in (english, chinese):  # the guidelines quoted are named, with their year
        assert "AHA" in report and "ERC" in report and "2025" in report
    assert numbers(chinese) == numbers(english)  # the same figures, whatever the order of the words
    for line in (
        "计数的按压：3 秒内 4 次",
        "中位频率：每分钟 110 次（目标每分钟 100–120 次）",
        "在目标范围内的时间：有频率的 2 秒中 1 秒（50%）；过慢 0 秒，过快 1 秒",
        "停顿（2 秒以上没有按压）：1 次，最长 2.0 秒",
        "按压时间占比（CCF）：80%",
        "双手放在胸骨下半部",  # the question as the Chinese Sessions screen words it
        "100%（复核 1 个，确认 1 个：复核太少，说明不了什么）",
    ):
        assert line in chinese, line
    assert '"Noto Sans CJK SC"' in chinese and '"Microsoft YaHei"' in chinese and "default-src 'none'" in chinese
    assert summary_text(loaded).count("Compressions counted: 4 in 3 s") == 1  # the text summary stays English
    # The rate's error on each camera view the project measured (the app cannot tell which one was used),
    # and that people moving without compressing can show a rate too.
    side, top_down = VIEW_ACCURACY[0], next(v for v in VIEW_ACCURACY if v.view == "top_down")
    assert "How exact the rate is, by camera view" in english and "From above, over the chest" in english
    row = re.search(r"<tr><td>From the side</td>(.*?)</tr>", english)
    assert (
        row is not None and f"{side.shown_percent} %" in row.group(1) and f"{side.p95_per_min:.1f}/min" in row.group(1)
    )
    assert f'<td class="n">{top_down.shown_percent} %</td>' in english
    shown, total = MOVING_WITH_A_RATE
    assert f"still showed a rate in {shown} of {total} such videos" in english
    assert "俯视，位于胸部上方" in chinese and f"{total} 个此类视频中仍有 {shown} 个显示了频率" in chinese


def test_an_unknown_language_gets_the_english_report(tmp_path: Path) -> None:
    loaded = load_session(rhythm_session(tmp_path))
    english = practice_report(loaded, "s")
    assert practice_report(loaded, "s", "en") == english
    for other in ("fr", "", "ZH", "zh-Hans"):
        assert practice_report(loaded, "s", other) == english, other


def test_the_english_rhythm_figures_are_the_text_summarys_and_every_language_has_every_word(tmp_path: Path) -> None:
    for samples in (
        [sample(0, None), sample(1, 108, count=1), sample(3, None, count=4, pauses=(Pause(1.0, 2.0, True),), ccf=0.8)],
        [sample(0, None), sample(1, None)],
    ):
        summary = summarise_rhythm(samples)
        assert summary is not None
        text = summary_text(load_session(write(tmp_path / f"{len(samples)}.jsonl", samples)))
        said = [line.strip() for line in text.splitlines()]
        start = said.index(rhythm_figures(summary)[0])
        assert said[start : start + len(rhythm_figures(summary)) + 1] == [
            *rhythm_figures(summary),
            DEPTH_RECOIL.rstrip("."),
        ]
        assert len(rhythm_figures(summary, "zh")) == len(rhythm_figures(summary))
    assert set(report_words.EN) == set(report_words.ZH)
    for key, english in report_words.EN.items():
        assert fields(report_words.ZH[key]) == fields(english), key


def fields(template: str) -> list[str]:
    return sorted(name for _, name, _, _ in string.Formatter().parse(template) if name)


def test_the_chinese_questions_are_the_sessions_screens_and_the_report_imports_no_ui() -> None:
    """app.session cannot import the screen's words (app.ui), so the report holds a copy: kept equal here."""
    from app.ui.words.sessions import ZH

    screen = {key.removeprefix("signal_"): words for key, words in ZH.items() if key.startswith("signal_")}
    del screen["counts"], screen["separator"]  # the screen's words around questions, not a question
    assert report_words.SIGNALS_ZH == screen  # a question new on the screen is new in the report too
    for module in ("report", "report_words"):
        tree = ast.parse((ROOT / "app" / "session" / f"{module}.py").read_text(encoding="utf-8"))
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not {m for m in imported if m.split(".")[0] == "flet" or m.startswith("app.ui")}, module


def test_the_report_and_the_summary_count_the_pauses_over_10_s_and_flag_each(tmp_path: Path) -> None:
    from app.core.rhythm_figures import LONG_PAUSE_S

    assert LONG_PAUSE_S == 10.0  # the guidelines' "none over 10 s" (AHA and ERC 2021, 2025)
    pauses = (Pause(2.0, 3.0, False), Pause(8.0, 12.3, False), Pause(30.0, 10.04, False), Pause(45.0, 15.0, True))
    events = [
        sample(0, None),
        replace(practice(1, "yes"), t=2.0),
        sample(1, 108, count=1),
        sample(60, None, count=90, pauses=pauses, ccf=0.6),
    ]
    loaded = load_session(write(tmp_path / "long.jsonl", events))
    summary = summarise_rhythm(loaded.state.rhythm)
    # 12.3 s is over; 10.04 s is shown "10.0 s", not over; the 15 s until the end is the end, not an interruption.
    assert summary is not None and summary.long_pause_count == 1
    said = "Pauses over 10 s: 1 (the guidelines: none over 10 s)"
    assert said in rhythm_figures(summary) and said in summary_text(loaded)
    english = practice_report(loaded, "s")
    assert f"<li>{said}</li>" in english
    assert english.count("— over 10 s") == 1 and "12.3 s<strong> — over 10 s</strong>" in english
    assert "none longer than 10 s" in english
    chinese = practice_report(loaded, "s", "zh")
    assert "超过 10 秒的停顿：1 次（指南：任何一次都不超过 10 秒）" in chinese
    assert "12.3 秒<strong>——超过 10 秒</strong>" in chinese
    calm = summarise_rhythm(load_session(rhythm_session(tmp_path)).state.rhythm)
    assert calm is not None and "Pauses over 10 s: 0 (the guidelines: none over 10 s)" in rhythm_figures(calm)
