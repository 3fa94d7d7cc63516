"""`python -m app models ...`: list, download, verify, remove, import, path, mirror, proxy.

Results go to `out` (a table or, with --json, JSON); progress bars, notes and
errors go to stderr. With --json a failure also prints one JSON object
(`{"ok": false, "error": <kind>, "message": ...}`) on `out`, so a caller never
gets empty output. Exit codes: 0 ok, 1 the operation failed (download,
verification, import rejected, removing a model that is not installed), 2 setup
problems (unknown or bundled model, model busy, bad manifest or mirror
setting), 130 cancelled (Ctrl-C), 143 terminated (SIGTERM); a stopped download keeps its `.part`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from app.commands.common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_SETUP, EXIT_TERMINATED
from app.core.sizes import size_words
from app.stop_signals import Terminated

if TYPE_CHECKING:
    from app.commands.common import Subparsers
    from app.models.store import ModelStore


def add_models_parser(subparsers: Subparsers) -> argparse.ArgumentParser:
    models = subparsers.add_parser(
        "models",
        help="list, download, verify, import or remove models",
        description="Manage the on-device model store.",
    )
    sub = models.add_subparsers(dest="models_command", metavar="COMMAND", required=True)

    listing = sub.add_parser("list", help="every known model and whether it is installed and verified")
    listing.add_argument("--json", action="store_true", help="machine-readable output")

    download = sub.add_parser("download", help="download a model (resumes; fetches only unverified files)")
    download.add_argument("model_id")
    download.add_argument(
        "--mirror",
        action="append",
        default=[],
        metavar="URL",
        help="base URL serving <URL>/<file path> (a company or local mirror); repeat for "
        "fallbacks. Replaces the public mirrors. Default: the saved mirror setting, "
        "else the manifest's mirrors (Hugging Face, then ModelScope)",
    )
    download.add_argument(
        "--system-proxy",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="connect through the system's proxy settings (HTTPS_PROXY, …) or directly; "
        "default: the saved choice (`models proxy`), else directly",
    )
    download.add_argument("--json", action="store_true", help="print the final status as JSON")

    verify = sub.add_parser("verify", help="re-hash every file of a model and name any that fail")
    verify.add_argument("model_id")
    verify.add_argument("--json", action="store_true", help="machine-readable output")

    remove = sub.add_parser("remove", help="delete a downloaded model, including partial downloads")
    remove.add_argument("model_id")

    imp = sub.add_parser("import", help="copy in a local copy of a known model, verified against its manifest")
    imp.add_argument("model_id")
    imp.add_argument("dir", type=Path)

    path = sub.add_parser("path", help="print where models are stored (or one model's folder)")
    path.add_argument("model_id", nargs="?")

    mirror = sub.add_parser("mirror", help="show, set or clear the saved mirror base URL")
    mirror.add_argument("url", nargs="?")
    mirror.add_argument("--clear", action="store_true")

    proxy = sub.add_parser(
        "proxy", help="show or set whether downloads use the system's proxy settings (saved; off by default)"
    )
    proxy.add_argument("choice", nargs="?", choices=("on", "off"))
    return models


def _err(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _fail(args: argparse.Namespace, out: TextIO, exc: BaseException | str, code: int, kind: str | None = None) -> int:
    """The error on stderr and, for --json, as a JSON object on `out`."""
    message = str(exc)
    _err(f"error: {message}")
    if getattr(args, "json", False):
        record = {
            "ok": False,
            "command": args.models_command,
            "id": getattr(args, "model_id", None),
            "error": kind or (type(exc).__name__ if isinstance(exc, BaseException) else "error"),
            "message": message,
            "exit_code": code,
        }
        out.write(json.dumps(record) + "\n")
    return code


def run_models(args: argparse.Namespace, out: TextIO) -> int:
    from app.models.locks import ModelBusy
    from app.models.manifest import ManifestError
    from app.models.mirrors import MirrorError
    from app.models.store import BundledModel, ModelStore, UnknownModel

    try:
        if args.models_command == "mirror":
            return _mirror(args, out)
        if args.models_command == "proxy":
            return _proxy(args, out)
        store = ModelStore.from_env()
        command = args.models_command
        if command == "list":
            return _list(store, args, out)
        if command == "path":
            out.write(f"{store.folder(args.model_id) if args.model_id else store.root}\n")
            return EXIT_OK
        if command == "download":
            return _download(store, args, out)
        if command == "verify":
            return _verify(store, args, out)
        if command == "remove":
            if not store.remove(args.model_id):
                return _fail(args, out, f"{args.model_id} is not installed; nothing was removed", EXIT_FAILED)
            out.write(f"removed {args.model_id}\n")
            return EXIT_OK
        if command == "import":
            return _import(store, args, out)
    except (UnknownModel, BundledModel, ModelBusy, ManifestError, MirrorError) as exc:
        return _fail(args, out, exc, EXIT_SETUP)
    except OSError as exc:  # e.g. the storage folder cannot be created or read
        return _fail(args, out, exc, EXIT_FAILED)
    return _fail(args, out, f"unknown models command {args.models_command!r}", EXIT_SETUP)


def _list(store: ModelStore, args: argparse.Namespace, out: TextIO) -> int:
    statuses = store.statuses()
    if args.json:
        out.write(json.dumps([s.to_dict() for s in statuses], indent=2) + "\n")
        return EXIT_OK
    rows = [
        (
            s.model_id,
            s.state.value,
            f"{len(s.verified)}/{len(s.verified) + len(s.pending)}",
            ("~" if s.size_is_estimate else "") + size_words(s.size),
            s.display_name,
        )
        for s in statuses
    ]
    header = ("ID", "STATE", "VERIFIED", "SIZE", "NAME")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(4)]
    for row in [header, *rows]:
        out.write("  ".join(str(c).ljust(w) for c, w in zip(row[:4], widths, strict=True)) + "  " + row[4] + "\n")
    for s in statuses:
        if s.state.value == "damaged":
            _err(f"{s.model_id}: bundled files fail their hash check: {', '.join(s.pending)}; reinstall Keyframe")
        if s.partial_bytes:
            out.write(f"{s.model_id}: {size_words(s.partial_bytes)} downloaded so far; `download` resumes it\n")
    return EXIT_OK


def _download(store: ModelStore, args: argparse.Namespace, out: TextIO) -> int:
    from app.models.download_job import Ending
    from app.models.download_plan import DownloadRefused, plan_download
    from app.models.progress import TerminalProgress
    from app.privacy.guard import ensure_installed

    try:
        plan = plan_download(store, args.model_id, mirror_urls=args.mirror, use_system_proxy=args.system_proxy)
    except DownloadRefused as refused:
        return _fail(args, out, refused.cause, EXIT_SETUP)
    proxies = plan.proxies
    via = f" through the proxy {', '.join(sorted(set(proxies.values())))}" if proxies else ""
    _err(f"downloading {plan.manifest.id} from {', '.join(m.name + ' (' + m.host + ')' for m in plan.mirrors)}{via}")
    job = plan.job(guard=ensure_installed())
    bar = TerminalProgress(sys.stderr)
    job.start()
    stopped_by: BaseException | None = None
    try:
        for progress in job.events():
            bar(progress)
    except (KeyboardInterrupt, Terminated) as stop:  # a second signal is ignored (app.stop_signals)
        stopped_by = stop
        job.stop()  # acts within a fraction of a second, even in a read from a silent server; keeps the .part
        for progress in job.events():
            bar(progress)
    outcome = job.wait()
    if outcome.ending is Ending.STOPPED:
        code = EXIT_TERMINATED if isinstance(stopped_by, Terminated) else EXIT_INTERRUPTED
        return _fail(args, out, "cancelled; run the same command again to resume", code, "Cancelled")
    if stopped_by is not None:  # it ended on its own just before the stop: the signal still ends the command
        raise stopped_by
    if outcome.error is not None:
        if outcome.ending is Ending.CRASHED:
            raise outcome.error
        return _fail(args, out, outcome.error, EXIT_FAILED if outcome.ending is Ending.FAILED else EXIT_SETUP)
    status = outcome.status
    assert status is not None  # INSTALLED
    out.write(json.dumps(status.to_dict()) + "\n" if args.json else f"installed {status.model_id} in {status.folder}\n")
    return EXIT_OK


def _verify(store: ModelStore, args: argparse.Namespace, out: TextIO) -> int:
    report = store.verify(args.model_id)
    if args.json:
        out.write(
            json.dumps(
                {
                    "id": report.model_id,
                    "ok": report.ok,
                    "folder": str(report.folder),
                    "files": [{"path": c.path, "state": c.state.value, "detail": c.detail} for c in report.checks],
                },
                indent=2,
            )
            + "\n"
        )
    else:
        for check in report.checks:
            detail = f" ({check.detail})" if check.detail else ""
            out.write(
                f"{'ok' if check.state.value == 'ok' else 'FAILED':<7} {check.path}"
                f"{'' if check.state.value == 'ok' else ': ' + check.state.value + detail}\n"
            )
        out.write(report.describe() + "\n")
    if not report.ok and not store.manifest(args.model_id).bundled:
        _err(f"run `python -m app models download {args.model_id}` to fetch only the failing files again")
    return EXIT_OK if report.ok else EXIT_FAILED


def _import(store: ModelStore, args: argparse.Namespace, out: TextIO) -> int:
    from app.models.download import NotEnoughSpace
    from app.models.importer import ImportRejected

    _err(f"importing {args.model_id} from {args.dir} (copying and hashing every file)…")
    try:
        status = store.import_folder(args.model_id, args.dir)
    except (ImportRejected, NotEnoughSpace) as exc:
        _err(f"error: import rejected: {exc}")
        return EXIT_FAILED
    out.write(f"imported {status.model_id} into {status.folder}\n")
    return EXIT_OK


def _mirror(args: argparse.Namespace, out: TextIO) -> int:
    from app.models.mirrors import load_mirror_setting, save_mirror_setting

    if args.clear:
        save_mirror_setting(None)  # works on a broken setting too: that is how it is fixed
        out.write("mirror cleared: downloads use the manifests' mirrors\n")
    elif args.url:
        save_mirror_setting(args.url)
        out.write(f"mirror set: {args.url.strip()}\n")
    else:
        current = load_mirror_setting()
        out.write(f"{current}\n" if current else "")
        if not current:
            _err("no mirror set: downloads use the manifests' mirrors")
    return EXIT_OK


def _proxy(args: argparse.Namespace, out: TextIO) -> int:
    from app.models.mirrors import load_download_settings, save_proxy_setting

    if args.choice:
        save_proxy_setting(args.choice == "on")  # MirrorError (exit 2) when the saved file is broken
        out.write(f"system proxy {args.choice}\n")
    else:
        on = load_download_settings().use_system_proxy
        out.write(f"{'on' if on else 'off'}\n")
        _err("downloads use the system's proxy settings" if on else "downloads connect directly (no proxy)")
    return EXIT_OK
