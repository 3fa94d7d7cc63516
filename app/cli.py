"""`python -m app`: the UI by default, headless commands for testers and benchmarks.

Headless commands print JSON only on stdout (MNN's own chatter is moved to
stderr at the descriptor level); messages for people go to stderr. Every command
logs to a rotating file (`app.logs`); `--verbose` also logs to stderr.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from app import logs
from app.commands import analyze, bench, doctor, models, sessions, watch
from app.commands import eval as evaluation
from app.commands.common import EXIT_FAILED, EXIT_SETUP
from app.core.profile.task import ProfileError
from app.storage.locations import log_dir
from app.storage.profile_file import load_checklist

log = logging.getLogger("keyframe.cli")

# Commands that may load MNN claim stdout so only their JSON reaches it.
_HEADLESS = {
    "analyze": analyze.run,
    "watch": watch.run,
    "sessions": sessions.run,
    "eval": evaluation.run,
    "bench": bench.run,
}
# Commands that read images or videos run with no network at all where the OS allows it.
_ISOLATED = ("analyze", "watch", "eval", "bench")


def _port(text: str) -> int:
    """argparse type of `ui --port`: a one-line error, not a traceback from the server."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is outside 1-65535")
    return value


def _log_options(parser: argparse.ArgumentParser, default: object) -> None:
    parser.add_argument(
        "-v", "--verbose", action="store_true", default=default, help="also log to stderr, with debug lines"
    )
    parser.add_argument(
        "--log-answers",
        action="store_true",
        default=default,
        help="let the log file hold the model's answers (never images; off by default)",
    )


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m app",
        description="Keyframe: on-device VLM practice coach.",
        epilog=f"Log files: {log_dir()}. Data (models, sessions) and logs go under $FLET_APP_STORAGE_DATA "
        "when it is set (built apps set it), else the platform's folders.",
    )
    _log_options(parser, False)
    sub = parser.add_subparsers(dest="command")
    ui = sub.add_parser("ui", help="start the app (default)")
    ui.add_argument("--port", type=_port, default=None, help="port of the web UI, 1-65535 (default 8550)")
    ui.add_argument("--model", default=None, help="model id or MNN model folder (default: the bundled demo model)")
    ui.add_argument("--profile", default=None, type=Path, help="task profile JSON (default: the model's own)")
    for command in (analyze, watch, sessions, doctor, evaluation, bench):
        command.add_parser(sub)
    models.add_models_parser(sub)
    _log_options_below(sub)  # also after the command: `analyze --verbose`, `models path -v`
    return parser


def _log_options_below(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for command_parser in sub.choices.values():
        _log_options(command_parser, argparse.SUPPRESS)
        for action in command_parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                _log_options_below(action)


def main(argv: Sequence[str] | None = None) -> int:
    from app.privacy.guard import ensure_installed

    ensure_installed()  # first thing: no code path after this can reach the network unnoticed
    args = _build_parser().parse_args(argv)
    isolation = None
    if args.command in _ISOLATED:
        from app.privacy.isolation import isolate_this_process

        # Before anything starts a thread (the kernel requires one) or opens a file: FFmpeg decoding a
        # video in this process can then reach no network either, whatever name it is given.
        isolation = isolate_this_process()
    # For the UI, the worker's console output (MNN's banners) goes to the log, not the terminal.
    logs.setup(
        verbose=args.verbose, answers=args.log_answers or None, native_output_to_log=args.command in (None, "ui")
    )
    if args.command in (None, "ui"):
        logs.quiet_libraries()
    log.info("start: %s", args.command or "ui")
    if isolation is not None:
        log.info("network: %s (%s)", isolation.level, isolation.how)
    try:
        code = _run(args)
    except (MemoryError, ImportError) as exc:
        if not _out_of_memory(exc):
            raise
        log.error("not enough memory: %s", exc)
        print(f"error: not enough memory to run Keyframe ({exc}); is a memory limit (ulimit -v) set?", file=sys.stderr)
        code = EXIT_FAILED
    finally:
        logs.reset()  # the process ends here; a caller in the same process (tests) gets its logging back
    return code


def _out_of_memory(exc: BaseException) -> bool:
    """A MemoryError, or a native library (cv2, numpy, MNN) the loader had no memory to map."""
    words = str(exc).lower()
    return isinstance(exc, MemoryError) or "failed to map segment" in words or "cannot allocate memory" in words


def _profile_problem(args: argparse.Namespace) -> str | None:
    """Why the --profile given to the model cannot be used, said before the model loads (and not blamed on it)."""
    path = getattr(args, "profile", None)
    if path is None or args.command not in (*_ISOLATED, "ui"):  # `sessions review --profile` checks its own
        return None
    try:
        load_checklist(path)  # every command asks each signal of a checklist
    except ProfileError as exc:
        return f"the profile could not be used: {exc}"
    return None


def _run(args: argparse.Namespace) -> int:
    problem = _profile_problem(args)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return EXIT_SETUP
    from app.commands.interrupts import run_interruptible

    if args.command in ("models", "doctor"):
        run = models.run_models if args.command == "models" else doctor.run
        return run_interruptible(lambda: run(args, sys.stdout))  # no MNN on these paths: stdout needs no claiming
    if args.command in _HEADLESS:
        from app.engine.stdio import claim_stdout

        # Claimed inside: a stdout that is closed or cannot be written ends in a sentence there.
        return run_interruptible(lambda: _HEADLESS[args.command](args, claim_stdout()))
    from app.commands.ui import launch

    return launch(
        port=getattr(args, "port", None),
        model=getattr(args, "model", None),
        profile=getattr(args, "profile", None),
    )
