"""A worked failcode.pipeline run: one transient retry, one veto, one abort.

Run it from the repository root (it needs the ``pipeline`` extra)::

    python examples/pipeline_demo.py [TRACE_PATH]

It writes the run's trace to TRACE_PATH (default: ``trace.json`` in a new temporary directory),
validates it by reading it back, prints where it wrote it and the run's timeline on stderr (the
same text as ``failcode pipeline show TRACE_PATH``), prints the final status as one JSON line on
stdout and exits with the pipeline boundary's code: 1, because the run aborted (a fatal agent
error) after a verification veto. Check the trace with
``failcode pipeline validate TRACE_PATH``.
"""

from __future__ import annotations

import random
import sys
import tempfile
from pathlib import Path

from failcode import Policy, RetryClass
from failcode.pipeline import (
    AgentError,
    AgentErrorCode,
    AgentFailure,
    AgentInput,
    AgentOutput,
    Phase,
    PipelineRun,
    PipelineStopped,
    Verdict,
    format_timeline,
    load_trace_file,
    run_cli,
)

# small delays: the demo retries for real but quickly
POLICY = Policy(classes={"default": RetryClass(max_attempts=3, initial_delay_s=0.01,
                                               max_delay_s=0.05)})
MODEL = {"provider": "local", "model": "demo-echo-1", "temperature": 0.0, "seed": 7}


def planner(task: AgentInput) -> AgentOutput:
    """Plans the task (always succeeds)."""
    return AgentOutput(text=f"plan: split '{task.task_goal}' into 2 steps", confidence=0.9,
                       score=0.8)


class FlakyExecutor:
    """Fails transiently on its first call, succeeds on the second, then fails fatally."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, task: AgentInput) -> AgentOutput:
        self.calls += 1
        if self.calls == 1:
            raise AgentFailure(AgentError(code=AgentErrorCode.TRANSIENT,
                                          message="executor backend briefly unavailable"))
        if self.calls == 2:
            return AgentOutput(text="draft answer: 42", confidence=0.6, score=0.4)
        raise AgentFailure(AgentError(code=AgentErrorCode.FATAL,
                                      message="executor workspace is inconsistent",
                                      detail="step 2 found a half-written output file"))


def run_demo(trace_path: Path) -> object:
    """Run the pipeline, write and re-validate its trace, and return the final status."""
    run = PipelineRun("demo-001", policy=POLICY, rand=random.Random(7).random,  # noqa: S311 - jitter
                      max_iterations=2)
    task = AgentInput(task_goal="answer the ultimate question", context_id="ctx-demo")
    executor = FlakyExecutor()
    try:
        run.enter(Phase.PLAN)
        run.call(planner, task, name="planner", **MODEL)
        run.enter(Phase.EXECUTE)
        draft = run.call(executor, task, name="executor", **MODEL)  # transient, then retried
        run.enter(Phase.JUDGE)
        run.record_decision(Verdict.PASS, by="judge", reason="the draft answers the goal")
        run.enter(Phase.VERIFY)
        if draft.score < 0.7:
            run.record_decision(Verdict.VETO, by="verifier",
                                reason=f"score {draft.score} is below 0.7")
        run.enter(Phase.EXECUTE)  # the veto sends the run back for another iteration
        run.call(executor, task, name="executor", **MODEL)  # fatal: the run aborts
        status = run.finish()
    except PipelineStopped:
        status = run.final
    run.write_trace(trace_path)
    trace = load_trace_file(trace_path)  # read back: the written trace validates
    if status is None or trace.final != status:
        msg = "the trace on disk does not match the run"
        raise RuntimeError(msg)
    sys.stderr.write(f"trace written to {trace_path}\n\n{format_timeline(trace)}\n")
    return status


def main() -> int:
    """Run the demo and return the pipeline boundary's exit code."""
    if len(sys.argv) > 1:
        trace_path = Path(sys.argv[1])
    else:
        trace_path = Path(tempfile.mkdtemp(prefix="failcode-demo-")) / "trace.json"
    return run_cli(lambda: run_demo(trace_path))


if __name__ == "__main__":
    sys.exit(main())
