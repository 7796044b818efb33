"""Building records from a code's spec: params cleaned, text redacted, cause chain, signature.

The fast path: a record's code, surface, class, location, params and metadata decide its
message, remedy, cleaned params and signature, and those repeat (the same provider timing out,
the same operation failing). The first record of each combination is built and validated in
full; it is kept as a template, and the next one of the same combination is a copy of it with
only the per-occurrence fields set (error id, cause chain, context), so redaction, rendering,
normalization, hashing and validation run once per combination, not once per failure.
"""

from __future__ import annotations

import functools
import string
from typing import TYPE_CHECKING, Any, Final

from msgspec.structs import force_setattr

from failcode.record._failure import (
    MAX_CAUSE_DEPTH,
    MAX_MESSAGE_CHARS,
    CauseLink,
    EntityRef,
    Failure,
    FailureError,
    new_error_id,
)
from failcode.record._frozen import FrozenDict, Scalar
from failcode.signature._redact import redact, redact_slice
from failcode.signature._signature import SIGNATURE_VERSION, sign_failure_fields

if TYPE_CHECKING:
    from collections.abc import Mapping

    from failcode.codes._registry import CodeSpec
    from failcode.record._axes import Retryability, Severity

__all__ = [
    "build_failure",
    "cause_chain",
    "clean_text",
    "redact_mapping",
    "render_template",
    "template_fields",
]

MAX_CAUSE_MESSAGE_CHARS: Final = 500
MAX_DETAIL_CHARS: Final = 4000
_FORMATTER: Final = string.Formatter()
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
    # A text within the slice is the slice (redact_slice of all of it is redact), and the
    # same text comes back at once with another limit (a param, then the cause link). A lone
    # surrogate decodes to up to three characters, hence the bound for non-ASCII text.
    window = limit * 4
    whole = (_redacted(text) if len(text) * 3 <= window or (
        len(text) <= window and text.isascii()) else redact_slice(text, 0, window))
    one_line = " ".join(whole.split())
    result = one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"
    if len(text) <= _CLEAN_CACHEABLE_CHARS:
        if len(_clean_cache) >= _CLEAN_CACHE_SIZE:
            _clean_cache.clear()
        _clean_cache[key] = result
    return result


_REDACTED_CACHEABLE_CHARS: Final = 2048
_redacted_cache: dict[str, str] = {}


def _redacted(text: str) -> str:
    """:func:`redact` of ``text``, kept for a while: one record redacts the same text more
    than once (a param and the cause link's message; a remedy without fields every time)."""
    cached = _redacted_cache.get(text)
    if cached is not None:
        return cached
    result = redact(text)
    if len(text) <= _REDACTED_CACHEABLE_CHARS:
        if len(_redacted_cache) >= _CLEAN_CACHE_SIZE:
            _redacted_cache.clear()
        _redacted_cache[text] = result
    return result


@functools.lru_cache(maxsize=1024)
def _param_budget(template: str) -> int:
    """How many characters each field of ``template`` may take so the message fits 300."""
    fields = template_fields(template)
    literal = len(template) - sum(len(name) + 2 for name in fields)
    if not fields:
        return MAX_MESSAGE_CHARS
    return max(_MIN_PARAM_CHARS, (MAX_MESSAGE_CHARS - literal) // len(fields))


_PATH_PARAMS: Final = frozenset({"path", "file", "url"})
"""Params that hold a file's path or a store's URL: cut in the middle, so the file's name
(the URL's end) stays in view beside its start."""


def clean_path(text: str, limit: int) -> str:
    """:func:`clean_text` of a file path, whose middle is cut when it is too long: its start
    and its end (the file's name, which the reader needs most) stay."""
    whole = clean_text(text, max(limit, len(text) + 1))
    if len(whole) <= limit:
        return whole
    head = limit // 4
    return whole[:head] + "…" + whole[len(whole) - (limit - head - 1):]


def _clean_params(spec: CodeSpec, params: Mapping[str, Scalar]) -> FrozenDict:
    if not params:
        return _EMPTY
    budget = _param_budget(spec.message)
    return FrozenDict({
        key: (clean_path if key in _PATH_PARAMS else clean_text)(value, budget)
        if type(value) is str else value
        for key, value in params.items()
    })


def _render(spec: CodeSpec, template_name: str, template: str, params: Mapping[str, Scalar]) -> str:
    try:
        return render_template(spec.template(template_name, params) or template, params)
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


_type_names: dict[type, str] = {}


def _link(exc: BaseException) -> CauseLink:
    cls = type(exc)
    name = _type_names.get(cls)
    if name is None:
        name = cls.__qualname__ if cls.__module__ == "builtins" else (
            f"{cls.__module__}.{cls.__qualname__}")
        if len(_type_names) >= _CLEAN_CACHE_SIZE:
            _type_names.clear()
        _type_names[cls] = name
    code = exc.failure.code if isinstance(exc, FailureError) else None
    return CauseLink(name, clean_text(_exception_text(exc), MAX_CAUSE_MESSAGE_CHARS), code)


def cause_chain(exc: BaseException) -> tuple[CauseLink, ...]:
    """The bounded, redacted cause chain of ``exc``, outermost first.

    Follows ``__cause__``, then ``__context__`` unless suppressed; stops at a cycle and after
    :data:`~failcode.MAX_CAUSE_DEPTH` links. A :class:`~failcode.FailureError` contributes its code.
    """
    first = _link(exc)
    following = exc.__cause__
    if following is None and (exc.__suppress_context__ or exc.__context__ is None):
        return (first,)  # the common case: one exception, no chain
    links: list[CauseLink] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(links) < MAX_CAUSE_DEPTH:
        seen.add(id(current))
        links.append(first if current is exc else _link(current))
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
    if (severity is None and retryability is None and not detail and recoverable is None
            and not cause_refs and not evidence_refs
            and (cause is None or isinstance(cause, BaseException))
            and (location is None or (type(location) is str and location[:1] not in _ABSOLUTE))):
        try:
            key = (spec.code, surface, error_class, location, _items(params), _items(metadata))
            entry = _templates.get(key)
        except Exception:  # noqa: BLE001 - not hashable or not a mapping: the full path says why
            entry = key = None
        if entry is not None and entry[0] is spec:
            record = _from_template(entry[1], cause, context)
            if record is not None:
                return record
        record = _build_full(spec, surface, params, location, error_class, None, None, None,
                             cause, context, metadata, (), (), None)
        if key is not None:
            if len(_templates) >= _TEMPLATE_CACHE_SIZE:
                _templates.clear()
            _templates[key] = (spec, record)
        return record
    return _build_full(spec, surface, params, location, error_class, severity, retryability,
                       detail, cause, context, metadata, cause_refs, evidence_refs, recoverable)


_TEMPLATE_CACHE_SIZE: Final = 4096
_templates: dict[tuple[object, ...], tuple[CodeSpec, Failure]] = {}
"""(code, surface, class, location, params, metadata) -> (spec, the first record built)."""
# a location starting with these is checked against the working directory, which may change
_ABSOLUTE: Final = frozenset({"/", "\\"})


def _items(mapping: Mapping[str, Scalar] | None) -> tuple[object, ...]:
    """A hashable key for a mapping; a non-str value carries its type (1, 1.0 and True differ)."""
    if not mapping:
        return ()
    return tuple([(k, v) if type(v) is str else (k, type(v), v) for k, v in mapping.items()])


def _from_template(
    template: Failure, cause: BaseException | None, context: Mapping[str, Scalar] | None,
) -> Failure | None:
    """A copy of a validated record with this occurrence's error id, cause chain and context.

    Everything else was validated when the template was built; the cause chain is built (and
    each link checked) by :func:`cause_chain`, the context by FrozenDict. None when the context
    is refused: the full path then raises the record's own error for it.
    """
    if context:
        try:
            frozen_context = FrozenDict(redact_mapping(context))
        except (TypeError, ValueError, AttributeError):
            return None
    else:
        frozen_context = _EMPTY
    record: Failure = template.__copy__()  # type: ignore[attr-defined]  # msgspec.Struct has it
    force_setattr(record, "error_id", new_error_id())
    force_setattr(record, "cause", () if cause is None else cause_chain(cause))
    force_setattr(record, "context", frozen_context)
    return record


def _build_full(  # noqa: PLR0917 - build_failure's arguments, in its order
    spec: CodeSpec, surface: str, params: Mapping[str, Scalar] | None, location: str | None,
    error_class: str | None, severity: Severity | None, retryability: Retryability | None,
    detail: str | None, cause: BaseException | tuple[CauseLink, ...] | None,
    context: Mapping[str, Scalar] | None, metadata: Mapping[str, Scalar] | None,
    cause_refs: tuple[EntityRef, ...], evidence_refs: tuple[EntityRef, ...],
    recoverable: bool | None,
) -> Failure:
    clean = _clean_params(spec, params or _EMPTY)
    # Params were redacted one by one; the rendered text is redacted again because a secret
    # can span the template and a param ("password = {value}" with value "hunter2").
    message = _render(spec, "message", spec.message, clean)
    remedy = None if spec.remedy is None else _render(spec, "remedy", spec.remedy, clean)
    if clean:
        message = _redacted(message)
        remedy = None if remedy is None else _redacted(remedy)
    # No secret on the wire: every field a classifier or caller fills is redacted too.
    error_class = _redact_short(error_class or spec.error_class)
    surface = _redact_short(surface)
    location = None if location is None else _redact_short(location)
    frozen_metadata = _redacted_metadata(metadata) if metadata else _EMPTY
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


def _redact_short(text: Any) -> Any:
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
    if values is _EMPTY:
        return _EMPTY
    return FrozenDict(redact_mapping(values))


_metadata_cache: dict[tuple[object, ...], FrozenDict] = {}


def _redacted_metadata(values: Mapping[str, Scalar]) -> FrozenDict:
    """:func:`_redacted_mapping` of a metadata mapping, shared by the records that carry the
    same one (a classifier's rule and errno repeat); a FrozenDict is immutable."""
    try:
        key = _items(values)
        cached = _metadata_cache.get(key)
    except Exception:  # noqa: BLE001 - not hashable or not a mapping: the full path says why
        return _redacted_mapping(values)
    if cached is None:
        cached = _redacted_mapping(values)
        if len(_metadata_cache) >= _CLEAN_CACHE_SIZE:
            _metadata_cache.clear()
        _metadata_cache[key] = cached
    return cached


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
        if type(ref) is not EntityRef:
            out.append(ref)  # the record's validation names the wrong item
            continue
        kind, ident = _redact_short(ref.type), _redact_short(ref.id)
        out.append(ref if (kind, ident) == (ref.type, ref.id) else EntityRef(kind, ident))
    return tuple(out)


def clean_detail(detail: str | None) -> str | None:
    """Redact a detail text and bound it (lines kept; a cut is marked); blank text is None."""
    if not detail or not detail.strip():
        return None
    text = redact_slice(detail, 0, MAX_DETAIL_CHARS * 2)
    if len(text) > MAX_DETAIL_CHARS:
        text = text[: MAX_DETAIL_CHARS - 12] + " …[cut]"
    return text


def template_fields(template: str) -> tuple[str, ...]:
    """The ``{name}`` fields of a message template, in order, without repeats.

    Raises:
        ValueError: the template is malformed or uses attribute, index or format-spec syntax.
    """
    names: list[str] = []
    for _literal, name, spec, conversion in _FORMATTER.parse(template):
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            msg = f"template field {{{name}}} must be a plain {{identifier}} in {template!r}"
            raise ValueError(msg)
        if name not in names:
            names.append(name)
    return tuple(names)


def render_template(template: str, params: Mapping[str, Any]) -> str:
    """``template`` rendered with ``params``. A text param that ends the sentence with its own
    mark (``did you mean x?``, ``disk full.``) keeps it, and the template's period is dropped."""
    text = template.format_map(params)
    if text.endswith(("..", "?.", "!.")) and not text.endswith("..."):
        text = text[:-1]
    return text
