"""The HTTP face of :class:`~failcode.service._service.Service`: FastAPI routes and errors.

Every error is RFC 9457 ``application/problem+json`` with its stable FC code, through
:mod:`failcode.boundary` (the status comes from its table): malformed bodies and schema
failures 400, no key 401, wrong scope or project 403, unknown routes and ids 404, a method a
route does not have 405, bodies over the limits 413, an encoding the door does not read 415,
too many requests 429 and a store that is down 503, each 429 and 503 with ``Retry-After``. An
unexpected exception answers 500 INTERNAL_ERROR with no internals (the detail goes to the
``failcode.http`` logger). Keys never appear in an answer or a log line. Every answer names
the process that gave it in ``X-Failcode-Worker`` (a random id per process, nothing else).

Bodies are bounded before they are read: a ``Content-Length`` over ``max_body_bytes`` is
refused at once, a body that grows past it while streaming is cut and refused, and a gzip
body (``Content-Encoding: gzip``) is inflated at most to ``max_decoded_bytes``.
"""

from __future__ import annotations

import logging
import zlib
from contextlib import asynccontextmanager
from datetime import datetime  # noqa: TC003 - FastAPI reads the annotations at run time
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, cast

import msgspec
from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.routing import APIRoute
from fastapi.security import APIKeyHeader, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from failcode import FC, FailureError, __version__, redact
from failcode.integrations.fastapi import (
    install_problem_handlers,
    negotiate_locale,
    problem_response,
)
from failcode.service._classify import ClassifyRequest, ClassifyResponse, classify_payload
from failcode.service._control import Key  # noqa: TC001 - read at run time, as above
from failcode.service._findings import SORTS, STATUSES  # noqa: TC001 - as above
from failcode.service._service import Service

if TYPE_CHECKING:
    from collections.abc import (
        AsyncIterator,
        Awaitable,
        Callable,
        Coroutine,
        Sequence,
    )

    from starlette.types import Message, Receive, Scope, Send

    from failcode.service._config import ServiceConfig

__all__ = ["create_app"]

_LOG = logging.getLogger("failcode.http")
_PROBLEM: Final = {"content": {"application/problem+json": {"schema": {
    "type": "object", "properties": {
        "type": {"type": "string"}, "title": {"type": "string"},
        "status": {"type": "integer"}, "detail": {"type": "string"},
        "code": {"type": "string"}}}}}}
_ERRORS: Final[dict[int | str, dict[str, Any]]] = {
    status: {"description": text, **_PROBLEM} for status, text in (
        (400, "Malformed body or parameters (FC-DATA-001)"),
        (401, "No valid key (FC-SVC-001)"), (403, "Wrong scope or project (FC-SVC-002)"),
        (404, "No such resource (FC-SVC-003)"), (413, "Body too large (FC-SVC-004)"),
        (415, "Unsupported encoding (FC-SVC-006)"), (429, "Rate limited (FC-SVC-005)"),
        (503, "The store is down, locked or full (FC-STORE-002, -003, -006, -011); Retry-After"))}
_OPEN_ERRORS: Final[dict[int | str, dict[str, Any]]] = {
    s: v for s, v in _ERRORS.items() if s in (404, 503)}
_OTLP_ANSWERS: Final[dict[int | str, dict[str, Any]]] = {**_ERRORS, 200: {
    "description": "Stored; counts in X-Failcode-Received, -New and -Duplicates. An empty "
                   "export response in the request's media type (OTLP/HTTP).",
    "content": {"application/x-protobuf": {"schema": {"type": "string", "format": "binary"}},
                "application/json": {"schema": {"type": "object"}}}}}
_METRICS_ANSWERS: Final[dict[int | str, dict[str, Any]]] = {**_OTLP_ANSWERS, 200: {
    **_OTLP_ANSWERS[200],
    "description": "Read and dropped: nothing is stored; the data points read in "
                   "X-Failcode-Received (-New and -Duplicates are 0). An empty export response "
                   "in the request's media type (OTLP/HTTP)."}}
_RETRY_AFTER_S: Final = 5
_CHALLENGE: Final = 'Bearer realm="failcode"'
"""The ``WWW-Authenticate`` of every 401 (RFC 6750)."""
_NO_NUL: Final = r"^[^\x00]*$"
"""Text a store keeps: no NUL character (PostgreSQL's text cannot hold one)."""
_bearer = HTTPBearer(auto_error=False, description="A key made by `failcode token create`.")
_key_header = APIKeyHeader(name="X-Failcode-Key", auto_error=False,
                           description="The same key, for clients that cannot set "
                                       "Authorization.")

_AUTH: Final = [Depends(_bearer), Depends(_key_header)]

LimitParam = Annotated[int, Query(ge=1, le=500, description="Page size (at most 500).")]
OffsetParam = Annotated[int, Query(ge=0, le=1_000_000, description="Rows to skip (paging).")]
FindingId = Annotated[int, Path(ge=1, le=2**62, description="The finding's number.")]


class ResolveBody(BaseModel):
    """How a finding is resolved."""

    model_config = ConfigDict(extra="forbid")
    in_version: str | None = Field(None, min_length=1, max_length=120, examples=["1.4.0"],
                                   pattern=_NO_NUL,
                                   description="Fixed in this agent version: only a failure "
                                               "from it or a later one reopens the finding.")


class RetentionBody(BaseModel):
    """A project's retention."""

    model_config = ConfigDict(extra="forbid")
    retention_days: int = Field(ge=1, le=36_500, examples=[30],
                                description="Days events are kept; counts and findings stay.")


class WebhookBody(BaseModel):
    """A webhook to add."""

    model_config = ConfigDict(extra="forbid")
    url: str = Field(min_length=8, max_length=2000, pattern=_NO_NUL,
                     examples=["https://hooks.example.com/failcode"])
    on: list[Literal["new_finding", "regression", "rate"]] = Field(min_length=1, max_length=3)
    rate_threshold: int | None = Field(None, ge=1, le=10**9)
    rate_window_s: int = Field(3600, ge=60, le=7 * 86_400, multiple_of=60)
    throttle_s: int = Field(600, ge=0, le=30 * 86_400)
    format: Literal["json", "slack"] = "json"


ProjectParam = Annotated[str | None, Query(
    max_length=40, description="The project; must be the key's own (403 otherwise). Default: "
                               "the key's project.")]


def _problem(exc: FailureError, request: Request) -> Response:
    response = problem_response(exc, locale=negotiate_locale(
        request.headers.get("accept-language")))
    if response.status_code in (429, 503):
        retry = getattr(exc, "retry_after_s", None) or _RETRY_AFTER_S
        response.headers["Retry-After"] = str(int(retry))
    if response.status_code == 401:
        response.headers["WWW-Authenticate"] = _CHALLENGE
    return response


def _redacted_errors(errors: Sequence[Any]) -> list[dict[str, Any]]:
    """Validation errors whose locations and messages went through :func:`failcode.redact`
    (a body's field names are the client's text: a key named like a token is a secret)."""
    return [{**error, "loc": tuple(redact(str(part)) for part in error.get("loc", ())),
             "msg": redact(str(error.get("msg", "")))} for error in errors]


class _BodyLimit:
    """Refuse bodies over ``limit`` bytes (ASGI middleware; see the module)."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared > limit:
                    await _refuse(scope, send, _too_large(f"the body has {declared} bytes, at "
                                                          f"most {limit} are accepted"))
                    return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise _TooLargeError
            return message

        try:
            await self.app(scope, counted, send)
        except _TooLargeError:
            await _refuse(scope, send, _too_large(f"the body grew past {limit} bytes"))


class _WorkerHeader:
    """Name the process that answered in ``X-Failcode-Worker`` (ASGI middleware): the random
    id of its :class:`Service`, which tells the workers and replicas behind one address apart."""

    def __init__(self, app: Any, worker: Callable[[], str]) -> None:
        self.app = app
        self.worker = worker

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        worker = self.worker().encode()

        async def named(message: Message) -> None:
            if message["type"] == "http.response.start" and worker:
                message["headers"] = [*message.get("headers", ()), (b"x-failcode-worker",
                                                                    worker)]
            await send(message)

        await self.app(scope, receive, named)


class _TooLargeError(Exception):
    """A streamed body passed the limit."""


def _too_large(problem: str) -> FailureError:
    return FailureError(FC.SVC_TOO_LARGE.failure(surface="service.http",
                                                 params={"problem": problem}))


async def _refuse(scope: Scope, send: Send, exc: FailureError) -> None:
    response = problem_response(exc)
    await response({**scope}, _no_body, send)


async def _no_body() -> dict[str, Any]:
    return {"type": "http.disconnect"}


def _inflate(body: bytes, encoding: str | None, limit: int) -> bytes:
    """The body after its Content-Encoding (identity or gzip), at most ``limit`` bytes.

    A gzip body is read whole, as :func:`gzip.decompress` reads it: every member, one after
    the other (RFC 1952 section 2.2: a gzip file is a series of members), their outputs
    joined; zero bytes after the last member are padding and skipped. Anything else after a
    member (bytes that begin no member, a member cut short) is a 400 naming the byte offset;
    more than ``limit`` bytes in all, across the members, is a 413 (a gzip bomb, one member or
    many), found without inflating more than ``limit + 1`` bytes.
    """
    name = (encoding or "identity").strip().lower()
    if name in ("", "identity"):
        return body
    if name not in ("gzip", "x-gzip"):
        raise FailureError(FC.SVC_UNSUPPORTED_MEDIA.failure(surface="service.http", params={
            "problem": f"Content-Encoding {name[:40]}", "expected": "gzip or no encoding"}))
    parts: list[bytes] = []
    size = 0
    rest = body
    while True:
        offset = len(body) - len(rest)
        inflater = zlib.decompressobj(wbits=31)
        try:
            out = inflater.decompress(rest, limit - size + 1)
        except zlib.error as exc:
            where = "" if offset == 0 else f" at byte {offset}, after its gzip stream"
            raise _malformed(f"the gzip body cannot be inflated{where} ({exc})") from None
        size += len(out)
        if size > limit or inflater.unconsumed_tail:
            raise _too_large(f"the body inflates to more than {limit} bytes")
        if not inflater.eof:
            where = "" if offset == 0 else f" (its gzip member at byte {offset})"
            raise _malformed(f"the gzip body ends early{where}")
        parts.append(out)
        rest = inflater.unused_data.lstrip(b"\x00")
        if not rest:
            return b"".join(parts)


def _malformed(problem: str) -> FailureError:
    return FailureError(FC.DATA_INVALID_INPUT.failure(
        surface="service.http", error_class="malformed_json", params={"problem": problem}))


def _identity_only(encoding: str | None) -> None:
    """Refuse a Content-Encoding on a body FastAPI reads itself (it undoes none)."""
    name = (encoding or "identity").strip().lower()
    if name not in ("", "identity"):
        raise FailureError(FC.SVC_UNSUPPORTED_MEDIA.failure(surface="service.http", params={
            "problem": f"Content-Encoding {name[:40]}", "expected": "no encoding"}))


def _no_nul(request: Request) -> None:
    """Refuse a path or query parameter holding a NUL character (no store keeps one)."""
    for where, items in (("path", request.path_params.items()),
                         ("query", request.query_params.multi_items())):
        for name, value in items:
            if "\x00" in str(value) or "\x00" in name:
                raise FailureError(FC.DATA_INVALID_INPUT.failure(
                    surface="service.http", error_class="validation", params={
                        "problem": f"the {where} parameter {name[:40]!r} holds a NUL "
                                   "character"}))


def _allowed_methods(request: Request) -> list[str]:
    """Every method some route has for the request's path (a 405's ``Allow``, RFC 9110)."""
    methods: set[str] = set()
    for route in request.app.router.routes:
        match, _child = route.matches(request.scope)
        if match is not Match.NONE:
            methods.update(getattr(route, "methods", None) or ())
    return sorted(methods)


def _otlp_answer(content_type: str, *, received: int, new: int, duplicates: int) -> Response:
    """An OTLP door's success: the empty export response in the request's media type (an
    empty protobuf message, or ``{}``), with the counts in failcode's headers."""
    headers = {"X-Failcode-Received": str(received), "X-Failcode-New": str(new),
               "X-Failcode-Duplicates": str(duplicates)}
    if content_type.split(";", 1)[0].strip().lower() == "application/x-protobuf":
        return Response(b"", media_type="application/x-protobuf", headers=headers)
    return JSONResponse({}, headers=headers)


def _encode(value: Any) -> Response:
    return Response(msgspec.json.encode(value), media_type="application/json")


def create_app(config: ServiceConfig, *, service: Service | None = None) -> FastAPI:
    """The FastAPI application of ``failcode serve`` (the service opens at startup)."""
    holder: dict[str, Service] = {}

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        running = service if service is not None else await run_in_threadpool(Service, config)
        holder["service"] = running
        running.start()
        try:
            yield
        finally:
            await run_in_threadpool(running.close)

    app = FastAPI(
        title="failcode service", version=__version__, lifespan=lifespan,
        description="Agent failures from many machines, classified as they arrive: failcode "
                    "events, OTLP logs and traces, raw failures; findings with a lifecycle. OTLP "
                    "metrics are accepted and dropped.",
        responses=_OPEN_ERRORS)
    install_problem_handlers(app)

    async def on_failure(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, FailureError)
        return _problem(exc, request)

    async def on_http(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        if exc.status_code == 400:  # FastAPI could not read the body (not UTF-8, say)
            return problem_response(FC.DATA_INVALID_INPUT.failure(
                surface="service.http", error_class="malformed_json", params={
                    "problem": f"the body cannot be read as JSON ({str(exc.detail)[:200]})"}))
        if exc.status_code == 405:
            failure = FC.SVC_NOT_FOUND.failure(surface="service.http", params={
                "what": f"The method {request.method} on {request.url.path[:200]}"})
            response = problem_response(failure)
            response.status_code = 405
            response.body = response.render({**msgspec.json.decode(response.body),
                                             "status": 405, "title": "Method Not Allowed"})
            response.headers["content-length"] = str(len(response.body))
            allowed = _allowed_methods(request)
            if allowed:
                response.headers["Allow"] = ", ".join(allowed)
            return response
        failure = FC.SVC_NOT_FOUND.failure(surface="service.http", params={
            "what": f"The route {request.url.path[:200]}"})
        return problem_response(failure)

    validation = app.exception_handlers[RequestValidationError]

    async def on_validation(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        answer = validation(request, RequestValidationError(_redacted_errors(exc.errors())))
        return await cast("Awaitable[Response]", answer)

    app.add_exception_handler(FailureError, on_failure)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_middleware(_BodyLimit, limit=config.max_body_bytes)
    app.add_middleware(_WorkerHeader, worker=lambda: holder["service"].worker
                       if "service" in holder else "")

    def running() -> Service:
        return holder["service"]

    async def key_of(request: Request) -> Key:
        presented = request.headers.get("authorization") or request.headers.get(
            "x-failcode-key")
        return await run_in_threadpool(running().authenticate, presented,
                                       path=request.url.path[:200])

    class KeyFirst(APIRoute):
        """A route that checks the key (401) and, for a body FastAPI reads itself, its
        encoding (415) before FastAPI reads the body and the parameters: a request without a
        valid key learns nothing about what the route would have accepted."""

        def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
            handler = super().get_route_handler()
            keyed = bool(self.dependencies)
            parsed = self.body_field is not None

            async def checked(request: Request) -> Response:
                if keyed:
                    await key_of(request)
                _no_nul(request)
                if parsed:
                    _identity_only(request.headers.get("content-encoding"))
                return await handler(request)

            return checked

    app.router.route_class = KeyFirst

    async def access(request: Request, needs: Literal["ingest", "read", "admin", "classify"],
                     project: str | None = None) -> str:
        key = await key_of(request)
        return running().authorize(key, needs, route=f"{request.method} {request.url.path}"[
            :200], project=project)

    async def body_of(request: Request) -> bytes:
        raw = await request.body()
        return _inflate(raw, request.headers.get("content-encoding"),
                        config.max_decoded_bytes)

    # -- health ----------------------------------------------------------------------------
    @app.get("/healthz", tags=["health"], summary="The process answers")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"], summary="The store is reachable", responses={
        200: {"description": "Ready", "content": {"application/json": {"schema": {
            "type": "object", "properties": {"status": {"type": "string", "enum": ["ready"]}},
            "required": ["status"]}}}}})
    async def readyz(request: Request) -> Response:
        """Ready or not ready, in words that name no location: the key-less caller learns
        neither the store's path nor its host, port, user or database; the log has them."""
        try:
            await run_in_threadpool(running().ready)
        except FailureError as exc:
            _LOG.warning("not ready: %s", exc.failure.message)
            return _problem(FailureError(FC.STORE_UNREACHABLE.failure(
                surface="service.ready", params={
                    "url": "(named in the service's log)",
                    "problem": "it did not answer a read, so the service is not ready"})),
                request)
        return _encode({"status": "ready"})

    # -- doors in --------------------------------------------------------------------------
    events_body = {"requestBody": {"required": True, "content": {
        "application/x-ndjson": {"schema": {"type": "string"}},
        "application/json": {"schema": {"type": "array", "items": {"type": "object"}}}}}}

    @app.post("/v1/events", tags=["ingest"], responses=_ERRORS,
              dependencies=_AUTH, openapi_extra=events_body,
              summary="Store failcode events (a JSON array or JSONL, as JsonlSink writes)")
    async def post_events(request: Request, project: ProjectParam = None) -> Response:
        name = await access(request, "ingest", project)
        body = await body_of(request)
        result = await run_in_threadpool(running().ingest_events, name, body)
        return _encode(result)

    otlp_body = {"requestBody": {"required": True, "content": {
        "application/x-protobuf": {"schema": {"type": "string", "format": "binary"}},
        "application/json": {"schema": {"type": "object"}}}}}

    async def otlp(request: Request, signal: Literal["logs", "traces"],
                   project: str | None) -> Response:
        name = await access(request, "ingest", project)
        body = await body_of(request)
        content_type = request.headers.get("content-type", "")
        result = await run_in_threadpool(running().ingest_otlp, name, signal, body,
                                         content_type)
        return _otlp_answer(content_type, received=result.received, new=result.new,
                            duplicates=result.duplicates)

    @app.post("/v1/logs", tags=["ingest"], responses=_OTLP_ANSWERS,
              dependencies=_AUTH, openapi_extra=otlp_body,
              summary="OTLP/HTTP logs (protobuf or JSON, gzip accepted)")
    async def post_logs(request: Request, project: ProjectParam = None) -> Response:
        return await otlp(request, "logs", project)

    @app.post("/v1/traces", tags=["ingest"], responses=_OTLP_ANSWERS,
              dependencies=_AUTH, openapi_extra=otlp_body,
              summary="OTLP/HTTP traces (protobuf or JSON, gzip accepted)")
    async def post_traces(request: Request, project: ProjectParam = None) -> Response:
        return await otlp(request, "traces", project)

    @app.post("/v1/metrics", tags=["ingest"], responses=_METRICS_ANSWERS,
              dependencies=_AUTH, openapi_extra=otlp_body,
              summary="OTLP/HTTP metrics, read and dropped (protobuf or JSON, gzip accepted)")
    async def post_metrics(request: Request, project: ProjectParam = None) -> Response:
        from failcode.service._metrics import read_metrics  # noqa: PLC0415 - this door only

        await access(request, "ingest", project)
        body = await body_of(request)
        content_type = request.headers.get("content-type", "")
        export = await run_in_threadpool(lambda: read_metrics(body, content_type=content_type))
        return _otlp_answer(content_type, received=export.points, new=0, duplicates=0)

    @app.post("/v1/classify", tags=["ingest"], responses=_ERRORS,
              response_model=ClassifyResponse,
              dependencies=_AUTH,
              summary="Classify a raw failure: its Failure or outcome, Decision and user text")
    async def post_classify(request: Request, payload: ClassifyRequest,
                            project: ProjectParam = None) -> Response:
        await access(request, "classify", project)
        locale = negotiate_locale(request.headers.get("accept-language"))
        result = await run_in_threadpool(classify_payload, payload, locale=locale)
        return JSONResponse(result.model_dump(mode="json"),
                            headers={"Content-Language": result.locale})

    # -- findings --------------------------------------------------------------------------
    @app.get("/v1/findings", tags=["findings"], responses=_ERRORS,
              dependencies=_AUTH,
             summary="Findings of the key's project, filtered and paged")
    async def get_findings(
        request: Request, project: ProjectParam = None,
        status: Annotated[Literal[STATUSES] | None, Query()] = None,  # type: ignore[valid-type]
        category: Annotated[str | None, Query(max_length=40)] = None,
        code: Annotated[str | None, Query(max_length=40)] = None,
        kind: Annotated[str | None, Query(max_length=40)] = None,
        since: Annotated[datetime | None, Query()] = None,
        until: Annotated[datetime | None, Query()] = None,
        agent: Annotated[str | None, Query(max_length=120)] = None,
        version: Annotated[str | None, Query(max_length=120)] = None,
        model: Annotated[str | None, Query(max_length=120)] = None,
        signature: Annotated[str | None, Query(max_length=400)] = None,
        sort: Annotated[Literal[SORTS], Query()] = "last_seen",  # type: ignore[valid-type]
        limit: LimitParam = 50,
        offset: OffsetParam = 0,
    ) -> Response:
        name = await access(request, "read", project)
        service = running()

        def work() -> dict[str, Any]:
            findings = service.findings(name)
            if signature is not None:
                try:
                    found = [findings.get(findings.id_of(signature))]
                except FailureError:
                    found = []
                return {"project": name, "total": len(found), "findings": found}
            page, total = findings.list(
                status=status, category=category, code=code, kind=kind,
                since=_aware(since), until=_aware(until), agent=agent, version=version,
                model=model, sort=sort, limit=limit, offset=offset)
            return {"project": name, "total": total, "limit": limit, "offset": offset,
                    "findings": page}

        return _encode(await run_in_threadpool(work))

    @app.get("/v1/findings/{finding_id}", tags=["findings"], responses=_ERRORS,
              dependencies=_AUTH,
             summary="One finding: days, versions, latest occurrences, remedies")
    async def get_finding(request: Request,
                          finding_id: FindingId,
                          project: ProjectParam = None) -> Response:
        name = await access(request, "read", project)
        detail = await run_in_threadpool(lambda: running().findings(name).detail(finding_id))
        return _encode(detail)

    async def change(request: Request, finding_id: int,
                     action: Literal["resolve", "ignore", "reopen"], project: str | None,
                     in_version: str | None) -> Response:
        name = await access(request, "admin", project)
        finding = await run_in_threadpool(lambda: running().findings(name).set_status(
            finding_id, action, in_version=in_version))
        return _encode(finding)

    @app.post("/v1/findings/{finding_id}/resolve", tags=["findings"], responses=_ERRORS,
              dependencies=_AUTH, summary="Resolve a finding, optionally in a version")
    async def resolve(request: Request, finding_id: FindingId, project: ProjectParam = None,
                      body: ResolveBody | None = None) -> Response:
        return await change(request, finding_id, "resolve", project,
                            body.in_version if body is not None else None)

    @app.post("/v1/findings/{finding_id}/ignore", tags=["findings"], responses=_ERRORS,
              dependencies=_AUTH,
              summary="Ignore a finding: it counts, nothing reopens it")
    async def ignore(request: Request, finding_id: FindingId,
                     project: ProjectParam = None) -> Response:
        return await change(request, finding_id, "ignore", project, None)

    @app.post("/v1/findings/{finding_id}/reopen", tags=["findings"], responses=_ERRORS,
              dependencies=_AUTH,
              summary="Reopen a resolved or ignored finding")
    async def reopen(request: Request, finding_id: FindingId,
                     project: ProjectParam = None) -> Response:
        return await change(request, finding_id, "reopen", project, None)

    # -- the store's queries ---------------------------------------------------------------
    def query_route(path: str, method: str, summary: str) -> None:
        async def handler(
            request: Request, project: ProjectParam = None,
            since: Annotated[datetime | None, Query()] = None,
            until: Annotated[datetime | None, Query()] = None,
            session: Annotated[str | None, Query(max_length=200)] = None,
            kind: Annotated[str | None, Query(max_length=40)] = None,
            code: Annotated[str | None, Query(max_length=40)] = None,
            category: Annotated[str | None, Query(max_length=40)] = None,
            limit: LimitParam = 50,
            offset: OffsetParam = 0,
        ) -> Response:
            name = await access(request, "read", project)
            filters: dict[str, Any] = {"kind": kind, "code": code, "category": category,
                                       "limit": limit, "offset": offset}
            if method != "clusters":
                filters.update(session=session, since=_aware(since), until=_aware(until))
            rows = await run_in_threadpool(
                lambda: getattr(running().store(name), method)(**filters))
            return _encode({"project": name, method: rows})

        handler.__name__ = f"get_{method}"
        app.get(path, tags=["store"], responses=_ERRORS,
              dependencies=_AUTH,
                summary=summary)(handler)

    query_route("/v1/diagnostics", "diagnostics", "The diagnostics table, most frequent first")
    query_route("/v1/blame", "blame", "Who acts x what failed")
    query_route("/v1/loops", "loops", "Retry loops: one signature failing again and again")
    query_route("/v1/clusters", "clusters", "Near-duplicate signatures grouped by template")

    @app.get("/v1/codes/{code}", tags=["store"], responses=_ERRORS,
              dependencies=_AUTH,
             summary="A code's reference entry (failcode explain)")
    async def get_code(request: Request, code: Annotated[str, Path(max_length=40)]) -> Response:
        await access(request, "classify")
        from failcode.codes._docs import explain_text  # noqa: PLC0415 - this route only
        from failcode.codes._registry import (  # noqa: PLC0415
            UnknownCodeError,
            catalogs,
            lookup,
        )

        try:
            spec = lookup(code)
        except UnknownCodeError:
            raise FailureError(FC.SVC_NOT_FOUND.failure(surface="service.codes", params={
                "what": f"The code {code[:40]!r}"})) from None
        catalog = next(c for c in catalogs() if c.get(spec.code) is not None)
        return _encode({"code": spec.code, "slug": spec.slug, "kind": spec.kind.value,
                        "category": spec.category.value, "message": spec.message,
                        "remedy": spec.remedy, "explain": explain_text(catalog, spec)})

    # -- the project -----------------------------------------------------------------------
    @app.get("/v1/project", tags=["project"], responses=_ERRORS,
              dependencies=_AUTH,
             summary="The key's project: retention and what its store holds")
    async def get_project(request: Request, project: ProjectParam = None) -> Response:
        name = await access(request, "read", project)

        def work() -> dict[str, Any]:
            service = running()
            found = service.project(name)
            return {"project": found, "stats": service.store(name).stats()}

        return _encode(await run_in_threadpool(work))

    @app.put("/v1/project/retention", tags=["project"], responses=_ERRORS,
              dependencies=_AUTH,
             summary="Set the project's retention in days (admin)")
    async def put_retention(request: Request, body: RetentionBody,
                            project: ProjectParam = None) -> Response:
        name = await access(request, "admin", project)
        found = await run_in_threadpool(running().control.set_retention, name,
                                        body.retention_days)
        return _encode(found)

    # -- webhooks --------------------------------------------------------------------------
    @app.get("/v1/webhooks", tags=["project"], responses=_ERRORS,
              dependencies=_AUTH,
             summary="The project's webhooks (admin; URLs without their query)")
    async def get_webhooks(request: Request, project: ProjectParam = None) -> Response:
        from failcode.service._hooks import shown_url  # noqa: PLC0415

        name = await access(request, "admin", project)
        hooks = await run_in_threadpool(running().webhooks, name)
        return _encode([{**msgspec.to_builtins(h), "url": shown_url(h.url),
                         "on": sorted(h.on)} for h in hooks])

    @app.post("/v1/webhooks", tags=["project"], responses=_ERRORS,
              dependencies=_AUTH,
              summary="Add a webhook (admin)")
    async def post_webhook(request: Request, body: WebhookBody,
                           project: ProjectParam = None) -> Response:
        from failcode.service._alerts import check_webhook_url  # noqa: PLC0415
        from failcode.service._hooks import add_webhook, shown_url  # noqa: PLC0415

        name = await access(request, "admin", project)
        await run_in_threadpool(check_webhook_url, body.url, running().config.webhook_allow)
        hook = await run_in_threadpool(lambda: add_webhook(
            running().control_store, name, body.url, on=list(body.on),
            rate_threshold=body.rate_threshold, rate_window_s=body.rate_window_s,
            throttle_s=body.throttle_s, format=body.format))
        return _encode({**msgspec.to_builtins(hook), "url": shown_url(hook.url),
                        "on": sorted(hook.on)})

    @app.delete("/v1/webhooks/{webhook_id}", tags=["project"], responses=_ERRORS,
                dependencies=_AUTH, status_code=204, response_class=Response,
                summary="Remove a webhook (admin)")
    async def delete_webhook(request: Request,
                             webhook_id: Annotated[str, Path(max_length=40)],
                             project: ProjectParam = None) -> Response:
        from failcode.service._hooks import remove_webhook  # noqa: PLC0415

        name = await access(request, "admin", project)
        await run_in_threadpool(remove_webhook, running().control_store, name, webhook_id)
        return Response(status_code=204)

    # -- the dashboard (HTML under /ui, not in the OpenAPI document) -------------------------
    from failcode.service._dashboard import dashboard_router  # noqa: PLC0415 - needs Jinja2

    app.include_router(dashboard_router(running))

    @app.get("/", include_in_schema=False)
    async def home() -> Response:
        return RedirectResponse("/ui/", status_code=307)

    return app


def _aware(value: datetime | None) -> datetime | None:
    """A query time as aware UTC (a time without a zone is read as UTC)."""
    if value is None:
        return None
    from datetime import UTC  # noqa: PLC0415

    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
