"""Frames of a video file, with their timestamps.

A damaged frame is skipped and counted, never the end of the video: OpenCV's
read() fails at a broken frame although the frames after it decode, so reading
goes on (a failed read moves past the frame) until MAX_CONSECUTIVE_FAILURES.
A header is not trusted: a frame rate outside MIN_FPS..MAX_FPS gives way to the
frames' own container times when they are plausible (Matroska keeps one per
block, whatever its header's default duration says), else to ASSUMED_FPS; either
is said, and a guessed clock is marked (`VideoStats.clock`) so the rhythm measured
on it says so wherever it is shown. Frames smaller than the still-image minimum are refused,
and a file whose position stops advancing ends the iteration.

Only local files are opened: FFmpeg reads a name such as `tcp:127.0.0.1:80`
or `http:host:80/clip.avi` as a URL even where a local file or folder has that name, and
its sockets are native, so no Python audit hook sees them. `open_local_video` is the one
place a video is opened: it hands OpenCV's FFmpeg backend only the absolute, resolved path
of an existing regular file (a name starting with '/' is always FFmpeg's file protocol),
refuses a name that is no file here and looks like a URL, and limits FFmpeg's protocols to
`file` for everything the file may reference (a playlist's segments, a concat list).
"""

from __future__ import annotations

import itertools
import math
import os
import re
import stat
import string
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from app.core.notice import Notice
from app.frames.intake import display_name
from app.frames.limits import MAX_PIXELS, MIN_SIDE

MIN_FPS, MAX_FPS = 1.0, 1000.0
ASSUMED_FPS = 30.0
# Frames skipped in a row before the rest of the file is given up (a truncated file).
MAX_CONSECUTIVE_FAILURES = 64
# With fps >= MIN_FPS, consecutive frames are at most this far apart.
MAX_REALTIME_GAP_S = 1.0 / MIN_FPS

# OpenCV passes this variable to FFmpeg's avformat_open_input as `key;value|key;value`.
CAPTURE_OPTIONS_ENV = "OPENCV_FFMPEG_CAPTURE_OPTIONS"
PROTOCOL_WHITELIST = "file"


class VideoError(ValueError):
    """A file that is not a usable video. `reason` is a stable code (the screen words it per language)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass
class VideoStats:
    frames: int = 0  # decoded and yielded
    damaged: int = 0  # skipped between good frames because they could not be decoded
    unread_at_end: int = 0  # frames the header announces after the last one that could be read
    fps: float = ASSUMED_FPS  # the rate the timestamps use
    clock: str = "header"  # what times the frames: "header", the frames' own "timestamps", or "guessed"
    declared_fps: float | None = None  # what the header says
    frame_count: int | None = None  # what the header says, when it says
    stopped: Notice | None = None  # why reading ended before the header's frame count
    notes: list[Notice] = field(default_factory=list)  # e.g. the frame rate that was not believed

    def notices(self) -> list[Notice]:
        """What a user should know about how the file was read; none for a clean file. Each also keeps
        its English line for the command line as `detail`."""
        said = list(self.notes)
        if self.damaged:
            detail = f"{self.damaged} damaged frame(s) skipped; {self.frames} frame(s) used"
            said.append(Notice.of("video_damaged", damaged=self.damaged, frames=self.frames, detail=detail))
        if self.stopped:
            said.append(self.stopped)
        return said

    def summary(self) -> list[str]:
        """Lines for stderr; empty for a clean file."""
        return [notice.value("detail") for notice in self.notices()]


class VideoFrames:
    """Iterate (seconds from the start, RGB frame); read `.stats` during or after.

    Raises VideoError at construction for a file that is not a usable video
    (missing, not a regular file, unreadable, too small, too large) and from the
    iteration if no frame at all can be decoded. Use as a context manager, or
    iterate to the end, so the capture is released.
    """

    def __init__(self, path: str | os.PathLike[str], max_consecutive_failures: int = MAX_CONSECUTIVE_FAILURES) -> None:
        self.path = Path(path)
        self._given = os.fspath(path)  # as given: Path() turns `http://x` into `http:/x`
        self.name = display_name(path)
        self.max_consecutive_failures = max_consecutive_failures
        self.stats = VideoStats()
        self._capture = self._open()

    def _open(self) -> cv2.VideoCapture:
        name = self.name
        capture = open_local_video(self._given, name)
        try:
            if not capture.isOpened():
                raise VideoError("not_a_video", f"{name}: not a video OpenCV can read")
            width = int(_prop(capture, cv2.CAP_PROP_FRAME_WIDTH))
            height = int(_prop(capture, cv2.CAP_PROP_FRAME_HEIGHT))
            if width > 0 and height > 0:
                _check_size(name, width, height)
            declared = _prop(capture, cv2.CAP_PROP_FPS)
            count = _prop(capture, cv2.CAP_PROP_FRAME_COUNT)
        except BaseException:
            capture.release()
            raise
        stats = self.stats
        stats.declared_fps = declared if math.isfinite(declared) and declared > 0 else None
        stats.frame_count = int(count) if math.isfinite(count) and 0 < count < 2**31 else None
        if MIN_FPS <= declared <= MAX_FPS:
            stats.fps = declared
            return capture
        shown = f"{declared:g} fps" if stats.declared_fps else "no frame rate"
        try:
            rate = _rate_of_frame_times(self._given, name)
        except BaseException:
            capture.release()
            raise
        if rate is not None:
            stats.fps, stats.clock = rate, "timestamps"
            if stats.frame_count is not None and stats.declared_fps:
                # Where the header's count is its duration at its rate (Matroska), it scales with the rate.
                stats.frame_count = max(1, round(stats.frame_count * rate / stats.declared_fps))
            detail = f"the file's header gives {shown}; the frames' own times are used ({rate:.3g} fps)"
            stats.notes.append(Notice.of("video_fps_from_frames", fps=f"{rate:.3g}", detail=detail))
        else:
            stats.clock = "guessed"
            detail = f"the file's header gives {shown}; timestamps assume {ASSUMED_FPS:g} fps"
            stats.notes.append(Notice.of("video_fps_assumed", fps=f"{ASSUMED_FPS:g}", detail=detail))
        return capture

    def __enter__(self) -> VideoFrames:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._capture.release()

    def __iter__(self) -> Iterator[tuple[float, np.ndarray]]:
        try:
            yield from self._frames()
        finally:
            self.close()

    def _frames(self) -> Iterator[tuple[float, np.ndarray]]:
        stats, capture = self.stats, self._capture
        believed = stats.clock != "guessed"
        index = 0  # index of the next frame
        failures = 0  # consecutive reads that decoded nothing
        stuck = 0  # consecutive good reads whose position did not advance
        last_pos, last_t = -1.0, -1.0
        pictured = False  # a frame that is not one flat colour was read
        while True:
            rgb = self._read()
            if rgb is None:
                total = stats.frame_count
                if total is None or index + failures >= total or failures >= self.max_consecutive_failures:
                    if total is not None and index < total and failures:
                        stats.unread_at_end = unread = total - index
                        detail = (
                            f"the last {unread} of the {total} frames the header announces could not be "
                            "decoded; the file may be truncated"
                        )
                        stats.stopped = Notice.of("video_truncated", unread=unread, total=total, detail=detail)
                    break  # the end (a header without a count cannot tell damage from the end)
                failures += 1  # a failed read() moves past the damaged frame: read on
                continue
            pos = _prop(capture, cv2.CAP_PROP_POS_FRAMES)
            stuck = stuck + 1 if pos <= last_pos else 0
            last_pos = max(last_pos, pos)
            if stuck > self.max_consecutive_failures:
                detail = f"stopped at frame {index}: the file's position no longer advances"
                stats.stopped = Notice.of("video_stalled", frame=index, detail=detail)
                break
            if stats.frames == 0:
                _check_size(self.name, rgb.shape[1], rgb.shape[0])
            stats.damaged += failures
            index += failures
            failures = 0
            # The container's clock survives frames the decoder dropped without a word; the
            # frame count is the fallback (and the only clock when the header's rate is not believed).
            # (OpenCV's position is already relative to the stream's start; 0 when unknown.)
            ms = _prop(capture, cv2.CAP_PROP_POS_MSEC)
            t = ms / 1000.0 if believed and ms > 0 else index / stats.fps
            t = max(t, last_t + 1e-6) if last_t >= 0 else max(t, 0.0)
            last_t = t
            index = max(index, round(t * stats.fps)) + 1
            stats.frames += 1
            pictured = pictured or bool(rgb.min() != rgb.max())
            yield t, rgb
        if stats.frames == 0:
            raise VideoError("no_frames", f"{self.name}: no frame could be decoded")
        if not pictured:
            # FFmpeg reads some random bytes as a raw H.263 stream of one black frame (about one file in
            # 4,000): a file without a single picture is refused, not answered as if it showed something.
            raise VideoError("no_picture", f"{self.name}: every frame is one flat colour, no picture to analyse")

    def _read(self) -> np.ndarray | None:
        try:
            ok, bgr = self._capture.read()
        except Exception:
            return None
        if not ok or bgr is None or bgr.ndim != 3 or bgr.shape[2] != 3 or bgr.dtype != np.uint8:
            return None
        return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)


# Frames read to judge the container's own frame times when the header's rate is not believed.
_TIME_PROBE_FRAMES = 5


def _rate_of_frame_times(path: str, name: str) -> float | None:
    """The frame rate the file's first frames' container times give, when they are plausible; None
    when they are absurd too (an AVI times its frames by the very header rate that was refused) or
    missing (OpenCV then derives them from that header rate). A second capture: the main one must
    still start at the first frame."""
    capture = open_local_video(path, name)
    try:
        times = []
        for _ in range(_TIME_PROBE_FRAMES):
            if not capture.grab():
                break
            times.append(_prop(capture, cv2.CAP_PROP_POS_MSEC) / 1000.0)
    finally:
        capture.release()
    gaps = sorted(b - a for a, b in itertools.pairwise(times))
    if not gaps or gaps[0] <= 0:
        return None
    rate = 1.0 / gaps[len(gaps) // 2]
    return rate if MIN_FPS <= rate <= MAX_FPS else None


def open_local_video(path: str | os.PathLike[str], name: str) -> cv2.VideoCapture:
    """Open the local video file `path` (`name` is for messages); never a URL, never the network.

    Raises VideoError for a name that is no file here (saying so when it looks like a URL),
    for anything but a non-empty regular file, and when OpenCV cannot open it.
    """
    given = os.fspath(path)
    try:
        # The absolute, resolved path is what FFmpeg gets: a relative `tcp:host:port` is a URL to it.
        local = os.path.realpath(given)
        info = os.stat(local)
    except (OSError, ValueError) as exc:
        if ffmpeg_protocol(given) != "file":
            raise VideoError(
                "not_local",
                f"{name}: only local video files are opened; there is no such file and the name looks like a URL",
            ) from exc
        raise VideoError("cannot_open", f"{name}: cannot open ({getattr(exc, 'strerror', None) or exc})") from exc
    # Only a regular file is handed to OpenCV: a FIFO or device would block it.
    if not stat.S_ISREG(info.st_mode):
        raise VideoError("not_a_file", f"{name}: not a regular file")
    if info.st_size == 0:
        raise VideoError("empty_file", f"{name}: the file is empty")
    try:
        return _open_capture(local)
    except VideoError:
        raise
    except Exception as exc:
        raise VideoError("not_a_video", f"{name}: not a video OpenCV can read ({exc})") from exc


# FFmpeg's url_find_protocol (libavformat/avio.c): the longest prefix of these characters,
# followed by ':', names the protocol; anything else is the file protocol. A DOS path (`C:`)
# is a file on Windows builds only (HAVE_DOS_PATHS).
_URL_SCHEME_CHARS = string.ascii_letters + string.digits + "+-."


def ffmpeg_protocol(name: str, dos_paths: bool = os.name == "nt") -> str:
    """The protocol FFmpeg picks for `name`: "file" for a local path, else the URL's scheme."""
    end = len(name) - len(name.lstrip(_URL_SCHEME_CHARS))
    subfile = name.startswith("subfile,") and ":" in name[end + 1 :]
    is_dos = dos_paths and len(name) > 1 and name[1] == ":"
    if (name[end : end + 1] != ":" and not subfile) or is_dos:
        return "file"
    return name[:end]


def capture_options(current: str | None) -> str:
    """`current` (OPENCV_FFMPEG_CAPTURE_OPTIONS) with FFmpeg's protocols limited to `file`.

    Plain `key;value` entries are kept; any protocol_whitelist (FFmpeg's option names
    are matched without case), and anything with quotes or backslashes FFmpeg would
    unescape, is dropped. Ours comes last: FFmpeg takes the last value of a key.
    """
    kept = []
    for entry in (current or "").split("|"):
        entry = entry.strip()
        key = entry.partition(";")[0].strip().lower()
        if _PLAIN_OPTION.fullmatch(entry) and key != "protocol_whitelist":
            kept.append(entry)
    return "|".join([*kept, f"protocol_whitelist;{PROTOCOL_WHITELIST}"])


_PLAIN_OPTION = re.compile(r"[A-Za-z0-9_]+;[^|'\\]*")
_OPTIONS_LOCK = threading.Lock()


def _limit_ffmpeg_protocols() -> None:
    """Make OpenCV's FFmpeg backend take only the file protocol for the next open.

    OpenCV has no capture property for FFmpeg's protocol_whitelist; its FFmpeg backend
    reads OPENCV_FFMPEG_CAPTURE_OPTIONS with getenv() at every open (checked on
    opencv-python 5.0.0 / libavformat 62.12: a value set after earlier opens takes effect
    at the next one, tests/faults/test_video_urls.py). So it is set here, right before
    each capture, keeping the user's other options; written only when it differs, since
    setenv races native getenv calls in other threads.
    """
    with _OPTIONS_LOCK:
        current = os.environ.get(CAPTURE_OPTIONS_ENV)
        wanted = capture_options(current)
        if current != wanted:
            os.environ[CAPTURE_OPTIONS_ENV] = wanted


def _open_capture(local: str) -> cv2.VideoCapture:
    """OpenCV's FFmpeg backend on `local`, an absolute resolved path (see open_local_video).

    FFmpeg only, by name: another backend may read a file name its own way (GStreamer
    parses `a ! b` as a pipeline, the image-sequence backend expands `%d`).
    """
    try:
        local.encode("utf-8")
    except UnicodeEncodeError:
        # A name that is not UTF-8 (lone surrogates) crashes cv2.VideoCapture (SIGSEGV, found by
        # the fault corpus): open it through a UTF-8 alias, removed once the file is open.
        with tempfile.TemporaryDirectory(prefix="keyframe-video-") as folder:
            alias = os.path.join(
                os.path.abspath(folder), "video" + "".join(c for c in Path(local).suffix if c.isascii())
            )
            os.symlink(os.fsencode(local), os.fsencode(alias))
            return _ffmpeg_capture(alias)
    return _ffmpeg_capture(local)


def _ffmpeg_capture(local: str) -> cv2.VideoCapture:
    if not os.path.isabs(local) or ffmpeg_protocol(local) != "file":
        raise VideoError("not_local", f"{display_name(local)}: only local video files are opened")
    _limit_ffmpeg_protocols()
    return cv2.VideoCapture(local, cv2.CAP_FFMPEG)


def _prop(capture: cv2.VideoCapture, prop: int) -> float:
    try:
        value = float(capture.get(prop))
    except Exception:
        return 0.0
    return value if math.isfinite(value) else 0.0


def _check_size(name: str, width: int, height: int) -> None:
    if min(width, height) < MIN_SIDE:
        raise VideoError("too_small", f"{name}: {width}x{height} frames are smaller than {MIN_SIDE} px")
    if width * height > MAX_PIXELS:
        raise VideoError(
            "too_large", f"{name} has {width}x{height} frames, over the limit of {MAX_PIXELS / 1e6:g} megapixels"
        )


def iter_video_frames(path: Path) -> Iterator[tuple[float, np.ndarray]]:
    """Yields (seconds from the start, RGB frame) for every decodable frame."""
    yield from VideoFrames(path)


class RealtimeClock:
    """How long to wait before showing the frame at `t`, at playback speed.

    Never longer than `max_gap`: a gap in the timestamps (skipped frames, a lying
    header) moves the clock on instead of stalling the player.
    """

    def __init__(self, max_gap: float = MAX_REALTIME_GAP_S, now: Callable[[], float] = time.monotonic) -> None:
        self.max_gap = max_gap
        self._now = now
        self._origin: float | None = None  # wall-clock time of t = 0

    def delay(self, t: float) -> float:
        now = self._now()
        if self._origin is None:
            self._origin = now - t
        wait = self._origin + t - now
        if wait > self.max_gap:
            self._origin -= wait - self.max_gap
            wait = self.max_gap
        return max(0.0, wait)
