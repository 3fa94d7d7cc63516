"""A loopback TCP relay whose open connections a test can cut, as a dropped Wi-Fi or a locked
phone cuts a browser's WebSocket; new connections go through as before.

The browser talks to the relay's port, so its requests name that port in `Host` and `Origin`;
the app answers only requests naming its own (app.privacy.origin_guard). The relay rewrites
the one into the other in what the browser sends, as a transparent network path would leave them."""

from __future__ import annotations

import contextlib
import socket
import threading


class TcpRelay:
    def __init__(self, target_port: int) -> None:
        self._target = ("127.0.0.1", target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._ours = f"127.0.0.1:{self.port}".encode()
        self._theirs = f"127.0.0.1:{target_port}".encode()
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self.accepted = 0  # connections relayed so far
        self._threads: list[threading.Thread] = []
        self._closed = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> TcpRelay:
        self._spawn(self._accept)
        return self

    def __exit__(self, *exc: object) -> None:
        self._closed = True
        self._listener.close()
        self.cut()
        for thread in self._threads:
            thread.join(5)

    def cut(self) -> int:
        """Closes every connection open now; returns how many there were."""
        with self._lock:
            sockets, self._open = self._open, []
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        return len(sockets) // 2

    def _spawn(self, target: object, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)  # type: ignore[arg-type]
        thread.start()
        self._threads.append(thread)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
                upstream = socket.create_connection(self._target)
            except OSError:
                continue
            with self._lock:
                self._open += [client, upstream]
                self.accepted += 1
            self._spawn(self._relay, client, upstream)

    def _relay(self, client: socket.socket, upstream: socket.socket) -> None:
        """Both directions; once they end the pair is no longer open (cut counts open connections only)."""
        back = threading.Thread(target=self._pump, args=(upstream, client), daemon=True)
        back.start()
        self._pump(client, upstream, (self._ours, self._theirs))
        back.join()
        with self._lock:
            if client in self._open:
                self._open.remove(client)
                self._open.remove(upstream)
        for sock in (client, upstream):
            sock.close()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket, rewrite: tuple[bytes, bytes] | None = None) -> None:
        """`rewrite`: (old, new) replaced in the request headers (a websocket's frames are masked, so
        their bytes never spell the address; headers arrive whole in one read on loopback)."""
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data.replace(*rewrite) if rewrite else data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)
