"""failcode: one error taxonomy and failure-handling library for AI agent systems.

Any failure becomes one immutable :class:`Failure` with a stable code, a kind (what failed), a
category (who must act), a retryability and a semantic signature (:func:`classify`,
:func:`classify_text`, :func:`classify_http`, :func:`from_command`). :func:`decide` says what
happens next; :func:`render_user` and :mod:`failcode.boundary` carry it to people and across
boundaries. Codes live in catalogs declared as enumerations (:class:`CodeEnum`,
:class:`Catalog`); failcode's own is :class:`FC`.

``import failcode`` imports no provider SDK, no web framework and no CLI library.
"""
import typing

from failcode.codes._catalog import (
    FC,
    FC_AREAS,
    FC_CATALOG,
)
from failcode.codes._registry import (
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
from failcode.policy._decide import (
    DEFAULT_CLASSES,
    Action,
    Budget,
    BudgetPolicy,
    Change,
    Decision,
    Hint,
    History,
    LadderPolicy,
    MonitorPolicy,
    NoProgressMonitor,
    Policy,
    RetryClass,
    SharedBudget,
    StuckReport,
    decide,
)
from failcode.policy._decide import (
    Rule as DecisionRule,
)
from failcode.record._axes import (
    CATEGORY_RETRYABILITIES,
    KIND_DEFAULTS,
    Category,
    Kind,
    KindDefaults,
    Outcome,
    Retryability,
    Route,
    Severity,
)
from failcode.record._envelope import (
    ENVELOPE_VERSION,
    EnvelopeError,
    encode_end,
    read_envelopes,
)
from failcode.record._envelope import (
    decode as decode_envelope,
)
from failcode.record._envelope import (
    encode as encode_envelope,
)
from failcode.record._failure import (
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
from failcode.record._frozen import (
    FrozenDict,
    Scalar,
)
from failcode.record._outcomes import (
    Cancelled,
    NoMatch,
    NonErrorOutcome,
    PeerExited,
    RejectedAction,
    SessionEnded,
    SessionStarted,
    Veto,
)
from failcode.record._projections import (
    AFKError,
    AirError,
    ProjectionError,
    ToolErrorOutput,
    WorkerResult,
    from_air_error,
    to_afk_error,
    to_air_error,
    to_tool_error_output,
    to_worker_result,
)
from failcode.signature._normalize import (
    NORMALIZE_VERSION,
    PLACEHOLDERS,
    normalize_message,
)
from failcode.signature._redact import (
    REDACT_VERSION,
    find_secrets,
    redact,
)
from failcode.signature._signature import (
    SIGNATURE_VERSION,
    Signature,
    SignatureComponent,
    explain_signature,
    sign,
)

if typing.TYPE_CHECKING:
    from failcode.classification._classify import (
        classify,
        classify_http,
        classify_text,
    )
    from failcode.classification._command import (
        PURPOSES,
        from_command,
    )
    from failcode.classification._purpose import infer_purpose
    from failcode.events._remote import (
        RemoteSink,
        report_to,
    )
    from failcode.policy._adapters import (
        StaminaHook,
        stamina_hook,
        tenacity_strategies,
    )
    from failcode.policy._config import (
        FAILCODE_SCHEMA,
        ConfigError,
        FailcodeConfig,
        Section,
        Setting,
        ValidatedConfig,
        find_config,
        load_config,
        validate_toml,
    )
    from failcode.policy._preflight import (
        Check,
        CredentialsFile,
        EnvVar,
        Module,
        Program,
        WritableDir,
        preflight,
    )
    from failcode.policy._retry import (
        Attempt,
        Retrying,
        decision_of,
        retry,
        retrying,
        shared_budget,
    )
    from failcode.render._headline import headline
    from failcode.render._i18n import (
        available_languages,
        locale_from_env,
    )
    from failcode.render._render import (
        Channel,
        SeverityGate,
        Visibility,
        render_developer,
        render_json,
        render_rejected_action,
        render_rich,
        render_user,
        visibility,
        visible,
    )
    from failcode.signature._cluster import (
        ClusterMatch,
        ClusterStateError,
        TemplateCluster,
        TemplateClusterer,
    )

# Heavier modules (rule tables, parsers, config, retry helpers) load on first use, so that
# `import failcode` stays cheap; their names are public all the same (PEP 562).
_LAZY: dict[str, str] = {
    "StaminaHook": "failcode.policy._adapters",
    "stamina_hook": "failcode.policy._adapters",
    "tenacity_strategies": "failcode.policy._adapters",
    "classify": "failcode.classification._classify",
    "classify_http": "failcode.classification._classify",
    "classify_text": "failcode.classification._classify",
    "ClusterMatch": "failcode.signature._cluster",
    "ClusterStateError": "failcode.signature._cluster",
    "TemplateCluster": "failcode.signature._cluster",
    "TemplateClusterer": "failcode.signature._cluster",
    "PURPOSES": "failcode.classification._command",
    "from_command": "failcode.classification._command",
    "infer_purpose": "failcode.classification._purpose",
    "FAILCODE_SCHEMA": "failcode.policy._config",
    "ConfigError": "failcode.policy._config",
    "FailcodeConfig": "failcode.policy._config",
    "Section": "failcode.policy._config",
    "Setting": "failcode.policy._config",
    "ValidatedConfig": "failcode.policy._config",
    "find_config": "failcode.policy._config",
    "load_config": "failcode.policy._config",
    "validate_toml": "failcode.policy._config",
    "available_languages": "failcode.render._i18n",
    "locale_from_env": "failcode.render._i18n",
    "Check": "failcode.policy._preflight",
    "CredentialsFile": "failcode.policy._preflight",
    "EnvVar": "failcode.policy._preflight",
    "Module": "failcode.policy._preflight",
    "Program": "failcode.policy._preflight",
    "WritableDir": "failcode.policy._preflight",
    "preflight": "failcode.policy._preflight",
    "Channel": "failcode.render._render",
    "SeverityGate": "failcode.render._render",
    "Visibility": "failcode.render._render",
    "render_developer": "failcode.render._render",
    "render_json": "failcode.render._render",
    "render_rejected_action": "failcode.render._render",
    "render_rich": "failcode.render._render",
    "render_user": "failcode.render._render",
    "headline": "failcode.render._headline",
    "visibility": "failcode.render._render",
    "visible": "failcode.render._render",
    "Attempt": "failcode.policy._retry",
    "Retrying": "failcode.policy._retry",
    "decision_of": "failcode.policy._retry",
    "retry": "failcode.policy._retry",
    "retrying": "failcode.policy._retry",
    "shared_budget": "failcode.policy._retry",
    "RemoteSink": "failcode.events._remote",
    "report_to": "failcode.events._remote",
}


def __getattr__(name: str) -> typing.Any:
    module = _LAZY.get(name)
    if module is None:
        msg = f"module 'failcode' has no attribute {name!r}"
        raise AttributeError(msg)
    import importlib  # noqa: PLC0415 - only when a lazy name is first used

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

__version__ = "0.1.0"

__all__ = [
    "AFKError",
    "Action",
    "AirError",
    "Attempt",
    "Budget",
    "BudgetPolicy",
    "CATEGORY_RETRYABILITIES",
    "Cancelled",
    "Catalog",
    "CatalogError",
    "Category",
    "CauseLink",
    "Change",
    "Channel",
    "Check",
    "ClusterMatch",
    "ClusterStateError",
    "CodeEnum",
    "CodeSpec",
    "ConfigError",
    "CredentialsFile",
    "DEFAULT_CLASSES",
    "Decision",
    "DecisionRule",
    "ENVELOPE_VERSION",
    "EntityRef",
    "EnvVar",
    "EnvelopeError",
    "FAILCODE_SCHEMA",
    "FC",
    "FC_AREAS",
    "FC_CATALOG",
    "FailcodeConfig",
    "Failure",
    "FailureDecodeError",
    "FailureError",
    "FrozenDict",
    "Hint",
    "History",
    "InvalidFailureError",
    "KIND_DEFAULTS",
    "Kind",
    "KindDefaults",
    "LadderPolicy",
    "MAX_CAUSE_DEPTH",
    "MAX_MESSAGE_CHARS",
    "Module",
    "MonitorPolicy",
    "NORMALIZE_VERSION",
    "NoMatch",
    "NoProgressMonitor",
    "NonErrorOutcome",
    "Outcome",
    "PLACEHOLDERS",
    "PURPOSES",
    "PeerExited",
    "Policy",
    "Program",
    "ProjectionError",
    "REDACT_VERSION",
    "RejectedAction",
    "RemoteSink",
    "RetiredCodeError",
    "RetryClass",
    "Retryability",
    "Retrying",
    "Route",
    "SEED_003_CATEGORIES",
    "SIGNATURE_VERSION",
    "Scalar",
    "Section",
    "SessionEnded",
    "SessionStarted",
    "Setting",
    "Severity",
    "SeverityGate",
    "SharedBudget",
    "Signature",
    "SignatureComponent",
    "StaminaHook",
    "StuckReport",
    "TemplateCluster",
    "TemplateClusterer",
    "ToolErrorOutput",
    "UnknownCodeError",
    "ValidatedConfig",
    "Veto",
    "Visibility",
    "WorkerResult",
    "WritableDir",
    "__version__",
    "available_languages",
    "catalogs",
    "classify",
    "classify_http",
    "classify_text",
    "decide",
    "decision_of",
    "decode_envelope",
    "encode_end",
    "encode_envelope",
    "explain_signature",
    "failure_json_schema",
    "find_config",
    "find_secrets",
    "from_air_error",
    "from_command",
    "headline",
    "infer_purpose",
    "load_config",
    "locale_from_env",
    "lookup",
    "normalize_message",
    "preflight",
    "read_envelopes",
    "redact",
    "render_developer",
    "render_json",
    "render_rejected_action",
    "render_rich",
    "render_user",
    "report_to",
    "retry",
    "retrying",
    "shared_budget",
    "sign",
    "stamina_hook",
    "tenacity_strategies",
    "to_afk_error",
    "to_air_error",
    "to_tool_error_output",
    "to_worker_result",
    "validate_toml",
    "visibility",
    "visible",
]
