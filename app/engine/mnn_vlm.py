"""Run an MNN vision-language model on one image, streaming tokens to Python.

`MNN.llm.response(stream=True)` writes to the C++ stdout and has no Python
callback, so generation is driven here token by token: tokenizer_encode (runs
the vision encoder) -> forward(prompt ids) -> greedy pick -> forward([token]) ...
Leaving the loop is how cancel and the token limit work. The loop is greedy on
purpose: the product asks for one fixed JSON answer, where sampling only adds
noise.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from app.core.generation import FinishReason, Generation, Timings
from app.engine.model_folder import ModelFolder
from app.engine.stdio import native_stdout_to_stderr
from app.engine.tokenizer_header import TokenizerHeaderError, read_tokenizer_header

# End-of-turn tokens of common chat templates, used only when the tokenizer file
# lists no stop ids (MNN itself would then never stop before the token limit).
_FALLBACK_STOP_TEXTS = ("<|im_end|>", "<|endoftext|>", "<end_of_turn>", "<|eot_id|>", "</s>")

TokenCallback = Callable[[str], None]


class EngineError(RuntimeError):
    """The model could not be loaded or run; the message is meant for users."""


@dataclass(frozen=True)
class EngineOptions:
    backend: str = "cpu"
    threads: int = 2
    # MNN's tmp_path (mmap and backend caches). One per backend and model: a
    # cache shared between CPU and Metal corrupted answers in the spike.
    cache_dir: Path | None = None
    extra_config: dict[str, Any] = field(default_factory=dict)

    def mnn_config(self) -> dict[str, Any]:
        backend = {"backend_type": self.backend, "thread_num": self.threads}
        config: dict[str, Any] = {**backend, "mllm": dict(backend)}
        if self.cache_dir is not None:
            config["tmp_path"] = str(self.cache_dir)
        config.update(self.extra_config)
        return config


def _import_mnn_llm() -> Any:
    # `import MNN` prints a CPU-feature banner on fd 1.
    with native_stdout_to_stderr():
        import MNN.expr
        import MNN.llm
    return MNN


class MnnVlm:
    """One loaded model. Not thread-safe: one owner calls `generate` at a time."""

    def __init__(self, folder: ModelFolder, options: EngineOptions | None = None) -> None:
        self.folder = folder
        self.options = options or EngineOptions()
        self._mnn: Any = None
        self._llm: Any = None
        self._stop_ids: frozenset[int] = frozenset()
        self.load_ms = 0.0

    @property
    def loaded(self) -> bool:
        return self._llm is not None

    @property
    def stop_ids(self) -> frozenset[int]:
        return self._stop_ids

    def load(self) -> float:
        """Loads the model once; returns the load time in ms."""
        if self._llm is not None:
            return self.load_ms
        if not self.folder.is_visual:
            raise EngineError(f"{self.folder.path}: the model has no vision encoder (visual model file missing)")
        if self.options.cache_dir is not None:
            self.options.cache_dir.mkdir(parents=True, exist_ok=True)
        mnn = _import_mnn_llm()
        start = time.perf_counter()
        with native_stdout_to_stderr():
            llm = mnn.llm.create(str(self.folder.config_path))
            llm.set_config(self.options.mnn_config())
            # Llm.load() drops the C++ success flag; the raw object returns it.
            ok = llm._c_obj.load()
        self.load_ms = (time.perf_counter() - start) * 1000.0
        if ok is False:
            raise EngineError(f"{self.folder.path}: MNN could not load the model (damaged or incompatible files)")
        self._mnn, self._llm = mnn, llm
        self._stop_ids = self._find_stop_ids()
        return self.load_ms

    def close(self) -> None:
        self._llm = None

    def _find_stop_ids(self) -> frozenset[int]:
        try:
            ids = read_tokenizer_header(self.folder.tokenizer_path).stop_ids
        except TokenizerHeaderError:
            ids = ()
        if ids:
            return frozenset(ids)
        found: set[int] = set()
        with native_stdout_to_stderr():
            for text in _FALLBACK_STOP_TEXTS:
                encoded = self._llm.tokenizer_encode(text)
                if len(encoded) == 1:
                    found.add(int(encoded[0]))
        return frozenset(found)

    def build_prompt(self, prompt: str, system: str | None = None) -> str:
        """The chat-templated text with one image placeholder, as MNN's response() builds it."""
        user = f"<img>image_0</img>{prompt}"
        if self.folder.config.get("use_template", True) is False:
            return user
        with native_stdout_to_stderr():
            if system:
                return self._llm.apply_chat_template(
                    [{"role": "system", "content": system}, {"role": "user", "content": user}]
                )
            # The plain-string form adds the model's own default system prompt, if any.
            return self._llm.apply_chat_template(user)

    def _image_part(self, rgb: np.ndarray) -> dict[str, Any]:
        if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] != 3:
            raise EngineError("the image must be an HxWx3 uint8 RGB array")
        bgr = np.ascontiguousarray(rgb[:, :, ::-1])  # MNN's vision preprocessing expects BGR
        expr = self._mnn.expr
        var = expr.const(bgr, list(bgr.shape), expr.NHWC, expr.uint8)
        return {"data": var, "height": int(bgr.shape[0]), "width": int(bgr.shape[1])}

    def generate(
        self,
        rgb: np.ndarray,
        prompt: str,
        *,
        system: str | None = None,
        max_new_tokens: int = 32,
        on_token: TokenCallback | None = None,
        cancel: threading.Event | None = None,
        preprocess_ms: float = 0.0,
    ) -> Generation:
        """Runs one image + prompt; `on_token` gets each text piece as it is decoded.

        Cancel is checked before every forward step, so it takes effect within
        one decode step.
        """
        if self._llm is None:
            raise EngineError("the model is not loaded")
        llm = self._llm
        pieces: list[str] = []
        tokens: list[int] = []
        finish = FinishReason.LENGTH
        t_first: float | None = None
        start = time.perf_counter()
        with native_stdout_to_stderr():
            text = self.build_prompt(prompt, system)
            image = self._image_part(rgb)
            llm.reset()  # drop history, so each keyframe is judged on its own
            llm.generate_init()
            ids = llm.tokenizer_encode({"text": text, "images": [image]})
            t_vision = time.perf_counter()
            if not ids:
                raise EngineError("the model's tokenizer produced no input tokens")
            logits = llm.forward(ids)
            t_prefill = time.perf_counter()
            while True:
                if cancel is not None and cancel.is_set():
                    finish = FinishReason.CANCELLED
                    break
                token = self._argmax(logits)
                if token in self._stop_ids:
                    finish = FinishReason.STOP
                    break
                piece = llm.tokenizer_decode(token)
                tokens.append(token)
                pieces.append(piece)
                if t_first is None:
                    t_first = time.perf_counter()
                if on_token is not None and piece:
                    on_token(piece)
                if len(tokens) >= max_new_tokens:
                    break
                logits = llm.forward([token])
        end = time.perf_counter()
        t_first = t_first or end
        timings = Timings(
            load_ms=self.load_ms,
            preprocess_ms=preprocess_ms,
            vision_ms=(t_vision - start) * 1000.0,
            prefill_ms=(t_prefill - t_vision) * 1000.0,
            first_token_ms=(t_first - start) * 1000.0,
            decode_ms=(end - t_first) * 1000.0,
            total_ms=preprocess_ms + (end - start) * 1000.0,
            prompt_tokens=len(ids),
            generated_tokens=len(tokens),
        )
        return Generation(text="".join(pieces), finish=finish, token_ids=tuple(tokens), timings=timings)

    @staticmethod
    def _argmax(logits: Any) -> int:
        values = np.asarray(logits.read())
        return int(np.argmax(values.reshape(-1, values.shape[-1])[-1]))
