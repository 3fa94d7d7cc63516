"""A state that listeners follow: the one mechanism every controller notifies its pages with.

Guarantees, which each controller once wrote its own way (and some lacked):

- **Ordered delivery.** States reach every listener in the order they were made: a page never gets
  an older state after a newer one, even when a worker thread and a click change it at once.
- **Subscribe sees the present.** A new listener gets the current state at once, under the same
  lock as the changes, so no change slips between its subscribing and its first state.
- **A failing listener is dropped and logged once**, and the others still get the state (one
  closed tab must not stop a download or the other tabs).
- **Re-entrant.** A listener may change the state it is told about (on its own thread): the
  newer state is delivered to everyone before the older delivery goes on, and the listeners that
  already have the newer one are not handed the older one afterwards.

Listeners are expected to be quick (they queue work on their page's loop): they run on the
thread that made the change, with the delivery lock held.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

logger = logging.getLogger("keyframe.state")

S = TypeVar("S")
Listener = Callable[[S], None]


class _Entry(Generic[S]):
    __slots__ = ("listener", "seen")

    def __init__(self, listener: Listener[S]) -> None:
        self.listener = listener
        self.seen = -1  # the newest version it got


class Observable(Generic[S]):
    def __init__(self, initial: S, name: str) -> None:
        """`name` says whose state it is in the log ("the Models screen")."""
        self._name = name
        self._state = initial
        self._told = initial  # the state listeners were last given (the newest one may be staged)
        self._version = 0
        self._lock = threading.Lock()  # the state and the listener list, held only briefly
        self._delivering = threading.RLock()  # one delivery at a time; re-entrant for listeners that change it
        self._entries: list[_Entry[S]] = []

    @property
    def value(self) -> S:
        return self._state

    def subscribe(self, listener: Listener[S], now: bool = True) -> None:
        """`now=False`: from the next change on (a controller's own callback, wired before its page is)."""
        with self._delivering:
            entry = _Entry(listener)
            with self._lock:
                self._entries.append(entry)
                state, version = self._state, self._version
            if now:
                self._deliver(entry, state, version)

    def unsubscribe(self, listener: Listener[S]) -> None:
        with self._lock:
            self._entries = [e for e in self._entries if e.listener != listener]

    def set(self, state: S) -> S:
        return self.update(lambda _: state)

    def stage(self, state: S) -> None:
        """The newest state, given to listeners at the next `publish` or `update`: an owner that changes its
        state step by step under its own lock stages each step and publishes once outside the lock, so no
        listener ever runs under the owner's lock."""
        with self._lock:
            self._state = state

    def publish(self) -> None:
        """Listeners get the newest state if it differs from the one they were last given."""
        self.update(lambda state: state)

    def update(self, change: Callable[[S], S]) -> S:
        """Applies `change` to the state; listeners get the result when it differs from the last they got."""
        with self._delivering:
            with self._lock:
                state = self._state = change(self._state)
                if state == self._told:
                    return state
                self._told = state
                self._version += 1
                version, entries = self._version, list(self._entries)
            for entry in entries:
                self._deliver(entry, state, version)
            return state

    def _deliver(self, entry: _Entry[S], state: S, version: int) -> None:
        with self._lock:
            if entry not in self._entries or entry.seen >= version:
                return  # gone meanwhile, or a newer state reached it inside this delivery
            entry.seen = version
        try:
            entry.listener(state)
        except Exception:  # one tab's failure (a closed socket) must not stop the others
            logger.warning("a listener of %s failed; it gets no further states", self._name, exc_info=True)
            with self._lock:
                self._entries = [e for e in self._entries if e is not entry]


class StagedState(Generic[S]):
    """For a controller whose state is its Observable's alone (no copy beside it): `_state` reads the
    newest state, and assigning it stages the change under the controller's lock; the controller
    publishes outside the lock (`self._states.publish()`), so no listener runs under it."""

    _states: Observable[S]

    @property
    def _state(self) -> S:
        return self._states.value

    @_state.setter
    def _state(self, state: S) -> None:
        self._states.stage(state)
