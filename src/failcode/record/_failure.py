"""The one record: :class:`Failure`, its parts, and the carrier exception :class:`FailureError`.

A ``Failure`` is a frozen msgspec Struct: cheap to build (a fraction of a frozen dataclass), cheap
to encode, and decoded with unknown fields rejected. Every invariant of the
record is checked in ``__post_init__``, which msgspec runs both on construction and on decoding,
so an invalid record can exist neither in memory nor off the wire.

Every text field (and every string in ``params``, ``context``, ``metadata``, ``cause`` and the
refs) has its lone surrogates and NUL characters replaced by U+FFFD there too (the rule is in
:mod:`failcode.record._frozen`), so a record always encodes as UTF-8 and every store keeps it.

Exceptions raised here::

    ValueError
     └── InvalidFailureError   a field breaks an invariant of the record (names field and value)
    ValueError
     └── FailureDecodeError    JSON or a dict that is not a valid record (names the path)
    Exception
     └── FailureError          carries a Failure across Python call stacks
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Final, cast

import msgspec
from msgspec.structs import force_setattr

from failcode.record._axes import Category, Kind, Retryability, Severity
from failcode.record._frozen import (
    MAX_KEYS,
    MAX_VALUE_CHARS,
    FrozenDict,
    Scalar,
    is_clean,
    replace_surrogates,
)

__all__ = [
    "MAX_CAUSE_DEPTH",
    "MAX_MESSAGE_CHARS",
    "CauseLink",
    "EntityRef",
    "Failure",
    "FailureDecodeError",
    "FailureError",
    "InvalidFailureError",
    "decode_problem",
    "failure_json_schema",
    "new_error_id",
]

MAX_MESSAGE_CHARS: Final = 300
"""A message is one sentence on one line of at most this many characters."""
MAX_CAUSE_DEPTH: Final = 8
"""The longest cause chain a record keeps (innermost causes beyond it are dropped by builders)."""
MAX_TEXT_CHARS: Final = MAX_VALUE_CHARS
"""The longest ``detail``, ``remedy``, cause message or mapping string value (4000)."""
MAX_MAPPING_KEYS: Final = MAX_KEYS
"""The most keys ``params``, ``context`` or ``metadata`` may hold."""


class InvalidFailureError(ValueError):
    """A Failure field breaks an invariant; the message names the field, the value and the rule."""


class FailureDecodeError(ValueError):
    """Input is not a valid Failure; the message says where and what was expected."""


# ---------------------------------------------------------------------------------------------
# error ids: unique and cheap. A random per-process tag plus a counter; reset after fork so a
# child never repeats its parent's ids. Volatile by design: never part of a signature or hash.

_counter = itertools.count()
_tag = os.urandom(6).hex()  # what secrets.token_hex does, without importing it (hmac...)


def _reset_ids() -> None:  # pragma: no cover - runs in forked children
    global _counter, _tag  # noqa: PLW0603 - process-wide id state, reset in a forked child
    _counter = itertools.count()
    _tag = os.urandom(6).hex()


os.register_at_fork(after_in_child=_reset_ids)


def new_error_id() -> str:
    """Return a new unique error id, e.g. ``fc-3f2a9c1b7d4e-1f``."""
    return f"fc-{_tag}-{next(_counter):x}"


# ---------------------------------------------------------------------------------------------
# parts of the record


# gc=False on the record types: a record holds only str, enums, scalars, FrozenDicts of scalars
# and tuples of these structs (validated), so it can never be part of a reference cycle, and the
# collector need not track the records a busy agent makes (fewer collections per failure).
class EntityRef(msgspec.Struct, frozen=True, forbid_unknown_fields=True, gc=False):
    """A reference to another entity : an artifact, a log, an event..."""

    type: str
    id: str

    def __post_init__(self) -> None:
        if not (isinstance(self.type, str) and self.type and isinstance(self.id, str) and self.id):
            msg = f"EntityRef needs a non-empty str type and id, got {self.type!r}, {self.id!r}"
            raise InvalidFailureError(msg)
        if not (is_clean(self.type) and is_clean(self.id)):
            force_setattr(self, "type", replace_surrogates(self.type))
            force_setattr(self, "id", replace_surrogates(self.id))


class CauseLink(msgspec.Struct, frozen=True, forbid_unknown_fields=True, gc=False):
    """One underlying error of a Failure's cause chain, outermost first; serializable."""

    type: str
    """The exception's qualified type name, e.g. ``httpx.ConnectTimeout``."""
    message: str
    """Its redacted, bounded message."""
    code: str | None = None
    """Its failcode code, when the cause was itself a Failure."""

    def __post_init__(self) -> None:
        kind, message, code = self.type, self.message, self.code
        if (type(kind) is str and type(message) is str and is_clean(kind) and is_clean(message)
                and kind and len(message) <= MAX_TEXT_CHARS
                and (code is None or (type(code) is str and is_clean(code)))):
            return  # the common link: ASCII text within bounds, nothing to check or replace
        if not isinstance(self.type, str) or not self.type:
            msg = f"CauseLink.type must be a non-empty str, got {self.type!r}"
            raise InvalidFailureError(msg)
        if not isinstance(self.message, str) or len(self.message) > MAX_TEXT_CHARS:
            msg = f"CauseLink.message must be a str of at most {MAX_TEXT_CHARS} characters"
            raise InvalidFailureError(msg)
        if self.code is not None and not isinstance(self.code, str):
            msg = f"CauseLink.code must be a str or None, got {self.code!r}"
            raise InvalidFailureError(msg)
        for field in ("type", "message", "code"):
            value = getattr(self, field)
            if value is not None and not is_clean(value):
                force_setattr(self, field, replace_surrogates(value))


_EMPTY: Mapping[str, Scalar] = FrozenDict()


class Failure(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True,
              gc=False):
    """One failure, whatever its origin: the record every part of failcode reads.

    Build it through a code's spec (``FC.PROV_RATE_LIMIT.failure(...)``) or a classifier rather
    than by hand: they fill the kind, category, message, remedy and signature from the catalog.
    Constructing one directly works and is validated the same way.

    Raises:
        InvalidFailureError: a field breaks an invariant (a user or environment failure with no
            remedy; a location that is a temp, home or working-directory absolute path or carries
            a line number; a signature part with ``:`` or white space; a message over
            300 characters or over one line; a signature that does not match the fields...).
    """

    code: str
    """Stable code ``<PREFIX>-<AREA>-<NNN>``, e.g. ``FC-PROV-002``."""
    kind: Kind
    category: Category
    severity: Severity
    retryability: Retryability
    error_class: str
    """Fine-grained class within the kind (``rate_limit``, ``undefined_reference``...)."""
    surface: str
    """Where it failed, a normalized tool or operation name (``llm.complete``, ``cpp.build``)."""
    message: str
    """One sentence, rendered from the code's template and ``params``."""
    signature: str
    """``<kind>:<surface>:<class>:<location-or-none>:<8 hex>``."""
    signature_version: str
    location: str | None = None
    """Repo-relative path or stable system path; never temp, home, cwd-absolute or a line."""
    params: Mapping[str, Scalar] = _EMPTY
    """The message template's arguments, so any side of a boundary can render it again."""
    detail: str | None = None
    cause: tuple[CauseLink, ...] = ()
    remedy: str | None = None
    recoverable: bool = False
    """Whether the agent can continue by itself."""
    context: Mapping[str, Scalar] = _EMPTY
    """Session, step, subgoal, target..."""
    cause_refs: tuple[EntityRef, ...] = ()
    evidence_refs: tuple[EntityRef, ...] = ()
    metadata: Mapping[str, Scalar] = _EMPTY
    """Provider status, error code, request id, server-directed delay, a bounded traceback..."""
    error_id: str = msgspec.field(default_factory=new_error_id)
    """Unique per occurrence; volatile, never hashed."""

    __failcode_schema_version__: ClassVar[int] = 1

    def __post_init__(self) -> None:
        # The fast path: one expression accepts the common, valid record. Anything it does not
        # accept goes through _validate, which checks every field and says what is wrong.
        static = _static_ok.get(
            (self.code, self.surface, self.error_class, self.location, self.signature_version))
        if static is None:
            _validate(self)
            return
        message = self.message
        signature = self.signature
        remedy = self.remedy
        if not (
            static[0] is self.kind and static[1] is self.category
            and static[2] is self.severity and static[3] is self.retryability
            and type(message) is str and 0 < len(message) <= MAX_MESSAGE_CHARS
            and message.isprintable() and not message.isspace()
            and type(signature) is str and len(signature) == static[5]
            and signature.startswith(static[4])  # type: ignore[arg-type]
            and not signature[-8:].strip(_HEX)
            and ((remedy is None and not static[6])
                 or (type(remedy) is str and 0 < len(remedy) <= MAX_TEXT_CHARS
                     and not remedy.isspace() and remedy.isascii()
                     and "\x00" not in remedy))
            and self.detail is None and self.recoverable.__class__ is bool
            and type(self.error_id) is str and self.error_id and self.error_id.isascii()
            and "\x00" not in self.error_id
        ):
            _validate(self)
            return
        _freeze_containers(self)

    # -- canonical forms ----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The canonical JSON-ready dict (enums as their string values)."""
        result: dict[str, Any] = msgspec.to_builtins(self, order="deterministic")
        return result

    def to_json(self) -> str:
        """The canonical JSON form: fields in declaration order, mapping keys sorted."""
        return _ENCODER.encode(self).decode()

    @classmethod
    def from_json(cls, data: str | bytes) -> Failure:
        """Read a record from its JSON form.

        Raises:
            FailureDecodeError: malformed JSON (cut off, nested too deeply, not UTF-8, a lone
                surrogate), an unknown field, a wrong type or a broken invariant; the message
                names the path (e.g. ``$.kind``). Nothing else.
        """
        try:
            return _DECODER.decode(data)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise FailureDecodeError(f"not a valid failcode Failure: {exc}") from None
        except (RecursionError, UnicodeError, TypeError) as exc:
            raise FailureDecodeError(
                f"not a valid failcode Failure: {decode_problem(exc)}") from None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Failure:
        """Read a record from its dict form (as :meth:`to_dict` gives it).

        Raises:
            FailureDecodeError: as for :meth:`from_json`.
        """
        try:
            return msgspec.convert(data, Failure)
        except msgspec.ValidationError as exc:
            raise FailureDecodeError(f"not a valid failcode Failure: {exc}") from None
        except (RecursionError, UnicodeError, TypeError) as exc:
            raise FailureDecodeError(
                f"not a valid failcode Failure: {decode_problem(exc)}") from None

    @property
    def signature_parts(self) -> tuple[str, str, str, str, str]:
        """The five parts of the signature: kind, surface, class, location-or-none, hash."""
        kind, surface, cls, loc, digest = self.signature.split(":")
        return kind, surface, cls, loc, digest


_ENCODER = msgspec.json.Encoder(order="deterministic")
_DECODER = msgspec.json.Decoder(Failure)


def decode_problem(exc: BaseException) -> str:
    """What a decoder says when msgspec fails outside its own errors (shared by every decoder).

    msgspec raises ``RecursionError`` for a raw value nested deeper than it walks, and a
    ``str`` input is encoded as UTF-8 first, which a lone surrogate makes fail.
    """
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply"
    if isinstance(exc, UnicodeEncodeError):
        return f"not UTF-8 text: a lone surrogate at character {exc.start}"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (byte {exc.start})"
    return f"expected JSON text (str or bytes), got {type(exc).__name__}: {exc}"


def failure_json_schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of the canonical Failure JSON form."""
    schema: dict[str, Any] = msgspec.json.schema(Failure)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://failcode.dev/schema/failure-v1.json"
    return schema


class FailureError(Exception):
    """Carries a :class:`Failure` across Python call stacks: ``raise FailureError(f) from exc``.

    ``str()`` is ``[CODE] message``; the record is in :attr:`failure`.
    """

    __slots__ = ("failure",)

    def __init__(self, failure: Failure) -> None:
        if not isinstance(failure, Failure):
            msg = f"FailureError carries a failcode.Failure, got {type(failure).__name__}"
            raise TypeError(msg)
        super().__init__(failure)
        self.failure = failure

    def __str__(self) -> str:
        return f"[{self.failure.code}] {self.failure.message}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (FailureError, (self.failure,))


# ---------------------------------------------------------------------------------------------
# validation. The fields that repeat across records (code, axes, surface, class, location,
# signature version) are checked once per distinct combination and the result cached, keyed by
# the combination plus the enum types (so a str that equals an enum value is still coerced);
# the per-record fields (message, signature hash, mappings, texts) are checked every time.

_CODE_RE = re.compile(r"[A-Z][A-Z0-9]{0,15}-[A-Z][A-Z0-9]{0,15}-[0-9]{3}")
_PART_BAD_RE = re.compile(r"[\s:]")
_LINE_NUMBER_RE = re.compile(r"(?::\d+|#L\d+|\(\d+(?:,\d+)?\)|,\s*line\s+\d+)")
_HEX = "0123456789abcdef"
_VOLATILE_PREFIXES = (
    # refused as locations, never used as paths
    "/tmp/", "/var/tmp/", "/var/folders/", "/private/var/", "/private/tmp/", "/dev/shm/",  # noqa: S108
    "/home/", "/Users/", "/root/", "/run/user/",
)
_VOLATILE_ROOTS = frozenset({"/tmp", "/var/tmp", "/home", "/Users", "/root"})  # noqa: S108
_STATIC_CACHE_SIZE: Final = 16384
_static_ok: dict[tuple[object, ...], tuple[object, ...]] = {}
"""(code, surface, class, location, version) -> (the four axes seen, prefix, its length + 8,
whether a remedy is needed), for combinations already validated."""


def _fail(field: str, value: object, rule: str) -> InvalidFailureError:
    shown = repr(value)
    if len(shown) > 120:
        shown = shown[:117] + "..."
    return InvalidFailureError(f"Failure.{field}={shown}: {rule}")


def _coerce_enum(record: Failure, field: str, enum: type[Any]) -> None:
    value = getattr(record, field)
    if type(value) is enum:
        return
    try:
        force_setattr(record, field, enum(value))
    except ValueError:
        allowed = ", ".join(member.value for member in enum)
        raise _fail(field, value, f"expected one of {allowed}") from None


def _check_part(field: str, value: object) -> None:
    if not isinstance(value, str) or not value:
        raise _fail(field, value, "expected a non-empty str")
    if _PART_BAD_RE.search(value):
        raise _fail(field, value, "a signature part holds no ':' and no white space")


def _check_location(value: object) -> None:
    if not isinstance(value, str) or not value:
        raise _fail("location", value, "expected a non-empty str or None")
    if _LINE_NUMBER_RE.search(value):
        raise _fail("location", value, "a location never carries a line or column number")
    if _PART_BAD_RE.search(value):
        raise _fail("location", value, "a signature part holds no ':' and no white space")
    if value[0] == "~":
        raise _fail("location", value, "a home-relative path is volatile; use a repo-relative path")
    if value[0] == "/":
        if value.startswith(_VOLATILE_PREFIXES) or value in _VOLATILE_ROOTS:
            raise _fail("location", value,
                        "a temp or home absolute path is volatile; use a repo-relative path")
        cwd = os.getcwd()  # noqa: PTH109 - a str prefix test, no Path needed
        if cwd != "/" and (value == cwd or value.startswith(cwd + "/")):
            raise _fail("location", value,
                        "a working-directory absolute path is volatile; make it relative")


def _validate_static(record: Failure, key: tuple[object, ...]) -> str:
    """Check the fields that repeat across records; return the signature prefix they imply."""
    code = record.code
    if not isinstance(code, str) or not _CODE_RE.fullmatch(code):
        raise _fail("code", code, "expected <PREFIX>-<AREA>-<NNN>, e.g. FC-PROV-002")
    _coerce_enum(record, "kind", Kind)
    _coerce_enum(record, "category", Category)
    _coerce_enum(record, "severity", Severity)
    _coerce_enum(record, "retryability", Retryability)
    _check_part("surface", record.surface)
    _check_part("error_class", record.error_class)
    location = record.location
    if location is not None:
        _check_location(location)
    version = record.signature_version
    if not isinstance(version, str) or not version or _PART_BAD_RE.search(version):
        raise _fail("signature_version", version, "expected a non-empty id without white space")
    prefix = f"{record.kind.value}:{record.surface}:{record.error_class}:{location or 'none'}:"
    if location is None or location[0] != "/":
        # an absolute location is checked against the working directory, which may change
        if len(_static_ok) >= _STATIC_CACHE_SIZE:
            # evict the oldest entry, not everything: more distinct combinations than the
            # cache holds (one per source file, say) must not empty it over and over
            del _static_ok[next(iter(_static_ok))]
        _static_ok[key] = (record.kind, record.category, record.severity, record.retryability,
                           prefix, len(prefix) + 8, record.category.needs_remedy)
    return prefix


def _check_text(field: str, value: object) -> None:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT_CHARS:
        raise _fail(field, value,
                    f"expected None or a non-blank str of at most {MAX_TEXT_CHARS} chars")


def _freeze(record: Failure, field: str, value: object) -> None:
    if type(value) is not dict and not isinstance(value, Mapping):
        raise _fail(field, value, "expected a mapping of str to JSON scalars")
    try:
        frozen = FrozenDict(value)
    except (TypeError, ValueError) as exc:
        raise _fail(field, value, str(exc)) from None
    force_setattr(record, field, frozen)


def _freeze_refs(record: Failure, field: str, item_type: type[Any], limit: int | None) -> None:
    value = getattr(record, field)
    if type(value) is not tuple:
        if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
            raise _fail(field, value, f"expected a tuple of {item_type.__name__}")
        value = tuple(value)
        force_setattr(record, field, value)
    for item in value:
        if type(item) is not item_type:
            raise _fail(field, item, f"expected {item_type.__name__} items")
    if limit is not None and len(value) > limit:
        raise _fail(field, f"<{len(value)} links>", f"a cause chain keeps at most {limit} links")


_TEXT_FIELDS: Final = ("message", "detail", "remedy", "surface", "error_class", "location",
                       "signature", "signature_version", "error_id")


def _replace_surrogates(record: Failure) -> None:
    """Lone surrogates (undecodable bytes of argv, paths, headers, output) and NUL become
    U+FFFD, the same in every field, so the signature still matches its parts, ``to_json``
    never fails and every store keeps the text (PostgreSQL refuses NUL)."""
    for field in _TEXT_FIELDS:
        value = getattr(record, field)
        if type(value) is str and not is_clean(value):
            force_setattr(record, field, replace_surrogates(value))


def _validate(record: Failure) -> None:
    _replace_surrogates(record)
    key = (record.code, record.surface, record.error_class, record.location,
           record.signature_version)
    static = _static_ok.get(key)
    if (static is not None and static[0] is record.kind and static[1] is record.category
            and static[2] is record.severity and static[3] is record.retryability):
        prefix = cast("str", static[4])
    else:
        prefix = _validate_static(record, key)

    remedy = record.remedy
    if remedy is not None:
        _check_text("remedy", remedy)
    elif record.category.needs_remedy:
        raise _fail("remedy", None,
                    f"a remedy is required for the {record.category.value} category")
    message = record.message
    if not (type(message) is str and 0 < len(message) <= MAX_MESSAGE_CHARS
            and message.isprintable() and not message.isspace()):
        _check_message(message)
    signature = record.signature
    if not (type(signature) is str and signature.startswith(prefix)
            and len(signature) == len(prefix) + 8 and not signature[-8:].strip(_HEX)):
        raise _fail("signature", signature,
                    f"expected {prefix}<8 lowercase hex> (kind:surface:class:location:hash)")
    if record.detail is not None:
        _check_text("detail", record.detail)
    if type(record.recoverable) is not bool:
        raise _fail("recoverable", record.recoverable, "expected a bool")
    error_id = record.error_id
    if type(error_id) is not str or not error_id:
        raise _fail("error_id", error_id, "expected a non-empty str")

    _freeze_containers(record)


def _freeze_containers(record: Failure) -> None:
    """Make the mappings FrozenDicts and the sequences tuples, checking their items."""
    # an empty dict (as decoding gives for {}) becomes the one shared empty FrozenDict
    value = record.params
    if type(value) is not FrozenDict:
        if type(value) is dict and not value:
            force_setattr(record, "params", _EMPTY)
        else:
            _freeze(record, "params", value)
    value = record.context
    if type(value) is not FrozenDict:
        if type(value) is dict and not value:
            force_setattr(record, "context", _EMPTY)
        else:
            _freeze(record, "context", value)
    value = record.metadata
    if type(value) is not FrozenDict:
        if type(value) is dict and not value:
            force_setattr(record, "metadata", _EMPTY)
        else:
            _freeze(record, "metadata", value)
    if record.cause:
        _freeze_refs(record, "cause", CauseLink, MAX_CAUSE_DEPTH)
    if record.cause_refs:
        _freeze_refs(record, "cause_refs", EntityRef, None)
    if record.evidence_refs:
        _freeze_refs(record, "evidence_refs", EntityRef, None)


def _check_message(message: object) -> None:
    """The slow path: say precisely what is wrong, or accept printable-but-unusual text."""
    if not isinstance(message, str) or not message.strip():
        raise _fail("message", message, "expected a non-empty one-sentence str")
    if len(message) > MAX_MESSAGE_CHARS:
        raise _fail("message", message,
                    f"at most {MAX_MESSAGE_CHARS} characters, got {len(message)}")
    if "\n" in message or "\r" in message:
        raise _fail("message", message, "a message is one line; put more in detail")


def expect_failure(value: object, call: str, argument: str = "failure") -> Failure:
    """``value`` when it is a Failure; else a TypeError naming the call, the argument, what was
    expected and what was given (a wrong type at a public entry point is a usage error, never
    an AttributeError from inside).

    Raises:
        TypeError: ``value`` is not a :class:`Failure`.
    """
    if isinstance(value, Failure):
        return value
    hint = ""
    if isinstance(value, BaseException):
        hint = "; classify the exception first (failcode.classify)"
    elif type(value).__module__.endswith("._outcomes"):
        hint = "; a non-error outcome is not a Failure and is never decided or rendered as one"
    msg = (f"{call}() expects {argument} to be a failcode.Failure, got "
           f"{type(value).__name__}{hint}")
    raise TypeError(msg)
