"""Seed projections: the same Failure in the shapes the three seed systems use.

Seed 000 (AirCoding): ``AirError``, ``ToolErrorOutput`` and ``WorkerResult``. Field by field:

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
                     :func:`from_air_error` gives the same Failure back
===================  ==============================================================

Seed 003 (AFK): ``code, category, message, cause, remedy, recoverable, context``. Seed 003 has
four categories; a ``task`` Failure has no AFK form and projecting one raises
:class:`ProjectionError`.
"""

from typing import Any, Literal, NotRequired, TypedDict

import msgspec

from failcode.record._axes import KIND_DEFAULTS, SEED_003_CATEGORIES, Outcome
from failcode.record._failure import CauseLink, EntityRef, Failure, FailureDecodeError

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
    """A Failure has no form in the target contract (e.g. a task failure in seed 003's)."""


class EntityRefDict(TypedDict):
    """Seed 000 EntityRef."""

    type: str
    id: str


class AirError(TypedDict):
    """Seed 000 ``AirError``, as a JSON-ready dict."""

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
    """Seed 000 ``ToolErrorOutput``."""

    error: AirError
    partial_output: NotRequired[Any]
    artifact_ids: NotRequired[list[str]]
    evidence_ref_ids: NotRequired[list[str]]


class WorkerResult(TypedDict):
    """Seed 000 ``WorkerResult`` of a task that did not succeed."""

    status: Literal["failed", "blocked", "cancelled"]
    error: AirError


class AFKError(TypedDict):
    """Seed 003's error: what an AFK error carries."""

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


def to_air_error(failure: Failure) -> AirError:
    """The Failure as seed 000's ``AirError`` (see the module docstring for the field map)."""
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
    metadata["failcode"] = {field: record[field] for field in _FAILCODE_ONLY}
    air["metadata"] = metadata
    return air


def from_air_error(air: AirError | dict[str, Any]) -> Failure:
    """The Failure back from an ``AirError`` made by :func:`to_air_error`.

    Raises:
        ProjectionError: the AirError carries no ``metadata.failcode`` (it was not made by
            failcode, so code and category are unknown) or does not form a valid Failure.
    """
    metadata = dict(air.get("metadata") or {})
    extra = metadata.pop("failcode", None)
    if not isinstance(extra, dict):
        msg = "this AirError has no metadata.failcode: only failcode-made AirErrors convert back"
        raise ProjectionError(msg)
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
    """The Failure as seed 000's ``ToolErrorOutput``; evidence_ref_ids from evidence_refs."""
    output: ToolErrorOutput = {"error": to_air_error(failure)}
    if partial_output is not None:
        output["partial_output"] = partial_output
    if artifact_ids:
        output["artifact_ids"] = list(artifact_ids)
    if failure.evidence_refs:
        output["evidence_ref_ids"] = [ref.id for ref in failure.evidence_refs]
    return output


def to_worker_result(failure: Failure, status: Outcome | None = None) -> WorkerResult:
    """The Failure as seed 000's ``WorkerResult``.

    ``status`` defaults to the kind's task outcome (:data:`~failcode.KIND_DEFAULTS`); pass a
    Decision's outcome when there is one. A success has no WorkerResult error, so ``status`` is
    one of failed, blocked, cancelled.
    """
    outcome = Outcome(status) if status is not None else KIND_DEFAULTS[failure.kind].outcome
    return {"status": outcome.value, "error": to_air_error(failure)}


def _cause_text(cause: tuple[CauseLink, ...]) -> str | None:
    if not cause:
        return None
    first = cause[0]
    return f"{first.type}: {first.message}" if first.message else first.type


def to_afk_error(failure: Failure) -> AFKError:
    """The Failure as seed 003's error.

    Raises:
        ProjectionError: the Failure's category is ``task``, which seed 003 does not have.
    """
    if failure.category not in SEED_003_CATEGORIES:
        allowed = ", ".join(sorted(c.value for c in SEED_003_CATEGORIES))
        msg = (f"{failure.code} has category {failure.category.value}, which seed 003 errors "
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

