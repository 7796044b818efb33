"""The dashboard of ``failcode serve``: server-rendered pages under ``/ui``, in the same process.

Pages (each URL carries its filters, so a link shares the view and the back button works):
``/ui/`` findings (what to fix first), ``/ui/findings/{id}``, ``/ui/sessions``,
``/ui/sessions/{name}``, ``/ui/compare``, ``/ui/blame``, ``/ui/loops``; ``/ui/live`` is what
the pages poll. Templates are Jinja2 (``templates/``), with one stylesheet and one small
script served from ``/ui/static/``; nothing is fetched from anywhere else.

Access rules:

- **Sign-in** exchanges a ``read`` or ``admin`` key (an ``ingest`` key is refused) for a
  session cookie ``failcode_ui``: a random id, ``HttpOnly``, ``SameSite=Strict``, ``Path=/ui``,
  ``Secure`` when the request came over HTTPS. Sessions live in the control store
  (:class:`~failcode.service._shared.Sessions`), so every worker and replica of the service
  sees them and a restart keeps them; the store holds the SHA-256 of the session id and of the
  key (never either in clear) with the key's id, and every request checks that key's row again:
  a revoked key ends its sessions at the next request. A session idle for 12 hours ends.
  Signing out ends it at once. At most ``dashboard_sessions`` (10,000) are held: one more ends
  the least recently used.
- **Sign-in** itself is protected: the form carries a token that must match a cookie set with
  it (``failcode_ui_signin``, ``SameSite=Strict``, ``Path=/ui/signin``), so another site
  cannot sign a browser in with its own key; a client address with
  ``signin_failures_per_minute`` (10) failed sign-ins in the last minute gets 429 with
  ``Retry-After`` until the oldest of them is a minute old, whatever key it sends (counted in
  the control store: the limit is the service's, not one worker's). Behind a
  proxy named in ``forwarded_allow``, the address and the scheme (``Secure``) are the ones it
  forwards.
- **Changes** (resolve, resolve in a version, ignore, reopen, sign-out) are POSTs carrying the
  session's CSRF token in a form field, compared in constant time; changing a finding needs an
  ``admin`` key (a ``read`` session gets 403). ``SameSite=Strict`` keeps other sites' forms
  from carrying the cookie at all.
- A page without a session redirects (303) to the sign-in page, which returns to it after.
- A bad query parameter (a NUL character anywhere, an ``offset`` that is not a whole number
  from 0 to 1,000,000) or a resolve form's ``in_version`` the API would refuse is a 400 page
  naming it, on both backends; nothing reaches the store. So is a session name with a NUL; a
  finding number outside 1 to 2**62 (the API's bound) is not found (404).
- Every page counts against the key's request rate like an API request.

The pages are not in the OpenAPI document (they are HTML, not the API).
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal
from urllib.parse import parse_qs, quote, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from failcode import FailureError, __version__
from failcode.boundary import http_status
from failcode.service import _pages
from failcode.service._control import digest as key_digest
from failcode.service._findings import SORTS, STATUSES
from failcode.service._shared import IDLE_S

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from failcode.service._control import Key
    from failcode.service._service import Service
    from failcode.store import Blame

__all__ = ["ACTIONS", "COOKIE", "SIGNIN_COOKIE", "dashboard_router"]

COOKIE: Final = "failcode_ui"
SIGNIN_COOKIE: Final = "failcode_ui_signin"
POLL_S: Final = 5
_HERE: Final = Path(__file__).parent
_STATIC: Final = {"dashboard.css": "text/css", "dashboard.js": "text/javascript"}
_SINCE: Final = {"24h": timedelta(days=1), "7d": timedelta(days=7), "30d": timedelta(days=30),
                 "90d": timedelta(days=90)}
_FILTERS: Final = ("status", "category", "agent", "model", "version")
_MAX_FORM: Final = 16 * 1024
_MAX_OFFSET: Final = 1_000_000
_MAX_VERSION: Final = 120
_MAX_FINDING: Final = 2**62  # the API's bound on a finding's number
ACTIONS: Final = ("resolve", "ignore", "reopen")
"""What the finding page's forms may do (``POST /ui/findings/{id}/{action}``)."""
_RETRY_S: Final = 5  # Retry-After of a change the store refused (the API's too)


@dataclass(frozen=True)
class Viewer:
    """Who is signed in: the key's project and scope, and the session's CSRF token."""

    project: str
    scope: str
    key_id: str
    csrf: str
    sid: str


def _environment() -> Any:
    import jinja2  # noqa: PLC0415 - the serve extra

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(_HERE / "templates")),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["when"] = _when
    env.globals["short"] = _short
    env.filters["ago"] = _ago
    env.filters["pct"] = lambda value: f"{100 * value:.1f}%"
    env.globals.update(version=__version__, poll_s=POLL_S, sorts=SORTS, statuses=STATUSES,
                       since_options=tuple(_SINCE), quote=quote)
    return env


def _when(value: datetime | None) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if value else "—"


def _short(path: str | None) -> str:
    """A file's last two path parts (the whole path is in the cell's title)."""
    if not path:
        return ""
    parts = path.replace("\\", "/").rstrip("/").split("/")
    return "/".join(parts[-2:]) if len(parts) > 2 else path


def _ago(value: datetime | None) -> str:
    if value is None:
        return "—"
    seconds = (datetime.now(UTC) - value).total_seconds()
    if seconds < -60:  # stored before the doors bounded times: said, not hidden as "just now"
        return "in the future"
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'' if count == 1 else 's'} ago"
    return "just now"


def _blame_plot(rows: Sequence[Blame]) -> str:
    """The triage report's "who acts x what failed" bars (the same drawing), each a link to
    the findings of that category."""
    from failcode.triage.report._html import _bars, _colour  # noqa: PLC0415 - the report's plot

    cells: dict[tuple[str, str], int] = {}
    for row in rows:
        cells[(row.category, row.kind)] = cells.get((row.category, row.kind), 0) + row.count
    top = sorted(cells.items(), key=lambda item: -item[1])[:15]
    bars = [(f"{category} · {kind}", count, _colour(category), "category", category)
            for (category, kind), count in top]
    return _bars("Who acts · what failed", bars,
                 links=[_page_url("/ui/", {"category": c}) for (c, _k), _n in top])


def _form(body: bytes) -> dict[str, str]:
    fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    return {k: v[0] for k, v in fields.items() if v}


def query_problem(items: Sequence[tuple[str, str]]) -> str | None:
    """Why a page's query is the client's mistake, or ``None`` when it is not.

    Every parameter is free of NUL characters (PostgreSQL cannot hold one); ``offset``, where
    given, is a whole number from 0 to 1,000,000 (the API's bound). Anything else a page does
    not know is ignored, as before; a known filter with an unknown value shows no filter.
    """
    for name, value in items:
        shown = name[:40].replace("\x00", "\\0")
        if "\x00" in name or "\x00" in value:
            return (f"The query parameter {shown!r} holds a NUL character; expected text "
                    "without one.")
        if name == "offset":
            digits = value.strip()
            if digits and (not digits.isascii() or not digits.isdigit()
                           or int(digits) > _MAX_OFFSET):
                return (f"The query parameter 'offset' is {value[:40]!r}; expected a whole "
                        f"number from 0 to {_MAX_OFFSET:,}.")
    return None


def version_problem(value: str) -> str | None:
    """Why a resolve form's ``in_version`` is refused, or ``None``: the API's rule (at most
    120 characters, no NUL), so the form and ``POST /v1/findings/{id}/resolve`` agree."""
    if "\x00" in value:
        return "The field in_version holds a NUL character; expected a version without one."
    if len(value) > _MAX_VERSION:
        return (f"The field in_version is {len(value)} characters long; expected at most "
                f"{_MAX_VERSION} (an agent version such as 1.4.0).")
    return None


def _page_url(path: str, query: dict[str, str]) -> str:
    kept = {k: v for k, v in query.items() if v not in ("", None)}
    return path + ("?" + urlencode(kept) if kept else "")


def dashboard_router(running: Callable[[], Service]) -> APIRouter:  # noqa: PLR0915 - one route each
    """The dashboard's routes; ``running`` gives the service once it has started."""
    router = APIRouter(prefix="/ui", include_in_schema=False)
    env = _environment()

    def render(name: str, status: int = 200, **values: Any) -> HTMLResponse:
        html = env.get_template(name).render(**values)
        return HTMLResponse(html, status_code=status, headers={
            "Cache-Control": "no-store",
            "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
                                       "style-src 'self'; script-src 'self'; "
                                       "frame-ancestors 'none'; form-action 'self'",
            "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin"})

    def viewer_of(request: Request) -> Viewer | None:
        sid = request.cookies.get(COOKIE)
        service = running()
        held = service.sessions.get(sid) if sid else None  # its key checked in the store
        if sid is None or held is None:
            return None
        key: Key = held.key
        try:
            service.authorize(key, "read", route=f"GET {request.url.path}"[:200])
        except FailureError as exc:
            if exc.failure.code == "FC-SVC-005":
                raise
            service.sessions.close(sid)
            return None
        return Viewer(project=key.project, scope=key.scope, key_id=key.key_id, csrf=held.csrf,
                      sid=sid)

    def to_signin(request: Request) -> RedirectResponse:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse("/ui/signin?" + urlencode({"next": target}), status_code=303)

    async def signed_in(request: Request) -> Viewer | Response:
        """The session's viewer; a redirect to sign-in without one; a 400 page when the
        query is the client's mistake (:func:`query_problem`)."""
        viewer = await run_in_threadpool(viewer_of, request)
        if viewer is None:
            return to_signin(request)
        problem = query_problem(request.query_params.multi_items())
        if problem is not None:
            return render("error.html", 400, viewer=viewer, title="Bad request", nav="",
                          message=problem)
        return viewer

    def safe_next(target: str | None) -> str:
        if target and target.startswith("/ui") and not target.startswith("//"):
            return target
        return "/ui/"

    # -- static ------------------------------------------------------------------------------
    @router.get("/static/{name}")
    async def static(name: str) -> Response:
        if name not in _STATIC:
            return render("error.html", 404, viewer=None, title="Not found",
                          message=f"There is no page {name[:80]!r}.")
        return FileResponse(_HERE / "static" / name, media_type=_STATIC[name],
                            headers={"Cache-Control": "max-age=300"})

    # -- sign-in ------------------------------------------------------------------------------
    def signin_page(request: Request, target: str, status: int = 200,
                    error: str | None = None, headers: dict[str, str] | None = None,
                    ) -> Response:
        """The sign-in form with a fresh token, the same one in a cookie only this page's
        POST carries (SameSite=Strict): another site cannot sign a browser in."""
        token = secrets.token_urlsafe(32)
        response = render("signin.html", status, viewer=None, title="Sign in", next=target,
                          error=error, signin_token=token)
        response.headers.update(headers or {})
        response.set_cookie(SIGNIN_COOKIE, token, httponly=True, samesite="strict",
                            path="/ui/signin", secure=request.url.scheme == "https",
                            max_age=3600)
        return response

    @router.get("/signin")
    async def signin_form(request: Request, next: str | None = None) -> Response:  # noqa: A002
        return signin_page(request, safe_next(next))

    @router.post("/signin")
    async def signin(request: Request) -> Response:
        body = await request.body()
        form = _form(body[:_MAX_FORM])
        key = form.get("key", "").strip()
        if key[:7].lower() == "bearer ":  # as the API reads it (the stored digest is the key's)
            key = key[7:].strip()
        target = safe_next(form.get("next"))
        sent, held = form.get("signin", ""), request.cookies.get(SIGNIN_COOKIE, "")
        if not held or not hmac.compare_digest(sent.encode(), held.encode()):
            return signin_page(request, target, 403, error=(
                "This sign-in form is out of date or did not come from this page (its "
                "security token does not match): sign in again on this page."))
        service = running()
        limit = service.signins
        address = request.client.host if request.client else ""
        if wait := await run_in_threadpool(limit.wait_s, address):
            return signin_page(request, target, 429, headers={"Retry-After": str(wait)}, error=(
                f"Too many failed sign-ins from this address in the last minute: try again "
                f"in {wait} s."))
        try:
            found = await run_in_threadpool(service.authenticate, key, path="/ui/signin")
        except FailureError:
            await run_in_threadpool(limit.failed, address)
            return signin_page(request, target, 401, error=(
                "That key is not one this service issued, or it was revoked."))
        if found.scope not in ("read", "admin"):
            return signin_page(request, target, 403, error=(
                f"An {found.scope} key cannot read the dashboard: sign in with a read or "
                "admin key (failcode token create --scope read)."))
        sid, _csrf = await run_in_threadpool(service.sessions.open, found.key_id,
                                             key_digest(key))
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(COOKIE, sid, httponly=True, samesite="strict", path="/ui",
                            secure=request.url.scheme == "https", max_age=IDLE_S)
        return response

    @router.post("/signout")
    async def signout(request: Request) -> Response:
        viewer = await run_in_threadpool(viewer_of, request)
        form = _form((await request.body())[:_MAX_FORM])
        if viewer is not None:
            if not hmac.compare_digest(form.get("csrf", "").encode(), viewer.csrf.encode()):
                return render("error.html", 403, viewer=viewer, title="Refused", nav="",
                              message="This sign-out form is out of date (its security token "
                                      "does not match the session's): reload the page and "
                                      "sign out again. The session stays signed in.")
            await run_in_threadpool(running().sessions.close, viewer.sid)
        response = RedirectResponse("/ui/signin", status_code=303)
        response.delete_cookie(COOKIE, path="/ui")
        return response

    # -- pages --------------------------------------------------------------------------------
    def findings_query(request: Request) -> tuple[dict[str, Any], dict[str, str], str, int]:
        q = request.query_params
        shown = {name: q.get(name, "") for name in (*_FILTERS, "since", "sort")}
        filters: dict[str, Any] = {}
        for name in _FILTERS:
            value = q.get(name) or None
            if name == "status" and value not in STATUSES:
                value = None
            if value is not None:
                filters[name] = value[:120]
        since = q.get("since", "")
        if since in _SINCE:
            filters["since"] = datetime.now(UTC) - _SINCE[since]
        sort = str(q.get("sort")) if q.get("sort") in SORTS else "count"
        offset = int(q.get("offset", "0").strip() or "0")  # checked by query_problem
        return filters, shown, sort, offset

    @router.get("/")
    async def findings(request: Request) -> Response:
        viewer = await signed_in(request)
        if isinstance(viewer, Response):
            return viewer
        filters, shown, sort, offset = findings_query(request)
        service = running()
        page = await run_in_threadpool(lambda: _pages.findings_page(
            service.store(viewer.project), service.findings(viewer.project), filters=filters,
            sort=sort, offset=offset))
        query = dict(shown, sort=sort)
        return render("findings.html", viewer=viewer, title="Findings", page=page, shown=shown,
                      sort=sort, query=query, page_url=_page_url, nav="findings")

    @router.get("/findings/{finding_id}")
    async def finding(request: Request, finding_id: int) -> Response:
        viewer = await signed_in(request)
        if isinstance(viewer, Response):
            return viewer
        service = running()
        if not 1 <= finding_id <= _MAX_FINDING:  # no such number is stored: not found
            return render("error.html", 404, viewer=viewer, title="Not found", nav="findings",
                          message=f"There is no finding {finding_id} in {viewer.project}.")
        try:
            view = await run_in_threadpool(lambda: _pages.finding_page(
                service.store(viewer.project), service.findings(viewer.project), finding_id))
        except FailureError:
            return render("error.html", 404, viewer=viewer, title="Not found", nav="findings",
                          message=f"There is no finding {finding_id} in {viewer.project}.")
        return render("finding.html", viewer=viewer, title=f"Finding {finding_id}", view=view,
                      nav="findings", notice=request.query_params.get("done"))

    def change_refused(viewer: Viewer, exc: FailureError) -> HTMLResponse:
        """The page for a change the service refused: the API's status for the same failure
        (:func:`failcode.boundary.http_status`); a store that is down or full is said in plain
        words with Retry-After, never with the store's own message (a path, a host)."""
        status, _code = http_status(exc.failure)
        if status < 500:
            return render("error.html", status, viewer=viewer, title="Not changed",
                          nav="findings", message=exc.failure.message)
        page = render("error.html", status, viewer=viewer, title="Not changed", nav="findings",
                      message=f"The store did not take the change ({exc.failure.code}); the "
                              f"finding is as it was. Try again in {_RETRY_S} s.")
        page.headers["Retry-After"] = str(_RETRY_S)
        return page

    @router.post("/findings/{finding_id}/{action}")
    async def change(request: Request, finding_id: int, action: str) -> Response:
        viewer = await signed_in(request)
        if isinstance(viewer, Response):
            return viewer
        form = _form((await request.body())[:_MAX_FORM])
        if not hmac.compare_digest(form.get("csrf", "").encode(), viewer.csrf.encode()):
            return render("error.html", 403, viewer=viewer, title="Refused", nav="findings",
                          message="This form is out of date (its security token does not "
                                  "match the session's): reload the page and try again.")
        if viewer.scope != "admin":
            return render("error.html", 403, viewer=viewer, title="Refused", nav="findings",
                          message="Changing a finding needs an admin key; this session "
                                  f"signed in with a {viewer.scope} key.")
        if not 1 <= finding_id <= _MAX_FINDING:
            return render("error.html", 404, viewer=viewer, title="Not found", nav="findings",
                          message=f"There is no finding {finding_id} in {viewer.project}.")
        if action not in ACTIONS:
            return render("error.html", 404, viewer=viewer, title="Not found", nav="findings",
                          message=f"There is no action {action[:40]!r}.")
        problem = version_problem(form.get("in_version", ""))
        if problem is not None:
            return render("error.html", 400, viewer=viewer, title="Not changed", nav="findings",
                          message=problem)
        version = form.get("in_version", "").strip() or None
        chosen: Literal["resolve", "ignore", "reopen"] = action  # type: ignore[assignment]
        service = running()
        try:
            await run_in_threadpool(lambda: service.findings(viewer.project).set_status(
                finding_id, chosen, in_version=version if chosen == "resolve" else None))
        except FailureError as exc:
            return change_refused(viewer, exc)
        done = {"resolve": f"resolved in {version}" if version else "resolved",
                "ignore": "ignored", "reopen": "reopened"}[action]
        return RedirectResponse(f"/ui/findings/{finding_id}?{urlencode({'done': done})}",
                                status_code=303)

    @router.get("/sessions")
    async def sessions_list(request: Request) -> Response:
        viewer = await signed_in(request)
        if isinstance(viewer, Response):
            return viewer
        clean = request.query_params.get("clean") == "1"
        offset = int(request.query_params.get("offset", "0").strip() or "0")  # checked above
        service = running()
        page = await run_in_threadpool(lambda: _pages.sessions_page(
            service.store(viewer.project), clean=clean, offset=offset))
        return render("sessions.html", viewer=viewer, title="Sessions", page=page, clean=clean,
                      nav="sessions", page_url=_page_url)

    @router.get("/sessions/{name:path}")
    async def session(request: Request, name: str) -> Response:
        viewer = await signed_in(request)
        if isinstance(viewer, Response):
            return viewer
        if "\x00" in name:
            return render("error.html", 400, viewer=viewer, title="Bad request",
                          nav="sessions", message="The session name holds a NUL character; "
                                                  "expected a name without one.")
        service = running()
        view = await run_in_threadpool(lambda: _pages.session_page(
            service.store(viewer.project), name[:400], request.query_params.get("input")))
        if view is None:
            return render("error.html", 404, viewer=viewer, title="Not found", nav="sessions",
                          message=f"There is no session {name[:80]!r} in {viewer.project}.")
        return render("session.html", viewer=viewer, title=f"Session {name[:60]}", view=view,
                      nav="sessions")

    @router.get("/compare")
    async def compare(request: Request) -> Response:
        viewer = await signed_in(request)
        if isinstance(viewer, Response):
            return viewer
        q = request.query_params
        by = str(q.get("by")) if q.get("by") in ("version", "model", "agent", "window") \
            else "version"
        service = running()
        page = await run_in_threadpool(lambda: _pages.compare_page(
            service.store(viewer.project), by=by, a=q.get("a", "")[:120],
            b=q.get("b", "")[:120]))
        return render("compare.html", viewer=viewer, title="Compare", page=page,
                      nav="compare")

    @router.get("/blame")
    async def blame(request: Request) -> Response:
        viewer = await signed_in(request)
        if isinstance(viewer, Response):
            return viewer
        service = running()
        rows = await run_in_threadpool(lambda: service.store(viewer.project).blame(
            by="code", limit=100))
        return render("blame.html", viewer=viewer, title="Blame", rows=rows, nav="blame",
                      who=_pages.who_acts, plot=_blame_plot(rows))

    @router.get("/loops")
    async def loops(request: Request) -> Response:
        viewer = await signed_in(request)
        if isinstance(viewer, Response):
            return viewer
        service = running()
        rows = await run_in_threadpool(lambda: service.store(viewer.project).loops(limit=100))
        return render("loops.html", viewer=viewer, title="Loops", rows=rows, nav="loops")

    @router.get("/live")
    async def live(request: Request) -> Response:
        viewer = await run_in_threadpool(viewer_of, request)
        if viewer is None:
            return JSONResponse({"signed_in": False}, status_code=401)
        service = running()

        def state() -> dict[str, Any]:
            store = service.store(viewer.project)
            events = store.fetch("SELECT coalesce(sum(count), 0) FROM event_counts")[0][0]
            regressed = store.fetch(
                "SELECT f.id, s.code, s.last_message, f.status_us FROM svc_findings f JOIN "
                "signatures s ON s.signature = f.signature WHERE f.status = 'regressed' "
                "ORDER BY f.status_us DESC LIMIT 5")
            return {"signed_in": True, "events": int(events),
                    "regressions": [{"id": int(r[0]), "code": str(r[1]),
                                     "message": str(r[2] or ""), "since_us": int(r[3])}
                                    for r in regressed]}

        return JSONResponse(await run_in_threadpool(state),
                            headers={"Cache-Control": "no-store"})

    return router
