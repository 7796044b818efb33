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

__all__ = ["is_testing", "set_testing"]


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
