"""Triage's outputs written as the inputs are read, so memory does not grow with them.

``failcode triage`` hands each input's sessions, in input order, to the outputs asked for
and lets them go: the ``--json`` document (:class:`JsonDocument`), the store
(:class:`~failcode.triage._record.Recorder`) and the terminal summary's tables
(:class:`Summary`). Only ``--html`` holds every session (its plots come before its tables).

The ``--json`` document is written as it is produced: ``format_version``, then ``sessions``
one by one as each input is read, then ``inputs`` and the tables over the sessions
(``signatures``, ``blame``, ``outcomes``, ``findings``). Its content is
:meth:`TriageResult.to_dict`'s; only the order of the top-level keys differs, which JSON does
not count.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import TYPE_CHECKING, Any, Final

from failcode.triage._result import FORMAT_VERSION, Tables

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from failcode.triage._result import Breakdown, InputResult, SessionResult, TriageResult

__all__ = ["TRIAL_ORDER", "JsonDocument", "Summary", "Trial"]

_FLUSH: Final = 1024 * 1024
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_FAILURES: Final = "\x00failcode-triage:failures\x00"
_OUTCOMES: Final = "\x00failcode-triage:outcomes\x00"
_FAILURES_JSON: Final = json.dumps(_FAILURES)
_OUTCOMES_JSON: Final = json.dumps(_OUTCOMES)


@dataclasses.dataclass(frozen=True, slots=True)
class Trial:
    """A graded session as the summary lists it: one line per trial of a benchmark job."""

    session: str
    verdict: str
    reward: float | None
    status: str
    failures: int
    code: str | None
    """The code that ended the session, else the code of most of its failing steps."""

    @classmethod
    def of(cls, session: SessionResult) -> Trial:
        """The row of one graded session."""
        code = session.ended_failure.code if session.ended_failure is not None else None
        if code is None and session.failures:
            counts: dict[str, int] = {}
            for entry in session.failures:
                counts[entry.failure.code] = counts.get(entry.failure.code, 0) + 1
            code = max(counts, key=lambda key: counts[key])  # first of the most, by order
        return cls(session.session, session.verdict or "ungraded", session.reward,
                   session.status, len(session.failures), code)

    @property
    def verdict_text(self) -> str:
        """``passed``, ``failed``, ``ungraded``; a partial grade with its reward
        (``partial 0.5``)."""
        if self.verdict == "partial" and self.reward is not None:
            return f"partial {self.reward:g}"
        return self.verdict


TRIAL_ORDER: Final = ("failed", "ungraded", "partial", "passed")
"""The order trials are listed in: what needs a look first."""


class Summary:
    """What the terminal summary shows, added one session at a time.

    Counts, the inputs, the tables, and the ``top`` sessions with the most loops (without their
    failures and outcomes); ties keep the sessions' order, as a stable sort would.
    """

    def __init__(self, top: int = 10, *, keep_all: bool = False) -> None:
        self.top = top
        self.inputs: list[InputResult] = []
        self.skipped = 0
        """Files found by walking that are not session logs."""
        self.cached: int | None = None
        """Inputs taken from the triage cache; None when the run used no cache."""
        self.resumed: int | None = None
        """Inputs read from where the last run stopped (they only grew); None: no cache."""
        self.per_input: dict[str, int] = {}
        """Failing steps per input path."""
        self.sessions = 0
        self.steps = 0
        self.failures = 0
        self.loops = 0
        self.looping = 0
        """Sessions with at least one loop."""
        self.ended: dict[str, int] = {}
        self.failing_sessions = 0
        """Sessions with at least one failing step."""
        self.tables = Tables(keep_all=keep_all)
        """The tables; with ``keep_all`` its findings keep every occurrence (drill-down)."""
        self._looping: list[tuple[int, int, SessionResult]] = []
        self.trials: list[Trial] = []
        """One row per session a benchmark harness graded (a Harbor trial), in report order."""

    @classmethod
    def of(cls, result: TriageResult, *, top: int = 10, keep_all: bool = False) -> Summary:
        """The summary of a whole result."""
        summary = cls(top, keep_all=keep_all)
        for session in result.sessions:
            summary.add(session)
        for item in result.inputs:
            summary.add_input(item)
        summary.skipped = len(result.skipped)
        summary.cached = result.cached_inputs
        summary.resumed = result.resumed_inputs
        return summary

    def add_input(self, item: InputResult) -> None:
        """One more input row (in input order)."""
        self.inputs.append(item)

    def add(self, session: SessionResult) -> None:
        """One more session (in report order)."""
        index = self.sessions
        failures = len(session.failures)
        self.sessions += 1
        self.steps += session.steps
        self.failures += failures
        self.per_input[session.path] = self.per_input.get(session.path, 0) + failures
        self.ended[session.status] = self.ended.get(session.status, 0) + 1
        self.failing_sessions += bool(failures)
        self.tables.add(session)
        if session.verdict is not None:
            self.trials.append(Trial.of(session))
        if session.loops:
            self.loops += len(session.loops)
            self.looping += 1
            slim = dataclasses.replace(session, failures=[], outcomes=[], ended_failure=None)
            self._looping.append((-len(session.loops), index, slim))
            if len(self._looping) > 2 * self.top:
                self._looping.sort(key=lambda row: row[:2])
                del self._looping[self.top:]

    @property
    def by_model(self) -> dict[str, Breakdown]:
        """Per model (where the format records it): sessions, failures and their cost."""
        return self.tables.by_model

    @property
    def by_agent(self) -> dict[str, Breakdown]:
        """Per agent and version (``claude-code 2.1.12``): the same."""
        return self.tables.by_agent

    def verdicts(self) -> dict[str, int]:
        """Graded sessions per verdict, in :data:`TRIAL_ORDER`."""
        counts = dict.fromkeys(TRIAL_ORDER, 0)
        for trial in self.trials:
            counts[trial.verdict] = counts.get(trial.verdict, 0) + 1
        return {verdict: n for verdict, n in counts.items() if n}

    def trials_in_order(self) -> list[Trial]:
        """The graded sessions, failed first (then ungraded, partial, passed), each kind in
        report order."""
        rank = {verdict: index for index, verdict in enumerate(TRIAL_ORDER)}
        return sorted(self.trials, key=lambda trial: rank.get(trial.verdict, len(rank)))

    def top_looping(self) -> list[SessionResult]:
        """The ``top`` sessions with the most loops, most first (then in report order)."""
        return [row[2] for row in sorted(self._looping, key=lambda row: row[:2])[:self.top]]

    @property
    def ok(self) -> bool:
        """True when every input was read in full (exit status 0)."""
        return all(item.error_code is None for item in self.inputs)


class JsonDocument:
    """The ``--json`` document, written through ``write`` as sessions come."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write
        self._buffer: list[str] = [f'{{"format_version": {FORMAT_VERSION}, "sessions": [']
        self._size = 0
        self._first = True

    def _put(self, text: str) -> None:
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate (a path of undecodable bytes)
                text = _SURROGATE.sub("\ufffd", text)
        self._buffer.append(text)
        self._size += len(text)
        if self._size >= _FLUSH:
            self._flush()

    def _flush(self) -> None:
        if self._buffer:
            self._write("".join(self._buffer))
            self._buffer.clear()
            self._size = 0

    def session(self, session: SessionResult) -> None:
        """Write one session (in report order), its failures and outcomes one at a time: a
        session can hold a whole trajectory's failures."""
        shape = dataclasses.replace(session, failures=[], outcomes=[]).to_dict()
        shape["failures"], shape["outcomes"] = _FAILURES, _OUTCOMES
        head, _, rest = json.dumps(shape, ensure_ascii=False).partition(_FAILURES_JSON)
        middle, _, tail = rest.partition(_OUTCOMES_JSON)
        self._put(head if self._first else ", " + head)
        self._first = False
        self._entries((entry.to_dict for entry in session.failures), middle)
        self._entries((entry.to_dict for entry in session.outcomes), tail)

    def _entries(self, entries: Iterable[Callable[[], dict[str, Any]]], after: str) -> None:
        self._put("[")
        for index, entry in enumerate(entries):
            text = json.dumps(entry(), ensure_ascii=False)
            self._put(", " + text if index else text)
        self._put("]" + after)

    def close(self, inputs: list[InputResult], tables: Tables,
              skipped: list[str] | None = None, extra: dict[str, Any] | None = None) -> None:
        """Write the inputs, the files skipped, the tables (and ``extra`` keys, such as a
        ``comparison``), and end the document (one line)."""
        rest = {"inputs": [item.to_dict() for item in inputs], "skipped": list(skipped or []),
                "signatures": tables.signatures(), "blame": tables.blame(),
                "outcomes": tables.outcome_counts(), "findings": tables.findings.to_list(),
                **tables.extra(), **(extra or {})}
        self._put("], " + json.dumps(rest, ensure_ascii=False)[1:] + "\n")
        self._flush()

    @classmethod
    def write_result(cls, result: TriageResult, write: Callable[[str], None]) -> None:
        """Write a whole result as the same document."""
        document = cls(write)
        for session in result.sessions:
            document.session(session)
        document.close(result.inputs, Tables.of(result.sessions), result.skipped)
