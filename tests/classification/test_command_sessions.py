"""from_command over every failing command of real agent sessions (../shared/data, read in place).

Run with ``-s`` to see the distribution of outcomes and codes per framework.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import TYPE_CHECKING

from failcode import Cancelled, Failure, NoMatch, from_command
from tests._needs import missing
from tests._paths import SHARED

if TYPE_CHECKING:
    from pathlib import Path

SESSIONS = SHARED / "data" / "agent-sessions"
_OPENHANDS_EXIT = re.compile(r"\[Command finished with exit code (\d+)\]")


def _require_sessions() -> Path:
    if not SESSIONS.is_dir():
        missing(f"agent-sessions data not present at {SESSIONS}")
    return SESSIONS


def _mini_swe_agent(root: Path) -> list[tuple[str, int, str, bool]]:
    """(command, exit code, output, timed out) of every non-zero step of mini-swe-agent."""
    rows = []
    for path in sorted((root / "mini-swe-agent").rglob("*.traj.json")):
        commands: dict[str, str] = {}
        for message in json.loads(path.read_text(encoding="utf-8"))["messages"]:
            if message["role"] == "assistant":
                for call in message.get("tool_calls") or []:
                    try:
                        commands[call["id"]] = json.loads(call["function"]["arguments"])[
                            "command"]
                    except (KeyError, ValueError, TypeError):
                        continue
            elif message["role"] == "tool":
                extra = message.get("extra") or {}
                code = extra.get("returncode")
                if code in (0, None) or message.get("tool_call_id") not in commands:
                    continue
                timed_out = "timed out" in str(extra.get("exception_info") or "")
                rows.append((commands[message["tool_call_id"]], int(code),
                             extra.get("raw_output") or "", timed_out))
    return rows


def _openhands(root: Path) -> list[tuple[str, int, str, bool]]:
    """Non-zero ``run`` observations of the OpenHands event streams (exit code in extras)."""
    rows = []
    for path in sorted((root / "openhands").rglob("*.json*")):
        text = path.read_text(encoding="utf-8")
        records = ([json.loads(line) for line in text.splitlines() if line.strip()]
                   if path.suffix == ".jsonl" else [json.loads(text)])
        for record in records:
            events = record if isinstance(record, list) else record.get("history") or []
            actions = {e.get("id"): e for e in events if isinstance(e, dict) and "action" in e}
            for event in events:
                if not isinstance(event, dict) or event.get("observation") != "run":
                    continue
                extras = event.get("extras") or {}
                code = (extras.get("metadata") or {}).get("exit_code", extras.get("exit_code"))
                command = extras.get("command") or (
                    (actions.get(event.get("cause")) or {}).get("args") or {}).get("command")
                if isinstance(code, int) and code != 0 and isinstance(command, str):
                    rows.append((command, code, event.get("content") or "", False))
    return rows


def _distribution(rows: list[tuple[str, int, str, bool]]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for command, code, output, timed_out in rows:
        result = from_command(command, code, output, "", cwd="/testbed", timed_out=timed_out)
        assert isinstance(result, (Failure, NoMatch, Cancelled)), (command, result)
        key = (f"{result.code} {result.error_class}" if isinstance(result, Failure)
               else type(result).__name__)
        counts[key] += 1
    return counts


# grep's manual: "the exit status is 0 if a line is selected, 1 if no lines were selected, and 2
# if an error occurred". A lone grep (no pipe, no &&/;) that exits 1 with no output found nothing.
_LONE_GREP = re.compile(r"^\s*(?:cd \S+ && )?grep\b[^|;&<>`$]*$")


def _expected_by_the_tools_manuals(command: str, code: int, output: str) -> str | None:
    """What the tool's own documentation says a step is, or None when it does not say."""
    if _LONE_GREP.match(command) and code == 1 and not output.strip():
        return "NoMatch"
    if "Traceback (most recent call last):" in output and re.match(r"^\s*python", command):
        return "Failure"
    return None


def _check_rows_against_the_manuals(rows: list[tuple[str, int, str, bool]]) -> int:
    checked = 0
    for command, code, output, timed_out in rows:
        expected = _expected_by_the_tools_manuals(command, code, output)
        if expected is None or timed_out:
            continue
        result = from_command(command, code, output, "", cwd="/testbed")
        assert type(result).__name__ == expected, (command, code, output[:200], result)
        checked += 1
    return checked


def test_mini_swe_agent_failing_commands_classify_and_probes_are_no_match() -> None:
    """Every failing mini-swe-agent command classifies; over a third are no-match probes."""
    rows = _mini_swe_agent(_require_sessions())
    assert len(rows) >= 150
    counts = _distribution(rows)
    print(f"\nmini-swe-agent: {len(rows)} non-zero exits")  # the -s report
    for key, count in counts.most_common():
        print(f"  {count:4d}  {count / len(rows):6.1%}  {key}")
    # every step whose tool's manual says what it is (a lone grep finding nothing, a python
    # run that printed a traceback) is classified that way
    assert _check_rows_against_the_manuals(rows) >= 20
    # the timeouts the harness recorded are timeouts, whatever exit code it reported
    assert counts["FC-CMD-004 timeout"] == sum(1 for row in rows if row[3])


def test_openhands_failing_commands_classify() -> None:
    """Every failing OpenHands command classifies into a Failure or a typed outcome."""
    rows = _openhands(_require_sessions())
    assert rows
    counts = _distribution(rows)
    print(f"\nopenhands: {len(rows)} non-zero exits")  # the -s report
    for key, count in counts.most_common():
        print(f"  {count:4d}  {count / len(rows):6.1%}  {key}")
    assert _check_rows_against_the_manuals(rows) >= 1
