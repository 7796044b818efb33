"""Drill-down: every occurrence of one finding, or one session's timeline.

- ``--finding N`` (the rank in "What to fix first") or ``--signature SIG`` (any of a finding's
  variant signatures; only that variant's occurrences): the finding's headline, who acts,
  remedy and counts, the learned suggestion with its nearest known examples when the rules
  left it unknown, then each occurrence: file, session, step, signature, evidence and the
  first lines of its detail.
- ``--session NAME`` (a session's name, or the path of a file holding one session): its end,
  then one line per step at which something happened (failure: code, exit status, ``by``
  the agent that took the step when the format names one (a team of agents), evidence,
  ``loop`` with the loop's number when the step is part of one; outcome: its type), the
  steps between them folded into "N quiet steps" (the formats keep no record of a step that
  neither failed nor was refused, so triage has none).

Every value from a log, a store or a path (names, paths, formats, signatures, evidence,
details, messages, loop causes) is printed through :func:`~failcode.triage.report._terminal.safe`
(control characters escaped, surrogates replaced; the rule is in that module).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from failcode.triage._findings import suggested_words
from failcode.triage.report._terminal import Out, plural, safe

if TYPE_CHECKING:
    from failcode.triage._findings import Finding, Findings
    from failcode.triage._result import SessionResult

__all__ = ["render_finding", "render_session"]

_DETAIL_LINES = 5
_CHARS = 200


def render_finding(finding: Finding, rank: int | None, out: Out,
                   signature: str | None = None) -> None:
    """Every kept occurrence of ``finding`` (of ``signature`` only, when given)."""
    occurrences = [o for o in finding.examples if signature is None or o.signature == signature]
    title = f"Finding {rank}" if rank is not None else "Finding"
    out.line(f"{title}: {safe(finding.message)}")
    out.line(f"  {safe(finding.code)} · who acts: {finding.who} · "
             f"cost {plural(finding.cost, 'step')}"
             f" · {plural(finding.count, 'failure')} in {plural(finding.sessions, 'session')}")
    if finding.remedy:
        out.line(f"  fix: {safe(finding.remedy)}")
    if finding.suggested is not None:
        out.line(f"  {safe(suggested_words(finding.suggested))}")
        for near in finding.suggested.nearest:
            out.line(f"    near ({near.similarity:.0%}): {safe(near.program)} · {near.kind} / "
                     f"{near.klass}: {safe(near.excerpt)[:_CHARS]}")
        out.line(f"    (model {safe(finding.suggested.model)}; a suggestion only: the "
                 "finding's code and rank are the rules')")
    out.line("  variants: " + ", ".join(f"{safe(sig)} ({count})"
                                        for sig, count in finding.signatures.items()))
    out.heading(f"Occurrences ({len(occurrences):,})")
    for occurrence in occurrences:
        step = f", step {occurrence.step}" if occurrence.step is not None else ""
        out.line(f"- {safe(occurrence.path)}, session {safe(occurrence.session)}{step}")
        out.line(f"  signature: {safe(occurrence.signature)}")
        out.line(f"  evidence: {safe(occurrence.evidence)[:_CHARS]}")
        for line in [line for line in occurrence.detail.splitlines() if line.strip()][
                :_DETAIL_LINES]:
            out.line(f"  | {safe(line)[:_CHARS]}")


def _by(actor: str | None) -> str:
    """`` · by AGENT`` for a step a named agent took, else ""."""
    return f" · by {safe(actor)}" if actor else ""


def render_session(session: SessionResult, findings: Findings, out: Out) -> None:
    """``session``'s timeline: one line per step at which something happened."""
    ended = f", ended {safe(session.status)}"
    if session.ended_failure is not None:
        ended += (f" ({safe(session.ended_failure.code)}: "
                  f"{safe(session.ended_failure.message)})")
    out.line(f"Session {safe(session.session)} ({safe(session.format)}, {safe(session.path)}): "
             f"{plural(session.steps, 'step')}, {plural(len(session.failures), 'failure')}"
             f"{ended}")
    in_loop = {step: number for number, loop in enumerate(session.loops, 1)
               for step in loop.steps}
    rows: list[tuple[int, str]] = []
    for entry in session.failures:
        failure = entry.failure
        status = failure.params.get("exit_code", failure.metadata.get("exit_code"))
        exit_text = f" exit {status}" if isinstance(status, int) else ""
        loop = f" · loop {in_loop[entry.step]}" if entry.step in in_loop else ""
        masked = " · masked" if entry.masked else ""
        finding = findings.find(failure.signature)
        what = finding.message if finding is not None else failure.message
        rows.append((entry.step if entry.step is not None else -1,
                     (f"{safe(failure.code)}{exit_text}{loop}{masked}{_by(entry.actor)} · "
                      f"{safe(entry.evidence)} · {safe(what)}")))
    for outcome in session.outcomes:
        kind = str(outcome.outcome.__struct_config__.tag)
        rows.append((outcome.step if outcome.step is not None else -1,
                     f"{safe(kind)}{_by(outcome.actor)} · {safe(outcome.evidence)}"))
    rows.sort(key=lambda row: row[0])
    out.heading("Timeline")
    previous = -1
    for step, text in rows:
        if step >= 0 and step - previous > 1:
            out.line(f"      … {plural(step - previous - 1, 'quiet step')}")
        out.line(f"  {step if step >= 0 else '-':>4} {text}")
        previous = max(previous, step)
    if session.steps - previous > 1:
        out.line(f"      … {plural(session.steps - previous - 1, 'quiet step')}")
    for number, looped in enumerate(session.loops, 1):
        out.line(f"  loop {number}: steps {', '.join(map(str, looped.steps))} "
                 f"({safe(looped.cause or looped.signature)})")
