"""The ``--html`` report: one self-contained file (inline CSS, SVG and script; no network).

Plots are inline SVG drawn here: the blame histogram, the top signatures, loops per session and
failures over time (where the format has timestamps); then a table per session a person can
open and close (``<details>``). Every text is escaped; nothing is fetched when the file opens.
"""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from failcode.triage._result import SessionResult, TriageResult

__all__ = ["render_html"]

_CSS: Final = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1d2433}
h1{font-size:22px}h2{font-size:17px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}td,th{border-bottom:1px solid #e3e6ee;
padding:3px 8px;text-align:left;vertical-align:top}th{background:#f4f6fb}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace}
details{margin:4px 0;border:1px solid #e3e6ee;border-radius:6px;padding:4px 8px}
summary{cursor:pointer;font-weight:600}.muted{color:#6b7385}.err{color:#b3261e}
svg text{font:11px system-ui,sans-serif;fill:#1d2433}.grid{display:flex;flex-wrap:wrap;gap:24px}
#filter{padding:4px 8px;width:320px}
"""
_SCRIPT: Final = """
document.body.setAttribute('data-ready', '1');
document.getElementById('filter').addEventListener('input', function (event) {
  var needle = event.target.value.toLowerCase();
  document.querySelectorAll('details.session').forEach(function (item) {
    item.style.display = item.textContent.toLowerCase().indexOf(needle) >= 0 ? '' : 'none';
  });
});
document.getElementById('expand').addEventListener('click', function () {
  document.querySelectorAll('details.session').forEach(function (item) { item.open = true; });
});
"""
_COLORS: Final = {"task": "#3b6fd8", "environment": "#d8893b", "transient": "#3bb08f",
                  "user": "#9b59b6", "defect": "#d83b5a"}


def _bars(title: str, rows: list[tuple[str, int, str]], *, width: int = 680) -> str:
    """A horizontal bar chart as inline SVG: (label, value, colour) rows."""
    if not rows:
        return f"<figure><figcaption>{escape(title)}</figcaption><p class=muted>none</p></figure>"
    largest = max(value for _, value, _ in rows) or 1
    label_w, bar_w, row_h = 400, width - 460, 20
    height = row_h * len(rows) + 10
    parts = [(f'<svg role="img" aria-label="{escape(title)}" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}">')]
    for index, (label, value, colour) in enumerate(rows):
        y = 5 + index * row_h
        length = max(2, round(bar_w * value / largest))
        parts.append(f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end">'
                     f"{escape(label[:64])}</text>"
                     f'<rect x="{label_w}" y="{y + 3}" width="{length}" height="14" '
                     f'fill="{colour}"><title>{escape(label)}: {value}</title></rect>'
                     f'<text x="{label_w + length + 4}" y="{y + 14}">{value}</text>')
    parts.append("</svg>")
    return f"<figure><figcaption>{escape(title)}</figcaption>{''.join(parts)}</figure>"


def _timeline(result: TriageResult, *, width: int = 520, height: int = 140) -> str:
    stamps = sorted(e.timestamp for s in result.sessions for e in s.failures
                    if e.timestamp is not None)
    title = "Failures over time"
    if len(stamps) < 2 or stamps[-1] == stamps[0]:
        return (f"<figure><figcaption>{title}</figcaption><p class=muted>no timestamps in "
                "these formats</p></figure>")
    buckets = 30
    start, span = stamps[0], stamps[-1] - stamps[0]
    counts = [0] * buckets
    for stamp in stamps:
        counts[min(buckets - 1, int((stamp - start) / span * buckets))] += 1
    top = max(counts)
    bar = (width - 40) / buckets
    parts = [(f'<svg role="img" aria-label="{title}" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}">')]
    for index, count in enumerate(counts):
        h = round((height - 30) * count / top)
        parts.append(f'<rect x="{20 + index * bar:.1f}" y="{height - 20 - h}" '
                     f'width="{bar - 2:.1f}" height="{h}" fill="#3b6fd8">'
                     f"<title>{count}</title></rect>")
    first = datetime.fromtimestamp(start, UTC).strftime("%Y-%m-%d %H:%M")
    last = datetime.fromtimestamp(stamps[-1], UTC).strftime("%Y-%m-%d %H:%M")
    parts.append(f'<text x="20" y="{height - 4}">{first} UTC</text>'
                 f'<text x="{width - 20}" y="{height - 4}" text-anchor="end">{last} UTC</text>'
                 "</svg>")
    return f"<figure><figcaption>{title}</figcaption>{''.join(parts)}</figure>"


def _session(session: SessionResult) -> str:
    ended = escape(session.status)
    if session.ended_failure is not None:
        ended += f" ({escape(session.ended_failure.code)})"
    rows = "".join(
        f"<tr><td>{'' if e.step is None else e.step}</td><td>{escape(e.source)}</td>"
        f"<td>{escape(e.failure.code)}</td><td>{escape(str(e.failure.kind))}</td>"
        f"<td>{e.repeats}</td><td><code>{escape(e.evidence)}</code></td></tr>"
        for e in session.failures)
    outcomes = "".join(
        f"<tr><td>{'' if o.step is None else o.step}</td>"
        f"<td>{escape(o.outcome.__struct_config__.tag)}</td>"  # type: ignore[arg-type]
        f"<td><code>{escape(o.evidence)}</code></td></tr>" for o in session.outcomes)
    loops = "".join(f"<li><code>{escape(loop.cause or loop.signature)}</code> at steps "
                    f"{', '.join(map(str, loop.steps))}</li>" for loop in session.loops)
    return (
        f'<details class="session"><summary>{escape(session.session)} '
        f'<span class=muted>{escape(session.format)} · {session.steps} steps · '
        f"{len(session.failures)} failures · {len(session.loops)} loops · ended {ended}"
        f"</span></summary><p class=muted>{escape(session.path)}</p>"
        + (f"<table><tr><th>step</th><th>source</th><th>code</th><th>kind</th><th>repeats</th>"
           f"<th>evidence</th></tr>{rows}</table>" if rows else "<p>No failures.</p>")
        + (f"<p>Loops</p><ul>{loops}</ul>" if loops else "")
        + (f"<p>Outcomes (not failures)</p><table><tr><th>step</th><th>type</th>"
           f"<th>evidence</th></tr>{outcomes}</table>" if outcomes else "")
        + "</details>")


def render_html(result: TriageResult) -> str:
    """The whole report as one HTML document."""
    blame = [(f"{row['category']} · {row['kind']}", row["count"],
              _COLORS.get(row["category"], "#777")) for row in result.blame()]
    signatures = [(row["signature"], row["count"], _COLORS.get(row["category"], "#777"))
                  for row in result.signatures()[:15]]
    looping = sorted((s for s in result.sessions if s.loops), key=lambda s: -len(s.loops))
    loops = [(s.session, len(s.loops), "#d8893b") for s in looping[:15]]
    inputs = "".join(
        f"<tr><td>{escape(i.path)}</td><td>{escape(i.format or '-')}</td><td>{i.sessions}</td>"
        f"<td class=err>{escape(i.error_code or '')} {escape(i.error_message or '')}</td></tr>"
        for i in result.inputs)
    counts = result.outcome_counts()
    failures = sum(len(s.failures) for s in result.sessions)
    body = (
        f"<h1>failcode triage</h1><p>{len(result.inputs)} inputs · {len(result.sessions)} "
        f"sessions · {failures} failing steps · {counts.get('no_match', 0)} probes that found "
        f"nothing · {counts.get('rejected_action', 0)} rejected actions (outcomes, not "
        "failures)</p>"
        '<div class="grid">'
        + _bars("Blame: category x kind", blame) + _bars("Top signatures", signatures)
        + _bars("Loops per session", loops) + _timeline(result) + "</div>"
        + f"<h2>Inputs</h2><table><tr><th>input</th><th>format</th><th>sessions</th>"
        f"<th>error</th></tr>{inputs}</table>"
        + '<h2>Sessions</h2><p><input id="filter" placeholder="filter sessions"> '
        '<button id="expand" type="button">open all</button></p>'
        + "".join(_session(s) for s in result.sessions))
    return ("<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
            '<meta name="viewport" content="width=device-width,initial-scale=1">'
            '<link rel="icon" href="data:,"><title>failcode triage</title>'
            f"<style>{_CSS}</style></head><body>{body}<script>{_SCRIPT}</script>"
            "</body></html>")
