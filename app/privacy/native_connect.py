"""A connect() straight through libc, the way MNN or FFmpeg would make one.

Python's audit hook never sees it, so it shows what the OS alone allows: the
doctor command and the privacy tests use it against a loopback listener.
"""

from __future__ import annotations

import ctypes
import os
import socket
import struct
import sys


def _sockaddr_in(host: str, port: int) -> bytes:
    address = socket.inet_aton(host) + bytes(8)
    if sys.platform == "darwin" or "bsd" in sys.platform:  # BSD layout: sin_len, then a one-byte family
        return struct.pack("!BBH", 16, socket.AF_INET, port) + address
    return struct.pack("=H", socket.AF_INET) + struct.pack("!H", port) + address


def native_connect(host: str, port: int) -> str | None:
    """Connects a TCP socket to host:port with libc's socket()/connect(); None on success, else the error."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.socket(socket.AF_INET, socket.SOCK_STREAM, 0)
    if fd < 0:
        return os.strerror(ctypes.get_errno())
    try:
        raw = _sockaddr_in(host, port)
        if libc.connect(fd, ctypes.c_char_p(raw), len(raw)) != 0:
            return os.strerror(ctypes.get_errno())
        return None
    finally:
        libc.close(fd)
