"""Access to ``failcode serve``, route by route of its own OpenAPI document, and its refusals.

Every operation the service's ``GET /openapi.json`` lists is probed (the list is read from the
running service, never written here, so a route is covered the day it is added). The rules:

- Open routes: ``/healthz`` and ``/readyz`` (the document's operations without ``security``),
  ``/openapi.json`` and ``/docs``. Every other operation declares the key's two headers.
- No key, or a key that is malformed, unknown, forged or revoked: 401 FC-SVC-001, whatever the
  body and parameters are. A revoked key is refused at most ``key_cache_s`` (5 s) after it was
  revoked.
- A key whose scope does not cover the route: 403 FC-SVC-002. Doors in (tag ``ingest``) take
  ``ingest`` keys, every GET ``read`` keys, admin keys take everything; a route whose summary
  says ``(admin`` takes admin keys only; classifying and a code's reference touch no project's
  data and take every key. ``?project=`` naming a project the key does not belong to: 403.
- A refused request changes nothing: the control store (projects, keys, webhooks) and both
  projects' events and findings read the same before and after it.
- A key is never echoed: no answer's body or header and no line of the service's log holds a
  key or its secret part, whether the key was accepted or refused.
- Every refusal is ``application/problem+json`` whose ``status`` is the HTTP status and whose
  ``code`` is failcode's. Unknown route or id 404, a method the path does not have 405 with
  ``Allow``, a body over 8 MiB 413 (by Content-Length at once, or while a chunked body
  streams), a body that inflates past 32 MiB 413, a Content-Encoding no door reads 415, a body
  that is not JSON where JSON is expected 400, more than ``--rate`` requests of one key in a
  minute 429 with ``Retry-After``.
"""

from __future__ import annotations

import contextlib
import gzip
import http.client
import json
import secrets
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import pytest

from failcode import FC, Failure, classify_text, from_command
from failcode.events import failure_event
from failcode.service._projects import ProjectStores
from failcode.store import open_store
from tests.conftest import BACKENDS
from tests.provider_stub import closed_port
from tests.service.conftest import Served, failcode, running

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from failcode.store import Store

MIB: Final = 1024 * 1024
MAX_BODY: Final = 8 * MIB
MAX_DECODED: Final = 32 * MIB
KEY_CACHE_S: Final = 5.0
METHODS: Final = ("get", "post", "put", "delete", "patch")
PROBE_METHODS: Final = ("GET", "POST", "PUT", "DELETE", "PATCH")
OPEN_PAGES: Final = ("/healthz", "/readyz", "/openapi.json", "/docs")
EVERY_SCOPE: Final = frozenset({("POST", "/v1/classify"), ("GET", "/v1/codes/{code}")})
"""Routes that read or write no project's data: any key of the service may use them."""
SCOPES: Final = ("ingest", "read", "admin")


class Route(NamedTuple):
    """One operation of the OpenAPI document."""

    method: str
    template: str
    operation: dict[str, Any]

    @property
    def label(self) -> str:
        return f"{self.method} {self.template}"

    @property
    def secured(self) -> bool:
        return bool(self.operation.get("security"))

    @property
    def parameters(self) -> dict[str, dict[str, Any]]:
        return {p["name"]: p for p in self.operation.get("parameters", ())}

    def allowed(self) -> frozenset[str]:
        """The scopes that may use this route (the module's access rule)."""
        if (self.method, self.template) in EVERY_SCOPE:
            return frozenset(SCOPES)
        if "(admin" in self.operation.get("summary", ""):
            return frozenset({"admin"})
        if "ingest" in self.operation.get("tags", ()):
            return frozenset({"ingest", "admin"})
        if self.method == "GET":
            return frozenset({"read", "admin"})
        return frozenset({"admin"})


class Answer(NamedTuple):
    status: int
    headers: dict[str, str]
    body: bytes

    def problem(self) -> dict[str, Any]:
        """The problem+json body (asserting its media type and status)."""
        media = self.headers.get("content-type", "")
        assert media.split(";")[0].strip() == "application/problem+json", (self.status, media)
        found: dict[str, Any] = json.loads(self.body)
        assert found["status"] == self.status, found
        return found


# -- the service of this module --------------------------------------------------------------


class Probe:
    """A running service, the keys the tests used on it and its stores opened for reading."""

    def __init__(self, served: Served, tmp: Path) -> None:
        self.served = served
        self.tmp = tmp
        self.presented: set[str] = set(served.keys.values())
        self._stores: dict[str, Store] = {}
        self._doc: dict[str, Any] | None = None
        self._failure: Failure | None = None

    # -- HTTP ----------------------------------------------------------------------------
    def call(self, method: str, path: str, *, key: str | None = None, header: str = "bearer",
             body: bytes | None = None, headers: dict[str, str] | None = None) -> Answer:
        """One request; asserts no key the tests ever presented comes back in the answer."""
        sent = dict(headers or {})
        if key is not None:
            self.presented.add(key)
            if header == "bearer":
                sent["Authorization"] = f"Bearer {key}"
            else:
                sent["X-Failcode-Key"] = key
        status, got, data = self.served.request(method, path, body=body, headers=sent)
        answer = Answer(status, {k.lower(): v for k, v in got.items()}, data)
        self.assert_no_key(answer)
        return answer

    def assert_no_key(self, answer: Answer) -> None:
        text = answer.body.decode("utf-8", "replace") + json.dumps(answer.headers)
        for key in self.presented:
            for part in secret_parts(key):
                assert part not in text, f"a key's text came back in an answer: {answer}"

    def document(self) -> dict[str, Any]:
        if self._doc is None:
            answer = self.call("GET", "/openapi.json")
            assert answer.status == 200
            self._doc = json.loads(answer.body)
        return self._doc

    def routes(self) -> list[Route]:
        doc = self.document()
        return [Route(method.upper(), template, operation)
                for template, operations in doc["paths"].items()
                for method, operation in operations.items() if method in METHODS]

    # -- requests that would change something -------------------------------------------
    def event_line(self) -> bytes:
        """A real failcode event (a fresh id each call): a command that failed here."""
        if self._failure is None:
            argv = [sys.executable, "-c", "import failcode_access_probe_module"]
            done = subprocess.run(argv, cwd=self.tmp, capture_output=True, text=True,
                                  timeout=60, check=False)
            failure = from_command(argv, done.returncode, done.stdout, done.stderr,
                                   cwd=self.tmp)
            assert isinstance(failure, Failure)
            self._failure = failure
        fresh = failure_event(self._failure, event="command.failed", session="access-probe")
        return fresh.to_json() + b"\n"

    def request_for(self, route: Route, *, project: str | None = None
                    ) -> tuple[str, bytes | None, dict[str, str]]:
        """(path with query, body, headers): a valid request of ``route``.

        Path parameters and JSON bodies come from the document's schemas and examples; a door
        in gets a body that stores something when accepted (a failcode event, an OTLP export
        made by the OpenTelemetry SDK), so a refused one shows whether it stored nothing.
        """
        doc = self.document()
        path = route.template
        for name, parameter in route.parameters.items():
            if parameter["in"] == "path":
                value = example(parameter.get("schema", {}), doc)
                path = path.replace("{" + name + "}", str(value))
        if project is not None:
            path += f"?project={project}"
        content = route.operation.get("requestBody", {}).get("content", {})
        if not content:
            return path, None, {}
        if "application/x-ndjson" in content:
            return path, self.event_line(), {"Content-Type": "application/x-ndjson"}
        signal = route.template.rsplit("/", 1)[-1]
        if "application/x-protobuf" in content and signal in ("logs", "traces"):
            return path, otlp_export(signal), {"Content-Type": "application/x-protobuf"}
        media = "application/json" if "application/json" in content else next(iter(content))
        value = local_only(example(content[media].get("schema", {}), doc))
        return path, json.dumps(value).encode(), {"Content-Type": media}

    # -- what the stores hold ------------------------------------------------------------
    def store(self, name: str) -> Store:
        if name not in self._stores:
            url = (self.served.store if name == "control" else ProjectStores(
                self.store("control"), self.served.store).url(name))
            self._stores[name] = open_store(url, read_only=True)
        return self._stores[name]

    def snapshot(self) -> dict[str, Any]:
        """Everything a request could change: control rows, events and findings."""
        control = self.store("control")
        state: dict[str, Any] = {
            "projects": control.fetch("SELECT name, retention_days FROM svc_projects "
                                      "ORDER BY name"),
            "keys": control.fetch("SELECT key_id, revoked_us FROM svc_keys ORDER BY key_id"),
            "webhooks": control.fetch("SELECT id, project, url FROM svc_webhooks ORDER BY id"),
        }
        for name in ("web", "other"):
            store = self.store(name)
            state[name] = {
                "events": store.fetch("SELECT count(*) FROM events")[0][0],
                "findings": store.fetch("SELECT id, status, count, resolved_in FROM "
                                        "svc_findings ORDER BY id"),
            }
        return state

    def close(self) -> None:
        for store in self._stores.values():
            store.close()


def secret_parts(key: str) -> tuple[str, ...]:
    """The texts of a key that must never come back: the key and its secret part."""
    parts = key.split("_")
    if len(parts) >= 4 and parts[0] == "fc":
        return (key, "_".join(parts[3:]))
    return (key,) if len(key) >= 12 else ()


@pytest.fixture(scope="module", params=BACKENDS)
def probe(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
          ) -> Iterator[Probe]:
    """One service per backend for this module, both projects' stores opened."""
    tmp = tmp_path_factory.mktemp(f"access-{request.param}")
    with running(request.param, tmp) as served:
        found = Probe(served, tmp)
        for key in (served.keys["admin"], served.keys["other"]):  # opens both projects
            assert found.call("GET", "/v1/project", key=key).status == 200
        try:
            yield found
        finally:
            found.close()


# -- building requests from the document -----------------------------------------------------


def _resolve(schema: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        node: Any = doc
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def example(schema: dict[str, Any], doc: dict[str, Any]) -> Any:
    """A valid value of ``schema``: its first example, else one built from its constraints."""
    schema = _resolve(schema, doc)
    if schema.get("examples"):
        return schema["examples"][0]
    if "example" in schema:
        return schema["example"]
    if schema.get("default") is not None:
        return schema["default"]
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for combined in ("anyOf", "oneOf", "allOf"):
        if combined in schema:
            options = [_resolve(s, doc) for s in schema[combined]]
            chosen = next((s for s in options if s.get("type") != "null"), options[0])
            return example(chosen, doc)
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: example(properties[name], doc) for name in schema.get("required", ())}
    if kind == "array":
        return [example(schema.get("items", {}), doc)
                for _ in range(max(1, int(schema.get("minItems", 0))))]
    if kind == "integer":
        return max(int(schema.get("minimum", 1)), 1)
    if kind == "number":
        return float(schema.get("minimum", 1))
    if kind == "boolean":
        return False
    if kind == "string":
        return "p" * max(int(schema.get("minLength", 1)), 1)
    return None


LOCAL_URL: Final = f"http://127.0.0.1:{closed_port()}/hook"


def local_only(value: Any) -> Any:
    """``value`` with every URL in it pointing at a closed port of 127.0.0.1 (no request the
    tests make may lead the service to any other host)."""
    if isinstance(value, dict):
        return {k: local_only(v) for k, v in value.items()}
    if isinstance(value, list):
        return [local_only(v) for v in value]
    if isinstance(value, str) and value.startswith(("http://", "https://")):
        return LOCAL_URL
    return value


def otlp_export(signal: str) -> bytes:
    """An OTLP/HTTP protobuf export made by the OpenTelemetry SDK: a provider error logged
    by ``claude-code`` (logs), or a span that failed with an exception (traces)."""
    from opentelemetry.sdk.resources import Resource

    resource = Resource.create({"service.name": "claude-code",
                                "session.id": f"s-{secrets.token_hex(4)}"})
    if signal == "logs":
        from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import (
            InMemoryLogRecordExporter,
            SimpleLogRecordProcessor,
        )

        logs = InMemoryLogRecordExporter()
        provider = LoggerProvider(resource=resource, shutdown_on_exit=False)
        provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
        provider.get_logger("failcode.tests").emit(
            body="claude_code.api_error", event_name="api_error",
            attributes={"event.name": "api_error", "status_code": "429",
                        "error": "rate limited", "model": "claude-test"})
        provider.shutdown()
        return bytes(encode_logs(logs.get_finished_logs()).SerializeToString())
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import Status, StatusCode

    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    with tracer_provider.get_tracer("failcode.tests").start_as_current_span("work") as span:
        try:
            raise TimeoutError("read timed out")  # a real exception, recorded
        except TimeoutError as exc:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR))
    tracer_provider.shutdown()
    return bytes(encode_spans(spans.get_finished_spans()).SerializeToString())


def malformed_keys(served: Served) -> dict[str, str]:
    """Keys that must be refused with 401: each one wrong in another way."""
    admin, read = served.keys["admin"], served.keys["read"]
    _, _, admin_id, admin_secret = admin.split("_", 3)
    _, _, read_id, read_secret = read.split("_", 3)
    flipped = admin_secret[:-1] + ("A" if admin_secret[-1] != "A" else "B")
    return {
        "not a failcode key": "not-a-key-at-all",
        "truncated": admin[:-5],
        "unknown id": f"fc_admin_{'a' * 12}_{admin_secret}",
        "wrong secret": f"fc_admin_{admin_id}_{flipped}",
        "scope relabelled": f"fc_admin_{read_id}_{read_secret}",
        "secret of another key": f"fc_read_{read_id}_{admin_secret}",
        "basic credentials": "Basic dXNlcjpwYXNzd29yZA==",
    }


# -- the tests -------------------------------------------------------------------------------


class TestDocument:
    def test_open_routes_answer_without_a_key(self, probe: Probe) -> None:
        """/healthz, /readyz, /openapi.json and /docs answer 200 without a key."""
        for page in OPEN_PAGES:
            assert probe.call("GET", page).status == 200, page

    def test_only_health_routes_are_open(self, probe: Probe) -> None:
        """Every operation but the health checks declares the key's security schemes."""
        unsecured = {r.template for r in probe.routes() if not r.secured}
        assert unsecured == {"/healthz", "/readyz"}
        schemes = probe.document()["components"]["securitySchemes"]
        assert {s.get("scheme") or s.get("name") for s in schemes.values()} == {
            "bearer", "X-Failcode-Key"}

    def test_every_project_route_takes_the_project_parameter(self, probe: Probe) -> None:
        """A route acting on a project's data declares ``?project=``."""
        missing = [r.label for r in probe.routes() if r.secured
                   and (r.method, r.template) not in EVERY_SCOPE and "project" not in r.parameters]
        assert missing == []


class TestNoKey:
    def test_no_key_is_401_on_every_route(self, probe: Probe) -> None:
        """No key: 401 FC-SVC-001 on every secured route, and nothing changed."""
        wrong = []
        for route in probe.routes():
            if not route.secured:
                continue
            path, body, headers = probe.request_for(route)
            before = probe.snapshot()
            answer = probe.call(route.method, path, body=body, headers=headers)
            if answer.status != 401 or answer.problem()["code"] != FC.SVC_UNAUTHENTICATED.value:
                wrong.append((route.label, answer.status, answer.body[:200]))
            assert probe.snapshot() == before, route.label
        assert wrong == []

    def test_no_key_is_401_whatever_the_input(self, probe: Probe) -> None:
        """No key and a malformed body or parameter: still 401, never a validation answer."""
        wrong = []
        for route in probe.routes():
            if not route.secured:
                continue
            path, _body, _headers = probe.request_for(route)
            garbage = {"Content-Type": "application/json"}
            for query, body in (("", b"{not json"), ("?limit=0&offset=-1", b"[1, 2")):
                answer = probe.call(route.method, path + query, body=body, headers=garbage)
                if answer.status != 401:
                    wrong.append((route.label, query, answer.status))
        assert wrong == []


class TestMalformedKey:
    @pytest.mark.parametrize("header", ["bearer", "x-failcode-key"])
    def test_malformed_keys_are_401_on_every_route(self, probe: Probe, header: str) -> None:
        """Each malformed, unknown or forged key: 401 FC-SVC-001, nothing changed."""
        keys = malformed_keys(probe.served)
        wrong = []
        for route in probe.routes():
            if not route.secured:
                continue
            path, body, headers = probe.request_for(route)
            for why, key in keys.items():
                before = probe.snapshot()
                answer = probe.call(route.method, path, key=key, header=header, body=body,
                                    headers=headers)
                if (answer.status != 401
                        or answer.problem()["code"] != FC.SVC_UNAUTHENTICATED.value):
                    wrong.append((route.label, why, answer.status))
                assert probe.snapshot() == before, (route.label, why)
        assert wrong == []

    def test_empty_bearer_is_401(self, probe: Probe) -> None:
        """``Authorization: Bearer`` with nothing after it is no key."""
        answer = probe.call("GET", "/v1/findings", headers={"Authorization": "Bearer "})
        assert answer.status == 401
        assert answer.problem()["code"] == FC.SVC_UNAUTHENTICATED.value


class TestScope:
    def test_wrong_scope_is_403_on_every_route(self, probe: Probe) -> None:
        """A key whose scope does not cover the route: 403 FC-SVC-002, nothing changed."""
        wrong = []
        for route in probe.routes():
            if not route.secured:
                continue
            for scope in sorted(set(SCOPES) - route.allowed()):
                path, body, headers = probe.request_for(route)
                before = probe.snapshot()
                answer = probe.call(route.method, path, key=probe.served.keys[scope],
                                    body=body, headers=headers)
                if answer.status != 403 or answer.problem()["code"] != FC.SVC_FORBIDDEN.value:
                    wrong.append((route.label, scope, answer.status, answer.body[:200]))
                assert probe.snapshot() == before, (route.label, scope)
        assert wrong == []

    def test_another_project_is_403_on_every_route(self, probe: Probe) -> None:
        """``?project=`` naming another project than the key's: 403, nothing changed."""
        wrong = []
        for route in probe.routes():
            if "project" not in route.parameters:
                continue
            for key, project in ((probe.served.keys["admin"], "other"),
                                 (probe.served.keys["other"], "web")):
                path, body, headers = probe.request_for(route, project=project)
                before = probe.snapshot()
                answer = probe.call(route.method, path, key=key, body=body, headers=headers)
                if answer.status != 403 or answer.problem()["code"] != FC.SVC_FORBIDDEN.value:
                    wrong.append((route.label, project, answer.status))
                assert probe.snapshot() == before, (route.label, project)
        assert wrong == []

    @pytest.mark.parametrize("header", ["bearer", "x-failcode-key"])
    def test_right_key_is_accepted_on_every_route(self, probe: Probe, header: str) -> None:
        """Every scope a route allows gets past the key checks (neither 401 nor 403, no 5xx),
        with its own project named or not."""
        wrong = []
        for route in probe.routes():
            for scope in sorted(route.allowed()) if route.secured else [None]:
                key = probe.served.keys[scope] if scope else None
                for project in (None, "web") if "project" in route.parameters else (None,):
                    path, body, headers = probe.request_for(route, project=project)
                    answer = probe.call(route.method, path, key=key, header=header,
                                        body=body, headers=headers)
                    if answer.status in (401, 403) or answer.status >= 500:
                        wrong.append((route.label, scope, project, answer.status,
                                      answer.body[:300]))
        assert wrong == []

    def test_probe_bodies_store_when_accepted(self, probe: Probe) -> None:
        """The doors' probe bodies do store events when the key is right (so the refusals
        above had something to refuse)."""
        for route in probe.routes():
            if "ingest" not in route.operation.get("tags", ()):
                continue
            path, body, headers = probe.request_for(route)
            if route.template.endswith(("/classify", "/metrics")):
                continue  # classifying stores nothing, nor do metrics: by design
            before = probe.snapshot()["web"]["events"]
            answer = probe.call(route.method, path, key=probe.served.keys["ingest"],
                                body=body, headers=headers)
            assert answer.status == 200, (route.label, answer.body[:300])
            assert probe.snapshot()["web"]["events"] > before, route.label

    def test_revoked_key_is_refused_within_the_key_cache_time(self, probe: Probe) -> None:
        """A revoked key, accepted (and cached) before, is refused once the cache lapses."""
        made = json.loads(failcode("token", "create", "--project", "web", "--scope", "read",
                                   "--json", store=probe.served.store))
        key = made["key"]
        assert probe.call("GET", "/v1/findings", key=key).status == 200
        failcode("token", "revoke", made["key_id"], store=probe.served.store)
        deadline = time.monotonic() + KEY_CACHE_S + 20
        status = 200
        while time.monotonic() < deadline:
            before = probe.snapshot()
            answer = probe.call("GET", "/v1/findings", key=key)
            status = answer.status
            if status == 401:
                assert answer.problem()["code"] == FC.SVC_UNAUTHENTICATED.value
                break
            assert status == 200
            assert probe.snapshot() == before
            time.sleep(0.2)
        assert status == 401, "the revoked key was still accepted"
        path, body, headers = probe.request_for(
            next(r for r in probe.routes() if r.template == "/v1/events"))
        before = probe.snapshot()
        assert probe.call("POST", path, key=key, body=body, headers=headers).status == 401
        assert probe.snapshot() == before


class TestErrors:
    def test_unknown_route_is_404(self, probe: Probe) -> None:
        """A path the service does not have: 404 FC-SVC-003, with a key or without."""
        for key in (None, probe.served.keys["admin"]):
            for path in ("/v1/nothing-here", "/nothing", "/v2/findings"):
                answer = probe.call("GET", path, key=key)
                assert answer.status == 404, path
                assert answer.problem()["code"] == FC.SVC_NOT_FOUND.value

    def test_unknown_finding_is_404(self, probe: Probe) -> None:
        """An id no finding has: 404 FC-SVC-003 on reading and on every status change."""
        for route in probe.routes():
            if "finding_id" not in route.parameters:
                continue
            path = route.template.replace("{finding_id}", str(2**61))
            key = probe.served.keys["admin"]
            headers = {"Content-Type": "application/json"} if route.method == "POST" else {}
            answer = probe.call(route.method, path, key=key, headers=headers,
                                body=b"{}" if route.method == "POST" else None)
            assert answer.status == 404, (route.label, answer.body[:200])
            assert answer.problem()["code"] == FC.SVC_NOT_FOUND.value

    def test_undeclared_method_is_405_with_allow(self, probe: Probe) -> None:
        """A method a path does not have: 405 naming the ones it has in ``Allow``."""
        declared: dict[str, set[str]] = {}
        for route in probe.routes():
            declared.setdefault(route.template, set()).add(route.method)
        for template, methods in declared.items():
            path = template.replace("{finding_id}", "1").replace("{code}", "FC-SVC-001")
            path = path.replace("{webhook_id}", "wh_1")
            for method in sorted(set(PROBE_METHODS) - methods):
                answer = probe.call(method, path, key=probe.served.keys["admin"])
                assert answer.status == 405, (method, template, answer.status)
                assert answer.problem()["code"] == FC.SVC_NOT_FOUND.value
                allowed = {m.strip() for m in answer.headers["allow"].split(",")}
                assert methods <= allowed, (template, allowed)

    def test_body_not_json_is_400(self, probe: Probe) -> None:
        """A JSON route sent bytes that are not JSON (nor UTF-8): 400 FC-DATA-001."""
        for route in probe.routes():
            content = route.operation.get("requestBody", {}).get("content", {})
            if set(content) != {"application/json"}:
                continue
            path, _body, _headers = probe.request_for(route)
            for body in (b"{not json", b"\xff\xfe\x00garbage"):
                before = probe.snapshot()
                answer = probe.call(route.method, path, key=probe.served.keys["admin"],
                                    body=body, headers={"Content-Type": "application/json"})
                assert answer.status == 400, (route.label, body, answer.body[:200])
                assert answer.problem()["code"] == FC.DATA_INVALID_INPUT.value
                assert probe.snapshot() == before


class TestBodies:
    def _events(self, probe: Probe) -> Route:
        return next(r for r in probe.routes() if r.template == "/v1/events")

    def test_declared_length_over_8_mib_is_413_at_once(self, probe: Probe) -> None:
        """Content-Length over 8 MiB: 413 FC-SVC-004 before any of the body is read."""
        connection = http.client.HTTPConnection("127.0.0.1", probe.served.port, timeout=60)
        try:
            connection.putrequest("POST", "/v1/events")
            connection.putheader("Authorization", f"Bearer {probe.served.keys['ingest']}")
            connection.putheader("Content-Type", "application/x-ndjson")
            connection.putheader("Content-Length", str(MAX_BODY + 1))
            connection.endheaders()
            response = connection.getresponse()
            answer = Answer(response.status, {k.lower(): v for k, v in response.getheaders()},
                            response.read())
        finally:
            connection.close()
        probe.assert_no_key(answer)
        assert answer.status == 413
        assert answer.problem()["code"] == FC.SVC_TOO_LARGE.value

    def test_chunked_body_over_8_mib_is_413(self, probe: Probe) -> None:
        """A chunked body (no Content-Length) cut and refused once it passes 8 MiB."""
        before = probe.snapshot()
        line = probe.event_line()
        chunk = line * (64 * 1024 // len(line) + 1)
        chunks = MAX_BODY // len(chunk) + 8
        connection = http.client.HTTPConnection("127.0.0.1", probe.served.port, timeout=60)
        try:
            connection.putrequest("POST", "/v1/events")
            connection.putheader("Authorization", f"Bearer {probe.served.keys['ingest']}")
            connection.putheader("Content-Type", "application/x-ndjson")
            connection.putheader("Transfer-Encoding", "chunked")
            connection.endheaders()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                for _ in range(chunks):
                    connection.send(f"{len(chunk):X}\r\n".encode() + chunk + b"\r\n")
                connection.send(b"0\r\n\r\n")
            response = connection.getresponse()
            answer = Answer(response.status, {k.lower(): v for k, v in response.getheaders()},
                            response.read())
        finally:
            connection.close()
        probe.assert_no_key(answer)
        assert answer.status == 413
        assert answer.problem()["code"] == FC.SVC_TOO_LARGE.value
        assert probe.snapshot() == before

    def test_gzip_body_is_accepted(self, probe: Probe) -> None:
        """A gzip body (``gzip`` or ``x-gzip``) is inflated and stored."""
        for encoding in ("gzip", "x-gzip"):
            before = probe.snapshot()["web"]["events"]
            answer = probe.call("POST", "/v1/events", key=probe.served.keys["ingest"],
                                body=gzip.compress(probe.event_line() + probe.event_line()),
                                headers={"Content-Type": "application/x-ndjson",
                                         "Content-Encoding": encoding})
            assert answer.status == 200, answer.body
            assert json.loads(answer.body)["new"] == 2
            assert probe.snapshot()["web"]["events"] == before + 2

    def test_gzip_bomb_is_413(self, probe: Probe) -> None:
        """A small gzip body that inflates past 32 MiB: 413, nothing stored."""
        line = probe.event_line()
        bomb = gzip.compress(line * (MAX_DECODED // len(line) + 2), compresslevel=9)
        assert len(bomb) < MAX_BODY
        before = probe.snapshot()
        answer = probe.call("POST", "/v1/events", key=probe.served.keys["ingest"], body=bomb,
                            headers={"Content-Type": "application/x-ndjson",
                                     "Content-Encoding": "gzip"})
        assert answer.status == 413
        assert answer.problem()["code"] == FC.SVC_TOO_LARGE.value
        assert probe.snapshot() == before

    def test_broken_gzip_is_400(self, probe: Probe) -> None:
        """A body that claims gzip but is not: 400 FC-DATA-001, nothing stored."""
        before = probe.snapshot()
        whole = gzip.compress(probe.event_line())
        for body in (b"plain text, not gzip", whole[: len(whole) // 2]):
            answer = probe.call("POST", "/v1/events", key=probe.served.keys["ingest"],
                                body=body, headers={"Content-Type": "application/x-ndjson",
                                                    "Content-Encoding": "gzip"})
            assert answer.status == 400
            assert answer.problem()["code"] == FC.DATA_INVALID_INPUT.value
        assert probe.snapshot() == before

    def test_unknown_content_encoding_is_415_on_every_body_route(self, probe: Probe) -> None:
        """A Content-Encoding no door reads (``br``, ``compress``): 415 FC-SVC-006."""
        wrong = []
        for route in probe.routes():
            if "requestBody" not in route.operation:
                continue
            path, body, headers = probe.request_for(route)
            for encoding in ("br", "compress"):
                before = probe.snapshot()
                answer = probe.call(route.method, path, key=probe.served.keys["admin"],
                                    body=body,
                                    headers={**headers, "Content-Encoding": encoding})
                if (answer.status != 415
                        or answer.problem()["code"] != FC.SVC_UNSUPPORTED_MEDIA.value):
                    wrong.append((route.label, encoding, answer.status))
                assert probe.snapshot() == before, (route.label, encoding)
        assert wrong == []


class TestKeysNeverShown:
    def test_no_log_line_holds_a_key(self, probe: Probe) -> None:
        """After every request of this module, the service's log holds no key text."""
        for key in malformed_keys(probe.served).values():
            probe.call("GET", "/v1/findings", key=key)
        probe.call("GET", "/v1/findings", key=probe.served.keys["read"],
                   headers={"X-Failcode-Key": probe.served.keys["admin"]})
        log = probe.served.log.read_text(errors="replace")
        for key in probe.presented:
            for part in secret_parts(key):
                assert part not in log, "a key's text is in the service's log"

    def test_a_key_inside_a_classified_failure_is_not_answered(self, probe: Probe) -> None:
        """A failcode key that a failure's text happens to hold does not come back from
        /v1/classify: failcode's one redaction pass knows failcode's own key format."""
        leaked = probe.served.keys["other"]
        payload = {"exception": {"type": "RuntimeError",
                                 "message": f"POST failed with key {leaked}"}}
        answer = probe.call("POST", "/v1/classify", key=probe.served.keys["read"],
                            body=json.dumps(payload).encode(),
                            headers={"Content-Type": "application/json"})
        assert answer.status == 200

    def test_a_key_inside_a_reported_failure_is_not_stored(self, probe: Probe) -> None:
        """An event whose failure text holds a failcode key is stored without it."""
        leaked = probe.served.keys["other"]
        failure = classify_text("RuntimeError", f"POST failed with key {leaked}")
        session = f"leak-{secrets.token_hex(4)}"
        line = failure_event(failure, event="tool.failed", session=session).to_json() + b"\n"
        answer = probe.call("POST", "/v1/events", key=probe.served.keys["ingest"], body=line,
                            headers={"Content-Type": "application/x-ndjson"})
        assert answer.status == 200
        assert json.loads(answer.body)["new"] == 1
        bodies = probe.store("web").fetch("SELECT body FROM events WHERE session = ?",
                                          (session,))
        assert len(bodies) == 1
        stored = bodies[0][0] if isinstance(bodies[0][0], str) else bytes(bodies[0][0]).decode()
        assert all(part not in stored for part in secret_parts(leaked))


class TestRate:
    @pytest.fixture(params=BACKENDS)
    def limited(self, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Probe]:
        """A second service, on its own store, allowing 5 requests per key and minute."""
        with running(request.param, tmp_path, extra=("--rate", "5")) as served:
            found = Probe(served, tmp_path)
            try:
                yield found
            finally:
                found.close()

    def test_over_the_rate_is_429_with_retry_after(self, limited: Probe) -> None:
        """The sixth request of a key within a minute: 429 FC-SVC-005 with Retry-After;
        another key of the same project is not limited by it."""
        read = limited.served.keys["read"]
        answers = []
        for _ in range(11):  # two windows of 5 hold at most 10, whatever the clock
            answers.append(limited.call("GET", "/v1/findings", key=read))
            if answers[-1].status == 429:
                break
        refused = answers[-1]
        assert refused.status == 429, [a.status for a in answers]
        assert refused.problem()["code"] == FC.SVC_RATE_LIMITED.value
        retry = refused.headers["retry-after"]
        assert retry.isdigit()
        assert 1 <= int(retry) <= 61
        assert {a.status for a in answers[:-1]} == {200}
        assert limited.call("GET", "/v1/findings", key=limited.served.keys["admin"]).status \
            == 200
