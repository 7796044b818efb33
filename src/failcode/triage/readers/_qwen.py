"""Qwen Code chat recordings (``~/.qwen/projects/<project>/chats/<session id>.jsonl``).

Rules (from Qwen Code's own session code, ``@qwen-code/qwen-code`` 0.24.4: its
``ChatRecordingService`` writes the records, ``SessionService.loadSession`` reads them back
through ``prepareTranscriptRecords``; the real files of versions 0.5.0 and 0.9.1 have the same
shape):

- Detection: a first line that is a record ``{uuid, parentUuid, sessionId, type, ...}``
  whose ``message`` is a Gemini content (``{role, parts}``) or which carries a
  ``systemPayload`` (Claude Code's records have the same ids but a ``message.content``).
- One file is one session, named by ``sessionId``. A damaged file (not UTF-8, cut, not JSON
  from some point on) is the session its records before the damage make, ending ``unknown``.
- A record is kept when its ``uuid`` and ``sessionId`` are non-empty strings, its
  ``parentUuid`` a string or null and its ``type`` ``user``, ``assistant``, ``tool_result``
  or ``system``. Records are a tree: the conversation is the chain of ``parentUuid`` links
  from the last conversation record back to the root (a ``system`` record of subtype
  ``session_artifact_*``, ``session_sources_snapshot`` or ``managed_session_*`` is not one);
  records on a branch the person left (a rewind, an edited prompt) are not part of it. The
  walk stops at a parent that is missing or already seen. Records sharing a ``uuid`` are
  fragments of one record: their ``parts`` are joined in file order.
- A step is one ``functionCall`` part of an ``assistant`` record on the chain, numbered from
  0 in that order. Its result is the ``functionResponse`` part with the same ``id`` in a
  ``tool_result`` record on the chain, whose ``toolCallResult.status`` is ``success``,
  ``error`` or ``cancelled``. Qwen Code is a fork of Gemini CLI and its tools write the same
  texts, so a call joined with its response is read by Gemini CLI's rules
  (:func:`failcode.triage.readers._gemini.tool_call`): the shell tool's ``Exit Code: N`` line (Qwen
  Code writes it on success too, ``Exit Code: 0``; ``(none)`` when a signal ended the
  command, then ``Signal: N``), a refused or failing non-shell call is a rejected action, and
  a ``cancelled`` call (``[Operation Cancelled] Reason: User did not allow tool call`` when
  the person declined the approval) a cancelled outcome. A call with no result on the chain
  never ran (the session stopped first): a step with no event.
- A ``system`` record of subtype ``ui_telemetry`` whose event is ``qwen-code.api_error`` is
  one failed request to the model. Qwen Code logs every attempt, so one followed by a
  ``qwen-code.api_response`` was retried and succeeded; one that is not is a provider error
  (Qwen Code gave up): its ``status_code`` is the HTTP status when a number,
  ``RequestTimeOut`` a timeout. The session ended on it when no user or model record
  followed.
- A session whose last user, model or tool record is a model answer without function calls
  ended ``submitted``; else ``unknown``.
- The model is each model record's ``model``; the agent's version each record's
  ``version``. Time: each record's ``timestamp`` (UTC with ``Z``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from failcode._lazy_re import lazy
from failcode.triage._events import About, ErrorText, InputError, SessionEnd, SessionStart
from failcode.triage.readers._gemini import tool_call
from failcode.triage.readers._jsonstream import loads
from failcode.triage.readers._lines import json_objects
from failcode.triage.readers._text import as_dict, as_list, as_str, iso_time

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import BinaryIO

    from failcode.triage._events import Event

__all__ = ["QwenCodeReader"]

_TYPES: Final = frozenset({"user", "assistant", "tool_result", "system"})
_NOT_CONVERSATION: Final = frozenset({
    "session_artifact_event", "session_artifact_snapshot", "session_sources_snapshot",
    "managed_session_header_v1", "managed_session_event_v1", "managed_session_commit_v1"})
_QWEN_RECORD: Final = lazy(
    r'^\{\s*"uuid"\s*:\s*"[^"]+"\s*,\s*"parentUuid"\s*:\s*(?:null|"[^"]*")\s*,\s*"sessionId"\s*:')
_GEMINI_MESSAGE: Final = lazy(
    r'"message"\s*:\s*\{\s*"role"\s*:\s*"[a-z]+"\s*,\s*"parts"\s*:|"systemPayload"\s*:\s*\{')
_API_ERROR: Final = "qwen-code.api_error"
_API_RESPONSE: Final = "qwen-code.api_response"
_TIMEOUT: Final = lazy(r"(?i)time ?out|timed out")


def _valid(record: dict[str, Any]) -> bool:
    """A record ``prepareTranscriptRecords`` keeps."""
    parent = record.get("parentUuid")
    return (isinstance(record.get("uuid"), str) and bool(record["uuid"])
            and isinstance(record.get("sessionId"), str) and bool(record["sessionId"])
            and (parent is None or isinstance(parent, str))
            and record.get("type") in _TYPES)


def _conversation(record: dict[str, Any]) -> bool:
    return not (record.get("type") == "system" and record.get("subtype") in _NOT_CONVERSATION)


def chain(records: list[tuple[int, dict[str, Any]]]) -> list[tuple[int, dict[str, Any]]]:
    """The conversation: the ``parentUuid`` chain from the last conversation record, each
    record's fragments joined (with the line of its first fragment)."""
    fragments: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    leaf = None
    for number, record in records:
        if _valid(record) and _conversation(record):
            fragments.setdefault(record["uuid"], []).append((number, record))
            leaf = record["uuid"]
    walk: list[str] = []
    seen: set[str] = set()
    key = leaf
    while key is not None and key in fragments and key not in seen:
        seen.add(key)
        walk.append(key)
        key = fragments[key][0][1].get("parentUuid")
    return [_joined(fragments[key]) for key in reversed(walk)]


def _joined(parts: list[tuple[int, dict[str, Any]]]) -> tuple[int, dict[str, Any]]:
    """One record from its fragments: the first, with every fragment's parts."""
    number, first = parts[0]
    if len(parts) == 1:
        return number, first
    record = dict(first)
    joined = [part for _, fragment in parts
              for part in as_list(as_dict(fragment.get("message")).get("parts"))]
    record["message"] = {**as_dict(first.get("message")), "parts": joined}
    for _, fragment in parts[1:]:
        for field in ("toolCallResult", "model"):
            if field not in record and field in fragment:
                record[field] = fragment[field]
    return number, record


def _parts(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [as_dict(part) for part in as_list(as_dict(record.get("message")).get("parts"))]


def _provider_error(event: dict[str, Any], step: int, stamp: float | None) -> ErrorText:
    """A request Qwen Code gave up on, as a provider error."""
    status = event.get("status_code")
    text = as_str(event.get("error")) or as_str(event.get("error_type")) or "API error"
    type_name, message = "openai.APIError", text
    if isinstance(status, int) or (isinstance(status, str) and status.isdigit()):
        message = f"Error code: {status} - {text}"
    elif _TIMEOUT.search(f"{status} {text}"):
        type_name = "openai.APITimeoutError"
    return ErrorText(step, "provider", type_name, message, evidence=text[:200], timestamp=stamp)


class QwenCodeReader:
    """Reader for Qwen Code chat recordings."""

    name = "qwen-code"

    def sniff(self, head: bytes) -> bool:
        """A first record with Qwen Code's ids and a Gemini-shaped message or a payload."""
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
        first, newline, _ = text.partition(b"\n")
        if newline:  # the whole first line: its record
            try:
                record = loads(first)
            except ValueError:
                return False
            return (isinstance(record, dict) and _valid(record)
                    and (isinstance(as_dict(record.get("message")).get("parts"), list)
                         or isinstance(record.get("systemPayload"), dict)))
        line = first.decode("utf-8", "replace")  # a first line longer than the head
        return bool(_QWEN_RECORD.match(line)) and bool(_GEMINI_MESSAGE.search(line))

    def read(self, stream: BinaryIO, label: str) -> Iterator[Event]:
        """Every record, then the conversation chain's steps."""
        records: list[tuple[int, dict[str, Any]]] = []
        try:
            for number, entry in json_objects(stream):
                records.append((number, entry))
        except InputError:  # damaged: the records before it are the session so far
            yield from self._events(records, damaged=True)
            raise
        yield from self._events(records, damaged=False)

    @staticmethod
    def _name(records: list[tuple[int, dict[str, Any]]]) -> str | None:
        return next((record["sessionId"] for _, record in records if _valid(record)), None)

    def _events(self, records: list[tuple[int, dict[str, Any]]], *, damaged: bool,
                ) -> Iterable[Event]:
        name = self._name(records)
        yield SessionStart(name)
        steps = 0
        calls: dict[str, tuple[int, dict[str, Any]]] = {}
        pending: ErrorText | None = None
        last: dict[str, Any] = {}
        for number, record in chain(records):
            stamp = iso_time(record.get("timestamp"))
            kind = record.get("type")
            if kind == "system":
                event = as_dict(as_dict(record.get("systemPayload")).get("uiEvent"))
                if event.get("event.name") == _API_ERROR:
                    pending = _provider_error(event, steps, stamp)
                elif event.get("event.name") == _API_RESPONSE:
                    pending = None  # the failed attempt before it was retried
                continue
            if pending is not None:
                yield pending
                pending = None
            last = record
            if kind == "assistant":
                yield About(as_str(record.get("model")) or None,
                            as_str(record.get("version")) or None)
                for part in _parts(record):
                    call = as_dict(part.get("functionCall"))
                    if call:
                        calls[as_str(call.get("id")) or f"#{steps}"] = (steps, call)
                        steps += 1
            elif kind == "tool_result":
                result = as_dict(record.get("toolCallResult"))
                for part in _parts(record):
                    response = as_dict(part.get("functionResponse"))
                    if not response or as_str(response.get("id")) not in calls:
                        continue
                    step, call = calls.pop(as_str(response.get("id")))
                    status = as_str(result.get("status")) or "success"
                    shaped = {"name": as_str(call.get("name")) or as_str(response.get("name")),
                              "args": as_dict(call.get("args")), "status": status,
                              "result": [part], "resultDisplay": result.get("resultDisplay")}
                    done = tool_call(step, shaped, stamp, f"line {number}")
                    if done is not None:
                        yield done
        if damaged:
            return
        if pending is not None:
            yield pending
            yield SessionEnd(steps, "provider_error", name, pending)
        elif last.get("type") == "assistant" and not any(
                "functionCall" in part for part in _parts(last)):
            yield SessionEnd(steps, "submitted", name)
        else:
            yield SessionEnd(steps, "unknown", name)

