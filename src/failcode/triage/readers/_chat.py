"""Multi-agent chat transcripts: AG2 chats, AutoGen 0.4+ task results, OpenAI message lists.

Three formats, one module: they are the same chat-completion messages kept by different hands,
and each step names the agent that took it (:attr:`~failcode.triage._events.Command.actor`).

Rules (from the frameworks' own code; the fixtures in tests/fixtures/multiagent/ were written
by running them against a scripted model):

- **AG2** (``ag2`` 0.14.0, the AutoGen 0.2 line; module ``autogen``). A transcript is what a
  user keeps of ``ConversableAgent.chat_messages[peer]``, ``ChatResult.chat_history`` or
  ``GroupChat.messages``: a JSON array of messages, or an object whose members are such
  arrays keyed by the peer agent's name (``chat_messages`` saved by name; each member is a
  session named ``<file stem>/<key>``). ``normilize_message_to_oai``
  (``agentchat/conversable_agent.py``) keeps ``content``, ``function_call``,
  ``tool_responses``, ``tool_call_id``, ``name`` and ``context`` and sets ``role``; a
  message is named by its agent (``oai_message["name"] = name``) unless it carries
  ``tool_calls`` or a ``function_call`` ("only messages with role 'assistant' can have a
  function call"); ``GroupChat.append`` names every message but a ``function`` one
  (``message["name"] = speaker.name``).
- A code block (AG2's ``CODE_BLOCK_PATTERN``, ``code_utils.py``:
  ``` ```[ \\t]*(\\w+)?[ \\t]*\\r?\\n(.*?)\\r?\\n[ \\t]*``` ```) in an agent's message is
  a step of that agent; its result is the next message that is an executor's reply,
  ``f"exitcode: {exit_code} ({exitcode2str})\\nCode output: {output}"`` with
  ``exitcode2str`` ``"execution succeeded"`` or ``"execution failed"``
  (``_generate_code_execution_reply_using_executor`` and ``generate_code_execution_reply``).
  ``LocalCommandLineCodeExecutor`` (``coding/local_commandline_code_executor.py``) runs
  the blocks in order and stops at the first that fails; a timeout is exit 124 with the
  output ending in ``TIMEOUT_MSG`` (``"Timeout"``); ``unknown language X`` (exit 1) and
  ``Filename is not in the workspace`` are the executor refusing the block (a rejected
  action). The step's command is what the executor ran, block after block (it writes each
  to a file and runs it with the language's program): a shell block's code, a Python block
  as ``python -c CODE``, another language's code as written; which block failed is not
  recorded, the output is.
- A tool call is a step: each ``tool_calls`` entry (``{"id", "function": {"name",
  "arguments"}}``) or a legacy ``function_call``. Its result is the ``role: tool`` message's
  ``tool_responses`` entry (AG2) or the ``role: tool`` message itself (OpenAI) with the same
  ``tool_call_id``, or the next ``role: function`` message of that name. AG2's
  ``execute_function`` answers ``f"Error: {e}"`` when the function raised (a tool failure:
  ``[Errno N]`` names the OS error), ``f"Error: Function {func_name} not found."`` and
  ``"... The argument must be in JSON format."`` when the model asked for what cannot run
  (a rejected action). Who made the call: its message's ``name``; AG2 leaves it out on a
  tool-call message, so in a chat of two agents it is the one that did not execute it (the
  tool result's ``name``).
- **AutoGen 0.4+** (``autogen-agentchat`` 0.7.5). ``TaskResult`` (``base/_task.py``:
  ``messages`` and ``stop_reason``) saved with ``model_dump``, or its ``messages`` array
  alone; every message has its agent as ``source`` and a ``type`` (``messages.py``). A
  ``ToolCallRequestEvent``'s ``content`` is a list of ``{"id", "name", "arguments"}``, each
  a step of ``source``; its result is the ``ToolCallExecutionEvent`` entry with the same
  ``call_id``, a failure when ``is_error`` (``StaticWorkbench.call_tool`` writes
  ``str(error)``; ``Tool {name} not found.`` and the assistant's ``Error: tool '{name}' not
  found in any workbench`` and unreadable arguments are rejected actions). A code block in a
  ``TextMessage`` is a step of its ``source``; a ``CodeExecutorAgent``
  (``agents/_code_executor_agent.py``) answers ``f"The script ran, then exited with an error
  (POSIX exit code: {exit_code})\\nIts output was:\\n{output}"``, or ``f"The script ran but
  produced no output to console. The POSIX exit code was: {exit_code}. ..."``, or the
  output alone (exit 0); ``Code execution was not approved. Reason: ...`` is a person's
  refusal (cancelled). A ``CodeGenerationEvent`` (``code_blocks``) and the
  ``CodeExecutionEvent`` after it (``result.exit_code``, ``result.output``) are one step of
  their ``source``. ``stop_reason``: ``Maximum number of turns N reached.``, ``Maximum
  number of messages N reached...``, ``Token usage limit reached...`` and ``Timeout of N
  seconds reached`` end on a limit; any other reason (``Text 'TERMINATE' mentioned``, a
  handoff, a stop message) is the team's answer (``submitted``); none, ``unknown``. Time:
  each message's ``created_at``.
- **OpenAI message lists**: a JSON array of chat-completion messages, or an object with one
  in ``messages`` (a request body). Tool calls as above; a result carries no error flag, so
  one that reads ``Error...`` or ends in a Python exception is a tool failure, and a call
  whose arguments hold a ``command`` (or ``cmd``) is a shell command whose status is the
  result's ``exit code N`` (or AG2's ``exitcode: N``) line, else 1 when the output shows a
  failure, else 0. The actor is the calling message's ``name``, if any.
- Detection, after every other reader (each format's first message decides):
  ``autogen-messages`` when it has a string ``source`` and one of AutoGen's message
  ``type`` names; ``ag2-chat`` when it has a ``role`` other than ``system`` and a ``name``,
  or the input's head holds AG2's executor reply or ``tool_responses``; ``openai-messages``
  when it has a ``role`` and the head holds ``tool_calls`` or ``tool_call_id`` (and no
  Anthropic ``tool_use`` block: not an Anthropic message list).
- Ending: AG2 ends ``submitted`` when its last message says ``TERMINATE`` (the default
  termination word of ``AssistantAgent``), an OpenAI list when its last message is the
  model's answer without a tool call; else ``unknown`` (neither records a limit).
- Messages are read one at a time (:class:`~failcode.triage.readers._jsonstream.JsonStream`);
  a damaged input (cut, not JSON from some point) keeps the steps read before the damage.
"""

from __future__ import annotations

import errno
import functools
import json
import re
import shlex
from dataclasses import dataclass, field, replace
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Final

from failcode.triage._events import (
    Command,
    ErrorText,
    InputError,
    Rejected,
    SessionEnd,
    SessionStart,
    cancelled,
)
from failcode.triage.readers._jsonstream import JsonStream
from failcode.triage.readers._swe_agent import shell_failed
from failcode.triage.readers._text import (
    as_dict,
    as_key,
    as_list,
    as_str,
    exception_line,
    exit_in_text,
    first_line,
    iso_time,
    split_exception,
)

if TYPE_CHECKING:
    from collections.abc import Generator, Iterable, Iterator
    from typing import BinaryIO

    from failcode.triage._events import Event

__all__ = ["AG2_CHAT", "AUTOGEN_MESSAGES", "OPENAI_MESSAGES", "ChatReader"]

AG2_CHAT: Final = "ag2-chat"
AUTOGEN_MESSAGES: Final = "autogen-messages"
OPENAI_MESSAGES: Final = "openai-messages"

_ROLES: Final = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
_AUTOGEN_TYPES: Final = frozenset({
    "TextMessage", "MultiModalMessage", "StopMessage", "HandoffMessage",
    "ToolCallSummaryMessage", "ToolCallRequestEvent",
    "ToolCallExecutionEvent", "CodeGenerationEvent", "CodeExecutionEvent",
    "UserInputRequestedEvent", "MemoryQueryEvent", "ModelClientStreamingChunkEvent",
    "ThoughtEvent", "SelectSpeakerEvent", "SelectorEvent"})
"""The ``type`` literal of every message class ``autogen_agentchat.messages`` 0.7.5 declares
(a ``StructuredMessage``'s ``type`` is its class's name, ``StructuredMessage[...]``)."""

_CODE_BLOCK: Final = re.compile(r"```[ \t]*(\w+)?[ \t]*\r?\n(.*?)\r?\n[ \t]*```", re.DOTALL)
_AG2_EXIT: Final = re.compile(
    r"\Aexitcode: (-?\d+) \(execution (?:succeeded|failed)\)\r?\nCode output: ?")
_AG2_EXIT_BYTES: Final = re.compile(rb"exitcode: -?\d+ \(execution (?:succeeded|failed)\)")
_AUTOGEN_FAILED: Final = re.compile(
    r"\AThe script ran, then exited with an error \(POSIX exit code: (-?\d+)\)\r?\n"
    r"Its output was:\r?\n")
_AUTOGEN_SILENT: Final = re.compile(
    r"\AThe script ran but produced no output to console\. The POSIX exit code was: (-?\d+)\.")
_NOT_APPROVED: Final = re.compile(r"\ACode execution was not approved\. Reason: ?(.*)", re.DOTALL)
_EXECUTOR_REFUSED: Final = re.compile(
    r"\A\s*(unknown language \S+|Filename is not in the workspace)")
_TIMEOUT_MSG: Final = "Timeout"
_NOT_CALLABLE: Final = re.compile(
    r"\A(?:Error: Function \S+ not found\.|Tool \S+ not found\.|Error: tool '[^']*' not found"
    r"|Error: .*\bThe argument must be in JSON format\.|Error: (?:Expecting|Unterminated"
    r"|Invalid control|Extra data)\b)", re.DOTALL)
_ERRNO_LINE: Final = re.compile(r"\A\[Errno (\d+)\] ")
_ERRNO_TYPES: Final = {
    errno.ENOENT: "FileNotFoundError", errno.EACCES: "PermissionError",
    errno.EPERM: "PermissionError", errno.EEXIST: "FileExistsError",
    errno.ENOTDIR: "NotADirectoryError", errno.EISDIR: "IsADirectoryError",
    errno.ECONNREFUSED: "ConnectionRefusedError", errno.ECONNRESET: "ConnectionResetError",
    errno.ETIMEDOUT: "TimeoutError", errno.EPIPE: "BrokenPipeError"}
"""OSError's own subclasses by errno (``[Errno N]`` is ``str()`` of an ``OSError``)."""
_STATUS_LINE: Final = re.compile(
    r"(?im)^\s*(?:exit[ _]?code|exit status|return[ _]?code)\s*(?:[:=]\s*|\s+)(-?\d+)\b")
_ERROR_TEXT: Final = re.compile(r"\A\s*(?:error\b|Error executing\b)", re.IGNORECASE)
_LIMITS: Final = (("Maximum number of turns", "turn"), ("Maximum number of messages", "message"),
                  ("Token usage limit", "token budget"), ("Timeout of ", "time"))
_TERMINATE: Final = "TERMINATE"


# -- detection --------------------------------------------------------------------------------
def _first_message(head: bytes) -> tuple[str, dict[str, Any]] | None:
    """The document's shape (``list``, ``messages``: an object's ``messages`` array, or
    ``by_agent``: an object's first array under another key) and its first message, when the
    head holds it whole."""
    text = head.decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    decoder = json.JSONDecoder()

    def skip(pos: int) -> int:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        return pos

    def message_at(pos: int) -> dict[str, Any] | None:
        pos = skip(pos)
        if pos >= len(text) or text[pos] != "{":
            return None
        value, _ = decoder.raw_decode(text, pos)
        return value if isinstance(value, dict) else None

    try:
        if text.startswith("["):
            found = message_at(1)
            return ("list", found) if found is not None else None
        if not text.startswith("{"):
            return None
        pos = skip(1)
        for _ in range(32):  # the members before the first array
            key, pos = decoder.raw_decode(text, pos)
            pos = skip(pos)
            if not isinstance(key, str) or text[pos] != ":":
                return None
            pos = skip(pos + 1)
            if text[pos] == "[":
                found = message_at(pos + 1)
                shape = "messages" if key == "messages" else "by_agent"
                return (shape, found) if found is not None else None
            _, pos = decoder.raw_decode(text, pos)
            pos = skip(pos)
            if text[pos] != ",":
                return None
            pos = skip(pos + 1)
    except (ValueError, IndexError):  # cut by the head's end, or not JSON
        return None
    return None


def _is_autogen(message: dict[str, Any]) -> bool:
    kind = message.get("type")
    return isinstance(message.get("source"), str) and isinstance(kind, str) and (
        kind in _AUTOGEN_TYPES or kind.startswith("StructuredMessage"))


def _is_message(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return (message.get("role") in _ROLES and "source" not in message
            and (content is None or isinstance(content, (str, list))))


@functools.lru_cache(maxsize=4)
def sniff_format(head: bytes) -> str | None:
    """Which of the three formats ``head`` begins, or None (the module's rules); kept for the
    last heads, since each of the three readers asks about the same head in turn."""
    found = _first_message(head)
    if found is None:
        return None
    shape, message = found
    if _is_autogen(message):
        return AUTOGEN_MESSAGES if shape != "by_agent" else None
    if not _is_message(message):
        return None
    named = message.get("role") != "system" and isinstance(message.get("name"), str)
    if (named and shape != "messages") or (
            shape != "messages" and (_AG2_EXIT_BYTES.search(head) or b'"tool_responses"' in head)):
        return AG2_CHAT
    if shape == "by_agent":
        return None
    anthropic = b'"tool_use"' in head or b'"tool_result"' in head
    calls = b'"tool_calls"' in head or b'"tool_call_id"' in head
    return OPENAI_MESSAGES if calls and not anthropic else None


# -- reading ----------------------------------------------------------------------------------
def _text(content: object) -> str:
    """A message's text: a string, or the ``text`` of a list of content parts."""
    if isinstance(content, str):
        return content
    return "".join(as_str(as_dict(part).get("text")) for part in as_list(content))


_PYTHONS: Final = frozenset({"python", "python3", "py"})


def _command(blocks: Iterable[tuple[str, str]]) -> str:
    """What an executor ran for ``(language, code)`` blocks: a Python block as
    ``python -c CODE``, any other as its code (a shell block is the shell's command line)."""
    return "\n".join(f"python -c {shlex.quote(code.strip())}"
                     if language.lower() in _PYTHONS else code
                     for language, code in blocks if code.strip())


def _code(text: str) -> str:
    """The command of ``text``'s code blocks, in order (empty when it has none)."""
    return _command((match.group(1) or "", match.group(2))
                    for match in _CODE_BLOCK.finditer(text))


@dataclass(slots=True)
class _Call:
    """A tool call waiting for its result."""

    step: int
    name: str
    arguments: str
    actor: str | None
    stamp: float | None


@dataclass(slots=True)
class _Chat:
    """One session being read: its steps, the calls and code waiting for a result, its
    events (held to the end: an AG2 tool call's agent is known once both agents spoke)."""

    fmt: str
    steps: int = 0
    events: list[Event] = field(default_factory=list)
    calls: dict[str, _Call] = field(default_factory=dict)
    code: _Call | None = None
    names: list[str] = field(default_factory=list)
    unnamed: list[tuple[int, Command | ErrorText | Rejected, str]] = field(
        default_factory=list)
    """Events (by index) whose agent is the one that did not execute them (AG2's nameless
    tool-call messages), with the executor's name."""
    said: bool = False
    last: dict[str, Any] = field(default_factory=dict)

    def step(self) -> int:
        self.steps += 1
        return self.steps - 1

    def named(self, name: str) -> None:
        if name and name not in self.names:
            self.names.append(name)

    # -- code blocks
    def wrote_code(self, text: str, actor: str | None, stamp: float | None) -> None:
        code = _code(text)
        if code.strip():
            self.code = _Call(self.step(), "code", code, actor, stamp)

    def ran(self, exit_code: int, output: str, stamp: float | None) -> None:
        """An executor's result for the code waiting (a step of its own if none is)."""
        call = self.code or _Call(self.step(), "code", "", None, stamp)
        self.code = None
        command = call.arguments or "(code block)"
        refused = _EXECUTOR_REFUSED.match(output)
        if refused is not None and exit_code != 0:
            self.events.append(Rejected(call.step, command, refused.group(1), stamp,
                                        actor=call.actor))
            return
        approval = _NOT_APPROVED.match(output)
        if approval is not None:
            self.events.append(cancelled(call.step, command,
                                         first_line(approval.group(1)) or "not approved", stamp))
            return
        timed_out = exit_code == 124 and output.rstrip().endswith(_TIMEOUT_MSG)
        self.events.append(Command(call.step, command, None if timed_out else exit_code,
                                   output, stamp, timed_out=timed_out, actor=call.actor))

    # -- tool calls
    def called(self, call_id: str, name: str, arguments: object, actor: str | None,
               stamp: float | None) -> None:
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        key = call_id or f"#{name}"
        self.calls[key] = _Call(self.step(), name, text, actor, stamp)

    def answered(self, call_id: str, name: str, content: str, stamp: float | None, *,
                 is_error: bool | None, executor: str | None) -> None:
        call = self.calls.pop(call_id, None) if call_id else self.calls.pop(f"#{name}", None)
        if call is None:
            return
        event = _tool_result(call, content, stamp, is_error=is_error, fmt=self.fmt)
        if event is None:
            return
        if call.actor is None and executor and self.fmt == AG2_CHAT:
            self.unnamed.append((len(self.events), event, executor))
        self.events.append(event)

    def resolved(self) -> list[Event]:
        """The events, each nameless AG2 tool call given the other agent of a chat of two
        agents (the one that did not execute it)."""
        for index, event, executor in self.unnamed:
            others = [name for name in self.names if name != executor]
            if len(self.names) == 2 and len(others) == 1:
                self.events[index] = replace(event, actor=others[0])
        return self.events


def _tool_result(call: _Call, content: str, stamp: float | None, *, is_error: bool | None,
                 fmt: str) -> Command | ErrorText | Rejected | None:
    """The event of one tool result (the module's rules), or None for a success."""
    body = content.strip()
    arguments = as_dict(_loads(call.arguments))
    command = as_str(arguments.get("command")) or as_str(arguments.get("cmd"))
    if _NOT_CALLABLE.match(body):
        return Rejected(call.step, call.name, first_line(body), stamp, actor=call.actor)
    if command and fmt == OPENAI_MESSAGES:
        found = _AG2_EXIT.match(body) or _STATUS_LINE.search(body[:4096])
        if found is not None:
            status = exit_in_text(found.group(1), f"the result of {call.name}")
        else:
            status = (shell_failed(body) or 1) if _ERROR_TEXT.match(body) else (
                shell_failed(body) or 0)
        return Command(call.step, command, status, body, stamp, actor=call.actor)
    failed = is_error if is_error is not None else bool(
        _ERROR_TEXT.match(body) or exception_line(body))
    if not failed:
        return None
    message = body.removeprefix("Error:").strip() if body.startswith("Error:") else body
    type_name = "Exception"
    numbered = _ERRNO_LINE.match(message)
    traceback = None
    if numbered is not None:
        type_name = _ERRNO_TYPES.get(int(numbered.group(1)), "OSError")
    elif (raised := exception_line(message)) is not None:
        type_name, message, traceback = raised
    elif (split := split_exception(first_line(message, 1000))) is not None:
        type_name, message = split
    return ErrorText(call.step, "tool", type_name, message, traceback,
                     evidence=f"{call.name}: {first_line(message)}", timestamp=stamp,
                     tool=call.name, actor=call.actor)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


class ChatReader:
    """Reader for one of the three chat formats (``name``: see the module's rules)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def sniff(self, head: bytes) -> bool:
        """The head begins this reader's format."""
        return sniff_format(head) == self.name

    def read(self, stream: BinaryIO, label: str) -> Iterator[Event]:
        """Each message array's session, its messages one at a time (a session's end waits
        for the members after its array: AutoGen's ``stop_reason`` may come last)."""
        doc = JsonStream(stream)
        if doc.peek() == "[":
            yield (yield from self._session(doc.items(), None))
            doc.end()
            return
        stem = PurePath(label).stem
        end: SessionEnd | None = None
        stop: object = None
        for key in doc.members():
            if key == "messages" and end is None and doc.peek() == "[":
                end = yield from self._session(doc.items(), None)
            elif key == "stop_reason":
                stop = doc.value()
            elif self.name == AG2_CHAT and doc.peek() == "[":
                yield (yield from self._session(doc.items(), f"{stem}/{key}"))
            else:
                doc.skip()
        doc.end()
        if end is not None:
            yield self._stopped(end, stop) if self.name == AUTOGEN_MESSAGES else end

    @staticmethod
    def _stopped(end: SessionEnd, stop: object) -> SessionEnd:
        """An AutoGen session's end from ``stop_reason``."""
        reason = as_str(stop)
        if not reason:
            return end
        for prefix, limit in _LIMITS:
            if reason.startswith(prefix):
                error = ErrorText(end.steps - 1 if end.steps else None, "agent",
                                  "TerminationCondition", reason, evidence=first_line(reason),
                                  limit=limit)
                return replace(end, status="limit", error=error)
        return replace(end, status="submitted")

    def _session(self, messages: Iterable[Any], name: str | None,
                 ) -> Generator[Event, None, SessionEnd]:
        """The session of one message array: its events (held until the array ends, or until
        it is found damaged: the steps before the damage are kept), returning its end."""
        chat = _Chat(self.name)
        yield SessionStart(name)
        try:
            for index, message in enumerate(messages):
                if isinstance(message, dict):
                    chat.said = True
                    if self.name == AUTOGEN_MESSAGES:
                        self._autogen(chat, message, f"message {index}")
                    else:
                        self._message(chat, message, f"message {index}")
                    chat.last = message
        except InputError:
            yield from chat.resolved()
            raise
        yield from chat.resolved()
        return SessionEnd(chat.steps, self._ending(chat), name, said=chat.said)

    def _ending(self, chat: _Chat) -> str:
        last = chat.last
        if self.name == AG2_CHAT:
            return "submitted" if _TERMINATE in _text(last.get("content")) else "unknown"
        if self.name == OPENAI_MESSAGES:
            answered = (last.get("role") == "assistant" and not last.get("tool_calls")
                        and not last.get("function_call"))
            return "submitted" if answered else "unknown"
        return "unknown"

    # -- AG2 and OpenAI messages
    @staticmethod
    def _message(chat: _Chat, message: dict[str, Any], where: str) -> None:
        role = as_str(message.get("role"))
        name = as_str(message.get("name")) or None
        text = _text(message.get("content"))
        if role not in {"tool", "function"} and name:
            chat.named(name)
        if role == "tool":
            if name:
                chat.named(name)
            responses = [as_dict(r) for r in as_list(message.get("tool_responses"))] or [message]
            for response in responses:
                chat.answered(as_key(response.get("tool_call_id")), "", _text(
                    response.get("content")), None, is_error=None, executor=name)
            return
        if role == "function":
            chat.answered("", as_str(message.get("name")), text, None, is_error=None,
                          executor=None)
            return
        ran = _AG2_EXIT.match(text)
        if ran is not None:
            chat.ran(exit_in_text(ran.group(1), where), text[ran.end():], None)
            return
        actor = name if chat.fmt == AG2_CHAT or role == "assistant" else None
        for item in as_list(message.get("tool_calls")):
            call = as_dict(item)
            function = as_dict(call.get("function"))
            chat.called(as_key(call.get("id")), as_str(function.get("name")),
                        function.get("arguments"), actor, None)
        legacy = as_dict(message.get("function_call"))
        if legacy:
            chat.called("", as_str(legacy.get("name")), legacy.get("arguments"), actor, None)
        if role != "system" and chat.fmt == AG2_CHAT:
            chat.wrote_code(text, actor, None)

    # -- AutoGen 0.4+ messages
    @staticmethod
    def _autogen(chat: _Chat, message: dict[str, Any], where: str) -> None:
        kind = message.get("type")
        source = as_str(message.get("source")) or None
        stamp = iso_time(message.get("created_at"))
        content = message.get("content")
        if kind == "ToolCallRequestEvent":
            for item in as_list(content):
                call = as_dict(item)
                chat.called(as_key(call.get("id")), as_str(call.get("name")),
                            call.get("arguments"), source, stamp)
        elif kind == "ToolCallExecutionEvent":
            for item in as_list(content):
                answer = as_dict(item)
                flag = answer.get("is_error")
                chat.answered(as_key(answer.get("call_id")), as_str(answer.get("name")),
                              _text(answer.get("content")), stamp,
                              is_error=flag if isinstance(flag, bool) else None, executor=None)
        elif kind == "CodeGenerationEvent":
            code = _command((as_str(as_dict(block).get("language")),
                              as_str(as_dict(block).get("code")))
                             for block in as_list(message.get("code_blocks")))
            if code.strip():
                chat.code = _Call(chat.step(), "code", code, source, stamp)
        elif kind == "CodeExecutionEvent":
            result = as_dict(message.get("result"))
            status = result.get("exit_code")
            if isinstance(status, int) and not isinstance(status, bool):
                output = as_str(result.get("output"))
                failed = _AUTOGEN_FAILED.match(output)
                chat.ran(status, output[failed.end():] if failed else output, stamp)
        elif kind in {"TextMessage", "StopMessage", "HandoffMessage"}:
            text = _text(content)
            waiting = chat.code
            failed = _AUTOGEN_FAILED.match(text)
            found = failed or _AUTOGEN_SILENT.match(text)
            if waiting is not None and waiting.actor != source and found is not None:
                status = exit_in_text(found.group(1), where)
                chat.ran(status, text[failed.end():] if failed else "", stamp)
                return
            if waiting is not None and waiting.actor != source and _NOT_APPROVED.match(text):
                chat.ran(1, text, stamp)
                return
            if waiting is not None and waiting.actor != source:
                chat.code = None  # the output alone: exit 0 (or no executor answered)
            chat.wrote_code(text, source, stamp)
