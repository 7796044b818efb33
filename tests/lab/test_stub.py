"""The scripted model (tests/lab/stub.py), driven by the real provider SDKs on 127.0.0.1.

Each test states one rule of the stub: the step comes from the request (tool results in the
conversation), faults are answered in the provider's own shape before the step's answer, and
everything the stub sends is derived from the step.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

import anthropic
import httpx2
import openai
import pytest
from google import genai
from google.genai import types

from tests.lab.scenario import DEFAULT_FINAL, Fault, Scenario, Step, load
from tests.lab.stub import Tool, file_arguments, serve, shell_arguments

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from tests.lab.stub import StubServer

COMMAND_SCHEMA: dict[str, Any] = {
    "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
CMD_SCHEMA: dict[str, Any] = {
    "type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}
BASH = {"name": "Bash", "description": "Run a shell command", "input_schema": COMMAND_SCHEMA}
CHAT_BASH = {"type": "function", "function": {"name": "bash", "parameters": COMMAND_SCHEMA}}
GEMINI_SHELL = {"functionDeclarations": [{"name": "run_shell_command",
                                          "parametersJsonSchema": COMMAND_SCHEMA}]}


def _scenario(*commands: str, faults: tuple[Fault, ...] = ()) -> Scenario:
    """A scenario running ``commands`` in order; ``faults`` are answered at step 0."""
    steps = [Step(action="run", command=command, exit=0) for command in commands]
    steps[0] = Step(action="run", command=commands[0], exit=0, faults=faults)
    return Scenario(name="t", about="t", steps=tuple(steps))


@pytest.fixture
def two_steps(tmp_path: Path) -> Iterator[StubServer]:
    """A stub playing ``echo one`` then ``echo two``."""
    with serve(_scenario("echo one", "echo two"), tmp_path) as server:
        yield server


def _post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    """POST ``body`` as JSON: the status, the headers (lower-case names) and the raw body."""
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return (response.status, {k.lower(): v for k, v in response.headers.items()},
                    response.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def _anthropic(server: StubServer, **options: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="sk-ant-test", base_url=server.url,
                               **{"max_retries": 0, "timeout": 5.0, **options})


def _openai(server: StubServer, **options: Any) -> openai.OpenAI:
    return openai.OpenAI(api_key="sk-test", base_url=server.url + "/v1",
                         **{"max_retries": 0, "timeout": 5.0, **options})


def _gemini(server: StubServer) -> genai.Client:
    return genai.Client(api_key="x", http_options=types.HttpOptions(base_url=server.url))


def _tool_use(message: anthropic.types.Message) -> anthropic.types.ToolUseBlock:
    uses = [block for block in message.content if block.type == "tool_use"]
    assert len(uses) == 1, message.content
    return uses[0]


def _after_tool(messages: list[dict[str, Any]], use: anthropic.types.ToolUseBlock,
                output: str) -> list[dict[str, Any]]:
    """The conversation with the assistant's tool call and the user's tool result appended."""
    return [*messages,
            {"role": "assistant", "content": [{"type": "tool_use", "id": use.id,
                                                "name": use.name, "input": use.input}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                           "content": output}]}]


def _chat_body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-stub", "messages": messages, "tools": [CHAT_BASH], **extra}


# -- Anthropic Messages ----------------------------------------------------------------------
def test_anthropic_stream_plays_each_step_then_ends_the_turn(two_steps: StubServer) -> None:
    """Anthropic streams step 0's command, then step 1's after a tool result, then end_turn."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "fix it"}]
    commands = []
    with _anthropic(two_steps) as client:
        for output in ("one", "two"):
            with client.messages.stream(model="claude-stub", max_tokens=64, messages=messages,
                                        tools=[BASH]) as stream:
                message = stream.get_final_message()
            assert message.stop_reason == "tool_use"
            use = _tool_use(message)
            commands.append(use.input["command"])
            messages = _after_tool(messages, use, output)
        with client.messages.stream(model="claude-stub", max_tokens=64, messages=messages,
                                    tools=[BASH]) as stream:
            final = stream.get_final_message()
    assert commands == ["echo one", "echo two"]
    assert final.stop_reason == "end_turn"
    assert [block.type for block in final.content] == ["text"]
    assert DEFAULT_FINAL in final.content[0].text


def test_a_resent_conversation_gets_the_same_step(two_steps: StubServer) -> None:
    """A retry (the same conversation again) never advances the script."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "fix it"}]
    with _anthropic(two_steps) as client:
        first = client.messages.create(model="claude-stub", max_tokens=64, messages=messages,
                                       tools=[BASH])
        again = client.messages.create(model="claude-stub", max_tokens=64, messages=messages,
                                       tools=[BASH])
        messages = _after_tool(messages, _tool_use(first), "one")
        second = [client.messages.create(model="claude-stub", max_tokens=64, messages=messages,
                                         tools=[BASH]) for _ in range(2)]
    assert _tool_use(again).input == _tool_use(first).input == {"command": "echo one"}
    assert [_tool_use(m).input["command"] for m in second] == ["echo two", "echo two"]
    assert [entry["step"] for entry in two_steps.model.log] == [0, 0, 1, 1]


def test_a_request_without_a_shell_tool_gets_plain_text(two_steps: StubServer) -> None:
    """A side request (no tools, no marker) is answered with text and no tool call."""
    with _anthropic(two_steps) as client:
        message = client.messages.create(
            model="claude-stub", max_tokens=64,
            messages=[{"role": "user", "content": "Write a title for this conversation."}])
    assert [block.type for block in message.content] == ["text"]
    assert message.stop_reason == "end_turn"
    assert "echo" not in message.content[0].text
    assert two_steps.model.log[-1]["plays"] is None


def test_a_request_with_only_other_tools_gets_no_tool_call(two_steps: StubServer) -> None:
    """Tools that are not a shell (no shell name, no command property) are never called."""
    search = {"name": "WebSearch", "input_schema": {
        "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}
    with _anthropic(two_steps) as client:
        message = client.messages.create(model="claude-stub", max_tokens=64, tools=[search],
                                         messages=[{"role": "user", "content": "hi"}])
    assert [block.type for block in message.content] == ["text"]
    assert two_steps.model.log[-1]["calls"] == []


def test_a_tool_with_a_command_property_is_the_shell(two_steps: StubServer) -> None:
    """A tool of another name is taken as the shell when it has a ``command`` property."""
    runner = {"name": "run_it", "input_schema": COMMAND_SCHEMA}
    with _anthropic(two_steps) as client:
        message = client.messages.create(model="claude-stub", max_tokens=64, tools=[runner],
                                         messages=[{"role": "user", "content": "hi"}])
    use = _tool_use(message)
    assert (use.name, use.input) == ("run_it", {"command": "echo one"})


def test_an_edit_step_calls_the_edit_tool_with_an_absolute_path(tmp_path: Path) -> None:
    """An edit step is a call of the agent's Edit tool on the file under the workdir."""
    edit = {"name": "Edit", "input_schema": {
        "type": "object", "required": ["file_path", "old_string", "new_string"],
        "properties": {"file_path": {"type": "string"}, "old_string": {"type": "string"},
                       "new_string": {"type": "string"}}}}
    scenario = Scenario(name="t", about="t", steps=(
        Step(action="edit", path="src/a.py", old="a - b", new="a + b"),))
    with serve(scenario, tmp_path) as server, _anthropic(server) as client:
        message = client.messages.create(model="claude-stub", max_tokens=64,
                                         tools=[BASH, edit],
                                         messages=[{"role": "user", "content": "hi"}])
    use = _tool_use(message)
    assert use.name == "Edit"
    assert use.input == {"file_path": str(tmp_path / "src/a.py"), "old_string": "a - b",
                         "new_string": "a + b"}


def test_an_edit_step_without_an_edit_tool_calls_nothing(tmp_path: Path) -> None:
    """An edit step offered only a shell is answered with text, never a shell call."""
    scenario = Scenario(name="t", about="t", steps=(
        Step(action="edit", path="a.py", old="x", new="y"),))
    with serve(scenario, tmp_path) as server, _anthropic(server) as client:
        message = client.messages.create(model="claude-stub", max_tokens=64, tools=[BASH],
                                         messages=[{"role": "user", "content": "hi"}])
    assert [block.type for block in message.content] == ["text"]
    assert "No edit tool" in message.content[0].text


# -- OpenAI Responses ------------------------------------------------------------------------
def _responses_call(client: openai.OpenAI, items: list[dict[str, Any]]) -> Any:
    """The one function_call item of a streamed Responses answer."""
    tool = {"type": "function", "name": "exec_command", "parameters": CMD_SCHEMA}
    stream = client.responses.create(model="gpt-stub", input=items, tools=[tool], stream=True)
    done = [event.item for event in stream if event.type == "response.output_item.done"]
    calls = [item for item in done if item.type == "function_call"]
    assert len(calls) == 1, done
    return calls[0]


def test_responses_stream_a_function_call_and_advance_on_its_output(
        two_steps: StubServer) -> None:
    """Responses: a function_call runs step 0; a function_call_output item advances to step 1."""
    items: list[dict[str, Any]] = [{"role": "user", "content": "fix it"}]
    with _openai(two_steps) as client:
        first = _responses_call(client, items)
        items += [{"type": "function_call", "call_id": first.call_id, "name": first.name,
                   "arguments": first.arguments},
                  {"type": "function_call_output", "call_id": first.call_id, "output": "one"}]
        second = _responses_call(client, items)
    assert first.name == "exec_command"
    assert json.loads(first.arguments) == {"cmd": "echo one"}
    assert json.loads(second.arguments) == {"cmd": "echo two"}


# -- OpenAI Chat Completions -----------------------------------------------------------------
def test_chat_tool_calls_advance_on_tool_messages(two_steps: StubServer) -> None:
    """Chat with tools: tool_calls run step 0; a ``role: tool`` message advances to step 1."""
    messages: list[Any] = [{"role": "user", "content": "fix it"}]
    with _openai(two_steps) as client:
        first = client.chat.completions.create(model="gpt-stub", messages=messages,
                                               tools=[CHAT_BASH])
        call = first.choices[0].message.tool_calls[0]
        messages += [first.choices[0].message.model_dump(exclude_none=True),
                     {"role": "tool", "tool_call_id": call.id, "content": "one"}]
        second = client.chat.completions.create(model="gpt-stub", messages=messages,
                                                tools=[CHAT_BASH])
    assert first.choices[0].finish_reason == "tool_calls"
    assert call.function.name == "bash"
    assert json.loads(call.function.arguments) == {"command": "echo one"}
    second_call = second.choices[0].message.tool_calls[0]
    assert json.loads(second_call.function.arguments) == {"command": "echo two"}


def test_chat_stream_carries_the_tool_call(two_steps: StubServer) -> None:
    """Chat SSE: the chunks carry the step's tool call and end with finish_reason tool_calls."""
    with _openai(two_steps) as client:
        chunks = list(client.chat.completions.create(
            model="gpt-stub", messages=[{"role": "user", "content": "hi"}], tools=[CHAT_BASH],
            stream=True))
    calls = [call for chunk in chunks for choice in chunk.choices
             for call in choice.delta.tool_calls or []]
    assert [json.loads(call.function.arguments) for call in calls] == [{"command": "echo one"}]
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_chat_without_tools_offers_a_fenced_command_and_counts_markers(
        two_steps: StubServer) -> None:
    """Chat without tools: a ```bash block and ``[stub step N]``; a marked reply advances."""
    messages: list[Any] = [{"role": "user", "content": "fix it"}]
    with _openai(two_steps) as client:
        first = client.chat.completions.create(model="gpt-stub", messages=messages)
        text = first.choices[0].message.content or ""
        messages += [{"role": "assistant", "content": text},
                     {"role": "user", "content": "one"}]
        second = client.chat.completions.create(model="gpt-stub", messages=messages)
    assert "[stub step 0]" in text
    assert "```bash\necho one\n```" in text
    assert first.choices[0].message.tool_calls is None
    reply = second.choices[0].message.content or ""
    assert "[stub step 1]" in reply
    assert "```bash\necho two\n```" in reply


def test_a_marker_quoted_by_the_user_does_not_advance(two_steps: StubServer) -> None:
    """Only assistant messages carrying the marker count as steps taken."""
    messages = [{"role": "user", "content": "[stub step 0] Run this: echo one"}]
    status, _, body = _post(two_steps.url + "/v1/chat/completions",
                            {"model": "gpt-stub", "messages": messages})
    assert status == 200
    assert "[stub step 0]" in json.loads(body)["choices"][0]["message"]["content"]


# -- Gemini ----------------------------------------------------------------------------------
def _gemini_config(**extra: Any) -> types.GenerateContentConfig:
    return types.GenerateContentConfig(tools=[types.Tool(function_declarations=[
        types.FunctionDeclaration(name="run_shell_command",
                                  parameters_json_schema=COMMAND_SCHEMA)])], **extra)


def test_gemini_function_call_advances_on_a_function_response(two_steps: StubServer) -> None:
    """Gemini: a functionCall runs step 0; a functionResponse part advances to step 1."""
    contents: list[types.Content] = [types.Content(role="user", parts=[types.Part(text="hi")])]
    with _gemini(two_steps) as client:
        first = client.models.generate_content(model="gemini-stub", contents=contents,
                                               config=_gemini_config())
        assert first.candidates
        assert first.candidates[0].content
        contents += [first.candidates[0].content, types.Content(role="user", parts=[
            types.Part.from_function_response(name="run_shell_command",
                                              response={"output": "one"})])]
        second = client.models.generate_content(model="gemini-stub", contents=contents,
                                                config=_gemini_config())
    assert first.function_calls
    assert [(c.name, c.args) for c in first.function_calls] == [
        ("run_shell_command", {"command": "echo one"})]
    assert second.function_calls
    assert [c.args for c in second.function_calls] == [{"command": "echo two"}]


def test_gemini_stream_carries_the_function_call(two_steps: StubServer) -> None:
    """Gemini streamGenerateContent?alt=sse streams the step's functionCall."""
    with _gemini(two_steps) as client:
        chunks = list(client.models.generate_content_stream(
            model="gemini-stub", contents="hi", config=_gemini_config()))
    calls = [call.args for chunk in chunks for call in chunk.function_calls or []]
    assert calls == [{"command": "echo one"}]
    assert two_steps.model.log[-1]["stream"] is True


JSON_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["title", "count", "done", "tags", "kind"],
    "properties": {"title": {"type": "string"}, "count": {"type": "integer", "minimum": 3},
                   "done": {"type": "boolean"}, "tags": {"type": "array"},
                   "kind": {"type": "string", "enum": ["x", "user"]},
                   "note": {"type": "string"}}}


def test_gemini_json_request_gets_an_object_filled_from_its_schema(
        two_steps: StubServer) -> None:
    """A Gemini request for application/json gets its required properties, typed."""
    with _gemini(two_steps) as client:
        reply = client.models.generate_content(
            model="gemini-stub", contents="Is the task done?",
            config=types.GenerateContentConfig(response_mime_type="application/json",
                                               response_json_schema=JSON_SCHEMA))
    assert json.loads(reply.text or "") == {"title": "title", "count": 3, "done": False,
                                            "tags": [], "kind": "user"}


def test_gemini_json_request_does_not_advance_or_consume_a_fault(tmp_path: Path) -> None:
    """A JSON side request neither plays a step nor uses up the step's fault."""
    scenario = _scenario("echo one", faults=(Fault(status=429, count=1),))
    with serve(scenario, tmp_path) as server, _gemini(server) as client:
        client.models.generate_content(
            model="gemini-stub", contents="Is the task done?",
            config=types.GenerateContentConfig(response_mime_type="application/json",
                                               response_json_schema=JSON_SCHEMA))
        status, _, _ = _post(server.url + "/v1beta/models/gemini-stub:generateContent",
                             {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                              "tools": [GEMINI_SHELL]})
    assert status == 429
    assert [(e["fault"], e["plays"]) for e in server.model.log] == [(None, None), (429, None)]


def test_gemini_response_schema_with_upper_case_types_is_filled_typed(
        two_steps: StubServer) -> None:
    """Gemini's ``responseSchema`` (types in upper case, as the SDK sends) is filled typed."""
    with _gemini(two_steps) as client:
        reply = client.models.generate_content(
            model="gemini-stub", contents="Is the task done?",
            config=types.GenerateContentConfig(response_mime_type="application/json",
                                               response_schema=JSON_SCHEMA))
    assert json.loads(reply.text or "") == {"title": "title", "count": 3, "done": False,
                                            "tags": [], "kind": "user"}


# -- faults ----------------------------------------------------------------------------------
PROVIDERS: dict[str, tuple[str, dict[str, Any]]] = {
    "anthropic": ("/v1/messages", {"model": "claude-stub", "max_tokens": 64, "tools": [BASH],
                                   "messages": [{"role": "user", "content": "hi"}]}),
    "openai": ("/v1/chat/completions", _chat_body([{"role": "user", "content": "hi"}])),
    "gemini": ("/v1beta/models/gemini-stub:generateContent",
               {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                "tools": [GEMINI_SHELL]}),
}
MARKER_429 = "(stub fault 429 at step 0)"


def _error_message(provider: str, body: dict[str, Any]) -> str:
    """The message of the provider's own error shape (a KeyError if the shape is wrong)."""
    if provider == "anthropic":
        assert body["type"] == "error"
        assert body["error"]["type"] == "rate_limit_error"
    elif provider == "openai":
        assert body["error"]["code"] == "rate_limit_exceeded"
    else:
        assert body["error"]["status"] == "RESOURCE_EXHAUSTED"
        assert body["error"]["code"] == 429
    return str(body["error"]["message"])


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_429_fault_has_the_provider_shape_and_retry_after(provider: str,
                                                            tmp_path: Path) -> None:
    """A 429 fault: the status, ``retry-after``, the provider's error body and the marker."""
    path, body = PROVIDERS[provider]
    scenario = _scenario("echo one", faults=(Fault(status=429, count=1, retry_after="1"),))
    with serve(scenario, tmp_path) as server:
        status, headers, raw = _post(server.url + path, body)
    assert status == 429
    assert headers.get("retry-after") == "1"
    assert MARKER_429 in _error_message(provider, json.loads(raw))


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_fault_answered_once_is_followed_by_the_step(provider: str, tmp_path: Path) -> None:
    """The request after a count-1 fault gets the same step's answer."""
    path, body = PROVIDERS[provider]
    scenario = _scenario("echo one", faults=(Fault(status=429, count=1, retry_after="1"),))
    with serve(scenario, tmp_path) as server:
        statuses = [_post(server.url + path, body)[0]]
        status, _, raw = _post(server.url + path, body)
    statuses.append(status)
    assert statuses == [429, 200]
    assert "echo one" in raw.decode()
    assert [(e["step"], e["fault"], e["plays"]) for e in server.model.log] == [
        (0, 429, None), (0, None, 0)]


def test_a_fault_without_retry_after_sends_no_header(tmp_path: Path) -> None:
    """``retry-after`` is sent only when the scenario sets one."""
    path, body = PROVIDERS["anthropic"]
    with serve(_scenario("echo one", faults=(Fault(status=500),)), tmp_path) as server:
        status, headers, raw = _post(server.url + path, body)
    assert status == 500
    assert "retry-after" not in headers
    assert json.loads(raw)["error"]["type"] == "api_error"


def test_the_sdk_retries_through_a_count_one_fault(tmp_path: Path) -> None:
    """The Anthropic SDK's own retry gets past a 500 answered once, at the same step."""
    with (serve(_scenario("echo one", faults=(Fault(status=500, count=1),)), tmp_path)
          as server, _anthropic(server, max_retries=2) as client):
        message = client.messages.create(model="claude-stub", max_tokens=64, tools=[BASH],
                                         messages=[{"role": "user", "content": "hi"}])
    assert _tool_use(message).input == {"command": "echo one"}
    assert [(e["step"], e["fault"], e["plays"]) for e in server.model.log] == [
        (0, 500, None), (0, None, 0)]


def test_faults_of_a_step_are_answered_in_order(tmp_path: Path) -> None:
    """A step's faults come one after another, each its count of times, then the step."""
    faults = (Fault(status=429, count=2), Fault(status=503, count=1))
    path, body = PROVIDERS["openai"]
    with serve(_scenario("echo one", faults=faults), tmp_path) as server:
        statuses = [_post(server.url + path, body)[0] for _ in range(4)]
    assert statuses == [429, 429, 503, 200]


def test_a_fatal_fault_answers_every_request_for_its_step(tmp_path: Path) -> None:
    """A fault with count 0 is answered to every request, and the step is never played."""
    path, body = PROVIDERS["anthropic"]
    with serve(_scenario("echo one", faults=(Fault(status=500, count=0),)), tmp_path) as server:
        statuses = [_post(server.url + path, body)[0] for _ in range(3)]
    assert statuses == [500, 500, 500]
    assert [(e["fault"], e["plays"]) for e in server.model.log] == [(500, None)] * 3


def test_final_faults_are_answered_after_the_last_step(tmp_path: Path) -> None:
    """``final_faults`` answer the request that follows the last tool result."""
    scenario = Scenario(name="t", about="t", steps=(Step(action="run", command="echo one",
                                                         exit=0),),
                        final_faults=(Fault(status=529, count=1),))
    messages = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t0",
                                                   "name": "Bash", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t0",
                                              "content": "one"}]}]
    body = {"model": "claude-stub", "max_tokens": 64, "tools": [BASH], "messages": messages}
    with serve(scenario, tmp_path) as server:
        status, _, raw = _post(server.url + "/v1/messages", body)
        after, _, final = _post(server.url + "/v1/messages", body)
    assert status == 529
    assert json.loads(raw)["error"]["type"] == "overloaded_error"
    assert after == 200
    assert json.loads(final)["stop_reason"] == "end_turn"


def test_a_malformed_stream_makes_the_sdk_raise(tmp_path: Path) -> None:
    """A ``malformed`` fault cuts the stream mid-JSON: the SDK raises, no message is built."""
    scenario = _scenario("echo one", faults=(Fault(mode="malformed"),))
    with serve(scenario, tmp_path) as server, _anthropic(server) as client:
        # the transport's error, or (anthropic 2.17 on) the SDK's wrapping of it
        with (pytest.raises((httpx2.TransportError, ValueError, anthropic.APIConnectionError)),
              client.messages.stream(model="claude-stub", max_tokens=64, tools=[BASH],
                                     messages=[{"role": "user", "content": "hi"}]) as stream):
            stream.get_final_message()
        retried = client.messages.create(model="claude-stub", max_tokens=64, tools=[BASH],
                                         messages=[{"role": "user", "content": "hi"}])
    assert _tool_use(retried).input == {"command": "echo one"}


def test_a_malformed_json_answer_is_not_json(tmp_path: Path) -> None:
    """A ``malformed`` fault on a non-stream chat request answers 200 with a body cut short."""
    path, body = PROVIDERS["openai"]
    with serve(_scenario("echo one", faults=(Fault(mode="malformed"),)), tmp_path) as server:
        status, _, raw = _post(server.url + path, body)
    assert status == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(raw)


def test_a_hang_fault_answers_nothing_until_the_client_gives_up(tmp_path: Path) -> None:
    """A ``hang`` fault sends no answer: a client with a 1 s timeout times out."""
    with (serve(_scenario("echo one", faults=(Fault(mode="hang"),)), tmp_path) as server,
          _openai(server, timeout=1.0) as client):
        with pytest.raises(openai.APITimeoutError):
            client.chat.completions.create(model="gpt-stub", tools=[CHAT_BASH],
                                           messages=[{"role": "user", "content": "hi"}])
        assert [entry["fault"] for entry in server.model.log] == [500]


# -- schema filling --------------------------------------------------------------------------
def _shell(properties: dict[str, Any], required: tuple[str, ...] = ("command",)) -> Tool:
    return Tool("shell", {"type": "object", "properties": properties,
                          "required": list(required)})


RUN = Step(action="run", command="make test", exit=0)
RUN_5S = Step(action="run", command="sleep 9", exit=0, timeout_s=5)


def test_shell_arguments_turn_login_off() -> None:
    """An optional ``login`` property is set to False (a login shell resets PATH)."""
    args = shell_arguments(_shell({"command": {"type": "string"},
                                   "login": {"type": "boolean"}}), RUN, 0)
    assert args == {"command": "make test", "login": False}


def test_shell_arguments_pick_the_low_security_risk() -> None:
    """``security_risk`` gets the LOW value of its enum, wherever it is in the list."""
    tool = _shell({"command": {"type": "string"},
                   "security_risk": {"type": "string", "enum": ["MEDIUM", "LOW", "HIGH"]}})
    assert shell_arguments(tool, RUN, 0)["security_risk"] == "LOW"


def test_shell_arguments_give_milliseconds_when_the_description_says_so() -> None:
    """A timeout described in milliseconds is the step's timeout times 1000."""
    tool = _shell({"command": {"type": "string"}, "timeout": {
        "type": "number", "description": "Optional timeout in milliseconds (max 600000)"}})
    assert shell_arguments(tool, RUN_5S, 0)["timeout"] == 5000


def test_shell_arguments_give_seconds_otherwise() -> None:
    """A timeout not described in milliseconds is the step's timeout in seconds."""
    tool = _shell({"command": {"type": "string"}, "timeout": {
        "type": "number", "description": "Sets a hard timeout in seconds"}})
    half = Step(action="run", command="sleep 9", exit=0, timeout_s=2.5)
    assert shell_arguments(tool, RUN_5S, 0)["timeout"] == 5
    assert shell_arguments(tool, half, 0)["timeout"] == 2.5


def test_shell_arguments_give_milliseconds_to_a_property_named_ms() -> None:
    """A ``timeout_ms`` property is in milliseconds even when its description does not say."""
    tool = _shell({"command": {"type": "string"},
                   "timeout_ms": {"type": "integer", "description": "How long to wait."}})
    assert shell_arguments(tool, RUN_5S, 0)["timeout_ms"] == 5000


def test_shell_arguments_leave_the_timeout_out_when_the_step_sets_none() -> None:
    """Without ``timeout_s`` on the step an optional timeout property is not sent."""
    tool = _shell({"command": {"type": "string"}, "timeout": {"type": "number"}})
    assert "timeout" not in shell_arguments(tool, RUN, 0)


def test_shell_arguments_run_an_array_command_through_bash() -> None:
    """An array-typed command is ``["bash", "-c", command]``."""
    tool = _shell({"command": {"type": "array", "items": {"type": "string"}}})
    assert shell_arguments(tool, RUN, 0) == {"command": ["bash", "-c", "make test"]}


def test_shell_arguments_fill_the_other_required_properties() -> None:
    """Required properties besides the command get plain values of their type."""
    tool = _shell({"cmd": {"type": "string"}, "workdir": {"type": ["null", "string"]},
                   "retries": {"type": "integer", "minimum": 2},
                   "description": {"type": "string"}},
                  required=("cmd", "workdir", "retries", "description"))
    assert shell_arguments(tool, RUN, 7) == {"cmd": "make test", "workdir": "workdir",
                                             "retries": 2, "description": "stub step 7"}


EDIT = Step(action="edit", path="src/calc.py", old="a - b", new="a + b")
READ = Step(action="read", path="src/calc.py")
FILE_EDITOR = Tool("file_editor", {"type": "object", "required": ["command", "path"],
                                   "properties": {
                                       "command": {"type": "string",
                                                   "enum": ["view", "create", "str_replace"]},
                                       "path": {"type": "string"},
                                       "old_str": {"type": "string"},
                                       "new_str": {"type": "string"}}})


def test_file_arguments_for_an_edit_tool(tmp_path: Path) -> None:
    """Edit gets the absolute file_path, old_string and new_string."""
    tool = Tool("Edit", {"type": "object", "required": ["file_path", "old_string", "new_string"],
                         "properties": {"file_path": {"type": "string"},
                                        "old_string": {"type": "string"},
                                        "new_string": {"type": "string"},
                                        "replace_all": {"type": "boolean"}}})
    assert file_arguments(tool, EDIT, tmp_path) == {
        "file_path": str(tmp_path / "src/calc.py"), "old_string": "a - b", "new_string": "a + b"}


def test_file_arguments_for_a_file_editor_edit(tmp_path: Path) -> None:
    """file_editor edits with command str_replace, an absolute path, old_str and new_str."""
    assert file_arguments(FILE_EDITOR, EDIT, tmp_path) == {
        "command": "str_replace", "path": str(tmp_path / "src/calc.py"),
        "old_str": "a - b", "new_str": "a + b"}


def test_file_arguments_for_a_file_editor_read(tmp_path: Path) -> None:
    """file_editor reads with command view and an absolute path, nothing to replace."""
    assert file_arguments(FILE_EDITOR, READ, tmp_path) == {
        "command": "view", "path": str(tmp_path / "src/calc.py")}


# -- determinism and routes ------------------------------------------------------------------
def test_two_runs_of_a_conversation_send_the_same_bytes(tmp_path: Path) -> None:
    """Ids and timestamps come from the step: two runs answer byte for byte the same."""
    body = _chat_body([{"role": "user", "content": "hi"}])
    answers = []
    for _ in range(2):
        with serve(_scenario("echo one", "echo two"), tmp_path) as server:
            answers.append(_post(server.url + "/v1/chat/completions", body))
    assert answers[0][0] == 200
    assert answers[0][2] == answers[1][2]


def test_ids_name_the_step(two_steps: StubServer) -> None:
    """The answers to two steps carry different ids."""
    first = json.loads(_post(two_steps.url + "/v1/chat/completions",
                             _chat_body([{"role": "user", "content": "hi"}]))[2])
    second = json.loads(_post(two_steps.url + "/v1/chat/completions", _chat_body([
        {"role": "user", "content": "hi"}, first["choices"][0]["message"],
        {"role": "tool", "tool_call_id": "call_stub_0", "content": "one"}]))[2])
    assert first["id"] != second["id"]
    assert (first["choices"][0]["message"]["tool_calls"][0]["id"]
            != second["choices"][0]["message"]["tool_calls"][0]["id"])


def test_a_scenario_file_plays_through_the_stub(tmp_path: Path) -> None:
    """A scenario loaded from TOML plays its steps and its faults."""
    path = tmp_path / "two.toml"
    path.write_text('about = "t"\n\n[[step]]\nrun = "ls"\nexit = 0\n'
                    'faults = [{ status = 503, count = 1 }]\n', encoding="utf-8")
    body = _chat_body([{"role": "user", "content": "hi"}])
    with serve(load(path), tmp_path) as server:
        first = _post(server.url + "/v1/chat/completions", body)
        second = _post(server.url + "/v1/chat/completions", body)
    assert first[0] == 503
    assert json.loads(first[2])["error"]["code"] == "server_error"
    call = json.loads(second[2])["choices"][0]["message"]["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {"command": "ls"}


def test_models_lists_the_stub_model(two_steps: StubServer) -> None:
    """GET /v1/models lists ``stub-model``."""
    with _openai(two_steps) as client:
        ids = [model.id for model in client.models.list()]
    assert ids == ["stub-model"]


def test_an_unknown_path_answers_404_json(two_steps: StubServer) -> None:
    """A POST to a path of no known API answers 404 with a JSON error."""
    status, headers, raw = _post(two_steps.url + "/v1/embeddings", {"input": "hi"})
    assert status == 404
    assert headers["content-type"] == "application/json"
    assert "/v1/embeddings" in json.loads(raw)["error"]["message"]
    assert two_steps.model.log == [{"method": "POST", "path": "/v1/embeddings", "answer": "404"}]
