"""`analyze` and `eval` read and analyse a batch one image at a time (app.commands.analyze.analyse_each)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, cast

from PIL import Image

from app.commands.analyze import analyse_each
from app.frames.intake import DecodedImage, ImageRejected
from app.frames.listing import InputItem
from app.worker.blocking import BlockingWorker, Outcome, WorkerUnavailable
from app.worker.messages import JobError, JobFailed


class FakeWorker:
    """Fails each image with its name, until the image named `gone_at`, where the worker is gone."""

    def __init__(self, gone_at: str) -> None:
        self.gone_at = gone_at
        self.asked: list[str] = []

    def analyze(self, image: DecodedImage, source: str, on_token: Any = None) -> Outcome:
        self.asked.append(source)
        if source == self.gone_at:
            raise WorkerUnavailable("the worker gave up")
        return Outcome(None, JobFailed(source, JobError.ENGINE_ERROR, source))


def test_rejects_are_reported_and_nothing_is_tried_after_the_worker_is_gone(tmp_path: Path) -> None:
    good = tmp_path / "good.png"
    buffer = io.BytesIO()
    Image.new("RGB", (32, 32), "red").save(buffer, "PNG")
    good.write_bytes(buffer.getvalue())
    (tmp_path / "empty.jpg").write_bytes(b"")
    listed_bad = ImageRejected("missing", "gone.jpg: no such file")
    named = [
        ("listed-bad", InputItem(None, "gone.jpg", listed_bad)),
        ("empty", InputItem(tmp_path / "empty.jpg", "empty.jpg")),
        ("first", InputItem(good, "good.png")),
        ("last", InputItem(good, "good.png")),
        ("never", InputItem(good, "good.png")),
    ]
    worker = FakeWorker(gone_at="last")
    got = list(analyse_each(cast(BlockingWorker, worker), named))

    assert [name for name, _ in got] == ["listed-bad", "empty", "first", "last"]
    assert got[0][1] is listed_bad
    assert isinstance(got[1][1], ImageRejected) and got[1][1].reason == "empty_file"
    first = got[2][1]
    assert isinstance(first, Outcome) and first.failed is not None and first.failed.job_id == "first"
    assert isinstance(got[3][1], WorkerUnavailable)
    assert worker.asked == ["first", "last"]
