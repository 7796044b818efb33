"""Schemathesis against a running ``failcode serve``: its answers keep its OpenAPI document.

The document is the one the service serves (``GET /openapi.json``); every operation in it is
exercised with requests generated from it: valid ones and invalid ones with an admin key, and
valid ones without a key, at least 1,000 requests per backend in all.

Rules checked on every answer:

- Schemathesis' checks: no 5xx (``not_a_server_error``), a status the operation documents
  (``status_code_conformance``), a documented media type (``content_type_conformance``), a body
  matching the documented schema (``response_schema_conformance``).
- Without a key every secured operation answers 401 FC-SVC-001, whatever was generated.
- An operation without path parameters never answers 404: nothing in such a request can name
  something that does not exist, and its route does exist.
- A problem answer's ``status`` is the HTTP status and it carries failcode's ``code``.

Generated webhook URLs are pointed at a closed port of 127.0.0.1 before they are sent, so the
service never alerts any other host.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections import Counter
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings

from failcode import FC, Failure, from_command
from failcode.events import failure_event
from tests._needs import need_module
from tests.conftest import BACKENDS, fresh_url
from tests.provider_stub import closed_port
from tests.service.conftest import Served, _drop_project_schemas, make_served

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

schemathesis = need_module("schemathesis")

from schemathesis import GenerationMode  # noqa: E402 - after the optional dependency's check
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.core.failures import FailureGroup  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

# generated requests by the hundred against two services: slow, so the deep step runs them
pytestmark = pytest.mark.deep

CHECKS: Final = [not_a_server_error, status_code_conformance, content_type_conformance,
                 response_schema_conformance]
MIN_REQUESTS: Final = 1000
LOCAL_URL: Final = f"http://127.0.0.1:{closed_port()}/hook"
KEY_HEADERS: Final = ("authorization", "x-failcode-key")

# The document's two non-JSON request media types, sent as generated (text and bytes).
schemathesis.serializer.alias("application/x-ndjson", "text/plain")
schemathesis.serializer.alias("application/x-protobuf", "application/octet-stream")


class Plan(NamedTuple):
    """One pass over an operation: how requests are generated and which key they carry."""

    name: str
    mode: GenerationMode
    keyed: bool
    examples: int


PLANS: Final = (
    Plan("valid, admin key", GenerationMode.POSITIVE, keyed=True, examples=40),
    Plan("invalid, admin key", GenerationMode.NEGATIVE, keyed=True, examples=12),
    Plan("valid, no key", GenerationMode.POSITIVE, keyed=False, examples=10),
)
DOCUMENTED: Final = Plan("the document's examples, admin key", GenerationMode.POSITIVE,
                         keyed=True, examples=5)


@pytest.fixture(scope="module", params=BACKENDS)
def target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
           ) -> Iterator[Served]:
    """A service per backend holding a few real failures (so some generated finding ids
    exist); its rate limit out of the generator's way."""
    tmp = tmp_path_factory.mktemp(f"schemathesis-{request.param}")
    for store in fresh_url(request.param, tmp):
        served = make_served(store, tmp, extra=("--rate", "1000000"))
        # every receiver the generator names may be registered (the default refuses internal
        # addresses: a generated webhook would then only ever exercise the refusal)
        before = os.environ.get("FAILCODE_WEBHOOK_ALLOW")
        os.environ["FAILCODE_WEBHOOK_ALLOW"] = "0.0.0.0/0,::/0"
        try:
            served.start()
        finally:
            if before is None:
                os.environ.pop("FAILCODE_WEBHOOK_ALLOW")
            else:
                os.environ["FAILCODE_WEBHOOK_ALLOW"] = before
        try:
            status, _headers, body = served.request(
                "POST", "/v1/events", key=served.keys["ingest"], body=_seed_events(tmp),
                headers={"Content-Type": "application/x-ndjson"})
            assert status == 200, body
            yield served
        finally:
            served.stop()
            if request.param == "postgresql":
                _drop_project_schemas(store)


def _seed_events(cwd: Path) -> bytes:
    """Failure events of commands run here: programs and modules that are not installed."""
    lines = []
    for argv in (["sh", "-c", "failcode-schemathesis-tool"],
                 [sys.executable, "-c", "import failcode_schemathesis_module"],
                 [sys.executable, "-c", "1/0"]):
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60,
                              check=False)
        failure = from_command(argv, done.returncode, done.stdout, done.stderr, cwd=cwd)
        assert isinstance(failure, Failure)
        lines += [failure_event(failure, event="command.failed", session=f"seed-{i}").to_json()
                  for i in range(3)]
    return b"\n".join(lines) + b"\n"


def _local_only(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: LOCAL_URL if k == "url" and isinstance(v, str) else _local_only(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_local_only(v) for v in value]
    return value


def _own_checks(case: Any, response: Any, plan: Plan) -> list[str]:
    """The module's own rules (see its docstring) broken by one answer."""
    broken = []
    operation = case.operation
    secured = bool(operation.definition.raw.get("security"))
    status = response.status_code
    problem: dict[str, Any] | None = None
    if response.headers.get("content-type", [""])[0].startswith("application/problem+json"):
        problem = json.loads(response.content)
        if problem.get("status") != status or not str(problem.get("code", "")).startswith("FC-"):
            broken.append(f"problem body {problem} does not carry status {status} and an FC code")
    if not plan.keyed and secured and (
            status != 401 or (problem or {}).get("code") != FC.SVC_UNAUTHENTICATED.value):
        broken.append(f"no key, yet {status} (expected 401 {FC.SVC_UNAUTHENTICATED.value})")
    if status == 404 and "{" not in operation.path:
        broken.append("404 from an operation whose route exists and that names nothing")
    return broken


def _exercise(served: Served, operation: Any, plan: Plan, seen: Counter[tuple[str, ...]],
              failures: dict[tuple[str, ...], str], *, strategy: Any = None) -> None:
    """Run one plan over one operation (its generated cases, or ``strategy``'s), recording
    every status and the first failure of each kind (a failure does not stop the run, so one
    run reports them all)."""
    key = served.keys["admin"]

    def send(case: Any) -> None:
        for name in list(case.headers or {}):
            if name.lower() in KEY_HEADERS:
                del case.headers[name]
        if isinstance(case.body, dict | list):
            case.body = _local_only(case.body)
        headers = {"Authorization": f"Bearer {key}"} if plan.keyed else None
        response = case.call(base_url=served.url, headers=headers, timeout=60)
        seen[(operation.label, plan.name, str(response.status_code))] += 1
        problems: list[str] = []
        try:
            case.validate_response(response, checks=CHECKS, headers=headers)
        except FailureGroup as exc:
            problems.extend(str(failure) for failure in exc.exceptions)
        problems.extend(_own_checks(case, response, plan))
        for problem in problems:
            kind = (operation.label, plan.name, problem.splitlines()[0][:120])
            failures.setdefault(kind, f"{problem[:2000]}\n{case.as_curl_command()}")

    run: Callable[[], None] = settings(
        max_examples=plan.examples, deadline=None, database=None, derandomize=False,
        suppress_health_check=list(HealthCheck), print_blob=True,
    )(given(case=operation.as_strategy(generation_mode=plan.mode) if strategy is None
            else strategy)(send))
    run()


def _has_inputs(operation: Any) -> bool:
    raw = operation.definition.raw
    return bool(raw.get("parameters")) or "requestBody" in raw


def test_generated_requests_keep_the_document(target: Served) -> None:
    """Over 1,000 generated requests: every answer keeps the document and the module's
    rules."""
    schema = schemathesis.openapi.from_url(f"{target.url}/openapi.json")
    seen: Counter[tuple[str, ...]] = Counter()
    failures: dict[tuple[str, ...], str] = {}
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 20
    for operation in operations:
        for plan in PLANS:
            if plan.mode is GenerationMode.NEGATIVE and not _has_inputs(operation):
                continue  # nothing of the request can be made invalid
            _exercise(target, operation, plan, seen, failures)
        for strategy in operation.get_strategies_from_examples():
            _exercise(target, operation, DOCUMENTED, seen, failures, strategy=strategy)
    total = sum(seen.values())
    report = "\n\n".join(f"{' | '.join(k)}\n{v}" for k, v in failures.items())
    assert failures == {}, f"{len(failures)} kinds of failure in {total} requests:\n{report}"
    assert total >= MIN_REQUESTS, sorted(seen.items())
    keyed = {k[0] for k in seen if k[1] == PLANS[0].name and k[2] not in ("401", "403")}
    assert len(keyed) == len(operations), "every operation answered a valid, keyed request"
    with contextlib.suppress(FileNotFoundError):
        log = target.log.read_text(errors="replace")
        assert "Traceback" not in log, log[-3000:]
