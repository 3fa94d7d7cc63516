"""User-facing text in one place, so a second language is a table, not a hunt."""

from __future__ import annotations

EN: dict[str, str] = {
    "title": "Keyframe",
    "not_medical": "Practice feedback only: not a medical device and not a clinical assessment.",
    # The practice app: header, practice screen, result card; no state may be a dead end.
    "purpose": "On-device CPR practice feedback",
    "demo_chip": "Demo model: trained on synthetic drawings only; its answers on real photos mean nothing",
    "privacy_chip": "Images stay on this device · {n} blocked",
    "privacy_sheet_title": "What stays on this device",
    "privacy_sheet": (
        "Frames are sampled on this device and analysed by the MNN runtime in a worker process of "
        "this app. Nothing is uploaded. The only thing the app ever downloads is a model, and only "
        "when you start that download."
    ),
    "privacy_worker_os-isolated": "Model worker: OS-isolated. The operating system gives it no network at all ({how}).",
    "privacy_worker_guarded": (
        "Model worker: guarded only ({how}). A hook blocks every connection made through Python except to "
        "this device; native code is not covered."
    ),
    "isolation_linux-userns": "a Linux user + network namespace with no network interface up",
    "isolation_linux-netns": "a Linux network namespace with no network interface up",
    "isolation_macos-sandbox": "a macOS sandbox profile that denies all network use",
    "isolation_process": "the whole process has no network",
    "isolation_platform": "this operating system offers the app no network isolation",
    "isolation_refused": "the operating system refused to isolate it",
    "isolation_unverified": "its isolation was set up but did not hold",
    "isolation_thread": "the model runs in a thread of this app's own process",
    "privacy_worker_pending": "Model worker: not ready yet.",
    "privacy_app": (
        "This app's own process: guarded. It keeps a socket on 127.0.0.1 to serve this page; a hook "
        "blocks and counts every other connection made through Python, videos are opened only as "
        "local files, and this page loads nothing from outside this device."
    ),
    "privacy_check": "Check this machine from a terminal: python -m app doctor",
    "close": "Close",
    "nav_practice": "Practice",
    "nav_sessions": "Sessions",
    "source": "Source",
    "source_camera": "Camera",
    "source_video": "Video",
    "source_image": "Image",
    "source_folder": "Several images",  # a browser cannot pick a folder: named for what it is
    "every": "One keyframe every",
    "seconds": "{n} s",
    "start": "Start",
    "stop": "Stop",
    "preview_idle": "Choose a source and press Start.",
    "preview_label": "Preview of the source",
    "worker_starting": "Loading the model…",
    "worker_ready": "Model ready: {model}",
    "worker_restarting": "The model worker stopped and is restarting ({reason}).",
    "worker_failed": "The model {model} cannot be used: {reason}",
    "worker_failed_hint": "Download or repair it on the Models screen, or use the bundled demo model there.",
    "open_models": "Open Models",
    "worker_failed_folder_hint": (
        "This folder is not a model Keyframe can use. Choose another model on the Models screen, "
        "or use the bundled demo model there."
    ),
    "demo_model_name": "the bundled demo model",
    "waiting_keyframe": "Waiting for the next keyframe…",
    "analysing_phase": "Analysing… {phase}",
    "streaming": "The model is writing: {text}",
    "phase_vision": "looking at the picture",
    "phase_prefill": "reading the question",
    "phase_decode": "answering",
    "why_unknown": "No usable answer: {reason}",
    "waiting_examiner": "Waiting for examiner confirmation",
    "confirmed": "Confirmed by the examiner",
    "corrected": "Corrected by the examiner (the model said {model})",
    "no_answer_yet": "No answer yet",
    "keyframe_failed": "Keyframe at {t:.1f} s got no answer: {message}",
    "slower": ("The model needs {need:.1f} s per keyframe, so it looks every {every:.1f} s instead of every {n:g} s."),
    "details": "Details",
    "detail_raw": "Raw model text",
    "detail_parse": "Parse",
    "detail_score": "Model score (a diagnostic, never a confidence)",
    "detail_timings": "Timings",
    "detail_confidence": "confidence 0",
    "detail_timing_values": (
        "total {total:.0f} ms · vision {vision:.0f} · prefill {prefill:.0f} · first token {first:.0f} · "
        "decode {decode:.0f}"
    ),
    "detail_model": "Model",
    "detail_interval": "Effective interval",
    "detail_latency": "Latest keyframes, time to answer",
    "timeline_title": "This session",
    "log_error": "The session cannot be saved ({reason}); answers are kept on screen only.",
    "file_too_large": "{name} is {size}, over the limit of {limit}.",
    "upload_failed": "The file could not be read into the app ({reason}).",
    "picker_failed": "The file chooser did not open. Reload the page and try again.",
    "camera_lost": "The camera stopped sending pictures; the session ended and is saved. Start again.",
    "camera_denied": ("The camera is not available (absent, or permission denied). Choose a video or images instead."),
    "paused_in_background": "The session stopped when the app went to the background; it is saved. Start again.",
    "camera_tab_gone": (
        "The session ended: the tab with the camera was reloaded, closed or lost its connection. "
        "It is saved in Sessions."
    ),
    "camera_in_other_tab": "The camera is in another tab of this app; its answers appear here too.",
}

ZH: dict[str, str] = {
    "title": "Keyframe",
    "not_medical": "仅供练习反馈：不是医疗器械，也不是临床评估。",
    "purpose": "在本机运行的心肺复苏练习反馈",
    "demo_chip": "演示模型：只用合成图画训练；它对真实照片的回答没有意义",
    "privacy_chip": "图像只留在本设备 · 已拦截 {n} 次",
    "privacy_sheet_title": "哪些内容留在本设备",
    "privacy_sheet": (
        "画面在本设备上采样，并由本应用的一个工作进程中的 MNN 运行时分析。不会上传任何内容。"
        "本应用唯一会下载的是模型，而且只在你开始下载时才下载。"
    ),
    "privacy_worker_os-isolated": "模型工作进程：由操作系统隔离。操作系统不给它任何网络（{how}）。",
    "privacy_worker_guarded": (
        "模型工作进程：仅受钩子保护（{how}）。一个钩子拦截经由 Python 发起的、"
        "目标不是本设备的所有连接；原生代码不在其中。"
    ),
    "isolation_linux-userns": "Linux 用户与网络命名空间，没有启用任何网络接口",
    "isolation_linux-netns": "Linux 网络命名空间，没有启用任何网络接口",
    "isolation_macos-sandbox": "macOS 沙盒配置，拒绝一切网络访问",
    "isolation_process": "整个进程都没有网络",
    "isolation_platform": "此操作系统不为应用提供网络隔离",
    "isolation_refused": "操作系统拒绝隔离它",
    "isolation_unverified": "隔离已设置，但没有生效",
    "isolation_thread": "模型在本应用自身进程的一个线程中运行",
    "privacy_worker_pending": "模型工作进程：尚未就绪。",
    "privacy_app": (
        "本应用自身的进程：受钩子保护。它在 127.0.0.1 上保留一个套接字来提供本页面；"
        "一个钩子拦截并统计经由 Python 发起的所有其他连接，视频只作为本地文件打开，"
        "本页面不会从本设备以外加载任何内容。"
    ),
    "privacy_check": "在终端里检查本机：python -m app doctor",
    "close": "关闭",
    "nav_practice": "练习",
    "nav_sessions": "记录",
    "source": "来源",
    "source_camera": "相机",
    "source_video": "视频",
    "source_image": "图片",
    "source_folder": "多张图片",
    "every": "每隔多久取一个关键帧",
    "seconds": "{n} 秒",
    "start": "开始",
    "stop": "停止",
    "preview_idle": "选择一个来源，然后按“开始”。",
    "preview_label": "来源预览",
    "worker_starting": "正在加载模型…",
    "worker_ready": "模型已就绪：{model}",
    "worker_restarting": "模型工作进程已停止，正在重新启动（{reason}）。",
    "worker_failed": "无法使用模型 {model}：{reason}",
    "worker_failed_hint": "请在“模型”页面下载或修复它，或在那里改用内置的演示模型。",
    "open_models": "打开模型页面",
    "worker_failed_folder_hint": (
        "这个文件夹不是 Keyframe 能使用的模型。请在“模型”页面选择其他模型，或在那里改用内置的演示模型。"
    ),
    "demo_model_name": "内置演示模型",
    "waiting_keyframe": "正在等待下一个关键帧…",
    "analysing_phase": "正在分析…{phase}",
    "streaming": "模型正在输出：{text}",
    "phase_vision": "正在看图",
    "phase_prefill": "正在读问题",
    "phase_decode": "正在回答",
    "why_unknown": "没有可用的回答：{reason}",
    "waiting_examiner": "等待考官确认",
    "confirmed": "考官已确认",
    "corrected": "考官已更正（模型回答为 {model}）",
    "no_answer_yet": "还没有回答",
    "keyframe_failed": "位于 {t:.1f} 秒的关键帧没有得到回答：{message}",
    "slower": "模型每个关键帧需要 {need:.1f} 秒，所以它每 {every:.1f} 秒看一次，而不是每 {n:g} 秒。",
    "details": "详细信息",
    "detail_raw": "模型原始文本",
    "detail_parse": "解析",
    "detail_score": "模型分数（仅用于诊断，绝不是置信度）",
    "detail_timings": "耗时",
    "detail_confidence": "置信度 0",
    "detail_timing_values": (
        "总计 {total:.0f} 毫秒 · 看图 {vision:.0f} · 读题 {prefill:.0f} · 首个词元 {first:.0f} · 回答 {decode:.0f}"
    ),
    "detail_model": "模型",
    "detail_interval": "实际间隔",
    "detail_latency": "最近几个关键帧的回答耗时",
    "timeline_title": "本次练习",
    "log_error": "无法保存本次记录（{reason}）；回答只保留在屏幕上。",
    "file_too_large": "{name} 有 {size}，超过 {limit} 的上限。",
    "upload_failed": "无法把文件读入本应用（{reason}）。",
    "picker_failed": "文件选择器没有打开。请重新加载页面后再试。",
    "camera_lost": "摄像头不再发送画面；练习已结束并已保存。请重新开始。",
    "camera_denied": "摄像头不可用（没有摄像头，或权限被拒绝）。请改为选择视频或图片。",
    "paused_in_background": "应用转到后台时练习已停止并已保存。请重新开始以继续。",
    "camera_tab_gone": "练习已结束：使用摄像头的标签页被重新加载、关闭或断开了连接。记录已保存在“记录”中。",
    "camera_in_other_tab": "摄像头在本应用的另一个标签页中；它的回答也会显示在这里。",
}

TABLES: dict[str, dict[str, str]] = {"en": EN, "zh": ZH}
