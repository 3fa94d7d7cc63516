"""`watch VIDEO`: keyframes from a video through the live pipeline, events as JSON lines."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from app.commands.common import EXIT_FAILED, EXIT_OK, EXIT_SETUP, add_model_options, emit, worker_spec

if TYPE_CHECKING:
    from app.commands.common import Subparsers
    from app.pipeline.live import PipelineUpdate


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser("watch", help="sample keyframes from a video and print session events as JSON lines")
    parser.add_argument("video", type=Path, help="a local video file (played from its first frame; never a URL)")
    parser.add_argument("--interval", type=float, default=3.0, help="seconds between keyframes, 2-5 (default 3)")
    parser.add_argument(
        "--realtime",
        action="store_true",
        help="play at the video's own speed; keyframes the model cannot keep up with are superseded",
    )
    add_model_options(parser)
    parser.add_argument(
        "--worker",
        choices=("process", "thread"),
        default=None,
        help="where the model runs (default: a child process where the platform allows)",
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    from app.core.sampler import SamplerConfig
    from app.frames.intake import DecodedImage
    from app.frames.video import RealtimeClock, VideoError, VideoFrames
    from app.pipeline.live import LivePipeline
    from app.session.store import SessionLog, new_session_id
    from app.storage.locations import sessions_dir

    try:
        # As the Practice screen runs a session: the first usable frame is answered at once, then one
        # keyframe per interval (the first answer does not wait for the first window to close).
        sampler = SamplerConfig(interval_s=args.interval, first_at_once=True)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_SETUP
    log_path = sessions_dir() / f"{new_session_id()}.jsonl"

    printer = _Printer(out, args)

    try:
        video = VideoFrames(args.video)  # a bad file is refused before the model loads
    except VideoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    spec = replace(worker_spec(args), checklists=True)  # a checklist profile: every signal per keyframe
    with video, SessionLog(log_path) as log:
        pipeline = LivePipeline(spec, printer, sampler=sampler, log=log, host_kind=args.worker)
        try:
            pipeline.start()  # inside: a Ctrl-C while the worker is spawned still stops it
            # The worker's own watchdog bounds the load by the model's size (a fixed 300 s cut a big model off).
            if not pipeline.wait_ready():
                print(f"error: {pipeline.failure or 'the model did not load in time'}", file=sys.stderr)
                return EXIT_SETUP
            clock = RealtimeClock()  # never waits long on a header that lies about its frame rate
            if video.stats.clock == "guessed":
                pipeline.frame_times_guessed()
            for t, rgb in video:
                if args.realtime:
                    time.sleep(clock.delay(t))
                pipeline.offer_frame(t, DecodedImage(rgb, "video", name=args.video.name))
                if not args.realtime and pipeline.busy:
                    pipeline.wait_idle()  # offline: every keyframe is analysed, none superseded
            pipeline.flush()
            pipeline.wait_idle()
        except VideoError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_FAILED
        finally:
            pipeline.stop()
            for line in video.stats.summary():
                print(f"warning: {line}", file=sys.stderr)
            if log.created:
                print(f"session log: {log_path}", file=sys.stderr)
    if pipeline.failure is not None:
        print(f"error: {pipeline.failure}", file=sys.stderr)
        return EXIT_SETUP
    if printer.log_failed:  # the exit status says the session is not all on disk
        print(
            f"error: the session was not saved completely ({log_path}); the events above are its record",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return EXIT_OK if pipeline.state.failed == 0 else EXIT_FAILED


class _Printer:
    """The pipeline's updates as `watch` prints them: events as JSON lines on stdout, the worker's messages,
    a log that cannot be written and a stretched interval on stderr (each said once, again on change)."""

    def __init__(self, out: TextIO, args: argparse.Namespace) -> None:
        self._out, self._args = out, args
        self._stretched = False
        self._log_error = ""
        self.log_failed = False  # the session log could not be written at some point

    def __call__(self, update: PipelineUpdate) -> None:
        from app.core.session import PracticeEvent, event_to_dict

        out, args = self._out, self._args
        answers = [e for e in update.events if isinstance(e, PracticeEvent)]
        if len(answers) > 1:  # a checklist's keyframe: one line with every signal, the gate's effect in each
            line = {"kind": "checklist", "keyframe_id": answers[0].keyframe_id, "t": answers[0].t}
            emit(out, {**line, "signals": [event_to_dict(e) for e in answers]}, jsonl=True)
        else:
            for event in update.events:
                emit(out, event_to_dict(event), jsonl=True)
        if update.worker_message:
            print(f"worker: {update.worker_message}", file=sys.stderr)
        if update.log_error != self._log_error:
            self._log_error = update.log_error
            if update.log_error:
                self.log_failed = True
                print(f"warning: {update.log_error}; events are still printed here", file=sys.stderr)
        # Offline every keyframe is analysed however slow the model is; only at playback
        # speed does a slow model stretch the interval (once said, said again only on change).
        if args.realtime and update.interval_stretched != self._stretched:
            self._stretched = update.interval_stretched
            if update.interval_stretched and update.model_seconds is not None:
                print(
                    f"note: the model needs {update.model_seconds:.1f} s per keyframe; one keyframe every "
                    f"{update.effective_interval_s:.1f} s instead of every {args.interval:g} s",
                    file=sys.stderr,
                )
