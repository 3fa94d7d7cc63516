"""The privacy promise, checked on the real analysis path."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from app.analyzer import Analyzer
from app.frames.intake import decode_image_bytes
from app.privacy.guard import NetworkBlocked, NetworkGuard, active_guard, install
from tests.integration.conftest import held_out_scenes, write_scenes

ROOT = Path(__file__).resolve().parents[2]


def test_a_connection_attempt_during_analysis_is_blocked_and_counted(demo_analyzer: Analyzer) -> None:
    session_guard = active_guard()
    guard = install(NetworkGuard())
    outcomes: list[str] = []

    def leaky_listener(piece: str) -> None:
        # Stands in for any code on the analysis path that tries to phone home.
        try:
            with socket.create_connection(("203.0.113.9", 80), timeout=1):
                outcomes.append("connected")
        except NetworkBlocked:
            outcomes.append("blocked")

    try:
        _, data, expected = held_out_scenes(count_per_kind=1, seed=55)[0]
        result = demo_analyzer.analyze(decode_image_bytes(data), "scene", on_token=leaky_listener)
    finally:
        if session_guard is not None:
            install(session_guard)
    assert outcomes and set(outcomes) == {"blocked"}
    assert guard.blocked_count == len(outcomes) and guard.outbound_count == 0
    assert result.observation == expected  # blocking did not break the analysis


def test_the_app_never_imports_mnn_tools(tmp_path: Path) -> None:
    files = write_scenes(tmp_path, held_out_scenes(count_per_kind=1, seed=56)[:1])
    # The model runs in this process (thread host), so every module MNN's path imports is visible here.
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from app.frames.intake import read_image_file\n"
        "from app.worker.blocking import BlockingWorker\n"
        "from app.worker.messages import WorkerSpec\n"
        "with BlockingWorker(WorkerSpec(), host_kind='thread') as worker:\n"
        "    worker.start(60)\n"
        f"    outcome = worker.analyze(read_image_file(Path({str(files[0][0])!r})), 'x')\n"
        "code = 0 if outcome.finished is not None else 1\n"
        "leaked = sorted(m for m in sys.modules if m == 'MNN.tools' or m.startswith('MNN.tools.'))\n"
        "assert 'MNN.llm' in sys.modules\n"
        "sys.stderr.write('LEAKED=' + ','.join(leaked) + '\\n')\n"
        "sys.exit(code)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "LEAKED=\n" in proc.stderr
    for path in (ROOT / "app").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "MNN.tools" not in text and "mnnconvert" not in text and "mnnquant" not in text, path
