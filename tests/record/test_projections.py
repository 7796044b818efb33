"""Seed projections: AirError, ToolErrorOutput, WorkerResult (seed 000) and AFK (seed 003)."""

from __future__ import annotations

from typing import Any, get_args, get_type_hints

import pytest
from hypothesis import given

from failcode import (
    FC,
    AFKError,
    AirError,
    Cancelled,
    Catalog,
    Category,
    CodeEnum,
    CodeSpec,
    EntityRef,
    Failure,
    Kind,
    Outcome,
    ProjectionError,
    ToolErrorOutput,
    WorkerResult,
    from_air_error,
    to_afk_error,
    to_air_error,
    to_tool_error_output,
    to_worker_result,
)
from tests.afk_catalog import AFKCode
from tests.strategies import failures

SEED_000_AIR_ERROR_FIELDS = {"error_id", "kind", "severity", "message", "detail",
                             "retryability", "semantic_signature", "cause_ref", "cause_refs",
                             "user_action", "metadata"}
SEED_000_REQUIRED = {"error_id", "kind", "severity", "message", "retryability",
                     "semantic_signature"}
SEED_003_FIELDS = {"code", "category", "message", "cause", "remedy", "recoverable", "context"}


def rich_failure() -> Failure:
    """A Failure with every optional field filled."""
    try:
        raise ConnectionError("reset by peer")
    except ConnectionError as exc:
        return FC.CMD_NOT_FOUND.failure(
            surface="shell.run", params={"program": "cargo"}, detail="PATH=/usr/bin",
            cause=exc, context={"session": "s1", "step": 7},
            metadata={"exit_code": 127}, cause_refs=(EntityRef("event", "e1"),
                                                     EntityRef("event", "e2")),
            evidence_refs=(EntityRef("artifact", "a1"),))


def test_air_error_contract_has_seed_fields() -> None:
    """The AirError TypedDict declares exactly seed 000's fields."""
    assert set(get_type_hints(AirError)) == SEED_000_AIR_ERROR_FIELDS
    assert AirError.__required_keys__ == SEED_000_REQUIRED


def test_air_error_field_by_field() -> None:
    """Every AirError field comes from its Failure field."""
    record = rich_failure()
    air = to_air_error(record)
    assert air["error_id"] == record.error_id
    assert air["kind"] == "dependency_error"
    assert air["severity"] == "error"
    assert air["message"] == record.message
    assert air["detail"] == "PATH=/usr/bin"
    assert air["retryability"] == "retryable_after_change"
    assert air["semantic_signature"] == record.signature
    assert air["cause_ref"] == {"type": "event", "id": "e1"}
    assert air["cause_refs"] == [{"type": "event", "id": "e1"}, {"type": "event", "id": "e2"}]
    assert air["user_action"] == record.remedy
    assert air["metadata"]["exit_code"] == 127
    assert air["metadata"]["failcode"]["code"] == "FC-CMD-001"


def test_air_error_omits_absent_optionals() -> None:
    """Optional AirError fields are absent, not null, when the Failure has no value."""
    record = FC.PROV_RATE_LIMIT.failure(surface="llm.complete", params={"provider": "OpenAI"})
    air = to_air_error(record)
    assert not {"detail", "cause_ref", "cause_refs", "user_action"} & set(air)


@pytest.mark.parametrize("field", ["kind", "severity", "retryability"])
def test_air_error_values_are_seed_values(field: str) -> None:
    """AirError's kind, severity and retryability use seed 000's literal values."""
    from failcode import Retryability, Severity

    allowed = {"kind": {k.value for k in Kind}, "severity": {s.value for s in Severity},
               "retryability": {r.value for r in Retryability}}[field]
    hint = get_type_hints(AirError)[field]
    if field != "kind":
        assert set(get_args(hint)) == allowed
    assert to_air_error(rich_failure())[field] in allowed


@given(failures())
def test_air_error_round_trips(record: Failure) -> None:
    """Property: Failure -> AirError -> Failure is lossless."""
    assert from_air_error(to_air_error(record)) == record


@pytest.mark.parametrize("own", [None, "x", 0])
def test_air_error_keeps_a_metadata_key_named_failcode(own: Any) -> None:
    """A record's own ``metadata["failcode"]`` survives the AirError round trip (a random CI
    run found it overwritten by the projection's own key)."""
    record = rich_failure()
    record = Failure.from_dict({**record.to_dict(),
                                "metadata": {**record.metadata, "failcode": own}})
    back = from_air_error(to_air_error(record))
    assert back.metadata["failcode"] == own
    assert back == record


def test_foreign_air_error_does_not_convert_back() -> None:
    """An AirError not made by failcode has no code or category: a clear ProjectionError."""
    foreign: dict[str, Any] = {"error_id": "x", "kind": "build_error", "severity": "error",
                               "message": "m", "retryability": "unknown",
                               "semantic_signature": "s"}
    with pytest.raises(ProjectionError, match=r"no metadata\.failcode"):
        from_air_error(foreign)


def test_tool_error_output() -> None:
    """ToolErrorOutput wraps the AirError with partial output, artifacts and evidence ids."""
    assert set(get_type_hints(ToolErrorOutput)) == {"error", "partial_output", "artifact_ids",
                                                    "evidence_ref_ids"}
    output = to_tool_error_output(rich_failure(), partial_output={"lines": 3},
                                  artifact_ids=["a1"])
    assert output["error"]["kind"] == "dependency_error"
    assert output["partial_output"] == {"lines": 3}
    assert output["artifact_ids"] == ["a1"]
    assert output["evidence_ref_ids"] == ["a1"]


@pytest.mark.parametrize(("member", "status"), [
    (FC.CMD_NOT_FOUND, "blocked"),
    (FC.BUILD_FAILED, "failed"),
    (FC.PROV_CONTENT_FILTERED, "blocked"),
])
def test_worker_result_status_from_kind(member: FC, status: str) -> None:
    """WorkerResult's status defaults to the kind's task outcome (seed 000 §7)."""
    record = member.failure(surface="s", params=dict(member.spec.example_params))
    result = to_worker_result(record)
    assert result["status"] == status
    assert result["error"]["semantic_signature"] == record.signature


def test_worker_result_statuses() -> None:
    """WorkerResult's status is one of failed, blocked, cancelled, and can be set."""
    assert set(get_args(get_type_hints(WorkerResult)["status"])) == {"failed", "blocked",
                                                                      "cancelled"}
    record = rich_failure()
    assert to_worker_result(record, Outcome.CANCELLED)["status"] == "cancelled"


def test_afk_error_field_by_field() -> None:
    """Seed 003's error gets code, category, message, cause, remedy, recoverable, context."""
    assert set(get_type_hints(AFKError)) == SEED_003_FIELDS
    record = AFKCode.PERC_CAPTURE_FULLSCREEN.failure(
        surface="perception.capture", params={"window": "Factorio"},
        context={"session": "s1", "tick": 4021, "subgoal": "mine", "target_window": "Factorio"},
        cause=OSError("DXGI_ERROR_ACCESS_LOST"))
    afk = to_afk_error(record)
    assert afk == {
        "code": "AFK-PERC-003", "category": "user",
        "message": "Screen capture failed: Factorio is in exclusive fullscreen.",
        "cause": "OSError: DXGI_ERROR_ACCESS_LOST",
        "remedy": "Switch Factorio to borderless windowed mode in its display settings.",
        "recoverable": False,
        "context": {"session": "s1", "tick": 4021, "subgoal": "mine",
                    "target_window": "Factorio"},
    }


@pytest.mark.parametrize("category", [Category.USER, Category.TRANSIENT, Category.ENVIRONMENT,
                                      Category.DEFECT])
def test_afk_categories(category: Category) -> None:
    """Each of seed 003's four categories projects to its own value."""
    member = next(m for m in AFKCode if m.spec.category is category and not m.spec.retired)
    record = member.failure(surface="s", params=dict(member.spec.example_params))
    assert to_afk_error(record)["category"] == category.value


def test_task_failure_has_no_afk_form() -> None:
    """Projecting a task Failure to seed 003's form raises a clear error."""
    record = FC.BUILD_FAILED.failure(surface="cpp.build", params={"program": "gcc"})
    with pytest.raises(ProjectionError, match="category task, which AFKError cannot"):
        to_afk_error(record)


# -- WorkerResult status rules (seed 000 §7) -------------------------------------------------------

class _Arch(CodeEnum):
    """An architecture blocker code for the guard."""

    PLAN_IMPOSSIBLE = CodeSpec(
        code="TPJ-ARCH-001", slug="tpj-plan-impossible", kind=Kind.ARCHITECTURE_ERROR,
        category=Category.USER, error_class="interface_mismatch",
        message="The plan needs an interface that does not exist.",
        remedy="Redesign the plan.", impact="The task cannot be done as planned.",
        example="A plan calling a removed API.", since="0.1.0")


_ARCH_CATALOG = Catalog("TPJ", areas={"ARCH": "architecture"}, codes=_Arch)


@pytest.mark.parametrize("status", [Outcome.FAILED, "failed"])
def test_an_architecture_blocker_never_becomes_an_ordinary_failed_result(
        status: Outcome | str) -> None:
    """Projecting an architecture blocker as ``failed`` is refused."""
    failure = _Arch.PLAN_IMPOSSIBLE.failure(surface="plan.check")
    with pytest.raises(ProjectionError, match="never an ordinary failed result"):
        to_worker_result(failure, status)


def test_an_architecture_blocker_defaults_to_blocked() -> None:
    """Without a status, an architecture blocker is a blocked WorkerResult."""
    failure = _Arch.PLAN_IMPOSSIBLE.failure(surface="plan.check")
    assert to_worker_result(failure)["status"] == "blocked"


@pytest.mark.parametrize("signal", [None, 2])
def test_a_cancelled_outcome_is_a_cancelled_worker_result(signal: int | None) -> None:
    """A Cancelled outcome projects to status cancelled with its reason, not an error."""
    result = to_worker_result(Cancelled(reason="stopped by the user", signal=signal))
    assert result["status"] == "cancelled"
    assert result["reason"] == "stopped by the user"
    assert "error" not in result
    assert result.get("signal") == signal


def test_a_cancelled_outcome_cannot_be_given_another_status() -> None:
    """A cancellation is never reported as failed or blocked."""
    with pytest.raises(ProjectionError, match="cancelled WorkerResult"):
        to_worker_result(Cancelled(reason="stop"), Outcome.FAILED)
