"""Three renderers over one record: user text, developer detail, JSON.

* :func:`render_user` says what failed, why it matters (the code's impact), what was tried or can
  be tried next, whether the user must act (the category; the remedy always appears for the user
  and environment categories) and where the evidence is. It is rendered from the code and params
  in the reader's language (gettext catalogs), so the receiving side of a pipe renders it.
  :func:`render_rich` is the same text for a terminal, through ``rich`` (an optional extra).
* :func:`render_developer` adds the cause chain, a bounded traceback, context, metadata and the
  signature with each component and why it counts. This module is the one place that formats a
  traceback, and only when asked.
* :func:`render_json` is the canonical record.

Every renderer passes its output through :func:`failcode.redact`, so a record built by
hand with a secret in it still renders none; long text is cut, and the cut is said.

:func:`visible` and :class:`SeverityGate` apply the visibility rules to any report or stream:
info only as progress detail, a warning in the final report, an error when relevant, a fatal
one at once.
"""

from __future__ import annotations

from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

import msgspec

from failcode.codes._registry import UnknownCodeError, lookup
from failcode.record._axes import Category, Severity
from failcode.record._failure import expect_failure
from failcode.render._headline import headline
from failcode.render._i18n import code_text, ui_text
from failcode.signature._redact import redact, redact_tree

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from failcode.codes._registry import CodeSpec
    from failcode.record._failure import Failure
    from failcode.record._outcomes import RejectedAction

__all__ = [
    "MAX_USER_DETAIL_CHARS",
    "MAX_USER_DETAIL_LINES",
    "Channel",
    "SeverityGate",
    "Visibility",
    "format_traceback",
    "render_developer",
    "render_json",
    "render_rejected_action",
    "render_rich",
    "render_user",
    "visibility",
    "visible",
]

MAX_USER_DETAIL_LINES: Final = 8
"""User text shows at most this many lines of a failure's detail; the rest is cut, and said."""
MAX_USER_DETAIL_CHARS: Final = 800
MAX_TRACEBACK_FRAMES: Final = 30
"""A developer traceback keeps the innermost frames of each exception, at most this many."""
MAX_TRACEBACK_CHARS: Final = 12_000
"""...and at most this many characters, keeping the end, where the error is."""
_INDENT: Final = "  "


# ---------------------------------------------------------------------------------------------
# severity and visibility


class Visibility(StrEnum):
    """When a failure of a severity is shown to the user."""

    PROGRESS_DETAIL = "progress_detail"
    """info: usually hidden, or shown as progress detail."""
    FINAL_REPORT = "final_report"
    """warning: a degraded path or skipped optional gate, shown in the final report."""
    WHEN_RELEVANT = "when_relevant"
    """error: a task or tool failed but the system can continue; shown when relevant."""
    IMMEDIATE = "immediate"
    """fatal: the session cannot safely continue; surfaced at once."""


VISIBILITY: Final[Mapping[Severity, Visibility]] = MappingProxyType({
    Severity.INFO: Visibility.PROGRESS_DETAIL,
    Severity.WARNING: Visibility.FINAL_REPORT,
    Severity.ERROR: Visibility.WHEN_RELEVANT,
    Severity.FATAL: Visibility.IMMEDIATE,
})


class Channel(StrEnum):
    """Where text goes: a verbose progress view, the live stream, or the final report."""

    PROGRESS = "progress"
    STREAM = "stream"
    FINAL_REPORT = "final_report"


def visibility(severity: Severity | str) -> Visibility:
    """The visibility rule of a severity."""
    return VISIBILITY[Severity(severity)]


def visible(severity: Severity | str, channel: Channel | str, *, relevant: bool = True) -> bool:
    """Whether a failure of ``severity`` is shown on ``channel``.

    ============  ==========  ==========================  ==========================
    severity      progress    stream (live)               final report
    ============  ==========  ==========================  ==========================
    info          yes         no                          no
    warning       yes         no (held for the report)    yes
    error         yes         when relevant               when relevant
    fatal         yes         yes, at once                yes
    ============  ==========  ==========================  ==========================

    Args:
        relevant: whether an error concerns what the user is looking at (the current task,
            a step the result depends on). It only matters for ``error``.
    """
    rule = visibility(severity)
    channel = Channel(channel)
    if channel is Channel.PROGRESS or rule is Visibility.IMMEDIATE:
        return True
    if rule is Visibility.PROGRESS_DETAIL:
        return False
    if rule is Visibility.FINAL_REPORT:
        return channel is Channel.FINAL_REPORT
    return relevant


class SeverityGate:
    """Applies :func:`visible` to a stream of failures and collects the final report.

    ``offer`` says whether to show a failure now; the failures the final report must show
    (warnings, relevant errors, fatal ones) are kept, in order, for :meth:`final_report`.

    Args:
        verbose: the stream is a progress view: everything is shown as it comes.
    """

    __slots__ = ("_report", "verbose")

    def __init__(self, *, verbose: bool = False) -> None:
        self.verbose = verbose
        self._report: list[Failure] = []

    def offer(self, failure: Failure, *, relevant: bool = True) -> bool:
        """Record ``failure``; return whether to show it on the stream now."""
        if visible(failure.severity, Channel.FINAL_REPORT, relevant=relevant):
            self._report.append(failure)
        channel = Channel.PROGRESS if self.verbose else Channel.STREAM
        return visible(failure.severity, channel, relevant=relevant)

    def final_report(self) -> tuple[Failure, ...]:
        """The failures the final report shows, fatal ones first, then in arrival order."""
        fatal = [f for f in self._report if f.severity is Severity.FATAL]
        return (*fatal, *(f for f in self._report if f.severity is not Severity.FATAL))


# ---------------------------------------------------------------------------------------------
# user text


def _spec(code: str) -> CodeSpec | None:
    try:
        return lookup(code)
    except UnknownCodeError:
        return None  # another process's catalog: render the record's own English text


def _localized(failure: Failure, spec: CodeSpec | None, field: str, fallback: str | None,
               locale: str | None) -> str | None:
    if spec is None or locale is None or locale.startswith("en"):
        return fallback
    text = code_text(spec, field, failure.params, locale)
    if text is None or ("{" in text and "{" not in (fallback or "")):
        return fallback  # params the template needs are missing: keep the sender's rendering
    return text


def _cut(text: str, max_lines: int, max_chars: int, locale: str | None) -> list[str]:
    """The first lines of ``text`` within both bounds, plus a line saying what was cut."""
    lines = text.splitlines()
    kept: list[str] = []
    used = 0
    for line in lines[:max_lines]:
        room = max_chars - used
        if room <= 0:
            break
        kept.append(line if len(line) <= room else line[: max(room - 1, 0)] + "…")
        used += len(kept[-1])
    shown = sum(len(line) for line in kept)
    total = sum(len(line) for line in lines)
    if len(kept) < len(lines) or shown < total:
        kept.append(ui_text("ui.cut", locale, lines=len(lines) - len(kept),
                            chars=max(total - shown, 0)))
    return kept


_STOPS: Final = frozenset({"block", "escalate", "abort"})
_ACTIONS: Final = frozenset({"retry", "retry_after_change", "block", "escalate", "abort", "skip",
                             "cancel"})


def _action(decision: object) -> str | None:
    """The decided action's value (``retry``, ``block``...), or None without a decision."""
    action = getattr(decision, "action", None)
    value = getattr(action, "value", action)
    return value if isinstance(value, str) and value in _ACTIONS else None


def _next_line(failure: Failure, decision: object, locale: str | None) -> str:
    """What happens next: the decision's action when there is one (a retry's delay only when
    it retries), else what the retryability says."""
    delay = decision if isinstance(decision, (int, float)) else getattr(decision, "delay_s", None)
    action = _action(decision)
    if (isinstance(delay, (int, float)) and not isinstance(delay, bool) and delay > 0
            and action in (None, "retry")):
        shown = f"{delay:.1f}".rstrip("0").rstrip(".")
        return ui_text("ui.next.delay", locale, delay=shown)
    if action is not None:
        return ui_text(f"ui.next.action.{action}", locale)
    return ui_text(f"ui.next.{failure.retryability.value}", locale)


def _who(decision: object, locale: str | None) -> str:
    route = getattr(getattr(decision, "route", None), "value", None)
    key = f"ui.who.{route}" if route in ("user", "developer") else "ui.who.other"
    return ui_text(key, locale)


def _user_lines(
    failure: Failure, *, locale: str | None, decision: object, tried: str | None,
    show_traceback: bool, exc: BaseException | None,
) -> list[tuple[str, str]]:
    """(role, text) lines of user text; roles style the rich form."""
    expect_failure(failure, "render_user")
    spec = _spec(failure.code)
    message = headline(failure,
                       _localized(failure, spec, "message", failure.message, locale)
                       or failure.message)
    severity = ui_text(f"ui.severity.{failure.severity.value}", locale)
    lines = [("heading", ui_text("ui.heading", locale, severity=severity, code=failure.code,
                                 message=message))]
    if spec is not None:
        impact = _localized(failure, spec, "impact", spec.impact, locale)
        lines.append(("why", ui_text("ui.why", locale, impact=impact)))
    if tried:
        lines.append(("next", ui_text("ui.tried", locale, tried=tried)))
    lines.append(("next", _next_line(failure, decision, locale)))
    remedy = _localized(failure, spec, "remedy", failure.remedy, locale)
    category = failure.category
    if _action(decision) in _STOPS and category not in (Category.USER, Category.ENVIRONMENT):
        # the decision stops the run: never "no action needed"; say who must act
        who = _who(decision, locale)
        lines.append(("act", ui_text("ui.act.decided", locale, who=who, remedy=remedy)
                      if remedy else ui_text("ui.act.decided.bare", locale, who=who)))
    elif category is Category.USER or category is Category.ENVIRONMENT:
        # the record's invariant guarantees a remedy for these categories
        lines.append(("act", ui_text(f"ui.act.{category.value}", locale, remedy=remedy)))
    else:
        lines.append(("calm", ui_text(f"ui.act.{category.value}", locale)))
        if remedy:
            lines.append(("act", ui_text("ui.possible_fix", locale, remedy=remedy)))
    if failure.detail:
        lines.append(("label", ui_text("ui.detail", locale)))
        lines.extend(("detail", _INDENT + line) for line in _cut(
            failure.detail, MAX_USER_DETAIL_LINES, MAX_USER_DETAIL_CHARS, locale))
    if failure.evidence_refs:
        refs = ", ".join(f"{ref.type}:{ref.id}" for ref in failure.evidence_refs)
        lines.append(("evidence", ui_text("ui.evidence", locale, refs=refs)))
    lines.append(("evidence", ui_text("ui.reference", locale, error_id=failure.error_id)))
    if show_traceback:
        text = format_traceback(failure, exc)
        if text:
            lines.append(("label", ui_text("ui.traceback", locale)))
            lines.extend(("detail", _INDENT + line) for line in text.splitlines())
    return lines


def render_user(
    failure: Failure,
    *,
    locale: str | None = None,
    decision: object = None,
    tried: str | None = None,
    show_traceback: bool = False,
    exc: BaseException | None = None,
) -> str:
    """The user-facing text of a failure, in ``locale`` (English when None or not shipped).

    Args:
        locale: a language such as ``de`` or ``de_DE.UTF-8``; the message, remedy and impact are
            rendered again from the code's translated templates and the record's params.
        decision: what will be tried next: anything with ``delay_s`` (and ``action``), such as a
            :class:`failcode.Decision`, or a delay in seconds. Without it the retryability says
            whether a retry can help.
        tried: what was already tried, one short phrase ("3 attempts over 40 s").
        show_traceback: the user asked for the traceback (from ``exc`` or the record's
            ``metadata["traceback"]``); never shown otherwise.
        exc: the exception the failure came from, for ``show_traceback``.

    Returns:
        Lines of plain text ending in a newline, redacted, with long detail cut and the cut said.

    Raises:
        TypeError: ``failure`` is not a Failure.
    """
    lines = _user_lines(failure, locale=locale, decision=decision, tried=tried,
                        show_traceback=show_traceback, exc=exc)
    first = lines[0][1]
    rest = "\n".join(_INDENT + text for _role, text in lines[1:])
    return redact(f"{first}\n{rest}\n")


_RICH_STYLES: Final = {
    "why": "", "next": "cyan", "act": "bold yellow", "calm": "green", "label": "bold",
    "detail": "dim", "evidence": "dim",
}
_SEVERITY_STYLES: Final = {
    Severity.INFO: "blue", Severity.WARNING: "yellow", Severity.ERROR: "red",
    Severity.FATAL: "bold white on red",
}


def render_rich(
    failure: Failure,
    *,
    locale: str | None = None,
    decision: object = None,
    tried: str | None = None,
    show_traceback: bool = False,
    exc: BaseException | None = None,
) -> Any:
    """The user text as a ``rich`` renderable (a Panel) for a terminal; print it with a Console.

    Same content and arguments as :func:`render_user`; styles follow the severity and the roles
    of the lines. Needs the ``rich`` extra.

    Raises:
        ImportError: rich is not installed; the message names the extra to install
            (``pip install 'failcode[rich]'``).
    """
    try:
        from rich.panel import Panel  # noqa: PLC0415 - optional extra, imported only when used
        from rich.text import Text  # noqa: PLC0415 - optional extra, imported only when used
    except ImportError as missing:  # not `exc`: that is a parameter
        msg = ("render_rich needs the rich package: pip install 'failcode[rich]' "
               f"(or pip install rich); {missing}")
        raise ImportError(msg, name="rich") from missing

    lines = _user_lines(failure, locale=locale, decision=decision, tried=tried,
                        show_traceback=show_traceback, exc=exc)
    body = Text()
    for index, (role, text) in enumerate(lines[1:]):
        if index:
            body.append("\n")
        body.append(redact(text), style=_RICH_STYLES.get(role, ""))
    style = _SEVERITY_STYLES[failure.severity]
    return Panel(body, title=Text(redact(lines[0][1]), style=style), title_align="left",
                 border_style=style.split()[-1])


# ---------------------------------------------------------------------------------------------
# a rejected action, for the model

MAX_REJECTED_CHARS: Final = 300
"""The instruction fed back for a rejected action stays this short."""


def render_rejected_action(rejected: RejectedAction, *, locale: str | None = None) -> str:
    """The instruction that feeds a :class:`~failcode.RejectedAction` back to the model.

    A rejected action is information for the model, not an error. The text is one
    short instruction without a code, a severity or a remedy for a person: it names the action,
    says why it was refused and asks for another one ("The action click(900, 40) was not carried
    out: the target is outside the window. Choose a different action."). The reason is collapsed
    to one line, redacted, and cut so the whole text stays within :data:`MAX_REJECTED_CHARS`.

    Raises:
        TypeError: ``rejected`` is not a RejectedAction.
    """
    from failcode.codes._build import clean_text  # noqa: PLC0415 - _build is heavier; rarely needed
    from failcode.record._outcomes import RejectedAction  # noqa: PLC0415 - same layer, type check only

    if not isinstance(rejected, RejectedAction):
        msg = (f"render_rejected_action() expects rejected to be a failcode.RejectedAction, "
               f"got {type(rejected).__name__}")
        raise TypeError(msg)
    action = clean_text(rejected.action, 80) or "?"
    reason = clean_text(rejected.reason, MAX_REJECTED_CHARS).rstrip(" .")
    if not reason:
        return redact(ui_text("ui.rejected.bare", locale, action=action))
    bare = len(ui_text("ui.rejected", locale, action=action, reason=""))
    room = max(MAX_REJECTED_CHARS - bare, 20)
    if len(reason) > room:
        reason = reason[: room - 1].rstrip() + "…"
    return redact(ui_text("ui.rejected", locale, action=action, reason=reason))


# ---------------------------------------------------------------------------------------------
# developer detail


def format_traceback(failure: Failure | None, exc: BaseException | None = None, *,
                     max_frames: int = MAX_TRACEBACK_FRAMES,
                     max_chars: int = MAX_TRACEBACK_CHARS) -> str:
    """A bounded, redacted traceback: of ``exc`` if given, else ``metadata["traceback"]``.

    Keeps the innermost ``max_frames`` frames of each exception in the chain and the last
    ``max_chars`` characters, saying what was cut. Returns "" when there is neither.

    Never raises on a hostile exception: when :mod:`traceback` cannot format ``exc`` (its
    ``__getattr__`` or ``__getattribute__`` raises, on ``__traceback__``, ``__cause__``,
    ``__notes__`` or anything else), the chain is read from the slots every exception has
    (:func:`_hostile_exception_text`) and a line says why its notes are missing.
    """
    if exc is not None:
        import traceback  # noqa: PLC0415 - formatting a traceback is rare; only when asked

        try:
            text = "".join(traceback.format_exception(exc, limit=-max_frames))
        except Exception as error:  # noqa: BLE001 - the exception itself is hostile
            text = _hostile_exception_text(exc, max_frames, error)
    elif failure is not None and isinstance(failure.metadata.get("traceback"), str):
        text = str(failure.metadata["traceback"])
    else:
        return ""
    text = text.rstrip("\n")
    if len(text) > max_chars:
        cut = len(text) - max_chars
        text = f"[{cut} characters cut from the start]\n" + text[cut:]
    return redact(text)


_MAX_CHAIN: Final = 16
"""The most exceptions of a hostile exception's chain :func:`_hostile_exception_text` shows."""
_CAUSE_LINE: Final = "\nThe above exception was the direct cause of the following exception:\n\n"
_CONTEXT_LINE: Final = ("\nDuring handling of the above exception, another exception "
                        "occurred:\n\n")


def _slot(exc: BaseException, name: str) -> Any:
    """``exc.<name>`` read through ``BaseException``'s own descriptor, past any
    ``__getattribute__`` or ``__getattr__`` of its class; None when even that fails."""
    try:
        return BaseException.__dict__[name].__get__(exc)
    except Exception:  # noqa: BLE001 - a hostile exception: nothing to read
        return None


def _type_label(exc: BaseException) -> str:
    """``module.QualName`` of ``exc``'s type (``type()`` never asks the instance)."""
    cls = type(exc)
    try:
        name = str(type.__dict__["__qualname__"].__get__(cls))
        module = str(type.__dict__["__module__"].__get__(cls))
    except Exception:  # noqa: BLE001 - a hostile metaclass
        return "<exception>"
    return name if module in {"builtins", "__main__", "None"} else f"{module}.{name}"


def _hostile_exception_text(exc: BaseException, max_frames: int, error: Exception) -> str:
    """What :func:`traceback.format_exception` would print for ``exc``, read from the slots
    every exception has (``__traceback__``, ``__cause__``, ``__context__``,
    ``__suppress_context__``, ``BaseException.__str__``), for an exception whose attributes
    raise when read; its notes are left out, and a last line says why."""
    import traceback  # noqa: PLC0415 - only on this rare path

    chain: list[tuple[BaseException, str]] = []  # outermost first, with the line before it
    seen: set[int] = set()
    current: object = exc
    line = ""
    while isinstance(current, BaseException) and id(current) not in seen \
            and len(chain) < _MAX_CHAIN:
        seen.add(id(current))
        chain.append((current, line))
        cause = _slot(current, "__cause__")
        if cause is not None:
            current, line = cause, _CAUSE_LINE
        elif not _slot(current, "__suppress_context__"):
            current, line = _slot(current, "__context__"), _CONTEXT_LINE
        else:
            break
    parts: list[str] = []
    after = ""
    for link, before in reversed(chain):
        parts.append(after)
        after = before
        tb = _slot(link, "__traceback__")
        if tb is not None:
            try:
                frames = traceback.format_list(traceback.extract_tb(tb, limit=-max_frames))
                parts.extend(("Traceback (most recent call last):\n", *frames))
            except Exception:  # noqa: BLE001 - frames unreadable: the header line still says what
                parts.append("Traceback (frames unavailable)\n")
        try:
            message = BaseException.__str__(link)
        except Exception:  # noqa: BLE001 - as traceback prints it
            message = "<exception str() failed>"
        label = _type_label(link)
        parts.append(f"{label}: {message}\n" if message else f"{label}\n")
    parts.append(f"(shown from the exception's own fields: reading its attributes raised "
                 f"{_type_label(error)})\n")
    return "".join(parts)


def _mapping_lines(title: str, mapping: Mapping[str, Any]) -> list[str]:
    if not mapping:
        return [f"{title}: (none)"]
    return [f"{title}:", *(f"{_INDENT}{key} = {value!r}" for key, value in mapping.items()
                           if key != "traceback")]


def render_developer(
    failure: Failure, *, exc: BaseException | None = None, locale: str | None = None,
    max_frames: int = MAX_TRACEBACK_FRAMES, known_remedies: Sequence[Any] = (),
) -> str:
    """Developer detail: every field, the cause chain, a bounded traceback, context, metadata,
    and the signature with each component, whether it contributes and why.

    Field names are identifiers and stay as they are in every language; ``locale`` only changes
    the user-text summary at the top.

    Args:
        exc: the exception the failure came from, for its traceback; otherwise the record's
            ``metadata["traceback"]`` is shown when present.
        max_frames: innermost frames kept per exception of the chain.
        known_remedies: the debug knowledge of the signature, best first (what
            ``Store.known_remedies(failure.signature)`` returns: items with ``remedy``,
            ``status``, ``worked``, ``tried``); shown after the remedy.

    Returns:
        Redacted plain text ending in a newline.

    Raises:
        TypeError: ``failure`` is not a Failure.
    """
    expect_failure(failure, "render_developer")
    from failcode.signature._signature import (  # noqa: PLC0415 - developer detail only
        SIGNATURE_VERSION,
        explain_signature,
    )

    f = failure
    spec = _spec(f.code)
    lines = [
        (f"{f.code} {spec.slug if spec else '(code not in any loaded catalog)'}  "
        f"error_id={f.error_id}"),
        (f"kind={f.kind.value} category={f.category.value} severity={f.severity.value} "
        f"retryability={f.retryability.value} recoverable={f.recoverable}"),
        f"error_class={f.error_class} surface={f.surface} location={f.location or 'none'}",
        f"message: {f.message}",
    ]
    if locale is not None and not locale.startswith("en"):
        localized = _localized(f, spec, "message", f.message, locale)
        lines.append(f"message[{locale}]: {localized}")
    if f.params:
        lines.extend(_mapping_lines("params", f.params))
    if f.remedy:
        lines.append(f"remedy: {f.remedy}")
    if known_remedies:
        lines.append("known remedies for this signature (best first):")
        lines.extend(f"{_INDENT}[{r.status}] {r.remedy} (worked {r.worked} of {r.tried})"
                     for r in known_remedies)
    if spec is not None:
        lines.append(f"impact: {spec.impact}")
    if f.detail:
        lines.append("detail:")
        lines.extend(_INDENT + line for line in f.detail.splitlines())
    if f.cause:
        lines.append("cause chain (outermost first):")
        lines.extend(
            f"{_INDENT}{number}. {link.type}{f' [{link.code}]' if link.code else ''}: "
            f"{link.message}" for number, link in enumerate(f.cause, start=1))
    text = format_traceback(f, exc, max_frames=max_frames)
    if text:
        lines.append("traceback:")
        lines.extend(_INDENT + line for line in text.splitlines())
    lines.extend(_mapping_lines("context", f.context))
    lines.extend(_mapping_lines("metadata", f.metadata))
    explained = explain_signature(f)
    if f.signature_version != SIGNATURE_VERSION:
        agreement = f"signed by {f.signature_version}; this failcode is {SIGNATURE_VERSION}"
    elif explained.value == f.signature:
        agreement = "recomputed: same"
    else:
        agreement = f"recomputed: {explained.value} (differs: the record was edited)"
    lines.append(f"signature: {f.signature} ({f.signature_version}; {agreement})")
    width = max(len(c.name) for c in explained.components)
    for component in explained.components:
        mark = "+" if component.contributes else "-"
        value = "" if component.value is None else f" = {component.value!r}"
        lines.append(f"{_INDENT}{mark} {component.name.ljust(width)}  "
                     f"[{component.source}]{value}  ({component.hint})")
    for title, refs in (("cause_refs", f.cause_refs), ("evidence_refs", f.evidence_refs)):
        if refs:
            lines.append(f"{title}: " + ", ".join(f"{r.type}:{r.id}" for r in refs))
    return redact("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------------------------
# JSON


def render_json(failure: Failure, *, indent: int | None = None) -> str:
    """The canonical record as JSON (:meth:`Failure.to_json`, same order), every string redacted.

    A record built through a code is already redacted, and then this equals ``to_json()``; the
    pass protects a record built by hand.

    Raises:
        TypeError: ``failure`` is not a Failure.
    """
    expect_failure(failure, "render_json")
    data = redact_tree(msgspec.json.decode(failure.to_json()))
    text = msgspec.json.encode(data)
    if indent is not None:
        text = msgspec.json.format(text, indent=indent)
    return text.decode()
