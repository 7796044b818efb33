"""The ``--html`` report: one self-contained file (inline CSS, SVG and script; no network).

It answers the terminal summary's question in the same order: the totals, **what to fix
first** (the ranked findings with who acts, message, remedy, cost and an example), a legend
of the category colours, then plots (who acts by category and kind, the findings by cost,
loops per session, and failures over time only when the failures span more than a day, with
labelled axes), the comparison with a baseline when one was given, and the sessions: sorted
by failures, clean ones hidden behind a toggle, each a table a person can open. A click on a
bar filters the session list to the sessions that bar counts (a category, a finding, a
session); the filter shows what it is and clears with one click. Every text is escaped;
nothing is fetched when the file opens.

Rule: every value from a log, a store or a path goes through :func:`_escape`: control characters
escaped as ``\\xNN`` and lone surrogates replaced
(:func:`~failcode.triage.report._terminal.safe`, so the document always encodes as UTF-8 and
holds no raw ESC or NUL), then HTML-escaped (quotes too, for attributes).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from html import escape as _html_escape
from pathlib import PurePath
from typing import TYPE_CHECKING, Final

from failcode.triage._findings import RANK_WORDS, WHO_ACTS, suggested_words
from failcode.triage.report._stream import Summary
from failcode.triage.report._terminal import plural, safe

if TYPE_CHECKING:
    from failcode.triage._findings import Finding, Findings
    from failcode.triage._result import SessionResult, TriageResult
    from failcode.triage.analysis._compare import Comparison

__all__ = ["render_html"]

_CSS: Final = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1d2433;
max-width:1400px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}td,th{border-bottom:1px solid #e3e6ee;
padding:3px 8px;text-align:left;vertical-align:top}th{background:#f4f6fb}
td.n{text-align:right;font-variant-numeric:tabular-nums}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;overflow-wrap:anywhere}
details{margin:4px 0;border:1px solid #e3e6ee;border-radius:6px;padding:4px 8px}
summary{cursor:pointer;font-weight:600}.muted{color:#5b6275}.err{color:#b3261e}
svg text{font:11px system-ui,sans-serif;fill:#1d2433}.grid{display:flex;flex-wrap:wrap;gap:24px}
figure{margin:0}figcaption{font-weight:600;margin-bottom:4px}
.bar{cursor:pointer}.bar:hover rect{opacity:.75}
.legend{display:flex;gap:16px;list-style:none;padding:0;flex-wrap:wrap}
.sw{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:4px;
vertical-align:-1px}
#filter{padding:4px 8px;width:320px}#chip{background:#eef2fb;border-radius:12px;
padding:2px 10px;margin-left:8px}#chip[hidden]{display:none}
.new{color:#b3261e;font-weight:600}.gone{color:#2e7d32;font-weight:600}
.suggested{display:inline-block;margin-top:2px;padding:1px 6px;border:1px dashed #8a6d00;
border-radius:4px;background:#fffbe6;color:#5c4a00;font-style:italic}
"""
_SCRIPT: Final = """
(function () {
  var sessions = Array.prototype.slice.call(document.querySelectorAll('details.session'));
  var text = document.getElementById('filter');
  var clean = document.getElementById('clean');
  var chip = document.getElementById('chip');
  var shown = document.getElementById('shown');
  var pick = null;
  function matches(held, chosen) {
    if (chosen.key === 'session') { return held === chosen.value; }
    return (' ' + held + ' ').indexOf(' ' + chosen.value + ' ') >= 0;
  }
  function apply() {
    var needle = text.value.toLowerCase();
    var count = 0;
    sessions.forEach(function (item) {
      var ok = (clean.checked || item.dataset.failures !== '0')
        && (!needle || item.textContent.toLowerCase().indexOf(needle) >= 0)
        && (!pick || matches(item.dataset[pick.key] || '', pick));
      item.hidden = !ok;
      if (ok) { count += 1; }
    });
    shown.textContent = count + ' of ' + sessions.length + ' sessions shown';
    chip.hidden = !pick;
    if (pick) { chip.firstChild.textContent = 'only: ' + pick.label + ' '; }
  }
  document.querySelectorAll('.bar').forEach(function (bar) {
    function choose() {
      pick = {key: bar.dataset.key, value: bar.dataset.value, label: bar.dataset.label};
      apply();
      document.getElementById('sessions').scrollIntoView();
    }
    bar.addEventListener('click', choose);
    bar.addEventListener('keydown', function (event) {
      if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); choose(); }
    });
  });
  document.getElementById('clear').addEventListener('click', function () { pick = null; apply(); });
  text.addEventListener('input', apply);
  clean.addEventListener('change', apply);
  document.getElementById('expand').addEventListener('click', function () {
    sessions.forEach(function (item) { if (!item.hidden) { item.open = true; } });
  });
  apply();
  document.body.setAttribute('data-ready', '1');
})();
"""
_COLORS: Final = {"task": "#3b6fd8", "environment": "#c46a12", "transient": "#2a8c6f",
                  "user": "#8e44ad", "defect": "#c62847"}
_DAY: Final = 86400.0


def escape(text: object) -> str:
    """``text`` as HTML text or an attribute value: :func:`safe` (no control character, no
    lone surrogate), then HTML-escaped."""
    return _html_escape(safe(text))


def _colour(category: str) -> str:
    return _COLORS.get(category, "#777777")


def _legend() -> str:
    items = "".join(f'<li><span class="sw" style="background:{colour}"></span>'
                    f"<b>{escape(category)}</b>: {escape(WHO_ACTS[category])}</li>"
                    for category, colour in _COLORS.items())
    return (f'<ul class="legend" aria-label="colours: who acts"><li>Who acts, by colour:</li>'
            f"{items}</ul>")


def _bars(title: str, rows: list[tuple[str, int, str, str, str]], *, width: int = 640,
          links: list[str] | None = None) -> str:
    """A horizontal bar chart as inline SVG; each row (label, value, colour, filter key,
    filter value) is a bar that filters the sessions when clicked, or, with ``links`` (one URL
    per row: the dashboard's use), a link."""
    if not rows:
        return ""
    largest = max(row[1] for row in rows) or 1
    label_w, bar_w, row_h = 330, width - 380, 20
    height = row_h * len(rows) + 10
    parts = [(f'<svg role="group" aria-label="{escape(title)}" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}">')]
    for index, (label, value, colour, key, filter_value) in enumerate(rows):
        y = 5 + index * row_h
        length = max(2, round(bar_w * value / largest))
        short = label if len(label) <= 52 else label[:51] + "…"
        body = (f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end">'
                f"{escape(short)}</text>"
                f'<rect x="{label_w}" y="{y + 3}" width="{length}" height="14" '
                f'fill="{colour}"><title>{escape(label)}: {value}</title></rect>'
                f'<text x="{label_w + length + 4}" y="{y + 14}">{value:,}</text>')
        if links is not None:
            # the link's name is its visible text (the label and the count)
            parts.append(f'<a class="bar" href="{escape(links[index])}">{body}</a>')
            continue
        parts.append(f'<g class="bar" tabindex="0" role="button" '
                     f'data-key="{escape(key)}" data-value="{escape(filter_value)}" '
                     f'data-label="{escape(label[:80])}" '
                     f'aria-label="{escape(label[:120])}: {value}; show its sessions">'
                     f"{body}</g>")
    parts.append("</svg>")
    return f"<figure><figcaption>{escape(title)}</figcaption>{''.join(parts)}</figure>"


def _timeline(result: TriageResult, *, width: int = 560, height: int = 170) -> str:
    """Failing steps per time bucket; only when they span more than a day (else a time axis
    says nothing a count does not)."""
    stamps = sorted(e.timestamp for s in result.sessions for e in s.failures
                    if e.timestamp is not None)
    if len(stamps) < 2 or stamps[-1] - stamps[0] <= _DAY:
        return ""
    buckets = 30
    start, span = stamps[0], stamps[-1] - stamps[0]
    counts = [0] * buckets
    for stamp in stamps:
        counts[min(buckets - 1, int((stamp - start) / span * buckets))] += 1
    top = max(counts)
    left, bottom = 44, 36
    bar = (width - left - 10) / buckets
    title = "Failing steps over time (UTC)"
    parts = [(f'<svg role="img" aria-label="{title}" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}">'),
             (f'<text x="12" y="{(height - bottom) / 2}" transform="rotate(-90 12 '
             f'{(height - bottom) / 2})" text-anchor="middle">failing steps</text>'),
             (f'<text x="{left - 4}" y="14" text-anchor="end">{top}</text>'
             f'<text x="{left - 4}" y="{height - bottom}" text-anchor="end">0</text>')]
    for index, count in enumerate(counts):
        h = round((height - bottom - 10) * count / top)
        parts.append(f'<rect x="{left + index * bar:.1f}" y="{height - bottom - h}" '
                     f'width="{bar - 2:.1f}" height="{h}" fill="#3b6fd8">'
                     f"<title>{count}</title></rect>")
    for fraction, anchor in ((0.0, "start"), (0.5, "middle"), (1.0, "end")):
        when = datetime.fromtimestamp(start + span * fraction, UTC).strftime("%Y-%m-%d")
        x = left + (width - left - 10) * fraction
        parts.append(f'<text x="{x:.0f}" y="{height - bottom + 14}" text-anchor="{anchor}">'
                     f"{when}</text>")
    parts.append(f'<text x="{(width + left) / 2:.0f}" y="{height - 4}" '
                 'text-anchor="middle">date of the failing step</text></svg>')
    return f"<figure><figcaption>{title}</figcaption>{''.join(parts)}</figure>"


def _common_folder(paths: list[str]) -> str:
    """The folder every path lies in (with its final ``/``), shown once above the table."""
    if not paths:
        return ""
    try:
        prefix = os.path.commonpath(paths) if len(paths) > 1 else str(PurePath(paths[0]).parent)
    except ValueError:  # absolute and relative paths (or labels such as <stdin>) mixed
        return ""
    return prefix.rstrip("/") + "/" if prefix and prefix != "/" else ""


def _trials(summary: Summary) -> str:
    """One row per graded trial (a Harbor job), failed first: the terminal's table."""
    if not summary.trials:
        return ""
    rows = "".join(
        f"<tr><td>{escape(t.session)}</td><td>{escape(t.verdict)}</td>"
        f"<td class=n>{'' if t.reward is None else f'{t.reward:g}'}</td>"
        f"<td>{escape(t.status)}</td><td class=n>{t.failures:,}</td>"
        f"<td>{'' if t.code is None else f'<code>{escape(t.code)}</code>'}</td></tr>"
        for t in summary.trials_in_order())
    return ("<h2>Trials</h2><p class=muted>Graded by their verifier, failed first.</p>"
            "<table><thead><tr><th>trial</th><th>verdict</th><th>reward</th><th>ended</th>"
            f"<th>failing steps</th><th>most</th></tr></thead><tbody>{rows}</tbody></table>")


def _fix_first(findings: list[Finding], top: int, folder: str, by: str = "steps") -> str:
    if not findings:
        return "<h2>What to fix first</h2><p>No failure found.</p>"
    rows = []
    for rank, finding in enumerate(findings[:top], 1):
        example = finding.examples[0]
        step = f", step {example.step}" if example.step is not None else ""
        if example.session and example.session not in example.path:
            step = f", session {example.session}{step}"
        shown = example.path.removeprefix(folder)
        variants = (f' <span class=muted>({finding.variants} variants)</span>'
                    if finding.variants > 1 else "")
        remedy = escape(finding.remedy) if finding.remedy else '<span class=muted>-</span>'
        spent = finding.spent()
        spent = f" <span class=muted>· spent {escape(spent)}</span>" if spent else ""
        if finding.suggested is not None:
            spent += (f'<br><span class=suggested title="A learned model\'s suggestion for a '
                      "failure the rules do not know; it changes nothing in the finding.\">"
                      f"{escape(suggested_words(finding.suggested))}</span>")
        rows.append(
            f'<tr><td class=n>{rank}</td><td>{escape(finding.message)}{variants}<br>'
            f'<code>{escape(finding.code)}</code>{spent}</td>'
            f'<td><span class="sw" style="background:{_colour(finding.category)}"></span>'
            f"{escape(finding.who)}</td><td>{remedy}</td><td class=n>{finding.cost:,}"
            f"</td><td class=n>{finding.count:,}</td><td class=n>{finding.sessions:,}</td>"
            f'<td><code title="{escape(example.path)}">{escape(shown)}</code>{escape(step)}'
            "</td></tr>")
    more = (f"<p class=muted>…and {len(findings) - top:,} more findings "
            "(<code>--top N</code> lists more).</p>" if len(findings) > top else "")
    under = (f" Examples are under <code>{escape(folder)}</code>." if folder else "")
    order = "" if by == "steps" else f"; ordered {RANK_WORDS[by]} (--rank {by})"
    return ("<h2>What to fix first</h2><p class=muted>Findings ranked by cost: the steps each "
            f"took (its failing steps and the tries inside its loops){order}.{under}</p>"
            "<table><thead><tr><th>#</th><th>finding</th><th>who acts</th><th>remedy</th>"
            "<th>cost (steps)</th><th>failures</th><th>sessions</th><th>example</th></tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table>{more}")


def _comparison(comparison: Comparison | None) -> str:
    if comparison is None:
        return ""
    rows = "".join(
        f'<tr><td class="{change.status}">{change.status}'
        f"{'' if change.significant else ' <span class=muted>(few)</span>'}</td>"
        f"<td>{escape(change.message)} <code>{escape(change.code)}</code></td>"
        f"<td class=n>{change.old_sessions:,} ({change.old_rate:.1%})</td>"
        f"<td class=n>{change.new_sessions:,} ({change.new_rate:.1%})</td></tr>"
        for change in comparison.changes if change.status != "same")
    return (f"<h2>{escape(comparison.title)}</h2><p class=muted>{comparison.old_sessions:,} "
            f"sessions then, {comparison.new_sessions:,} now; shares are sessions hit per "
            "session; (few): within noise.</p><table><thead><tr><th>change</th>"
            "<th>finding</th><th>sessions then</th><th>sessions now</th></tr></thead>"
            f"<tbody>{rows or '<tr><td colspan=4>no finding changed</td></tr>'}</tbody>"
            "</table>")


def _session(session: SessionResult, findings: Findings, ranks: dict[int, int]) -> str:
    ended = escape(session.status)
    if session.ended_failure is not None:
        ended += f" ({escape(session.ended_failure.code)})"
    if session.verdict is not None:
        reward = "" if session.reward is None else f" (reward {session.reward:g})"
        ended += f" · verifier {escape(session.verdict)}{reward}"
    categories = sorted({str(e.failure.category) for e in session.failures})
    hit = sorted({ranks[id(f)] for e in session.failures
                  if (f := findings.find(e.failure.signature)) is not None})
    # the agent column only in a team of agents' session (a format that names who took a step)
    agents = any(e.actor for e in session.failures) or any(o.actor for o in session.outcomes)

    def agent(actor: str | None) -> str:
        return f"<td>{escape(actor or '')}</td>" if agents else ""

    rows = "".join(
        f"<tr><td class=n>{'' if e.step is None else e.step}</td>{agent(e.actor)}"
        f"<td>{escape(e.source)}</td>"
        f"<td><code>{escape(e.failure.code)}</code></td><td>{escape(str(e.failure.kind))}</td>"
        f"<td>{escape(e.failure.message)}</td><td><code>{escape(e.evidence)}</code></td></tr>"
        for e in session.failures)
    outcomes = "".join(
        f"<tr><td class=n>{'' if o.step is None else o.step}</td>{agent(o.actor)}"
        f"<td>{escape(str(o.outcome.__struct_config__.tag))}</td>"
        f"<td><code>{escape(o.evidence)}</code></td></tr>" for o in session.outcomes)
    agent_head = "<th>agent</th>" if agents else ""
    loops = "".join(f"<li><code>{escape(loop.cause or loop.signature)}</code> at steps "
                    f"{', '.join(map(str, loop.steps))}</li>" for loop in session.loops)
    return (
        f'<details class="session" data-failures="{len(session.failures)}" '
        f'data-category="{" ".join(categories)}" data-finding="{" ".join(map(str, hit))}" '
        f'data-session="{escape(session.session)}"><summary>{escape(session.session)} '
        f'<span class=muted>{escape(session.format)} · {plural(session.steps, "step")} · '
        f"{plural(len(session.failures), 'failure')} · {plural(len(session.loops), 'loop')} · "
        f"ended {ended}"
        f"</span></summary><p class=muted>{escape(session.path)}</p>"
        + (f"<table><thead><tr><th>step</th>{agent_head}<th>source</th><th>code</th><th>kind</th>"
           f"<th>message</th><th>evidence</th></tr></thead><tbody>{rows}</tbody></table>"
           if rows else "<p>No failures.</p>")
        + (f"<p>Loops</p><ul>{loops}</ul>" if loops else "")
        + (f"<p>Outcomes (not failures)</p><table><thead><tr><th>step</th>{agent_head}"
           "<th>type</th>"
           f"<th>evidence</th></tr></thead><tbody>{outcomes}</tbody></table>"
           if outcomes else "")
        + "</details>")


def _inputs_table(rows: str) -> str:
    return ("<table><thead><tr><th>input</th><th>format</th><th>sessions</th><th>error</th>"
            f"</tr></thead><tbody>{rows}</tbody></table>")


def render_html(result: TriageResult, *, top: int = 10,
                comparison: Comparison | None = None, rank: str = "steps") -> str:
    """The whole report as one HTML document (the module's sections); findings in the order
    ``rank`` (:data:`~failcode.triage._findings.RANKS`)."""
    summary = Summary.of(result, top=top)
    findings = summary.tables.findings
    findings.rank_by = rank
    ranked = findings.ranked()
    ranks = {id(finding): rank for rank, finding in enumerate(ranked, 1)}
    blame = [(f"{row['category']} · {row['kind']}", row["count"], _colour(row["category"]),
              "category", row["category"]) for row in summary.tables.blame()]
    costs = [(f"{rank}. {finding.message}", finding.cost, _colour(finding.category),
              "finding", str(rank)) for rank, finding in enumerate(ranked[:top], 1)]
    looping = sorted((s for s in result.sessions if s.loops), key=lambda s: -len(s.loops))
    loops = [(s.session, len(s.loops), "#c46a12", "session", s.session)
             for s in looping[:15]]
    problems = [i for i in result.inputs if i.error_code]
    inputs = "".join(
        f"<tr><td><code>{escape(i.path)}</code></td><td>{escape(i.format or '-')}</td>"
        f"<td class=n>{i.sessions}</td><td class=err>{escape(i.error_code or '')} "
        f"{escape(i.error_message or '')}</td></tr>" for i in (problems or result.inputs))
    counts = summary.tables.outcome_counts()
    ordered = sorted(result.sessions, key=lambda s: (-len(s.failures), -len(s.loops)))
    clean = sum(1 for s in result.sessions if not s.failures)
    ended = ", ".join(f"{n:,} {status}" for status, n in sorted(summary.ended.items()))
    if verdicts := summary.verdicts():
        ended += " · verifier: " + ", ".join(f"{n:,} {v}" for v, n in verdicts.items())
    body = (
        f"<h1>failcode triage</h1><p>{len(result.inputs) - len(problems):,} inputs read"
        + (f" ({result.cached_inputs:,} from the cache"
           + (f", {result.resumed_inputs:,} resumed" if result.resumed_inputs else "") + ")"
           if result.cached_inputs is not None else "") + ", "
        f"{len(result.skipped):,} skipped, {len(problems):,} failed · "
        f"{summary.sessions:,} sessions · {summary.steps:,} steps · {summary.failures:,} "
        f"failing steps in {summary.failing_sessions:,} sessions · ended: {ended} · "
        f"{counts.get('no_match', 0):,} probes that found nothing and "
        f"{counts.get('rejected_action', 0):,} rejected actions (outcomes, not failures)</p>"
        + _legend() + _fix_first(ranked, top, _common_folder([i.path for i in result.inputs]),
                                      rank)
        + _trials(summary) + _comparison(comparison)
        + "<h2>Where the failures are</h2><p class=muted>Click a bar to list its sessions."
        '</p><div class="grid">'
        + _bars("Who acts: failing steps by category and kind", blame)
        + _bars("Findings by cost (steps)", costs) + _bars("Loops per session", loops)
        + _timeline(result) + "</div>"
        + '<h2 id="sessions">Sessions</h2><p><label>filter <input id="filter" '
        'placeholder="session, command, code"></label> '
        f'<label><input type="checkbox" id="clean"> show the {clean:,} clean sessions'
        '</label> <button id="expand" type="button">open all shown</button> '
        '<span id="chip" hidden><span></span><button id="clear" type="button">clear'
        '</button></span> <span id="shown" class=muted role="status"></span></p>'
        + "".join(_session(s, findings, ranks) for s in ordered)
        + (f"<h2>Inputs with problems</h2>{_inputs_table(inputs)}" if problems else
           f"<h2>Inputs</h2><details><summary>all {len(result.inputs):,} inputs were read"
           f"</summary>{_inputs_table(inputs)}</details>"))
    return ("<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
            '<meta name="viewport" content="width=device-width,initial-scale=1">'
            '<link rel="icon" href="data:,"><title>failcode triage</title>'
            f"<style>{_CSS}</style></head><body>{body}<script>{_SCRIPT}</script>"
            "</body></html>")
