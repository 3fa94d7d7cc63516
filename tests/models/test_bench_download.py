"""bench.download runs end to end on a tiny file and prints its rows beside their goals.

Throughput figures are never asserted (a shared machine, a 4 MB file); the cut's
re-fetched bytes are, since they do not depend on speed: a resume asks for exactly the
bytes it lacks.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.download import CHUNK, main
from tests.servers.nginx import Nginx

pytestmark = pytest.mark.nginx  # a real nginx; a skip fails under CI=true (tests/conftest.py)


def test_the_download_bench_prints_its_rows_with_their_goals(
    nginx: Nginx, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The fixture skips where nginx is missing; the bench starts its own, configured for its file size.
    receipt = tmp_path / "receipt.json"
    code = main(["--size-mb", "4", "--rounds", "1", "--receipt", str(receipt)])
    lines = capsys.readouterr().out.splitlines()

    def row(name: str) -> str:
        found = [line for line in lines if line.strip().startswith(name)]
        assert len(found) == 1, f"no single row {name!r} in:\n" + "\n".join(lines)
        return found[0]

    assert "[goal >= 0.97" in row("app ÷ plain download, nginx limit_rate 50m")
    assert "[goal" not in row("app ÷ plain download, unthrottled")
    cut = row("bytes re-fetched after a cut")
    assert f"[goal <= {CHUNK} B (one chunk)  met]" in cut and "resumed with Range bytes=" in cut
    assert code in (0, 1)  # 1 when the tiny file's throughput ratio misses, which says nothing here
    names = [r["name"] for r in json.loads(receipt.read_text())["rows"]]
    assert names[:3] == [
        "app ÷ plain download, nginx limit_rate 50m",
        "app ÷ plain download, unthrottled",
        "bytes re-fetched after a cut",
    ]
