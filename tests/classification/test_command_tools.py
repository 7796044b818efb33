"""from_command over the output of REAL tools run in a temporary directory.

Every tool is looked up on PATH (TypeScript also in the repo-local ``.cache/npm`` that
scripts/test.sh fills). Outside CI a missing tool skips its tests; with CI=true it fails them.
Compilers are slow, so each module-scoped fixture compiles its cases once.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from failcode import FC, Cancelled, Failure, NoMatch, from_command
from tests._needs import missing
from tests._paths import REPO


def tool(name: str) -> str:
    """The path of ``name``; skips (or fails when CI=true) when it is not installed."""
    candidates = [REPO / ".cache" / "npm" / "node_modules" / ".bin" / name] if name == "tsc" \
        else []
    for candidate in candidates:
        if candidate.is_file():
            return str(candidate)
    found = shutil.which(name)
    if found is None:
        missing(f"{name} is not installed (scripts/test.sh installs it)")
    return found


@dataclass(frozen=True)
class Run:
    """One real command and what it printed."""

    argv: list[str] | str
    cwd: Path
    returncode: int
    stdout: bytes
    stderr: bytes

    def classify(self, purpose: str = "general", **kwargs: object) -> object:
        return from_command(self.argv, self.returncode, self.stdout, self.stderr,
                            purpose=purpose, cwd=str(self.cwd), **kwargs)  # type: ignore[arg-type]

    def failure(self, purpose: str = "general") -> Failure:
        result = self.classify(purpose)
        assert isinstance(result, Failure), (result, self.stdout, self.stderr)
        return result


def run(argv: list[str] | str, cwd: Path, *, env: dict[str, str] | None = None) -> Run:
    """Run ``argv`` (a list, or a bash script string) in ``cwd`` and keep its output."""
    command = ["bash", "-c", argv] if isinstance(argv, str) else argv
    environment = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8", NO_COLOR="1")
    environment.pop("PYTEST_ADDOPTS", None)
    environment.update(env or {})
    proc = subprocess.run(command, cwd=cwd, capture_output=True, env=environment, timeout=300,
                          check=False)
    return Run(argv, cwd, proc.returncode, proc.stdout, proc.stderr)


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


# -- C and C++: gcc, g++, clang, ld ------------------------------------------------------------
C_CASES = {
    "undefined_reference": ("main.c", "int foo(void);\nint main(void) { return foo(); }\n"),
    "undeclared_identifier": ("main.c", "int main(void) { return bar + 1; }\n"),
    "missing_header": ("src/main.c", '#include "nothere.h"\nint main(void) { return 0; }\n'),
    "syntax_error": ("main.c", "int main(void) { return 0 }\n"),
    "type_mismatch": ("main.c", ("struct S { int a; };\n"
                                 "int main(void) { struct S s = {1}; int *p = s; return 0; }\n")),
}
CXX_CASES = {
    "undefined_reference": ("main.cpp", "int foo();\nint main() { return foo(); }\n"),
    "undeclared_identifier": ("main.cpp", "int main() { return baz; }\n"),
    "missing_header": ("src/main.cpp", "#include <nothere.hpp>\nint main() { return 0; }\n"),
    "syntax_error": ("main.cpp", "int main() { return 0 }\n"),
    "type_mismatch": ("main.cpp", "int f(int*);\nint main() { return f(1.5); }\n"),
}


def compile_cases(compiler: str, cases: dict[str, tuple[str, str]],
                  root: Path) -> dict[str, Run]:
    runs = {}
    for error_class, (name, source) in cases.items():
        case_dir = write(root / error_class, {name: source})
        runs[error_class] = run([compiler, "-o", "prog", name], case_dir)
    return runs


@pytest.fixture(scope="module")
def gcc_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    return compile_cases(tool("gcc"), C_CASES, tmp_path_factory.mktemp("gcc"))


@pytest.fixture(scope="module")
def gxx_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    return compile_cases(tool("g++"), CXX_CASES, tmp_path_factory.mktemp("gxx"))


@pytest.fixture(scope="module")
def clang_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    return compile_cases(tool("clang"), C_CASES, tmp_path_factory.mktemp("clang"))


@pytest.mark.parametrize("fixture", ["gcc_runs", "gxx_runs", "clang_runs"])
@pytest.mark.parametrize("error_class", list(C_CASES))
def test_c_family_build_failure_has_parsed_class_and_location(
        fixture: str, error_class: str, request: pytest.FixtureRequest) -> None:
    """gcc/g++/clang (and ld) build failures carry the parsed class and the source file."""
    runs: dict[str, Run] = request.getfixturevalue(fixture)
    failure = runs[error_class].failure("build")
    assert failure.kind == "build_error"
    assert failure.category == "task"
    assert failure.retryability == "retryable_after_change"
    assert failure.error_class == error_class
    assert failure.surface == "cpp.build"
    expected_location = C_CASES[error_class][0] if fixture != "gxx_runs" else (
        CXX_CASES[error_class][0])
    assert failure.location == expected_location  # the including file for a missing header
    assert "diagnostic" not in failure.metadata  # gcc and clang print no diagnostic code
    assert failure.metadata["exit_code"] == 1
    assert failure.detail


@pytest.mark.parametrize(("error_class", "identity"), [
    ("undefined_reference", "foo"), ("undeclared_identifier", "bar"),
    ("missing_header", "nothere.h"),
])
def test_gcc_identity_is_in_the_message(gcc_runs: dict[str, Run], error_class: str,
                                        identity: str) -> None:
    """The missing symbol or header is named in the message, hence in the signature."""
    failure = gcc_runs[error_class].failure("build")
    assert failure.code == FC.BUILD_DIAGNOSTIC
    assert identity in failure.message


def test_gcc_failure_in_general_purpose_is_a_command_error(gcc_runs: dict[str, Run]) -> None:
    """A compiler failing under purpose general is a command_error with the parsed class."""
    failure = gcc_runs["undeclared_identifier"].failure("general")
    assert failure.kind == "command_error"
    assert failure.error_class == "undeclared_identifier"
    assert failure.location == "main.c"


def test_gcc_failure_under_debug_takes_the_target_diagnostic(gcc_runs: dict[str, Run]) -> None:
    """Debugging a target whose build fails reports the build's own diagnostic."""
    failure = gcc_runs["syntax_error"].failure("debug")
    assert failure.kind == "build_error"
    assert failure.error_class == "syntax_error"


def _gcc_signature(root: Path, source: str, *, lang: str = "C.UTF-8") -> str:
    write(root, {"main.c": source})
    result = run([tool("gcc"), "-c", "-o", "main.o", "main.c"], root,
                 env={"LANG": lang, "LC_ALL": lang})
    failure = result.failure("build")
    return failure.signature


UNDECLARED = "int main(void) { return bar + 1; }\n"


def test_signature_same_in_two_directories(tmp_path: Path) -> None:
    """The same compiler error in two different temp directories has one signature."""
    assert _gcc_signature(tmp_path / "a", UNDECLARED) == _gcc_signature(
        tmp_path / "elsewhere" / "b", UNDECLARED)


def test_signature_same_when_shifted_down(tmp_path: Path) -> None:
    """Moving the error down a few lines (other line and column numbers) keeps the signature."""
    shifted = "/* a */\n\n\n#include <stddef.h>\n\n" + UNDECLARED.replace("return", "  return")
    assert _gcc_signature(tmp_path / "a", UNDECLARED) == _gcc_signature(tmp_path / "b", shifted)


def test_signature_same_under_lang_c_and_utf8(tmp_path: Path) -> None:
    """gcc's 'bar' (LANG=C) and U+2018 bar U+2019 (UTF-8) quotes give one signature."""
    plain = run([tool("gcc"), "-c", "main.c"], write(tmp_path / "c", {"main.c": UNDECLARED}),
                env={"LANG": "C", "LC_ALL": "C"})
    fancy = run([tool("gcc"), "-c", "main.c"], write(tmp_path / "u", {"main.c": UNDECLARED}),
                env={"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"})
    assert b"\xe2\x80\x98" in fancy.stderr  # the run really printed typographic quotes
    assert b"\xe2\x80\x98" not in plain.stderr
    assert plain.failure("build").signature == fancy.failure("build").signature


def test_signature_differs_for_different_symbols(tmp_path: Path) -> None:
    """Two different undeclared identifiers in the same file give different signatures."""
    other = UNDECLARED.replace("bar", "qux")
    assert _gcc_signature(tmp_path / "a", UNDECLARED) != _gcc_signature(tmp_path / "b", other)


def test_signature_differs_for_different_undefined_references(tmp_path: Path) -> None:
    """Linking against two different missing functions gives different signatures."""
    signatures = set()
    for name in ("foo", "foo_v2"):
        root = write(tmp_path / name, {"main.c": f"int {name}(void);\n"
                                                 f"int main(void) {{ return {name}(); }}\n"})
        signatures.add(run([tool("gcc"), "-o", "prog", "main.c"], root).failure(
            "build").signature)
    assert len(signatures) == 2


def test_undefined_reference_with_debug_info_names_the_repo_relative_source(
        tmp_path: Path) -> None:
    """ld naming the referencing source by absolute path and line (gcc -g, source given as an
    absolute path) gives its location relative to the command's directory, without the line."""
    root = write(tmp_path / "proj", {"src/main.c": "void f(void);\nint main(void) {\n"
                                                   "  f();\n  return 0;\n}\n"})
    compiled = run([tool("gcc"), "-g", "-c", str(root / "src" / "main.c"), "-o", "main.o"], root)
    assert compiled.returncode == 0, compiled.stderr
    linked = run([tool("gcc"), "main.o", "-o", "app"], root)
    assert f"{root}/src/main.c:3: undefined reference".encode() in linked.stderr
    failure = linked.failure("build")
    assert (failure.error_class, failure.location) == ("undefined_reference", "src/main.c")


# -- Rust: rustc and cargo ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def rust_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    root = tmp_path_factory.mktemp("rust")
    write(root, {
        "e0425.rs": 'fn main() {\n    println!("{}", foo);\n}\n',
        "e0308.rs": 'fn main() {\n    let x: i32 = "a";\n    let _ = x;\n}\n',
        "crate/Cargo.toml": '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n',
        "crate/src/main.rs": "fn main() {\n    let _y = missing_fn();\n}\n",
    })
    rustc = tool("rustc")
    return {
        "E0425": run([rustc, "--edition", "2021", "-o", "out", "e0425.rs"], root),
        "E0308": run([rustc, "--edition", "2021", "-o", "out", "e0308.rs"], root),
        "cargo": run([tool("cargo"), "build", "--offline", "--quiet"], root / "crate",
                     env={"CARGO_TARGET_DIR": str(root / "target"), "CARGO_TERM_COLOR": "never"}),
    }


@pytest.mark.parametrize(("case", "error_class", "location"), [
    ("E0425", "undeclared_identifier", "e0425.rs"),
    ("E0308", "type_mismatch", "e0308.rs"),
])
def test_rustc_error_code_is_the_diagnostic(rust_runs: dict[str, Run], case: str,
                                            error_class: str, location: str) -> None:
    """rustc's E-code is metadata["diagnostic"]; the class and file are parsed."""
    failure = rust_runs[case].failure("build")
    assert failure.metadata["diagnostic"] == case
    assert failure.error_class == error_class
    assert failure.location == location
    assert failure.surface == "rust.build"


def test_cargo_build_failure_names_the_missing_function(rust_runs: dict[str, Run]) -> None:
    """cargo's wrapped rustc error keeps the code, the crate-relative file and the name."""
    failure = rust_runs["cargo"].failure("build")
    assert failure.metadata["diagnostic"] == "E0425"
    assert failure.location == "src/main.rs"
    assert "missing_fn" in failure.message
    assert failure.metadata["exit_code"] == 101


@pytest.mark.parametrize("target", ["unit test", "doctest"])
def test_cargo_test_failure_is_a_failed_test_however_the_streams_arrive(
        tmp_path: Path, target: str) -> None:
    """``cargo test`` with a failing test prints the test's panic on stdout and its own
    ``error: test failed, to rerun pass ...`` on stderr: a failed test, never a compile error,
    with the streams apart (``failcode run``) or merged in either order (an agent's log)."""
    lib = ('/// ```\n/// assert_eq!(demo::double(5), 10);\n/// ```\n' if target == "doctest"
           else "")
    lib += "pub fn double(x: i32) -> i32 {\n    x + 2\n}\n"
    if target == "unit test":
        lib += ("#[cfg(test)]\nmod tests {\n    #[test]\n    fn doubles() {\n"
                "        assert_eq!(super::double(5), 10);\n    }\n}\n")
    write(tmp_path, {"Cargo.toml": '[package]\nname = "demo"\nversion = "0.1.0"\n'
                                   'edition = "2021"\n', "src/lib.rs": lib})
    done = run([tool("cargo"), "test", "--offline", "-q"], tmp_path,
               env={"CARGO_TERM_COLOR": "never", "RUST_BACKTRACE": "0"})
    assert done.returncode == 101, done.stderr
    assert b"test failed, to rerun pass" in done.stderr
    out, err = done.stdout.decode(), done.stderr.decode()
    found = {arrangement: from_command("cargo test --offline -q", 101, stdout, stderr)
             for arrangement, (stdout, stderr) in {
                 "apart": (out, err), "stdout first": ("", out + err),
                 "stderr first": ("", err + out)}.items()}
    for arrangement, failure in found.items():
        assert isinstance(failure, Failure), (arrangement, failure)
        assert (failure.kind, failure.error_class) == ("test_error", "test_failed"), (
            arrangement, failure.error_class, out, err)
    assert len({failure.signature for failure in found.values()}) == 1  # type: ignore[union-attr]


# -- Java: javac (maven when it can run offline) -----------------------------------------------
@pytest.fixture(scope="module")
def javac_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    root = tmp_path_factory.mktemp("java")
    write(root, {
        "src/A.java": "public class A {\n  public static void main(String[] a) {\n"
                      "    int x = missingValue;\n  }\n}\n",
        "src/B.java": "class B { void f( { } }\n",
    })
    javac = tool("javac")
    return {
        "symbol": run([javac, "-d", "out", "src/A.java"], root),
        "syntax": run([javac, "-d", "out", "src/B.java"], root),
    }


def test_javac_cannot_find_symbol(javac_runs: dict[str, Run]) -> None:
    """javac's 'cannot find symbol' is undeclared_identifier naming the symbol, with its key."""
    failure = javac_runs["symbol"].failure("build")
    assert failure.error_class == "undeclared_identifier"
    assert failure.location == "src/A.java"
    assert "missingValue" in failure.message
    assert str(failure.metadata["diagnostic"]).startswith("compiler.err.cant.resolve")
    assert failure.surface == "java.build"


def test_javac_syntax_error(javac_runs: dict[str, Run]) -> None:
    """A javac parse error is a syntax_error at the file."""
    failure = javac_runs["syntax"].failure("build")
    assert failure.error_class == "syntax_error"
    assert failure.location == "src/B.java"


def test_maven_compile_failure(tmp_path: Path) -> None:
    """mvn's [ERROR] file:[line,col] lines give the class and file (a real offline build).

    Debian packages Maven's plugins for offline builds (maven-debian-helper and
    libmaven-compiler-plugin-java, which scripts/test.sh installs): its settings file points
    Maven at that local repository, so no network is needed.
    """
    mvn = tool("mvn")
    settings = Path("/etc/maven/settings-debian.xml")
    if not settings.is_file():
        missing("Debian's offline Maven settings are not installed (maven-debian-helper)")
    write(tmp_path, {
        "pom.xml": """\
            <project xmlns="http://maven.apache.org/POM/4.0.0">
              <modelVersion>4.0.0</modelVersion>
              <groupId>t</groupId><artifactId>t</artifactId><version>1</version>
              <properties><maven.compiler.release>17</maven.compiler.release></properties>
            </project>
            """,
        "src/main/java/t/A.java": "package t;\nclass A { int f() { return missingValue; } }\n",
    })
    result = run([mvn, "-o", "-q", "-B", "-s", str(settings), "compile"], tmp_path)
    assert b"cannot find symbol" in result.stdout + result.stderr
    failure = result.failure("build")
    assert failure.error_class == "undeclared_identifier"
    assert failure.location == "src/main/java/t/A.java"
    assert failure.surface == "java.build"


# -- TypeScript, node, npm ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def tsc_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    root = write(tmp_path_factory.mktemp("ts"), {
        "src/app.ts": "export const n: number = 1;\nconsole.log(notDeclared);\n",
    })
    tsc = tool("tsc")
    tool("node")
    return run([tsc, "--noEmit", "--pretty", "false", "src/app.ts"], root)


def test_tsc_build_failure(tsc_run: Run) -> None:
    """tsc's TS2304 is undeclared_identifier with the code as the diagnostic."""
    failure = tsc_run.failure("build")
    assert failure.error_class == "undeclared_identifier"
    assert failure.metadata["diagnostic"] == "TS2304"
    assert failure.location == "src/app.ts"
    assert failure.surface == "ts.build"
    assert "notDeclared" in failure.message


def test_tsc_as_static_analysis_is_a_type_check_error(tsc_run: Run) -> None:
    """Run as a checker, tsc's error is a static_analysis_error of class type_check_error."""
    failure = tsc_run.failure("static_analysis")
    assert failure.code == FC.LINT_FAILED
    assert failure.error_class == "type_check_error"
    assert failure.surface == "ts.lint"


def test_node_uncaught_error_located_at_the_throw_site(tmp_path: Path) -> None:
    """node's uncaught error is located where it was thrown, not where it was called."""
    write(tmp_path, {
        "lib/thrower.js": "function boom() {\n  throw new TypeError('bad input 42');\n}\n"
                          "module.exports = { boom };\n",
        "main.js": "const { boom } = require('./lib/thrower');\nboom();\n",
    })
    failure = run([tool("node"), "main.js"], tmp_path).failure("general")
    assert failure.location == "lib/thrower.js"
    assert failure.metadata["diagnostic"] == "TypeError"
    assert failure.surface == "node.run"


def test_node_missing_package_is_a_missing_module(tmp_path: Path) -> None:
    """require() of a package that is not installed is FC.CMD_MISSING_MODULE naming it."""
    write(tmp_path, {"main.js": "require('left-pad-not-installed');\n"})
    failure = run([tool("node"), "main.js"], tmp_path).failure("general")
    assert failure.code == FC.CMD_MISSING_MODULE
    assert failure.params["module"] == "left-pad-not-installed"
    assert failure.location == "main.js"


def test_npm_missing_script(tmp_path: Path) -> None:
    """npm run of a script package.json lacks is class missing_script naming it."""
    write(tmp_path, {"package.json": '{"name": "t", "version": "1.0.0", "scripts": {}}\n'})
    result = run([tool("npm"), "run", "nope-script"], tmp_path,
                 env={"npm_config_update_notifier": "false"})
    failure = result.failure("build")
    assert failure.error_class == "missing_script"
    assert "nope-script" in failure.message


# -- Python: tracebacks, pytest, mypy, ruff -----------------------------------------------------
def test_python_traceback_located_at_innermost_frame_in_cwd(tmp_path: Path) -> None:
    """A traceback's location is the innermost frame inside cwd, not the library frame."""
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/helper.py": "import json\n\ndef load(text):\n    return json.loads(text)\n\n"
                         "def check(v):\n    raise ValueError(f'bad value {v}')\n",
        "main.py": "from pkg.helper import check, load\nload('{}')\ncheck(7)\n",
    })
    failure = run([sys.executable, "main.py"], tmp_path).failure("general")
    assert failure.location == "pkg/helper.py"
    assert failure.metadata["diagnostic"] == "ValueError"
    assert failure.surface == "python.run"


def test_python_traceback_signature_same_in_two_directories(tmp_path: Path) -> None:
    """The same traceback from two temp directories (other absolute paths) has one signature."""
    signatures = set()
    for name in ("one", "two"):
        root = write(tmp_path / name, {"app.py": "def f():\n    raise KeyError('k')\nf()\n"})
        signatures.add(run([sys.executable, "app.py"], root).failure("general").signature)
    assert len(signatures) == 1


@pytest.mark.parametrize("purpose", ["general", "build", "doctor", "debug"])
def test_python_missing_module_is_a_dependency_error(tmp_path: Path, purpose: str) -> None:
    """ModuleNotFoundError outside test collection is FC.CMD_MISSING_MODULE in any purpose."""
    write(tmp_path, {"app.py": "import not_installed_mod_zz\n"})
    failure = run([sys.executable, "app.py"], tmp_path).failure(purpose)
    assert failure.code == FC.CMD_MISSING_MODULE
    assert failure.params["module"] == "not_installed_mod_zz"
    assert failure.location == "app.py"


def test_python_dash_m_missing_module(tmp_path: Path) -> None:
    """`python -m missing` is a missing module named by the interpreter's one-line error."""
    failure = run([sys.executable, "-m", "not_installed_mod_zz"], tmp_path).failure("general")
    assert failure.code == FC.CMD_MISSING_MODULE
    assert failure.params["module"] == "not_installed_mod_zz"


@pytest.mark.parametrize("purpose", ["test", "static_analysis", "general"])
def test_a_missing_runner_module_is_a_dependency_error_in_every_purpose(
        tmp_path: Path, purpose: str) -> None:
    """`python -m <runner>` whose runner is not installed ran no test: a missing module, even
    when the command's purpose is to test (it is not a test collection error)."""
    failure = run([sys.executable, "-m", "not_installed_runner_zz", "tests/"],
                  tmp_path).failure(purpose)
    assert failure.code == FC.CMD_MISSING_MODULE
    assert failure.kind == "dependency_error"
    assert failure.params["module"] == "not_installed_runner_zz"


WRAPPED_IMPORT = """\
try:
    import not_installed_mod_zz
except ImportError as exc:
    raise {kind}("Could not import not_installed_mod_zz. Is it installed?") {link}
"""


@pytest.mark.parametrize(("kind", "link"), [
    ("ImportError", "from exc"), ("RuntimeError", "from exc"), ("ImportError", ""),
    ("Exception", "from exc"),
])
def test_an_import_wrapped_around_a_missing_module_is_the_missing_module(
        tmp_path: Path, kind: str, link: str) -> None:
    """A generic error raised from (or while handling) a ModuleNotFoundError, as Django's
    manage.py does, is the missing module the chain names."""
    write(tmp_path, {"manage.py": WRAPPED_IMPORT.format(kind=kind, link=link)})
    done = run([sys.executable, "manage.py"], tmp_path)
    assert b"No module named 'not_installed_mod_zz'" in done.stderr
    failure = done.failure("general")
    assert failure.code == FC.CMD_MISSING_MODULE
    assert failure.params["module"] == "not_installed_mod_zz"


def test_a_specific_error_raised_from_a_missing_module_stays_itself(tmp_path: Path) -> None:
    """A ValueError raised from a ModuleNotFoundError says more than the import: not missing."""
    write(tmp_path, {"app.py": WRAPPED_IMPORT.format(kind="ValueError", link="from exc")})
    failure = run([sys.executable, "app.py"], tmp_path).failure("general")
    assert failure.code != FC.CMD_MISSING_MODULE


def test_a_frame_in_the_interpreters_own_library_is_never_the_location(tmp_path: Path) -> None:
    """Debian's python3 keeps its standard library under /usr/lib/python3.X (a stable root):
    a ModuleNotFoundError raised inside importlib is not located there, and the same failure
    gets the signature it gets from an interpreter whose library lies elsewhere."""
    system = tool("/usr/bin/python3")
    code = "import importlib; importlib.import_module('not_installed_mod_zz')"
    done = run([system, "-c", code], tmp_path)
    assert b"/usr/lib/python3." in done.stderr  # the frame is really there
    failure = done.failure("general")
    assert failure.code == FC.CMD_MISSING_MODULE
    assert failure.location is None
    ours = run([sys.executable, "-c", code], tmp_path).failure("general")
    assert ours.signature == failure.signature


def test_python_syntax_error(tmp_path: Path) -> None:
    """A SyntaxError in the script is class syntax_error at the script."""
    write(tmp_path, {"bad.py": "x = (1,\nprint(x\n"})
    failure = run([sys.executable, "bad.py"], tmp_path).failure("debug")
    assert failure.error_class == "syntax_error"
    assert failure.location == "bad.py"


@pytest.fixture(scope="module")
def pytest_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    root = write(tmp_path_factory.mktemp("pyt"), {
        "tests/test_math.py": "def test_ok():\n    assert 1\n\ndef test_sum():\n"
                              "    assert 1 + 1 == 3\n\ndef test_product():\n"
                              "    assert 2 * 2 == 5\n",
        "tests/test_broken.py": "import not_installed_mod_zz\n\ndef test_x():\n    pass\n",
    })
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    return {
        "sum": run([*argv, "tests/test_math.py::test_sum"], root),
        "product": run([*argv, "tests/test_math.py::test_product"], root),
        "collect": run([*argv, "tests/test_broken.py"], root),
    }


def test_pytest_failing_test_names_the_node_id(pytest_runs: dict[str, Run]) -> None:
    """A failing pytest test is assertion_failed, named by its node id, at its file."""
    failure = pytest_runs["sum"].failure("test")
    assert failure.code == FC.TEST_CASE_FAILED
    assert failure.error_class == "assertion_failed"
    assert failure.params["test"] == "tests/test_math.py::test_sum"
    assert failure.location == "tests/test_math.py"
    assert failure.surface == "python.test"


def test_pytest_different_tests_have_different_signatures(pytest_runs: dict[str, Run]) -> None:
    """Two different failing tests in one file do not share a signature."""
    assert pytest_runs["sum"].failure("test").signature != pytest_runs["product"].failure(
        "test").signature


def test_pytest_collection_error(pytest_runs: dict[str, Run]) -> None:
    """A package missing while tests are collected is a dependency error (no test ran), at
    the test file that imports it."""
    failure = pytest_runs["collect"].failure("test")
    assert failure.code == FC.CMD_MISSING_MODULE
    assert failure.params["module"] == "not_installed_mod_zz"
    assert failure.location == "tests/test_broken.py"
    assert failure.kind == "dependency_error"


def test_unittest_failure_names_the_test(tmp_path: Path) -> None:
    """unittest's FAIL: line gives assertion_failed naming module.Class.test."""
    write(tmp_path, {"test_u.py": "import unittest\n\nclass T(unittest.TestCase):\n"
                                  "    def test_eq(self):\n        self.assertEqual(1, 2)\n"})
    failure = run([sys.executable, "-m", "unittest", "test_u"], tmp_path).failure("test")
    assert failure.error_class == "assertion_failed"
    assert "test_u.T.test_eq" in failure.message


def test_mypy_type_check_error(tmp_path: Path) -> None:
    """mypy's error is type_check_error with its error code as the diagnostic."""
    write(tmp_path, {"src/mod.py": "print(undefined_name)\n"})
    failure = run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", os.devnull,
                   "src/mod.py"], tmp_path).failure("static_analysis")
    assert failure.code == FC.LINT_FAILED
    assert failure.error_class == "type_check_error"
    assert failure.metadata["diagnostic"] == "name-defined"
    assert failure.location == "src/mod.py"
    assert failure.surface == "python.lint"


@pytest.mark.parametrize("output_format", ["full", "concise"])
def test_ruff_lint_violation_carries_the_rule(tmp_path: Path, output_format: str) -> None:
    """ruff's rule code (F401) is the diagnostic of a lint_violation at the file."""
    write(tmp_path, {"pkg/mod.py": "import os\n"})
    failure = run([sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache",
                   "--select", "F401", "--output-format", output_format, "pkg/mod.py"],
                  tmp_path).failure("static_analysis")
    assert failure.error_class == "lint_violation"
    assert failure.metadata["diagnostic"] == "F401"
    assert failure.location == "pkg/mod.py"


def test_ruff_different_rules_have_different_signatures(tmp_path: Path) -> None:
    """Two different lint rules in the same file give different signatures."""
    signatures = set()
    for rule, source in (("F401", "import os\n"), ("B015", "1 == 1\n")):
        write(tmp_path, {"mod.py": source})
        result = run([sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache",
                      "--select", rule, "mod.py"], tmp_path)
        failure = result.failure("static_analysis")
        assert failure.metadata["diagnostic"] == rule
        signatures.add(failure.signature)
    assert len(signatures) == 2


# -- make -------------------------------------------------------------------------------------
def test_make_no_rule_to_make_target(tmp_path: Path) -> None:
    """make's 'No rule to make target' names the target."""
    write(tmp_path, {"Makefile": "all: missing.o\n"})
    failure = run([tool("make")], tmp_path).failure("build")
    assert failure.error_class == "no_rule_to_make_target"
    assert "missing.o" in failure.message


def test_make_error_127_is_command_not_found(tmp_path: Path) -> None:
    """make's 'Error 127' (a recipe's program is missing) is FC.CMD_NOT_FOUND naming it."""
    write(tmp_path, {"Makefile": "all:\n\tnot_a_program_zz --version\n"})
    result = run([tool("make")], tmp_path)
    assert b"Error 127" in result.stderr
    failure = result.failure("build")
    assert failure.code == FC.CMD_NOT_FOUND
    assert failure.params["program"] == "not_a_program_zz"


def test_make_running_gcc_reports_the_compiler_error(tmp_path: Path) -> None:
    """A make build failing in gcc reports gcc's diagnostic, not make's 'Error 1'."""
    write(tmp_path, {"Makefile": "all:\n\tgcc -c src/main.c -o main.o\n",
                     "src/main.c": UNDECLARED})
    failure = run([tool("make")], tmp_path).failure("build")
    assert failure.error_class == "undeclared_identifier"
    assert failure.location == "src/main.c"
    assert failure.surface == "cpp.build"


# -- git --------------------------------------------------------------------------------------
def _git(root: Path, *args: str) -> Run:
    return run([tool("git"), "-c", "user.name=t", "-c", "user.email=t@example.invalid",
                "-c", "init.defaultBranch=main", *args], root)


def test_git_merge_conflict_located_at_the_conflicting_file(tmp_path: Path) -> None:
    """A real content conflict is FC.GIT_MERGE_CONFLICT at the conflicting file."""
    write(tmp_path, {"src/a.txt": "base\n", "README": "r\n"})
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "base")
    _git(tmp_path, "checkout", "-q", "-b", "other")
    (tmp_path / "src/a.txt").write_text("other\n", encoding="utf-8")
    _git(tmp_path, "commit", "-q", "-am", "other")
    _git(tmp_path, "checkout", "-q", "main")
    (tmp_path / "src/a.txt").write_text("main\n", encoding="utf-8")
    _git(tmp_path, "commit", "-q", "-am", "main")
    merge = _git(tmp_path, "merge", "other")
    assert merge.returncode == 1
    failure = merge.failure("merge")
    assert failure.code == FC.GIT_MERGE_CONFLICT
    assert failure.error_class == "patch_conflict"
    assert failure.location == "src/a.txt"
    assert failure.surface == "git.merge"
    assert failure.kind == "merge_error"


def test_git_apply_failure_is_a_patch_conflict(tmp_path: Path) -> None:
    """`git apply` of a patch whose context is gone is a patch_conflict at the file."""
    write(tmp_path, {"f.txt": "one\ntwo\n"})
    _git(tmp_path, "init", "-q")
    patch = ("--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-alpha\n+beta\n two\n")
    (tmp_path / "p.diff").write_text(patch, encoding="utf-8")
    failure = _git(tmp_path, "apply", "p.diff").failure("merge")
    assert failure.error_class == "patch_conflict"
    assert failure.location == "f.txt"


# -- shells: probes, missing programs, signals, timeouts, plain failures ------------------------
@pytest.fixture
def probe_dir(tmp_path: Path) -> Path:
    write(tmp_path, {"f.txt": "alpha\nbeta\n", "sub/g.txt": "gamma\n"})
    return tmp_path


@pytest.mark.parametrize(("script", "probe"), [
    ("grep -n zzz f.txt", "grep"),
    ("cat f.txt | grep zzz", "grep"),
    ("cd sub && grep -rn zzz .", "grep"),
    ("grep -c zzz f.txt", "grep"),
    ("grep -q zzz f.txt", "grep"),
    ("egrep 'z+z' f.txt 2>/dev/null", "egrep"),
    ("LC_ALL=C grep -rn 'zzz' --include='*.txt' . | grep -v beta", "grep"),
    ("find . -name '*.zz' | xargs grep -l zzz", "grep"),
    ("find . -name f.txt -exec false {} +", "find"),
    ("test -f nope.txt", "test"),
    ("[ -d nope ]", "["),
    ("which not_a_program_zz", "which"),
    ("command -v not_a_program_zz", "command -v"),
    ("cat > x.py << 'EOF'\nprint('x')\nEOF\ngrep -n zzz x.py", "grep"),
])
def test_probe_that_found_nothing_is_no_match(probe_dir: Path, script: str, probe: str) -> None:
    """A probe exiting 1 (xargs: 123) with no output is a NoMatch outcome, never a Failure."""
    result = run(script, probe_dir)
    assert result.returncode in (1, 123)
    outcome = result.classify()
    assert isinstance(outcome, NoMatch)
    assert outcome.probe == probe


def test_git_grep_found_nothing_is_no_match(probe_dir: Path) -> None:
    """`git grep` with no match is a NoMatch for probe 'git grep'."""
    _git(probe_dir, "init", "-q")
    _git(probe_dir, "add", ".")
    outcome = _git(probe_dir, "grep", "zzz").classify()
    assert isinstance(outcome, NoMatch)
    assert outcome.probe == "git grep"


def test_probe_argv_list_is_no_match(probe_dir: Path) -> None:
    """An argv list (no shell) of a probe that found nothing is a NoMatch."""
    outcome = run(["grep", "zzz", "f.txt"], probe_dir).classify()
    assert isinstance(outcome, NoMatch)


@pytest.mark.parametrize("script", ["grep zzz missing.txt", "find missing_dir -name x"])
def test_probe_that_failed_is_a_failure(probe_dir: Path, script: str) -> None:
    """A probe that printed an error (or exited 2) is a real failure, not a NoMatch."""
    assert isinstance(run(script, probe_dir).classify(), Failure)


def test_last_program_of_a_pipeline_decides(probe_dir: Path) -> None:
    """`grep ... | wc -l` exits 0: success, whatever grep found."""
    assert run("grep zzz f.txt | wc -l", probe_dir).classify() is None


def test_exit_zero_is_success(tmp_path: Path) -> None:
    """Exit 0 gives None."""
    assert run(["true"], tmp_path).classify("build") is None


@pytest.mark.parametrize(("script", "program"), [
    ("not_a_program_zz --help", "not_a_program_zz"),
    ("cd . && ./missing_script.sh", "missing_script.sh"),
    ("echo hi | not_a_program_zz", "not_a_program_zz"),
])
@pytest.mark.parametrize("purpose", ["general", "build", "doctor"])
def test_missing_program_is_command_not_found(tmp_path: Path, script: str, program: str,
                                              purpose: str) -> None:
    """Exit 127 / 'command not found' is FC.CMD_NOT_FOUND naming the program, any purpose."""
    result = run(script, tmp_path)
    assert result.returncode == 127
    failure = result.failure(purpose)
    assert failure.code == FC.CMD_NOT_FOUND
    assert failure.kind == "dependency_error"
    assert failure.error_class == "command_not_found"
    assert failure.params["program"] == program


@pytest.mark.parametrize(("script", "signal"), [
    ("kill -INT $$", 2), ("kill -TERM $$", 15),
])
def test_interrupted_command_is_cancelled(tmp_path: Path, script: str, signal: int) -> None:
    """A command stopped by SIGINT/SIGTERM (-2/-15 or 130/143) is a Cancelled outcome."""
    direct = run(["bash", "-c", script], tmp_path)
    nested = run(f"bash -c '{script}'; exit $?", tmp_path)  # the outer shell reports 128+N
    assert direct.returncode == -signal
    assert nested.returncode == 128 + signal
    for result in (direct, nested):
        outcome = result.classify("test")
        assert isinstance(outcome, Cancelled)
        assert outcome.signal == signal


def test_killed_by_signal_9(tmp_path: Path) -> None:
    """A command killed by SIGKILL (-9 or 137) is FC.OS_KILLED."""
    direct = run(["bash", "-c", "kill -9 $$"], tmp_path)
    nested = run("bash -c 'kill -9 $$'; exit $?", tmp_path)
    assert (direct.returncode, nested.returncode) == (-9, 137)
    for result in (direct, nested):
        failure = result.failure("build")
        assert failure.code == FC.OS_KILLED
        assert failure.metadata["exit_code"] == 137


TIMEOUT_CODES = {
    "general": FC.CMD_TIMEOUT, "build": FC.BUILD_TIMEOUT, "test": FC.TEST_TIMEOUT,
    "static_analysis": FC.LINT_TIMEOUT, "merge": FC.GIT_MERGE_TIMEOUT,
    "debug": FC.CMD_DEBUG_TIMEOUT, "doctor": FC.CMD_DOCTOR_TIMEOUT,
}


@pytest.fixture(scope="module")
def timeout_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return run("timeout 0.1 sleep 5", tmp_path_factory.mktemp("timeout"))


@pytest.mark.parametrize("purpose", list(TIMEOUT_CODES))
def test_timeout_exit_124_is_the_purposes_timeout(timeout_run: Run, purpose: str) -> None:
    """`timeout` ending a command (exit 124) is the purpose's timeout code, class timeout."""
    assert timeout_run.returncode == 124
    failure = timeout_run.failure(purpose)
    assert failure.code == TIMEOUT_CODES[purpose]
    assert failure.error_class == "timeout"
    assert failure.category == "transient"
    assert failure.retryability == "retryable"


def test_caller_timeout_is_a_timeout(tmp_path: Path) -> None:
    """A command the caller stopped at its limit (timed_out=True) is a timeout, any exit."""
    with pytest.raises(subprocess.TimeoutExpired) as caught:
        subprocess.run(["sleep", "5"], cwd=tmp_path, timeout=0.1, check=False)
    outcome = from_command(caught.value.cmd, -9, caught.value.output or b"", b"",
                           purpose="test", timed_out=True)
    assert isinstance(outcome, Failure)
    assert outcome.code == FC.TEST_TIMEOUT


@pytest.mark.parametrize(("purpose", "code"), [
    ("general", FC.CMD_FAILED), ("doctor", FC.CMD_DOCTOR_FAILED),
    ("debug", FC.CMD_DEBUG_FAILED), ("build", FC.BUILD_FAILED), ("test", FC.TEST_FAILED),
])
def test_unparsed_failure_gets_the_purposes_code(tmp_path: Path, purpose: str,
                                                 code: FC) -> None:
    """A failure with no recognizable output gets the purpose's generic code."""
    failure = run("echo something went wrong >&2; exit 3", tmp_path).failure(purpose)
    assert failure.code == code
    assert failure.metadata["exit_code"] == 3
    assert "something went wrong" in (failure.detail or "")


def test_general_unparsed_failure_class_is_unknown(tmp_path: Path) -> None:
    """purpose general with nothing parsed is command_error of class unknown."""
    failure = run("exit 3", tmp_path).failure("general")
    assert (failure.kind, failure.error_class) == ("command_error", "unknown")
    assert failure.surface == "shell.run"


def test_bytes_and_str_output_classify_alike(gcc_runs: dict[str, Run]) -> None:
    """Output given as bytes or str gives the same record."""
    result = gcc_runs["undeclared_identifier"]
    as_bytes = result.failure("build")
    as_str = from_command(result.argv, result.returncode, result.stdout.decode(),
                          result.stderr.decode(), purpose="build", cwd=str(result.cwd))
    assert isinstance(as_str, Failure)
    assert as_bytes.signature == as_str.signature
