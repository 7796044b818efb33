"""A local stub of the OpenAI, Anthropic and Gemini HTTP APIs, answering with their real errors.

The first path segment names the scenario: a client pointed at
``http://127.0.0.1:<port>/<scenario>/...`` gets that scenario's status, body and headers,
whatever the SDK appends (``/chat/completions``, ``/v1/messages``,
``/v1beta/models/<model>:generateContent``). Bodies are the providers' documented error shapes
with messages as the APIs return them:

- OpenAI: ``{"error": {"message", "type", "param", "code"}}`` (platform.openai.com error codes
  guide; Azure's content filter adds ``innererror``), request id in ``x-request-id``.
- Anthropic: ``{"type": "error", "error": {"type", "message"}, "request_id"}``
  (docs.anthropic.com/en/api/errors), request id in ``request-id``, ``retry-after`` on 429.
- Gemini: ``google.rpc.Status`` as JSON, ``{"error": {"code", "message", "status",
  "details": [ErrorInfo, QuotaFailure, RetryInfo...]}}`` (AIP-193; ai.google.dev troubleshooting).

Special scenarios: ``slow`` answers after :data:`SLOW_S` seconds (for client timeouts),
``reset`` closes the connection without answering, ``ok_*`` answer 200 with a chat completion.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SLOW_S = 3.0

_GOOGLE = "type.googleapis.com/google.rpc."


def _openai(http_status: int, message: str, type_: str | None, code: str | None,
            param: str | None = None, **extra: Any) -> tuple[int, dict[str, Any], dict[str, str]]:
    error: dict[str, Any] = {"message": message, "type": type_, "param": param, "code": code}
    error.update(extra)
    request_id = "req_6b1f0c9e8d7a4b3c2d1e0f9a8b7c6d5e"
    return http_status, {"error": error}, {"x-request-id": request_id}


def _anthropic(status: int, type_: str, message: str,
               headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any], dict[str, str]]:
    body = {"type": "error", "error": {"type": type_, "message": message},
            "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"}
    return status, body, {"request-id": "req_011CSHoEeqs5C35K2UUqR7Fy", **(headers or {})}


def _gemini(status: int, grpc_status: str, message: str,
            details: list[dict[str, Any]] | None = None,
            ) -> tuple[int, dict[str, Any], dict[str, str]]:
    error: dict[str, Any] = {"code": status, "message": message, "status": grpc_status}
    if details is not None:
        error["details"] = details
    return status, {"error": error}, {}


SCENARIOS: dict[str, tuple[int, Any, dict[str, str]]] = {
    # -- OpenAI -------------------------------------------------------------------------------
    "oa_401": _openai(
        401, "Incorrect API key provided: sk-test. You can find your API key at "
        "https://platform.openai.com/account/api-keys.", "invalid_request_error",
        "invalid_api_key"),
    "oa_403": _openai(403, "Country, region, or territory not supported", "request_forbidden",
                      "unsupported_country_region_territory"),
    "oa_429_rate": (429, _openai(
        429, "Rate limit reached for gpt-4o in organization org-Xa1b2c3 on tokens per min (TPM): "
        "Limit 30000, Used 29812, Requested 1543. Please try again in 2.71s. Visit "
        "https://platform.openai.com/account/rate-limits to learn more.", "tokens",
        "rate_limit_exceeded")[1],
        {"x-request-id": "req_7c2e", "retry-after-ms": "2710", "x-should-retry": "true"}),
    "oa_429_quota": _openai(
        429, "You exceeded your current quota, please check your plan and billing details. "
        "For more information on this error, read the docs: "
        "https://platform.openai.com/docs/guides/error-codes/api-errors.", "insufficient_quota",
        "insufficient_quota"),
    "oa_404_model": _openai(
        404, "The model `gpt-9-turbo` does not exist or you do not have access to it.",
        "invalid_request_error", "model_not_found"),
    "oa_400_context": _openai(
        400, "This model's maximum context length is 128000 tokens. However, your messages "
        "resulted in 130542 tokens. Please reduce the length of the messages.",
        "invalid_request_error", "context_length_exceeded", "messages"),
    "oa_400_tools": _openai(
        400, "tools is not supported in this model. For a list of supported models, refer to "
        "https://platform.openai.com/docs/guides/function-calling#models-supporting-function-"
        "calling.", "invalid_request_error", None, "tools"),
    "oa_400_content": _openai(
        400, "The response was filtered due to the prompt triggering Azure OpenAI's content "
        "management policy. Please modify your prompt and retry.", None, "content_filter",
        "prompt", status=400, innererror={"code": "ResponsibleAIPolicyViolation",
                                          "content_filter_result": {"hate": {
                                              "filtered": True, "severity": "high"}}}),
    "oa_400_bad": _openai(400, "Unrecognized request argument supplied: temprature",
                          "invalid_request_error", None),
    # LiteLLM PR #27915: a parameter name holding "rate_limit" is no rate limit
    "oa_400_ratelimit_word": _openai(
        400, "Unknown parameter: '_litellm_rate_limit_descriptors'.", "invalid_request_error",
        "unknown_parameter", "_litellm_rate_limit_descriptors"),
    # LiteLLM PR #36705: a 429 among echoed token ids is no rate limit
    "oa_400_token_429": _openai(
        400, "Input validation error: prompt_token_ids [128000, 429, 9906, 1917] exceed "
        "allowed values for this deployment", "invalid_request_error", None),
    "oa_500": _openai(500, "The server had an error while processing your request. Sorry about "
                      "that!", "server_error", None),
    "oa_503_overloaded": _openai(503, "The engine is currently overloaded, please try again "
                                 "later", "server_error", None),
    "oa_408": _openai(408, "Request timed out.", "timeout", None),
    # -- Anthropic ----------------------------------------------------------------------------
    "an_401": _anthropic(401, "authentication_error", "invalid x-api-key"),
    "an_403": _anthropic(403, "permission_error",
                         "Your API key does not have permission to use the specified resource."),
    "an_404": _anthropic(404, "not_found_error", "model: claude-opus-9-latest"),
    "an_429": _anthropic(
        429, "rate_limit_error", "This request would exceed the rate limit for your "
        "organization (4f1c) of 50,000 input tokens per minute. For details, refer to: "
        "https://docs.claude.com/en/api/rate-limits.",
        {"retry-after": "17", "x-should-retry": "true",
         "anthropic-ratelimit-input-tokens-remaining": "0"}),
    "an_400_usage": _anthropic(
        400, "invalid_request_error", "You have reached your specified API usage limits. You "
        "will regain access on 2026-09-01 at 00:00 UTC."),
    "an_400_credit": _anthropic(
        400, "invalid_request_error", "Your credit balance is too low to access the Anthropic "
        "API. Please go to Plans & Billing to upgrade or purchase credits."),
    "an_402_billing": _anthropic(402, "billing_error",
                                 "There is an issue with your account's billing."),
    "an_400_prompt": _anthropic(400, "invalid_request_error",
                                "prompt is too long: 208310 tokens > 200000 maximum"),
    "an_413": _anthropic(413, "request_too_large",
                         "Request exceeds the maximum allowed number of bytes."),
    "an_400_bad": _anthropic(400, "invalid_request_error",
                             "max_tokens: Field required"),
    "an_500": _anthropic(500, "api_error", "Internal server error"),
    "an_529": _anthropic(529, "overloaded_error", "Overloaded"),
    "an_504": _anthropic(504, "timeout_error", "Request timed out"),
    # -- Gemini -------------------------------------------------------------------------------
    "ge_400_key": _gemini(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API "
                          "key.", [
                              {"@type": _GOOGLE + "ErrorInfo", "reason": "API_KEY_INVALID",
                               "domain": "googleapis.com",
                               "metadata": {"service": "generativelanguage.googleapis.com"}},
                              {"@type": _GOOGLE + "LocalizedMessage", "locale": "en-US",
                               "message": "API key not valid. Please pass a valid API key."}]),
    "ge_403": _gemini(403, "PERMISSION_DENIED", "Generative Language API has not been used in "
                      "project 123456789012 before or it is disabled. Enable it by visiting "
                      "https://console.developers.google.com/apis/api/generativelanguage."
                      "googleapis.com/overview?project=123456789012 then retry.", [
                          {"@type": _GOOGLE + "ErrorInfo", "reason": "SERVICE_DISABLED",
                           "domain": "googleapis.com",
                           "metadata": {"service": "generativelanguage.googleapis.com",
                                        "consumer": "projects/123456789012"}}]),
    # LiteLLM #34954: "18.403470473s" must not read as a 403
    "ge_429_rate": _gemini(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota, please "
                           "check your plan and billing details. For more information on this "
                           "error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n"
                           "* Quota exceeded for metric: generativelanguage.googleapis.com/"
                           "generate_content_free_tier_requests, limit: 10, model: "
                           "gemini-2.0-flash\nPlease retry in 18.403470473s.", [
                               {"@type": _GOOGLE + "QuotaFailure", "violations": [{
                                   "quotaMetric": "generativelanguage.googleapis.com/"
                                                  "generate_content_free_tier_requests",
                                   "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-"
                                              "FreeTier",
                                   "quotaDimensions": {"location": "global",
                                                       "model": "gemini-2.0-flash"},
                                   "quotaValue": "10"}]},
                               {"@type": _GOOGLE + "Help", "links": [{
                                   "description": "Learn more about Gemini API quotas",
                                   "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
                               {"@type": _GOOGLE + "RetryInfo", "retryDelay": "18s"}]),
    "ge_429_daily": _gemini(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota, please "
                            "check your plan and billing details.", [
                                {"@type": _GOOGLE + "QuotaFailure", "violations": [{
                                    "quotaMetric": "generativelanguage.googleapis.com/"
                                                   "generate_content_free_tier_requests",
                                    "quotaId": "GenerateRequestsPerDayPerProjectPerModel-"
                                               "FreeTier",
                                    "quotaDimensions": {"location": "global",
                                                        "model": "gemini-2.5-pro"},
                                    "quotaValue": "25"}]}]),
    "ge_404": _gemini(404, "NOT_FOUND", "models/gemini-9.0-ultra is not found for API version "
                      "v1beta, or is not supported for generateContent. Call ListModels to see "
                      "the list of available models and their supported methods."),
    "ge_400_context": _gemini(400, "INVALID_ARGUMENT", "The input token count (1212245) exceeds "
                              "the maximum number of tokens allowed (1048576)."),
    "ge_400_tools": _gemini(400, "INVALID_ARGUMENT", "Function calling is not enabled for "
                            "models/gemini-1.0-pro-vision-latest"),
    "ge_400_bad": _gemini(400, "INVALID_ARGUMENT", "Invalid JSON payload received. Unknown name "
                          "\"temprature\" at 'generation_config': Cannot find field."),
    "ge_503": _gemini(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
    "ge_500": _gemini(500, "INTERNAL", "An internal error has occurred. Please retry or report "
                      "in https://developers.generativeai.google/guide/troubleshooting"),
    # -- OpenAI-compatible gateways (a LiteLLM proxy, OpenRouter, ngrok's AI gateway): their
    # configuration errors, in the bodies and statuses they answer with ------------------------
    "gw_500_credentials": _openai(
        500, "litellm.InternalServerError: InternalServerError: OpenAIException - Missing "
        "credentials. Please pass an `api_key`, `workload_identity`, `admin_api_key`, or set "
        "the `OPENAI_API_KEY` or `OPENAI_ADMIN_KEY` environment variable.", None, "500"),
    "gw_500_auth": _openai(
        500, "litellm.AuthenticationError: AuthenticationError: OpenrouterException - "
        "Error code: 401 - {'error': {'message': 'No auth credentials found', 'code': 401}}",
        None, "500"),
    "gw_400_provider": _openai(
        400, "litellm.BadRequestError: LLM Provider NOT provided. Pass in the LLM provider you "
        "are trying to call. You passed model=gpt-4o-2024-08-06", None, "400"),
    "gw_400_model_name": _openai(
        400, "/chat/completions: Invalid model name passed in model=custom/kimi-k2.7-code. "
        "Call `/v1/models` to view available models for your key.", "None", "400"),
    "gw_400_not_available": _openai(
        400, "Model openai/claude-3-5-sonnet is not available", None, "400"),
    "gw_404_endpoints": _openai(
        404, "No endpoints found for deepseek/deepseek-chat-v3.1:free.", None, "404"),
    "gw_500_no_route": (500, {"status": "error", "error": {
        "code": "ERR_NGROK_3804", "message": "Unable to route request - no models matched"}},
                        {}),
    # -- plain HTTP ---------------------------------------------------------------------------
    "http_502": (502, ("<html><head><title>502 Bad Gateway</title></head><body><center><h1>"
                       "502 Bad Gateway</h1></center><hr><center>cloudflare</center></body>"
                       "</html>"),
                 {"content-type": "text/html"}),
}


def _completion(content: str, finish_reason: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-9a8b7c", "object": "chat.completion", "created": 1735689600,
        "model": "gpt-4o-2024-08-06",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content,
                                             "refusal": None},
                     "logprobs": None, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19},
    }


OK_SCENARIOS: dict[str, dict[str, Any]] = {
    "ok_length": _completion('{"answer": "forty', "length"),
    "ok_content_filter": _completion("", "content_filter"),
    "ok_not_json": _completion("Sure! Here is the JSON you asked for: {answer: 42", "stop"),
}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Stay quiet."""

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        scenario = self.path.lstrip("/").split("/", 1)[0].split("?", 1)[0]
        if scenario == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       b"\x01\x00\x00\x00\x00\x00\x00\x00")
            self.close_connection = True
            self.connection.close()
            return
        if scenario == "slow":
            time.sleep(SLOW_S)
            status, body, headers = 200, OK_SCENARIOS["ok_not_json"], {}
        elif scenario in OK_SCENARIOS:
            status, body, headers = 200, OK_SCENARIOS[scenario], {}
        else:
            status, body, headers = SCENARIOS.get(
                scenario, (404, {"error": {"message": f"no scenario {scenario}"}}, {}))
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        # a client that gave up waiting (the timeout tests' "slow") has closed its end: no
        # traceback in the run's output for an answer nobody reads
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.send_response(status)
            if "content-type" not in headers:
                self.send_header("content-type", "application/json")
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    do_GET = do_POST = _answer  # noqa: N815 - http.server's naming


class ProviderStub:
    """The stub server on 127.0.0.1, an ephemeral port, serving in a daemon thread."""

    def __init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, scenario: str) -> str:
        """The base URL of a scenario."""
        return f"http://127.0.0.1:{self.port}/{scenario}"

    def __enter__(self) -> ProviderStub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def closed_port() -> int:
    """A 127.0.0.1 port with nothing listening (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
