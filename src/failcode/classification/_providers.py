"""Provider responses: structured error fields, server-directed delays, the HTTP rule table.

Used by the ``_classify`` module for live SDK exceptions, for exceptions known only as text,
and for raw responses (:func:`failcode.classify_http`). Nothing here imports a provider SDK:
bodies are plain JSON values (or the SDKs' ``str(exc)`` renderings of them) and headers are
any mapping with ``get``.

Structured fields decide first: the HTTP status, OpenAI's ``error.code`` / ``error.type``,
Anthropic's ``error.type`` and ``error.details.error_code``, Google's ``error.status``,
``ErrorInfo.reason``, ``QuotaFailure`` and ``RetryInfo.retryDelay``. Message phrases are only a
fallback, each an anchored regular expression (word boundaries that treat ``_`` as part of a
word, so ``_litellm_rate_limit_descriptors`` is no rate limit), and a bare number in a message is
never read as a status: only ``Error code: 429``, ``status 429``, ``HTTP 429`` or a leading
``429 RESOURCE_EXHAUSTED.`` are.

Configuration is never an outage: gateways (a LiteLLM proxy, OpenRouter, an AI gateway) answer
a request they could not send with any status. Missing credentials (``Missing credentials``,
``No API key``, ``api_key client option must be set``, an ``AuthenticationError`` inside a 500
body) are ``FC.PROV_AUTH`` under a 4xx or a 5xx; a model the provider does not know or the
gateway cannot route (``The model `x` does not exist``, ``Invalid model name passed in
model=x``, ``LLM Provider NOT provided``, ``No endpoints found for x``, ``Unable to route
request``) is ``FC.PROV_MODEL_NOT_FOUND``. Under a 5xx only the unambiguous words count
("model x is not available" there may be a passing outage).

A key or plan without access to a model (litellm's proxy "Key does not have access to the
model", "not available on your plan", "requires a higher tier") is ``FC.PROV_PERMISSION``,
before the model-name phrases: the name is right, the account may not use it. A gateway's or
safety system's "Your request was blocked" is ``FC.PROV_CONTENT_FILTERED``. A stream the
client could not parse (litellm's "Error parsing chunk", "Failed to parse streaming chunk") is
the provider's answer gone wrong, ``FC.PROV_SERVER_ERROR``. With no status, no code and none
of those phrases, a request that timed out ("Request timed out.", ``ETIMEDOUT``) is
``FC.PROV_TIMEOUT`` and one that lost its connection ("fetch failed", ``ECONNRESET``, "socket
hang up") ``FC.PROV_CONNECTION``, before the generic server-error words.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from failcode._lazy_re import lazy
from failcode.codes._catalog import FC

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "PROVIDER_NAMES",
    "ErrorFields",
    "body_fields",
    "header_delay",
    "http_code",
    "model_from_text",
    "parse_body_text",
    "provider_from_host",
    "status_from_text",
]

# -- providers ----------------------------------------------------------------------------

PROVIDER_NAMES: Final = {
    "openai": "OpenAI",
    "anthropic": "Anthropic",
    "gemini": "Google Gemini",
}
"""Surface slug (``llm.<slug>``) -> the provider's display name in ``params["provider"]``."""

_HOSTS: Final = {
    "api.openai.com": "openai",
    "api.anthropic.com": "anthropic",
    "generativelanguage.googleapis.com": "gemini",
}

SHORT_RETRY_S: Final = 120.0
"""A server-directed delay up to this long marks a rate-limit window, longer a quota wall
(the openai SDK refuses Retry-After above 120 s for the same reason)."""

_MAX_BODY_CHARS: Final = 65536
"""Bodies longer than this are not parsed (only their first phrase-matching window is read)."""
_MAX_DETAILS: Final = 16


def provider_from_host(host: str | None) -> tuple[str | None, str]:
    """``(slug, display name)`` for a request host: a known API host or the host itself."""
    if not host:
        return None, "the provider"
    host = host.lower()
    slug = _HOSTS.get(host)
    if slug is not None:
        return slug, PROVIDER_NAMES[slug]
    return None, host


# -- structured fields ----------------------------------------------------------------------


class ErrorFields(NamedTuple):
    """What a provider's error body says, structured; every field may be missing."""

    code: str | None = None
    """OpenAI ``error.code``, Anthropic ``error.details.error_code``, an OAuth ``error``."""
    type: str | None = None
    """OpenAI / Anthropic ``error.type``."""
    status: str | None = None
    """Google ``error.status`` (``RESOURCE_EXHAUSTED``...)."""
    http_status: int | None = None
    """A numeric status inside the body (Google ``error.code``)."""
    message: str = ""
    param: str | None = None
    reasons: tuple[str, ...] = ()
    """Google ``ErrorInfo.reason`` values (``API_KEY_INVALID``...)."""
    quota_ids: tuple[str, ...] = ()
    """Google ``QuotaFailure`` violation quota ids; non-empty means a quota failure."""
    quota_failure: bool = False
    retry_delay_s: float | None = None
    """Google ``RetryInfo.retryDelay`` in seconds."""
    request_id: str | None = None
    model: str | None = None
    """A model named in the body (Google ``quotaDimensions.model``)."""

    @property
    def provider_code(self) -> str | None:
        """The most specific code: error code, then Google reason, then type or status."""
        return self.code or (self.reasons[0] if self.reasons else None) or self.type or self.status


_EMPTY_FIELDS: Final = ErrorFields()


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _duration_s(value: object) -> float | None:
    """A Google Duration: ``"18s"``, ``"1.5s"`` or ``{"seconds": 18, "nanos": 0}``."""
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d{1,9}(?:\.\d{1,9})?)s\s*", value)
        return float(match.group(1)) if match else None
    if isinstance(value, dict):
        seconds, nanos = value.get("seconds", 0), value.get("nanos", 0)
        with contextlib.suppress(TypeError, ValueError, OverflowError):
            return float(seconds) + float(nanos) / 1e9
    return None


def _google_details(details: object) -> dict[str, Any]:
    out: dict[str, Any] = {"reasons": [], "quota_ids": [], "quota_failure": False}
    if not isinstance(details, list):
        return out
    for item in details[:_MAX_DETAILS]:
        if not isinstance(item, dict):
            continue
        kind = str(item.get("@type", ""))
        if kind.endswith("google.rpc.ErrorInfo"):
            reason = _text(item.get("reason"))
            if reason:
                out["reasons"].append(reason)
        elif kind.endswith("google.rpc.RetryInfo"):
            out["retry_delay_s"] = _duration_s(item.get("retryDelay"))
        elif kind.endswith("google.rpc.QuotaFailure"):
            out["quota_failure"] = True
            violations = item.get("violations")
            for violation in violations[:_MAX_DETAILS] if isinstance(violations, list) else ():
                if not isinstance(violation, dict):
                    continue
                quota_id = _text(violation.get("quotaId"))
                if quota_id:
                    out["quota_ids"].append(quota_id)
                dims = violation.get("quotaDimensions")
                if isinstance(dims, dict) and _text(dims.get("model")):
                    out["model"] = dims["model"]
    return out


def body_fields(body: object) -> ErrorFields:
    """Read the structured error fields of a decoded body (dict, list of one dict, or text).

    Knows OpenAI's ``{"error": {"message", "type", "param", "code"}}``, Anthropic's
    ``{"type": "error", "error": {"type", "message", "details": {"error_code"}}}``, Google's
    ``{"error": {"code", "message", "status", "details": [...]}}``, OAuth's
    ``{"error": "...", "error_description": "..."}`` and flat ``{"message", "code"}`` bodies.
    Never raises; an unknown shape gives empty fields.
    """
    try:
        return _body_fields(body)
    except Exception:  # noqa: BLE001 - a body of any shape must not break classification
        return _EMPTY_FIELDS


def _body_fields(body: object) -> ErrorFields:
    if isinstance(body, (str, bytes, bytearray)):
        body = parse_body_text(body if isinstance(body, str) else
                               bytes(body[:_MAX_BODY_CHARS]).decode("utf-8", "replace"))
    if isinstance(body, list) and body and isinstance(body[0], dict):
        body = body[0]
    if not isinstance(body, dict):
        return _EMPTY_FIELDS
    request_id = _text(body.get("request_id"))
    error = body.get("error")
    if isinstance(error, str):  # OAuth, and some gateways: {"error": "invalid_client", ...}
        return ErrorFields(code=error, message=_text(body.get("error_description"))
                           or _text(body.get("message")) or "", request_id=request_id)
    if not isinstance(error, dict):
        error = body  # flat: {"message": ..., "code": ...} or {"type": "overloaded_error"...}
        if not any(key in body for key in ("message", "code", "type", "status", "detail")):
            return _EMPTY_FIELDS
    raw_code = error.get("code")
    http_status = raw_code if type(raw_code) is int and 100 <= raw_code <= 599 else None
    code = _text(raw_code) if http_status is None else None
    if code is None and type(raw_code) is int and http_status is None:
        code = str(raw_code)
    details = error.get("details")
    if isinstance(details, dict):  # Anthropic: details.error_code names the cause
        code = _text(details.get("error_code")) or code
        google: dict[str, Any] = {"reasons": [], "quota_ids": [], "quota_failure": False}
    else:
        google = _google_details(details)
    inner = error.get("innererror")
    if code is None and isinstance(inner, dict):  # Azure: innererror.code
        code = _text(inner.get("code"))
    message = _text(error.get("message")) or _text(error.get("detail")) or ""
    err_type = _text(error.get("type"))
    if err_type == "error":  # Anthropic's envelope type when the body is flat
        err_type = None
    return ErrorFields(
        code=code, type=err_type, status=_text(error.get("status")), http_status=http_status,
        message=message, param=_text(error.get("param")), reasons=tuple(google["reasons"]),
        quota_ids=tuple(google["quota_ids"]), quota_failure=google["quota_failure"],
        retry_delay_s=google.get("retry_delay_s"), request_id=request_id,
        model=google.get("model"))


def parse_body_text(text: str) -> object:
    """Decode a JSON body, or the Python ``repr`` of one, from the first ``{`` or ``[`` on.

    The openai and anthropic SDKs render ``"Error code: 429 - {'error': {...}}"`` (a dict's
    repr, not JSON); google-genai renders ``"429 RESOURCE_EXHAUSTED. {'error': {...}}"``.
    Returns None when nothing decodes. Never raises; bounded to 64 KiB.
    """
    start = -1
    for index, char in enumerate(text[:_MAX_BODY_CHARS]):
        if char in "{[":
            start = index
            break
    if start < 0:
        return None
    candidate = text[start:_MAX_BODY_CHARS]
    try:
        return json.loads(candidate)
    except (ValueError, RecursionError):
        pass
    import ast  # noqa: PLC0415 - only for SDK-rendered bodies; keeps `import failcode` lean

    try:
        return ast.literal_eval(candidate)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


# -- server-directed delays -------------------------------------------------------------------


def _header(headers: Mapping[str, str] | None, name: str) -> str | None:
    if not headers:
        return None
    try:
        value = headers.get(name)
    except Exception:  # noqa: BLE001 - any mapping-like object is accepted
        return None
    return value if isinstance(value, str) and value else None


def header_delay(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds the server asks to wait: ``retry-after-ms``, then ``retry-after`` (seconds or an
    HTTP-date), as the Stainless SDKs read them; None when absent, negative or unparseable."""
    ms = _header(headers, "retry-after-ms")
    if ms is not None:
        with contextlib.suppress(ValueError, OverflowError):
            value = float(ms) / 1000.0
            if 0 <= value < 1e9:
                return round(value, 3)
    after = _header(headers, "retry-after")
    if after is None:
        return None
    with contextlib.suppress(ValueError, OverflowError):
        value = float(after)
        return round(value, 3) if 0 <= value < 1e9 else None
    import email.utils  # noqa: PLC0415 - HTTP-dates are rare; keeps `import failcode` lean

    try:
        parsed = email.utils.parsedate_to_datetime(after)
    except (TypeError, ValueError, IndexError):
        return None
    delta = parsed.timestamp() - (time.time() if now is None else now)
    return round(max(delta, 0.0), 3)


def should_retry_header(headers: Mapping[str, str] | None) -> bool | None:
    """The ``x-should-retry`` header as a bool, or None."""
    value = _header(headers, "x-should-retry")
    if value is None:
        return None
    lowered = value.strip().lower()
    return True if lowered == "true" else False if lowered == "false" else None


def request_id_header(headers: Mapping[str, str] | None) -> str | None:
    """The provider's request id header (OpenAI ``x-request-id``, Anthropic ``request-id``)."""
    return (_header(headers, "x-request-id") or _header(headers, "request-id")
            or _header(headers, "x-goog-request-id"))


# -- phrases (fallback only; anchored) -------------------------------------------------------

_B: Final = r"(?<![\w-])"  # a word start where '_' and '-' count as word characters
_E: Final = r"(?![\w-])"


def _phrase(*alternatives: str) -> re.Pattern[str]:
    return lazy(_B + "(?:" + "|".join(alternatives) + ")" + _E, re.IGNORECASE)


_REASONS: Final = (
    r"Bad Request|Unauthorized|Payment Required|Forbidden|Not Found|Request Timeout|Conflict|"
    r"Payload Too Large|Content Too Large|Unprocessable Entity|Too Many Requests|"
    r"Internal Server Error|Bad Gateway|Service Unavailable|Gateway Timeout"
)
_STATUS_RE: Final = lazy(
    r"^\s*(?:Error code: ([1-5]\d\d)(?!\d)"  # openai / anthropic SDKs
    r"|([1-5]\d\d) (?:[A-Z][A-Z_]+|None)\. "  # google-genai: "429 RESOURCE_EXHAUSTED. {...}"
    r"|([1-5]\d\d) (?:Client|Server) Error: "  # requests: "429 Client Error: ..."
    r"|([1-5]\d\d) (?:" + _REASONS + r")(?![\w-])"  # "503 Service Unavailable"
    # openai-node's APIError (Copilot CLI, Cline, Qwen Code): "<status> status code (no body)",
    # or its status before a body that is itself a status line ("400 400 Bad Request")
    r"|([1-5]\d\d) (?:status code \(no body\)|[1-5]\d\d (?:" + _REASONS + r")(?![\w-])))"
    r"|(?:Client|Server) error '([1-5]\d\d) "  # httpx: "Client error '404 Not Found' for url"
    r"|too many ([1-5]\d\d) error responses"  # urllib3's Retry, through requests' RetryError
    r"|" + _B + r"(?:status(?:[ _]code)?|http[ _]status|HTTP(?:/\d(?:\.\d)?)?)(?:[:=] ?| )"
    r"([1-5]\d\d)(?![\w.-])",
    re.IGNORECASE,
)
_CONTEXT_RE: Final = _phrase(
    r"context[ _]length[ _]exceeded", r"maximum context length is",
    r"prompt is too long", r"exceeds the maximum number of tokens",
    r"exceeds? (?:the )?(?:model's |available )?context (?:window|size|length)",
    r"context window (?:is |was )?exceeded", r"input is too long for (?:the )?(?:requested )?model",
    r"too many (?:input )?tokens", r"reduce the length of the messages",
    r"input token count .{0,40} exceeds the maximum",
    # a serving engine's own check (SGLang/vLLM-style: "The sum of prompt length (82013.0),
    # query length (0) should not exceed max_num_tokens (32768)")
    r"prompt (?:length|tokens?)\b.{0,80}\b(?:should|must|can) ?not exceed",
)
_QUOTA_RE: Final = _phrase(
    r"insufficient[ _]quota", r"exceeded your current quota", r"usage limits?",
    r"credit balance is too low", r"billing (?:hard )?limit", r"spend(?:ing)? limit",
    r"quota (?:has been )?exceeded", r"out of credits?", r"payment required",
    r"billing details",
)
_RATE_RE: Final = _phrase(
    r"rate[ -]limit(?:ed|s)?(?: (?:reached|exceeded))?", r"too many requests",
    r"requests per (?:minute|second)", r"tokens per min(?:ute)?", r"please try again in",
    r"please retry in", r"resource[ _]exhausted",
)
_OVERLOADED_RE: Final = _phrase(r"overloaded", r"over capacity", r"at capacity")
_AUTH_RE: Final = _phrase(
    r"invalid[ _]api[ _]key", r"incorrect api key", r"api key not valid", r"invalid x-api-key",
    r"invalid authentication", r"api[ _]key client option must be set",
    r"could not resolve authentication method", r"missing (?:an? )?(?:[\w-]+ ){0,2}api[ _]key",
    r"unauthori[sz]ed", r"authentication[ _]?error",
    # credentials that were never sent (the SDKs' and gateways' own words)
    r"missing credentials", r"no (?:auth(?:entication)? )?credentials (?:were )?(?:found|provided)",
    r"no api[ _]key (?:was )?(?:found|provided|set|configured)",
    r"api[ _]key (?:is )?(?:missing|required|not (?:set|provided|found|configured))",
    r"you didn't provide an api key", r"x-api-key header is required",
)
# A model the provider or gateway does not know or cannot route: a setting to fix (the model
# id, its provider prefix, the gateway's model list), whatever status carries it. Under a 5xx
# only these words count; "model x is not available" there may be a passing outage.
_MODEL_UNKNOWN_STRONG: Final = (
    r"model[ _]not[ _]found", r"the model .{1,120}? does not exist",
    r"invalid model(?:[ _](?:name|id|identifier))?", r"unknown model", r"no such model",
    r"llm provider not provided",
    r"(?:unable to|cannot|can't|could not|failed to) route (?:the )?(?:request|model)",
    r"no route (?:found )?for (?:the )?model",
)
_MODEL_UNKNOWN_5XX_RE: Final = _phrase(*_MODEL_UNKNOWN_STRONG)
_MODEL_UNKNOWN_RE: Final = _phrase(
    *_MODEL_UNKNOWN_STRONG, r"model .{1,160}? (?:is not available|not found|does not exist)",
    r"no endpoints found for",
)
_PERMISSION_RE: Final = _phrase(
    r"permission[ _]denied", r"permission[ _]error", r"does not have permission",
    r"not allowed to", r"forbidden", r"access (?:is )?denied",
)
_MODEL_NOT_FOUND_RE: Final = _phrase(
    r"model[ _]not[ _]found", r"the model .{1,120} does not exist", r"model: \S{1,120}",
    r"models/\S{1,120} is not found", r"unknown model", r"no such model",
    r"model .{1,120} (?:not found|does not exist)",
    r"invalid model(?:[ _](?:name|id|identifier))?", r"model .{1,160}? is not available",
    r"llm provider not provided", r"no endpoints found for",
    r"(?:unable to|cannot|can't|could not|failed to) route (?:the )?(?:request|model)",
    r"no route (?:found )?for (?:the )?model",
)
# The account or its plan may not use this model (litellm's proxy "Key does not have access
# to the model", a tier the model is not offered on): the key's access, never the model name
_ACCESS_RE: Final = _phrase(
    r"(?:does|do) not have access to (?:the )?(?:model|deployment)",
    r"(?:is )?not available (?:on|in|for) (?:your|the current|this) (?:current )?"
    r"(?:plan|tier|subscription|account)",
    r"(?:your|the current) (?:plan|tier|subscription) does not (?:include|support|allow|"
    r"have access to)",
    r"requires? (?:a |an )?(?:higher|paid|upgraded|pro|enterprise) (?:plan|tier|subscription)",
    r"upgrade your (?:plan|tier|subscription) to (?:use|access)",
)
# A gateway's or safety system's refusal ("Your request was blocked", OpenAI's
# misalignment_policy_violation "The request was blocked by the safety systems")
_BLOCKED_RE: Final = _phrase(
    r"(?:your|the) request (?:was|has been) blocked",
    r"request blocked by (?:the )?(?:gateway|guardrails?|firewall|safety)",
)
# A stream the client could not read: litellm's "Error parsing chunk: ..., Received chunk",
# "Failed to parse streaming chunk", "Unable to parse ollama chunk" (the provider's answer,
# not the model's words, did not parse)
_CHUNK_RE: Final = _phrase(
    r"error parsing (?:streaming |stream )?chunk",
    r"(?:failed|unable) to parse (?:[\w-]+ )?(?:streaming |stream )?chunk",
    r"(?:invalid|malformed) (?:sse|streaming|stream) (?:chunk|event|data)",
)
_MODEL_WORD_RE: Final = _phrase(r"models?")
_TOOLS_RE: Final = _phrase(
    r"(?:tools?|tool use|tool[ _]choice|function[ _]calling|functions) (?:is |are )?"
    r"not (?:supported|enabled|available)",
    r"does not support (?:tools|tool use|tool calling|function calling|functions)",
    r"no endpoints found that support tool use",
    r"unsupported (?:parameter|value): '?(?:tools|tool_choice|functions)'?",
)
_CONTENT_RE: Final = _phrase(
    r"content[ _]filter(?:ed)?", r"content[ _]policy(?:[ _]violation)?",
    r"content management policy", r"responsible ?ai ?policy ?violation",
    r"safety (?:system|filters?)", r"flagged as potentially violating",
)
# A request that got no answer, in the words of the HTTP clients the agents use (Python's
# "Request timed out.", Node's undici "fetch failed", "ECONNRESET", "socket hang up"): read only
# when no status or code says more
_TIMEOUT_RE: Final = _phrase(r"(?:request|read|connection|operation) timed out", r"timed out",
                             r"etimedout", r"timeout error")
_CONNECTION_RE: Final = _phrase(
    r"fetch failed", r"econnrefused", r"econnreset", r"enotfound", r"eai_again",
    r"socket hang up", r"connection (?:refused|reset|error|closed)", r"network error",
)
_SERVER_RE: Final = _phrase(
    r"internal server error", r"server[ _]error", r"bad gateway", r"service unavailable",
    r"an internal error has occurred", r"api[ _]error",
)
_RETRY_IN_RE: Final = lazy(
    _B + r"(?:please )?(?:retry|try again) in (\d{1,9}(?:\.\d{1,9})?) ?(ms|s|seconds?)" + _E,
    re.IGNORECASE)

_MODEL_PATTERNS: Final = (
    lazy(r"""(?:the )?model [`'"]([^`'"\s]{1,120})[`'"]""", re.IGNORECASE),
    lazy(r"(?<![\w-])model: ?([A-Za-z0-9][\w.:/@-]{0,119})"),
    # litellm: "You passed model=x", "Invalid model name passed in model=x"
    lazy(r"(?<![\w-])model=['\"]?([A-Za-z0-9][\w.:/@-]{0,119})"),
    lazy(r"(?i)no endpoints found for ([A-Za-z0-9][\w.:/@-]{0,119})"),
    lazy(r"(?i)(?<![\w-])model ([A-Za-z0-9][\w.:/@-]{0,119}) (?:is not available|not "
               r"found|does not exist)"),
    lazy(r"(?<![\w-])models/([A-Za-z0-9][\w.@-]{0,119})"),
    lazy(r"""["']model["']\s*:\s*["']([^"'\s]{1,120})["']"""),
    lazy(r"context window of ([A-Za-z0-9][\w.:/@-]{0,119})"),
)


def status_from_text(text: str) -> int | None:
    """An HTTP status stated in a message (``Error code: 429``, ``429 RESOURCE_EXHAUSTED.``,
    ``status 503``, ``HTTP 401``); a number anywhere else is never a status."""
    match = _STATUS_RE.search(text[:4096])
    if match is None:
        return None
    return int(next(group for group in match.groups() if group))


def retry_hint_s(text: str) -> float | None:
    """A delay stated in a message ("Please retry in 18.403470473s", "try again in 20ms")."""
    match = _RETRY_IN_RE.search(text[:8192])
    if match is None:
        return None
    value = float(match.group(1))
    return round(value / 1000.0 if match.group(2).lower() == "ms" else value, 3)


def model_from_text(*texts: str | None) -> str | None:
    """The model a message, request body or URL names (``The model `gpt-x` does not exist``,
    ``model: claude-x``, ``models/gemini-x``, ``"model": "x"``), or None."""
    for text in texts:
        if not text:
            continue
        window = text[:_MAX_BODY_CHARS]
        for pattern in _MODEL_PATTERNS:
            match = pattern.search(window)
            if match:
                return match.group(1).rstrip(".,;")
    return None


# -- the HTTP rule table --------------------------------------------------------------------

_AUTH_CODES: Final = frozenset({
    "invalid_api_key", "authentication_error", "API_KEY_INVALID", "API_KEY_EXPIRED",
    "UNAUTHENTICATED", "ACCESS_TOKEN_EXPIRED", "ACCESS_TOKEN_TYPE_UNSUPPORTED",
    "CREDENTIALS_MISSING", "invalid_client", "invalid_token", "invalid_grant", "unauthorized",
    "invalid_authentication", "expired_api_key", "auth_missing", "missing_api_key",
    "no_api_key", "api_key_missing", "missing_credentials", "no_provider_key",
})
_PERMISSION_CODES: Final = frozenset({
    "permission_error", "permission_denied", "PERMISSION_DENIED", "SERVICE_DISABLED",
    "API_KEY_SERVICE_BLOCKED", "API_KEY_HTTP_REFERRER_BLOCKED", "API_KEY_IP_ADDRESS_BLOCKED",
    "IAM_PERMISSION_DENIED", "CONSUMER_SUSPENDED", "request_forbidden",
    "unsupported_country_region_territory", "organization_on_hold",
    "sandbox_egress_restricted", "access_denied", "key_model_access_denied",
    "team_model_access_denied", "user_model_access_denied", "org_model_access_denied",
})
_QUOTA_CODES: Final = frozenset({
    "insufficient_quota", "billing_error", "billing_hard_limit_reached", "billing_not_active",
    "contract_spend_limit_reached", "enforced_spend_limit_reached",
    "linked_organization_spend_limit_reached", "linked_organization_billing_unavailable",
    "storage_quota_exceeded", "user_profile_not_billable", "BILLING_DISABLED",
    "usage_limit_exceeded", "project_spend_limit_exceeded", "organization_spend_limit_exceeded",
    "organization_usage_limit_exceeded", "credit_balance_exhausted",
})
_RATE_CODES: Final = frozenset({
    "rate_limit_exceeded", "rate_limit_error", "ramp_limit_exceeded", "RATE_LIMIT_EXCEEDED",
    "too_many_requests", "requests", "tokens",
})
_CONTEXT_CODES: Final = frozenset({
    "context_length_exceeded", "string_above_max_length", "request_too_large",
    "context_window_exceeded", "prompt_too_long",
})
_MODEL_CODES: Final = frozenset({
    "model_not_found", "model_not_available", "model_not_supported", "invalid_model",
    "unknown_model", "invalid_model_name",
})
_CONTENT_CODES: Final = frozenset({
    "content_filter", "content_policy_violation", "ResponsibleAIPolicyViolation",
    "content_filtered", "SAFETY", "PROHIBITED_CONTENT", "cyber_policy",
    "misalignment_policy_violation",
})
_OVERLOADED_CODES: Final = frozenset({"overloaded_error", "overloaded", "server_overloaded",
                                      "flex_unavailable"})
_TIMEOUT_CODES: Final = frozenset({"timeout_error", "DEADLINE_EXCEEDED", "request_timeout"})
_TOOL_CODES: Final = frozenset({"tools_not_supported", "tool_use_not_supported"})


class HttpVerdict(NamedTuple):
    """The code an HTTP failure maps to, and the rule that fired (for ``metadata["rule"]``)."""

    code: FC
    rule: str


def _short_window(fields: ErrorFields, delay: float | None, text: str) -> bool:
    if any("perday" in quota_id.lower() for quota_id in fields.quota_ids):
        return False  # a daily quota is a wall even when the server names a short delay
    hint = delay if delay is not None else fields.retry_delay_s
    if hint is None:
        hint = retry_hint_s(text)
    if hint is not None:
        return hint <= SHORT_RETRY_S
    return any("perminute" in q.lower() or "persecond" in q.lower() for q in fields.quota_ids)


# Structured provider codes that name the cause whatever the status, in order (first match
# wins); Google's RESOURCE_EXHAUSTED is decided between the two tables.
_CODE_ROWS_FIRST: Final[tuple[tuple[frozenset[str], FC, str], ...]] = (
    (_CONTEXT_CODES, FC.PROV_CONTEXT_TOO_LARGE, "code:context"),
    (_CONTENT_CODES, FC.PROV_CONTENT_FILTERED, "code:content"),
    (_QUOTA_CODES, FC.PROV_QUOTA, "code:quota"),
    (_AUTH_CODES, FC.PROV_AUTH, "code:auth"),
    (_MODEL_CODES, FC.PROV_MODEL_NOT_FOUND, "code:model"),
    (_TOOL_CODES, FC.PROV_TOOL_USE_UNSUPPORTED, "code:tools"),
)
_CODE_ROWS_AFTER_GOOGLE: Final[tuple[tuple[frozenset[str], FC, str], ...]] = (
    (_RATE_CODES, FC.PROV_RATE_LIMIT, "code:rate_limit"),
    (_OVERLOADED_CODES, FC.PROV_OVERLOADED, "code:overloaded"),
    (_PERMISSION_CODES, FC.PROV_PERMISSION, "code:permission"),
    (_TIMEOUT_CODES, FC.PROV_TIMEOUT, "code:timeout"),
)


def http_code(
    status: int | None, fields: ErrorFields, text: str, *, delay: float | None = None,
) -> HttpVerdict:
    """Map a provider failure to its code: structured fields first, then status, then phrases.

    Args:
        status: the HTTP status, when known.
        fields: the body's structured fields (:func:`body_fields`).
        text: the message text (the body's message and the exception's text) for the phrase
            fallback.
        delay: a server-directed delay in seconds (``Retry-After``), when known.
    """
    codes = {c for c in (fields.code, fields.type, fields.status, *fields.reasons) if c}
    if status is None:
        status = fields.http_status
    # -- structured codes that name the cause, whatever the status
    for code_set, code, rule in _CODE_ROWS_FIRST:
        if codes & code_set:
            return HttpVerdict(code, rule)
    if "RESOURCE_EXHAUSTED" in codes or (status == 429 and fields.quota_failure):
        if fields.quota_failure and not _short_window(fields, delay, text):
            return HttpVerdict(FC.PROV_QUOTA, "google:quota_failure")
        return HttpVerdict(FC.PROV_RATE_LIMIT, "google:resource_exhausted")
    # "rate_limit_exceeded" with a quota phrase is still a rate limit: the code decides
    for code_set, code, rule in _CODE_ROWS_AFTER_GOOGLE:
        if codes & code_set:
            return HttpVerdict(code, rule)
    # -- by status, with phrases only to split a status into its rows
    if status is not None:
        return _by_status(status, fields, codes, text, delay)
    return _by_phrase(text)


def _by_status(
    status: int, fields: ErrorFields, codes: set[str], text: str, delay: float | None,
) -> HttpVerdict:
    if status == 401:
        return HttpVerdict(FC.PROV_AUTH, "status:401")
    if status == 402:
        return HttpVerdict(FC.PROV_QUOTA, "status:402")
    if status == 403:
        return HttpVerdict(FC.PROV_PERMISSION, "status:403")
    if status == 404:
        window = text[:8192]
        if _TOOLS_RE.search(window):  # OpenRouter: "No endpoints found that support tool use"
            return HttpVerdict(FC.PROV_TOOL_USE_UNSUPPORTED, "status:404+tools_phrase")
        if (_MODEL_WORD_RE.search(window) or fields.param == "model"
                or _MODEL_UNKNOWN_RE.search(window)):
            return HttpVerdict(FC.PROV_MODEL_NOT_FOUND, "status:404+model")
        return HttpVerdict(FC.PROV_BAD_REQUEST, "status:404")
    if status in {408, 504}:
        return HttpVerdict(FC.PROV_TIMEOUT, f"status:{status}")
    if status == 413:
        return HttpVerdict(FC.PROV_CONTEXT_TOO_LARGE, "status:413")
    if status == 429:
        if _QUOTA_RE.search(text[:8192]) and not _short_window(fields, delay, text):
            return HttpVerdict(FC.PROV_QUOTA, "status:429+quota_phrase")
        return HttpVerdict(FC.PROV_RATE_LIMIT, "status:429")
    if status == 499:
        return HttpVerdict(FC.PROV_CONNECTION, "status:499")
    if status == 529:
        return HttpVerdict(FC.PROV_OVERLOADED, "status:529")
    if status >= 500:
        window = text[:8192]
        # a gateway reporting, as a server error, what it could not send: no credentials, a
        # model it does not know or cannot route; configuration, never a transient failure
        if _AUTH_RE.search(window):
            return HttpVerdict(FC.PROV_AUTH, "status:5xx+auth_phrase")
        if _MODEL_UNKNOWN_5XX_RE.search(window):
            return HttpVerdict(FC.PROV_MODEL_NOT_FOUND, "status:5xx+model_phrase")
        if status == 503 and (_OVERLOADED_RE.search(window) or codes & _OVERLOADED_CODES):
            return HttpVerdict(FC.PROV_OVERLOADED, "status:503+overloaded")
        return HttpVerdict(FC.PROV_SERVER_ERROR, f"status:{status // 100}xx")
    if status == 409:
        return HttpVerdict(FC.PROV_SERVER_ERROR, "status:409")  # the SDKs retry a conflict
    if 400 <= status < 500:
        window = text[:8192]
        if _CONTEXT_RE.search(window):
            return HttpVerdict(FC.PROV_CONTEXT_TOO_LARGE, "status:4xx+context_phrase")
        if _QUOTA_RE.search(window):
            return HttpVerdict(FC.PROV_QUOTA, "status:4xx+quota_phrase")
        if _TOOLS_RE.search(window):
            return HttpVerdict(FC.PROV_TOOL_USE_UNSUPPORTED, "status:4xx+tools_phrase")
        if _CONTENT_RE.search(window) or _BLOCKED_RE.search(window):
            return HttpVerdict(FC.PROV_CONTENT_FILTERED, "status:4xx+content_phrase")
        if _ACCESS_RE.search(window):
            return HttpVerdict(FC.PROV_PERMISSION, "status:4xx+access_phrase")
        if _MODEL_UNKNOWN_RE.search(window):
            return HttpVerdict(FC.PROV_MODEL_NOT_FOUND, "status:4xx+model_phrase")
        if _AUTH_RE.search(window):
            return HttpVerdict(FC.PROV_AUTH, "status:4xx+auth_phrase")
        return HttpVerdict(FC.PROV_BAD_REQUEST, f"status:{status}")
    return _by_phrase(text)


def _by_phrase(text: str) -> HttpVerdict:
    """No status and no code: the anchored phrases, most specific first."""
    window = text[:8192]
    for pattern, code, rule in (
        (_CONTEXT_RE, FC.PROV_CONTEXT_TOO_LARGE, "phrase:context"),
        (_QUOTA_RE, FC.PROV_QUOTA, "phrase:quota"),
        (_TOOLS_RE, FC.PROV_TOOL_USE_UNSUPPORTED, "phrase:tools"),
        (_CONTENT_RE, FC.PROV_CONTENT_FILTERED, "phrase:content"),
        (_BLOCKED_RE, FC.PROV_CONTENT_FILTERED, "phrase:blocked"),
        (_ACCESS_RE, FC.PROV_PERMISSION, "phrase:access"),
        (_CHUNK_RE, FC.PROV_SERVER_ERROR, "phrase:stream_chunk"),
        (_MODEL_NOT_FOUND_RE, FC.PROV_MODEL_NOT_FOUND, "phrase:model"),
        (_AUTH_RE, FC.PROV_AUTH, "phrase:auth"),
        (_RATE_RE, FC.PROV_RATE_LIMIT, "phrase:rate_limit"),
        (_OVERLOADED_RE, FC.PROV_OVERLOADED, "phrase:overloaded"),
        (_PERMISSION_RE, FC.PROV_PERMISSION, "phrase:permission"),
        (_TIMEOUT_RE, FC.PROV_TIMEOUT, "phrase:timeout"),
        (_CONNECTION_RE, FC.PROV_CONNECTION, "phrase:connection"),
        (_SERVER_RE, FC.PROV_SERVER_ERROR, "phrase:server_error"),
    ):
        if pattern.search(window):
            hint = retry_hint_s(window)
            if code is FC.PROV_QUOTA and hint is not None and hint <= SHORT_RETRY_S:
                return HttpVerdict(FC.PROV_RATE_LIMIT, "phrase:quota+retry_hint")
            return HttpVerdict(code, rule)
    return HttpVerdict(FC.SYS_UNKNOWN, "none")
