"""The benchmarks' bare MNN.llm on the demo model, when MNN's response() raises.

MNN 3.6.1 raises from response() when the generated text is not valid UTF-8 (a random-weight model
does that), and a later read of `llm.context` then crashes the process. Which text a model generates
cannot be chosen, so the raise is injected in front of the real model; the recovery runs for real.
"""

from __future__ import annotations

from typing import Any

from app.engine.model_folder import open_model_folder
from app.engine.stdio import native_stdout_to_stderr
from app.frames.intake import decode_image_bytes
from app.models.catalog import resolve_model
from bench._bare_mnn import BareMnn
from tests.integration.conftest import held_out_scenes


class _RaisesOnce:
    """The real model, except that its next response() raises as MNN's does and its context is poisoned."""

    def __init__(self, llm: Any) -> None:
        self._llm = llm

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)

    def response(self, *_args: Any) -> str:
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    @property
    def context(self) -> Any:
        raise AssertionError("read after response() raised: MNN 3.6.1 crashes the process here")


def test_a_raising_response_is_an_answer_with_its_error_and_the_model_goes_on() -> None:
    folder = open_model_folder(resolve_model(None).folder)
    _, jpeg_bytes, _ = held_out_scenes(1)[0]
    image = decode_image_bytes(jpeg_bytes)
    with native_stdout_to_stderr():
        bare = BareMnn(folder.config_path)
        text = bare.text("Is the hand position correct?", None, folder.use_template)
        part = bare.image(image.rgb)
        before = bare.answer(part, text, 32)
        bare._llm = _RaisesOnce(bare._llm)
        failed = bare.answer(part, text, 32)
        after = bare.answer(part, text, 32)
    assert before.error == "" and before.prompt_tokens > 0
    assert failed.error.startswith("UnicodeDecodeError") and failed.text == "" and failed.prompt_tokens == -1
    assert failed.pixels_mp != failed.pixels_mp  # nan: MNN could not be asked what it saw
    # Loaded afresh: the same answer as before the failure.
    assert (after.text, after.prompt_tokens, after.error) == (before.text, before.prompt_tokens, "")
