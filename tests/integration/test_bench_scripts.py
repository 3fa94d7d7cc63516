"""The benchmarks' main paths on the demo model with tiny parameters: each prints its rows, and each
goal beside its figure. Timings and memory figures are never asserted (this machine is shared);
the exit code says whether a goal was met, so it may be 0 or 1 but never a crash."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.conditions import HANG_S

ROOT = Path(__file__).resolve().parents[2]


def _run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m module args` from the project's root, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True, timeout=HANG_S
    )


def _bench(name: str, *args: str) -> str:
    proc = _run(f"bench.{name}", *args)
    assert proc.returncode in (0, 1), proc.stderr  # 1: a goal missed; anything else is a failure
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def _line(out: str, name: str) -> str:
    found = [line for line in out.splitlines() if line.strip().startswith(name)]
    assert found, f"no row {name!r} in:\n{out}"
    return found[0]


def _goal(line: str, goal: str) -> None:
    assert re.search(rf"\[goal {re.escape(goal)}  (met|MISSED)\]", line), line


def test_memory_reports_both_processes_growth_the_keyframes_and_the_events(tmp_path: Path) -> None:
    receipt = tmp_path / "memory.json"
    out = _bench("memory", "--keyframes", "30", "--warmup", "5", "--receipt", str(receipt))
    assert out.startswith("Memory over 30 keyframes through the live pipeline (keyframe-demo-cpr)")
    assert "30 (5 warm-up, then 25 measured)" in _line(out, "keyframes analysed")
    events = re.search(r"(\d+) in the log \((\d+) answers", _line(out, "session events"))
    assert events and int(events[1]) >= int(events[2]) == 30
    _goal(_line(out, "UI process RSS growth after warm-up"), "<= 2 MB")
    _goal(_line(out, "worker child RSS growth after warm-up"), "<= 2 MB")
    rows = {row["name"]: row for row in json.loads(receipt.read_text())["rows"]}
    assert rows["UI process RSS growth after warm-up"]["goal"] == "<= 2 MB"
    assert isinstance(rows["worker child RSS growth after warm-up"]["met"], bool)


def test_memory_can_say_where_python_objects_grew() -> None:
    out = _bench("memory", "--keyframes", "12", "--warmup", "4", "--trace", "3")
    assert "note: tracemalloc, warm-up -> end:" in out
    assert len(re.findall(r"note:\s+[+-][\d.]+ KiB\s+[+-]\d+ blocks  \S+:\d+", out)) == 3


def test_sampler_times_the_per_frame_work_on_1080p_frames() -> None:
    # 70 frames at 30 fps of fake time: one 2 s window closes, so the change test runs too.
    out = _bench("sampler", "--frames", "70", "--scenes", "2", "--variants", "2")
    assert "70 of 1920x1080x3 uint8 (4 distinct)" in _line(out, "frames")
    per_frame = _line(out, "sampler per frame (stats + offer)")
    assert "n=70, p95" in per_frame
    _goal(per_frame, "median <= 3 ms")
    assert "n=70" in _line(out, "of which frame_stats")
    assert "1 keyframes, 0 unchanged" in _line(out, "windows closed")


def test_rhythm_cost_times_the_motion_feature_and_the_estimator_on_1080p_frames() -> None:
    # 60 frames (2 s at 30 fps): too short for a rate, long enough for every row and its goal.
    out = _bench("rhythm_cost", "--frames", "60", "--variants", "2")
    assert "60 of 1920x1080x3 uint8" in _line(out, "frames")
    per_frame = _line(out, "motion + rhythm per frame")
    assert "n=60, p95" in per_frame
    _goal(per_frame, "median <= 2 ms")
    assert "n=60" in _line(out, "of which motion feature") and "n=60" in _line(out, "of which estimator update")
    assert "of 110" in _line(out, "rate read")


def test_ui_responsiveness_judges_each_busy_host_against_idle() -> None:
    out = _bench("ui_responsiveness", "--seconds", "1", "--pace-ms", "20")
    assert "n=" in _line(out, "frame interval, idle")
    for host in ("child process", "thread"):
        assert "p95" in _line(out, f"frame interval, busy {host}")
    ratios = [line for line in out.splitlines() if line.strip().startswith("p95 / idle")]
    assert len(ratios) == 2
    for line in ratios:
        _goal(line, "<= 1.2x")


def test_decoding_reports_constrained_and_free_side_by_side_without_a_goal() -> None:
    out = _bench("decoding", "--per-kind", "1", "--rounds", "1")
    for mode in ("constrained", "free"):
        assert "n=5" in _line(out, f"time to a parsed result, {mode}")
        assert re.search(r"\d+/5 \(\d+ %\)", _line(out, f"valid answers, {mode}"))
    assert "[goal" not in out
    assert re.search(r"free / constrained, median time\s+[\d.]+x", out)


def test_live_screen_judges_each_busy_host_against_idle(tmp_path: Path) -> None:
    receipt = tmp_path / "live.json"
    out = _bench("live_screen", "--seconds", "2.5", "--pace-ms", "20", "--receipt", str(receipt))
    assert "frame interval, idle (fast model)" in out
    for host in ("child process", "thread"):
        assert f"frame interval, busy {host}" in out
    assert len(re.findall(r"\[goal <= 1\.2x  (met|MISSED)\]", out)) == 2
    assert [r["goal"] for r in json.loads(receipt.read_text())["rows"] if r["goal"]] == ["<= 1.2x", "<= 1.2x"]


def test_the_runner_runs_each_benchmark_with_its_receipt_and_sums_up(tmp_path: Path) -> None:
    proc = _run("bench", "sampler", "--receipts", str(tmp_path))
    assert proc.returncode in (0, 1), proc.stderr
    assert "=== bench.sampler" in proc.stdout and "=== summary" in proc.stdout
    verdict = _line(proc.stdout.split("=== summary")[1], "sampler")
    assert verdict.split(None, 1)[1] == ("every goal met" if proc.returncode == 0 else "a goal MISSED")
    assert json.loads((tmp_path / "sampler.json").read_text())["rows"]
    unknown = _run("bench", "nope")
    assert unknown.returncode == 2 and "no benchmark named nope" in unknown.stderr


def test_prompts_compares_the_short_question_with_the_full_prompt(tmp_path: Path) -> None:
    out = _bench("prompts", "--per-kind", "1", "--rounds", "1")
    tokens = re.search(r"(\d+) / (\d+)", _line(out, "prompt tokens, short / full"))
    assert tokens and int(tokens[1]) < int(tokens[2])  # the short question is shorter: the point of it
    _goal(_line(out, "short / full, median time"), "< 1")
    _goal(_line(out, "same answer"), "5 of 5")


def test_a_bad_model_or_receipt_is_one_sentence_not_a_traceback(tmp_path: Path) -> None:
    proc = _run("bench.decoding", "--model", str(tmp_path / "nope"))
    assert proc.returncode == 2 and proc.stderr.strip().startswith("error: no model")
    assert "Traceback" not in proc.stderr
    (tmp_path / "other.json").write_text('{"a": 1}')
    proc = _run("bench.plot_receipts", str(tmp_path / "other.json"), "--out", str(tmp_path / "p.png"))
    assert proc.returncode == 2 and "other.json: not a receipt" in proc.stderr and "Traceback" not in proc.stderr


def test_checklist_compares_one_encode_with_one_signal_and_with_separate_asking(tmp_path: Path) -> None:
    receipt = tmp_path / "checklist.json"
    out = _bench("checklist", "--images", "2", "--rounds", "1", "--receipt", str(receipt))
    assert out.startswith("Checklist of 3 signals: keyframe-demo-cpr, cpr_checklist, 2 images x 1 rounds")
    _goal(_line(out, "/ one signal, median"), "<= 1.4x")
    assert "n=4" in _line(out, "each extra signal")  # two extra signals on each of two images
    # Each extra signal's prefill after the image: its question, the turn's end and the answer's forced start.
    tokens = re.search(r"(\d+)-(\d+)", _line(out, "tokens it prefills after the image"))
    assert tokens and 10 <= int(tokens[1]) <= int(tokens[2]) < 60
    # The least any extra signal costs: each question cut to "?" leaves the turn's end and the answer's start.
    assert "n=4" in _line(out, "each extra signal asked only '?'")
    least = out.split("asked only '?'", 1)[1]
    fewer = re.search(r"(\d+)-(\d+)", _line(least, "tokens it prefills after the image"))
    assert fewer and 0 < int(fewer[2]) < int(tokens[2])
    assert re.search(r"\d\.\d\dx", _line(out, "/ one signal, at the least"))
    picks = re.search(r"(\d+)/(\d+)", _line(out, "picks equal to separate asking"))
    assert picks and int(picks[2]) == 6 and int(picks[1]) <= 6
    agreed = int(picks[1])
    signals = ("hands_visible", "hand_position_correct", "hands_stacked")
    per_signal = [re.search(r"(\d+)/2\b", _line(out, s)) for s in signals]  # each of 2 images
    assert all(per_signal) and sum(int(m[1]) for m in per_signal if m) == agreed
    gaps = _line(out, "|log score difference| where the picks agree")
    assert f"(n={agreed})" in gaps if agreed else gaps.rstrip().endswith("none")
    split = _line(out, "log scores where the picks differ")  # both ways' scores of each differing pick
    assert f"n={2 * (6 - agreed)}," in split if agreed < 6 else split.rstrip().endswith("none")
    rows = {row["name"]: row for row in json.loads(receipt.read_text())["rows"]}
    assert rows["  / one signal, median"]["goal"] == "<= 1.4x"
    # From the medians: every signal on every keyframe against the best share in turn, per interval.
    for interval in ("2", "3", "5"):
        assert re.search(
            r"all [\d.]+ m?s, best in turns \(1 of 2\) [\d.]+ m?s: all, every keyframe",
            _line(out, f"at a {interval} s interval"),
        )


def test_checklist_asks_the_first_n_signals_gate_first() -> None:
    out = _bench("checklist", "--signals", "2", "--images", "1", "--rounds", "1")
    assert out.startswith("Checklist of 2 signals: keyframe-demo-cpr, cpr_checklist, 1 images x 1 rounds")
    assert "n=1" in _line(out, "each extra signal") and "/2" in _line(out, "picks equal to separate asking")
    proc = _run("bench.checklist", "--signals", "4")
    assert proc.returncode == 2 and "--signals must be 1 to 3: cpr_checklist has 3 signals" in proc.stderr


def test_rhythm_views_scores_each_view_and_each_person_moving_without_compressing(tmp_path: Path) -> None:
    receipt = tmp_path / "views.json"
    out = _bench("rhythm_views", "--videos", "1", "--seconds", "12", "--receipt", str(receipt))
    assert out.startswith("Compression rhythm on 5 held-out phone views")
    assert "1 with compressions + 4 without, 12 s each" in _line(out, "videos")
    _goal(_line(out, "all views: rate shown"), ">= 95%")
    _goal(_line(out, "side: rate error"), "median <= 2")
    for kind in ("talking", "waving", "resting", "repositioning"):
        _goal(_line(out, f"without compressions: {kind}"), "no rate, 0 counted")
    rows = {row["name"]: row for row in json.loads(receipt.read_text())["rows"]}
    assert isinstance(rows["all views: count error"]["met"], bool)
    # A fresh set is a seed of its own, never the development set under another name.
    proc = _run("bench.rhythm_views", "--dev", "--seed", "5")
    assert proc.returncode == 2 and "not allowed with argument --dev" in proc.stderr
    proc = _run("bench.rhythm_views", "--seed", "-1")
    assert proc.returncode == 2 and "--seed must be 0 or more" in proc.stderr


def test_rhythm_scores_rate_pauses_ccf_and_the_negatives(tmp_path: Path) -> None:
    receipt = tmp_path / "rhythm.json"
    out = _bench("rhythm", "--videos", "2", "--negatives", "1", "--seconds", "8", "--receipt", str(receipt))
    assert out.startswith("Compression rhythm on 6 held-out generated videos")
    assert "2 with compressions + 4 negatives, 8 s each" in _line(out, "videos")
    _goal(_line(out, "median"), "<= 3")
    _goal(_line(out, "p95"), "<= 8")
    assert re.search(r"\d+ / \d+ / \d+", _line(out, "pauses found / missed / false alarms"))
    for kind in ("still", "shake", "flicker", "resting"):
        _goal(_line(out, f"negative: {kind} 1"), "no rate")
    rows = {row["name"]: row for row in json.loads(receipt.read_text())["rows"]}
    assert rows["  p95"]["goal"] == "<= 8" and isinstance(rows["  p95"]["met"], bool)


def test_card_age_watches_compressions_at_the_models_speed_and_skips_none(tmp_path: Path) -> None:
    receipt = tmp_path / "card_age.json"
    out = _bench("card_age", "--seconds", "10", "--receipt", str(receipt))
    assert out.startswith("Card age: demo, cpr_checklist.json, watch --realtime --interval 3")
    answered = re.search(r"(\d+) / (\d+) in 10 s", _line(out, "keyframes answered / skipped"))
    # Someone compressing is never an unchanged scene: every window is asked.
    assert answered and int(answered[1]) >= 3 and answered[2] == "0", out
    assert _line(out, "signals asked per keyframe").split()[-1] == "3"
    _goal(_line(out, "oldest"), "<= 6 s (two intervals)")
    assert json.loads(receipt.read_text())["rows"][-1]["name"] == "  oldest"
