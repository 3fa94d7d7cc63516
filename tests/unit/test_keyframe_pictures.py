"""The pictures kept of each answered keyframe: a thumbnail for the list, a review copy to enlarge."""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np
import pytest

from app.frames.intake import DecodedImage
from app.pipeline.live import Keyframe
from app.session.store import MAX_PICTURE_BYTES, SessionLog, delete_session, read_thumbnail


def decoded_side(data: bytes) -> tuple[int, int]:
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None, "a JPEG"
    return image.shape[0], image.shape[1]


@pytest.mark.quick
def test_a_keyframe_is_kept_at_review_size_and_as_a_thumbnail_never_scaled_up() -> None:
    rng = np.random.default_rng(1)
    full_hd = Keyframe("k1", 1.0, DecodedImage(rng.integers(0, 255, (1080, 1920, 3), np.uint8), "video"))
    assert decoded_side(full_hd.review_copy) == (540, 960)
    assert decoded_side(full_hd.thumbnail) == (90, 160)
    small = Keyframe("k2", 1.0, DecodedImage(rng.integers(0, 255, (100, 200, 3), np.uint8), "camera"))
    assert decoded_side(small.review_copy) == (100, 200)


@pytest.mark.quick
def test_the_review_copy_is_read_apart_from_the_thumbnail_and_deleted_with_the_session(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("")
    log = SessionLog(path)
    log.save_thumbnail("e1", b"\xff\xd8small")
    assert read_thumbnail(path, "e1", large=True) is None, "an older session: no copy, not the thumbnail"
    log.save_thumbnail("e1", b"\xff\xd8large", large=True)
    assert read_thumbnail(path, "e1") == b"\xff\xd8small"
    assert read_thumbnail(path, "e1", large=True) == b"\xff\xd8large"
    assert read_thumbnail(path, "../e1", large=True) is None
    delete_session(path)
    assert not (tmp_path / "s.thumbs").exists()


@pytest.mark.quick
def test_a_planted_huge_or_fifo_picture_is_read_no_further_than_a_bound(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    folder = tmp_path / "s.thumbs"
    folder.mkdir()
    with open(folder / "e1.large.jpg", "wb") as fh:
        fh.truncate(64 << 20)
    os.mkfifo(folder / "e2.large.jpg")
    data = read_thumbnail(path, "e1", large=True)
    assert data is not None and len(data) == MAX_PICTURE_BYTES
    assert read_thumbnail(path, "e2", large=True) is None
