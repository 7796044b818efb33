"""The hooks' decision table (:func:`failcode.live.advise`, docs/live.md), row by row on
failures classified from real tool output, and its invariants over any failure and history.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from failcode import Category, Failure, History, Kind, Retryability, classify_http, decide
from failcode import from_command as classified
from failcode.live import MARK, Verdict, advise
from tests.strategies import failures

if TYPE_CHECKING:
    from pathlib import Path

Case = tuple[str, int, str]


def _ran(folder: Path, files: dict[str, str], command: str) -> Case:
    """A command run for real in ``folder``: (command, exit status, output)."""
    for name, text in files.items():
        (folder / name).write_text(text)
    done = subprocess.run([sys.executable, *command.split()[1:]], cwd=folder, text=True,
                          capture_output=True, check=False, timeout=120,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    return command, done.returncode, done.stdout + done.stderr


@pytest.fixture(scope="module")
def pytest_case(tmp_path_factory: pytest.TempPathFactory) -> Case:
    return _ran(tmp_path_factory.mktemp("pytest"), {
        "calc.py": "def add(a, b):\n    return a - b\n",
        "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    }, "python -m pytest -q -p no:cacheprovider test_calc.py")


@pytest.fixture(scope="module")
def missing_case(tmp_path_factory: pytest.TempPathFactory) -> Case:
    return _ran(tmp_path_factory.mktemp("missing"), {"report.py": "import yaml_lab_absent\n"},
                "python report.py")


def failure(command: str, status: int, output: str) -> Failure:
    found = classified(command, status, output)
    assert isinstance(found, Failure)
    return found


def told(case: Case, count: int, *, looping: bool = True,
         **options: object) -> tuple[Verdict, str, str]:
    found = failure(*case)
    history = History(signatures={found.signature: count - 1}) if looping else History()
    advice = advise(found, decide(found, history), action=case[0], count=count,
                    looping=looping, **options)  # type: ignore[arg-type]
    return advice.verdict, advice.row, advice.text


def test_a_first_failure_the_agent_can_fix_gets_nothing(pytest_case: Case,
                                                         missing_case: Case) -> None:
    assert told(pytest_case, 1, looping=False) == (Verdict.SILENT, "first", "")
    assert told(missing_case, 1, looping=False) == (Verdict.SILENT, "first", "")


def test_a_loop_is_told_with_what_failed_how_often_who_acts_and_what_instead(
        pytest_case: Case) -> None:
    verdict, row, text = told(pytest_case, 2)
    assert (verdict, row) == (Verdict.TELL, "loop")
    assert text.startswith(MARK)
    assert "`python -m pytest -q -p no:cacheprovider test_calc.py` failed with FC-TEST-003" \
        in text
    assert "twice now" in text
    assert "Who must act: you, the agent" in text
    assert "running it unchanged will fail the same way" in text
    _verdict, _row, third = told(pytest_case, 3)
    assert "three times" in third
    assert "If you cannot fix it yourself, stop and tell the person" in third


def test_below_the_threshold_a_loop_is_not_told(pytest_case: Case) -> None:
    assert told(pytest_case, 2, tell_after=3)[0] is Verdict.SILENT
    assert told(pytest_case, 3, tell_after=3)[0] is Verdict.TELL


def test_an_environment_loop_names_the_remedy_then_stops_for_a_person(
        missing_case: Case) -> None:
    verdict, _row, text = told(missing_case, 2)
    assert verdict is Verdict.TELL
    assert "Install the package that provides yaml_lab_absent" in text
    verdict, row, text = told(missing_case, 3)  # the ladder routes it to its owner
    assert (verdict, row) == (Verdict.STOP, "person")
    assert "Only a person can fix this" in text
    verdict, row, text = told(missing_case, 3, stop_for_person=False)
    assert (verdict, row) == (Verdict.TELL, "person")
    assert "Do not retry it" in text


def test_a_provider_fault_the_agent_retries_itself_gets_nothing() -> None:
    found = classify_http(503, body=b'{"error": {"message": "overloaded"}}')
    assert isinstance(found, Failure)
    for count in (1, 2, 5):
        history = History(signatures={found.signature: count - 1})
        advice = advise(found, decide(found, history), action="request", count=count,
                        looping=True)
        assert (advice.verdict, advice.row) == (Verdict.SILENT, "provider")


@settings(max_examples=400, deadline=None)
@given(found=failures(), count=st.integers(1, 12), looping=st.booleans(),
       tell_after=st.integers(2, 6), stop=st.booleans())
def test_the_table_holds_for_any_failure(found: Failure, count: int, looping: bool,
                                         tell_after: int, stop: bool) -> None:
    decision = decide(found, History(signatures={found.signature: count - 1}))
    advice = advise(found, decision, action="x", count=count, looping=looping,
                    tell_after=tell_after, stop_for_person=stop)
    assert (advice.text == "") == (advice.verdict is Verdict.SILENT)
    if advice.verdict is not Verdict.SILENT:
        assert advice.text.startswith(MARK)
    if found.kind is Kind.PROVIDER_ERROR:
        assert advice.verdict is Verdict.SILENT
    if advice.verdict is Verdict.STOP:
        assert stop
        assert found.category in (Category.USER, Category.ENVIRONMENT)
    if advice.row == "loop":
        assert looping
        assert count >= tell_after
    if not looping and found.retryability is not Retryability.NOT_RETRYABLE:
        assert advice.verdict is Verdict.SILENT
