"""`sessions list | export | report | review | delete`: recorded practice sessions."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from app.commands.common import EXIT_FAILED, EXIT_OK, emit
from app.core.names import printable
from app.core.person_names import MAX_NAME, NameRefused
from app.core.profile.task import ProfileError
from app.core.session import event_to_dict
from app.session.naming import name_session
from app.session.report import practice_report
from app.session.review import ReviewError, record_review
from app.session.store import (
    LoadedSession,
    NotASession,
    delete_session,
    export_csv,
    export_jsonl,
    export_rhythm_csv,
    load_session,
    session_facts,
    session_files,
    summary_text,
)
from app.storage.locations import sessions_dir
from app.storage.profile_file import load_profile

if TYPE_CHECKING:
    from app.commands.common import Subparsers


def add_parser(sub: Subparsers) -> None:
    sessions = sub.add_parser("sessions", help="list, export or review recorded sessions")
    sessions_sub = sessions.add_subparsers(dest="sessions_command", required=True)
    listing = sessions_sub.add_parser("list", help="recorded sessions, newest first (a table; --json for JSON lines)")
    listing.add_argument("--json", action="store_true", help="one JSON object per session instead of a table")
    delete = sessions_sub.add_parser("delete", help="delete a session: its log and its keyframe thumbnails")
    delete.add_argument("session", help="a session id from `sessions list`, or a session .jsonl file")
    export = sessions_sub.add_parser("export", help="export a session")
    export.add_argument("session", help="a session id from `sessions list`, or a session .jsonl file")
    export.add_argument(
        "--format",
        choices=("jsonl", "csv", "rhythm-csv", "summary"),
        default="summary",
        help="csv: one row per answer; rhythm-csv: one row per rhythm sample (about one a second)",
    )
    report = sessions_sub.add_parser(
        "report", help="a session's practice report: one self-contained, printable HTML page"
    )
    report.add_argument("session", help="a session id from `sessions list`, or a session .jsonl file")
    report.add_argument("--out", type=Path, default=None, help="write it to this file (default: standard output)")
    report.add_argument(
        "--language",
        choices=("en", "zh"),
        default="en",
        help="the report's language: en (English) or zh (Simplified Chinese)",
    )
    naming = sessions_sub.add_parser(
        "name", help="name a session's trainee and examiner (the latest names count; earlier ones stay in the log)"
    )
    naming.add_argument("session", help="a session id or .jsonl file")
    naming.add_argument("--trainee", default="", help='who practised ("" for no name)')
    naming.add_argument("--examiner", default="", help="who examined; each verdict without --examiner carries it")
    review = sessions_sub.add_parser("review", help="an examiner confirms or corrects an analysed keyframe")
    review.add_argument("session", help="a session id or .jsonl file")
    review.add_argument("event_id", help="the event_id of a practice event")
    verdict = review.add_mutually_exclusive_group(required=True)
    verdict.add_argument("--confirm", action="store_true", help="the model's answer is right")
    verdict.add_argument(
        "--correct",
        metavar="VALUE",
        help="the right answer (one of the profile's values, in any case: no or NO)",
    )
    review.add_argument("--note", default="")
    review.add_argument("--examiner", default="")
    review.add_argument(
        "--revise", action="store_true", help="change an earlier review of this event (both stay in the history)"
    )
    review.add_argument(
        "--profile", type=Path, default=None, help="the session's profile, for logs that do not record its answers"
    )


def _session_files(folder: Path) -> list[tuple[float, Path]]:
    """The session files, newest first; what is not one is named on stderr."""
    skipped: list[NotASession] = []
    try:
        found = session_files(folder, skipped)
    except OSError as exc:
        print(f"error: cannot read {folder}: {exc.strerror or exc}", file=sys.stderr)
        return []
    for item in skipped:
        print(f"note: skipped {item.path}: {item.why}", file=sys.stderr)
    return found


def _list(folder: Path, out: TextIO, as_json: bool) -> int:
    rows: list[dict[str, object]] = []
    for _, path in _session_files(folder):
        try:
            session = load_session(path)
        except OSError as exc:
            print(f"note: skipped {path}: {exc.strerror or exc}", file=sys.stderr)
            continue
        if session.damaged_lines and not session.events:
            print(f"note: {path}: no readable event ({len(session.damaged_lines)} damaged lines)", file=sys.stderr)
        state, facts = session.state, session_facts(session)
        rows.append(
            {
                "id": printable(path.stem),
                "path": printable(str(path)),
                "started": facts.started,
                "duration_s": None if facts.duration_s is None else round(facts.duration_s, 1),
                "source": printable(facts.source),
                "trainee": state.trainee,
                "examiner": state.examiner,
                "keyframes": len(state.timeline),
                "pending": len(state.pending),
                "failed": state.failed,
                "damaged_lines": len(session.damaged_lines),
            }
        )
    rows.sort(key=lambda r: r["started"] if isinstance(r["started"], float) else 0.0, reverse=True)  # newest first
    if as_json:
        for row in rows:
            emit(out, row, jsonl=True)
    else:
        out.write(_table(rows))
    return EXIT_OK


def _list_empty(out: TextIO, as_json: bool) -> int:
    if not as_json:
        out.write(_table([]))
    return EXIT_OK


def _table(rows: list[dict[str, object]]) -> str:
    """The sessions as a person reads them: when, how long, from what, answered and reviewed."""
    header = ("SESSION", "STARTED", "DURATION", "SOURCE", "TRAINEE", "ANSWERS", "PENDING")
    lines = [header]
    for r in rows:
        started = r["started"]
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started)) if isinstance(started, float) else "—"
        duration = r["duration_s"]
        lines.append(
            (
                str(r["id"]),
                when,
                f"{duration:.0f} s" if isinstance(duration, float) else "—",
                str(r["source"]) or "—",
                str(r["trainee"]) or "—",
                str(r["keyframes"]),
                str(r["pending"]),
            )
        )
    if len(lines) == 1:
        return "no sessions yet\n"
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "".join(
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() + "\n" for line in lines
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    folder = sessions_dir()
    if args.sessions_command == "list":
        return _list(folder, out, args.json) if folder.is_dir() else _list_empty(out, args.json)
    path = Path(args.session)
    if not path.is_file():
        path = folder / f"{args.session}.jsonl"
    if not path.is_file():
        print(f"error: no session {args.session!r} (looked in {folder})", file=sys.stderr)
        return EXIT_FAILED
    if args.sessions_command == "review":
        return _review(args, path, out)
    if args.sessions_command == "name":
        return _name(args, path, out)
    try:
        session = load_session(path)
    except OSError as exc:
        print(f"error: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAILED
    if args.sessions_command == "delete":
        if path.suffix != ".jsonl" or path.resolve().parent != folder.resolve():
            # Only the app's own sessions: a path elsewhere could be any file of the user's.
            print(f"error: {args.session!r} is not a session in {folder}", file=sys.stderr)
            return EXIT_FAILED
        try:
            delete_session(path)
        except OSError as exc:
            print(f"error: cannot delete {path}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_FAILED
        print(f"deleted {printable(path.stem)} (its log and its keyframe thumbnails)", file=sys.stderr)
        return EXIT_OK
    if args.sessions_command == "report":
        return _report(session, path, args.out, out, args.language)
    exporters = {"jsonl": export_jsonl, "csv": export_csv, "rhythm-csv": export_rhythm_csv, "summary": summary_text}
    out.write(exporters[args.format](session))
    return EXIT_OK


def _report(session: LoadedSession, path: Path, target: Path | None, out: TextIO, language: str) -> int:
    html = practice_report(session, printable(path.stem), language)
    if target is None:
        out.write(html)
        return EXIT_OK
    try:
        target.write_text(html, encoding="utf-8")
    except OSError as exc:
        print(f"error: cannot write {target}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAILED
    print(f"report: {target}", file=sys.stderr)
    return EXIT_OK


def _name(args: argparse.Namespace, path: Path, out: TextIO) -> int:
    try:
        event = name_session(path, args.trainee, args.examiner)
    except NameRefused as refused:
        why = {"name_too_long": f"over {MAX_NAME} characters", "name_control": "a line break or hidden character"}
        print(f"error: not a name ({why.get(refused.reason, refused.reason)}); nothing recorded", file=sys.stderr)
        return EXIT_FAILED
    except OSError as exc:
        print(f"error: cannot record the names in {path}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAILED
    emit(out, event_to_dict(event), jsonl=True)
    return EXIT_OK


def _review(args: argparse.Namespace, path: Path, out: TextIO) -> int:
    try:
        profile = load_profile(args.profile) if args.profile is not None else None
        event = record_review(
            path,
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
    except OSError as exc:  # a read-only or full disk
        print(f"error: cannot record the review in {path}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAILED
    emit(out, event_to_dict(event), jsonl=True)
    return EXIT_OK
