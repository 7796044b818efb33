"""aider's interactive outcomes and its errors about the person's files (issue 32, items 2
and 5), on every real aider history of both corpora.

Aider's own strings (0.86.2 source: ``io.confirm_ask`` logs the question with the answer,
``Coder.handle_shell_commands`` asks ``Run shell command?``/``Run shell commands?``,
``Coder.allowed_to_edit`` logs ``Skipping edits to PATH`` when the person declines,
``Coder.keyboard_interrupt`` logs ``^C again to exit`` and ``^C KeyboardInterrupt``;
``InputOutput.read_text`` logs ``PATH: file not found error``, ``Coder`` logs ``Error:
Read-only file PATH does not exist. Skipping.``): a declined approval is a cancelled action,
an interrupt a cancelled request (never a failure, never in a loop), a missing file the
person named is a file-not-found failure.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from failcode.triage import triage
from tests.triage._data import session_files, sessions_2_dir, sessions_dir
from tests.triage.oracles._failcode_side import reader_name

if TYPE_CHECKING:
    from pathlib import Path

    from failcode.triage import TriageResult

_DECLINED_RUN = re.compile(r"^> Run shell commands?\? .*[\])]:? ?[nNdDsS]\w*\s*$", re.MULTILINE)
_SKIPPED = re.compile(r"^> Skipping edits to (?!.* that matches \w+ spec)", re.MULTILINE)
_MISSING = re.compile(r"^> (?:.+: file not found error|Error: Read-only file .+ does not "
                      r"exist\. Skipping\.)\s*$", re.MULTILINE)


def _histories() -> list[Path]:
    files = [p for root in (sessions_dir(), sessions_2_dir()) for p in session_files(root)
             if reader_name(p) == "aider"]
    assert len(files) >= 11, files
    return files


@pytest.fixture(scope="module")
def result() -> TriageResult:
    return triage(_histories())


def _texts() -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in _histories())


def _reasons(result: TriageResult) -> list[str]:
    return [str(getattr(o.outcome, "reason", "")) for s in result.sessions for o in s.outcomes]


def test_every_declined_shell_command_is_a_cancelled_action(result: TriageResult) -> None:
    declined = len(_DECLINED_RUN.findall(_texts()))
    assert declined >= 10
    assert _reasons(result).count("declined when aider asked to run it") == declined


def test_every_declined_edit_is_a_cancelled_action(result: TriageResult) -> None:
    skipped = len(_SKIPPED.findall(_texts()))
    assert skipped >= 10
    assert _reasons(result).count("declined when aider asked to edit it") == skipped


def test_interrupts_are_cancelled_never_failures_nor_loop_members(result: TriageResult) -> None:
    interrupted = {(s.path, s.session, o.step) for s in result.sessions for o in s.outcomes
                   if getattr(o.outcome, "reason", "") == "interrupted by the person (^C)"}
    assert len(interrupted) >= 50
    failed = {(s.path, s.session, e.step) for s in result.sessions for e in s.failures
              if "^C" in e.evidence or "KeyboardInterrupt" in e.evidence}
    assert not failed
    in_loops = {(s.path, s.session, step) for s in result.sessions for loop in s.loops
                for step in loop.steps} & {
        (s.path, s.session, o.step) for s in result.sessions for o in s.outcomes
        if getattr(o.outcome, "reason", "").startswith(("interrupted", "declined"))} - {
        (s.path, s.session, e.step) for s in result.sessions for e in s.failures}
    assert not in_loops


def test_a_file_the_person_named_that_does_not_exist_is_file_not_found(
        result: TriageResult) -> None:
    missing = len(_MISSING.findall(_texts()))
    assert missing >= 10
    found = [e for s in result.sessions for e in s.failures
             if e.evidence.endswith(("file not found error", "does not exist. Skipping."))]
    assert sum(e.repeats for e in found) == missing  # the same file again is a repeat
    assert {e.failure.code for e in found} == {"FC-OS-002"}


def test_every_exit_status_older_aider_logged_is_the_command_s_status(
        result: TriageResult) -> None:
    """``Command 'CMD' exited with status N`` (aider 0.5x's ``run_cmd``): the only status
    aider ever logged."""
    logged = re.findall(r"^> Command '(.+)' exited with status (\d+)\s*$", _texts(),
                        re.MULTILINE)
    assert logged
    read = [(e.evidence, e.failure.code) for s in result.sessions for e in s.failures]
    for command, _status in logged:
        assert any(command in evidence for evidence, _ in read), (command, read[:5])
