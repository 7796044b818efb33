"""The pipeline's CLI and HTTP helpers, both reading :data:`failcode.boundary.BOUNDARY_TABLE`.

CLI: exit 2 for invalid or missing input paths, invalid input and missing replay
traces; 1 for configuration, key validation, a veto, any other stop and unexpected errors; 0
for success. Results and dry-run artifacts are JSON on stdout.

HTTP: malformed JSON and schema failures 400 VALIDATION_ERROR; execution failures and stops
422 (EXECUTION_ERROR, CONVERGENCE_STOP); a veto 422 VERIFICATION_VETO, never 200; unexpected
500 INTERNAL_ERROR.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from failcode.boundary import (
    BOUNDARY_TABLE,
    ExitProfile,
    Problem,
    problem,
    report_and_exit_code,
)
from failcode.codes._catalog import FC
from failcode.pipeline._artifacts import FinalStatus
from failcode.pipeline._contracts import CONTRACT_VERSION, AgentInput
from failcode.pipeline._lifecycle import CANONICAL_GRAPH, PhaseGraph
from failcode.pipeline._run import PipelineStopped
from failcode.pipeline._trace import Trace, input_digest
from failcode.record._failure import Failure, FailureError

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TextIO

    from starlette.applications import Starlette
    from starlette.responses import JSONResponse

__all__ = [
    "dry_run_artifact",
    "exit_code_for",
    "http_result",
    "install_pipeline_handlers",
    "pipeline_response",
    "read_input",
    "run_cli",
]


def _validation_failure(problem_text: str, error_class: str, surface: str) -> FailureError:
    return FailureError(FC.DATA_INVALID_INPUT.failure(
        surface=surface, error_class=error_class, params={"problem": problem_text}))


def _first_error(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "input"
    return f"{where}: {first.get('msg')}"


def read_input(path: str | Path) -> AgentInput:
    """Read an AgentInput from a JSON file.

    Raises:
        FailureError: FC-OS-002 (missing path, exit 2), or FC-DATA-001 with class
            ``malformed_json`` (not JSON) or ``validation`` (not the contract), exit 2 and
            HTTP 400; the message names the file and the line or field.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise FailureError(FC.OS_FILE_NOT_FOUND.failure(
            surface="pipeline.input", params={"path": str(path)})) from None
    except UnicodeDecodeError as exc:
        msg = f"{path}: not UTF-8 text (byte {exc.start})"
        raise _validation_failure(msg, "malformed_json", "pipeline.input") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        msg = f"{path} line {exc.lineno} column {exc.colno}: {exc.msg}"
        raise _validation_failure(msg, "malformed_json", "pipeline.input") from None
    try:
        return AgentInput.model_validate(data)
    except ValidationError as exc:
        msg = f"{path}: {_first_error(exc)}"
        raise _validation_failure(msg, "validation", "pipeline.input") from None


def dry_run_artifact(agent_input: AgentInput, *, graph: PhaseGraph = CANONICAL_GRAPH,
                     ) -> dict[str, Any]:
    """What a dry run reports: the validated input, its digest and the phase graph, as JSON."""
    return {"dry_run": True, "contract_version": CONTRACT_VERSION,
            "input": agent_input.model_dump(mode="json"),
            "input_digest": input_digest(agent_input),
            "graph": graph.model_dump(mode="json")}


def _outcome_item(result: object) -> object:
    """What the boundary table resolves for a pipeline result."""
    if isinstance(result, Trace):
        result = result.final
    if isinstance(result, FinalStatus):
        return None if result.success else PipelineStopped(result)
    if isinstance(result, (BaseException, Failure)):
        return result
    return None  # any other value is a command's successful result (a dry-run artifact...)


def exit_code_for(result: object, profile: ExitProfile | str = ExitProfile.DEFAULT) -> int:
    """The exit code of a result: a FinalStatus or Trace (its final status; a veto is 1, never
    0), a PipelineStopped, a Failure or any exception by its row; any other value (a dry-run
    artifact, a report) is a successful result: 0."""
    return BOUNDARY_TABLE.resolve(_outcome_item(result)).exit_code(profile)


def _json(result: object) -> str:
    if isinstance(result, BaseModel):
        return result.model_dump_json()
    return json.dumps(result, sort_keys=True)


def run_cli(
    main: Callable[[], object],
    *,
    profile: ExitProfile | str = ExitProfile.DEFAULT,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    locale: str | None = None,
) -> int:
    """Run a pipeline command and return its exit code (pass it to ``sys.exit``).

    ``main`` returns a result: a FinalStatus, a Trace, a dry-run artifact (a dict) or any
    pydantic model; it is written as one JSON line on stdout, and the exit code is the
    boundary row's (success 0; a veto or any other stop 1). A raised
    :class:`~failcode.pipeline.PipelineStopped` writes its final status the same way. A raised
    FailureError (a missing path, invalid input, a missing or invalid replay trace) or an
    unexpected exception is reported as user text on stderr by
    :func:`failcode.boundary.report_and_exit_code` (2 for input problems, 1 otherwise) and
    never shows a traceback unless ``FAILCODE_TRACEBACK=1``.
    """
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    try:
        result = main()
    except PipelineStopped as stop:
        out.write(_json(stop.status) + "\n")
        out.flush()
        return report_and_exit_code(stop, profile=profile, stderr=err, stdout=out,
                                    locale=locale)
    except Exception as exc:  # noqa: BLE001 - the boundary reports every failure
        return report_and_exit_code(exc, profile=profile, stderr=err, stdout=out,
                                    locale=locale)
    out.write(_json(result) + "\n")
    out.flush()
    return exit_code_for(result, profile)


def http_result(item: object, *, locale: str | None = None) -> Problem:
    """The HTTP answer of a pipeline result as a :class:`~failcode.boundary.Problem`.

    A successful FinalStatus (or Trace) is 200 with the status as the body; any other stop is
    the boundary's problem body plus ``stop_reason``, ``failure_class`` and ``replayable``
    (a veto: 422 VERIFICATION_VETO); a FailureError or any exception is
    :func:`failcode.boundary.problem`'s (an unexpected one 500 INTERNAL_ERROR).
    """
    status = item.final if isinstance(item, Trace) else item
    if isinstance(status, PipelineStopped):
        status = status.status
    if isinstance(status, FinalStatus):
        if status.success:
            return Problem(200, {"content-type": "application/json"},
                           status.model_dump(mode="json"))
        answer = problem(PipelineStopped(status), locale=locale)
        answer.body.update(stop_reason=status.stop_reason and status.stop_reason.value,
                           failure_class=status.failure_class and status.failure_class.value,
                           replayable=status.replayable, phase=status.phase)
        return answer
    if isinstance(item, ValidationError):
        item = _validation_failure(_first_error(item), "validation", "http.request")
    return problem(item, locale=locale)


def pipeline_response(item: object, *, locale: str | None = None) -> JSONResponse:
    """A Starlette/FastAPI response for a pipeline result (see :func:`http_result`)."""
    from starlette.responses import JSONResponse  # noqa: PLC0415 - the fastapi extra

    answer = http_result(item, locale=locale)
    media = answer.headers.get("content-type", "application/json")
    return JSONResponse(answer.body, status_code=answer.status, headers=answer.headers,
                        media_type=media)


def install_pipeline_handlers(app: Starlette) -> None:
    """Register failcode's problem handlers plus the pipeline's on a FastAPI/Starlette app.

    On top of :func:`failcode.integrations.fastapi.install_problem_handlers` (request
    validation 400, FailureError by its row, unexpected 500): a raised
    :class:`~failcode.pipeline.PipelineStopped` answers its stop (a veto 422
    VERIFICATION_VETO, with ``stop_reason``, ``failure_class``, ``replayable``), and a
    contract's pydantic ValidationError raised in an endpoint answers 400 VALIDATION_ERROR.
    """
    from failcode.integrations.fastapi import (  # noqa: PLC0415 - the fastapi extra
        install_problem_handlers,
        negotiate_locale,
    )

    install_problem_handlers(app)

    async def on_stop(request: Any, exc: Exception) -> JSONResponse:
        locale = negotiate_locale(request.headers.get("accept-language"))
        return pipeline_response(exc, locale=locale)

    app.add_exception_handler(PipelineStopped, on_stop)
    app.add_exception_handler(ValidationError, on_stop)
