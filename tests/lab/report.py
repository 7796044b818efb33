"""What each agent's log keeps of the ground truth, read off the lab's own fixtures.

Every cell is measured on the committed fixtures, never written by hand (a test fails when
``docs/triage.md`` holds another table than :func:`records_table` prints):

- **command output**: whether a command's output is in the log (``probes-no-output``: the
  ``2:beta`` that ``grep -n beta notes.txt`` prints);
- **exit status**: how a failing command's status is written (``missing-program``, exit 127):
  ``field`` (a JSON number: ``exit_code``, ``returncode``, OpenCode's ``exit``), ``text``
  (only inside output text: ``Exit code 127``, ``Exit Code: 127``, ``exited with code 127``),
  or ``lost``;
- **probe's exit 1**: whether ``grep`` finding nothing (``probes-no-output``, the text from
  its command to the next one) keeps its status 1 in either form;
- **retried 429** / **retried 500**: whether a fault the agent retried (``provider-retried``)
  left the stub's marker in the log;
- **fatal 500** / **fatal 429** / **auth 401**: whether the fault that ended the run
  (``provider-fatal-500``, ``provider-fatal-429``, ``provider-auth``) is in the log:
  ``kept`` (the provider's message), ``generic`` (an error, but the provider's text replaced),
  ``lost``;
- **command timeout**: whether the log says a command was stopped at its time limit
  (``command-timeout``), or ``n/a`` for agents that cannot set one;
- **turn limit**: whether the log says the agent stopped at its turn limit (``turn-limit``:
  any word of a limit after the last command the agent ran, ``echo two``), or ``n/a``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from tests.lab.runner import FIXTURES
from tests.lab.score import Fixture, error_at_end, fixtures

if TYPE_CHECKING:
    from pathlib import Path

COLUMNS: Final = ("command output", "exit status", "probe's exit 1", "retried 429",
                  "retried 500", "fatal 500", "fatal 429", "auth 401", "command timeout",
                  "turn limit")
_LIMIT_WORDS: Final = re.compile(r"(?i)max[_ ]?turns|turn[_ ]?limit|limit|exceeded|maximum")
BEGIN: Final = "<!-- lab-records:begin (python -m tests.lab report) -->"
END: Final = "<!-- lab-records:end -->"


def _field(status: int) -> re.Pattern[str]:
    return re.compile(r'\\?"(?:exit_code|returncode|exitCode|exit_status|return_code|exit)\\?"'
                      rf"\s*:\s*{status}(?!\d)")


def _text(status: int) -> re.Pattern[str]:
    return re.compile(rf"(?i)(?:exit code:? {status}|exited with code:? {status}|"
                      rf"exit status:? {status})(?!\d)")


def _between(text: str, start: str, end: str) -> str:
    """The text from the first ``start`` to the first ``end`` after it (one step's record)."""
    head = text.find(start)
    if head < 0:
        return ""
    tail = text.find(end, head)
    return text[head:] if tail < 0 else text[head:tail]


def exit_form(text: str, status: int) -> str:
    if _field(status).search(text):
        return "field"
    if _text(status).search(text):
        return "text"
    return "lost"


def fault_form(fixture: Fixture | None, status: int) -> str:
    if fixture is None:
        return "n/a"
    text = fixture.text()
    if f"stub fault {status}" in text:
        return "kept"
    return "generic" if error_at_end(text) else "lost"


def row(agent_fixtures: dict[str, Fixture]) -> list[str]:
    """One agent's cells, in :data:`COLUMNS` order."""
    def text_of(name: str) -> str | None:
        found = agent_fixtures.get(name)
        return None if found is None else found.text()

    missing = text_of("missing-program")
    probes = text_of("probes-no-output")
    retried = text_of("provider-retried")
    timeout = text_of("command-timeout")
    limited = text_of("turn-limit")
    return [
        "n/a" if probes is None else ("kept" if "2:beta" in probes else "lost"),
        "n/a" if missing is None else exit_form(missing, 127),
        "n/a" if probes is None else (
            "kept" if exit_form(_between(probes, "grep -rn zzz_not_there", "test -f missing"), 1)
            != "lost" else "lost"),
        "n/a" if retried is None else ("kept" if "stub fault 429" in retried else "lost"),
        "n/a" if retried is None else ("kept" if "stub fault 500" in retried else "lost"),
        fault_form(agent_fixtures.get("provider-fatal-500"), 500),
        fault_form(agent_fixtures.get("provider-fatal-429"), 429),
        fault_form(agent_fixtures.get("provider-auth"), 401),
        "n/a" if timeout is None else (
            "kept" if re.search(r"(?i)timed out|timeout", timeout.split("sleep 30", 1)[-1])
            else "lost"),
        "n/a" if limited is None else (
            "kept" if _LIMIT_WORDS.search(limited.rsplit("echo two", 1)[-1]) else "lost"),
    ]


def agent_records(root: Path = FIXTURES) -> dict[str, dict[str, str]]:
    """Per agent (at the fixtures' version): column -> cell."""
    by_agent: dict[str, dict[str, Fixture]] = {}
    for fixture in fixtures(root):
        by_agent.setdefault(fixture.agent, {})[fixture.scenario] = fixture
    return {agent: dict(zip(COLUMNS, row(found), strict=True))
            for agent, found in by_agent.items()}


def records_table(root: Path = FIXTURES) -> str:
    """The Markdown table: one row per agent and version."""
    by_agent: dict[tuple[str, str], dict[str, Fixture]] = {}
    for fixture in fixtures(root):
        key = (fixture.agent, str(fixture.meta["version"]))
        by_agent.setdefault(key, {})[fixture.scenario] = fixture
    lines = ["| agent | " + " | ".join(COLUMNS) + " |",
             "|---" * (len(COLUMNS) + 1) + "|"]
    for (agent, version), found in sorted(by_agent.items()):
        lines.append(f"| {agent} {version} | " + " | ".join(row(found)) + " |")
    return "\n".join(lines)
