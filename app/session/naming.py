"""Who practised and who examined: the names a session is given at Start or afterwards, appended to its
log as a `SessionNamed` line (the latest counts, earlier ones stay)."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

from app.core.person_names import person_name
from app.core.session import SessionNamed
from app.session.store import SessionLog, session_locked


def named(trainee: str, examiner: str, wall_time: float | None = None) -> SessionNamed:
    """The names as typed, tidied; NameRefused (its `reason` worded by the screens) for what is not a name."""
    return SessionNamed(
        event_id=uuid.uuid4().hex[:12],
        wall_time=time.time() if wall_time is None else wall_time,
        trainee=person_name(trainee),
        examiner=person_name(examiner),
    )


def name_session(path: Path, trainee: str, examiner: str) -> SessionNamed:
    """Name a recorded session: appended (fsynced) under its lock, as a review is. NameRefused; OSError if
    the log cannot be opened or written."""
    event = named(trainee, examiner)
    with session_locked(path), SessionLog(path) as log:
        log.append(event)
    return event
