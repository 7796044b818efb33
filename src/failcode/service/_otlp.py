"""The OTLP door of ``failcode serve``: one OTLP/HTTP request body in, failcode events out.

:func:`parse_otlp` is pure (no I/O; the clock only for an event with no time of its own): it
decodes an ``ExportLogsServiceRequest`` or ``ExportTraceServiceRequest``, as protobuf or as
OTLP/JSON, into one internal form, and maps that form to failure and outcome events in one
pass. The reference table, row by row with its sources, is docs/service-otlp.md.

Rules (decoding):

- ``application/x-protobuf`` is decoded with the ``opentelemetry-proto`` messages,
  ``application/json`` as OTLP/JSON (lowerCamelCase field names, the proto names accepted too;
  unknown fields ignored; ``traceId``/``spanId`` as hex, base64 accepted; 64-bit integers as
  numbers or decimal strings; enums as integers or their names). Media-type parameters
  (``; charset=utf-8``) and case are ignored. Any other type is ``FC-SVC-006`` naming the type
  received and the two accepted. The body arrives decompressed.
- A body that does not decode (not protobuf of the request message, not JSON) is
  ``FC-DATA-001`` of class ``malformed_json``; JSON of the wrong shape is ``FC-DATA-001`` of
  class ``validation`` whose problem names where, e.g.
  ``resourceLogs[0].scopeLogs[1].logRecords[3].attributes: expected a list, got an object``.
  Only the fields read are checked. Nothing else is ever raised, whatever the bytes.
- Bounds: at most :data:`MAX_ITEMS` (10,000) log records plus spans per request, more is
  ``FC-SVC-004``; AnyValue nesting at most :data:`MAX_DEPTH` (8) levels, an attribute's value
  being level 1: a value deeper is cut (read as absent), not an error; every string and bytes
  value is cut at :data:`MAX_VALUE_BYTES` (8 KiB of UTF-8) before anything reads it.

Rules (mapping; every item, a log record or a span, counts once in ``items`` and once in
exactly one of ``failures``, ``outcomes``, ``ignored``):

- A log record's event name is its ``event.name`` attribute, else its ``EventName`` field,
  else its body when the body is a dotted name (``claude_code.api_error``). An undotted name
  (Claude Code's ``event.name`` is ``api_error``) takes the dotted candidate that ends with it
  (Claude Code's body), else the prefix of its resource's ``service.name`` (``claude-code`` ->
  ``claude_code``, ``gemini-cli`` -> ``gemini_cli``, ``codex*`` -> ``codex``). The part after
  the first dot decides the rule, so any agent emitting the same shapes maps the same way.
- A tool call that was refused (``decision`` ``reject``, ``rejected``, ``deny``, ``denied``,
  ``abort``, ``aborted``, ``timed_out``, ``user_reject``, ``user_abort``: a ``tool_decision``
  event, a Gemini ``tool_call``, a tool span such as ``claude_code.tool.blocked_on_user``) is a
  :class:`~failcode.RejectedAction` outcome, never a failure. Any other decision maps to
  nothing. So is a tool result the agent's rules refused before it ran (``success`` false):
  ``error_type`` ``policy_violation`` (Gemini CLI 0.61.0) or ``execution_denied`` (Qwen Code
  0.24.4), Codex's output ``Rejected(... rejected: policy forbids ...)`` (0.171.0: a refusal
  has no ``tool_decision``), a tool span whose ``tool.failure_kind`` is ``permission_denied``
  (Qwen Code's ``qwen-code.tool``).
- A tool result (``tool_result``/``tool_call``) whose ``success`` is false is a failure: a
  shell tool's (``Bash``, ``shell``, ``exec_command``, ``run_shell_command``...)
  ``command.failed``, any other's ``tool.failed``. So is a shell tool's result whose
  ``success`` is true but whose exit status is known and not 0: Codex 0.171.0 marks every
  command that ran ``success`` ``"true"`` (the status is in its ``output`` text,
  ``Process exited with code N``), Gemini CLI 0.61.0 every one ``true`` (the status is in
  its ``metadata`` attribute, ``{"exitCode": N, "isError": true}``). When the command (Claude's
  ``tool_parameters``, Codex's ``arguments``, Gemini's ``function_args``) and its exit status
  (an ``exit_code`` attribute, Codex's output metadata, or the text: ``Exit code 127``,
  ``Exit code: 1``, ``Process exited with code 2``) are known, or the text says the command
  timed out, :func:`~failcode.from_command` classifies it with the output as its text, and may
  answer an outcome (a probe that found nothing, a cancellation); otherwise
  :func:`~failcode.classify_text` classifies the error text under its ``error_type`` (Node's
  ``Error:ENOENT`` read as ``FileNotFoundError``; a span's ``error_class``, Claude Code's
  ``ShellError``, before its ``error.type``): a shell command's with the command added to the
  text, so a failure of unknown cause (Claude Code 2.1.332's every failed command is
  ``Shell command failed``, no status, no output) has one signature per command, never one
  for all. A success, or no ``success`` at all, maps to nothing.
- A provider error is a ``tool.failed`` failure: an ``api_error`` event; a Codex
  ``api_request`` with ``error.message`` or a status >= 400; a Codex ``sse_event`` or
  ``websocket_request`` with ``error.message``; a model-call span (below) that failed. A status
  >= 400 (``status_code``, ``http.response.status_code``) is classified by
  :func:`~failcode.classify_http` with the error text as its body; anything else by
  :func:`~failcode.classify_text`, the text read as an exception of the SDK the agent calls: a
  request that got no HTTP answer (Claude Code documents an ``api_error`` without
  ``status_code`` as a connection failure) as ``anthropic.APIConnectionError`` /
  ``openai.APIConnectionError``, a failed Codex stream as ``openai.APIStatusError``, Gemini's as
  ``google.genai.errors.APIError``; a span's as its exception's type, else its ``error.type``,
  else its provider's (``gen_ai.provider.name``) SDK type. ``attempt`` is kept in the context.
- A provider error followed later in the same request (by time, then by position) by a
  successful provider call of the same session (else of the same resource) was retried, and
  maps to nothing: Claude Code's ``api_request``; a Codex ``api_request`` without error and
  with a status < 400, a completed ``sse_event``; an error-free ``api_response``; a model-call
  span that did not fail. Claude Code's ``api_error`` is never dropped this way: it is logged
  once, when the retries gave up.
- Across requests. An agent that retries provider errors by itself and logs each failed
  attempt (Codex ``api_request`` attempt 0, 1, 2 of each round; Gemini CLI an ``api_error``
  log *and* a failed ``llm_call`` span, exported in separate requests) names every record
  of one error of one session by one event id, derived from (session, HTTP status, error
  text) with no time (a Gemini span's status read from its ``{"error":{"code":N}}``
  message): the store keeps it once, whatever the attempts, rounds and signals. What this
  cannot tell: a recovery exported in a later request than its failure (Codex's 429, Gemini
  CLI's 429) leaves that failure stored, once; and a second outage of the same status and
  text in the same session is the first one again. Neither agent records a give-up.
- A tool call's event (a failure or a refusal) whose record names the agent's call id
  (``tool_use_id``, ``call_id``, ``gen_ai.tool.call.id``, ``gen_ai.tool.call_id``,
  ``tool.call_id``) and a session has the call's id (:func:`~failcode.events.call_event_id`,
  as ``failcode hook`` names it), so the log record and the span of one call (Qwen Code
  0.24.4 exports both; Claude Code with traces on) and the hook's report are one event: the
  store keeps the first to arrive (a later one adds only the step it lacks). These events are
  marked in :attr:`OtlpBatch.tool_calls`: the service drops them for a session whose hooks
  said they report its calls (:func:`failcode.service._service.hooked_sessions`).
- A session's start: a ``*.user_prompt``, ``codex.conversation_starts`` or ``session.start``
  record of a session is one ``session.started`` (``by`` ``otlp``) per session, its id derived
  from the session alone, so a session is in the service even when nothing in it failed.
  Claude Code's ``api_error`` (its final one) says in ``session.ended`` that the session ended
  on it (``provider_error``).
- Spans. A tool span (``gen_ai.operation.name`` ``execute_tool`` or Gemini's ``tool_call``, a
  name starting ``execute_tool``, Claude Code's ``claude_code.tool.execution``, whose tool name
  and command are read from its parent ``claude_code.tool`` span when the request holds it)
  fails with status ERROR, an ``error.type``, ``success`` false, or an ``exception`` event
  while not OK, and maps like a tool result (command from ``process.command_line``,
  ``process.command_args``, ``full_command`` or ``gen_ai.tool.call.arguments``; exit status
  from ``process.exit.code`` or the text; output ``gen_ai.tool.call.result``). A model-call
  span (``chat``, ``text_completion``, ``generate_content``, ``embeddings``, Gemini's
  ``llm_call``; ``claude_code.llm_request``) fails the same way and maps as a provider error.
  A failed tool or model span is one failure, its last exception read as its text. Any other
  span that is not OK and records ``exception`` events is one failure classified from its last
  exception (``exception.type``, ``exception.message``, ``exception.stacktrace``):
  ``agent.failed`` for an agent span (``invoke_agent``, ``create_agent``,
  ``invoke_workflow``), ``tool.failed`` otherwise; unless the exception propagated: a child
  span in the request recorded it too (same type and message; it maps once, on the innermost
  span), or an enclosing failed tool or model span records it (that span maps it). A span with
  status OK maps to nothing (an exception on it was handled), as does one UNSET or ERROR that
  no rule above names.
- Who: session = ``gen_ai.conversation.id``, else ``session.id``, else ``conversation.id``;
  agent = ``gen_ai.agent.name``, else the resource's ``service.name``; model =
  ``gen_ai.request.model``, else ``gen_ai.response.model``, else ``model``: each key looked up
  in the item's attributes, then (a span's) its ancestors' in the request, then its
  resource's. agent_version = ``service.version``, else ``app.version``; never a Node
  runtime's version (``v20.20.2``: ``v`` and three numbers from a resource whose
  ``process.runtime.name`` is Node's, or Gemini CLI's, which sets ``process.version`` there):
  Gemini CLI 0.61.0's own version is in no record, so it has none. The record's
  ``context`` gets ``agent``, ``agent_version``, ``model`` and, when known, ``tool``,
  ``status_code``, ``attempt``, ``decision_source``, ``otlp_event`` (the event or span name),
  ``trace_id``, ``span_id``; the event factories redact everything.
- When: a log record's ``time_unix_nano``, else its ``observed_time_unix_nano``; a span's
  ``end_time_unix_nano``, else its start; none (0) is the time the event is built. Source:
  ``otlp``.
- Ids (but for the two rules above) are :func:`~failcode.events.derived_event_id` of the
  item's time and what identifies it, so a retried batch names its events as before and the
  store keeps them once: a span by trace id and span id (plus ``exception`` and the event's
  index for an exception-only failure); a log record by time, event name, session, a BLAKE2b
  digest of its body, attributes and resource attributes, and its ordinal among identical
  records of the request.

Sources: Claude Code monitoring (https://code.claude.com/docs/en/monitoring-usage: events,
standard attributes, traces beta); OpenAI Codex ``codex-rs/otel`` in
https://github.com/openai/codex (``src/events/session_telemetry.rs``: ``codex.api_request``,
``codex.sse_event``, ``codex.tool_decision``, ``codex.tool_result``; ``src/events/shared/log.rs``:
``conversation.id``, ``app.version``, ``model``) and
https://developers.openai.com/codex/config-advanced; Gemini CLI telemetry
(https://github.com/google-gemini/gemini-cli/blob/main/docs/cli/telemetry.md); OpenTelemetry
semantic conventions: GenAI client and agent spans
(https://opentelemetry.io/docs/specs/semconv/gen-ai/), recording errors
(https://opentelemetry.io/docs/specs/semconv/general/recording-errors/), exceptions on spans
(https://opentelemetry.io/docs/specs/semconv/exceptions/exceptions-spans/); OTLP/HTTP and its
JSON encoding (https://opentelemetry.io/docs/specs/otlp/).
"""
from __future__ import annotations

import base64
import binascii
import contextlib
import functools
import hashlib
import re
import shlex
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, Literal

import msgspec

from failcode import (
    FC,
    Failure,
    FailureError,
    NonErrorOutcome,
    RejectedAction,
    Scalar,
    SessionStarted,
    classify_http,
    classify_text,
    from_command,
    redact,
)
from failcode._lazy_re import lazy
from failcode.events import Event, derived_event_id, failure_event, outcome_event
from failcode.events._ids import call_event_id
from failcode.record._outcomes import ENDED_KEY

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

__all__ = ["MAX_DEPTH", "MAX_ITEMS", "MAX_VALUE_BYTES", "OtlpBatch", "parse_otlp"]

MAX_ITEMS: Final = 10_000
"""The most log records plus spans one request may hold."""
MAX_DEPTH: Final = 8
"""The deepest AnyValue level read (an attribute's value is level 1); deeper is cut."""
MAX_VALUE_BYTES: Final = 8 * 1024
"""Each string or bytes value is cut at this many bytes (UTF-8) before it is read."""

PROTOBUF: Final = "application/x-protobuf"
JSON: Final = "application/json"


class OtlpBatch(msgspec.Struct, frozen=True, kw_only=True):
    """What one OTLP/HTTP request maps to.

    Attributes:
        events: the failure and outcome events, in request order, with derived ids.
        items: the log records plus spans read.
        failures: the failure events among ``events``.
        outcomes: the outcome events among ``events``.
        ignored: the items that map to nothing (successes, prompts, unknown event names,
            retried provider errors, propagated exceptions).
        tool_calls: the ids of the events among ``events`` that report what one tool call
            did (a failed or refused call): what an agent's hooks report too.
    """

    events: tuple[Event, ...]
    items: int
    failures: int
    outcomes: int
    ignored: int
    tool_calls: frozenset[str] = frozenset()


# ---------------------------------------------------------------------------------------------
# the internal form both encodings decode to


class _Resource(msgspec.Struct):
    index: int
    attrs: dict[str, Any]
    digest: str = ""


class _Log(msgspec.Struct):
    resource: _Resource
    ordinal: int
    attrs: dict[str, Any]
    body: Any
    event_name: str
    time_ns: int
    observed_ns: int


class _SpanEvent(msgspec.Struct):
    name: str
    time_ns: int
    attrs: dict[str, Any]


class _Span(msgspec.Struct):
    resource: _Resource
    ordinal: int
    attrs: dict[str, Any]
    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    status_code: int
    status_message: str
    start_ns: int
    end_ns: int
    events: list[_SpanEvent]


_STATUS_OK: Final = 1
_STATUS_ERROR: Final = 2
_STATUS_NAMES: Final = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
_UINT64: Final = 2**64
_INT64: Final = 2**63


def _cut_text(text: str) -> str:
    """``text`` cut at :data:`MAX_VALUE_BYTES` bytes of UTF-8 (never inside a character)."""
    if len(text) <= MAX_VALUE_BYTES // 4:
        return text
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= MAX_VALUE_BYTES:
        return text
    return data[:MAX_VALUE_BYTES].decode("utf-8", "ignore")


def otlp_problem(signal: str, problem: str, error_class: str) -> FailureError:
    """FC-DATA-001 of ``error_class`` for a body of ``signal`` that cannot be read."""
    return FailureError(FC.DATA_INVALID_INPUT.failure(
        surface="service.otlp", error_class=error_class,
        params={"problem": problem[:400]}, metadata={"signal": signal}))


def _too_large(signal: str, count: int, *, at_least: bool = False) -> FailureError:
    what = "log records" if signal == "logs" else "spans"
    return FailureError(FC.SVC_TOO_LARGE.failure(
        surface="service.otlp", params={
            "problem": f"the request holds {'at least ' if at_least else ''}{count} {what}, "
                       f"at most {MAX_ITEMS} are accepted per request"}))


# -- protobuf ---------------------------------------------------------------------------------


@functools.cache
def _messages() -> tuple[Any, Any]:
    """The two request messages of ``opentelemetry-proto``, imported on first use."""
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (  # noqa: PLC0415
        ExportLogsServiceRequest,
    )
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: PLC0415
        ExportTraceServiceRequest,
    )

    return ExportLogsServiceRequest, ExportTraceServiceRequest


def _pb_value(value: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        return None
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return _cut_text(value.string_value)
    if kind in {"int_value", "bool_value", "double_value"}:
        return getattr(value, kind)
    if kind == "array_value":
        return [_pb_value(item, depth + 1) for item in value.array_value.values]
    if kind == "kvlist_value":
        return {pair.key: _pb_value(pair.value, depth + 1) for pair in value.kvlist_value.values}
    if kind == "bytes_value":
        return bytes(value.bytes_value[:MAX_VALUE_BYTES])
    return None


def _pb_attrs(pairs: Iterable[Any]) -> dict[str, Any]:
    return {pair.key: _pb_value(pair.value, 1) for pair in pairs}


def from_protobuf(signal: str, message: Any, body: bytes) -> Any:
    """``body`` decoded as the protobuf ``message`` class of ``signal``'s export request, else
    FC-DATA-001 (``malformed_json``) naming it."""
    try:
        return message.FromString(body)
    except Exception as exc:  # noqa: BLE001 - protobuf's errors vary by backend; all mean "not it"
        text = str(exc).replace("\n", " ")[:160] or type(exc).__name__
        raise otlp_problem(signal, f"the body is not an OTLP {message.__name__} protobuf message "
                               f"({text})", "malformed_json") from None


def unsupported_media(signal: str, content_type: object) -> FailureError:
    """FC-SVC-006 for a body of another type than the OTLP/HTTP doors read."""
    shown = redact(content_type[:100]) if isinstance(content_type, str) else ""
    return FailureError(FC.SVC_UNSUPPORTED_MEDIA.failure(
        surface="service.otlp", params={
            "problem": f"Content-Type {shown!r} on /v1/{signal}" if shown
                       else f"no Content-Type on /v1/{signal}",
            "expected": f"{PROTOBUF} or {JSON} (OTLP/HTTP)"}))


_ANY_VALUE: Final = "opentelemetry.proto.common.v1.AnyValue"


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """The varint at ``data[at:]`` and where it ends (ValueError when cut or over 10 bytes)."""
    value = shift = 0
    for end in range(at, min(at + 10, len(data))):
        byte = data[end]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, end + 1
        shift += 7
    raise ValueError("a varint runs past its end")


def _cut_deep(data: bytes, descriptor: Any, depth: int) -> bytes:
    """``data``, a message of ``descriptor``, with every AnyValue deeper than MAX_DEPTH levels
    emptied (read as absent, as the JSON walker cuts it); everything else kept byte for byte.

    The protobuf decoder refuses a whole request nested past its own limit (100 messages:
    about 32 AnyValue levels); cutting first makes both encodings read the same batch.
    ``depth`` is the AnyValue level ``data`` is at (0 outside any). Raises ValueError for
    bytes that are not wire format (the decoder then names the problem).
    """
    fields = {field.number: field.message_type for field in descriptor.fields
              if field.message_type is not None}
    out = bytearray()
    at = 0
    while at < len(data):
        start = at
        tag, at = _varint(data, at)
        tag_end, wire = at, tag & 7
        if wire == 0:
            _, at = _varint(data, at)
        elif wire in (1, 5):
            at += 8 if wire == 1 else 4
        elif wire == 2:
            size, begin = _varint(data, at)
            at = begin + size
            inner = fields.get(tag >> 3)
            if inner is not None and at <= len(data):
                level = depth + (inner.full_name == _ANY_VALUE)
                kept = b"" if level > MAX_DEPTH else _cut_deep(data[begin:at], inner, level)
                out += data[start:tag_end] + _encode_varint(len(kept)) + kept
                continue
        else:
            raise ValueError(f"wire type {wire} is not read here")
        if at > len(data):
            raise ValueError("a field runs past its message")
        out += data[start:at]
    return bytes(out)


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _decode_pb(signal: str, body: bytes) -> tuple[list[_Log], list[_Span]]:
    logs_message, traces_message = _messages()
    message = logs_message if signal == "logs" else traces_message
    try:
        request = message.FromString(body)
    except Exception:  # noqa: BLE001 - protobuf's errors vary by backend; retried below
        # nested past the decoder's limit is cut at MAX_DEPTH like JSON; else the error
        with contextlib.suppress(ValueError):
            body = _cut_deep(body, message.DESCRIPTOR, 0)
        request = from_protobuf(signal, message, body)
    if signal == "logs":
        count = sum(len(scope.log_records) for resource in request.resource_logs
                    for scope in resource.scope_logs)
        if count > MAX_ITEMS:
            raise _too_large(signal, count)
        logs: list[_Log] = []
        for index, block in enumerate(request.resource_logs):
            resource = _Resource(index, _pb_attrs(block.resource.attributes))
            for scope in block.scope_logs:
                for record in scope.log_records:
                    logs.append(_Log(
                        resource, len(logs), _pb_attrs(record.attributes),
                        _pb_value(record.body, 1) if record.HasField("body") else None,
                        _cut_text(record.event_name), record.time_unix_nano,
                        record.observed_time_unix_nano))
        return logs, []
    count = sum(len(scope.spans) for resource in request.resource_spans
                for scope in resource.scope_spans)
    if count > MAX_ITEMS:
        raise _too_large(signal, count)
    spans: list[_Span] = []
    for index, block in enumerate(request.resource_spans):
        resource = _Resource(index, _pb_attrs(block.resource.attributes))
        for scope in block.scope_spans:
            for span in scope.spans:
                spans.append(_Span(
                    resource, len(spans), _pb_attrs(span.attributes), _cut_text(span.name),
                    span.trace_id.hex(), span.span_id.hex(), span.parent_span_id.hex(),
                    span.status.code, _cut_text(span.status.message), span.start_time_unix_nano,
                    span.end_time_unix_nano,
                    [_SpanEvent(_cut_text(event.name), event.time_unix_nano,
                                _pb_attrs(event.attributes)) for event in span.events]))
    return [], spans


# -- OTLP/JSON --------------------------------------------------------------------------------


def shown_type(value: object) -> str:
    """What kind of JSON value ``value`` is, as a problem names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (int, float)):
        return "a number"
    return "a list" if isinstance(value, list) else "an object"


class _Json:
    """The OTLP/JSON walker of one request: each reader names the path it checks."""

    def __init__(self, signal: str) -> None:
        self.signal = signal

    def fail(self, where: str, expected: str, value: object) -> FailureError:
        return otlp_problem(self.signal, f"{where}: expected {expected}, got {shown_type(value)}",
                        "validation")

    @staticmethod
    def get(obj: dict[str, Any], camel: str, snake: str) -> Any:
        value = obj.get(camel)
        return obj.get(snake) if value is None and snake != camel else value

    def obj(self, value: Any, where: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(where, "an object", value)
        return value

    def items(self, value: Any, where: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(where, "a list", value)
        return value

    def text(self, value: Any, where: str) -> str:
        if value is None:
            return ""
        if not isinstance(value, str):
            raise self.fail(where, "a string", value)
        return _cut_text(value)

    def uint64(self, value: Any, where: str) -> int:
        if value is None:
            return 0
        if type(value) is int and 0 <= value < _UINT64:
            return value
        if isinstance(value, str) and value.isdecimal() and len(value) <= 20 and value.isascii():
            number = int(value)
            if number < _UINT64:
                return number
        if type(value) is float and value.is_integer() and 0 <= value < _UINT64:
            return int(value)
        raise self.fail(where, "an unsigned 64-bit integer (a number or a decimal string)",
                        value)

    def int64(self, value: Any, where: str) -> int:
        if type(value) is int and -_INT64 <= value < _INT64:
            return value
        if isinstance(value, str) and value.isascii():
            digits = value[1:] if value[:1] == "-" else value
            if digits.isdecimal() and len(digits) <= 19:
                number = int(value)
                if -_INT64 <= number < _INT64:
                    return number
        if type(value) is float and value.is_integer() and -_INT64 <= value < _INT64:
            return int(value)
        raise self.fail(where, "a 64-bit integer (a number or a decimal string)", value)

    def double(self, value: Any, where: str) -> float:
        if type(value) in (int, float):
            return float(value)
        if isinstance(value, str) and (value in ("NaN", "Infinity", "-Infinity")
                                       or _JSON_NUMBER.fullmatch(value)):
            return float(value)  # ProtoJSON's string forms of a double
        raise self.fail(where, "a number (or NaN, Infinity, -Infinity)", value)

    def ident(self, value: Any, where: str, size: int) -> str:
        """A trace or span id: ``size`` bytes as hex (the OTLP/JSON rule), or base64."""
        if value is None or value == "":
            return ""
        if isinstance(value, str):
            if len(value) == 2 * size:
                try:
                    return bytes.fromhex(value).hex()
                except ValueError:
                    pass
            try:
                raw = base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                raw = b""
            if len(raw) == size:
                return raw.hex()
        raise self.fail(where, f"{2 * size} hex digits (or base64 of {size} bytes)", value)

    def value(self, value: Any, where: str, depth: int) -> Any:
        """An AnyValue object (``{"stringValue": ...}``...); absent or deeper than the bound:
        None."""
        if depth > MAX_DEPTH or value is None:
            return None
        if not isinstance(value, dict):
            raise self.fail(where, "an AnyValue object", value)
        for camel, snake in _ANY_FIELDS:
            found = value.get(camel)
            key = camel
            if found is None:
                found = value.get(snake)
                key = snake
            if found is None:
                continue
            at = f"{where}.{key}"
            if camel == "stringValue":
                return self.text(found, at)
            if camel == "boolValue":
                if not isinstance(found, bool):
                    raise self.fail(at, "true or false", found)
                return found
            if camel == "intValue":
                return self.int64(found, at)
            if camel == "doubleValue":
                return self.double(found, at)
            if camel == "arrayValue":
                values = self.items(self.obj(found, at).get("values"), f"{at}.values")
                return [self.value(item, f"{at}.values[{i}]", depth + 1)
                        for i, item in enumerate(values)]
            if camel == "kvlistValue":
                values = self.items(self.obj(found, at).get("values"), f"{at}.values")
                return self.pairs(values, f"{at}.values", depth + 1)
            if not isinstance(found, str):
                raise self.fail(at, "a base64 string", found)
            try:
                return base64.b64decode(found, validate=True)[:MAX_VALUE_BYTES]
            except (binascii.Error, ValueError):
                raise self.fail(at, "a base64 string", found) from None
        return None

    def pairs(self, values: list[Any], where: str, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for i, item in enumerate(values):
            at = f"{where}[{i}]"
            pair = self.obj(item, at)
            key = pair.get("key")
            if not isinstance(key, str):
                raise self.fail(f"{at}.key", "a string", key)
            out[key] = self.value(pair.get("value"), f"{at}.value", depth)
        return out

    def attrs(self, obj: dict[str, Any], where: str) -> dict[str, Any]:
        at = f"{where}.attributes"
        return self.pairs(self.items(obj.get("attributes"), at), at, 1)

    def resource(self, block: dict[str, Any], where: str, index: int) -> _Resource:
        at = f"{where}.resource"
        return _Resource(index, self.attrs(self.obj(block.get("resource"), at), at))

    def logs(self, data: dict[str, Any]) -> list[_Log]:
        out: list[_Log] = []
        for r, raw_block in enumerate(self.items(self.get(data, "resourceLogs", "resource_logs"),
                                             "resourceLogs")):
            where = f"resourceLogs[{r}]"
            block = self.obj(raw_block, where)
            resource = self.resource(block, where, r)
            for s, raw_scope in enumerate(self.items(self.get(block, "scopeLogs", "scope_logs"),
                                                 f"{where}.scopeLogs")):
                at = f"{where}.scopeLogs[{s}]"
                scope = self.obj(raw_scope, at)
                records = self.items(self.get(scope, "logRecords", "log_records"),
                                     f"{at}.logRecords")
                if len(out) + len(records) > MAX_ITEMS:
                    raise _too_large(self.signal, len(out) + len(records), at_least=True)
                for i, raw_record in enumerate(records):
                    rat = f"{at}.logRecords[{i}]"
                    record = self.obj(raw_record, rat)
                    out.append(_Log(
                        resource, len(out), self.attrs(record, rat),
                        self.value(record.get("body"), f"{rat}.body", 1),
                        self.text(self.get(record, "eventName", "event_name"),
                                  f"{rat}.eventName"),
                        self.uint64(self.get(record, "timeUnixNano", "time_unix_nano"),
                                    f"{rat}.timeUnixNano"),
                        self.uint64(self.get(record, "observedTimeUnixNano",
                                             "observed_time_unix_nano"),
                                    f"{rat}.observedTimeUnixNano")))
        return out

    def status(self, value: Any, where: str) -> tuple[int, str]:
        status = self.obj(value, where)
        code = status.get("code")
        if code is None:
            number = 0
        elif isinstance(code, str) and code in _STATUS_NAMES:
            number = _STATUS_NAMES[code]
        elif type(code) is int:
            number = code
        else:
            raise self.fail(f"{where}.code", "a status code (0-2 or STATUS_CODE_*)", code)
        return number, self.text(status.get("message"), f"{where}.message")

    def spans(self, data: dict[str, Any]) -> list[_Span]:
        out: list[_Span] = []
        for r, raw_block in enumerate(self.items(self.get(data, "resourceSpans", "resource_spans"),
                                             "resourceSpans")):
            where = f"resourceSpans[{r}]"
            block = self.obj(raw_block, where)
            resource = self.resource(block, where, r)
            for s, raw_scope in enumerate(self.items(self.get(block, "scopeSpans", "scope_spans"),
                                                 f"{where}.scopeSpans")):
                at = f"{where}.scopeSpans[{s}]"
                scope = self.obj(raw_scope, at)
                spans = self.items(scope.get("spans"), f"{at}.spans")
                if len(out) + len(spans) > MAX_ITEMS:
                    raise _too_large(self.signal, len(out) + len(spans), at_least=True)
                for i, raw_span in enumerate(spans):
                    sat = f"{at}.spans[{i}]"
                    span = self.obj(raw_span, sat)
                    code, message = self.status(span.get("status"), f"{sat}.status")
                    events = []
                    for e, raw_event in enumerate(self.items(span.get("events"), f"{sat}.events")):
                        eat = f"{sat}.events[{e}]"
                        event = self.obj(raw_event, eat)
                        events.append(_SpanEvent(
                            self.text(event.get("name"), f"{eat}.name"),
                            self.uint64(self.get(event, "timeUnixNano", "time_unix_nano"),
                                        f"{eat}.timeUnixNano"),
                            self.attrs(event, eat)))
                    out.append(_Span(
                        resource, len(out), self.attrs(span, sat),
                        self.text(span.get("name"), f"{sat}.name"),
                        self.ident(self.get(span, "traceId", "trace_id"), f"{sat}.traceId", 16),
                        self.ident(self.get(span, "spanId", "span_id"), f"{sat}.spanId", 8),
                        self.ident(self.get(span, "parentSpanId", "parent_span_id"),
                                   f"{sat}.parentSpanId", 8),
                        code, message,
                        self.uint64(self.get(span, "startTimeUnixNano", "start_time_unix_nano"),
                                    f"{sat}.startTimeUnixNano"),
                        self.uint64(self.get(span, "endTimeUnixNano", "end_time_unix_nano"),
                                    f"{sat}.endTimeUnixNano"),
                        events))
        return out


_JSON_NUMBER: Final = lazy(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_ANY_FIELDS: Final = (
    ("stringValue", "string_value"), ("boolValue", "bool_value"), ("intValue", "int_value"),
    ("doubleValue", "double_value"), ("arrayValue", "array_value"),
    ("kvlistValue", "kvlist_value"), ("bytesValue", "bytes_value"),
)


def _decode_json(signal: str, body: bytes) -> tuple[list[_Log], list[_Span]]:
    try:
        data = msgspec.json.decode(body)
    except msgspec.DecodeError as exc:
        raise otlp_problem(signal, f"the body is not JSON ({str(exc)[:160]})",
                       "malformed_json") from None
    except RecursionError:
        raise otlp_problem(signal, "the body is JSON nested too deeply to read",
                       "malformed_json") from None
    walker = _Json(signal)
    if not isinstance(data, dict):
        raise walker.fail("the body", "a JSON object", data)
    return (walker.logs(data), []) if signal == "logs" else ([], walker.spans(data))


# ---------------------------------------------------------------------------------------------
# reading attributes


def _str(value: Any) -> str | None:
    if isinstance(value, str):
        value = value.strip()
        return value or None
    if type(value) is int or type(value) is float:
        return str(value)
    return None


def _bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no"):
            return False
    if type(value) is int and value in (0, 1):
        return bool(value)
    return None


def _int(value: Any) -> int | None:
    """An integer in -2**31..2**32-1 (an exit status, an HTTP status, an attempt), or None."""
    if type(value) is float and value.is_integer():
        value = int(value)
    if type(value) is int:
        return value if -(2**31) <= value < 2**32 else None
    if isinstance(value, str):
        text = value.strip()
        digits = text[1:] if text[:1] == "-" else text
        if digits.isdecimal() and digits.isascii() and len(digits) <= 10:
            return _int(int(text))
    return None


def _http_status(value: Any) -> int | None:
    status = _int(value)
    return status if status is not None and 100 <= status <= 599 else None


def _pick(keys: Sequence[str], *maps: Mapping[str, Any]) -> str | None:
    """The first key's string value, each key looked up in every map in turn."""
    for key in keys:
        for attrs in maps:
            found = _str(attrs.get(key))
            if found is not None:
                return found
    return None


def _json_object(value: Any) -> dict[str, Any]:
    """An attribute that holds a JSON object, as a string (Claude's ``tool_parameters``,
    Codex's ``arguments``) or as a kvlist; {} otherwise."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            found = msgspec.json.decode(value)
        except (msgspec.DecodeError, RecursionError):
            return {}
        return found if isinstance(found, dict) else {}
    return {}


_SESSION_KEYS: Final = ("gen_ai.conversation.id", "session.id", "conversation.id")
_MODEL_KEYS: Final = ("gen_ai.request.model", "gen_ai.response.model", "model")
_TOOL_KEYS: Final = ("gen_ai.tool.name", "tool_name", "function_name", "name")
_DECISION_KEYS: Final = ("decision", "decision_type")
_SOURCE_KEYS: Final = ("source", "decision_source")
_REJECTED: Final = frozenset({
    "reject", "rejected", "deny", "denied", "abort", "aborted", "timed_out", "user_reject",
    "user_abort",
})
"""Decisions that kept a tool call from running (Claude Code: ``reject``; Codex: ``denied``,
``abort``, ``timed_out``; Gemini CLI: ``reject``)."""
_SHELL_TOOLS: Final = frozenset({
    "bash", "powershell", "shell", "sh", "zsh", "exec_command", "shell_command", "local_shell",
    "local_shell_call", "container.exec", "unified_exec", "run_shell_command", "terminal",
    "run_terminal_cmd", "run_command", "execute_command", "execute_bash",
})
_COMMAND_KEYS: Final = ("full_command", "bash_command", "command", "cmd", "process.command_line",
                        "process.command_args", "commandLine")
_EXIT_KEYS: Final = ("exit_code", "process.exit.code", "exit.code", "exitCode", "exit_status")
_EXIT_LINE: Final = lazy(
    r"^[ \t]*(?:error:[ \t]*)?(?:exit code:?|exit status:?|process exited with code)[ \t]*"
    r"(-?\d{1,10})\b",
    re.IGNORECASE | re.MULTILINE)
_EXIT_ANYWHERE: Final = lazy(r"\b(?:exit(?:ed with)? code|exit status)[:\s]++(-?\d{1,10})\b",
                             re.IGNORECASE)
_OUTPUT_SECTION: Final = lazy(r"^Output:[ \t]*(?:\n|\Z)", re.MULTILINE)
_TIMED_OUT: Final = lazy(r"\bcommand timed out\b", re.IGNORECASE)
_NODE_VERSION: Final = lazy(r"v\d+\.\d+\.\d+")
AGENT_NAMES: Final = {"codex_exec": "codex", "codex_cli_rs": "codex"}
"""The agent a ``service.name`` is, where it names a program of the agent rather than the
agent (Codex CLI 0.171.0's ``codex exec`` exports as ``codex_exec``, earlier versions as
``codex_cli_rs``): the name its hooks and the lab use, so one agent is one agent column."""
_REFUSED_TEXT: Final = lazy(r"\bRejected\(|\brejected: policy forbids\b")
"""Codex's refusal of a command before it ran (``exec_command failed: CreateProcess { message:
"Rejected(... rejected: policy forbids commands starting with ...)" }``)."""
_REFUSED_TYPES: Final = frozenset({"policy_violation", "execution_denied"})
"""``error_type`` of a tool call the agent's rules refused: Gemini CLI ``policy_violation``,
Qwen Code ``execution_denied``."""
_REFUSED_KINDS: Final = frozenset({"permission_denied"})
"""``tool.failure_kind`` of a refused tool span (Qwen Code's ``qwen-code.tool``)."""
_CALL_KEYS: Final = ("tool_use_id", "call_id", "gen_ai.tool.call.id", "gen_ai.tool.call_id",
                     "tool.call_id")
"""The agent's own id of a tool call: Claude Code ``tool_use_id``, Codex and Qwen Code
``call_id`` (Qwen's spans ``gen_ai.tool.call.id``), Gemini CLI's spans ``gen_ai.tool.call_id``."""
_JSON_CODE: Final = lazy(r'^\s*\{\s*"error"\s*:\s*\{\s*"code"\s*:\s*(\d{3})\b')
"""Google's error body (``{"error":{"code":500,...}}``), the message of Gemini CLI's failed
``llm_call`` span: its HTTP status."""
_DOTTED: Final = lazy(r"[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)+")
_TYPE_NAME: Final = lazy(r"[A-Za-z_][A-Za-z0-9_.]{0,199}")
_SURFACE_BAD: Final = lazy(r"[^A-Za-z0-9_.-]+")
_NODE_ERRNO: Final = {
    "ENOENT": "FileNotFoundError", "EACCES": "PermissionError", "EPERM": "PermissionError",
    "ETIMEDOUT": "TimeoutError", "ECONNREFUSED": "ConnectionRefusedError",
    "ECONNRESET": "ConnectionResetError", "EISDIR": "IsADirectoryError",
    "ENOTDIR": "NotADirectoryError",
}
"""Node's ``Error:<errno>`` (Claude Code's ``error_type``) as the Python type that names it."""
_SESSION_STARTS: Final = frozenset({"user_prompt", "conversation_starts"})
"""Records that say a session is under way (Claude Code, Gemini CLI and Qwen Code log a
``user_prompt`` per prompt, Codex a ``conversation_starts``, Qwen Code a ``session.start``):
one ``session.started`` per session."""
_PREFIXES: Final = (("claude-code", "claude_code"), ("gemini-cli", "gemini_cli"),
                    ("codex", "codex"))
"""``service.name`` prefix -> event-name prefix, for an undotted ``event.name``."""
_SDK: Final = {
    "claude_code": ("anthropic.APIConnectionError", "anthropic.APIStatusError", "llm.anthropic"),
    "codex": ("openai.APIConnectionError", "openai.APIStatusError", "llm.openai"),
    "gemini_cli": ("google.genai.errors.APIError", "google.genai.errors.APIError", "llm.gemini"),
}
"""The event family -> (the SDK type a request error without HTTP status is read as, the type
a failed stream is read as, the surface). Claude Code documents an ``api_error`` without
``status_code`` as a non-HTTP error (a connection failure); Codex records a request without
status when the HTTP client failed, and a stream error after the response began."""
_PROVIDERS: Final = (("anthropic", "anthropic"), ("openai", "openai"), ("azure", "openai"),
                     ("gcp", "gemini"), ("gemini", "gemini"), ("google", "gemini"))
"""``gen_ai.provider.name`` / ``gen_ai.system`` prefix -> (SDK family, surface slug)."""
_SDK_TYPES: Final = {"anthropic": "anthropic.APIStatusError", "openai": "openai.APIStatusError",
                     "gemini": "google.genai.errors.APIError"}
_TOOL_OPS: Final = frozenset({"execute_tool", "tool_call"})
_MODEL_OPS: Final = frozenset({"chat", "text_completion", "generate_content", "embeddings",
                               "llm_call"})
_AGENT_OPS: Final = frozenset({"invoke_agent", "create_agent", "invoke_workflow"})
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_DIGEST: Final = msgspec.json.Encoder(order="sorted")
_MAX_ANCESTORS: Final = 64
_FINAL_API_ERRORS: Final = frozenset({"claude_code"})
"""Agents whose ``api_error`` record is the final one, logged after the retries gave up."""

_FINAL_MODEL_SPANS: Final = frozenset({"claude_code.llm_request"})
"""Model-call spans of one call whatever its attempts (Claude Code's records ``attempt``)."""
_CLAUDE_TOOL_CHILDREN: Final = frozenset({"claude_code.tool.execution",
                                          "claude_code.tool.blocked_on_user"})
"""Claude Code's spans whose tool name and command are on their parent ``claude_code.tool``."""


def _surface(prefix: str, name: str | None) -> str:
    """``prefix.name`` with the name made a surface part; ``prefix`` when it cannot be one."""
    if not name:
        return prefix
    slug = _SURFACE_BAD.sub("_", name).strip("._-")[:48]
    return f"{prefix}.{slug}" if slug and redact(slug) == slug else prefix


def _time(ns: int) -> datetime | None:
    return _EPOCH + timedelta(microseconds=ns // 1000) if ns > 0 else None


def _seconds(ns: int) -> float | None:
    return ns / 1e9 if ns > 0 else None


def _bounded(value: str, limit: int = 200) -> str:
    return value[:limit]


# ---------------------------------------------------------------------------------------------
# classification


def _command_of(*maps: Mapping[str, Any]) -> str | list[str] | None:
    """The shell command: a string, or an argv list (Codex's ``["bash", "-lc", "..."]``)."""
    for key in _COMMAND_KEYS:
        for attrs in maps:
            value = attrs.get(key)
            if isinstance(value, str) and value.strip():
                return value
            if (isinstance(value, list) and value
                    and all(isinstance(part, str) for part in value)):
                return list(value)
    return None


def _exit_of(text: str, *maps: Mapping[str, Any]) -> int | None:
    for key in _EXIT_KEYS:
        for attrs in maps:
            found = _int(attrs.get(key))
            if found is not None:
                return found
    match = _EXIT_LINE.search(text) or _EXIT_ANYWHERE.search(text)
    return _int(match.group(1)) if match else None


def _tool_output(output: str) -> tuple[str, dict[str, Any]]:
    """Codex's ``{"output", "metadata": {"exit_code"}}`` output of older versions as (text,
    metadata); any other output as itself."""
    found = _json_object(output)
    text = found.get("output")
    if isinstance(text, str):
        metadata = found.get("metadata")
        return text, metadata if isinstance(metadata, dict) else {}
    return output, {}


def _command_text(text: str) -> str:
    """What the command printed: Codex's ``Output:`` section, else the text after the first
    line when that line states the exit status (Claude Code's ``Exit code N``), else all."""
    section = _OUTPUT_SECTION.search(text)
    if section is not None:
        return text[section.end():]
    first = _EXIT_LINE.match(text)
    if first is not None:
        return text[first.end():].lstrip("\n")
    return text


def _type_name(error_type: str | None, fallback: str) -> str:
    if error_type:
        errno_name = _NODE_ERRNO.get(error_type.rpartition(":")[2].strip())
        if errno_name is not None:
            return errno_name
        if _TYPE_NAME.fullmatch(error_type):
            return error_type
    return fallback


class _Tool(msgspec.Struct, kw_only=True):
    """A failed tool call, as the log record or span told it."""

    name: str | None
    shell: bool
    command: str | list[str] | None
    output: str
    """What the tool printed or returned (a command's output)."""
    message: str
    """The error text (an exception's message, a status description); may be the output."""
    error_type: str | None
    exit_code: int | None = None
    traceback: str | None = None


def _classify_tool(tool: _Tool) -> Failure | NonErrorOutcome:
    if tool.shell and tool.command is not None:
        text = tool.output if tool.message in tool.output else f"{tool.message}\n{tool.output}"
        timed_out = bool(_TIMED_OUT.search(text))
        if tool.exit_code is not None or timed_out:
            try:
                found = from_command(tool.command, tool.exit_code, _command_text(tool.output),
                                     "" if tool.message in tool.output else tool.message,
                                     timed_out=timed_out)
            except (ValueError, TypeError):
                found = None
            if found is not None:
                return found
    message = tool.message or tool.output or tool.error_type or "the tool reported a failure"
    if tool.shell and tool.command is not None:
        # no exit status: the cause is unknown, but the command keeps failures of different
        # commands apart (Claude Code's every failure is "Shell command failed")
        command = tool.command if isinstance(tool.command, str) else shlex.join(tool.command)
        if command.strip() not in message:
            message = f"{message}: {_bounded(command.strip(), 400)}"
    return classify_text(_type_name(tool.error_type, "ToolError"), message,
                         traceback=tool.traceback, surface=_surface("tool", tool.name))


def _classify_provider(status: int | None, message: str, type_name: str, *,
                       traceback: str | None = None,
                       surface: str | None = None) -> Failure | NonErrorOutcome:
    """A provider error: by its HTTP status when it has one >= 400, else by its text read as
    an exception of ``type_name``."""
    if status is not None and status >= 400:
        return classify_http(status, message or type_name, surface=surface)
    return classify_text(type_name, message or "the model call failed", traceback=traceback,
                         surface=surface or "llm")


# ---------------------------------------------------------------------------------------------
# mapping


class _Meta(msgspec.Struct, kw_only=True):
    """What names one item's event. The cheap part is read for every item; the id and the
    context only for an item that maps to an event (:meth:`_Mapper.add`)."""

    item: _Log | _Span
    name: str
    """The log record's event name, the span's name."""
    ns: int
    session: str | None
    retry_key: tuple[str, str]
    """Provider errors and successes of one session (else one resource) share it."""
    when: tuple[int, int]
    """(time in ns, position in the request): what "later" compares."""
    around: list[_Span] = msgspec.field(default_factory=list)
    """A span's ancestors in the request, innermost first."""
    event_id: str = ""
    context: dict[str, Scalar] = msgspec.field(default_factory=dict)


class _Pending(msgspec.Struct, kw_only=True):
    """One item's mapping, built into an event once the request has been read."""

    found: Failure | NonErrorOutcome
    event: str
    meta: _Meta
    provider: bool
    """A provider error: dropped when a later success of its key is in the request."""
    tool_call: bool = False
    """What one tool call did (what an agent's hooks report too)."""


class _Exc(msgspec.Struct, kw_only=True):
    """The last ``exception`` event of a span (empty when it has none)."""

    type: str | None
    message: str
    stacktrace: str | None
    index: int


def _context(**values: Scalar) -> dict[str, Scalar]:
    out: dict[str, Scalar] = {}
    for key, value in values.items():
        if value is None:
            continue
        out[key] = _bounded(value, 400) if isinstance(value, str) else value
    return out


def _retry_key(session: str | None, resource: _Resource) -> tuple[str, str]:
    return ("session", session) if session is not None else ("resource", str(resource.index))


def _who(attrs: Mapping[str, Any], resource: Mapping[str, Any],
         around: Sequence[Mapping[str, Any]] = ()) -> dict[str, Scalar]:
    """agent, agent_version, model: the item's attributes, then (a span's) its ancestors',
    then its resource's."""
    service = _pick(("service.name",), resource)
    return _context(
        agent=_pick(("gen_ai.agent.name",), attrs, *around, resource)
        or AGENT_NAMES.get(service or "", service),
        agent_version=_agent_version(attrs, resource),
        model=_pick(_MODEL_KEYS, attrs, *around, resource))


def _agent_version(attrs: Mapping[str, Any], resource: Mapping[str, Any]) -> str | None:
    """``service.version``, else ``app.version``; never a Node runtime's version (Gemini CLI
    0.61.0 sets ``service.version`` to ``process.version``, ``v20.20.2``)."""
    version = _pick(("service.version",), resource, attrs)
    if version is not None and _NODE_VERSION.fullmatch(version):
        runtime = (_str(resource.get("process.runtime.name")) or "").lower()
        service = _str(resource.get("service.name")) or ""
        if runtime.startswith("node") or service.startswith("gemini-cli") \
                or version[1:] == _str(resource.get("process.runtime.version")):
            version = None
    return version or _pick(("app.version",), resource, attrs)


class _Mapper:
    """Maps one request's items; :meth:`batch` builds the events."""

    def __init__(self, signal: Literal["logs", "traces"]) -> None:
        self.signal = signal
        self.pending: list[_Pending] = []
        self.ignored = 0
        self.successes: dict[tuple[str, str], tuple[int, int]] = {}
        self.seen: dict[tuple[int, str, str, str], int] = {}

    def success(self, meta: _Meta) -> None:
        if meta.when > self.successes.get(meta.retry_key, (-1, -1)):
            self.successes[meta.retry_key] = meta.when

    def add(self, found: Failure | NonErrorOutcome, event: str, meta: _Meta, *,
            provider: bool = False, id_parts: tuple[object, ...] = (),
            call: str | None = None, retried: tuple[object, ...] | None = None,
            tool_call: bool = False, once: str | None = None, **context: Scalar) -> None:
        """Keep ``found`` as the item's event: its id and context are made here. ``call``:
        the agent's id of the tool call (the event id is then the call's); ``retried``: what
        identifies a provider error the agent retries by itself (the id is then that);
        ``once``: a fact of the session stored once whatever record says it (its start)."""
        item = meta.item
        if isinstance(item, _Log):
            resource = item.resource
            if not resource.digest:
                resource.digest = _digest(resource.attrs)
            digest = _digest([item.body, item.attrs, resource.digest])
            identity = (meta.ns, meta.name, meta.session or "", digest)
            ordinal = self.seen.get(identity, 0)
            self.seen[identity] = ordinal + 1
            meta.event_id = derived_event_id(_seconds(meta.ns), "otlp", self.signal, *identity,
                                             ordinal)
            meta.context = {**_who(item.attrs, resource.attrs), **_context(otlp_event=meta.name)}
        else:
            meta.event_id = derived_event_id(_seconds(meta.ns), "otlp", self.signal,
                                             item.trace_id, item.span_id, *id_parts)
            meta.context = {
                **_who(item.attrs, item.resource.attrs, [a.attrs for a in meta.around]),
                **_context(otlp_event=meta.name or _str(item.attrs.get("gen_ai.operation.name")),
                           trace_id=item.trace_id or None, span_id=item.span_id or None)}
        if call is not None and meta.session is not None:
            meta.event_id = call_event_id(meta.session, _bounded(call))
        elif retried is not None:
            meta.event_id = derived_event_id(None, "otlp", "retried", meta.session or "",
                                             *retried)
        elif once is not None and meta.session is not None:
            meta.event_id = derived_event_id(None, "otlp", "once", meta.session, once)
        meta.context.update(_context(**context))
        self.pending.append(_Pending(found=found, event=event, meta=meta, provider=provider,
                                     tool_call=tool_call))

    # -- log records ---------------------------------------------------------------------------
    def log(self, log: _Log) -> None:
        name = _event_name(log)
        if name is None:
            self.ignored += 1
            return
        family, _, what = name.partition(".")
        attrs = log.attrs
        meta = self.log_meta(log, name)
        if what in ("tool_result", "tool_call", "tool_decision"):
            self.log_tool(log, what, meta)
            return
        if what == "api_error":
            self.log_provider(log, family, what, meta)
            return
        if (what in _SESSION_STARTS or name == "session.start") and meta.session is not None:
            # the session exists (a session without failures is one too), once per session
            self.add(SessionStarted(by="otlp"), "session.started", meta, once="started")
            return
        if what in ("api_request", "sse_event", "websocket_request"):
            error = _str(attrs.get("error.message")) or _str(attrs.get("error"))
            status = _http_status(attrs.get("http.response.status_code")) \
                or _http_status(attrs.get("status_code"))
            if family != "gemini_cli" and (error or (status is not None and status >= 400)):
                self.log_provider(log, family, what, meta)
                return
            if family != "gemini_cli" and (
                    what != "sse_event" or attrs.get("event.kind") == "response.completed"):
                self.success(meta)  # Gemini's api_request is a request sent, not answered
        elif what == "api_response":
            status = _http_status(attrs.get("status_code"))
            if not _str(attrs.get("error")) and (status is None or status < 400):
                self.success(meta)
        self.ignored += 1

    def log_meta(self, log: _Log, name: str) -> _Meta:
        session = _pick(_SESSION_KEYS, log.attrs, log.resource.attrs)
        ns = log.time_ns or log.observed_ns
        return _Meta(item=log, name=name, ns=ns, session=_bounded(session) if session else None,
                     retry_key=_retry_key(session, log.resource), when=(ns, log.ordinal))

    def log_tool(self, log: _Log, what: str, meta: _Meta) -> None:
        attrs = log.attrs
        tool_name = _pick(_TOOL_KEYS, attrs)
        call = _pick(_CALL_KEYS, attrs)
        decision = _pick(_DECISION_KEYS, attrs)
        if decision is not None and decision.lower() in _REJECTED:
            source = _pick(_SOURCE_KEYS, attrs)
            self.add(_rejected(tool_name, decision, source), "action.rejected", meta,
                     call=call, tool_call=True, tool=tool_name, decision_source=source)
            return
        success = _bool(attrs.get("success"))
        if what == "tool_decision" or success is None:
            self.ignored += 1
            return
        raw = _str(attrs.get("output")) or _str(attrs.get("error")) \
            or _str(attrs.get("error.message")) or ""
        error_type = _str(attrs.get("error_type")) or _str(attrs.get("error.type"))
        if success is False and ((error_type or "").lower() in _REFUSED_TYPES
                                 or _REFUSED_TEXT.search(raw)):
            refusal = error_type if error_type and error_type.lower() in _REFUSED_TYPES \
                else "rejected by policy"
            self.add(_rejected(tool_name, refusal, None), "action.rejected", meta, call=call,
                     tool_call=True, tool=tool_name)
            return
        output, metadata = _tool_output(raw)
        metadata = {**_json_object(attrs.get("metadata")), **metadata}
        shell = tool_name is not None and tool_name.lower() in _SHELL_TOOLS
        exit_code = _exit_of(output, attrs, metadata) if shell else None
        if success is True and not exit_code:
            self.ignored += 1  # succeeded (a shell command: exit status 0 or unknown)
            return
        arguments = {**_json_object(attrs.get("tool_parameters")),
                     **_json_object(attrs.get("tool_input")),
                     **_json_object(attrs.get("arguments")),
                     **_json_object(attrs.get("function_args"))}
        tool = _Tool(name=tool_name, shell=shell, command=_command_of(arguments, attrs),
                     exit_code=exit_code, output=output, message=output,
                     error_type=error_type)
        self.add(_classify_tool(tool), "command.failed" if shell else "tool.failed", meta,
                 call=call, tool_call=True, tool=tool_name)

    def log_provider(self, log: _Log, family: str, what: str, meta: _Meta) -> None:
        attrs = log.attrs
        status = _http_status(attrs.get("status_code")) \
            or _http_status(attrs.get("http.response.status_code"))
        message = _str(attrs.get("error")) or _str(attrs.get("error.message")) \
            or _str(attrs.get("error_message")) or ""
        error_type = _str(attrs.get("error_type"))
        sdk = _SDK.get(family)
        if sdk is not None:
            type_name = sdk[1] if what in ("sse_event", "websocket_request") else sdk[0]
        else:
            type_name = _type_name(error_type, "APIError")
        found = _classify_provider(status, message or error_type or "", type_name,
                                   surface=sdk[2] if sdk is not None else None)
        # Claude Code logs ``api_error`` once, when it gives up (``attempt`` = all attempts,
        # beside ``api_retries_exhausted``): a later success in the request is a new call.
        again = family not in _FINAL_API_ERRORS
        self.add(found, "tool.failed", meta, provider=again,
                 retried=("api", status or "", _bounded(message or error_type or "", 200))
                 if again else None,
                 status_code=status,
                 attempt=_int(attrs.get("attempt")) or _int(attrs.get("attempt_number")))
        if not again:  # the agent gave up: its turn (a headless session) ended on it
            meta.context[ENDED_KEY] = "provider_error"

    # -- spans ---------------------------------------------------------------------------------
    def spans(self, spans: list[_Span]) -> None:
        by_id = {(span.trace_id, span.span_id): span for span in spans if span.span_id}
        raised: dict[tuple[str, str], set[tuple[str, str]]] = {}
        for span in spans:
            if span.status_code != _STATUS_OK and span.parent_span_id:
                for event in span.events:
                    if event.name == "exception":
                        raised.setdefault((span.trace_id, span.parent_span_id), set()).add(
                            _exception_key(event))
        for span in spans:
            self.span(span, by_id, raised.get((span.trace_id, span.span_id), set()))

    def span_meta(self, span: _Span, ancestors: list[_Span]) -> _Meta:
        session = _pick(_SESSION_KEYS, span.attrs, *(a.attrs for a in ancestors),
                        span.resource.attrs)
        ns = span.end_ns or span.start_ns
        return _Meta(item=span, name=span.name, ns=ns,
                     session=_bounded(session) if session else None,
                     retry_key=_retry_key(session, span.resource), when=(ns, span.ordinal),
                     around=ancestors)

    def span(self, span: _Span, by_id: Mapping[tuple[str, str], _Span],
             child_raised: set[tuple[str, str]]) -> None:
        attrs = span.attrs
        kind = _span_kind(span)
        ancestors = _ancestors(span, by_id)
        meta = self.span_meta(span, ancestors)
        tool_attrs = [attrs]
        if ancestors and span.name in _CLAUDE_TOOL_CHILDREN:
            tool_attrs.append(ancestors[0].attrs)
        tool_name = _pick(_TOOL_KEYS[:3], *tool_attrs)
        decision = _pick(_DECISION_KEYS, attrs)
        refused = _str(attrs.get("tool.failure_kind"))
        if refused is not None and refused.lower() in _REFUSED_KINDS \
                and span.status_code != _STATUS_OK:
            decision = refused
        if (decision is not None and decision.lower() in _REJECTED | _REFUSED_KINDS
                and (kind == "tool" or tool_name is not None or "tool" in span.name)):
            source = _pick(_SOURCE_KEYS, attrs)
            self.add(_rejected(tool_name, decision, source), "action.rejected", meta,
                     call=_pick(_CALL_KEYS, *tool_attrs), tool_call=True, tool=tool_name,
                     decision_source=source)
            return
        if span.status_code == _STATUS_OK:
            if kind == "model":
                self.success(meta)
            self.ignored += 1  # succeeded; an exception recorded on it was handled
            return
        exc = _last_exception(span)
        if kind in ("tool", "model"):
            error_type = _str(attrs.get("error.type"))
            if not (span.status_code == _STATUS_ERROR or error_type is not None
                    or exc.index >= 0 or _bool(attrs.get("success")) is False):
                if kind == "model":
                    self.success(meta)
                self.ignored += 1
                return
            if kind == "tool":
                self.span_tool(span, tool_attrs, tool_name=tool_name, error_type=error_type,
                               exc=exc, meta=meta)
            else:
                self.span_model(span, error_type, exc, meta)
            return
        if exc.index < 0 or _propagated(span.events[exc.index], child_raised, ancestors):
            self.ignored += 1
            return
        found = classify_text(exc.type or "Exception", exc.message, traceback=exc.stacktrace,
                              surface="agent" if kind == "agent" else None)
        self.add(found, "agent.failed" if kind == "agent" else "tool.failed", meta,
                 id_parts=("exception", exc.index))

    def span_tool(self, span: _Span, tool_attrs: list[dict[str, Any]], *,
                  tool_name: str | None, error_type: str | None, exc: _Exc,
                  meta: _Meta) -> None:
        attrs = span.attrs
        message = exc.message or _str(attrs.get("error")) or span.status_message
        output = _str(attrs.get("gen_ai.tool.call.result")) or ""
        arguments = _json_object(attrs.get("gen_ai.tool.call.arguments"))
        shell = tool_name is not None and tool_name.lower() in _SHELL_TOOLS
        tool = _Tool(name=tool_name, shell=shell, command=_command_of(*tool_attrs, arguments),
                     exit_code=_exit_of(f"{output}\n{message}", attrs) if shell else None,
                     output=output, message=message,
                     error_type=exc.type or _str(attrs.get("error_class")) or error_type
                     or _str(attrs.get("error")),
                     traceback=exc.stacktrace)
        self.add(_classify_tool(tool), "command.failed" if shell else "tool.failed", meta,
                 call=_pick(_CALL_KEYS, *tool_attrs), tool_call=True, tool=tool_name)

    def span_model(self, span: _Span, error_type: str | None, exc: _Exc, meta: _Meta) -> None:
        attrs = span.attrs
        message = exc.message or _str(attrs.get("error")) or span.status_message
        status = _http_status(attrs.get("http.response.status_code")) \
            or _http_status(attrs.get("status_code")) or _http_status(error_type) \
            or _json_status(message)
        provider = _pick(("gen_ai.provider.name", "gen_ai.system"), attrs,
                         span.resource.attrs) or ""
        family = next((f for p, f in _PROVIDERS if provider.lower().startswith(p)), None)
        named = error_type if error_type and _http_status(error_type) is None else None
        type_name = exc.type or _type_name(named, _SDK_TYPES.get(family or "", "APIError"))
        found = _classify_provider(status, message, type_name, traceback=exc.stacktrace,
                                   surface=_surface("llm", family or provider or None))
        again = span.name not in _FINAL_MODEL_SPANS
        self.add(found, "tool.failed", meta, provider=True, status_code=status,
                 retried=("api", status or "", _bounded(message, 200)) if again else None,
                 attempt=_int(attrs.get("attempt")))

    # -- events --------------------------------------------------------------------------------
    def batch(self, items: int) -> OtlpBatch:
        events: list[Event] = []
        tool_calls: set[str] = set()
        failures = outcomes = 0
        ignored = self.ignored
        for pending in self.pending:
            meta = pending.meta
            if pending.provider and self.successes.get(meta.retry_key, (-1, -1)) > meta.when:
                ignored += 1  # retried, and the retry succeeded
                continue
            event = _event(pending)
            events.append(event)
            if pending.tool_call:
                tool_calls.add(event.event_id)
            if event.failure is not None:
                failures += 1
            else:
                outcomes += 1
        return OtlpBatch(events=tuple(events), items=items, failures=failures,
                         outcomes=outcomes, ignored=ignored, tool_calls=frozenset(tool_calls))


def _event_name(log: _Log) -> str | None:
    attr = log.attrs.get("event.name")
    body = log.body if isinstance(log.body, str) and len(log.body) <= 200 \
        and _DOTTED.fullmatch(log.body) else None
    candidates = [name for name in (attr if isinstance(attr, str) else None,
                                    log.event_name, body) if name]
    if not candidates:
        return None
    name = candidates[0]
    if "." not in name:
        longer = next((c for c in candidates[1:] if c.endswith("." + name)), None)
        if longer is not None:
            return longer
        service = _str(log.resource.attrs.get("service.name")) or ""
        prefix = next((p for s, p in _PREFIXES if service.startswith(s)), None)
        if prefix is not None:
            return f"{prefix}.{name}"
    return name


def _last_exception(span: _Span) -> _Exc:
    for index in range(len(span.events) - 1, -1, -1):
        event = span.events[index]
        if event.name == "exception":
            return _Exc(type=_str(event.attrs.get("exception.type")),
                        message=_str(event.attrs.get("exception.message")) or "",
                        stacktrace=_str(event.attrs.get("exception.stacktrace")), index=index)
    return _Exc(type=None, message="", stacktrace=None, index=-1)


def _json_status(message: str) -> int | None:
    match = _JSON_CODE.match(message)
    return _http_status(match.group(1)) if match else None


def _rejected(tool: str | None, decision: str, source: str | None) -> RejectedAction:
    reason = f"the call was refused ({decision}" + (f", by {source})" if source else ")")
    return RejectedAction(action=_bounded(tool or "tool call"), reason=_bounded(reason))


def _exception_key(event: _SpanEvent) -> tuple[str, str]:
    return (_str(event.attrs.get("exception.type")) or "",
            _str(event.attrs.get("exception.message")) or "")


def _span_kind(span: _Span) -> str:
    op = _str(span.attrs.get("gen_ai.operation.name"))
    name = span.name
    if op in _TOOL_OPS or name.startswith("execute_tool") or name == "claude_code.tool.execution":
        return "tool"
    if op in _MODEL_OPS or name == "claude_code.llm_request":
        return "model"
    if op in _AGENT_OPS:
        return "agent"
    return "other"


def _propagated(event: _SpanEvent, child_raised: set[tuple[str, str]],
                ancestors: Sequence[_Span]) -> bool:
    """Whether a span's exception is mapped elsewhere: a child span of the request recorded
    it too (the innermost maps it), or an enclosing tool or model span that failed did."""
    key = _exception_key(event)
    if key in child_raised:
        return True
    return any(
        ancestor.status_code != _STATUS_OK and _span_kind(ancestor) in ("tool", "model")
        and any(e.name == "exception" and _exception_key(e) == key for e in ancestor.events)
        for ancestor in ancestors)


def _ancestors(span: _Span, by_id: Mapping[tuple[str, str], _Span]) -> list[_Span]:
    out: list[_Span] = []
    parent_id = span.parent_span_id
    while parent_id and len(out) < _MAX_ANCESTORS:
        parent = by_id.get((span.trace_id, parent_id))
        if parent is None or parent is span:
            break
        out.append(parent)
        parent_id = parent.parent_span_id
    return out


def _digest(value: object) -> str:
    try:
        data = _DIGEST.encode(value)
    except (TypeError, ValueError, OverflowError):  # not reachable from decoded values
        data = repr(value).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=10).hexdigest()


def _event(pending: _Pending) -> Event:
    found, meta = pending.found, pending.meta
    context = {**found.context, **meta.context}
    if isinstance(found, Failure):
        failure = msgspec.structs.replace(found, context=context)
        try:
            return failure_event(failure, event=pending.event, session=meta.session,
                                 source="otlp", ts=_time(meta.ns), event_id=meta.event_id)
        except (ValueError, msgspec.ValidationError):
            # a secret in a field the signature repeats (a path, a class): keep the
            # occurrence under the plainest record rather than lose it
            plain = FC.SYS_UNKNOWN.failure(surface="service.otlp",
                                           params={"exception": failure.code},
                                           context=context)
            return failure_event(plain, event=pending.event, session=meta.session,
                                 source="otlp", ts=_time(meta.ns), event_id=meta.event_id)
    outcome = msgspec.structs.replace(found, context=context)
    return outcome_event(outcome, session=meta.session, source="otlp", ts=_time(meta.ns),
                         event_id=meta.event_id)


def media_type(content_type: str) -> str:
    """A Content-Type without its parameters, lower case."""
    return content_type.split(";", 1)[0].strip().lower()


def parse_otlp(signal: Literal["logs", "traces"], body: bytes, *,
               content_type: str) -> OtlpBatch:
    """Map one OTLP/HTTP export request to failcode events (the module's rules).

    Args:
        signal: ``logs`` (``/v1/logs``) or ``traces`` (``/v1/traces``).
        body: the request body, already decompressed.
        content_type: the request's Content-Type: ``application/x-protobuf`` or
            ``application/json`` (parameters ignored).

    Returns:
        The events (failures and outcomes, with ids derived from what they identify) and the
        counts of items read, failures, outcomes and items that map to nothing.

    Raises:
        FailureError: FC-SVC-006 for another content type; FC-DATA-001 (``malformed_json``)
            for a body that does not decode, (``validation``) for JSON of the wrong shape,
            naming where; FC-SVC-004 for more than :data:`MAX_ITEMS` items. Never anything
            else, whatever the bytes.
    """
    media = media_type(content_type if isinstance(content_type, str) else "")
    if media == PROTOBUF:
        logs, spans = _decode_pb(signal, bytes(body))
    elif media == JSON:
        logs, spans = _decode_json(signal, bytes(body))
    else:
        raise unsupported_media(signal, content_type)
    mapper = _Mapper(signal)
    for log in logs:
        mapper.log(log)
    mapper.spans(spans)
    return mapper.batch(len(logs) + len(spans))
