"""User-visible text of the Sessions screen, the timeline chart and the review list.

One table per language, same keys: a second language (简体中文) is a new table,
not a hunt through the code. Components take the table as a parameter, so the
language can change without global state.
"""

from __future__ import annotations

from collections.abc import Mapping

from app.core.notice import Notice
from app.core.session import CAMERA_SOURCE, SessionState
from app.ui.words import text

EN: dict[str, str] = {
    "language": "en",  # which words a session's own record (SessionAsked) is read in
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
    "summary_counts_one": "1 keyframe analysed: {counts}",
    "summary_verdicts": "Verdicts, the examiner's where reviewed: {counts}",
    "summary_no_answers": "no answers yet",
    "summary_count_item": "{n} {answer}",
    "summary_skipped": "Skipped {skipped} (unchanged {unchanged}) · failed {failed}",
    "summary_reviewed": "Reviewed {reviewed} of {analysed} · waiting for the examiner {pending}",
    "summary_agreement": (
        "Agreement with the examiner: {percent} % ({confirmed} of {reviewed} confirmed, {corrected} corrected)"
    ),
    "summary_agreement_none": "Agreement with the examiner: nothing reviewed yet",
    "summary_asked": "Asked: {title} (profile {profile}, file {sha}) · model {model} {revision}",
    "summary_asked_unknown": "What was asked: not recorded (a session from an earlier version)",
    "summary_revised": "Verdicts changed later: {n}",
    "summary_damaged": "{n} damaged lines in the log were skipped",
    "summary_generative": (
        "Every model answer is generative and waits for an examiner: practice feedback, not an assessment."
    ),
    "export_csv": "Export CSV",
    "export_jsonl": "Export JSONL",
    "export_rhythm": "Rhythm CSV",
    "export_report": "Report (HTML)",
    "export_rhythm_none": "No compression rhythm was recorded in this session (still images, or an older log)",
    # The compression rhythm of a camera or video session (measured from motion, not by the model)
    "rhythm_title": "Compression rhythm",
    "rhythm_count": "Compressions counted: {count} in {seconds} s",
    "rhythm_rate": "Median rate: {rate} /min (target {low}–{high})",
    "rhythm_rate_none": "Median rate: — (no steady compressions seen; target {low}–{high})",
    "rhythm_band": (
        "Time in the target band: {in_band} s of {with_rate} s with a rate ({percent} %) · "
        "too slow {slow} s · too fast {fast} s"
    ),
    "rhythm_band_none": "Time in the target band: — (no rate was measured)",
    "rhythm_pauses": "Pauses of {seconds} s or more: {n}, the longest {longest} s",
    "rhythm_pauses_none": "Pauses of {seconds} s or more: none",
    "rhythm_long_pauses": "Pauses over {limit} s: {n} (guidelines: none over {limit} s)",
    "rhythm_ccf": "Compression fraction (CCF): {percent} %",
    "rhythm_ccf_none": "Compression fraction (CCF): —",
    "rhythm_times_guessed": (
        "Frame times guessed: the video gives no usable frame rate and its frames no times, so {fps} frames a "
        "second were assumed; rates, pauses and times scale with that guess"
    ),
    "rhythm_not_measured": "Depth and recoil are not measured by the camera",
    "export_saved": "Saved {where}",
    "export_cancelled": "Export cancelled",
    "export_failed": "Could not export {name}: {detail}",
    # Notices from the controller
    "notice_review_confirmed": "Confirmed the answer at {t} s",
    "notice_review_confirmed_all": "Confirmed the {n} answers at {t} s",
    "notice_review_corrected": "Corrected the answer at {t} s to {answer}",
    "notice_review_saved": "Recorded the {n} verdicts at {t} s ({corrected} corrected)",
    "notice_review_many": "Recorded {n} verdicts ({corrected} corrected)",
    "notice_review_refused": "The review was not recorded: {detail}",
    "notice_review_failed": "The review could not be saved: {detail}",
    "notice_open_failed": "The session cannot be opened: {detail}",
    "notice_list_failed": "The sessions folder cannot be read: {detail}",
    "notice_missing": "That session is no longer there",
    "notice_deleted": "The session was deleted, with its keyframe pictures",
    "notice_delete_failed": "The session could not be deleted: {detail}",
    "notice_delete_live": "This session is being recorded now: stop it on Practice first",
    "delete_session": "Delete this session",
    "delete_confirm": "Delete this session and its keyframe pictures? This cannot be undone.",
    "delete_yes": "Delete",
    "delete_no": "Keep",
    "row_duration": "{seconds} s",
    "dismiss": "Dismiss",
    # Timeline chart
    "timeline_title": "Timeline",
    "timeline_axis_time": "Time (s)",
    "timeline_empty": "No keyframes yet",
    "timeline_lane_skipped": "skipped / failed",
    "timeline_legend_skipped": "skipped",
    "timeline_legend_failed": "failed",
    "timeline_at": "{t} s",
    "timeline_axis_images": "Image, in the order chosen",
    "timeline_point_answer": "{where} · {answer}",
    "timeline_point_review": "{where} · {answer} · {verdict}",
    "timeline_point_skipped": "{where} · skipped ({reason})",
    "timeline_point_failed": "{where} · failed: {detail}",
    "timeline_semantics": "Timeline of {n} keyframes over {seconds} s: {counts}; {skipped} skipped, {failed} failed",
    "timeline_semantics_stills": "Timeline of {n} images: {counts}; {skipped} skipped, {failed} failed",
    "timeline_rhythm_title": "Compression rate (per minute)",
    "timeline_rhythm_point": "{where} · {rate} /min, {band}",
    "timeline_rhythm_slow": "below the target",
    "timeline_rhythm_fast": "above the target",
    "timeline_rhythm_in_band": "in the target band",
    "timeline_rhythm_pause": "Pause from {where}: {length} s",
    "timeline_rhythm_pause_ongoing": "Pause from {where}: {length} s, until the end",
    "timeline_legend_rate": "rate per minute (no line: no steady compressions)",
    "timeline_legend_band": "target {low}–{high} per minute",
    "timeline_legend_pause": "pause: {seconds} s or more without compressions",
    "timeline_rhythm_semantics": (
        "Compression rate: median {rate} per minute, {percent} % of the time in {low}–{high}, pauses: {pauses}"
    ),
    "timeline_rhythm_semantics_none": "Compression rate: no steady compressions seen, pauses: {pauses}",
    "skip_unchanged": "unchanged",
    "skip_superseded": "superseded",
    "skip_stopped": "stopped before its answer",
    # Review list
    "review_pending_title": "Waiting for the examiner ({n})",
    "review_done_title": "Reviewed ({n})",
    "review_none_pending": "Nothing is waiting for the examiner.",
    "review_at": "at {t} s · {clock}",
    "review_at_source": "{source}, {at}",
    "review_still": "{name} · answered {clock}",
    "review_model_said": "Model: {answer}",
    "source_camera": "camera",
    "source_images": "{n} images",
    "print_report": "Print / Save as PDF",
    "names_button": "Names…",
    "names_title": "Trainee and examiner",
    "trainee_label": "Trainee (optional)",
    "examiner_label": "Examiner (optional)",
    "names_hint": "Kept with the session on this device; the examiner's name goes on each verdict.",
    "names_save": "Save",
    "names_cancel": "Cancel",
    "names_line": "Trainee: {trainee} · Examiner: {examiner}",
    "names_none": "—",
    "name_too_long": "A name of at most {n} characters, please.",
    "name_control": "A name cannot hold line breaks or hidden characters.",
    "names_not_saved": "The names were not saved: the session file could not be written.",
    "filter_all": "All trainees",
    "filter_label": "Trainee",
    "progress_title": "Progress of {trainee}: {n} sessions, oldest first",
    "progress_title_one": "Progress of {trainee}: 1 session",
    "progress_rate": "median {rate}/min, {band} % in {low}–{high}",
    "progress_rate_none": "no compression rate",
    "progress_ccf": "CCF {percent} %",
    "progress_pauses": "{n} pauses, {long} over 10 s",
    "progress_question": "{question}: {percent} % YES ({yes} of {answered}, {reviewed} reviewed)",
    "progress_generative": "YES shares count the examiner's verdict where given, else the model's pending answer.",
    "keyframe_enlarge": "Show the keyframe large",
    "keyframe_title": "The keyframe that was judged",
    "keyframe_no_copy": "Only the thumbnail was kept for this keyframe (an older session, or a full disk).",
    "keyframe_close": "Close",
    "review_confirm": "Confirm",
    "review_correct": "Correct to…",
    "review_correct_none": "No other answer is allowed",
    "review_note": "Note (optional)",
    "review_change": "Change verdict",
    "review_cancel_change": "Keep verdict",
    # A checklist's keyframe, reviewed as one
    "review_confirm_all": "Confirm all",
    "review_save_all": "Save verdicts",
    "review_save_correction": "Save correction",
    "review_confirm_waiting": "Confirm all waiting ({n})",
    "review_change_all": "Change verdicts",
    "review_keyframe_pending": "{n} of {m} answers waiting for the examiner",
    "review_keyframe_done": "All {m} answers reviewed",
    "review_history_confirmed": "confirmed {answer}",
    "review_history_corrected": "corrected to {answer}",
    "review_verdict_over_model": "{answer} (examiner; the model said {model})",
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
    "reason_not_visible": "not asked: the checklist's first question (its gate) did not let it be asked",
    "reason_low_score": "withheld: the model's score was below the profile's cut",
    # A checklist session: several questions (signals) per keyframe, each shown and counted apart
    "signal_hands_visible": "Hands in the picture",
    "signal_hands_stacked": "Hands stacked, one on top of the other",
    "signal_arms_straight": "Arms straight, elbows locked",
    "signal_shoulders_over_hands": "Shoulders directly above the hands",
    "answer_not_checked": "not checked",
    "signal_counts": "{question}: {counts}",
    "signal_separator": "; ",
    "row_checklist": "{n} keyframes · {questions} questions",
    "row_reviewed_answers": "reviewed {n} of {m} answers",
    "summary_keyframes_questions": "{n} keyframes analysed · {questions} questions",
    "summary_keyframe_questions": "1 keyframe analysed · {questions} questions",
    "summary_signal_review": "Reviewed {reviewed} of {analysed} · {agreement}",
    "summary_reviewed_answers": "Reviewed {reviewed} of {analysed} answers · waiting for the examiner {pending}",
    "timeline_point_signal": "{signal}\n{point}",
    "timeline_semantics_signals": (
        "Timeline of {n} keyframes over {seconds} s, {questions} questions. {counts}. "
        "{skipped} skipped, {failed} failed"
    ),
    "timeline_semantics_signals_stills": (
        "Timeline of {n} images, {questions} questions. {counts}. {skipped} skipped, {failed} failed"
    ),
    # An examiner's review the log refused (app.session.review.ReviewError codes)
    "review_refused_already_confirmed": "Not recorded: this answer was already confirmed as {answer}{by}. "
    "The screen now shows that review.",
    "review_refused_already_corrected": "Not recorded: this answer was already corrected to {answer}{by}. "
    "The screen now shows that review.",
    "review_by": " by {examiner}",
    "review_refused_not_an_answer": "Not recorded: {answer} is not an answer to this question.",
    "review_refused_own_answer": "Not recorded: {answer} is the model's own answer; confirm it instead.",
    "review_refused_unknown_answers": "Not recorded: this session does not say which answers the question "
    "allows, so a correction cannot be checked.",
    "review_refused_no_event": "Not recorded: that answer is not in this session.",
}

ZH: dict[str, str] = {
    "language": "zh",
    # Sessions list
    "sessions_title": "练习记录",
    "sessions_refresh": "刷新",
    "sessions_empty": "还没有记录。每次练习都会在这里记为一条记录。",
    "sessions_folder": "记录保存在 {folder}",
    "row_title": "{date}",
    "row_model": "模型 {model}",
    "row_no_model": "没有分析任何关键帧",
    "row_counts": "是 {yes} · 否 {no} · 未知 {unknown}",
    "row_reviewed": "已复核 {n} / {m}",
    "row_damaged": "跳过了 {n} 行损坏的记录",
    "row_unreadable": "{name}：无法读取（{detail}）",
    "open_session": "打开 {date} 的记录",
    # One session
    "back": "全部记录",
    "session_heading": "{date} 的记录",
    "summary_title": "摘要",
    "summary_counts": "已分析 {n} 个关键帧：{counts}",
    "summary_counts_one": "已分析 1 个关键帧：{counts}",
    "summary_verdicts": "判定（已复核的以考官为准）：{counts}",
    "summary_no_answers": "还没有回答",
    "summary_count_item": "{answer} {n} 个",
    "summary_skipped": "跳过 {skipped} 个（无变化 {unchanged} 个）· 失败 {failed} 个",
    "summary_reviewed": "已复核 {reviewed} / {analysed} · 等待考官 {pending} 个",
    "summary_agreement": "与考官一致率：{percent}%（确认 {confirmed} / 复核 {reviewed}，更正 {corrected}）",
    "summary_agreement_none": "与考官一致率：尚未复核",
    "summary_asked": "提问：{title}（问题配置 {profile}，文件 {sha}）· 模型 {model} {revision}",
    "summary_asked_unknown": "提问内容：没有记录（早期版本的记录）",
    "summary_revised": "之后改过的判定：{n} 个",
    "summary_damaged": "记录中跳过了 {n} 行损坏的内容",
    "summary_generative": "模型的每个回答都是生成式的，都要等待考官确认：这是练习反馈，不是评估。",
    "export_csv": "导出 CSV",
    "export_jsonl": "导出 JSONL",
    "export_rhythm": "节律 CSV",
    "export_report": "报告（网页）",
    "export_rhythm_none": "这次记录没有按压节律（静态图像，或较早的记录）",
    "rhythm_title": "按压节律",
    "rhythm_count": "计数的按压：{seconds} 秒内 {count} 次",
    "rhythm_rate": "中位频率：{rate} 次/分（目标 {low}–{high}）",
    "rhythm_rate_none": "中位频率：—（未看到稳定的按压；目标 {low}–{high}）",
    "rhythm_band": (
        "在目标范围内的时间：有频率的 {with_rate} 秒中 {in_band} 秒（{percent}%）· 过慢 {slow} 秒 · 过快 {fast} 秒"
    ),
    "rhythm_band_none": "在目标范围内的时间：—（没有测到频率）",
    "rhythm_pauses": "{seconds} 秒以上的停顿：{n} 次，最长 {longest} 秒",
    "rhythm_pauses_none": "{seconds} 秒以上的停顿：没有",
    "rhythm_long_pauses": "超过 {limit} 秒的停顿：{n} 次（指南：任何一次都不超过 {limit} 秒）",
    "rhythm_ccf": "按压时间占比：{percent}%",
    "rhythm_ccf_none": "按压时间占比：—",
    "rhythm_times_guessed": (
        "帧的时间是估计的：视频没有可用的帧率，各帧也没有自带时间，因此按每秒 {fps} 帧计算；频率、停顿和时间都随之而变"
    ),
    "rhythm_not_measured": "摄像头无法测量按压深度和回弹",
    "export_saved": "已保存到 {where}",
    "export_cancelled": "已取消导出",
    "export_failed": "无法导出 {name}：{detail}",
    # Notices from the controller
    "notice_review_confirmed": "已确认 {t} 秒处的回答",
    "notice_review_confirmed_all": "已确认 {t} 秒处的 {n} 个回答",
    "notice_review_corrected": "已把 {t} 秒处的回答更正为 {answer}",
    "notice_review_saved": "已记录 {t} 秒处的 {n} 个判定（更正 {corrected} 个）",
    "notice_review_many": "已记录 {n} 个判定（更正 {corrected} 个）",
    "notice_review_refused": "复核没有被记录：{detail}",
    "notice_review_failed": "无法保存复核：{detail}",
    "notice_open_failed": "无法打开这条记录：{detail}",
    "notice_list_failed": "无法读取记录文件夹：{detail}",
    "notice_missing": "这条记录已经不在了",
    "notice_deleted": "已删除这条记录及其关键帧图片",
    "notice_delete_failed": "无法删除这条记录：{detail}",
    "notice_delete_live": "这条记录正在录制中：请先在“练习”中停止",
    "delete_session": "删除这条记录",
    "delete_confirm": "删除这条记录及其关键帧图片？此操作无法撤销。",
    "delete_yes": "删除",
    "delete_no": "保留",
    "row_duration": "{seconds} 秒",
    "dismiss": "知道了",
    # Timeline chart
    "timeline_title": "时间线",
    "timeline_axis_time": "时间（秒）",
    "timeline_empty": "还没有关键帧",
    "timeline_lane_skipped": "跳过 / 失败",
    "timeline_legend_skipped": "跳过",
    "timeline_legend_failed": "失败",
    "timeline_at": "{t} 秒",
    "timeline_axis_images": "图像（按选择顺序）",
    "timeline_point_answer": "{where} · {answer}",
    "timeline_point_review": "{where} · {answer} · {verdict}",
    "timeline_point_skipped": "{where} · 跳过（{reason}）",
    "timeline_point_failed": "{where} · 失败：{detail}",
    "timeline_semantics": "{seconds} 秒内 {n} 个关键帧的时间线：{counts}；跳过 {skipped} 个，失败 {failed} 个",
    "timeline_semantics_stills": "{n} 张图像的时间线：{counts}；跳过 {skipped} 个，失败 {failed} 个",
    "timeline_rhythm_title": "按压频率（次/分）",
    "timeline_rhythm_point": "{where} · {rate} 次/分，{band}",
    "timeline_rhythm_slow": "低于目标",
    "timeline_rhythm_fast": "高于目标",
    "timeline_rhythm_in_band": "在目标范围内",
    "timeline_rhythm_pause": "从 {where} 起停顿 {length} 秒",
    "timeline_rhythm_pause_ongoing": "从 {where} 起停顿 {length} 秒，直到结束",
    "timeline_legend_rate": "每分钟频率（没有线：未看到稳定的按压）",
    "timeline_legend_band": "目标：每分钟 {low}–{high} 次",
    "timeline_legend_pause": "停顿：{seconds} 秒以上没有按压",
    "timeline_rhythm_semantics": (
        "按压频率：中位数每分钟 {rate} 次，{percent}% 的时间在 {low}–{high} 内，停顿 {pauses} 次"
    ),
    "timeline_rhythm_semantics_none": "按压频率：未看到稳定的按压，停顿 {pauses} 次",
    "skip_unchanged": "无变化",
    "skip_superseded": "被更新的关键帧取代",
    "skip_stopped": "回答前已停止",
    # Review list
    "review_pending_title": "等待考官（{n}）",
    "review_done_title": "已复核（{n}）",
    "review_none_pending": "没有等待考官复核的内容。",
    "review_at": "{t} 秒 · {clock}",
    "review_at_source": "{source}，{at}",
    "review_still": "{name} · {clock} 回答",
    "review_model_said": "模型：{answer}",
    "source_camera": "摄像头",
    "source_images": "{n} 张图像",
    "print_report": "打印 / 另存为 PDF",
    "names_button": "姓名…",
    "names_title": "学员与考官",
    "trainee_label": "学员（可选）",
    "examiner_label": "考官（可选）",
    "names_hint": "与会话一起保存在本设备上；考官姓名会记在每条判定上。",
    "names_save": "保存",
    "names_cancel": "取消",
    "names_line": "学员：{trainee} · 考官：{examiner}",
    "names_none": "—",
    "name_too_long": "姓名最多 {n} 个字符。",
    "name_control": "姓名不能包含换行或隐藏字符。",
    "names_not_saved": "姓名未保存：无法写入会话文件。",
    "filter_all": "全部学员",
    "filter_label": "学员",
    "progress_title": "{trainee} 的进步：{n} 次会话，从早到晚",
    "progress_title_one": "{trainee} 的进步：1 次会话",
    "progress_rate": "中位数 {rate} 次/分钟，{band} % 在 {low}–{high} 之间",
    "progress_rate_none": "没有按压频率",
    "progress_ccf": "按压时间占比 {percent}%",
    "progress_pauses": "{n} 次停顿，{long} 次超过 10 秒",
    "progress_question": "{question}：{percent} % 是（{answered} 个中 {yes} 个，已复核 {reviewed} 个）",
    "progress_generative": "“是”的比例按考官的判定计算；未复核的按模型的待确认回答计算。",
    "keyframe_enlarge": "放大查看关键帧",
    "keyframe_title": "被判断的关键帧",
    "keyframe_no_copy": "这个关键帧只保留了缩略图（较早的会话，或磁盘已满）。",
    "keyframe_close": "关闭",
    "review_confirm": "确认",
    "review_correct": "更正为…",
    "review_correct_none": "没有其他允许的回答",
    "review_note": "备注（可选）",
    "review_change": "修改判定",
    "review_cancel_change": "保留判定",
    "review_confirm_all": "全部确认",
    "review_save_all": "保存判定",
    "review_save_correction": "保存更正",
    "review_confirm_waiting": "确认全部等待中的回答（{n}）",
    "review_change_all": "修改判定",
    "review_keyframe_pending": "{m} 个回答中有 {n} 个等待考官审核",
    "review_keyframe_done": "{m} 个回答已全部审核",
    "review_history_confirmed": "确认 {answer}",
    "review_history_corrected": "更正为 {answer}",
    "review_verdict_over_model": "{answer}（考官判定；模型回答为 {model}）",
    "review_history_item": "{verdict}{note}{by} · {clock}",
    "review_history_note": " —“{note}”",
    "review_history_by": "，复核人 {examiner}",
    "review_answers_unknown": "这个问题允许的回答未知，所以不能在这里更正。",
    # Answers in words
    "answer_yes": "是",
    "answer_no": "否",
    "answer_unknown": "未知",
    "signal_hand_position_correct": "双手放在胸骨下半部",
    "reason_empty": "模型没有回复",
    "reason_invalid_json": "模型的回复不是有效的 JSON",
    "reason_extra_text": "模型在回答前后加了文字",
    "reason_not_object": "模型的回复不是回答对象",
    "reason_duplicate_keys": "模型的回复重复了一个字段",
    "reason_extra_keys": "模型的回复有多余的字段",
    "reason_missing_keys": "模型的回复缺少一个字段",
    "reason_wrong_type": "模型的回复有一个字段类型不对",
    "reason_wrong_signal": "模型回答了另一个问题",
    "reason_invalid_value": "模型给出了不允许的回答",
    "reason_truncated": "模型的回复被截断了",
    "reason_not_visible": "未提问：检查表的前置问题没有放行",
    "reason_low_score": "未采用：模型分数低于配置的阈值",
    # A checklist session: several questions (signals) per keyframe, each shown and counted apart
    "signal_hands_visible": "画面里能看到双手",
    "signal_hands_stacked": "双手上下叠放",
    "signal_arms_straight": "手臂伸直、肘部锁定",
    "signal_shoulders_over_hands": "肩膀在双手正上方",
    "answer_not_checked": "未检查",
    "signal_counts": "{question}：{counts}",
    "signal_separator": "；",
    "row_checklist": "{n} 个关键帧 · {questions} 个问题",
    "row_reviewed_answers": "已复核 {n} / {m} 个回答",
    "summary_keyframes_questions": "已分析 {n} 个关键帧 · {questions} 个问题",
    "summary_keyframe_questions": "已分析 1 个关键帧 · {questions} 个问题",
    "summary_signal_review": "已复核 {reviewed} / {analysed} · {agreement}",
    "summary_reviewed_answers": "已复核 {reviewed} / {analysed} 个回答 · 等待考官 {pending} 个",
    "timeline_point_signal": "{signal}\n{point}",
    "timeline_semantics_signals": (
        "{seconds} 秒内 {n} 个关键帧、{questions} 个问题的时间线。{counts}。跳过 {skipped} 个，失败 {failed} 个"
    ),
    "timeline_semantics_signals_stills": (
        "{n} 张图像、{questions} 个问题的时间线。{counts}。跳过 {skipped} 个，失败 {failed} 个"
    ),
    "review_refused_already_confirmed": "未记录：这个回答已被{by}确认为{answer}。屏幕现在显示的是那次复核。",
    "review_refused_already_corrected": "未记录：这个回答已被{by}更正为{answer}。屏幕现在显示的是那次复核。",
    "review_by": "{examiner}",
    "review_refused_not_an_answer": "未记录：{answer}不是这个问题的回答。",
    "review_refused_own_answer": "未记录：{answer}就是模型自己的回答；请改为确认。",
    "review_refused_unknown_answers": "未记录：这次记录没有写明问题允许哪些回答，无法核对更正。",
    "review_refused_no_event": "未记录：这次记录中没有那个回答。",
}

TABLES: dict[str, dict[str, str]] = {"en": EN, "zh": ZH}


def sessions_notice_text(strings: Mapping[str, str], notice: Notice) -> str:
    """A notice in words: an answer as people read it, and for a refused review (ReviewError.notice)
    who reviewed it first when the log says."""
    values = dict(notice.values)
    if "answer" in values:
        values["answer"] = answer_word(strings, values["answer"])
    examiner = values.pop("examiner", "")
    values["by"] = strings["review_by"].format(examiner=examiner) if examiner else ""
    return text(strings, notice.key, **values)


def answer_word(strings: Mapping[str, str], value: str) -> str:
    """An answer as a person reads it: "YES", or the value itself in capitals for other profiles."""
    return strings.get(f"answer_{value}", value.upper())


def session_questions(strings: Mapping[str, str], state: SessionState) -> dict[str, str]:
    """signal -> its question in these strings' language as the session asked it (empty for a log
    written before sessions said what they asked: then each signal is named as the table names it)."""
    asked = state.asked
    return asked.questions(strings.get("language", "en")) if asked is not None else {}


def source_words(strings: Mapping[str, str], source: str, images: int = 0) -> str:
    """Where a session's frames came from, in these strings' language: the camera, several images
    counted, else the file's own name (which is never translated)."""
    if images > 1:
        return text(strings, "source_images", n=images)
    return strings.get("source_camera", source) if source == CAMERA_SOURCE else source


def signal_words(strings: Mapping[str, str], signal: str) -> str:
    """The question of a signal in words, or the signal name made readable."""
    return strings.get(f"signal_{signal}", signal.replace("_", " ").capitalize())


def reason_words(strings: Mapping[str, str], reason: str) -> str:
    return strings.get(f"reason_{reason}", reason.replace("_", " "))
