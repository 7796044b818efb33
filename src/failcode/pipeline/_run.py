"""PipelineRun: drives the lifecycle, agent calls, retries, decisions and stops, and records
the trace.

The agent-level transient flag and the pipeline-level profile stay apart (the pipeline
model's second diagram): a transient AgentError with retry budget left is retried (the delay from
:func:`failcode.decide`); otherwise it becomes a :class:`FailureArtifact`, whose class profile
decides between retaining the trace as replayable stop evidence and aborting without a replay
claim. Either way the run ends in a non-success terminal status.
"""

from __future__ import annotations

import itertools
import random
import time
from typing import TYPE_CHECKING, Any, NoReturn

from pydantic import ValidationError

from failcode.boundary import OutcomeError
from failcode.pipeline._artifacts import (
    FAILURE_PROFILES,
    DetectionMode,
    FailureArtifact,
    FailureClass,
    FinalStatus,
    StopReason,
    Verdict,
)
from failcode.pipeline._contracts import (
    CONTRACT_VERSION,
    AgentError,
    AgentErrorCode,
    AgentFailure,
    AgentInput,
    AgentOutput,
    agent_error_from_failure,
    agent_error_to_failure,
    decide_agent_error,
)
from failcode.pipeline._lifecycle import (
    CANONICAL_GRAPH,
    InvalidTransitionError,
    LifecycleController,
    PhaseGraph,
)
from failcode.pipeline._trace import (
    AgentErrorEvent,
    DecisionEvent,
    FailureEvent,
    ModelCallEvent,
    PhaseEvent,
    Trace,
    input_digest,
    validate_trace,
)
from failcode.policy._decide import DEFAULT_POLICY, Action, Budget, History, Policy

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from failcode import Decision
    from failcode.events import Sink
    from failcode.pipeline._trace import TraceEvent

__all__ = ["ARTIFACT_CLASS", "PipelineRun", "PipelineStopped", "RunFinishedError"]

ARTIFACT_CLASS: dict[AgentErrorCode, FailureClass] = {
    AgentErrorCode.TIMEOUT: FailureClass.EXECUTION_ERROR,
    AgentErrorCode.TRANSIENT: FailureClass.EXECUTION_ERROR,
    AgentErrorCode.VALIDATION_ERROR: FailureClass.VALIDATION_ERROR,
    AgentErrorCode.FATAL: FailureClass.FATAL_FAILURE,
    AgentErrorCode.SECURITY: FailureClass.FATAL_FAILURE,
}
"""The artifact class an AgentError becomes when it is not (or no longer) retried."""

_STOP_CLASS: dict[StopReason, FailureClass | None] = {
    StopReason.MAX_ITERATIONS: FailureClass.MAX_ITERATIONS,
    StopReason.BUDGET_EXHAUSTED: FailureClass.BUDGET_EXCEEDED,
    StopReason.USER_INTERRUPTION: FailureClass.USER_INTERRUPTION,
    StopReason.CONVERGENCE: None,
    StopReason.VERIFICATION_VETO: FailureClass.VERIFICATION_VETO,
    StopReason.FATAL_FAILURE: FailureClass.FATAL_FAILURE,
}
_DETECTION: dict[StopReason, DetectionMode] = {
    StopReason.MAX_ITERATIONS: DetectionMode.LIMIT,
    StopReason.BUDGET_EXHAUSTED: DetectionMode.LIMIT,
    StopReason.USER_INTERRUPTION: DetectionMode.SIGNAL,
    StopReason.VERIFICATION_VETO: DetectionMode.VERIFICATION,
    StopReason.FATAL_FAILURE: DetectionMode.EXCEPTION,
}


class PipelineStopped(OutcomeError):  # noqa: N818 - an outcome (a veto, a stop), not an error
    """The run ended without success; :attr:`status` says how.

    It is an :class:`~failcode.boundary.OutcomeError`, so a CLI or HTTP boundary reports its
    row (a veto: exit 1, HTTP 422 VERIFICATION_VETO; never success).
    """

    def __init__(self, status: FinalStatus) -> None:
        super().__init__(status.outcome, status.message)
        self.status = status


class RunFinishedError(RuntimeError):
    """The run already reached a terminal phase; nothing more can be recorded."""


class PipelineRun:
    """One pipeline run: the lifecycle controller plus the trace it records.

    Args:
        run_id: the run's identifier (in the trace).
        graph: the phase graph (default: the canonical one).
        max_iterations: the most loop-backs (JUDGE/VERIFY -> PLAN/EXECUTE) allowed; one more
            stops the run with ``max_iterations``.
        max_model_calls: the call budget; a call beyond it stops the run with
            ``budget_exhausted`` (None: unbounded).
        policy: the retry policy :func:`failcode.decide` applies to agent errors.
        budget: the session's retry budget (None: a full one).
        operation: the retry class of agent calls in ``policy``.
        critical_security: whether security is declared critical at the graph boundary
            (policy refusals from agent calls then abort as SECURITY).
        sleep: how to wait before a retry; injectable so tests never really sleep.
        clock: the monotonic clock, for deadlines.
        rand: a float in [0, 1) per call, for the backoff's jitter (seeded: reproducible).
        sink: a :class:`failcode.events.Sink` (a store, a JSONL file) that receives every agent
            error as an ``agent.failed`` event with its decision, a veto as ``task.vetoed``, a
            user interruption as ``task.cancelled`` and a failed stop as ``task.failed``; the
            run id is the events' session.
    """

    def __init__(
        self,
        run_id: str,
        *,
        graph: PhaseGraph = CANONICAL_GRAPH,
        max_iterations: int = 3,
        max_model_calls: int | None = None,
        policy: Policy = DEFAULT_POLICY,
        budget: Budget | None = None,
        operation: str = "default",
        critical_security: bool = False,
        sleep: Callable[[float], object] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rand: Callable[[], float] = random.random,
        sink: Sink | None = None,
    ) -> None:
        if max_iterations < 0:
            msg = f"max_iterations must be >= 0, got {max_iterations}"
            raise ValueError(msg)
        self.run_id = run_id
        self.controller = LifecycleController(graph)
        self.max_iterations = max_iterations
        self.max_model_calls = max_model_calls
        self.policy = policy
        self.budget = budget if budget is not None else Budget.full(policy)
        self.operation = operation
        self.critical_security = critical_security
        self._sleep, self._clock, self._rand = sleep, clock, rand
        self.events: list[TraceEvent] = [PhaseEvent(phase=graph.start)]
        self.model_calls = 0
        self.final: FinalStatus | None = None
        self.sink = sink

    # -- state ----------------------------------------------------------------------------
    @property
    def phase(self) -> str:
        """The current phase."""
        return self.controller.phase

    def _open(self) -> None:
        if self.final is not None:
            msg = f"run {self.run_id} already ended in {self.final.phase}"
            raise RunFinishedError(msg)

    def enter(self, phase: str) -> None:
        """Enter ``phase``; a loop-back beyond ``max_iterations`` stops the run.

        Raises:
            InvalidTransitionError: the graph does not allow it (nothing is recorded).
            PipelineStopped: the loop-back exceeded ``max_iterations``.
        """
        self._open()
        graph = self.controller.graph
        if (graph.is_back_edge(self.phase, str(phase))
                and self.controller.iteration >= self.max_iterations):
            self._raise_stop(StopReason.MAX_ITERATIONS,
                             f"another iteration would exceed {self.max_iterations}")
        self.controller.advance(phase)
        self.events.append(PhaseEvent(phase=str(phase), iteration=self.controller.iteration))

    # -- agent calls ----------------------------------------------------------------------
    def call(
        self,
        agent: Callable[[AgentInput], AgentOutput | AgentError],
        agent_input: AgentInput,
        *,
        name: str,
        provider: str,
        model: str,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> AgentOutput:
        """Call an agent, recording each attempt with its replay fields; retry transient errors.

        ``agent`` returns an AgentOutput, or returns or raises (:class:`AgentFailure`) an
        AgentError; a pydantic ValidationError becomes VALIDATION_ERROR, KeyboardInterrupt a
        user interruption, and any other exception is classified by :func:`failcode.classify`
        and mapped to an agent code. A call is recorded as replayable when its temperature is
        0 and it has a seed.

        Returns:
            The agent's output.

        Raises:
            PipelineStopped: the error was not retried (or the call budget is spent): its
                artifact is recorded and the run has ended.
        """
        self._open()
        digest = input_digest(agent_input)
        history = History(operation=self.operation, started_at=self._clock())
        attempt = 0
        while True:
            attempt += 1
            if self.max_model_calls is not None and self.model_calls >= self.max_model_calls:
                self._raise_stop(StopReason.BUDGET_EXHAUSTED,
                                 f"the budget of {self.max_model_calls} model calls is spent")
            self.model_calls += 1
            self.events.append(ModelCallEvent(
                phase=self.phase, agent=name, attempt=attempt, provider=provider, model=model,
                temperature=temperature, seed=seed, contract_version=CONTRACT_VERSION,
                input_digest=digest, replayable=temperature == 0 and seed is not None))
            result = self._invoke(agent, agent_input)
            if isinstance(result, AgentOutput):
                self.budget = self.budget.refunded(self.policy)
                return result
            decision = decide_agent_error(result, history, self.policy, self.budget,
                                          self._clock, self._rand)
            self.budget = decision.budget
            self._emit_failure("agent.failed", result, decision)
            if result.transient and decision.action is Action.RETRY:
                self.events.append(AgentErrorEvent(
                    phase=self.phase, agent=name, attempt=attempt, error=result,
                    action="retry", delay_s=decision.delay_s))
                history = history.after(agent_error_to_failure(result))
                self._sleep(decision.delay_s)
                continue
            self.events.append(AgentErrorEvent(phase=self.phase, agent=name, attempt=attempt,
                                               error=result, action="artifact"))
            failure_class = ARTIFACT_CLASS[result.code]
            artifact = FailureArtifact(
                failure_class=failure_class, detection=DetectionMode.AGENT_ERROR,
                message=result.message, phase=self.phase,
                recoverable=result.transient and FAILURE_PROFILES[failure_class].retryable,
                agent_error=result)
            self._raise_stop(StopReason.FATAL_FAILURE, result.message, artifact)

    def _invoke(self, agent: Callable[[AgentInput], AgentOutput | AgentError],
                agent_input: AgentInput) -> AgentOutput | AgentError:
        try:
            result: Any = agent(agent_input)
        except AgentFailure as failure:
            return failure.error
        except ValidationError as exc:
            return AgentError(code=AgentErrorCode.VALIDATION_ERROR,
                              message=f"contract violated: {exc.errors()[0].get('msg')}")
        except KeyboardInterrupt:
            self._raise_stop(StopReason.USER_INTERRUPTION, "the user interrupted the run")
        except Exception as exc:  # noqa: BLE001 - every failure becomes a typed AgentError
            from failcode.classification._classify import classify  # noqa: PLC0415 - only on this path
            from failcode.record._failure import Failure  # noqa: PLC0415 - idem

            classified = classify(exc, surface="agent.call")
            if isinstance(classified, Failure):
                return agent_error_from_failure(classified,
                                                critical_security=self.critical_security)
            self._raise_stop(StopReason.USER_INTERRUPTION, "the agent call was cancelled")
        if isinstance(result, (AgentOutput, AgentError)):
            return result
        return AgentError(code=AgentErrorCode.VALIDATION_ERROR,
                          message=f"the agent returned {type(result).__name__}, "
                                  f"not an AgentOutput")

    # -- decisions and stops --------------------------------------------------------------
    def record_decision(self, verdict: Verdict | str, *, by: str, reason: str) -> None:
        """Record a pass or veto in the current phase (a veto is never turned into success:
        :meth:`finish` after it stops the run with ``verification_veto``)."""
        self._open()
        self.events.append(DecisionEvent(phase=self.phase, verdict=Verdict(verdict), by=by,
                                         reason=reason))
        if self.sink is not None and Verdict(verdict) is Verdict.VETO:
            from failcode import Veto  # noqa: PLC0415 - only when events are recorded
            from failcode.events import outcome_event  # noqa: PLC0415 - idem

            self.sink.emit(outcome_event(Veto(reason=reason, by=by), session=self.run_id,
                                         source="pipeline"))

    def stop(self, reason: StopReason | str, message: str,
             artifact: FailureArtifact | None = None) -> FinalStatus:
        """End the run without success: record the artifact, enter the abort phase.

        Args:
            reason: the stop reason.
            message: why.
            artifact: the failure artifact; by default one of the reason's class (none for
                ``convergence``), detected in the current phase.

        Returns:
            The final status (replayable per the artifact's profile).
        """
        self._open()
        stop_reason = StopReason(reason)
        failure_class = _STOP_CLASS[stop_reason]
        if artifact is None and failure_class is not None:
            artifact = FailureArtifact(failure_class=failure_class,
                                       detection=_DETECTION[stop_reason], message=message,
                                       phase=self.phase)
        if artifact is not None:
            self.events.append(FailureEvent(artifact=artifact))
        if stop_reason is StopReason.USER_INTERRUPTION and self.sink is not None:
            from failcode import Cancelled  # noqa: PLC0415 - only when events are recorded
            from failcode.events import outcome_event  # noqa: PLC0415 - idem

            self.sink.emit(outcome_event(Cancelled(reason=message), session=self.run_id,
                                         source="pipeline"))
        elif artifact is not None and artifact.agent_error is not None:
            self._emit_failure("task.failed", artifact.agent_error, None)
        abort = self.controller.graph.abort
        self.controller.advance(abort)
        self.events.append(PhaseEvent(phase=abort, iteration=self.controller.iteration))
        self.final = FinalStatus(
            success=False, phase=abort, stop_reason=stop_reason,
            failure_class=None if artifact is None else artifact.failure_class,
            replayable=True if artifact is None else artifact.replayable, message=message)
        return self.final

    def _emit_failure(self, name: str, error: AgentError, decision: Decision | None) -> None:
        if self.sink is None:
            return
        from failcode.events import failure_event  # noqa: PLC0415 - only when recording

        self.sink.emit(failure_event(agent_error_to_failure(error), event=name,
                                     session=self.run_id, source="pipeline",
                                     decision=decision))

    def _raise_stop(self, reason: StopReason, message: str,
                    artifact: FailureArtifact | None = None) -> NoReturn:
        raise PipelineStopped(self.stop(reason, message, artifact))

    def finish(self) -> FinalStatus:
        """End the run with success, unless the last decision is a veto: then the run stops
        with ``verification_veto`` instead (a veto never becomes success).

        From the current phase the run walks to the success phase (VERIFY -> FINALIZE -> DONE
        in the canonical graph); every phase after the first step must have a single way
        forward, so ``finish()`` never skips a phase that decides (JUDGE, VERIFY).

        Raises:
            InvalidTransitionError: the way to success passes a phase with a choice (e.g.
                ``finish()`` from PLAN or JUDGE); nothing is recorded.
        """
        self._open()
        decisions = [e for e in self.events if isinstance(e, DecisionEvent)]
        if decisions and decisions[-1].verdict is Verdict.VETO:
            return self.stop(StopReason.VERIFICATION_VETO, decisions[-1].reason)
        graph = self.controller.graph
        path = graph.reachable(self.phase).get(graph.success)
        steps = [*path, graph.success] if path is not None else [graph.success]
        for before, after in itertools.pairwise(steps):
            if graph.successors(before) - {graph.abort} != {after}:
                raise InvalidTransitionError(self.phase, graph.success, graph.name)
        if path is None:
            raise InvalidTransitionError(self.phase, graph.success, graph.name)
        for step in steps:
            self.enter(step)
        self.final = FinalStatus(success=True, phase=graph.success)
        return self.final

    # -- the trace ------------------------------------------------------------------------
    def trace(self) -> Trace:
        """The validated trace of the ended run.

        Raises:
            RunFinishedError: the run has not ended yet.
        """
        if self.final is None:
            msg = f"run {self.run_id} has not ended; call finish() or stop() first"
            raise RunFinishedError(msg)
        return validate_trace(Trace(run_id=self.run_id, graph=self.controller.graph,
                                    events=tuple(self.events), final=self.final))

    def write_trace(self, path: str | Path) -> Trace:
        """Write the validated trace as JSON to ``path`` and return it."""
        from pathlib import Path  # noqa: PLC0415 - only writers need it

        trace = self.trace()
        Path(path).write_text(trace.to_json() + "\n", encoding="utf-8")
        return trace
