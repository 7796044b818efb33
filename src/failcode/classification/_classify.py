"""Classification of exceptions, exception text and raw provider responses into Failures.

Entry points (re-exported by :mod:`failcode`):

- :func:`classify` a live exception (with its ``__cause__`` / ``__context__`` chain);
- :func:`classify_text` an exception known only as text (a log line, a transcript);
- :func:`classify_http` a raw provider response (status, body, headers).

``classify`` and ``classify_text`` read ONE rule table, :data:`RULES`, keyed by exception type
name (``"TimeoutError"``, ``"socket.gaierror"``, ``"openai.RateLimitError"``,
``"google.genai.ClientError"``...). A live exception is looked up along its MRO, so a subclass
(litellm's ``RateLimitError`` subclasses openai's) finds its base's row; text is looked up by the
name it gives. No SDK is imported: families are recognized by module name and fields are read by
duck typing (``status_code``, ``body``, ``response.headers``, ``code``/``type``/``error_code``).

Rows (the contract of issue 4; the ``class`` names are public and stable; kind, category and
retryability come from the code, see ``failcode explain CODE``):

- provider 401, invalid key (also Gemini 400 API_KEY_INVALID): ``auth``, ``FC.PROV_AUTH``
- provider 403: ``permission_denied``, ``FC.PROV_PERMISSION``
- provider 429 rate limit, a short quota window with a retry hint: ``rate_limit``,
  ``FC.PROV_RATE_LIMIT``
- billing, insufficient_quota, usage limit reached, a quota wall: ``quota_exceeded``,
  ``FC.PROV_QUOTA``
- provider 404 naming a model: ``model_not_found``, ``FC.PROV_MODEL_NOT_FOUND``
- context length exceeded, prompt too long, 413: ``context_too_large``,
  ``FC.PROV_CONTEXT_TOO_LARGE``
- tool use unsupported by the model: ``tool_use_unsupported``, ``FC.PROV_TOOL_USE_UNSUPPORTED``
- other provider 4xx: ``bad_request``, ``FC.PROV_BAD_REQUEST``
- Anthropic 529, a 503 whose body says overloaded: ``overloaded``, ``FC.PROV_OVERLOADED``
- other provider 5xx (and 409, which the SDKs retry): ``server_error``, ``FC.PROV_SERVER_ERROR``
- timeout (408, 504, SDK, httpx, requests, socket timeouts): ``timeout``, FC.PROV_TIMEOUT on a
  provider surface, else FC.OS_TIMEOUT
- connection refused, reset, DNS: ``connection``, FC.PROV_CONNECTION on a provider surface, else
  FC.OS_CONNECTION
- content policy refusal: ``content_filtered``, ``FC.PROV_CONTENT_FILTERED``
- model output that does not parse (output surface): ``malformed_output``,
  ``FC.PROV_MALFORMED_OUTPUT``
- pydantic ValidationError: on a tool-argument surface (``tool_args``, ``tool.search.args``...)
  a :class:`~failcode.RejectedAction` fed back to the model; on another model-output surface
  ``malformed_output``, ``FC.PROV_MALFORMED_OUTPUT`` (transient: sample again); on any other
  surface (user input, config, a request) ``validation``, ``FC.DATA_INVALID_INPUT`` (user)
- AssertionError, an exception named as a failed invariant or contract, and a TypeError,
  AttributeError, KeyError, IndexError, NameError, UnboundLocalError, ZeroDivisionError or
  RecursionError whose innermost frame is under the working directory: a defect,
  ``FC.SYS_DEFECT`` (class ``assertion_failed``, ``invariant_failed``, ``type_error``,
  ``attribute_error``, ``key_error``, ``index_error``, ``name_error``, ``unbound_local``,
  ``zero_division``, ``recursion_error``; ``metadata["frames"]`` the innermost frames as
  ``module:function``)
- a KeyError raised by ``os.environ[name]``: ``missing_env_var``, ``FC.CFG_MISSING_ENV_VAR``
- FileNotFoundError raised by the process-spawning machinery (``subprocess``, ``asyncio``)
  for the program itself: ``command_not_found``, ``FC.CMD_NOT_FOUND``
- PermissionError, EACCES, EPERM, EROFS: ``permission_denied``, ``FC.OS_PERMISSION_DENIED``
- FileNotFoundError, ENOENT, ENOTDIR: ``file_not_found``, ``FC.OS_FILE_NOT_FOUND``
- ENOSPC, EDQUOT: ``disk_full``, ``FC.OS_DISK_FULL``
- MemoryError, ENOMEM: ``out_of_memory``, ``FC.OS_OUT_OF_MEMORY``
- ModuleNotFoundError: ``missing_module``, ``FC.CMD_MISSING_MODULE``; a module the project
  itself would provide (named like its tests: ``tests``, ``tests.x``, ``conftest``,
  ``test_x``; a submodule ``pkg.sub`` of a package ``pkg`` the traceback shows outside installed
  libraries, unless the submodule is private, ``_x``, a compiled extension not built; the
  package the importing file lives in) is ``FC.CMD_LOCAL_MODULE_MISSING`` (task: the code
  imports what the project lacks). Both keep the name in ``params["module"]``; a caller that
  knows the repository applies :func:`~failcode.classification._command.as_local_module`
- ImportError ``cannot import name 'X' from 'Y' (path)`` with the path in an installed library
  or the standard library (``site-packages``, ``dist-packages``, ``lib/pythonX.Y``, a venv):
  ``incompatible_dependency``, ``FC.CMD_INCOMPATIBLE_DEPENDENCY`` (``module`` Y, ``name`` X);
  with the path in the project, an unknown location or a circular import: ``FC.SYS_UNKNOWN``
- subprocess.CalledProcessError: the command, exit status and captured output classified by
  :func:`~failcode.from_command` (purpose ``general``); a status no step rule calls a failure
  (a probe that found nothing) is ``FC.CMD_FAILED`` with ``program`` and ``exit_code``
- any other exception: ``unknown``, ``FC.SYS_UNKNOWN``, with the exception's message (redacted)
  in its text and so in its signature
- KeyboardInterrupt, asyncio / concurrent.futures CancelledError: a
  :class:`~failcode.Cancelled` outcome (signal 2 for KeyboardInterrupt).
- a :class:`~failcode.FailureError`: its own Failure, ``context`` merged in.

Order of evidence: structured fields first (HTTP status, provider ``code``/``type``/
``error_code``, Google ``ErrorInfo.reason``/``QuotaFailure``/``RetryInfo``, errno), message
phrases only as an anchored fallback (see :mod:`failcode.classification._providers`). A
gateway's configuration errors are configuration whatever status carries them: missing
credentials (``Missing credentials``, ``No API key``, an ``AuthenticationError`` inside a 500
body) are ``FC.PROV_AUTH``; an unknown model id, ``Invalid model name``, litellm's ``LLM
Provider NOT provided``, a model a gateway cannot route are ``FC.PROV_MODEL_NOT_FOUND`` (never
transient, never a defect).

Chains: the chain (``__cause__``, else ``__context__`` unless suppressed; at most
:data:`~failcode.MAX_CAUSE_DEPTH` links, cycle-safe) is read outermost first, and the first
link with the strongest evidence wins: a specific row beats ``connection``, which beats a bare
SDK base class, which beats an unknown type. So an ``APIConnectionError`` wrapping
``httpx.ReadTimeout`` is a timeout, a ``RuntimeError`` raised from a ``FileNotFoundError`` is
the missing file.

``metadata`` keys written here (the decision engine reads them):

- ``http_status`` (int): the provider's HTTP status (it also enters the signature);
- ``provider_code`` (str): the provider's error code, Google reason, or error type/status;
- ``request_id`` (str): the provider's request id (volatile; never in the signature);
- ``retry_after_s`` (float): a server-directed delay in seconds, from ``retry-after-ms``,
  ``Retry-After`` (seconds or HTTP-date), Google ``RetryInfo.retryDelay``, or a "Please retry
  in 18.4s" phrase;
- ``should_retry`` (bool): the ``x-should-retry`` header;
- ``errno`` (int): an OSError's errno;
- ``rule`` (str): which rule fired (``code:quota``, ``status:429``, ``type:TimeoutError``...).

Surfaces: the ``surface`` argument wins (``:`` and white space are replaced by ``_``). Without
one, an SDK exception gets ``llm.openai``, ``llm.anthropic`` or ``llm.gemini``; an httpx or
requests exception ``llm.<slug>`` for a known API host, else ``http``; anything else ``python``.
A surface is a *provider surface* when it is ``llm``/``model`` or starts with ``llm.``,
``model.`` or ``provider``; it says *model output* when it is a provider surface or one of its
dotted parts is ``output``, ``parse``, ``tool_call``, ``tool_args`` or ``structured_output``.

Location: the innermost traceback frame inside the current working directory (not under
``site-packages``), relative to it, found by walking ``tb_next`` (never
``traceback.extract_tb``, which reads source files); never a line number, never a temporary
directory (a frame under ``cwd/tmpab12cd_3/`` is located inside it, ``pkg/x.py``).

None of the entry points raises, whatever the input: a ``__str__`` that raises, a cause cycle,
a 10 MB message, a body of any shape. Anything unexpected degrades to ``FC.SYS_UNKNOWN``.
"""

from __future__ import annotations

import ast
import contextlib
import errno as errno_mod
import os
import re
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import msgspec

from failcode._lazy_re import lazy
from failcode.classification._command import from_command
from failcode.classification._parsers import import_from_library, is_local_module
from failcode.classification._providers import (
    PROVIDER_NAMES,
    ErrorFields,
    body_fields,
    header_delay,
    http_code,
    model_from_text,
    parse_body_text,
    provider_from_host,
    request_id_header,
    retry_hint_s,
    should_retry_header,
    status_from_text,
)
from failcode.codes._build import redact_mapping
from failcode.codes._catalog import FC
from failcode.record._failure import MAX_CAUSE_DEPTH, Failure, FailureError
from failcode.record._frozen import FrozenDict
from failcode.record._outcomes import Cancelled, RejectedAction
from failcode.signature._normalize import strip_temp_dir
from failcode.signature._redact import redact_cut

if TYPE_CHECKING:
    from collections.abc import Mapping
    from types import TracebackType

    from failcode.record._frozen import Scalar
    from failcode.record._outcomes import NonErrorOutcome

__all__ = ["RULES", "Rule", "classify", "classify_http", "classify_text"]

_MAX_TEXT: Final = 8192
"""Only this much of a message is searched for phrases, paths or modules."""


class Rule(NamedTuple):
    """One row of the rule table.

    ``action`` says how the row decides:

    - ``http``: a provider status error; the code comes from the status and body
      (``status`` is the class's own status, used when the text states none); a ``code``
      forces the result (e.g. Anthropic's ``ContractSpendLimitReachedError`` is a quota);
    - ``timeout`` / ``connection``: ``FC.PROV_*`` on a provider surface, else ``FC.OS_*``;
    - ``code``: always ``code``;
    - ``oserror``: by errno, else unknown;
    - ``module``: a missing module; ``validation``: pydantic; ``json``: malformed output on a
      model-output surface, else unknown;
    - ``sdk``: an SDK base class: the phrases may decide, else unknown on the SDK's surface;
    - ``chain``: whatever the cause says, else ``code``;
    - ``cancel``: a Cancelled outcome; ``unknown``: ``FC.SYS_UNKNOWN``;
    - ``process``: a command that exited non-zero (``subprocess.CalledProcessError``): its
      program, exit status and captured output go through
      :func:`~failcode.from_command` (purpose ``general``).
    """

    action: str
    code: FC | None = None
    status: int | None = None


_CANCEL = Rule("cancel")
_TIMEOUT = Rule("timeout")
_CONN = Rule("connection")
_UNKNOWN = Rule("unknown")
_SDK = Rule("sdk")
_HTTP = Rule("http")
_DATA = Rule("code", FC.DATA_INVALID_INPUT)
_SERVER = Rule("code", FC.PROV_SERVER_ERROR)
_JSON = Rule("json")


def _http(status: int | None, code: FC | None = None) -> Rule:
    return Rule("http", code, status)


def _family_rows(family: str, rows: Mapping[str, Rule]) -> dict[str, Rule]:
    return {f"{family}.{name}": rule for name, rule in rows.items()}


_HTTPX_ROWS: Final[Mapping[str, Rule]] = {
    # httpx, httpx2 (the openai/anthropic SDKs' fork) and httpcore share these names
    "HTTPError": _UNKNOWN, "RequestError": _CONN, "TransportError": _CONN,
    "TimeoutException": _TIMEOUT, "ConnectTimeout": _TIMEOUT, "ReadTimeout": _TIMEOUT,
    "WriteTimeout": _TIMEOUT, "PoolTimeout": _TIMEOUT, "NetworkError": _CONN,
    "ConnectError": _CONN, "ReadError": _CONN, "WriteError": _CONN, "CloseError": _CONN,
    "ProtocolError": _CONN, "RemoteProtocolError": _CONN, "ProxyError": _CONN,
    "LocalProtocolError": _UNKNOWN, "UnsupportedProtocol": _DATA, "InvalidURL": _DATA,
    "DecodingError": _SERVER, "TooManyRedirects": _UNKNOWN, "HTTPStatusError": _HTTP,
    "StreamError": _UNKNOWN, "StreamConsumed": _UNKNOWN, "StreamClosed": _UNKNOWN,
    "ResponseNotRead": _UNKNOWN, "RequestNotRead": _UNKNOWN, "CookieConflict": _UNKNOWN,
    "SSEError": _SERVER, "ConnectionNotAvailable": _CONN,
}

RULES: Final[Mapping[str, Rule]] = {
    # -- builtins and the standard library ---------------------------------------------------
    "KeyboardInterrupt": _CANCEL,
    "asyncio.CancelledError": _CANCEL,
    "concurrent.futures.CancelledError": _CANCEL,
    "TimeoutError": _TIMEOUT,
    "socket.timeout": _TIMEOUT,
    "asyncio.TimeoutError": _TIMEOUT,
    "concurrent.futures.TimeoutError": _TIMEOUT,
    "subprocess.TimeoutExpired": _TIMEOUT,
    "subprocess.CalledProcessError": Rule("process"),
    "ConnectionError": _CONN,
    "ConnectionRefusedError": _CONN,
    "ConnectionResetError": _CONN,
    "ConnectionAbortedError": _CONN,
    "BrokenPipeError": _CONN,
    "socket.gaierror": _CONN,
    "socket.herror": _CONN,
    "ssl.SSLError": _CONN,
    "ssl.SSLCertVerificationError": _CONN,
    "ssl.SSLEOFError": _CONN,
    "ssl.SSLZeroReturnError": _CONN,
    "ssl.SSLSyscallError": _CONN,
    "PermissionError": Rule("code", FC.OS_PERMISSION_DENIED),
    "FileNotFoundError": Rule("code", FC.OS_FILE_NOT_FOUND),
    "NotADirectoryError": Rule("code", FC.OS_FILE_NOT_FOUND),
    "MemoryError": Rule("code", FC.OS_OUT_OF_MEMORY),
    "OSError": Rule("oserror"),
    "urllib.error.URLError": Rule("oserror"),  # an OSError; its reason carries the errno
    "IOError": Rule("oserror"),
    "EnvironmentError": Rule("oserror"),
    "ModuleNotFoundError": Rule("module"),
    "ImportError": Rule("import"),
    "json.JSONDecodeError": _JSON,
    "pydantic.ValidationError": Rule("validation"),
    # -- openai ------------------------------------------------------------------------------
    **_family_rows("openai", {
        "OpenAIError": _SDK, "APIError": _SDK, "APIStatusError": _HTTP,
        "APIConnectionError": _CONN, "APITimeoutError": _TIMEOUT,
        "APIResponseValidationError": _http(None, FC.PROV_SERVER_ERROR),
        "BadRequestError": _http(400), "AuthenticationError": _http(401),
        "OAuthError": _http(401, FC.PROV_AUTH), "PermissionDeniedError": _http(403),
        "NotFoundError": _http(404), "ConflictError": _http(409),
        "UnprocessableEntityError": _http(422), "RateLimitError": _http(429),
        "InternalServerError": _http(500),
        "ContentFilterFinishReasonError": Rule("code", FC.PROV_CONTENT_FILTERED),
        "LengthFinishReasonError": Rule("code", FC.PROV_MALFORMED_OUTPUT),
        "WebSocketConnectionClosedError": _CONN, "WebSocketQueueFullError": _UNKNOWN,
        "_AmbiguousModuleClientUsageError": _UNKNOWN, "InvalidWebhookSignatureError": _UNKNOWN,
        "error.RateLimitError": _http(429),  # openai<1.0 names, as old logs show them
    }),
    # -- anthropic ---------------------------------------------------------------------------
    **_family_rows("anthropic", {
        "AnthropicError": _SDK, "APIError": _SDK, "APIStatusError": _HTTP,
        "APIConnectionError": _CONN, "APITimeoutError": _TIMEOUT,
        "APIResponseValidationError": _http(None, FC.PROV_SERVER_ERROR),
        "APIWebhookValidationError": _UNKNOWN,
        "BadRequestError": _http(400), "AuthenticationError": _http(401),
        "PaymentRequiredError": _http(402), "PermissionDeniedError": _http(403),
        "NotFoundError": _http(404), "RequestTimeoutError": _http(408),
        "ConflictError": _http(409), "PreconditionFailedError": _http(412),
        "ContentTooLargeError": _http(413), "RequestTooLargeError": _http(413),
        "RequestBodyTooLargeAfterDecodingError": _http(413),
        "UnprocessableEntityError": _http(422), "RateLimitError": _http(429),
        "RequestHeaderFieldsTooLargeError": _http(431), "ClientClosedRequestError": _http(499),
        "InternalServerError": _http(500), "HTTPNotImplementedError": _http(501),
        "ServiceUnavailableError": _http(503), "GatewayTimeoutError": _http(504),
        "DeadlineExceededError": _http(504), "OverloadedError": _http(529),
        "CMEKContextUnavailableError": _http(503), "CMEKKeyUnreachableError": _http(503),
        "StorageNotReadyError": _http(503),
        "CMEKKeyDisabledError": _http(400, FC.PROV_PERMISSION),
        "CMEKKeyNetworkBlockedError": _http(400, FC.PROV_PERMISSION),
        # the organization turned URL fetching off: its setting, as a disabled key is
        "OrganizationURLFetchDisabledError": _http(400, FC.PROV_PERMISSION),
        "ClaudeCodeKeyCreatorNotMemberError": _http(400, FC.PROV_PERMISSION),
        "ClaudeCodeVersionTooOldError": _http(400),
        "OrganizationOnHoldError": _http(400, FC.PROV_PERMISSION),
        "OrganizationTypeNotSupportedError": _http(400, FC.PROV_PERMISSION),
        "ParentOrganizationRequiredError": _http(400, FC.PROV_PERMISSION),
        "WorkspaceHumanReviewDisabledError": _http(400, FC.PROV_PERMISSION),
        "SandboxEgressRestrictedError": _http(403, FC.PROV_PERMISSION),
        "RequestBodyEncodingInvalidError": _http(400),
        "RequestBodyEncodingUnsupportedError": _http(400),
        "ContractSpendLimitReachedError": _http(429, FC.PROV_QUOTA),
        "EnforcedSpendLimitReachedError": _http(429, FC.PROV_QUOTA),
        "LinkedOrganizationSpendLimitReachedError": _http(402, FC.PROV_QUOTA),
        "LinkedOrganizationBillingUnavailableError": _http(402, FC.PROV_QUOTA),
        "RampLimitExceededError": _http(429, FC.PROV_RATE_LIMIT),
        "RetryableError": _SERVER,
        "CredentialsError": Rule("code", FC.PROV_AUTH),
        "IdentityTokenFileError": Rule("code", FC.PROV_AUTH),
        "WorkloadIdentityError": Rule("code", FC.PROV_AUTH),
    }),
    # -- google-genai ------------------------------------------------------------------------
    **_family_rows("google.genai", {
        "APIError": _HTTP, "ClientError": _http(400), "ServerError": _http(500),
        "UnknownFunctionCallArgumentError": Rule("code", FC.PROV_MALFORMED_OUTPUT),
        "FunctionInvocationError": Rule("code", FC.PROV_MALFORMED_OUTPUT),
        "UnsupportedFunctionError": _DATA,
        "UnknownApiResponseError": _SERVER,
        "ContinuationInterruptedError": Rule("chain", FC.PROV_SERVER_ERROR),
        "ExperimentalWarning": _UNKNOWN,
    }),
    # -- httpx / httpx2 / httpcore (one family) ----------------------------------------------
    **_family_rows("httpx", _HTTPX_ROWS),
    # -- requests and urllib3 ----------------------------------------------------------------
    **_family_rows("requests", {
        "RequestException": _UNKNOWN, "BaseHTTPError": _UNKNOWN, "HTTPError": _HTTP,
        "ConnectionError": _CONN, "ProxyError": _CONN, "SSLError": _CONN,
        "ChunkedEncodingError": _CONN, "Timeout": _TIMEOUT, "ConnectTimeout": _TIMEOUT,
        "ReadTimeout": _TIMEOUT, "ContentDecodingError": _SERVER,
        "RetryError": Rule("chain", FC.PROV_SERVER_ERROR),
        "URLRequired": _DATA, "MissingSchema": _DATA, "InvalidSchema": _DATA,
        "InvalidURL": _DATA, "InvalidHeader": _DATA, "InvalidProxyURL": _DATA,
        "InvalidJSONError": _DATA, "JSONDecodeError": _JSON, "CompatJSONDecodeError": _JSON,
        "TooManyRedirects": _UNKNOWN, "StreamConsumedError": _UNKNOWN,
        "UnrewindableBodyError": _UNKNOWN, "RequestsWarning": _UNKNOWN,
        "FileModeWarning": _UNKNOWN, "RequestsDependencyWarning": _UNKNOWN,
    }),
    # -- litellm: its types subclass openai's (a live exception finds those rows along its
    # MRO); these rows name its own types, for text that names them ---------------------------
    **_family_rows("litellm", {
        "ContextWindowExceededError": _http(400, FC.PROV_CONTEXT_TOO_LARGE),
        "ContentPolicyViolationError": _http(400, FC.PROV_CONTENT_FILTERED),
        "RejectedRequestError": _http(400, FC.PROV_CONTENT_FILTERED),
        "ServiceUnavailableError": _http(503), "BadGatewayError": _http(502),
        "UnsupportedParamsError": _http(400), "BudgetExceededError": Rule("code", FC.PROV_QUOTA),
        # its own names for what openai's types also are (text names the litellm type), and
        # the types with no openai base: an unknown provider prefix is a model it cannot
        # route; a guardrail's or PII filter's refusal is the gateway's content policy
        "APIError": _SDK, "OpenAIError": _SDK, "APIConnectionError": _CONN,
        "Timeout": _TIMEOUT, "InternalServerError": _http(500),
        "MidStreamFallbackError": _http(503), "InvalidRequestError": _http(400),
        "LiteLLMUnknownProvider": _http(400, FC.PROV_MODEL_NOT_FOUND),
        "GuardrailRaisedException": Rule("code", FC.PROV_CONTENT_FILTERED),
        "BlockedPiiEntityError": Rule("code", FC.PROV_CONTENT_FILTERED),
    }),
    **_family_rows("urllib3", {
        "TimeoutError": _TIMEOUT, "ConnectTimeoutError": _TIMEOUT,
        "ReadTimeoutError": _TIMEOUT, "NewConnectionError": _CONN,
        "NameResolutionError": _CONN, "ProtocolError": _CONN, "ProxyError": _CONN,
        "SSLError": _CONN, "MaxRetryError": Rule("chain", FC.PROV_CONNECTION),
    }),
}
"""Exception type name -> rule; the one table ``classify`` and ``classify_text`` read."""

# module prefix -> family used in RULES keys ("" for builtins: the bare type name)
_FAMILIES: Final = (
    ("builtins", ""), ("google.genai", "google.genai"), ("openai", "openai"),
    ("anthropic", "anthropic"), ("httpx2", "httpx"), ("httpx", "httpx"),
    ("httpcore", "httpx"), ("requests", "requests"), ("urllib3", "urllib3"),
    ("pydantic_core", "pydantic"), ("pydantic", "pydantic"), ("asyncio", "asyncio"),
    ("concurrent.futures", "concurrent.futures"), ("json", "json"), ("socket", "socket"),
    ("ssl", "ssl"), ("subprocess", "subprocess"), ("litellm", "litellm"),
)
_SDK_SURFACES: Final = {"openai": "openai", "anthropic": "anthropic", "google.genai": "gemini"}
_HTTP_FAMILIES: Final = frozenset({"httpx", "requests", "urllib3"})
# LLM gateways: every exception they raise is about a model provider call, so a bare
# ``Timeout`` or ``APIConnectionError`` from them is the provider's, not the operating system's
_GATEWAY_FAMILIES: Final = frozenset({"litellm"})


def _family(module: str) -> str:
    for prefix, family in _FAMILIES:
        if module == prefix or module.startswith(prefix + "."):
            return family
    return module.split(".", 1)[0]


def _key(family: str, name: str) -> str:
    return f"{family}.{name}" if family else name


# unqualified names ("RateLimitError") -> the rule when every family agrees on it
def _by_bare_name() -> dict[str, tuple[Rule, str]]:
    seen: dict[str, set[tuple[Rule, str]]] = {}
    for key, rule in RULES.items():
        family, _, name = key.rpartition(".")
        seen.setdefault(name, set()).add((rule, family))
    out: dict[str, tuple[Rule, str]] = {}
    for name, pairs in seen.items():
        rules = {rule for rule, _ in pairs}
        families = {family for _, family in pairs}
        if len(rules) == 1:
            out[name] = (next(iter(rules)), next(iter(families)) if len(families) == 1 else "")
    return out


_BARE: Final = _by_bare_name()

_type_cache: dict[type, tuple[Rule, str]] = {}
_TYPE_CACHE_SIZE: Final = 2048


def _rule_for_type(cls: type) -> tuple[Rule, str]:
    """The first MRO entry with a row, and the family of the exception's own type."""
    cached = _type_cache.get(cls)
    if cached is not None:
        return cached
    own_family = _family(getattr(cls, "__module__", "") or "")
    result: tuple[Rule, str] = (_UNKNOWN, own_family)
    for base in getattr(cls, "__mro__", (cls,)):
        family = _family(getattr(base, "__module__", "") or "")
        rule = RULES.get(_key(family, base.__name__))
        if rule is not None:
            # a subclass from another package (litellm) speaks for its base's provider
            result = (rule, family if own_family not in _SDK_SURFACES else own_family)
            break
    if len(_type_cache) >= _TYPE_CACHE_SIZE:
        _type_cache.clear()
    _type_cache[cls] = result
    return result


def _rule_for_name(type_name: str) -> tuple[Rule, str]:
    """The row for a type as text names it: ``openai.RateLimitError``, ``builtins.OSError``,
    ``google.genai.errors.ClientError``, ``RateLimitError``."""
    name = type_name.strip().rsplit(".", 1)
    if len(name) == 1:
        rule = RULES.get(name[0])
        if rule is not None:
            return rule, ""
        return _BARE.get(name[0], (_UNKNOWN, ""))
    module, bare = name
    family = _family(module)
    rule = RULES.get(_key(family, bare))
    if rule is None and family == "openai":
        rule = RULES.get(f"openai.error.{bare}")
    if rule is None and family in _SDK_SURFACES:
        # a log that changed the name's case (aider prints "openai.openaiError")
        rule = RULES.get(_FOLDED.get(_key(family, bare).lower(), ""))
    if rule is None:
        rule, _ = _BARE.get(bare, (_UNKNOWN, ""))
    return rule, family


_FOLDED: Final = {key.lower(): key for key in RULES}
"""Row keys by their lower case, for text that changed a type name's case."""


# -- surfaces -----------------------------------------------------------------------------

_SURFACE_BAD: Final = lazy(r"[\s:]+")
_OUTPUT_PARTS: Final = frozenset({"output", "parse", "tool_call", "tool_args",
                                  "structured_output"})


def _clean_surface(surface: object) -> str | None:
    if not isinstance(surface, str):
        return None
    cleaned = _SURFACE_BAD.sub("_", surface.strip())[:120]
    return cleaned or None


def is_provider_surface(surface: str) -> bool:
    """``llm``, ``model``, ``llm.*``, ``model.*`` or ``provider*``."""
    return (surface in {"llm", "model"} or surface.startswith(("llm.", "model.", "provider")))


def is_model_output_surface(surface: str) -> bool:
    """A provider surface, or one with a dotted part ``output``/``parse``/``tool_call``..."""
    return is_provider_surface(surface) or not _OUTPUT_PARTS.isdisjoint(surface.split("."))


_NO_PROVIDER: Final = "the provider"
"""What the provider lookups return when no provider is known; never put in params."""


_TOOL_ARG_PARTS: Final = frozenset({"tool_args", "tool_arguments", "tool_input", "tool_call",
                                    "function_call", "function_args"})
_TOOL_PARTS: Final = frozenset({"tool", "tools", "function", "functions"})
_ARG_PARTS: Final = frozenset({"args", "arguments", "input", "call", "params"})


def is_tool_argument_surface(surface: str) -> bool:
    """A surface where a model proposes a tool call: a dotted part ``tool_args``,
    ``tool_input``, ``tool_call``, ``function_call``..., or ``tool``/``function`` with
    ``args``/``arguments``/``input``/``call``/``params`` (``tool.search.args``)."""
    parts = set(surface.split("."))
    return not _TOOL_ARG_PARTS.isdisjoint(parts) or (
        not _TOOL_PARTS.isdisjoint(parts) and not _ARG_PARTS.isdisjoint(parts))


def _rejected(exc: BaseException | None, text: str, surface: str,
              context: Mapping[str, Scalar] | None) -> RejectedAction:
    """A validation error of model-proposed tool arguments, as the RejectedAction fed back to
    the model (not an error, no code, counted toward no-progress)."""
    from failcode.codes._build import clean_text  # noqa: PLC0415 - the factory module, loaded anyway

    problem, title = _validation_problem(exc, text)
    return RejectedAction(action=clean_text(title or surface, 120),
                          reason=clean_text(problem, 300) or "invalid arguments",
                          context=FrozenDict(context) if context else FrozenDict())


def _provider_for_surface(surface: str) -> str:
    if surface.startswith("llm."):
        slug = surface.split(".")[1]
        return PROVIDER_NAMES.get(slug, slug)
    return "the provider"


# -- location -----------------------------------------------------------------------------

_loc_cache: dict[str, str | None] = {}
_loc_cwd: list[str] = [""]
_MISSING: Final = object()
_VENDORED: Final = ("/site-packages/", "/dist-packages/", "/.venv/", "/node_modules/")


def _relative(filename: str, cwd: str) -> str | None:
    if not filename or filename[0] == "<":
        return None
    if filename[0] != "/":
        rel = os.path.normpath(filename)
    elif cwd != "/" and filename.startswith(cwd + "/"):
        rel = filename[len(cwd) + 1:]
    else:
        return None
    if (rel.startswith("..") or any(part in "/" + rel for part in _VENDORED)
            or _SURFACE_BAD.search(rel)):
        return None
    return strip_temp_dir(rel)  # a temp directory under cwd never reaches a location


def _cwd() -> str:
    try:
        cwd = os.getcwd()  # noqa: PTH109 - a str prefix test, no Path needed
    except OSError:
        return "/"
    if cwd != _loc_cwd[0]:
        _loc_cache.clear()
        _loc_cwd[0] = cwd
    return cwd


def _tb_location(tb: TracebackType | None, cwd: str) -> tuple[str | None, Any]:
    """(innermost frame inside cwd as a relative path, the innermost frame of all)."""
    best: str | None = None
    last = None
    cache = _loc_cache
    steps = 0
    while tb is not None and steps < 1000:
        frame = tb.tb_frame
        filename = frame.f_code.co_filename
        rel = cache.get(filename, _MISSING)
        if rel is _MISSING:
            rel = _relative(filename, cwd)
            if len(cache) >= 4096:
                cache.clear()
            cache[filename] = rel
        if rel is not None:
            best = rel  # type: ignore[assignment]
        last = frame
        tb = tb.tb_next
        steps += 1
    return best, last


# [ \t]*, never \s*: under MULTILINE \s* would run across the following blank lines from
# every line start, quadratic in a traceback of blank lines.
_TB_FILE_RE: Final = lazy(r'^[ \t]*File "([^"\n]{1,1000})", line \d+', re.MULTILINE)


def _text_location(traceback: str | None, cwd: str) -> str | None:
    if not traceback:
        return None
    best = None
    for match in _TB_FILE_RE.finditer(traceback[-65536:]):
        rel = _relative(match.group(1), cwd)
        if rel is not None:
            best = rel
    return best


# -- evidence from an exception ------------------------------------------------------------


def _safe_str(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - a __str__ that raises must not break classification
        return ""
    return text if isinstance(text, str) else ""


def _attr(obj: object, name: str) -> Any:
    try:
        return getattr(obj, name, None)
    except Exception:  # noqa: BLE001 - a property of any SDK object may raise
        return None


def _chain(exc: BaseException) -> list[BaseException]:
    links: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while (current is not None and isinstance(current, BaseException)
           and id(current) not in seen and len(links) < MAX_CAUSE_DEPTH):
        seen.add(id(current))
        links.append(current)
        following = _attr(current, "__cause__")
        if following is None and not _attr(current, "__suppress_context__"):
            following = _attr(current, "__context__")
        current = following
    return links


class _Http(NamedTuple):
    status: int | None
    body: object
    headers: Any
    host: str | None
    url: str | None
    content: str | None


def _host_of(url: object) -> str | None:
    host = _attr(url, "host")
    if isinstance(host, str) and host:
        return host
    if isinstance(url, str):
        match = re.match(r"^[a-z][a-z0-9+.-]*://(?:[^@/]*@)?(\[[^\]]*\]|[^:/?#]+)", url)
        return match.group(1) if match else None
    return None


def _http_evidence(exc: BaseException) -> _Http:
    response = _attr(exc, "response")
    status = _attr(exc, "status_code")
    if not (type(status) is int and 100 <= status <= 599):
        status = _attr(response, "status_code")
    if not (type(status) is int and 100 <= status <= 599):
        code = _attr(exc, "code")  # google-genai: APIError.code is the HTTP status
        status = code if type(code) is int and 100 <= code <= 599 else None
    body = _attr(exc, "body")
    if body is None:
        body = _attr(exc, "details")  # google-genai keeps the decoded body in .details
    if body is None and response is not None:
        with contextlib.suppress(Exception):
            text = response.text
            body = text[:65536] if isinstance(text, str) else None
    headers = _attr(response, "headers")
    request = _attr(exc, "request") or _attr(response, "request")
    url = _attr(request, "url")
    content: str | None = None
    raw = _attr(request, "content") if request is not None else None
    if raw is None:
        raw = _attr(request, "body")
    if isinstance(raw, (bytes, bytearray)):
        content = bytes(raw[:65536]).decode("utf-8", "replace")
    elif isinstance(raw, str):
        content = raw[:65536]
    return _Http(status, body, headers, _host_of(url), str(url) if url is not None else None,
                 content)


# -- building ------------------------------------------------------------------------------


class _Plan(NamedTuple):
    """What one chain link says: its strength, the code, params, metadata."""

    strength: int
    code: FC
    params: dict[str, Scalar]
    metadata: dict[str, Scalar]
    surface: str | None
    """The default surface this evidence implies (``llm.openai``, ``http``...)."""
    error_class: str | None = None
    """A refinement of the code's class for this occurrence."""
    location: str | None = None
    """A location the evidence itself names (a command's output), preferred to the frame's."""
    detail: str | None = None
    """A detail the evidence itself gives (the excerpt of a command's output)."""


_STRENGTH: Final = {"unknown": 0, "sdk": 1, "chain": 1, "connection": 2}


def _provider_params(code: FC, provider: str, model: str | None) -> dict[str, Scalar]:
    fields = code.spec.message + (code.spec.remedy or "")
    params: dict[str, Scalar] = {}
    # an unknown provider or model is left out: the code's variant says "the provider"
    if "{provider}" in fields and provider != _NO_PROVIDER:
        params["provider"] = provider
    if "{model}" in fields and model:
        params["model"] = model
    if "{expected}" in fields:
        params["expected"] = "JSON"
    if "{operation}" in fields:
        params["operation"] = provider
    return params


def _http_plan(  # noqa: PLR0917 - private; one call shape shared by every entry point
    rule: Rule, family: str, exc: BaseException | None, text: str, surface: str | None,
    http: _Http | None,
) -> _Plan:
    status = http.status if http is not None else None
    body = http.body if http is not None else None
    if body is None and text:
        body = parse_body_text(text)
    fields = body_fields(body) if body is not None else ErrorFields()
    if status is None:
        status = status_from_text(text) if text else None
    if status is None:
        status = fields.http_status or rule.status
    headers = http.headers if http is not None else None
    delay = header_delay(headers)
    phrase_text = f"{fields.message} {text[:_MAX_TEXT]}" if fields.message else text[:_MAX_TEXT]
    verdict = http_code(status, fields, phrase_text, delay=delay)
    code = rule.code or verdict.code
    if code is FC.SYS_UNKNOWN:
        code = FC.PROV_BAD_REQUEST if status and status < 500 else FC.PROV_SERVER_ERROR
    slug, provider = _provider_of(family, exc, http, surface)
    model = None
    if "{model}" in code.spec.message:
        model = fields.model or model_from_text(
            fields.message, text[:_MAX_TEXT], http.content if http else None,
            http.url if http else None)
    metadata: dict[str, Scalar] = {"rule": verdict.rule if rule.code is None
                                   else f"type:{rule.code.spec.slug}"}
    if status is not None:
        metadata["http_status"] = status
    if fields.provider_code:
        metadata["provider_code"] = redact_cut(fields.provider_code, 120)
    request_id = request_id_header(headers) or fields.request_id or _attr(exc, "request_id")
    if isinstance(request_id, str) and request_id:
        metadata["request_id"] = redact_cut(request_id, 200)
    if delay is None:
        delay = fields.retry_delay_s if fields.retry_delay_s is not None else (
            retry_hint_s(phrase_text))
    if delay is not None:
        metadata["retry_after_s"] = delay
    should = should_retry_header(headers)
    if should is not None:
        metadata["should_retry"] = should
    return _Plan(3, code, _provider_params(code, provider, model), metadata,
                 f"llm.{slug}" if slug else _default_surface(family))


def _default_surface(family: str) -> str | None:
    """The surface a family implies when no provider is named: a gateway's is ``llm``, an
    HTTP client's ``http``."""
    return "llm" if family in _GATEWAY_FAMILIES else (
        "http" if family in _HTTP_FAMILIES else None)


def _sdk_in_traceback(exc: BaseException | None) -> str | None:
    """The SDK family whose code the traceback passes through (google-genai raises httpx's
    own exceptions, unwrapped), or None."""
    tb = _attr(exc, "__traceback__") if exc is not None else None
    steps = 0
    while tb is not None and steps < 200:
        module = tb.tb_frame.f_globals.get("__name__", "")
        if isinstance(module, str) and module.startswith(_SDK_MODULES):
            return _family(module)
        tb = tb.tb_next
        steps += 1
    return None


_SDK_MODULES: Final = tuple(f"{family}." for family in _SDK_SURFACES)


def _provider_of(
    family: str, exc: BaseException | None, http: _Http | None, surface: str | None,
) -> tuple[str | None, str]:
    """(surface slug, provider display name) from the SDK family, host, or surface."""
    explicit = _attr(exc, "llm_provider") if exc is not None else None  # litellm
    if isinstance(explicit, str) and explicit:
        slug = explicit.lower().replace(" ", "_")
        return slug, PROVIDER_NAMES.get(slug, explicit)
    sdk: str | None = _SDK_SURFACES.get(family)
    if sdk is None and family in _HTTP_FAMILIES:
        sdk = _SDK_SURFACES.get(_sdk_in_traceback(exc) or "")
    if sdk is not None:
        return sdk, PROVIDER_NAMES[sdk]
    host_slug, name = provider_from_host(http.host if http else None)
    if host_slug is None and surface is not None and name == "the provider":
        return None, _provider_for_surface(surface)
    return host_slug, name


_PATH_RE: Final = lazy(r"""\[Errno -?\d+\] [^:]{1,200}: ['"]?(.{1,1000}?)['"]?$""")
_ERRNO_RE: Final = lazy(r"\[Errno (-?\d+)\]")
_MODULE_RE: Final = lazy(r"""No module named ['"]?([\w.]{1,200})['"]?""")

_ERRNO_CODES: Final = {
    errno_mod.EACCES: FC.OS_PERMISSION_DENIED, errno_mod.EPERM: FC.OS_PERMISSION_DENIED,
    errno_mod.EROFS: FC.OS_PERMISSION_DENIED, errno_mod.ENOENT: FC.OS_FILE_NOT_FOUND,
    errno_mod.ENOTDIR: FC.OS_FILE_NOT_FOUND, errno_mod.ENOSPC: FC.OS_DISK_FULL,
    errno_mod.EDQUOT: FC.OS_DISK_FULL, errno_mod.ENOMEM: FC.OS_OUT_OF_MEMORY,
}
_ERRNO_TIMEOUT: Final = frozenset({errno_mod.ETIMEDOUT})
_ERRNO_CONN: Final = frozenset({
    errno_mod.ECONNREFUSED, errno_mod.ECONNRESET, errno_mod.ECONNABORTED, errno_mod.EPIPE,
    errno_mod.EHOSTUNREACH, errno_mod.ENETUNREACH, errno_mod.ENETDOWN, errno_mod.EHOSTDOWN,
    errno_mod.ENETRESET,
})


def _os_params(code: FC, exc: BaseException | None, text: str) -> dict[str, Scalar]:
    if code in {FC.OS_PERMISSION_DENIED, FC.OS_FILE_NOT_FOUND}:
        path = _attr(exc, "filename") if exc is not None else None
        if path is None:
            match = _PATH_RE.search(text[:_MAX_TEXT])
            path = match.group(1) if match else None
        if isinstance(path, bytes):
            path = path.decode("utf-8", "replace")
        if path is None:
            return {}  # the code's variant names no path
        path = str(path)[:1000]
        cwd = _loc_cwd[0] or _cwd()
        if cwd != "/" and path.startswith(cwd + "/"):
            # the same file in another checkout or temp dir, and under a temp dir of cwd
            path = strip_temp_dir(path[len(cwd) + 1:]) or path
        return {"path": path}
    return {}


_SPAWNERS: Final = ("subprocess", "asyncio.base_subprocess", "asyncio.unix_events",
                    "asyncio.windows_events", "multiprocessing.popen_fork", "os")


def _missing_program(exc: BaseException | None, last_frame: Any) -> str | None:
    """The program's name when a FileNotFoundError was raised by the process-spawning machinery
    for the program itself (``subprocess.run(["cargo", ...])`` with no cargo), else None: a
    missing data file stays a missing file."""
    if exc is None or last_frame is None:
        return None
    module = last_frame.f_globals.get("__name__", "")
    if not (isinstance(module, str) and module.startswith(_SPAWNERS)):
        return None
    filename = _attr(exc, "filename")
    if isinstance(filename, bytes):
        filename = filename.decode("utf-8", "replace")
    if not isinstance(filename, str) or not filename:
        return None
    return filename.rstrip("/").rsplit("/", 1)[-1][:200] or None


def _operation(family: str, last_frame: Any, type_name: str) -> str:
    if last_frame is not None:
        with contextlib.suppress(Exception):
            module = last_frame.f_globals.get("__name__", "")
            name = last_frame.f_code.co_qualname
            return f"{module}.{name}" if module else str(name)
    if not family or type_name.startswith(f"{family}."):  # ``httpx.ConnectError`` as text
        return type_name
    return f"{family}.{type_name}"


def _type_name(cls: type) -> str:
    module = getattr(cls, "__module__", "") or ""
    family = _family(module)
    return cls.__qualname__ if family == "" else f"{module}.{cls.__qualname__}"


def _plan(  # noqa: PLR0917, PLR0915 - one branch per rule action, the table in one place
    rule: Rule, family: str, exc: BaseException | None, type_name: str, text: str,
    surface: str | None, last_frame: Any,
) -> _Plan:
    """Turn one link's rule into a plan; ``surface`` is the caller's, when given."""
    action = rule.action
    eff_surface = surface
    if action in {"timeout", "connection"}:
        http = _http_evidence(exc) if exc is not None and family in _HTTP_FAMILIES else None
        slug, provider = _provider_of(family, exc, http, surface)
        default = f"llm.{slug}" if slug else (
            "llm" if family in _GATEWAY_FAMILIES else
            "http" if family in _HTTP_FAMILIES else None)
        eff_surface = surface or default or "python"
        timeout = action == "timeout"
        if is_provider_surface(eff_surface):
            code = FC.PROV_TIMEOUT if timeout else FC.PROV_CONNECTION
            known = slug is not None or (http is not None and http.host is not None)
            name = provider if known else _provider_for_surface(eff_surface)
            params: dict[str, Scalar] = {} if name == _NO_PROVIDER else {"provider": name}
        else:
            code = FC.OS_TIMEOUT if timeout else FC.OS_CONNECTION
            host = http.host if http is not None else None
            params = {"operation": f"http {host}" if host else _operation(family, last_frame,
                                                                          type_name)}
        metadata: dict[str, Scalar] = {"rule": f"type:{action}"}
        err = _attr(exc, "errno")
        if type(err) is int:
            metadata["errno"] = err
        return _Plan(_STRENGTH.get(action, 3), code, params, metadata, default)
    if action == "http":
        http = _http_evidence(exc) if exc is not None else None
        return _http_plan(rule, family, exc, text, surface, http)
    if action == "process":
        return _process_plan(exc, text)
    if action == "sdk":
        slug, provider = _provider_of(family, exc, None, surface)
        verdict = http_code(None, ErrorFields(), text[:_MAX_TEXT])
        if verdict.code is not FC.SYS_UNKNOWN:
            return _Plan(2, verdict.code, _provider_params(verdict.code, provider, None),
                         {"rule": verdict.rule}, f"llm.{slug}" if slug else None)
        return _Plan(1, FC.SYS_UNKNOWN, _unknown_params(type_name, text), {"rule": "type:sdk"},
                     f"llm.{slug}" if slug else None)
    if action == "oserror":
        err = _attr(exc, "errno") if exc is not None else None
        if type(err) is not int:
            match = _ERRNO_RE.search(text[:_MAX_TEXT])
            err = int(match.group(1)) if match else None
        if type(err) is int:
            errno_code = _ERRNO_CODES.get(err)
            if errno_code is not None:
                return _Plan(3, errno_code, _os_params(errno_code, exc, text),
                             {"rule": "errno", "errno": err}, None)
            if err in _ERRNO_TIMEOUT or err in _ERRNO_CONN:
                sub = _TIMEOUT if err in _ERRNO_TIMEOUT else _CONN
                return _plan(sub, family, exc, type_name, text, surface, last_frame)
        return _Plan(0, FC.SYS_UNKNOWN, _unknown_params(type_name, text), {"rule": "none"},
                     None)
    if action == "code":
        code = rule.code or FC.SYS_UNKNOWN
        slug, provider = _provider_of(family, exc, None, surface)
        metadata = {"rule": f"type:{code.spec.slug}"}
        if code is FC.OS_FILE_NOT_FOUND:
            program = _missing_program(exc, last_frame)
            if program is not None:
                return _Plan(3, FC.CMD_NOT_FOUND, {"program": program},
                             {"rule": "type:command-not-found", "errno": errno_mod.ENOENT},
                             None)
        if code.name.startswith("OS_"):
            err = _attr(exc, "errno")
            if type(err) is int:
                metadata["errno"] = err
            return _Plan(3, code, _os_params(code, exc, text), metadata, None)
        if code is FC.DATA_INVALID_INPUT:
            return _Plan(3, code, {"problem": text.strip()[:300] or type_name}, metadata, None)
        return _Plan(3, code, _provider_params(code, provider, None), metadata,
                     f"llm.{slug}" if slug else _default_surface(family))
    if action == "module":
        found = _attr(exc, "name") if exc is not None else None
        if not isinstance(found, str) or not found:
            match = _MODULE_RE.search(text[:_MAX_TEXT])
            found = match.group(1) if match else None
        return _Plan(3, FC.CMD_MISSING_MODULE, {"module": found} if found else {},
                     {"rule": "type:module"}, None)
    if action == "import":
        # "cannot import name 'X' from 'Y' (path)": an installed library (or the standard
        # library) without the name is an incompatible dependency; the project's own module
        # without it is the code's own mistake, unclassified as before
        library = import_from_library(text)
        if library is not None:
            return _Plan(3, FC.CMD_INCOMPATIBLE_DEPENDENCY,
                         {"module": library[0], "name": library[1]},
                         {"rule": "type:import+library"}, None)
        return _Plan(0, FC.SYS_UNKNOWN, _unknown_params(type_name, text), {"rule": "none"},
                     None)
    if action == "validation":
        problem, title = _validation_problem(exc, text)
        if surface is not None and is_model_output_surface(surface):
            return _Plan(3, FC.PROV_MALFORMED_OUTPUT, {"expected": title or "the schema"},
                         {"rule": "type:validation+output"}, None)
        return _Plan(3, FC.DATA_INVALID_INPUT, {"problem": problem}, {"rule": "type:validation"},
                     None)
    if action == "json":
        if surface is not None and is_model_output_surface(surface):
            return _Plan(3, FC.PROV_MALFORMED_OUTPUT, {"expected": "JSON"},
                         {"rule": "type:json+output"}, None)
        return _Plan(0, FC.SYS_UNKNOWN, _unknown_params(type_name, text), {"rule": "type:json"},
                     None)
    if action == "chain":
        code = rule.code or FC.SYS_UNKNOWN
        slug, provider = _provider_of(family, exc, None, surface)
        http_status = status_from_text(text) if text else None
        if http_status is not None:
            return _http_plan(_http(http_status), family, None, text, surface, None)
        return _Plan(1, code, _provider_params(code, provider, None), {"rule": "type:chain"},
                     f"llm.{slug}" if slug else ("http" if family in _HTTP_FAMILIES else None))
    return _Plan(0, FC.SYS_UNKNOWN, _unknown_params(type_name, text), {"rule": "none"}, None)


def _unknown_params(type_name: str, text: str) -> dict[str, Scalar]:
    """An unclassified failure keeps its type and its message (redacted by the factory), so two
    different errors of one type are two signatures and the user sees what went wrong."""
    error = text.strip()[:_MAX_TEXT]
    return {"exception": type_name, "error": error} if error else {"exception": type_name}


# -- a command that exited non-zero ---------------------------------------------------------

# str(CalledProcessError): "Command '<cmd>' returned non-zero exit status N." or "... died with
# <Signals.SIGKILL: 9>."
_CALLED_PROCESS_RE: Final = lazy(
    r"Command (?P<q>['\"])(?P<cmd>.*)(?P=q) (?:returned non-zero exit status (?P<status>-?\d+)"
    r"|died with <Signals\.\w+: (?P<signal>\d+)>)", re.DOTALL)


_FC_BY_CODE: Final = {member.value: member for member in FC}


def _argv_of(cmd: object) -> str | list[str]:
    """A command as ``subprocess`` was given it (a str, bytes, path or a sequence of them)."""
    if isinstance(cmd, str | bytes | os.PathLike):
        return os.fsdecode(cmd)
    try:
        return [os.fsdecode(a) if isinstance(a, str | bytes | os.PathLike) else str(a)
                for a in cmd]  # type: ignore[attr-defined]
    except TypeError:
        return str(cmd)


def _command_from_text(text: str) -> tuple[str | list[str], int] | None:
    """(argv, exit status) from a CalledProcessError's message; a signal N is -N."""
    found = _CALLED_PROCESS_RE.search(text[:_MAX_TEXT])
    if found is None:
        return None
    shown = found.group("cmd")
    argv: str | list[str] = shown
    if shown.startswith(("[", "(")):
        with contextlib.suppress(ValueError, SyntaxError, MemoryError, RecursionError):
            value = ast.literal_eval(shown)
            if isinstance(value, list | tuple):
                argv = _argv_of(value)
    status = found.group("status")
    return argv, int(status) if status is not None else -int(found.group("signal"))


def _process_plan(exc: BaseException | None, text: str) -> _Plan:
    """A command that exited non-zero, classified by its output as a shell step would be."""
    if exc is not None:
        argv: str | list[str] = _argv_of(_attr(exc, "cmd"))
        status = _attr(exc, "returncode")
        stdout, stderr = _attr(exc, "stdout"), _attr(exc, "stderr")
    else:
        parsed = _command_from_text(text)
        if parsed is None:
            return _Plan(0, FC.SYS_UNKNOWN, _unknown_params("subprocess.CalledProcessError", text),
                         {"rule": "none"}, None)
        (argv, status), stdout, stderr = parsed, None, None
    status = status if type(status) is int else None
    result = from_command(argv or "sh", status, _output(stdout), _output(stderr), cwd=_cwd())
    if isinstance(result, Failure):
        metadata = {**result.metadata, "rule": "type:called-process"}
        return _Plan(3, _FC_BY_CODE[result.code], dict(result.params), metadata, result.surface,
                     result.error_class, result.location, result.detail)
    # a probe that found nothing, an interrupted child, a status 0: the caller demanded success
    first = (argv.split() or ["sh"])[0] if isinstance(argv, str) else (argv or ["sh"])[0]
    program = PurePath(first).name or "sh"
    return _Plan(3, FC.CMD_FAILED,
                 {"program": program[:64], "exit_code": "unknown" if status is None else status},
                 {"rule": "type:called-process"}, "shell.run")


def _output(value: object) -> str | bytes:
    return value if isinstance(value, str | bytes) else ""


# -- defects (the agent is wrong) ---------------------------------------------------

_DEFECT_ALWAYS: Final = frozenset({"AssertionError"})
_DEFECT_IN_OWN_CODE: Final = frozenset({
    "TypeError", "AttributeError", "KeyError", "IndexError", "NameError", "UnboundLocalError",
    "ZeroDivisionError", "RecursionError"})
_INVARIANT_RE: Final = lazy(
    r"(?:Invariant|Contract|Precondition|Postcondition)\w*(?:Error|Violation|Failure)$"
    r"|ViolationError$")
_MAX_FRAMES: Final = 10
_DEFECT_CLASSES: Final = {
    "AssertionError": "assertion_failed", "TypeError": "type_error",
    "AttributeError": "attribute_error", "KeyError": "key_error", "IndexError": "index_error",
    "NameError": "name_error", "UnboundLocalError": "unbound_local",
    "ZeroDivisionError": "zero_division", "RecursionError": "recursion_error"}


def _defect_name(names: list[str]) -> str | None:
    """The defect type among an exception's MRO names (own type first), or None."""
    for name in names:
        if name in _DEFECT_ALWAYS or _INVARIANT_RE.search(name):
            return name
    return None


def _frames_of_tb(tb: TracebackType | None) -> list[tuple[str, str, str]]:
    """(filename, module, function) of every frame, outermost first (bounded)."""
    frames: list[tuple[str, str, str]] = []
    steps = 0
    while tb is not None and steps < 1000:
        frame = tb.tb_frame
        module = frame.f_globals.get("__name__", "")
        frames.append((frame.f_code.co_filename, module if isinstance(module, str) else "",
                       frame.f_code.co_name))
        tb = tb.tb_next
        steps += 1
    return frames


_TB_FRAME_RE: Final = lazy(  # [ \t]*, never \s*: see _TB_FILE_RE
    r'^[ \t]*File "([^"\n]{1,1000})", line \d+, in ([^\s]{1,200})', re.MULTILINE)


def _frames_of_text(traceback: str | None) -> list[tuple[str, str, str]]:
    """(filename, module, function) of each ``File`` line of a formatted traceback; a text
    traceback names no module, so the file's name stands for it (a frozen standard module,
    ``<frozen os>``, names itself)."""
    if not traceback:
        return []
    frames = []
    for match in _TB_FRAME_RE.finditer(traceback[-65536:]):
        filename = match.group(1)
        if filename.startswith("<frozen ") and filename.endswith(">"):
            module = filename[len("<frozen "):-1]
        else:
            module = filename.rsplit("/", 1)[-1].removesuffix(".py")
        frames.append((filename, module, match.group(2)))
    return frames


def _defect_plan(exc_names: list[str], type_name: str, text: str,
                 frames: list[tuple[str, str, str]], cwd: str) -> _Plan | None:
    """The defect plan when the rule holds: an AssertionError or a failing invariant anywhere;
    a TypeError, AttributeError, KeyError, IndexError, NameError (UnboundLocalError),
    ZeroDivisionError or RecursionError whose innermost frame is the caller's own code (a file
    under the working directory, not vendored). Before it: a KeyError raised by
    ``os.environ[...]`` is a missing environment variable."""
    env = _env_var_plan(exc_names, text, frames)
    if env is not None:
        return env
    defect = _defect_name(exc_names)
    if defect is None:
        own = next((name for name in exc_names if name in _DEFECT_IN_OWN_CODE), None)
        if own is None or not frames or _relative(frames[-1][0], cwd) is None:
            return None
        defect = own
    where = [f"{module}:{function}" for _file, module, function in frames[-_MAX_FRAMES:]]
    params: dict[str, Scalar] = {"function": where[-1] if where else "the top level",
                                 "exception": type_name}
    error = text.strip()[:_MAX_TEXT]
    if error:
        params["error"] = error
    metadata: dict[str, Scalar] = {"rule": f"defect:{defect}"}
    if where:
        metadata["frames"] = " > ".join(where)
    return _Plan(3, FC.SYS_DEFECT, params, metadata, None,
                 _DEFECT_CLASSES.get(defect, "invariant_failed"))


_ENV_NAME_RE: Final = lazy(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


def _env_var_plan(exc_names: list[str], text: str,
                  frames: list[tuple[str, str, str]]) -> _Plan | None:
    """A KeyError raised by ``os.environ[name]`` (its innermost frame is ``os``'s
    ``__getitem__``) is the environment variable ``name`` not being set."""
    if "KeyError" not in exc_names or not frames or frames[-1][1:] != ("os", "__getitem__"):
        return None
    name = text.strip().strip("'\"")
    if _ENV_NAME_RE.fullmatch(name) is None:
        return None
    return _Plan(3, FC.CFG_MISSING_ENV_VAR, {"name": name}, {"rule": "type:missing-env-var"},
                 None)


# A provider call that failed before any request because a credentials file is missing
# (Vertex AI's application-default credentials, AWS's shared credentials file) is an
# environment failure, whatever exception type the SDK or gateway wrapped it in.
_CREDENTIALS_FILE_RE: Final = lazy(
    r"(?:credentials?|key) file (?:['\"`]?(?P<p1>[^\s'\"`]{1,300})['\"`]? )?"
    r"(?:(?:was |is )?not found|does not exist|is missing|(?:could|can)not be (?:found|read))"
    r"|(?:could not|cannot|unable to) (?:find|load|read|open) (?:the )?(?:default )?"
    r"credentials? file(?::? ['\"`]?(?P<p2>[^\s'\"`]{1,300}))?"
    r"|File ['\"`]?(?P<p3>[^\s'\"`]{1,300}credentials[^\s'\"`]{0,100})['\"`]? was not found",
    re.IGNORECASE,
)
_CREDENTIAL_CODES: Final = frozenset({
    FC.PROV_SERVER_ERROR, FC.PROV_BAD_REQUEST, FC.PROV_AUTH, FC.PROV_CONNECTION,
    FC.SYS_UNKNOWN, FC.OS_FILE_NOT_FOUND,
})


def _credentials_file(plan: _Plan, text: str) -> _Plan:
    """A missing credentials file named in the message wins over a generic provider row."""
    if plan.code not in _CREDENTIAL_CODES:
        return plan
    if text.isascii():
        # ASCII text matches only through these words (case folds are ASCII there); other
        # text goes to the pattern, whose case folding also pairs "i" with a dotless one
        low = text[:_MAX_TEXT].lower()
        if "credential" not in low and "key file" not in low:
            return plan
    match = _CREDENTIALS_FILE_RE.search(text[:_MAX_TEXT])
    if match is None:
        return plan
    raw = match.group("p1") or match.group("p2") or match.group("p3") or "credentials file"
    path = raw.rstrip(".,;:)")[:200] or "credentials file"
    metadata = {**plan.metadata, "rule": "phrase:credentials_file"}
    return _Plan(3, FC.CFG_MISSING_CREDENTIALS_FILE, {"path": path}, metadata, plan.surface)


def _validation_problem(exc: BaseException | None, text: str) -> tuple[str, str | None]:
    """(``loc: msg`` of the first error, the model's title) of a pydantic ValidationError."""
    title = _attr(exc, "title") if exc is not None else None
    with contextlib.suppress(Exception):
        errors = exc.errors() if exc is not None else None  # type: ignore[attr-defined]
        if errors:
            first = errors[0]
            loc = ".".join(str(part) for part in first.get("loc", ()))
            msg = str(first.get("msg", ""))
            return (f"{loc}: {msg}" if loc else msg) or "invalid input", (
                title if isinstance(title, str) else None)
    # text form: "1 validation error for Task\ngoal\n  Field required [type=missing, ..."
    lines = [line for line in text[:_MAX_TEXT].splitlines() if line.strip()]
    found: str | None
    if isinstance(title, str):
        found = title
    else:
        match = re.match(r"\d+ validation errors? for (\S+)", lines[0] if lines else "")
        found = match.group(1) if match else None
    if len(lines) >= 3:
        msg = lines[2].strip().split(" [type=", 1)[0]
        return f"{lines[1].strip()}: {msg}", found
    return (lines[0].strip() if lines else "invalid input"), found


# -- entry points --------------------------------------------------------------------------

_FALLBACK_SURFACE: Final = "python"


def _build(  # noqa: PLR0917 - private helper of the three entry points
    plan: _Plan, surface: str | None, location: str | None, cause: BaseException | None,
    context: Mapping[str, Scalar] | None, detail: str | None = None,
) -> Failure:
    surface = surface or plan.surface or _FALLBACK_SURFACE
    try:
        return plan.code.failure(surface=surface, params=plan.params, location=location,
                                 cause=cause, context=context, metadata=plan.metadata,
                                 detail=detail, error_class=plan.error_class)
    except Exception as exc:  # noqa: BLE001 - never raise: degrade step by step
        note = redact_cut(f"{type(exc).__name__}: {_safe_str(exc)}", 300)
    try:
        return plan.code.failure(surface=surface, params=plan.params, location=None,
                                 cause=cause, metadata={**plan.metadata,
                                                        "classify_error": note})
    except Exception:  # noqa: BLE001
        return _last_resort(surface, plan.code)


def _last_resort(surface: str, code: FC) -> Failure:
    """A Failure that cannot fail to build (fixed params, no cause, no context)."""
    try:
        return FC.SYS_UNKNOWN.failure(surface=surface, params={"exception": "exception"},
                                      metadata={"classify_error": f"could not build {code}"})
    except Exception:  # noqa: BLE001
        return FC.SYS_UNKNOWN.failure(surface=_FALLBACK_SURFACE,
                                      params={"exception": "exception"})


def _merge_context(failure: Failure, context: Mapping[str, Scalar] | None) -> Failure:
    if not context:
        return failure
    try:
        merged = FrozenDict({**failure.context, **redact_mapping(context)})
        return msgspec.structs.replace(failure, context=merged)
    except Exception:  # noqa: BLE001 - an invalid context leaves the record as it was
        return failure


def classify(
    exc: BaseException,
    *,
    surface: str | None = None,
    context: Mapping[str, Scalar] | None = None,
) -> Failure | NonErrorOutcome:
    """Classify a live exception into a :class:`~failcode.Failure`, or a Cancelled outcome.

    Args:
        exc: the exception, caught (its traceback gives the location).
        surface: where it happened (``llm.complete``, ``repo.read``); default from the
            exception (``llm.openai`` for an openai SDK error, ``http``, else ``python``).
        context: session, step... copied into the record's ``context``.

    Returns:
        A Failure per the module's table; :class:`~failcode.Cancelled` for
        ``KeyboardInterrupt`` and ``asyncio.CancelledError``; a
        :class:`~failcode.RejectedAction` for a pydantic ValidationError on a tool-argument
        surface (the model proposed invalid arguments: fed back to it, not an error); a
        :class:`~failcode.FailureError`'s own Failure (``context`` merged in).

    Never raises: anything unexpected degrades to ``FC.SYS_UNKNOWN`` (with
    ``metadata["classify_error"]`` when building the richer record failed).
    """
    clean_surface = _clean_surface(surface)
    try:
        return _classify(exc, clean_surface, context)
    except Exception as error:  # noqa: BLE001 - the contract: never raise
        note = redact_cut(f"{type(error).__name__}: {_safe_str(error)}", 300)
        try:
            return FC.SYS_UNKNOWN.failure(
                surface=clean_surface or _FALLBACK_SURFACE,
                params={"exception": _type_name(type(exc))},
                metadata={"classify_error": note})
        except Exception:  # noqa: BLE001
            return _last_resort(clean_surface or _FALLBACK_SURFACE, FC.SYS_UNKNOWN)


def _classify(
    exc: BaseException, surface: str | None, context: Mapping[str, Scalar] | None,
) -> Failure | NonErrorOutcome:
    if not isinstance(exc, BaseException):
        return _build(_Plan(0, FC.SYS_UNKNOWN, {"exception": type(exc).__name__},
                            {"rule": "not_an_exception"}, None), surface, None, None, context)
    if isinstance(exc, FailureError):
        return _merge_context(exc.failure, context)
    cls = type(exc)
    rule, family = _rule_for_type(cls)
    if rule.action == "cancel":
        reason = redact_cut(_safe_str(exc), 300) or _type_name(cls)
        return Cancelled(reason=reason, signal=2 if cls is KeyboardInterrupt else None,
                         context=FrozenDict(redact_mapping(context)) if context else FrozenDict())
    cwd = _cwd()
    location, last_frame = _tb_location(exc.__traceback__, cwd)
    text = _safe_str(exc)
    if rule.action == "validation" and surface is not None and is_tool_argument_surface(surface):
        return _rejected(exc, text, surface, context)
    if rule.action == "unknown" and _duck_status(exc):
        rule = _HTTP
    best = _plan(rule, family, exc, _type_name(cls), text, surface, last_frame)
    if rule.action == "unknown":
        names = [base.__name__ for base in getattr(cls, "__mro__", (cls,))]
        # the frames matter only when a name can make it a defect (_defect_plan's first test)
        if _defect_name(names) is not None or not _DEFECT_IN_OWN_CODE.isdisjoint(names):
            defect = _defect_plan(names, _type_name(cls), text,
                                  _frames_of_tb(exc.__traceback__), cwd)
            if defect is not None:
                return _build(defect, surface, location, exc, context)
    if best.strength < 3 and (exc.__cause__ is not None or exc.__context__ is not None):
        for link in _chain(exc)[1:]:
            if isinstance(link, FailureError):
                return _merge_context(link.failure, context)
            link_cls = type(link)
            link_rule, link_family = _rule_for_type(link_cls)
            if link_rule.action == "cancel":
                continue
            if link_rule.action == "unknown" and _duck_status(link):
                link_rule = _HTTP
            if _STRENGTH.get(link_rule.action, 3) <= best.strength:
                continue
            link_loc, link_last = _tb_location(link.__traceback__, cwd)
            candidate = _plan(link_rule, link_family, link, _type_name(link_cls),
                              _safe_str(link), surface, link_last)
            if candidate.strength > best.strength:
                best = candidate
                location = location or link_loc
            if best.strength >= 3:
                break
        if best.code is FC.SYS_UNKNOWN:
            best = best._replace(params=_unknown_params(_type_name(cls), text))
    best = _credentials_file(best, text)
    best = _local_module(best, [frame[0] for frame in _frames_of_tb(exc.__traceback__)])
    return _build(best, surface, best.location or location, exc, context, detail=best.detail)


def _duck_status(exc: BaseException) -> bool:
    """An unknown type that carries an HTTP status (``status_code`` or ``response``) is a
    provider error of an SDK failcode has no row for (mistralai, cohere, a gateway)."""
    status = _attr(exc, "status_code")
    if not (type(status) is int and 400 <= status <= 599):
        status = _attr(_attr(exc, "response"), "status_code")
    return type(status) is int and 400 <= status <= 599


def classify_text(
    type_name: str,
    message: str,
    *,
    traceback: str | None = None,
    surface: str | None = None,
) -> Failure | Cancelled | RejectedAction:
    """Classify an exception known only as text: a log line, a transcript, a service request.

    Uses the same rule table as :func:`classify`, by type name (``openai.RateLimitError``,
    ``builtins.TimeoutError``, ``RateLimitError``); a JSON body (or the SDKs' dict repr of it)
    in ``message`` is parsed for the structured fields.

    Args:
        type_name: the exception's type name, qualified or not.
        message: its message (``str(exc)``), any length (only the start is read).
        traceback: the formatted traceback, if any, for the location (the innermost
            ``File "..."`` line inside the working directory).
        surface: as for :func:`classify`.

    Returns:
        A Failure; a :class:`~failcode.Cancelled` for ``KeyboardInterrupt`` /
        ``CancelledError`` text; a :class:`~failcode.RejectedAction` for a validation error
        of tool arguments (as :func:`classify`). Never raises.
    """
    clean_surface = _clean_surface(surface)
    try:
        if isinstance(message, bytes):
            message = message[:262144].decode("utf-8", "replace")
        if not isinstance(message, str):
            message = ""
        if not isinstance(type_name, str):
            type_name = ""
        name = type_name.strip()[:200] or "Exception"
        rule, family = _rule_for_name(name)
        text = message[:262144]
        if rule.action == "cancel":
            return Cancelled(reason=redact_cut(text.strip(), 300) or name,
                             signal=2 if name.endswith("KeyboardInterrupt") else None)
        if (rule.action == "validation" and clean_surface is not None
                and is_tool_argument_surface(clean_surface)):
            return _rejected(None, text, clean_surface, None)
        if rule.action == "unknown" and clean_surface and is_provider_surface(clean_surface):
            # a provider's error under a type no row knows (a JS SDK's ``APIError`` as an agent
            # kept it): read like the SDKs' own base types, by the status the text states,
            # else by its wording
            rule = _HTTP if status_from_text(text) is not None else _SDK
        plan = _credentials_file(_plan(rule, family, None, name, text, clean_surface, None),
                                 text)
        plan = _local_module(plan, [frame[0] for frame in _frames_of_text(traceback)])
        cwd = _cwd()
        location = _text_location(traceback, cwd)
        if rule.action == "unknown":
            defect = _defect_plan([name.rsplit(".", 1)[-1]], name, text,
                                  _frames_of_text(traceback), cwd)
            plan = defect or plan
        return _build(plan, clean_surface, plan.location or location, None, None,
                      detail=plan.detail or f"{name}: {redact_cut(text, 1000, ' …')}")
    except Exception as error:  # noqa: BLE001 - the contract: never raise
        note = redact_cut(f"{type(error).__name__}: {_safe_str(error)}", 300)
        try:
            return FC.SYS_UNKNOWN.failure(surface=clean_surface or _FALLBACK_SURFACE,
                                          params={"exception": str(type_name)[:100] or "?"},
                                          metadata={"classify_error": note})
        except Exception:  # noqa: BLE001
            return _last_resort(clean_surface or _FALLBACK_SURFACE, FC.SYS_UNKNOWN)


def classify_http(
    status: int,
    body: object = None,
    headers: Mapping[str, str] | None = None,
    *,
    surface: str | None = None,
) -> Failure:
    """Classify a raw provider HTTP response (a gateway, a proxy, a hand-rolled client).

    Args:
        status: the HTTP status.
        body: the decoded JSON body, or its text or bytes.
        headers: the response headers (any mapping; names matched case-insensitively).
        surface: e.g. ``llm.openai``; default ``llm.<slug>`` when the body's shape names the
            provider (Anthropic's ``{"type": "error"}``, Google's ``status``), else ``llm``.

    Returns:
        A Failure of the PROV rows. Never raises.
    """
    clean_surface = _clean_surface(surface)
    try:
        lowered: dict[str, str] | None = None
        if headers:
            lowered = {}
            for index, (key, value) in enumerate(dict(headers).items()):
                if index >= 200:
                    break
                if isinstance(key, str) and isinstance(value, str):
                    lowered[key.lower()] = value
        if isinstance(body, (bytes, bytearray)):
            body = bytes(body[:262144]).decode("utf-8", "replace")
        text = body[:_MAX_TEXT] if isinstance(body, str) else ""
        code = status if type(status) is int and 100 <= status <= 599 else None
        http = _Http(code, body, lowered, None, None, None)
        family = _shape_family(body, lowered)
        plan = _http_plan(_HTTP, family, None, text, clean_surface, http)
        if plan.surface is None:
            plan = plan._replace(surface="llm")
        return _build(plan, clean_surface, None, None, None)
    except Exception as error:  # noqa: BLE001 - the contract: never raise
        note = redact_cut(f"{type(error).__name__}: {_safe_str(error)}", 300)
        try:
            return FC.SYS_UNKNOWN.failure(surface=clean_surface or "llm",
                                          params={"exception": f"HTTP {status!r}"[:100]},
                                          metadata={"classify_error": note})
        except Exception:  # noqa: BLE001
            return _last_resort(clean_surface or "llm", FC.SYS_UNKNOWN)


def _shape_family(body: object, headers: Mapping[str, str] | None) -> str:
    """Which SDK family a raw body looks like it came from ("" when unsure)."""
    if isinstance(body, str):
        body = parse_body_text(body)
    if isinstance(body, list) and body:
        body = body[0]
    if headers and ("anthropic-organization-id" in headers or "anthropic-ratelimit-requests-limit"
                    in headers):
        return "anthropic"
    if headers and ("openai-organization" in headers or "openai-processing-ms" in headers):
        return "openai"
    if isinstance(body, dict):
        if body.get("type") == "error" and isinstance(body.get("error"), dict):
            return "anthropic"
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("status"), str) \
                and type(error.get("code")) is int:
            return "google.genai"
    return ""


def _local_module(plan: _Plan, frames: list[str]) -> _Plan:
    """A missing module the project itself would provide is the code's mistake, not a package
    to install: ``FC.CMD_LOCAL_MODULE_MISSING`` (the rule: ``is_local_module``, from the name
    and the traceback's files alone)."""
    if plan.code is not FC.CMD_MISSING_MODULE:
        return plan
    module = plan.params.get("module")
    if not isinstance(module, str) or not is_local_module(module, frames):
        return plan
    return plan._replace(code=FC.CMD_LOCAL_MODULE_MISSING, params={"module": module},
                         metadata={**plan.metadata, "rule": "type:module+local"})

