"""SWE-agent trajectories (``*.traj``): one JSON object with ``trajectory``, ``history``, ``info``.

Rules (about the format and the tool; SWE-agent 0.x writes ``environment``, ``trajectory``,
``history``, ``info``; 1.x adds ``replay_config`` and per-step ``execution_time``, ``state``
as an object, ``query``, ``extra_info``; the retry agent of 1.x writes ``attempts``):

- Detection: a JSON object whose first 64 KiB hold a ``trajectory`` key and entries with
  ``action`` and ``observation``.
- One file is one session, named by ``info.instance_id`` when given, else the file's stem.
  Each entry of ``trajectory`` is one step, numbered from 0. A retry agent's file (1.x,
  ``attempts``: one trajectory per attempt, then a copy of the chosen one) is one session per
  attempt, named ``<stem>/attempt_<i>`` as SWE-agent names their folders; the copy is not
  read again.
- SWE-agent records no exit status. A step's command failed when its observation shows what
  a shell shows for a failure (``shell_failed``): a Python traceback, ``command not found``
  (exit 127), a program's ``No such file (or directory)`` / ``cannot open``, a test run's
  failures (pytest's summary, ``go test``'s ``FAIL``, node's ``# fail N``), compiler ``error:``
  lines, a linker's undefined reference, pip's "No matching distribution", curl's ``curl:
  (N)``; the reader then passes the status the tool exits with (1; 127 for a missing program,
  N for curl, 2 for ``diff`` in trouble) with the observation as output. A number in the
  observation (``exit code 3``) is output, never read as a status. SWE-agent records no
  time of a step either: the store's event ids of its failures hold none (``_record``).
- A command stopped at SWE-agent's time limit is a timeout: 1.x replaces the observation with
  "The command '...' was cancelled because it took more than N seconds", 0.x appends
  ``EXECUTION TIMED OUT``. 0.x's "COMMAND FAILED TO EXECUTE", "BROKEN PIPE ERROR" (then
  "RESTARTING PROCESS") and "EXECUTION FAILED OR COMMAND MALFORMED" are the runtime failing
  to run the command: the harness's failure.
- A probe (``grep``, ``find``, ``rg``, ``ls``, ``test``, ``which``) whose observation is empty
  or SWE-agent's "did not produce any output" found nothing; so did ``search_dir``,
  ``search_file`` and ``find_file`` answering "No matches found".
- An edit SWE-agent's tools refused is fed back to the model and not applied: a rejected
  action. The edit linter's "Your proposed edit has introduced new syntax error(s)"; the
  replace editor's "Your edit was not applied", "Your search and replace strings are the
  same", "Search text must not be empty"; ``str_replace_editor``'s validation ("No
  replacement was performed", "The path ... does not exist", "... is not an absolute path",
  "File already exists at", "Invalid `view_range`", "Invalid `insert_line`", "Parameter `x`
  is required", "Unrecognized command", "No edit history found"); and a usage message of
  SWE-agent's own commands (``Usage: ...``, ``No file open(ed)``, ``File ... not found``).
- ``info.exit_status`` says how the session ended; ``submitted (exit_X)`` is an automatic
  submission after ``exit_X`` ended the run, so it ended as ``exit_X`` says:
  ``submitted`` is submitted; ``exit_cost`` the cost limit, ``exit_format`` the format-error
  limit, ``exit_total_execution_time`` the time limit; ``exit_context`` the model's context
  window; ``exit_api`` the provider failing after retries; ``exit_command_timeout`` repeated
  command timeouts; ``exit_environment_error`` and ``early_exit`` the runtime (the harness);
  ``exit_error`` a failure of the agent, or of the provider when its text says so, described by
  ``info.exception`` / ``info.traceback`` or the last step's "Exit due to ..." thought;
  ``exit_command`` (the model typed ``exit``), ``exit_forfeit`` and ``skipped`` end without a
  failure. A value the reader does not know ends the session as ``unknown``, with a failure
  only when ``info`` carries an exception or traceback; no value (a run still going or killed)
  is ``unknown``.
- Cost: SWE-agent records no turn's tokens or price, only the session's totals
  (``info.model_stats``: ``tokens_sent``, ``tokens_received``, ``instance_cost``,
  ``api_calls``), which cannot be split over its turns: the session's and its failures'
  tokens and dollars are unknown (never 0, never a total charged to one failure).
  ``instance_cost`` (an attempt's own ``info`` in a retry agent's file) is the session's
  ``recorded_usd``: 0, nothing priced, is none; ``total_cost`` is the whole run's, of many
  instances, and is not read.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from failcode._lazy_re import lazy
from failcode.classification._command import _CURL_SAID
from failcode.classification._parsers import RULES
from failcode.triage._events import (
    Command,
    ErrorText,
    Event,
    Rejected,
    SessionEnd,
    SessionStart,
)
from failcode.triage.readers._jsonstream import JsonStream
from failcode.triage.readers._mini_swe_agent import _stem, session_end_error
from failcode.triage.readers._text import (
    TRACEBACK_START,
    as_dict,
    as_str,
    first_line,
    recorded_total,
    split_exception,
)

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
# an edit the tool refused and fed back (not applied): SWE-agent 0.x and 1.x tools
_EDIT_REFUSED: Final = ("Your proposed edit has introduced new syntax error",
                        "Your edit was not applied", "Your search and replace strings are the same",
                        "Search text must not be empty")
_TOOL_REFUSAL: Final = lazy(
    r"^(?:Usage:|No file open|Error: |No replacement was performed|The path \S.* does not exist"
    r"|The path \S.* is not an absolute path|File already exists at|Invalid `\w+`"
    r"|Parameter `\w+` is required|Unrecognized command|No edit history found"
    r"|The parent directory \S.* does not exist|(?:File|Directory) \S.* not found)")
_CANCELLED: Final = lazy(r"^The command '(?P<cmd>.*)' was cancelled because it took more "
                               r"than [\d.]+ seconds", re.DOTALL)
_TIMED_OUT_V0: Final = "EXECUTION TIMED OUT"
_RUNTIME_FAILED: Final = ("COMMAND FAILED TO EXECUTE", "BROKEN PIPE ERROR",
                          "EXECUTION FAILED OR COMMAND MALFORMED")
_NOT_FOUND: Final = lazy(r"(?m)^(?:bash: (?:line \d+: )?)?(\S+): command not found$")
_SHELL_FAILURE: Final = lazy(
    r"(?m)^(?:\S+: )?(?:cannot (?:open|access|stat)|can't open) .{0,300}"
    r"|^\S+: .{0,300}(?:No such file(?: or directory)?|Permission denied|not a directory)\s*$"
    r"|^\S+: (?:-c: )?(?:line )?\d+: [Ss]yntax error\b|^zsh: parse error\b"  # the shell's own
    # a count of failures or errors, never a count of none (cargo's "0 failed", "0 errors")
    r"|^(?:=+ )?.{0,80}\b[1-9]\d* (?:failed|errors?)\b.{0,80}(?: in [\d.]+s)?(?: =+)?$"
    r"|^\S+?:\d+(?::\d+)?: (?:fatal )?error: "
    r"|^(?:error|fatal)(?:\[E\d+\])?: ")


def _rules(family: str, gate: str) -> tuple[re.Pattern[str], ...]:
    """The classification layer's patterns for a tool's message (those read when a status is
    known), so that a line shape has one copy; picked by the tool family and gate of their
    rules in :data:`~failcode.classification._parsers.RULES`."""
    found = tuple(rule.pattern for rule in RULES if rule.family == family and rule.gate == gate)
    if not found:
        msg = f"classification has no rule for {family!r} gated by {gate!r}"
        raise LookupError(msg)
    return found


def _said(gate: str, family: str, status: int) -> tuple[tuple[str, re.Pattern[str], int], ...]:
    """Rows of :data:`_SAID` for each of the classification layer's rules of ``family`` gated
    by ``gate``."""
    return tuple((gate, pattern, status) for pattern in _rules(family, gate))


# GNU ld's "<where>: undefined reference to `sym'" (the classification rule's own words), where
# ld names an object's section (main.c:(.text+0xa)) or a source line (/src/main.c:7), alone or
# after its own "/usr/bin/ld: " prefix
_LD_WHERE: Final = r"(?m)^(?:[^\s:]*ld(?:\.[\w.]+)?: )?[^\s:][^\n:]*:(?:\([^\s()]+\)|\d+): "
_LD_UNDEFINED: Final = lazy(_LD_WHERE + "(?:" + "|".join(
    pattern.pattern for pattern in _rules("ld", "undefined reference to")) + ")")
_COMPARER_TROUBLE: Final = (r"(?:[^\n]+: (?:No such file or directory|Permission denied|Is a "
                             r"directory)|(?:missing|extra) operand\b|(?:unrecognized|invalid) "
                             r"option\b)")
_SAID: Final[tuple[tuple[str, re.Pattern[str], int | None], ...]] = (
    # a missing program, as the shell says it (127): bash's "[/usr/bin/]bash: [line N: ]X:
    # command not found", dash's "sh: 1: X: not found", zsh's and fish's "command not found: X"
    *_said("not found", "shell", 127),
    *_said("command not found: ", "shell", 127),
    # ... and bash running a script file: "<script>: line N: X: command not found"
    (": command not found", lazy(r"(?m)^[^\s:]+: line \d+: [^\s:]+: command not found$"), 127),
    # curl's own "curl: (N) <message>" exits N (its man page's EXIT CODES)
    ("curl: (", _CURL_SAID, None),
    # go test: a package that did not build (the go command exits 2), a test that failed: the
    # testing package's "--- FAIL: TestX (0.00s)" (subtests indented), the go command's
    # "FAIL\t<pkg>\t<seconds>s" and "FAIL\t<pkg> [setup failed]"
    ("FAIL\t", lazy(r"(?m)^FAIL\t[^\s]+ \[build failed\]$"), 2),
    ("--- FAIL: ", lazy(r"(?m)^ *--- FAIL: [^\s]+ \([\d.]+s\)$"), 1),
    ("FAIL\t", lazy(r"(?m)^FAIL\t[^\s]+(?:\t[\d.]+s| \[[a-z ]+ failed\])$"), 1),
    # diff and cmp in trouble (a file missing or unreadable, a bad option; named as they were
    # run) exit 2; differences found (exit 1) are an outcome, not a failure: nothing here
    ("diff: ", lazy(r"(?m)^(?:[^\s:]*/)?diff: " + _COMPARER_TROUBLE), 2),
    ("cmp: ", lazy(r"(?m)^(?:[^\s:]*/)?cmp: " + _COMPARER_TROUBLE), 2),
    # node --test: the TAP reporter's "# fail N" and the spec reporter's "\u2139 fail N" (N > 0),
    # and the spec reporter's "\u2716 failing tests:"
    ("fail", lazy(r"(?m)^(?:# |\u2139 )fail [1-9]\d*$|^\u2716 failing tests:$"), 1),
    # the linker: GNU ld's undefined reference, gcc's "collect2: error: ld returned N exit
    # status", clang's "linker command failed", lld's "error: undefined symbol: X"
    ("undefined reference to", _LD_UNDEFINED, 1),
    ("ld returned", lazy(r"(?m)^collect2: error: ld returned \d+ exit status$"), 1),
    ("linker command failed", lazy(
        r"(?m)^clang(?:\+\+)?(?:-\d+)?: error: linker command failed with exit code \d+"), 1),
    *_said("undefined symbol:", "ld", 1),
    # pip's resolver found no such package (version)
    *_said("satisfies the requirement", "pip", 1),
    *_said("No matching distribution found for", "pip", 1),
    # tsc's "file.ts(1,5): error TS2322: ..."
    *_said("error TS", "ts", 1),
)
"""What a tool says when it fails, each line shape anchored at a line start with the tool's own
prefix: (a substring the text must hold for the pattern to run, the pattern, the status the
tool exits with; None for curl, whose message states it)."""

# info.exit_status -> (ended status, what ended it); "submitted (exit_x)" ends as exit_x
_LIMITS: Final = {"exit_cost": "cost", "exit_format": "format-error",
                  "exit_total_execution_time": "time"}
_NO_FAILURE: Final = frozenset({"exit_command", "exit_forfeit", "skipped"})
_HARNESS: Final = {"exit_environment_error": "the runtime failed (SWE-ReX)",
                   "early_exit": "the runtime failed and was restarted"}
_EXIT_THOUGHT: Final = lazy(r"^Exit due to (?:[\w ]+ error: )?(?P<rest>.*)", re.DOTALL)


def _program(action: str) -> str:
    words = action.strip().split()
    return words[0] if words else ""


def shell_failed(output: str) -> int | None:
    """The exit status a shell command's output implies when it shows a failure, or None.

    Args:
        output: what the command printed (its first 64 KiB are read).

    Returns:
        127 for a missing program (bash's ``bash: line N: X: command not found``, dash's
        ``sh: 1: X: not found``); curl's own status N for ``curl: (N) ...``; 2 for ``go
        test``'s ``FAIL <pkg> [build failed]`` and for ``diff`` or ``cmp`` in trouble; 1 for
        another failure in a tool's own words (``--- FAIL:``, node's ``# fail N``, a linker's
        undefined reference, pip's "No matching distribution", a compiler's ``file:line:
        error:``, a Python traceback, a shell's "No such file or directory"); None when the
        output shows none. ``diff``'s differences are no failure (an outcome, exit 1): None.
        A line that merely mentions ``FAIL`` or ``error``, or counts none (``0 failed``), is
        no failure either.
    """
    head = output[:65536]
    if _NOT_FOUND.search(head):
        return 127
    for gate, pattern, status in _SAID:
        if gate in head and (found := pattern.search(head)) is not None:
            if status is not None:
                return status
            said = int(found.group(1))
            return said if 0 < said < 256 else 1
    if TRACEBACK_START in output or _SHELL_FAILURE.search(head):
        return 1
    return None


def _with_total(end: SessionEnd, info: dict[str, Any]) -> SessionEnd:
    """``end`` with the session's total as ``info.model_stats.instance_cost`` records it."""
    stats = info.get("model_stats")
    total = recorded_total(stats.get("instance_cost")) if isinstance(stats, dict) else None
    return replace(end, recorded_usd=total)


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
        last: dict[str, Any] = {}
        attempts = 0
        started = False
        for key in doc.members():
            if key == "info":
                value = doc.value()
                info = value if isinstance(value, dict) else {}
            elif key == "attempts" and doc.peek() == "[":
                for attempt in doc.items():
                    if isinstance(attempt, dict):
                        yield from self._attempt(attempt, f"{_stem(label)}/attempt_{attempts}")
                        attempts += 1
            elif key == "trajectory" and doc.peek() == "[" and not attempts:
                if not started:
                    started = True
                    yield SessionStart()
                for entry in doc.items():
                    if isinstance(entry, dict):
                        last = entry
                        event = self._step(steps, entry)
                        if event is not None:
                            yield event
                    steps += 1
            else:
                doc.skip()
        doc.end()
        if attempts:
            return
        if not started:
            yield SessionStart()
        name = info.get("instance_id")
        yield _with_total(self._end(steps, name if isinstance(name, str) else _stem(label),
                                    info, last), info)

    def _attempt(self, attempt: dict[str, Any], name: str) -> Iterator[Event]:
        yield SessionStart(name)
        entries = attempt.get("trajectory")
        steps = 0
        last: dict[str, Any] = {}
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, dict):
                last = entry
                event = self._step(steps, entry)
                if event is not None:
                    yield event
            steps += 1
        info = as_dict(attempt.get("info"))
        yield _with_total(self._end(steps, name, info, last), info)

    @staticmethod
    def _step(step: int, entry: dict[str, Any]) -> Event | None:
        action = as_str(entry.get("action"))
        output = as_str(entry.get("observation"))
        program = _program(action)
        text = output.strip()
        if text.startswith(_EDIT_REFUSED):
            return Rejected(step, first_line(action), first_line(text))
        cancelled = _CANCELLED.match(text)
        if cancelled is not None:
            return Command(step, action.strip() or cancelled.group("cmd"), None, output,
                           timed_out=True)
        tail = "\n" + output[-300:]
        if "\n" + _TIMED_OUT_V0 in tail:
            return Command(step, action.strip(), None, output, timed_out=True)
        if any("\n" + marker in tail for marker in _RUNTIME_FAILED):
            return Command(step, action.strip(), None, output[-2000:], source="harness")
        if program in _SPECIAL:
            if program in _SPECIAL_SEARCH and text.startswith("No matches found"):
                return Command(step, action.strip(), 1, "")
            if text.startswith(f"{program}: ") or _TOOL_REFUSAL.match(text):
                return Rejected(step, first_line(action), first_line(text))
            return None
        if program in _PROBES and (not text or text.startswith(_NO_OUTPUT)):
            return Command(step, action.strip(), 1, "")
        code = shell_failed(output)
        if code is None:
            return None
        return Command(step, action.strip(), code, output)

    @staticmethod
    def _end(steps: int, name: str, info: dict[str, Any], last: dict[str, Any]) -> SessionEnd:
        status = info.get("exit_status")
        if not isinstance(status, str) or not status:
            return SessionEnd(steps, "unknown", name)
        found = re.fullmatch(r"submitted(?: \((?P<cause>[^)]*)\))?", status.strip())
        if found is not None:
            if not found.group("cause"):
                return SessionEnd(steps, "submitted", name)
            status = found.group("cause")  # autosubmitted after this ended the run
        thought = as_str(last.get("thought")) or as_str(last.get("response"))
        said = _EXIT_THOUGHT.match(thought.strip())
        reason = said.group("rest").strip() if said else ""
        if status in _LIMITS:
            error = ErrorText(None, "agent", status, f"{_LIMITS[status]} limit",
                              limit=_LIMITS[status])
            return SessionEnd(steps, "limit", name, error)
        if status == "exit_context":
            error = ErrorText(None, "provider", "ContextWindowExceededError",
                              reason or "the conversation exceeds the model's context window",
                              context_window=True)
            return SessionEnd(steps, "provider_error", name, error)
        if status == "exit_command_timeout":
            return SessionEnd(steps, "timeout", name)
        if status in _NO_FAILURE:
            return SessionEnd(steps, "unknown", name)
        if status in _HARNESS:
            error = ErrorText(None, "harness", status, reason or _HARNESS[status])
            return SessionEnd(steps, "unknown", name, error)
        exception = info.get("exception") or info.get("exception_str")
        traceback = info.get("traceback")
        traceback = traceback if isinstance(traceback, str) else None
        if status == "exit_api":
            split = split_exception(reason) or ("RetryError", reason or "the provider failed")
            error = ErrorText(None, "provider", split[0], split[1] or reason)
            return SessionEnd(steps, "provider_error", name, error)
        if status != "exit_error" and not (exception or traceback):
            return SessionEnd(steps, "unknown", name)
        error = session_end_error(status, str(exception or reason or status), traceback)
        return SessionEnd(steps, "provider_error" if error.source == "provider" else "unknown",
                          name, error)
