"""An examiner's review of one analysed keyframe: the rules, shared by CLI and UI.

- A correction must be one of the answers the question's profile allows. Those
  are recorded in the PracticeEvent; logs written before that fall back to the
  bundled profile the event names, then to the bundled profiles with its signal (a checklist's
  signals each count as one).
- A keyframe is reviewed once. A second verdict is refused unless the examiner
  asks to revise; a revision is a new event that names the one it replaces, and
  the reducer keeps both, so nothing an examiner said is lost.
- That check and the append are one step under the session's lock (`record_review`), which the CLI and
  the Sessions screen both take: of two examiners confirming one keyframe at once, in any processes,
  one records the first verdict and the other is told it was already reviewed.
"""

from __future__ import annotations

import functools
import re
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from app.core.notice import Notice
from app.core.profile.task import ProfileError, TaskProfile
from app.core.session import ExaminerConfirmed, ExaminerCorrected, PracticeEvent, SessionState
from app.session.store import SessionLog, load_session, session_locked
from app.storage.paths import PROFILES
from app.storage.profile_file import load_checklist

_PROFILE_ID = re.compile(r"^[a-z][a-z0-9_]{0,63}$")  # a recorded id never becomes a path outside PROFILES


class ReviewError(ValueError):
    """A review that cannot be recorded, with a message an examiner can act on.

    The message is the command line's (it may name its options); `code` and `values` let a screen
    say the same in its own language (app.ui.words.sessions: `review_refused_<code>`).
    """

    def __init__(self, message: str, code: str = "", **values: str) -> None:
        super().__init__(message)
        self.code = code
        self.values = values

    def notice(self) -> Notice:
        """What a screen says: its own words for a known code, else the message as the detail."""
        if self.code:
            return Notice(f"review_refused_{self.code}", tuple(self.values.items()), error=True)
        return Notice("notice_review_refused", (("detail", str(self)),), error=True)


@dataclass(frozen=True)
class AllowedAnswers:
    values: tuple[str, ...]
    source: str  # where they came from, for messages


def allowed_answers(
    event: PracticeEvent, profile: TaskProfile | None = None, profiles_dir: Path = PROFILES
) -> AllowedAnswers:
    """The answers a correction of `event` may give, or ReviewError saying why they are unknown."""
    if profile is not None:
        if profile.signal != event.signal:
            raise ReviewError(
                f"profile {profile.id!r} asks for {profile.signal!r}, but the event answers {event.signal!r}"
            )
        return AllowedAnswers(profile.values, f"profile {profile.id}")
    if event.allowed_values:
        return AllowedAnswers(event.allowed_values, f"profile {event.profile_id or event.signal} (recorded)")
    if _PROFILE_ID.match(event.profile_id):
        named = _asking(event.signal, profiles_dir / f"{event.profile_id}.json")
        if named:
            return AllowedAnswers(named[0].values, f"profile {named[0].id}")
    candidates = [p for path in sorted(profiles_dir.glob("*.json")) for p in _asking(event.signal, path)]
    value_sets = {frozenset(p.values) for p in candidates}
    if len(value_sets) == 1:
        return AllowedAnswers(candidates[0].values, "profile " + ", ".join(p.id for p in candidates))
    why = "several bundled profiles disagree" if candidates else "no bundled profile asks for it"
    raise ReviewError(
        f"cannot tell which answers signal {event.signal!r} allows ({why}); pass the session's profile with --profile",
        "unknown_answers",
        signal=event.signal,
    )


def _asking(signal: str, path: Path) -> list[TaskProfile]:
    """The questions for `signal` in the profile or checklist file `path` (none if it cannot be used)."""
    try:
        return [p for p in load_checklist(path).signals if p.signal == signal]
    except ProfileError:
        return []


def make_review(
    state: SessionState,
    target_id: str,
    *,
    correct: str | None = None,
    note: str = "",
    examiner: str = "",
    revise: bool = False,
    profile: TaskProfile | None = None,
    profiles_dir: Path = PROFILES,
    wall_time: float | None = None,
) -> ExaminerConfirmed | ExaminerCorrected:
    """The event that records a confirmation (`correct` None) or a correction of `target_id`."""
    entry = next((e for e in state.timeline if e.event.event_id == target_id), None)
    if entry is None:
        raise ReviewError(f"no practice event {target_id!r} in this session", "no_event")
    previous = entry.latest_review
    if previous is not None and not revise:
        by = f" by {previous.examiner}" if previous.examiner else ""
        raise ReviewError(
            f"event {target_id} was already reviewed ({previous.describe()}{by}); "
            "add --revise to record a change (the earlier review stays in the history)",
            "already_corrected" if isinstance(previous, ExaminerCorrected) else "already_confirmed",
            answer=previous.observation if isinstance(previous, ExaminerCorrected) else entry.event.observation,
            examiner=previous.examiner,
        )
    if correct is not None:
        allowed = allowed_answers(entry.event, profile, profiles_dir)
        # "NO" as the screens show it is the profile's "no", when no other answer differs only in case.
        same = [v for v in allowed.values if v.casefold() == correct.casefold()]
        if correct not in allowed.values and len(same) == 1:
            correct = same[0]
        if correct not in allowed.values:
            raise ReviewError(
                f"{correct!r} is not an answer to {entry.event.signal!r}; allowed ({allowed.source}): "
                + ", ".join(allowed.values),
                "not_an_answer",
                answer=correct,
                signal=entry.event.signal,
            )
        if correct == entry.event.observation:
            raise ReviewError(
                f"{correct!r} is the model's own answer; use --confirm to agree with it", "own_answer", answer=correct
            )
    event_id, now = uuid.uuid4().hex[:12], time.time() if wall_time is None else wall_time
    revises = previous.event_id if previous is not None else ""
    review = ExaminerConfirmed if correct is None else functools.partial(ExaminerCorrected, observation=correct)
    examiner = examiner or state.examiner  # the examiner the session was given, unless named here
    return review(event_id=event_id, target_id=target_id, wall_time=now, note=note, examiner=examiner, revises=revises)


@dataclass(frozen=True)
class Verdict:
    """An examiner's verdict on one answer as a screen gives it: `correct` None agrees with the model;
    `note` is this answer's own (a note written for one question never lands on another's verdict)."""

    target_id: str
    correct: str | None = None
    note: str = ""


def make_reviews(
    state: SessionState,
    verdicts: Sequence[Verdict],
    *,
    examiner: str = "",
    revise: bool = False,
    profiles_dir: Path = PROFILES,
    wall_time: float | None = None,
) -> list[ExaminerConfirmed | ExaminerCorrected]:
    """Several verdicts at once (a checklist keyframe's, or every waiting answer): every one is
    checked before any is returned, so one that is refused records none."""
    now = time.time() if wall_time is None else wall_time
    return [
        make_review(
            state,
            verdict.target_id,
            correct=verdict.correct,
            note=verdict.note.strip(),
            examiner=examiner,
            revise=revise,
            profiles_dir=profiles_dir,
            wall_time=now,
        )
        for verdict in verdicts
    ]


def record_review(
    path: Path,
    target_id: str,
    *,
    correct: str | None = None,
    note: str = "",
    examiner: str = "",
    revise: bool = False,
    profile: TaskProfile | None = None,
    profiles_dir: Path = PROFILES,
) -> ExaminerConfirmed | ExaminerCorrected:
    """Check a verdict against the session log as it is now and append it (fsynced), under its lock.
    ReviewError; OSError if the log cannot be read or written (a read-only or full disk)."""
    with session_locked(path):
        event = make_review(
            load_session(path).state,
            target_id,
            correct=correct,
            note=note,
            examiner=examiner,
            revise=revise,
            profile=profile,
            profiles_dir=profiles_dir,
        )
        with SessionLog(path) as log:
            log.append(event)
    return event


def record_reviews(
    path: Path,
    verdicts: Sequence[Verdict],
    *,
    examiner: str = "",
    revise: bool = False,
    profiles_dir: Path = PROFILES,
) -> list[ExaminerConfirmed | ExaminerCorrected]:
    """`make_reviews` against the log as it is now, appended under its lock: all of them or none
    (ReviewError). OSError as `record_review`."""
    with session_locked(path):
        state = load_session(path).state
        events = make_reviews(state, verdicts, examiner=examiner, revise=revise, profiles_dir=profiles_dir)
        with SessionLog(path) as log:
            for event in events:
                log.append(event)
    return events
