"""`python subreaper.py COMMAND...`: runs COMMAND in a new session and says which of its descendants
outlived it.

This process is a child subreaper (Linux): a process orphaned by COMMAND's exit becomes its child
instead of init's, so nothing that outlives COMMAND, even for a moment, goes unseen. Prints COMMAND's
pid, then, once COMMAND has ended, one JSON line: its exit code and the orphans (pid, name, command
line), which are then killed.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

_PR_SET_CHILD_SUBREAPER = 36


def _children() -> list[int]:
    me = os.getpid()  # one thread: orphans are handed to it
    return [int(pid) for pid in Path(f"/proc/{me}/task/{me}/children").read_text().split()]


def _describe(pid: int) -> dict[str, object]:
    proc = Path(f"/proc/{pid}")
    try:
        name = proc.joinpath("comm").read_text().strip()
        command = proc.joinpath("cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        name, command = "", ""
    return {"pid": pid, "name": name, "command": command}  # a zombie has a name but no command line


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)


def main(argv: list[str]) -> int:
    if ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    command = subprocess.Popen(argv, start_new_session=True, stdin=subprocess.DEVNULL, stdout=sys.stderr)
    print(command.pid, flush=True)
    code = command.wait()
    orphans = _children()  # zombies too: they outlived COMMAND as well
    print(json.dumps({"exit": code, "orphans": [_describe(pid) for pid in orphans]}), flush=True)
    for pid in orphans:
        _kill(pid)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
