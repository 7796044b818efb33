"""Non-error outcomes: typed values that are counted, never shown as errors, never Failures.

A probe that found nothing, a rejected action, a veto, a cancellation, a peer process that
exited and an agent session that started or ended are outcomes of ordinary operation. A rejected
action is information for the model, fed back and counted toward no-progress; it has no error
code. A veto is a recorded negative decision, never turned into success. A crash on the other
side of a pipe is observed (``PeerExited``), not coded. A session's start and end
(``SessionStarted``, ``SessionEnded``) are what an observer of an agent (its hooks, its
telemetry) says of the session as a whole; how it ended is one of :data:`SESSION_STATUSES`.

Each type is a frozen msgspec Struct tagged with its ``type`` so the wire envelope can carry it.

As for a Failure, lone surrogates and NUL in every string field become U+FFFD when an outcome
is built or decoded, and an integer field (an exit status, a signal) lies in int64 (a
``ValueError`` otherwise, which decoding reports as a validation error naming the field).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import msgspec

from failcode.record._frozen import MAX_INT, FrozenDict, Scalar, is_clean, replace_surrogates

__all__ = [
    "ENDED_KEY",
    "SESSION_STATUSES",
    "Cancelled",
    "NoMatch",
    "NonErrorOutcome",
    "PeerExited",
    "RejectedAction",
    "SessionEnded",
    "SessionStarted",
    "Veto",
]

_EMPTY: Mapping[str, Scalar] = FrozenDict()


class _OutcomeBase(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag_field="type"
):
    context: Mapping[str, Scalar] = _EMPTY
    """Session, step, subgoal... as for a Failure."""

    def __post_init__(self) -> None:
        if type(self.context) is not FrozenDict:
            msgspec.structs.force_setattr(self, "context", FrozenDict(self.context))
        for field in self.__struct_fields__:
            value = getattr(self, field)
            if type(value) is str:
                if not is_clean(value):
                    msgspec.structs.force_setattr(self, field, replace_surrogates(value))
            elif type(value) is int and not -MAX_INT <= value < MAX_INT:
                msg = (f"{type(self).__name__}.{field}: an integer of {value.bit_length()} "
                       f"bits; expected one in -2**63..2**63-1")
                raise ValueError(msg)


class NoMatch(_OutcomeBase, tag="no_match", frozen=True):
    """A probe that found nothing (``grep``/``find``/``rg`` exit 1 with no output)."""

    probe: str
    """The probing program, e.g. ``grep``."""
    exit_code: int | None = None


class RejectedAction(_OutcomeBase, tag="rejected_action", frozen=True):
    """A model-proposed action that failed validation: fed back to the model, not an error."""

    action: str
    reason: str


class Veto(_OutcomeBase, tag="veto", frozen=True):
    """An explicit negative decision: replayable evidence, never success."""

    reason: str
    by: str | None = None
    """Who vetoed, e.g. a verifier's name."""


class Cancelled(_OutcomeBase, tag="cancelled", frozen=True):
    """An explicit stop: a user interrupt, a task cancellation, exit 130/143."""

    reason: str
    signal: int | None = None


class PeerExited(_OutcomeBase, tag="peer_exited", frozen=True):
    """The process on the other side of a pipe went away; observed, not coded."""

    peer: str
    reason: str
    exit_code: int | None = None


SESSION_STATUSES: Final = ("submitted", "provider_error", "timeout", "limit", "running",
                           "unknown")
"""How an agent session ends, in triage's words: it finished its work (``submitted``), a
provider error it gave up on ended it, it ran out of time, it reached a limit (of turns, of
cost), it is still running, or nobody knows."""


ENDED_KEY: Final = "session.ended"
"""The context key in which a failure says it ended its session, and how (one of
:data:`SESSION_STATUSES`): what a producer that knows it says (a telemetry record of the error
the agent gave up on)."""


class SessionStarted(_OutcomeBase, tag="session_started", frozen=True):
    """An agent session started, as its observer saw it."""

    by: str
    """Who observed it, e.g. ``claude-code hook``."""


class SessionEnded(_OutcomeBase, tag="session_ended", frozen=True):
    """An agent session ended (or finished a turn; a later end replaces it), and how."""

    status: str
    """One of :data:`SESSION_STATUSES`."""
    by: str
    """Who observed it, e.g. ``claude-code hook``."""
    reason: str | None = None
    """What the observer said of it (the agent's error name, its stop reason)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.status not in SESSION_STATUSES:
            msg = (f"SessionEnded.status={self.status!r:.40}: expected one of "
                   f"{', '.join(SESSION_STATUSES)}")
            raise ValueError(msg)


NonErrorOutcome = (NoMatch | RejectedAction | Veto | Cancelled | PeerExited | SessionStarted
                   | SessionEnded)
"""Any of the typed non-error outcomes."""
