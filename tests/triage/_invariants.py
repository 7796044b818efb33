"""Invariants of triage that need no labels, checked over every real file (issue 32, item 3).

Every session log of both real corpora (``../shared/data/agent-sessions/`` and
``agent-sessions-2/``) and every lab fixture is read twice: once through its reader alone (the
steps the format records, with their commands, statuses and output) and once through triage.
Each invariant is a function from one input's pair to the violations it finds, each naming the
file, the session and the step:

- **command word**: a step's program is a command word, never prose, a backtick, an
  apostrophe or a Markdown fragment (a report once said "The command Let's exited with
  status 1");
- **probe**: a search or test that found nothing (exit 1, no output) is never a failure;
- **status**: every recorded non-zero status is a failure, an outcome, or one of the
  documented exceptions (a command still running);
- **bare message**: no failure message is the bare "exited with status N" when the output says
  why (a line in a tool's own words that something failed).

``python -m tests.triage._invariants`` prints every violation; ``tests/triage/test_invariants.py``
fails listing them.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from failcode import headline
from failcode.classification._command import segments_of
from failcode.classification._lex import split
from failcode.triage._events import Command, SessionEnd, SessionStart
from failcode.triage.analysis._analyze import (
    _Counting,
    expand,
    is_conversation,
    open_regular,
    triage_file,
)
from failcode.triage.readers import HEAD_BYTES, detect
from tests._paths import SHARED, TESTS

if TYPE_CHECKING:
    from collections.abc import Iterator

    from failcode.triage._result import SessionResult

__all__ = ["Read", "corpus_inputs", "read", "violations"]

CORPORA: Final = (SHARED / "data" / "agent-sessions", SHARED / "data" / "agent-sessions-2")
LAB: Final = TESTS / "lab" / "fixtures"


@dataclass
class _Steps:
    name: str | None = None
    commands: list[Command] = field(default_factory=list)
    steps: int | None = None
    """The session's step count its end gave (what triage reports as ``steps``)."""


@dataclass
class Read:
    """One input read twice: the reader's sessions (commands in order) and triage's."""

    label: str
    fmt: str | None
    raw: list[_Steps]
    sessions: list[SessionResult]
    error: str | None


def corpus_inputs() -> list[Path]:
    """Every input of both corpora and the lab's fixtures, as triage would find them."""
    roots = [root for root in (*CORPORA, LAB) if root.exists()]
    files = expand(roots)
    return [path for path, _ in files]


def _events(path: Path) -> Iterator[Any]:
    if path.is_dir():
        return iter(())  # an OpenHands conversation folder: read through triage only
    with open_regular(path) as raw:
        head = raw.read(HEAD_BYTES)
        raw.seek(0)
        reader = detect(head)
        if reader is None:
            return iter(())
        return iter(list(reader.read(_Counting(raw, None, head, None),  # type: ignore[arg-type]
                                     str(path))))


def read(path: Path) -> Read:
    """The input read through its reader alone and through triage."""
    result, sessions = triage_file(path, str(path))
    raw: list[_Steps] = []
    current: _Steps | None = None
    try:
        events = list(_events(path)) if not is_conversation(path) else []
    except Exception:  # noqa: BLE001 - triage reports the input's error
        events = []
    for event in events:
        if isinstance(event, SessionStart):
            current = _Steps(event.name)
            raw.append(current)
        elif isinstance(event, SessionEnd):
            if current is None:
                current = _Steps(event.name)
                raw.append(current)
            elif event.name:
                current.name = event.name
            current.steps = event.steps
            current = None
        elif isinstance(event, Command):
            if current is None:
                current = _Steps()
                raw.append(current)
            current.commands.append(event)
    return Read(str(path), result.format, raw, sessions, result.error_code)


def _by_session(item: Read) -> Iterator[tuple[SessionResult, list[Command]]]:
    """Triage's sessions beside the reader's commands of the same session (matched by name,
    in order; sessions triage dropped as empty hold no command)."""
    pending: dict[str, list[_Steps]] = defaultdict(list)
    default = Path(item.label).stem
    for steps in item.raw:
        pending[steps.name or default].append(steps)
    unnamed = [c for steps in item.raw for c in steps.commands]
    for session in item.sessions:
        queue = pending.get(session.session, [])
        # the same name may start several sessions (a resumed Claude Code session): the next
        # one of that name with the same step count
        match = next((q for q in queue if q.steps == session.steps), None)
        if match is not None:
            queue.remove(match)
            yield session, match.commands
        elif len(item.sessions) == 1:
            yield session, unnamed


_FROM_TEXT: Final = frozenset({"mini-swe-agent", "swe-agent", "aider"})
"""Readers that find the command in the model's text, not in a tool call's arguments."""
_PROSE: Final = re.compile(r"['`\u2018\u2019\u201c\u201d]|^(?:#|\*|>|```|-\s)|[:;,.!?]$")
_WORD: Final = re.compile(r"^[\w./~$@%+=:,\[\]{}()!*?\\-]+$")
_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_REDIRECT: Final = re.compile(r"^\d*(?:>>?|<<?<?|&>|>&)&?\d*-?")
_PROBES: Final = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "test", "[",
                            "[[", "which", "type", "diff", "cmp", "pgrep", "git"})
_WHY: Final = re.compile(
    r"(?im)^.*\b(?:error|exception|failed|failure|fatal|not found|no such file"
    r"|permission denied|cannot|can't|unable to|refused|denied|invalid|undefined)\b.*$")
_BARE: Final = re.compile(r"exited with status -?\d+\.?$")
_TRACEBACK: Final = ": Traceback (most recent call last):"


def _program(command: str) -> str | None:
    """The program of a simple command as a shell would run it (environment assignments
    and redirections skipped)."""
    try:
        words = split(command)
    except ValueError:
        words = command.split()
    while words and (_ASSIGNMENT.match(words[0]) or _REDIRECT.match(words[0])):
        bare = _REDIRECT.fullmatch(words[0]) is not None and words[0].rstrip("0123456789") in (
            ">", ">>", "<", "<<", "&>", ">&", "<<<")
        words = words[2:] if bare else words[1:]  # `> file cmd`: the target too
    return words[0] if words else None


def command_word(item: Read) -> list[str]:
    """A step's program is a command word, never prose or Markdown: the program a failure
    names, and, where the reader finds the command in the model's text (mini-swe-agent,
    SWE-agent, aider), the program every simple command of the step runs. (A tool call's
    command is what the model sent: prose there is the agent's own malformed line.)"""
    found = []
    malformed = {(session.session, e.step) for session in item.sessions
                 for e in session.failures if e.failure.code == "FC-CMD-009"
                 and e.failure.error_class in ("syntax_error", "command_not_found")}
    default = Path(item.label).stem
    for steps in item.raw if item.fmt in _FROM_TEXT else ():
        for command in steps.commands:
            if not command.command.strip() or command.source != "command" or (
                    (steps.name or default, command.step) in malformed):
                continue  # the agent's own malformed line, and triage says so
            for segment in segments_of(command.command):
                program = _program(segment)
                if program is not None and not _is_word(program):
                    found.append(f"{item.label} [{steps.name}] step {command.step}: program "
                                 f"{program[:60]!r} of {command.command[:80]!r}")
                    break
    for session in item.sessions:
        for entry in session.failures:
            named = entry.failure.params.get("program")
            if isinstance(named, str) and not _is_word(named):
                found.append(f"{item.label} [{session.session}] step {entry.step}: the failure "
                             f"names the program {named[:60]!r}")
    return found


def _is_word(program: str) -> bool:
    return program in (":", "!", ".", "[", "[[", "{", "(") or (
        not _PROSE.search(program) and _WORD.match(program) is not None)


def probe(item: Read) -> list[str]:
    """A search or test that found nothing (exit 1, no output) is never a failure."""
    found = []
    for session, commands in _by_session(item):
        failing = {e.step for e in session.failures}
        for command in commands:
            if command.exit_code != 1 or command.output.strip() or command.step not in failing:
                continue
            program = _program(command.command) or ""
            if Path(program).name in _PROBES:
                found.append(f"{item.label} [{session.session}] step {command.step}: "
                             f"{command.command[:80]!r} exit 1, no output, reported as a "
                             "failure")
    return found


def status(item: Read) -> list[str]:
    """Every recorded non-zero status is a failure, an outcome, or a command still running."""
    found = []
    for session, commands in _by_session(item):
        seen = {e.step for e in session.failures} | {o.step for o in session.outcomes}
        for command in commands:
            if command.exit_code in (0, None) or command.running or command.step in seen:
                continue
            found.append(f"{item.label} [{session.session}] step {command.step}: "
                         f"{command.command[:80]!r} exited {command.exit_code}, neither a "
                         "failure nor an outcome")
    return found


def bare_message(item: Read) -> list[str]:
    """No failure's headline (its message as reports show it) is the bare "exited with status
    N", or that and a traceback's first line, when the output says why."""
    found = []
    for session, commands in _by_session(item):
        output = {c.step: c.output for c in commands}
        for entry in session.failures:
            message = headline(entry.failure)
            if not _BARE.search(message) and not message.endswith(_TRACEBACK):
                continue
            why = _WHY.search(output.get(entry.step, "") or "")
            if why:
                found.append(f"{item.label} [{session.session}] step {entry.step}: "
                             f"{message[:80]!r} while the output says {why.group(0)[:100]!r}")
    return found


INVARIANTS: Final = {"command word": command_word, "probe": probe, "status": status,
                     "bare message": bare_message}


def violations(items: list[Read]) -> dict[str, list[str]]:
    """Every invariant's violations over the inputs read."""
    return {name: [v for item in items for v in check(item)] for name, check in
            INVARIANTS.items()}


def main() -> int:
    items = [read(path) for path in corpus_inputs()]
    total = 0
    for name, found in violations(items).items():
        print(f"## {name}: {len(found)}")
        for line in found:
            print("  " + line)
        total += len(found)
    print(f"{len(items)} inputs, {total} violations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
