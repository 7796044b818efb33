"""from_command's tables row by row: every purpose and every probe program, and no other row.

The expected values are written out from the documented contract (docs/classification.md: a
purpose picks the kind and the timeout code; a probe that exits 1 and prints nothing found
nothing), so a row changed in the code fails here until the documentation changes with it.
"""

from __future__ import annotations

import pytest

from failcode import FC, PURPOSES, Failure, NoMatch, from_command
from failcode.classification._command import _PROBES, parse_invocation

# purpose -> (kind, code and class of a plain failure, code of a timeout)
PURPOSE_TABLE: dict[str, tuple[str, FC, str, FC]] = {
    "build": ("build_error", FC.BUILD_FAILED, "build_failed", FC.BUILD_TIMEOUT),
    "test": ("test_error", FC.TEST_FAILED, "test_failed", FC.TEST_TIMEOUT),
    "static_analysis": ("static_analysis_error", FC.LINT_FAILED, "check_failed",
                        FC.LINT_TIMEOUT),
    "doctor": ("env_error", FC.CMD_DOCTOR_FAILED, "check_failed", FC.CMD_DOCTOR_TIMEOUT),
    "debug": ("debug_error", FC.CMD_DEBUG_FAILED, "debug_failed", FC.CMD_DEBUG_TIMEOUT),
    "merge": ("merge_error", FC.GIT_MERGE_FAILED, "merge_failed", FC.GIT_MERGE_TIMEOUT),
    "general": ("command_error", FC.CMD_FAILED, "unknown", FC.CMD_TIMEOUT),
}

# probe program -> a command that uses it as a probe (exit 1, nothing printed: found nothing)
PROBE_TABLE: dict[str, str] = {
    "grep": "grep -rn needle src", "egrep": "egrep 'a|b' f.txt", "fgrep": "fgrep -x s f.txt",
    "zgrep": "zgrep needle log.gz", "rg": "rg -n needle", "ag": "ag needle src",
    "ack": "ack needle", "find": "find missing -name '*.py'", "fd": "fd needle",
    "fdfind": "fdfind needle", "test": "test -f setup.cfg", "[": "[ -d build ]",
    "[[": "[[ -x ./run ]]", "which": "which cargo", "pgrep": "pgrep -f 'http.server'",
}
# probes that are a subcommand or builtin form rather than a program of their own
PROBE_FORMS: dict[str, str] = {"git grep": "git grep -n needle", "command -v": "command -v cargo",
                               "pacman": "pacman -Qs ventoy"}


def test_the_purpose_table_names_every_purpose() -> None:
    """The table above has exactly one row per purpose the API accepts."""
    assert sorted(PURPOSE_TABLE) == sorted(PURPOSES)


@pytest.mark.parametrize("purpose", sorted(PURPOSE_TABLE))
def test_a_purpose_picks_the_kind_and_code(purpose: str) -> None:
    """A failing command with no parseable output takes its purpose's kind, code and class."""
    kind, code, error_class, _ = PURPOSE_TABLE[purpose]
    failure = from_command(["sometool", "arg"], 1, purpose=purpose)
    assert isinstance(failure, Failure)
    assert (failure.kind.value, failure.code, failure.error_class) == (
        kind, code.value, error_class)


@pytest.mark.parametrize("purpose", sorted(PURPOSE_TABLE))
def test_a_purpose_picks_the_timeout_code(purpose: str) -> None:
    """A command that timed out takes its purpose's timeout code, class timeout."""
    timeout_code = PURPOSE_TABLE[purpose][3]
    failure = from_command(["sometool", "arg"], 1, purpose=purpose, timed_out=True)
    assert isinstance(failure, Failure)
    assert (failure.code, failure.error_class) == (timeout_code.value, "timeout")


def test_the_probe_table_names_every_probe_program() -> None:
    """The table above has exactly one row per program the classifier treats as a probe."""
    assert sorted(PROBE_TABLE) == sorted(_PROBES)


@pytest.mark.parametrize("program", sorted(PROBE_TABLE))
def test_a_probe_that_found_nothing_is_no_match(program: str) -> None:
    """The probe exits 1 and prints nothing: a NoMatch outcome naming the probe, not a failure."""
    command = PROBE_TABLE[program]
    assert parse_invocation(command).probe == program
    outcome = from_command(command, 1)
    assert isinstance(outcome, NoMatch)
    assert outcome.probe == program


@pytest.mark.parametrize("form", sorted(PROBE_FORMS))
def test_a_probe_form_that_found_nothing_is_no_match(form: str) -> None:
    """``git grep`` and ``command -v`` are probes too."""
    outcome = from_command(PROBE_FORMS[form], 1)
    assert isinstance(outcome, NoMatch)
    assert outcome.probe == form


@pytest.mark.parametrize("program", sorted(PROBE_TABLE))
def test_a_probe_that_exits_2_is_not_a_no_match(program: str) -> None:
    """Exit 2 is the tools' error status (grep: "an error occurred"): never a silent probe."""
    assert not isinstance(from_command(PROBE_TABLE[program], 2, "", "error\n"), NoMatch)


@pytest.mark.parametrize("command", ["cat notes.txt", "make probe", "type x", "python check.py"])
def test_other_programs_are_not_probes(command: str) -> None:
    """A program outside the table that exits 1 is a failure, whatever it looked for."""
    assert parse_invocation(command).probe is None
