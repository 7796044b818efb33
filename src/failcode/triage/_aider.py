"""Aider chat histories (``.aider.chat.history.md``): Markdown appended as the chat goes.

Rules (about the format and the tool):

- Detection: text with ``# aider chat started at`` lines, or user inputs (``#### ``) beside
  aider's own output (``> `` lines such as ``Applied edit to``, ``Added ... to the chat``,
  ``Tokens:``).
- ``# aider chat started at YYYY-MM-DD HH:MM:SS`` opens a session, named by that time; text
  before the first one (or a file with none) is one session named after the file.
- A step is one user input (``#### ...``), numbered from 0 in the session; what aider prints
  after it belongs to that step. Aider records no exit status.
- ``/run CMD`` and ``/test CMD`` run a shell command: it failed when its output shows what a
  shell shows for a failure (a traceback, ``command not found``, a test summary with
  failures, compiler errors); ``/test`` is a test run.
- Aider's automatic lint (``# Fix any errors below, if possible.`` then ``## Running: CMD``) is
  shown only when the linter found errors in the files aider just edited and committed: a
  static-analysis failure of that step.
- A provider error is a ``> `` line naming a litellm / provider exception
  (``litellm.RateLimitError: ...``, ``Unexpected error: litellm.APIConnectionError: ...``,
  ``BadRequestError: litellm.BadRequestError: ...``); the lines that repeat it (the raw body,
  ``Retrying in N seconds...``) count as repeats of that one failure. Another
  ``Unexpected error:`` is aider's own failure.
- Aider does not record how a session ended.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import PurePath
from typing import TYPE_CHECKING, Final

from failcode.triage._events import (
    Command,
    ErrorText,
    Event,
    SessionEnd,
    SessionStart,
)
from failcode.triage._lines import lines
from failcode.triage._swe_agent import shell_failed
from failcode.triage._text import split_exception

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO

__all__ = ["AiderReader"]

_START: Final = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")
_MARKERS: Final = (b"> Applied edit to", b"to the chat", b"> Tokens:", b"> Aider v",
                   b"> Repo-map:", b"> Commit ")
_PROVIDER_LINE: Final = re.compile(
    r"^(?:Unexpected error: )?(?:[A-Za-z]\w*Error: )?(?P<type>litellm(?:\.\w+)+"
    r"|(?:openai|anthropic)\.\w+(?:\.\w+)*)(?::\s?(?P<msg>.*))?$")
_OTHER_ERROR: Final = re.compile(r"^Unexpected error: (?P<rest>.+)$")
_RETRY: Final = re.compile(r"^Retrying in [\d.]+ seconds?\.\.\.")
_RUN: Final = re.compile(r"^#### /(?P<verb>run|test)\s+(?P<cmd>.+?)\s*$")
_LINT_HEAD: Final = "# Fix any errors below, if possible."
_LINT_RUN: Final = re.compile(r"^## Running: (?P<cmd>.+?)\s*$")
_LINT_END: Final = ("## See relevant line", "Attempt to fix lint errors?")


class _Session:
    def __init__(self, name: str, stamp: float | None) -> None:
        self.name = name
        self.stamp = stamp
        self.step = -1
        self.command: tuple[str, str] | None = None
        self.output: list[str] = []
        self.lint: str | None = None
        self.in_lint = False
        self.provider: ErrorText | None = None

    def at(self) -> int | None:
        return self.step if self.step >= 0 else None


class AiderReader:
    """Reader for aider chat histories."""

    name = "aider"

    def sniff(self, head: bytes) -> bool:
        """``# aider chat started at``, or ``####`` inputs beside aider's ``>`` output."""
        if b"\x00" in head:
            return False
        if re.search(rb"(?m)^# aider chat started at ", head):
            return True
        return bool(re.search(rb"(?m)^#### ", head)) and sum(
            marker in head for marker in _MARKERS) >= 2

    def read(self, stream: BinaryIO, label: str) -> Iterator[Event]:
        """One pass over the lines."""
        session: _Session | None = None
        for _, line in lines(stream, strict=False):
            start = _START.match(line)
            if start is not None or session is None:
                if session is not None:
                    yield from self._close_step(session)
                    yield SessionEnd(session.step + 1, "unknown", session.name)
                if start is not None:
                    when = start.group(1)
                    session = _Session(when, datetime.fromisoformat(when).timestamp())
                else:
                    session = _Session(PurePath(label).stem, None)
                yield SessionStart(session.name)
                if start is not None:
                    continue
            yield from self._line(session, line)
        if session is not None:
            yield from self._close_step(session)
            yield SessionEnd(session.step + 1, "unknown", session.name)

    def _line(self, session: _Session, line: str) -> Iterator[Event]:
        if line.startswith("#### "):
            yield from self._close_step(session)
            session.step += 1
            run = _RUN.match(line)
            if run is not None:
                session.command = (run.group("verb"), run.group("cmd"))
            return
        quoted = line.startswith(">")
        body = line[1:].strip() if quoted else line.rstrip()
        if quoted:
            if body == _LINT_HEAD:
                yield from self._close_command(session)
                session.in_lint = True
                return
            lint = _LINT_RUN.match(body)
            if lint is not None and session.in_lint:
                session.lint = lint.group("cmd")
                session.output = []
                return
            if session.in_lint and session.lint and body.startswith(_LINT_END):
                yield from self._close_command(session)
                return
            provider = _PROVIDER_LINE.match(body)
            if provider is not None:
                if session.provider is not None:
                    session.provider = _again(session.provider)
                else:
                    session.provider = ErrorText(
                        session.at(), "provider", provider.group("type"),
                        (provider.group("msg") or "").strip(), evidence=body[:200],
                        timestamp=session.stamp)
                return
            if _RETRY.match(body) and session.provider is not None:
                session.provider = _again(session.provider)
                return
            other = _OTHER_ERROR.match(body)
            if other is not None:
                yield from self._flush_provider(session)
                split = split_exception(other.group("rest"))
                type_name, message = split or ("AiderError", other.group("rest"))
                yield ErrorText(session.at(), "agent", type_name, message,
                                evidence=body[:200], timestamp=session.stamp)
                return
        if session.provider is not None and body and not body.startswith(("{", "}", '"')):
            yield from self._flush_provider(session)
        if session.command is not None or session.lint is not None:
            session.output.append(body)

    @staticmethod
    def _flush_provider(session: _Session) -> Iterator[Event]:
        if session.provider is not None:
            yield session.provider
            session.provider = None

    def _close_step(self, session: _Session) -> Iterator[Event]:
        yield from self._flush_provider(session)
        yield from self._close_command(session)

    @staticmethod
    def _close_command(session: _Session) -> Iterator[Event]:
        output = "\n".join(session.output)
        if session.lint is not None:
            yield Command(session.at(), session.lint, 1, output, session.stamp,
                          purpose="static_analysis")
        elif session.command is not None:
            verb, command = session.command
            code = shell_failed(output)
            if code is not None:
                yield Command(session.at(), command, code, output, session.stamp,
                              purpose="test" if verb == "test" else None)
        session.command, session.lint, session.in_lint, session.output = None, None, False, []


def _again(error: ErrorText) -> ErrorText:
    return ErrorText(error.step, error.source, error.type_name, error.message,
                     error.traceback, error.evidence, error.timestamp, error.repeats + 1)
