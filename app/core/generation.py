"""Records of one model run: how it ended and what it cost."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import StrEnum


class RunPhase(StrEnum):
    """A model run's phases, reported as each begins (a hang is a phase that never ends)."""

    VISION = "vision"  # the image encoder and the tokenizer
    PREFILL = "prefill"  # the first forward over the prompt
    DECODE = "decode"  # the answer's tokens


class ParseStatus(StrEnum):
    """What came of asking one signal: an answer in the schema, one the parser refused (recorded as
    `unknown`), a checklist's signal its gate left unasked (`unknown`, nothing the model said), or no
    answer at all (an error)."""

    VALID = "valid"
    REJECTED = "rejected"
    NOT_ASKED = "not_asked"
    ERROR = "error"


class FinishReason(StrEnum):
    STOP = "stop"  # the model emitted one of its end tokens
    LENGTH = "length"  # the token limit was reached
    CANCELLED = "cancelled"  # the caller asked to stop
    NOT_ASKED = "not_asked"  # a checklist's gate said no: the model was not asked this signal


@dataclass(frozen=True)
class Timings:
    """Wall-clock milliseconds measured by the app around each MNN call.

    `vision_ms` covers tokenizer_encode (image preprocessing + vision encoder +
    tokenising); `prefill_ms` the first forward over the prompt; `first_token_ms`
    runs from the start of the model call to the first decoded token;
    `decode_ms` covers every later token. `load_ms` is the model's one-off load.
    """

    load_ms: float
    preprocess_ms: float
    vision_ms: float
    prefill_ms: float
    first_token_ms: float
    decode_ms: float
    total_ms: float
    prompt_tokens: int
    generated_tokens: int

    def to_dict(self) -> dict[str, float | int]:
        return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class Generation:
    text: str
    finish: FinishReason
    token_ids: tuple[int, ...]
    timings: Timings
