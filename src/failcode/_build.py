"""Building records from a code's spec: params cleaned, text redacted, cause chain, signature."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Final

from failcode._failure import (
    MAX_CAUSE_DEPTH,
    MAX_MESSAGE_CHARS,
    CauseLink,
    EntityRef,
    Failure,
)
from failcode._frozen import FrozenDict, Scalar
from failcode._redact import redact, redact_slice
from failcode._registry import template_fields
from failcode._signature import SIGNATURE_VERSION, sign_failure_fields

if TYPE_CHECKING:
    from collections.abc import Mapping

    from failcode._axes import Retryability, Severity
    from failcode._registry import CodeSpec

__all__ = ["build_failure", "cause_chain", "clean_text", "redact_mapping"]

MAX_CAUSE_MESSAGE_CHARS: Final = 500
MAX_DETAIL_CHARS: Final = 4000
_MIN_PARAM_CHARS: Final = 24
_EMPTY: Final = FrozenDict()


_CLEAN_CACHE_SIZE: Final = 4096
_CLEAN_CACHEABLE_CHARS: Final = 256
_clean_cache: dict[tuple[str, int], str] = {}


def clean_text(text: str, limit: int) -> str:
    """Redact ``text``, collapse it to one line, and cut it to ``limit`` characters with '…'.

    Short texts repeat (a provider's name, a program, a model): their results are kept in a
    bounded cache, since redaction is the costly part of building a record.
    """
    key = (text, limit)
    cached = _clean_cache.get(key)
    if cached is not None:
        return cached
    # Redact before you cut: a secret straddling the cut is replaced whole, never half kept.
    one_line = " ".join(redact_slice(text, 0, limit * 4).split())
    result = one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"
    if len(text) <= _CLEAN_CACHEABLE_CHARS:
        if len(_clean_cache) >= _CLEAN_CACHE_SIZE:
            _clean_cache.clear()
        _clean_cache[key] = result
    return result


@functools.lru_cache(maxsize=1024)
def _param_budget(template: str) -> int:
    """How many characters each field of ``template`` may take so the message fits 300."""
    fields = template_fields(template)
    literal = len(template) - sum(len(name) + 2 for name in fields)
    if not fields:
        return MAX_MESSAGE_CHARS
    return max(_MIN_PARAM_CHARS, (MAX_MESSAGE_CHARS - literal) // len(fields))


def _clean_params(spec: CodeSpec, params: Mapping[str, Scalar]) -> FrozenDict:
    if not params:
        return _EMPTY
    budget = _param_budget(spec.message)
    return FrozenDict({
        key: clean_text(value, budget) if type(value) is str else value
        for key, value in params.items()
    })


def _render(spec: CodeSpec, template_name: str, template: str, params: Mapping[str, Scalar]) -> str:
    try:
        return template.format_map(params)
    except KeyError as exc:
        needed = ", ".join(template_fields(template))
        msg = (f"{spec.code} {template_name} template needs params {needed}; "
               f"missing {exc.args[0]!r}")
        raise KeyError(msg) from None


def _exception_text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # noqa: BLE001 - a __str__ that raises must not break classification
        return f"<unprintable {type(exc).__name__}>"


def cause_chain(exc: BaseException) -> tuple[CauseLink, ...]:
    """The bounded, redacted cause chain of ``exc``, outermost first.

    Follows ``__cause__``, then ``__context__`` unless suppressed; stops at a cycle and after
    :data:`~failcode.MAX_CAUSE_DEPTH` links. A :class:`~failcode.FailureError` contributes its code.
    """
    from failcode._failure import FailureError  # noqa: PLC0415 - same package, avoids a cycle

    links: list[CauseLink] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(links) < MAX_CAUSE_DEPTH:
        seen.add(id(current))
        cls = type(current)
        name = cls.__qualname__ if cls.__module__ == "builtins" else (
            f"{cls.__module__}.{cls.__qualname__}")
        code = current.failure.code if isinstance(current, FailureError) else None
        links.append(CauseLink(name, clean_text(_exception_text(current),
                                                MAX_CAUSE_MESSAGE_CHARS), code))
        following = current.__cause__
        if following is None and not current.__suppress_context__:
            following = current.__context__
        current = following
    return tuple(links)


def build_failure(
    spec: CodeSpec,
    *,
    surface: str,
    params: Mapping[str, Scalar] | None,
    location: str | None,
    error_class: str | None,
    severity: Severity | None,
    retryability: Retryability | None,
    detail: str | None,
    cause: BaseException | tuple[CauseLink, ...] | None,
    context: Mapping[str, Scalar] | None,
    metadata: Mapping[str, Scalar] | None,
    cause_refs: tuple[EntityRef, ...],
    evidence_refs: tuple[EntityRef, ...],
    recoverable: bool | None,
) -> Failure:
    """Build a Failure of ``spec``; see :meth:`failcode.CodeSpec.failure`."""
    clean = _clean_params(spec, params or _EMPTY)
    # Params were redacted one by one; the rendered text is redacted again because a secret
    # can span the template and a param ("password = {value}" with value "hunter2").
    message = _render(spec, "message", spec.message, clean)
    remedy = None if spec.remedy is None else _render(spec, "remedy", spec.remedy, clean)
    if clean:
        message = redact(message)
        remedy = None if remedy is None else redact(remedy)
    error_class = _redact_short(error_class or spec.error_class)
    surface = _redact_short(surface)
    location = None if location is None else _redact_short(location)
    frozen_metadata = _redacted_mapping(metadata) if metadata else _EMPTY
    causes = cause_chain(cause) if isinstance(cause, BaseException) else _redacted_links(cause)
    return Failure(
        code=spec.code,
        kind=spec.kind,
        category=spec.category,
        severity=severity or spec.severity,
        retryability=retryability or spec.effective_retryability,
        error_class=error_class,
        surface=surface,
        message=message,
        signature=sign_failure_fields(spec.kind, surface, error_class, location,
                                      message=message, metadata=frozen_metadata),
        signature_version=SIGNATURE_VERSION,
        location=location,
        params=clean,
        detail=clean_detail(detail),
        cause=causes,
        remedy=remedy,
        recoverable=spec.recoverable if recoverable is None else recoverable,
        context=_redacted_mapping(context) if context else _EMPTY,
        cause_refs=_redacted_refs(cause_refs),
        evidence_refs=_redacted_refs(evidence_refs),
        metadata=frozen_metadata,
    )


def _redact_short(text: object) -> Any:
    """:func:`redact` of a short, repeating field value (a surface, a program, a request id),
    cached like :func:`clean_text`; anything that is not a str is returned as it is."""
    if type(text) is not str:
        return text
    cached = _short_cache.get(text)
    if cached is not None:
        return cached
    result = redact(text)
    if len(text) <= _CLEAN_CACHEABLE_CHARS:
        if len(_short_cache) >= _CLEAN_CACHE_SIZE:
            _short_cache.clear()
        _short_cache[text] = result
    return result


_short_cache: dict[str, str] = {}


def redact_mapping(values: Mapping[str, Scalar]) -> dict[str, Scalar]:
    """Keys and str values of a context or metadata mapping, redacted (no secret on the wire)."""
    return {_redact_short(key): _redact_short(value) for key, value in values.items()}


def _redacted_mapping(values: Mapping[str, Scalar]) -> FrozenDict:
    if type(values) is FrozenDict and values is _EMPTY:
        return values
    return FrozenDict(redact_mapping(values))


def _redacted_links(links: tuple[CauseLink, ...] | None) -> tuple[CauseLink, ...]:
    """A cause chain given as links (a record re-made elsewhere), redacted like a live one."""
    if not links:
        return ()
    out = []
    for link in links:
        if type(link) is not CauseLink:
            out.append(link)  # the record's validation names the wrong item
            continue
        kind = _redact_short(link.type)
        message = clean_text(link.message, MAX_CAUSE_MESSAGE_CHARS)
        out.append(link if (kind, message) == (link.type, link.message)
                   else CauseLink(kind, message, link.code))
    return tuple(out)


def _redacted_refs(refs: tuple[EntityRef, ...]) -> tuple[EntityRef, ...]:
    if not refs:
        return ()
    out = []
    for ref in refs:
        kind, ident = _redact_short(ref.type), _redact_short(ref.id)
        out.append(ref if (kind, ident) == (ref.type, ref.id) else EntityRef(kind, ident))
    return tuple(out)


def clean_detail(detail: str | None) -> str | None:
    """Redact a detail text and bound it (lines kept; a cut is marked)."""
    if not detail:
        return None
    text = redact_slice(detail, 0, MAX_DETAIL_CHARS * 2)
    if len(text) > MAX_DETAIL_CHARS:
        text = text[: MAX_DETAIL_CHARS - 12] + " …[cut]"
    return text
