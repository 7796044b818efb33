"""Claude Code's headless output: ``claude -p --output-format stream-json --verbose`` (what CI
jobs and harnesses keep), and ``--output-format json`` (one result object, or with
``--verbose`` an array of every message).

Rules (about the format and the tool; the message types are those the Claude Agent SDK
declares for this output, ``sdk.d.ts``'s ``SDKMessage`` union, checked against every real
stream line by ``tests/triage/test_claude_stream.py``):

- Detection: JSON lines (or a JSON array) whose first object has a ``type`` of ``system``,
  ``assistant``, ``user`` or ``result`` and a ``session_id`` (the transcript writes
  ``sessionId``: :mod:`~failcode.triage.readers._claude_code`).
- A session is one ``session_id``; a new one starts a new session. Lines before the first
  ``session_id`` are passed over.
- The messages are the transcript's: an ``assistant`` line's ``message`` holds the model's
  ``tool_use`` blocks, a ``user`` line's ``message`` the ``tool_result`` blocks, with
  ``tool_use_result`` where the transcript has ``toolUseResult``. A step is one
  ``tool_result`` block, numbered from 0 in file order, and what it came to (a command's exit
  status, a refusal, a cancelled call) follows the transcript reader's rules, by the same
  code. Messages of a subagent (``parent_tool_use_id`` set) are steps of the session too, and
  change nothing about how it ended.
- ``{"type": "system", "subtype": "init"}`` names the model and ``claude_code_version``; an
  assistant message's ``message.model`` (``<synthetic>`` aside) the model in use.
- ``{"type": "system", "subtype": "api_retry"}`` (``attempt``, ``max_retries``,
  ``retry_delay_ms``, ``error_status``, ``error``: one of the SDK's
  ``SDKAssistantMessageError`` codes; 2.1.3xx adds ``no_response``) is the transcript's
  ``api_error`` line as the stream tells it: one failed try of a request Claude Code retries,
  a provider error of the session at no step (the step the request led to is its own), never
  how it ended. Its kind comes from its fields as in the transcript (the classification
  layer's provider rules): an ``error_status`` decides (Claude Code's code for a 408 or a 5xx
  is ``server_error``, the status says which); with none, ``no_response`` is a timeout,
  ``cloud_credential_error`` a credential failure, and ``unknown`` (no HTTP answer: a
  connection that failed or a request that timed out, which the stream does not tell apart)
  a connection error. An assistant message with an ``error`` code is
  Claude Code's own ``API Error: ...`` text: a provider error, the session's end when nothing
  answers after it. Other ``system`` subtypes (hooks, tasks, compaction, status) change
  nothing.
- How the session ended is the last ``{"type": "result"}`` line's (a run may hold several when
  a background task brought the agent back; messages after a result reopen it):
  ``subtype`` ``success`` and not ``is_error`` is ``submitted``; a result with an
  ``api_error_status`` (an HTTP status, 100..599), or ``is_error`` with Claude Code's ``API
  Error`` text, is ``provider_error``; ``error_max_turns`` (or ``terminal_reason``
  ``max_turns``) and ``error_max_budget_usd`` are the agent's ``limit`` (turns, budget);
  ``error_during_execution`` is Claude Code stopping on an error of its own (its ``errors``,
  a harness failure) and ends ``unknown``, as does a result whose ``terminal_reason`` says the
  run was aborted (``aborted_streaming``, ``aborted_tools``). An error result whose
  ``terminal_reason`` is ``prompt_too_long`` (the context window), ``model_error`` or
  (2.1.3xx) ``api_error`` is a provider error; the other reasons the SDK declares leave it to
  ``subtype``. No result line (the run was cut off) is ``unknown``, or ``provider_error``
  when an API error was its last word.
- Time: a line's ``timestamp`` where Claude Code writes one (UTC, ``_text``'s rules); most
  stream lines have none.
- Cost: an assistant message's ``message.usage`` is the transcript's, counted by the
  transcript reader's rule (:func:`~failcode.triage.readers._claude_code.turn_usage`: each
  API message once, by ``message.id``, at the most each field reached), subagents' messages
  included: one turn after the step whose result came last (none after a user line without a
  tool result: a prompt). A ``result`` line's ``total_cost_usd``, ``usage`` and
  ``modelUsage`` are the run's totals so far (a later result's include an earlier one's):
  the session's, never a turn's, so no failure is charged them; turns are priced from
  genai-prices. The last result's ``total_cost_usd`` is the session's ``recorded_usd``
  (0, what Claude Code records for a model it cannot price, is none), kept when messages
  came after it and the run was cut off.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from failcode.triage._events import (
    About,
    ErrorText,
    Event,
    InputError,
    SessionEnd,
    SessionStart,
)
from failcode.triage.readers._claude_code import (
    about_change,
    api_error,
    files_written,
    provider_error_kind,
    record_calls,
    text_of,
    tool_results,
    turn_usage,
)
from failcode.triage.readers._jsonstream import loads
from failcode.triage.readers._lines import lines
from failcode.triage.readers._text import (
    as_dict,
    as_str,
    first_line,
    http_status,
    iso_time,
    recorded_total,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO

__all__ = ["ClaudeStreamReader"]

_TYPES: Final = (b'"type":"system"', b'"type":"assistant"', b'"type":"user"',
                 b'"type":"result"', b'"type": "system"', b'"type": "assistant"',
                 b'"type": "user"', b'"type": "result"')
_LIMITS: Final = {"error_max_turns": ("MaxTurnsReached", "the agent reached its turn limit",
                                      "turn"),
                  "error_max_budget_usd": ("MaxBudgetReached", "the run's budget ran out",
                                           "budget"),
                  "error_max_structured_output_retries": (
                      "MaxStructuredOutputRetries",
                      "the agent gave up on a structured answer after its retries", "retries")}
_TERMINAL: Final[dict[str, str | None]] = {
    "completed": None, "max_turns": "limit", "aborted_streaming": "unknown",
    "aborted_tools": "unknown", "prompt_too_long": "provider_error",
    "model_error": "provider_error", "blocking_limit": None, "rapid_refill_breaker": None,
    "image_error": None, "stop_hook_prevented": None, "hook_stopped": None,
    "tool_deferred": None, "background_requested": None,
    # 2.1.3xx (SDK 0.3.332): an API error Claude Code gave up on is the provider's; the others
    # are told by the result's subtype (a budget, structured-output retries, its own failure)
    "api_error": "provider_error", "malformed_tool_use_exhausted": None,
    "budget_exhausted": None, "structured_output_retry_exhausted": None,
    "tool_deferred_unavailable": None, "turn_setup_failed": None,
}
"""Every ``terminal_reason`` the SDK declares (``TerminalReason``): the ending it decides, or
None when the result's ``subtype`` and ``is_error`` decide (a test keeps this complete)."""


class _Session:
    """One session being read."""

    __slots__ = ("about", "end", "ended_by", "name", "read", "resolved", "seen", "steps",
                 "total", "uses")

    def __init__(self, name: str) -> None:
        self.name = name
        self.steps = 0
        self.seen: dict[str, tuple[int, int, int, int, int]] = {}
        """The tokens counted so far of each API message, and the step it read."""
        self.read = -1
        """The step whose result the next turn reads (-1: none, or a prompt came after it)."""
        self.uses: dict[str, tuple[str, dict[str, Any]]] = {}
        self.end = "unknown"
        self.ended_by: ErrorText | None = None
        self.about = About()
        self.resolved = False
        """A result line has said how the run ended, and no message came after it."""
        self.total: float | None = None
        """The last result line's ``total_cost_usd`` (the run's cost so far)."""

    def close(self) -> SessionEnd:
        if not self.resolved and self.end != "provider_error":  # cut off before its result
            return SessionEnd(self.steps, "unknown", self.name, recorded_usd=self.total)
        return SessionEnd(self.steps, self.end, self.name, self.ended_by,
                          recorded_usd=self.total)


class ClaudeStreamReader:
    """Reader for Claude Code's ``-p`` stream-json and json output."""

    name = "claude-stream-json"

    def sniff(self, head: bytes) -> bool:
        """A first object with a stream message ``type`` and a ``session_id``."""
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
        first = text.split(b"\n", 1)[0]
        if text.startswith(b"["):  # --output-format json --verbose: an array of messages
            first = text[:4096]
        elif not first.startswith(b"{"):
            return False
        return b'"session_id"' in first and b'"sessionId"' not in first and any(
            marker in first for marker in _TYPES)

    def read(self, stream: BinaryIO, label: str) -> Iterator[Event]:
        """One pass over the messages; sessions change when ``session_id`` does."""
        current: _Session | None = None
        for number, entry in _messages(stream):
            sid = entry.get("session_id")
            if isinstance(sid, str) and (current is None or sid != current.name):
                if current is not None:
                    yield current.close()
                current = _Session(sid)
                yield SessionStart(sid)
            if current is not None:
                yield from self._message(current, entry, number)
        if current is not None:
            yield current.close()

    @staticmethod
    def _message(state: _Session, entry: dict[str, Any], number: int) -> Iterator[Event]:
        kind, subtype = entry.get("type"), entry.get("subtype")
        stamp = iso_time(entry.get("timestamp"))
        message = as_dict(entry.get("message"))
        content = message.get("content")
        main = entry.get("parent_tool_use_id") is None
        if kind in ("assistant", "user") and main:
            state.resolved = False
        if kind == "system" and subtype == "init":
            now = About(as_str(entry.get("model")) or state.about.model,
                        as_str(entry.get("claude_code_version")) or state.about.agent_version)
            if now != state.about:
                state.about = now
                yield now
        elif kind == "system" and subtype == "api_retry":
            yield _retry(entry, stamp)  # before the next request: no step of its own
        elif kind == "assistant":
            state.about = yield from about_change(entry, message, state.about)
            if as_str(entry.get("error")):  # Claude Code's own "API Error: ..." message
                state.ended_by = api_error(state.steps, text_of(content), stamp, None,
                                           entry.get("error"))
                state.end = "provider_error" if main else state.end
                yield state.ended_by
                return
            usage = turn_usage(message, state.seen, stamp, state.read)
            if usage is not None:
                yield usage
            answered = record_calls(content, state.uses, message.get("stop_reason"))
            yield from files_written(content)
            if main:
                state.end, state.ended_by = ("submitted" if answered else "unknown"), None
        elif kind == "user":
            before = state.steps
            state.steps = yield from tool_results(
                state.steps, content, state.uses, stamp,
                detail=as_dict(entry.get("tool_use_result")), where=f"line {number}")
            # the next turn reads these results; a line with none is a prompt: new work
            state.read = state.steps - 1 if state.steps != before else -1
            if main and (state.steps != before or state.end != "provider_error"):
                state.end, state.ended_by = "unknown", None  # not answered (yet)
        elif kind == "result":
            state.end, state.ended_by = _ending(state.steps, entry, stamp)
            state.resolved = True
            state.total = recorded_total(entry.get("total_cost_usd"))
            if state.ended_by is not None and state.end == "provider_error":
                yield state.ended_by


def _messages(stream: BinaryIO) -> Iterator[tuple[int, dict[str, Any]]]:
    """The input's objects: one per line, or the items of a line that is a JSON array
    (``--output-format json --verbose`` prints every message as one array)."""
    for number, line in lines(stream):
        if not line.strip():
            continue
        try:
            value = loads(line)
        except ValueError as exc:
            raise InputError("FC-DATA-003", f"line {number} is not JSON ({exc})") from None
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict):
                yield number, item


def _retry(entry: dict[str, Any], stamp: float | None) -> ErrorText:
    """A ``system`` ``api_retry`` message: one failed try that Claude Code retries."""
    status = http_status(entry.get("error_status"))
    code = as_str(entry.get("error"))
    text = code.replace("_", " ") or "API error"
    if status is not None:
        text = f"Error code: {status} - {text}"
    if code == "cloud_credential_error":
        kind = "anthropic.AuthenticationError"
    else:  # no status and no code but "unknown": the request got no HTTP answer
        kind = provider_error_kind(status, "", no_response=bool(entry.get("no_response")),
                                   network_down=code in ("", "unknown"))
    attempt, most = entry.get("attempt"), entry.get("max_retries")
    tries = f"{attempt} of {most}" if isinstance(most, int) else f"{attempt or '?'}"
    return ErrorText(None, "provider", kind, text,
                     evidence=f"API error (retry {tries}): {text}", timestamp=stamp)


def _ending(steps: int, entry: dict[str, Any], stamp: float | None,
            ) -> tuple[str, ErrorText | None]:
    """How a ``result`` message says the run ended (see the module's rules)."""
    subtype = as_str(entry.get("subtype"))
    reason = as_str(entry.get("terminal_reason"))
    text = as_str(entry.get("result"))
    status = http_status(entry.get("api_error_status"))
    if status is not None or (entry.get("is_error") is True and "API Error" in text):
        return "provider_error", api_error(steps, text or "API Error", stamp, status)
    ending = _TERMINAL.get(reason)
    if ending == "limit" and subtype not in _LIMITS:
        subtype = "error_max_turns"
    if ending == "provider_error" and entry.get("is_error") is True:
        message = text or reason.replace("_", " ")
        return "provider_error", ErrorText(steps, "provider", "anthropic.APIStatusError",
                                           message, evidence=first_line(message),
                                           timestamp=stamp,
                                           context_window=reason == "prompt_too_long")
    if subtype in _LIMITS:
        error_class, message, limit = _LIMITS[subtype]
        return "limit", ErrorText(None, "agent", error_class, message, timestamp=stamp,
                                  limit=limit)
    if subtype == "error_during_execution":
        errors = [as_str(e) for e in entry.get("errors") or () if as_str(e)]
        detail = "\n".join(errors) or "Claude Code stopped on an error during execution"
        return "unknown", ErrorText(None, "harness", "ClaudeCodeError", detail,
                                    evidence=first_line(detail), timestamp=stamp)
    if subtype == "success" and entry.get("is_error") is not True and ending != "unknown":
        return "submitted", None
    return "unknown", None
