"""Bad command-line values: a one-line argparse error (exit 2), never a traceback
(issue 7 item 12: --image-max-side; item 13: ui --port)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _parse(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    from app.cli import _build_parser

    with pytest.raises(SystemExit) as stop:
        _build_parser().parse_args(argv)
    return int(stop.value.code or 0), capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "1", "31", "2049", "4096", "100000", "-5", "abc", "1e3", ""])
def test_image_max_side_out_of_bounds(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["analyze", "x.jpg"], ["watch", "x.mp4"]):
        code, err = _parse([*command, "--image-max-side", value], capsys)
        assert code == 2 and "--image-max-side" in err and "Traceback" not in err


@pytest.mark.parametrize("value", ["32", "224", "2048"])
def test_image_max_side_in_bounds(value: str) -> None:
    from app.cli import _build_parser

    args = _build_parser().parse_args(["analyze", "x.jpg", "--image-max-side", value])
    assert args.image_max_side == int(value)


@pytest.mark.parametrize("value", ["0", "65536", "99999", "-1", "http"])
def test_ui_port_out_of_range(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _parse(["ui", "--port", value], capsys)
    assert code == 2 and "--port" in err and "Traceback" not in err


def test_ui_port_99999_from_the_shell() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "app", "ui", "--port", "99999"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines()[-1].endswith("argument --port: 99999 is outside 1-65535")
