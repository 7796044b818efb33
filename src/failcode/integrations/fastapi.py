"""FastAPI / Starlette exception handlers answering with RFC 9457 ``application/problem+json``.

::

    from failcode.integrations.fastapi import install_problem_handlers
    app = FastAPI()
    install_problem_handlers(app)

Malformed JSON and schema failures answer 400 VALIDATION_ERROR; a raised
:class:`~failcode.FailureError` answers its boundary row (execution failures 422, transient 503
with ``Retry-After`` when the failure's decision has a delay); an
:class:`~failcode.boundary.OutcomeError` carrying a veto answers 422 VERIFICATION_VETO; anything
unexpected answers 500 INTERNAL_ERROR with no internals in the body (the developer detail goes
to the ``failcode.http`` logger). The body's language follows ``Accept-Language`` when a
catalog for it is shipped. Needs the ``fastapi`` extra.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

try:
    from fastapi.exceptions import RequestValidationError
    from starlette.responses import JSONResponse
except ImportError as exc:  # pragma: no cover - depends on the environment
    msg = "failcode.integrations.fastapi needs FastAPI: pip install 'failcode[fastapi]'"
    raise ImportError(msg) from exc

from failcode.boundary import OutcomeError, problem
from failcode.record._failure import FailureError
from failcode.render._i18n import available_languages

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request

__all__ = ["install_problem_handlers", "negotiate_locale", "problem_response"]

_LOG = logging.getLogger("failcode.http")


def negotiate_locale(accept_language: str | None) -> str | None:
    """The first shipped language of an ``Accept-Language`` header (by q-value), else None."""
    if not accept_language:
        return None
    shipped = set(available_languages())
    ranked: list[tuple[float, int, str]] = []
    for index, part in enumerate(accept_language.split(",")):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                quality = 0.0
        if tag:
            ranked.append((-quality, index, tag.strip()))
    for negative_q, _index, tag in sorted(ranked):
        language = tag.split("-", 1)[0].lower()
        if negative_q < 0 and language in shipped:
            return language
    return None


def problem_response(item: object, *, decision: object = None,
                     locale: str | None = None) -> JSONResponse:
    """A problem+json response for a result (see :func:`failcode.boundary.problem`)."""
    result = problem(item, decision=decision, locale=locale)
    return JSONResponse(result.body, status_code=result.status, headers=result.headers,
                        media_type="application/problem+json")


def _locale(request: Request) -> str | None:
    return negotiate_locale(request.headers.get("accept-language"))


async def _on_failure(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, FailureError)
    decision = getattr(exc, "decision", None)
    return problem_response(exc, decision=decision, locale=_locale(request))


async def _on_outcome(request: Request, exc: Exception) -> JSONResponse:
    return problem_response(exc, locale=_locale(request))


def _problem_text(errors: list[Any]) -> tuple[str, str]:
    """(error class, problem phrase) of pydantic's errors: malformed JSON or a schema failure."""
    malformed = any(error.get("type") == "json_invalid" for error in errors)
    first = errors[0] if errors else {}
    where = ".".join(str(part) for part in first.get("loc", ()))
    phrase = f"{where}: {first.get('msg', 'invalid')}" if where else str(first.get("msg", ""))
    return ("malformed_json" if malformed else "validation"), phrase or "invalid request"


async def _on_validation(request: Request, exc: Exception) -> JSONResponse:
    from failcode.codes._catalog import FC  # noqa: PLC0415 - the catalog is needed on this path only

    assert isinstance(exc, RequestValidationError)
    errors = list(exc.errors())
    error_class, phrase = _problem_text(errors)
    failure = FC.DATA_INVALID_INPUT.failure(
        surface="http.request", error_class=error_class, params={"problem": phrase},
        context={"method": request.method, "path": request.url.path})
    response = problem(failure, locale=_locale(request))
    # field locations and types help a client fix its request; the input values stay out
    response.body["errors"] = [
        {"loc": [str(part) for part in error.get("loc", ())], "type": str(error.get("type")),
         "msg": str(error.get("msg"))} for error in errors[:20]]
    return JSONResponse(response.body, status_code=response.status, headers=response.headers,
                        media_type="application/problem+json")


async def _on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    from failcode.boundary import _as_failure  # noqa: PLC0415 - only on this path
    from failcode.render._render import render_developer  # noqa: PLC0415 - only on this path

    failure = _as_failure(exc)
    _LOG.error("unexpected error answering %s %s\n%s", request.method, request.url.path,
               render_developer(failure, exc=exc))
    return problem_response(exc, locale=_locale(request))


def install_problem_handlers(app: Starlette) -> None:
    """Register failcode's handlers on a FastAPI or Starlette app.

    Handles :class:`~failcode.FailureError` (its boundary row; a ``decision`` attribute set on
    the exception adds ``Retry-After``), :class:`~failcode.boundary.OutcomeError` (a veto: 422),
    FastAPI's ``RequestValidationError`` (400; malformed JSON too) and any other exception (500,
    with the developer detail logged to ``failcode.http``). Starlette still re-raises an
    unexpected exception after answering, so the server logs it as well.
    """
    app.add_exception_handler(FailureError, _on_failure)
    app.add_exception_handler(OutcomeError, _on_outcome)
    app.add_exception_handler(RequestValidationError, _on_validation)
    app.add_exception_handler(Exception, _on_unexpected)
