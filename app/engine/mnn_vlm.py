"""Run an MNN vision-language model on one image, streaming tokens to Python.

`MNN.llm.response(stream=True)` writes to the C++ stdout and has no Python
callback, so generation is driven here token by token: tokenizer_encode (runs
the vision encoder) -> forward(prompt ids) -> greedy pick -> forward([token]) ...
Leaving the loop is how cancel and the token limit work. The loop is greedy on
purpose: the product asks for one fixed JSON answer, where sampling only adds
noise.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from app.core.choices import ChoiceTree, build_choice_tree, pick
from app.core.generation import FinishReason, Generation, Timings
from app.engine.model_folder import ModelFolder
from app.engine.stdio import native_stdout_to_stderr
from app.engine.tokenizer_header import TokenizerHeaderError, read_tokenizer_header

# Where a question goes in the chat text of a checklist (`see`): after the image, replaced per signal.
_QUESTION = "KEYFRAME_QUESTION_HERE"
_IMAGE_END = "</img>"

# End-of-turn tokens of common chat templates, used only when the tokenizer file
# lists no stop ids (MNN itself would then never stop before the token limit).
_FALLBACK_STOP_TEXTS = ("<|im_end|>", "<|endoftext|>", "<end_of_turn>", "<|eot_id|>", "</s>")

TokenCallback = Callable[[str], None]
# Called as each phase begins: "vision" (image encoder + tokenizer), "prefill", "decode".
# Workers report it as progress; a hang is a phase that never ends.
PhaseCallback = Callable[[str], None]


class CancelFlag(Protocol):
    """What the token loop asks before every step; a threading.Event is one."""

    def is_set(self) -> bool: ...


def _phase(callback: PhaseCallback | None, name: str) -> None:
    if callback is not None:
        callback(name)


class EngineError(RuntimeError):
    """The model could not be loaded or run; the message is meant for users."""


@dataclass(frozen=True)
class EngineOptions:
    backend: str = "cpu"
    threads: int = 2
    # MNN's tmp_path (mmap and backend caches). One per backend and model: a
    # cache shared between CPU and Metal corrupted answers in an early prototype.
    cache_dir: Path | None = None

    def mnn_config(self) -> dict[str, Any]:
        backend = {"backend_type": self.backend, "thread_num": self.threads}
        config: dict[str, Any] = {**backend, "mllm": dict(backend)}
        if self.cache_dir is not None:
            config["tmp_path"] = str(self.cache_dir)
        return config


def _import_mnn_llm() -> Any:
    # `import MNN` prints a CPU-feature banner on fd 1.
    with native_stdout_to_stderr():
        import MNN.expr
        import MNN.llm
    return MNN


def chat_prompt(llm: Any, prompt: str, system: str | None = None, use_template: bool = True) -> str:
    """The chat-templated text with one image placeholder, as MNN's response() builds it.

    Public so benchmarks give a bare `MNN.llm` the very text the app gives it."""
    user = f"<img>image_0{_IMAGE_END}{prompt}"
    if not use_template:
        return user
    if system:
        return str(llm.apply_chat_template([{"role": "system", "content": system}, {"role": "user", "content": user}]))
    # The plain-string form adds the model's own default system prompt, if any.
    return str(llm.apply_chat_template(user))


def image_part(expr: Any, rgb: np.ndarray) -> dict[str, Any]:
    """An RGB keyframe as MNN's multimodal prompt takes it (`expr` is `MNN.expr`)."""
    if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] != 3:
        raise EngineError("the image must be an HxWx3 uint8 RGB array")
    bgr = np.ascontiguousarray(rgb[:, :, ::-1])  # MNN's vision preprocessing expects BGR
    var = expr.const(bgr, list(bgr.shape), expr.NHWC, expr.uint8)
    return {"data": var, "height": int(bgr.shape[0]), "width": int(bgr.shape[1])}


@dataclass(frozen=True)
class Choice:
    index: int | None  # which answer; None when cancelled
    score: float | None  # product of the chosen tokens' probabilities: a diagnostic, not confidence
    generation: Generation


class _Clock:
    """Wall-clock marks around the MNN calls of one run."""

    def __init__(self, preprocess_ms: float) -> None:
        self.preprocess_ms = preprocess_ms
        self.start = time.perf_counter()
        self.t_vision = self.t_prefill = self.start
        self.t_first: float | None = None

    def vision_done(self) -> None:
        self.t_vision = time.perf_counter()

    def prefill_done(self) -> None:
        self.t_prefill = time.perf_counter()

    def token(self) -> None:
        if self.t_first is None:
            self.t_first = time.perf_counter()

    def timings(self, load_ms: float, prompt_tokens: int, generated: int) -> Timings:
        end = time.perf_counter()
        first = self.t_first or end
        ms = 1000.0
        return Timings(
            load_ms=load_ms,
            preprocess_ms=self.preprocess_ms,
            vision_ms=(self.t_vision - self.start) * ms,
            prefill_ms=(self.t_prefill - self.t_vision) * ms,
            first_token_ms=(first - self.start) * ms,
            decode_ms=(end - first) * ms,
            total_ms=self.preprocess_ms + (end - self.start) * ms,
            prompt_tokens=prompt_tokens,
            generated_tokens=generated,
        )


class MnnVlm:
    """One loaded model. Not thread-safe: one owner calls `generate` at a time."""

    def __init__(self, folder: ModelFolder, options: EngineOptions | None = None) -> None:
        self.folder = folder
        self.options = options or EngineOptions()
        self._mnn: Any = None
        self._llm: Any = None
        self._stop_ids: frozenset[int] = frozenset()
        self._choice_trees: dict[tuple[str, ...], ChoiceTree] = {}
        self.load_ms = 0.0

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
        with native_stdout_to_stderr():
            return chat_prompt(self._llm, prompt, system, self.folder.use_template)

    def _image_part(self, rgb: np.ndarray) -> dict[str, Any]:
        return image_part(self._mnn.expr, rgb)

    def _encode(self, rgb: np.ndarray, prompt: str, system: str | None) -> list[int]:
        """Prompt + image to token ids; runs the vision encoder. Caller holds the fd guard."""
        if self._llm is None:
            raise EngineError("the model is not loaded")
        return self._encode_text_with_image(rgb, self.build_prompt(prompt, system))

    def _encode_text_with_image(self, rgb: np.ndarray, text: str) -> list[int]:
        """Chat text holding the image placeholder, and the image, to token ids, on a fresh history."""
        llm = self._llm
        image = self._image_part(rgb)
        llm.reset()  # drop history, so each keyframe is judged on its own
        llm.generate_init()
        ids = list(llm.tokenizer_encode({"text": text, "images": [image]}))
        if not ids:
            raise EngineError("the model's tokenizer produced no input tokens")
        return ids

    def _see_and_prefill(
        self,
        rgb: np.ndarray,
        prompt: str,
        system: str | None,
        clock: _Clock,
        on_phase: PhaseCallback | None,
        forced: Sequence[int] = (),
    ) -> tuple[Any, list[int], Any]:
        """The step every way of answering starts with: the vision encoder, then one prefill of the
        prompt and `forced` tokens after it (MNN 3.6.1 rejects a multi-token forward after a
        prefill, so they go in the same one). (llm, the prompt's ids, the last logits); the caller
        holds the fd guard."""
        _phase(on_phase, "vision")
        ids = self._encode(rgb, prompt, system)
        clock.vision_done()
        _phase(on_phase, "prefill")
        logits = self._llm.forward(ids + list(forced))
        clock.prefill_done()
        _phase(on_phase, "decode")
        return self._llm, ids, logits

    def generate(
        self,
        rgb: np.ndarray,
        prompt: str,
        *,
        system: str | None = None,
        max_new_tokens: int = 32,
        on_token: TokenCallback | None = None,
        on_phase: PhaseCallback | None = None,
        cancel: CancelFlag | None = None,
        preprocess_ms: float = 0.0,
    ) -> Generation:
        """Free greedy generation; `on_token` gets each text piece as it is decoded.

        Cancel is checked before every forward step, so it takes effect within
        one decode step.
        """
        clock = _Clock(preprocess_ms)
        pieces: list[str] = []
        tokens: list[int] = []
        finish = FinishReason.LENGTH
        with native_stdout_to_stderr():
            llm, ids, logits = self._see_and_prefill(rgb, prompt, system, clock, on_phase)
            while True:
                if cancel is not None and cancel.is_set():
                    finish = FinishReason.CANCELLED
                    break
                token = int(np.argmax(self._last_row(logits)))
                if token in self._stop_ids:
                    finish = FinishReason.STOP
                    break
                piece = self._decode_piece(token)
                tokens.append(token)
                pieces.append(piece)
                clock.token()
                if on_token is not None and piece:
                    on_token(piece)
                if len(tokens) >= max_new_tokens:
                    break
                logits = llm.forward([token])
        timings = clock.timings(self.load_ms, len(ids), len(tokens))
        return Generation(text="".join(pieces), finish=finish, token_ids=tuple(tokens), timings=timings)

    def choose(
        self,
        rgb: np.ndarray,
        prompt: str,
        answers: list[str],
        *,
        system: str | None = None,
        on_token: TokenCallback | None = None,
        on_phase: PhaseCallback | None = None,
        cancel: CancelFlag | None = None,
        preprocess_ms: float = 0.0,
    ) -> Choice:
        """Constrained decoding: the model may only produce one of `answers`.

        The tokens every answer shares are prefilled with the prompt; the model
        then only picks where answers differ, and the rest of the chosen answer
        is forced. The text is valid by construction.
        """
        clock = _Clock(preprocess_ms)
        with native_stdout_to_stderr():
            # Before the image prompt: Omni's tokenizer_encode keeps per-prompt vision
            # state, so encoding any other text after it corrupts the prefill.
            tree = self._choice_tree(tuple(answers))
            llm, ids, logits = self._see_and_prefill(rgb, prompt, system, clock, on_phase, tree.prefix)
            return self._pick_answer(tree, answers, logits, clock, len(ids), on_token, cancel)

    def see(
        self,
        rgb: np.ndarray,
        questions: Sequence[tuple[str, Sequence[str]]],
        *,
        system: str | None = None,
        on_phase: PhaseCallback | None = None,
        preprocess_ms: float = 0.0,
    ) -> SeenImage:
        """One keyframe for several constrained questions, (prompt, answers) each: the image is
        encoded and prefilled once, then `SeenImage.choose(i)` asks question i after it and rolls
        the KV cache back to the image, so each answer is the one asked alone would get."""
        clock = _Clock(preprocess_ms)
        with native_stdout_to_stderr():
            # Everything but the image first: Omni's tokenizer_encode keeps per-prompt vision
            # state, so text encoded after the image prompt corrupts its prefill.
            if self._llm is None:
                raise EngineError("the model is not loaded")
            head, tail = self._split_at_image(system)
            asked = [
                (self._encode_text(tail.replace(_QUESTION, prompt)), tuple(answers), self._choice_tree(tuple(answers)))
                for prompt, answers in questions
            ]
            llm = self._llm
            _phase(on_phase, "vision")
            ids = self._encode_text_with_image(rgb, head)
            clock.vision_done()
            _phase(on_phase, "prefill")
            llm.forward(ids)
            image_end = llm._c_obj.get_current_history()
            # MNN 3.6.1: a multi-token forward straight after an image prefill fails its shape
            # check (a broadcast error); one single-token forward, erased again, avoids it.
            llm.forward(ids[-1:])
            llm._c_obj.erase_history(image_end, llm._c_obj.get_current_history())
            clock.prefill_done()
        return SeenImage(self, clock, len(ids), image_end, asked)

    def _split_at_image(self, system: str | None) -> tuple[str, str]:
        """The chat text up to the image's end, and the rest with _QUESTION where the question goes."""
        text = self.build_prompt(_QUESTION, system)
        cut = text.index(_IMAGE_END) + len(_IMAGE_END)
        if _QUESTION not in text[cut:]:
            raise EngineError("the model's chat template does not put the question after the image")
        return text[:cut], text[cut:]

    def _pick_answer(
        self,
        tree: ChoiceTree,
        answers: Sequence[str],
        logits: Any,
        clock: _Clock,
        prompt_tokens: int,
        on_token: TokenCallback | None,
        cancel: CancelFlag | None,
    ) -> Choice:
        """From the logits after the answers' shared prefix: pick where they differ, force the rest."""
        llm = self._llm
        if on_token is not None and tree.prefix:
            on_token(self._decode(tree.prefix))
        path: list[int] = []
        score = 1.0
        while len(tree.matching(path)) > 1:
            if cancel is not None and cancel.is_set():
                text = self._decode(tree.prefix + tuple(path))
                timings = clock.timings(self.load_ms, prompt_tokens + len(tree.prefix), len(path))
                return Choice(None, None, Generation(text, FinishReason.CANCELLED, tuple(path), timings))
            if path:
                logits = llm.forward([path[-1]])
            token, p = pick(self._last_row(logits), tree.allowed(path))
            score *= p
            path.append(token)
            clock.token()
            if on_token is not None:
                on_token(self._decode([token]))
        index = tree.matching(path)[0]
        rest = tree.branches[index][len(path) :]
        if on_token is not None and rest:
            on_token(self._decode(rest))
        clock.token()
        timings = clock.timings(self.load_ms, prompt_tokens + len(tree.prefix), len(path))
        generation = Generation(answers[index], FinishReason.STOP, tree.prefix + tree.branches[index], timings)
        return Choice(index, score, generation)

    def _choice_tree(self, answers: tuple[str, ...]) -> ChoiceTree:
        tree = self._choice_trees.get(answers)
        if tree is None:
            tree = self._choice_trees[answers] = build_choice_tree([self._encode_text(a) for a in answers])
        return tree

    def _encode_text(self, text: str) -> tuple[int, ...]:
        ids = list(self._llm.tokenizer_encode(text))
        prefix = list(self._llm.tokenizer_encode(""))  # e.g. a BOS the tokenizer adds to every text
        return tuple(ids[len(prefix) :] if prefix and ids[: len(prefix)] == prefix else ids)

    def _decode(self, tokens: tuple[int, ...] | list[int]) -> str:
        return "".join(self._decode_piece(t) for t in tokens)

    def _decode_piece(self, token: int) -> str:
        # MNN 3.6.1 hands each token's bytes to Python as UTF-8; a token holding part of a
        # multi-byte character (byte-level BPE) raises. The raw text keeps a marker instead,
        # and the strict parser rejects it like any other non-answer.
        try:
            return str(self._llm.tokenizer_decode(token))
        except UnicodeDecodeError:
            return "\ufffd"

    @staticmethod
    def _last_row(logits: Any) -> np.ndarray:
        """Logits for the next token (MNN may return one row per input position)."""
        values = np.asarray(logits.read())
        row: np.ndarray = values.reshape(-1, values.shape[-1])[-1]
        return row


class SeenImage:
    """A keyframe encoded once (`MnnVlm.see`); each question is asked after it and rolled back.
    The first answer's timings carry the vision encode and the image's prefill; later ones only
    their own question's prefill and picks."""

    def __init__(
        self,
        engine: MnnVlm,
        clock: _Clock,
        image_tokens: int,
        image_end: int,
        questions: list[tuple[tuple[int, ...], tuple[str, ...], ChoiceTree]],
    ) -> None:
        self._engine = engine
        self._first_clock: _Clock | None = clock
        self._image_tokens = image_tokens
        self._image_end = image_end
        self._questions = questions

    def choose(self, index: int, on_token: TokenCallback | None = None, cancel: CancelFlag | None = None) -> Choice:
        """Question `index` of those given to `see`, asked after the image; the cache is then back at the image."""
        engine = self._engine
        ids, answers, tree = self._questions[index]
        clock = self._first_clock or _Clock(0.0)  # a later question: no vision, its own prefill
        self._first_clock = None
        llm = engine._llm
        with native_stdout_to_stderr():
            logits = llm.forward(list(ids) + list(tree.prefix))
            clock.prefill_done()
            try:
                return engine._pick_answer(
                    tree, answers, logits, clock, self._image_tokens + len(ids), on_token, cancel
                )
            finally:
                llm._c_obj.erase_history(self._image_end, llm._c_obj.get_current_history())
