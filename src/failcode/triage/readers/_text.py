"""Small helpers the readers share: the last exception line of a traceback, excerpts, and the
times, exit statuses and HTTP statuses an input states.

Rules (about values read from an input, the same in every reader):

- Times: an ISO-8601 time with a zone (``Z``, ``+02:00``) is that instant. A time without a
  zone is read as UTC, whatever the machine's time zone: the agents that write one (OpenHands'
  ``datetime.now().isoformat()``, aider's ``# aider chat started at`` headings, the OpenHands
  harness's log lines) write the writer's local time and do not say which zone that was, so
  the step's time may be off by the writer's UTC offset, but the same input gives the same
  times, and so the same event ids (:func:`failcode.events.derived_event_id`), on every
  machine. A time given as seconds since the epoch is read when it is a finite number (not a
  bool) within the years 1 to 9999; anything else is no time (None).
- Exit statuses: an exit status is read from a JSON integer (not a bool, not a float) or from
  the digits of the format's own text (``Exit code 2``); a value of another type is no exit
  status, as if the format had not written one. An exit status outside
  :data:`EXIT_MIN`..:data:`EXIT_MAX` (-2**31..2**32-1: POSIX statuses 0..255, a signal as
  Python reports it, -N, and Windows' 32-bit codes, signed or not) is one no process has: the
  input is malformed there, an FC-DATA-003 :class:`~failcode.triage._events.InputError` naming
  where (the line, or the JSON path in a document) and the value (a huge one by its size); the
  sessions read before it are kept, as for any damage (``_lines``, ``_jsonstream``).
- HTTP statuses (a provider error's ``status``): a JSON integer in 100..599; anything else is
  no status (the message is kept without one).
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Any, Final

from failcode.triage._events import InputError

__all__ = ["EXIT_MAX", "EXIT_MIN", "TRACEBACK_START", "as_dict", "as_key", "as_list", "as_str",
           "dollars", "epoch_time", "exception_line", "exit_in_text", "first_line", "http_status",
           "iso_time", "recorded_total", "split_exception", "stated_exit", "token_count"]

EXIT_MIN: Final = -(2**31)
"""The lowest exit status read: a signed 32-bit code."""
EXIT_MAX: Final = 2**32 - 1
"""The highest exit status read: an unsigned 32-bit code (Windows' ``DWORD``)."""
_EPOCH_FIRST: Final = datetime.min.replace(tzinfo=UTC).timestamp()
_EPOCH_LAST: Final = datetime.max.replace(tzinfo=UTC).timestamp()
_DIGITS: Final = re.compile(r"-?\d+")
_LONGEST: Final = len(str(EXIT_MIN))

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


def dollars(value: object) -> float | None:
    """A price: a JSON number from 0 to a billion dollars, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if 0 <= value < 1e9 else None  # NaN fails both


def token_count(value: object) -> int:
    """A token count: a non-negative JSON integer, else 0."""
    return value if type(value) is int and 0 <= value < 1 << 53 else 0


def recorded_total(value: object) -> float | None:
    """A session's total in dollars as an agent recorded it: a JSON number above 0 and below a
    billion dollars, else None (0 is what litellm-based agents and Claude Code record when
    they could not price the calls: unknown, never $0)."""
    return dollars(value) or None


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
    """An ISO-8601 time as seconds since the epoch, or None when ``value`` is not one; a time
    without a zone is UTC (the module's rules), never the machine's local time."""
    if not isinstance(value, str):
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


def epoch_time(value: object) -> float | None:
    """Seconds since the epoch as the input gives them: a finite number (not a bool) within the
    years 1 to 9999, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int) and not _EPOCH_FIRST <= value <= _EPOCH_LAST:
        return None  # also an int too large for a float
    seconds = float(value)
    if not math.isfinite(seconds) or not _EPOCH_FIRST <= seconds <= _EPOCH_LAST:
        return None
    return seconds


def _shown(value: int | str) -> str:
    """A number as an error message quotes it: in full up to 20 digits, else its size
    (``~10**30``: 31 digits; a huge one has no short decimal form)."""
    if isinstance(value, str):
        sign = "-" if value.startswith("-") else ""
        digits = value.lstrip("-").lstrip("0") or "0"
        return sign + digits if len(digits) <= 20 else f"{sign}~10**{len(digits) - 1}"
    if value.bit_length() <= 64:
        return str(value)
    size = abs(value)
    power = int((size.bit_length() - 1) * 0.30102999566)  # at most log10(size)
    while 10 ** (power + 1) <= size:
        power += 1
    return f"{'-' if value < 0 else ''}~10**{power}"


def _out_of_range(where: str, what: str, value: int | str, low: int, high: int) -> InputError:
    return InputError("FC-DATA-003", f"{where}: {what} is {_shown(value)}, not in {low}..{high}")


def stated_exit(value: object, where: str) -> int | None:
    """The exit status a JSON value states: an integer (not a bool) in
    :data:`EXIT_MIN`..:data:`EXIT_MAX`; None for a value of another type (no status).

    Raises:
        InputError: FC-DATA-003 naming ``where`` and the value, for an integer out of range.
    """
    if type(value) is not int:
        return None
    if not EXIT_MIN <= value <= EXIT_MAX:
        raise _out_of_range(where, "the exit status", value, EXIT_MIN, EXIT_MAX)
    return value


def exit_in_text(digits: str, where: str, *, what: str = "the exit status", low: int = EXIT_MIN,
                 high: int = EXIT_MAX) -> int:
    """The number the format's text states (``-?\\d+``, matched by the reader's pattern), in
    ``low..high`` (by default an exit status's range); never converts more digits than the
    range holds.

    Raises:
        InputError: FC-DATA-003 naming ``where`` and the number, for one out of range.
    """
    if not _DIGITS.fullmatch(digits):  # the reader's own pattern matched digits: a bug
        msg = f"exit_in_text: {digits[:40]!r} is not a number"
        raise ValueError(msg)
    trimmed = digits.lstrip("-").lstrip("0") or "0"
    if len(trimmed) > _LONGEST:
        raise _out_of_range(where, what, digits, low, high)
    number = int(digits)
    if not low <= number <= high:
        raise _out_of_range(where, what, digits, low, high)
    return number


def http_status(value: object) -> int | None:
    """An HTTP status the input states: a JSON integer (not a bool) in 100..599, else None."""
    return value if type(value) is int and 100 <= value <= 599 else None
