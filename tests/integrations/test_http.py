"""FastAPI problem+json handlers: in-process (TestClient) and over real HTTP (uvicorn)."""

from __future__ import annotations

import socket
import threading
import time
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from failcode import FC, FailureError, Veto
from failcode.boundary import OutcomeError
from tests._needs import need_module

if TYPE_CHECKING:
    from collections.abc import Iterator

fastapi = need_module("fastapi")
pydantic = need_module("pydantic")


class Task(pydantic.BaseModel):  # type: ignore[name-defined,misc]
    goal: str
    attempts: int


def _app() -> Any:
    from failcode.integrations.fastapi import install_problem_handlers

    app = fastapi.FastAPI()
    install_problem_handlers(app)

    @app.post("/run/{what}")
    def run(what: str, task: Task) -> dict[str, str]:
        if what == "build":
            raise FailureError(FC.BUILD_FAILED.failure(surface="cpp.build",
                                                       params={"program": "gcc"}))
        if what == "veto":
            raise OutcomeError(Veto(reason="the verifier rejected it", by="verifier"))
        if what == "convergence":
            raise OutcomeError("convergence", "no progress after 5 iterations")
        if what == "rate":
            error = FailureError(FC.PROV_RATE_LIMIT.failure(surface="llm",
                                                            params={"provider": "OpenAI"}))
            error.decision = 2.5  # type: ignore[attr-defined]
            raise error
        if what == "crash":
            msg = "db_password=hunter2 in internal module"
            raise KeyError(msg)
        return {"goal": task.goal}

    return app


VALID = {"goal": "fix the build", "attempts": 1}
# (path, body, status, error_code, FC code)
CASES: list[tuple[str, Any, int, str | None, str | None]] = [
    ("/run/ok", VALID, 200, None, None),
    ("/run/ok", b'{"goal": ', 400, "VALIDATION_ERROR", "FC-DATA-001"),
    ("/run/ok", {"goal": "x"}, 400, "VALIDATION_ERROR", "FC-DATA-001"),
    ("/run/build", VALID, 422, "EXECUTION_ERROR", "FC-BUILD-001"),
    ("/run/veto", VALID, 422, "VERIFICATION_VETO", None),
    ("/run/convergence", VALID, 422, "CONVERGENCE_STOP", None),
    ("/run/rate", VALID, 503, "EXECUTION_ERROR", "FC-PROV-003"),
    ("/run/crash", VALID, 500, "INTERNAL_ERROR", "FC-SYS-001"),
]


def _post(client: Any, path: str, body: Any) -> Any:
    if isinstance(body, bytes):
        return client.post(path, content=body, headers={"content-type": "application/json"})
    return client.post(path, json=body)


def _check(response: Any, status: int, error_code: str | None, code: str | None) -> None:
    assert response.status_code == status
    if status == 200:
        return
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == status
    assert body["error_code"] == error_code
    assert body.get("code") == code
    assert "hunter2" not in response.text
    assert "KeyError" not in response.text


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """An in-process client that returns 500 responses instead of raising."""
    from fastapi.testclient import TestClient

    with TestClient(_app(), raise_server_exceptions=False) as test_client:
        yield test_client


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_in_process(client: Any, case: tuple[str, Any, int, str | None, str | None]) -> None:
    """Each kind of result answers its status, error code and FC code (TestClient)."""
    path, body, status, error_code, code = case
    _check(_post(client, path, body), status, error_code, code)


def test_malformed_json_is_its_own_class(client: Any) -> None:
    """Malformed JSON is a 400 whose signature names the malformed_json class."""
    body = _post(client, "/run/ok", b"{nope").json()
    assert ":malformed_json:" in body["signature"]
    assert body["errors"][0]["type"] == "json_invalid"


def test_retry_after_from_the_decision(client: Any) -> None:
    """A transient failure with a decision delay answers Retry-After, rounded up."""
    assert _post(client, "/run/rate", VALID).headers["retry-after"] == "3"


def test_accept_language_renders_german(client: Any) -> None:
    """The detail follows Accept-Language; the code does not change."""
    response = client.post("/run/build", json=VALID,
                           headers={"accept-language": "fr;q=0.9, de;q=0.8"})
    assert response.json()["detail"] == "Der Build mit gcc ist fehlgeschlagen."
    assert response.json()["code"] == "FC-BUILD-001"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """uvicorn serving the app on 127.0.0.1 in a thread; yields its base URL."""
    uvicorn = need_module("uvicorn")
    port = _free_port()
    config = uvicorn.Config(_app(), host="127.0.0.1", port=port, log_level="critical",
                            lifespan="off")
    instance = uvicorn.Server(config)
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    for _ in range(500):
        if instance.started:
            break
        time.sleep(0.01)
    assert instance.started, "uvicorn did not start"
    yield f"http://127.0.0.1:{port}"
    instance.should_exit = True
    thread.join(timeout=10)


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_over_http(server: str, case: tuple[str, Any, int, str | None, str | None]) -> None:
    """The same answers over real HTTP from uvicorn on 127.0.0.1."""
    path, body, status, error_code, code = case
    with httpx.Client(base_url=server, timeout=10) as http:
        _check(_post(http, path, body), status, error_code, code)
