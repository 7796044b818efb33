"""``shell_failed`` over the output of REAL tools run here in a temporary directory.

Several formats keep a shell command's output and no exit status (SWE-agent's observations,
aider's chat history, Gemini CLI's stream-json): their readers judge the command from its
output with :func:`~failcode.triage.readers._swe_agent.shell_failed`. Each tool below is run
twice, failing and succeeding, and its combined stdout and stderr (what a terminal, and so the
log, shows) is fed to it: a failure gives the status the tool itself exited with where its
wording implies one (127 for a missing program, curl's own ``curl: (N)``), and a success gives
None, even when its output mentions ``FAIL``, ``error`` or a count of no failures. Tools are
looked up on PATH (TypeScript also in the repo-local ``.cache/npm`` that scripts/test.sh
fills); outside CI a missing one skips its tests, with CI=true it fails them.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest

from failcode.triage.readers._swe_agent import shell_failed
from tests._needs import missing, need_tool
from tests._paths import REPO

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@dataclass(frozen=True, slots=True)
class Ran:
    """One real command: its exit status and what it printed (stdout and stderr as one)."""

    returncode: int
    output: str


def run(argv: list[str], cwd: Path, *, env: dict[str, str] | None = None) -> Ran:
    """Run ``argv`` in ``cwd`` (C locale, no colour) and keep its status and output."""
    environment = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8", NO_COLOR="1")
    environment.pop("PYTEST_ADDOPTS", None)
    environment.update(env or {})
    proc = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          env=environment, timeout=300, check=False)
    return Ran(proc.returncode, proc.stdout.decode("utf-8", "replace"))


def write(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (name -> dedented text) under ``root``."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def failed_as_the_tool(ran: Ran) -> None:
    """The tool failed, and ``shell_failed`` gives the status the tool exited with."""
    assert ran.returncode != 0, ran
    assert shell_failed(ran.output) == ran.returncode, ran


def failed(ran: Ran) -> None:
    """The tool failed, and ``shell_failed`` sees a failure (its wording implies no status)."""
    assert ran.returncode != 0, ran
    assert shell_failed(ran.output) is not None, ran


def no_failure(ran: Ran, *, status: int = 0) -> None:
    """The tool exited ``status`` (0, or diff's 1 for differences) and its output shows no
    failure."""
    assert ran.returncode == status, ran
    assert shell_failed(ran.output) is None, ran


# -- a shell: a program that is not there ------------------------------------------------------
class TestMissingProgram:
    def test_bash_c_says_command_not_found_and_exits_127(self, tmp_path: Path) -> None:
        """``bash: X: command not found`` is 127."""
        failed_as_the_tool(run([need_tool("bash"), "-c", "nosuchcmd-failcode"], tmp_path))

    def test_bash_by_its_path_names_the_line(self, tmp_path: Path) -> None:
        """``/usr/bin/bash: line N: X: command not found`` (a group of commands) is 127."""
        ran = run([need_tool("bash"), "-c", "{ true\nnosuchcmd-failcode\n}"], tmp_path)
        assert ": line 2: nosuchcmd-failcode: command not found" in ran.output, ran
        failed_as_the_tool(ran)

    def test_a_bash_script_names_itself_and_the_line(self, tmp_path: Path) -> None:
        """``script.sh: line N: X: command not found`` is 127."""
        write(tmp_path, {"script.sh": "true\nnosuchcmd-failcode\n"})
        ran = run([need_tool("bash"), "script.sh"], tmp_path)
        assert ran.output.startswith("script.sh: line 2: "), ran
        failed_as_the_tool(ran)

    def test_dash_says_not_found(self, tmp_path: Path) -> None:
        """dash's ``sh: 1: X: not found`` is 127."""
        failed_as_the_tool(run([need_tool("dash"), "-c", "nosuchcmd-failcode"], tmp_path))

    def test_a_script_that_looked_for_a_program_did_not_fail(self, tmp_path: Path) -> None:
        """A line that only mentions "command not found" is no missing program."""
        script = ("command -v nosuchcmd-failcode "
                  "|| echo 'nosuchcmd-failcode: command not found on PATH, using the fallback'")
        no_failure(run([need_tool("bash"), "-c", script], tmp_path))


# -- curl --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A local HTTP server on 127.0.0.1 serving one page, ``/health``."""
    root = write(tmp_path_factory.mktemp("www"), {"health": "FAIL count: 0, error: none\n"})
    handler = partial(SimpleHTTPRequestHandler, directory=str(root))

    class Quiet(ThreadingHTTPServer):
        def handle_error(self, *_: Any) -> None:
            """curl hanging up is no error of the test's."""

    httpd = Quiet(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _closed_port() -> int:
    """A port of 127.0.0.1 nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


class TestCurl:
    def test_a_refused_connection_is_curls_7(self, tmp_path: Path) -> None:
        """``curl: (7) Failed to connect`` gives curl's own status, 7."""
        ran = run([need_tool("curl"), "-sS", "--noproxy", "*",
                   f"http://127.0.0.1:{_closed_port()}/health"], tmp_path)
        failed_as_the_tool(ran)

    def test_an_http_error_under_fail_is_curls_22(self, tmp_path: Path, server: str) -> None:
        """``curl -f`` of a missing page: ``curl: (22) The requested URL returned error``."""
        failed_as_the_tool(run([need_tool("curl"), "-sSf", "--noproxy", "*",
                                f"{server}/missing"], tmp_path))

    def test_a_page_fetched_is_no_failure(self, tmp_path: Path, server: str) -> None:
        """A page whose text mentions FAIL and error, fetched, is a success."""
        ran = run([need_tool("curl"), "-sS", "--noproxy", "*", f"{server}/health"], tmp_path)
        assert "FAIL" in ran.output, ran
        no_failure(ran)


# -- go test -----------------------------------------------------------------------------------
_GO_MOD = "module example.com/lab\n\ngo 1.18\n"
_GO_FAILING = """\
    package lab

    import "testing"

    func TestMax(t *testing.T) {
    \tt.Errorf("Max(2, 7) = 2, want 7")
    }

    func TestTable(t *testing.T) {
    \tt.Run("negative", func(t *testing.T) { t.Error("wrong sign") })
    }
"""
_GO_PASSING = """\
    package lab

    import "testing"

    func TestFailoverReportsNoError(t *testing.T) {
    \tt.Log("FAIL and error: are only words here")
    }
"""


@pytest.fixture(scope="module")
def go_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Ran]:
    """``go test ./...`` of a failing test, a package that does not build, a passing test
    (``-v``, logging ``FAIL``)."""
    go = need_tool("go")
    root = tmp_path_factory.mktemp("go")
    env = {"GOCACHE": str(root / "cache"), "GOPATH": str(root / "path"), "GOFLAGS": "-mod=mod",
           "GOPROXY": "off", "GOTOOLCHAIN": "local", "GO111MODULE": "on", "CGO_ENABLED": "0"}
    cases = {"failing": ([], _GO_FAILING), "build": ([], "package lab\n\nfunc f() { g() }\n"),
             "passing": (["-v"], _GO_PASSING)}
    runs = {}
    for name, (flags, source) in cases.items():
        folder = write(root / name, {"go.mod": _GO_MOD, "lab_test.go": source})
        runs[name] = run([go, "test", *flags, "./..."], folder, env=env)
    return runs


class TestGoTest:
    def test_a_failing_test_is_1(self, go_runs: dict[str, Ran]) -> None:
        """``--- FAIL: TestMax (0.00s)`` and ``FAIL\\t<pkg>\\t0.003s``: go test exits 1."""
        assert "--- FAIL: TestMax" in go_runs["failing"].output
        failed_as_the_tool(go_runs["failing"])

    def test_a_package_that_does_not_build_is_2(self, go_runs: dict[str, Ran]) -> None:
        """``FAIL\\t<pkg> [build failed]``: the go command exits 2."""
        assert "[build failed]" in go_runs["build"].output
        failed_as_the_tool(go_runs["build"])

    def test_a_passing_run_that_logs_fail_is_no_failure(self, go_runs: dict[str, Ran]) -> None:
        """``--- PASS: TestFailover...`` with a log line saying FAIL and error: a success."""
        assert "FAIL and error:" in go_runs["passing"].output
        no_failure(go_runs["passing"])


# -- node --test -------------------------------------------------------------------------------
_NODE_FAILING = """\
    import test from 'node:test';
    import assert from 'node:assert';
    test('mul multiplies', () => { assert.strictEqual(7, 12); });
    test('add adds', () => { assert.strictEqual(1 + 1, 2); });
"""
_NODE_PASSING = """\
    import test from 'node:test';
    test('fail 1', () => {});
    test('error: none', () => {});
"""


@pytest.fixture(scope="module")
def node_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Ran]:
    """``node --test`` of a failing and a passing file, with the TAP and spec reporters."""
    node = need_tool("node")
    root = write(tmp_path_factory.mktemp("node"), {"failing.test.mjs": _NODE_FAILING,
                                                    "passing.test.mjs": _NODE_PASSING})
    return {(case, reporter): run([node, "--test", f"--test-reporter={reporter}",
                                   f"{case}.test.mjs"], root)
            for case in ("failing", "passing") for reporter in ("tap", "spec")}


class TestNodeTest:
    @pytest.mark.parametrize("reporter", ["tap", "spec"])
    def test_a_failing_test_is_1(self, node_runs: dict[tuple[str, str], Ran],
                                 reporter: str) -> None:
        """``# fail 1`` (TAP), ``\u2139 fail 1`` and ``\u2716 failing tests:`` (spec)."""
        failed_as_the_tool(node_runs["failing", reporter])

    @pytest.mark.parametrize("reporter", ["tap", "spec"])
    def test_a_passing_run_is_no_failure(self, node_runs: dict[tuple[str, str], Ran],
                                         reporter: str) -> None:
        """``# fail 0``, and tests named "fail 1" and "error: none", are a success."""
        no_failure(node_runs["passing", reporter])


# -- gcc and the linker ------------------------------------------------------------------------
class TestLinker:
    @pytest.mark.parametrize("debug", [[], ["-g"]], ids=["section", "source-line"])
    def test_an_undefined_reference_is_1(self, tmp_path: Path, debug: list[str]) -> None:
        """ld's ``main.c:(.text+0xa): undefined reference to `helper'`` (or, with ``-g``,
        ``/src/main.c:2: ...``) and collect2's ``ld returned 1 exit status``."""
        write(tmp_path, {"main.c": "int helper(int);\nint main(void) { return helper(3); }\n"})
        ran = run([need_tool("gcc"), *debug, "main.c", "-o", "main"], tmp_path)
        assert "undefined reference to" in ran.output, ran
        failed_as_the_tool(ran)

    def test_the_undefined_reference_alone_is_1(self, tmp_path: Path) -> None:
        """ld's own lines, without gcc's ``collect2`` line after them, are a failure."""
        write(tmp_path, {"main.c": "int helper(int);\nint main(void) { return helper(3); }\n"})
        ran = run([need_tool("gcc"), "main.c", "-o", "main"], tmp_path)
        ld_only = "\n".join(line for line in ran.output.splitlines()
                            if not line.startswith("collect2:"))
        assert "undefined reference to" in ld_only, ran
        assert shell_failed(ld_only) == 1

    def test_a_link_with_warnings_is_no_failure(self, tmp_path: Path) -> None:
        """gcc's warnings (``warning: unused variable``) on a program that links: a success."""
        write(tmp_path, {"main.c": "int main(void) { int error = 0; return 0; }\n"})
        ran = run([need_tool("gcc"), "-Wall", "main.c", "-o", "main"], tmp_path)
        assert "warning:" in ran.output, ran
        no_failure(ran)


# -- pip ---------------------------------------------------------------------------------------
class TestPip:
    def test_a_version_that_does_not_exist_is_1(self, tmp_path: Path) -> None:
        """``ERROR: Could not find a version that satisfies the requirement`` and ``ERROR: No
        matching distribution found for``: pip exits 1."""
        ran = run([sys.executable, "-m", "pip", "install", "--no-index", "--dry-run",
                   "--disable-pip-version-check", "pip==0.0.0.1"], tmp_path)
        assert "No matching distribution found for" in ran.output, ran
        failed_as_the_tool(ran)

    def test_a_requirement_already_satisfied_is_no_failure(self, tmp_path: Path) -> None:
        """``Requirement already satisfied: pip``: a success."""
        no_failure(run([sys.executable, "-m", "pip", "install", "--no-index", "--dry-run",
                        "--disable-pip-version-check", "pip"], tmp_path))


# -- diff and cmp: differences are an outcome, trouble a failure -------------------------------
class TestComparers:
    @pytest.mark.parametrize("argv", [["diff"], ["diff", "-u"], ["cmp"]],
                             ids=["diff", "diff-u", "cmp"])
    def test_differences_are_no_failure(self, tmp_path: Path, argv: list[str]) -> None:
        """Files that differ: exit 1, an answer (``NoMatch`` when the status is known), no
        failure."""
        write(tmp_path, {"expected.txt": "alpha\nbeta\n", "actual.txt": "alpha\ngamma\n"})
        ran = run([need_tool(argv[0]), *argv[1:], "expected.txt", "actual.txt"], tmp_path)
        assert ran.output, ran
        no_failure(ran, status=1)

    @pytest.mark.parametrize("program", ["diff", "cmp"])
    def test_the_same_files_are_no_failure(self, tmp_path: Path, program: str) -> None:
        """Files that are the same: exit 0, nothing printed."""
        write(tmp_path, {"a.txt": "alpha\n", "b.txt": "alpha\n"})
        no_failure(run([need_tool(program), "a.txt", "b.txt"], tmp_path))

    @pytest.mark.parametrize("program", ["diff", "cmp"])
    def test_a_missing_file_is_trouble_2(self, tmp_path: Path, program: str) -> None:
        """``diff: missing.txt: No such file or directory``: trouble, exit 2 (not the 1 of
        differences found)."""
        write(tmp_path, {"a.txt": "alpha\n"})
        failed_as_the_tool(run([need_tool(program), "a.txt", "missing.txt"], tmp_path))


# -- tsc ---------------------------------------------------------------------------------------
def _tsc() -> str:
    local = REPO / ".cache" / "npm" / "node_modules" / ".bin" / "tsc"
    if local.is_file():
        return str(local)
    found = shutil.which("tsc")
    if found is None:
        missing("tsc is not installed (scripts/test.sh installs it)")
    return found


class TestTsc:
    def test_a_type_error_is_a_failure(self, tmp_path: Path) -> None:
        """``app.ts(1,5): error TS2322: ...`` (tsc exits 1 or 2 by whether it emitted)."""
        write(tmp_path, {"app.ts": 'let count: number = "three";\n'})
        failed(run([_tsc(), "app.ts"], tmp_path))

    def test_a_program_that_compiles_is_no_failure(self, tmp_path: Path) -> None:
        """tsc on a correct file prints nothing and exits 0."""
        write(tmp_path, {"app.ts": "const errors: number = 0;\nexport { errors };\n"})
        no_failure(run([_tsc(), "app.ts"], tmp_path))


# -- a count of no failures --------------------------------------------------------------------
def test_cargo_tests_that_pass_with_0_failed_are_no_failure(tmp_path: Path) -> None:
    """``test result: ok. 1 passed; 0 failed; ...``: a count of none is no failure."""
    cargo = need_tool("cargo")
    write(tmp_path, {
        "Cargo.toml": '[package]\nname = "lab"\nversion = "0.1.0"\nedition = "2021"\n',
        "src/lib.rs": "#[test]\nfn adds() { assert_eq!(1 + 1, 2); }\n"})
    ran = run([cargo, "test", "--offline", "--quiet"], tmp_path,
              env={"CARGO_TARGET_DIR": str(tmp_path / "target"), "CARGO_TERM_COLOR": "never"})
    assert "0 failed" in ran.output, ran
    no_failure(ran)
