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
    "privacy_worker_guarded": "Model worker: guarded only. {how}.",
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
    "source_folder": "Folder",
    "every": "One keyframe every",
    "seconds": "{n} s",
    "start": "Start",
    "stop": "Stop",
    "preview_idle": "Choose a source and press Start.",
    "worker_starting": "Loading the model…",
    "worker_ready": "Model ready: {model}",
    "worker_restarting": "The model worker stopped and is restarting ({reason}).",
    "worker_failed": "The model cannot be used: {reason}",
    "worker_failed_hint": (
        "Install or repair it from a terminal: python -m app models download MODEL_ID "
        "(or models verify MODEL_ID), then restart the app."
    ),
    "waiting_keyframe": "Waiting for the next keyframe…",
    "analysing_phase": "Analysing keyframe {k}: {phase}",
    "phase_vision": "looking at the picture",
    "phase_prefill": "reading the question",
    "phase_decode": "answering",
    "why_unknown": "No usable answer: {reason}",
    "waiting_examiner": "Waiting for examiner confirmation",
    "confirmed": "Confirmed by the examiner",
    "corrected": "Corrected by the examiner to {value}",
    "taken_at": "Keyframe at {t:.1f} s · answered {clock}",
    "no_answer_yet": "No answer yet",
    "keyframe_failed": "Keyframe at {t:.1f} s got no answer: {message}",
    "slower": ("The model needs {need:.1f} s per keyframe, so it looks every {every:.1f} s instead of every {n:g} s."),
    "details": "Details",
    "detail_raw": "Raw model text",
    "detail_parse": "Parse",
    "detail_score": "Model score (a diagnostic, never a confidence)",
    "detail_timings": "Timings",
    "detail_model": "Model",
    "detail_interval": "Effective interval",
    "detail_latency": "Latest keyframes, time to answer",
    "timeline_title": "This session",
    "log_error": "The session cannot be saved ({reason}); answers are kept on screen only.",
    "file_too_large": "{name} is {mb} MB; the limit is {limit} MB.",
    "upload_failed": "The file could not be read into the app ({reason}).",
    "camera_denied": ("The camera is not available (absent, or permission denied). Choose a video or images instead."),
}
