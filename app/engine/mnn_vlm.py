"""Run an MNN vision-language model on one image, streaming tokens to Python.

`MNN.llm.response(stream=True)` writes to the C++ stdout and has no Python
callback, so generation is driven here token by token: tokenizer_encode (runs
the vision encoder) -> forward(prompt ids) -> greedy pick -> forward([token]) ...
Leaving the loop is how cancel and the token limit work. The loop is greedy on
purpose: the product asks for one fixed JSON answer, where sampling only adds
noise.

The chat text before the image (the template's start, the system turn, a question asked before
the image) is the same on every keyframe: it stays in MNN's KV cache, and each keyframe rolls the
cache back to its end instead of resetting it, then prefills only the image and what follows.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import numpy as np

from app.core.choices import ChoiceTree, build_choice_tree, pick
from app.core.generation import FinishReason, Generation, RunPhase, Timings
from app.engine.cache_folder import remove_temporary, usable_cache
from app.engine.model_folder import ModelFolder, ModelFolderError
from app.engine.positions import image_position_shift
from app.engine.stdio import native_stdout_to_stderr
from app.engine.tokenizer_header import TokenizerHeaderError, read_tokenizer_header

# Where a question goes in the chat text of a checklist (`see`): after the image, replaced per signal.
_QUESTION = "KEYFRAME_QUESTION_HERE"
_IMAGE = "<img>image_0</img>"  # MNN's placeholder for images[0]
_IMAGE_END = "</img>"
_RUNNING = 0  # MNN.llm.LlmStatus.RUNNING, as generate_init() sets it: forward() refuses an error status

# End-of-turn tokens of common chat templates, used only when the tokenizer file
# lists no stop ids (MNN itself would then never stop before the token limit).
_FALLBACK_STOP_TEXTS = ("<|im_end|>", "<|endoftext|>", "<end_of_turn>", "<|eot_id|>", "</s>")

TokenCallback = Callable[[str], None]
# Called as each phase begins; workers report it as progress.
PhaseCallback = Callable[[RunPhase], None]


class CancelFlag(Protocol):
    """What the token loop asks before every step; a threading.Event is one."""

    def is_set(self) -> bool: ...


def _phase(callback: PhaseCallback | None, name: RunPhase) -> None:
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

    def mnn_config(self, env: Mapping[str, str] = os.environ) -> dict[str, Any]:
        """The app's choices for MNN, the same for the language model and the vision encoder (`mllm`)."""
        backend = {"backend_type": self.backend, "thread_num": capped_threads(self.threads, env)}
        config: dict[str, Any] = {**backend, "mllm": dict(backend)}
        if self.cache_dir is not None:
            config["tmp_path"] = str(self.cache_dir)
        return config


def capped_threads(threads: int, env: Mapping[str, str]) -> int:
    """`threads`, or fewer when OMP_NUM_THREADS (the usual cap on native thread pools, e.g. on a shared
    machine) asks for fewer. MNN's pool spins while it waits for its threads, so threads the machine
    cannot run at once cost far more than they give: beside four busy processes on two cores, 100
    answers of the demo model took 0.5 s on one thread and 52 s on two (docs/testing.md)."""
    try:
        cap = int(env.get("OMP_NUM_THREADS", "").strip())
    except ValueError:
        return threads
    return min(threads, cap) if cap >= 1 else threads


def launch_config(folder: ModelFolder, options: EngineOptions) -> dict[str, Any]:
    """The model's config.json with the app's choices, for MNN to be created from.

    MNN 3.6 reads the vision encoder's backend and threads (`mllm`) only from the file a model is
    created from: set_config() leaves them as the model shipped them, so the app's choices reach the
    encoder only this way. `base_dir` holds MNN to the folder that was checked, whatever the file says."""
    own = folder.own_config()
    ours = options.mnn_config()
    mllm = own.get("mllm")
    return {
        **own,
        **ours,
        "mllm": {**(mllm if isinstance(mllm, dict) else {}), **ours["mllm"]},
        "base_dir": f"{folder.path}{os.sep}",
    }


def write_launch_file(folder: ModelFolder, options: EngineOptions) -> Path:
    """`launch_config` as a file, for `MNN.llm.create`: in the cache folder, else (none, or a full disk) the
    system's temporary one; the caller removes it. A name of its own: two engines of one model (two app
    processes) share the cache folder."""
    try:
        text = json.dumps(launch_config(folder, options))
    except ModelFolderError as exc:  # config.json changed or went away since the folder was checked
        raise EngineError(str(exc)) from exc
    reasons = []
    for where in dict.fromkeys([options.cache_dir, None]):  # None: the system's temporary folder
        try:
            fd, name = tempfile.mkstemp(dir=where, prefix="mnn-launch-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(text)
            except OSError:
                Path(name).unlink(missing_ok=True)
                raise
            return Path(name)
        except OSError as exc:
            reasons.append(f"{exc.filename or where or tempfile.gettempdir()}: {exc.strerror or exc}")
    raise EngineError(f"cannot write the file MNN starts from ({'; '.join(reasons)})")


def _import_mnn_llm() -> Any:
    # `import MNN` prints a CPU-feature banner on fd 1.
    with native_stdout_to_stderr():
        import MNN.expr
        import MNN.llm
    return MNN


def chat_prompt(
    llm: Any, prompt: str, system: str | None = None, use_template: bool = True, question_first: bool = False
) -> str:
    """The chat-templated text with one image placeholder, as MNN's response() builds it; the question
    follows the image unless `question_first`.

    Public so benchmarks give a bare `MNN.llm` the very text the app gives it."""
    user = f"{prompt}{_IMAGE}" if question_first else f"{_IMAGE}{prompt}"
    if not use_template:
        return user
    if system:
        text = str(llm.apply_chat_template([{"role": "system", "content": system}, {"role": "user", "content": user}]))
    else:  # the plain-string form adds the model's own default system prompt, if any
        text = str(llm.apply_chat_template(user))
    if _IMAGE not in text:
        raise EngineError("the model's chat template leaves the image out of the prompt")
    return text


def image_part(expr: Any, rgb: np.ndarray) -> dict[str, Any]:
    """An RGB keyframe as MNN's multimodal prompt takes it (`expr` is `MNN.expr`)."""
    if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] != 3:
        raise EngineError("the image must be an HxWx3 uint8 RGB array")
    bgr = np.ascontiguousarray(rgb[:, :, ::-1])  # MNN's vision preprocessing expects BGR
    var = expr.const(bgr, list(bgr.shape), expr.NHWC, expr.uint8)
    # Always both sides: MNN keeps a size it was given for later images that come without one.
    return {"data": var, "height": int(bgr.shape[0]), "width": int(bgr.shape[1])}


@dataclass(frozen=True)
class _KeptText:
    """Chat text before the image whose tokens are the first `tokens` entries of the KV cache."""

    text: str
    tokens: int


class _Prefilled(NamedTuple):
    tokens: int  # the prompt's tokens, with those kept in the cache from the last keyframe
    ids: list[int]  # the tokens this prefill forwarded (without forced ones)
    logits: Any  # after its last token


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
        self._kept: _KeptText | None = None
        self._history = 0  # the KV cache's length as this engine's last forward left it
        self._keyframe = 0  # counts image prefills: a SeenImage knows when its image has gone
        self.load_ms = 0.0
        self.cache_note = ""  # why MNN's cache is a temporary folder this time ("" when it is not)
        self._temporary_cache: Path | None = None

    @property
    def threads(self) -> int:
        """The CPU threads MNN is given (`EngineOptions.threads`, capped by OMP_NUM_THREADS)."""
        return int(self.options.mnn_config()["thread_num"])

    @property
    def stop_ids(self) -> frozenset[int]:
        return self._stop_ids

    @property
    def kept_tokens(self) -> int:
        """Tokens of constant chat text the next keyframe will not prefill again (0: none kept)."""
        return self._kept.tokens if self._kept is not None else 0

    def forget_prefix(self) -> None:
        """The next keyframe prefills its whole prompt on an empty cache (and keeps its text again)."""
        self._kept = None

    def load(self) -> float:
        """Loads the model once; returns the load time in ms."""
        if self._llm is not None:
            return self.load_ms
        if not self.folder.is_visual:
            raise EngineError(f"{self.folder.path}: the model has no vision encoder (visual model file missing)")
        if self.options.cache_dir is not None:
            folder, self.cache_note = usable_cache(self.options.cache_dir)
            if folder != self.options.cache_dir:
                self._temporary_cache = folder
                self.options = replace(self.options, cache_dir=folder)
        mnn = _import_mnn_llm()
        start = time.perf_counter()
        launch = write_launch_file(self.folder, self.options)
        try:
            with native_stdout_to_stderr():
                llm = mnn.llm.create(str(launch))
                # Llm.load() drops the C++ success flag; the raw object returns it.
                ok = llm._c_obj.load()
        finally:
            launch.unlink(missing_ok=True)  # MNN reads it when created and loaded, not after
        self.load_ms = (time.perf_counter() - start) * 1000.0
        if ok is False:
            raise EngineError(f"{self.folder.path}: MNN could not load the model (damaged or incompatible files)")
        self._mnn, self._llm = mnn, llm
        self._stop_ids = self._find_stop_ids()
        return self.load_ms

    def close(self) -> None:
        self._llm = None
        self._kept = None
        if self._temporary_cache is not None:
            remove_temporary(self._temporary_cache)
            self._temporary_cache = None

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

    def build_prompt(self, prompt: str, system: str | None = None, question_first: bool = False) -> str:
        """The chat-templated text with one image placeholder, as MNN's response() builds it."""
        with native_stdout_to_stderr():
            return chat_prompt(self._llm, prompt, system, self.folder.use_template, question_first)

    def _image_part(self, rgb: np.ndarray) -> dict[str, Any]:
        return image_part(self._mnn.expr, rgb)

    def _forward(self, ids: list[int]) -> Any:
        logits = self._llm.forward(ids)
        self._history = self._llm._c_obj.get_current_history()
        return logits

    def _rewind(self, end: int) -> None:
        """Drops the KV cache after its first `end` entries. MNN does it at the next forward, which
        must follow at once: a second erase before it is taken as a mistake (and said on stdout)."""
        c_obj = self._llm._c_obj
        current = c_obj.get_current_history()
        if current > end:
            c_obj.erase_history(end, current)

    def _prefill(
        self,
        rgb: np.ndarray,
        text: str,
        clock: _Clock,
        on_phase: PhaseCallback | None,
        forced: Sequence[int] = (),
    ) -> _Prefilled:
        """The step every way of answering starts with: the vision encoder, then one prefill of `text`
        (chat text holding the image placeholder) and `forced` tokens after it (MNN 3.6.1 rejects a
        multi-token forward after a prefill, so they go in the same one).

        The text before the image, when the cache holds it from the last keyframe, is not prefilled
        again: the cache is rolled back to its end, and MNN numbers the new tokens from the cache's
        length on, so they get the positions they have on a fresh history. The caller holds the fd
        guard."""
        if self._llm is None:
            raise EngineError("the model is not loaded")
        llm = self._llm
        image = self._image_part(rgb)
        head = text[: text.index(_IMAGE)]
        kept = self._kept
        if kept is not None and (kept.text != head or llm._c_obj.get_current_history() != self._history):
            kept = None  # other text before the image, or the model was driven past this engine
        self._kept = None  # until this keyframe's prefill has succeeded
        self._keyframe += 1
        head_ids: list[int] = []
        _phase(on_phase, RunPhase.VISION)
        try:
            if kept is not None:
                self._rewind(kept.tokens)
                # What generate_init() sets, without emptying the cache: prompt numbering, a running status.
                llm._c_obj.set_context({"gen_seq_len": 0, "status": _RUNNING})
                ids = list(llm.tokenizer_encode({"text": text[len(head) :], "images": [image]}))
            else:
                # Before the image prompt: Omni's tokenizer_encode keeps per-prompt vision state,
                # so encoding any other text after it corrupts the prefill.
                head_ids = list(llm.tokenizer_encode(head)) if head else []
                llm.reset()  # drop history, so each keyframe is judged on its own
                llm.generate_init()
                ids = list(llm.tokenizer_encode({"text": text, "images": [image]}))
            if not ids:
                raise EngineError("the model's tokenizer produced no input tokens")
            clock.vision_done()
            _phase(on_phase, RunPhase.PREFILL)
            logits = self._forward(ids + list(forced))
        except BaseException:
            self._drop_queued_images()
            raise
        held = kept.tokens if kept is not None else 0
        if kept is None and head_ids and ids[: len(head_ids)] == head_ids:
            kept = _KeptText(head, len(head_ids))
        self._kept = kept
        return _Prefilled(held + len(ids), ids, logits)

    def _drop_queued_images(self) -> None:
        """After a keyframe failed between its image encode and its forward: MNN keeps an encoded
        image queued, even across reset(), and the next forward takes it for its own image. A text
        forward of two tokens takes it; one single token goes first, because after an image prefill
        a longer text forward fails MNN's shape check (and the Python binding then crashes)."""
        llm = self._llm
        self._kept = None
        llm.reset()
        llm.generate_init()
        llm.forward([0])
        llm.generate_init()
        llm.forward([0, 0])
        llm.reset()

    def generate(
        self,
        rgb: np.ndarray,
        prompt: str,
        *,
        system: str | None = None,
        question_first: bool = False,
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
            text = chat_prompt(self._llm, prompt, system, self.folder.use_template, question_first)
            prompt_tokens, _, logits = self._prefill(rgb, text, clock, on_phase)
            clock.prefill_done()
            _phase(on_phase, RunPhase.DECODE)
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
                logits = self._forward([token])
        timings = clock.timings(self.load_ms, prompt_tokens, len(tokens))
        return Generation(text="".join(pieces), finish=finish, token_ids=tuple(tokens), timings=timings)

    def choose(
        self,
        rgb: np.ndarray,
        prompt: str,
        answers: list[str],
        *,
        system: str | None = None,
        question_first: bool = False,
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
            text = chat_prompt(self._llm, prompt, system, self.folder.use_template, question_first)
            prompt_tokens, _, logits = self._prefill(rgb, text, clock, on_phase, tree.prefix)
            clock.prefill_done()
            _phase(on_phase, RunPhase.DECODE)
            return self._pick_answer(tree, answers, logits, clock, prompt_tokens, on_token, cancel)

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
        encoded and prefilled once, then `SeenImage.choose(i)` rolls the KV cache back to the image
        and asks question i after it, so each answer is the one asked alone would get."""
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
            prompt_tokens, ids, _ = self._prefill(rgb, head, clock, on_phase)
            image_end = self._history
            question_start = self._question_start(ids, rgb, image_end)
            # MNN 3.6.1: a multi-token forward straight after an image prefill fails its shape
            # check (a broadcast error); one single-token forward first avoids it (the first
            # question's rollback erases it).
            self._forward([ids[-1]])
            clock.prefill_done()
        return SeenImage(self, clock, prompt_tokens, image_end, question_start, asked, self._keyframe)

    def _question_start(self, ids: list[int], rgb: np.ndarray, image_end: int) -> int | None:
        """The position a whole prompt gives the first token after the image prefilled as `ids`, which
        ends the cache at `image_end` (None: MNN numbers it by its place in the cache, as it numbers any
        later forward)."""
        if not self.folder.positions_follow_cache_length:
            return None
        grid = self.folder.vision_grid  # the app sends sides on it; MNN rounds any other to it
        rows, cols = round(rgb.shape[0] / grid), round(rgb.shape[1] / grid)
        shift = image_position_shift(ids, *self.folder.vision_token_ids, rows, cols)
        return image_end - shift if shift else None

    def _number_from(self, position: int) -> None:
        """MNN numbers the next forward's tokens from `position` (its multimodal-RoPE models in decode
        take their positions from the context's sequence length alone; `folder.positions_follow_cache_length`)."""
        self._llm._c_obj.set_context({"all_seq_len": position})

    def _split_at_image(self, system: str | None) -> tuple[str, str]:
        """The chat text up to the image's end, and the rest with _QUESTION where the question goes."""
        text = chat_prompt(self._llm, _QUESTION, system, self.folder.use_template)
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
                logits = self._forward([path[-1]])
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
            encoded = [self._encode_text(a) for a in answers]
            try:
                tree = self._choice_trees[answers] = build_choice_tree(encoded)
            except ValueError as exc:  # answers the tokenizer cannot tell apart: the tokenizer's fault
                raise EngineError(f"the model's tokenizer cannot spell the answers apart ({exc})") from None
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
    """A keyframe encoded once (`MnnVlm.see`); the KV cache is rolled back to the image before each
    question. Usable until the engine prefills another image. The first answer's timings carry the
    vision encode and the image's prefill; later ones only their own question's prefill and picks."""

    def __init__(
        self,
        engine: MnnVlm,
        clock: _Clock,
        image_tokens: int,
        image_end: int,
        question_start: int | None,
        questions: list[tuple[tuple[int, ...], tuple[str, ...], ChoiceTree]],
        keyframe: int,
    ) -> None:
        self._engine = engine
        self._first_clock: _Clock | None = clock
        self._image_tokens = image_tokens
        self._image_end = image_end
        self._question_start = question_start
        self._questions = questions
        self._keyframe = keyframe

    def question_tokens(self, index: int) -> int:
        """How many tokens question `index` prefills after the image: its text, the turn's end and
        the answers' shared start (what an extra signal costs)."""
        ids, _, tree = self._questions[index]
        return len(ids) + len(tree.prefix)

    def choose(self, index: int, on_token: TokenCallback | None = None, cancel: CancelFlag | None = None) -> Choice:
        """Question `index` of those given to `see`, asked right after the image."""
        engine = self._engine
        if engine._keyframe != self._keyframe:
            raise EngineError("this keyframe's image has left the model's cache: another one was prefilled since")
        ids, answers, tree = self._questions[index]
        clock = self._first_clock or _Clock(0.0)  # a later question: no vision, its own prefill
        self._first_clock = None
        with native_stdout_to_stderr():
            engine._rewind(self._image_end)
            if self._question_start is None:
                logits = engine._forward(list(ids) + list(tree.prefix))
            else:
                # The question where the whole prompt puts it; the answer's forced start where asking
                # alone puts it (MNN numbers tokens past the prompt by their place in the cache).
                engine._number_from(self._question_start)
                logits = engine._forward(list(ids))
                engine._number_from(self._image_end + len(ids))
                if tree.prefix:
                    logits = engine._forward(list(tree.prefix))
            clock.prefill_done()
            return engine._pick_answer(tree, answers, logits, clock, self._image_tokens + len(ids), on_token, cancel)
