"""How the model's process is kept off the network, as a code the screens translate (`isolation_<kind>`).

Pure data: `app.privacy.isolation` finds which one holds, the worker reports it, the screens name it."""

from __future__ import annotations

from enum import StrEnum


class IsolationLevel(StrEnum):
    OS_ISOLATED = "os-isolated"  # the OS keeps the process off the network
    GUARDED = "guarded"  # only Python's audit hook does


class IsolationKind(StrEnum):
    # Isolated by the OS:
    LINUX_USERNS = "linux-userns"  # a new user + network namespace with no interface up
    LINUX_NETNS = "linux-netns"  # a new network namespace (root with CAP_SYS_ADMIN)
    MACOS_SANDBOX = "macos-sandbox"  # a Seatbelt profile denying all network use
    PROCESS = "process"  # the whole process already had no network (a thread worker in an isolated command)
    # Only guarded (Python's audit hook):
    PLATFORM = "platform"  # no OS isolation on this OS
    REFUSED = "refused"  # the OS said no
    UNVERIFIED = "unverified"  # set up, but a send to loopback still went out
    THREAD = "thread"  # the model runs in the app's own process
