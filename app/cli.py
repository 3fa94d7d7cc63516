"""`python -m app`: the UI by default, headless commands for testers and benchmarks.

Headless commands print JSON only on stdout (MNN's own chatter is moved to
stderr at the descriptor level); messages for people go to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from app.session.store import LoadedSession

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".webp", ".gif", ".tif", ".tiff"}

EXIT_OK, EXIT_BAD_INPUT, EXIT_SETUP = 0, 1, 2


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m app", description="Keyframe: on-device VLM practice coach.")
    sub = parser.add_subparsers(dest="command")

    ui = sub.add_parser("ui", help="start the app (default)")
    ui.add_argument("--web", action="store_true", help="serve the web UI on 127.0.0.1 even when a display exists")
    ui.add_argument("--port", type=int, default=None, help="port of the web UI (default 8550)")
    ui.add_argument("--model", default=None, help="model id or MNN model folder (default: the bundled demo model)")
    ui.add_argument("--profile", default=None, type=Path, help="task profile JSON (default: the model's own)")

    analyze = sub.add_parser("analyze", help="analyse still images and print one JSON object per image")
    analyze.add_argument("images", nargs="+", help="image files or folders of images")
    analyze.add_argument("--model", default=None, help="model id from model_store/manifests or an MNN model folder")
    analyze.add_argument("--profile", default=None, type=Path, help="task profile JSON (default: the model's own)")
    analyze.add_argument("--jsonl", action="store_true", help="one compact JSON object per line")
    analyze.add_argument("--image-max-side", type=int, default=None, help="downscale images to this longest side")
    analyze.add_argument("--threads", type=int, default=2, help="CPU threads for MNN (default 2)")
    analyze.add_argument("--backend", default="cpu", choices=("cpu", "metal", "opencl", "vulkan"),
                         help="MNN backend; a non-CPU backend is checked against CPU first (default cpu)")
    analyze.add_argument("--show-tokens", action="store_true", help="echo tokens to stderr as they stream")
    analyze.add_argument("--free", action="store_true",
                         help="free generation instead of constrained decoding over the profile's answers")
    watch = sub.add_parser("watch", help="sample keyframes from a video and print session events as JSON lines")
    watch.add_argument("video", type=Path)
    watch.add_argument("--interval", type=float, default=3.0, help="seconds between keyframes, 2-5 (default 3)")
    watch.add_argument("--realtime", action="store_true",
                       help="play at the video's own speed; keyframes the model cannot keep up with are superseded")
    watch.add_argument("--model", default=None, help="model id or MNN model folder")
    watch.add_argument("--profile", default=None, type=Path, help="task profile JSON")
    watch.add_argument("--threads", type=int, default=2)
    watch.add_argument("--backend", default="cpu", choices=("cpu", "metal", "opencl", "vulkan"))
    watch.add_argument("--image-max-side", type=int, default=None)
    watch.add_argument("--free", action="store_true", help="free generation instead of constrained decoding")
    watch.add_argument("--worker", choices=("process", "thread"), default=None,
                       help="where the model runs (default: a child process where the platform allows)")
    sessions = sub.add_parser("sessions", help="list recorded sessions or export one")
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

    from app.models_cli import add_models_parser

    add_models_parser(sub)
    return parser


def _expand_inputs(items: Sequence[str]) -> Iterator[Path]:
    for item in items:
        path = Path(item)
        if path.is_dir():
            yield from sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
        else:
            yield path


def _emit(out: TextIO, record: dict, jsonl: bool) -> None:
    out.write(json.dumps(record, ensure_ascii=False, indent=None if jsonl else 2) + "\n")
    out.flush()


def run_analyze(args: argparse.Namespace, out: TextIO) -> int:
    from app.core.profiles import ProfileError
    from app.core.results import InputError
    from app.engine.mnn_vlm import EngineError
    from app.engine.model_folder import ModelFolderError
    from app.frames.intake import ImageRejected, read_image_file
    from app.models.catalog import ModelNotFound, ModelNotVerified
    from app.models.manifest import ManifestError
    from app.worker.messages import WorkerSpec
    from app.worker.serve import checked_analyzer

    try:
        spec = WorkerSpec(
            model=args.model, profile=args.profile, backend=args.backend, threads=args.threads,
            image_max_side=args.image_max_side, constrained=not args.free,
        )
        analyzer, decision = checked_analyzer(spec)
        if decision.fell_back:
            print(f"note: {decision.reason}", file=sys.stderr)
        analyzer.load()
    except (ModelNotFound, ModelNotVerified, ManifestError, ModelFolderError, ProfileError, EngineError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_SETUP

    def echo(piece: str) -> None:
        sys.stderr.write(piece)
        sys.stderr.flush()

    status = EXIT_OK
    for path in _expand_inputs(args.images):
        try:
            image = read_image_file(path)
            result = analyzer.analyze(image, str(path), on_token=echo if args.show_tokens else None)
            record = result.to_dict()
            if args.show_tokens:
                sys.stderr.write("\n")
        except ImageRejected as exc:
            status = EXIT_BAD_INPUT
            print(f"error: {exc}", file=sys.stderr)
            record = InputError(str(path), exc.reason, str(exc)).to_dict()
        except EngineError as exc:
            status = EXIT_BAD_INPUT
            print(f"error: {path}: {exc}", file=sys.stderr)
            record = InputError(str(path), "engine_error", str(exc)).to_dict()
        _emit(out, record, args.jsonl)
    return status


def run_watch(args: argparse.Namespace, out: TextIO) -> int:
    from app.core.sampler import SamplerConfig
    from app.core.session import event_to_dict
    from app.frames.intake import DecodedImage
    from app.frames.video import VideoError, iter_video_frames
    from app.models.storage import data_dir
    from app.pipeline.live import LivePipeline, PipelineUpdate
    from app.session.store import SessionLog, new_session_id
    from app.worker.messages import WorkerSpec

    try:
        sampler = SamplerConfig(interval_s=args.interval)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_SETUP
    log_path = data_dir() / "sessions" / f"{new_session_id()}.jsonl"

    def on_update(update: PipelineUpdate) -> None:
        if update.event is not None:
            _emit(out, event_to_dict(update.event), jsonl=True)
        if update.worker_message:
            print(f"worker: {update.worker_message}", file=sys.stderr)
        if update.interval_stretched and update.effective_interval_s and update.event is not None:
            print(f"note: the model is slower than the {args.interval:g} s interval; keyframes every "
                  f"{update.effective_interval_s:.1f} s", file=sys.stderr)

    spec = WorkerSpec(
        model=args.model, profile=args.profile, backend=args.backend, threads=args.threads,
        image_max_side=args.image_max_side, constrained=not args.free,
    )
    with SessionLog(log_path) as log:
        pipeline = LivePipeline(spec, on_update, sampler=sampler, log=log, host_kind=args.worker)
        pipeline.start()
        try:
            if not pipeline.wait_ready(timeout=300):
                print(f"error: {pipeline.failure or 'the model did not load in time'}", file=sys.stderr)
                return EXIT_SETUP
            started = time.monotonic()
            for t, rgb in iter_video_frames(args.video):
                if args.realtime:
                    time.sleep(max(0.0, t - (time.monotonic() - started)))
                pipeline.offer_frame(t, DecodedImage(rgb, "video"))
                if not args.realtime and pipeline.busy:
                    pipeline.wait_idle()  # offline: every keyframe is analysed, none superseded
            pipeline.flush()
            pipeline.wait_idle()
        except VideoError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
        finally:
            pipeline.stop()
    print(f"session log: {log_path}", file=sys.stderr)
    return EXIT_OK if pipeline.state.failed == 0 else EXIT_BAD_INPUT


def run_sessions(args: argparse.Namespace, out: TextIO) -> int:
    from app.models.storage import data_dir
    from app.session.store import export_csv, export_jsonl, load_session, summary_text

    folder = data_dir() / "sessions"
    if args.sessions_command == "list":
        paths = sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True) if folder.is_dir() else []
        for path in paths:
            state = load_session(path).state
            _emit(out, {"id": path.stem, "path": str(path), "keyframes": len(state.timeline),
                        "pending": len(state.pending), "failed": state.failed}, jsonl=True)
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
    import uuid

    from app.core.session import ExaminerConfirmed, ExaminerCorrected, event_to_dict
    from app.session.store import SessionLog

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
    _emit(out, event_to_dict(event), jsonl=True)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    from app.privacy.guard import ensure_installed

    ensure_installed()  # first thing: no code path after this can reach the network unnoticed
    args = _build_parser().parse_args(argv)
    if args.command == "models":
        from app.models_cli import run_models

        return run_models(args, sys.stdout)  # no MNN in this path: stdout needs no claiming
    runners = {"analyze": run_analyze, "watch": run_watch, "sessions": run_sessions}
    if args.command in runners:
        from app.engine.stdio import claim_stdout

        return runners[args.command](args, claim_stdout())
    from app.ui.launch import launch

    return launch(
        web=getattr(args, "web", False),
        port=getattr(args, "port", None),
        model=getattr(args, "model", None),
        profile=getattr(args, "profile", None),
    )
