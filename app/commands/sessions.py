"""`sessions list | export | review`: recorded practice sessions."""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path
from typing import Any, TextIO

from app.commands.common import EXIT_BAD_INPUT, EXIT_OK, emit
from app.core.session import ExaminerConfirmed, ExaminerCorrected, event_to_dict
from app.models.storage import data_dir
from app.session.store import LoadedSession, SessionLog, export_csv, export_jsonl, load_session, summary_text


def add_parser(sub: Any) -> None:
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
    verdict.add_argument("--confirm", action="store_true")
    verdict.add_argument("--correct", metavar="VALUE", help="the right observation")
    review.add_argument("--note", default="")
    review.add_argument("--examiner", default="")


def run(args: argparse.Namespace, out: TextIO) -> int:
    folder = data_dir() / "sessions"
    if args.sessions_command == "list":
        paths = sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True) if folder.is_dir() else []
        for path in paths:
            state = load_session(path).state
            emit(
                out,
                {
                    "id": path.stem,
                    "path": str(path),
                    "keyframes": len(state.timeline),
                    "pending": len(state.pending),
                    "failed": state.failed,
                },
                jsonl=True,
            )
        return EXIT_OK
    path = Path(args.session)
    if not path.is_file():
        path = folder / f"{args.session}.jsonl"
    if not path.is_file():
        print(f"error: no session {args.session!r} (looked in {folder})", file=sys.stderr)
        return EXIT_BAD_INPUT
    session = load_session(path)
    if args.sessions_command == "review":
        return _review(args, path, session, out)
    exporters = {"jsonl": export_jsonl, "csv": export_csv, "summary": summary_text}
    out.write(exporters[args.format](session))
    return EXIT_OK


def _review(args: argparse.Namespace, path: Path, session: LoadedSession, out: TextIO) -> int:
    entry = next((e for e in session.state.timeline if e.event.event_id == args.event_id), None)
    if entry is None:
        print(f"error: no practice event {args.event_id!r} in {path}", file=sys.stderr)
        return EXIT_BAD_INPUT
    event_id, now = uuid.uuid4().hex[:12], time.time()
    if args.confirm:
        event = ExaminerConfirmed(event_id, args.event_id, now, args.examiner)
    else:
        event = ExaminerCorrected(event_id, args.event_id, now, args.correct, args.note, args.examiner)
    with SessionLog(path) as log:
        log.append(event)
    emit(out, event_to_dict(event), jsonl=True)
    return EXIT_OK
