"""Aider chat histories (``.aider.chat.history.md``): Markdown appended as the chat goes.

Rules (about the format and the tool):

- Detection: text with ``# aider chat started at`` lines, or user inputs (``#### ``) beside
  aider's own output (``> `` lines such as ``Applied edit to``, ``Added ... to the chat``,
  ``Tokens:``).
- ``# aider chat started at YYYY-MM-DD HH:MM:SS`` opens a session, named by that time; text
  before the first one (or a file with none) is one session named after the file, unless it
  is blank (aider writes a blank line before each heading, so a new file starts with one).
- Time: the heading's time is the time of every step of its session (aider logs no other). It
  is the writer's local time without a zone, and is read as UTC (``_text``'s rules): it may be
  off by the writer's UTC offset, but is the same on every machine that reads the file, and
  so are the event ids that hold it. A session before any heading has no time.
- A step is one user input (``#### ...``), numbered from 0 in the session; what aider prints
  after it belongs to that step. Aider writes an input of several lines as one ``#### `` line
  each, with no blank line between them (and a blank line before every input): a ``#### ``
  line right after another continues the same input. ``#### <blank>`` is an empty input: a
  step, but nothing is sent to the model. Aider records no exit status (older aider's
  ``Command ... exited with status N`` aside, below): a number in the output (a pre-commit
  hook's ``- exit code: N``) is output, never read as one.
- ``/run CMD``, its alias ``!CMD`` and ``/test CMD`` run a shell command: it failed when its
  output shows what a shell shows for a failure (a traceback, ``command not found``, a test
  summary with failures, compiler errors); ``/test`` is a test run. Older aider logged the
  command's output as ``> `` lines; newer aider (``run_cmd``) prints it to the terminal only
  and logs ``Added N lines of output to the chat.``, which ``/test`` (also ``/test`` alone,
  running the configured test command) does only on a non-zero exit: a failed test run.
- ``Attempt to fix test errors?`` follows a failed run of the configured test command
  (``--auto-test`` after the step's edits): a failed test run of that step, its output the
  ``> `` lines before it.
- Aider's automatic lint (``# Fix any errors below, if possible.`` then ``## Running: CMD``) is
  shown only when the linter found errors in the files aider just edited and committed: a
  static-analysis failure of that step. Older aider logged that request to the model as an
  input (``#### # Fix any errors below, if possible.``, the lint's output as the input's
  further lines): a static-analysis failure of that input's step.
- ``The LLM did not conform to the edit format.`` (then ``# N SEARCH/REPLACE block failed to
  match!``): the edit was refused and not applied, a rejected action of that step.
- The person's answers and interrupts (aider's own strings): a ``Run shell command?`` /
  ``Run shell commands?`` approval answered ``n``, ``d`` (don't ask again) or ``s`` (skip
  all), which ``--yes-always`` also logs, is a cancelled action, the command the line before
  it names; ``Skipping edits to PATH`` (logged when the person declines ``Create new file?``
  or an edit to a file not in the chat) is a cancelled edit, ``... that matches gitignore
  spec`` (aider's own rule) a rejected one; ``^C again to exit`` / ``^C KeyboardInterrupt``
  while the step waits for the model's reply, or while a ``/run`` whose output shows no
  failure yet runs, is a cancelled request (one per step; at the prompt it is nothing).
  None of them is a failure.
- Older aider logged ``Command 'CMD' exited with status N`` for a shell command it ran (a
  ``/run``, or the model's suggestion the person approved, ``Running CMD``): the one exit
  status aider ever recorded, read as that command's status.
- Aider's errors about the person's files, outside a command's output: ``PATH: file not
  found error``, ``Error: Read-only file PATH does not exist. Skipping.``, ``File not found:
  PATH`` are a missing file (``FileNotFoundError``); ``Unable to write file PATH: ERR`` and
  ``PATH: unable to read: ERR`` are the OS error ERR names (a read-only file system, a
  permission).
- ``Model X has hit a token limit!`` is the provider refusing a request over the model's
  context window.
- A provider error is a ``> `` line naming a litellm / provider exception
  (``litellm.RateLimitError: ...``, ``Unexpected error: litellm.APIConnectionError: ...``,
  ``BadRequestError: litellm.BadRequestError: ...``); the lines that repeat it (the raw body,
  ``Retrying in N seconds...``) count as repeats of that one failure. Another
  ``Unexpected error:`` is aider's own failure.
- How a session ended (aider writes no end record): on the last thing after the last prompt.
  A reply of the model (text that is not aider's ``> `` output) is the agent's answer
  (``submitted``); a provider error that no reply followed ended it (``provider_error``); a
  prompt with no reply after it is ``unknown``. Aider's own commands (``/exit``, ``/add``,
  ``/run``, any ``#### /...`` or ``#### !...``) are not prompts and change nothing; the text
  after a command that does not ask the model (all but ``/ask``, ``/code``, ``/architect``,
  ``/context``, ``/help``, ``/lint``, and ``/test`` once its tests failed) is the command's
  own output (older aider quoted only its first line) or the person's answer to aider's
  question, never a reply of the model. Aider's ``Tokens: ... N received`` line counts what
  the model sent back: with N above 0 a reply came, whatever asked for it (a ``/run`` whose
  output the person added to the chat); with 0 none did. A refused edit goes back to the
  model: the session waits for a reply again.
- Cost: the ``Tokens:`` line ends ``Cost: $X message, $Y session.`` (older aider: ``$X
  request``), ``$Y`` what the aider process spent so far: the last one of a session is its
  ``recorded_usd`` (``$0.00``, a model aider cannot price, is none). Aider rounds it (to two
  decimals from a cent), and a streamed reply's cache costs may be left out, as the line
  then says. A total, never split over the steps: no failure is charged it.
"""

from __future__ import annotations

import re
from collections import deque
from pathlib import PurePath
from typing import TYPE_CHECKING, Final

from failcode._lazy_re import lazy
from failcode.triage._events import (
    Command,
    ErrorText,
    Event,
    Rejected,
    SessionEnd,
    SessionStart,
    cancelled,
)
from failcode.triage.readers._lines import lines
from failcode.triage.readers._swe_agent import shell_failed
from failcode.triage.readers._text import iso_time, split_exception

if TYPE_CHECKING:
    from collections.abc import Generator, Iterator
    from typing import BinaryIO

__all__ = ["AiderReader"]

_START: Final = lazy(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")
_MARKERS: Final = (b"> Applied edit to", b"to the chat", b"> Tokens:", b"> Aider v",
                   b"> Repo-map:", b"> Commit ")
_PROVIDER_LINE: Final = lazy(
    r"^(?:Unexpected error: )?(?:[A-Za-z]\w*Error: )?(?P<type>litellm(?:\.\w+)+"
    r"|(?:openai|anthropic)\.\w+(?:\.\w+)*)(?::\s?(?P<msg>.*))?$")
_PROVIDER_NAMES: Final = ("litellm.", "openai.", "anthropic.")  # a cheap gate before the match
_OTHER_ERROR: Final = lazy(r"^Unexpected error: (?P<rest>.+)$")
_RETRY: Final = lazy(r"^Retrying in [\d.]+ seconds?\.\.\.")
_RUN: Final = lazy(r"^#### (?:/(?P<verb>run|test)(?:\s+(?P<cmd>.+?))?|!(?P<bang>.+?))\s*$")
_ADDED_OUTPUT: Final = lazy(r"^Added \d+ lines? of output to the chat\.")
_FIX_TESTS: Final = "Attempt to fix test errors?"
_EDIT_FORMAT: Final = "The LLM did not conform to the edit format."
_TOKEN_LIMIT: Final = lazy(r"^Model (?P<model>\S+) has hit a token limit!")
_TEST_CMD: Final = "aider --test-cmd"  # the test command configured in aider
_RECENT: Final = 2000
_LINT_HEAD: Final = "# Fix any errors below, if possible."
_LINT_RUN: Final = lazy(r"^## Running: (?P<cmd>.+?)\s*$")
_LINT_END: Final = ("## See relevant line", "Attempt to fix lint errors?")
_BLANK_INPUT: Final = "<blank>"
_TOKENS: Final = lazy(r"^Tokens: .*?(?P<received>[\d.,]+k?) received")
_SESSION_COST: Final = lazy(
    r"\bCost: \$[\d.]+ (?:message|request), \$(?P<usd>\d+(?:\.\d+)?) session\b")
"""The end of aider's ``Tokens:`` line: what the message cost, then the session so far."""
_DECLINED_RUN: Final = lazy(
    r"^Run shell commands?\? .*?(?:\]:?|\))\s*(?P<answer>[A-Za-z]?)\w*\s*$")
"""Aider's approval of the shell commands the model suggested, with the answer it logs (``n``,
``d`` don't ask again and ``s`` skip all decline; ``--yes-always`` logs ``n`` itself)."""
_SKIPPED_EDIT: Final = lazy(
    r"^Skipping edits to (?P<path>.+?)(?P<rule> that matches \w+ spec)?\.?$")
_EXITED: Final = lazy(r"^Command '(?P<cmd>.+)' exited with status (?P<code>-?\d+)$")
"""Older aider's report of a shell command it ran (``/run``, an approved suggestion)."""
_INTERRUPT: Final = ("^C again to exit", "^C KeyboardInterrupt")
_INTERACTIVE: Final = (*_INTERRUPT, "Command '", "Run shell command", "Skipping edits to ")
"""How the lines :meth:`AiderReader._interactive` reads without a file error start."""
_FILE_ERRORS: Final = lazy(
    r"^(?:(?P<missing>.+): file not found error"
    r"|Error: Read-only file (?P<read_only>.+) does not exist\. Skipping\."
    r"|File not found: (?P<named>.+)"
    r"|Unable to write file (?P<unwritable>.+?)(?: after \d+ attempts)?: (?P<write_error>.+)"
    r"|(?P<unreadable>.+): unable to read: (?P<read_error>.+))$")
"""Aider's own messages about the person's files (``InputOutput.read_text``/``write_text``,
``Coder`` for ``--read`` files, ``/add``): a file that does not exist, one it cannot read or
write (a read-only file system, a permission)."""
_MODEL_COMMANDS: Final = lazy(r"^/(?:ask|code|architect|context|help|lint)\b")
"""The commands that send something to the model (``/test`` does when its tests fail)."""


class _Session:
    def __init__(self, name: str, stamp: float | None) -> None:
        self.name = name
        self.stamp = stamp
        self.step = -1
        self.command: tuple[str, str] | None = None
        self.output: list[str] = []
        self.lint: str | None = None
        self.in_lint = False
        self.in_input = False
        """The last line was a line of an input: a ``#### `` line next continues it."""
        self.asks_model = False
        """The step's input goes to the model: text after it may be the model's reply."""
        self.provider: ErrorText | None = None
        self.test_failed = False
        self.interrupted = False
        """The person interrupted the step (``^C``): one cancelled outcome per step."""
        self.end = "unknown"
        self.ended_by: ErrorText | None = None
        self.total: float | None = None
        """The last ``Tokens:`` line's session cost (aider's total so far; 0: none)."""
        self.recent: deque[str] = deque(maxlen=_RECENT)
        """aider's own output lines since the last other line (a test run's output)."""

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
            if (session is not None and session.provider is None
                    and not line.startswith(("#", ">"))):
                # most lines: the model's reply or a command's output; what _line does with
                # a plain line, without a generator per line (its rules are _line's)
                session.in_input = False
                body = line.rstrip()
                if body:
                    session.recent.clear()
                    if session.asks_model:
                        session.end, session.ended_by = "submitted", None
                if session.command is not None or session.lint is not None:
                    session.output.append(body)
                continue
            start = _START.match(line) if line.startswith("# aider chat") else None
            if start is None and session is None and not line.strip():
                continue  # aider starts each session with a blank line: no session before it
            if start is not None or session is None:
                if session is not None:
                    yield from self._close_step(session)
                    yield SessionEnd(session.step + 1, session.end, session.name,
                                     session.ended_by, recorded_usd=session.total)
                if start is not None:
                    when = start.group(1)
                    session = _Session(when, iso_time(when))
                else:
                    session = _Session(PurePath(label).stem, None)
                yield SessionStart(session.name)
                if start is not None:
                    continue
            yield from self._line(session, line)
        if session is not None:
            yield from self._close_step(session)
            yield SessionEnd(session.step + 1, session.end, session.name, session.ended_by,
                             recorded_usd=session.total)

    def _line(self, session: _Session, line: str) -> Iterator[Event]:
        if line.startswith("#### "):
            if session.in_input:
                yield from self._input_goes_on(session, line[5:].strip())
                return
            yield from self._input(session, line)
            return
        session.in_input = False
        quoted = line.startswith(">")
        body = line[1:].strip() if quoted else line.rstrip()
        if not quoted and body:
            session.recent.clear()
        if quoted:
            tokens = _TOKENS.match(body) if body.startswith("Tokens:") else None
            cost = _SESSION_COST.search(body) if tokens is not None else None
            if cost is not None:
                session.total = float(cost.group("usd")) or None
            # aider counts what the model sent back: a reply came, whatever asked for it
            if tokens is not None and session.provider is None and tokens.group(
                    "received").strip("0.,k"):
                session.end, session.ended_by = "submitted", None
            if body == _LINT_HEAD:
                yield from self._close_command(session)
                session.in_lint = True
                return
            lint = _LINT_RUN.match(body) if body.startswith("## Running:") else None
            if lint is not None and session.in_lint:
                session.lint = lint.group("cmd")
                session.output = []
                return
            if session.in_lint and session.lint and body.startswith(_LINT_END):
                yield from self._close_command(session)
                return
            # each helper only for a line it may consume (their own first tests, checked here
            # without a generator per line)
            if body.startswith(_INTERACTIVE) or (
                    session.command is None and session.lint is None
                    and ("file" in body or "unable to read" in body)):
                done = yield from self._interactive(session, body)
                if done:
                    return
            if body.startswith((_FIX_TESTS, _EDIT_FORMAT)) or (
                    session.command is not None and session.command[0] == "test"):
                done = yield from self._test_or_edit(session, body, line)
                if done:
                    return
            else:
                session.recent.append(line[1:].rstrip())
            if session.provider is not None or body.startswith("Model ") or any(
                    name in body for name in _PROVIDER_NAMES):
                done = yield from self._provider(session, body)
                if done:
                    return
            other = _OTHER_ERROR.match(body) if body.startswith("Unexpected") else None
            if other is not None:
                yield from self._flush_provider(session)
                split = split_exception(other.group("rest"))
                # aider names no exception type here: "error", never an invented one
                type_name, message = split or ("error", other.group("rest"))
                yield ErrorText(session.at(), "agent", type_name, message,
                                evidence=body[:200], timestamp=session.stamp)
                return
        if session.provider is not None and body and not body.startswith(("{", "}", '"')):
            yield from self._flush_provider(session)
        if not quoted and body and session.provider is None and session.asks_model:
            session.end, session.ended_by = "submitted", None  # the model's reply
        if session.command is not None or session.lint is not None:
            session.output.append(body)

    def _input(self, session: _Session, line: str) -> Iterator[Event]:
        """The first line of an input: a new step."""
        yield from self._close_step(session)
        session.step += 1
        session.in_input = True
        session.interrupted = False
        session.recent.clear()
        text = line[5:].strip()
        if text == _LINT_HEAD:  # older aider's lint request, logged as the input it sent
            session.in_lint = True
        is_command = text.startswith(("/", "!"))
        session.asks_model = text != _BLANK_INPUT and (
            not is_command or _MODEL_COMMANDS.match(text) is not None)
        if text != _BLANK_INPUT and not is_command:
            session.end, session.ended_by = "unknown", None  # a prompt, not answered yet
        run = _RUN.match(line)
        if run is not None and run.group("bang"):
            session.command = ("run", run.group("bang"))
        elif run is not None and (run.group("cmd") or run.group("verb") == "test"):
            session.command = (run.group("verb"), run.group("cmd") or _TEST_CMD)

    def _input_goes_on(self, session: _Session, text: str) -> Iterator[Event]:
        """A further line of an input: only older aider's lint request reads them."""
        if not session.in_lint:
            return
        lint = _LINT_RUN.match(text) if text.startswith("## Running:") else None
        if lint is not None:
            session.lint = lint.group("cmd")
            session.output = []
        elif session.lint and text.startswith(_LINT_END):
            yield from self._close_command(session)
        elif session.lint:
            session.output.append(text)

    def _provider(self, session: _Session, body: str) -> Generator[Event, None, bool]:
        """A provider error (or a repeat of one) in aider's output; True when consumed."""
        if body.startswith("Model ") and _TOKEN_LIMIT.match(body) is not None:
            yield from self._flush_provider(session)
            error = ErrorText(session.at(), "provider", "ContextWindowExceededError", body,
                              evidence=body[:200], timestamp=session.stamp,
                              context_window=True)
            session.end, session.ended_by = "provider_error", error
            yield error
            return True
        provider = _PROVIDER_LINE.match(body) if any(
            name in body for name in _PROVIDER_NAMES) else None
        if provider is not None:
            if session.provider is not None:
                session.provider = _again(session.provider)
            else:
                # the model is asked after the person's command ran: the command is over
                yield from self._close_command(session)
                session.provider = ErrorText(
                    session.at(), "provider", provider.group("type"),
                    (provider.group("msg") or "").strip(), evidence=body[:200],
                    timestamp=session.stamp)
            return True
        if session.provider is not None and _RETRY.match(body):
            session.provider = _again(session.provider)
            return True
        return False

    @staticmethod
    def _interactive(session: _Session, body: str) -> Generator[Event, None, bool]:
        """The person's interrupt or declined approval, or aider's error about the person's
        file; True when consumed."""
        if body.startswith(_INTERRUPT):
            pending = session.command is not None and shell_failed(
                "\n".join(session.output)) is None
            if session.step >= 0 and not session.interrupted and (pending or (
                    session.asks_model and session.end == "unknown")):
                what = session.command[1] if session.command else "the request to the model"
                session.command, session.output, session.test_failed = None, [], False
                session.interrupted = True
                yield cancelled(session.step, what, "interrupted by the person (^C)",
                                session.stamp)
            return True
        exited = _EXITED.match(body) if body.startswith("Command '") else None
        if exited is not None:  # the one exit status aider ever logged
            command = exited.group("cmd")
            output = ""
            if session.command is not None and session.command[1] == command:  # a /run
                output = "\n".join(session.output)
                session.command, session.output, session.test_failed = None, [], False
            yield Command(session.at(), command, int(exited.group("code")), output,
                          session.stamp)
            return True
        declined = _DECLINED_RUN.match(body) if body.startswith("Run shell command") else None
        if declined is not None:
            if declined.group("answer").lower() in {"n", "d", "s"}:
                subject = session.recent[-1].strip() if session.recent else ""
                yield cancelled(session.at(), subject or "shell command",
                                "declined when aider asked to run it", session.stamp)
            return True
        skipped = _SKIPPED_EDIT.match(body) if body.startswith("Skipping edits to ") else None
        if skipped is not None:
            action = f"edit {skipped.group('path')}"
            if skipped.group("rule"):  # aider's own rule (gitignore, aiderignore) refused it
                yield Rejected(session.at(), action, body, session.stamp)
            else:  # declined when aider asked to create the file or edit one not in the chat
                yield cancelled(session.at(), action, "declined when aider asked to edit it",
                                session.stamp)
            return True
        found = _FILE_ERRORS.match(body) if session.command is None and session.lint is None \
            and ("file" in body or "unable to read" in body) else None
        if found is None:
            return False
        path = found.group("missing") or found.group("read_only") or found.group("named")
        if path is not None:
            type_name, message = "FileNotFoundError", f"No such file or directory: '{path}'"
        else:
            error = found.group("write_error") or found.group("read_error") or ""
            split = split_exception(error)
            type_name, message = split or (
                "PermissionError" if "Permission denied" in error else "OSError", error)
        yield ErrorText(session.at(), "tool", type_name, message, evidence=body[:200],
                        timestamp=session.stamp)
        return True

    @staticmethod
    def _test_or_edit(session: _Session, body: str, line: str) -> Generator[Event, None, bool]:
        """A test run's verdict or a refused edit in aider's output; True when consumed."""
        if session.command is not None and session.command[0] == "test" and (
                _ADDED_OUTPUT.match(body) or body.startswith(_FIX_TESTS)):
            session.test_failed = True  # /test adds its output only on a non-zero exit
            session.asks_model = True  # and sends it to the model
            return True
        if body.startswith(_FIX_TESTS):  # --auto-test after the step's edits failed
            yield Command(session.at(), _TEST_CMD, 1, "\n".join(session.recent),
                          session.stamp, purpose="test")
            session.recent.clear()
            return True
        session.recent.append(line[1:].rstrip())
        if body.startswith(_EDIT_FORMAT):
            yield Rejected(session.at(), "edit", "the LLM did not conform to the edit format",
                           session.stamp)
            session.end, session.ended_by = "unknown", None  # the refusal goes back to the model
            return True
        return False

    @staticmethod
    def _flush_provider(session: _Session) -> Iterator[Event]:
        if session.provider is not None:
            yield session.provider
            session.end, session.ended_by = "provider_error", session.provider
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
            if code is None and session.test_failed:
                code = 1
            if code is not None:
                yield Command(session.at(), command, code, output, session.stamp,
                              purpose="test" if verb == "test" else None)
        session.command, session.lint, session.in_lint, session.output = None, None, False, []
        session.test_failed = False


def _again(error: ErrorText) -> ErrorText:
    return ErrorText(error.step, error.source, error.type_name, error.message,
                     error.traceback, error.evidence, error.timestamp, error.repeats + 1)
