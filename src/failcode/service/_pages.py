"""What each dashboard page shows, read from one project's store: plain data, no HTML.

Every function takes the project's :class:`~failcode.store.Store` (and its
:class:`~failcode.service._findings.Findings`) and returns dataclasses the templates render.
Every list is paged; every query reads counts kept at ingest (``signatures``, ``sessions``,
``session_signatures``, ``svc_finding_*``) or events by an indexed key, never all events, so a
page costs the same over 1,000 or 1,000,000 stored events.

Rules:

- **Findings** are :meth:`Findings.list`'s, ranked as the triage report ranks them: by
  ``cost`` (failures, the store's count) unless another sort is asked; each with who acts (the
  category in words, :data:`failcode.triage._findings.WHO_ACTS`), its message, its remedy
  (the code's), a 14-day trend (failures per UTC day) and the agent versions it occurred in
  (each with its agent: ``codex 0.171.0``).
- **Did the fix work** (a resolved finding's page): the comparisons of
  :meth:`Findings.detail` (the rules of :mod:`failcode.service._findings`), each one sentence
  (:func:`effect_sentence`) and a table of both sides.
- **Sessions** are the store's (session, input) pairs with their failures, sorted by failures;
  sessions without a failure (outcomes only, or only a start and an end an agent's hooks or
  export reported) are hidden unless asked for. Each names its agent and version
  (``svc_session_agents``: what its events name). How a session ended is what its latest
  event that says it says (:func:`~failcode.service._findings.session_end`: the
  ``triage.ended`` that ``failcode triage --store/--report-to`` records, a hook's
  ``session.ended``, an export's record of the error that ended it), kept per session at
  ingest, else ``unknown``: a failure along the way is not an end. The counts per way and per
  day come from that table. A session that reported nothing is not in the store.
- **A session's timeline** is its events in time order (at most 500), each with its step,
  event, code or outcome, message and command; a run of the same signature 2 or more times in
  a row is one loop (the store's rule), numbered in the order loops start; a failure of
  unknown cause (``FC-SYS-001`` of class ``unknown``) is never part of one.
- **Compare** sets two sides side by side, by agent version (or model or agent), or by two
  time windows, with the triage comparison's rules (:mod:`failcode.triage.analysis._compare`):
  a share per side; ``new``, ``gone``, ``up``, ``down``, ``same``; a change is significant at 1.96
  standard errors of a two-proportion test, else marked as too few to tell. A share is a
  finding's failures per failure of its side (the per-day and per-version counts the findings
  keep; the triage report divides sessions hit by sessions, which the store keeps per session
  and signature only, too large a table to scan per page), said on the page.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

import msgspec

from failcode import NoMatch, SessionEnded, SessionStarted
from failcode.service._findings import (
    DAY_US,
    Effect,
    Finding,
    FindingDetail,
    Findings,
    session_agent,
)
from failcode.triage._findings import WHO_ACTS
from failcode.triage._versions import significant

if TYPE_CHECKING:
    from failcode import Failure, NonErrorOutcome
    from failcode.events import Event
    from failcode.store import Store

__all__ = [
    "PAGE",
    "CompareRow",
    "ComparePage",
    "FindingRow",
    "FindingsPage",
    "SessionRow",
    "SessionsPage",
    "Step",
    "compare_page",
    "effect_sentence",
    "finding_page",
    "findings_page",
    "session_page",
    "sessions_page",
]

PAGE: Final = 50
"""Rows per page of every list."""
TREND_DAYS: Final = 14
TIMELINE_LIMIT: Final = 500
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def _time(us: int) -> datetime:
    return _EPOCH + timedelta(microseconds=int(us))


def who_acts(category: str) -> str:
    """The category in words (who must act)."""
    return WHO_ACTS.get(category, category)


# -- findings ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class FindingRow:
    finding: Finding
    who: str
    remedy: str | None
    trend: tuple[int, ...]
    """Failures per UTC day, the last :data:`TREND_DAYS` days, oldest first."""
    versions: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FindingsPage:
    rows: tuple[FindingRow, ...]
    total: int
    offset: int
    limit: int
    options: dict[str, tuple[str, ...]]
    """Values the filters offer: agents, models, versions, categories."""


def _remedy(code: str) -> str | None:
    """The code's remedy, when it is a sentence of its own (no ``{placeholder}`` to fill)."""
    from failcode.codes._registry import UnknownCodeError, lookup  # noqa: PLC0415

    try:
        remedy = lookup(code).remedy or None
    except UnknownCodeError:
        return None
    return remedy if remedy and "{" not in remedy else None


def _latest_remedy(store: Store, signature: str) -> str | None:
    """The remedy of the signature's latest failure (its params filled in)."""
    from failcode.events import Event  # noqa: PLC0415

    rows = store.fetch("SELECT body FROM events WHERE signature = ? ORDER BY ts_us DESC "
                       "LIMIT 1", (signature,))
    if not rows:
        return None
    failure = Event.from_json(rows[0][0]).failure
    return failure.remedy if failure is not None and failure.remedy else None


def _trends(store: Store, signatures: list[str], now_us: int) -> dict[str, tuple[int, ...]]:
    if not signatures:
        return {}
    first = now_us // DAY_US - TREND_DAYS + 1
    marks = ", ".join("?" for _ in signatures)
    # both ends bounded: a day after today (an event stored with a time ahead, kept by every
    # prune since) is not one of the trend's days
    rows = store.fetch(f"SELECT signature, day, count FROM svc_finding_days WHERE signature IN "
                       f"({marks}) AND day >= ? AND day < ?",
                       (*signatures, first, first + TREND_DAYS))
    out = {s: [0] * TREND_DAYS for s in signatures}
    for signature, day, count in rows:
        out[str(signature)][int(day) - first] += int(count)
    return {s: tuple(v) for s, v in out.items()}


def _versions(store: Store, signatures: list[str]) -> dict[str, tuple[str, ...]]:
    if not signatures:
        return {}
    marks = ", ".join("?" for _ in signatures)
    rows = store.fetch(f"SELECT DISTINCT signature, agent, version FROM svc_finding_versions "
                       f"WHERE signature IN ({marks}) AND version <> ''", tuple(signatures))
    out: dict[str, list[tuple[str, str]]] = {s: [] for s in signatures}
    for signature, agent, version in rows:
        out[str(signature)].append((str(agent), str(version)))
    from failcode.service._findings import version_key  # noqa: PLC0415

    # each version with its agent (``codex 0.171.0``): two agents' 1.0 are not one version
    return {s: tuple(f"{a} {v}".strip() for a, v in sorted(
        v, key=lambda pair: (pair[0], version_key(pair[1])), reverse=True)[:6])
        for s, v in out.items()}


def filter_options(store: Store) -> dict[str, tuple[str, ...]]:
    """The agents, models, versions and categories the project's findings hold."""
    options: dict[str, tuple[str, ...]] = {}
    for name, column in (("agent", "agent"), ("model", "model"), ("version", "version")):
        rows = store.fetch(f"SELECT DISTINCT {column} FROM svc_finding_versions WHERE "
                           f"{column} <> '' ORDER BY {column} LIMIT 200")
        options[name] = tuple(str(r[0]) for r in rows)
    options["category"] = tuple(WHO_ACTS)
    return options


def findings_page(store: Store, findings: Findings, *, filters: dict[str, Any],
                  sort: str = "count", offset: int = 0, now_us: int | None = None,
                  ) -> FindingsPage:
    """A page of findings with their trends and versions."""
    now = time.time_ns() // 1000 if now_us is None else now_us
    page, total = findings.list(**filters, sort=sort, limit=PAGE, offset=offset, now_us=now)
    signatures = [f.signature for f in page]
    trends = _trends(store, signatures, now)
    versions = _versions(store, signatures)
    rows = tuple(FindingRow(finding=f, who=who_acts(f.category),
                            remedy=_latest_remedy(store, f.signature) or _remedy(f.code),
                            trend=trends.get(f.signature, (0,) * TREND_DAYS),
                            versions=versions.get(f.signature, ())) for f in page)
    return FindingsPage(rows=rows, total=total, offset=offset, limit=PAGE,
                        options=filter_options(store))


@dataclass(frozen=True, slots=True)
class FindingView:
    detail: FindingDetail
    who: str
    remedy: str | None
    parts: dict[str, str]
    """The signature's five parts: kind, surface, class, location, the message's hash."""
    reference: str
    """The code's reference entry (``failcode explain``)."""
    variants: tuple[Finding, ...]
    sessions: tuple[tuple[str, str, int], ...]
    """(session, input, failures) of the sessions it hit, the most failures first."""
    effects: tuple[tuple[Effect, str], ...] = ()
    """Did the fix work: each comparison and its sentence (:func:`effect_sentence`)."""


def _sessions(count: int) -> str:
    return f"{count:,} session{'' if count == 1 else 's'}"


def effect_sentence(effect: Effect) -> str:
    """A fix's comparison in one sentence: ``Resolved in 2.1.12 (codex): before, 8 of 10
    sessions hit it (80 per 100); since, 0 of 12 (gone; significant).`` A change that is not
    significant reads "too few sessions to tell"; a side without sessions says so."""
    head = (f"Resolved in {effect.version}" if effect.version is not None
            else f"Resolved at {effect.since}")
    if effect.agent:
        head += f" ({effect.agent})"
    before, after = effect.before, effect.after
    versioned = effect.version is not None
    said = (f"before, {before.hit:,} of {_sessions(before.sessions)} hit it "
            f"({before.per_100:g} per 100)" if before.per_100 is not None
            else f"before, no session{' of an earlier version' if versioned else ''}")
    if after.per_100 is None:
        return (f"{head}: {said}; since, no session"
                f"{f' of {effect.version} or later' if versioned else ''} yet.")
    if effect.status == "unknown":  # no session before: nothing to compare with
        return (f"{head}: {said}; since, {after.hit:,} of {_sessions(after.sessions)} hit it "
                f"({after.per_100:g} per 100), nothing to compare with.")
    verdict = "significant" if effect.significant else "too few sessions to tell"
    rate = "" if effect.status == "gone" else f"{after.per_100:g} per 100; "
    return (f"{head}: {said}; since, {after.hit:,} of {after.sessions:,} "
            f"({rate}{effect.status}; {verdict}).")


def finding_page(store: Store, findings: Findings, finding_id: int) -> FindingView:
    """One finding: detail, variants (its cluster), sessions hit, parts and reference."""
    from failcode.codes._docs import explain_text  # noqa: PLC0415
    from failcode.codes._registry import UnknownCodeError, catalogs, lookup  # noqa: PLC0415
    detail = findings.detail(finding_id, occurrences=10, days=30)
    today = datetime.now(UTC).date().isoformat()
    if any(day > today for day, _count in detail.days):  # a time ahead, stored before the
        detail = msgspec.structs.replace(detail, days=tuple(  # doors bounded times
            (day, count) for day, count in detail.days if day <= today))
    finding = detail.finding
    pieces = finding.signature.split(":")
    parts = dict(zip(("kind", "surface", "class", "location", "message hash"), pieces,
                     strict=False)) if len(pieces) == 5 else {"signature": finding.signature}
    try:
        spec = lookup(finding.code)
        catalog = next(c for c in catalogs() if c.get(spec.code) is not None)
        reference = explain_text(catalog, spec)
    except (UnknownCodeError, StopIteration):
        reference = ""
    variants: tuple[Finding, ...] = ()
    if finding.cluster_id:
        rows = store.fetch("SELECT f.id FROM svc_findings f JOIN signatures s ON s.signature = "
                           "f.signature WHERE s.cluster_id = ? AND f.id <> ? ORDER BY s.count "
                           "DESC LIMIT 20", (finding.cluster_id, finding.id))
        variants = tuple(findings.get(int(r[0])) for r in rows)
    hit = store.fetch("SELECT session, input, count FROM session_signatures WHERE signature = ? "
                      "ORDER BY count DESC, last_us DESC LIMIT 50", (finding.signature,))
    return FindingView(detail=detail, who=who_acts(finding.category),
                       remedy=detail.remedy or _remedy(finding.code), parts=parts,
                       reference=reference, variants=variants,
                       sessions=tuple((str(s), str(i), int(c)) for s, i, c in hit),
                       effects=tuple((e, effect_sentence(e)) for e in detail.effects))


# -- sessions ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SessionRow:
    session: str
    input: str
    events: int
    failures: int
    first_seen: datetime
    last_seen: datetime
    ended: str
    codes: tuple[tuple[str, int], ...]
    """(code, failures) chips, the most failures first."""
    agent: str = ""
    """The agent and its version (``claude-code 2.1.332``), where an event named them."""


@dataclass(frozen=True, slots=True)
class SessionsPage:
    rows: tuple[SessionRow, ...]
    total: int
    offset: int
    limit: int
    clean_hidden: int
    """Sessions without a failure (not listed unless ``clean``)."""
    per_day: tuple[tuple[str, dict[str, int]], ...]
    """(UTC day, sessions per way they ended) on the latest 30 days with sessions up to
    tomorrow, by the day of each session's latest event."""


def _ended(store: Store, session: str, input_: str, last_us: int) -> str:
    """How a session ended: what the findings keep (``svc_session_ends``), else what its last
    event says, else ``unknown``."""
    from failcode.events import Event  # noqa: PLC0415
    from failcode.service._findings import session_end  # noqa: PLC0415

    kept = store.fetch("SELECT ended FROM svc_session_ends WHERE session = ? AND input = ?",
                       (session, input_))
    if kept:
        return str(kept[0][0])
    rows = store.fetch("SELECT body FROM events WHERE ts_us = ? AND session = ? AND input = ? "
                       "LIMIT 5", (last_us, session, input_))
    for (body,) in rows:
        ended = session_end(Event.from_json(body))
        if ended is not None:
            return ended
    return "unknown"


def sessions_page(store: Store, *, clean: bool = False, offset: int = 0) -> SessionsPage:
    """A page of sessions, the most failures first."""
    where = "" if clean else " WHERE failures > 0"
    total = int(store.fetch(f"SELECT count(*) FROM sessions{where}")[0][0])
    without = int(store.fetch("SELECT count(*) FROM sessions WHERE failures = 0")[0][0])
    rows = store.fetch(f"SELECT session, input, events, failures, first_us, last_us FROM "
                       f"sessions{where} ORDER BY failures DESC, last_us DESC, session LIMIT ? "
                       f"OFFSET ?", (PAGE, offset))
    out = []
    for session, input_, events, failures, first_us, last_us in rows:
        chips = store.fetch("SELECT s.code, sum(x.count) FROM session_signatures x JOIN "
                            "signatures s ON s.signature = x.signature WHERE x.session = ? AND "
                            "x.input = ? GROUP BY s.code ORDER BY sum(x.count) DESC LIMIT 4",
                            (session, input_))
        out.append(SessionRow(session=str(session), input=str(input_), events=int(events),
                              failures=int(failures), first_seen=_time(first_us),
                              last_seen=_time(last_us),
                              ended=_ended(store, str(session), str(input_), int(last_us)),
                              codes=tuple((str(c), int(n)) for c, n in chips),
                              agent=session_agent(store, str(session), str(input_))))
    # up to tomorrow (a door keeps times up to an hour ahead): a session stored with a time
    # further ahead, before the doors bounded times, is in no day's count
    until = (time.time_ns() // 1000 // DAY_US + 2) * DAY_US
    latest = store.fetch("SELECT DISTINCT last_us / ? AS day FROM svc_session_ends WHERE "
                         "last_us < ? ORDER BY day DESC LIMIT 30", (DAY_US, until))
    per_status: dict[str, dict[str, int]] = {}
    if latest:
        days = store.fetch("SELECT last_us / ? AS day, ended, count(*) FROM svc_session_ends "
                           "WHERE last_us >= ? AND last_us < ? GROUP BY day, ended ORDER BY "
                           "day, ended", (DAY_US, int(latest[-1][0]) * DAY_US, until))
        for day, ended, count in days:
            label = _time(int(day) * DAY_US).date().isoformat()
            per_status.setdefault(label, {})[str(ended)] = int(count)
    per_day = tuple(sorted(per_status.items()))
    return SessionsPage(rows=tuple(out), total=total, offset=offset, limit=PAGE,
                        clean_hidden=0 if clean else without, per_day=per_day)


@dataclass(frozen=True, slots=True)
class Step:
    ts: datetime
    step: int | None
    event: str
    code: str | None
    outcome: str | None
    message: str
    command: str | None
    finding_id: int | None
    loop: int | None
    """The loop this step belongs to (1, 2...), None when it is in none."""


@dataclass(frozen=True, slots=True)
class SessionView:
    session: str
    input: str
    events: int
    failures: int
    first_seen: datetime
    last_seen: datetime
    ended: str
    steps: tuple[Step, ...]
    cut: bool
    """More than :data:`TIMELINE_LIMIT` events: the first ones are shown."""
    loops: int
    agent: str = ""
    """The agent and its version, where an event named them."""


def session_page(store: Store, session: str, input_: str | None = None) -> SessionView | None:
    """One session's timeline (None when the store has no such session)."""
    from failcode.events import Event  # noqa: PLC0415

    if input_ is None:
        found = store.fetch("SELECT input, events, failures, first_us, last_us FROM sessions "
                            "WHERE session = ? ORDER BY last_us DESC LIMIT 1", (session,))
    else:
        found = store.fetch("SELECT input, events, failures, first_us, last_us FROM sessions "
                            "WHERE session = ? AND input = ?", (session, input_))
    if not found:
        return None
    input_, events, failures, first_us, last_us = found[0]
    rows = store.fetch("SELECT body, signature FROM events WHERE ts_us >= ? AND ts_us <= ? AND "
                       "session = ? AND input = ? ORDER BY ts_us, step, event_id LIMIT ?",
                       (first_us, last_us, session, input_, TIMELINE_LIMIT + 1))
    cut = len(rows) > TIMELINE_LIMIT
    rows = rows[:TIMELINE_LIMIT]
    signatures = sorted({str(s) for _b, s in rows if s})
    ids: dict[str, int] = {}
    if signatures:
        marks = ", ".join("?" for _ in signatures)
        ids = {str(s): int(i) for s, i in store.fetch(
            f"SELECT signature, id FROM svc_findings WHERE signature IN ({marks})",
            tuple(signatures))}
    decoded = _one_start([(Event.from_json(body), str(sig) if sig else None)
                          for body, sig in rows])
    loop_of = _loops([sig if ev.failure is not None and _caused(ev.failure) else None
                      for ev, sig in decoded])
    steps = []
    for index, (event, signature) in enumerate(decoded):
        failure, outcome = event.failure, event.outcome
        command = None
        if failure is not None:
            value = failure.params.get("command") or failure.context.get("command")
            command = str(value)[:300] if value else None
        steps.append(Step(
            ts=event.ts, step=event.step, event=event.event,
            code=failure.code if failure is not None else None,
            outcome=str(outcome.__struct_config__.tag) if outcome is not None else None,
            message=(failure.message if failure is not None else _said(outcome)),
            command=command, finding_id=ids.get(signature) if signature else None,
            loop=loop_of[index]))
    return SessionView(session=session, input=str(input_), events=int(events),
                       failures=int(failures), first_seen=_time(first_us),
                       last_seen=_time(last_us),
                       ended=_ended(store, session, str(input_), int(last_us)),
                       steps=tuple(steps), cut=cut,
                       loops=max((n for n in loop_of if n is not None), default=0),
                       agent=session_agent(store, session, str(input_)))


def _one_start(decoded: list[tuple[Event, str | None]]) -> list[tuple[Event, str | None]]:
    """The timeline's events with one ``session.started``: the first, naming everyone who
    reported the start (an agent's hooks and its export both do)."""
    starts = [event for event, _sig in decoded if isinstance(event.outcome, SessionStarted)]
    if len(starts) < 2:
        return decoded
    by = ", ".join(dict.fromkeys(getattr(e.outcome, "by", "") for e in starts))
    first = msgspec.structs.replace(starts[0], outcome=SessionStarted(by=by))
    return [(first if event is starts[0] else event, sig) for event, sig in decoded
            if event is starts[0] or not isinstance(event.outcome, SessionStarted)]


def _said(outcome: NonErrorOutcome | None) -> str:
    """What an outcome says, in the timeline's words."""
    if isinstance(outcome, SessionEnded):
        return f"ended: {outcome.status}" + (f" ({outcome.reason})" if outcome.reason else "")
    if isinstance(outcome, SessionStarted):
        return f"started (reported by {outcome.by})"
    if isinstance(outcome, NoMatch):
        return f"{outcome.probe} found nothing" + (
            f" (exit {outcome.exit_code})" if outcome.exit_code is not None else "")
    return str(getattr(outcome, "reason", "") or "") if outcome is not None else ""


def _caused(failure: Failure) -> bool:
    """Whether a failure has a known cause: an unclassified one (``FC-SYS-001``, class
    ``unknown``: an export's ``Shell command failed``) never makes a loop, as the same
    command failing twice for different reasons would look like one."""
    return not (failure.code == "FC-SYS-001" and failure.error_class == "unknown")


def _loops(signatures: list[str | None]) -> list[int | None]:
    """Loop numbers: a run of 2+ failures of one signature in a row is one loop."""
    out: list[int | None] = [None] * len(signatures)
    number = 0
    index = 0
    while index < len(signatures):
        signature = signatures[index]
        end = index
        while signature is not None and end + 1 < len(signatures) \
                and signatures[end + 1] == signature:
            end += 1
        if end > index:
            number += 1
            for k in range(index, end + 1):
                out[k] = number
        index = end + 1
    return out


# -- compare -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CompareRow:
    finding_id: int
    code: str
    message: str
    who: str
    status: str
    significant: bool
    a_count: int
    b_count: int
    a_rate: float
    b_rate: float


@dataclass(frozen=True, slots=True)
class ComparePage:
    by: str
    a: str
    b: str
    a_total: int
    b_total: int
    unit: str
    """What a rate divides by: ``sessions`` or ``failures``."""
    rows: tuple[CompareRow, ...] = ()
    choices: tuple[str, ...] = field(default=())


_ORDER: Final = {"new": 0, "up": 1, "same": 2, "down": 3, "gone": 4}
_COLUMNS: Final = {"version": "version", "model": "model", "agent": "agent"}


def _window(text: str) -> tuple[int, int] | None:
    """``YYYY-MM-DD..YYYY-MM-DD`` (UTC days, both included) as microseconds [start, end)."""
    start, sep, end = text.partition("..")
    try:
        first = datetime.fromisoformat(start).replace(tzinfo=UTC)
        last = datetime.fromisoformat(end if sep else start).replace(tzinfo=UTC)
    except ValueError:
        return None
    # computed from the day's start: the day after 9999-12-31 is no datetime
    end_us = (last.replace(hour=0, minute=0, second=0, microsecond=0)
              - _EPOCH) // timedelta(microseconds=1) + DAY_US
    return (first - _EPOCH) // timedelta(microseconds=1), end_us


def compare_page(store: Store, *, by: str, a: str, b: str) -> ComparePage:
    """Two sides of the project's findings, the triage comparison's rules."""
    if by == "window":
        choices: tuple[str, ...] = ()
        counts: list[dict[str, int]] = []
        for side in (_window(a), _window(b)):
            if side is None:
                counts.append({})
                continue
            counts.append({str(s): int(n) for s, n in store.fetch(
                "SELECT signature, sum(count) FROM svc_finding_days WHERE day >= ? AND day < ? "
                "GROUP BY signature", (side[0] // DAY_US, side[1] // DAY_US))})
        totals = [sum(c.values()) for c in counts]
        unit = "failures"
    else:
        column = _COLUMNS.get(by, "version")
        choices = tuple(str(r[0]) for r in store.fetch(
            f"SELECT {column} FROM svc_finding_versions WHERE {column} <> '' "
            f"GROUP BY {column} ORDER BY max(last_us) DESC LIMIT 50"))
        counts = [{str(s): int(n) for s, n in store.fetch(
            f"SELECT signature, sum(count) FROM svc_finding_versions WHERE "
            f"{column} = ? GROUP BY signature", (side,))} for side in (a, b)]
        totals = [sum(c.values()) for c in counts]
        unit = "failures"
    signatures = sorted(set(counts[0]) | set(counts[1]))
    rows: list[CompareRow] = []
    if signatures:
        marks = ", ".join("?" for _ in signatures)
        known = {str(r[0]): r for r in store.fetch(
            f"SELECT f.signature, f.id, s.code, s.last_message, s.category FROM svc_findings f "
            f"JOIN signatures s ON s.signature = f.signature WHERE f.signature IN ({marks})",
            tuple(signatures))}
        for signature in signatures:
            if signature not in known:
                continue
            _sig, finding_id, code, message, category = known[signature]
            old, new = counts[0].get(signature, 0), counts[1].get(signature, 0)
            old_rate = old / totals[0] if totals[0] else 0.0
            new_rate = new / totals[1] if totals[1] else 0.0
            status = ("new" if not old else "gone" if not new else "up" if new_rate > old_rate
                      else "down" if new_rate < old_rate else "same")
            rows.append(CompareRow(
                finding_id=int(finding_id), code=str(code), message=str(message or ""),
                who=who_acts(str(category)), status=status,
                significant=significant(min(old, totals[0]), totals[0],
                                        min(new, totals[1]), totals[1]),
                a_count=old, b_count=new, a_rate=old_rate, b_rate=new_rate))
    rows.sort(key=lambda r: (_ORDER[r.status], not r.significant, -abs(r.b_rate - r.a_rate)))
    return ComparePage(by=by, a=a, b=b, a_total=totals[0], b_total=totals[1], unit=unit,
                       rows=tuple(rows[:200]), choices=choices)
