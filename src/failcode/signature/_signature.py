"""Semantic signatures: ``<kind>:<surface>:<class>:<location-or-none>:<8 hex>``.

Sentry's design: a signature is a list of components, each contributing or not, with a hint saying
why. The hash is blake2b (4 bytes, 8 hex digits) over the contributing components, never the
builtin ``hash()`` (randomized per process). The algorithm carries a version id,
:data:`SIGNATURE_VERSION`, stored in every Failure's ``signature_version``; golden snapshot tests
pin it, so a change to the components or to normalization is a new version, never a silent
regrouping of history.

Components, and the Failure field or metadata key each one reads:

============  =====================================  =============================================
component     reads                                  contributes when
============  =====================================  =============================================
kind          ``Failure.kind``                       always
surface       ``Failure.surface``                    always
status        ``metadata["exit_code"]`` or           present (a provider status or exit code)
              ``metadata["http_status"]``
diagnostic    ``metadata["diagnostic"]``             present (a compiler or lint code: E0425...)
class         ``Failure.error_class``                always
location      ``Failure.location``                   present
message       ``normalize_message(Failure.message)`` always (volatile data replaced first)
blocker       ``metadata["blocker_class"]``          present and the kind is architecture_error
                                                     or policy_error
============  =====================================  =============================================
"""

from __future__ import annotations

import contextlib
import hashlib
from typing import TYPE_CHECKING, Final, NamedTuple

from failcode.record._axes import Kind
from failcode.record._failure import expect_failure
from failcode.signature._normalize import NORMALIZE_VERSION, normalize_message, normalize_redacted

if TYPE_CHECKING:
    from collections.abc import Mapping

    from failcode.record._failure import Failure
    from failcode.record._frozen import Scalar

__all__ = [
    "SIGNATURE_VERSION",
    "Signature",
    "SignatureComponent",
    "explain_signature",
    "sign",
]

SIGNATURE_VERSION: Final = f"sig2.{NORMALIZE_VERSION}"
"""Version id of the signature algorithm, including the normalization rules' version.

sig2: an unclassified failure (FC-SYS-001) signs its exception's normalized message, through
the message it now carries, so two different errors of one type are two signatures."""

_BLOCKER_KINDS = frozenset({Kind.ARCHITECTURE_ERROR, Kind.POLICY_ERROR})


class SignatureComponent(NamedTuple):
    """One input of a signature: where it comes from, its value, and whether it counted."""

    name: str
    source: str
    """The Failure field or metadata key it reads."""
    value: str | None
    contributes: bool
    hint: str
    """Why it contributes or not."""


class Signature(NamedTuple):
    """A computed signature with its version and the components that made it."""

    value: str
    version: str
    components: tuple[SignatureComponent, ...]


def _key(  # noqa: PLR0917 - one positional per component, in hash order
    kind: str, surface: str, status: str | None, diagnostic: str | None, error_class: str,
    location: str | None, message: str, blocker: str | None,
) -> str:
    """The hashed text: the contributing components as name=value, joined by US (0x1f).

    Both :func:`sign` and the fast path of the record factory build the key here, so a
    component can never count in one and not in the other.
    """
    parts = [f"kind={kind}", f"surface={surface}"]
    if status is not None:
        parts.append(f"status={status}")
    if diagnostic is not None:
        parts.append(f"diagnostic={diagnostic}")
    parts.append(f"class={error_class}")
    if location is not None:
        parts.append(f"location={location}")
    if message:
        parts.append(f"message={message}")
    if blocker is not None:
        parts.append(f"blocker={blocker}")
    return "\x1f".join(parts)


def _digest(key: str) -> str:
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()


def _text(value: Scalar) -> str | None:
    return None if value is None or value == "" else str(value)


def sign_value(
    kind: Kind,
    surface: str,
    error_class: str,
    location: str | None,
    *,
    message: str,
    status: Scalar = None,
    diagnostic: Scalar = None,
    blocker: Scalar = None,
) -> str:
    """The signature string alone (no components): the record factory's fast path.

    ``message`` must already be redacted (the factory renders it from redacted params); the
    value equals ``sign(...).value`` for such a message.
    """
    # the types too: 1, 1.0 and True are equal keys but render differently; without any of
    # the three (most records) a shorter key, which never equals a longer one
    static: tuple[object, ...] = (
        (kind, surface, error_class, location)
        if status is None and diagnostic is None and blocker is None
        else (kind, surface, error_class, location, status, type(status), diagnostic,
              type(diagnostic), blocker, type(blocker)))
    try:
        prefixes = _prefixes.get(static)
    except TypeError:  # an unhashable scalar: no cache
        prefixes = None
    if prefixes is None:
        value = kind.value
        # the key without its message part; both end where the message would go
        head = _key(value, surface, _text(status), _text(diagnostic), error_class,
                    location or None, "", None)
        tail = _text(blocker) if kind in _BLOCKER_KINDS else None
        prefixes = (head, "" if tail is None else f"\x1fblocker={tail}",
                    f"{value}:{surface}:{error_class}:{location or 'none'}:")
        if len(_prefixes) >= _PREFIX_CACHE_SIZE:
            _prefixes.clear()
        with contextlib.suppress(TypeError):
            _prefixes[static] = prefixes
    head, tail, shown = prefixes
    normalized = normalize_redacted(message) if message else ""
    if normalized:
        head = f"{head}\x1fmessage={normalized}"
    return shown + _digest(head + tail)


_PREFIX_CACHE_SIZE: Final = 4096
_prefixes: dict[tuple[object, ...], tuple[str, str, str]] = {}
"""The parts of the key and the value that do not depend on the message, per combination."""


def sign(
    kind: Kind | str,
    surface: str,
    error_class: str,
    location: str | None = None,
    *,
    message: str = "",
    status: Scalar = None,
    diagnostic: Scalar = None,
    blocker: Scalar = None,
) -> Signature:
    """Compute the semantic signature of a failure from its components.

    Args:
        kind: the record's kind.
        surface: the record's surface (already normalized).
        error_class: the record's error class.
        location: the record's location (already normalized: a repo-relative path with no line
            number; see :class:`~failcode.Failure`).
        message: the record's message; it is normalized here (volatile data replaced).
        status: an exit code or provider HTTP status, when the failure has one.
        diagnostic: the primary diagnostic's code (a compiler error code, a lint rule).
        blocker: the policy or architecture blocker class, for those kinds.

    Returns:
        The :class:`Signature`: ``value`` is ``kind:surface:class:location-or-none:8hex``, and
        ``components`` says what each input contributed and why.
    """
    kind = Kind(kind)
    normalized = normalize_message(message) if message else ""
    blocker_counts = kind in _BLOCKER_KINDS
    components = (
        SignatureComponent("kind", "kind", kind.value, True, "always part of the signature"),
        SignatureComponent("surface", "surface", surface, True, "always part of the signature"),
        _optional("status", "metadata.exit_code | metadata.http_status", status,
                  "exit code or provider status"),
        _optional("diagnostic", "metadata.diagnostic", diagnostic, "primary diagnostic code"),
        SignatureComponent("class", "error_class", error_class, True,
                           "always part of the signature"),
        _optional("location", "location", location, "primary file or module path"),
        SignatureComponent("message", "message", normalized, bool(message),
                           "normalized: volatile data replaced by placeholders"
                           if message else "no message"),
        SignatureComponent(
            "blocker", "metadata.blocker_class", _text(blocker),
            blocker_counts and _text(blocker) is not None,
            "blocker class of a policy or architecture failure" if blocker_counts
            else "only architecture_error and policy_error carry a blocker class"),
    )
    by_name = {c.name: c.value if c.contributes else None for c in components}
    key = _key(kind.value, surface, by_name["status"], by_name["diagnostic"], error_class,
               by_name["location"], normalized, by_name["blocker"])
    value = f"{kind.value}:{surface}:{error_class}:{location or 'none'}:{_digest(key)}"
    return Signature(value, SIGNATURE_VERSION, components)


def _optional(name: str, source: str, value: Scalar, what: str) -> SignatureComponent:
    if value is None or value == "":
        return SignatureComponent(name, source, None, False, f"no {what}")
    return SignatureComponent(name, source, str(value), True, what)


def _metadata_status(failure: Failure) -> Scalar:
    metadata = failure.metadata
    status = metadata.get("exit_code")
    return metadata.get("http_status") if status is None else status


def explain_signature(failure: Failure) -> Signature:
    """Recompute a Failure's signature and show each component, contributing or not, and why.

    The returned ``value`` equals ``failure.signature`` when the record was signed by this
    version of the algorithm (``failure.signature_version == SIGNATURE_VERSION``).

    Raises:
        TypeError: ``failure`` is not a Failure.
    """
    expect_failure(failure, "explain_signature")
    return sign(failure.kind, failure.surface, failure.error_class, failure.location,
                message=failure.message, status=_metadata_status(failure),
                diagnostic=failure.metadata.get("diagnostic"),
                blocker=failure.metadata.get("blocker_class"))


def sign_failure_fields(
    kind: Kind, surface: str, error_class: str, location: str | None, *, message: str,
    metadata: Mapping[str, Scalar] | None,
) -> str:
    """The signature value for a record about to be built (the factory's entry point)."""
    metadata = metadata or {}
    status = metadata.get("exit_code")
    if status is None:
        status = metadata.get("http_status")
    return sign_value(kind, surface, error_class, location, message=message, status=status,
                      diagnostic=metadata.get("diagnostic"),
                      blocker=metadata.get("blocker_class"))
