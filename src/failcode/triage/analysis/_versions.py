"""Agent versions in order, and the findings whose rate rose from one version to the next.

Rules:

- **Order** (:func:`version_key`): numbers compare as numbers (``1.10.0 > 1.9.2``); a
  pre-release (``1.4.0rc1``, ``1.4.0-beta.2``, ``dev``) sorts before its release; a version
  with no number compares as text after every numbered one. The service orders versions the
  same way (a finding resolved in a version reopens from that version on).
"""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = ["version_key"]

_PRE: Final = re.compile(r"(?i)(dev|a|alpha|b|beta|c|rc|pre|preview)")


def version_key(version: str) -> tuple[Any, ...]:
    """A sort key for an agent version (see the module): numbers compare as numbers, a
    pre-release before its release, a version without numbers after every numbered one."""
    text = version.strip().lstrip("vV")
    numbers = re.match(r"\d+(?:\.\d+)*", text)
    if numbers is None:
        return (1, (), 0, text)
    release = tuple(int(part) for part in numbers.group(0).split("."))
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    rest = text[numbers.end():].lstrip(".-_+")
    pre = 1 if not rest or rest.startswith(("post", "+")) else (0 if _PRE.match(rest) else 1)
    return (0, release, pre, rest)
