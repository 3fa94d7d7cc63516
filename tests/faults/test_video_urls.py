"""Videos are opened as local files only.

FFmpeg inside OpenCV reads a name as a URL when it starts with a protocol and a colon,
even where a local file or folder has that name: before the fix, `watch http:127.0.0.1:<port>/clip.avi`
(a folder of that name holding clip.avi) fetched the clip from that host and analysed it
instead of the local file, and a local file named `tcp:127.0.0.1:<port>` was read from
that socket. Native sockets raise no audit event, so the privacy guard saw nothing.

`Remote` stands in for the remote host on loopback: it counts connections and serves a
video that differs from every local one (320x240 grey frames), so a test sees both
whether anything connected and whose frames were analysed.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest

from app.frames import video as video_module
from app.frames.video import CAPTURE_OPTIONS_ENV, VideoError, VideoFrames, capture_options, ffmpeg_protocol
from tests.conditions import HANG_S
from tests.integration.video import write_hands_video

ROOT = Path(__file__).resolve().parents[2]
SETTLE_S = 0.3  # a connection made during an open reaches the accept thread well within this


class Remote:
    """A loopback host: counts connections; answers an HTTP request, or a bare TCP connection, with `body`."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        self._count = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, name="remote-accept", daemon=True).start()

    def connections(self, settle: float = SETTLE_S) -> int:
        time.sleep(settle)
        with self._lock:
            return self._count

    def close(self) -> None:
        self._sock.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return  # closed
            with self._lock:
                self._count += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(1.0)
            head = b""
            try:
                while b"\r\n\r\n" not in head:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    head += chunk
            except OSError:
                pass  # FFmpeg's tcp protocol sends nothing: answer with the bare video
            reply = self.body
            if head.startswith((b"GET ", b"HEAD ")):
                reply = b"HTTP/1.1 200 OK\r\nContent-Type: video/x-msvideo\r\nContent-Length: %d\r\n" % len(reply)
                reply += b"Connection: close\r\n\r\n" + self.body
            try:
                conn.sendall(reply)
            except OSError:
                pass


def _write(path: Path, frames: list[np.ndarray], fps: int = 10) -> Path:
    # The writer is FFmpeg too, and takes a relative `http:host:port/...` for a URL: write to a plain name.
    height, width = frames[0].shape[:2]
    writer = cv2.VideoWriter(str(path.resolve()), cv2.VideoWriter.fourcc(*"MJPG"), fps, (width, height))
    for frame in frames:
        writer.write(frame)
    writer.release()
    return path


@pytest.fixture(scope="module")
def remote_clip(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    grey = np.full((240, 320, 3), 200, np.uint8)
    return _write(tmp_path_factory.mktemp("remote") / "remote.avi", [grey] * 20).read_bytes()


@pytest.fixture
def remote(remote_clip: bytes) -> Iterator[Remote]:
    host = Remote(remote_clip)
    yield host
    host.close()


@pytest.fixture(scope="module")
def local_clip(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[np.ndarray]]:
    """The local video (hands: no, yes, no; 2 s each) and its frames as read under a plain name."""
    path = tmp_path_factory.mktemp("local") / "plain.avi"
    write_hands_video(path.resolve(), seconds_per_phase=2)
    frames = [rgb for _, rgb in VideoFrames(path)]
    assert len(frames) == 60 and frames[0].shape == (256, 256, 3)
    return path, frames


def _assert_same_frames(got: list[np.ndarray], expected: list[np.ndarray]) -> None:
    assert len(got) == len(expected), f"{len(got)} frames of shape {got[0].shape if got else None}"
    assert all(np.array_equal(a, b) for a, b in zip(got, expected, strict=True))


def test_a_folder_named_like_an_http_url_holds_a_local_video(
    tmp_path: Path, remote: Remote, local_clip: tuple[Path, list[np.ndarray]], monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"http:127.0.0.1:{remote.port}/clip.avi"
    (tmp_path / name).parent.mkdir()
    shutil.copyfile(local_clip[0], tmp_path / name)
    monkeypatch.chdir(tmp_path)
    # Before the fix: 1 connection, and the remote host's 20 grey 320x240 frames came back.
    _assert_same_frames([rgb for _, rgb in VideoFrames(name)], local_clip[1])
    _assert_same_frames([rgb for _, rgb in VideoFrames(Path(name))], local_clip[1])
    assert remote.connections() == 0


def test_watch_analyses_the_local_file_a_url_like_name_names(
    tmp_path: Path, remote: Remote, local_clip: tuple[Path, list[np.ndarray]]
) -> None:
    name = f"http:127.0.0.1:{remote.port}/clip.avi"
    (tmp_path / name).parent.mkdir()
    shutil.copyfile(local_clip[0], tmp_path / name)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    env.pop(CAPTURE_OPTIONS_ENV, None)
    proc = subprocess.run(
        [sys.executable, "-m", "app", "watch", name, "--interval", "2"],
        cwd=tmp_path,  # where the relative name exists
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert proc.returncode == 0, proc.stderr
    answers = [e["observation"] for e in map(json.loads, proc.stdout.splitlines()) if e["kind"] == "practice"]
    assert [a for i, a in enumerate(answers) if i == 0 or answers[i - 1] != a] == ["no", "yes", "no"], answers
    assert remote.connections() == 0


def test_a_file_named_like_a_tcp_url_is_opened_as_that_file(
    tmp_path: Path, remote: Remote, local_clip: tuple[Path, list[np.ndarray]], monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"tcp:127.0.0.1:{remote.port}"
    shutil.copyfile(local_clip[0], tmp_path / name)
    monkeypatch.chdir(tmp_path)
    # Before the fix: 1 connection, and the frames the remote host sent down the socket.
    _assert_same_frames([rgb for _, rgb in VideoFrames(name)], local_clip[1])
    _assert_same_frames([rgb for _, rgb in VideoFrames(tmp_path / name)], local_clip[1])
    assert remote.connections() == 0


@pytest.mark.parametrize(
    "url",
    [
        "tcp:127.0.0.1:{port}",
        "tcp://127.0.0.1:{port}",
        "http://127.0.0.1:{port}/clip.avi",
        "http:127.0.0.1:{port}/clip.avi",
        "rtsp://127.0.0.1:{port}/stream",
        "subfile,,start,0,end,0,,:tcp://127.0.0.1:{port}",
    ],
)
def test_a_url_that_is_no_local_file_is_refused_before_opencv(
    url: str, tmp_path: Path, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_capture(*args: object) -> None:
        raise AssertionError(f"OpenCV was asked to open {args}")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(video_module.cv2, "VideoCapture", no_capture)
    name = url.format(port=remote.port)
    # Before the fix: "cannot open (No such file or directory)", which sends the user looking for a file.
    with pytest.raises(VideoError, match="only local video files are opened; .* looks like a URL"):
        VideoFrames(name)
    assert remote.connections() == 0


def test_a_missing_file_with_a_colon_is_still_just_missing(tmp_path: Path) -> None:
    with pytest.raises(VideoError, match=r"cannot open \(No such file"):
        VideoFrames(tmp_path / "take 2: hands.avi")


@pytest.mark.parametrize("user_options", [None, "protocol_whitelist;file,http,tcp|safe;0"])
@pytest.mark.parametrize("kind", ["m3u8", "ffconcat"])
def test_a_local_playlist_cannot_fetch_its_segments(
    kind: str, user_options: str | None, tmp_path: Path, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local playlist naming http segments. FFmpeg's file protocol already limits what a local
    file may open to file,crypto,data, so with no options set this passed before the fix too; but
    OPENCV_FFMPEG_CAPTURE_OPTIONS can widen that (a user's or another library's setting), and then,
    before the fix, the playlist fetched its segment from the remote host (1 connection)."""
    segment = f"http://127.0.0.1:{remote.port}/x.ts"
    playlist = tmp_path / f"list.{kind}"
    if kind == "m3u8":
        playlist.write_text(
            "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:0\n"
            f"#EXTINF:10.0,\n{segment}\n#EXT-X-ENDLIST\n"
        )
    else:
        playlist.write_text(f"ffconcat version 1.0\nfile '{segment}'\n")
    if user_options is None:
        monkeypatch.delenv(CAPTURE_OPTIONS_ENV, raising=False)
    else:
        monkeypatch.setenv(CAPTURE_OPTIONS_ENV, user_options)
    with pytest.raises(VideoError, match="not a video OpenCV can read"):
        VideoFrames(playlist)
    assert remote.connections() == 0
    assert os.environ[CAPTURE_OPTIONS_ENV] == capture_options(user_options)


def test_this_opencv_takes_the_protocol_whitelist_at_every_open(
    remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mechanism, on this OpenCV build: OPENCV_FFMPEG_CAPTURE_OPTIONS is read at each open
    (set after an open without it, it holds at the next), and protocol_whitelist;file keeps
    FFmpeg off the network even when it is handed a URL."""
    url = f"tcp://127.0.0.1:{remote.port}"

    def connections_made(options: str | None) -> int:
        if options is None:
            monkeypatch.delenv(CAPTURE_OPTIONS_ENV, raising=False)
        else:
            monkeypatch.setenv(CAPTURE_OPTIONS_ENV, options)
        before = remote.connections(settle=0)
        cv2.VideoCapture(url, cv2.CAP_FFMPEG).release()
        return remote.connections() - before

    assert connections_made(None) == 1  # the remote host sees FFmpeg's native sockets
    assert connections_made(capture_options(None)) == 0
    assert connections_made(capture_options("threads;1|protocol_whitelist;tcp")) == 0
    assert connections_made(None) == 1  # read again at this open, not cached


@pytest.mark.parametrize(
    ("name", "dos", "protocol"),
    [
        ("/tmp/http:x:1/clip.avi", False, "file"),
        ("/tcp:127.0.0.1:1", False, "file"),
        ("clip.avi", False, "file"),
        ("take 2: hands.avi", False, "file"),
        ("tcp:127.0.0.1:1", False, "tcp"),
        ("http:127.0.0.2:18802/clip.avi", False, "http"),
        ("https://example.invalid/a.mp4", False, "https"),
        ("rtmp+x://h", False, "rtmp+x"),
        ("file:clip.avi", False, "file"),
        ("subfile,,start,0,end,0,,:clip.avi", False, "subfile"),
        ("subfile,clip.avi", False, "file"),
        ("C:\\videos\\clip.avi", False, "C"),  # a drive letter is a protocol to FFmpeg built without DOS paths
        ("C:\\videos\\clip.avi", True, "file"),
        ("\\\\server\\share\\clip.avi", True, "file"),
    ],
)
def test_ffmpeg_protocol_follows_url_find_protocol(name: str, dos: bool, protocol: str) -> None:
    assert ffmpeg_protocol(name, dos_paths=dos) == protocol


@pytest.mark.parametrize(
    ("current", "expected"),
    [
        (None, "protocol_whitelist;file"),
        ("", "protocol_whitelist;file"),
        ("threads;2|rtsp_transport;tcp", "threads;2|rtsp_transport;tcp|protocol_whitelist;file"),
        ("protocol_whitelist;file,http,tcp|safe;0", "safe;0|protocol_whitelist;file"),
        ("PROTOCOL_WHITELIST;http|threads;1", "threads;1|protocol_whitelist;file"),  # FFmpeg keys ignore case
        ("garbage|threads;1", "threads;1|protocol_whitelist;file"),  # a bad pair would stop FFmpeg's parse
        ("protocol\\_whitelist;http|a;'x|y'", "protocol_whitelist;file"),  # escapes and quotes: dropped
        ("threads;2|protocol_whitelist;file", "threads;2|protocol_whitelist;file"),  # already ours: unchanged
    ],
)
def test_capture_options_keep_plain_user_options_and_force_the_whitelist(current: str | None, expected: str) -> None:
    assert capture_options(current) == expected
    assert capture_options(expected) == expected
