"""`python -m app`: the UI by default, headless commands for testers and benchmarks.

Headless commands print JSON only on stdout (MNN's own chatter is moved to
stderr at the descriptor level); messages for people go to stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from app.commands import analyze, models, sessions, watch

# Commands that may load MNN claim stdout so only their JSON reaches it.
_HEADLESS = {"analyze": analyze.run, "watch": watch.run, "sessions": sessions.run}


def _port(text: str) -> int:
    """argparse type of `ui --port`: a one-line error, not a traceback from the server."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is outside 1-65535")
    return value


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m app", description="Keyframe: on-device VLM practice coach.")
    sub = parser.add_subparsers(dest="command")
    ui = sub.add_parser("ui", help="start the app (default)")
    ui.add_argument("--port", type=_port, default=None, help="port of the web UI, 1-65535 (default 8550)")
    ui.add_argument("--model", default=None, help="model id or MNN model folder (default: the bundled demo model)")
    ui.add_argument("--profile", default=None, type=Path, help="task profile JSON (default: the model's own)")
    for command in (analyze, watch, sessions):
        command.add_parser(sub)
    models.add_models_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from app.privacy.guard import ensure_installed

    ensure_installed()  # first thing: no code path after this can reach the network unnoticed
    args = _build_parser().parse_args(argv)
    if args.command == "models":
        return models.run_models(args, sys.stdout)  # no MNN on this path: stdout needs no claiming
    if args.command in _HEADLESS:
        from app.commands.interrupts import run_interruptible
        from app.engine.stdio import claim_stdout

        out = claim_stdout()
        return run_interruptible(lambda: _HEADLESS[args.command](args, out))
    from app.ui.launch import launch

    return launch(
        port=getattr(args, "port", None),
        model=getattr(args, "model", None),
        profile=getattr(args, "profile", None),
    )
