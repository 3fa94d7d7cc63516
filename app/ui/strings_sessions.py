"""User-visible text of the Sessions screen, the timeline chart and the review list.

One table per language, same keys: a second language (简体中文) is a new table,
not a hunt through the code. Components take the table as a parameter, so the
language can change without global state.
"""

from __future__ import annotations

from collections.abc import Mapping

EN: dict[str, str] = {
    # Sessions list
    "sessions_title": "Sessions",
    "sessions_refresh": "Refresh",
    "sessions_empty": "No sessions yet. Every practice run is recorded here as a session.",
    "sessions_folder": "Sessions are kept in {folder}",
    "row_title": "{date}",
    "row_model": "Model {model}",
    "row_no_model": "No keyframe analysed",
    "row_counts": "{yes} yes · {no} no · {unknown} unknown",
    "row_reviewed": "reviewed {n} of {m}",
    "row_damaged": "{n} damaged lines skipped",
    "row_unreadable": "{name}: cannot be read ({detail})",
    "open_session": "Open session from {date}",
    # One session
    "back": "All sessions",
    "session_heading": "Session {date}",
    "summary_title": "Summary",
    "summary_counts": "{n} keyframes analysed: {counts}",
    "summary_no_answers": "no answers yet",
    "summary_count_item": "{n} {answer}",
    "summary_skipped": "Skipped {skipped} (unchanged {unchanged}) · failed {failed}",
    "summary_reviewed": "Reviewed {reviewed} of {analysed} · waiting for the examiner {pending}",
    "summary_agreement": (
        "Agreement with the examiner: {percent} % ({confirmed} of {reviewed} confirmed, {corrected} corrected)"
    ),
    "summary_agreement_none": "Agreement with the examiner: nothing reviewed yet",
    "summary_revised": "Verdicts changed later: {n}",
    "summary_damaged": "{n} damaged lines in the log were skipped",
    "summary_generative": (
        "Every model answer is generative and waits for an examiner: practice feedback, not an assessment."
    ),
    "export_csv": "Export CSV",
    "export_jsonl": "Export JSONL",
    "export_saved": "Saved {where}",
    "export_cancelled": "Export cancelled",
    "export_failed": "Could not export {name}: {detail}",
    # Notices from the controller
    "notice_review_confirmed": "Confirmed the answer at {t} s",
    "notice_review_corrected": "Corrected the answer at {t} s to {answer}",
    "notice_review_refused": "The review was not recorded: {detail}",
    "notice_review_failed": "The review could not be saved: {detail}",
    "notice_open_failed": "The session cannot be opened: {detail}",
    "notice_list_failed": "The sessions folder cannot be read: {detail}",
    "notice_missing": "That session is no longer there",
    "dismiss": "Dismiss",
    # Timeline chart
    "timeline_title": "Timeline",
    "timeline_axis_time": "Time (s)",
    "timeline_empty": "No keyframes yet",
    "timeline_lane_skipped": "skipped / failed",
    "timeline_legend_skipped": "skipped",
    "timeline_legend_failed": "failed",
    "timeline_point_answer": "{t} s · {answer}",
    "timeline_point_review": "{t} s · {answer} · {verdict}",
    "timeline_point_skipped": "{t} s · skipped ({reason})",
    "timeline_point_failed": "{t} s · failed: {detail}",
    "timeline_semantics": "Timeline of {n} keyframes over {seconds} s: {counts}; {skipped} skipped, {failed} failed",
    "skip_unchanged": "unchanged",
    "skip_superseded": "superseded",
    # Review list
    "review_pending_title": "Waiting for the examiner ({n})",
    "review_done_title": "Reviewed ({n})",
    "review_none_pending": "Nothing is waiting for the examiner.",
    "review_at": "at {t} s · {clock}",
    "review_model_said": "Model: {answer}",
    "review_waiting": "Waiting for examiner confirmation",
    "review_confirm": "Confirm",
    "review_correct": "Correct to…",
    "review_correct_none": "No other answer is allowed",
    "review_note": "Note (optional)",
    "review_change": "Change verdict",
    "review_cancel_change": "Keep verdict",
    "review_history_confirmed": "confirmed {answer}",
    "review_history_corrected": "corrected to {answer}",
    "review_history_item": "{verdict}{note}{by} · {clock}",
    "review_history_note": " — “{note}”",
    "review_history_by": " by {examiner}",
    "review_answers_unknown": "The allowed answers of this question are unknown, so it cannot be corrected here.",
    # Answers in words
    "answer_yes": "YES",
    "answer_no": "NO",
    "answer_unknown": "UNKNOWN",
    "signal_hand_position_correct": "Hands on the lower half of the sternum",
    "reason_empty": "the model gave no reply",
    "reason_invalid_json": "the model's reply was not valid JSON",
    "reason_extra_text": "the model added text around its answer",
    "reason_not_object": "the model's reply was not an answer object",
    "reason_duplicate_keys": "the model's reply repeated a field",
    "reason_extra_keys": "the model's reply had extra fields",
    "reason_missing_keys": "the model's reply missed a field",
    "reason_wrong_type": "the model's reply had a field of the wrong type",
    "reason_wrong_signal": "the model answered another question",
    "reason_invalid_value": "the model gave an answer that is not allowed",
    "reason_truncated": "the model's reply was cut off",
}

TABLES: dict[str, dict[str, str]] = {"en": EN}


def text(strings: Mapping[str, str], key: str, **values: object) -> str:
    """The string for `key`, formatted; an unknown key shows itself rather than crashing a render."""
    template = strings.get(key, EN.get(key, key))
    return template.format(**values) if values else template


def answer_word(strings: Mapping[str, str], value: str) -> str:
    """An answer as a person reads it: "YES", or the value itself in capitals for other profiles."""
    return strings.get(f"answer_{value}", value.upper())


def signal_words(strings: Mapping[str, str], signal: str) -> str:
    """The question of a signal in words, or the signal name made readable."""
    return strings.get(f"signal_{signal}", signal.replace("_", " ").capitalize())


def reason_words(strings: Mapping[str, str], reason: str) -> str:
    return strings.get(f"reason_{reason}", reason.replace("_", " "))
