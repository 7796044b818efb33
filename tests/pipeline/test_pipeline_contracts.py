"""failcode.pipeline contracts: AgentInput/AgentOutput/AgentError, the code table, dispositions."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from failcode import FC, Action, Category, Change, History, Kind, Policy, RetryClass, Severity
from failcode.pipeline import (
    AGENT_CODE_TABLE,
    AGENT_MESSAGE_CHARS,
    CONTRACT_VERSION,
    DISPOSITIONS,
    AgentError,
    AgentErrorCode,
    AgentInput,
    AgentOutput,
    agent_code_for,
    agent_error_from_failure,
    agent_error_to_failure,
    decide_agent_error,
)
from tests._records import record
from tests.conftest import DEEP_EXAMPLES

_A = AgentErrorCode


# -- construction -------------------------------------------------------------------------------

@pytest.mark.parametrize(("fields", "where"), [
    ({"task_goal": "", "context_id": "c"}, "task_goal"),
    ({"task_goal": "   ", "context_id": "c"}, "task_goal"),
    ({"task_goal": "g", "context_id": ""}, "context_id"),
    ({"task_goal": "g"}, "context_id"),
    ({"task_goal": "g", "context_id": "c", "colour": "red"}, "colour"),
    ({"task_goal": "g", "context_id": "c", "metadata": {"contract_version": "0.1"}},
     "metadata"),
    ({"task_goal": "g", "context_id": "c", "parameters": {"nested": {"a": 1}}}, "parameters"),
])
def test_agent_input_rejects_invalid_values(fields: dict[str, Any], where: str) -> None:
    """An AgentInput with an empty goal/context, an unknown field or a wrong version fails."""
    with pytest.raises(ValidationError) as info:
        AgentInput(**fields)
    assert where in str(info.value)


@pytest.mark.parametrize(("fields", "where"), [
    ({"text": "", "confidence": 0.5, "score": 0.5}, "text"),
    ({"text": "t", "confidence": -0.01, "score": 0.5}, "confidence"),
    ({"text": "t", "confidence": 1.01, "score": 0.5}, "confidence"),
    ({"text": "t", "confidence": 0.5, "score": 2}, "score"),
    ({"text": "t", "confidence": float("nan"), "score": 0.5}, "confidence"),
    ({"text": "t", "confidence": 0.5, "score": 0.5, "metadata": {}}, "contract_version"),
    ({"text": "t", "confidence": 0.5, "score": 0.5, "extra": 1}, "extra"),
])
def test_agent_output_rejects_invalid_values(fields: dict[str, Any], where: str) -> None:
    """An AgentOutput with empty text, a value outside [0, 1] or no version fails."""
    with pytest.raises(ValidationError) as info:
        AgentOutput(**fields)
    assert where in str(info.value)


def test_contracts_are_frozen() -> None:
    """Contracts cannot be changed after construction."""
    output = AgentOutput(text="t", confidence=0, score=1)
    with pytest.raises(ValidationError):
        output.text = "other"  # type: ignore[misc]


def test_outputs_carry_the_current_contract_version() -> None:
    """An output made without metadata carries the current contract version."""
    assert AgentOutput(text="t", confidence=1, score=0).metadata == {
        "contract_version": CONTRACT_VERSION}


@pytest.mark.parametrize(("code", "transient"), [
    (_A.TRANSIENT, False), (_A.VALIDATION_ERROR, True), (_A.FATAL, True), (_A.SECURITY, True),
])
def test_agent_error_flag_must_match_its_code(code: AgentErrorCode, transient: bool) -> None:
    """TRANSIENT is always transient; VALIDATION_ERROR, FATAL, SECURITY never are."""
    with pytest.raises(ValidationError, match="transient"):
        AgentError(code=code, message="m", transient=transient)


@pytest.mark.parametrize("fields", [
    {"code": "OOPS", "message": "m"}, {"code": "FATAL", "message": "  \n "},
    {"code": "FATAL", "message": "m", "retry": True},
])
def test_agent_error_rejects_invalid_values(fields: dict[str, Any]) -> None:
    """An unknown code, an empty message or an unknown field fails at construction."""
    with pytest.raises(ValidationError):
        AgentError(**fields)


def test_agent_error_redacts_its_message() -> None:
    """A secret in the message is redacted at construction, as in a Failure."""
    error = AgentError(code=_A.FATAL, message="key sk-proj-abcdefghijklmnopqrstuvwxyz012345")
    assert "abcdefghij" not in error.message


# -- round trips --------------------------------------------------------------------------------

agent_errors = st.builds(
    lambda code, message, detail, flag: AgentError(
        code=code, message=message, detail=detail,
        transient=True if code is _A.TRANSIENT else (flag if code is _A.TIMEOUT else False)),
    st.sampled_from(list(AgentErrorCode)),
    st.text(min_size=1, max_size=AGENT_MESSAGE_CHARS + 40).filter(lambda s: s.strip()),
    # blank and control-character-only text is what a fixed 100-example budget rarely draws
    st.none() | st.text(max_size=200) | st.text(alphabet=" \t\r\n\x0b\x0c\x1c\x85\u2028",
                                                 min_size=1, max_size=4),
    st.booleans())


def _as_recorded(error: AgentError) -> AgentError:
    """The error as a Failure keeps it: a NUL is U+FFFD in every record (the record layer's
    rule, so that every sink and store keeps it); everything else is unchanged."""
    return error.model_copy(update={
        "message": error.message.replace("\x00", "\ufffd"),
        "detail": None if error.detail is None else error.detail.replace("\x00", "\ufffd")})


def _round_trips(error: AgentError) -> None:
    failure = agent_error_to_failure(error)
    assert agent_error_from_failure(failure) == _as_recorded(error)
    assert agent_code_for(failure) == (error.code, error.transient)


@given(agent_errors)
@example(AgentError(code=AgentErrorCode.FATAL, message="x", detail="\r"))
@example(AgentError(code=AgentErrorCode.TIMEOUT, message="x", detail=" \n\t"))
@example(AgentError(code=AgentErrorCode.TIMEOUT, message="\x00", detail="a\x00b"))
def test_agent_error_failure_round_trip_is_lossless(error: AgentError) -> None:
    """AgentError -> Failure -> AgentError gives the same AgentError (NUL as U+FFFD)."""
    _round_trips(error)


@pytest.mark.deep
@settings(max_examples=DEEP_EXAMPLES, derandomize=False)
@given(agent_errors)
def test_agent_error_failure_round_trip_deep(error: AgentError) -> None:
    """The round trip holds over a large example budget (the ``deep`` CI job)."""
    _round_trips(error)


@given(agent_errors)
def test_agent_error_json_round_trip(error: AgentError) -> None:
    """An AgentError survives JSON."""
    assert AgentError.model_validate_json(error.model_dump_json()) == error


@given(agent_errors)
def test_agent_error_failure_survives_the_wire(error: AgentError) -> None:
    """The Failure of an AgentError decodes from JSON to the same AgentError."""
    from failcode import Failure

    failure = Failure.from_json(agent_error_to_failure(error).to_json())
    assert agent_error_from_failure(failure) == _as_recorded(error)


def test_failure_other_fields_come_from_the_code_spec() -> None:
    """Kind, category and severity of an AgentError's Failure come from its FC-LIFE code."""
    failure = agent_error_to_failure(AgentError(code=_A.FATAL, message="m"))
    assert (failure.code, failure.kind, failure.category, failure.severity) == (
        FC.LIFE_AGENT_FATAL.value, FC.LIFE_AGENT_FATAL.spec.kind,
        FC.LIFE_AGENT_FATAL.spec.category, Severity.FATAL)


# -- any Failure -> agent code ------------------------------------------------------------------

# Expected values written from seed 001's dispositions, not copied from the table.
MAPPED: list[tuple[str, Any, bool, AgentErrorCode, bool]] = [
    ("provider timeout", FC.PROV_TIMEOUT.failure(surface="llm", params={"provider": "X"}),
     False, _A.TIMEOUT, True),
    ("rate limit", FC.PROV_RATE_LIMIT.failure(surface="llm", params={"provider": "X"}), False,
     _A.TRANSIENT, True),
    ("overloaded", FC.PROV_OVERLOADED.failure(surface="llm", params={"provider": "X"}), False,
     _A.TRANSIENT, True),
    ("invalid input", FC.DATA_INVALID_INPUT.failure(surface="cli", params={"problem": "p"}),
     False, _A.VALIDATION_ERROR, False),
    ("a user-category failure", FC.PROV_QUOTA.failure(surface="llm", params={"provider": "X"}),
     False, _A.VALIDATION_ERROR, False),
    ("bad config: fatal at load", FC.CFG_INVALID_VALUE.failure(surface="cfg", params={
        "file": "f.toml", "line": 1, "key": "k", "value": "v", "expected": "e"}),
     False, _A.FATAL, False),
    ("unclassified", FC.SYS_UNKNOWN.failure(surface="s", params={"exception": "E"}), False,
     _A.FATAL, False),
    ("disk full", FC.OS_DISK_FULL.failure(surface="fs"), False, _A.FATAL, False),
    ("a fatal severity", FC.BUILD_FAILED.failure(surface="b", params={"program": "gcc"},
                                                 severity=Severity.FATAL),
     False, _A.FATAL, False),
    ("a policy refusal, security not critical",
     record("XX-POL-001", Kind.POLICY_ERROR, Category.USER, "forbidden_path"), False,
     _A.VALIDATION_ERROR, False),
    ("a policy refusal, security critical",
     record("XX-POL-001", Kind.POLICY_ERROR, Category.USER, "forbidden_path"), True,
     _A.SECURITY, False),
    ("a build failure: change the approach",
     FC.BUILD_FAILED.failure(surface="b", params={"program": "gcc"}), False,
     _A.VALIDATION_ERROR, False),
    ("a defect", FC.PROV_BAD_REQUEST.failure(surface="llm", params={"provider": "X"}), False,
     _A.FATAL, False),
]


@pytest.mark.parametrize(("name", "failure", "critical", "code", "transient"), MAPPED,
                         ids=[row[0] for row in MAPPED])
def test_any_failure_maps_to_an_agent_code(name: str, failure: Any, critical: bool,
                                           code: AgentErrorCode, transient: bool) -> None:
    """The table maps a Failure to the seed's agent code and transient flag."""
    del name
    assert agent_code_for(failure, critical_security=critical) == (code, transient)
    error = agent_error_from_failure(failure, critical_security=critical)
    assert (error.code, error.transient) == (code, transient)


@pytest.mark.parametrize("spec", list(FC), ids=[fc.value for fc in FC])
def test_every_fc_code_maps_to_a_valid_agent_error(spec: FC) -> None:
    """Every code of the catalog gives a constructible AgentError (the table is total)."""
    failure = spec.failure(surface="s", params=dict.fromkeys(_fields(spec), "x"))
    error = agent_error_from_failure(failure)
    assert error.code in AgentErrorCode


def _fields(spec: FC) -> list[str]:
    from failcode.codes._registry import template_fields

    names = list(template_fields(spec.spec.message))
    if spec.spec.remedy:
        names += list(template_fields(spec.spec.remedy))
    return names


def test_code_table_ends_with_a_catch_all() -> None:
    """The last row of AGENT_CODE_TABLE has no key, so every Failure maps."""
    last = AGENT_CODE_TABLE[-1]
    assert last[3:] == (None,) * (len(last) - 3)


# -- dispositions through decide ----------------------------------------------------------------

POLICY = Policy(classes={"default": RetryClass(max_attempts=3, initial_delay_s=0.5)})


def _rand() -> Any:
    return random.Random(1).random


def test_every_code_has_a_disposition() -> None:
    """DISPOSITIONS names each code's normal disposition."""
    assert set(DISPOSITIONS) == set(AgentErrorCode)


def test_transient_is_retried_with_the_configured_delay() -> None:
    """TRANSIENT -> retry, with a delay within the configured backoff."""
    decision = decide_agent_error(AgentError(code=_A.TRANSIENT, message="m"), History(), POLICY,
                                  rand=_rand())
    assert decision.action is Action.RETRY
    assert 0 <= decision.delay_s <= 0.5


def test_timeout_is_retried_only_while_policy_allows() -> None:
    """A transient TIMEOUT is retried until the policy's attempts run out, then no more."""
    error = AgentError(code=_A.TIMEOUT, message="slow")
    failure = agent_error_to_failure(error)
    history = History()
    actions = []
    for _ in range(3):
        decision = decide_agent_error(error, history, POLICY, rand=_rand())
        actions.append(decision.action)
        history = history.after(failure)
    assert actions[:2] == [Action.RETRY, Action.RETRY]
    assert actions[2] is not Action.RETRY


def test_non_transient_timeout_is_not_retried() -> None:
    """A TIMEOUT flagged non-transient is not retried."""
    error = AgentError(code=_A.TIMEOUT, message="slow", transient=False)
    assert decide_agent_error(error, History(), POLICY).action is not Action.RETRY


def test_validation_error_is_never_retried_unchanged() -> None:
    """VALIDATION_ERROR is retried only after a recorded change."""
    error = AgentError(code=_A.VALIDATION_ERROR, message="bad score")
    assert decide_agent_error(error, History(), POLICY).action is not Action.RETRY
    changed = History().changed(Change.CONTEXT)
    assert decide_agent_error(error, changed, POLICY).action is Action.RETRY


@pytest.mark.parametrize("code", [_A.FATAL, _A.SECURITY])
def test_fatal_and_security_abort(code: AgentErrorCode) -> None:
    """FATAL and SECURITY abort the run."""
    decision = decide_agent_error(AgentError(code=code, message="m"), History(), POLICY)
    assert decision.action is Action.ABORT
