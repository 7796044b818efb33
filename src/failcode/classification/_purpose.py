"""What a shell command is for: one rule, used by :func:`failcode.from_command` and by triage.

Rules (about programs and their output, never lists of commands seen in one log):

- A command line is split into the shell's simple commands (at ``&&``, ``||``, ``;``, ``|``,
  ``&`` and newlines outside quotes; heredoc bodies and comments are not commands); the last
  one that says a purpose decides (``cd x && make && pytest``: test). In a segment, environment
  assignments (``CI=1``), wrappers (``sudo``, ``env``, ``time``, ``timeout 60``, ``nice``,
  ``xargs``...) and runners that run another program by name (``uv run``, ``poetry run``,
  ``pipenv run``, ``pdm run``, ``hatch run``, ``npx``, ``bunx``, ``pnpm exec``/``dlx``,
  ``yarn dlx``, ``bundle exec``, ``python -m``) are peeled off: the program they run decides.
- Test runners -> ``test``, linters, type checkers and formatters -> ``static_analysis``,
  compilers and build tools -> ``build``: by what the package shipping the program says it is
  for (the table ``data/programs.json``, generated from PyPI, npm and Debian metadata by
  ``scripts/gen_program_purposes.py``; :func:`program_purpose`), consulted after every rule
  below and before the output's shape; the tables below name only the tools whose packages
  do not say it.
- Build systems with verbs say it by the verb: ``cargo test``/``go test``/``dotnet test``/
  ``gradle test``/``mvn verify``/``swift test``/``deno test``/``bun test``/``mix test``/
  ``sbt test``/``bazel test``/``zig build test``/``rake test`` -> test; their ``build``/
  ``compile``/``check`` (cargo, deno, gradle) -> build; ``clippy``/``vet``/``lint``/``credo``
  -> static_analysis. ``node --test`` and ``php artisan test`` are test runs.
- ``make``/``just``/``task``/``tox -e``/``nox -s``/``hatch run``, a package.json script run by
  npm, yarn, pnpm or bun, and any program or script the project carries (``./ci/lint.sh``,
  ``scripts/run-tests``, ``bash build.sh``) take the purpose their target's or name's words
  say: ``test``/``tests``/``spec``/``check`` (make's GNU convention) -> test, ``lint``/
  ``typecheck``/``type-check``/``mypy``/``format-check`` -> static_analysis, ``build``/
  ``compile``/``dist`` -> build. ``make`` with another target or none builds; ``tox`` and
  ``nox`` without one test. A Python script says only that it is a test runner by its name
  (``runtests.py``, ``run_tests.py``, ``manage.py test``): a script an agent wrote to
  reproduce a bug (``python test_bug.py``) is not, and its output decides.
- ``git merge``/``rebase``/``cherry-pick``/``pull``/``am``/``revert``/``push`` -> merge.
- When the command says nothing (``general``), the output's shape does: a test runner's
  summary line (pytest, unittest, node's TAP, cargo, go) -> test; lint violation lines
  (``path:line:col: E501 ...``, mypy's ``path:line: error: ... [code]``) -> static_analysis;
  compiler or linker diagnostics and make's ``*** Error N`` -> build.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Final

from failcode._lazy_re import lazy
from failcode.classification._lex import split

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["BUILD_DIAGNOSTIC", "TEST_SUMMARY", "command_programs", "command_purpose",
           "has_build_diagnostic", "has_test_summary", "infer_purpose", "output_purpose",
           "program_purpose"]

# Programs the registries' metadata does not say (or says otherwise: ctest ships in cmake's
# package, prove in perl's) are named here; any other program takes the purpose of the package
# that ships it, from the generated table (data/programs.json, :func:`program_purpose`).
_TEST: Final = frozenset({
    "ctest", "prove", "busted", "cargo-nextest", "gotestsum", "nosetests", "pest", "rspec",
    "trial", "unittest",
})  # fmt: skip
_LINT: Final = frozenset({
    "isort", "biome", "clippy-driver", "golangci-lint", "golint", "staticcheck",
    "revive", "standardrb", "hadolint", "tflint", "markdownlint", "ktlint", "detekt",
    "swiftlint", "phpstan", "psalm", "phpcs", "credo", "pyre", "pytype",
})  # fmt: skip
_BUILD: Final = frozenset({
    "clang++", "rustc", "javac", "kotlinc", "scalac", "swiftc", "ld", "webpack",
    "nx", "xcodebuild", "autoreconf", "configure", "cl", "nvcc", "zig", "msbuild",
})  # fmt: skip
# build systems and toolchains whose first verb says the purpose
_VERB_TOOLS: Final = frozenset({
    "cargo", "go", "dotnet", "gradle", "gradlew", "mvn", "mvnw", "swift", "deno", "bun", "mix",
    "sbt", "bazel", "bazelisk", "rake", "lein", "stack", "cabal", "dune", "flutter", "dart",
    "zig", "php", "composer", "django", "django-admin", "poetry", "meson",
})  # fmt: skip
_TEST_VERBS: Final = frozenset({"test", "tests", "nextest", "spec", "verify", "integration-test",
                                "check-tests"})
_BUILD_VERBS: Final = frozenset({"build", "compile", "assemble", "check", "package", "jar",
                                 "bundle", "dist"})
_LINT_VERBS: Final = frozenset({"clippy", "vet", "lint", "credo", "fmt", "analyze",
                                "typecheck", "detekt", "ktlint", "spotlessCheck"})
# verbs that are tests in one tool and not another are settled per tool
_VERB_OVERRIDES: Final[dict[str, dict[str, str | None]]] = {
    "cargo": {"check": "build", "run": "build", "bench": "test"},
    "go": {"run": "build", "install": "build"},
    "deno": {"check": "static_analysis"},
    "gradle": {"check": "test"}, "gradlew": {"check": "test"},
    "mvn": {"install": "build"}, "mvnw": {"install": "build"},
    "poetry": {"check": "static_analysis"},
    "django": {"check": "static_analysis"}, "django-admin": {"check": "static_analysis"},
    "meson": {"setup": "build"},
}  # fmt: skip
_MERGE: Final = frozenset({"merge", "rebase", "cherry-pick", "pull", "am", "revert", "push"})
_SCRIPT_RUNNERS: Final = frozenset({"npm", "yarn", "pnpm", "bun"})
_TASK_RUNNERS: Final = frozenset({"just", "task", "invoke", "inv", "doit", "nox", "tox",
                                  "hatch", "pdm", "rye"})
_WRAPPERS: Final = frozenset({
    "sudo", "env", "time", "nohup", "timeout", "exec", "xargs", "stdbuf", "nice", "ionice",
    "command", "builtin", "caffeinate", "unbuffer", "script", "chronic", "eatmydata",
    "setsid", "taskset", "firejail", "catchsegv", "valgrind", "strace",
})  # fmt: skip
# a wrapper's options that take a value (``timeout -s KILL``, ``sudo -u app``, ``env -C dir``)
_VALUE_FLAGS: Final = frozenset({"-s", "-k", "-n", "-u", "-g", "-C", "-S", "-o", "-e", "-p",
                                 "--signal", "--kill-after", "--user", "--group",
                                 "--adjustment", "--chdir", "--unset"})
# runners that run the program named after them (``uv run pytest``, ``npx jest``)
_PASS_THROUGH: Final[dict[str, frozenset[str]]] = {
    "uv": frozenset({"run", "tool"}), "poetry": frozenset({"run"}),
    "pipenv": frozenset({"run"}),
    "conda": frozenset({"run"}), "mamba": frozenset({"run"}), "micromamba": frozenset({"run"}),
    "pixi": frozenset({"run"}), "bundle": frozenset({"exec"}),
    "pnpm": frozenset({"exec", "dlx"}), "yarn": frozenset({"dlx", "exec"}),
}  # fmt: skip
_RUN_PROGRAM: Final = frozenset({"npx", "bunx", "pipx", "uvx"})
_SHELLS: Final = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish"})
_INTERPRETER: Final = lazy(r"^(?:python|pypy)\d*(?:\.\d+)?$")
_PY_RUNNER_SCRIPTS: Final = frozenset({"runtests", "run_tests", "run-tests", "test_runner",
                                       "testrunner", "runtest"})
_WORD: Final = lazy(r"[a-z]+")
_NAME_TEST: Final = frozenset({"test", "tests", "spec", "specs", "check", "unittest", "e2e",
                               "pytest"})
_NAME_LINT: Final = frozenset({"lint", "linter", "lints", "typecheck", "mypy", "flake", "ruff",
                               "eslint", "clippy", "vet", "style", "format", "fmt"})
_NAME_BUILD: Final = frozenset({"build", "compile", "dist", "make", "package"})

TEST_SUMMARY: Final = lazy(
    r"^(?:FAILED|ERROR) \S+::|^=+ .*\b\d+ (?:failed|errors?)\b.*=+$|^\d+ failed\b"
    r"|^FAILED \((?:failures|errors)=\d+|^# fail [1-9]|^test result: FAILED"
    r"|^--- FAIL: |^FAIL\s|^\u2139 fail [1-9]|^Tests: .*\d+ failed", re.MULTILINE)
"""A test runner's own failure summary: pytest, unittest, node's TAP and spec reporters
(``# fail N``, ``\u2139 fail N``), cargo, go, jest."""
BUILD_DIAGNOSTIC: Final = lazy(
    r"^[^\s:]+:\d+:\d+: (?:fatal )?error: |undefined reference to [`']|^error\[E\d+\]: "
    r"|^error: [^\n]*\n\s+--> "
    r"|\berror TS\d+: |make(?:\[\d+\])?: \*\*\* .*Error \d+", re.MULTILINE)
"""Compiler or linker diagnostics (gcc, clang, rustc's ``error[E0425]:`` or ``error:`` with its
``-->`` location, tsc) and make's ``*** ... Error N``; a bare ``error:`` line (git, patch, most
tools) says nothing."""

# Each branch of TEST_SUMMARY holds one of these words, and each of BUILD_DIAGNOSTIC one of
# those: a text holding none cannot match, and ``in`` rules it out far faster than the search
# (which tries every branch at every position).
_TEST_SUMMARY_WORDS: Final = ("FAIL", "fail", "ERROR ", "error")
_BUILD_DIAGNOSTIC_WORDS: Final = ("error", "undefined reference to ", "*** ")


def has_test_summary(text: str) -> bool:
    """Whether :data:`TEST_SUMMARY` matches somewhere in ``text``."""
    return (any(word in text for word in _TEST_SUMMARY_WORDS)
            and TEST_SUMMARY.search(text) is not None)


def has_build_diagnostic(text: str) -> bool:
    """Whether :data:`BUILD_DIAGNOSTIC` matches somewhere in ``text``."""
    return (any(word in text for word in _BUILD_DIAGNOSTIC_WORDS)
            and BUILD_DIAGNOSTIC.search(text) is not None)


_LINT_VIOLATION: Final = lazy(
    r"^[^\s:]+:\d+:\d+: [A-Z]{1,4}\d{2,5}\b|^[^\s:]+\.pyi?:\d+: error: .*\[[a-z-]+\]$",
    re.MULTILINE)


def _words(segment: str) -> list[str]:
    try:
        return split(segment, comments=True)  # shlex.split's words, without its char loop
    except ValueError:
        return segment.split()


def _name(word: str) -> str:
    """The last part of a path (``PurePosixPath(word).name``, without building a path)."""
    return word.rstrip("/").rsplit("/", 1)[-1]


def _name_purpose(name: str) -> str | None:
    """The purpose a script's, target's or environment's name says by its words."""
    words = set(_WORD.findall(_name(name).lower().replace("typecheck", " typecheck ")
                              .replace("type-check", " typecheck ")))
    if words & _NAME_LINT:
        return "static_analysis"
    if words & _NAME_TEST:
        return "test"
    if words & _NAME_BUILD:
        return "build"
    return None


def _peel(words: list[str]) -> tuple[list[str], bool]:
    """Drop assignments, wrappers and their options, and runners of another program (and
    say whether one was: the program it runs may be the project's own script)."""
    runner = False
    while words:
        first = words[0]
        name = _name(first)
        if "=" in first and not first.startswith(("=", "-")):
            words = words[1:]
        elif name in _WRAPPERS:
            words = words[1:]
            while words and (words[0].startswith("-") or words[0][:1].isdigit()):
                # timeout -s KILL 60 cmd, nice -n 5 cmd, sudo -u app cmd
                words = words[2:] if words[0] in _VALUE_FLAGS else words[1:]
        elif name in _RUN_PROGRAM:
            words, runner = words[1:], True
            while words and words[0].startswith("-"):
                words = words[1:]
        elif name in _PASS_THROUGH and len(words) > 1 and words[1] in _PASS_THROUGH[name]:
            words, runner = words[2:], True
            while words and words[0].startswith("-"):
                words = words[1:]
        else:
            return words, runner
    return words, runner


def _segment_purpose(words: list[str]) -> str | None:
    words, runner = _peel(words)
    if not words:
        return None
    program = _name(words[0])
    args = words[1:]
    if _INTERPRETER.match(program):
        while args and args[0].startswith("-") and args[0] != "-m":
            args = args[1:]  # python -u -X dev -m pytest
        if len(args) >= 2 and args[0] == "-m":
            if args[1] in {"build", "compileall", "py_compile", "nuitka", "PyInstaller"}:
                return "build"
            return _segment_purpose(args[1:])
        if not args:
            return None
        script = PurePosixPath(args[0])
        if script.stem in _PY_RUNNER_SCRIPTS:
            return "test"
        if script.name in {"manage.py", "django-admin.py"}:
            return "test" if "test" in args[1:2] else None
        if script.name == "setup.py":
            verbs = set(args[1:])
            return "test" if "test" in verbs else (
                "build" if verbs & {"build", "build_ext", "bdist_wheel", "sdist"} else None)
        return None
    if program in _SHELLS:
        script_args = [a for a in args if not a.startswith("-")]
        if "-c" in args:
            return None  # the script text was already split into segments by the caller
        return _name_purpose(script_args[0]) if script_args else None
    if program in _TEST:
        return "test"
    if program in _LINT:
        return "static_analysis"
    if program == "git":
        rest = list(args)
        while rest and rest[0].startswith("-"):  # git -C dir -c key=value merge ...
            rest = rest[2:] if rest[0] in {"-C", "-c"} else rest[1:]
        return "merge" if rest and rest[0] in _MERGE else None
    if program == "node":
        return "test" if "--test" in args or any(a.startswith("--test=") for a in args) \
            else None
    if program in _SCRIPT_RUNNERS:
        names = [a for a in args if not a.startswith("-")]
        if names[:1] == ["run"] or names[:1] == ["run-script"]:
            names = names[1:]
        if not names:
            return None
        if program == "bun" and names[0] == "test":
            return "test"
        if names[0] in {"install", "ci", "add", "i", "remove", "update", "exec", "dlx", "x",
                        "init", "create", "publish", "audit", "outdated", "start"}:
            return None
        return _name_purpose(names[0])
    if program == "php" and args[:2] == ["artisan", "test"]:
        return "test"
    if program in _TASK_RUNNERS:
        target = _task_target(program, args)
        if program in {"hatch", "pdm", "rye"} and target is not None:
            after = args[args.index(target):]  # pdm run pytest: the program; hatch run test
            return _segment_purpose([target.split(":")[-1], *after[1:]]) or _name_purpose(
                target.replace(":", " "))
        if target is None:
            return "test" if program in {"tox", "nox"} else None
        return _name_purpose(target) or ("test" if program in {"tox", "nox"} else None)
    if program in {"make", "gmake"}:
        targets = [a for a in args if not a.startswith("-") and "=" not in a]
        named = [_name_purpose(t) for t in targets]
        return next((p for p in reversed(named) if p is not None), "build")
    if program in _VERB_TOOLS:
        return _verb_purpose(program, args)
    if program in _BUILD:
        return "build"
    if "/" in words[0] or program.endswith((".sh", ".bash")):
        return _name_purpose(program)  # the project's own script: its name says it
    # what the package shipping the program says it is for, else (run by a runner: maybe
    # the project's own script) what its name says
    return _CLASSIFIER_PURPOSE.get(program_purpose(program) or "") or (
        _name_purpose(program) if runner else None)


_TABLE: Final = Path(__file__).with_name("data") / "programs.json"
_CLASSIFIER_PURPOSE: Final = {"test": "test", "static_analysis": "static_analysis",
                               "format": "static_analysis", "build": "build",
                               "debug": "debug"}
"""The table's purposes that pick a code (a formatter fails on code it would change, as a
linter does); the others (package_install, version_control, interpreter, general) leave the
command ``general``."""


@functools.cache
def _programs() -> dict[str, str | None]:
    """The generated table (``data/programs.json``): program name -> purpose, read once, on
    first use."""
    import json  # noqa: PLC0415 - only when a command needs the table

    rows = json.loads(_TABLE.read_text(encoding="utf-8"))["programs"]
    return {name: row.get("purpose") for name, row in rows.items()}


def program_purpose(program: str) -> str | None:
    """What the package providing ``program`` says it is for, from the table generated from
    the registries' metadata (``scripts/gen_program_purposes.py``): ``test``,
    ``static_analysis``, ``format``, ``build``, ``debug``, ``package_install``,
    ``version_control``, ``interpreter`` or ``general``; None for a program the table does not
    know or whose metadata says nothing.

    >>> program_purpose("sqlfluff")
    'static_analysis'
    """
    return _programs().get(program)


def _verb_purpose(program: str, args: list[str]) -> str | None:
    """A build system or toolchain by its first verb: ``cargo test``, ``go vet``."""
    verb = next((a for a in args if not a.startswith("-")), "")
    if program == "zig":
        return "test" if "test" in args else "build"
    overrides = _VERB_OVERRIDES.get(program, {})
    if verb in overrides:
        return overrides[verb]
    if verb in _TEST_VERBS:
        return "test"
    if verb in _LINT_VERBS:
        return "static_analysis"
    if verb in _BUILD_VERBS:
        return "build"
    return None


def _task_target(program: str, args: list[str]) -> str | None:
    """The target a task runner runs: ``tox -e lint``, ``nox -s tests``, ``just build``."""
    if program in {"tox", "nox"}:
        for flag, value in itertools.pairwise(args):
            if flag in {"-e", "-s", "--session", "--sessions", "--env"}:
                return value.split(",")[0]
        return next((a.split("=", 1)[1] for a in args if a.startswith(("-e=", "--env="))),
                    None)
    if program in {"hatch", "pdm", "rye"}:
        rest = [a for a in args if not a.startswith("-")]
        return rest[1] if rest[:1] == ["run"] and len(rest) > 1 else None
    return next((a for a in args if not a.startswith("-")), None)


def command_purpose(command: str | Sequence[str | bytes | os.PathLike[str]]) -> str:
    """The purpose the command itself says (``general`` when it says none)."""
    if not isinstance(command, str):  # an argv: str, bytes or path-like items
        words = [os.fsdecode(w) if isinstance(w, (bytes, os.PathLike)) else str(w)
                 for w in command]
        if len(words) >= 3 and _name(words[0]) in _SHELLS and words[1] == "-c":
            return command_purpose(words[2])
        return _segment_purpose(words) or "general"
    head = command.lstrip()[:6]
    if head.startswith(tuple(_SHELLS)):  # bash -c 'cd x && pytest': the script decides
        words = _words(command)
        if len(words) >= 3 and _name(words[0]) in _SHELLS and words[1] == "-c":
            return command_purpose(words[2])
    # the shell's own simple commands: quotes kept, heredoc bodies and comments gone
    from failcode.classification._command import segments_of  # noqa: PLC0415 - import cycle

    purpose = "general"
    for segment in segments_of(command[:8192]):
        found = _segment_purpose(_words(segment.strip()))
        if found is not None:
            purpose = found
    return purpose


def _segment_program(words: list[str]) -> str | None:
    """The program a simple command runs once wrappers and runners are peeled, as
    :func:`_segment_purpose` sees it (``python -m pytest``: pytest; ``bash -c``: None)."""
    words, _runner = _peel(words)
    if not words:
        return None
    program = _name(words[0]) if "/" not in words[0].rstrip("/") else words[0]
    args = words[1:]
    if _INTERPRETER.match(_name(program)):
        while args and args[0].startswith("-") and args[0] != "-m":
            args = args[1:]
        if len(args) >= 2 and args[0] == "-m":
            return _segment_program(args[1:])
    if _name(program) in _SHELLS and "-c" in args:
        return None  # the script's own commands are segments of their own
    return program


def command_programs(command: str) -> list[str]:
    """The programs a command line runs, one per simple command, in order: the first word
    after assignments, wrappers and runners (:func:`command_purpose`'s own peeling); a path
    is kept as written (``./build.sh``), a program on the ``PATH`` by its name.

    >>> command_programs("cd app && CI=1 timeout 60 uv run pytest -q | tail -5")
    ['cd', 'pytest', 'tail']
    """
    from failcode.classification._command import segments_of  # noqa: PLC0415 - import cycle

    words = _words(command)
    if len(words) >= 3 and _name(words[0]) in _SHELLS and words[1] == "-c":
        return command_programs(words[2])
    found = [_segment_program(_words(segment.strip())) for segment in segments_of(command)]
    return [program for program in found if program]


def output_purpose(output: str) -> str:
    """The purpose the output's shape says: ``test``, ``static_analysis``, ``build`` or
    ``general``."""
    tail = output[-65536:]
    if has_test_summary(tail):
        return "test"
    if _LINT_VIOLATION.search(tail):
        return "static_analysis"
    if has_build_diagnostic(tail):
        return "build"
    return "general"


def infer_purpose(command: str | Sequence[str | bytes | os.PathLike[str]],
                  output: str = "") -> str:
    """What a shell command is for, by the module's rules: the command first, then the shape
    of its ``output`` when the command says nothing.

    >>> infer_purpose("cd app && uv run pytest -q")
    'test'
    >>> infer_purpose("./scripts/lint.sh")
    'static_analysis'
    >>> infer_purpose("python repro.py", "FAILED (failures=1)")
    'test'
    """
    purpose = command_purpose(command)
    if purpose == "general" and output:
        return output_purpose(output)
    return purpose
