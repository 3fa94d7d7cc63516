"""User-visible text of the Testers' screen (testers' mode: a folder of images against labels).

One table per language, same keys and placeholders (tests/unit/test_strings.py checks it);
the view takes its table as a parameter.
"""

from __future__ import annotations

from collections.abc import Mapping

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
    "rows_title": "Per image",
    "col_image": "Image",
    "col_file": "File",
    "col_answer": "Answer",
    "col_expected": "Expected",
    "col_status": "Parse",
    "col_time": "Time",
    "cell_waiting": "…",
    "cell_none": "—",
    "seconds": "{s} s",
    "status_valid": "valid",
    "status_rejected": "rejected",
    "status_error": "error",
    "detail_not_analysed": "not analysed: the run ended first",
    "detail_stopped": "not analysed: the run was stopped",
    "export_saved": "Saved {where}",
    "export_cancelled": "Export cancelled",
    "export_failed": "Could not export {name}: {detail}",
    "notice_no_images": "Choose the images first.",
    "notice_labels_unreadable": "The labels file cannot be used: {detail}",
    "notice_upload_failed": "The files could not be received: {detail}",
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
    "rows_title": "逐张图片",
    "col_image": "图片",
    "col_file": "文件",
    "col_answer": "回答",
    "col_expected": "应有",
    "col_status": "解析",
    "col_time": "用时",
    "cell_waiting": "…",
    "cell_none": "—",
    "seconds": "{s} 秒",
    "status_valid": "有效",
    "status_rejected": "被拒绝",
    "status_error": "出错",
    "detail_not_analysed": "未分析：运行已先结束",
    "detail_stopped": "未分析：运行被停止",
    "export_saved": "已保存到 {where}",
    "export_cancelled": "已取消导出",
    "export_failed": "无法导出 {name}：{detail}",
    "notice_no_images": "请先选择图片。",
    "notice_labels_unreadable": "无法使用标注文件：{detail}",
    "notice_upload_failed": "无法接收文件：{detail}",
    "dismiss": "知道了",
    "answer_yes": "是",
    "answer_no": "否",
    "answer_unknown": "未知",
    "generative": "每个回答都是生成式的，且未经确认：这些数字只描述模型在这些图片上的表现。",
}

TABLES: dict[str, dict[str, str]] = {"en": EN, "zh": ZH}


def text(strings: Mapping[str, str], key: str, **values: object) -> str:
    """The string for `key`, formatted; an unknown key shows itself rather than crashing a render."""
    template = strings.get(key, EN.get(key, key))
    return template.format(**values) if values else template


def answer_word(strings: Mapping[str, str], value: str) -> str:
    return strings.get(f"answer_{value}", value.upper())
