"""Runs a command under `strace -ff -e trace=network` and reads back what every process tried.

`-ff` writes one file per process, so no call is split across lines by another
process's; each line is `name(args) = result [ERRNO (text)]`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# Calls that reach an address: a connection attempt, a datagram, or a listening socket's address.
ADDRESSED = ("connect", "sendto", "sendmsg", "sendmmsg", "bind")
_LINE = re.compile(r"^(?P<name>\w+)\((?P<args>.*)\)\s+=\s+(?P<result>-?\d+)(?:\s+(?P<errno>E[A-Z]+))?")
_FAMILY = re.compile(r"sa_family=(AF_\w+)")
_PORT = re.compile(r"sin6?_port=htons\((\d+)\)")
_HOST = re.compile(r'inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"')


@dataclass(frozen=True)
class Call:
    pid: int
    name: str
    family: str
    host: str
    port: int
    errno: str  # "" when the call succeeded

    @property
    def internet(self) -> bool:
        return self.family in ("AF_INET", "AF_INET6")

    @property
    def loopback(self) -> bool:
        return self.host.startswith("127.") or self.host in ("::1", "::ffff:127.0.0.1")

    def __str__(self) -> str:
        outcome = self.errno or "ok"
        return f"pid {self.pid}: {self.name} {self.family} {self.host}:{self.port} -> {outcome}"


def strace_prefix(strace: str, folder: Path) -> list[str]:
    return [strace, "-ff", "-qq", "-e", "trace=network", "-o", str(folder / "trace")]


def addressed_calls(folder: Path) -> tuple[list[Call], int]:
    """Every connect/send/bind that named an address, in every traced process; and how many processes there were."""
    files = sorted(folder.glob("trace.*"))
    calls = []
    for path in files:
        pid = int(path.suffix.lstrip("."))
        for line in path.read_text(errors="replace").splitlines():
            match = _LINE.match(line)
            if match is None or match["name"] not in ADDRESSED:
                continue
            family = _FAMILY.search(match["args"])
            if family is None:
                continue  # a send on a connected socket (NULL address): its connect or accept was seen
            host = _HOST.search(match["args"])
            port = _PORT.search(match["args"])
            calls.append(
                Call(
                    pid,
                    match["name"],
                    family.group(1),
                    (host.group(1) or host.group(2)) if host else "",
                    int(port.group(1)) if port else 0,
                    match["errno"] or "",
                )
            )
    return calls, len(files)


def isolation_probes(calls: list[Call]) -> list[Call]:
    """The datagram each isolated process sends itself to 127.0.0.1:9 (app.privacy.isolation), which must fail."""
    return [c for c in calls if c.name == "sendto" and c.internet and c.host == "127.0.0.1" and c.port == 9]
