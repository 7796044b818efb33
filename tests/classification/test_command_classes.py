"""Classes of commands new to the rules, each run for real: the shell's own missing path, a
refused connection, a comparison that found differences, an agent's framing of the output,
and failures a filter hid from a linter's or pytest's status.
"""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from failcode import FC, Failure, NoMatch, from_command
from failcode.triage.analysis._masking import masked_failure
from tests._needs import need_tool

if TYPE_CHECKING:
    from pathlib import Path


def _run(shell: str, command: str, cwd: Path) -> tuple[int, str, str]:
    done = subprocess.run([shell, "-c", command], cwd=cwd, capture_output=True, text=True,
                          check=False, timeout=120)
    return done.returncode, done.stdout, done.stderr


def _failure(command: str, cwd: Path, shell: str = "bash") -> Failure:
    code, out, err = _run(need_tool(shell), command, cwd)
    assert code != 0, (command, out, err)
    result = from_command(command, code, out, err, cwd=cwd)
    assert isinstance(result, Failure), (command, err, result)
    return result


# -- the shell's own "No such file or directory" ------------------------------------------------
@pytest.mark.parametrize("shell", ["bash", "dash"])
@pytest.mark.parametrize(("command", "speaker", "path"), [
    ("cd missing-dir", "cd", "missing-dir"),
    ("echo done > out/result.txt", None, "out/result.txt"),
    ("cd missing-dir && python -m pytest -q", "cd", "missing-dir"),
    ("sed -n 1p missing.md", "sed", "missing.md"),
    ("cat missing.md", "cat", "missing.md"),
    ("tail -n 3 missing.md", "tail", "missing.md"),
    ("cat missing.md | grep alpha", "cat", "missing.md"),
])
def test_a_missing_path_is_the_failure_of_who_said_it(
        tmp_path: Path, shell: str, command: str, speaker: str | None, path: str) -> None:
    """A path the command named that is not there is FC-CMD-003 (file_not_found) of the
    builtin, shell or program that said so, at that path; never of a program that never ran."""
    failure = _failure(command, tmp_path, shell)
    assert (failure.code, failure.error_class, failure.location) == (
        FC.CMD_FAILED.value, "file_not_found", path)
    assert failure.params["program"] == (speaker or shell)


def test_a_missing_program_is_still_a_missing_program(tmp_path: Path) -> None:
    """bash's ``./x: No such file or directory`` with exit 127 is a program that is not there."""
    failure = _failure("./not-there.sh", tmp_path)
    assert failure.code == FC.CMD_NOT_FOUND.value


# -- a refused connection -----------------------------------------------------------------------
def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again on leaving: nothing listens there


@pytest.mark.parametrize("client", ["curl -sS", "curl -s", "curl"])
def test_curl_that_could_not_connect_is_a_connection_failure(tmp_path: Path,
                                                             client: str) -> None:
    """curl's exit 7 ("Failed to connect"), with or without its message, is FC-OS-007."""
    need_tool("curl")
    failure = _failure(f"{client} --noproxy '*' http://127.0.0.1:{_closed_port()}/", tmp_path)
    assert (failure.code, failure.error_class) == (FC.OS_CONNECTION.value, "connection")


@pytest.mark.parametrize("script", [
    ("import urllib.request\nopener = urllib.request.build_opener("
     "urllib.request.ProxyHandler({{}}))\nopener.open('http://127.0.0.1:{port}/')\n"),
    "import socket\nsocket.create_connection(('127.0.0.1', {port}))\n",
    "import requests\nrequests.get('http://127.0.0.1:{port}/', proxies={{'http': ''}})\n",
])
def test_a_python_script_refused_a_connection_is_a_connection_failure(
        tmp_path: Path, script: str) -> None:
    """urllib's URLError around [Errno 111], ConnectionRefusedError and requests'
    ConnectionError are FC-OS-007, not an unknown command error."""
    (tmp_path / "fetch.py").write_text(script.format(port=_closed_port()))
    failure = _failure(f"{sys.executable} fetch.py", tmp_path)
    assert (failure.code, failure.kind) == (FC.OS_CONNECTION.value, "tool_error")


# -- comparisons --------------------------------------------------------------------------------
@pytest.mark.parametrize(("command", "probe"), [
    ("diff a.txt b.txt", "diff"), ("diff -u a.txt b.txt", "diff"), ("cmp a.txt b.txt", "cmp"),
    ("git diff --no-ext-diff --no-index --exit-code a.txt b.txt", "git diff"),
    ("git diff --no-ext-diff --no-index --quiet a.txt b.txt", "git diff"),
])
def test_a_comparison_that_found_differences_is_an_answer(tmp_path: Path, command: str,
                                                           probe: str) -> None:
    """diff, cmp and git diff --exit-code exiting 1 (files differ) are a NoMatch outcome."""
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    (tmp_path / "b.txt").write_text("alpha\ngamma\n")
    code, out, err = _run(need_tool("bash"), command, tmp_path)
    assert code == 1
    result = from_command(command, code, out, err)
    assert isinstance(result, NoMatch)
    assert result.probe == probe


def test_a_comparison_in_trouble_is_a_failure(tmp_path: Path) -> None:
    """diff's exit 2 (an operand is missing) is a failure, not an answer."""
    (tmp_path / "a.txt").write_text("alpha\n")
    failure = _failure("diff a.txt missing.txt", tmp_path)
    assert (failure.error_class, failure.location) == ("file_not_found", "missing.txt")


# -- an agent's framing -------------------------------------------------------------------------
@pytest.mark.parametrize("frame", [
    "Output: {}", "Output:\n{}", "<untrusted_context>\n{}\n</untrusted_context>",
    "<untrusted_context source=\"shell\">{}</untrusted_context>", "{}",
])
def test_framing_does_not_hide_the_tools_words(tmp_path: Path, frame: str) -> None:
    """A framed output gives the failure the tool's own output gives."""
    (tmp_path / "app.py").write_text("import os\n")
    need_tool("ruff")
    command = "ruff check --no-cache --output-format concise app.py"
    code, out, err = _run(need_tool("bash"), command, tmp_path)
    plain = from_command(command, code, out, err)
    indented = "\n".join("    " + line for line in out.splitlines())
    for text in (frame.format(out), frame.format(indented)):
        framed = from_command(command, code, text, err)
        assert isinstance(framed, Failure)
        assert isinstance(plain, Failure)
        assert (framed.code, framed.error_class, framed.location) == (
            plain.code, plain.error_class, plain.location), text


# -- failures a filter hid ----------------------------------------------------------------------
@pytest.mark.parametrize("command", [
    "mypy --no-incremental typed.py || true", "mypy --no-incremental typed.py | head -1",
    "ruff check --no-cache unused.py | head -1", "ruff check --no-cache unused.py || true",
    "ruff check --no-cache --output-format concise unused.py | tail -2",
])
def test_a_linter_behind_a_filter_is_a_masked_static_analysis_failure(
        tmp_path: Path, command: str) -> None:
    """A type checker's or linter's own diagnostics behind ``|| true`` or ``| head -1`` are a
    static_analysis_error of the inner command."""
    (tmp_path / "typed.py").write_text("def label(count: int) -> str:\n    return count\n")
    (tmp_path / "unused.py").write_text("import os\n")
    code, out, err = _run(need_tool("bash"), command, tmp_path)
    assert code == 0
    found = masked_failure(command, out + err)
    assert found is not None
    inner, status = found
    failure = from_command(inner, status, out + err)
    assert isinstance(failure, Failure)
    assert failure.kind == "static_analysis_error"


@pytest.mark.parametrize("command", [
    "python -m pytest -q -p no:cacheprovider --bogus-option 2>&1 | tail -4",
    "python -m pytest -q -p no:cacheprovider 2>&1 | tail -5",
])
def test_pytest_refusing_to_run_behind_a_filter_is_masked(tmp_path: Path, command: str) -> None:
    """pytest's usage and conftest errors (exit 4) behind ``| tail`` are a masked failure."""
    (tmp_path / "conftest.py").write_text("import not_installed_anywhere_xyz\n")
    (tmp_path / "test_a.py").write_text("def test_a():\n    pass\n")
    code, out, err = _run(need_tool("bash"), command.replace("python", sys.executable, 1),
                          tmp_path)
    assert code == 0
    assert masked_failure(command, out + err) is not None


def test_a_linter_that_found_nothing_is_not_masked(tmp_path: Path) -> None:
    """A clean linter run behind a filter shows no failure."""
    (tmp_path / "clean.py").write_text("VALUE = 1\n")
    command = "ruff check --no-cache clean.py | head -1"
    code, out, err = _run(need_tool("bash"), command, tmp_path)
    assert code == 0
    assert masked_failure(command, out + err) is None


@pytest.mark.parametrize("command", [
    "python crash.py 2>&1 | head -3", "python crash.py 2>&1 | tail -4",
    "python crash.py 2>&1 | grep -A3 'in load'", "python crash.py; echo done",
])
def test_a_crash_cut_by_a_filter_is_still_masked(tmp_path: Path, command: str) -> None:
    """A traceback whose head or tail a filter cut off, with an exception of any name
    (``conf.ImproperlyConfigured``), is a masked failure."""
    (tmp_path / "conf.py").write_text(
        "class ImproperlyConfigured(Exception):\n    pass\n\n\n"
        "def load():\n    raise ImproperlyConfigured('SECRET_KEY must not be empty')\n")
    (tmp_path / "crash.py").write_text("import conf\n\n\ndef main():\n    conf.load()\n\n\n"
                                       "main()\n")
    code, out, err = _run(need_tool("bash"), command.replace("python", sys.executable, 1),
                          tmp_path)
    assert code == 0
    assert masked_failure(command, out + err) is not None, out + err


def test_an_install_that_failed_behind_a_filter_is_masked(tmp_path: Path) -> None:
    """pip's own verdict (no matching distribution) behind ``| tail`` is a masked failure;
    the inner command classifies as the missing package."""
    command = "python -m pip install --no-index failcode-no-such-package-xyz 2>&1 | tail -2"
    code, out, err = _run(need_tool("bash"), command.replace("python", sys.executable, 1),
                          tmp_path)
    assert code == 0
    found = masked_failure(command, out + err)
    assert found is not None
    failure = from_command(found[0], found[1], out + err)
    assert isinstance(failure, Failure)
    assert failure.code == FC.CMD_PACKAGE_NOT_FOUND.value


# -- the Go compiler ----------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["go build ./...", "go build -o app ."])
def test_go_compiler_errors_carry_their_class_and_file(tmp_path: Path, command: str) -> None:
    """``./main.go:5:2: undefined: x`` under ``# example.com/m``: the class, the missing name
    and the file."""
    need_tool("go")
    (tmp_path / "go.mod").write_text("module example.com/m\n\ngo 1.19\n")
    (tmp_path / "main.go").write_text("package main\n\nfunc main() {\n\tprintln(missingName)\n}\n")
    env_command = f"GOFLAGS=-mod=mod GOTOOLCHAIN=local GOPROXY=off {command}"
    failure = _failure(env_command, tmp_path)
    assert (failure.kind, failure.error_class, failure.location) == (
        "build_error", "undeclared_identifier", "main.go")
    assert "missingName" in str(failure.params.get("problem"))


def test_curl_saying_it_could_not_connect_is_a_connection_failure_without_a_status(
        tmp_path: Path) -> None:
    """A log that kept curl's words but not its status (1 for "failed"): curl's own
    ``curl: (7)`` names the connection failure."""
    need_tool("curl")
    command = f"curl -sS --noproxy '*' http://127.0.0.1:{_closed_port()}/"
    _code, out, err = _run(need_tool("bash"), command, tmp_path)
    failure = from_command(command, 1, out, err)
    assert isinstance(failure, Failure)
    assert failure.code == FC.OS_CONNECTION.value

