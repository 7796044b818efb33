"""failcode.boundary: the one table every boundary reads (CLI exit codes, HTTP status).

A boundary turns a result (success, a :class:`~failcode.Failure`, or a non-error outcome such as a
:class:`~failcode.Veto`) into what crosses it: a process exit code, an HTTP status with a
seed-level error code and an RFC 9457 problem body, stderr text or a JSON line. Every one of those
reads :data:`BOUNDARY_TABLE`, a reviewed table of :class:`BoundaryRow` s, tested row by row and
printed in ``docs/boundaries.md``.

A row is keyed by any of: a code, an error class, an outcome name, a kind, a category. The most
specific matching row wins (code > error class > kind > category; a row with several keys must
match all of them and beats a row with fewer); a Failure no other row matches takes the fallback
row, the "unexpected" one. Outcome rows match outcomes only (``success``, ``veto``,
``cancelled``, ``peer_exited``, and the pipeline's stop reasons ``convergence``,
``max_iterations``, ``budget_exhausted`` and ``fatal_failure``; a user interruption is
``cancelled`` and a verification veto ``veto``).

Exit profiles:

* ``default``: 0 success; 2 invalid or missing input paths and missing replay traces;
  1 configuration, key validation, a veto and unexpected errors (and every other failure).
* ``sysexits``: ``/usr/include/sysexits.h``: EX_USAGE 64, EX_DATAERR 65, EX_NOINPUT 66,
  EX_UNAVAILABLE 69, EX_SOFTWARE 70, EX_OSERR 71, EX_TEMPFAIL 75 (transient: "the user is
  invited to retry"), EX_NOPERM 77, EX_CONFIG 78; 1 where sysexits has no word (a veto, a failed
  task), 130 for a cancellation in both profiles.

HTTP (the agent-pipeline profile): malformed JSON and schema failures 400
VALIDATION_ERROR; execution failures 422 EXECUTION_ERROR, a convergence stop 422 CONVERGENCE_STOP,
a verification veto 422 VERIFICATION_VETO (never 200); a transient failure 503 EXECUTION_ERROR
with ``Retry-After`` when the decision has a delay; anything unexpected (a defect, an unclassified
or system failure, a server misconfiguration, a plain exception) 500 INTERNAL_ERROR with no
internals in the body. Consumers branch on the code, never on message text.

Nothing here imports click, typer, rich or a web framework at import time.
"""

from __future__ import annotations

import functools
import math
import os
import sys
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final, NamedTuple, TextIO, TypeVar, cast

from failcode.record._axes import Category, Kind, Retryability
from failcode.record._failure import Failure, FailureError
from failcode.record._outcomes import (
    Cancelled,
    NoMatch,
    PeerExited,
    RejectedAction,
    SessionEnded,
    SessionStarted,
    Veto,
)
from failcode.signature._redact import redact

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from failcode.record._outcomes import NonErrorOutcome

__all__ = [
    "BOUNDARY_TABLE",
    "PROBLEM_CONTENT_TYPE",
    "BoundaryRow",
    "BoundaryTable",
    "ErrorCode",
    "ExitProfile",
    "OutcomeError",
    "Problem",
    "exit_code",
    "handle_failures",
    "http_status",
    "outcome_name",
    "problem",
    "report_and_exit_code",
    "resolve",
]

PROBLEM_CONTENT_TYPE: Final = "application/problem+json"


class ErrorCode(StrEnum):
    """The seed-level error code a boundary reports beside the FC code."""

    VALIDATION_ERROR = "VALIDATION_ERROR"
    EXECUTION_ERROR = "EXECUTION_ERROR"
    CONVERGENCE_STOP = "CONVERGENCE_STOP"
    VERIFICATION_VETO = "VERIFICATION_VETO"
    INTERNAL_ERROR = "INTERNAL_ERROR"


class ExitProfile(StrEnum):
    """Which exit-code column a CLI uses."""

    DEFAULT = "default"
    """the pipeline CLI's conditions: 0, 1 and 2."""
    SYSEXITS = "sysexits"
    """sysexits.h codes (EX_TEMPFAIL 75 for transient failures...)."""


class OutcomeError(Exception):
    """Carries a non-error outcome (a veto, a stop reason) up to a boundary.

    A veto or a convergence stop is not a Failure and never becomes success; raising
    this lets a command or an endpoint end with it, and the boundary reports its row (a veto:
    exit 1, HTTP 422 VERIFICATION_VETO).

    Args:
        outcome: a failcode outcome (``Veto(...)``) or a stop reason name (``"convergence"``).
        detail: what to say about a named stop reason (a Veto says its own ``reason``).
    """

    def __init__(self, outcome: NonErrorOutcome | str, detail: str | None = None) -> None:
        super().__init__(outcome)
        self.outcome = outcome
        self.detail = detail

    def __str__(self) -> str:
        name = outcome_name(self.outcome)
        reason = getattr(self.outcome, "reason", None) or self.detail
        return f"{name}: {reason}" if reason else name


class BoundaryRow(NamedTuple):
    """One reviewed row: what a matching result becomes at each boundary.

    Keys (None = any): ``code``, ``error_class``, ``outcome``, ``kind``, ``category``. A row
    with no key at all is the fallback for anything unexpected.
    """

    condition: str
    """What the row covers, in words (shown in docs/boundaries.md)."""
    exit_default: int
    exit_sysexits: int
    http_status: int
    error_code: ErrorCode | None
    """None only for success."""
    code: str | None = None
    error_class: str | None = None
    outcome: str | None = None
    kind: Kind | None = None
    category: Category | None = None

    @property
    def specificity(self) -> int:
        """How specific the key is: a code outweighs a class, a class a kind, a kind a category."""
        return ((self.code is not None) * 8 + (self.error_class is not None) * 4
                + (self.kind is not None) * 2 + (self.category is not None))

    @property
    def is_fallback(self) -> bool:
        """Whether the row has no key at all."""
        return self.outcome is None and self.specificity == 0

    @property
    def key(self) -> tuple[str | None, ...]:
        """The row's key as a tuple (code, class, outcome, kind, category)."""
        return (self.code, self.error_class, self.outcome,
                None if self.kind is None else self.kind.value,
                None if self.category is None else self.category.value)

    def exit_code(self, profile: ExitProfile | str = ExitProfile.DEFAULT) -> int:
        """The exit code of this row in ``profile``."""
        if ExitProfile(profile) is ExitProfile.SYSEXITS:
            return self.exit_sysexits
        return self.exit_default


_E = ErrorCode
_K, _C = Kind, Category

# sysexits.h
EX_OK: Final = 0
EX_USAGE: Final = 64
EX_DATAERR: Final = 65
EX_NOINPUT: Final = 66
EX_UNAVAILABLE: Final = 69
EX_SOFTWARE: Final = 70
EX_OSERR: Final = 71
EX_TEMPFAIL: Final = 75
EX_NOPERM: Final = 77
EX_CONFIG: Final = 78
EXIT_CANCELLED: Final = 130
"""128 + SIGINT, the shell's convention for an interrupted command."""

# The reviewed rows. Order matters only between rows of equal specificity (the first wins).
# failcode.pipeline adds the stop-reason outcomes and the invalid-trace code.
ROWS: Final[tuple[BoundaryRow, ...]] = (
    # -- outcomes ---------------------------------------------------------------------------
    BoundaryRow("success", 0, EX_OK, 200, None, outcome="success"),
    BoundaryRow("a verification veto: a recorded negative decision, never success",
                1, 1, 422, _E.VERIFICATION_VETO, outcome="veto"),
    BoundaryRow("a convergence stop: the run ended without a success",
                1, 1, 422, _E.CONVERGENCE_STOP, outcome="convergence"),
    BoundaryRow("a pipeline stopped at its iteration limit", 1, 1, 422, _E.EXECUTION_ERROR,
                outcome="max_iterations"),
    BoundaryRow("a pipeline stopped with its budget exhausted", 1, 1, 422, _E.EXECUTION_ERROR,
                outcome="budget_exhausted"),
    BoundaryRow("a pipeline aborted by a failure: the decision path did not finish",
                1, 1, 422, _E.EXECUTION_ERROR, outcome="fatal_failure"),
    BoundaryRow("an explicit cancellation (user interrupt, task cancelled)",
                EXIT_CANCELLED, EXIT_CANCELLED, 422, _E.EXECUTION_ERROR, outcome="cancelled"),
    BoundaryRow("the peer process on the other side of a pipe exited",
                1, EX_UNAVAILABLE, 500, _E.INTERNAL_ERROR, outcome="peer_exited"),
    # -- exit 2: invalid or missing input ------------------------------------------
    BoundaryRow("invalid input: a schema or contract failure", 2, EX_DATAERR, 400,
                _E.VALIDATION_ERROR, error_class="validation"),
    BoundaryRow("malformed JSON input", 2, EX_DATAERR, 400, _E.VALIDATION_ERROR,
                error_class="malformed_json"),
    BoundaryRow("a missing input path", 2, EX_NOINPUT, 422, _E.EXECUTION_ERROR,
                code="FC-OS-002"),
    BoundaryRow("a missing replay trace", 2, EX_NOINPUT, 422, _E.EXECUTION_ERROR,
                error_class="replay_trace_missing"),
    BoundaryRow("an invalid pipeline trace (replay input)", 2, EX_DATAERR, 400,
                _E.VALIDATION_ERROR, code="FC-LIFE-007"),
    # -- the service (failcode serve): its own HTTP statuses ---------------------------------
    BoundaryRow("a request without a valid service key", 1, EX_NOPERM, 401,
                _E.VALIDATION_ERROR, code="FC-SVC-001"),
    BoundaryRow("a service key without the scope or project a route needs", 1, EX_NOPERM, 403,
                _E.VALIDATION_ERROR, code="FC-SVC-002"),
    BoundaryRow("a service route or resource that does not exist", 2, EX_USAGE, 404,
                _E.VALIDATION_ERROR, code="FC-SVC-003"),
    BoundaryRow("a request larger than the service accepts", 2, EX_DATAERR, 413,
                _E.VALIDATION_ERROR, code="FC-SVC-004"),
    BoundaryRow("too many requests from one service key", 1, EX_TEMPFAIL, 429,
                _E.EXECUTION_ERROR, code="FC-SVC-005"),
    BoundaryRow("a request body in an encoding the service does not read", 2, EX_DATAERR, 415,
                _E.VALIDATION_ERROR, code="FC-SVC-006"),
    BoundaryRow("a change that conflicts with the service's state", 1, 1, 409,
                _E.EXECUTION_ERROR, code="FC-SVC-007"),
    BoundaryRow("over HTTP: the store is down (retry later)", 1, EX_UNAVAILABLE, 503,
                _E.EXECUTION_ERROR, code="FC-STORE-002"),
    BoundaryRow("over HTTP: the store refused a write (retry later)", 1, EX_OSERR, 503,
                _E.EXECUTION_ERROR, code="FC-STORE-011"),
    BoundaryRow("over HTTP: the store is full (retry after space is freed)", 1, EX_OSERR, 503,
                _E.EXECUTION_ERROR, code="FC-STORE-006"),
    BoundaryRow("the store stayed locked by another writer (retry; over HTTP 503)", 1,
                EX_TEMPFAIL, 503, _E.EXECUTION_ERROR, code="FC-STORE-003"),
    # -- exit 1: configuration, key validation ------------------------------------
    BoundaryRow("a configuration failure (over HTTP: the server's own misconfiguration)",
                1, EX_CONFIG, 500, _E.INTERNAL_ERROR, kind=_K.PROJECT_ERROR),
    BoundaryRow("rejected API credentials (key validation)", 1, EX_NOPERM, 422,
                _E.EXECUTION_ERROR, error_class="auth"),
    BoundaryRow("access denied to a file or resource", 1, EX_NOPERM, 422, _E.EXECUTION_ERROR,
                error_class="permission_denied"),
    BoundaryRow("a policy or permission refusal", 1, EX_NOPERM, 422, _E.EXECUTION_ERROR,
                kind=_K.POLICY_ERROR),
    BoundaryRow("an action that needs a permission", 1, EX_NOPERM, 422, _E.EXECUTION_ERROR,
                kind=_K.PERMISSION_ERROR),
    BoundaryRow("a missing program, module or dependency", 1, EX_UNAVAILABLE, 422,
                _E.EXECUTION_ERROR, kind=_K.DEPENDENCY_ERROR),
    BoundaryRow("the machine's resources failed (disk, memory, a killed process)",
                1, EX_OSERR, 500, _E.INTERNAL_ERROR, kind=_K.SYSTEM_ERROR),
    BoundaryRow("an unclassified failure", 1, EX_SOFTWARE, 500, _E.INTERNAL_ERROR,
                kind=_K.UNKNOWN_ERROR),
    # -- by category --------------------------------------------------------------------------
    BoundaryRow("a transient failure: retrying may succeed", 1, EX_TEMPFAIL, 503,
                _E.EXECUTION_ERROR, category=_C.TRANSIENT),
    BoundaryRow("a defect: the agent or the library is wrong", 1, EX_SOFTWARE, 500,
                _E.INTERNAL_ERROR, category=_C.DEFECT),
    BoundaryRow("a failure the user must fix", 1, 1, 422, _E.EXECUTION_ERROR,
                category=_C.USER),
    BoundaryRow("the environment is missing something or broken", 1, EX_UNAVAILABLE, 422,
                _E.EXECUTION_ERROR, category=_C.ENVIRONMENT),
    BoundaryRow("the task failed (build, test, analysis, merge, command)", 1, 1, 422,
                _E.EXECUTION_ERROR, category=_C.TASK),
    # -- anything else ------------------------------------------------------------------------
    BoundaryRow("anything unexpected (a plain exception, an unknown code)", 1, EX_SOFTWARE,
                500, _E.INTERNAL_ERROR),
)


class BoundaryTable:
    """A checked set of rows and the lookup every boundary uses.

    Args:
        rows: the rows; see :data:`ROWS` for failcode's.

    Raises:
        ValueError: two rows share a key, there is not exactly one fallback row, a row has an
            exit code outside 0..255 or an HTTP status outside 100..599, or a non-success row
            lacks an error code.
    """

    def __init__(self, rows: Iterable[BoundaryRow]) -> None:
        self.rows: tuple[BoundaryRow, ...] = tuple(rows)
        problems: list[str] = []
        seen: dict[tuple[str | None, ...], str] = {}
        for row in self.rows:
            if row.key in seen:
                problems.append(f"rows {seen[row.key]!r} and {row.condition!r} share a key")
            seen[row.key] = row.condition
            if not (0 <= row.exit_default <= 255 and 0 <= row.exit_sysexits <= 255):
                problems.append(f"{row.condition!r}: exit codes must be in 0..255")
            if not 100 <= row.http_status <= 599:
                problems.append(f"{row.condition!r}: HTTP status must be in 100..599")
            if row.error_code is None and row.http_status >= 400:
                problems.append(f"{row.condition!r}: an error status needs an error code")
            if row.outcome is not None and row.specificity:
                problems.append(f"{row.condition!r}: an outcome row has no failure keys")
        fallbacks = [row for row in self.rows if row.is_fallback]
        if len(fallbacks) != 1:
            problems.append(f"exactly one fallback row (no keys) is needed, got {len(fallbacks)}")
        if problems:
            raise ValueError("invalid boundary table:\n  - " + "\n  - ".join(problems))
        self.fallback = fallbacks[0]
        self._outcomes = {row.outcome: row for row in self.rows if row.outcome is not None}
        self._failure_rows = sorted(
            (row for row in self.rows if row.outcome is None and not row.is_fallback),
            key=lambda row: -row.specificity)
        self._for_failure = functools.lru_cache(maxsize=1024)(self._match)

    def _match(self, code: str, error_class: str, kind: Kind, category: Category) -> BoundaryRow:
        for row in self._failure_rows:
            if ((row.code is None or row.code == code)
                    and (row.error_class is None or row.error_class == error_class)
                    and (row.kind is None or row.kind is kind)
                    and (row.category is None or row.category is category)):
                return row
        return self.fallback

    def for_failure(self, failure: Failure) -> BoundaryRow:
        """The row of a Failure (most specific match, else the fallback)."""
        return self._for_failure(failure.code, failure.error_class, failure.kind,
                                 failure.category)

    def for_outcome(self, name: str) -> BoundaryRow:
        """The row of an outcome name (``success``, ``veto``...); the fallback if none."""
        return self._outcomes.get(name, self.fallback)

    def resolve(self, item: object) -> BoundaryRow:
        """The row of anything a boundary may see; see :func:`resolve`."""
        if item is None:
            return self._outcomes.get("success", self.fallback)
        if isinstance(item, Failure):
            return self.for_failure(item)
        if isinstance(item, FailureError):
            return self.for_failure(item.failure)
        if isinstance(item, OutcomeError):
            return self.for_outcome(outcome_name(item.outcome))
        if isinstance(item, (str, Veto, Cancelled, PeerExited, NoMatch, RejectedAction,
                             SessionStarted, SessionEnded)):
            return self.for_outcome(outcome_name(item))
        return self.fallback


BOUNDARY_TABLE: Final = BoundaryTable(ROWS)
"""failcode's reviewed boundary table."""


_OUTCOME_NAMES: Final[dict[type, str]] = {
    Veto: "veto", Cancelled: "cancelled", PeerExited: "peer_exited",
    NoMatch: "no_match", RejectedAction: "rejected_action",
    SessionStarted: "session_started", SessionEnded: "session_ended",
}


def outcome_name(outcome: NonErrorOutcome | str) -> str:
    """The row name of an outcome: ``veto`` for a Veto, the string itself for a stop reason.

    Raises:
        ValueError: a NoMatch or a RejectedAction: they are information for the caller (the
            model, the probe's user), never a boundary's result; a SessionStarted or
            SessionEnded: what an observer says of an agent's session, never a process's
            result either.
    """
    if isinstance(outcome, str):
        return outcome
    name = _OUTCOME_NAMES.get(type(outcome))
    if name is None:
        msg = f"not a failcode outcome: {type(outcome).__name__}"
        raise TypeError(msg)
    if name in ("no_match", "rejected_action"):
        msg = (f"a {type(outcome).__name__} is information for the caller, not a boundary "
               f"result; report what the command concluded instead")
        raise ValueError(msg)
    if name in ("session_started", "session_ended"):
        msg = (f"a {type(outcome).__name__} says what an agent's session did, not what this "
               f"process concluded; report the process's own result instead")
        raise ValueError(msg)
    return name


def resolve(item: object, *, table: BoundaryTable = BOUNDARY_TABLE) -> BoundaryRow:
    """The boundary row of a result.

    Args:
        item: None (success), a Failure or FailureError, an outcome (``Veto``, ``Cancelled``,
            ``PeerExited``) or an OutcomeError carrying one, an outcome name (``"success"``,
            ``"convergence"``), or any other exception (the fallback: unexpected).

    Raises:
        ValueError: a NoMatch or RejectedAction (never a boundary result).
    """
    return table.resolve(item)


def exit_code(item: object, profile: ExitProfile | str = ExitProfile.DEFAULT, *,
              table: BoundaryTable = BOUNDARY_TABLE) -> int:
    """The process exit code of a result in ``profile`` (see :func:`resolve` for ``item``)."""
    return table.resolve(item).exit_code(profile)


def http_status(item: object, *, table: BoundaryTable = BOUNDARY_TABLE,
                ) -> tuple[int, ErrorCode | None]:
    """The HTTP status and seed-level error code of a result."""
    row = table.resolve(item)
    return row.http_status, row.error_code


# ---------------------------------------------------------------------------------------------
# HTTP: RFC 9457 problem details


class Problem(NamedTuple):
    """An HTTP error response: status, headers (content type, Retry-After) and the JSON body."""

    status: int
    headers: dict[str, str]
    body: dict[str, Any]


def _delay_of(decision: object) -> float | None:
    if decision is None:
        return None
    delay = decision if isinstance(decision, (int, float)) else getattr(decision, "delay_s", None)
    if isinstance(delay, bool) or not isinstance(delay, (int, float)):
        return None
    return float(delay) if math.isfinite(delay) and delay > 0 else None


def _docs_url(code: str) -> str | None:
    from failcode.codes._registry import UnknownCodeError, catalogs, lookup  # noqa: PLC0415 - cheap

    try:
        spec = lookup(code)
    except UnknownCodeError:
        return None
    for catalog in catalogs():
        if catalog.prefix == spec.prefix:
            return catalog.docs_url_for(spec)
    return None


def _phrase(status: int) -> str:
    from http import HTTPStatus  # noqa: PLC0415 - only problem bodies need the phrases

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def problem(
    item: object,
    *,
    decision: object = None,
    locale: str | None = None,
    table: BoundaryTable = BOUNDARY_TABLE,
) -> Problem:
    """The RFC 9457 ``application/problem+json`` response of a result.

    The body has the standard members ``type`` (the code's documentation URL when it is
    absolute, else ``about:blank``), ``title`` (the status phrase), ``status``, ``detail`` (the
    message, in ``locale``) and ``instance`` (``urn:failcode:error:<error_id>``), plus ``code``
    (the FC code), ``error_code`` (the coarse, contract-level code: VALIDATION_ERROR,
    EXECUTION_ERROR, ...), ``message`` (= detail), ``signature``, ``retryability``,
    ``retryable``, ``kind``, ``category``, ``remedy`` (user and environment failures) and
    ``docs``. A 500 body carries only the code, error code, a generic detail and the instance:
    no message, signature or class, which could expose internals.

    Args:
        item: as for :func:`resolve`; a plain exception gives a 500 with code ``FC-SYS-001``.
        decision: a Decision (anything with ``delay_s``) or a delay in seconds; a positive delay
            adds ``Retry-After`` in whole seconds, rounded up.
        locale: the language of ``detail`` and ``remedy`` (e.g. from Accept-Language).

    Raises:
        ValueError: a NoMatch or RejectedAction (never a boundary result).
    """
    from failcode.render._i18n import ui_text  # noqa: PLC0415 - rendering only
    from failcode.render._render import _localized, _spec  # noqa: PLC0415 - rendering only

    row = table.resolve(item)
    status = row.http_status
    headers = {"content-type": PROBLEM_CONTENT_TYPE}
    delay = _delay_of(decision)
    if delay is not None:
        headers["retry-after"] = str(math.ceil(delay))
    body: dict[str, Any] = {"type": "about:blank", "title": _phrase(status), "status": status}
    failure = item.failure if isinstance(item, FailureError) else item
    error_code = None if row.error_code is None else row.error_code.value
    if row.error_code is ErrorCode.INTERNAL_ERROR:
        detail = ui_text("ui.internal", locale)
        code = failure.code if isinstance(failure, Failure) else "FC-SYS-001"
        body.update(detail=detail, code=code, error_code=error_code, message=detail)
        if isinstance(failure, Failure):
            body["instance"] = f"urn:failcode:error:{failure.error_id}"
        return Problem(status, headers, body)
    if isinstance(failure, Failure):
        spec = _spec(failure.code)
        message = _localized(failure, spec, "message", failure.message, locale)
        docs = _docs_url(failure.code)
        if docs and docs.startswith(("https://", "http://")):
            body["type"] = docs
        body.update(
            detail=message, instance=f"urn:failcode:error:{failure.error_id}",
            code=failure.code, error_code=error_code, message=message,
            signature=failure.signature, retryability=failure.retryability.value,
            retryable=failure.retryability is Retryability.RETRYABLE,
            kind=failure.kind.value, category=failure.category.value)
        if failure.category.needs_remedy:
            body["remedy"] = _localized(failure, spec, "remedy", failure.remedy, locale)
        if docs:
            body["docs"] = docs
    else:
        outcome = item.outcome if isinstance(item, OutcomeError) else item
        name = "success" if outcome is None else outcome_name(cast("Any", outcome))
        reason = getattr(outcome, "reason", None) or (
            item.detail if isinstance(item, OutcomeError) else None) or name
        body.update(detail=reason, error_code=error_code, message=reason, outcome=name,
                    retryable=False)
        by = getattr(outcome, "by", None)
        if by:
            body["by"] = by
    body = {key: redact(value) if isinstance(value, str) else value
            for key, value in body.items()}
    return Problem(status, headers, body)


# ---------------------------------------------------------------------------------------------
# CLI: stderr text, --json lines, exit codes, click and typer helpers


def _as_failure(exc: BaseException) -> Failure:
    """A FailureError's record, or FC-SYS-001 for an unexpected exception."""
    if isinstance(exc, FailureError):
        return exc.failure
    from failcode.codes._catalog import FC  # noqa: PLC0415 - only the unexpected path needs it

    return FC.SYS_UNKNOWN.failure(surface="cli", params={"exception": type(exc).__name__},
                                  cause=exc)


def report_and_exit_code(
    item: object,
    *,
    profile: ExitProfile | str = ExitProfile.DEFAULT,
    as_json: bool = False,
    locale: str | None = None,
    stderr: TextIO | None = None,
    stdout: TextIO | None = None,
    show_traceback: bool | None = None,
    table: BoundaryTable = BOUNDARY_TABLE,
) -> int:
    """Report a CLI's result and return its exit code.

    A failure is rendered as user text on stderr (in ``locale``, default: the environment's
    language); with ``as_json`` one envelope line (``{"failcode":1,"type":"failure",...}``, the
    format of :func:`failcode.encode_envelope`) goes to stdout instead, so a consumer reading the
    command's JSON gets a parseable line. An outcome (a veto) is reported the same way. An
    unexpected exception becomes ``FC-SYS-001`` and takes the fallback row; its traceback is
    shown only with ``show_traceback`` (default: the ``FAILCODE_TRACEBACK=1`` variable).
    Success prints nothing.
    """
    row = table.resolve(item)
    if item is None or row.error_code is None:
        return row.exit_code(profile)
    from failcode.record._envelope import encode  # noqa: PLC0415 - only failing commands need it
    from failcode.render._i18n import locale_from_env, ui_text  # noqa: PLC0415 - idem
    from failcode.render._render import render_developer, render_user  # noqa: PLC0415 - idem

    err = stderr if stderr is not None else sys.stderr
    out = stdout if stdout is not None else sys.stdout
    language = locale if locale is not None else locale_from_env()
    if show_traceback is None:
        show_traceback = os.environ.get("FAILCODE_TRACEBACK") == "1"
    outcome: Any = item.outcome if isinstance(item, OutcomeError) else item
    if isinstance(outcome, (Veto, Cancelled, PeerExited)):
        if as_json:
            out.write(encode(outcome).decode() + "\n")
        else:
            reason = redact(getattr(outcome, "reason", ""))
            err.write(f"{outcome_name(outcome)}: {reason}\n")
        return row.exit_code(profile)
    if isinstance(outcome, str):
        detail = item.detail if isinstance(item, OutcomeError) else None
        if as_json:
            import json  # noqa: PLC0415 - a named stop reason has no envelope type yet

            out.write(json.dumps({"failcode": 1, "type": "outcome",
                                  "body": {"outcome": outcome, "detail": detail}}) + "\n")
        else:
            err.write(redact(f"{outcome}: {detail}" if detail else outcome) + "\n")
        return row.exit_code(profile)
    exc = item if isinstance(item, BaseException) else None
    failure = item if isinstance(item, Failure) else _as_failure(cast("BaseException", item))
    if as_json:
        out.write(encode(failure).decode() + "\n")
    else:
        err.write(render_user(failure, locale=language))
        if show_traceback:
            err.write(render_developer(failure, exc=exc))
        elif exc is not None and not isinstance(exc, FailureError):
            err.write(ui_text("ui.traceback_hint", language) + "\n")
    err.flush()
    out.flush()
    return row.exit_code(profile)


_F = TypeVar("_F", bound="Callable[..., Any]")


def _is_framework_exit(exc: BaseException) -> bool:
    """Whether ``exc`` is click's or typer's own control flow (usage errors, Exit, Abort)."""
    import click  # noqa: PLC0415 - the decorated command runs under click anyway

    if isinstance(exc, (click.exceptions.ClickException, click.exceptions.Exit,
                        click.exceptions.Abort)):
        return True
    typer_exceptions = sys.modules.get("typer.exceptions")
    # typer >= 0.16 has its own Exit and Abort, not click's subclasses
    return typer_exceptions is not None and isinstance(
        exc, (getattr(typer_exceptions, "Exit", ()), getattr(typer_exceptions, "Abort", ())))


def _exit(code: int) -> BaseException:
    """The exit exception the running framework honours: typer's, click's, or SystemExit."""
    import click  # noqa: PLC0415 - the decorated command runs under click anyway

    context = click.get_current_context(silent=True)
    if context is None:
        return SystemExit(code)
    if type(context.command).__module__.startswith("typer"):
        import typer  # noqa: PLC0415 - a typer command: typer is installed

        return cast("BaseException", typer.Exit(code))
    return click.exceptions.Exit(code)


def handle_failures(
    function: _F | None = None,
    *,
    profile: ExitProfile | str = ExitProfile.DEFAULT,
    json_param: str | None = "json",
    locale: str | None = None,
    unexpected: bool = True,
    table: BoundaryTable = BOUNDARY_TABLE,
) -> Any:
    """Decorate a click or typer command so a raised failure exits with its code and message.

    ``@handle_failures`` (or ``@handle_failures(profile="sysexits")``) goes directly above the
    function, under ``@click.command()`` / ``@app.command()``. A raised :class:`FailureError`
    or :class:`OutcomeError` is reported by :func:`report_and_exit_code` and the command exits
    with the row's code (through typer's or click's ``Exit``, whichever runs the command).
    When the command has a parameter named ``json_param`` that is true, the report is a JSON
    line on stdout. With ``unexpected`` (the default) any other exception is reported as
    ``FC-SYS-001`` and exits with the fallback row's code (1) instead of a traceback; click's
    own exceptions (usage errors, ``Exit``, ``Abort``) and typer's pass through untouched.
    """

    def decorate(fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                if _is_framework_exit(exc):
                    raise
                if not unexpected and not isinstance(exc, (FailureError, OutcomeError)):
                    raise
                as_json = bool(json_param and kwargs.get(json_param))
                code = report_and_exit_code(exc, profile=profile, as_json=as_json,
                                            locale=locale, table=table)
                raise _exit(code) from None

        return cast("_F", wrapper)

    if function is not None:
        return decorate(function)
    return decorate


def _mapping_for_docs(rows: Iterable[BoundaryRow]) -> list[Mapping[str, str]]:
    """Rows as strings, in table order (for docs/boundaries.md)."""
    result: list[Mapping[str, str]] = []
    for row in rows:
        keys = [f"{name}={value}" for name, value in (
            ("outcome", row.outcome), ("code", row.code), ("class", row.error_class),
            ("kind", row.kind and row.kind.value),
            ("category", row.category and row.category.value)) if value is not None]
        result.append({
            "key": ", ".join(keys) or "(fallback)", "condition": row.condition,
            "exit": str(row.exit_default), "sysexits": str(row.exit_sysexits),
            "http": str(row.http_status),
            "error_code": row.error_code.value if row.error_code else "-"})
    return result


def boundaries_markdown(table: BoundaryTable = BOUNDARY_TABLE) -> str:
    """The table section of docs/boundaries.md, generated from the rows."""
    lines = [
        "| key | condition | exit (default) | exit (sysexits) | HTTP | error code |",
        "|---|---|---|---|---|---|",
    ]
    lines.extend(
        f"| `{r['key']}` | {r['condition']} | {r['exit']} | {r['sysexits']} | {r['http']} | "
        f"{r['error_code']} |" for r in _mapping_for_docs(table.rows))
    return "\n".join(lines) + "\n"
