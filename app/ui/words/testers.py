"""User-visible text of the Testers' screen (testers' mode: a folder of images against labels).

One table per language, same keys and placeholders (tests/unit/test_strings.py checks it);
the view takes its table as a parameter.
"""

from __future__ import annotations

EN: dict[str, str] = {
    "nav_testers": "Testers",
    "testers_title": "Testers' mode",
    "testers_intro": (
        "Run a folder of images through the model and compare the answers with a labels file "
        "(CSV: file name, expected answer). The same numbers as python -m app eval."
    ),
    "pick_images": "Choose images",
    "pick_labels": "Choose labels file",
    "clear_labels": "Remove labels",
    "run": "Run",
    "stop": "Stop",
    "export_csv": "Export CSV",
    "images_none": "No images chosen yet. Choose every image of a folder at once.",
    "images_chosen": "{n} images chosen",
    "images_skipped": "not images, left out ({n}): {names}",
    "labels_none": "No labels file: answers only, no confusion matrix.",
    "labels_none_checklist": "No labels file: answers only. A checklist's labels file has a header row and a "
    "column per question: {header}",
    "labels_chosen": "Labels: {name} · {n} labels",
    "labels_waiting": "Labels: {name} · checked once the model is loaded",
    "labels_row_error": "Labels file, {detail}",
    "labels_note": "Labels file, {detail}",
    "labels_missing": "Labelled but not among the images ({n}): {names}",
    "labels_unlabelled": "Images without a label ({n}): {names}",
    "model_loading": "The model is loading; the run starts as soon as it is ready.",
    "progress": "Analysed {done} of {total}",
    "progress_idle": "Not run yet",
    "phase_preparing": "Reading the images…",
    "phase_running": "Analysing…",
    "phase_done": "Done: {done} of {total} images",
    "phase_stopped": "Stopped: {done} of {total} images",
    "shared_worker": (
        "A run uses the app's one model: it is recorded as a practice session, and starting practice stops it."
    ),
    "summary_title": "Against the labels",
    "summary_none": "No labelled image has been answered yet: choose a labels file to see the confusion matrix.",
    "accuracy": "Accuracy {value} ({correct} of {n})",
    "unknown_rate": "Unknown rate {value} ({unknown} of {n})",
    "yes_bias": "Yes-bias {value} (said {answer} {predicted}, labelled {answer} {true})",
    "counts": "Images {images} · answered {answered} · errors {errors} · without a label {unlabelled}",
    "undefined": "—",
    "matrix_title": "Confusion matrix (rows: expected, columns: the model's answer)",
    "matrix_corner": "Expected \\ answer",
    "matrix_total": "Total",
    "scores_title": "Per answer",
    "score_value": "Answer",
    "precision": "Precision",
    "recall": "Recall",
    "score_expected": "Labelled",
    "score_predicted": "Answered",
    "curve_title": "Score cut: answers kept and how often they are right",
    "curve_help": (
        "Below a threshold of the model's score an answer would become unknown. The score is a diagnostic "
        "of the model's own preference, never a confidence."
    ),
    "curve_threshold": "Threshold",
    "curve_coverage": "Kept",
    "curve_accuracy": "Right",
    "curve_kept": "Answers",
    "curve_saved": "{threshold} (the profile's cut)",
    "curve_no_scores": "No answer has a model score: constrained decoding (Settings) gives one.",
    "curve_keep": "Keep this cut",
    "curve_no_cut": "no cut: every answer given",
    "curve_trade": "withholds {withheld} of {given} ({share}); right {after}, against {before} with no cut",
    "curve_trade_nothing": "withholds {withheld} of {given} ({share}) and gains nothing: right {after}, against "
    "{before} with no cut",
    "curve_point": "kept {kept}, right {right}",
    "curve_keep_nothing": "Keep anyway",
    "signal_gate": "The gate: the other questions are asked only when it says {answer}.",
    "signal_not_asked": "Not asked {n} of {answered}: the gate ({gate}) did not say {answer}; counted as unknown.",
    "notice_cut_saved": "Saved: answers scoring below {threshold} are now withheld ({file}, among your profiles "
    "in Settings, Question). On these images: {withheld} of {given} withheld ({share}); right {after}, "
    "against {before} with no cut.",
    "notice_cut_saved_signal": "Saved: answers to “{signal}” scoring below {threshold} are now withheld ({file}, "
    "among your profiles in Settings, Question). On these images: {withheld} of {given} withheld ({share}); right "
    "{after}, against {before} with no cut.",
    "notice_cut_refused": "The cut was not saved: {detail}",
    "rows_title": "Per image",
    "col_image": "Image",
    "col_file": "File",
    "col_question": "Question",
    "col_answer": "Answer",
    "col_expected": "Expected",
    "col_status": "Parse",
    "col_time": "Time",
    "cell_waiting": "…",
    "cell_none": "—",
    "seconds": "{s} s",
    "milliseconds": "{ms} ms",
    "time_note_checklist": (
        "Time: the model's own, per answer. A picture is encoded once, in its first question's time; the "
        "other questions' times are their answering alone."
    ),
    "status_valid": "valid",
    "status_rejected": "rejected",
    "status_not_asked": "not asked",
    "status_error": "error",
    "detail_not_asked": "not asked: the gate did not open; counted as unknown",
    "detail_not_analysed": "not analysed: the run ended first",
    "detail_stopped": "not analysed: the run was stopped",
    "export_saved": "Saved {where}",
    "export_cancelled": "Export cancelled",
    "export_failed": "Could not export {name}: {detail}",
    "notice_no_images": "Choose the images first.",
    "notice_same_name": (
        "Left out, a second image of the same name: {names}. The labels file names images by their file "
        "name, so two of one name cannot be told apart; rename one to test both."
    ),
    "notice_labels_one_question": "{name} has one label per image, but the profile running is a checklist of "
    "{n} questions: its labels file needs a header row and a column per question, such as {header}",
    "notice_labels_not_one_question": "No row of {name} is a label of the profile running, which asks one "
    "question (file name, expected answer). A file with a column per question is a checklist's: choose the "
    "checklist in Settings, Question.",
    "notice_labels_unreadable": "The labels file cannot be used: {detail}",
    "notice_upload_failed": "The files could not be received: {detail}",
    "notice_files_refused": "{detail}",  # the shell's own sentence (too large, upload failed)
    "dismiss": "Dismiss",
    "answer_yes": "YES",
    "answer_no": "NO",
    "answer_unknown": "UNKNOWN",
    "generative": "Every answer is generative and unconfirmed: these numbers describe the model on these images only.",
}

ZH: dict[str, str] = {
    "nav_testers": "测试",
    "testers_title": "测试模式",
    "testers_intro": (
        "让模型逐张分析一个文件夹里的图片，并与标注文件（CSV：文件名，应有的回答）比较。"
        "数字与命令 python -m app eval 给出的相同。"
    ),
    "pick_images": "选择图片",
    "pick_labels": "选择标注文件",
    "clear_labels": "移除标注",
    "run": "开始",
    "stop": "停止",
    "export_csv": "导出 CSV",
    "images_none": "还没有选择图片。请一次选中文件夹里的所有图片。",
    "images_chosen": "已选择 {n} 张图片",
    "images_skipped": "不是图片，已略过（{n}）：{names}",
    "labels_none": "没有标注文件：只显示回答，没有混淆矩阵。",
    "labels_none_checklist": "没有标注文件：只显示回答。检查表的标注文件需要标题行，每个问题一列：{header}",
    "labels_chosen": "标注：{name} · {n} 条",
    "labels_waiting": "标注：{name} · 模型加载后再检查",
    "labels_row_error": "标注文件，{detail}",
    "labels_note": "标注文件，{detail}",
    "labels_missing": "有标注但不在图片中（{n}）：{names}",
    "labels_unlabelled": "没有标注的图片（{n}）：{names}",
    "model_loading": "模型正在加载；加载完成后立即开始。",
    "progress": "已分析 {done} / {total}",
    "progress_idle": "尚未运行",
    "phase_preparing": "正在读取图片…",
    "phase_running": "正在分析…",
    "phase_done": "完成：{done} / {total} 张图片",
    "phase_stopped": "已停止：{done} / {total} 张图片",
    "shared_worker": "运行使用应用唯一的模型：它会记为一次练习记录，开始练习会让它停止。",
    "summary_title": "与标注比较",
    "summary_none": "还没有已标注的图片得到回答：选择标注文件即可看到混淆矩阵。",
    "accuracy": "准确率 {value}（{n} 张中 {correct} 张正确）",
    "unknown_rate": "未知比例 {value}（{n} 张中 {unknown} 张）",
    "yes_bias": "偏向“是”的程度 {value}（回答{answer} {predicted}，标注为{answer} {true}）",
    "counts": "图片 {images} 张 · 已回答 {answered} · 出错 {errors} · 无标注 {unlabelled}",
    "undefined": "—",
    "matrix_title": "混淆矩阵（行：应有的回答，列：模型的回答）",
    "matrix_corner": "应有 \\ 回答",
    "matrix_total": "合计",
    "scores_title": "按回答统计",
    "score_value": "回答",
    "precision": "精确率",
    "recall": "召回率",
    "score_expected": "标注数",
    "score_predicted": "回答数",
    "curve_title": "分数阈值：保留的回答及其正确率",
    "curve_help": "模型分数低于阈值的回答将记为未知。分数只用于诊断模型自身的倾向，绝不是置信度。",
    "curve_threshold": "阈值",
    "curve_coverage": "保留",
    "curve_accuracy": "正确",
    "curve_kept": "回答数",
    "curve_saved": "{threshold}（配置的阈值）",
    "curve_no_scores": "没有回答带有模型分数：请在设置中开启约束解码。",
    "curve_keep": "采用此阈值",
    "curve_no_cut": "不设阈值：每个回答都给出",
    "curve_trade": "{given} 个回答中不予采用 {withheld} 个（{share}）；正确率 {after}（不设阈值时 {before}）",
    "curve_trade_nothing": "{given} 个回答中不予采用 {withheld} 个（{share}），却毫无收益："
    "正确率 {after}（不设阈值时 {before}）",
    "curve_point": "保留 {kept}，正确 {right}",
    "curve_keep_nothing": "仍然采用",
    "signal_gate": "前提问题：只有它回答{answer}时，才会询问其他问题。",
    "signal_not_asked": "{answered} 张中有 {n} 张未询问：前提问题（{gate}）的回答不是{answer}；记为未知。",
    "notice_cut_saved": "已保存：分数低于 {threshold} 的回答今后将不予采用（{file}，在你的配置中；设置 → 问题）。"
    "在这些图片上：{given} 个回答中不予采用 {withheld} 个（{share}）；正确率 {after}（不设阈值时 {before}）。",
    "notice_cut_saved_signal": "已保存：“{signal}”的回答中，分数低于 {threshold} 的今后将不予采用（{file}，"
    "在你的配置中；设置 → 问题）。在这些图片上：{given} 个回答中不予采用 {withheld} 个（{share}）；"
    "正确率 {after}（不设阈值时 {before}）。",
    "notice_cut_refused": "阈值没有保存：{detail}",
    "rows_title": "逐张图片",
    "col_image": "图片",
    "col_file": "文件",
    "col_question": "问题",
    "col_answer": "回答",
    "col_expected": "应有",
    "col_status": "解析",
    "col_time": "用时",
    "cell_waiting": "…",
    "cell_none": "—",
    "seconds": "{s} 秒",
    "milliseconds": "{ms} 毫秒",
    "time_note_checklist": (
        "用时：模型本身的用时，按每个回答计。每张图片只编码一次，计入其第一个问题的用时；其他问题的用时只是回答本身。"
    ),
    "status_valid": "有效",
    "status_rejected": "被拒绝",
    "status_not_asked": "未询问",
    "status_error": "出错",
    "detail_not_asked": "未询问：前提问题的回答不允许继续；记为未知",
    "detail_not_analysed": "未分析：运行已先结束",
    "detail_stopped": "未分析：运行被停止",
    "export_saved": "已保存到 {where}",
    "export_cancelled": "已取消导出",
    "export_failed": "无法导出 {name}：{detail}",
    "notice_no_images": "请先选择图片。",
    "notice_same_name": "同名的第二张图片未纳入：{names}。标签文件按文件名对应图片，同名的两张无法区分；"
    "请改名后再分别测试。",
    "notice_labels_one_question": "{name} 每张图片只有一个标注，但正在使用的配置是含 {n} 个问题的检查表："
    "它的标注文件需要标题行，每个问题一列，例如 {header}",
    "notice_labels_not_one_question": "{name} 中没有一行是正在使用的配置的标注；"
    "该配置只问一个问题（文件名，应有的回答）。每个问题一列的文件属于检查表：请在设置 → 问题中选择该检查表。",
    "notice_labels_unreadable": "无法使用标注文件：{detail}",
    "notice_upload_failed": "无法接收文件：{detail}",
    "notice_files_refused": "{detail}",
    "dismiss": "知道了",
    "answer_yes": "是",
    "answer_no": "否",
    "answer_unknown": "未知",
    "generative": "每个回答都是生成式的，且未经确认：这些数字只描述模型在这些图片上的表现。",
}

TABLES: dict[str, dict[str, str]] = {"en": EN, "zh": ZH}
