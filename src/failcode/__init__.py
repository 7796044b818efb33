"""failcode: one error taxonomy and failure-handling library for AI agent systems.

Any failure becomes one immutable :class:`Failure` with a stable code, a kind (what failed), a
category (who must act), a retryability and a semantic signature. Codes live in catalogs declared
as enumerations (:class:`CodeEnum`, :class:`Catalog`); failcode's own is :class:`FC`.

``import failcode`` imports no provider SDK and no web framework.
"""

from failcode._axes import (
    KIND_DEFAULTS,
    Category,
    Kind,
    KindDefaults,
    Outcome,
    Retryability,
    Route,
    Severity,
)
from failcode._catalog import FC, FC_AREAS, FC_CATALOG
from failcode._failure import (
    MAX_CAUSE_DEPTH,
    MAX_MESSAGE_CHARS,
    CauseLink,
    EntityRef,
    Failure,
    FailureDecodeError,
    FailureError,
    InvalidFailureError,
    failure_json_schema,
)
from failcode._frozen import FrozenDict, Scalar
from failcode._outcomes import (
    Cancelled,
    NoMatch,
    NonErrorOutcome,
    PeerExited,
    RejectedAction,
    Veto,
)
from failcode._registry import (
    SEED_003_CATEGORIES,
    Catalog,
    CatalogError,
    CodeEnum,
    CodeSpec,
    RetiredCodeError,
    UnknownCodeError,
    catalogs,
    lookup,
)

__version__ = "0.1.0"

__all__ = [
    "Cancelled",
    "Catalog",
    "CatalogError",
    "Category",
    "CauseLink",
    "CodeEnum",
    "CodeSpec",
    "EntityRef",
    "FC",
    "FC_AREAS",
    "FC_CATALOG",
    "Failure",
    "FailureDecodeError",
    "FailureError",
    "FrozenDict",
    "InvalidFailureError",
    "KIND_DEFAULTS",
    "Kind",
    "KindDefaults",
    "MAX_CAUSE_DEPTH",
    "MAX_MESSAGE_CHARS",
    "NoMatch",
    "NonErrorOutcome",
    "Outcome",
    "PeerExited",
    "RejectedAction",
    "RetiredCodeError",
    "Retryability",
    "Route",
    "SEED_003_CATEGORIES",
    "Scalar",
    "Severity",
    "UnknownCodeError",
    "Veto",
    "__version__",
    "catalogs",
    "failure_json_schema",
    "lookup",
]
