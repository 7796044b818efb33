"""Seed projections: the same Failure in the shapes the three seed systems use.

The coding agent's shapes: ``AirError``, ``ToolErrorOutput`` and ``WorkerResult``. Field by field:

===================  ==============================================================
AirError field       from the Failure
===================  ==============================================================
error_id             ``error_id``
kind                 ``kind``
severity             ``severity``
message              ``message``
detail               ``detail`` (omitted when None)
retryability         ``retryability``
semantic_signature   ``signature``
cause_ref            ``cause_refs[0]`` (omitted when there is none)
cause_refs           ``cause_refs`` (omitted when empty)
user_action          ``remedy`` (omitted when None)
metadata             ``metadata``, plus the fields AirError has no place for under
                     the key ``"failcode"`` (code, category, class, surface, ...), so
                     :func:`from_air_error` gives the same Failure back (a
                     ``metadata["failcode"]`` of the record's own travels inside it,
                     as ``shadowed_metadata``, and comes back to its place)
===================  ==============================================================

The desktop agent's shape (AFK): ``code, category, message, cause, remedy, recoverable,
context``. It has four categories; a ``task`` Failure has no AFK form and projecting one raises
:class:`ProjectionError`.
"""

from typing import Any, Literal, NotRequired, TypedDict

import msgspec

from failcode.record._axes import KIND_DEFAULTS, SEED_003_CATEGORIES, Kind, Outcome
from failcode.record._failure import (
    CauseLink,
    EntityRef,
    Failure,
    FailureDecodeError,
    expect_failure,
)
from failcode.record._outcomes import Cancelled

__all__ = [
    "AFKError",
    "AirError",
    "EntityRefDict",
    "ProjectionError",
    "ToolErrorOutput",
    "WorkerResult",
    "from_air_error",
    "to_afk_error",
    "to_air_error",
    "to_tool_error_output",
    "to_worker_result",
]


class ProjectionError(ValueError):
    """A Failure has no form in the target contract (e.g. a task failure as an AFKError)."""


class EntityRefDict(TypedDict):
    """An entity reference in the coding agent's shape."""

    type: str
    id: str


class AirError(TypedDict):
    """The coding agent's ``AirError``, as a JSON-ready dict."""

    error_id: str
    kind: str
    severity: Literal["info", "warning", "error", "fatal"]
    message: str
    detail: NotRequired[str]
    retryability: Literal["retryable", "retryable_after_change", "not_retryable", "unknown"]
    semantic_signature: str
    cause_ref: NotRequired[EntityRefDict]
    cause_refs: NotRequired[list[EntityRefDict]]
    user_action: NotRequired[str]
    metadata: NotRequired[dict[str, Any]]


class ToolErrorOutput(TypedDict):
    """The coding agent's ``ToolErrorOutput``."""

    error: AirError
    partial_output: NotRequired[Any]
    artifact_ids: NotRequired[list[str]]
    evidence_ref_ids: NotRequired[list[str]]


class WorkerResult(TypedDict):
    """The coding agent's ``WorkerResult`` of a task that did not succeed.

    A failed or blocked task carries its ``error``; a cancelled one (an explicit stop, not an
    error) carries the ``reason`` it was stopped for and, when one stopped it, the ``signal``.
    """

    status: Literal["failed", "blocked", "cancelled"]
    error: NotRequired[AirError]
    reason: NotRequired[str]
    signal: NotRequired[int]


class AFKError(TypedDict):
    """The desktop agent's error: what an AFK error carries."""

    code: str
    category: Literal["user", "transient", "environment", "defect"]
    message: str
    cause: str | None
    remedy: str | None
    recoverable: bool
    context: dict[str, Any]


def _ref(ref: EntityRef) -> EntityRefDict:
    return {"type": ref.type, "id": ref.id}


_FAILCODE_ONLY = ("code", "category", "error_class", "surface", "location", "params", "cause",
                  "recoverable", "context", "signature_version", "evidence_refs")


_SHADOWED = "shadowed_metadata"


def to_air_error(failure: Failure) -> AirError:
    """The Failure as ``AirError`` (see the module docstring for the field map).

    Raises:
        TypeError: ``failure`` is not a Failure.
    """
    expect_failure(failure, "to_air_error")
    air: AirError = {
        "error_id": failure.error_id,
        "kind": failure.kind.value,
        "severity": failure.severity.value,
        "message": failure.message,
        "retryability": failure.retryability.value,
        "semantic_signature": failure.signature,
    }
    if failure.detail is not None:
        air["detail"] = failure.detail
    if failure.cause_refs:
        air["cause_ref"] = _ref(failure.cause_refs[0])
        air["cause_refs"] = [_ref(ref) for ref in failure.cause_refs]
    if failure.remedy is not None:
        air["user_action"] = failure.remedy
    record = failure.to_dict()
    metadata: dict[str, Any] = dict(record["metadata"])
    extra = {field: record[field] for field in _FAILCODE_ONLY}
    if "failcode" in metadata:  # the record's own key: kept inside, so nothing is overwritten
        extra[_SHADOWED] = metadata["failcode"]
    metadata["failcode"] = extra
    air["metadata"] = metadata
    return air


def from_air_error(air: AirError | dict[str, Any]) -> Failure:
    """The Failure back from an ``AirError`` made by :func:`to_air_error`.

    Raises:
        TypeError: ``air`` is not a dict.
        ProjectionError: the AirError carries no ``metadata.failcode`` (it was not made by
            failcode, so code and category are unknown) or does not form a valid Failure.
    """
    if not isinstance(air, dict):
        msg = (f"from_air_error() expects air to be a failcode.AirError dict, got "
               f"{type(air).__name__}")
        raise TypeError(msg)
    metadata = air.get("metadata") or {}
    if not isinstance(metadata, dict):
        msg = f"AirError.metadata must be an object, got {type(metadata).__name__}"
        raise ProjectionError(msg)
    metadata = dict(metadata)
    extra = metadata.pop("failcode", None)
    if not isinstance(extra, dict):
        msg = "this AirError has no metadata.failcode: only failcode-made AirErrors convert back"
        raise ProjectionError(msg)
    extra = dict(extra)
    if _SHADOWED in extra:
        metadata["failcode"] = extra.pop(_SHADOWED)
    record: dict[str, Any] = {
        **extra,
        "error_id": air.get("error_id"),
        "kind": air.get("kind"),
        "severity": air.get("severity"),
        "message": air.get("message"),
        "detail": air.get("detail"),
        "retryability": air.get("retryability"),
        "signature": air.get("semantic_signature"),
        "cause_refs": air.get("cause_refs", []),
        "remedy": air.get("user_action"),
        "metadata": metadata,
    }
    try:
        return Failure.from_dict(record)
    except FailureDecodeError as exc:
        raise ProjectionError(f"AirError does not form a valid Failure: {exc}") from None


def to_tool_error_output(
    failure: Failure,
    *,
    partial_output: Any = None,
    artifact_ids: list[str] | None = None,
) -> ToolErrorOutput:
    """The Failure as ``ToolErrorOutput``; evidence_ref_ids from evidence_refs.

    Raises:
        TypeError: ``failure`` is not a Failure.
    """
    expect_failure(failure, "to_tool_error_output")
    output: ToolErrorOutput = {"error": to_air_error(failure)}
    if partial_output is not None:
        output["partial_output"] = partial_output
    if artifact_ids:
        output["artifact_ids"] = list(artifact_ids)
    if failure.evidence_refs:
        output["evidence_ref_ids"] = [ref.id for ref in failure.evidence_refs]
    return output


_BLOCKER_KINDS = frozenset({Kind.ARCHITECTURE_ERROR})
"""Kinds that are never an ordinary failure (WorkerResult rule: never an ordinary failure)."""


def to_worker_result(failure: Failure | Cancelled,
                     status: Outcome | str | None = None) -> WorkerResult:
    """The Failure (or a Cancelled outcome) as ``WorkerResult``.

    ``status`` defaults to the kind's task outcome (:data:`~failcode.KIND_DEFAULTS`); pass a
    Decision's outcome when there is one. A success has no WorkerResult error, so ``status`` is
    one of failed, blocked, cancelled. A :class:`~failcode.Cancelled` outcome is always
    ``cancelled`` (a task that was explicitly stopped), with its reason and
    signal and no error.

    Raises:
        TypeError: ``failure`` is neither a Failure nor a Cancelled outcome.
        ValueError: ``status`` is not an outcome.
        ProjectionError: the status would make an architecture blocker an ordinary ``failed``
            result (an architecture or product impossibility is never labelled an ordinary
            failure"), or would cancel a Cancelled outcome's opposite.
    """
    if isinstance(failure, Cancelled):
        if status is not None and Outcome(status) is not Outcome.CANCELLED:
            msg = f"a Cancelled outcome is a cancelled WorkerResult, not {Outcome(status).value}"
            raise ProjectionError(msg)
        result: WorkerResult = {"status": "cancelled", "reason": failure.reason}
        if failure.signal is not None:
            result["signal"] = failure.signal
        return result
    if not isinstance(failure, Failure):
        msg = (f"to_worker_result() expects failure to be a failcode.Failure or a Cancelled "
               f"outcome, got {type(failure).__name__}")
        raise TypeError(msg)
    outcome = Outcome(status) if status is not None else KIND_DEFAULTS[failure.kind].outcome
    if outcome is Outcome.FAILED and failure.kind in _BLOCKER_KINDS:
        msg = (f"{failure.code} is an {failure.kind.value}: an architecture blocker is blocked "
               f"and routed to the architecture designer, never an ordinary failed result")
        raise ProjectionError(msg)
    return {"status": outcome.value, "error": to_air_error(failure)}


def _cause_text(cause: tuple[CauseLink, ...]) -> str | None:
    if not cause:
        return None
    first = cause[0]
    return f"{first.type}: {first.message}" if first.message else first.type


def to_afk_error(failure: Failure) -> AFKError:
    """The Failure as an ``AFKError`` (four categories, no ``task``).

    Raises:
        TypeError: ``failure`` is not a Failure.
        ProjectionError: the Failure's category is ``task``, which that shape does not have.
    """
    expect_failure(failure, "to_afk_error")
    if failure.category not in SEED_003_CATEGORIES:
        allowed = ", ".join(sorted(c.value for c in SEED_003_CATEGORIES))
        msg = (f"{failure.code} has category {failure.category.value}, which AFKError "
               f"cannot carry (allowed: {allowed}); report it as an outcome, or map it to a "
               f"code of an AFK catalog")
        raise ProjectionError(msg)
    return {
        "code": failure.code,
        "category": failure.category.value,  # type: ignore[typeddict-item]
        "message": failure.message,
        "cause": _cause_text(failure.cause),
        "remedy": failure.remedy,
        "recoverable": failure.recoverable,
        "context": msgspec.to_builtins(failure.context),
    }

