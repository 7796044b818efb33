"""Small text helpers the readers share: the last exception line of a traceback, excerpts."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Final

__all__ = ["TRACEBACK_START", "as_dict", "as_key", "as_list", "as_str", "exception_line",
           "first_line", "iso_time", "split_exception"]

TRACEBACK_START: Final = "Traceback (most recent call last):"
# ``pkg.mod.ErrorName: message`` or a bare ``pkg.ErrorName`` as the last line of a traceback
_EXC_LINE: Final = re.compile(
    r"^(?P<type>(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Timeout"
    r"|Warning|Failure|Fault|Unavailable\w*|Exceeded\w*|Refused|Aborted|Cancelled))"
    r"(?::\s?(?P<message>.*))?$")


def split_exception(line: str) -> tuple[str, str] | None:
    """``("pkg.TypeError", "message")`` for a line naming an exception, else None."""
    match = _EXC_LINE.match(line.strip())
    if match is None:
        return None
    return match.group("type"), (match.group("message") or "").strip()


def exception_line(text: str) -> tuple[str, str, str] | None:
    """The last exception of a Python traceback in ``text``: (type, message, traceback).

    The exception line is the first line after the last ``Traceback (most recent call
    last):`` block's frames that names an exception type.
    """
    start = text.rfind(TRACEBACK_START)
    if start < 0:
        return None
    block = text[start:]
    for line in block.splitlines()[1:]:
        if line.startswith((" ", "\t")) or not line.strip():
            continue
        found = split_exception(line)
        if found is not None:
            end = block.find(line) + len(line)
            return found[0], found[1], text[: start + end]
    return None


def first_line(text: str, limit: int = 200) -> str:
    """The first non-blank line of ``text``, cut to ``limit`` characters."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""


def as_dict(value: object) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (logs are not always well formed)."""
    return value if isinstance(value, dict) else {}


def as_str(value: object) -> str:
    """``value`` when it is a string, else ""."""
    return value if isinstance(value, str) else ""


def as_list(value: object) -> list[Any]:
    """``value`` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def as_key(value: object) -> str:
    """An id as a lookup key: a string or number as text, anything else "" (never unhashable)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return ""


def iso_time(value: object) -> float | None:
    """An ISO-8601 time as seconds since the epoch, or None when ``value`` is not one."""
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value).timestamp()
        except ValueError:
            return None
    return None
