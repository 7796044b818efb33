"""Code registries: codes declared as enumerations against declared areas.

A catalog is three things declared in code: a prefix (``FC``, ``AFK``), its areas (``PROV``,
``PERC``...) and a :class:`CodeEnum` whose members each carry one :class:`CodeSpec`::

    class AFKCode(CodeEnum):
        PERC_CAPTURE_FULLSCREEN = CodeSpec(
            code="AFK-PERC-003", slug="capture-exclusive-fullscreen",
            kind=Kind.ENV_ERROR, category=Category.USER, error_class="capture_blocked",
            message="Screen capture failed: {window} is in exclusive fullscreen.",
            remedy="Switch {window} to borderless windowed mode in its display settings.",
            impact="The agent cannot see the game, so it cannot act.",
            example="Capturing a game that runs in exclusive fullscreen mode.",
            example_params={"window": "Factorio"}, since="0.3.0")

    AFK = Catalog("AFK", areas={"PERC": "perception"}, codes=AFKCode,
                  categories=SEED_003_CATEGORIES)

Declaring a catalog checks it (:class:`CatalogError` lists every problem); the committed lock
file and :func:`check_lock` catch what a single declaration cannot see: a code deleted, reused for
another meaning, or moved to another kind or category.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Iterator, Mapping
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final, Self

import msgspec

from failcode.codes._build import build_failure, render_template, template_fields
from failcode.record._axes import (
    SEED_003_CATEGORIES,
    Category,
    Kind,
    Retryability,
    Severity,
    derived_retryability,
)
from failcode.record._frozen import FrozenDict, Scalar

if TYPE_CHECKING:
    from pathlib import Path

    from failcode.record._failure import CauseLink, EntityRef, Failure

__all__ = [
    "SEED_003_CATEGORIES",
    "Catalog",
    "CatalogError",
    "CodeEnum",
    "CodeSpec",
    "LockProblem",
    "RetiredCodeError",
    "UnknownCodeError",
    "catalogs",
    "check_lock",
    "lookup",
    "suggest_codes",
    "update_lock",
]

LOCK_FORMAT: Final = "failcode-codes-lock/1"
_AREA_RE = re.compile(r"[A-Z][A-Z0-9]{0,15}")
_PREFIX_RE = _AREA_RE
_SLUG_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_CLASS_RE = re.compile(r"[a-z0-9_.]+")


class CatalogError(ValueError):
    """A catalog declaration breaks the registry's rules; ``problems`` lists every one."""

    def __init__(self, prefix: str, problems: list[str]) -> None:
        self.prefix = prefix
        self.problems = problems
        super().__init__(f"catalog {prefix} is invalid:\n  - " + "\n  - ".join(problems))


class UnknownCodeError(LookupError):
    """No declared catalog has this code; ``suggestions`` holds the nearest codes."""

    def __init__(self, code: str, suggestions: list[str]) -> None:
        self.code = code
        self.suggestions = suggestions
        hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"unknown failure code {code!r}{hint}")


class RetiredCodeError(ValueError):
    """A retired code was asked to build a new Failure: retired codes are no longer emitted."""


class CodeSpec(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Everything one code means: the registry's unit, one per code.

    ``message`` and ``remedy`` are ``str.format`` templates over plain ``{name}`` fields, rendered
    with the Failure's ``params``. ``retryability`` must be one the category allows
    (:data:`~failcode.CATEGORY_RETRYABILITIES`); left unset, it is derived: the kind's default
    when the category allows it, else the category's default. ``impact`` says
    why the failure matters; ``example`` describes a situation that produces it and
    ``example_params`` renders its templates (tests render every template with them).
    """

    code: str
    slug: str
    """Stable machine identifier of the meaning, e.g. ``provider-rate-limit``."""
    kind: Kind
    category: Category
    error_class: str
    message: str
    impact: str
    example: str
    since: str
    remedy: str | None = None
    severity: Severity = Severity.ERROR
    retryability: Retryability | None = None
    example_params: Mapping[str, Scalar] = msgspec.field(default_factory=FrozenDict)
    optional: tuple[str, ...] = ()
    """Params a caller may leave out (unknown provider, model, path...). A template that uses
    one has a variant for each set of them that can be missing, in ``variants``."""
    variants: Mapping[str, str] = msgspec.field(default_factory=dict)
    """``"<field>.without.<name>[.<name>...]"`` (names sorted) -> the template used when those
    optional params are missing, e.g. ``"message.without.provider"``: a whole sentence of its
    own, never the main template with a hole in it."""
    docs_url: str | None = None
    retired: bool = False
    superseded_by: str | None = None

    @property
    def prefix(self) -> str:
        """The code's prefix, e.g. ``FC``."""
        return self.code.split("-", 1)[0]

    @property
    def area(self) -> str:
        """The code's area, e.g. ``PROV``."""
        return self.code.split("-")[1]

    @property
    def effective_retryability(self) -> Retryability:
        """``retryability``, or the one derived from the category (and kind) when unset."""
        return self.retryability or derived_retryability(self.category, self.kind)

    @property
    def recoverable(self) -> bool:
        """Whether the agent can continue by itself: the transient and task categories."""
        return self.category in (Category.TRANSIENT, Category.TASK)

    def template_key(self, field: str, params: Mapping[str, Any]) -> str:
        """Which template of ``field`` renders ``params``: ``field`` itself, or the variant
        ``field.without.<names>`` for the optional params that are missing (absent, None or
        empty) among those the field's template uses."""
        template = getattr(self, field)
        if not self.optional or template is None:
            return field
        try:
            used = _optional_in(template, self.optional)
        except TypeError:  # optional given as a list: not hashable, so not cached
            used = _optional_in.__wrapped__(template, self.optional)
        missing = [name for name in used
                   if params.get(name) is None or params.get(name) == ""]
        return f"{field}.without.{'.'.join(missing)}" if missing else field

    def template(self, field: str, params: Mapping[str, Any]) -> str | None:
        """The English template of ``field`` (``message``, ``remedy``) that renders ``params``."""
        key = self.template_key(field, params)
        return getattr(self, field) if key == field else self.variants.get(key)

    def render_message(self, params: Mapping[str, Any]) -> str:
        """The message rendered with ``params`` (a variant when an optional param is missing)."""
        return render_template(self.template("message", params) or self.message, params)

    def render_remedy(self, params: Mapping[str, Any]) -> str | None:
        """The remedy rendered with ``params`` (None when the code has none)."""
        template = self.template("remedy", params)
        return None if template is None else render_template(template, params)

    def failure(
        self,
        *,
        surface: str,
        params: Mapping[str, Scalar] | None = None,
        location: str | None = None,
        error_class: str | None = None,
        severity: Severity | None = None,
        retryability: Retryability | None = None,
        detail: str | None = None,
        cause: BaseException | tuple[CauseLink, ...] | None = None,
        context: Mapping[str, Scalar] | None = None,
        metadata: Mapping[str, Scalar] | None = None,
        cause_refs: tuple[EntityRef, ...] = (),
        evidence_refs: tuple[EntityRef, ...] = (),
        recoverable: bool | None = None,
    ) -> Failure:
        """Build a :class:`~failcode.Failure` of this code: the one way records should be made.

        The kind, category and templates come from the spec; ``params`` are redacted, collapsed
        to one line and bounded so the message stays one sentence of at most 300 characters;
        ``detail`` and the cause chain are redacted; the signature is computed from the record.
        ``error_class``, ``severity`` and ``retryability`` may refine the spec's values for this
        occurrence (a classifier knows more than the code); kind and category never change.

        Raises:
            RetiredCodeError: the code is retired (it stays decodable, but is no longer emitted).
            KeyError: ``params`` lacks a field the message or remedy template needs.
            InvalidFailureError: a field breaks an invariant of the record (e.g. the location).
        """
        if self.retired:
            successor = f"; use {self.superseded_by}" if self.superseded_by else ""
            msg = f"{self.code} ({self.slug}) is retired and no longer emitted{successor}"
            raise RetiredCodeError(msg)
        return build_failure(
            self, surface=surface, params=params, location=location, error_class=error_class,
            severity=severity, retryability=retryability, detail=detail, cause=cause,
            context=context, metadata=metadata, cause_refs=cause_refs,
            evidence_refs=evidence_refs, recoverable=recoverable)


@functools.lru_cache(maxsize=1024)
def _optional_in(template: str, optional: tuple[str, ...]) -> tuple[str, ...]:
    """The optional params ``template`` uses, sorted."""
    return tuple(sorted(name for name in optional if "{" + name + "}" in template))


class CodeEnum(StrEnum):
    """Base of a catalog's enumeration: each member's value is its code and it carries its spec.

    Members compare equal to their code string (``FC.PROV_RATE_LIMIT == "FC-PROV-003"``), and
    ``FCCode("FC-PROV-003")`` looks a member up by code.
    """

    spec: CodeSpec

    def __new__(cls, spec: CodeSpec) -> Self:
        if not isinstance(spec, CodeSpec):
            msg = f"{cls.__name__} members are declared with a CodeSpec, got {spec!r}"
            raise TypeError(msg)
        member = str.__new__(cls, spec.code)
        member._value_ = spec.code
        member.spec = spec
        return member

    def failure(self, **kwargs: Any) -> Failure:
        """Build a Failure of this code; see :meth:`CodeSpec.failure`."""
        return self.spec.failure(**kwargs)


class Catalog:
    """A prefix, its declared areas and its code enumeration, checked when declared.

    Args:
        prefix: upper-case prefix of every code, e.g. ``"FC"``.
        areas: area name -> what the area covers.
        codes: the :class:`CodeEnum` subclass declaring the codes.
        categories: the categories this catalog may use (catalogs without a task category pass
            :data:`SEED_003_CATEGORIES`, which has no ``task``).
        docs_url: template of a code's documentation URL, with ``{code}``, ``{slug}`` and
            ``{anchor}`` (the code in lower case); a spec's own ``docs_url`` wins.
        title: a human name for generated documentation.

    Raises:
        CatalogError: listing every problem: a code not of the form ``PREFIX-AREA-NNN``, an
            undeclared area, a duplicated code or slug, a retryability the category does not
            allow (transient: retryable; user: not_retryable or retryable_after_change;
            environment: retryable_after_change or not_retryable; task: retryable_after_change
            or unknown; defect: not_retryable), a user or environment code without a
            remedy template, a category the catalog does not allow, a malformed template, or
            example params that do not render the templates.
    """

    def __init__(
        self,
        prefix: str,
        *,
        areas: Mapping[str, str],
        codes: type[CodeEnum],
        categories: frozenset[Category] = frozenset(Category),
        docs_url: str | None = None,
        title: str | None = None,
    ) -> None:
        self.prefix = prefix
        self.areas: Mapping[str, str] = dict(areas)
        self.codes = codes
        self.categories = categories
        self.docs_url = docs_url
        self.title = title or f"{prefix} codes"
        problems = self._problems()
        if problems:
            raise CatalogError(prefix, problems)
        self._by_code: dict[str, CodeSpec] = {member.value: member.spec for member in codes}
        _CATALOGS[prefix] = self

    def __repr__(self) -> str:
        return f"Catalog({self.prefix!r}, {len(self._by_code)} codes)"

    def __iter__(self) -> Iterator[CodeSpec]:
        """The specs in code order."""
        return iter(sorted(self._by_code.values(), key=lambda spec: spec.code))

    def __len__(self) -> int:
        return len(self._by_code)

    def __contains__(self, code: object) -> bool:
        return code in self._by_code

    def get(self, code: str) -> CodeSpec | None:
        """The spec of ``code``, or None."""
        return self._by_code.get(code)

    def docs_url_for(self, spec: CodeSpec) -> str | None:
        """The documentation URL of a code: its own, or the catalog's template."""
        if spec.docs_url:
            return spec.docs_url
        if not self.docs_url:
            return None
        return self.docs_url.format(code=spec.code, slug=spec.slug, anchor=spec.code.lower())

    def _problems(self) -> list[str]:
        problems: list[str] = []
        if not _PREFIX_RE.fullmatch(self.prefix):
            problems.append(f"prefix {self.prefix!r} must be upper-case letters and digits")
        problems.extend(
            f"area {area!r} must be upper-case letters and digits"
            for area in self.areas if not _AREA_RE.fullmatch(area))
        if not (isinstance(self.codes, type) and issubclass(self.codes, CodeEnum)):
            return [*problems, f"codes must be a CodeEnum subclass, got {self.codes!r}"]
        members = self.codes.__members__
        canonical = {member.name for member in self.codes}
        problems.extend(
            f"{name} repeats the code {member.value} of {member.name}: a code is declared once"
            for name, member in members.items() if name not in canonical)
        slugs: dict[str, str] = {}
        code_re = re.compile(rf"{re.escape(self.prefix)}-([A-Z][A-Z0-9]*)-[0-9]{{3}}")
        for member in self.codes:
            spec, code = member.spec, member.value
            matched = code_re.fullmatch(code)
            if not matched:
                problems.append(f"{code}: expected {self.prefix}-<AREA>-<NNN>")
            elif matched.group(1) not in self.areas:
                problems.append(f"{code}: area {matched.group(1)} is not declared "
                                f"(declared: {', '.join(sorted(self.areas))})")
            if not _SLUG_RE.fullmatch(spec.slug):
                problems.append(f"{code}: slug {spec.slug!r} must be lower-case words "
                                f"joined by '-'")
            elif spec.slug in slugs:
                problems.append(f"{code}: slug {spec.slug!r} is already used by {slugs[spec.slug]}")
            else:
                slugs[spec.slug] = code
            if not _CLASS_RE.fullmatch(spec.error_class):
                problems.append(f"{code}: error_class {spec.error_class!r} must match [a-z0-9_.]+")
            if spec.category not in self.categories:
                allowed = ", ".join(sorted(category.value for category in self.categories))
                problems.append(f"{code}: category {spec.category.value} is not allowed in "
                                f"catalog {self.prefix} (allowed: {allowed})")
            if spec.retryability is not None and not spec.category.allows(spec.retryability):
                allowed = " or ".join(r.value for r in spec.category.retryabilities)
                problems.append(f"{code}: retryability {spec.retryability.value} contradicts "
                                f"the {spec.category.value} category (allowed: {allowed}; "
                                f"leave it unset to derive it from the category)")
            if spec.category.needs_remedy and not (spec.remedy and spec.remedy.strip()):
                problems.append(f"{code}: the {spec.category.value} category needs a remedy "
                                f"template")
            problems.extend(f"{code}: {field} is empty"
                            for field in ("message", "impact", "example")
                            if not getattr(spec, field).strip())
            if spec.superseded_by is not None and not spec.retired:
                problems.append(f"{code}: superseded_by is set but the code is not retired")
            problems.extend(_template_problems(spec))
        for member in self.codes:
            successor = member.spec.superseded_by
            if successor is not None and successor not in {m.value for m in self.codes}:
                problems.append(f"{member.value}: superseded_by {successor} is not declared")
        return problems


def _template_problems(spec: CodeSpec) -> list[str]:
    problems: list[str] = []
    for field in ("message", "remedy"):
        template = getattr(spec, field)
        if template is None:
            continue
        try:
            names = template_fields(template)
        except ValueError as exc:
            problems.append(f"{spec.code}: {field} {exc}")
            continue
        missing = [name for name in names if name not in spec.example_params]
        if missing:
            problems.append(f"{spec.code}: example_params lack {', '.join(missing)} "
                            f"used by the {field} template")
    problems.extend(_variant_problems(spec))
    if not problems:
        rendered = spec.render_message(spec.example_params)
        if "\n" in rendered or len(rendered) > 300:
            problems.append(f"{spec.code}: the message must render to one line of at most "
                            f"300 characters")
    return problems


def _variant_keys(spec: CodeSpec) -> dict[str, str]:
    """Every variant key the spec's optional params require -> the field it belongs to."""
    import itertools  # noqa: PLC0415 - declaration time only

    keys: dict[str, str] = {}
    for field in ("message", "remedy"):
        template = getattr(spec, field)
        if template is None:
            continue
        used = sorted(name for name in spec.optional if "{" + name + "}" in template)
        for size in range(1, len(used) + 1):
            for missing in itertools.combinations(used, size):
                keys[f"{field}.without.{'.'.join(missing)}"] = field
    return keys


def _variant_problems(spec: CodeSpec) -> list[str]:
    problems: list[str] = []
    try:
        fields = set(template_fields(spec.message)) | set(
            template_fields(spec.remedy) if spec.remedy else ())
    except ValueError:
        return problems  # the malformed template is reported on its own
    problems.extend(f"{spec.code}: optional param {name!r} is used by no template"
                    for name in spec.optional if name not in fields)
    needed = _variant_keys(spec)
    problems.extend(f"{spec.code}: variant {key!r} is missing (its optional params can be left "
                    f"out)" for key in needed if key not in spec.variants)
    for key, template in spec.variants.items():
        if key not in needed:
            problems.append(f"{spec.code}: variant {key!r} matches no optional params of a "
                            f"template")
            continue
        missing = set(key.split(".without.", 1)[1].split("."))
        try:
            names = template_fields(template)
        except ValueError as exc:
            problems.append(f"{spec.code}: variant {key} {exc}")
            continue
        problems.extend(f"{spec.code}: variant {key!r} uses {{{name}}}, which it is for leaving "
                        f"out" for name in names if name in missing)
        problems.extend(f"{spec.code}: variant {key!r} uses {{{name}}}, which its template "
                        f"does not" for name in names if name not in fields)
    return problems


_CATALOGS: dict[str, Catalog] = {}


def catalogs() -> tuple[Catalog, ...]:
    """Every declared catalog, by prefix."""
    return tuple(_CATALOGS[prefix] for prefix in sorted(_CATALOGS))


def suggest_codes(code: str, *, limit: int = 3) -> list[str]:
    """The declared codes nearest to ``code`` (by code or by slug)."""
    names: dict[str, str] = {}
    for catalog in _CATALOGS.values():
        for spec in catalog:
            names[spec.code] = spec.code
            names[spec.slug] = spec.code
    matches = difflib.get_close_matches(code.strip(), list(names), n=limit * 2, cutoff=0.5)
    if not matches:
        matches = difflib.get_close_matches(code.strip().upper(), list(names), n=limit * 2,
                                            cutoff=0.5)
    ordered: list[str] = []
    for match in matches:
        if names[match] not in ordered:
            ordered.append(names[match])
    return ordered[:limit]


def lookup(code: str) -> CodeSpec:
    """The spec of ``code`` (or of a slug) in any declared catalog.

    Raises:
        UnknownCodeError: no catalog declares it; the error suggests the nearest codes.
    """
    prefix = code.split("-", 1)[0]
    catalog = _CATALOGS.get(prefix)
    spec = catalog.get(code) if catalog else None
    if spec is not None:
        return spec
    for catalog in _CATALOGS.values():
        for candidate in catalog:
            if candidate.slug == code:
                return candidate
    raise UnknownCodeError(code, suggest_codes(code))


# ---------------------------------------------------------------------------------------------
# the lock file: every code ever issued, with its meaning


class LockProblem(msgspec.Struct, frozen=True):
    """One way an enumeration disagrees with its lock file."""

    code: str
    rule: str
    """``deleted``, ``reused``, ``rekinded``, ``recategorized``, ``unretired`` or ``unlocked``."""
    message: str


def _lock_entry(spec: CodeSpec) -> dict[str, Any]:
    return {"slug": spec.slug, "kind": spec.kind.value, "category": spec.category.value,
            "meaning": spec.message, "since": spec.since, "retired": spec.retired}


def read_lock(path: Path) -> dict[str, Any]:
    """Read a lock file.

    Raises:
        ValueError: the file is not valid JSON or not a failcode codes lock (names the file).
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        msg = f"{path}:{exc.lineno}: not valid JSON ({exc.msg})"
        raise ValueError(msg) from None
    if not isinstance(data, dict) or data.get("format") != LOCK_FORMAT or not isinstance(
            data.get("codes"), dict):
        msg = f"{path}: not a failcode codes lock (expected \"format\": \"{LOCK_FORMAT}\")"
        raise ValueError(msg)
    return data


def check_lock(catalog: Catalog, lock: Mapping[str, Any]) -> list[LockProblem]:
    """Compare a catalog with its lock; an empty list means they agree."""
    problems: list[LockProblem] = []
    locked: Mapping[str, Mapping[str, Any]] = lock.get("codes", {})
    for code, entry in sorted(locked.items()):
        spec = catalog.get(code)
        if spec is None:
            problems.append(LockProblem(code, "deleted", (
                f"{code} ({entry.get('slug')}) is in the lock but missing from the enumeration: "
                f"codes are never deleted; keep it and mark it retired")))
            continue
        if spec.slug != entry.get("slug"):
            problems.append(LockProblem(code, "reused", (
                f"{code} was issued as {entry.get('slug')!r} and now means {spec.slug!r}: a code "
                f"is never reused for another meaning; declare a new code")))
        if spec.kind.value != entry.get("kind"):
            problems.append(LockProblem(code, "rekinded", (
                f"{code} changed kind from {entry.get('kind')} to {spec.kind.value}: a code keeps "
                f"its kind; retire it and declare a new code")))
        if spec.category.value != entry.get("category"):
            problems.append(LockProblem(code, "recategorized", (
                f"{code} changed category from {entry.get('category')} to "
                f"{spec.category.value}: a code keeps its category; retire it and declare a new "
                f"code")))
        if entry.get("retired") and not spec.retired:
            problems.append(LockProblem(code, "unretired", (
                f"{code} is retired in the lock but active in the enumeration: a retired code "
                f"stays retired")))
    problems.extend(
        LockProblem(spec.code, "unlocked", (
            f"{spec.code} ({spec.slug}) is not in the lock yet: run `failcode codes lock` "
            f"to record it"))
        for spec in catalog if spec.code not in locked)
    return problems


def update_lock(catalog: Catalog, lock: Mapping[str, Any] | None) -> dict[str, Any]:
    """The lock with the catalog's new codes added and newly retired codes marked.

    Raises:
        ValueError: the catalog breaks the lock (deleted, reused, re-kinded, re-categorized or
            un-retired codes); a lock is never rewritten to hide such a change.
    """
    lock = lock or {"format": LOCK_FORMAT, "prefix": catalog.prefix, "codes": {}}
    blocking = [p for p in check_lock(catalog, lock) if p.rule != "unlocked"]
    if blocking:
        raise ValueError("\n".join(problem.message for problem in blocking))
    codes = {code: dict(entry) for code, entry in lock["codes"].items()}
    for spec in catalog:
        if spec.code not in codes:
            codes[spec.code] = _lock_entry(spec)
        elif spec.retired:
            codes[spec.code]["retired"] = True
    return {"format": LOCK_FORMAT, "prefix": catalog.prefix,
            "codes": {code: codes[code] for code in sorted(codes)}}


def dump_lock(lock: Mapping[str, Any]) -> str:
    """The lock's file text: stable key order, two-space indent, a final newline."""
    return json.dumps(lock, indent=2, ensure_ascii=False) + "\n"
