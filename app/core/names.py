"""How a name (a file name, a session id, an upload's name) is shown: for display only, never to open."""

from __future__ import annotations


def printable(text: str) -> str:
    """`text` as JSON, a UTF-8 stream, a terminal and a screen can take it.

    A file name that is not UTF-8 reaches Python with each bad byte as a lone
    surrogate (surrogateescape), which no UTF-8 writer accepts: it is shown as
    \\xNN, as repr() shows bytes. Other lone surrogates, control and other
    non-printable characters become \\xNN / \\uNNNN / \\UNNNNNNNN escapes.
    """
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escaped(ch) for ch in text)


def _escaped(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape's stand-in for the byte code - 0xDC00
        code -= 0xDC00
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
