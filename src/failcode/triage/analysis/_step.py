"""One step classified: a command's result or an error known as text, by the rules every
session follows (:mod:`._analyze`'s module rules). Used by triage for each step of a log and
by the live hooks for the one step an agent just took, so both classify alike; it imports no
reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from failcode import FC, Failure, Kind, classify_text, from_command
from failcode.classification._purpose import infer_purpose
from failcode.triage.analysis._masking import masked_failure
from failcode.triage.readers._text import first_line

if TYPE_CHECKING:
    from failcode import NonErrorOutcome
    from failcode.triage._events import Command, ErrorText

__all__ = ["classify_command", "classify_error", "harness_failure"]

_SYSTEM_KINDS: Final = frozenset({Kind.SYSTEM_ERROR, Kind.ENV_ERROR, Kind.PERMISSION_ERROR})


def classify_command(event: Command) -> tuple[Failure | NonErrorOutcome | None, bool]:
    """What a command's result is (a failure, an outcome, or nothing), and whether it is a
    failure its exit status 0 hid (``_masking``). A harness's own failing step is
    :func:`harness_failure`'s, not this function's."""
    if event.running:
        return None, False
    if event.exit_code == 0 and not event.timed_out:
        found = masked_failure(event.command, event.output) if event.output else None
        if found is None:
            return None, False
        inner, status = found
        purpose = event.purpose or infer_purpose(inner, event.output)
        # the command that failed is the one the filter hid (`pytest`, not `tail`)
        hidden = from_command(inner or event.command or "sh", status, event.output,
                              purpose=purpose)
        return (hidden, True) if isinstance(hidden, Failure) else (None, False)
    # no purpose from the format: from_command infers it (the API's rule, the same here)
    return from_command(event.command or "sh", event.exit_code, event.output,
                        purpose=event.purpose, timed_out=event.timed_out), False


def harness_failure(event: ErrorText) -> Failure:
    found = classify_text(event.type_name, event.message, traceback=event.traceback,
                          surface="harness")
    if isinstance(found, Failure) and found.kind in _SYSTEM_KINDS \
            and not found.code.startswith(("FC-PROV-", "FC-SYS-")):
        return found
    # a line that ends in a colon announces a detail the log did not keep ("Image build
    # failed:"): the sentence ends without it
    problem = (first_line(event.message or event.type_name, 150).rstrip(" :")
               or event.type_name)
    return FC.SYS_HARNESS_FAILED.failure(surface="harness", params={"problem": problem},
                                         detail=f"{event.type_name}: {event.message[:1000]}")


def classify_error(event: ErrorText) -> Failure | None:
    """The Failure an :class:`ErrorText` describes (None for a cancellation)."""
    if event.limit is not None:
        return FC.LIFE_AGENT_LIMIT.failure(surface="agent", params={"limit": event.limit})
    if event.context_window:
        return FC.PROV_CONTEXT_TOO_LARGE.failure(
            surface="llm", params={"model": "the model"},
            detail=f"{event.type_name}: {event.message[:1000]}")
    if event.source == "harness":
        return harness_failure(event)
    surface = {"provider": "llm", "agent": "agent", "tool": "tool"}.get(event.source, "agent")
    found = classify_text(event.type_name, event.message, traceback=event.traceback,
                          surface=surface)
    if (event.tool and isinstance(found, Failure)
            and found.code == FC.SYS_UNKNOWN.value):
        # an exception no rule knows, raised by the tool's own code: the tool's defect
        params = {"function": event.tool, "exception": event.type_name}
        if event.message:
            params["error"] = first_line(event.message, 200)
        return FC.SYS_DEFECT.failure(surface="tool", params=params,
                                     detail=(event.traceback or event.message)[-2000:])
    if (event.source == "provider" and isinstance(found, Failure)
            and found.code == FC.SYS_UNKNOWN.value):
        # the reader saw the provider answer with an error, but neither its type, a status nor
        # its wording names the cause (Copilot CLI's "Failed to get response from the AI model;
        # retried 5 times" after "Last error: Unknown error"): the closest row is the
        # provider's server error, what the HTTP rule gives a status-less answer too, since the
        # agents retry only what is transient (5xx, 429, a dropped connection) before they say so
        return FC.PROV_SERVER_ERROR.failure(surface="llm",
                                            detail=f"{event.type_name}: {event.message[:1000]}")
    return found if isinstance(found, Failure) else None
