"""A real nginx on 127.0.0.1, started by the test as a foreground subprocess.

Everything it writes (pid, logs, temp files) stays in the test's folder. The
access log records each request's Range header and body bytes sent, which is
what the resume tests assert on.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from tests.conditions import wait_until

LOG_FORMAT = "$uri|$status|$body_bytes_sent|$http_range"


def nginx_binary() -> str | None:
    found = shutil.which("nginx")
    if found:
        return found
    for candidate in ("/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"):
        if Path(candidate).is_file():
            return candidate
    return None


@dataclass(frozen=True)
class Logged:
    path: str
    status: int
    sent: int
    range: str | None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Nginx:
    def __init__(self, binary: str, docroot: Path, workdir: Path, locations: Mapping[str, str] | None = None) -> None:
        self._binary = binary
        self.docroot = docroot
        self.workdir = workdir
        # More prefixes serving the docroot, each with its directives, e.g. {"/r50/": "limit_rate 50m;"}.
        self.locations = dict(locations or {})
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _config(self) -> str:
        w = self.workdir
        extra = "".join(
            f"        location {prefix} {{\n            alias {self.docroot}/;\n            {directives}\n        }}\n"
            for prefix, directives in self.locations.items()
        )
        # master_process off: one process, so no worker drops to a user that cannot read
        # the test's private temp folder; daemon off: it stays our child until we stop it.
        return f"""
daemon off;
master_process off;
worker_processes 1;
pid {w}/nginx.pid;
error_log {w}/error.log warn;
events {{ worker_connections 64; }}
http {{
    log_format kf '{LOG_FORMAT}';
    access_log {w}/access.log kf;
    client_body_temp_path {w}/tmp/body;
    proxy_temp_path {w}/tmp/proxy;
    fastcgi_temp_path {w}/tmp/fastcgi;
    uwsgi_temp_path {w}/tmp/uwsgi;
    scgi_temp_path {w}/tmp/scgi;
    default_type application/octet-stream;
    # /slow/ throttles a first request, so a pause or cancel lands mid-file; a resume (a Range request)
    # runs at full speed, as the tests only check where it starts.
    map $http_range $kf_slow_rate {{
        "" 400k;
        default 0;
    }}
    server {{
        listen 127.0.0.1:{self.port};
        root {self.docroot};
        location /slow/ {{
            alias {self.docroot}/;
            set $limit_rate $kf_slow_rate;
        }}
{extra}    }}
}}
"""

    def start(self) -> None:
        (self.workdir / "tmp").mkdir(parents=True, exist_ok=True)
        last_error = ""
        for _ in range(3):  # the free port can be taken between probing and binding
            self.port = _free_port()
            conf = self.workdir / "nginx.conf"
            conf.write_text(self._config())
            self._proc = proc = subprocess.Popen(
                [self._binary, "-c", str(conf), "-p", str(self.workdir), "-e", str(self.workdir / "error.log")],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            # Until it listens or has exited (a port taken meanwhile): only a live one listened.
            if wait_until(lambda p=proc: p.poll() is not None or self._listens(), timeout=10) and proc.poll() is None:
                return
            self.stop()
            last_error = (self.workdir / "error.log").read_text() if (self.workdir / "error.log").exists() else ""
        raise RuntimeError(f"nginx did not start: {last_error[-2000:]}")

    def _listens(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                return True
        except OSError:
            return False

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        if proc.stderr:
            proc.stderr.close()

    def __enter__(self) -> Nginx:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def log(self) -> list[Logged]:
        path = self.workdir / "access.log"
        if not path.exists():
            return []
        entries = []
        for line in path.read_text().splitlines():
            uri, status, sent, rng = line.split("|")
            entries.append(Logged(uri, int(status), int(sent), None if rng == "-" else rng))
        return entries
