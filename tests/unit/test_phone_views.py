"""The generated phone views (tools/demo_model/phone_views.py) that `bench.rhythm_views` scores the rhythm
on: their ground truth is what happened in the frames. Seeds here are not the benchmark's."""

from __future__ import annotations

import numpy as np
import pytest
from demo_model.phone_views import NEGATIVE_KINDS, VIEWS, PhoneSpec, make_phone_video, phone_set

SMALL = {"width": 96, "height": 72, "fps": 15.0}


def test_the_same_seed_makes_the_same_video_and_another_seed_another() -> None:
    spec = PhoneSpec(view="oblique", seconds=2, vfr=True, shake=1.0, **SMALL)
    a, b, c = make_phone_video(spec, 5), make_phone_video(spec, 5), make_phone_video(spec, 6)
    assert np.array_equal(a.times, b.times) and all(
        np.array_equal(x, y) for x, y in zip(a.frames, b.frames, strict=True)
    )
    assert not all(np.array_equal(x, y) for x, y in zip(a.frames, c.frames, strict=False))
    assert (np.diff(a.times) > 0).all() and a.frames[0].shape == (72, 96, 3)


def test_a_30_to_2_video_pauses_after_every_30_compressions_and_its_truth_adds_up() -> None:
    video = make_phone_video(PhoneSpec(view="side", seconds=42, rate_per_min=120, cycles_30_2=True, **SMALL), 7)
    bottoms = np.array(video.truth.compression_times)
    assert video.truth.pauses, "a ventilation pause"
    start, length = video.truth.pauses[0]
    assert 4 <= length <= 7 and int((bottoms < start).sum()) == 30
    assert not ((bottoms > start) & (bottoms < start + length)).any()
    paused = sum(min(s + n, 42) - s for s, n in video.truth.pauses)
    assert video.truth.ccf == pytest.approx(1 - paused / 42, abs=0.01)
    inside = (video.times > start + 0.1) & (video.times < start + length - 0.1)
    assert not video.truth.compressing[inside].any() and (video.truth.depth_px[inside] == 0).all()
    # Strokes are jittered, not a metronome, but the rate holds.
    assert 60 / np.median(np.diff(bottoms[:30])) == pytest.approx(120, abs=3)


@pytest.mark.parametrize("kind", NEGATIVE_KINDS)
def test_a_person_moving_without_compressing_has_no_compression_in_its_truth(kind: str) -> None:
    video = make_phone_video(PhoneSpec(view="front", seconds=2, rate_per_min=None, negative=kind, **SMALL), 3)
    assert video.truth.compression_times == () and not video.truth.compressing.any() and video.truth.ccf == 0
    moved = max(float(np.abs(f.astype(int) - video.frames[0]).mean()) for f in video.frames[1:])
    assert moved > 0.05, "the person moves"


def test_the_set_has_every_view_and_every_kind_of_person_moving() -> None:
    specs = [spec for _, spec, _ in phone_set(1, 14, 20)]
    assert {s.view for s in specs if s.rate_per_min is not None} == set(VIEWS)
    assert {s.negative for s in specs if s.rate_per_min is None} == set(NEGATIVE_KINDS)
    with pytest.raises(ValueError):
        PhoneSpec(view="underwater")
