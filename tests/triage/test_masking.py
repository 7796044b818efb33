"""Failures a command's exit status hides (``failcode.triage.analysis._masking``).

The outputs are what the real tools print (the session lab's runs of pytest, gcc, make and a
wrapper script, ``tests/lab/scenarios/masked-*.toml``, record them through every agent).
"""

from __future__ import annotations

import pytest

from failcode.classification._purpose import output_purpose
from failcode.triage import triage
from failcode.triage.analysis._masking import masked_failure, unmask
from tests.lab.runner import FIXTURES

PYTEST = ("F                                                                        [100%]\n"
          "FAILED test_calc.py::test_add - assert -1 == 5\n1 failed in 0.01s\n")
GCC = "src/util.c: In function 'util':\nsrc/util.c:2:17: error: expected ';' before '}' token\n"
MAKE = ("gcc -c broken.c -o broken.o\nbroken.c:1:27: error: 'undeclared_value' undeclared\n"
        "make: *** [Makefile:2: all] Error 1\n")


@pytest.mark.parametrize(("command", "inner"), [
    ("python -m pytest -q | tail -5", "python -m pytest -q"),
    ("gcc -c a.c 2>&1 | head -3", "gcc -c a.c 2>&1"),
    ("pytest 2>&1 | grep -E 'passed|failed'", "pytest 2>&1"),
    ("make || true", "make"),
    ("make ; echo done", "make"),
    ("cargo test | tee log.txt | tail -20", "cargo test"),
    ("cd app && npm test || :", "cd app && npm test"),
])
def test_a_trailing_filter_or_discard_is_peeled_off(command: str, inner: str) -> None:
    """Filters, ``|| true`` and ``; echo`` at the end are what hides the status."""
    assert unmask(command) == (inner, True)


@pytest.mark.parametrize("command", [
    "python -m pytest -q", "grep -rn 'a|b' src", "make && ./run", "echo 'x | tail'",
    "make || make clean",
])
def test_nothing_is_peeled_when_nothing_hides(command: str) -> None:
    """A command without a trailing filter or discard is its own inner command."""
    assert unmask(command) == (command.strip(), False)


@pytest.mark.parametrize(("command", "output", "status"), [
    ("python -m pytest -q | tail -5", PYTEST, 1),
    ("gcc -c src/util.c 2>&1 | head -3", GCC, 1),
    ("make || true", MAKE, 1),
    ("./check.sh", PYTEST, 1),
    ("bash scripts/ci.sh", MAKE, 1),
    ("cargo build 2>&1 | tail", "bash: cargo: command not found\n", 127),
    ("python x.py 2>&1 | tail -3", ("Traceback (most recent call last):\n  File \"x.py\", "
                                    "line 1, in <module>\nValueError: bad\n"), 1),
])
def test_a_hidden_failure_is_found_with_its_status(command: str, output: str,
                                                   status: int) -> None:
    """A hiding command whose output shows a failure: its inner command and the status."""
    found = masked_failure(command, output)
    assert found is not None
    assert found[1] == status


@pytest.mark.parametrize(("command", "output"), [
    ("python -m pytest -q", PYTEST),                        # nothing hid the status
    ("python -m pytest -q | tail -5", "3 passed in 0.1s\n"),  # nothing failed
    ("grep -rn error logs/ | head", "logs/a.log:3: error: disk full\n"),  # a probe's hits
    ("cat build.log | tail -5", MAKE),                      # a viewer shows an old failure
    ("git log -p | head", GCC),
    ("ls src | sort", "util.c\n"),
    ("python -m pytest | tail -3", "collected 3 items\nERROR is a word here\n"),
])
def test_no_failure_is_made_of_success_or_a_search(command: str, output: str) -> None:
    """Exit 0 stays a success without a hiding command, a failure shown, or with a viewer."""
    assert masked_failure(command, output) is None


def test_the_purpose_of_a_wrapper_comes_from_its_output() -> None:
    """A test runner's summary is a test, compiler diagnostics a build."""
    assert (output_purpose(PYTEST), output_purpose(GCC), output_purpose("ok\n")) == (
        "test", "build", "general")


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini-cli", "mini-swe-agent",
                                   "openhands"])
def test_triage_reports_a_masked_failure_and_marks_it(agent: str) -> None:
    """The lab's ``pytest | tail -5`` (exit 0) is a test failure marked ``masked``."""
    session = triage([FIXTURES / agent / "masked-pipe-tail" / "session"]).to_dict()["sessions"]
    found = [(f["step"], f["masked"], f["failure"]["kind"])
             for s in session for f in s["failures"]]
    assert found == [(0, True, "test_error")]


def test_a_failure_with_its_own_status_is_not_marked_masked() -> None:
    """A failing command whose status says so is an ordinary failure."""
    sessions = triage([FIXTURES / "codex" / "pytest-failure" / "session"]).to_dict()["sessions"]
    assert [f["masked"] for s in sessions for f in s["failures"]] == [False]
