"""Model faults: damaged copies of the bundled demo model are refused before MNN sees them.

Every damage is tried two ways:
- pinned: a copy of the demo model with one damaged file. It is recognised as
  the pinned model (catalog.recognise_copy) and its verification names the file.
- unpinned: the same damage in a folder that is no longer a copy (config.json or
  llm_config.json edited harmlessly as well), so only the up-front checks of
  engine.model_folder stand between it and MNN. Damage they cannot see without
  running MNN is marked NEEDS_ISOLATION: only the worker process turns the
  crash it may cause into a clean error.
Both ways also go through `python -m app analyze --model DIR`: exit 2, a one-line
error naming the file, no traceback, no signal. Every damage runs in this process,
through the function the CLI hands the command to (see _analyze_in_this_process);
a few run as a user runs them, in a process of their own, and must give the very
same line.
"""

from __future__ import annotations

import io
import json
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

from app import cli
from app.commands import analyze
from app.commands.interrupts import run_interruptible
from app.engine.model_folder import ModelFolderError, open_model_folder
from app.models.catalog import DEFAULT_MODEL_ID, ModelNotVerified, resolve_model
from app.stop_signals import STOP_SIGNALS
from app.worker import analyzer, blocking
from app.worker.hosts import WorkerHost, make_host
from app.worker.messages import Event, WorkerSpec
from tests.conditions import HANG_S
from tests.models.conftest import ROOT

DEMO = ROOT / "model_store" / "keyframe-demo"
IMAGE = ROOT / "assets" / "examples" / "correct-1.jpg"


def _flip(name: str, offset: Callable[[int], int]) -> Callable[[Path], None]:
    def damage(folder: Path) -> None:
        data = bytearray((folder / name).read_bytes())
        data[offset(len(data))] ^= 0xFF
        (folder / name).write_bytes(bytes(data))

    return damage


def _set_byte(name: str, offset: int, value: int) -> Callable[[Path], None]:
    def damage(folder: Path) -> None:
        data = bytearray((folder / name).read_bytes())
        assert data[offset] != value, "the demo model changed: find a byte that makes MNN crash again"
        data[offset] = value
        (folder / name).write_bytes(bytes(data))

    return damage


def _truncate(name: str, keep: Callable[[int], int]) -> Callable[[Path], None]:
    def damage(folder: Path) -> None:
        data = (folder / name).read_bytes()
        (folder / name).write_bytes(data[: keep(len(data))])

    return damage


_DROP = object()  # as the value of _edit_json: the key is removed


def _edit_json(name: str, key: str, value: object) -> Callable[[Path], None]:
    def damage(folder: Path) -> None:
        data = json.loads((folder / name).read_text())
        if value is _DROP:
            del data[key]
        else:
            data[key] = value
        (folder / name).write_text(json.dumps(data, indent=4))

    return damage


def _write(name: str, content: bytes) -> Callable[[Path], None]:
    return lambda folder: (folder / name).write_bytes(content)


def _remove(name: str) -> Callable[[Path], None]:
    return lambda folder: (folder / name).unlink()


# name -> (damage, the file the error must name)
DAMAGES: dict[str, tuple[Callable[[Path], None], str]] = {
    "visual-flipped-byte": (_flip("visual.mnn", lambda n: n // 2), "visual.mnn"),
    "visual-flipped-root-offset": (_flip("visual.mnn", lambda n: 1), "visual.mnn"),
    "llm-weight-truncated": (_truncate("llm.mnn.weight", lambda n: n // 2), "llm.mnn.weight"),
    "llm-weight-last-byte-cut": (_truncate("llm.mnn.weight", lambda n: n - 1), "llm.mnn.weight"),
    "visual-weight-truncated": (_truncate("visual.mnn.weight", lambda n: n // 2), "visual.mnn.weight"),
    "tokenizer-truncated-header": (_truncate("tokenizer.mtok", lambda n: 40), "tokenizer.mtok"),
    "tokenizer-truncated-body": (_truncate("tokenizer.mtok", lambda n: n // 2), "tokenizer.mtok"),
    "hidden-size-wrong": (_edit_json("llm_config.json", "hidden_size", 128), "llm_config.json"),
    "missing-tokenizer": (_remove("tokenizer.mtok"), "tokenizer.mtok"),
    "missing-visual-weight": (_remove("visual.mnn.weight"), "visual.mnn.weight"),
    "empty-llm-graph": (_write("llm.mnn", b""), "llm.mnn"),
    "empty-visual-weight": (_write("visual.mnn.weight", b""), "visual.mnn.weight"),
    "garbage-config-json": (_write("config.json", b'{"llm_model": "llm.mnn",,,'), "config.json"),
    "garbage-llm-graph": (_write("llm.mnn", bytes(range(256)) * 64), "llm.mnn"),
    "image-size-string": (_edit_json("llm_config.json", "image_size", "128"), "llm_config.json"),
    "image-size-zero": (_edit_json("llm_config.json", "image_size", 0), "llm_config.json"),
    "image-size-huge": (_edit_json("llm_config.json", "image_size", 1_000_000), "llm_config.json"),
    # Each of these was "the inference worker stopped (signal 11)".
    "visual-weight-one-byte": (_write("visual.mnn.weight", b"\0"), "visual.mnn.weight"),
    "hidden-size-missing": (_edit_json("llm_config.json", "hidden_size", _DROP), "llm_config.json"),
    "vision-start-huge": (_edit_json("llm_config.json", "vision_start", 10**9), "llm_config.json"),
    # A template that drops the message's content: the image never reaches the prompt.
    "chat-template-without-image": (
        _edit_json("llm_config.json", "jinja", {"chat_template": "{% for m in messages %}{{ m['role'] }}{% endfor %}"}),
        "llm_config.json",
    ),
    # One value in the vision graph changed (found by trying single bytes of the committed demo model):
    # MNN loads the graph, then dies on an image with SIGFPE or SIGSEGV.
    "visual-graph-value-sigfpe": (_set_byte("visual.mnn", 49266, 22), "visual.mnn"),
    "visual-graph-value-sigsegv": (_set_byte("visual.mnn", 70380, 254), "visual.mnn"),
}

# Damage the up-front checks cannot see in an unpinned folder (it needs MNN's own parsing of the
# graph's contents or of the binary tokenizer): only the worker's process isolation makes these a
# clean error (before it, `analyze --model DIR` crashed on them). A short or missing weight file
# is seen: the graph says how many bytes it reads.
NEEDS_ISOLATION = {
    "visual-flipped-byte",
    "tokenizer-truncated-body",
    "chat-template-without-image",
    "visual-graph-value-sigfpe",
    "visual-graph-value-sigsegv",
}
# Of those, the ones MNN loads and then cannot answer with: before any image is asked, the worker's
# check on a built-in image refuses them as a model (exit 2, naming the files most likely damaged).
# They used to fail every image instead ("the inference worker stopped (signal 11)", a bare
# "ValueError: substring not found"), exit 1, as if the images were bad.
REFUSED_BY_THE_CHECK = [
    "tokenizer-truncated-body",
    "chat-template-without-image",
    "visual-graph-value-sigfpe",
    "visual-graph-value-sigsegv",
]


def damaged_copy(dest: Path, name: str, *, pinned: bool) -> Path:
    """A copy of the demo model with one damage; unpinned copies also differ harmlessly elsewhere."""
    shutil.copytree(DEMO, dest)
    damage, target = DAMAGES[name]
    damage(dest)
    if not pinned:
        # A second changed file: no longer a copy of the pinned model (at most one may differ).
        other = "llm_config.json" if target == "config.json" else "config.json"
        _edit_json(other, "comment", "a user's own export")(dest)
    return dest


def test_an_intact_copy_of_the_demo_is_recognised_and_verified(tmp_path: Path) -> None:
    copy = shutil.copytree(DEMO, tmp_path / "copy")
    ref = resolve_model(str(copy), {"FLET_APP_STORAGE_DATA": str(tmp_path / "data")})
    assert ref.id == DEFAULT_MODEL_ID and ref.folder == copy and ref.manifest is not None
    ref.require_verified()


@pytest.mark.parametrize("name", sorted(DAMAGES))
def test_a_damaged_pinned_copy_fails_verification_naming_the_file(tmp_path: Path, name: str) -> None:
    folder = damaged_copy(tmp_path / name, name, pinned=True)
    ref = resolve_model(str(folder), {"FLET_APP_STORAGE_DATA": str(tmp_path / "data")})
    assert ref.id == DEFAULT_MODEL_ID, "a copy with one damaged file is still the pinned model"
    with pytest.raises(ModelNotVerified) as caught:
        ref.require_verified()
    assert [c.path for c in caught.value.report.failures] == [DAMAGES[name][1]]
    assert DAMAGES[name][1] in str(caught.value)


@pytest.mark.parametrize("name", sorted(DAMAGES))
def test_a_damaged_unpinned_folder_is_refused_up_front_naming_the_file(tmp_path: Path, name: str) -> None:
    folder = damaged_copy(tmp_path / name, name, pinned=False)
    ref = resolve_model(str(folder), {"FLET_APP_STORAGE_DATA": str(tmp_path / "data")})
    assert ref.manifest is None, "two changed files: the user's own model, not a copy"
    if name in NEEDS_ISOLATION:
        open_model_folder(folder)  # passes the cheap checks: MNN itself must be contained
        return
    with pytest.raises(ModelFolderError, match=DAMAGES[name][1].replace(".", r"\.")):
        open_model_folder(folder)


def _argv(folder: Path) -> list[str]:
    return ["analyze", "--model", str(folder), str(IMAGE), "--jsonl"]


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str


def _analyze_as_a_user_does(folder: Path) -> Ran:
    """`python -m app analyze --model DIR IMAGE --jsonl` in its own process, the whole CLI."""
    result = subprocess.run(
        [sys.executable, "-m", "app", *_argv(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    return Ran(result.returncode, result.stdout, result.stderr)


def _analyze_in_this_process(folder: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> Ran:
    """The same command without a process of its own: what `python -m app analyze` runs once its
    process-wide steps are done.

    `cli.main` first cuts its whole process off the network (`isolate_this_process`: a network
    namespace, for good) and `cli._run` then claims fd 1 for good (`claim_stdout`); neither can happen
    in the test process. So the arguments go through the CLI's own parser and then to the function
    `_run` hands them to, `analyze.run`, inside `run_interruptible` as there, writing its JSON to a
    stream of ours in place of the claimed stdout. `analyze.run` asks for a child-process worker; it gets
    the thread host, which runs the same `serve` (the same refusal, as LoadFailed) in this process.
    None of these damages may reach MNN (a native crash would take pytest with it): the engine is
    replaced by an assertion. The real process host and the whole CLI: the subprocess cases below.
    """
    args = cli._build_parser().parse_args(_argv(folder))
    assert cli._HEADLESS[args.command] is analyze.run, "not the function `python -m app analyze` runs"
    asked: list[str | None] = []
    engines: list[object] = []

    def in_a_thread(spec: WorkerSpec, on_event: Callable[[Event], None], kind: str | None = None) -> WorkerHost:
        asked.append(kind)
        return make_host(spec, on_event, "thread")

    def never_mnn(folder: object, options: object) -> NoReturn:
        engines.append(folder)  # serve() turns the raise into a LoadFailed: the list says it happened
        raise AssertionError("MNN was reached")

    monkeypatch.setattr(blocking, "make_host", in_a_thread)
    monkeypatch.setattr(analyzer, "MnnVlm", never_mnn)
    handlers = [signal.getsignal(signum) for signum in STOP_SIGNALS]
    capfd.readouterr()  # only what the command writes
    out = io.StringIO()
    code = run_interruptible(lambda: analyze.run(args, out))
    captured = capfd.readouterr()
    assert asked == ["process"], "analyze no longer asks for a worker process: see _analyze_in_this_process"
    assert engines == [], "MNN was reached: this damage must be refused before the model loads"
    assert [signal.getsignal(signum) for signum in STOP_SIGNALS] == handlers, "the stop signals were left changed"
    assert not [t for t in threading.enumerate() if t.name == "keyframe-worker"], "the worker thread was left running"
    # Anything written to fd 1 besides `out` would be on the user's stderr (fd 1 is claimed): none is allowed.
    return Ran(code, out.getvalue() + captured.out, captured.err)


def _assert_refused_in_one_line(ran: Ran, name: str) -> str:
    """Exit 2, nothing on stdout, one line saying the model could not be loaded naming the file, no traceback."""
    assert ran.code == 2, ran.stderr[-2000:]
    assert ran.stdout == ""
    lines = [line for line in ran.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1 and DAMAGES[name][1] in errors[0], ran.stderr[-2000:]
    assert errors[0].startswith("error: the model could not be loaded: "), errors[0]
    assert "Traceback" not in ran.stderr
    return errors[0]


CLEAN_IN_CLI = sorted(set(DAMAGES) - NEEDS_ISOLATION)


@pytest.mark.parametrize("pinned", [True, False], ids=["pinned", "unpinned"])
@pytest.mark.parametrize("name", CLEAN_IN_CLI)
def test_analyze_refuses_a_damaged_model_with_one_line_and_exit_2(
    tmp_path: Path, name: str, pinned: bool, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    folder = damaged_copy(tmp_path / name, name, pinned=pinned)
    _assert_refused_in_one_line(_analyze_in_this_process(folder, monkeypatch, capfd), name)


# A few whole runs prove the wiring the in-process cases skip: the network isolation, the claimed
# stdout, the worker child and its events, the exit status. One refusal by the pinned model's hashes,
# two by the up-front checks of an unpinned folder (a missing file, a bad value).
WHOLE_CLI = [("llm-weight-truncated", True), ("missing-tokenizer", False), ("image-size-huge", False)]


@pytest.mark.parametrize(
    ("name", "pinned"), WHOLE_CLI, ids=[f"{n}-{'pinned' if p else 'unpinned'}" for n, p in WHOLE_CLI]
)
def test_python_m_app_analyze_refuses_a_damaged_model_as_the_in_process_call_does(
    tmp_path: Path, name: str, pinned: bool, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    folder = damaged_copy(tmp_path / name, name, pinned=pinned)
    line = _assert_refused_in_one_line(_analyze_as_a_user_does(folder), name)
    assert line == _assert_refused_in_one_line(_analyze_in_this_process(folder, monkeypatch, capfd), name)


@pytest.mark.parametrize("name", REFUSED_BY_THE_CHECK)
def test_a_model_that_loads_but_cannot_answer_is_refused_as_a_model_naming_the_file(tmp_path: Path, name: str) -> None:
    folder = damaged_copy(tmp_path / name, name, pinned=False)
    ran = _analyze_as_a_user_does(folder)
    line = _assert_refused_in_one_line(ran, name)
    crashed = "were being loaded: one of them is damaged or belongs to another model"
    # MNN reading damaged bytes may also die while loading (a truncated tokenizer does, now and then):
    # the worker is started again, and the user is told so in a note naming the files.
    notes = [text for text in ran.stderr.splitlines() if text.strip() and text != line]
    assert all(n.startswith("note: the inference worker was restarted (") and crashed in n for n in notes), notes
    if "failed its check on a built-in image" not in line:
        assert notes and crashed in line, ran.stderr[-2000:]  # every start died while loading
    else:
        assert line.endswith("most likely damaged or from another model"), line
    # Only the app's sentences: MNN's words on the graph and its CPU banner go to the log.
    assert all(DAMAGES[name][1] in n for n in notes), notes
