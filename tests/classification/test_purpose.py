"""One rule for what a command is for, shared by ``from_command`` and ``failcode triage``.

The agreement tests run the real tools in a temporary directory (pytest, node's own test
runner, a script without its execute bit, a git push to a remote that does not exist) and
feed the same command and output to the API and to triage, as an agent's log would hold it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from failcode import Failure, from_command, infer_purpose
from failcode.triage import triage
from tests._needs import need_tool

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(("command", "purpose"), [
    # runners behind interpreters, wrappers and task runners
    ("cd app && uv run pytest -q", "test"),
    ("poetry run python -m pytest tests/", "test"),
    ("bundle exec rspec spec/models", "test"),
    ("npx jest --ci", "test"),
    ("timeout -s KILL 60 go test ./...", "test"),
    ("tox -e py311", "test"),
    ("tox -e lint", "static_analysis"),
    ("nox -s tests-3.12", "test"),
    ("hatch run test", "test"),
    ("hatch run lint:all", "static_analysis"),
    ("pdm run mypy src", "static_analysis"),
    ("just build", "build"),
    ("dotnet test", "test"),
    ("./gradlew test --info", "test"),
    ("gradle build", "build"),
    ("mvn -q verify", "test"),
    ("cargo test --release", "test"),
    ("cargo clippy -- -D warnings", "static_analysis"),
    ("go vet ./...", "static_analysis"),
    ("swift test", "test"),
    ("mix test", "test"),
    ("bun test", "test"),
    ("deno test -A", "test"),
    ("node --test math.test.mjs", "test"),
    ("php artisan test", "test"),
    ("zig build test", "test"),
    ("make -j4", "build"),
    ("make check", "test"),
    ("make lint", "static_analysis"),
    ("bash -c 'cd repo && python -m unittest discover'", "test"),
    # the project's own scripts: their names say it
    ("./scripts/run-tests.sh", "test"),
    ("bash ci/lint.sh", "static_analysis"),
    ("sh build.sh", "build"),
    ("./check.sh", "test"),
    ("python tests/runtests.py --parallel 1", "test"),
    ("npm run type-check", "static_analysis"),
    # what says nothing
    ("./deploy.sh", "general"),
    ("python test_bug.py", "general"),
    ("python reproduce.py", "general"),
    ("npm install", "general"),
    ("pip install -e .", "general"),
    ("ls -la", "general"),
    # git: merging, rebasing and pushing combine workspaces
    ("git push origin main", "merge"),
    ("git -C repo rebase main", "merge"),
    ("git status", "general"),
])
def test_the_command_says_its_purpose(command: str, purpose: str) -> None:
    assert infer_purpose(command) == purpose


@pytest.mark.parametrize(("output", "purpose"), [
    ("=========================== 1 failed, 2 passed in 0.03s ===========================",
     "test"),
    ("FAILED (failures=1)", "test"),
    ("--- FAIL: TestAdd (0.00s)", "test"),
    ("src/a.py:1:1: E501 line too long (120 > 88)", "static_analysis"),
    ("src/a.py:3: error: Argument 1 has incompatible type \"str\"  [arg-type]",
     "static_analysis"),
    ("main.c:3:5: error: expected ';' before 'return'", "build"),
    ("make: *** [Makefile:2: all] Error 1", "build"),
    ("Traceback (most recent call last):\nValueError: x", "general"),
])
def test_a_command_that_says_nothing_takes_its_outputs_shape(output: str, purpose: str) -> None:
    assert infer_purpose("python repro.py", output) == purpose
    assert infer_purpose("pytest", output) == "test"  # the command wins when it says


def test_an_argv_list_is_read_like_a_shell_string() -> None:
    assert infer_purpose(["python", "-m", "pytest", "-q"]) == "test"
    assert infer_purpose([b"cargo", b"build"]) == "build"
    assert infer_purpose(["bash", "-c", "make && ./run_tests.sh"]) == "test"


def _through_triage(tmp_path: Path, command: str, status: int, output: str) -> Failure:
    """The failure triage reports for one command in a mini-swe-agent 2.x trajectory."""
    traj = {"trajectory_format": "mini-swe-agent-1.1", "info": {"exit_status": "Submitted"},
            "messages": [
                {"role": "system", "content": "x"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "c0", "function": {"name": "bash",
                                              "arguments": json.dumps({"command": command})}}]},
                {"role": "tool", "tool_call_id": "c0", "content": output,
                 "extra": {"returncode": status}}]}
    path = tmp_path / "run.traj.json"
    path.write_text(json.dumps(traj))
    (session,) = triage([path]).sessions
    (entry,) = session.failures
    return entry.failure


def _run(command: str, cwd: Path) -> tuple[int, str]:
    done = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False)
    return done.returncode, done.stdout + done.stderr


def _agree(tmp_path: Path, command: str) -> Failure:
    status, output = _run(command, tmp_path)
    assert status != 0, output
    api = from_command(command, status, output)
    assert isinstance(api, Failure)
    seen = _through_triage(tmp_path, command, status, output)
    assert (seen.code, seen.signature) == (api.code, api.signature)
    return api


def test_a_failing_pytest_is_one_failure_through_the_api_and_triage(tmp_path: Path) -> None:
    (tmp_path / "test_calc.py").write_text("def test_add():\n    assert 1 + 1 == 3\n")
    failure = _agree(tmp_path, f"{sys.executable} -m pytest -q -p no:cacheprovider test_calc.py")
    assert failure.kind == "test_error"


def test_node_test_runner_failure_is_a_test_failure(tmp_path: Path) -> None:
    node = need_tool("node")
    (tmp_path / "m.test.mjs").write_text(
        "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\n"
        "test('mul', () => { assert.equal(3 + 4, 12); });\n")
    failure = _agree(tmp_path, f"{node} --test m.test.mjs")
    assert (failure.kind, failure.category) == ("test_error", "task")


def test_a_script_without_its_execute_bit_is_permission_denied(tmp_path: Path) -> None:
    script = tmp_path / "deploy.sh"
    script.write_text("#!/bin/sh\necho deployed\n")
    script.chmod(0o644)
    failure = _agree(tmp_path, "./deploy.sh")
    assert (failure.code, failure.kind, failure.category, failure.error_class) == (
        "FC-OS-001", "env_error", "environment", "permission_denied")


def test_a_push_to_a_missing_remote_is_the_environment(tmp_path: Path) -> None:
    git = need_tool("git")
    setup = (f"{git} init -q -b main && {git} -c user.email=a@b -c user.name=a commit -q "
             f"--allow-empty -m init && {git} remote add origin {tmp_path}/missing.git")
    assert _run(setup, tmp_path)[0] == 0
    failure = _agree(tmp_path, "git push origin main")
    assert (failure.code, failure.kind, failure.category) == (
        "FC-GIT-004", "env_error", "environment")
    assert "/tmp" not in failure.signature


def test_a_rejected_push_is_a_merge_failure_not_a_compile_error(tmp_path: Path) -> None:
    git = need_tool("git")
    ident = "-c user.email=a@b -c user.name=a"
    setup = (f"{git} init -q --bare -b main origin.git && {git} clone -q origin.git a && "
             f"{git} clone -q origin.git b && cd a && {git} {ident} commit -q --allow-empty "
             f"-m one && {git} push -q origin HEAD:main && cd ../b && {git} {ident} commit -q "
             f"--allow-empty -m two")
    assert _run(setup, tmp_path)[0] == 0
    failure = _agree(tmp_path / "b", "git push origin HEAD:main")
    assert (failure.kind, failure.error_class) == ("merge_error", "push_rejected")


def test_a_runner_script_that_does_not_exist_ran_no_test(tmp_path: Path) -> None:
    """``python runtests.py`` whose script is missing: the interpreter never started the test
    run, so it is the command's own failure (file not found), not a failing test."""
    command = f"{sys.executable} runtests.py tests/test_x.py"
    status, output = _run(command, tmp_path)
    assert infer_purpose(command) == "test"
    failure = from_command(command, status, output)
    assert isinstance(failure, Failure)
    assert (failure.kind, failure.error_class) == ("command_error", "file_not_found")
