"""The OTLP door's decoding and mapping (``failcode.service._otlp``), row by row of
docs/service-otlp.md.

Every payload is made by the real OpenTelemetry Python SDK (see ``_otlp_payloads``) with the
attribute shapes the agents document, and every mapping test runs on both wire forms: the
protobuf the OTLP/HTTP exporter sends and its OTLP/JSON form.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from typing import TYPE_CHECKING, Any

import httpx
import msgspec
import openai
import pytest
from google.protobuf.json_format import MessageToDict, ParseDict
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from failcode import (
    FC,
    Failure,
    FailureError,
    Kind,
    NoMatch,
    RejectedAction,
    classify_http,
    classify_text,
    from_command,
)
from failcode.service._otlp import MAX_DEPTH, MAX_ITEMS, MAX_VALUE_BYTES, OtlpBatch, parse_otlp
from tests.service._otlp_payloads import (
    CLAUDE,
    CODEX,
    CONTENT_TYPES,
    ENCODINGS,
    GEMINI,
    T0,
    Encoding,
    Payload,
    Record,
    Spans,
    logs,
)

if TYPE_CHECKING:
    from failcode.events import Event

SECOND = 1_000_000_000
encodings = pytest.mark.parametrize("encoding", ENCODINGS)


def parse(payload: Payload, encoding: Encoding) -> OtlpBatch:
    batch = parse_otlp(payload.signal, payload.body(encoding),
                       content_type=payload.content_type(encoding))
    assert batch.items == batch.failures + batch.outcomes + batch.ignored
    assert len(batch.events) == batch.failures + batch.outcomes
    assert all(event.source == "otlp" for event in batch.events)
    return batch


def only(batch: OtlpBatch) -> Event:
    assert len(batch.events) == 1, [event.event for event in batch.events]
    return batch.events[0]


def failure_of(event: Event) -> Failure:
    assert event.failure is not None, event
    return event.failure


def area(failure: Failure) -> str:
    return failure.code.split("-")[1]


def rejected(payload: Payload, encoding: Encoding) -> RejectedAction:
    event = only(parse(payload, encoding))
    assert event.event == "action.rejected"
    assert isinstance(event.outcome, RejectedAction)
    return event.outcome


# -- agent-shaped records ---------------------------------------------------------------------


def claude(name: str, session: str = "cc-session-1", **attributes: Any) -> Record:
    """A Claude Code event: ``event.name`` undotted, the body the dotted name."""
    time_ns = attributes.pop("time_ns", T0)
    return Record({"event.name": name, "event.timestamp": "2025-10-09T08:53:20.000Z",
                   "event.sequence": 7, "session.id": session, "prompt.id": "p-1",
                   "user.id": "u-1", "terminal.type": "tmux", **attributes},
                  body=f"claude_code.{name}", time_ns=time_ns)


def codex(name: str, conversation: str = "0199-codex-conv", **attributes: Any) -> Record:
    """A Codex event: ``event.name`` dotted, the session metadata on every record; no record
    time unless given (a record may arrive with 0 there; the SDK sets the observed time)."""
    time_ns = attributes.pop("time_ns", None)
    return Record({"event.name": f"codex.{name}", "event.timestamp": "2025-10-09T08:53:20Z",
                   "conversation.id": conversation, "app.version": "0.58.0",
                   "auth_mode": "ApiKey", "originator": "codex_cli_rs", "terminal.type": "tmux",
                   "model": "gpt-5-codex", "slug": "gpt-5-codex", **attributes},
                  time_ns=time_ns)


def gemini(name: str, session: str = "gm-session-1", **attributes: Any) -> Record:
    """A Gemini CLI event: ``event.name`` dotted, a human body."""
    time_ns = attributes.pop("time_ns", T0)
    return Record({"event.name": f"gemini_cli.{name}", "event.timestamp": "2025-10-09T08:53:20Z",
                   "session.id": session, "installation.id": "inst-1", "prompt_id": "pr-1",
                   **attributes}, body=f"{name} event", time_ns=time_ns)


BASH_127 = "Exit code 127\n/bin/bash: line 1: pytst: command not found"
CARGO_OUTPUT = ("error[E0425]: cannot find value `total` in this scope\n --> src/main.rs:4:20\n"
                "  |\n4 |     println!(\"{}\", total);\n  |                    ^^^^^ not found in "
                "this scope\n\nerror: could not compile `demo` (bin \"demo\") due to 1 previous "
                "error\n")


# -- row 1: a failed shell tool with its command and exit status: from_command ------------------


QWEN = {"service.name": "qwen-code", "service.version": "0.24.4"}
QWEN_127 = ("Command: pytst -q\nDirectory: (root)\nOutput: bash: line 1: pytst: command not "
            "found\nError: (none)\nExit Code: 127\nSignal: (none)\nProcess Group PGID: (none)")


@encodings
def test_qwen_shell_failure_is_classified_from_its_command_and_exit_code(
        encoding: Encoding) -> None:
    """Row 1: Qwen Code 0.24.4's failed ``run_shell_command`` (as the lab recorded it: the
    command, ``Output: ...`` and ``Exit Code: 127`` in ``error``) is the command's own
    classification."""
    payload = logs([Record({
        "event.name": "qwen-code.tool_call", "session.id": "qw-session-1",
        "call_id": "call_0", "function_name": "run_shell_command",
        "function_args": json.dumps({"command": "pytst -q", "description": "Run the tests"}),
        "status": "error", "success": False, "decision": "auto_accept", "error": QWEN_127,
        "error_type": "shell_execute_error"}, time_ns=T0)], resource=QWEN)
    event = only(parse(payload, encoding))
    failure = failure_of(event)
    expected = from_command("pytst -q", 127, QWEN_127)
    assert isinstance(expected, Failure)
    assert event.event == "command.failed"
    assert failure.code == expected.code
    assert failure.kind is Kind.DEPENDENCY_ERROR
    assert event.session == "qw-session-1"
    assert failure.context["agent"] == "qwen-code"
    assert failure.context["agent_version"] == "0.24.4"
    assert failure.context["tool"] == "run_shell_command"


@encodings
def test_codex_shell_failure_reads_the_command_array_and_exit_line(encoding: Encoding) -> None:
    """Row 1: Codex's ``shell`` call (``["bash", "-lc", ...]``, ``Exit code: 101``) is the
    build failure the compiler's output names. The shape of Codex 0.5x's ``shell`` tool
    (``format_exec_output_str``); 0.171.0 calls ``exec_command`` (the next test)."""
    payload = logs([codex(
        "tool_result", tool_name="shell", call_id="call_7",
        arguments=json.dumps({"command": ["bash", "-lc", "cargo build"], "workdir": "/repo"}),
        duration_ms="3120", success="false", mcp_server="", mcp_server_origin="",
        output=f"Exit code: 101\nWall time: 3.1 seconds\nOutput:\n{CARGO_OUTPUT}")],
        resource=CODEX)
    event = only(parse(payload, encoding))
    failure = failure_of(event)
    expected = from_command(["bash", "-lc", "cargo build"], 101, CARGO_OUTPUT)
    assert isinstance(expected, Failure)
    assert event.event == "command.failed"
    assert failure.signature == expected.signature
    assert failure.kind is Kind.BUILD_ERROR
    assert failure.location == "src/main.rs"
    assert event.session == "0199-codex-conv"
    assert failure.context["model"] == "gpt-5-codex"
    assert failure.context["agent"] == "codex"  # codex_cli_rs is Codex CLI


def codex_171(command: str, output: str, *, success: str = "true",
              call: str = "call_stub_0") -> Record:
    """A Codex CLI 0.171.0 ``exec_command`` result as the lab recorded it: ``success`` is
    ``"true"`` for every command that ran; the exit status is in the ``output`` text."""
    return codex("tool_result", tool_name="exec_command", tool_namespace="functions",
                 call_id=call, success=success, agent_name="/root",
                 arguments=json.dumps({"cmd": command, "login": False}), output=output,
                 mcp_server="", mcp_server_origin="")


def exited(code: int, output: str = "") -> str:
    return (f"Chunk ID: 000000\nWall time: 0.0000 seconds\nProcess exited with code {code}\n"
            f"Original token count: 0\nOutput:\n{output}")


@encodings
def test_codex_command_that_ran_and_failed_is_a_failure_though_it_succeeded(
        encoding: Encoding) -> None:
    """Row 1: Codex 0.171.0 marks a command that exited 127 ``success`` ``"true"``; its
    ``Process exited with code 127`` is what says it failed."""
    output = "/bin/bash: line 1: nonexistent-tool: command not found\n"
    payload = logs([codex_171("nonexistent-tool build", exited(127, output)),
                    codex_171("echo ok", exited(0, "ok\n"), call="call_stub_1")],
                   resource=CODEX)
    event = only(parse(payload, encoding))
    failure = failure_of(event)
    expected = from_command("nonexistent-tool build", 127, output)
    assert isinstance(expected, Failure)
    assert event.event == "command.failed"
    assert failure.signature == expected.signature
    assert failure.kind is Kind.DEPENDENCY_ERROR


@encodings
def test_a_probe_that_found_nothing_is_an_outcome(encoding: Encoding) -> None:
    """Row 1: a ``grep`` that exited 1 with no output (Codex 0.171.0's ``success`` ``"true"``)
    is ``from_command``'s NoMatch, not a failure."""
    payload = logs([codex_171("grep -rn TODO src", exited(1))], resource=CODEX)
    event = only(parse(payload, encoding))
    assert event.event == "probe.no_match"
    assert isinstance(event.outcome, NoMatch)


@encodings
def test_codex_policy_refusal_is_a_rejected_action(encoding: Encoding) -> None:
    """Row 4: Codex 0.171.0 logs no ``tool_decision`` for a command its execpolicy forbids,
    only a ``tool_result`` with ``success`` ``"false"`` and the refusal as its output."""
    refusal = ('exec_command failed: CreateProcess { message: "Rejected(\\"`/bin/bash -c '
               "'rm -rf build'` rejected: policy forbids commands starting with `rm -rf "
               'build`\\")" }')
    payload = logs([codex_171("rm -rf build", refusal, success="false")], resource=CODEX)
    assert rejected(payload, encoding).action == "exec_command"


# -- row 2: a failed shell tool without command or exit status ----------------------------------


def claude_shell_failure(command: str | None, call: str) -> Record:
    """Claude Code 2.1.332's failed Bash call as the lab recorded it: no exit status, no
    output, only ``Shell command failed``; the command with ``OTEL_LOG_TOOL_DETAILS=1``."""
    details = {} if command is None else {"tool_parameters": json.dumps(
        {"bash_command": command.split()[0], "full_command": command,
         "description": "stub"})}
    return claude("tool_result", tool_name="Bash", tool_use_id=call, success="false",
                  duration_ms="0", error_type="ShellError", error="Shell command failed",
                  **details)


@encodings
def test_claude_bash_failure_without_tool_details_is_a_command_failure_from_its_text(
        encoding: Encoding) -> None:
    """Row 2: without ``OTEL_LOG_TOOL_DETAILS`` Claude Code sends only ``ShellError`` and
    ``Shell command failed``: a failure of unknown cause."""
    payload = logs([claude_shell_failure(None, "toolu_1")])
    failure = failure_of(event := only(parse(payload, encoding)))
    expected = classify_text("ShellError", "Shell command failed", surface="tool.Bash")
    assert isinstance(expected, Failure)
    assert event.event == "command.failed"
    assert failure.signature == expected.signature
    assert (failure.code, failure.error_class) == ("FC-SYS-001", "unknown")


@encodings
def test_claude_failures_of_unknown_cause_keep_their_commands_apart(
        encoding: Encoding) -> None:
    """Row 2: with the command (``OTEL_LOG_TOOL_DETAILS=1``) but no exit status, each
    command is its own signature: two different commands two, the same command twice one."""
    payload = logs([claude_shell_failure("python -m pytest -q", "toolu_1"),
                    claude_shell_failure("python report.py", "toolu_2"),
                    claude_shell_failure("python -m pytest -q", "toolu_3")])
    events = parse(payload, encoding).events
    assert [e.event for e in events] == ["command.failed"] * 3
    signatures = [failure_of(e).signature for e in events]
    assert signatures[0] == signatures[2] != signatures[1]
    assert {failure_of(e).code for e in events} == {"FC-SYS-001"}
    assert len({e.event_id for e in events}) == 3


# -- row 3: any other failed tool --------------------------------------------------------------


@encodings
def test_claude_read_enoent_is_a_missing_file(encoding: Encoding) -> None:
    """Row 3: Node's ``Error:ENOENT`` is read as FileNotFoundError."""
    message = "ENOENT: no such file or directory, open 'src/missing.py'"
    payload = logs([claude("tool_result", tool_name="Read", success="false",
                           error_type="Error:ENOENT", error=message)])
    event = only(parse(payload, encoding))
    failure = failure_of(event)
    expected = classify_text("FileNotFoundError", message, surface="tool.Read")
    assert isinstance(expected, Failure)
    assert event.event == "tool.failed"
    assert failure.code == expected.code == FC.OS_FILE_NOT_FOUND
    assert failure.context["tool"] == "Read"


@encodings
def test_gemini_tool_call_failure_is_a_tool_failure(encoding: Encoding) -> None:
    """Row 3: Gemini CLI's ``tool_call`` with ``success`` false (a boolean) and its error."""
    payload = logs([gemini("tool_call", function_name="read_file",
                           function_args=json.dumps({"absolute_path": "/repo/notes.txt"}),
                           duration_ms=3, success=False, decision="auto_accept",
                           error="File not found: /repo/notes.txt", error_type="file_not_found",
                           tool_type="native")], resource=GEMINI)
    event = only(parse(payload, encoding))
    failure = failure_of(event)
    expected = classify_text("file_not_found", "File not found: /repo/notes.txt",
                             surface="tool.read_file")
    assert isinstance(expected, Failure)
    assert event.event == "tool.failed"
    assert failure.signature == expected.signature
    assert event.session == "gm-session-1"
    assert failure.context["agent"] == "gemini-cli"
    assert failure.context["agent_version"] == GEMINI["service.version"]


# -- row 4: rejected tool calls are outcomes ----------------------------------------------------


@encodings
def test_claude_rejected_tool_is_a_rejected_action(encoding: Encoding) -> None:
    """Row 4: ``tool_decision`` ``reject`` by the user is an outcome, never a failure."""
    payload = logs([claude("tool_decision", tool_name="Edit", tool_use_id="toolu_2",
                           decision="reject", source="user_reject")])
    outcome = rejected(payload, encoding)
    assert outcome.action == "Edit"
    assert "user_reject" in outcome.reason
    assert outcome.context["agent"] == "claude-code"
    assert outcome.context["decision_source"] == "user_reject"


@encodings
def test_codex_denied_tool_is_a_rejected_action(encoding: Encoding) -> None:
    """Row 4: Codex's ``denied`` decision."""
    payload = logs([codex("tool_decision", tool_name="shell", call_id="call_9",
                          decision="denied", source="user")], resource=CODEX)
    outcome = rejected(payload, encoding)
    assert outcome.action == "shell"
    assert outcome.context["model"] == "gpt-5-codex"


@encodings
def test_gemini_rejected_tool_call_is_an_outcome_even_though_it_did_not_succeed(
        encoding: Encoding) -> None:
    """Row 4: Gemini's rejected call carries ``success`` false; the decision wins."""
    payload = logs([gemini("tool_call", function_name="run_shell_command",
                           function_args=json.dumps({"command": "rm -rf build"}),
                           success=False, decision="reject", error="cancelled by the user")],
                   resource=GEMINI)
    assert rejected(payload, encoding).action == "run_shell_command"


# -- rows 5-7: provider errors ------------------------------------------------------------------


@encodings
def test_claude_api_error_with_status_is_classified_by_http(encoding: Encoding) -> None:
    """Row 5: ``status_code`` 529 with Anthropic's error body: the HTTP classification."""
    body = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    payload = logs([claude("api_error", model="claude-sonnet-4-5-20250929", error=body,
                           status_code=529, duration_ms=30211, attempt=11,
                           request_id="req_011")])
    event = only(parse(payload, encoding))
    failure = failure_of(event)
    expected = classify_http(529, body, surface="llm.anthropic")
    assert event.event == "tool.failed"
    assert failure.code == expected.code == FC.PROV_OVERLOADED
    assert failure.context["attempt"] == 11
    assert failure.context["status_code"] == 529
    assert failure.context["model"] == "claude-sonnet-4-5-20250929"


@encodings
def test_claude_api_error_status_as_string_is_read(encoding: Encoding) -> None:
    """Row 5: older Claude Code versions send the status as a string."""
    payload = logs([claude("api_error", model="claude-opus-4-1", error="rate limited",
                           status_code="429", attempt="3")])
    failure = failure_of(only(parse(payload, encoding)))
    assert failure.code == FC.PROV_RATE_LIMIT
    assert failure.context["attempt"] == 3


@encodings
def test_claude_api_error_without_status_is_a_connection_failure(encoding: Encoding) -> None:
    """Row 5: no ``status_code`` (or ``"undefined"``): a non-HTTP error, read as the SDK's
    connection error."""
    payload = logs([claude("api_error", model="claude-sonnet-4-5", error="Connection error.",
                           status_code="undefined", attempt=11)])
    failure = failure_of(only(parse(payload, encoding)))
    expected = classify_text("anthropic.APIConnectionError", "Connection error.",
                             surface="llm.anthropic")
    assert isinstance(expected, Failure)
    assert failure.signature == expected.signature
    assert area(failure) == "PROV"
    assert "status_code" not in failure.context


@encodings
def test_gemini_api_error_is_a_provider_failure(encoding: Encoding) -> None:
    """Row 5: Gemini CLI's ``api_error`` with ``status_code`` 429 and Google's error body."""
    error = ('{"error":{"code":429,"message":"Resource has been exhausted (e.g. check '
             'quota).","status":"RESOURCE_EXHAUSTED"}}')
    payload = logs([gemini("api_error", model="gemini-2.5-pro", error=error,
                           error_type="ApiError", status_code=429, duration_ms=812,
                           auth_type="oauth-personal")], resource=GEMINI)
    failure = failure_of(event := only(parse(payload, encoding)))
    assert event.event == "tool.failed"
    assert failure.code == classify_http(429, error, surface="llm.gemini").code
    assert area(failure) == "PROV"
    assert failure.context["model"] == "gemini-2.5-pro"


@encodings
def test_codex_api_request_error_is_a_provider_failure(encoding: Encoding) -> None:
    """Row 6: a Codex ``api_request`` with status 500 and ``error.message``; ``attempt`` kept."""
    payload = logs([codex("api_request", attempt=4, duration_ms="301",
                          **{"http.response.status_code": 500,
                             "error.message": "unexpected status 500 Internal Server Error"},
                          endpoint="/responses")], resource=CODEX)
    failure = failure_of(only(parse(payload, encoding)))
    assert failure.code == FC.PROV_SERVER_ERROR
    assert failure.context["attempt"] == 4
    assert failure.context["status_code"] == 500


@encodings
def test_codex_api_request_without_status_is_a_connection_failure(encoding: Encoding) -> None:
    """Row 6: no status: the HTTP client failed, read as the SDK's connection error."""
    message = "error sending request for url (https://api.openai.com/v1/responses)"
    payload = logs([codex("api_request", attempt=1, **{"error.message": message})],
                   resource=CODEX)
    failure = failure_of(only(parse(payload, encoding)))
    assert failure.code == classify_text("openai.APIConnectionError", message,
                                         surface="llm.openai").code
    assert area(failure) == "PROV"


@encodings
def test_codex_failed_stream_is_a_provider_failure(encoding: Encoding) -> None:
    """Row 7: a ``response.failed`` SSE event: its body's error code decides."""
    body = json.dumps({"type": "response.failed", "response": {"error": {
        "code": "rate_limit_exceeded",
        "message": "Rate limit reached for gpt-5-codex. Please try again in 1.2s."}}})
    payload = logs([codex("sse_event", duration_ms="2", **{"event.kind": "response.failed",
                                                           "error.message": body})],
                   resource=CODEX)
    failure = failure_of(only(parse(payload, encoding)))
    assert failure.code == classify_text("openai.APIStatusError", body,
                                         surface="llm.openai").code == FC.PROV_RATE_LIMIT


# -- row 15: a retry that succeeded in the same request -----------------------------------------


@encodings
def test_claude_api_error_is_final_whatever_follows(encoding: Encoding) -> None:
    """Row 5/15: Claude Code logs ``api_error`` once, after its retries gave up; a later
    successful ``api_request`` of the session is the next call, so the failure stays."""
    payload = logs([
        claude("api_error", model="claude-sonnet-4-5", error="Overloaded", status_code=529,
               attempt=11),
        claude("api_request", model="claude-sonnet-4-5", cost_usd=0.01, duration_ms=900,
               input_tokens=10, output_tokens=20, time_ns=T0 + SECOND),
    ])
    batch = parse(payload, encoding)
    assert [event.event for event in batch.events] == ["tool.failed"]
    failure = failure_of(batch.events[0])
    assert failure.code == FC.PROV_OVERLOADED
    assert failure.context["attempt"] == 11
    assert (batch.items, batch.ignored) == (2, 1)


@encodings
def test_a_success_of_another_session_or_before_the_error_keeps_it(encoding: Encoding) -> None:
    """Row 15: only a later success of the same session is a retry."""
    payload = logs([
        gemini("api_response", model="m", status_code=200, time_ns=T0 - SECOND),
        gemini("api_error", model="m", error="fetch failed", status_code=503),
        gemini("api_response", "another-session", model="m", status_code=200,
               time_ns=T0 + SECOND),
    ])
    batch = parse(payload, encoding)
    assert [event.event for event in batch.events] == ["tool.failed"]
    assert batch.events[0].session == "gm-session-1"


@encodings
def test_codex_attempts_that_end_in_success_map_to_nothing(encoding: Encoding) -> None:
    """Row 15: Codex logs every attempt; a 429 then a 200 is one successful request."""
    payload = logs([
        codex("api_request", attempt=1, **{"http.response.status_code": 429,
                                            "error.message": "unexpected status 429"},
              time_ns=T0),
        codex("api_request", attempt=2, **{"http.response.status_code": 200},
              time_ns=T0 + SECOND),
    ], resource=CODEX)
    batch = parse(payload, encoding)
    assert (batch.events, batch.ignored) == ((), 2)


@encodings
def test_gemini_api_error_then_response_maps_to_nothing(encoding: Encoding) -> None:
    """Row 15: an error-free ``api_response`` later in the session."""
    payload = logs([
        gemini("api_error", model="gemini-2.5-pro", error="fetch failed", status_code=503),
        gemini("api_response", model="gemini-2.5-pro", status_code=200, duration_ms=1500,
               input_token_count=10, output_token_count=5, time_ns=T0 + SECOND),
    ], resource=GEMINI)
    assert parse(payload, encoding).events == ()


# -- successes: nothing ------------------------------------------------------------------------


@encodings
def test_successes_prompts_and_accepted_decisions_map_to_nothing(encoding: Encoding) -> None:
    """Not mapped: successful calls, accepted decisions, unknown names; a prompt or a
    conversation's start only says its session is under way: one ``session.started`` per
    session, whatever the number of records that say it."""
    payload = logs([
        claude("user_prompt", prompt_length=12, prompt="<REDACTED>"),
        claude("user_prompt", prompt_length=30, prompt="<REDACTED>", time_ns=T0 + SECOND),
        claude("tool_result", tool_name="Read", success="true", duration_ms=3),
        claude("tool_decision", tool_name="Edit", decision="accept", source="config"),
        claude("api_request", model="m", cost_usd=0.02),
        claude("api_retries_exhausted", model="m", error="Overloaded", total_attempts=11),
        codex("tool_result", tool_name="shell", success="true", output="Exit code: 0"),
        codex("tool_decision", tool_name="shell", decision="approved_for_session",
              source="user"),
        codex("conversation_starts", provider_name="OpenAI"),
        gemini("tool_call", function_name="glob", success=True, decision="auto_accept"),
        gemini("user_prompt", prompt_length=5),
        Record({"note": "no event name"}, body="plain text line"),
        Record({"event.name": "acme.deploy_finished", "success": "false"}),
    ])
    batch = parse(payload, encoding)
    assert {e.event for e in batch.events} == {"session.started"}
    # four records, three sessions: the two prompts of one session are one event (one id)
    ids = Counter((e.session, e.event_id) for e in batch.events)
    assert sorted(ids.values()) == [1, 1, 2]
    assert ids[(batch.events[0].session, batch.events[0].event_id)] == 2
    assert len({e.event_id for e in batch.events}) == len({e.session for e in batch.events}) == 3
    assert batch.ignored == batch.items - 4 == 9


# -- spans: rows 8-14 ---------------------------------------------------------------------------


AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage-bot",
         "gen_ai.conversation.id": "conv-42", "gen_ai.request.model": "gpt-4o",
         "gen_ai.provider.name": "openai"}


def tool_span(name: str, **extra: Any) -> dict[str, Any]:
    return {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": f"call_{name}", **extra}


MAKE_OUTPUT = ("cc -c src/parse.c\nsrc/parse.c:12:5: error: 'count' undeclared (first use in "
               "this function)\nmake: *** [Makefile:4: parse.o] Error 1\n")


@encodings
def test_failed_shell_tool_span_is_classified_from_its_command(encoding: Encoding) -> None:
    """Row 8: ``process.command_line`` and ``process.exit.code`` on an execute_tool span."""
    spans = Spans()
    with spans.span("invoke_agent triage-bot", AGENT), spans.span(
            "execute_tool bash", tool_span("bash", **{
                "process.command_line": "make", "process.exit.code": 2,
                "gen_ai.tool.call.result": MAKE_OUTPUT}), error="exit status 2"):
        pass
    batch = parse(spans.payload(), encoding)
    event = only(batch)
    failure = failure_of(event)
    expected = from_command("make", 2, MAKE_OUTPUT, "exit status 2")
    assert isinstance(expected, Failure)
    assert event.event == "command.failed"
    assert failure.signature == expected.signature
    assert failure.kind is Kind.BUILD_ERROR
    assert event.session == "conv-42"  # from the enclosing invoke_agent span
    assert failure.context["agent"] == "triage-bot"
    assert failure.context["tool"] == "bash"


@encodings
@pytest.mark.parametrize("code", [7, 126])
def test_the_exit_code_attribute_alone_is_read(encoding: Encoding, code: int) -> None:
    """``process.exit.code`` as the only source of the status: a status message and output
    that name no number, so a mapping that did not read the attribute could not give it."""
    output = "cc -c src/parse.c\nthe build stopped\n"
    spans = Spans()
    with spans.span("invoke_agent triage-bot", AGENT), spans.span(
            "execute_tool bash", tool_span("bash", **{
                "process.command_line": "make", "process.exit.code": code,
                "gen_ai.tool.call.result": output}), error="the tool failed"):
        pass
    failure = failure_of(only(parse(spans.payload(), encoding)))
    expected = from_command("make", code, output, "the tool failed")
    assert isinstance(expected, Failure)
    assert failure.signature == expected.signature
    assert failure.code == expected.code


@encodings
def test_failed_tool_span_with_exception_is_one_failure(encoding: Encoding) -> None:
    """Row 9: status ERROR plus the exception event: one failure, from the exception."""
    spans = Spans()
    with spans.span("invoke_agent triage-bot", AGENT), spans.span(
            "execute_tool read_file", tool_span("read_file"),
            raises=FileNotFoundError(2, "No such file or directory", "data/orders.csv")):
        pass
    event = only(parse(spans.payload(), encoding))
    failure = failure_of(event)
    assert event.event == "tool.failed"
    assert failure.code == FC.OS_FILE_NOT_FOUND
    assert failure.context["model"] == "gpt-4o"  # from the enclosing invoke_agent span
    assert failure.context["trace_id"]
    assert failure.context["span_id"]


@encodings
def test_tool_span_with_error_type_only_is_a_failure(encoding: Encoding) -> None:
    """Row 9: ``error.type`` on an execute_tool span, status left UNSET."""
    spans = Spans()
    with spans.span("execute_tool lookup_order", tool_span("lookup_order",
                                                            **{"error.type": "TimeoutError"})):
        pass
    failure = failure_of(event := only(parse(spans.payload(), encoding)))
    assert event.event == "tool.failed"
    assert failure.code == classify_text("TimeoutError", "TimeoutError",
                                         surface="tool.lookup_order").code


@encodings
def test_claude_tool_execution_span_takes_the_tool_from_its_parent(encoding: Encoding) -> None:
    """Row 10: ``claude_code.tool.execution`` fails; ``claude_code.tool`` names Bash."""
    spans = Spans(CLAUDE)
    with spans.span("claude_code.interaction", {"session.id": "cc-trace-1"}), spans.span(
            "claude_code.tool", {"tool_name": "Bash", "full_command": "pytst -q",
                                 "tool_use_id": "toolu_5", "session.id": "cc-trace-1"}):
        with spans.span("claude_code.tool.blocked_on_user", {"decision": "accept",
                                                             "source": "config"}):
            pass
        with spans.span("claude_code.tool.execution", {"success": "false",
                                                       "error": "ShellError",
                                                       "tool_use_id": "toolu_5"}):
            pass
    batch = parse(spans.payload(), encoding)
    event = only(batch)
    assert batch.items == 4
    assert event.event == "command.failed"
    assert failure_of(event).context["tool"] == "Bash"
    assert event.session == "cc-trace-1"


@encodings
def test_claude_blocked_on_user_rejection_is_an_outcome(encoding: Encoding) -> None:
    """Row 11: a ``reject`` on ``claude_code.tool.blocked_on_user``."""
    spans = Spans(CLAUDE)
    with spans.span("claude_code.tool", {"tool_name": "Write", "session.id": "cc-2"}), \
            spans.span("claude_code.tool.blocked_on_user", {"decision": "reject",
                                                            "source": "user_reject"}):
        pass
    outcome = rejected(spans.payload(), encoding)
    assert outcome.action == "Write"


@encodings
def test_failed_chat_span_with_status_is_classified_by_http(encoding: Encoding) -> None:
    """Row 12: a chat span marked ERROR with ``http.response.status_code`` 429."""
    spans = Spans()
    with spans.span("invoke_agent triage-bot", AGENT), spans.span(
            "chat gpt-4o", {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                            "gen_ai.request.model": "gpt-4o", "error.type": "429",
                            "http.response.status_code": 429}, error="Too Many Requests"):
        pass
    failure = failure_of(event := only(parse(spans.payload(), encoding)))
    assert event.event == "tool.failed"
    assert failure.code == FC.PROV_RATE_LIMIT
    assert failure.context["model"] == "gpt-4o"
    assert failure.context["status_code"] == 429


def _rate_limit_error() -> openai.RateLimitError:
    body = {"error": {"message": "Rate limit reached for gpt-4o", "type": "requests",
                      "code": "rate_limit_exceeded"}}
    request = httpx.Request("POST", "https://api.openai.com/v1/chat/completions")
    response = httpx.Response(429, request=request, json=body)
    return openai.RateLimitError("Error code: 429 - " + json.dumps(body), response=response,
                                 body=body)


@encodings
def test_chat_span_with_a_real_sdk_exception_is_read_by_its_type(encoding: Encoding) -> None:
    """Row 12: the openai SDK's own RateLimitError, recorded by the OTel SDK."""
    error = _rate_limit_error()
    spans = Spans()
    with spans.span("chat gpt-4o", {"gen_ai.operation.name": "chat",
                                    "gen_ai.provider.name": "openai",
                                    "gen_ai.request.model": "gpt-4o"}, raises=error):
        pass
    failure = failure_of(only(parse(spans.payload(), encoding)))
    expected = classify_text("openai.RateLimitError", str(error), surface="llm.openai")
    assert isinstance(expected, Failure)
    assert failure.code == expected.code == FC.PROV_RATE_LIMIT


@encodings
def test_claude_llm_request_span_that_failed_is_a_provider_failure(encoding: Encoding) -> None:
    """Row 12: ``claude_code.llm_request`` with ``success`` false and ``status_code``."""
    spans = Spans(CLAUDE)
    with spans.span("claude_code.llm_request", {
            "gen_ai.request.model": "claude-sonnet-4-5", "success": "false",
            "status_code": 529, "error": "Overloaded", "attempt": 11,
            "session.id": "cc-3"}):
        pass
    failure = failure_of(only(parse(spans.payload(), encoding)))
    assert failure.code == FC.PROV_OVERLOADED
    assert failure.context["attempt"] == 11
    assert failure.context["model"] == "claude-sonnet-4-5"


@encodings
def test_failed_chat_span_then_successful_chat_maps_to_nothing(encoding: Encoding) -> None:
    """Row 15 on spans: the later chat of the same conversation succeeded."""
    spans = Spans()
    chat = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o", "gen_ai.conversation.id": "conv-7"}
    with spans.span("chat gpt-4o", {**chat, "http.response.status_code": 503},
                    error="Service Unavailable"):
        pass
    with spans.span("chat gpt-4o", chat, ok=True):
        pass
    batch = parse(spans.payload(), encoding)
    assert (batch.events, batch.ignored) == ((), 2)


@encodings
def test_agent_span_exception_is_an_agent_failure(encoding: Encoding) -> None:
    """Row 13: an invoke_agent span that raised, with no child that recorded it."""
    spans = Spans()
    with spans.span("invoke_agent triage-bot", AGENT,
                    raises=RuntimeError("the planner produced no step")):
        pass
    failure = failure_of(event := only(parse(spans.payload(), encoding)))
    assert event.event == "agent.failed"
    assert failure.code == classify_text("RuntimeError", "the planner produced no step",
                                         surface="agent").code
    assert event.session == "conv-42"
    assert failure.context["agent"] == "triage-bot"


@encodings
def test_a_propagated_exception_is_one_failure_on_the_innermost_span(
        encoding: Encoding) -> None:
    """Rows 13-14: the same exception recorded by the tool span and the spans around it."""
    spans = Spans()
    error = FileNotFoundError(2, "No such file or directory", "config/agent.yaml")
    with pytest.raises(FileNotFoundError), spans.tracer.start_as_current_span(
            "invoke_agent triage-bot", attributes=AGENT), spans.tracer.start_as_current_span(
            "plan step"), spans.tracer.start_as_current_span(
            "execute_tool load_config", attributes=tool_span("load_config")):
        raise error
    batch = parse(spans.payload(), encoding)
    event = only(batch)
    assert batch.items == 3
    assert event.event == "tool.failed"
    assert failure_of(event).context["tool"] == "load_config"


@encodings
def test_other_span_exception_is_a_tool_failure_and_ok_spans_are_nothing(
        encoding: Encoding) -> None:
    """Row 14: a plain span that raised; an OK span with a handled exception is nothing."""
    spans = Spans()
    with spans.span("fetch inventory", raises=ConnectionRefusedError(111, "Connection refused")):
        pass
    with spans.span("warm cache", ok=True) as span:
        span.record_exception(TimeoutError("handled and retried"))
    with spans.span("render report"):
        pass
    batch = parse(spans.payload(), encoding)
    failure = failure_of(event := only(batch))
    assert event.event == "tool.failed"
    assert failure.code == classify_text("ConnectionRefusedError", "[Errno 111] Connection "
                                         "refused").code
    assert (batch.items, batch.ignored) == (3, 2)


@encodings
def test_agent_span_error_without_exception_is_nothing(encoding: Encoding) -> None:
    """Not mapped: an ERROR status on a span that is neither tool nor model call."""
    spans = Spans()
    with spans.span("invoke_agent triage-bot", AGENT, error="a child failed"):
        pass
    batch = parse(spans.payload(), encoding)
    assert (batch.events, batch.ignored) == ((), 1)


# -- the record: who, when, ids ----------------------------------------------------------------


@encodings
def test_event_time_is_the_record_time_else_the_observed_time(encoding: Encoding) -> None:
    """When: ``time_unix_nano``; when it is 0, the observed time."""
    payload = logs([claude("api_error", error="x", status_code=500),
                    codex("api_request", **{"http.response.status_code": 500})])
    batch = parse(payload, encoding)
    claude_event, codex_event = batch.events
    assert int(claude_event.ts.timestamp()) == T0 // SECOND
    observed = payload.message.resource_logs[0].scope_logs[0].log_records[1]
    assert observed.time_unix_nano == 0
    assert int(codex_event.ts.timestamp()) == observed.observed_time_unix_nano // SECOND


@encodings
def test_ids_are_the_same_for_the_same_body_and_distinct_for_distinct_items(
        encoding: Encoding) -> None:
    """Ids: a retried batch gets the same ids; every item its own, identical records too."""
    record = claude("tool_result", tool_name="Read", success="false",
                    error_type="Error:ENOENT", error="ENOENT: no such file")
    payload = logs([record, record, claude("tool_result", "cc-other", tool_name="Read",
                                           success="false", error_type="Error:ENOENT",
                                           error="ENOENT: no such file")])
    first, again = parse(payload, encoding), parse(payload, encoding)
    ids = [event.event_id for event in first.events]
    assert ids == [event.event_id for event in again.events]
    assert len(set(ids)) == 3


def test_both_encodings_name_the_same_events() -> None:
    """Both wire forms of one request are one internal form: same ids, codes, contexts."""
    spans = Spans()
    with spans.span("invoke_agent triage-bot", AGENT), spans.span(
            "execute_tool read_file", tool_span("read_file"),
            raises=FileNotFoundError(2, "No such file", "a.txt")):
        pass
    payload = spans.payload()
    proto, json_form = (parse(payload, encoding) for encoding in ENCODINGS)
    assert [e.event_id for e in proto.events] == [e.event_id for e in json_form.events]
    assert [(e.failure.code, dict(e.failure.context)) for e in proto.events if e.failure] == [
        (e.failure.code, dict(e.failure.context)) for e in json_form.events if e.failure]


def test_json_variants_proto_names_integer_enums_and_base64_ids_read_the_same() -> None:
    """OTLP/JSON: snake_case names, integer enums and base64 ids are accepted too."""
    spans = Spans()
    with spans.span("execute_tool read_file", tool_span("read_file"),
                    raises=FileNotFoundError(2, "No such file", "a.txt")):
        pass
    payload = spans.payload()
    plain = parse(payload, "json")
    variant = MessageToDict(payload.message, preserving_proto_field_name=True,
                            use_integers_for_enums=True)  # ids stay base64
    batch = parse_otlp("traces", json.dumps(variant).encode(), content_type="application/json")
    assert [e.event_id for e in batch.events] == [e.event_id for e in plain.events]


@encodings
def test_event_name_candidates(encoding: Encoding) -> None:
    """The event name: attribute, EventName field, dotted body, service-name prefix."""
    failed = {"tool_name": "Read", "success": "false", "error": "boom"}
    payload = logs([
        Record({"event.name": "claude_code.tool_result", **failed}),
        Record(failed, event_name="claude_code.tool_result"),
        Record(failed, body="claude_code.tool_result"),
        Record({"event.name": "tool_result", **failed}, body="Tool result."),
    ])
    batch = parse(payload, encoding)
    assert [event.event for event in batch.events] == ["tool.failed"] * 4
    assert {e.failure.context["otlp_event"] for e in batch.events if e.failure} == {
        "claude_code.tool_result"}


@encodings
def test_secrets_in_error_text_are_redacted(encoding: Encoding) -> None:
    """Everything goes through failcode's redaction when the event is built."""
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    payload = logs([claude("tool_result", tool_name="WebFetch", success="false",
                           error=f"401 Unauthorized for token {token}")])
    event = only(parse(payload, encoding))
    assert token not in event.to_json().decode()


# -- bounds --------------------------------------------------------------------------------------


def _nested(depth: int, leaf: str) -> Any:
    value: Any = leaf
    for _ in range(depth - 1):
        value = {"level": value}
    return value


@encodings
def test_values_deeper_than_the_bound_are_cut_not_an_error(encoding: Encoding) -> None:
    """AnyValue beyond MAX_DEPTH levels is not read: records differing only there are the
    same record; differing above it, they are not."""
    def batch_of(deep: Any) -> OtlpBatch:
        return parse(logs([claude("tool_result", tool_name="Read", success="false",
                                  error="boom", extra=deep)]), encoding)

    deep_a, deep_b = (batch_of(_nested(MAX_DEPTH + 3, leaf)) for leaf in "ab")
    shallow_a, shallow_b = (batch_of(_nested(MAX_DEPTH - 1, leaf)) for leaf in "ab")
    assert only(deep_a).event_id == only(deep_b).event_id
    assert only(shallow_a).event_id != only(shallow_b).event_id


def _deep_payload(depth: int, leaf: str, encoding: Encoding) -> bytes:
    """A request whose ``extra`` attribute nests ``depth`` levels, built on the wire forms
    themselves: the SDK's own encoder drops an attribute past the decoder's limit."""
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue

    payload = logs([claude("tool_result", tool_name="Read", success="false", error="boom",
                           extra="placeholder")])
    if encoding == "json":
        data = payload.json_dict()
        value: Any = {"stringValue": leaf}
        for _ in range(depth - 1):
            value = {"kvlistValue": {"values": [{"key": "level", "value": value}]}}
        record = data["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
        [pair] = [pair for pair in record["attributes"] if pair["key"] == "extra"]
        pair["value"] = value
        return json.dumps(data).encode()
    inner = AnyValue(string_value=leaf)
    for _ in range(depth - 1):
        outer = AnyValue()
        pair = outer.kvlist_value.values.add(key="level")
        pair.value.CopyFrom(inner)
        inner = outer
    message = payload.message
    record = message.resource_logs[0].scope_logs[0].log_records[0]
    [pair] = [pair for pair in record.attributes if pair.key == "extra"]
    pair.value.CopyFrom(inner)
    return message.SerializeToString()


@encodings
@pytest.mark.parametrize("depth", [40, 200])
def test_values_past_the_decoders_own_limit_are_cut_the_same(encoding: Encoding,
                                                             depth: int) -> None:
    """Nested past the protobuf decoder's own limit (about 32 AnyValue levels), a value is cut
    at MAX_DEPTH like any other, in both encodings: the record is read, not the batch refused,
    and the cut value is the one a value just past the bound gives."""
    def event_of(depth: int, leaf: str) -> Event:
        body = _deep_payload(depth, leaf, encoding)
        return only(parse_otlp("logs", body, content_type=CONTENT_TYPES[encoding]))

    assert event_of(depth, "a").event_id == event_of(MAX_DEPTH + 1, "b").event_id
    assert event_of(MAX_DEPTH, "a").event_id != event_of(MAX_DEPTH, "b").event_id


@encodings
def test_strings_are_cut_at_8_kib_before_classification(encoding: Encoding) -> None:
    """A string value is read up to MAX_VALUE_BYTES: what follows changes nothing."""
    def event_of(tail: str) -> Event:
        text = "é" * (MAX_VALUE_BYTES // 2) + tail  # 2 bytes each: exactly at the bound
        return only(parse(logs([claude("tool_result", tool_name="Read", success="false",
                                       error=text)]), encoding))

    first, second = event_of("first ending"), event_of("another ending")
    assert first.event_id == second.event_id
    assert failure_of(first).signature == failure_of(second).signature


@pytest.fixture(scope="module")
def many_records() -> dict[int, Payload]:
    """Requests of exactly MAX_ITEMS and MAX_ITEMS + 1 records, emitted by the SDK."""
    record = claude("tool_result", tool_name="Read", success="true")
    return {count: logs([record] * count) for count in (MAX_ITEMS, MAX_ITEMS + 1)}


@encodings
def test_more_than_max_items_is_too_large(encoding: Encoding,
                                          many_records: dict[int, Payload]) -> None:
    """Bounds: MAX_ITEMS records are read; one more is FC-SVC-004."""
    assert parse(many_records[MAX_ITEMS], encoding).items == MAX_ITEMS
    payload = many_records[MAX_ITEMS + 1]
    with pytest.raises(FailureError) as caught:
        parse_otlp("logs", payload.body(encoding), content_type=payload.content_type(encoding))
    assert caught.value.failure.code == FC.SVC_TOO_LARGE
    assert str(MAX_ITEMS) in caught.value.failure.message


# -- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize("content_type", [
    "application/grpc", "text/plain", "", "application/x-protobuf-ish", "multipart/form-data"])
def test_another_content_type_is_unsupported_media(content_type: str) -> None:
    """FC-SVC-006 names the type received and the two accepted."""
    with pytest.raises(FailureError) as caught:
        parse_otlp("logs", b"{}", content_type=content_type)
    failure = caught.value.failure
    assert failure.code == FC.SVC_UNSUPPORTED_MEDIA
    assert failure.remedy is not None
    assert "application/x-protobuf" in failure.remedy
    assert "application/json" in failure.remedy
    if content_type:
        assert content_type in failure.message


@pytest.mark.parametrize("content_type", ["application/json; charset=utf-8", "Application/JSON"])
def test_media_type_parameters_and_case_are_ignored(content_type: str) -> None:
    """``application/json; charset=utf-8`` is JSON."""
    assert parse_otlp("logs", b"{}", content_type=content_type).items == 0


@pytest.mark.parametrize(("signal", "content_type", "body"), [
    ("logs", "application/x-protobuf", b"\xff\xff\xff\xff"),
    ("traces", "application/x-protobuf", b"\x0a\x05\x12\x03\x0a\x01"),
    ("logs", "application/json", b'{"resourceLogs": ['),
    ("traces", "application/json", b"\xff\xfe not utf-8"),
])
def test_undecodable_body_is_malformed(signal: str, content_type: str, body: bytes) -> None:
    """FC-DATA-001, class ``malformed_json``, naming what was expected."""
    with pytest.raises(FailureError) as caught:
        parse_otlp(signal, body, content_type=content_type)  # type: ignore[arg-type]
    failure = caught.value.failure
    assert (failure.code, failure.error_class) == (FC.DATA_INVALID_INPUT, "malformed_json")
    expected = "protobuf" if "protobuf" in content_type else "JSON"
    assert expected in failure.message


@pytest.mark.parametrize(("signal", "body", "problem"), [
    ("logs", {"resourceLogs": [{"scopeLogs": [{}, {"logRecords": [{}, {}, {}, {
        "attributes": {"tool_name": "Bash"}}]}]}]},
     "resourceLogs[0].scopeLogs[1].logRecords[3].attributes: expected a list, got an object"),
    ("logs", {"resourceLogs": {"scopeLogs": []}},
     "resourceLogs: expected a list, got an object"),
    ("logs", {"resourceLogs": [{"scopeLogs": [{"logRecords": [{"timeUnixNano": "soon"}]}]}]},
     ("resourceLogs[0].scopeLogs[0].logRecords[0].timeUnixNano: expected an unsigned 64-bit "
      "integer (a number or a decimal string), got a string")),
    ("logs", {"resourceLogs": [{"scopeLogs": [{"logRecords": [{"attributes": [
        {"key": "attempt", "value": {"intValue": "three"}}]}]}]}]},
     ("resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].value.intValue: expected a "
      "64-bit integer (a number or a decimal string), got a string")),
    ("logs", {"resourceLogs": [{"resource": {"attributes": [{"value": {}}]}}]},
     "resourceLogs[0].resource.attributes[0].key: expected a string, got null"),
    ("traces", {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "not-an-id"}]}]}]},
     ("resourceSpans[0].scopeSpans[0].spans[0].traceId: expected 32 hex digits (or base64 of "
      "16 bytes), got a string")),
    ("traces", {"resourceSpans": [{"scopeSpans": [{"spans": [{"status": {"code": "BROKEN"}}]}]}]},
     ("resourceSpans[0].scopeSpans[0].spans[0].status.code: expected a status code (0-2 or "
      "STATUS_CODE_*), got a string")),
    ("traces", [1, 2], "the body: expected a JSON object, got a list"),
])
def test_wrong_shape_names_where(signal: str, body: Any, problem: str) -> None:
    """FC-DATA-001, class ``validation``, whose problem names the path and the expectation."""
    with pytest.raises(FailureError) as caught:
        parse_otlp(signal, json.dumps(body).encode(),  # type: ignore[arg-type]
                   content_type="application/json")
    failure = caught.value.failure
    assert (failure.code, failure.error_class) == (FC.DATA_INVALID_INPUT, "validation")
    assert failure.params["problem"] == problem


# -- never anything but FailureError -------------------------------------------------------------

_SCALARS = (st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats()
            | st.text(max_size=20) | st.sampled_from([
                "NaN", "STATUS_CODE_ERROR", "00112233445566778899aabbccddeeff",
                "0011223344556677", "false", "Exit code 127", "claude_code.tool_result",
                "tool_result", "execute_tool", "chat", "exception", "reject", "Bash"]))
_KEYS = st.sampled_from([
    "resourceLogs", "scopeLogs", "logRecords", "resourceSpans", "scopeSpans", "spans",
    "resource", "attributes", "key", "value", "stringValue", "intValue", "boolValue",
    "doubleValue", "arrayValue", "kvlistValue", "bytesValue", "values", "body", "eventName",
    "timeUnixNano", "name", "traceId", "spanId", "parentSpanId", "status", "code", "events"])


def _json_of(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    # a named function, not a lambda: hypothesis checks that ``extend`` uses its argument by
    # reading its source, which it cannot always do for a lambda spanning lines
    return st.lists(inner, max_size=4) | st.dictionaries(_KEYS | st.text(max_size=4), inner,
                                                         max_size=5)


_JSON = st.recursive(_SCALARS, _json_of, max_leaves=30)
_ATTR_KEYS = st.sampled_from([
    "event.name", "session.id", "tool_name", "success", "error", "status_code", "attempt",
    "decision", "tool_parameters", "arguments", "output", "gen_ai.operation.name",
    "gen_ai.tool.name", "error.type", "exception.type", "exception.message",
    "process.command_line", "process.exit.code", "http.response.status_code", "error.message",
    "event.kind", "service.name", "gen_ai.conversation.id", "function_name", "error_type"])


def _nested_values(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return (st.builds(lambda vs: {"arrayValue": {"values": vs}}, st.lists(inner, max_size=3))
            | st.builds(lambda kvs: {"kvlistValue": {"values": [{"key": k, "value": v}
                                                                 for k, v in kvs]}},
                        st.lists(st.tuples(_ATTR_KEYS, inner), max_size=3)))


_ANY_VALUE = st.recursive(
    st.builds(lambda v: {"stringValue": v}, st.text(max_size=30) | st.sampled_from([
        "false", "true", "Exit code 1", '{"command": "grep x f"}', "Bash", "shell",
        "execute_tool", "chat", "reject", "api_error", "claude_code.api_error", "429"]))
    | st.builds(lambda v: {"intValue": v}, st.integers(-(2**63), 2**63 - 1))
    | st.builds(lambda v: {"boolValue": v}, st.booleans())
    | st.builds(lambda v: {"doubleValue": v}, st.floats(allow_nan=False, allow_infinity=False))
    | st.just({}),
    _nested_values, max_leaves=15)
_RANDOM_ATTRS = st.lists(st.builds(lambda k, v: {"key": k, "value": v}, _ATTR_KEYS, _ANY_VALUE),
                         max_size=6)


def _as_attrs(values: dict[str, Any]) -> list[dict[str, Any]]:
    """A dict as OTLP/JSON attributes (``{"key", "value": {"stringValue"...}}``)."""
    def value(item: Any) -> dict[str, Any]:
        if isinstance(item, bool):
            return {"boolValue": item}
        if isinstance(item, int):
            return {"intValue": str(item)}
        return {"stringValue": item}
    return [{"key": key, "value": value(item)} for key, item in values.items()]


_TEXTS = st.sampled_from([
    BASH_127, f"Exit code: 101\nOutput:\n{CARGO_OUTPUT}", "Process exited with code 1\nOutput:",
    "ENOENT: no such file", "Overloaded", '{"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}',
    "command timed out after 10s", "", "x" * 50])
# attributes as the agents write them, so the rules are reached, not only the decoder
_AGENT_ATTRS = st.fixed_dictionaries({}, optional={
    "event.name": st.sampled_from([
        "claude_code.tool_result", "tool_result", "codex.tool_result", "gemini_cli.tool_call",
        "claude_code.api_error", "api_error", "codex.api_request", "codex.sse_event",
        "claude_code.tool_decision", "codex.tool_decision", "claude_code.api_request",
        "gemini_cli.api_response", "gemini_cli.api_error", "acme.other"]),
    "session.id": st.sampled_from(["s1", "s2", " ", "x" * 300]),
    "gen_ai.operation.name": st.sampled_from(["execute_tool", "chat", "invoke_agent", "x"]),
    "tool_name": st.sampled_from(["Bash", "Read", "shell", "exec_command", "run_shell_command"]),
    "gen_ai.tool.name": st.sampled_from(["bash", "read_file"]),
    "success": st.sampled_from(["false", "true", False, True, "maybe"]),
    "decision": st.sampled_from(["reject", "accept", "denied", "approved"]),
    "error": _TEXTS, "output": _TEXTS, "error.message": _TEXTS,
    "error_type": st.sampled_from(["ShellError", "Error:ENOENT", "a b", "x.y.Z"]),
    "error.type": st.sampled_from(["429", "TimeoutError", "_OTHER"]),
    "status_code": st.sampled_from([429, 529, 200, "500", "undefined", -1, 2**40]),
    "http.response.status_code": st.sampled_from([429, 200, 503]),
    "attempt": st.integers(-3, 20),
    "tool_parameters": st.sampled_from(['{"full_command": "pytst -q"}', "{", "[1]"]),
    "arguments": st.sampled_from(['{"command": ["bash", "-lc", "cargo build"]}',
                                  '{"cmd": "grep -rn x ."}', '{"command": [1, 2]}']),
    "process.command_line": st.sampled_from(["make", "npm test"]),
    "process.exit.code": st.integers(-300, 300),
    "event.kind": st.sampled_from(["response.completed", "response.failed"]),
})
_ATTRS = st.one_of(_RANDOM_ATTRS, _AGENT_ATTRS.map(_as_attrs),
                   st.tuples(_AGENT_ATTRS.map(_as_attrs), _RANDOM_ATTRS).map(
                       lambda pair: pair[0] + pair[1]))
_IDS = st.sampled_from(["", "00112233445566778899aabbccddeeff",
                        "ffeeddccbbaa99887766554433221100"])
_SPAN_IDS = st.sampled_from(["", "0011223344556677", "8899aabbccddeeff", "0123456789abcdef"])
_EXCEPTION = st.fixed_dictionaries({"exception.type": st.sampled_from([
    "FileNotFoundError", "openai.RateLimitError", "RuntimeError"]),
    "exception.message": _TEXTS}).map(_as_attrs)
_RECORDS = st.fixed_dictionaries({"attributes": _ATTRS}, optional={
    "body": _ANY_VALUE, "eventName": st.sampled_from(["", "codex.tool_result", "x"]),
    "timeUnixNano": st.sampled_from([0, T0, T0 + SECOND]).map(str),
    "observedTimeUnixNano": st.integers(0, 2**64 - 1)})
_SPANS = st.fixed_dictionaries({
    "attributes": _ATTRS, "traceId": _IDS, "spanId": _SPAN_IDS, "parentSpanId": _SPAN_IDS,
    "name": st.sampled_from(["execute_tool bash", "chat", "claude_code.tool.execution",
                             "claude_code.tool", "claude_code.llm_request", "invoke_agent", "x"])},
    optional={
    "status": st.fixed_dictionaries({}, optional={
        "code": st.sampled_from([0, 1, 2, "STATUS_CODE_ERROR", "STATUS_CODE_OK"]),
        "message": st.text(max_size=10)}),
    "events": st.lists(st.fixed_dictionaries({"name": st.sampled_from(["exception", "x"]),
                                              "attributes": _EXCEPTION | _RANDOM_ATTRS}),
                       max_size=3),
    "endTimeUnixNano": st.sampled_from([0, T0, T0 + SECOND])})
_RESOURCE = st.fixed_dictionaries({"attributes": _RANDOM_ATTRS})
_LOGS_REQUEST = st.builds(lambda blocks: {"resourceLogs": blocks}, st.lists(
    st.fixed_dictionaries({"resource": _RESOURCE, "scopeLogs": st.lists(
        st.fixed_dictionaries({"logRecords": st.lists(_RECORDS, max_size=4)}), max_size=2)}),
    max_size=2))
_TRACES_REQUEST = st.builds(lambda blocks: {"resourceSpans": blocks}, st.lists(
    st.fixed_dictionaries({"resource": _RESOURCE, "scopeSpans": st.lists(
        st.fixed_dictionaries({"spans": st.lists(_SPANS, max_size=5)}), max_size=2)}),
    max_size=2))
_CONTENT_TYPES = st.sampled_from(["application/json", "application/x-protobuf"])
_SIGNALS = st.sampled_from(["logs", "traces"])


def _never_raises_otherwise(signal: Any, body: bytes, content_type: str) -> None:
    try:
        batch = parse_otlp(signal, body, content_type=content_type)
    except FailureError:
        return
    assert batch.items == batch.failures + batch.outcomes + batch.ignored
    assert len(batch.events) == batch.failures + batch.outcomes


_BODIES = st.one_of(st.binary(max_size=300), _JSON.map(lambda v: json.dumps(v).encode()),
                    _LOGS_REQUEST.map(lambda v: json.dumps(v).encode()),
                    _TRACES_REQUEST.map(lambda v: json.dumps(v).encode()))


@given(_SIGNALS, _BODIES, _CONTENT_TYPES)
def test_any_bytes_raise_nothing_but_failure_error(signal: str, body: bytes,
                                                    content_type: str) -> None:
    """Random bytes, random JSON and random OTLP-shaped JSON, to both doors in both types."""
    _never_raises_otherwise(signal, body, content_type)


@pytest.mark.deep
@settings(max_examples=5000, suppress_health_check=[HealthCheck.too_slow])
@given(_SIGNALS, _BODIES, _CONTENT_TYPES)
def test_any_bytes_raise_nothing_but_failure_error_deep(signal: str, body: bytes,
                                                         content_type: str) -> None:
    """The same, with a large budget (``pytest -m deep``)."""
    _never_raises_otherwise(signal, body, content_type)


def _b64_ids(value: Any) -> Any:
    """OTLP/JSON's hex ids as the base64 ``ParseDict`` expects of bytes fields."""
    if isinstance(value, dict):
        return {key: (base64_of(item) if key in ("traceId", "spanId", "parentSpanId")
                      else _b64_ids(item)) for key, item in value.items()}
    if isinstance(value, list):
        return [_b64_ids(item) for item in value]
    return value


def base64_of(hex_id: str) -> str:
    return base64.b64encode(bytes.fromhex(hex_id)).decode()


@given(st.one_of(_LOGS_REQUEST.map(lambda v: ("logs", v)),
                 _TRACES_REQUEST.map(lambda v: ("traces", v))))
def test_a_request_maps_the_same_as_protobuf_and_as_json(request: tuple[str, Any]) -> None:
    """Any request both encodings accept maps to the same events in both."""
    signal, data = request
    message = ExportLogsServiceRequest() if signal == "logs" else ExportTraceServiceRequest()
    try:
        ParseDict(_b64_ids(data), message)
    except Exception:  # noqa: BLE001 - json_format rejects many shapes its own way
        assume(False)
    try:
        from_json: OtlpBatch | None = parse_otlp(
            signal, json.dumps(data).encode(),  # type: ignore[arg-type]
            content_type="application/json")
    except FailureError:
        from_json = None
    assume(from_json is not None)
    assert from_json is not None
    from_pb = parse_otlp(signal, message.SerializeToString(),  # type: ignore[arg-type]
                         content_type="application/x-protobuf")
    assert [e.event_id for e in from_pb.events] == [e.event_id for e in from_json.events]
    assert [msgspec.to_builtins(e.failure.code if e.failure else e.outcome)
            for e in from_pb.events] == [
        msgspec.to_builtins(e.failure.code if e.failure else e.outcome)
        for e in from_json.events]
    assert (from_pb.items, from_pb.ignored) == (from_json.items, from_json.ignored)
