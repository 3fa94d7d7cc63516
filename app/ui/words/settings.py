"""User-visible text of the Settings screen, in English and Simplified Chinese.

Same keys and the same {placeholders} in every table; the view takes a table as
a parameter. Names stay as they are in every language (CPU, GPU, OpenCL, Metal,
Vulkan, MNN, Keyframe), and so do the language names on the language picker
(each in its own language: `app.ui.words.LANGUAGES`). A {detail}, {reason} or {note}
is the program's own sentence (a file error, the worker's self-check).
"""

from __future__ import annotations

EN: dict[str, str] = {
    "settings_title": "Settings",
    "section_model": "Model and speed",
    "model_label": "Active model",
    "model_demo": "the bundled demo model (trained on synthetic drawings only)",
    "model_help": "Chosen on the Models screen.",
    "profile_label": "Question",
    "profile_auto": "The model's own question",
    "profile_started": "As the app was started: {name}",
    "profile_option": "{title} ({name})",
    "profile_checklist": "{title} ({name}): a checklist of {n} questions",
    "profile_damaged": "{name}: cannot be used",
    "profile_other_model": "Written for {models}; the model in use ({model}) may answer these questions wrongly.",
    "profile_help": "The question asked on every keyframe, from a profile file. Your own profiles (a score cut "
    "saved from Testers, a copy you edited) are read from {folder}; the shipped ones are templates.",
    "profiles_unlisted": "{n} more of your profiles in {folder} are not listed: the list shows the first {shown} "
    "by file name. Move the ones you no longer use elsewhere to see the rest.",
    # The profile editor
    "editor_edit": "Edit",
    "editor_new": "New checklist",
    "editor_heading": "Edit {name}",
    "editor_heading_copy": "Edit a copy: {name}",
    "editor_note": "Saved as your own profile file in {folder} (usable with {option}); the shipped profiles "
    "stay as templates. Leave the Chinese fields empty to show the English words there.",
    "editor_id": "Id (the file's name: lower_snake_case)",
    "editor_title": "Title",
    "editor_title_zh": "Title in Chinese",
    "editor_question_n": "Question {n}",
    "editor_signal": "Signal name (lower_snake_case)",
    "editor_prompt": "Question, as the model reads it",
    "editor_answers": "Answers, comma-separated",
    "editor_question_zh": "Question in Chinese",
    "editor_answers_zh": "Answers in Chinese, same order",
    "editor_remove": "Remove",
    "editor_add": "Add a question",
    "editor_too_many": "A checklist asks at most {n} questions: each one costs time on every keyframe.",
    "editor_gate_help": "Gate: a question asked first. When its answer is not the one chosen here, the other "
    "questions are not asked (they are shown as not checked).",
    "editor_gate": "Gate",
    "editor_gate_none": "No gate: every question is asked",
    "editor_gate_open": "Opens on",
    "editor_save": "Save and use",
    "editor_cancel": "Cancel",
    "editor_refused": "Not saved: {detail}",
    "editor_min_score": "Score cut (optional)",
    "editor_min_score_help": "Answers the model scores below it are shown as unknown (scored answers only), e.g. 0.8",
    "editor_mend": "Not saved: mend what is marked in red ({n}).",
    "editor_problem_id_empty": "Give the checklist an id: it names its file.",
    "editor_problem_name_form": "Use lowercase letters, digits and _ only, starting with a letter "
    "(e.g. {example_name}).",
    "editor_problem_title_empty": "Give the checklist a title.",
    "editor_problem_text_broken": "Holds a broken character (half of an emoji?): type it again.",
    "editor_problem_text_control": "Holds an invisible control character: type it again.",
    "editor_problem_text_too_long": "Too long: at most {n} characters, as the model reads every one on every keyframe.",
    "editor_problem_signal_empty": "Give the question a short name, e.g. {example_name}.",
    "editor_problem_signal_twice": "Each question needs a different name.",
    "editor_problem_question_empty": "Write the question the model is asked.",
    "editor_problem_answers_form": "Answers are short names in lowercase letters, digits and _: not {names}.",
    "editor_problem_answers_twice": "Each answer needs a different name: {names} is given twice.",
    "editor_problem_answers_few": "Give at least two answers, e.g. {example_answers}: with one, every keyframe gets it "
    "and no answer could be corrected.",
    "editor_problem_answers_need_unknown": "Add the answer {unknown}: when the gate stays shut this question is not "
    "asked and is shown as unknown.",
    "editor_problem_question_zh_missing": "Give the Chinese question too, or leave the Chinese answers empty.",
    "editor_problem_answers_zh_count": "{answers} answers but {words} Chinese words: one per answer, in the same "
    "order, or none.",
    "editor_problem_min_score_form": "A number above 0 and at most 1 (e.g. 0.8 or 80 %), or empty for no cut.",
    "backend_label": "Backend",
    "backend_help": (
        "A GPU backend is first checked against CPU on a reference image; "
        "if it is missing, fails or disagrees, CPU is used."
    ),
    "backend_in_use": "Backend in use: {used}",
    "backend_in_use_note": "Backend in use: {used} ({note})",
    "backend_fell_back": "Backend in use: {used} (asked: {asked} — fell back: {note})",
    "backend_checking": "Backend: checking {asked}…",
    "backend_failed": "The model could not be loaded on {asked}: {message}",
    "threads_label": "CPU threads",
    "threads_help": "How many CPU threads MNN uses ({low}–{high}: this machine has {cores} cores).",
    "threads_fewer": "Fewer threads",
    "threads_more": "More threads",
    "image_label": "Image size cap",
    "image_auto": "Automatic",
    "image_px": "{n} px",
    "image_help": (
        "The longest side of a keyframe as the model sees it: smaller is faster. Automatic is the model's own "
        "size, at most 224 px on CPU and 448 px on GPU. Never above the model's own size; never enlarged."
    ),
    "constrained_label": "Constrained decoding",
    "constrained_help": (
        "The model can only give one of the question's answers: always valid, and faster. "
        "Off: free generation, checked strictly."
    ),
    "restart_note": (
        "Changing the backend, threads, image size or decoding reloads the model; a running session is stopped first."
    ),
    "section_practice": "Practice",
    "interval_label": "Default keyframe interval",
    "interval_help": "A new session takes one keyframe this often; the practice screen can change it per session.",
    "seconds": "{n} s",
    "language_label": "Language",
    "reset": "Reset to defaults",
    "reset_confirm_title": "Reset all settings?",
    "reset_confirm_body": (
        "Backend, threads, image size, decoding, interval and language go back to their defaults. "
        "The active model stays."
    ),
    "reset_confirm_yes": "Reset",
    "cancel": "Cancel",
    "file_problem": (
        "The settings file could not be used ({reason}). The defaults are in use; the file was kept as {kept}."
    ),
    "file_problem_not_kept": (
        "The settings file could not be used ({reason}). The defaults are in use; "
        "the file could not be moved aside, so the next change replaces it."
    ),
    "save_failed": "The settings could not be saved ({detail}); they hold until Keyframe is closed.",
    "refused": "Not changed: {detail}",
    "apply_failed": "Saved, but not applied now: {detail}",
    "dismiss": "Dismiss",
    "saved_where": "Settings are saved in {path}",
}

ZH: dict[str, str] = {
    "settings_title": "设置",
    "section_model": "模型与速度",
    "model_label": "当前模型",
    "model_demo": "内置演示模型（仅用合成图画训练）",
    "model_help": "在“模型”页面中选择。",
    "profile_label": "问题",
    "profile_auto": "模型自带的问题",
    "profile_started": "启动应用时指定的：{name}",
    "profile_option": "{title}（{name}）",
    "profile_checklist": "{title}（{name}）：包含 {n} 个问题的检查表",
    "profile_damaged": "{name}：无法使用",
    "profile_other_model": "这些问题是为 {models} 编写的；当前使用的模型（{model}）可能答错。",
    "profile_help": "每个关键帧要问的问题，来自配置文件。你自己的配置（在“测试”中保存的分数阈值、你编辑的副本）从 "
    "{folder} 读取；内置配置是模板。",
    "profiles_unlisted": "{folder} 中还有 {n} 个你的配置没有列出：列表只显示按文件名排序的前 {shown} 个。"
    "把不再使用的移到别处即可看到其余的。",
    "editor_edit": "编辑",
    "editor_new": "新建检查表",
    "editor_heading": "编辑 {name}",
    "editor_heading_copy": "编辑副本：{name}",
    "editor_note": "保存为你自己的配置文件，位于 {folder}（可用于 {option}）；内置配置保持为模板。"
    "中文栏留空时，那里显示英文。",
    "editor_id": "标识（文件名：小写字母、数字和下划线）",
    "editor_title": "标题",
    "editor_title_zh": "中文标题",
    "editor_question_n": "问题 {n}",
    "editor_signal": "信号名（小写字母、数字和下划线）",
    "editor_prompt": "问题（模型读到的原文）",
    "editor_answers": "回答，用逗号分隔",
    "editor_question_zh": "中文问题",
    "editor_answers_zh": "回答的中文说法，顺序相同",
    "editor_remove": "删除",
    "editor_add": "添加问题",
    "editor_too_many": "检查表最多 {n} 个问题：每个问题在每个关键帧上都要花时间。",
    "editor_gate_help": "前置问题：最先提问。它的回答不是这里选定的那个时，其他问题不再提问（显示为未检查）。",
    "editor_gate": "前置问题",
    "editor_gate_none": "无前置问题：每个问题都提问",
    "editor_gate_open": "放行的回答",
    "editor_save": "保存并使用",
    "editor_cancel": "取消",
    "editor_refused": "未保存：{detail}",
    "editor_min_score": "分数阈值（可选）",
    "editor_min_score_help": "模型评分低于此值的回答显示为未知（仅限有评分的回答），例如 0.8",
    "editor_mend": "未保存：请修改标红的地方（{n} 处）。",
    "editor_problem_id_empty": "请给检查表一个标识：它是文件名。",
    "editor_problem_name_form": "只能用小写字母、数字和下划线，并以字母开头（例如 {example_name}）。",
    "editor_problem_title_empty": "请给检查表一个标题。",
    "editor_problem_text_broken": "含有损坏的字符（半个表情符号？）：请重新输入。",
    "editor_problem_text_control": "含有看不见的控制字符：请重新输入。",
    "editor_problem_text_too_long": "太长：最多 {n} 个字符，模型在每个关键帧上都要读每一个字符。",
    "editor_problem_signal_empty": "请给问题一个简短的名字，例如 {example_name}。",
    "editor_problem_signal_twice": "每个问题的名字必须不同。",
    "editor_problem_question_empty": "请写出要问模型的问题。",
    "editor_problem_answers_form": "回答是由小写字母、数字和下划线组成的短名字：{names} 不行。",
    "editor_problem_answers_twice": "每个回答的名字必须不同：{names} 出现了两次。",
    "editor_problem_answers_few": "至少给出两个回答，例如 {example_answers}："
    "只有一个时，每个关键帧都得到它，也无法更正。",
    "editor_problem_answers_need_unknown": "请加上回答 {unknown}：前置问题未放行时，这个问题不提问，显示为未知。",
    "editor_problem_question_zh_missing": "请同时给出中文问题，或把中文回答留空。",
    "editor_problem_answers_zh_count": "{answers} 个回答，却有 {words} 个中文说法："
    "每个回答一个，顺序相同，或者都不写。",
    "editor_problem_min_score_form": "填一个大于 0、不超过 1 的数（例如 0.8 或 80 %），不设阈值就留空。",
    "backend_label": "计算后端",
    "backend_help": "GPU 后端会先在参考图像上与 CPU 的回答比对；若不可用、出错或结果不一致，则改用 CPU。",
    "backend_in_use": "正在使用的后端：{used}",
    "backend_in_use_note": "正在使用的后端：{used}（{note}）",
    "backend_fell_back": "正在使用的后端：{used}（请求的是 {asked}，已回退：{note}）",
    "backend_checking": "后端：正在检查 {asked}…",
    "backend_failed": "无法在 {asked} 上加载模型：{message}",
    "threads_label": "CPU 线程数",
    "threads_help": "MNN 使用的 CPU 线程数（{low}–{high}：本机有 {cores} 个核心）。",
    "threads_fewer": "减少线程",
    "threads_more": "增加线程",
    "image_label": "图像尺寸上限",
    "image_auto": "自动",
    "image_px": "{n} 像素",
    "image_help": (
        "模型看到的关键帧最长边：越小越快。“自动”即模型自身的尺寸，CPU 上最多 224 像素，GPU 上最多 448 像素。"
        "不会超过模型自身的尺寸，也不会放大图像。"
    ),
    "constrained_label": "约束解码",
    "constrained_help": "模型只能给出该问题允许的答案之一：总是有效，而且更快。关闭后为自由生成，并严格检查。",
    "restart_note": "更改计算后端、线程数、图像尺寸或解码方式会重新加载模型；正在进行的练习会先停止。",
    "section_practice": "练习",
    "interval_label": "默认关键帧间隔",
    "interval_help": "新的练习按此间隔选取关键帧；练习页面可以为每次练习单独更改。",
    "seconds": "{n} 秒",
    "language_label": "语言",
    "reset": "恢复默认设置",
    "reset_confirm_title": "恢复所有设置？",
    "reset_confirm_body": "计算后端、线程数、图像尺寸、解码方式、间隔和语言都将恢复为默认值。当前模型保持不变。",
    "reset_confirm_yes": "恢复",
    "cancel": "取消",
    "file_problem": "无法使用设置文件（{reason}）。现在使用默认设置；原文件已保存为 {kept}。",
    "file_problem_not_kept": "无法使用设置文件（{reason}）。现在使用默认设置；原文件无法移开，下一次更改将覆盖它。",
    "save_failed": "无法保存设置（{detail}）；在关闭 Keyframe 之前仍然有效。",
    "refused": "未更改：{detail}",
    "apply_failed": "已保存，但暂时无法应用：{detail}",
    "dismiss": "关闭提示",
    "saved_where": "设置保存在 {path}",
}

TABLES: dict[str, dict[str, str]] = {"en": EN, "zh": ZH}
