"""Building records of any key for boundary and rendering tests (signed like the factory does)."""

from __future__ import annotations

from failcode import SIGNATURE_VERSION, Category, Failure, Kind, Retryability, Severity, sign


def record(code: str, kind: Kind, category: Category, error_class: str, *,
           message: str = "Something failed.", remedy: str | None = "Fix it.",
           severity: Severity = Severity.ERROR,
           retryability: Retryability = Retryability.UNKNOWN,
           surface: str = "test.op") -> Failure:
    """A Failure with the given key, built by hand (not through a catalog)."""
    if not category.needs_remedy and remedy == "Fix it.":
        remedy = None
    return Failure(
        code=code, kind=kind, category=category, severity=severity, retryability=retryability,
        error_class=error_class, surface=surface, message=message,
        signature=sign(kind, surface, error_class, message=message).value,
        signature_version=SIGNATURE_VERSION, remedy=remedy)
