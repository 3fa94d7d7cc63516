"""A real HTTP/1.1 file server on 127.0.0.1 that misbehaves on request.

Faults are set per URL path (and may be changed while a download runs): cut
the connection at given file offsets, ignore Range, answer a range with a
wrong Content-Range, flip bytes, answer with queued error statuses, stall,
throttle, send a body without Content-Length, pad the file to a larger size,
stream zeros after it without end (a mirror filling the disk), say nothing before
answering, or answer `100 Continue` again and again and never with the file. Every request is recorded
with its Range header, status and the body bytes actually written, so tests
can assert what was fetched twice and what was not.
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import unquote, urlsplit

_CHUNK = 16 * 1024


@dataclass
class Faults:
    cut_at: list[int] = field(default_factory=list)  # file offsets; a response reaching the next one ends there
    ignore_range: bool = False  # always 200 with the whole file
    range_shift: int = 0  # 206 bodies start this many bytes early (and say so)
    corrupt_at: list[int] = field(default_factory=list)  # file offsets whose byte is flipped...
    corrupt_responses: int | None = None  # ...in the first N responses (None: in all)
    statuses: list[tuple[int, dict[str, str]]] = field(default_factory=list)  # served first, one per request
    stall_after: int | None = None  # the first response pauses after this many bytes...
    stall_s: float = 0.0  # ...for this long, then the connection closes
    rate_bps: float | None = None  # throttle (read on every chunk: may change mid-response)
    no_length: bool = False  # close-delimited body without Content-Length
    extra_headers: dict[str, str] = field(default_factory=dict)  # added to file responses
    inflate_to: int | None = None  # serve the file padded with zeros to this size (Content-Length says so)
    endless: bool = False  # after the file, zeros until the client hangs up (no Content-Length)
    silent_s: float = 0.0  # says nothing at all for this long before answering
    interim_every_s: float | None = None  # only `100 Continue`, again every this many seconds, until the client leaves


@dataclass(frozen=True)
class Seen:
    seq: int  # arrival order (a stalled request is logged when it ends, after later ones)
    path: str
    range: str | None
    status: int
    start: int  # file offset of the first body byte
    sent: int  # body bytes written to the socket
    accept_encoding: str | None = None


class FaultyServer:
    def __init__(self, files: dict[str, bytes], faults: dict[str, Faults] | None = None) -> None:
        self.faults = faults or {}  # URL path -> Faults
        # URL path -> content, padded once here: padding (and copying) tens of MB per request kept a
        # loaded machine from sending the headers within a test policy's half-second read timeout.
        self.files = {path: self._inflated(path, data) for path, data in files.items()}
        self._lock = threading.Lock()
        self._seen: list[Seen] = []
        self._responses: dict[str, int] = {}
        self._arrivals = 0
        self.stopping = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _Handler, self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="faulty-server", daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> FaultyServer:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def stop(self) -> None:
        self.stopping.set()  # releases stalled and throttled responses
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    @property
    def arrivals(self) -> int:
        """Requests that have arrived, answered or not (a stalled one is `seen` only when it ends)."""
        with self._lock:
            return self._arrivals

    def seen(self, path: str | None = None) -> list[Seen]:
        with self._lock:
            return sorted((s for s in self._seen if path is None or s.path == path), key=lambda s: s.seq)

    def bytes_sent(self, path: str | None = None) -> int:
        return sum(s.sent for s in self.seen(path))

    def _inflated(self, path: str, data: bytes) -> bytes:
        """The file as served: padded with zeros to its Faults' `inflate_to` (Content-Length says so)."""
        size = self.faults.get(path, Faults()).inflate_to
        return data + bytes(size - len(data)) if size is not None and size > len(data) else data

    def record(self, seen: Seen) -> None:
        with self._lock:
            self._seen.append(seen)

    def next_seq(self) -> int:
        with self._lock:
            self._arrivals += 1
            return self._arrivals

    def next_response_index(self, path: str) -> int:
        with self._lock:
            index = self._responses.get(path, 0)
            self._responses[path] = index + 1
            return index

    def take_status(self, faults: Faults) -> tuple[int, dict[str, str]] | None:
        with self._lock:
            return faults.statuses.pop(0) if faults.statuses else None

    def take_cut(self, faults: Faults, start: int) -> int | None:
        with self._lock:
            while faults.cut_at and faults.cut_at[0] <= start:
                faults.cut_at.pop(0)  # already behind this response: cannot apply
            return faults.cut_at.pop(0) if faults.cut_at else None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], owner: FaultyServer) -> None:
        super().__init__(address, handler)
        self.owner = owner


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # keeps test output clean
        pass

    def do_GET(self) -> None:  # noqa: C901 (one branch per fault the server plays; a table would hide them)
        owner = self.server.owner
        path = unquote(urlsplit(self.path).path)
        range_header = self.headers.get("Range")
        encoding = self.headers.get("Accept-Encoding")
        seq = owner.next_seq()
        data = owner.files.get(path)
        faults = owner.faults.get(path, Faults())
        if faults.silent_s:
            owner.stopping.wait(faults.silent_s)
        if faults.interim_every_s is not None:
            self._interim_until_gone(faults.interim_every_s)
            owner.record(Seen(seq, path, range_header, 100, 0, 0, encoding))
            return
        queued = owner.take_status(faults)  # before the 404, so a path can be a pure redirect
        if queued is not None:
            self._reply_empty(*queued)
            owner.record(Seen(seq, path, range_header, queued[0], 0, 0, encoding))
            return
        if data is None:
            self._reply_empty(404, {})
            owner.record(Seen(seq, path, range_header, 404, 0, 0, encoding))
            return
        size = len(data)
        start, status = 0, 200
        match = re.fullmatch(r"bytes=(\d+)-", range_header or "")
        if match and not faults.ignore_range:
            start, status = int(match.group(1)), 206
            if start >= size:
                self._reply_empty(416, {"Content-Range": f"bytes */{size}"})
                owner.record(Seen(seq, path, range_header, 416, 0, 0, encoding))
                return
            start = max(0, start - faults.range_shift)
        index = owner.next_response_index(path)
        body: bytes | bytearray | memoryview = memoryview(data)[start:]  # no copy unless bytes are corrupted
        if faults.corrupt_at and (faults.corrupt_responses is None or index < faults.corrupt_responses):
            body = bytearray(body)
            for offset in faults.corrupt_at:
                if start <= offset < size:
                    body[offset - start] ^= 0xFF
        cut = owner.take_cut(faults, start)
        end = min(size, cut) if cut is not None else size
        stall_at = faults.stall_after if index == 0 else None

        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Accept-Ranges", "bytes")
        for name, value in faults.extra_headers.items():
            self.send_header(name, value)
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
        if faults.no_length or faults.endless:
            self.send_header("Connection", "close")
        else:
            self.send_header("Content-Length", str(size - start))
        self.end_headers()

        sent = 0
        try:
            while start + sent < end:
                if stall_at is not None and sent >= stall_at:
                    owner.stopping.wait(faults.stall_s)
                    break
                limit = end - start - sent
                if stall_at is not None:
                    limit = min(limit, stall_at - sent)
                piece = bytes(body[sent : sent + min(_CHUNK, limit)])
                self.wfile.write(piece)
                self.wfile.flush()
                sent += len(piece)
                if faults.rate_bps and owner.stopping.wait(len(piece) / faults.rate_bps):
                    break
            while faults.endless and not owner.stopping.is_set():
                self.wfile.write(bytes(_CHUNK))
                sent += _CHUNK
                if faults.rate_bps and owner.stopping.wait(_CHUNK / faults.rate_bps):
                    break
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            owner.record(Seen(seq, path, range_header, status, start, sent, encoding))
        if start + sent < size or faults.no_length or faults.endless:
            # A cut: FIN after the bytes sent, so the client gets every one of them, then EOF.
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_WR)

    def _interim_until_gone(self, every_s: float) -> None:
        """Interim answers keep the connection busy, so no read on the client's side ever times out."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            while not self.server.owner.stopping.is_set():
                self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                self.wfile.flush()
                self.server.owner.stopping.wait(every_s)

    def _reply_empty(self, status: int, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.end_headers()
