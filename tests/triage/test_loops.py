"""Loops by root cause, on sessions built from real commands' output.

Each test runs real commands in a temporary project (the interpreter running the tests, GNU
``timeout``, pytest), writes what they printed and their exit status into a mini-swe-agent
trajectory the way mini-swe-agent records them, and triages it. The last tests measure the
rule on the labelled sets (``tests/triage/_loop_figures``).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import jsonschema
import pytest

from failcode.triage import Loop, SessionResult, triage
from failcode.triage.analysis._loops import cause_key
from failcode.triage.report._html import render_html
from failcode.triage.report._terminal import render_summary
from tests._needs import need_tool
from tests._paths import REPO
from tests.triage._data import sessions_dir
from tests.triage._loop_figures import Figures, lab_figures, real_figures, render, total

if TYPE_CHECKING:
    from pathlib import Path

SCHEMA = json.loads((REPO / "docs" / "triage.schema.json").read_text())
PYTHON = sys.executable
LIMIT = 0.3
"""The harness's time limit of a command, in seconds."""


@dataclass
class Project:
    """A temporary project: commands run in it, each recorded as one trajectory step."""

    root: Path
    steps: list[dict[str, object]] = field(default_factory=list)

    def write(self, name: str, text: str) -> None:
        (self.root / name).write_text(text)

    def run(self, shown: str, argv: list[str]) -> int:
        """Run ``argv`` (recorded as ``shown``, what the agent typed) and record its result."""
        try:
            done = subprocess.run(argv, cwd=self.root, capture_output=True, text=True,
                                  timeout=60, check=False)
        except subprocess.TimeoutExpired:  # pragma: no cover - a hung command
            pytest.fail(f"{shown} did not finish")
        output = done.stdout + done.stderr
        self.steps.append({"command": shown, "returncode": done.returncode, "output": output})
        return done.returncode

    def run_limited(self, shown: str, argv: list[str]) -> None:
        """Run ``argv`` under the harness's time limit, which it exceeds: mini-swe-agent
        records returncode -1 and the exception it caught."""
        with pytest.raises(subprocess.TimeoutExpired) as caught:
            subprocess.run(argv, cwd=self.root, capture_output=True, text=True,
                           timeout=LIMIT, check=False)
        self.steps.append({"command": shown, "returncode": -1, "output": "",
                           "exception_info": f"{caught.type.__name__}: {caught.value}",
                           "exception_type": caught.type.__name__})

    def trajectory(self, name: str = "s.traj.json") -> Path:
        """The steps as a mini-swe-agent trajectory (tool calls and their results)."""
        messages: list[dict[str, object]] = [{"role": "system", "content": "x"}]
        for index, step in enumerate(self.steps):
            messages.append({"role": "assistant", "content": "", "tool_calls": [{
                "id": f"c{index}", "function": {
                    "name": "bash", "arguments": json.dumps({"command": step["command"]})}}]})
            extra = {"returncode": step["returncode"], "raw_output": step["output"]}
            if "exception_info" in step:
                extra["exception_info"] = step["exception_info"]
                extra["exception_type"] = step["exception_type"]
            messages.append({"role": "tool", "tool_call_id": f"c{index}",
                             "content": f"<returncode>{step['returncode']}</returncode>"
                                        f"<output>{step['output']}</output>",
                             "extra": extra})
        doc = {"info": {"exit_status": "Submitted", "mini_version": "2"}, "messages": messages,
               "trajectory_format": "mini-swe-agent-1.1", "instance_id": "demo"}
        path = self.root / name
        path.write_text(json.dumps(doc))
        return path

    def session(self) -> SessionResult:
        result = triage([self.trajectory()])
        assert [item.error_code for item in result.inputs] == [None]
        (session,) = result.sessions
        assert len(session.failures) == sum(step["returncode"] != 0 for step in self.steps)
        return session


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def _missing(project: Project, module: str) -> None:
    """The agent's reproduction script, which now stops at another module it imports."""
    project.write("repro.py", f"import {module}\nprint('reproduced')\n")
    assert project.run("python repro.py", [PYTHON, "repro.py"]) == 1


def _ok(project: Project) -> None:
    assert project.run("ls", ["ls"]) == 0


# -- the rule -------------------------------------------------------------------------------------
def test_the_same_signature_at_three_steps_is_a_loop_whatever_fails_between(
        project: Project) -> None:
    """One uncaught error at steps 0, 2 and 4, other failures between: one loop, whose cause is
    its signature (an error with no location has no broader cause)."""
    project.write("boom.py", "raise RuntimeError('boom')\n")
    for index in range(5):
        if index % 2 == 0:
            assert project.run("python boom.py", [PYTHON, "boom.py"]) == 1
        else:
            _missing(project, f"missing_{index}")
    session = project.session()
    boom = session.failures[0].failure
    assert [(loop.steps, loop.cause, loop.signatures) for loop in session.loops] == [
        ((0, 2, 4), boom.signature, (boom.signature,))]
    assert session.loops[0].signature == boom.signature


def test_the_same_failure_at_two_consecutive_steps_is_a_loop(project: Project) -> None:
    """The same failing test run twice in a row is a loop."""
    project.write("test_calc.py", "def test_add():\n    assert 2 + 3 == 6\n")
    pytest_run = [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_calc.py"]
    for _ in range(2):
        assert project.run("python -m pytest -q test_calc.py", pytest_run) == 1
    session = project.session()
    assert [loop.steps for loop in session.loops] == [(0, 1)]
    assert len(session.loops[0].signatures) == 1


def test_two_crashes_of_one_exception_type_are_two_failures(project: Project) -> None:
    """Crashes of one type with no location share a signature (the generic sentence and the
    type); what each says failed tells them apart: A at steps 0 and 2 with B between is no
    loop, though the three share one signature."""
    project.write("a.py", "raise LookupError('settings are not configured')\n")
    project.write("b.py", "raise LookupError('the app has no filesystem location')\n")
    for script in ("a.py", "b.py", "a.py"):
        assert project.run(f"python {script}", [PYTHON, script]) == 1
    session = project.session()
    assert len({entry.failure.signature for entry in session.failures}) == 1
    assert session.loops == []


def test_the_same_crash_from_new_temporary_directories_is_one_failure(
        project: Project) -> None:
    """The same crash naming a new temporary directory each run, at steps 0, 2 and 4: one
    loop (the directory is normalized away)."""
    project.write("load.py", "import tempfile\n"
                  "raise IsADirectoryError(f'Unable to load file {tempfile.mkdtemp()}/src')\n")
    for index in range(5):
        if index % 2 == 0:
            assert project.run("python load.py", [PYTHON, "load.py"]) == 1
        else:
            _ok(project)
    session = project.session()
    assert [loop.steps for loop in session.loops] == [(0, 2, 4)]
    assert session.loops[0].cause == session.failures[0].failure.signature


def test_two_distant_failures_of_one_cause_are_no_loop(project: Project) -> None:
    """Two missing modules with a success between: neither three steps nor two in a row."""
    _missing(project, "missing_a")
    _ok(project)
    _missing(project, "missing_b")
    assert project.session().loops == []


def test_one_missing_module_after_another_is_one_loop(project: Project) -> None:
    """asgiref, then pytz, then sqlparse missing (an install between each): three signatures,
    one cause, the environment lacks the project's dependencies."""
    for module in ("missing_asgiref", "missing_pytz", "missing_sqlparse"):
        _missing(project, module)
        _ok(project)  # the agent installs it
    session = project.session()
    modules = [entry.failure.params["module"] for entry in session.failures]
    assert modules == ["missing_asgiref", "missing_pytz", "missing_sqlparse"]
    assert len({entry.failure.signature for entry in session.failures}) == 3
    (loop,) = session.loops
    assert (loop.steps, loop.cause) == ((0, 2, 4), "missing_dependency:*")
    assert loop.signatures == tuple(entry.failure.signature for entry in session.failures)
    assert loop.signature == session.failures[0].failure.signature


def test_a_missing_program_and_a_missing_module_are_one_cause(project: Project) -> None:
    """A test runner that is not installed, then the module it needs: two in a row."""
    assert project.run("no_such_test_runner -q", ["sh", "-c", "no_such_test_runner -q"]) == 127
    _missing(project, "missing_plugin")
    session = project.session()
    assert [str(entry.failure.error_class) for entry in session.failures] == [
        "command_not_found", "missing_module"]
    assert [(loop.steps, loop.cause) for loop in session.loops] == [
        ((0, 1), "missing_dependency:*")]


def test_timeouts_of_different_commands_are_one_loop(project: Project) -> None:
    """The harness's time limit stops a sleep, then a Python busy loop, then a shell loop
    under ``timeout``: three commands, three signatures, one cause."""
    need_tool("timeout")
    project.run_limited("sleep 5", ["sleep", "5"])
    project.run_limited("python -c 'while True: pass'", [PYTHON, "-c", "while True: pass"])
    shell = "timeout 0.3 sh -c 'while :; do :; done'"
    assert project.run(shell, ["timeout", "0.3", "sh", "-c", "while :; do :; done"]) == 124
    session = project.session()
    assert {str(entry.failure.error_class) for entry in session.failures} == {"timeout"}
    assert len({entry.failure.signature for entry in session.failures}) == 3
    assert [(loop.steps, loop.cause, len(loop.signatures)) for loop in session.loops] == [
        ((0, 1, 2), "timeout:*", 3)]


def test_the_same_error_class_at_one_file_from_different_edits_is_a_loop(
        project: Project) -> None:
    """The test file edited three times, each run failing another of its tests: three
    signatures, one cause."""
    pytest_run = [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_calc.py"]
    for name in ("add", "sub", "mul"):
        project.write("test_calc.py", f"def test_{name}():\n    assert 2 + 3 == 6\n")
        assert project.run("python -m pytest -q test_calc.py", pytest_run) == 1
        _ok(project)
    session = project.session()
    assert len({entry.failure.signature for entry in session.failures}) == 3
    assert [(loop.steps, loop.cause) for loop in session.loops] == [
        ((0, 2, 4), "assertion_failed:test_calc.py")]


def test_different_failures_in_a_row_that_make_progress_are_no_loop(project: Project) -> None:
    """A compile error, then a missing config, then a missing test dependency, then an
    assertion, each fixed in turn: four causes at four consecutive steps, no loop."""
    project.write("calc.py", "def add(a, b:\n    return a - b\n")
    assert project.run("python -m py_compile calc.py",
                       [PYTHON, "-m", "py_compile", "calc.py"]) == 1
    project.write("calc.py", "def add(a, b):\n    return a - b\n")
    project.write("app.py", "import tomllib\n\nwith open('config.toml', 'rb') as f:\n"
                            "    print(tomllib.load(f))\n")
    assert project.run("python app.py", [PYTHON, "app.py"]) == 1
    project.write("config.toml", "name = 'calc'\n")
    project.write("test_calc.py", "import missing_hypothesis\nfrom calc import add\n\n\n"
                                  "def test_add():\n    assert add(2, 3) == 5\n")
    pytest_run = [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_calc.py"]
    assert project.run("python -m pytest -q test_calc.py", pytest_run) != 0
    project.write("test_calc.py", "from calc import add\n\n\n"
                                  "def test_add():\n    assert add(2, 3) == 5\n")
    assert project.run("python -m pytest -q test_calc.py", pytest_run) == 1
    session = project.session()
    assert [entry.step for entry in session.failures] == [0, 1, 2, 3]
    causes = [cause_key(entry.failure) for entry in session.failures]
    assert len(set(causes)) == 4, causes
    assert session.loops == []


def test_a_cause_that_comes_back_after_progress_is_no_loop(project: Project) -> None:
    """Missing modules at steps 0, 2 and 4 with a failing test between each: every other
    failure is progress, and no signature repeats."""
    project.write("test_calc.py", "def test_add():\n    assert 2 + 3 == 6\n")
    pytest_run = [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_calc.py"]
    for index, module in enumerate(("missing_a", "missing_b", "missing_c")):
        _missing(project, module)
        if index < 2:
            project.write("test_calc.py", f"def test_add():\n    assert 2 + 3 == {6 + index}\n")
            assert project.run("python -m pytest -q test_calc.py", pytest_run) == 1
    session = project.session()
    assert session.loops == []


# -- what a loop reports --------------------------------------------------------------------------
def test_a_loop_names_its_cause_and_signatures_in_json_and_reports(project: Project) -> None:
    """The JSON document keeps ``signature`` and ``steps`` and adds ``cause`` and
    ``signatures``; it validates, and the summary and HTML name the cause."""
    for module in ("missing_a", "missing_b"):
        _missing(project, module)
    result = triage([project.trajectory()])
    document = result.to_dict()
    jsonschema.validate(document, SCHEMA)
    (loop,) = document["sessions"][0]["loops"]
    signatures = [entry["failure"]["signature"] for entry in document["sessions"][0]["failures"]]
    assert loop == {"signature": signatures[0], "steps": [0, 1],
                    "cause": "missing_dependency:*", "signatures": signatures}
    out = io.StringIO()
    render_summary(result, file=out)
    assert "longest 2 steps: missing dependencies, first: The module" in out.getvalue()
    assert "<code>missing_dependency:*</code> at steps 0, 1" in render_html(result)


def test_a_loop_built_by_hand_reads_as_before() -> None:
    """A Loop given only a signature and steps (the shape before causes) is its own cause."""
    loop = Loop("test_error:python.test:assertion_failed:none:0123abcd", (1, 2))
    assert loop.to_dict() == {"signature": loop.signature, "steps": [1, 2],
                              "cause": loop.signature, "signatures": [loop.signature]}


# -- the labelled sets ----------------------------------------------------------------------------
# The figures when loops became causes (false and missed may only fall; raise the test when
# they do). Before causes, on the real sessions: 19 labelled, 17 found, 4 false, 5 missed.
# One more miss since a module the agent listed itself is its own mistake: django-13265's
# missing dependencies (22, 24, 30, 32) have that mistake at 26 between them, and a cause that
# comes back after another one failed starts a new stretch (the rule in _loops). With the
# aider sample and the OpenHands harness logs labelled, three loops relabelled to the labels'
# own rule, and a failure without a location told apart by its headline: 33 labelled, 30
# found, 0 false, 4 missed (aider 2024-08-06 09:06:27 [0, 1]: two runs of one test file whose
# first failing test failed differently each time).
REAL_CEILINGS = {"false": 0, "missed": 4}
LAB_CEILINGS = {"false": 0, "missed": 1}  # aider's log keeps no command output or status


def _check(table: dict[str, Figures], ceilings: dict[str, int], text: str) -> None:
    figures = total(table)
    assert figures.false <= ceilings["false"], text
    assert figures.missed <= ceilings["missed"], text


def test_false_and_missed_loops_on_the_labelled_real_sessions() -> None:
    """On the real sessions, no more false or missed loops than when causes came in."""
    table = real_figures(sessions_dir().resolve())
    text = render("real sessions", table)
    print(text)
    _check(table, REAL_CEILINGS, text)


def test_false_and_missed_loops_on_the_lab() -> None:
    """On the lab's fixtures, no false loop, and every declared loop a log can show found."""
    table = lab_figures()
    text = render("lab (agent)", table, undeclared=True)
    print(text)
    _check(table, LAB_CEILINGS, text)
    assert total(table).undeclared == 0, text
