"""A simulated provider outage: 1,000 concurrent tasks against a stub HTTP server on 127.0.0.1.

The server answers 429 with Retry-After first, then 503. Real HTTP (httpx.AsyncClient); time is
virtual (each task has its own clock, advanced by the injected sleep), so the run takes seconds
and no task ever really waits.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import Counter
from typing import Any

from failcode import (
    FC,
    Action,
    BudgetPolicy,
    Decision,
    FailureError,
    Hint,
    Policy,
    RetryClass,
    SharedBudget,
    decision_of,
    retry,
)
from failcode import DecisionRule as Rule
from tests._needs import need_module

TASKS = 1000
CLIENTS = 25
RETRY_AFTER_S = 2
RATE_LIMITED_REQUESTS = 1500  # then 503s

_now: contextvars.ContextVar[float] = contextvars.ContextVar("now", default=0.0)


class StubProvider:
    """An HTTP/1.1 server: the first N requests get 429 + Retry-After, the rest 503."""

    def __init__(self) -> None:
        self.requests = 0
        self.server: asyncio.Server | None = None
        self.handlers: set[asyncio.Task[None]] = set()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.handlers.add(task)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if not head:
                    break
                self.requests += 1
                if self.requests <= RATE_LIMITED_REQUESTS:
                    status = b"429 Too Many Requests"
                    extra = f"Retry-After: {RETRY_AFTER_S}\r\n".encode()
                else:
                    status, extra = b"503 Service Unavailable", b""
                body = b'{"error": "outage"}'
                writer.write(b"HTTP/1.1 " + status + b"\r\nContent-Type: application/json\r\n"
                             + extra + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionResetError):
            pass
        finally:
            writer.close()

    async def start(self) -> str:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0, backlog=2048)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"


async def outage(policy: Policy) -> dict[str, Any]:
    """Run TASKS concurrent calls through one retry helper; return what happened."""
    httpx = need_module("httpx")
    stub = StubProvider()
    url = await stub.start()
    decisions: list[Decision] = []
    slept_per_task: dict[int, list[float]] = {}
    ends: list[float] = []

    async def virtual_sleep(delay: float) -> None:
        slept_per_task.setdefault(id(asyncio.current_task()), []).append(delay)
        _now.set(_now.get() + delay)
        await asyncio.sleep(0)

    helper = retry("provider", policy=policy, budget=SharedBudget(policy),
                   on_failure=lambda f, d: decisions.append(d), clock=_now.get,
                   asleep=virtual_sleep)

    # several small pools: httpcore's pool scans waiting requests x connections on every
    # change, so one pool shared by 1,000 tasks is quadratic and slow
    clients = [httpx.AsyncClient(base_url=url, timeout=30.0,
                                 limits=httpx.Limits(max_connections=8))
               for _ in range(CLIENTS)]
    try:

        @helper
        async def complete(client: Any) -> None:
            response = await client.post("/v1/complete", json={"prompt": "hi"})
            status = response.status_code
            metadata: dict[str, Any] = {"http_status": status}
            if "retry-after" in response.headers:
                metadata["retry_after_s"] = float(response.headers["retry-after"])
            code = FC.PROV_RATE_LIMIT if status == 429 else FC.PROV_SERVER_ERROR
            raise FailureError(code.failure(surface="llm.complete", params={"provider": "stub"},
                                            metadata=metadata))

        async def task(client: Any) -> Decision:
            _now.set(0.0)
            try:
                await complete(client)
            except FailureError as exc:
                ends.append(_now.get())
                found = decision_of(exc)
                assert found is not None
                return found[1]
            raise AssertionError("the outage never ends")  # pragma: no cover

        finals = await asyncio.gather(*(task(clients[i % CLIENTS]) for i in range(TASKS)))
    finally:
        for client in clients:
            await client.aclose()
    assert stub.server is not None
    stub.server.close()
    await asyncio.wait(stub.handlers, timeout=10)
    await stub.server.wait_closed()
    return {"finals": finals, "decisions": decisions, "requests": stub.requests,
            "slept": slept_per_task, "ends": ends}


def test_outage_retries_stay_within_the_budget() -> None:
    """1,000 tasks in an outage: total retries never exceed the budget; all escalate."""
    policy = Policy(classes={"provider": RetryClass(max_attempts=5, initial_delay_s=1.0,
                                                    max_delay_s=20.0, deadline_s=60.0)},
                    budget=BudgetPolicy(capacity=1000, retry_cost=5))
    result = asyncio.run(outage(policy))
    retries = sum(1 for d in result["decisions"] if d.action is Action.RETRY)
    assert retries <= 1000 // 5
    assert result["requests"] == TASKS + retries  # every retry is one more real request
    assert all(d.action is not Action.RETRY for d in result["finals"])
    exhausted = [d for d in result["finals"] if Hint.RETRY_BUDGET_EXHAUSTED in d.hints]
    assert len(exhausted) >= TASKS - retries
    assert all("budget" in d.reason for d in exhausted)


def test_outage_ladder_escalates_and_no_task_sleeps_past_its_deadline() -> None:
    """With budget to spare, each task climbs to escalation within its bound and deadline."""
    deadline = 7.0
    policy = Policy(classes={"provider": RetryClass(max_attempts=4, initial_delay_s=1.0,
                                                    max_delay_s=4.0, deadline_s=deadline)},
                    budget=BudgetPolicy(capacity=1e6, retry_cost=1))
    result = asyncio.run(outage(policy))
    finals: list[Decision] = result["finals"]
    assert all(d.action in (Action.ESCALATE, Action.RETRY_AFTER_CHANGE) for d in finals)
    rules = Counter(d.rule for d in finals)
    assert rules[Rule.STUCK_LADDER] > 0  # repeated 429s climbed the ladder
    assert set(rules) <= {Rule.STUCK_LADDER, Rule.RETRYABLE}
    assert max(result["ends"]) <= deadline
    assert all(sum(s) <= deadline for s in result["slept"].values())
    retries = sum(1 for d in result["decisions"] if d.action is Action.RETRY)
    assert retries <= TASKS * (4 - 1)
    # every wait after a 429 honoured the server's Retry-After
    honoured = [d for d in result["decisions"]
                if d.action is Action.RETRY and d.server_delay_s is not None]
    assert honoured
    assert all(d.delay_s >= RETRY_AFTER_S for d in honoured)
