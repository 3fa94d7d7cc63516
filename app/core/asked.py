"""What a session asked, as its first log line (`SessionAsked`), from the profile the worker asks with.

Pure: the profile (or checklist) in, the record out; the caller hashes the profile file and gives the
model's id and revision. Only what the profile itself says is kept (its words per language), so a view
of the session later falls back exactly as the screen did then where the profile had no words.
"""

from __future__ import annotations

from app.core.profile.checklist import Checklist
from app.core.profile.task import TaskProfile
from app.core.session import AskedSignal, SessionAsked


def asked_signal(profile: TaskProfile, constrained: bool) -> AskedSignal:
    return AskedSignal(
        signal=profile.signal,
        values=profile.values,
        prompt=profile.ask(constrained)[0],
        questions=tuple((language, labels.question) for language, labels in profile.labels if labels.question),
        answer_words=tuple(
            (language, value, words) for language, labels in profile.labels for value, words in labels.values
        ),
        min_score=profile.min_score,
    )


def session_asked(
    profile: TaskProfile,
    checklist: Checklist | None,
    *,
    constrained: bool,
    event_id: str,
    wall_time: float,
    profile_sha256: str,
    model_id: str,
    model_revision: str,
) -> SessionAsked:
    """`checklist`: the questions asked per keyframe when there are several (`profile` is then its first);
    `constrained`: the decoding asked with (a profile may word its question for it apart)."""
    signals = checklist.signals if checklist is not None else (profile,)
    title = checklist.title if checklist is not None else profile.title
    labels = checklist.labels if checklist is not None else profile.labels
    return SessionAsked(
        event_id=event_id,
        wall_time=wall_time,
        profile_id=checklist.id if checklist is not None else profile.id,
        profile_sha256=profile_sha256,
        titles=(("", title), *((language, words.title) for language, words in labels if words.title)),
        signals=tuple(asked_signal(spec, constrained) for spec in signals),
        gate=(checklist.gate or "") if checklist is not None else "",
        model_id=model_id,
        model_revision=model_revision,
    )
