"""Loops: one root cause failing again and again in a session.

The cause of a failure (:func:`cause_key`) is the first of these rules that applies, read
from the Failure record alone (never from the command or its output):

1. ``timeout:*``: a time limit stopped what ran (``error_class`` ``timeout``, the kind not a
   provider's or the agent's own), whatever the command: the limit, or what hangs under it,
   is the cause, so a harness timeout on one command after another is one cause;
2. ``missing_dependency:*``: the environment lacks a module or a program (kind
   ``dependency_error``, class ``missing_module`` or ``command_not_found``), whatever its
   name: one missing module after another is one cause, the environment lacks the project's
   dependencies. A package the index does not have (``package_not_found``) is not: that is a
   wrong name, a cause of its own;
3. ``<class>:<location>``: a failure with a location, whatever its message and whatever ran:
   the same error class at the same file (an uncaught exception raised in one script, type
   errors in one module, a conflict in one file) from different edits or commands is one
   defect;
4. otherwise the failure itself (:func:`failure_key`): its signature and what its headline
   says failed, normalized.

What a failure is (:func:`failure_key`) is its signature, and for a failure without a
location also its headline (the message with the detail's line that says what failed, as the
report shows it), normalized as signatures normalize messages: a signature without a location
whose message is a generic sentence ("The command python exited with status 1.", its
exception type the only other part) would otherwise make two different crashes of one
exception type, ``ImproperlyConfigured: settings are not configured`` and
``ImproperlyConfigured: The app module 'x' has no filesystem location``, one failure.
Volatile parts (temporary directories, numbers, ids) are normalized away, so the same crash
run again from a new temporary directory is the same failure. A location already tells
crashes apart, and what a crash prints before its traceback varies from run to run.

A loop is a cause that fails

- as one failure at three or more steps of the session, or at two consecutive steps (the
  rule before causes: every such loop is still one); or
- at three or more steps, or at two consecutive steps, of a stretch of the session in which
  no step fails of another cause only. A step that fails of another cause is progress: the
  agent got past this cause to the next failure, so a compile error, then a missing config,
  then a missing test dependency, then an assertion is no loop, and a cause that comes back
  after another one failed starts a new stretch.

One :class:`Loop` per cause: its steps are those of the looping failures and stretches,
``signatures`` the signatures failing at them (first seen first), ``signature`` the one at
its first step, and ``cause`` the cause key (for the fourth rule, the signature: two loops
of one signature and different headlines are two loops with the same ``cause``).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Final

from failcode import Kind
from failcode.render._headline import headline
from failcode.signature._normalize import normalize_message
from failcode.triage._result import Loop

if TYPE_CHECKING:
    from collections.abc import Iterable

    from failcode import Failure
    from failcode.triage._result import FailureEntry

__all__ = ["cause_key", "failure_key", "find_loops"]

ANY: Final = "*"
"""The subject of a cause that holds whatever the command or name."""
_NOT_COMMAND_TIMEOUTS: Final = frozenset({Kind.PROVIDER_ERROR, Kind.AGENT_ERROR})
_MISSING: Final = frozenset({"missing_module", "command_not_found"})


def cause_key(failure: Failure, key: str | None = None) -> str:
    """The root cause of a failure, as the module's rules define it (``key``: its
    :func:`failure_key`, when already known)."""
    if failure.error_class == "timeout" and failure.kind not in _NOT_COMMAND_TIMEOUTS:
        return f"timeout:{ANY}"
    if failure.kind is Kind.DEPENDENCY_ERROR and failure.error_class in _MISSING:
        return f"missing_dependency:{ANY}"
    if failure.location is not None:
        return f"{failure.error_class}:{failure.location}"
    return failure_key(failure) if key is None else key


def failure_key(failure: Failure) -> str:
    """What one failure is, for loops: its signature, and without a location its normalized
    headline too."""
    if failure.location is not None:
        return failure.signature
    return f"{failure.signature} {normalize_message(headline(failure))}"


def _loops(steps: list[int]) -> bool:
    """Three or more steps, or two consecutive ones (``steps`` sorted, distinct)."""
    return len(steps) >= 3 or any(b - a == 1 for a, b in itertools.pairwise(steps))


def find_loops(failures: Iterable[FailureEntry]) -> list[Loop]:
    """The loops among a session's failures (those without a step take no part)."""
    by_step: dict[int, list[tuple[str, str, str]]] = {}  # step -> (cause, failure, signature)
    for entry in failures:
        if entry.step is not None:
            failure = entry.failure
            key = failure_key(failure)
            by_step.setdefault(entry.step, []).append(
                (cause_key(failure, key), key, failure.signature))
    looping: dict[str, set[int]] = {}
    signatures: dict[tuple[str, str], list[int]] = {}  # (cause, failure) -> its steps
    # a loop names a cause of the fourth rule by its signature (the failure key is internal)
    shown = {cause: signature if cause == key else cause
             for held in by_step.values() for cause, key, signature in held}
    stretches: dict[str, list[int]] = {}  # cause -> its open stretch

    def close(cause: str) -> None:
        stretch = stretches.pop(cause)
        if _loops(stretch):
            looping.setdefault(cause, set()).update(stretch)

    for step in sorted(by_step):
        causes = {cause for cause, _, _ in by_step[step]}
        for cause in [c for c in stretches if c not in causes]:
            close(cause)
        for cause in causes:
            stretches.setdefault(cause, []).append(step)
        for cause, key, _ in by_step[step]:
            found = signatures.setdefault((cause, key), [])
            if not found or found[-1] != step:
                found.append(step)
    for cause in list(stretches):
        close(cause)
    for (cause, _), found in signatures.items():
        if _loops(found):
            looping.setdefault(cause, set()).update(found)
    loops = []
    for cause, steps in looping.items():
        ordered = tuple(sorted(steps))
        held = list(dict.fromkeys(signature for step in ordered
                                  for key, _, signature in by_step[step] if key == cause))
        loops.append(Loop(held[0], ordered, shown[cause], tuple(held)))
    return sorted(loops, key=lambda loop: (loop.steps[0], loop.cause, loop.steps))
