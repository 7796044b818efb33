"""mini-swe-agent trajectories (``*.traj.json``, ``trajectory_format: mini-swe-agent-1.x``).

Rules (about the format and the tool; 1.x writes text actions in fenced blocks and user
observations, 2.x tool calls with ``role=tool`` observations carrying ``extra``, and one
``role=exit`` message):

- Detection: a JSON object whose first 64 KiB name ``mini_version`` or the
  ``mini-swe-agent`` trajectory format, or hold a ``messages`` array with mini-swe-agent's
  ``<returncode>`` observation tag.
- One file is one session; its name is ``instance_id`` (else the file's stem).
- A step is one observation of a command, in ``messages`` order: a ``role=tool`` message, a
  ``role=user`` message that starts with ``<returncode>`` or (2.x, whose text-mode templates
  put ``<exception>`` first when the command failed to finish) carries
  ``extra.returncode`` (text actions), or 1.x's notice
  "The last command <command>...</command> timed out and has been killed" (which replaces the
  observation of a command stopped at the time limit: a timeout). Steps are numbered from 0.
- The command is the assistant's tool call with the observation's ``tool_call_id`` (the
  ``command`` argument), else its ``extra.actions`` (2.x records what it parsed, in both its
  tool-call and text modes). A 1.x assistant message (no ``tool_calls``, no
  ``extra.actions``) holds a text action as 1.x's ``DefaultAgent.parse_action`` takes it:
  exactly one match of the trajectory's ``action_regex`` (``info.config.agent``, or a 2.x
  text model's ``info.config.model``) when it is one mini-swe-agent's configs set
  (```` ```bash ```` to a line of ```` ``` ````, ```` ```mswea_bash_command ````, ``<bash_code>``,
  ``<mswea_bash_command>``), else 1.x's default ```` ```bash ```` pattern (or, when the
  message has no such block, 2.x text mode's ```` ```mswea_bash_command ````). None or several
  matches is a format error: a rejected action and no step (a block quoted in the reasoning
  is never the command).
- The exit status is ``extra.returncode``, else the ``<returncode>`` tag. 2.x reports -1 with
  ``extra.exception_info`` when the command could not finish: a timeout when the exception
  is a time-out (``extra.exception_type`` ``TimeoutExpired``/``TimeoutError``, or the text
  says "timed out"); "action was not executed" (an action after the one that submitted) is a
  cancelled call, never run; any other exception is the environment failing to run it (the harness).
  A status is a JSON integer or the tag's digits (another type is none: the tag is read
  then); one outside -2**31..2**32-1 is FC-DATA-003 naming the observation (``messages[i]``)
  and the value (``_text``'s rules; the steps before it are kept).
- Time: 2.x's ``extra.timestamp`` (seconds since the epoch, finite, within the years 1 to
  9999; else none); 1.x's text observations carry no time of a step.
- A format error fed back to the model (1.x "Please always provide EXACTLY ONE action", 2.x
  ``extra.interrupt_type: FormatError``) is a rejected action, outside the command steps;
  one per model message (a 1.x message with no single action is the rejected action, and the
  error message that follows it is not counted again).
- ``info.exit_status`` (2.x: else the exit message's ``extra.exit_status``; its
  ``exception_str`` and ``traceback`` where ``info`` has none) says how the
  session ended: ``Submitted`` is submitted; ``LimitsExceeded`` (step or cost limit),
  ``TimeExceeded`` (wall-clock limit) and 2.x's ``RepeatedFormatError`` (the model's output
  failed the format ``max_consecutive_format_errors`` times in a row) are limits;
  ``ContextWindowExceeded`` (and litellm's
  ``ContextWindowExceededError``) is the model's context window; ``UserInterruption`` /
  ``KeyboardInterrupt`` is a person stopping the run, no failure; ``ExecutionTimeoutError`` a
  timeout; any other value is the name of the exception that ended the run, described by
  ``info.exception_str`` and ``info.traceback``; these are model-provider errors when the
  traceback goes through the model's query (litellm, openai, anthropic), else the agent's own.
- The model is ``info.config.model.model_name``, the agent's version ``info.mini_version``.
- Cost (2.x): an assistant message's ``extra.response.usage`` (litellm's, OpenAI-shaped) is
  one model turn, yielded as a :class:`~failcode.triage._events.Usage` after the step whose
  observation came last (none after a format error or before the first step): input is
  ``prompt_tokens`` less the cache's part (``prompt_tokens_details.cached_tokens``,
  DeepSeek's ``prompt_cache_hit_tokens``, Anthropic's ``cache_read_input_tokens``; the
  largest) and its writes (``cache_creation_input_tokens``), which ``prompt_tokens``
  includes; output is ``completion_tokens``; the model is the response's ``model``.
  ``extra.cost`` is the turn's price as mini-swe-agent recorded it (litellm's table, summed
  into ``info.model_stats.instance_cost``); 0 is what it records when litellm could not
  price the turn, so only a positive cost is a price. ``info.model_stats.instance_cost`` is
  the session's total (its ``recorded_usd``; 0, nothing priced, is none) and never a turn's
  (a session without per-message usage, 1.x, records no tokens: unknown). A turn that failed
  (no response) records nothing.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Final

from failcode._lazy_re import lazy
from failcode.triage._events import (
    About,
    Command,
    ErrorText,
    Event,
    RecordedOutcome,
    Rejected,
    SessionEnd,
    SessionStart,
    Usage,
    cancelled,
)
from failcode.triage.readers._jsonstream import JsonStream, loads
from failcode.triage.readers._text import (
    as_dict,
    as_list,
    as_str,
    dollars,
    epoch_time,
    exception_line,
    exit_in_text,
    first_line,
    recorded_total,
    split_exception,
    stated_exit,
    token_count,
)

if TYPE_CHECKING:
    from collections.abc import Generator, Iterator, Mapping
    from typing import BinaryIO

__all__ = ["MiniSweAgentReader", "litellm_tokens"]

_RETURNCODE: Final = lazy(r"<returncode>\s*(-?\d+)\s*</returncode>")
_OUTPUT: Final = lazy(r"<output>\n?(.*?)</output>", re.DOTALL)
_ACTION_1X: Final = r"```bash\s*\n(.*?)\n```"
_ACTION_2X_TEXT: Final = r"```mswea_bash_command\s*\n(.*?)\n```"
_ACTION_REGEXES: Final = {  # the action_regex values mini-swe-agent's own configs set
    _ACTION_1X: lazy(_ACTION_1X, re.DOTALL),
    _ACTION_2X_TEXT: lazy(_ACTION_2X_TEXT, re.DOTALL),
    r"<bash_code>(.*?)</bash_code>": lazy(r"<bash_code>(.*?)</bash_code>", re.DOTALL),
    r"<mswea_bash_command>(.*?)</mswea_bash_command>": lazy(
        r"<mswea_bash_command>(.*?)</mswea_bash_command>", re.DOTALL),
}
_TIMEOUT_NOTICE: Final = lazy(
    r"^\s*The last command <command>(?P<cmd>.*?)</command> timed out and has been killed",
    re.DOTALL)
_FORMAT_ERROR: Final = "Please always provide EXACTLY ONE action"
_TIMEOUT_TYPES: Final = frozenset({"TimeoutExpired", "TimeoutError", "CommandTimeoutError"})
_NOT_EXECUTED: Final = "action was not executed"
_INTERRUPTED: Final = frozenset({"UserInterruption", "KeyboardInterrupt"})
_LIMITS: Final = {"LimitsExceeded": "step or cost", "TimeExceeded": "time",
                  "RepeatedFormatError": "format error"}
_CONTEXT: Final = frozenset({"ContextWindowExceeded", "ContextWindowExceededError",
                             "litellm.ContextWindowExceededError"})
_PROVIDER_MARKERS: Final = ("litellm", "openai", "anthropic", "models/", "model.query",
                            "Exception -", "APIError", "ServerError", "RateLimit", "Timeout")


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content
                         if isinstance(part, dict) and isinstance(part.get("text"), str))
    return ""


def litellm_tokens(usage: Mapping[str, Any]) -> tuple[int, int, int, int]:
    """A litellm (OpenAI-shaped) ``usage``'s input without the cache's part, output, cache
    reads and cache writes (the module's rules: ``prompt_tokens`` includes both cache
    parts)."""
    details = usage.get("prompt_tokens_details")
    read = max(token_count(details.get("cached_tokens")) if isinstance(details, dict) else 0,
               token_count(usage.get("prompt_cache_hit_tokens")),
               token_count(usage.get("cache_read_input_tokens")))
    write = token_count(usage.get("cache_creation_input_tokens"))
    return (max(0, token_count(usage.get("prompt_tokens")) - read - write),
            token_count(usage.get("completion_tokens")), read, write)


def _usage(message: dict[str, Any], after: int) -> Usage | None:
    """An assistant message's turn (the module's rules), or None when it records none."""
    extra = as_dict(message.get("extra"))
    response = as_dict(extra.get("response"))
    usage = response.get("usage")
    if not isinstance(usage, dict):
        return None
    cost = extra.get("cost")
    usd = dollars(cost) or None  # 0: litellm could not price the turn
    model = as_str(response.get("model")) or None
    return Usage(*litellm_tokens(usage), model=model,
                 timestamp=epoch_time(extra.get("timestamp")), after=after, usd=usd,
                 priced_by="mini-swe-agent" if usd is not None else None)


def _stem(label: str) -> str:
    name = PurePath(label).name
    for suffix in (".traj.json", ".json", ".traj"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def session_end_error(status: str, exception_str: str, traceback: str | None) -> ErrorText:
    """The exception that ended a run, as text (shared with SWE-agent's ``info``)."""
    found = exception_line(traceback) if traceback else None
    if found is not None:
        type_name, message, _ = found
    else:
        split = split_exception(exception_str.split("\n", 1)[0])
        type_name, message = split or (status, exception_str)
    if not message:
        message = exception_str
    text = f"{type_name} {message} {(traceback or '')[-4000:]}"
    source = "provider" if any(marker in text for marker in _PROVIDER_MARKERS) else "agent"
    return ErrorText(step=None, source=source, type_name=type_name, message=message,
                     traceback=traceback)


def _action_regex(info: dict[str, Any]) -> re.Pattern[str] | None:
    """The pattern of a text action: the trajectory's own ``action_regex`` (1.x's agent
    config, 2.x's text-based model config) when it is one mini-swe-agent ships, else None
    (the defaults: see :func:`_text_actions`)."""
    config = as_dict(info.get("config"))
    for part in ("agent", "model"):
        found = _ACTION_REGEXES.get(as_str(as_dict(config.get(part)).get("action_regex")))
        if found is not None:
            return found
    return None


def _text_actions(text: str, action: re.Pattern[str] | None) -> list[str]:
    """The matches of the action pattern; with none named, 1.x's default ```` ```bash ````,
    else (none of those) 2.x's text mode's ```` ```mswea_bash_command ````."""
    if action is not None:
        return action.findall(text)
    return (_ACTION_REGEXES[_ACTION_1X].findall(text)
            or _ACTION_REGEXES[_ACTION_2X_TEXT].findall(text))


class MiniSweAgentReader:
    """Reader for mini-swe-agent trajectories."""

    name = "mini-swe-agent"

    def sniff(self, head: bytes) -> bool:
        """A JSON object naming mini-swe-agent, or with its ``<returncode>`` observations."""
        if not head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
            return False
        return (b'"mini_version"' in head or b'"mini-swe-agent' in head
                or (b'"messages"' in head and b"<returncode>" in head))

    def read(self, stream: BinaryIO, label: str) -> Iterator[Event]:
        """Stream the trajectory's messages; ``info`` and ``instance_id`` may come last."""
        doc = JsonStream(stream)
        info: dict[str, Any] = {}
        name: str | None = None
        steps = 0
        exit_message: dict[str, Any] | None = None
        action: re.Pattern[str] | None = None
        yield SessionStart()
        for key in doc.members():
            if key == "info":
                value = doc.value()
                info = value if isinstance(value, dict) else {}
                action = _action_regex(info)
            elif key == "instance_id":
                value = doc.value()
                name = value if isinstance(value, str) else None
            elif key == "messages" and doc.peek() == "[":
                steps, exit_message = yield from self._messages(doc, action)
            else:
                doc.skip()
        doc.end()
        model = as_dict(as_dict(info.get("config")).get("model")).get("model_name")
        version = info.get("mini_version")
        yield About(model if isinstance(model, str) else None,
                    str(version) if isinstance(version, (str, int, float)) else None)
        total = recorded_total(as_dict(info.get("model_stats")).get("instance_cost"))
        yield replace(self._end(steps, name or _stem(label), info, exit_message),
                      recorded_usd=total)

    def _messages(self, doc: JsonStream, action: re.Pattern[str] | None,
                  ) -> Generator[Event, None, tuple[int, dict[str, Any] | None]]:
        """The steps of ``messages``; how many, and the exit message (2.x) if any."""
        steps = 0
        exit_message: dict[str, Any] | None = None
        pending: dict[str, str] = {}
        actions: list[str] = []
        refused = False  # the last assistant message held no single action
        read = -1  # the step whose observation the next turn reads (-1: none)
        for index, message in enumerate(doc.items()):
            if not isinstance(message, dict):
                continue
            role = as_str(message.get("role"))
            if role == "assistant":
                usage = _usage(message, read)
                if usage is not None:
                    yield usage
                pending, actions, found = self._commands(message, action)
                refused = found is not None
                if refused:
                    yield Rejected(None, "model output",
                                   f"expected exactly 1 action, found {found}")
            elif role == "exit":
                exit_message = message
            elif role in {"tool", "user"}:
                text = _text(message.get("content"))
                notice = _TIMEOUT_NOTICE.match(text[:4096]) if role == "user" else None
                if notice is not None:
                    command = (actions.pop(0) if actions else "") or notice.group("cmd")
                    yield Command(steps, command.strip(), None, text, timed_out=True)
                    steps, read = steps + 1, steps
                    continue
                if role == "user" and (text.lstrip().startswith(_FORMAT_ERROR) or
                        as_dict(message.get("extra")).get("interrupt_type")
                        == "FormatError"):
                    if not refused:  # else told where the message had no action
                        yield Rejected(None, "model output", first_line(text))
                    refused, read = False, -1
                    continue
                if role == "user" and not text.lstrip().startswith("<returncode>") and (
                        "returncode" not in as_dict(message.get("extra"))):
                    continue  # not an observation (2.x writes extra.returncode on each one)
                command = pending.pop(str(message.get("tool_call_id")), None)
                if command is None:
                    command = actions.pop(0) if actions else ""
                event = self._step(steps, command, message, f"messages[{index}]")
                if event is not None:
                    yield event
                steps, read = steps + 1, steps
        return steps, exit_message

    @staticmethod
    def _commands(message: dict[str, Any], action: re.Pattern[str] | None,
                  ) -> tuple[dict[str, str], list[str], int | None]:
        """The message's commands by tool call id, its other commands in order, and, for a
        text action that is not exactly one, how many the action pattern found."""
        by_id: dict[str, str] = {}
        for call in as_list(message.get("tool_calls")):
            if not isinstance(call, dict):
                continue
            function = call.get("function") or {}
            arguments = function.get("arguments") if isinstance(function, dict) else None
            command = ""
            if isinstance(arguments, str):
                try:
                    parsed = loads(arguments)
                except ValueError:
                    parsed = None
                if isinstance(parsed, dict) and isinstance(parsed.get("command"), str):
                    command = parsed["command"]
            elif isinstance(arguments, dict) and isinstance(arguments.get("command"), str):
                command = arguments["command"]
            by_id[str(call.get("id"))] = command
        extra = message.get("extra")
        actions = [a["command"] for a in as_list(extra.get("actions"))
                   if isinstance(a, dict) and isinstance(a.get("command"), str)] \
            if isinstance(extra, dict) else []
        if "tool_calls" in message or (isinstance(extra, dict) and "actions" in extra):
            return by_id, actions, None  # 2.x: the agent recorded what it parsed
        blocks = _text_actions(_text(message.get("content")), action)
        if len(blocks) != 1:  # 1.x's parse_action: a FormatError, nothing runs
            return by_id, [], len(blocks)
        return by_id, [blocks[0].strip()], None

    @staticmethod
    def _step(step: int, command: str, message: dict[str, Any], where: str,
              ) -> Command | RecordedOutcome | None:
        content = _text(message.get("content"))
        extra = as_dict(message.get("extra"))
        code = stated_exit(extra.get("returncode"), where)
        if code is None:
            found = _RETURNCODE.search(content[:4096])
            code = exit_in_text(found.group(1), where) if found else None
        output = extra.get("raw_output")
        if not isinstance(output, str):
            found_output = _OUTPUT.search(content)
            output = found_output.group(1) if found_output else content
        timestamp = epoch_time(extra.get("timestamp"))
        info = str(extra.get("exception_info") or "")
        if info and code == -1:
            if info.strip() == _NOT_EXECUTED:  # an action after the one that submitted
                return cancelled(step, command, "never run: the agent had submitted",
                                 timestamp)
            timed_out = ("timed out" in info or "timeout" in info.lower()
                         or extra.get("exception_type") in _TIMEOUT_TYPES)
            if not timed_out:
                # mini-swe-agent could not run the command at all: the harness failed
                return Command(step, command, None, info[:2000], timestamp, source="harness")
            return Command(step, command, None, output, timestamp, timed_out=True)
        return Command(step, command, code, output, timestamp)

    @staticmethod
    def _end(steps: int, name: str, info: dict[str, Any],
             exit_message: dict[str, Any] | None) -> SessionEnd:
        status = info.get("exit_status")
        exception_str = info.get("exception_str")
        traceback = info.get("traceback")
        extra = exit_message.get("extra") if exit_message is not None else None
        if isinstance(extra, dict):  # 2.x: the exit message also holds what info may lack
            if not isinstance(status, str):
                status = extra.get("exit_status")
            exception_str = exception_str or extra.get("exception_str")
            traceback = traceback or extra.get("traceback")
        if not isinstance(status, str) or not status:
            return SessionEnd(steps, "unknown", name)
        if status.lower() == "submitted":
            return SessionEnd(steps, "submitted", name)
        if status in _LIMITS:
            limit = _LIMITS[status]
            error = ErrorText(step=None, source="agent", type_name=status,
                              message=f"{limit} limit", limit=limit)
            return SessionEnd(steps, "limit", name, error)
        if status in _INTERRUPTED:
            return SessionEnd(steps, "unknown", name)
        text = exception_str if isinstance(exception_str, str) and exception_str else status
        if status in _CONTEXT:
            error = ErrorText(None, "provider", status, text, context_window=True)
            return SessionEnd(steps, "provider_error", name, error)
        if status == "ExecutionTimeoutError":
            return SessionEnd(steps, "timeout", name)
        error = session_end_error(status, text, traceback if isinstance(traceback, str) else None)
        ended = "provider_error" if error.source == "provider" else "unknown"
        return SessionEnd(steps, ended, name, error)
