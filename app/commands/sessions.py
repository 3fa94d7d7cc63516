"""`sessions list | export | review`: recorded practice sessions."""

from __future__ import annotations

import argparse
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from app.commands.common import EXIT_FAILED, EXIT_OK, emit
from app.core.profiles import ProfileError
from app.core.session import event_to_dict
from app.models.storage import data_dir
from app.profile_file import load_profile
from app.session.review import ReviewError, make_review
from app.session.store import LoadedSession, SessionLog, export_csv, export_jsonl, load_session, summary_text

if TYPE_CHECKING:
    from app.commands.common import Subparsers


def add_parser(sub: Subparsers) -> None:
    sessions = sub.add_parser("sessions", help="list, export or review recorded sessions")
    sessions_sub = sessions.add_subparsers(dest="sessions_command", required=True)
    sessions_sub.add_parser("list", help="recorded sessions, newest first")
    export = sessions_sub.add_parser("export", help="export a session")
    export.add_argument("session", help="a session id from `sessions list`, or a session .jsonl file")
    export.add_argument("--format", choices=("jsonl", "csv", "summary"), default="summary")
    review = sessions_sub.add_parser("review", help="an examiner confirms or corrects an analysed keyframe")
    review.add_argument("session", help="a session id or .jsonl file")
    review.add_argument("event_id", help="the event_id of a practice event")
    verdict = review.add_mutually_exclusive_group(required=True)
    verdict.add_argument("--confirm", action="store_true", help="the model's answer is right")
    verdict.add_argument("--correct", metavar="VALUE", help="the right answer (one of the profile's values)")
    review.add_argument("--note", default="")
    review.add_argument("--examiner", default="")
    review.add_argument(
        "--revise", action="store_true", help="change an earlier review of this event (both stay in the history)"
    )
    review.add_argument(
        "--profile", type=Path, default=None, help="the session's profile, for logs that do not record its answers"
    )


def _printable(text: str) -> str:
    # A file name that is not UTF-8 arrives with surrogate escapes, which a UTF-8 stdout cannot write.
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _session_files(folder: Path) -> list[tuple[float, Path]]:
    """Regular `*.jsonl` files with their mtime, newest first; anything else is named on stderr."""
    found: list[tuple[float, Path]] = []
    try:
        candidates = list(folder.glob("*.jsonl"))
    except OSError as exc:
        print(f"error: cannot read {folder}: {exc.strerror or exc}", file=sys.stderr)
        return []
    for path in candidates:
        try:
            st = path.stat()  # follows a link: a link to a session file is a session file
        except OSError as exc:
            broken = " (a broken link)" if path.is_symlink() else ""
            print(f"note: skipped {path}: {exc.strerror or exc}{broken}", file=sys.stderr)
            continue
        if not stat.S_ISREG(st.st_mode):
            print(f"note: skipped {path}: not a regular file", file=sys.stderr)
            continue
        found.append((st.st_mtime, path))
    return sorted(found, key=lambda item: item[0], reverse=True)


def _list(folder: Path, out: TextIO) -> int:
    for _, path in _session_files(folder):
        try:
            session = load_session(path)
        except OSError as exc:
            print(f"note: skipped {path}: {exc.strerror or exc}", file=sys.stderr)
            continue
        if session.damaged_lines and not session.events:
            print(f"note: {path}: no readable event ({len(session.damaged_lines)} damaged lines)", file=sys.stderr)
        state = session.state
        emit(
            out,
            {
                "id": _printable(path.stem),
                "path": _printable(str(path)),
                "keyframes": len(state.timeline),
                "pending": len(state.pending),
                "failed": state.failed,
                "damaged_lines": len(session.damaged_lines),
            },
            jsonl=True,
        )
    return EXIT_OK


def run(args: argparse.Namespace, out: TextIO) -> int:
    folder = data_dir() / "sessions"
    if args.sessions_command == "list":
        return _list(folder, out) if folder.is_dir() else EXIT_OK
    path = Path(args.session)
    if not path.is_file():
        path = folder / f"{args.session}.jsonl"
    if not path.is_file():
        print(f"error: no session {args.session!r} (looked in {folder})", file=sys.stderr)
        return EXIT_FAILED
    try:
        session = load_session(path)
    except OSError as exc:
        print(f"error: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAILED
    if args.sessions_command == "review":
        return _review(args, path, session, out)
    exporters = {"jsonl": export_jsonl, "csv": export_csv, "summary": summary_text}
    out.write(exporters[args.format](session))
    return EXIT_OK


def _review(args: argparse.Namespace, path: Path, session: LoadedSession, out: TextIO) -> int:
    try:
        profile = load_profile(args.profile) if args.profile is not None else None
        event = make_review(
            session.state,
            args.event_id,
            correct=None if args.confirm else args.correct,
            note=args.note,
            examiner=args.examiner,
            revise=args.revise,
            profile=profile,
        )
    except (ReviewError, ProfileError) as exc:
        print(f"error: {exc} ({path})", file=sys.stderr)
        return EXIT_FAILED
    with SessionLog(path) as log:
        log.append(event)
    emit(out, event_to_dict(event), jsonl=True)
    return EXIT_OK
