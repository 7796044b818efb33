"""failcode.boundary: every row of the table, problem bodies, and the CLI helpers."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING, Any

import pytest

from failcode import FC, Cancelled, Category, FailureError, Kind, NoMatch, PeerExited, Veto
from failcode.boundary import (
    BOUNDARY_TABLE,
    ROWS,
    BoundaryRow,
    BoundaryTable,
    ErrorCode,
    OutcomeError,
    exit_code,
    http_status,
    problem,
    report_and_exit_code,
    resolve,
)
from tests._needs import missing
from tests._records import record

if TYPE_CHECKING:
    from pathlib import Path

_K, _C = Kind, Category
VAL, EXE, VETO, CONV, INT = ("VALIDATION_ERROR", "EXECUTION_ERROR", "VERIFICATION_VETO",
                             "CONVERGENCE_STOP", "INTERNAL_ERROR")

# One case per row: (row condition, the item, default exit, sysexits exit, HTTP, error code).
# Expected values come from seed 001, sysexits.h and DESIGN.md "Boundaries", written here.
CASES: list[tuple[str, Any, int, int, int, str | None]] = [
    ("success", None, 0, 0, 200, None),
    ("a verification veto: a recorded negative decision, never success",
     Veto(reason="tests failed", by="verifier"), 1, 1, 422, VETO),
    ("a convergence stop: the run ended without a success", "convergence", 1, 1, 422, CONV),
    ("a pipeline stopped at its iteration limit", "max_iterations", 1, 1, 422, EXE),
    ("a pipeline stopped with its budget exhausted", "budget_exhausted", 1, 1, 422, EXE),
    ("a pipeline aborted by a failure: the decision path did not finish",
     OutcomeError("fatal_failure", "agent reported a fatal error"), 1, 1, 422, EXE),
    ("an explicit cancellation (user interrupt, task cancelled)",
     Cancelled(reason="ctrl-c", signal=2), 130, 130, 422, EXE),
    ("the peer process on the other side of a pipe exited",
     PeerExited(peer="worker", reason="eof"), 1, 69, 500, INT),
    ("invalid input: a schema or contract failure",
     FC.DATA_INVALID_INPUT.failure(surface="cli", params={"problem": "goal is required"}),
     2, 65, 400, VAL),
    ("malformed JSON input",
     FC.DATA_INVALID_INPUT.failure(surface="cli", error_class="malformed_json",
                                   params={"problem": "line 1: unexpected end"}),
     2, 65, 400, VAL),
    ("a missing input path",
     FC.OS_FILE_NOT_FOUND.failure(surface="cli", params={"path": "input.json"}),
     2, 66, 422, EXE),
    ("a missing replay trace",
     record("XX-LIFE-001", _K.USER_ERROR, _C.USER, "replay_trace_missing"), 2, 66, 422, EXE),
    ("an invalid pipeline trace (replay input)",
     FC.LIFE_TRACE_INVALID.failure(surface="pipeline.trace", params={"problem": "no phases"}),
     2, 65, 400, VAL),
    ("a request without a valid service key",
     FC.SVC_UNAUTHENTICATED.failure(surface="service", params={
         "path": "/v1/logs", "problem": "no Authorization header"}), 1, 77, 401, VAL),
    ("a service key without the scope or project a route needs",
     FC.SVC_FORBIDDEN.failure(surface="service", params={"problem": "needs read"}),
     1, 77, 403, VAL),
    ("a service route or resource that does not exist",
     FC.SVC_NOT_FOUND.failure(surface="service", params={"what": "/v2"}), 2, 64, 404, VAL),
    ("a request larger than the service accepts",
     FC.SVC_TOO_LARGE.failure(surface="service", params={"problem": "9 MiB"}), 2, 65, 413, VAL),
    ("too many requests from one service key",
     FC.SVC_RATE_LIMITED.failure(surface="service", params={
         "limit": 600, "window_s": 60, "retry_after_s": 3}), 1, 75, 429, EXE),
    ("a request body in an encoding the service does not read",
     FC.SVC_UNSUPPORTED_MEDIA.failure(surface="service", params={
         "problem": "text/xml", "expected": "JSON"}), 2, 65, 415, VAL),
    ("a change that conflicts with the service's state",
     FC.SVC_CONFLICT.failure(surface="service", params={"problem": "exists"}), 1, 1, 409, EXE),
    ("over HTTP: the store is down (retry later)",
     FC.STORE_UNREACHABLE.failure(surface="store", params={"url": "u", "problem": "down"}),
     1, 69, 503, EXE),
    ("over HTTP: the store refused a write (retry later)",
     FC.STORE_WRITE_FAILED.failure(surface="store", params={"url": "u", "problem": "gone"}),
     1, 71, 503, EXE),
    ("over HTTP: the store is full (retry after space is freed)",
     FC.STORE_DISK_FULL.failure(surface="store", params={"url": "u"}), 1, 71, 503, EXE),
    ("the store stayed locked by another writer (retry; over HTTP 503)",
     FC.STORE_LOCKED.failure(surface="store", params={"url": "u", "timeout_s": 5}),
     1, 75, 503, EXE),
    ("a configuration failure (over HTTP: the server's own misconfiguration)",
     FC.CFG_INVALID_VALUE.failure(surface="config.load", params={
         "file": "failcode.toml", "line": 3, "key": "retry.attempts", "value": "0",
         "expected": "1..100"}), 1, 78, 500, INT),
    ("rejected API credentials (key validation)",
     FC.PROV_AUTH.failure(surface="llm.complete", params={"provider": "OpenAI"}),
     1, 77, 422, EXE),
    ("access denied to a file or resource",
     FC.OS_PERMISSION_DENIED.failure(surface="fs.write", params={"path": "out.log"}),
     1, 77, 422, EXE),
    ("a policy or permission refusal",
     FC.PROV_CONTENT_FILTERED.failure(surface="llm.complete", params={"provider": "Azure"}),
     1, 77, 422, EXE),
    ("an action that needs a permission",
     record("XX-POL-001", _K.PERMISSION_ERROR, _C.USER, "needs_confirmation"), 1, 77, 422, EXE),
    ("a missing program, module or dependency",
     FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"}),
     1, 69, 422, EXE),
    ("the machine's resources failed (disk, memory, a killed process)",
     FC.OS_DISK_FULL.failure(surface="fs.write"), 1, 71, 500, INT),
    ("an unclassified failure",
     FC.SYS_UNKNOWN.failure(surface="step", params={"exception": "ValueError"}),
     1, 70, 500, INT),
    ("a transient failure: retrying may succeed",
     FC.PROV_RATE_LIMIT.failure(surface="llm.complete", params={"provider": "Anthropic"}),
     1, 75, 503, EXE),
    ("a defect: the agent or the library is wrong",
     FC.PROV_BAD_REQUEST.failure(surface="llm.complete", params={"provider": "OpenAI"}),
     1, 70, 500, INT),
    ("a failure the user must fix",
     FC.PROV_QUOTA.failure(surface="llm.complete", params={"provider": "OpenAI"}),
     1, 1, 422, EXE),
    ("the environment is missing something or broken",
     FC.PROV_MODEL_NOT_FOUND.failure(surface="llm.complete",
                                     params={"provider": "OpenAI", "model": "gpt-9"}),
     1, 69, 422, EXE),
    ("the task failed (build, test, analysis, merge, command)",
     FC.BUILD_FAILED.failure(surface="cpp.build", params={"program": "gcc"}), 1, 1, 422, EXE),
    ("anything unexpected (a plain exception, an unknown code)",
     RuntimeError("boom"), 1, 70, 500, INT),
]


def test_every_row_has_a_case() -> None:
    """The cases cover every row of the table, once."""
    assert sorted(case[0] for case in CASES) == sorted(row.condition for row in ROWS)


@pytest.mark.parametrize("case", CASES, ids=[case[0][:40] for case in CASES])
def test_row(case: tuple[str, Any, int, int, int, str | None]) -> None:
    """Each row maps its representative result to the reviewed exit codes, status and code."""
    condition, item, exit_default, exit_sysexits, status, error_code = case
    row = resolve(item)
    assert row.condition == condition
    assert exit_code(item) == exit_default
    assert exit_code(item, "sysexits") == exit_sysexits
    assert http_status(item) == (status, error_code)


def test_a_veto_is_never_success_at_any_boundary() -> None:
    """A veto exits non-zero and answers 422 VERIFICATION_VETO, never 200."""
    veto = Veto(reason="the verifier rejected the patch")
    assert exit_code(veto) != 0
    assert exit_code(OutcomeError(veto), "sysexits") != 0
    assert problem(veto).status == 422
    assert problem(OutcomeError(veto)).body["error_code"] == "VERIFICATION_VETO"


def test_failure_error_resolves_like_its_failure() -> None:
    """A FailureError takes its record's row."""
    failure = FC.PROV_AUTH.failure(surface="llm.complete", params={"provider": "OpenAI"})
    assert resolve(FailureError(failure)) is resolve(failure)


def test_unknown_outcome_name_takes_the_fallback() -> None:
    """An outcome name no row knows is unexpected."""
    assert resolve("nonsense") is BOUNDARY_TABLE.fallback


@pytest.mark.parametrize("item", [NoMatch(probe="grep", exit_code=1)])
def test_information_outcomes_are_refused(item: Any) -> None:
    """A NoMatch is information for the caller, never a boundary result."""
    with pytest.raises(ValueError, match="information for the caller"):
        resolve(item)


def test_code_row_beats_class_and_category_rows() -> None:
    """The most specific row wins: a code row beats a class row beats a category row."""
    table = BoundaryTable([
        BoundaryRow("by category", 1, 1, 422, ErrorCode.EXECUTION_ERROR, category=_C.TASK),
        BoundaryRow("by class", 3, 3, 422, ErrorCode.EXECUTION_ERROR,
                    error_class="file_not_found"),
        BoundaryRow("by code", 4, 4, 422, ErrorCode.EXECUTION_ERROR, code="FC-OS-002"),
        BoundaryRow("fallback", 1, 70, 500, ErrorCode.INTERNAL_ERROR),
    ])
    failure = FC.OS_FILE_NOT_FOUND.failure(surface="fs", params={"path": "a"})
    assert table.resolve(failure).condition == "by code"
    build = FC.BUILD_FAILED.failure(surface="b", params={"program": "gcc"})
    assert table.resolve(build).condition == "by category"


@pytest.mark.parametrize(("rows", "problem_text"), [
    ([BoundaryRow("a", 1, 1, 422, ErrorCode.EXECUTION_ERROR, category=_C.TASK),
      BoundaryRow("b", 1, 1, 422, ErrorCode.EXECUTION_ERROR, category=_C.TASK),
      BoundaryRow("f", 1, 70, 500, ErrorCode.INTERNAL_ERROR)], "share a key"),
    ([BoundaryRow("a", 1, 1, 422, ErrorCode.EXECUTION_ERROR, category=_C.TASK)],
     "exactly one fallback"),
    ([BoundaryRow("a", 300, 1, 422, ErrorCode.EXECUTION_ERROR, category=_C.TASK),
      BoundaryRow("f", 1, 70, 500, ErrorCode.INTERNAL_ERROR)], "0..255"),
    ([BoundaryRow("a", 1, 1, 422, None, category=_C.TASK),
      BoundaryRow("f", 1, 70, 500, ErrorCode.INTERNAL_ERROR)], "needs an error code"),
])
def test_invalid_tables_are_refused(rows: list[BoundaryRow], problem_text: str) -> None:
    """A table with a duplicate key, no fallback, a bad exit code or no error code is refused."""
    with pytest.raises(ValueError, match=problem_text):
        BoundaryTable(rows)


# -- problem+json -------------------------------------------------------------------------------


def test_problem_carries_code_error_code_and_signature() -> None:
    """A 422 body carries the FC code, the seed-level code, message, status and signature."""
    failure = FC.BUILD_FAILED.failure(surface="cpp.build", params={"program": "gcc"})
    result = problem(failure)
    body = result.body
    assert result.status == 422
    assert result.headers["content-type"] == "application/problem+json"
    assert body["status"] == 422
    assert body["code"] == "FC-BUILD-001"
    assert body["error_code"] == "EXECUTION_ERROR"
    assert body["detail"] == body["message"] == "The build with gcc failed."
    assert body["signature"] == failure.signature
    assert body["retryable"] is False
    assert body["docs"] == "docs/codes.md#fc-build-001"
    assert body["type"] == "about:blank"  # a relative docs link is not a problem type URI
    assert body["instance"] == f"urn:failcode:error:{failure.error_id}"


class _Decision:
    delay_s = 1.2
    action = "retry"


@pytest.mark.parametrize(("decision", "expected"), [(_Decision(), "2"), (30.0, "30"),
                                                   (0.0, None), (None, None)])
def test_retry_after_follows_the_decision_delay(decision: object, expected: str | None) -> None:
    """Retry-After is the decision's delay rounded up to whole seconds, absent without one."""
    failure = FC.PROV_RATE_LIMIT.failure(surface="llm.complete", params={"provider": "OpenAI"})
    headers = problem(failure, decision=decision).headers
    assert headers.get("retry-after") == expected
    if expected is not None:
        assert int(expected) == math.ceil(getattr(decision, "delay_s", decision))


def test_internal_problem_has_no_internals() -> None:
    """A 500 body says nothing of the exception, its message, class or signature."""
    failure = FC.SYS_UNKNOWN.failure(surface="secret.module", params={"exception": "KeyError"})
    body = problem(failure).body
    text = json.dumps(body)
    assert body["error_code"] == "INTERNAL_ERROR"
    assert body["code"] == "FC-SYS-001"
    for internal in ("KeyError", "secret.module", failure.signature):
        assert internal not in text
    assert "KeyError" not in json.dumps(problem(KeyError("db_password")).body)


def test_problem_detail_follows_the_locale() -> None:
    """The detail and remedy are rendered in the requested language; the code stays."""
    failure = FC.PROV_AUTH.failure(surface="llm.complete", params={"provider": "OpenAI"})
    body = problem(failure, locale="de").body
    assert body["code"] == "FC-PROV-001"
    assert body["detail"] == "Die API-Zugangsdaten für OpenAI wurden abgelehnt."
    assert body["remedy"].startswith("Prüfen Sie den API-Schlüssel für OpenAI")


# -- CLI -----------------------------------------------------------------------------------------


class _Stream:
    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        return None

    @property
    def text(self) -> str:
        return "".join(self.parts)


def test_report_renders_user_text_on_stderr() -> None:
    """A failure is rendered as user text on stderr and returns its exit code."""
    err, out = _Stream(), _Stream()
    failure = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"})
    code = report_and_exit_code(failure, stderr=err, stdout=out, locale="en")  # type: ignore[arg-type]
    assert code == 1
    assert err.text.startswith("error [FC-CMD-001]: The program cargo is not installed")
    assert out.text == ""


def test_report_json_writes_an_envelope_on_stdout() -> None:
    """With as_json the failure is one envelope line on stdout that decodes back."""
    from failcode.record._envelope import decode

    err, out = _Stream(), _Stream()
    failure = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"})
    report_and_exit_code(failure, as_json=True, stderr=err, stdout=out)  # type: ignore[arg-type]
    assert decode(out.text) == failure
    assert err.text == ""


CLICK_APP = '''
import sys
import click
from failcode import FC, FailureError, Veto
from failcode.boundary import OutcomeError, handle_failures

@click.command()
@click.argument("what")
@click.option("--json", "json", is_flag=True)
@click.option("--sysexits", is_flag=True)
def main(what, json, sysexits):
    run(what, json=json) if not sysexits else run_sysexits(what, json=json)

def body(what):
    if what == "missing":
        raise FailureError(FC.OS_FILE_NOT_FOUND.failure(surface="cli", params={"path": "in.json"}))
    if what == "rate":
        raise FailureError(FC.PROV_RATE_LIMIT.failure(surface="llm", params={"provider": "OpenAI"}))
    if what == "veto":
        raise OutcomeError(Veto(reason="the verifier rejected it"))
    if what == "crash":
        raise KeyError("internal detail")
    if what == "usage":
        raise click.UsageError("bad usage")
    print("ok")

@handle_failures
def run(what, json):
    body(what)

@handle_failures(profile="sysexits")
def run_sysexits(what, json):
    body(what)

main()
'''

TYPER_APP = '''
import typer
from failcode import FC, FailureError
from failcode.boundary import handle_failures

app = typer.Typer()

@app.command()
@handle_failures
def main(what: str, json: bool = False) -> None:
    if what == "missing":
        raise FailureError(FC.OS_FILE_NOT_FOUND.failure(surface="cli", params={"path": "in.json"}))
    if what == "crash":
        raise KeyError("internal detail")
    print("ok")

app()
'''


def _run(tmp_path: Path, source: str, *args: str, env_extra: dict[str, str] | None = None,
         ) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "app.py"
    script.write_text(textwrap.dedent(source), encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **(env_extra or {})}
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True,
                          env=env, check=False, timeout=60)


@pytest.mark.parametrize(("args", "code", "stderr_start"), [
    (["ok"], 0, ""),
    (["missing"], 2, "error [FC-OS-002]: The file or directory in.json does not exist."),
    (["rate"], 1, "error [FC-PROV-003]: The request was rate-limited by OpenAI."),
    (["veto"], 1, "veto: the verifier rejected it"),
    (["crash"], 1, "error [FC-SYS-001]: An unclassified KeyError occurred."),
    (["usage"], 2, "Usage:"),
    (["--sysexits", "rate"], 75, "error [FC-PROV-003]"),
    (["--sysexits", "missing"], 66, "error [FC-OS-002]"),
    (["--sysexits", "crash"], 70, "error [FC-SYS-001]"),
])
def test_click_app_exits_with_the_row_code(tmp_path: Path, args: list[str], code: int,
                                           stderr_start: str) -> None:
    """A real click app run as a process exits with the row's code and a rendered message."""
    result = _run(tmp_path, CLICK_APP, *args)
    assert result.returncode == code, result.stderr
    assert result.stderr.startswith(stderr_start)
    assert "Traceback" not in result.stderr


def test_click_app_renders_in_the_environment_language(tmp_path: Path) -> None:
    """The stderr text follows LANG: the receiving side's language."""
    result = _run(tmp_path, CLICK_APP, "missing", env_extra={"LANG": "de_DE.UTF-8"})
    assert result.returncode == 2
    assert result.stderr.startswith(
        "Fehler [FC-OS-002]: Die Datei oder das Verzeichnis in.json existiert nicht.")


def test_click_app_json_is_an_envelope_on_stdout(tmp_path: Path) -> None:
    """--json prints one decodable envelope line on stdout and nothing on stderr."""
    from failcode.record._envelope import decode

    result = _run(tmp_path, CLICK_APP, "missing", "--json")
    assert result.returncode == 2
    assert result.stderr == ""
    item = decode(result.stdout.strip())
    assert getattr(item, "code", None) == "FC-OS-002"


def test_unexpected_traceback_only_on_request(tmp_path: Path) -> None:
    """An unexpected error shows its traceback only with FAILCODE_TRACEBACK=1."""
    plain = _run(tmp_path, CLICK_APP, "crash")
    assert "Traceback" not in plain.stderr
    assert "FAILCODE_TRACEBACK=1" in plain.stderr
    asked = _run(tmp_path, CLICK_APP, "crash", env_extra={"FAILCODE_TRACEBACK": "1"})
    assert "Traceback (most recent call last)" in asked.stderr
    assert asked.returncode == 1


@pytest.mark.parametrize(("args", "code", "stderr_start"), [
    (["ok"], 0, ""),
    (["missing"], 2, "error [FC-OS-002]: The file or directory in.json does not exist."),
    (["crash"], 1, "error [FC-SYS-001]"),
])
def test_typer_app_exits_with_the_row_code(tmp_path: Path, args: list[str], code: int,
                                           stderr_start: str) -> None:
    """A real typer app run as a process exits with the row's code and a rendered message."""
    try:
        import typer  # noqa: F401
    except ImportError:
        missing("typer is not installed")
    result = _run(tmp_path, TYPER_APP, *args)
    assert result.returncode == code, result.stderr
    assert result.stderr.startswith(stderr_start)
