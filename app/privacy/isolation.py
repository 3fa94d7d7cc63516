"""OS-level network isolation for the processes that see images.

The audit hook in `guard.py` sees only Python's own socket calls; FFmpeg inside
OpenCV, MNN or anything reached through ctypes calls connect() directly. So the
worker child (which runs the model) and the `analyze`/`watch` commands cut
themselves off from the network with the kernel's help before they touch an
image:

- Linux: a new network namespace (inside a new user namespace when not root).
  It has one interface, loopback, and it stays down: every connect() or
  sendto(), native or not, fails with "Network is unreachable". A new user
  namespace grants every capability inside it, CAP_DAC_OVERRIDE over the user's
  own files among them; the process drops back at once to the capabilities it
  held outside (none, for a normal user), so permission bits mean what they
  mean outside: a 0444 file stays unwritable.
- macOS: a Seatbelt profile (sandbox_init) that denies all network use.
- elsewhere (Windows; iOS and Android, where the model runs in a thread of the
  app, which must keep its own loopback socket): only the audit hook guards.

`isolate_this_process` must run while the process has a single thread: the
kernel refuses a new user namespace to a multithreaded process. It never
raises; it reports which level is in force, and checks it by sending a
datagram to loopback, which must fail.
"""

from __future__ import annotations

import ctypes
import errno
import os
import socket
import sys
from dataclasses import dataclass

from app.core.isolation import IsolationKind, IsolationLevel

_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
# Seatbelt: everything the process could do before, except any use of the network.
MACOS_PROFILE = "(version 1)\n(allow default)\n(deny network*)\n"


@dataclass(frozen=True)
class Isolation:
    level: IsolationLevel
    how: str  # one sentence for people: what enforces it, or why the OS cannot here (with the OS's errors)
    kind: IsolationKind | None = None  # what, as a code the screens translate

    @property
    def isolated(self) -> bool:
        return self.level is IsolationLevel.OS_ISOLATED


HOOK_ONLY = "Python's audit hook blocks every non-loopback socket call made through Python; native code is not covered"


def guarded(why: str, kind: IsolationKind) -> Isolation:
    return Isolation(IsolationLevel.GUARDED, f"{why}; {HOOK_ONLY}", kind)


def isolate_this_process() -> Isolation:
    """Cuts this process off the network where the OS allows it; says which level is in force."""
    if sys.platform.startswith("linux"):
        kind, how = _linux_namespace()
    elif sys.platform == "darwin":
        kind, how = _macos_sandbox()
    else:
        return guarded(f"no OS network isolation on {sys.platform}", IsolationKind.PLATFORM)
    if kind is None:
        return guarded(how, IsolationKind.REFUSED)
    failure = _loopback_send_fails()
    if failure is None:
        return guarded(f"{how} was set up, but a datagram to loopback still went out", IsolationKind.UNVERIFIED)
    return Isolation(IsolationLevel.OS_ISOLATED, f"{how}; a send to 127.0.0.1 fails: {failure}", kind)


def current_isolation(otherwise: str) -> Isolation:
    """What this process already has, without changing it (a thread worker inside an isolated command
    is isolated too); `otherwise` says why it is only guarded."""
    failure = _loopback_send_fails()
    if failure is None:
        return guarded(otherwise, IsolationKind.THREAD)
    how = f"this whole process has no network; a send to 127.0.0.1 fails: {failure}"
    return Isolation(IsolationLevel.OS_ISOLATED, how, IsolationKind.PROCESS)


def _linux_namespace() -> tuple[IsolationKind | None, str]:
    """(kind, how) when the process is in a new network namespace now; (None, why not) otherwise."""
    try:
        unshare = ctypes.CDLL(None, use_errno=True).unshare
    except (OSError, AttributeError) as exc:
        return None, f"no unshare() in this libc ({exc})"
    uid, gid = os.getuid(), os.getgid()
    outside = _Capabilities.now()
    refused = []
    # Root may have CAP_SYS_ADMIN (a plain new network namespace); everyone else, and root in a
    # container without that capability, needs a user namespace around it.
    for flags in ((_CLONE_NEWNET,) if os.geteuid() == 0 else ()) + (_CLONE_NEWUSER | _CLONE_NEWNET,):
        if unshare(flags) == 0:
            if flags & _CLONE_NEWUSER:
                _map_ids(uid, gid)
                failure = outside.restore()
                if failure is not None:
                    return None, f"the new user namespace's capabilities could not be given up ({failure})"
            names = [name for _, name in socket.if_nameindex()]
            if names != ["lo"]:
                return None, f"the new network namespace has interfaces {names}"
            if flags & _CLONE_NEWUSER:
                return IsolationKind.LINUX_USERNS, (
                    "Linux user + network namespace with no network interface up, "
                    "holding only the capabilities the process had outside it"
                )
            return IsolationKind.LINUX_NETNS, "Linux network namespace with no network interface up"
        code = ctypes.get_errno()
        why = os.strerror(code)
        refused.append(why + (" (this process already runs threads)" if code == errno.EINVAL else ""))
    return None, f"the kernel refused a new network namespace: {'; '.join(refused)}"


def _map_ids(uid: int, gid: int) -> None:
    """Keeps the same uid/gid inside the namespace, so files and getpwuid() look as before."""
    for name, text in (("uid_map", f"{uid} {uid} 1\n"), ("setgroups", "deny\n"), ("gid_map", f"{gid} {gid} 1\n")):
        try:
            with open(f"/proc/self/{name}", "w") as fh:
                fh.write(text)
        except OSError:
            return  # unmapped ids read as "nobody"; file access still uses the real ones


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


_CAP_VERSION_3 = 0x20080522  # 64-bit sets, as two _CapData words
_PR_CAPBSET_READ = 23
_PR_CAPBSET_DROP = 24
_CAP_SLOTS = 64  # prctl(PR_CAPBSET_READ) fails for numbers past the kernel's last capability


@dataclass(frozen=True)
class _Capabilities:
    """The capability sets of this process (capget) and its bounding set, to be restored in the new
    user namespace: none for a normal user, whatever a root without CAP_SYS_ADMIN held."""

    sets: bytes
    bounding: frozenset[int]

    @staticmethod
    def now() -> _Capabilities:
        libc = ctypes.CDLL(None, use_errno=True)
        data = (_CapData * 2)()
        if libc.capget(ctypes.byref(_CapHeader(_CAP_VERSION_3, 0)), data) != 0:
            data = (_CapData * 2)()  # unreadable: assume none, the safe side
        return _Capabilities(bytes(data), frozenset(_bounding_set(libc)))

    def restore(self) -> str | None:
        """Back to these sets; the OS's error when it refuses. The bounding set goes first (that needs
        CAP_SETPCAP, which the namespace grants), so a later exec() gains no more than outside either."""
        libc = ctypes.CDLL(None, use_errno=True)
        for cap in _bounding_set(libc) - self.bounding:
            if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                return os.strerror(ctypes.get_errno())
        data = (_CapData * 2).from_buffer_copy(self.sets)
        if libc.capset(ctypes.byref(_CapHeader(_CAP_VERSION_3, 0)), data) != 0:
            return os.strerror(ctypes.get_errno())
        return None


def _bounding_set(libc: ctypes.CDLL) -> set[int]:
    return {cap for cap in range(_CAP_SLOTS) if libc.prctl(_PR_CAPBSET_READ, cap, 0, 0, 0) == 1}


def _macos_sandbox() -> tuple[IsolationKind | None, str]:
    try:
        lib = ctypes.CDLL("/usr/lib/libsandbox.1.dylib")
    except OSError as exc:
        return None, f"no libsandbox ({exc})"
    error = ctypes.c_char_p()
    if lib.sandbox_init(MACOS_PROFILE.encode(), 0, ctypes.byref(error)) != 0:
        return None, f"sandbox_init refused the profile: {(error.value or b'').decode(errors='replace')}"
    return IsolationKind.MACOS_SANDBOX, "macOS sandbox profile denying all network use"


def _loopback_send_fails() -> str | None:
    """The error a datagram to 127.0.0.1 gets now, or None if it went out (isolation not in force)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.sendto(b"", ("127.0.0.1", 9))  # port 9 is "discard": nothing listens, nothing answers
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    return None
