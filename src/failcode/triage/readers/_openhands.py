"""OpenHands: v0 and V1 event streams, ``output.jsonl`` records, ``llm_completions`` files and
the evaluation harness's ``infer_logs``.

Rules (about the format and the tool):

- Detection: a JSON array of events (objects with ``timestamp``, ``source`` and v0's
  ``action``/``observation`` or V1's ``kind`` ``...Event``); JSON lines whose records hold
  ``instance_id`` and an event ``history`` (v0's evaluation harness and V1's
  ``OpenHands/benchmarks`` write the same record, ``EvalOutput``: ``instance_id`` then
  ``test_result`` open it, and a long patch in ``test_result`` may push ``history`` past the
  bytes detection reads) or the resolver's records (``ResolverOutput``: ``issue``,
  ``issue_type``, ``instruction``, ``base_commit``, ``git_patch``, ``history``...); a JSON
  object with ``messages`` from OpenHands' tools (``execute_bash``, ``str_replace_editor``,
  ``[Command finished with exit code N]``); or a text log whose lines read
  ``YYYY-MM-DD HH:MM:SS,mmm - LEVEL - message`` and name OpenHands' runtime.
- v0 event streams: a step is an observation that answers an action (every observation except
  ``null``, ``recall``, ``agent_state_changed`` and ``agent_condensation``), numbered from 0 in
  stream order. A ``run`` observation is a shell command with its exit code
  (``extras.metadata.exit_code``, older files ``extras.exit_code``); -1 means the command was
  still running when observed (the no-output timeout), which is not a failure, unless the note
  (``metadata.suffix``) says it timed out. A ``timeout`` observation is the action running past
  its time limit. A ``user_rejected`` observation (the call declined when confirmation was
  asked: it never ran) is a cancelled call; an editor observation starting ``ERROR:`` (no
  replacement performed, an invalid parameter) and an ``error`` observation that only
  validates the tool call's arguments are rejected actions; an ``error`` observation naming an
  exception is the agent's (``Agent...``), the runtime's (``Runtime...``, ``Sandbox...``) or the
  provider's (``LLM...``, litellm) failure. ``agent_state_changed`` to ``error`` with
  ``extras.reason`` says what ended the session when the record has no ``error``.
- V1 event streams (software-agent-sdk, events told by ``kind``): ``ActionEvent`` carries the
  command (``action.command``) and ``FinishAction``; a step is each event answering a tool call
  (``tool_call_id``): ``ObservationEvent`` (a terminal observation has ``exit_code`` or
  ``metadata.exit_code``, -1 still running unless ``metadata.suffix`` says the command timed
  out at the limit its call set, ``timeout: true`` a timeout; any other observation
  with ``is_error`` is a refused tool call), ``AgentErrorEvent`` (``error``: an exception's
  failure, else a refused tool call) and ``UserRejectObservation`` (declined by a person before
  it ran: cancelled; ``rejection_source: hook``, a hook's refusal: a rejected action).
  ``ConversationErrorEvent`` (``code``, ``detail``: the exception the detail names, as
  ``litellm.AuthenticationError: ...``, wins over the CLI's own ``code`` such as
  ``LLMServiceUnavailableError``), ``ConversationIterationLimitEvent``
  and ``ConversationStateUpdateEvent`` (``execution_status`` ``finished``, ``error``,
  ``stuck``) say how the session ended. Other kinds (messages, the system prompt,
  condensations, pauses) are no steps.
- A V1 conversation folder (``base_state.json`` beside ``events/event-*.json``, one event per
  file) is one session: triage reads its events in file-name order as one event array, then
  ``base_state.json``'s ``execution_status`` as the last ``ConversationStateUpdateEvent``.
- ``output.jsonl``: one record per line is one session, named ``instance_id`` (a resolver
  record: its issue, ``owner/repo#number``); its ``error``
  says how the run ended ("Agent reached maximum iteration" is the iteration limit, a
  ``...Runtime...`` error is the harness's); no error and a ``finish`` action is submitted.
- ``llm_completions``: one model call per file holding the whole conversation so far; a step
  is one ``tool`` message; ``execute_bash`` results end in ``[Command finished with exit code
  N]``. The session is named after the folder holding the file (OpenHands writes one folder per
  instance); the call is not the last word, so the end is unknown. A bash result echoes the
  command first and ends with notes (``[Python Interpreter: ...]``, the shell prompt, the exit
  code): they are not the command's output. The interpreter note may be glued to the end of
  the output's last line (an output without a final newline); it is cut off there too. A
  ``str_replace_editor`` result that is a traceback ending in an exception line is the editor
  tool's own crash (a tool failure, e.g. ``RuntimeError: No active exception to reraise`` from
  a ``create`` without ``file_text``), not a command; a traceback in any other tool's result
  is the cell's or script's (a command that failed).
- The model: ``output.jsonl``'s ``metadata.llm_config.model`` (V1 benchmarks:
  ``metadata.llm.model``; and ``metadata
  .openhands_version`` where written), an ``llm_completions`` file's ``response.model``, a V1
  conversation's ``base_state.json`` ``agent.llm.model``.
- Cost (v0): an action's ``llm_metrics`` (OpenHands attaches them to each action the agent
  takes: ``accumulated_cost`` and ``accumulated_token_usage``, the totals so far of every
  model call of the agent's LLMs, condenser's included) is read as a running total: the
  increase since the last action that had them is one model turn (the calls that produced the
  action; an observation's ``llm_metrics`` are another LLM's own totals, the draft editor's,
  and are not read), yielded as a :class:`~failcode.triage._events.Usage` before the
  action, so after the step whose observation came last. Its tokens: ``prompt_tokens``
  less the cache's part (``cache_read_tokens``, ``cache_write_tokens``, which litellm's
  ``prompt_tokens`` includes), ``completion_tokens``, the cache's reads and writes; the model is
  ``accumulated_token_usage.model`` (OpenHands' ``default`` is none). The increase of
  ``accumulated_cost`` is the turn's price as OpenHands computed it (litellm's table); it only
  grows when a call was priced, so no increase is no price (the table prices the turn). A
  running total that falls (a reset) counts from 0 again. A stream without
  ``llm_metrics`` (older files, V1 events, ``llm_completions`` files, which hold one call of
  many) records no tokens: unknown. The record's ``metrics`` is the session's total and never
  a turn's: its ``accumulated_cost`` is the session's ``recorded_usd`` (0.0, nothing priced,
  is none); an event stream without a record has none.
- Files the agent writes (the editor's ``create``, ``str_replace``, ``insert`` with their
  path and new text; v0's ``edit``/``write`` actions; V1's file-editor actions) are yielded
  as :class:`~failcode.triage._events.Wrote`: what the session's repository provides.
- Times: an event's ``timestamp`` (v0 and V1 write ``datetime.now().isoformat()``, the
  writer's local time without a zone), an ``llm_completions`` file's ``timestamp`` (seconds
  since the epoch) and an ``infer_logs`` line's time (local, without a zone). A time without a
  zone is read as UTC (``_text``'s rules): it may be off by the writer's UTC offset, but it is
  the same on every machine that reads the file, and so are the event ids that hold it.
- Exit statuses (``exit_code``, ``metadata.exit_code``, ``[Command finished with exit code
  N]``): a JSON integer or the text's digits; another type is no status. One outside
  -2**31..2**32-1 is FC-DATA-003 naming where it is (``line N, history[i]`` of
  ``output.jsonl``, ``item [i]`` of an event array, the i-th event file of a conversation
  folder in name order, ``messages[i]`` of a completions file) and the value (``_text``'s
  rules); the sessions before it are kept.
- ``infer_logs``: the harness's log. A session runs from one "for instance X" line to the
  next instance's. Each attempt the harness makes is a step; an attempt ends at the banner
  ``[The above error occurred. Retrying... (attempt k of N)]``. An attempt's ``ERROR`` lines,
  its tracebacks and its retry banner log one failure of the harness, counted as repeats.
  How the session ended is what the agent controller last logged for the instance after
  its last banner: the state set to ``AgentState.FINISHED`` is the agent's answer
  (``submitted``); "Agent reached maximum iteration" (an ``ERROR`` line) is the agent's own
  limit (``limit``), the session's end and not a failure of the harness; anything else is
  ``unknown``. The last attempt is a step when it failed or the agent controller ran in it
  (a state change, the iteration limit): an instance run once to its limit holds that step.
  The harness writes one log per instance (``instance_<id>.log``) and often names the
  instance only at the attempt's end (``Got git diff for instance X``): the lines before are
  a session named after the file, kept when the agent ran in them.
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
    Rejected,
    SessionEnd,
    SessionStart,
    Usage,
    Wrote,
    cancelled,
)
from failcode.triage.readers._jsonstream import JsonStream, loads
from failcode.triage.readers._lines import json_objects, lines
from failcode.triage.readers._swe_agent import shell_failed
from failcode.triage.readers._text import (
    TRACEBACK_START,
    as_dict,
    as_key,
    as_list,
    as_str,
    dollars,
    epoch_time,
    exception_line,
    exit_in_text,
    first_line,
    iso_time,
    split_exception,
    stated_exit,
    token_count,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import BinaryIO

__all__ = ["OpenHandsReader"]

_NOT_STEPS: Final = frozenset({"null", "recall", "agent_state_changed", "agent_condensation"})
_LOG_LINE: Final = lazy(
    r"^(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(?P<ms>\d{3}) - (?P<level>[A-Z]+) - (?P<msg>.*)$")
_INSTANCE: Final = lazy(
    r"for instance (?P<name>[\w.\-]+)|^Error in instance \[(?P<err>[^\]]+)\]")
_RETRY: Final = lazy(r"Retrying\.\.\. \(attempt (\d+) of (\d+)\)")
_STATE: Final = lazy(r"state from AgentState\.\w+ to AgentState\.(?P<state>\w+)")
_ITERATION_LIMIT: Final = "Agent reached maximum iteration"
_EXIT: Final = lazy(r"\[Command finished with exit code (-?\d+)\]")
_RUNTIME_ID: Final = lazy(r"^\[runtime [^\]]*\]\s*")
_EVAL_RECORD: Final = re.compile(rb'\s*\{\s*"instance_id"\s*:\s*"[^"]*"\s*,\s*"test_result"\s*:')
_TIMED_OUT: Final = lazy(r"timed out|Command timed out", re.IGNORECASE)


def _stamp(value: object) -> float | None:
    """An event's time: ISO-8601 (without a zone: UTC) or seconds since the epoch."""
    if isinstance(value, str):
        return iso_time(value)
    return epoch_time(value)


def _is_record(head: bytes) -> bool:
    """The first bytes of ``output.jsonl`` records: an evaluation's (``history`` beside
    ``instance_id``, or ``EvalOutput``'s first two fields, ``instance_id`` then ``test_result``,
    when a long patch in it pushes ``history`` past the head) or the resolver's (``issue``,
    ``issue_type``, ``base_commit``)."""
    if b'"instance_id"' in head and (b'"history"' in head or _EVAL_RECORD.match(head)):
        return True
    return b'"issue"' in head and b'"issue_type"' in head and b'"base_commit"' in head


def _record_name(record: dict[str, Any], number: int) -> str:
    """An evaluation record's ``instance_id``; a resolver record's issue as
    ``owner/repo#number``; else the record's line."""
    name = record.get("instance_id")
    if name is not None:
        return str(name)
    issue = as_dict(record.get("issue"))
    if isinstance(issue.get("owner"), str) and isinstance(issue.get("repo"), str):
        return f"{issue['owner']}/{issue['repo']}#{issue.get('number', '?')}"
    return f"record-{number}"


def _source_of(type_name: str) -> str:
    if type_name.startswith(("Runtime", "Sandbox", "Docker")) or ".runtime." in type_name:
        return "harness"
    if type_name.startswith(("LLM", "litellm", "openai", "anthropic")):
        return "provider"
    return "agent"


def _record_end(steps: int, name: str | None, error: object, finished: bool) -> SessionEnd:
    if isinstance(error, str) and error.strip():
        text = error.strip()
        split = split_exception(text.split("\n", 1)[0])
        type_name, message = split or ("Error", text)
        if "maximum iteration" in text or "max iteration" in text:
            failure = ErrorText(None, "agent", type_name, message, limit="iteration")
            return SessionEnd(steps, "limit", name, failure)
        if "budget" in text.lower() or ("cost" in text.lower() and "exceed" in text.lower()):
            failure = ErrorText(None, "agent", type_name, message, limit="cost")
            return SessionEnd(steps, "limit", name, failure)
        source = _source_of(type_name) if split else "agent"
        if "runtime" in text.lower() or "sandbox" in text.lower():
            source = "harness"
        status = "provider_error" if source == "provider" else (
            "timeout" if _TIMED_OUT.search(message) else "unknown")
        return SessionEnd(steps, status, name, ErrorText(None, source, type_name, message))
    return SessionEnd(steps, "submitted" if finished else "unknown", name)


class _Stream:
    """Steps of one event stream: v0 (``action``/``observation`` names) or V1 (``kind``)."""

    def __init__(self) -> None:
        self.steps = 0
        self.finished = False
        self.state: str | None = None
        self.reason = ""
        self.commands: dict[str, str] = {}
        self.end_error: ErrorText | None = None
        self.limit = False
        self.model: str | None = None
        """The model, from the conversation's ``base_state.json`` (``agent.llm.model``)."""
        self.spent: tuple[int, int, int, int, float] = (0, 0, 0, 0, 0.0)
        """The running totals of ``llm_metrics`` last read: prompt, completion, cache read and
        write tokens, dollars."""

    def events(self, event: dict[str, Any], where: str) -> Iterator[Event]:
        """The events one event is: its model turn, if it records one, then its step."""
        usage = self.usage(event)
        if usage is not None:
            yield usage
        out = self.feed(event, where)
        if out is not None:
            yield out

    def usage(self, event: dict[str, Any]) -> Usage | None:
        """The increase of an event's ``llm_metrics`` running totals (the module's rules)."""
        metrics = event.get("llm_metrics")
        if not isinstance(metrics, dict) or not isinstance(event.get("action"), str):
            return None  # an observation's are another LLM's own (the draft editor's)
        tokens = as_dict(metrics.get("accumulated_token_usage"))
        cost = metrics.get("accumulated_cost")
        now = (token_count(tokens.get("prompt_tokens")),
               token_count(tokens.get("completion_tokens")),
               token_count(tokens.get("cache_read_tokens")),
               token_count(tokens.get("cache_write_tokens")), dollars(cost) or 0.0)
        before = self.spent
        self.spent = now
        if any(b > n for b, n in zip(before, now, strict=True)):
            before = (0, 0, 0, 0, 0.0)  # a total fell: it counts from 0 again
        prompt, output, read, write = (now[0] - before[0], now[1] - before[1],
                                       now[2] - before[2], now[3] - before[3])
        usd = now[4] - before[4]
        if not (prompt or output or read or write or usd > 0):
            return None
        model = as_str(tokens.get("model"))
        return Usage(max(0, prompt - read - write), output, read, write,
                     model if model and model != "default" else None,
                     _stamp(event.get("timestamp")), self.steps - 1,
                     usd=usd if usd > 0 else None,
                     priced_by="openhands" if usd > 0 else None)

    def feed(self, event: dict[str, Any], where: str) -> Event | None:
        """The step one event is, if any; ``where`` names the event in an error."""
        kind_v1 = event.get("kind")
        if (isinstance(kind_v1, str) and "action" not in event) or isinstance(
                event.get("action"), dict) or isinstance(event.get("observation"), dict):
            return self._feed_v1(event, str(kind_v1 or ""), where)
        action = event.get("action")
        if isinstance(action, str):
            if action == "finish":
                self.finished = True
            args = event.get("args")
            if isinstance(args, dict) and isinstance(args.get("command"), str):
                self.commands[as_key(event.get("id"))] = args["command"]
            return _written(args, action) if isinstance(args, dict) else None
        kind = event.get("observation")
        if not isinstance(kind, str):
            return None
        extras = as_dict(event.get("extras"))
        if kind == "agent_state_changed":
            state = extras.get("agent_state")
            self.state = state if isinstance(state, str) else self.state
            reason = extras.get("reason")
            if self.state == "error" and isinstance(reason, str) and reason.strip():
                self.reason = reason
        if kind in _NOT_STEPS:
            return None
        step = self.steps
        self.steps += 1
        content = as_str(event.get("content"))
        stamp = _stamp(event.get("timestamp"))
        command = as_str(extras.get("command")) or self.commands.get(as_key(event.get("cause")), "")
        if kind == "run":
            metadata = as_dict(extras.get("metadata"))
            code = stated_exit(metadata.get("exit_code", extras.get("exit_code")), where)
            if code == -1:
                note = str(metadata.get("suffix", "")) + content[-300:]
                if _TIMED_OUT.search(note):
                    return Command(step, command, None, content, stamp, timed_out=True)
                return Command(step, command, -1, content, stamp, running=True)
            return Command(step, command, code, content, stamp)
        if kind == "timeout":  # TimeoutObservation: the action ran past its time limit
            return Command(step, command, None, content, stamp, timed_out=True)
        if kind == "user_rejected":  # declined when asked to confirm: it never ran
            return cancelled(step, command or "action", first_line(content) or "rejected",
                             stamp)
        if kind in {"edit", "read", "write"} and content.startswith("ERROR:"):
            reason = first_line(content[len("ERROR:"):])
            return Rejected(step, f"{kind} {extras.get('path', '')}".strip(), reason, stamp)
        if kind == "run_ipython":
            if TRACEBACK_START in content or "Traceback (most recent call last)" in content:
                code_text = as_str(extras.get("code"))
                return Command(step, code_text or "ipython", 1, content, stamp)
            return None
        if kind == "error":
            return _error_step(step, content, "tool call", stamp)
        return None

    def _feed_v1(self, event: dict[str, Any], kind: str, where: str) -> Event | None:
        """An OpenHands V1 (software-agent-sdk) event, told by its ``kind``."""
        stamp = _stamp(event.get("timestamp"))
        action = event.get("action")
        if kind == "ActionEvent" or isinstance(action, dict):
            action = as_dict(action)
            if "Finish" in str(action.get("kind", "")):
                self.finished = True
            command = action.get("command")
            if isinstance(command, str):
                self.commands[as_key(event.get("id"))] = command
                self.commands[as_key(event.get("tool_call_id"))] = command
            return _written(action)
        if kind == "ConversationIterationLimitEvent":
            self.limit = True
            return None
        if kind == "ConversationErrorEvent":
            name, detail = as_str(event.get("code")), as_str(event.get("detail"))
            split = split_exception(first_line(detail, 1000))
            named = split is not None and "." in split[0]  # litellm.AuthenticationError: ...
            type_name = (split[0] if named and split else name) or (
                split[0] if split else "ConversationError")
            source = _source_of(type_name)
            if "runtime" in f"{name} {detail}".lower() or "sandbox" in detail.lower():
                source = "harness"
            message = split[1] if named and split else detail or name
            self.end_error = ErrorText(None, source, type_name, message, timestamp=stamp)
            return None
        if kind == "ConversationStateUpdateEvent":
            value = event.get("value")
            self.model = as_str(event.get("model")) or self.model
            if event.get("key") == "execution_status" and isinstance(value, str):
                self.state = value
            elif isinstance(value, dict) and isinstance(value.get("execution_status"), str):
                self.state = value["execution_status"]
            if self.state == "finished":
                self.finished = True
            return None
        if "tool_call_id" not in event:
            return None  # a message, the system prompt, a condensation, a pause...
        step = self.steps
        self.steps += 1
        tool = as_str(event.get("tool_name")) or "tool"
        command = self.commands.get(as_key(event.get("action_id"))) or self.commands.get(
            as_key(event.get("tool_call_id")), "")
        if kind == "UserRejectObservation" or "rejection_reason" in event:
            return _declined(step, command or tool, event, stamp)
        if kind == "AgentErrorEvent" or ("error" in event and "observation" not in event):
            return _error_step(step, as_str(event.get("error")), tool, stamp)
        observation = as_dict(event.get("observation"))
        text = _content(observation.get("content")) or as_str(observation.get("output"))
        metadata = as_dict(observation.get("metadata"))
        code = stated_exit(observation.get("exit_code", metadata.get("exit_code")), where)
        failed = observation.get("is_error") is True or observation.get("error") is True
        command = as_str(observation.get("command")) or command
        if observation.get("timeout") is True:
            return Command(step, command or tool, None, text, stamp, timed_out=True)
        if code is not None:
            if code == -1 and _TIMED_OUT.search(as_str(metadata.get("suffix"))):
                return Command(step, command or tool, None, text, stamp, timed_out=True)
            if code == -1:
                return Command(step, command, -1, text, stamp, running=True)
            return Command(step, command or tool, code, text, stamp)
        if failed:
            return Rejected(step, f"{tool} {as_str(observation.get('path'))}".strip(),
                            first_line(text) or "error", stamp)
        return None

    def end(self, name: str | None, error: object = None) -> SessionEnd:
        if error is None and self.limit:
            failure = ErrorText(None, "agent", "ConversationIterationLimit",
                                "maximum iterations", limit="iteration")
            return SessionEnd(self.steps, "limit", name, failure)
        if error is None and self.end_error is not None:
            source = self.end_error.source
            status = "provider_error" if source == "provider" else "unknown"
            return SessionEnd(self.steps, status, name, self.end_error)
        if error is None and self.state == "stuck":
            failure = ErrorText(None, "agent", "AgentStuckInLoopError",
                                "the agent was stuck in a loop")
            return SessionEnd(self.steps, "unknown", name, failure)
        if error is None and self.state == "error":
            if self.reason:
                return _record_end(self.steps, name, self.reason, False)
            return SessionEnd(self.steps, "unknown", name)
        return _record_end(self.steps, name, error, self.finished)


def _error_step(step: int, text: str, action: str, stamp: float | None) -> Event:
    """An error fed back to the model: an exception's failure, else a refused tool call."""
    split = split_exception(first_line(text, 1000))
    if split is None:
        return Rejected(step, action, first_line(text) or "error", stamp)
    return ErrorText(step, _source_of(split[0]), split[0], split[1], timestamp=stamp)


class OpenHandsReader:
    """Reader for OpenHands event streams, output records, completions and harness logs."""

    name = "openhands"

    def sniff(self, head: bytes) -> bool:
        """An event array, output records, OpenHands completions or an infer log."""
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
        if text.startswith(b"["):
            return ((b'"observation"' in head or b'Event"' in head)
                    and b'"source"' in head and b'"timestamp"' in head)
        if text.startswith(b"{"):
            if _is_record(head):
                return True
            return b'"messages"' in head and any(marker in head for marker in (
                b"[Command finished with exit code", b"execute_bash", b"str_replace_editor"))
        first = text.split(b"\n", 1)[0].decode("utf-8", "replace")
        return bool(_LOG_LINE.match(first)) and (b"runtime" in head or b"OpenHands" in head
                                                 or b"openhands" in head)

    def read(self, stream: BinaryIO, label: str) -> Iterator[Event]:
        """Dispatch on the shape the first bytes show."""
        head: bytes = stream.peek(65536)[:65536]  # type: ignore[attr-defined]
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
        if text.startswith(b"["):
            yield from self._events_array(stream, label)
        elif text.startswith(b"{") and _is_record(head):
            yield from self._records(stream)
        elif text.startswith(b"{"):
            yield from self._completions(stream, label)
        else:
            yield from self._infer_log(stream, label)

    @staticmethod
    def _events_array(stream: BinaryIO, label: str) -> Iterator[Event]:
        doc = JsonStream(stream)
        yield SessionStart()
        run = _Stream()
        for index, event in enumerate(doc.items()):
            if isinstance(event, dict):
                yield from run.events(event, f"item [{index}]")
        doc.end()
        if run.model:
            yield About(run.model)
        yield run.end(PurePath(label).stem)

    @staticmethod
    def _records(stream: BinaryIO) -> Iterator[Event]:
        for number, record in json_objects(stream):
            name = _record_name(record, number)
            yield SessionStart(name)
            run = _Stream()
            for index, event in enumerate(as_list(record.get("history"))):
                if isinstance(event, dict):
                    yield from run.events(event, f"line {number}, history[{index}]")
            metadata = as_dict(record.get("metadata"))
            model = (as_dict(metadata.get("llm_config")).get("model")  # v0
                     or as_dict(metadata.get("llm")).get("model"))  # V1 benchmarks
            version = metadata.get("openhands_version") or metadata.get("version")
            yield About(model if isinstance(model, str) else None,
                        version if isinstance(version, str) else None)
            total = dollars(as_dict(record.get("metrics")).get("accumulated_cost")) or None
            yield replace(run.end(name, record.get("error")), recorded_usd=total)

    @staticmethod
    def _completions(stream: BinaryIO, label: str) -> Iterator[Event]:
        doc = JsonStream(stream)
        name = PurePath(label).parent.name or PurePath(label).stem
        yield SessionStart(name)
        steps = 0
        stamp: float | None = None
        for key in doc.members():
            if key == "messages" and doc.peek() == "[":
                commands: dict[str, tuple[str, str]] = {}
                for index, message in enumerate(doc.items()):
                    if not isinstance(message, dict):
                        continue
                    if message.get("role") == "assistant":
                        commands = _tool_commands(as_list(message.get("tool_calls")))
                        yield from _edits(as_list(message.get("tool_calls")))
                    elif message.get("role") == "tool":
                        call = commands.get(str(message.get("tool_call_id")), ("", ""))
                        event = _tool_result(steps, call, _content(message.get("content")),
                                             f"messages[{index}]")
                        if event is not None:
                            yield event
                        steps += 1
            elif key == "timestamp":
                stamp = _stamp(doc.value())
            elif key == "response":
                model = as_dict(doc.value()).get("model")
                if isinstance(model, str):
                    yield About(model)
            else:
                doc.skip()
        doc.end()
        yield SessionEnd(steps, "unknown", name, timestamp=stamp)

    @staticmethod
    def _infer_log(stream: BinaryIO, label: str) -> Iterator[Event]:
        yield from _InferLog(PurePath(label).stem).read(lines(stream, strict=False))


_EDITS: Final = frozenset({"create", "str_replace", "insert", "write", "edit"})


def _written(args: dict[str, Any], action: str = "") -> Wrote | None:
    """The file an editor call writes (``str_replace_editor``/``file_editor`` ``create``,
    ``str_replace``, ``insert``; v0's ``edit`` and ``write`` actions): its path and new text."""
    path = args.get("path")
    if not isinstance(path, str) or not path or (
            action not in _EDITS and args.get("command") not in _EDITS):
        return None
    text = next((value for key in ("file_text", "new_str", "content")
                 if isinstance(value := args.get(key), str)), "")
    return Wrote(path, text)


def _content(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(p.get("text", "") for p in value
                         if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _arguments(call: object) -> tuple[str, dict[str, Any]]:
    """A tool call's function name and its arguments (a JSON string), parsed."""
    function = as_dict(as_dict(call).get("function"))
    arguments = function.get("arguments")
    parsed: Any = None
    if isinstance(arguments, str):
        try:
            parsed = loads(arguments)
        except ValueError:
            parsed = None
    return str(function.get("name", "")), parsed if isinstance(parsed, dict) else {}


def _edits(calls: Iterable[object]) -> Iterator[Wrote]:
    for call in calls:
        name, args = _arguments(call)
        if name == "str_replace_editor" and (wrote := _written(args)) is not None:
            yield wrote


def _tool_commands(calls: Iterable[object]) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    for call in calls:
        if not isinstance(call, dict):
            continue
        name, parsed = _arguments(call)
        command = str(parsed.get("command") or parsed.get("code") or "")
        if name == "str_replace_editor":
            command = f"{parsed.get('command', '')} {parsed.get('path', '')}".strip()
        out[str(call.get("id"))] = (name, command)
    return out


_NOTES: Final = lazy(r"^\[(?:Python Interpreter: [^\]]*|Command finished with exit code -?\d+"
                           r"|The command .*)\]$|^\S*@\S+:\S* #\s*$")


# the interpreter note glued to the output's last line when the output does not end a line
_GLUED_NOTE: Final = lazy(r"\[Python Interpreter: [^\]\n]*\]\s*$")


def _bash_output(content: str, command: str) -> str:
    """The command's own output: OpenHands echoes the command first and appends notes
    (the interpreter, the exit code, the shell prompt), on their own lines or, the interpreter
    note, glued to the end of an output that did not end its last line."""
    text = content.replace("\r\n", "\n")
    if command and text.startswith(command):
        text = text[len(command):]
    return "\n".join(_GLUED_NOTE.sub("", line) for line in text.split("\n")
                     if not _NOTES.match(line.strip()))


def _tool_result(step: int, call: tuple[str, str], content: str, where: str) -> Event | None:
    name, command = call
    if content.startswith("ERROR:"):
        return Rejected(step, command or name, first_line(content[len("ERROR:"):]))
    found = _EXIT.search(content[-400:])
    if found is not None:
        code = exit_in_text(found.group(1), where)
        output = _bash_output(content, command)
        if code == -1:
            return Command(step, command, -1, output, running=True)
        return Command(step, command, code, output)
    if "Traceback (most recent call last)" in content:
        last = content.rstrip().rsplit("\n", 1)[-1]
        if name == "str_replace_editor" and (crash := split_exception(last)) is not None:
            # the editor tool itself crashed: its traceback (IPython's, run through
            # OpenHands' own editor code) ends in the exception it raised
            type_name, message = crash
            return ErrorText(step, "tool", type_name, message, content[-4000:],
                             evidence=f"{command or name}: {type_name}: {first_line(message)}",
                             tool=name)
        return Command(step, command or name, 1, content)  # an IPython cell or a script
    if name == "execute_bash":
        failed = shell_failed(content)
        if failed is not None:
            return Command(step, command, failed, content)
    return None


def _ending(message: str) -> tuple[str, ErrorText | None] | None:
    """How an agent controller's line says the session ended (the module's rules), if so."""
    if message.startswith(_ITERATION_LIMIT):
        return "limit", ErrorText(None, "agent", "Error", message, limit="iteration")
    state = _STATE.search(message)
    return ("submitted", None) if state is not None and state.group("state") == "FINISHED" else (
        None)


def _controller(message: str, so_far: tuple[str, ErrorText | None], name: str,
                ends: dict[str, tuple[str, ErrorText | None]]) -> bool:
    """An agent controller's line: the agent ran in the instance's attempt (``ends`` holds
    it, ``unknown`` until a line says how it ended); True when the line says how."""
    ending = _ending(message)
    ends[name] = ending or so_far
    return ending is not None


class _InferLog:
    """The harness log: sessions by instance, attempts as steps, one failure per attempt.

    Workers interleave instances, so events are kept per instance (a few per attempt) and
    each instance's session is emitted at the end of the log.
    """

    def __init__(self, default: str) -> None:
        self.default = default

    def read(self, source: Iterable[tuple[int, str]]) -> Iterator[Event]:
        order: list[str] = []
        attempts: dict[str, int] = {}
        events: dict[str, list[Event]] = {}
        ends: dict[str, tuple[str, ErrorText | None]] = {}  # since the instance's last banner
        name = self.default
        block: list[str] = []
        errors: list[str] = []
        mentions = 0
        stamp: float | None = None

        def flush(banner: bool) -> None:
            nonlocal block, errors, mentions
            if name not in attempts:
                order.append(name)
                attempts[name] = 0
                events[name] = []
            if errors or banner:
                event = self._failure(attempts[name], errors, "\n".join(block), mentions,
                                      stamp)
                if event is not None:
                    events[name].append(event)
            if banner:
                attempts[name] += 1
                ends.pop(name, None)
            block, errors, mentions = [], [], 0

        for _, line in source:
            match = _LOG_LINE.match(line)
            if match is None:
                if _RETRY.search(line):
                    mentions += 1
                    flush(banner=True)
                elif errors or block:
                    # a chain of tracebacks ("The above exception was the direct cause")
                    # logs the failure once
                    if line.startswith(TRACEBACK_START) and not any(
                            b.startswith(TRACEBACK_START) for b in block):
                        mentions += 1
                    block.append(line)
                continue
            message = match.group("msg")
            found = _INSTANCE.search(message)
            if found and found.group("name") and found.group("name") != name:
                flush(banner=False)
                name = found.group("name")
            if ("AgentState." in message or message.startswith(_ITERATION_LIMIT)) and (
                    _controller(message, ends.setdefault(name, ("unknown", None)), name, ends)):
                continue
            if match.group("level") in {"ERROR", "CRITICAL"}:
                text = _RUNTIME_ID.sub("", message).strip()
                if text and set(text) != {"-"}:
                    errors.append(text)
                    mentions += 1
                stamp = _stamp(f"{match.group('ts')}.{match.group('ms')}")
                block.append(message)
        flush(banner=False)
        yield from self._sessions(order, events, attempts, ends)

    def _sessions(self, order: list[str], events: dict[str, list[Event]],
                  attempts: dict[str, int], ends: dict[str, tuple[str, ErrorText | None]],
                  ) -> Iterator[Event]:
        """Each instance's session, in the order the log first named them; ``ends`` holds
        the instances the agent controller ran since their last banner."""
        for session in order:
            if session == self.default and not events[session] and len(order) > 1 and (
                    session not in ends):
                continue  # the lines before the harness named an instance, with nothing in them
            yield SessionStart(session)
            yield from events[session]
            failed_last = any(isinstance(e, ErrorText) and e.step == attempts[session]
                              for e in events[session])
            status, ended_by = ends.get(session, ("unknown", None))
            last_ran = failed_last or session in ends  # the last attempt is a step too
            yield SessionEnd(attempts[session] + (1 if last_ran else 0), status, session,
                             ended_by)

    @staticmethod
    def _failure(step: int, errors: list[str], block: str, mentions: int,
                 stamp: float | None) -> ErrorText | None:
        found = exception_line(block)
        if found is not None:
            type_name, message, traceback = found
        else:
            type_name, message, traceback = "HarnessError", "", None
        summary = errors[0] if errors else (message or type_name)
        if not errors and found is None:
            return None
        return ErrorText(step, "harness", type_name, summary or message, traceback,
                         evidence=f"{type_name}: {summary}"[:200], timestamp=stamp,
                         repeats=max(1, mentions))


def _declined(step: int, action: str, event: dict[str, Any], stamp: float | None) -> Event:
    """A ``UserRejectObservation``: a hook's refusal fed to the model is a rejected action, a
    person declining the call (it never ran) a cancelled one."""
    reason = as_str(event.get("rejection_reason")) or "rejected"
    if event.get("rejection_source") == "hook":
        return Rejected(step, action, reason, stamp)
    return cancelled(step, action, reason, stamp)
