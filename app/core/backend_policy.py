"""When may a non-CPU backend be trusted for a model? Pure logic.

GPU backends have returned empty strings (a Metal run of an early prototype) and garbage
(MNN issues #4375, #3987, #3370) for Qwen3-VL. So before a non-CPU backend is
used, its answer on a reference image is compared with the CPU answer.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BackendDecision:
    requested: str
    used: str
    reason: str  # why `used` was chosen, shown to the user

    @property
    def fell_back(self) -> bool:
        return self.requested != self.used


def judge_backend(
    requested: str, cpu_text: str, other_text: str, *, missing: bool = False, error: str = ""
) -> BackendDecision:
    """`missing`: MNN said it has no such backend here (it then runs CPU under the other name);
    `error`: the backend raised on the reference image."""
    if requested == "cpu":
        return BackendDecision("cpu", "cpu", "CPU requested")
    if missing:
        return BackendDecision(requested, "cpu", f"{requested} is not available on this device; using CPU")
    if error:
        return BackendDecision(requested, "cpu", f"{requested} failed on the reference image ({error}); using CPU")
    if not other_text.strip():
        return BackendDecision(
            requested, "cpu", f"{requested} returned an empty answer on the reference image; using CPU"
        )
    if other_text.strip() != cpu_text.strip():
        return BackendDecision(
            requested,
            "cpu",
            f"{requested} answered {other_text.strip()[:60]!r} where CPU answered {cpu_text.strip()[:60]!r}; using CPU",
        )
    return BackendDecision(requested, requested, f"{requested} matched CPU on the reference image")
