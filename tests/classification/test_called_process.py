"""A command that exited non-zero under ``check=True`` is classified by its own output.

``subprocess.run(..., check=True)`` raises ``CalledProcessError`` carrying the command, its
exit status and (when captured) its output; ``classify`` reads them as
:func:`failcode.from_command` would for a shell step, so a missing module, a compiler
diagnostic or a missing program is named, not left as an unknown error. Every case runs the
real program.
"""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

from failcode import FC, Failure, classify, classify_text, from_command
from tests.classification.test_command_tools import tool

if TYPE_CHECKING:
    from pathlib import Path


def raised(argv: list[str], cwd: Path, **kwargs: object) -> subprocess.CalledProcessError:
    """Run ``argv`` with check=True and return the CalledProcessError it raised."""
    try:
        subprocess.run(argv, cwd=cwd, check=True, timeout=120, **kwargs)  # type: ignore[call-overload]
    except subprocess.CalledProcessError as exc:
        return exc
    msg = f"{argv} did not fail"
    raise AssertionError(msg)


def failure_of(exc: BaseException) -> Failure:
    result = classify(exc)
    assert isinstance(result, Failure), result
    return result


def test_a_missing_module_in_the_child_is_the_missing_module(tmp_path: Path) -> None:
    """A Python child failing on an import is FC-CMD-002 naming the module."""
    exc = raised([sys.executable, "-c", "import not_installed_mod_zz"], tmp_path,
                 capture_output=True)
    failure = failure_of(exc)
    assert failure.code == FC.CMD_MISSING_MODULE
    assert failure.params["module"] == "not_installed_mod_zz"


def test_a_compiler_diagnostic_is_named_with_its_file(tmp_path: Path) -> None:
    """gcc's undeclared identifier is the command diagnostic at the source file."""
    (tmp_path / "main.c").write_text("int main(void) { return undefined_zz; }\n")
    exc = raised([tool("gcc"), "-c", "main.c", "-o", "main.o"], tmp_path, capture_output=True)
    failure = failure_of(exc)
    assert failure.error_class == "undeclared_identifier"
    assert failure.location == "main.c"
    assert "undefined_zz" in failure.message


def test_the_record_matches_what_from_command_says_of_the_same_run(tmp_path: Path) -> None:
    """Code, class, params and location equal from_command's on the same command and output."""
    exc = raised([sys.executable, "-c", "import not_installed_mod_zz"], tmp_path,
                 capture_output=True)
    direct = from_command(exc.cmd, exc.returncode, exc.stdout, exc.stderr)
    assert isinstance(direct, Failure)
    failure = failure_of(exc)
    assert (failure.code, failure.error_class, dict(failure.params)) == (
        direct.code, direct.error_class, dict(direct.params))
    assert failure.metadata["exit_code"] == 1
    assert failure.metadata["rule"] == "type:called-process"


def test_output_not_captured_still_names_program_and_status(tmp_path: Path) -> None:
    """Without captured output: FC-CMD-003 with the program and its exit status."""
    exc = raised([tool("false")], tmp_path)
    failure = failure_of(exc)
    assert failure.code == FC.CMD_FAILED
    assert failure.params["program"] == "false"
    assert failure.params["exit_code"] == 1


def test_a_probe_that_found_nothing_is_still_a_failure_for_the_caller(tmp_path: Path) -> None:
    """grep finding nothing is no failure as a step, but check=True demanded success."""
    (tmp_path / "f.txt").write_text("hello\n")
    exc = raised([tool("grep"), "absent_zz", "f.txt"], tmp_path, capture_output=True)
    failure = failure_of(exc)
    assert failure.code == FC.CMD_FAILED
    assert (failure.params["program"], failure.params["exit_code"]) == ("grep", 1)


def test_the_cause_chain_keeps_the_called_process_error(tmp_path: Path) -> None:
    """The record's first cause link is the CalledProcessError itself."""
    exc = raised([tool("false")], tmp_path)
    assert failure_of(exc).cause[0].type == "subprocess.CalledProcessError"


def test_an_error_raised_from_it_takes_the_commands_classification(tmp_path: Path) -> None:
    """RuntimeError("build failed") raised from the CalledProcessError: the command decides."""
    inner = raised([sys.executable, "-c", "import not_installed_mod_zz"], tmp_path,
                   capture_output=True)
    try:
        raise RuntimeError("build failed") from inner
    except RuntimeError as outer:
        failure = failure_of(outer)
    assert failure.code == FC.CMD_MISSING_MODULE


def test_the_message_alone_gives_program_and_status() -> None:
    """classify_text reads str(CalledProcessError): the argv list and the status."""
    text = str(subprocess.CalledProcessError(2, ["./deploy.sh", "-v"]))
    failure = classify_text("subprocess.CalledProcessError", text)
    assert isinstance(failure, Failure)
    assert failure.code == FC.CMD_FAILED
    assert (failure.params["program"], failure.params["exit_code"]) == ("deploy.sh", 2)


def test_the_message_gives_the_purpose_its_command_says() -> None:
    """The argv in the message says what the command was for, by from_command's own rule:
    ``make -j4`` is a build, so its failure is a build failure, as through triage."""
    text = str(subprocess.CalledProcessError(2, ["make", "-j4"]))
    failure = classify_text("subprocess.CalledProcessError", text)
    assert isinstance(failure, Failure)
    assert (failure.code, failure.kind) == (FC.BUILD_FAILED, "build_error")


def test_a_child_killed_by_a_signal_is_killed() -> None:
    """"died with <Signals.SIGKILL: 9>" is FC-OS-005, as exit status 137 is."""
    text = str(subprocess.CalledProcessError(-9, "git push"))
    assert "died with" in text
    failure = classify_text("CalledProcessError", text)
    assert isinstance(failure, Failure)
    assert failure.code == FC.OS_KILLED
