"""What the agent is told after a failed tool call: :func:`advise`, a pure function.

It reads the failure (classified as triage classifies it), how many steps of the session
failed of the same root cause in the loop this step belongs to (triage's loop rule:
:func:`failcode.triage.analysis._loops.find_loops`), and :func:`failcode.decide`'s decision
for that history, and picks one row of this table, first match wins:

===========  ==============================================  =================================
row          when                                            answer
===========  ==============================================  =================================
provider     a provider error, or a transient failure that   nothing: the agent retries it
             is retryable                                    itself, with its own backoff
person       who must act is the user or the environment,    stop the agent and tell the
             and it is not retryable, or it loops and the    person what to do (``tell``
             decision routes it to its owner or blocks       instead when ``stop_for_person``
                                                             is false)
loop         the step is in a loop of at least               tell the model what failed, how
             ``tell_after`` failing steps                    many times, who must act and what
                                                             to change instead of retrying
first        anything else                                   nothing: the agent can fix it
===========  ==============================================  =================================

Every message starts with ``[failcode]`` so a person reading the transcript, and the lab's
scripted model, can tell it apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Final

from failcode.policy._decide import Action
from failcode.record._axes import Category, Kind, Retryability

if TYPE_CHECKING:
    from failcode.policy._decide import Decision
    from failcode.record._failure import Failure

__all__ = ["MARK", "Advice", "Verdict", "advise"]

MARK: Final = "[failcode]"
"""What every message of the hooks starts with."""


class Verdict(StrEnum):
    """What the hook answers."""

    SILENT = "silent"
    """Nothing: the agent goes on as if no hook ran."""
    TELL = "tell"
    """A message added to the model's context."""
    STOP = "stop"
    """The agent stops; the message is for the person."""


@dataclass(frozen=True, slots=True)
class Advice:
    """The hook's answer to one failed step: the verdict, the message and the table's row."""

    verdict: Verdict
    row: str
    text: str = ""
    count: int = 1
    """Failing steps of this root cause in the loop, this one included (1: not a loop)."""


WHO: Final = {
    Category.TASK: "you, the agent: the command, the code or the test is wrong",
    Category.ENVIRONMENT: ("the environment: something the command needs is missing or "
                           "misconfigured where it runs"),
    Category.USER: "the person running you: it needs their input, credentials or permission",
    Category.DEFECT: "the developer of the tool that failed: its own code is wrong",
    Category.TRANSIENT: "nobody: it should pass when retried later",
}
"""Who must act, by category, as the model is told."""

INSTEAD: Final = {
    Category.TASK: ("change the code, the test or the command before running it again; "
                    "running it unchanged will fail the same way"),
    Category.ENVIRONMENT: ("fix what the environment lacks first, or ask the person running "
                           "you to; running it again will not help"),
    Category.USER: "stop and ask the person running you",
    Category.DEFECT: "stop using this tool for this step and report the failure",
    Category.TRANSIENT: "wait before retrying",
}
"""What to do instead of retrying, by category, when the failure carries no remedy."""

_NEXT: Final = {
    Action.RETRY_AFTER_CHANGE: "",
    Action.ESCALATE: " If you cannot fix it yourself, stop and tell the person running you.",
    Action.BLOCK: " Do not run it again: tell the person running you what failed and why.",
    Action.ABORT: " Do not run it again: tell the person running you what failed and why.",
}
_PERSON_ACTIONS: Final = frozenset({Action.ESCALATE, Action.BLOCK, Action.ABORT})
_PERSON: Final = frozenset({Category.USER, Category.ENVIRONMENT})


def _times(count: int) -> str:
    return {2: "twice", 3: "three times"}.get(count, f"{count} times")


def _what(failure: Failure, action: str) -> str:
    """``action`` and what it failed with, as one sentence part."""
    message = failure.message.rstrip(". ")
    return f"`{action}` failed with {failure.code} ({failure.error_class}): {message}"


def advise(failure: Failure, decision: Decision, *, action: str, count: int, looping: bool,
           tell_after: int = 2, stop_for_person: bool = True) -> Advice:
    """The answer to a failed step (see the module's table).

    Args:
        failure: the step's failure.
        decision: :func:`failcode.decide`'s decision for it, given the session's history.
        action: the command (or the tool call) that failed, as the model wrote it.
        count: failing steps of this root cause in the loop, this one included.
        looping: whether the step is in a loop as triage finds loops.
        tell_after: the ``loop`` row's threshold (``[live] tell_after``).
        stop_for_person: whether the ``person`` row stops the agent (else it tells the model).
    """
    category = failure.category
    if failure.kind is Kind.PROVIDER_ERROR or (
            category is Category.TRANSIENT and failure.retryability is Retryability.RETRYABLE):
        return Advice(Verdict.SILENT, "provider", count=count)
    remedy = failure.remedy or INSTEAD[category]
    if category in _PERSON and (
            failure.retryability is Retryability.NOT_RETRYABLE
            or (looping and decision.action in _PERSON_ACTIONS)):
        again = f" ({_times(count)})" if count > 1 else ""
        if stop_for_person:
            text = (f"{MARK} {_what(failure, action)}{again}. Only a person can fix this: "
                    f"{remedy.rstrip('.')}. The agent was stopped so that it does not keep "
                    "retrying; fix it, then resume the session.")
            return Advice(Verdict.STOP, "person", text, count)
        text = (f"{MARK} {_what(failure, action)}{again}. Only a person can fix this: "
                f"{remedy.rstrip('.')}. Do not retry it: stop and tell the person running you "
                "what they must do.")
        return Advice(Verdict.TELL, "person", text, count)
    if looping and count >= tell_after:
        text = (f"{MARK} {_what(failure, action)}, {_times(count)} now with the same cause. "
                f"Who must act: {WHO[category]}. Instead of retrying: {remedy.rstrip('.')}."
                f"{_NEXT.get(decision.action, '')}")
        return Advice(Verdict.TELL, "loop", text, count)
    return Advice(Verdict.SILENT, "first", count=count)
