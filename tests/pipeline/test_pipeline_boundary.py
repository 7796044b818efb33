"""failcode.pipeline at its boundaries: CLI exit codes and JSON, HTTP problems, import cost,
and the worked example run as a process."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest

from failcode import FC, FailureError
from failcode.pipeline import (
    AgentInput,
    FinalStatus,
    PipelineStopped,
    StopReason,
    dry_run_artifact,
    exit_code_for,
    http_result,
    load_trace_file,
    read_input,
    run_cli,
)
from tests._needs import missing
from tests._paths import REPO, TESTS

if TYPE_CHECKING:
    from pathlib import Path

ROOT = REPO
FIXTURES = TESTS / "fixtures" / "pipeline_traces"

VETO = FinalStatus(success=False, phase="aborted", stop_reason="verification_veto",
                   failure_class="verification_veto", message="score too low")
CONVERGED = FinalStatus(success=False, phase="aborted", stop_reason="convergence",
                        message="no progress")
FATAL = FinalStatus(success=False, phase="aborted", stop_reason="fatal_failure",
                    failure_class="execution_error", replayable=False, message="tool broke")
DONE = FinalStatus(success=True, phase="done")


def _module(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "failcode.pipeline", *args], cwd=cwd,
                          capture_output=True, text=True, check=False, timeout=60)


# -- a veto is never success, through any boundary ----------------------------------------------

def test_veto_is_not_success_in_the_final_status() -> None:
    """A vetoed final status says success False and outcome veto."""
    assert (VETO.success, VETO.outcome) == (False, "veto")


def test_veto_exits_1() -> None:
    """A vetoed status, trace or PipelineStopped exits 1 (seed 001), never 0."""
    assert exit_code_for(VETO) == 1
    assert exit_code_for(PipelineStopped(VETO)) == 1
    assert exit_code_for(DONE) == 0


def test_veto_is_422_verification_veto() -> None:
    """Over HTTP a veto is 422 VERIFICATION_VETO with its stop fields, never 200."""
    answer = http_result(VETO)
    assert answer.status == 422
    assert answer.body["error_code"] == "VERIFICATION_VETO"
    assert (answer.body["stop_reason"], answer.body["replayable"]) == ("verification_veto", True)


def test_run_cli_reports_a_veto_as_json_and_exit_1() -> None:
    """run_cli writes a vetoed status as JSON on stdout and returns 1."""
    out, err = io.StringIO(), io.StringIO()

    def vetoed() -> object:
        raise PipelineStopped(VETO)

    assert run_cli(vetoed, stdout=out, stderr=err) == 1
    first = json.loads(out.getvalue().splitlines()[0])
    assert (first["success"], first["stop_reason"]) == (False, "verification_veto")


# -- CLI ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("status", "code"), [
    (DONE, 0), (VETO, 1), (CONVERGED, 1), (FATAL, 1),
    (FinalStatus(success=False, phase="aborted", stop_reason="max_iterations",
                 failure_class="max_iterations"), 1),
    (FinalStatus(success=False, phase="aborted", stop_reason="budget_exhausted",
                 failure_class="budget_exceeded"), 1),
])
def test_final_status_exit_codes(status: FinalStatus, code: int) -> None:
    """Success exits 0; every stop exits 1 (seed 001: a veto or an execution error)."""
    out = io.StringIO()
    assert run_cli(lambda: status, stdout=out, stderr=io.StringIO()) == code
    assert json.loads(out.getvalue())["success"] is status.success


def test_user_interruption_exits_130() -> None:
    """A user interruption is a cancellation: 130, as the boundary table says."""
    status = FinalStatus(success=False, phase="aborted", stop_reason="user_interruption",
                         failure_class="user_interruption")
    assert exit_code_for(status) == 130


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "input.json"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("text", "words"), [
    ("{broken", "line 1 column 2"),
    ('{"task_goal": "", "context_id": "c"}', "task_goal"),
    ('{"task_goal": "g", "context_id": "c", "x": 1}', "x"),
])
def test_invalid_input_exits_2(tmp_path: Path, text: str, words: str) -> None:
    """Malformed JSON or a contract failure in the input file exits 2, naming the problem."""
    path = _write(tmp_path, text)
    err = io.StringIO()
    assert run_cli(lambda: read_input(path), stdout=io.StringIO(), stderr=err) == 2
    assert words in err.getvalue()
    assert "Traceback" not in err.getvalue()


def test_missing_input_path_exits_2(tmp_path: Path) -> None:
    """A missing input path exits 2."""
    missing = tmp_path / "missing.json"
    assert run_cli(lambda: read_input(missing), stdout=io.StringIO(),
                   stderr=io.StringIO()) == 2


def test_dry_run_prints_json_and_exits_0(tmp_path: Path) -> None:
    """A dry run of a valid input prints its machine-readable artifact and exits 0."""
    path = _write(tmp_path, '{"task_goal": "g", "context_id": "c"}')
    result = _module("dry-run", str(path))
    assert result.returncode == 0, result.stderr
    artifact = json.loads(result.stdout)
    assert artifact["dry_run"] is True
    assert artifact["input_digest"].startswith("sha256:")
    assert artifact == dry_run_artifact(AgentInput(task_goal="g", context_id="c"))


def test_missing_replay_trace_exits_2(tmp_path: Path) -> None:
    """Validating a missing trace exits 2 with FC-LIFE-008 on stderr."""
    result = _module("validate", str(tmp_path / "gone.json"))
    assert result.returncode == 2
    assert "FC-LIFE-008" in result.stderr


def test_invalid_trace_exits_2() -> None:
    """Validating an invalid trace exits 2 with FC-LIFE-007."""
    result = _module("validate", str(FIXTURES / "nonzero_temperature.json"))
    assert result.returncode == 2
    assert "FC-LIFE-007" in result.stderr


def test_valid_trace_validates_as_json() -> None:
    """Validating a valid trace prints JSON and exits 0."""
    result = _module("validate", str(FIXTURES / "valid.json"))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["valid"] is True


@pytest.mark.parametrize("raised", [
    FailureError(FC.CFG_INVALID_VALUE.failure(surface="config.load", params={
        "file": "pipeline.toml", "line": 2, "key": "max_iterations", "value": "-1",
        "expected": ">= 0"})),
    FailureError(FC.PROV_AUTH.failure(surface="llm.complete", params={"provider": "OpenAI"})),
    RuntimeError("boom"),
], ids=["configuration", "key validation", "unexpected"])
def test_configuration_keys_and_unexpected_exit_1(raised: Exception) -> None:
    """Configuration, key validation and unexpected errors exit 1, without a traceback."""
    err = io.StringIO()

    def failing() -> object:
        raise raised

    assert run_cli(failing, stdout=io.StringIO(), stderr=err) == 1
    assert "Traceback (most recent call last)" not in err.getvalue()


# -- HTTP ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def client() -> Any:
    try:
        import fastapi  # noqa: F401
    except ImportError:
        missing("fastapi is not installed")
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from failcode.pipeline import AgentOutput, install_pipeline_handlers, pipeline_response

    app = FastAPI()
    install_pipeline_handlers(app)
    statuses = {"veto": VETO, "convergence": CONVERGED, "fatal": FATAL, "done": DONE}

    @app.post("/run")
    def run(task: AgentInput) -> Any:
        if task.task_goal == "crash":
            raise RuntimeError("internal detail")
        if task.task_goal == "raise-veto":
            raise PipelineStopped(VETO)
        if task.task_goal == "bad-output":
            AgentOutput(text="t", confidence=3, score=0)
        return pipeline_response(statuses[task.task_goal])

    return TestClient(app, raise_server_exceptions=False)


@pytest.mark.parametrize(("body", "status", "code"), [
    ('{"task_goal": "done", "context_id": "c"}', 200, None),
    ('{"task_goal": "veto", "context_id": "c"}', 422, "VERIFICATION_VETO"),
    ('{"task_goal": "raise-veto", "context_id": "c"}', 422, "VERIFICATION_VETO"),
    ('{"task_goal": "convergence", "context_id": "c"}', 422, "CONVERGENCE_STOP"),
    ('{"task_goal": "fatal", "context_id": "c"}', 422, "EXECUTION_ERROR"),
    ('{"task_goal": "bad-output", "context_id": "c"}', 400, "VALIDATION_ERROR"),
    ('{"task_goal": "", "context_id": "c"}', 400, "VALIDATION_ERROR"),
    ('{"task_goal": ', 400, "VALIDATION_ERROR"),
    ('{"task_goal": "crash", "context_id": "c"}', 500, "INTERNAL_ERROR"),
])
def test_http_statuses(client: Any, body: str, status: int, code: str | None) -> None:
    """Seed 001's HTTP mapping, through a real FastAPI app: success 200, veto and execution
    and convergence 422, malformed and schema 400, unexpected 500 without internals."""
    response = client.post("/run", content=body, headers={"content-type": "application/json"})
    assert response.status_code == status
    data = response.json()
    if code is None:
        assert data["success"] is True
    else:
        assert data["error_code"] == code
        assert "internal detail" not in response.text


# -- import cost and the worked example ---------------------------------------------------------

def test_import_failcode_loads_neither_pydantic_nor_pipeline() -> None:
    """`python -X importtime -c "import failcode"` lists no pydantic and no failcode.pipeline."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", "import failcode"],
                            capture_output=True, text=True, check=True, timeout=60)
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()
                if "|" in line}
    assert "failcode" in imported
    assert not {name for name in imported if name.split(".")[0] == "pydantic"}
    assert "failcode.pipeline" not in imported


def test_example_runs_end_to_end(tmp_path: Path) -> None:
    """The demo runs with one transient retry, one veto and one abort; its trace validates."""
    trace_path = tmp_path / "trace.json"
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "pipeline_demo.py"),
                             str(trace_path)], cwd=tmp_path, capture_output=True, text=True,
                            check=False, timeout=120)
    assert result.returncode == 1, result.stderr  # the run aborted: never success
    final = json.loads(result.stdout)
    assert (final["success"], final["stop_reason"]) == (False, "fatal_failure")
    trace = load_trace_file(trace_path)
    retries = [e for e in trace.events if e.type == "agent_error" and e.action == "retry"]
    vetoes = [e for e in trace.events if e.type == "decision" and e.verdict == "veto"]
    assert (len(retries), len(vetoes)) == (1, 1)
    assert trace.final.stop_reason is StopReason.FATAL_FAILURE
    assert trace.phases[-1] == "aborted"
