"""The words of the practice report (`app.session.report`), one table per language with the same keys.

Pure text: no UI import (app.session must not import app.ui), no HTML (the report escapes what it
fills in). Placeholders are `str.format` fields; numbers arrive already formatted, so both languages
show the same figures. `rhythm_figures` writes the rhythm's sentences, for the report and, in English,
for the text summary.
"""

from __future__ import annotations

from collections.abc import Mapping

from app.core.rhythm_figures import LONG_PAUSE_S, shown_rate
from app.core.rhythm_summary import RhythmSummary

EN: dict[str, str] = {
    "html_lang": "en",
    # The page's face: the system's own (nothing is fetched; the page's CSP forbids it).
    "font_family": 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
    "title": "Practice report — session {session}",
    "heading": "Practice report",
    "sub": "Session {session} · {when} · {duration} · {source} · model {models}",
    "asked": "Asked: {title} (profile {profile}, file SHA-256 {sha}) · model {model} {revision}",
    "asked_unknown": "What was asked: not recorded (a session from an earlier version)",
    "no_keyframe_time": "no keyframe recorded",
    "seconds": "{n} s",
    "none": "—",
    "gap": " ",  # between two sentences
    "source_camera": "camera",
    "source_images": "{n} images",
    "not_medical": "Practice feedback, not a medical assessment.",
    "people": "Trainee: {trainee} · Examiner: {examiner}",
    "sign_title": "Sign-off",
    "sign_trainee": "Trainee",
    "sign_examiner": "Examiner",
    "sign_name": "Name",
    "sign_date": "Date",
    "sign_signature": "Signature",
    "depth_recoil": "Depth and recoil: not measured by the camera.",
    # Checklist
    "checklist_title": "Checklist",
    "checklist_none": "No keyframe was answered in this session.",
    "checklist_intro": (
        "Keyframes answered by the on-device model: {n}. The counts are the verdicts: the examiner's where "
        "reviewed, else the model's answer; where the examiner changed it, the model's count is beside it."
    ),
    "model_count": "(model {n})",
    "notes_title": "The examiner's notes",
    "note_item": "{t} s · {question} · {verdict}: “{note}” ({by})",
    "verdict_confirmed": "confirmed {answer}",
    "verdict_corrected": "corrected to {answer}",
    "col_question": "Question",
    "col_yes": "Yes",
    "col_no": "No",
    "col_unknown": "Unknown",
    "col_not_checked": "Not checked",
    "col_other": "Other",
    "col_reviewed": "Reviewed by the examiner",
    "col_agreement": "Agreement with the examiner",
    "question_unnamed": "The question",
    "reviewed_of": "{reviewed} of {analysed}",
    "agreement": "{percent} % ({confirmed} of {reviewed})",
    "agreement_few": "{percent} % ({confirmed} of {reviewed}: too few reviewed to mean much)",
    "demo_caveat": (
        "These answers come from the demo model, trained on synthetic drawings only: on real photos they mean "
        "nothing. Only the compression rhythm (measured without the model) applies to a real session."
    ),
    "rhythm_frame_rate": "Measured from {fps} frames a second (the camera's or the video's, at the end).",
    "agreement_none": "— (nothing reviewed)",
    "checklist_note": (
        "Every answer is generative (confidence 0) and waits for an examiner. Agreement is how often the "
        "examiner confirmed the model's answer among the answers the examiner reviewed: agreement, not "
        "accuracy. \u201cNot checked\u201d: the checklist's first question did not open, so the model was not asked."
    ),
    # Compression rhythm
    "rhythm_title": "Compression rhythm",
    "rhythm_none": (
        "Not measured: the rhythm is measured from the frames of a camera or video session, and this session "
        "had none (still images, or recorded by an earlier version)."
    ),
    "rhythm_count": "Compressions counted: {count} in {seconds} s",
    "rhythm_median": "Median rate: {median} (target {low}–{high} per minute)",
    "rhythm_per_minute": "{rate} per minute",
    "rhythm_band": (
        "Time in the target band: {in_band} s of {with_rate} s with a rate ({share}); too slow {slow} s, "
        "too fast {fast} s"
    ),
    "percent": "{percent} %",
    "rhythm_pauses": "Pauses (2 s or more without compressions): {pauses}",
    "rhythm_pauses_some": "{n}, the longest {longest} s",
    "rhythm_pauses_none": "none",
    "rhythm_long_pauses": "Pauses over {limit} s: {n} (the guidelines: none over {limit} s)",
    "rhythm_ccf": "Compression fraction (CCF): {ccf}",
    "rhythm_times_guessed": (
        "Frame times guessed: the video gives no usable frame rate and its frames no times of their own, so "
        "{fps} frames a second were assumed; every rate, pause and time here scales with that guess."
    ),
    "chart_label": "Compression rate per minute over the session, against the target band {low} to {high}; {n} pauses",
    "chart_legend": "Green: the target band. Grey bars: pauses.",
    "chart_last": " The last rate measured was {rate} per minute ({band}).",
    "band_slow": "below the target",
    "band_fast": "above the target",
    "band_in_band": "in the target band",
    "pause_from": "Pause from",
    "pause_length": "Length",
    "pause_ongoing": " (until the end)",
    "pause_over": " — over {limit} s",
    "method_title": "How it is measured",
    "method": (
        "From the movement between consecutive frames (every frame, not only keyframes), without the model: "
        "the regularity of that movement over the last 6 s gives the rate, each compression is counted at the "
        "bottom of its movement, and 2 s or more without one is a pause. Camera shake and changes of light are "
        "not counted as movement. Measured error on the project's {videos} generated test videos of compressions "
        "at known rates: median {median} per minute, 95th percentile {p95} per minute. Generated videos are not "
        "a manikin with sensors: real sessions (clothing, camera angle, a second person moving) can be worse."
    ),
    "pixels": "One camera sees movement in pixels, not centimetres of chest.",
    "views_title": "How exact the rate is, by camera view",
    "views_intro": (
        "Measured on the project's held-out generated phone videos of each view (not tuned on them). "
        "The app does not detect the view: read the row of the one this session was filmed from."
    ),
    "view_col": "View",
    "view_shown": "Rate shown",
    "view_median": "Error, median",
    "view_p95": "Error, 95 %",
    "view_count": "Count, worst",
    "view_side": "From the side",
    "view_front": "From the front, facing the trainee",
    "view_oblique": "At 45°",
    "view_top_down": "From above, over the chest",
    "view_floor_up": "Phone on the floor, looking up",
    "view_portrait_headless": "Portrait, head out of the picture",
    "view_far": "Far away, small in the picture",
    "per_minute_short": "{n}/min",
    "views_moving": (
        "People moving without compressing (talking, waving, repositioning, resting) still showed a rate in "
        "{shown} of {total} such videos: a rate alone does not prove compressions."
    ),
    # Guideline targets
    "targets_title": "Guideline targets",
    "targets_intro": (
        "Quoted as targets for practice, not as a verdict on this session: adult CPR in the American Heart "
        "Association (AHA) 2025 and European Resuscitation Council (ERC) 2025 guidelines, which kept the "
        "2020/2021 targets:"
    ),
    "target_rate": "Rate: {low}–{high} compressions per minute.",
    "target_interruptions": (
        "Interruptions: as few and as short as possible, none longer than {limit} s; a compression fraction of "
        "at least 60 % (80 % is the goal experts set)."
    ),
    "target_depth": "Depth 5–6 cm, and full recoil of the chest after each compression.",
    # The end
    "damaged": "Damaged lines of the session log left out of this report: {n}.",
    "footer": "Made on this device by Keyframe. The pictures never left the device and are not in this report.",
}

ZH: dict[str, str] = {
    "html_lang": "zh-Hans",
    # Common system faces with Simplified Chinese glyphs (macOS, Linux, Windows); nothing is fetched.
    "font_family": (
        '"PingFang SC", "Hiragino Sans GB", "Noto Sans CJK SC", "Source Han Sans SC", "Microsoft YaHei", '
        '"WenQuanYi Micro Hei", system-ui, -apple-system, sans-serif'
    ),
    "title": "练习报告 — 记录 {session}",
    "heading": "练习报告",
    "sub": "记录 {session} · {when} · {duration} · {source} · 模型 {models}",
    "asked": "提问：{title}（问题配置 {profile}，文件 SHA-256 {sha}）· 模型 {model} {revision}",
    "asked_unknown": "提问内容：没有记录（早期版本的记录）",
    "no_keyframe_time": "没有记录关键帧",
    "seconds": "{n} 秒",
    "none": "—",
    "gap": "",  # between two sentences: none after a full-width stop
    "source_camera": "摄像头",
    "source_images": "{n} 张图像",
    "not_medical": "练习反馈，不是医学评估。",
    "people": "学员：{trainee} · 考官：{examiner}",
    "sign_title": "签字确认",
    "sign_trainee": "学员",
    "sign_examiner": "考官",
    "sign_name": "姓名",
    "sign_date": "日期",
    "sign_signature": "签名",
    "depth_recoil": "按压深度与回弹：摄像头无法测量。",
    # Checklist
    "checklist_title": "检查表",
    "checklist_none": "这次练习没有回答任何关键帧。",
    "checklist_intro": (
        "本机模型回答的关键帧：{n} 个。表中计数的是判定：考官复核过的按考官的判定，否则按模型的回答；"
        "考官改过的，旁边注明模型的计数。"
    ),
    "model_count": "（模型 {n}）",
    "notes_title": "考官的备注",
    "note_item": "{t} 秒 · {question} · {verdict}：“{note}”（{by}）",
    "verdict_confirmed": "确认为 {answer}",
    "verdict_corrected": "更正为 {answer}",
    "col_question": "问题",
    "col_yes": "是",
    "col_no": "否",
    "col_unknown": "未知",
    "col_not_checked": "未检查",
    "col_other": "其他",
    "col_reviewed": "考官已复核",
    "col_agreement": "与考官一致",
    "question_unnamed": "问题",
    "reviewed_of": "{reviewed} / {analysed}",
    "agreement": "{percent}%（复核 {reviewed} 个，确认 {confirmed} 个）",
    "agreement_few": "{percent}%（复核 {reviewed} 个，确认 {confirmed} 个：复核太少，说明不了什么）",
    "demo_caveat": (
        "这些回答来自演示模型，它只用合成的绘图训练过：对真实照片的回答没有意义。"
        "只有按压节律（不经过模型测量）适用于真实的练习。"
    ),
    "rhythm_frame_rate": "测量所用的画面：每秒 {fps} 帧（摄像头或视频结束时的帧率）。",
    "agreement_none": "—（尚未复核）",
    "checklist_note": (
        "模型的每个回答都是生成式的（置信度 0），都要等待考官确认。一致率是在考官复核过的回答中，"
        "考官确认模型回答的比例：这是一致率，不是准确率。“未检查”：检查表的前置问题没有放行，所以没有向模型提问。"
    ),
    # Compression rhythm
    "rhythm_title": "按压节律",
    "rhythm_none": (
        "未测量：按压节律从摄像头或视频练习的画面中测量，而这次练习没有画面（静态图像，或由较早的版本记录）。"
    ),
    "rhythm_count": "计数的按压：{seconds} 秒内 {count} 次",
    "rhythm_median": "中位频率：{median}（目标每分钟 {low}–{high} 次）",
    "rhythm_per_minute": "每分钟 {rate} 次",
    "rhythm_band": (
        "在目标范围内的时间：有频率的 {with_rate} 秒中 {in_band} 秒（{share}）；过慢 {slow} 秒，过快 {fast} 秒"
    ),
    "percent": "{percent}%",
    "rhythm_pauses": "停顿（2 秒以上没有按压）：{pauses}",
    "rhythm_pauses_some": "{n} 次，最长 {longest} 秒",
    "rhythm_pauses_none": "没有",
    "rhythm_long_pauses": "超过 {limit} 秒的停顿：{n} 次（指南：任何一次都不超过 {limit} 秒）",
    "rhythm_ccf": "按压时间占比（CCF）：{ccf}",
    "rhythm_times_guessed": (
        "帧的时间是估计的：视频没有可用的帧率，各帧也没有自带时间，因此按每秒 {fps} 帧计算；"
        "这里的每个频率、停顿和时间都随这个估计而变。"
    ),
    "chart_label": "整个练习中每分钟的按压频率，对照目标范围 {low}–{high}；停顿 {n} 次",
    "chart_legend": "绿色：目标范围。灰色条：停顿。",
    "chart_last": "最后测到的频率是每分钟 {rate} 次（{band}）。",
    "band_slow": "低于目标",
    "band_fast": "高于目标",
    "band_in_band": "在目标范围内",
    "pause_from": "停顿开始",
    "pause_length": "时长",
    "pause_ongoing": "（直到结束）",
    "pause_over": "——超过 {limit} 秒",
    "method_title": "测量方法",
    "method": (
        "根据相邻画面之间的运动（每一帧，而不只是关键帧）测量，不使用模型：最近 6 秒内运动的规律性给出频率，"
        "每次按压在其运动的最低点计数，2 秒以上没有按压即为停顿。摄像头晃动和光线变化不算作运动。"
        "在本项目 {videos} 个已知频率的生成按压测试视频上测得的误差：中位数每分钟 {median} 次，"
        "第 95 百分位每分钟 {p95} 次。生成的视频不是带传感器的模拟人：真实练习（衣物、摄像头角度、"
        "有第二个人走动）可能误差更大。"
    ),
    "pixels": "单个摄像头看到的是以像素计的运动，而不是以厘米计的胸廓位移。",
    "views_title": "按摄像头视角的频率准确度",
    "views_intro": (
        "在本项目每种视角的保留生成手机视频上测得（未用它们调参）。应用不会识别视角：请看本次练习拍摄视角对应的那一行。"
    ),
    "view_col": "视角",
    "view_shown": "显示频率的时间",
    "view_median": "误差中位数",
    "view_p95": "误差第 95 百分位",
    "view_count": "计数最大误差",
    "view_side": "侧面",
    "view_front": "正面，面向练习者",
    "view_oblique": "45° 斜角",
    "view_top_down": "俯视，位于胸部上方",
    "view_floor_up": "手机放在地上，向上拍",
    "view_portrait_headless": "竖屏，头部不在画面中",
    "view_far": "远处，人在画面中很小",
    "per_minute_short": "每分钟 {n} 次",
    "views_moving": (
        "有人在动但没有按压（说话、挥手、调整姿势、休息）时，{total} 个此类视频中仍有 {shown} 个显示了频率："
        "仅有频率并不能证明在按压。"
    ),
    # Guideline targets
    "targets_title": "指南目标",
    "targets_intro": (
        "以下作为练习目标引用，不是对这次练习的判定：美国心脏协会（AHA）2025 年和欧洲复苏委员会（ERC）2025 年"
        "成人 CPR 指南，沿用了 2020/2021 年的目标："
    ),
    "target_rate": "频率：每分钟 {low}–{high} 次按压。",
    "target_interruptions": (
        "中断：尽可能少、尽可能短，任何一次都不超过 {limit} 秒；按压时间占比至少 60%（专家建议的目标为 80%）。"
    ),
    "target_depth": "深度 5–6 厘米，每次按压后胸廓完全回弹。",
    # The end
    "damaged": "跳过了练习记录中 {n} 行损坏的内容。",
    "footer": "由 Keyframe 在本设备上生成。图像从未离开本设备，也不在这份报告中。",
}

TABLES: dict[str, dict[str, str]] = {"en": EN, "zh": ZH}

# The questions of the built-in profiles in Chinese, as the Sessions screen words them
# (app/ui/words/sessions.py ZH `signal_<id>`, which app.session cannot import; a test keeps them
# equal). English keeps the signal id made readable; an id not listed here does too.
SIGNALS_ZH: dict[str, str] = {
    "hand_position_correct": "双手放在胸骨下半部",
    "hands_visible": "画面里能看到双手",
    "hands_stacked": "双手上下叠放",
    "arms_straight": "手臂伸直、肘部锁定",
    "shoulders_over_hands": "肩膀在双手正上方",
}


def report_words(language: str) -> Mapping[str, str]:
    """The table of a language code ("en", "zh"); anything else gets English."""
    return TABLES.get(language, EN)


def signal_words(language: str, signal: str) -> str:
    """A question in words: its Chinese wording when known, else the signal id made readable."""
    if language == "zh" and signal in SIGNALS_ZH:
        return SIGNALS_ZH[signal]
    return signal.replace("_", " ").capitalize() or report_words(language)["question_unnamed"]


def rhythm_figures(summary: RhythmSummary, language: str = "en") -> list[str]:
    """The rhythm's figures in sentences of a language (plain text): the report's list and, in English,
    the text summary's (`sessions export`). Depth and recoil are said apart by each."""
    w = report_words(language)
    low, high = summary.target
    median = summary.median_rate_per_min
    ccf = summary.compression_fraction
    longest = summary.longest_pause_s
    with_rate = summary.seconds_with_rate
    fps = summary.frame_rate

    def percent(part: float, whole: float) -> str:
        return w["percent"].format(percent=f"{100 * part / whole:.0f}") if whole > 0 else w["none"]

    pauses = (
        w["rhythm_pauses_none"]
        if longest is None
        else w["rhythm_pauses_some"].format(n=len(summary.pauses), longest=f"{longest:.1f}")
    )
    guessed = (
        [w["rhythm_times_guessed"].format(fps=w["none"] if fps is None else f"{fps:.0f}")]
        if summary.frame_times_guessed
        else []
    )
    measured = [w["rhythm_frame_rate"].format(fps=f"{fps:.0f}")] if fps is not None and not guessed else []
    return [
        *guessed,
        w["rhythm_count"].format(count=summary.count, seconds=f"{summary.seconds:.0f}"),
        *measured,
        w["rhythm_median"].format(
            median=w["none"] if median is None else w["rhythm_per_minute"].format(rate=shown_rate(median)),
            low=low,
            high=high,
        ),
        w["rhythm_band"].format(
            in_band=f"{summary.seconds_in_band:.0f}",
            with_rate=f"{with_rate:.0f}",
            share=percent(summary.seconds_in_band, with_rate),
            slow=f"{summary.seconds_slow:.0f}",
            fast=f"{summary.seconds_fast:.0f}",
        ),
        w["rhythm_pauses"].format(pauses=pauses),
        # Interruptions over the guidelines' limit; a pause until the end of the session is not one.
        w["rhythm_long_pauses"].format(limit=f"{LONG_PAUSE_S:g}", n=summary.long_pause_count),
        w["rhythm_ccf"].format(ccf=w["none"] if ccf is None else percent(ccf, 1.0)),
    ]
