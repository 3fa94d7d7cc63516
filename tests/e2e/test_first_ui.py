"""What a person sees: pick an example or a file, watch tokens stream, read the strict result."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

from app.paths import EXAMPLES
from tests.integration.conftest import held_out_scenes

ANSWER = '{"signal":"hand_position_correct","observation":"%s"}'


def _text(page, identifier: str) -> str:  # noqa: ANN001
    return page.locator(f"[flt-semantics-identifier='{identifier}']").inner_text()


def _wait_text(page, identifier: str, expected: str, timeout: int = 60_000) -> None:  # noqa: ANN001
    page.wait_for_function(
        """([id, expected]) => {
            const el = document.querySelector(`[flt-semantics-identifier='${id}']`);
            return el && el.innerText.includes(expected);
        }""",
        arg=[identifier, expected],
        timeout=timeout,
    )


def test_privacy_notice_and_model_ready(page, tmp_path: Path) -> None:  # noqa: ANN001
    notice = _text(page, "privacy-notice")
    assert "never leave this device" in notice and "Outbound connections blocked: 0" in notice
    _wait_text(page, "model-status", "Model ready")
    page.screenshot(path=str(tmp_path / "ready.png"))


def test_example_scene_streams_and_gives_the_strict_result(page) -> None:  # noqa: ANN001
    _wait_text(page, "model-status", "Model ready")
    example = sorted(EXAMPLES.glob("correct-*.jpg"))[0]
    page.locator(f"[flt-semantics-identifier='example-{example.stem}']").click()
    _wait_text(page, "observation", "YES")
    assert _text(page, "token-stream").strip() == ANSWER % "yes"
    assert "valid answer" in _text(page, "parse-status")
    assert "never leave this device" in _text(page, "privacy-notice")


def test_picked_file_is_analysed_and_a_bad_file_is_reported(page, tmp_path: Path) -> None:  # noqa: ANN001
    _wait_text(page, "model-status", "Model ready")
    kind, data, expected = next(s for s in held_out_scenes(count_per_kind=1, seed=77) if s[2] == "no")
    scene = tmp_path / f"{kind}.jpg"
    scene.write_bytes(data)
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="Choose image…").click()
    chooser.value.set_files(str(scene))
    _wait_text(page, "observation", "NO")
    assert json.loads(_text(page, "token-stream")) == json.loads(ANSWER % "no")

    broken = tmp_path / "broken.jpg"
    broken.write_bytes(data[:200])
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="Choose image…").click()
    chooser.value.set_files(str(broken))
    _wait_text(page, "error", "broken.jpg")
    assert "damaged" in _text(page, "error")


def test_a_busy_port_gives_a_clear_message(app_url: str) -> None:
    port = str(urlsplit(app_url).port)
    proc = subprocess.run(
        [sys.executable, "-m", "app", "ui", "--port", port], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert f"port {port}" in proc.stderr and "Traceback" not in proc.stderr
