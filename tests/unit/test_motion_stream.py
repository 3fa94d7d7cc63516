"""The live camera's motion frames: the wire format the page's script sends, its checks, the hub that
routes a page's frames to its camera session, and the server's endpoint behind the origin guard."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from app.frames.motion_stream import (
    HEADER,
    BadMotionMessage,
    MotionFrame,
    MotionStreams,
    encode_frame,
    frame_of,
    page_of,
)
from tests.conditions import wait_until

PORT = 8550
OWN = {"host": f"127.0.0.1:{PORT}", "origin": f"http://127.0.0.1:{PORT}"}


def _grey(h: int = 144, w: int = 192, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (h, w), dtype=np.uint8)


def test_a_frame_goes_through_the_wire_format_unchanged() -> None:
    grey = _grey()
    frame = frame_of(encode_frame(MotionFrame(12.345, grey)))
    assert frame.t == 12.345 and frame.grey.shape == (144, 192)
    assert np.array_equal(frame.grey, grey)


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"", "shorter than its header"),
        (HEADER.pack(float("nan"), 32, 32) + bytes(32 * 32), "not a number"),
        (HEADER.pack(float("inf"), 32, 32) + bytes(32 * 32), "not a number"),
        (HEADER.pack(1.0, 4000, 3000) + bytes(100), "outside"),
        (HEADER.pack(1.0, 8, 8) + bytes(64), "outside"),
        (HEADER.pack(1.0, 32, 32) + bytes(32 * 32 - 1), "32x32 frame of 1023 bytes"),
        (HEADER.pack(1.0, 32, 32) + bytes(32 * 32 + 1), "32x32 frame of 1025 bytes"),
    ],
)
def test_a_frame_the_pages_script_would_never_send_is_refused_in_words(data: bytes, said: str) -> None:
    with pytest.raises(BadMotionMessage, match=said):
        frame_of(data)


@pytest.mark.parametrize(
    "hello", ["", "not json", "[]", '{"page": 3}', '{"page": ""}', json.dumps({"page": "x" * 65}), '{"page": "a\\nb"}']
)
def test_a_first_message_that_names_no_page_is_refused(hello: str) -> None:
    with pytest.raises(BadMotionMessage):
        page_of(hello)


def test_frames_go_only_to_the_page_that_has_a_camera_session_attached() -> None:
    streams = MotionStreams()
    got: list[float] = []

    def sink(frame: MotionFrame) -> None:
        got.append(frame.t)

    assert streams.sink("page-a") is None
    streams.attach("page-a", sink)
    assert streams.sink("page-a") is sink and streams.sink("page-b") is None
    streams.detach("page-a", lambda frame: None)  # another pump's sink: this one stays
    assert streams.sink("page-a") is sink
    streams.detach("page-a", sink)
    assert streams.sink("page-a") is None


def _client(streams: MotionStreams):
    from starlette.testclient import TestClient

    from app.ui.shell.web_shell import asgi_app

    return TestClient(asgi_app(lambda page: None, PORT, motion=streams), base_url=f"http://127.0.0.1:{PORT}")


def test_the_servers_endpoint_hands_each_frame_in_order_to_the_attached_session() -> None:
    streams = MotionStreams()
    got: list[MotionFrame] = []
    streams.attach("page-a", got.append)
    with _client(streams) as client, client.websocket_connect("/camera-motion", headers=OWN) as ws:
        ws.send_text(json.dumps({"page": "page-a"}))
        for i in range(5):
            ws.send_bytes(encode_frame(MotionFrame(float(i) / 30, _grey(seed=i))))
        ws.send_bytes(encode_frame(MotionFrame(1.0, _grey(seed=9))))
        assert wait_until(lambda: len(got) == 6, timeout=30), len(got)
    assert [f.t for f in got] == [0.0, 1 / 30, 2 / 30, 3 / 30, 4 / 30, 1.0]
    assert np.array_equal(got[2].grey, _grey(seed=2))


def test_the_servers_endpoint_closes_a_connection_that_sends_what_no_page_sends() -> None:
    from starlette.websockets import WebSocketDisconnect

    streams = MotionStreams()
    got: list[MotionFrame] = []
    streams.attach("page-a", got.append)
    with _client(streams) as client:
        with client.websocket_connect("/camera-motion", headers=OWN) as ws:
            ws.send_text(json.dumps({"page": "page-a"}))
            ws.send_bytes(struct.pack("<dHH", 1.0, 5000, 5000))
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_text()
        assert closed.value.code == 1003
        with client.websocket_connect("/camera-motion", headers=OWN) as ws:
            ws.send_bytes(b"frames before naming a page")
            with pytest.raises(WebSocketDisconnect):
                ws.receive_text()
    assert got == []


def test_a_foreign_origin_cannot_open_the_motion_endpoint() -> None:
    from starlette.websockets import WebSocketDisconnect

    with _client(MotionStreams()) as client:
        with pytest.raises(WebSocketDisconnect):
            with client.websocket_connect("/camera-motion", headers={**OWN, "origin": "http://evil.example"}):
                pass
