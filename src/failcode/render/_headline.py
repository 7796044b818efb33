"""A failure's headline: its sentence, with what failed when the sentence alone says nothing.

Some codes' sentences name nothing but the program and its status: FC-CMD-003 "The command
python exited with status 1.", the build, test, lint, merge, debug and doctor codes that
"failed", FC-SYS-001. Five such rows look the same while their details say ``ImportError:
cannot import name 'StringParser'`` or "The module erfa is not installed". The headline adds
the line of the detail that says what failed, in this order:

1. the line that starts with the exception type the classifier read
   (``metadata["diagnostic"]``), the last such line;
2. else the last exception line of a traceback (``pkg.SomeError: message``);
3. else the first compiler or linter diagnostic (``path:line[:col]: message``);
4. else the first line that reads as an error (error, failed, fatal, cannot, not found...),
   else the first line.

"The command python exited with status 1: ImportError: cannot import name 'StringParser'
from 'pkg'". Every other code's sentence already names what failed and is kept as it is.
``render_user``'s heading and triage's findings use the same headline.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from failcode.record._failure import Failure

__all__ = ["GENERIC_CODES", "headline"]

GENERIC_CODES: Final = frozenset({"FC-CMD-003", "FC-CMD-005", "FC-CMD-007", "FC-BUILD-001",
                                  "FC-TEST-001", "FC-LINT-001", "FC-GIT-003", "FC-SYS-001"})
"""The codes whose sentence names only the program and its status."""

_ERRORISH: Final = re.compile(r"(?i)\b(?:error|failed|failure|fatal|cannot|not found|no such)\b")
_EXCEPTION: Final = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Failure|Exit)\b:?(?: |$)")
_DIAGNOSTIC: Final = re.compile(r"^[^\s:]+:\d+(?::\d+)?:? \S")
_CHARS: Final = 240


def _said(failure: Failure) -> str:
    """The detail's line that says what failed (the module's order), or ``""``."""
    lines = [line.strip() for line in (failure.detail or "").splitlines() if line.strip()]
    if not lines:
        return ""
    diagnostic = failure.metadata.get("diagnostic")
    found = None
    if isinstance(diagnostic, str) and diagnostic:
        found = next((line for line in reversed(lines) if line.startswith(diagnostic)), None)
    if found is None:
        found = next((line for line in reversed(lines) if _EXCEPTION.match(line)), None)
    if found is None:
        found = next((line for line in lines if _DIAGNOSTIC.match(line)), None)
    if found is None:
        found = next((line for line in lines if _ERRORISH.search(line)), lines[0])
    return found if len(found) <= _CHARS else found[: _CHARS - 1] + "…"


def headline(failure: Failure, message: str | None = None) -> str:
    """``failure``'s sentence (``message`` instead when given, e.g. a translation), with the
    line of its detail that says what failed when the code's sentence is generic.

    Example:
        ``The command python exited with status 1: ImportError: cannot import name 'x'``.
    """
    text = failure.message if message is None else message
    if failure.code not in GENERIC_CODES or not failure.detail:
        return text
    said = _said(failure)
    return f"{text.rstrip('.')}: {said}" if said else text
