"""failcode.pipeline traces: one fixture per rejection reason, runs, Hypothesis round trips."""

from __future__ import annotations

import json
import pickle
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from failcode import FailureError, Policy, RetryClass
from failcode.pipeline import (
    AgentError,
    AgentErrorCode,
    AgentFailure,
    AgentInput,
    AgentOutput,
    FailureClass,
    InconsistentFinalError,
    InvalidOrderingError,
    InvalidTransitionError,
    MissingPhaseError,
    MissingReplayFieldError,
    NonZeroTemperatureError,
    Phase,
    PipelineRun,
    PipelineStopped,
    StopReason,
    Trace,
    TraceRejection,
    TraceSchemaError,
    TraceValidationError,
    UnknownTraceVersionError,
    Verdict,
    load_trace,
    load_trace_file,
)
from tests._paths import TESTS

if TYPE_CHECKING:
    from pathlib import Path

FIXTURES = TESTS / "fixtures" / "pipeline_traces"

# One fixture per rejection reason: (file, exception type, error class, words of the message).
REJECTIONS: list[tuple[str, type[TraceValidationError], str, str]] = [
    ("unknown_version", UnknownTraceVersionError, "unknown_version", "trace_version 2"),
    ("malformed", TraceSchemaError, "malformed", "nap"),
    ("missing_replay_field", MissingReplayFieldError, "missing_replay_field", "input_digest"),
    ("nonzero_temperature", NonZeroTemperatureError, "nonzero_temperature", "temperature 0.7"),
    ("missing_phase", MissingPhaseError, "missing_phase", "plan between init and execute"),
    ("invalid_ordering", InvalidOrderingError, "invalid_ordering", "plan cannot follow execute"),
    ("event_outside_phase", InvalidOrderingError, "invalid_ordering",
     "says phase judge but the run was in plan"),
    ("inconsistent_final", InconsistentFinalError, "inconsistent_final", "success=True"),
]


@pytest.mark.parametrize(("name", "error", "error_class", "words"), REJECTIONS,
                         ids=[r[0] for r in REJECTIONS])
def test_each_rejection_has_its_type_class_and_message(
        name: str, error: type[TraceValidationError], error_class: str, words: str) -> None:
    """Each fixture is rejected with its own exception type, FC-LIFE-007 class and message."""
    path = FIXTURES / f"{name}.json"
    with pytest.raises(error) as info:
        load_trace_file(path)
    failure = info.value.failure
    assert (failure.code, failure.error_class) == ("FC-LIFE-007", error_class)
    assert words in str(info.value)
    assert path.name in str(info.value)


def test_every_rejection_reason_has_a_fixture() -> None:
    """The fixtures cover every TraceRejection."""
    assert {r[2] for r in REJECTIONS} == {r.value for r in TraceRejection}


def test_valid_fixture_loads() -> None:
    """The unmutated fixture, written by the demo, validates."""
    trace = load_trace_file(FIXTURES / "valid.json")
    assert trace.final.stop_reason is StopReason.FATAL_FAILURE


def test_missing_trace_file_is_a_missing_replay_trace(tmp_path: Path) -> None:
    """A missing trace path raises FC-LIFE-008 (class replay_trace_missing)."""
    with pytest.raises(FailureError) as info:
        load_trace_file(tmp_path / "nope.json")
    assert info.value.failure.error_class == "replay_trace_missing"


@pytest.mark.parametrize(("text", "error"), [
    ("{not json", TraceSchemaError), ("[1, 2]", TraceSchemaError),
    ('{"events": []}', UnknownTraceVersionError),
    ('{"trace_version": true}', UnknownTraceVersionError),
    ('{"trace_version": "1"}', UnknownTraceVersionError),
])
def test_bad_documents_are_rejected_clearly(text: str, error: type[Exception]) -> None:
    """Non-JSON, non-objects and missing or odd versions are each rejected with their type."""
    with pytest.raises(error):
        load_trace(text)


def test_seedless_call_needs_no_seed_when_not_replayable() -> None:
    """A model call that claims no replay may lack a seed (the key must still be present)."""
    data = json.loads((FIXTURES / "valid.json").read_text())
    data["events"][2].update(seed=None, replayable=False, temperature=0.9)
    assert load_trace(data).run_id == data["run_id"]
    data["events"][2]["replayable"] = True
    with pytest.raises(MissingReplayFieldError, match="seed"):
        load_trace(data)


def test_rejections_pickle() -> None:
    """A rejection survives pickling with its type."""
    error = NonZeroTemperatureError("event 3: temperature 0.5", source="t.json")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is NonZeroTemperatureError
    assert str(copy) == str(error)


# -- runs -------------------------------------------------------------------------------------

FAST = Policy(classes={"default": RetryClass(max_attempts=3, initial_delay_s=0.5)})
TASK = AgentInput(task_goal="g", context_id="c")
MODEL: dict[str, Any] = {"provider": "local", "model": "m", "seed": 1}


def _ok(_task: AgentInput) -> AgentOutput:
    return AgentOutput(text="t", confidence=0.9, score=0.9)


def _run(**kwargs: Any) -> tuple[PipelineRun, list[float]]:
    slept: list[float] = []
    return PipelineRun("r", policy=FAST, sleep=slept.append, **kwargs), slept


def _through_verify(run: PipelineRun) -> None:
    run.enter(Phase.PLAN)
    run.call(_ok, TASK, name="planner", **MODEL)
    run.enter(Phase.EXECUTE)
    run.call(_ok, TASK, name="executor", **MODEL)
    run.enter(Phase.JUDGE)
    run.record_decision(Verdict.PASS, by="judge", reason="fine")
    run.enter(Phase.VERIFY)


def test_passing_run_succeeds_and_its_trace_validates() -> None:
    """A run with a pass at VERIFY ends DONE with success; its JSON trace reloads equal."""
    run, _ = _run()
    _through_verify(run)
    run.record_decision(Verdict.PASS, by="verifier", reason="checked")
    status = run.finish()
    assert (status.success, status.phase) == (True, "done")
    trace = run.trace()
    assert load_trace(trace.to_json()) == trace
    assert trace.phases == ["init", "plan", "execute", "judge", "verify", "finalize", "done"]


def test_veto_never_becomes_success() -> None:
    """Every call returned normally, yet a veto at VERIFY ends the run vetoed, not done."""
    run, _ = _run()
    _through_verify(run)
    run.record_decision(Verdict.VETO, by="verifier", reason="wrong answer")
    status = run.finish()
    assert not status.success
    assert status.stop_reason is StopReason.VERIFICATION_VETO
    assert status.replayable
    trace = run.trace()
    assert trace.final == status
    assert [e.type for e in trace.events][-2:] == ["failure", "phase"]


def test_transient_error_is_retried_then_succeeds() -> None:
    """A transient AgentError with budget left is retried after the decided delay."""
    calls: list[int] = []

    def flaky(task: AgentInput) -> AgentOutput:
        calls.append(1)
        if len(calls) == 1:
            raise AgentFailure(AgentError(code=AgentErrorCode.TRANSIENT, message="blip"))
        return _ok(task)

    run, slept = _run()
    run.enter(Phase.PLAN)
    assert run.call(flaky, TASK, name="planner", **MODEL).text == "t"
    assert len(calls) == 2
    assert len(slept) == 1
    assert 0 <= slept[0] <= 0.5
    kinds = [e.type for e in run.events]
    assert kinds == ["phase", "phase", "model_call", "agent_error", "model_call"]


@pytest.mark.parametrize(("code", "cls", "replayable"), [
    (AgentErrorCode.TRANSIENT, FailureClass.EXECUTION_ERROR, False),
    (AgentErrorCode.FATAL, FailureClass.FATAL_FAILURE, False),
    (AgentErrorCode.VALIDATION_ERROR, FailureClass.VALIDATION_ERROR, True),
])
def test_unretried_error_becomes_an_artifact_whose_profile_decides_replay(
        code: AgentErrorCode, cls: FailureClass, replayable: bool) -> None:
    """An error not (or no longer) retried becomes an artifact; its profile says whether the
    trace is kept as replayable evidence or the run aborts without a replay claim."""

    def failing(_task: AgentInput) -> AgentError:
        return AgentError(code=code, message="broken")

    run, _ = _run()
    run.enter(Phase.PLAN)
    with pytest.raises(PipelineStopped) as info:
        run.call(failing, TASK, name="planner", **MODEL)
    status = info.value.status
    assert (status.failure_class, status.replayable, status.phase) == (cls, replayable,
                                                                       "aborted")
    run.trace()  # validates


def test_retries_end_when_policy_says_so() -> None:
    """A transient error that keeps failing is retried max_attempts - 1 times, then stops."""
    run, slept = _run()
    run.enter(Phase.PLAN)

    def always(_task: AgentInput) -> AgentError:
        return AgentError(code=AgentErrorCode.TRANSIENT, message="down")

    with pytest.raises(PipelineStopped):
        run.call(always, TASK, name="planner", **MODEL)
    assert len(slept) == 2
    assert run.final is not None
    assert run.final.failure_class is FailureClass.EXECUTION_ERROR


def test_max_iterations_stops_the_run() -> None:
    """A loop-back beyond max_iterations stops with max_iterations (replayable)."""
    run, _ = _run(max_iterations=0)
    _through_verify(run)
    with pytest.raises(PipelineStopped) as info:
        run.enter(Phase.PLAN)
    assert info.value.status.stop_reason is StopReason.MAX_ITERATIONS
    run.trace()


def test_call_budget_stops_the_run() -> None:
    """A model call beyond max_model_calls stops with budget_exhausted."""
    run, _ = _run(max_model_calls=1)
    run.enter(Phase.PLAN)
    run.call(_ok, TASK, name="planner", **MODEL)
    with pytest.raises(PipelineStopped) as info:
        run.call(_ok, TASK, name="planner", **MODEL)
    assert info.value.status.stop_reason is StopReason.BUDGET_EXHAUSTED
    run.trace()


def test_user_interruption_stops_the_run() -> None:
    """KeyboardInterrupt in an agent stops the run with user_interruption."""

    def interrupted(_task: AgentInput) -> AgentOutput:
        raise KeyboardInterrupt

    run, _ = _run()
    run.enter(Phase.PLAN)
    with pytest.raises(PipelineStopped) as info:
        run.call(interrupted, TASK, name="planner", **MODEL)
    assert info.value.status.stop_reason is StopReason.USER_INTERRUPTION
    assert info.value.status.outcome == "cancelled"


def test_convergence_is_recorded_without_a_failure_class() -> None:
    """A convergence stop ends the run non-success with no artifact."""
    run, _ = _run()
    _through_verify(run)
    status = run.stop(StopReason.CONVERGENCE, "the answers stopped changing")
    assert (status.success, status.failure_class) == (False, None)
    assert "failure" not in [e.type for e in run.trace().events]


def test_unexpected_exception_is_classified_into_an_agent_error() -> None:
    """A plain exception from an agent becomes a typed AgentError and stops the run."""

    def crashing(_task: AgentInput) -> AgentOutput:
        raise ZeroDivisionError

    run, _ = _run()
    run.enter(Phase.PLAN)
    with pytest.raises(PipelineStopped):
        run.call(crashing, TASK, name="planner", **MODEL)
    errors = [e for e in run.events if e.type == "agent_error"]
    assert errors
    assert errors[-1].error.code in AgentErrorCode  # type: ignore[union-attr]


def test_security_declared_critical_aborts() -> None:
    """With security critical, a policy refusal aborts the run as SECURITY (fatal)."""

    def refused(_task: AgentInput) -> AgentError:
        return AgentError(code=AgentErrorCode.SECURITY, message="forbidden path")

    run, _ = _run(critical_security=True)
    run.enter(Phase.PLAN)
    with pytest.raises(PipelineStopped) as info:
        run.call(refused, TASK, name="planner", **MODEL)
    assert info.value.status.failure_class is FailureClass.FATAL_FAILURE
    assert not info.value.status.replayable


def test_finish_never_skips_a_deciding_phase() -> None:
    """finish() from PLAN or JUDGE is refused: it would skip VERIFY."""
    run, _ = _run()
    run.enter(Phase.PLAN)
    with pytest.raises(InvalidTransitionError):
        run.finish()
    assert run.final is None


def test_temperature_above_zero_is_not_claimed_replayable() -> None:
    """A call at temperature 0.7 is recorded as not replayable, so its trace validates."""
    run, _ = _run()
    run.enter(Phase.PLAN)
    run.call(_ok, TASK, name="planner", provider="p", model="m", temperature=0.7, seed=3)
    run.stop(StopReason.CONVERGENCE, "done early")
    calls = [e for e in run.trace().events if e.type == "model_call"]
    assert calls[0].replayable is False  # type: ignore[union-attr]


# -- Hypothesis: traces round-trip ---------------------------------------------------------------

steps = st.lists(st.sampled_from(["ok", "transient", "veto", "pass", "loop"]), max_size=8)
endings = st.sampled_from(["finish", "convergence", "fatal", "interrupt"])


def _scripted_run(script: list[str], ending: str) -> Trace:
    """A run driven by ``script``; every step is legal in the phase it happens in."""
    run, _ = _run(max_iterations=10)
    run.enter(Phase.PLAN)
    run.enter(Phase.EXECUTE)
    try:
        for step in script:
            if step in ("ok", "transient"):
                state = {"first": step == "transient"}

                def agent(task: AgentInput, state: dict[str, bool] = state) -> AgentOutput:
                    if state["first"]:
                        state["first"] = False
                        raise AgentFailure(AgentError(code="TRANSIENT", message="blip"))
                    return _ok(task)

                if run.phase != Phase.EXECUTE:
                    run.enter(Phase.EXECUTE)
                run.call(agent, TASK, name="executor", **MODEL)
            elif step in ("veto", "pass"):
                if run.phase == Phase.EXECUTE:
                    run.enter(Phase.JUDGE)
                if run.phase not in (Phase.JUDGE, Phase.VERIFY):
                    continue
                run.record_decision(step, by=run.phase, reason="scripted")
            elif run.phase in (Phase.JUDGE, Phase.VERIFY):
                run.enter(Phase.EXECUTE)
        if ending == "finish":
            for phase in (Phase.JUDGE, Phase.VERIFY):
                if run.phase != phase and run.controller.can(phase):
                    run.enter(phase)
            run.finish()
        elif ending == "fatal":
            run.stop(StopReason.FATAL_FAILURE, "scripted abort")
        elif ending == "interrupt":
            run.stop(StopReason.USER_INTERRUPTION, "scripted interrupt")
        else:
            run.stop(StopReason.CONVERGENCE, "scripted convergence")
    except PipelineStopped:
        pass
    return run.trace()


@settings(max_examples=60)
@given(steps, endings)
def test_trace_json_round_trip(script: list[str], ending: str) -> None:
    """Any recorded trace survives JSON and validates again; a vetoed run is never success."""
    trace = _scripted_run(script, ending)
    assert load_trace(trace.to_json()) == trace
    decisions = [e for e in trace.events if e.type == "decision"]
    if decisions and decisions[-1].verdict is Verdict.VETO:  # type: ignore[union-attr]
        assert not trace.final.success
