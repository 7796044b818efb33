"""Test support: make failcode's retry helpers never sleep (stamina's model).

``failcode.testing.set_testing(True, attempts=1)`` in a conftest (or as a context manager around
one test) turns every backoff into 0 and stops each retried call after ``attempts`` attempts,
so users' tests never sleep and never loop. ``set_testing(False)`` turns it off again.
Decisions are still made (and the ``on_failure`` hook still called), so a test can assert them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from failcode.policy._retry import TESTING

if TYPE_CHECKING:
    from types import TracebackType

    from failcode.events import Event

__all__ = ["MemorySink", "is_testing", "set_testing"]


class _Restore:
    """Returned by :func:`set_testing`; as a context manager it restores the previous mode."""

    __slots__ = ("_previous",)

    def __init__(self, previous: tuple[bool, int]) -> None:
        self._previous = previous

    def __enter__(self) -> None:
        return None

    def __exit__(self, typ: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        TESTING.on, TESTING.attempts = self._previous


def set_testing(testing: bool, *, attempts: int = 1) -> _Restore:
    """Turn test mode on or off for every failcode retry helper of the process.

    Args:
        testing: True: no sleeping, at most ``attempts`` attempts per call; False: normal.
        attempts: the attempts each call gets in test mode (>= 1; 1 means no retry).

    Returns:
        An object that, used as ``with set_testing(True):``, restores the previous mode on exit.

    Raises:
        ValueError: ``attempts`` is below 1.
    """
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        msg = f"set_testing(attempts={attempts!r}): expected an integer >= 1"
        raise ValueError(msg)
    previous = (TESTING.on, TESTING.attempts)
    TESTING.on = bool(testing)
    TESTING.attempts = attempts
    return _Restore(previous)


def is_testing() -> bool:
    """Whether test mode is on."""
    return TESTING.on


class MemorySink:
    """An in-memory event sink for tests: ``events`` holds what was emitted, ``flushed`` what
    was flushed (the :class:`failcode.events.Sink` protocol).

    ::

        sink = MemorySink()
        run_agent(on_failure=failure_hook(sink))
        assert [e.event for e in sink.events] == ["tool.failed"]
    """

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.flushed: list[Event] = []
        self.closed = False

    def emit(self, event: Event) -> None:
        """Keep the event."""
        if self.closed:
            msg = "MemorySink is closed"
            raise ValueError(msg)
        self.events.append(event)

    def flush(self) -> None:
        """Mark every event emitted so far as flushed."""
        self.flushed = list(self.events)

    def close(self) -> None:
        """Flush and refuse further events."""
        self.flush()
        self.closed = True
