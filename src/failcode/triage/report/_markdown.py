"""``--format markdown``: the summary as GitHub-flavoured Markdown, for a pull request or
``$GITHUB_STEP_SUMMARY``: totals, what to fix first, how sessions ended and, with a baseline,
the comparison. Every value from a log is escaped (``|``, backticks, HTML, line breaks), so
a table row stays one row and nothing in a log becomes markup; control characters are escaped
and lone surrogates replaced first (:func:`~failcode.triage.report._terminal.safe`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from failcode.triage._findings import RANK_WORDS, suggested_words
from failcode.triage.report._terminal import plural, safe

if TYPE_CHECKING:
    from failcode.triage.analysis._compare import Comparison
    from failcode.triage.report._stream import Summary

__all__ = ["render_markdown"]

_SPECIAL: Final = re.compile(r"([\\`*_{}\[\]<>|#~])")


def _md(text: object) -> str:
    """A log's value as Markdown text: one line, markup characters escaped."""
    return _SPECIAL.sub(r"\\\1", safe(text))


def render_markdown(summary: Summary, *, top: int = 10,
                    comparison: Comparison | None = None) -> str:
    """The Markdown summary (the module's sections)."""
    failed = sum(1 for item in summary.inputs if item.error_code)
    lines = ["## failcode triage", "",
             (f"{plural(len(summary.inputs) - failed, 'input')} read, {summary.skipped:,} skipped, "
             f"{failed:,} failed; {plural(summary.sessions, 'session')}, "
             f"{plural(summary.steps, 'step')}, {plural(summary.failures, 'failing step')} in "
             f"{plural(summary.failing_sessions, 'session')}."), ""]
    findings = summary.tables.findings.ranked()
    if findings:
        by = summary.tables.findings.rank_by
        order = f", {RANK_WORDS[by]}" if by != "steps" else ""
        lines += [f"### What to fix first ({min(top, len(findings))} of {len(findings):,}{order})",
                  "",
                  "| # | finding | who acts | cost (steps) | failures | sessions | example |",
                  "|---:|---|---|---:|---:|---:|---|"]
        for rank, finding in enumerate(findings[:top], 1):
            fix = f"<br>fix: {_md(finding.remedy)}" if finding.remedy else ""
            fix += f"<br>spent: {_md(finding.spent())}" if finding.spent() else ""
            if finding.suggested is not None:
                fix += f"<br>_{_md(suggested_words(finding.suggested))}_"
            variants = f" ({finding.variants} variants)" if finding.variants > 1 else ""
            example = finding.examples[0]
            where = _md(example.path) + (f", step {example.step}"
                                         if example.step is not None else "")
            lines.append(f"| {rank} | `{_md(finding.code)}` "
                         f"{_md(finding.message)}{variants}{fix} | "
                         f"{_md(finding.who)} | {finding.cost:,} | {finding.count:,} | "
                         f"{finding.sessions:,} | {where} |")
        lines.append("")
    for title, table in (("By model", summary.by_model), ("By agent version", summary.by_agent)):
        if table:
            lines += [f"### {title}", "", ("| | sessions | with failures | failures | "
                      "failures spent | sessions cost |"), "|---|---:|---:|---:|---|---|"]
            lines += [f"| {_md(key)} | {row.sessions:,} | {row.failing:,} | {row.failures:,} "
                      f"| {_md(row.failures_spent().removeprefix('failures spent '))} "
                      f"| {_md(row.recorded().removeprefix('sessions cost '))} |"
                      for key, row in sorted(table.items(), key=lambda kv: -kv[1].sessions)]
            lines.append("")
    if regressions := summary.tables.findings.regressions():
        lines += ["### Regressions", "", ("A finding that hit significantly more sessions of an "
                  "agent version than of the version before."), "",
                  "| finding | agent | version | sessions hit | version before | sessions hit |",
                  "|---|---|---|---:|---|---:|"]
        lines += [f"| `{_md(row['code'])}` {_md(row['message'])} | {_md(row['agent'])} | "
                  f"{_md(row['version'])} | {row['sessions_hit']:,} of {row['sessions']:,} | "
                  f"{_md(row['previous'])} | {row['previous_sessions_hit']:,} of "
                  f"{row['previous_sessions']:,} |" for row in regressions]
        lines.append("")
    if summary.ended:
        lines += ["### How sessions ended", "", "| status | sessions |", "|---|---:|"]
        lines += [f"| {_md(status)} | {count:,} |"
                  for status, count in sorted(summary.ended.items())]
        lines.append("")
    if summary.trials:
        lines += ["### Trials (graded by their verifier; failed first)", "",
                  "| trial | verdict | reward | ended | failing steps |", "|---|---|---:|---|---:|"]
        lines += [f"| {_md(t.session)} | {_md(t.verdict)} | "
                  f"{'' if t.reward is None else f'{t.reward:g}'} | {_md(t.status)} | "
                  f"{t.failures:,}{f' ({_md(t.code)})' if t.code else ''} |"
                  for t in summary.trials_in_order()]
        lines.append("")
    if comparison is not None:
        lines += _comparison(comparison, top)
    return "\n".join(lines)


def _comparison(comparison: Comparison, top: int) -> list[str]:
    lines = [(f"### {_md(comparison.title)} ({plural(comparison.old_sessions, 'session')} "
             f"then, {plural(comparison.new_sessions, 'session')} now)"), "",
             "| change | finding | sessions then | sessions now |", "|---|---|---:|---:|"]
    for change in [c for c in comparison.changes if c.status != "same"][: 2 * top]:
        few = "" if change.significant else " (few)"
        lines.append(f"| **{change.status}**{few} | `{_md(change.code)}` "
                     f"{_md(change.message)} | "
                     f"{change.old_sessions:,} ({change.old_rate:.1%}) | "
                     f"{change.new_sessions:,} ({change.new_rate:.1%}) |")
    if comparison.models:
        lines += ["", "| model or agent | sessions with failures then | now |",
                  "|---|---:|---:|"]
        lines += [f"| {_md(key)} | {old[1]:,} of {old[0]:,} | {new[1]:,} of {new[0]:,} |"
                  for key, (old, new) in comparison.models.items()]
    statuses = sorted(set(comparison.old_ended) | set(comparison.new_ended))
    lines += ["", "| ended | then | now |", "|---|---:|---:|"]
    lines += [f"| {_md(status)} | {comparison.old_ended.get(status, 0):,} | "
              f"{comparison.new_ended.get(status, 0):,} |" for status in statuses]
    lines.append("")
    return lines
