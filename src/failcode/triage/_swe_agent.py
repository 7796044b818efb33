"""SWE-agent trajectories (``*.traj``): one JSON object with ``trajectory``, ``history``, ``info``.

Rules (about the format and the tool):

- Detection: a JSON object whose first 64 KiB hold a ``trajectory`` key and entries with
  ``action`` and ``observation``.
- One file is one session, named by ``info.instance_id`` / ``environment`` when given, else
  the file's stem. Each entry of ``trajectory`` is one step, numbered from 0.
- SWE-agent records no exit status. A step's command failed when its observation shows what
  a shell shows for a failure: a Python traceback, ``command not found`` (exit 127), a
  program's ``No such file (or directory)`` / ``cannot open``, a pytest summary with failures,
  or compiler ``error:`` lines; the reader then passes exit status 1 (127 for a missing
  program) with the observation as output.
- A probe (``grep``, ``find``, ``rg``, ``ls``, ``test``, ``which``) whose observation is empty
  or SWE-agent's "did not produce any output" found nothing; so did ``search_dir``,
  ``search_file`` and ``find_file`` answering "No matches found".
- SWE-agent's edit linter refuses an edit that introduces syntax errors ("Your proposed edit
  has introduced new syntax error(s)"): the edit was not applied, so it is a rejected action;
  so is a usage message of SWE-agent's own commands (``Usage: ...``, ``No file open``).
- ``info.exit_status``: ``submitted`` (also ``submitted (exit_...)``) is submitted;
  ``exit_cost`` is the cost limit; ``exit_format`` the format-error limit; ``exit_context``
  the model's context window; ``exit_error`` / ``exit_api`` a failure of the agent or the
  provider, described by ``info.exception`` / ``info.traceback`` when present.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

from failcode.triage._events import (
    Command,
    ErrorText,
    Event,
    Rejected,
    SessionEnd,
    SessionStart,
)
from failcode.triage._jsonstream import JsonStream
from failcode.triage._mini_swe_agent import _stem, session_end_error
from failcode.triage._text import TRACEBACK_START, as_str, first_line

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO

__all__ = ["SweAgentReader"]

_SPECIAL_SEARCH: Final = ("search_dir", "search_file", "find_file")
_SPECIAL: Final = frozenset({
    "open", "goto", "scroll_up", "scroll_down", "create", "edit", "submit", "search_dir",
    "search_file", "find_file", "str_replace_editor", "insert", "filemap", "debug_program",
    "decompile", "disassemble", "connect_start", "connect_sendline", "connect_stop",
})  # fmt: skip
_PROBES: Final = frozenset({"grep", "egrep", "rg", "find", "ls", "test", "which", "ag"})
_NO_OUTPUT: Final = "Your command ran successfully and did not produce any output"
_EDIT_LINT: Final = "Your proposed edit has introduced new syntax error"
_NOT_FOUND: Final = re.compile(r"(?m)^(?:bash: (?:line \d+: )?)?(\S+): command not found$")
_SHELL_FAILURE: Final = re.compile(
    r"(?m)^(?:\S+: )?(?:cannot (?:open|access|stat)|can't open) .{0,300}"
    r"|^\S+: .{0,300}(?:No such file(?: or directory)?|Permission denied|not a directory)\s*$"
    r"|^(?:=+ )?.{0,80}\b\d+ (?:failed|errors?)\b.{0,80}(?: in [\d.]+s)?(?: =+)?$"
    r"|^\S+?:\d+(?::\d+)?: (?:fatal )?error: "
    r"|^(?:error|fatal)(?:\[E\d+\])?: ")


def _program(action: str) -> str:
    words = action.strip().split()
    return words[0] if words else ""


def shell_failed(output: str) -> int | None:
    """The exit status a shell observation implies (1, or 127 for a missing program), or None
    when the observation shows no failure."""
    head = output[:65536]
    if _NOT_FOUND.search(head):
        return 127
    if TRACEBACK_START in output or _SHELL_FAILURE.search(head):
        return 1
    return None


class SweAgentReader:
    """Reader for SWE-agent trajectories."""

    name = "swe-agent"

    def sniff(self, head: bytes) -> bool:
        """A JSON object with a ``trajectory`` of action / observation entries."""
        return (head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{")
                and b'"trajectory"' in head and b'"observation"' in head
                and b'"action"' in head)

    def read(self, stream: BinaryIO, label: str) -> Iterator[Event]:
        """Stream ``trajectory``; ``history`` is stepped over without being held."""
        doc = JsonStream(stream)
        info: dict[str, Any] = {}
        steps = 0
        yield SessionStart()
        for key in doc.members():
            if key == "info":
                value = doc.value()
                info = value if isinstance(value, dict) else {}
            elif key == "trajectory" and doc.peek() == "[":
                for entry in doc.items():
                    if isinstance(entry, dict):
                        event = self._step(steps, entry)
                        if event is not None:
                            yield event
                    steps += 1
            else:
                doc.skip()
        doc.end()
        name = info.get("instance_id")
        yield self._end(steps, name if isinstance(name, str) else _stem(label), info)

    @staticmethod
    def _step(step: int, entry: dict[str, Any]) -> Event | None:
        action = as_str(entry.get("action"))
        output = as_str(entry.get("observation"))
        program = _program(action)
        text = output.strip()
        if text.startswith(_EDIT_LINT):
            return Rejected(step, first_line(action), "edit linter: syntax errors")
        if program in _SPECIAL:
            if program in _SPECIAL_SEARCH and text.startswith("No matches found"):
                return Command(step, action.strip(), 1, "")
            if text.startswith(("Usage:", "No file open", "Error: ", f"{program}: ")):
                return Rejected(step, first_line(action), first_line(text))
            return None
        if program in _PROBES and (not text or text.startswith(_NO_OUTPUT)):
            return Command(step, action.strip(), 1, "")
        code = shell_failed(output)
        if code is None:
            return None
        return Command(step, action.strip(), code, output)

    @staticmethod
    def _end(steps: int, name: str, info: dict[str, Any]) -> SessionEnd:
        status = info.get("exit_status")
        if not isinstance(status, str) or not status:
            return SessionEnd(steps, "unknown", name)
        if status.startswith("submitted"):
            return SessionEnd(steps, "submitted", name)
        if status in {"exit_cost", "exit_format"}:
            limit = "cost" if status == "exit_cost" else "format-error"
            error = ErrorText(None, "agent", status, f"{limit} limit", limit=limit)
            return SessionEnd(steps, "limit", name, error)
        if status == "exit_context":
            error = ErrorText(None, "provider", "ContextWindowExceededError",
                              "the conversation exceeds the model's context window")
            return SessionEnd(steps, "provider_error", name, error)
        exception = info.get("exception") or info.get("exception_str") or status
        traceback = info.get("traceback")
        error = session_end_error(status, str(exception),
                                  traceback if isinstance(traceback, str) else None)
        return SessionEnd(steps, "provider_error" if error.source == "provider" else "unknown",
                          name, error)
