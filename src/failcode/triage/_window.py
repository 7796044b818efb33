"""Sessions by time: ``--since``, ``--until`` and ``--changed-at`` (did the fix work?).

Rules:

- A session's time is when it started (:attr:`~failcode.triage._result.SessionResult.started`:
  the earliest time its log gives a step or turn). A date is ``YYYY-MM-DD`` or an ISO 8601
  time (``2026-11-02T14:30``, ``...Z``, ``...+02:00``); one without a zone is UTC.
- ``--since`` keeps the sessions that started at or after it, ``--until`` those that started
  before it; with either, a session whose log gives no time is left out, and counted.
- ``--changed-at`` splits the sessions at a time: a date, or a file (an instruction file such
  as ``AGENTS.md``) whose last change is the time: the last commit that touched it when it is
  in a git repository (``git log -1 --format=%ct -- FILE``), else its modification time. The
  findings of the sessions before are compared with those after by the rules of
  :mod:`failcode.triage.analysis._compare` (rates per session, "few" when the change is
  within noise); a finding that no session after hit is ``gone``.
"""

from __future__ import annotations

import datetime as dt
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from failcode.triage._result import SessionResult

__all__ = ["DATE_FORMS", "Split", "Window", "parse_time", "split_at"]

DATE_FORMS: Final = "YYYY-MM-DD or an ISO 8601 time such as 2026-11-02T14:30Z"


def parse_time(value: str) -> float:
    """Seconds since the epoch of a date or ISO 8601 time (UTC without a zone).

    Raises:
        ValueError: naming the value and the forms expected.
    """
    text = value.strip()
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f"{value!r} is not a date; expected {DATE_FORMS}") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.timestamp()


def shown(seconds: float) -> str:
    """A time as a report shows it: ``2026-11-02 14:30 UTC`` (the date alone at midnight)."""
    when = dt.datetime.fromtimestamp(seconds, dt.UTC)
    return when.strftime("%Y-%m-%d" if when.time() == dt.time() else "%Y-%m-%d %H:%M UTC")


@dataclass(frozen=True, slots=True)
class Window:
    """``--since`` and ``--until``: the sessions kept."""

    since: float | None = None
    until: float | None = None

    def keeps(self, session: SessionResult) -> bool:
        """Whether the session started inside the window (never one without a time)."""
        if session.started is None:
            return False
        return ((self.since is None or session.started >= self.since)
                and (self.until is None or session.started < self.until))


@dataclass(frozen=True, slots=True)
class Split:
    """``--changed-at``: the time the sessions are split at, and what it is."""

    at: float
    what: str
    """``2026-11-02`` or ``2026-11-02 14:30 UTC (the last commit of AGENTS.md)``."""

    @property
    def title(self) -> str:
        """The comparison's heading."""
        return f"Before and after {self.what}"


def split_at(value: str) -> Split:
    """The split ``--changed-at VALUE`` names: a date, else a file's last change.

    Raises:
        ValueError: neither a date nor an existing file (naming the value).
    """
    try:
        at = parse_time(value)
    except ValueError:
        path = Path(value)
        if not path.is_file():
            msg = f"{value!r} is neither a date ({DATE_FORMS}) nor a file"
            raise ValueError(msg) from None
    else:
        return Split(at, shown(at))
    committed = _last_commit(path)
    if committed is not None:
        return Split(committed, f"{shown(committed)} (the last commit of {path.name})")
    changed = path.stat().st_mtime
    return Split(changed, f"{shown(changed)} (the last change to {path.name}, not in git)")


def _last_commit(path: Path) -> float | None:
    """The time of the last commit that touched ``path``; None outside a repository, without
    git, or for a file never committed."""
    try:
        done = subprocess.run(
            ["git", "-C", str(path.parent.resolve()), "log", "-1", "--format=%ct", "--",
             path.name], capture_output=True, text=True, check=False, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    text = done.stdout.strip()
    return float(text) if done.returncode == 0 and text.isdigit() else None
