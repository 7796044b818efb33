"""Failures a command's exit status hides: the rules triage reads them by.

A command can exit 0 although what it ran failed: its output went through a filter
(``pytest | tail -5``: the pipeline's status is ``tail``'s), the failure was discarded
(``make || true``, ``gcc x.c; echo done``), or a wrapper script ran the failing program and
exited 0 itself. Such a command is a failure, classified from its output and marked
``masked``, when both hold:

- **the command hides a status**: its last pipeline ends in a filter (``tail``, ``head``,
  ``grep``, ``tee``, ``sort``, ``uniq``, ``cat``, ``wc``, ``cut``, ``awk``, ``sed``, ``less``,
  ``more``), or its last list element is ``|| true`` / ``|| :`` / ``|| echo ...`` or
  ``; true`` / ``; echo ...`` / ``; exit 0``; or the command runs a script of the project
  (``./check.sh``, ``sh check.sh``, ``bash scripts/ci.sh``), which can swallow its children's
  status. What is left once those are peeled off (the inner command) must not itself be a
  probe or a viewer (``grep``, ``find``, ``ls``, ``cat``, ``echo``, ``git log``...): a search
  whose hits mention errors found something, it did not fail;
- **the output shows a failure** in a tool's own words, never merely the word "error": a
  Python traceback ending in an exception, a test runner's failure summary (pytest
  ``FAILED x::y`` or ``N failed``, unittest ``FAILED (failures=N)``, node's ``# fail N``,
  ``cargo test``'s ``test result: FAILED``, ``go test``'s ``--- FAIL:``), compiler and linker
  diagnostics (``file:line:col: error:``, ``undefined reference to``, rustc ``error[E...]:``,
  tsc ``error TSnnnn:``), make's ``*** ... Error N``, a shell's "command not found", or
  ``No module named x``.

  When the inner command is a linter or a type checker (its purpose is static analysis) its
  own diagnostics count too, since a filter or ``|| true`` hides the status they set: mypy's
  ``file:line: error: ... [code]`` and ``Found N errors in M files``, ruff's and flake8's
  ``file:line:col: CODE`` and ruff's ``CODE [*] message`` headline, pylint's ``file:line:col:
  C0114:``, tsc's ``error TSnnnn:``, eslint's ``line:col  error`` and ``N problems``. When it
  is a test runner, pytest's own refusal to run counts: ``ERROR: usage:``, ``ImportError
  while loading conftest``, ``ERROR: file or directory not found:``, the argument parser's
  ``pytest: error:`` (pytest's exit 4). A traceback counts whole or cut by the filter: its
  frames then the exception line (any exception's name, also when ``| tail`` or ``| grep``
  cut the ``Traceback`` line off), or a ``Traceback`` that runs to the end of what ``| head``
  let through. A package manager's own verdict on an install (pip's "No matching
  distribution", a wheel that failed to build) counts unless it then says "Successfully
  installed".

The status used to classify it is 127 when the output shows a missing program, 4 for pytest's
usage and configuration errors, else 1; the purpose is inferred from the inner command, and,
when that says nothing (a wrapper script), from the output's shape: a test runner's summary is
a test, compiler diagnostics a build. The output is read through an agent's framing of it
(:func:`~failcode.classification._parsers.unframe`).
"""

from __future__ import annotations

import re
from typing import Final

from failcode._lazy_re import lazy
from failcode.classification._parsers import INSTALL_CLASSES, find_diagnostics, unframe
from failcode.classification._purpose import (
    command_purpose,
    has_build_diagnostic,
    has_test_summary,
)

__all__ = ["masked_failure", "shown_status", "unmask"]

_FILTERS: Final = frozenset({"tail", "head", "grep", "egrep", "fgrep", "tee", "sort", "uniq",
                             "cat", "wc", "cut", "awk", "sed", "less", "more", "column"})
_VIEWERS: Final = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "ls",
                             "cat", "head", "tail", "less", "more", "echo", "printf", "sed",
                             "awk", "jq", "wc", "sort", "diff", "tree", "file", "stat", "which",
                             "type", "command", "test", "[", "true", ":", "pwd", "env",
                             "printenv"})
_VIEWING_GIT: Final = frozenset({"log", "show", "diff", "status", "grep", "blame", "branch"})
_DISCARD: Final = lazy(r"^(?:true|:|exit 0|echo\b.*|printf\b.*)$", re.DOTALL)
_SCRIPT: Final = lazy(r"^(?:(?:ba|z|da)?sh\s+)?\.{0,2}/?[\w./-]*\.sh\b|^\./[\w.-]+")
_MISSING_PROGRAM: Final = lazy(r"^(?:\S+: )?(?:line \d+: )?\S+: (?:command )?not found$",
                                     re.MULTILINE)
_EXCEPTION_END: Final = lazy(
    r"Traceback \(most recent call last\):\n(?:[ \t].*\n)+"
    r"(?:[A-Za-z_][\w.]*(?:Error|Exception)\b.*)$", re.MULTILINE)
# A traceback's frames and the exception line right after them, whatever the exception's name
# (``django.core.exceptions.ImproperlyConfigured: ...``), also when a filter cut the
# ``Traceback`` line off (``| tail``, ``| grep -A20``)
_FRAMES_THEN_EXCEPTION: Final = lazy(
    r"^  File \"[^\"\n]+\", line \d+, in [^\n]*\n(?:[ \t][^\n]*\n)*"
    r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*(?:Error|Exception|Exit|Interrupt)?"
    r"(?::[ \t][^\n]*)?$", re.MULTILINE)
# A traceback that runs to the end of what a filter let through (``| head``): the exception
# line was cut off, the crash was not
_TRACEBACK_CUT: Final = lazy(
    r"^Traceback \(most recent call last\):\n(?:[ \t][^\n]*(?:\n|\Z))+\Z", re.MULTILINE)
_INSTALLED: Final = lazy(r"^Successfully installed ", re.MULTILINE)
_NO_MODULE: Final = lazy(r"No module named \S+")
_LINT_SHOWN: Final = lazy(
    r"^[^\s:]+:\d+: error: [^\n]*\[[\w-]+\]$"  # mypy
    r"|^Found \d+ errors? in \d+ files?"  # mypy's summary
    r"|^[^\s:]+:\d+:\d+: [A-Z]{1,4}\d{2,5}\b"  # ruff, flake8, pycodestyle (concise)
    r"|^[A-Z]{1,4}\d{2,5} (?:\[\*\] )?\S[^\n]*$"  # ruff's full headline
    r"|^Found \d+ errors?\.$"  # ruff's summary
    r"|^[^\s:]+:\d+:\d+: [CRWEF]\d{4}: "  # pylint
    r"|\berror TS\d+: "  # tsc
    r"|^\s+\d+:\d+\s+error\s"  # eslint (stylish)
    r"|^\u2716 \d+ problems? \(\d+ errors?",  # eslint's summary
    re.MULTILINE)
_PYTEST_REFUSED: Final = lazy(
    r"^(?:ERROR: usage: |ImportError while loading conftest |ERROR: file or directory not "
    r"found: |ERROR: not found: |(?:[\w./-]+ )*(?:py\.test|pytest): error: )", re.MULTILINE)


_SPECIAL: Final = lazy(r"['\"\\|;&]")
_IN_DOUBLE: Final = lazy(r'["\\]')


def _operators(command: str) -> list[tuple[int, str]]:
    """The top-level ``|``, ``||``, ``;`` and ``&&`` of a shell command (outside quotes).

    One regular-expression jump from one quote, backslash or operator character to the next
    (a command line can be a script of thousands of characters).
    """
    found: list[tuple[int, str]] = []
    index = 0
    while (special := _SPECIAL.search(command, index)) is not None:
        index = special.start()
        char = command[index]
        if char == "'":
            index = command.find("'", index + 1) + 1
            if not index:
                break  # the quote never closes
        elif char == '"':
            index += 1
            while (inner := _IN_DOUBLE.search(command, index)) is not None and (
                    command[inner.start()] == "\\"):
                index = inner.start() + 2  # an escaped character inside double quotes
            if inner is None:
                break
            index = inner.start() + 1
        elif char == "\\":
            index += 2
        elif command.startswith(("||", "&&"), index):
            found.append((index, command[index:index + 2]))
            index += 2
        elif char == "&":
            index += 1
        else:
            found.append((index, char))
            index += 1
    return found


def _first_word(segment: str) -> str:
    words = segment.strip().split()
    while words and "=" in words[0] and not words[0].startswith("="):
        words = words[1:]  # VAR=value before the program
    return words[0].rsplit("/", 1)[-1] if words else ""


def unmask(command: str) -> tuple[str, bool]:
    """The command with a trailing filter, ``|| true`` or ``; echo`` peeled off, and whether
    anything was."""
    inner, peeled, _ = _peeled(command)
    return inner, peeled


def _peeled(command: str) -> tuple[str, bool, list[tuple[int, str]]]:
    """:func:`unmask`, and the operators of the inner command.

    The command is scanned once: the operators of ``inner[:position]`` (what is left once the
    last operator and its tail are peeled off) are the operators found before ``position``,
    since the scan reads left to right and no quote or escape it enters before an operator
    ends after it.
    """
    inner, peeled = command.strip(), False
    operators = _operators(inner)
    while True:
        if not operators:
            return inner, peeled, operators
        position, operator = operators[-1]
        tail = inner[position + len(operator):].strip()
        hides = ((operator == "|" and _first_word(tail) in _FILTERS)
                 or (operator in ("||", ";") and _DISCARD.match(tail) is not None))
        if not hides:
            return inner, peeled, operators
        inner, peeled = inner[:position].rstrip(), True
        operators = operators[:-1]


def _viewer(inner: str, operators: list[tuple[int, str]] | None = None) -> bool:
    """True when the inner command's last program only looks (a probe, a viewer);
    ``operators`` are ``_operators(inner)`` when the caller has them."""
    operators = [(p, o) for p, o in (_operators(inner) if operators is None else operators)
                 if o in ("&&", ";", "||", "|")]
    last = inner[operators[-1][0] + len(operators[-1][1]):] if operators else inner
    word = _first_word(last)
    if word == "git":
        parts = last.split()
        return len(parts) > 1 and parts[1] in _VIEWING_GIT
    return word in _VIEWERS


def shown_status(output: str, purpose: str = "general") -> int | None:
    """The exit status the output shows a failure of (127 for a missing program, 4 for
    pytest's usage errors), or None; ``purpose`` is the inner command's (a linter's own
    diagnostics show its failure)."""
    head = unframe(output[-65536:])
    if _MISSING_PROGRAM.search(head):
        return 127
    if purpose == "test" and _PYTEST_REFUSED.search(head):
        return 4
    if (has_test_summary(head) or has_build_diagnostic(head)
            or _EXCEPTION_END.search(head) or _NO_MODULE.search(head)):
        return 1
    if ('File "' in head and _FRAMES_THEN_EXCEPTION.search(head)) or (
            "Traceback" in head and _TRACEBACK_CUT.search(head.rstrip("\n") + "\n")):
        return 1
    # a package manager's own verdict on an install (pip's "No matching distribution", a
    # failed wheel build), unless it then installed what was asked
    if any(d.error_class in INSTALL_CLASSES for d in find_diagnostics(head)) and (
            _INSTALLED.search(head) is None):
        return 1
    if purpose == "static_analysis" and _LINT_SHOWN.search(head):
        return 1
    return None


def masked_failure(command: str, output: str) -> tuple[str, int] | None:
    """For a command that exited 0: ``(inner command, status)`` when it hid a failure its
    output shows, else None (see the module docstring for the rules)."""
    inner, peeled, operators = _peeled(command)
    if not peeled and not _SCRIPT.match(command.strip()):
        return None
    if not inner or _viewer(inner, operators):
        return None
    status = shown_status(output, command_purpose(inner))
    return None if status is None else (inner, status)
