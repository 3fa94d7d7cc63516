"""A bare `MNN.llm`: the yardstick the app's own path is measured against.

Created straight from the model's config.json and timed around `response()` alone: none of the
app's code runs inside the timed call. The text it reads is built beforehand by the app's own
`chat_prompt`, so both sides tokenise the very same prompt.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from app.core.generation import FinishReason
from app.engine.mnn_vlm import chat_prompt, image_part

_NORMAL_FINISHED = 1  # MNN.llm.LlmStatus.NORMAL_FINISHED: a stop token, not the token limit


@dataclass(frozen=True)
class BareAnswer:
    text: str  # as response() returned it (MNN appends its end_with, a newline, after a stop)
    finish: FinishReason
    ms: float  # around response() only
    prompt_tokens: int  # -1 when MNN could not say (its response() raised)
    pixels_mp: float  # the image MNN's vision encoder actually saw, in megapixels (nan: could not say)
    error: str = ""  # response() raised, e.g. on generated text that is not valid UTF-8


class BareMnn:
    """One model loaded by MNN alone. Call from one thread; the caller claimed stdout (MNN prints)."""

    def __init__(self, config_path: Path, config: dict[str, Any] | None = None) -> None:
        import MNN.expr  # never MNN.tools: it pip-installs and runs a telemetry uploader
        import MNN.llm

        self._expr: Any = MNN.expr
        self._create = lambda: MNN.llm.create(str(config_path))
        self._config = config or {}
        self._llm: Any = self._loaded()

    def _loaded(self) -> Any:
        llm = self._create()
        # The text comes templated (chat_prompt, as the app builds it): MNN must not template it twice.
        llm.set_config({**self._config, "use_template": False})
        llm.load()
        return llm

    def text(self, prompt: str, system: str | None, use_template: bool = True) -> str:
        return chat_prompt(self._llm, prompt, system, use_template)

    def token_count(self, text: str) -> int:
        return len(self._llm.tokenizer_encode(text))

    def image(self, rgb: np.ndarray) -> dict[str, Any]:
        return image_part(self._expr, rgb)

    def answer(self, image: dict[str, Any], text: str, max_new_tokens: int) -> BareAnswer:
        self._llm.set_config({"max_new_tokens": max_new_tokens})
        self._llm.reset()  # no history: each keyframe on its own, as the app does
        start = time.perf_counter()
        try:
            raw = self._llm.response({"text": text, "images": [image]}, False)
        except Exception as exc:  # MNN's own error, kept as this answer's
            ms = (time.perf_counter() - start) * 1000.0
            # MNN 3.6.1: after response() raised (generated text that is not valid UTF-8), reading
            # `context` crashes the process; the model is loaded afresh and this answer says why.
            self._llm = self._loaded()
            return BareAnswer("", FinishReason.STOP, ms, -1, float("nan"), f"{type(exc).__name__}: {exc}")
        ms = (time.perf_counter() - start) * 1000.0
        context = self._llm.context
        finish = FinishReason.STOP if int(context.status) == _NORMAL_FINISHED else FinishReason.LENGTH
        return BareAnswer(str(raw), finish, ms, int(context.prompt_len), float(context.pixels_mp))
