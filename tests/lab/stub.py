"""The scripted model: an HTTP server on 127.0.0.1 that plays a scenario to a real agent.

It speaks the four APIs the agents call, picked from the request path:

- Anthropic Messages (``/v1/messages``), SSE when the request asks for a stream;
- OpenAI Responses (``/v1/responses``), SSE;
- OpenAI Chat Completions (``/v1/chat/completions``), with tools or (aider) without, JSON or SSE;
- Gemini ``:generateContent`` and ``:streamGenerateContent?alt=sse``.

Rules:

- **The script's position comes from the request, never from the server**: the step is the
  number of tool results already in the conversation (Anthropic ``tool_result`` blocks,
  Responses ``function_call_output`` items, Chat ``role: tool`` messages, Gemini
  ``functionResponse`` parts); for a Chat Completions conversation without tools (aider),
  the number of assistant messages carrying the marker ``[stub step``. An agent's retries
  and side requests therefore never advance the script. Only a fault's remaining count is
  server state, so that a fault answered once is not answered again to the retry.
- A request without the shell tool (a title, a router, a summary) is answered with plain text,
  or with a JSON object filled from its schema when it asks for JSON (Gemini
  ``responseMimeType: application/json``), and never advances anything.
- The shell tool is found by name (``Bash``, ``exec_command``, ``shell``, ``run_shell_command``,
  ``bash``, ``terminal``, ``execute_bash``, ``run_commands``) or by a ``command``/``cmd``
  property; edit and read tools by name; arguments are filled from the tool's JSON schema
  (Cline's ``run_commands`` and ``read_files`` take one-item arrays: ``commands``, ``files``).
- Faults have each provider's own error shape (Anthropic ``rate_limit_error``, ``api_error``,
  ``overloaded_error``; OpenAI ``rate_limit_exceeded``, ``server_error``; Gemini
  ``RESOURCE_EXHAUSTED``, ``INTERNAL``, ``UNAVAILABLE``), with ``Retry-After`` when the
  scenario sets one, and a marker ``(stub fault STATUS at step N)`` in the message so the lab
  can tell whether an agent's log kept it. ``malformed`` answers a stream cut in the middle of
  a JSON value; ``hang`` answers nothing until the client gives up.
- Every id and timestamp the stub sends is derived from the step, so two runs send the same.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from pathlib import Path

    from tests.lab.scenario import Fault, Scenario, Step

MARKER: Final = "[stub step"
SUBMIT: Final = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
"""mini-swe-agent ends a run when the model runs ``echo`` of this word."""

SHELL_TOOLS: Final = ("Bash", "exec_command", "shell", "run_shell_command", "bash", "terminal",
                      "execute_bash", "run_commands")
EDIT_TOOLS: Final = ("Edit", "replace", "str_replace_based_edit_tool", "file_editor",
                     "str_replace_editor", "edit_file", "edit", "editor")
READ_TOOLS: Final = ("Read", "read_file", "file_editor", "str_replace_editor",
                     "str_replace_based_edit_tool", "view", "read_files")
HANG_S: Final = 120.0
TOLD: Final = "[failcode]"
"""What starts every message failcode's hooks give the model: the log counts it in each
request (``told``), so a run shows at which step the model was first told."""


@dataclass(slots=True)
class Tool:
    """A tool the agent offered: its name and JSON schema."""

    name: str
    schema: dict[str, Any]


@dataclass(slots=True)
class Request:
    """What the stub reads off a request: the API, the step, the tools, what it asks for."""

    api: str
    stream: bool
    step: int
    tools: list[Tool]
    model: str
    text: str
    json_schema: dict[str, Any] | None = None


@dataclass(slots=True)
class Call:
    """A tool call the stub answers with."""

    tool: str
    arguments: dict[str, Any]
    call_id: str


@dataclass(slots=True)
class Answer:
    """The stub's reply: text and tool calls, or a fault."""

    text: str = ""
    calls: list[Call] = field(default_factory=list)
    fault: Fault | None = None
    fault_step: int = 0
    plays: int | None = None
    """The scenario step this answer carries out, if any."""


# -- reading requests ------------------------------------------------------------------------
def _walk_text(value: Any, out: list[str], budget: list[int]) -> None:
    if budget[0] <= 0:
        return
    if isinstance(value, str):
        out.append(value)
        budget[0] -= len(value)
    elif isinstance(value, dict):
        for item in value.values():
            _walk_text(item, out, budget)
    elif isinstance(value, list):
        for item in value:
            _walk_text(item, out, budget)


def _all_text(value: Any) -> str:
    out: list[str] = []
    _walk_text(value, out, [4_000_000])
    return "\n".join(out)


def _api(path: str) -> str:
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/responses"):
        return "responses"
    if path.endswith("/chat/completions"):
        return "chat"
    if ":generateContent" in path or ":streamGenerateContent" in path:
        return "gemini"
    return "unknown"


def _count_marked(messages: list[Any]) -> int:
    """Assistant messages carrying the marker: the steps of a conversation without tools."""
    return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant"
               and MARKER in _all_text(m.get("content")))


def parse(path: str, body: dict[str, Any]) -> Request:
    """The stub's view of one request (``path`` without the query)."""
    api = _api(path)
    tools: list[Tool] = []
    step = 0
    model = str(body.get("model", ""))
    schema: dict[str, Any] | None = None
    if api == "anthropic":
        tools = [Tool(tool["name"], tool.get("input_schema") or {})
                 for tool in body.get("tools") or [] if isinstance(tool, dict) and "name" in tool]
        messages = body.get("messages") or []
        step = sum(1 for m in messages if isinstance(m, dict) and isinstance(m.get("content"), list)
                   for block in m["content"]
                   if isinstance(block, dict) and block.get("type") == "tool_result")
        text = _all_text([body.get("system"), messages])
    elif api == "responses":
        tools = [Tool(tool["name"], tool.get("parameters") or {})
                 for tool in body.get("tools") or []
                 if isinstance(tool, dict) and tool.get("type") == "function"]
        items = body.get("input") or []
        if isinstance(items, str):
            items = [items]
        step = sum(1 for item in items if isinstance(item, dict)
                   and item.get("type") in ("function_call_output", "custom_tool_call_output"))
        text = _all_text([body.get("instructions"), items])
    elif api == "chat":
        functions = [tool.get("function") for tool in body.get("tools") or []
                     if isinstance(tool, dict)]
        tools = [Tool(f["name"], f.get("parameters") or {}) for f in functions
                 if isinstance(f, dict) and "name" in f]
        messages = body.get("messages") or []
        if tools:
            step = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "tool")
        else:
            step = _count_marked(messages)
        text = _all_text(messages)
    else:
        model = path.rsplit("/", 1)[-1].split(":", 1)[0]
        tools = [Tool(decl["name"], decl.get("parametersJsonSchema") or decl.get("parameters")
                      or {})
                 for group in body.get("tools") or []
                 for decl in (group or {}).get("functionDeclarations") or []]
        contents = body.get("contents") or []
        step = sum(1 for c in contents if isinstance(c, dict)
                   for part in c.get("parts") or []
                   if isinstance(part, dict) and "functionResponse" in part)
        config = body.get("generationConfig") or {}
        if config.get("responseMimeType") == "application/json":
            schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
        text = _all_text([body.get("systemInstruction"), contents])
    stream = bool(body.get("stream")) or api == "responses"
    return Request(api=api, stream=stream, step=step, tools=tools, model=model, text=text,
                   json_schema=schema)


# -- filling arguments from a schema ---------------------------------------------------------
def _default(name: str, prop: dict[str, Any]) -> Any:
    if prop.get("enum"):
        choices = prop["enum"]
        for preferred in ("LOW", "low", "user"):
            if preferred in choices:
                return preferred
        return choices[0]
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if isinstance(kind, str):  # Gemini's responseSchema writes OpenAPI types in upper case
        kind = kind.lower()
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        return max(1, prop.get("minimum", 1))
    if kind == "array":
        return []
    if kind == "object":
        return fill_object(prop)
    return name.replace("_", " ")


def fill_object(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON object with every required property of ``schema`` filled with a plain value."""
    props = schema.get("properties") or {}
    return {name: _default(name, props.get(name) or {}) for name in schema.get("required") or []}


def _pick(tools: list[Tool], names: tuple[str, ...]) -> Tool | None:
    by_name = {tool.name: tool for tool in tools}
    for name in names:
        if name in by_name:
            return by_name[name]
    return None


def shell_tool(tools: list[Tool]) -> Tool | None:
    """The agent's shell tool: by name, else the first tool with a command property."""
    found = _pick(tools, SHELL_TOOLS)
    if found is not None:
        return found
    for tool in tools:
        if {"command", "cmd"} & set(tool.schema.get("properties") or {}):
            return tool
    return None


def _timeout_value(name: str, prop: dict[str, Any], seconds: float) -> float | int:
    about = json.dumps(prop).lower()
    if "millisecond" in about or name.endswith("_ms"):
        return int(seconds * 1000)
    return int(seconds) if float(seconds).is_integer() else seconds


def shell_arguments(tool: Tool, step: Step, index: int) -> dict[str, Any]:
    """Arguments of the shell tool that run ``step.command`` (other fields from the schema)."""
    props = tool.schema.get("properties") or {}
    if set(props) == {"commands"}:  # Cline's run_commands: an array of command strings
        return {"commands": [step.command]}
    args = fill_object(tool.schema)
    key = "command" if "command" in props else "cmd" if "cmd" in props else "command"
    prop = props.get(key) or {}
    args[key] = ["bash", "-c", step.command] if prop.get("type") == "array" else step.command
    if "description" in props:
        args["description"] = f"stub step {index}"
    if "login" in props:
        args["login"] = False  # a login shell resets PATH from /etc/profile (Codex)
    if "security_risk" in props:
        args["security_risk"] = _default("security_risk", props["security_risk"])
    for name in ("timeout", "timeout_ms", "timeout_s"):
        if name in props and step.timeout_s is not None:
            args[name] = _timeout_value(name, props[name], step.timeout_s)
    if "yield_time_ms" in props and step.timeout_s is not None:
        args["yield_time_ms"] = int(step.timeout_s * 1000)
    return args


def _path_key(props: dict[str, Any]) -> str:
    for key in ("file_path", "absolute_path", "path", "filename", "target_file"):
        if key in props:
            return key
    return "path"


def file_arguments(tool: Tool, step: Step, workdir: Path) -> dict[str, Any]:
    """Arguments of an edit or read tool for ``step`` (paths absolute in ``workdir``)."""
    props = tool.schema.get("properties") or {}
    if set(props) == {"files"}:  # Cline's read_files: an array of {path} objects
        return {"files": [{"path": str(workdir / step.path)}]}
    args = fill_object(tool.schema)
    args[_path_key(props)] = str(workdir / step.path)
    if "command" in props:  # file_editor / str_replace_editor: one tool, several commands
        args["command"] = "str_replace" if step.action == "edit" else "view"
    if step.action == "edit":
        old = next((k for k in ("old_string", "old_str", "old_text", "search") if k in props),
                   "old_string")
        new = next((k for k in ("new_string", "new_str", "new_text", "replace") if k in props),
                   "new_string")
        args[old] = step.old
        args[new] = step.new
    for key in ("instruction", "description"):
        if key in props and key not in args:
            args[key] = f"stub {step.action} of {step.path}"
    if "security_risk" in props:
        args["security_risk"] = _default("security_risk", props["security_risk"])
    return args


# -- the script ------------------------------------------------------------------------------
class ScriptedModel:
    """Decides each answer of one run of one scenario (thread-safe)."""

    def __init__(self, scenario: Scenario, workdir: Path, *, heed: bool = False) -> None:
        self.scenario = scenario
        self.workdir = workdir
        self.heed = heed
        """Stop (answer the final text) once a request carries a message of failcode's hooks,
        as a model that heeds the advice would: the steps not taken are the steps saved."""
        self._lock = threading.Lock()
        self._faults_used: dict[tuple[int, int], int] = {}
        self.log: list[dict[str, Any]] = []

    def _fault_for(self, step: int, faults: tuple[Fault, ...]) -> Fault | None:
        with self._lock:
            for number, fault in enumerate(faults):
                used = self._faults_used.get((step, number), 0)
                if fault.count == 0 or used < fault.count:
                    self._faults_used[(step, number)] = used + 1
                    return fault
        return None

    def answer(self, request: Request) -> Answer:
        """The answer to ``request``: a fault, a tool call, or text."""
        steps = self.scenario.steps
        shell = shell_tool(request.tools)
        has_script = shell is not None or (not request.tools and request.json_schema is None
                                           and request.api == "chat")
        if request.json_schema is not None:
            return Answer(text=json.dumps(fill_object(request.json_schema)))
        if not has_script:
            return Answer(text="stub")
        index = request.step
        faults = steps[index].faults if index < len(steps) else self.scenario.final_faults
        fault = self._fault_for(index, faults)
        if fault is not None:
            return Answer(fault=fault, fault_step=index)
        marker = f"{MARKER} {index}]"
        if self.heed and TOLD in request.text and index < len(steps):
            return Answer(text=f"{marker} Stopping as failcode advised: {self.scenario.final}")
        if index >= len(steps):
            if shell is not None and SUBMIT in request.text:
                call = Call(shell.name, shell_arguments(shell, _submit_step(), index),
                            f"call_stub_{index}")
                return Answer(text=f"{marker} Submitting.", calls=[call])
            return Answer(text=f"{marker} {self.scenario.final}")
        step = steps[index]
        if shell is None:  # an agent without tools: a fenced command it offers to run
            return Answer(text=f"{marker} Run this:\n\n```bash\n{step.command}\n```\n",
                          plays=index)
        call_id = f"call_stub_{index}"
        if step.action == "run":
            return Answer(text=f"{marker} Running the next command.",
                          calls=[Call(shell.name, shell_arguments(shell, step, index), call_id)],
                          plays=index)
        tools = EDIT_TOOLS if step.action == "edit" else READ_TOOLS
        tool = _pick(request.tools, tools)
        if tool is None:  # not offered: the runner leaves such scenarios out for this agent
            return Answer(text=f"{marker} No {step.action} tool; stopping.")
        return Answer(text=f"{marker} {step.action.capitalize()} {step.path}.",
                      calls=[Call(tool.name, file_arguments(tool, step, self.workdir), call_id)],
                      plays=index)


def _submit_step() -> Step:
    from tests.lab.scenario import Step

    return Step(action="run", command=f"echo {SUBMIT}", exit=0)


# -- writing answers -------------------------------------------------------------------------
_ERRORS: Final = {
    "anthropic": {429: "rate_limit_error", 500: "api_error", 529: "overloaded_error",
                  503: "overloaded_error", 400: "invalid_request_error",
                  401: "authentication_error"},
    "openai": {429: ("rate_limit_exceeded", "requests"), 500: ("server_error", "server_error"),
               503: ("server_error", "server_error"),
               400: ("invalid_request", "invalid_request_error"),
               401: ("invalid_api_key", "invalid_request_error")},
    "gemini": {429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE",
               400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED"},
}
_MESSAGES: Final = {
    429: "Rate limit exceeded: too many requests, please retry later.",
    500: "Internal server error.",
    503: "The service is temporarily overloaded.",
    529: "Overloaded.",
    400: "Invalid request.",
    401: "Invalid API key.",
}


def error_body(api: str, status: int, step: int) -> dict[str, Any]:
    """The provider's own error body for ``status``, with the stub's marker in the message."""
    message = f"{_MESSAGES.get(status, 'Error.')} (stub fault {status} at step {step})"
    if api == "anthropic":
        kind = _ERRORS["anthropic"].get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message},
                "request_id": f"req_stub_{step}"}
    if api == "gemini":
        grpc = _ERRORS["gemini"].get(status, "INTERNAL")
        return {"error": {"code": status, "message": message, "status": grpc}}
    code, kind = _ERRORS["openai"].get(status, ("server_error", "server_error"))
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _usage(api: str) -> dict[str, Any]:
    if api == "anthropic":
        return {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0}
    if api == "responses":
        return {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0}}
    if api == "gemini":
        return {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120}
    return {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}


def _sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {payload}\n\n".encode()


def anthropic_events(answer: Answer, model: str, step: int) -> list[bytes]:
    """The SSE events of one Anthropic message."""
    message_id = f"msg_stub_{step:04d}"
    out = [_sse("message_start", {"type": "message_start", "message": {
        "id": message_id, "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {**_usage("anthropic"), "output_tokens": 1}}})]
    index = 0
    if answer.text:
        out += [_sse("content_block_start", {"type": "content_block_start", "index": index,
                                             "content_block": {"type": "text", "text": ""}}),
                _sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                             "delta": {"type": "text_delta",
                                                       "text": answer.text}}),
                _sse("content_block_stop", {"type": "content_block_stop", "index": index})]
        index += 1
    for call in answer.calls:
        out += [_sse("content_block_start", {
                    "type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": f"toolu_{call.call_id}",
                                      "name": call.tool, "input": {}}}),
                _sse("content_block_delta", {
                    "type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta",
                              "partial_json": json.dumps(call.arguments)}}),
                _sse("content_block_stop", {"type": "content_block_stop", "index": index})]
        index += 1
    stop = "tool_use" if answer.calls else "end_turn"
    out += [_sse("message_delta", {"type": "message_delta",
                                   "delta": {"stop_reason": stop, "stop_sequence": None},
                                   "usage": {"output_tokens": 20}}),
            _sse("message_stop", {"type": "message_stop"})]
    return out


def anthropic_message(answer: Answer, model: str, step: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if answer.text:
        content.append({"type": "text", "text": answer.text})
    content += [{"type": "tool_use", "id": f"toolu_{c.call_id}", "name": c.tool,
                 "input": c.arguments} for c in answer.calls]
    return {"id": f"msg_stub_{step:04d}", "type": "message", "role": "assistant",
            "model": model, "content": content,
            "stop_reason": "tool_use" if answer.calls else "end_turn", "stop_sequence": None,
            "usage": _usage("anthropic")}


def responses_items(answer: Answer, step: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if answer.text and not answer.calls:
        items.append({"type": "message", "id": f"msg_stub_{step:04d}", "role": "assistant",
                      "status": "completed",
                      "content": [{"type": "output_text", "text": answer.text,
                                   "annotations": []}]})
    items += [{"type": "function_call", "id": f"fc_stub_{step:04d}", "call_id": c.call_id,
               "name": c.tool, "arguments": json.dumps(c.arguments), "status": "completed"}
              for c in answer.calls]
    return items


def responses_events(answer: Answer, model: str, step: int) -> list[bytes]:
    response_id = f"resp_stub_{step:04d}"
    base = {"id": response_id, "object": "response", "created_at": 1_767_225_600 + step,
            "model": model, "output": []}
    out = [_sse("response.created", {"type": "response.created",
                                     "response": {**base, "status": "in_progress"}})]
    items = responses_items(answer, step)
    for number, item in enumerate(items):
        out.append(_sse("response.output_item.added", {
            "type": "response.output_item.added", "output_index": number, "item": item}))
        out.append(_sse("response.output_item.done", {
            "type": "response.output_item.done", "output_index": number, "item": item}))
    out.append(_sse("response.completed", {"type": "response.completed", "response": {
        **base, "status": "completed", "output": items, "usage": _usage("responses")}}))
    return out


def chat_message(answer: Answer, model: str, step: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.text or None}
    if answer.calls:
        message["tool_calls"] = [{"id": c.call_id, "type": "function",
                                  "function": {"name": c.tool,
                                               "arguments": json.dumps(c.arguments)}}
                                 for c in answer.calls]
    return {"id": f"chatcmpl-stub-{step:04d}", "object": "chat.completion",
            "created": 1_767_225_600 + step, "model": model,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if answer.calls else "stop"}],
            "usage": _usage("chat")}


def chat_events(answer: Answer, model: str, step: int) -> list[bytes]:
    base = {"id": f"chatcmpl-stub-{step:04d}", "object": "chat.completion.chunk",
            "created": 1_767_225_600 + step, "model": model}
    out = [_sse(None, {**base, "choices": [{"index": 0, "delta": {"role": "assistant",
                                                                  "content": ""},
                                            "finish_reason": None}]})]
    text = answer.text
    out += [_sse(None, {**base, "choices": [{"index": 0,  # a few chunks, as a real stream
                                             "delta": {"content": text[start:start + 40]},
                                             "finish_reason": None}]})
            for start in range(0, len(text), 40)]
    for number, call in enumerate(answer.calls):
        out.append(_sse(None, {**base, "choices": [{"index": 0, "delta": {"tool_calls": [{
            "index": number, "id": call.call_id, "type": "function",
            "function": {"name": call.tool, "arguments": json.dumps(call.arguments)}}]},
            "finish_reason": None}]}))
    out.append(_sse(None, {**base, "choices": [{"index": 0, "delta": {},
                                                "finish_reason": "tool_calls" if answer.calls
                                                else "stop"}],
                           "usage": _usage("chat")}))
    out.append(_sse(None, "[DONE]"))
    return out


def gemini_response(answer: Answer, model: str) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if answer.text:
        parts.append({"text": answer.text})
    parts += [{"functionCall": {"name": c.tool, "args": c.arguments}} for c in answer.calls]
    return {"candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": _usage("gemini"), "modelVersion": model}


# -- the HTTP server -------------------------------------------------------------------------
def _decode_body(raw: bytes, encoding: str) -> bytes:
    if encoding == "gzip":
        return gzip.decompress(raw)
    if encoding == "deflate":
        return zlib.decompress(raw)
    if encoding == "zstd":
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj().decompress(raw)
    return raw


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: StubServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        return

    def _read(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            raw = b"".join(chunks)
        else:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        return _decode_body(raw, self.headers.get("Content-Encoding", "").lower())

    def _json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, events: list[bytes], *, cut: bool = False) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in events:
            self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
            self.wfile.flush()
        if cut:
            self.close_connection = True
            return
        self.wfile.write(b"0\r\n\r\n")

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        self.server.record({"method": "GET", "path": path})
        if path.endswith("/models"):
            self._json(200, {"object": "list", "data": [
                {"id": "stub-model", "object": "model", "created": 0, "owned_by": "stub"}],
                "models": []})
            return
        self._json(404, {"error": {"message": f"no route {path}", "type": "not_found"}})

    def do_POST(self) -> None:
        url = urlsplit(self.path)
        try:
            body = json.loads(self._read() or b"{}")
        except (ValueError, OSError) as exc:
            self._json(400, {"error": {"message": f"stub: unreadable body: {exc}"}})
            return
        if not isinstance(body, dict):
            body = {}
        api = _api(url.path)
        if api == "unknown":
            self.server.record({"method": "POST", "path": url.path, "answer": "404"})
            self._json(404, {"error": {"message": f"no route {url.path}", "type": "not_found"}})
            return
        request = parse(url.path, body)
        if api == "gemini":
            request.stream = ":streamGenerateContent" in url.path
        answer = self.server.model.answer(request)
        self.server.record({"method": "POST", "path": url.path, "api": api,
                            "step": request.step, "stream": request.stream,
                            "tools": [t.name for t in request.tools],
                            "fault": None if answer.fault is None else answer.fault.status,
                            "calls": [c.tool for c in answer.calls], "plays": answer.plays,
                            "told": request.text.count(TOLD), "text": answer.text[:60]})
        if answer.fault is not None:
            self._fault(request, answer)
            return
        model = request.model or "stub-model"
        if api == "anthropic":
            if request.stream:
                self._stream(anthropic_events(answer, model, request.step))
            else:
                self._json(200, anthropic_message(answer, model, request.step))
        elif api == "responses":
            self._stream(responses_events(answer, model, request.step))
        elif api == "chat":
            if request.stream:
                self._stream(chat_events(answer, model, request.step))
            else:
                self._json(200, chat_message(answer, model, request.step))
        elif request.stream:
            self._stream([_sse(None, gemini_response(answer, model))])
        else:
            self._json(200, gemini_response(answer, model))

    def _fault(self, request: Request, answer: Answer) -> None:
        fault = answer.fault
        assert fault is not None
        if fault.mode == "hang":
            deadline = time.monotonic() + HANG_S
            while time.monotonic() < deadline and not self.server.stopping.is_set():
                time.sleep(0.2)
            self.close_connection = True
            return
        if fault.mode == "malformed":
            model = request.model or "stub-model"
            if request.stream:
                events = {"anthropic": anthropic_events, "responses": responses_events,
                          "chat": chat_events}.get(request.api)
                first = (events(answer, model, request.step)[0] if events
                         else _sse(None, gemini_response(Answer(text="partial"), model)))
                self._stream([first, b'data: {"type": "content_block_delta", "ind\n\n'],
                             cut=True)
            else:
                data = b'{"id": "stub-malformed", "choices": [{"mess'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            return
        provider = {"anthropic": "anthropic", "gemini": "gemini"}.get(request.api, "openai")
        headers = {}
        if fault.retry_after is not None:
            headers["retry-after"] = fault.retry_after
        self._json(fault.status, error_body(provider, fault.status, answer.fault_step), headers)


class StubServer(ThreadingHTTPServer):
    """The scripted model on 127.0.0.1; ``log`` lists what each request got."""

    daemon_threads = True

    def __init__(self, model: ScriptedModel, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.model = model
        self.stopping = threading.Event()
        self._log_lock = threading.Lock()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def record(self, entry: dict[str, Any]) -> None:
        with self._log_lock:
            self.model.log.append(entry)

    def __enter__(self) -> StubServer:
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05},
                         name="stub", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.shutdown()
        self.server_close()


def serve(scenario: Scenario, workdir: Path, port: int = 0, *, heed: bool = False) -> StubServer:
    """A stub server for one run (use as a context manager: it serves while inside); ``heed``
    makes the model stop when failcode's hooks tell it something (:class:`ScriptedModel`)."""
    return StubServer(ScriptedModel(scenario, workdir, heed=heed), port)
