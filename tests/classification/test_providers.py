"""Provider rows of the classification table, over exceptions raised by the REAL SDKs.

Each SDK (openai, anthropic, google-genai, httpx, requests) calls the local stub server
(tests/provider_stub.py, 127.0.0.1 only) with retries off, and the exception it raises is
classified. Expected codes come from the table in issue 4, not from the code under test.
"""

from __future__ import annotations

import importlib
import inspect
import traceback
from typing import TYPE_CHECKING, Any

import pytest

from failcode import FC, Failure, classify, classify_http, classify_text
from failcode.classification._classify import RULES
from tests._needs import missing
from tests.provider_stub import SCENARIOS, ProviderStub, closed_port

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


@pytest.fixture(scope="module")
def stub() -> Iterator[ProviderStub]:
    """The stub provider server for this module."""
    with ProviderStub() as server:
        yield server


def _raised(call: Callable[[], object]) -> BaseException:
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - any SDK exception is what the test wants
        return exc
    pytest.fail("the SDK call did not raise")


def openai_exc(base_url: str, *, timeout: float = 10.0, parse: bool = False) -> BaseException:
    """Call the openai SDK (max_retries=0) and return what it raised."""
    import openai
    import pydantic

    class Answer(pydantic.BaseModel):
        answer: str

    messages: Any = [{"role": "user", "content": "hi"}]
    with openai.OpenAI(api_key="sk-test", base_url=base_url + "/v1", max_retries=0,
                       timeout=timeout) as client:
        if parse:
            return _raised(lambda: client.chat.completions.parse(
                model="gpt-4o", messages=messages, response_format=Answer))
        return _raised(lambda: client.chat.completions.create(model="gpt-4o",
                                                              messages=messages))


def anthropic_exc(base_url: str, *, timeout: float = 10.0) -> BaseException:
    """Call the anthropic SDK (max_retries=0) and return what it raised."""
    import anthropic

    with anthropic.Anthropic(api_key="sk-ant-test", base_url=base_url, max_retries=0,
                             timeout=timeout) as client:
        return _raised(lambda: client.messages.create(
            model="claude-stub-model", max_tokens=16,
            messages=[{"role": "user", "content": "hi"}]))


def gemini_exc(base_url: str, *, timeout_ms: int = 10000) -> BaseException:
    """Call the google-genai SDK (no retry options: one attempt) and return what it raised."""
    from google import genai
    from google.genai import types

    with genai.Client(api_key="test-key", http_options=types.HttpOptions(
            base_url=base_url + "/", api_version="v1beta", timeout=timeout_ms)) as client:
        return _raised(lambda: client.models.generate_content(model="gemini-2.0-flash",
                                                              contents="hi"))


def _failure(result: object) -> Failure:
    assert isinstance(result, Failure), result
    return result


# -- one test per row, per SDK ------------------------------------------------------------------

OPENAI_ROWS = [
    ("oa_401", FC.PROV_AUTH),
    ("oa_403", FC.PROV_PERMISSION),
    ("oa_429_rate", FC.PROV_RATE_LIMIT),
    ("oa_429_quota", FC.PROV_QUOTA),
    ("oa_404_model", FC.PROV_MODEL_NOT_FOUND),
    ("oa_400_context", FC.PROV_CONTEXT_TOO_LARGE),
    ("oa_400_tools", FC.PROV_TOOL_USE_UNSUPPORTED),
    ("oa_400_content", FC.PROV_CONTENT_FILTERED),
    ("oa_400_bad", FC.PROV_BAD_REQUEST),
    ("oa_400_ratelimit_word", FC.PROV_BAD_REQUEST),
    ("oa_400_token_429", FC.PROV_BAD_REQUEST),
    ("oa_500", FC.PROV_SERVER_ERROR),
    ("oa_503_overloaded", FC.PROV_OVERLOADED),
    ("oa_408", FC.PROV_TIMEOUT),
]


@pytest.mark.parametrize(("scenario", "code"), OPENAI_ROWS)
def test_openai_status_rows(stub: ProviderStub, scenario: str, code: FC) -> None:
    """An openai SDK error from a real response maps to its row, with the provider named."""
    failure = _failure(classify(openai_exc(stub.url(scenario))))
    assert failure.code == code
    assert failure.error_class == code.spec.error_class
    assert failure.surface == "llm.openai"
    assert failure.metadata["http_status"] == SCENARIOS[scenario][0]
    if "provider" in failure.params:
        assert failure.params["provider"] == "OpenAI"


ANTHROPIC_ROWS = [
    ("an_401", FC.PROV_AUTH),
    ("an_403", FC.PROV_PERMISSION),
    ("an_404", FC.PROV_MODEL_NOT_FOUND),
    ("an_429", FC.PROV_RATE_LIMIT),
    ("an_400_usage", FC.PROV_QUOTA),
    ("an_400_credit", FC.PROV_QUOTA),
    ("an_402_billing", FC.PROV_QUOTA),
    ("an_400_prompt", FC.PROV_CONTEXT_TOO_LARGE),
    ("an_413", FC.PROV_CONTEXT_TOO_LARGE),
    ("an_400_bad", FC.PROV_BAD_REQUEST),
    ("an_500", FC.PROV_SERVER_ERROR),
    ("an_529", FC.PROV_OVERLOADED),
    ("an_504", FC.PROV_TIMEOUT),
]


@pytest.mark.parametrize(("scenario", "code"), ANTHROPIC_ROWS)
def test_anthropic_status_rows(stub: ProviderStub, scenario: str, code: FC) -> None:
    """An anthropic SDK error from a real response maps to its row, request id kept."""
    failure = _failure(classify(anthropic_exc(stub.url(scenario))))
    assert failure.code == code
    assert failure.surface == "llm.anthropic"
    assert failure.metadata["http_status"] == SCENARIOS[scenario][0]
    assert failure.metadata["request_id"] == "req_011CSHoEeqs5C35K2UUqR7Fy"
    assert failure.metadata["provider_code"] == SCENARIOS[scenario][1]["error"]["type"]


GEMINI_ROWS = [
    ("ge_400_key", FC.PROV_AUTH),
    ("ge_403", FC.PROV_PERMISSION),
    ("ge_429_rate", FC.PROV_RATE_LIMIT),
    ("ge_429_daily", FC.PROV_QUOTA),
    ("ge_404", FC.PROV_MODEL_NOT_FOUND),
    ("ge_400_context", FC.PROV_CONTEXT_TOO_LARGE),
    ("ge_400_tools", FC.PROV_TOOL_USE_UNSUPPORTED),
    ("ge_400_bad", FC.PROV_BAD_REQUEST),
    ("ge_503", FC.PROV_OVERLOADED),
    ("ge_500", FC.PROV_SERVER_ERROR),
]


@pytest.mark.parametrize(("scenario", "code"), GEMINI_ROWS)
def test_gemini_status_rows(stub: ProviderStub, scenario: str, code: FC) -> None:
    """A google-genai APIError from a real response maps to its row."""
    failure = _failure(classify(gemini_exc(stub.url(scenario))))
    assert failure.code == code
    assert failure.surface == "llm.gemini"
    assert failure.metadata["http_status"] == SCENARIOS[scenario][0]
    if "provider" in failure.params:
        assert failure.params["provider"] == "Google Gemini"


def test_gemini_retry_info_is_the_delay_and_18_403_is_no_403(stub: ProviderStub) -> None:
    """Gemini's RetryInfo "18s" becomes retry_after_s; "18.403470473s" never reads as a 403."""
    failure = _failure(classify(gemini_exc(stub.url("ge_429_rate"))))
    assert failure.metadata["retry_after_s"] == 18.0
    assert failure.metadata["http_status"] == 429
    assert failure.metadata["provider_code"] == "RESOURCE_EXHAUSTED"


def test_gemini_api_key_invalid_reason_is_the_provider_code(stub: ProviderStub) -> None:
    """ErrorInfo.reason API_KEY_INVALID is kept as the provider code of a 400 auth failure."""
    failure = _failure(classify(gemini_exc(stub.url("ge_400_key"))))
    assert failure.metadata["provider_code"] == "API_KEY_INVALID"


def test_anthropic_retry_after_and_should_retry_headers(stub: ProviderStub) -> None:
    """Anthropic's retry-after: 17 and x-should-retry: true land in metadata."""
    failure = _failure(classify(anthropic_exc(stub.url("an_429"))))
    assert failure.metadata["retry_after_s"] == 17.0
    assert failure.metadata["should_retry"] is True


def test_openai_retry_after_ms_and_request_id(stub: ProviderStub) -> None:
    """retry-after-ms 2710 is 2.71 s; x-request-id is the request id; the code is kept."""
    failure = _failure(classify(openai_exc(stub.url("oa_429_rate"))))
    assert failure.metadata["retry_after_s"] == 2.71
    assert failure.metadata["request_id"] == "req_7c2e"
    assert failure.metadata["provider_code"] == "rate_limit_exceeded"


@pytest.mark.parametrize(("call", "model"), [
    (lambda url: openai_exc(url + "/oa_400_context"), "gpt-4o"),
    (lambda url: anthropic_exc(url + "/an_404"), "claude-opus-9-latest"),
    (lambda url: gemini_exc(url + "/ge_404"), "gemini-9.0-ultra"),
])
def test_model_name_is_in_params(stub: ProviderStub, call: Callable[[str], BaseException],
                                 model: str) -> None:
    """Model rows name the model (from the message, else the request body) in params."""
    failure = _failure(classify(call(f"http://127.0.0.1:{stub.port}")))
    assert failure.params["model"] == model


def test_openai_content_filter_finish_reason(stub: ProviderStub) -> None:
    """openai's ContentFilterFinishReasonError (finish_reason content_filter) is filtered."""
    exc = openai_exc(stub.url("ok_content_filter"), parse=True)
    assert type(exc).__name__ == "ContentFilterFinishReasonError"
    assert _failure(classify(exc)).code == FC.PROV_CONTENT_FILTERED


def test_openai_length_finish_reason_is_malformed_output(stub: ProviderStub) -> None:
    """A structured output cut by the length limit does not parse: malformed output."""
    exc = openai_exc(stub.url("ok_length"), parse=True)
    assert type(exc).__name__ == "LengthFinishReasonError"
    assert _failure(classify(exc)).code == FC.PROV_MALFORMED_OUTPUT


def test_model_output_that_is_not_json(stub: ProviderStub) -> None:
    """json.loads of a real completion's text fails: malformed output on an output surface."""
    import json

    import openai

    with openai.OpenAI(api_key="sk-test", base_url=stub.url("ok_not_json") + "/v1",
                           max_retries=0) as client:
        reply = client.chat.completions.create(model="gpt-4o",
                                               messages=[{"role": "user", "content": "json"}])
    exc = _raised(lambda: json.loads(reply.choices[0].message.content or ""))
    failure = _failure(classify(exc, surface="llm.openai.output"))
    assert failure.code == FC.PROV_MALFORMED_OUTPUT
    assert failure.params["expected"] == "JSON"


def test_model_output_failing_its_schema(stub: ProviderStub) -> None:
    """A pydantic ValidationError of model output (output surface) is malformed output."""
    import openai
    import pydantic

    class Answer(pydantic.BaseModel):
        answer: int

    with openai.OpenAI(api_key="sk-test", base_url=stub.url("ok_length") + "/v1",
                           max_retries=0) as client:
        reply = client.chat.completions.create(model="gpt-4o",
                                               messages=[{"role": "user", "content": "json"}])
    exc = _raised(lambda: Answer.model_validate_json(reply.choices[0].message.content or ""))
    failure = _failure(classify(exc, surface="agent.parse"))
    assert failure.code == FC.PROV_MALFORMED_OUTPUT
    assert failure.params["expected"] == "Answer"


# -- timeouts and connections through the SDKs ------------------------------------------------

SDK_CALLS: dict[str, Callable[..., BaseException]] = {
    "openai": lambda url, t: openai_exc(url, timeout=t),
    "anthropic": lambda url, t: anthropic_exc(url, timeout=t),
    "gemini": lambda url, t: gemini_exc(url, timeout_ms=int(t * 1000)),
}


@pytest.mark.parametrize("sdk", sorted(SDK_CALLS))
def test_sdk_timeout(stub: ProviderStub, sdk: str) -> None:
    """A client timeout through each SDK is a provider timeout (the SDK wraps httpx's)."""
    failure = _failure(classify(SDK_CALLS[sdk](stub.url("slow"), 0.3)))
    assert failure.code == FC.PROV_TIMEOUT
    assert failure.error_class == "timeout"


@pytest.mark.parametrize("sdk", sorted(SDK_CALLS))
def test_sdk_connection_refused(sdk: str) -> None:
    """Connection refused through each SDK is a provider connection failure."""
    failure = _failure(classify(SDK_CALLS[sdk](f"http://127.0.0.1:{closed_port()}", 5.0)))
    assert failure.code == FC.PROV_CONNECTION


@pytest.mark.parametrize("sdk", sorted(SDK_CALLS))
def test_sdk_connection_reset(stub: ProviderStub, sdk: str) -> None:
    """A server that drops the connection unanswered is a provider connection failure."""
    failure = _failure(classify(SDK_CALLS[sdk](stub.url("reset"), 5.0)))
    assert failure.code == FC.PROV_CONNECTION


# -- httpx and requests ------------------------------------------------------------------------


def test_httpx_status_error(stub: ProviderStub) -> None:
    """httpx raise_for_status on an Anthropic 529 body: overloaded, with its status."""
    import httpx

    response = httpx.post(stub.url("an_529") + "/v1/messages")
    failure = _failure(classify(_raised(response.raise_for_status)))
    assert failure.code == FC.PROV_OVERLOADED
    assert failure.metadata["http_status"] == 529


def test_httpx_html_502_is_server_error(stub: ProviderStub) -> None:
    """A gateway's HTML 502 is a server error."""
    import httpx

    response = httpx.get(stub.url("http_502"))
    failure = _failure(classify(_raised(response.raise_for_status)))
    assert failure.code == FC.PROV_SERVER_ERROR
    assert failure.surface == "http"


def test_httpx_timeout_outside_a_provider_is_a_tool_timeout(stub: ProviderStub) -> None:
    """httpx.ReadTimeout with no provider host or surface is an OS-level timeout."""
    import httpx

    exc = _raised(lambda: httpx.get(stub.url("slow"), timeout=0.3))
    assert isinstance(exc, httpx.ReadTimeout)
    failure = _failure(classify(exc))
    assert failure.code == FC.OS_TIMEOUT
    assert _failure(classify(exc, surface="llm.complete")).code == FC.PROV_TIMEOUT


def test_httpx_connect_error() -> None:
    """httpx.ConnectError is a connection failure."""
    import httpx

    exc = _raised(lambda: httpx.get(f"http://127.0.0.1:{closed_port()}/"))
    assert _failure(classify(exc)).code == FC.OS_CONNECTION
    assert _failure(classify(exc, surface="llm.openai")).code == FC.PROV_CONNECTION


def test_requests_http_error(stub: ProviderStub) -> None:
    """requests raise_for_status on OpenAI's insufficient_quota 429 is a quota failure."""
    import requests

    response = requests.post(stub.url("oa_429_quota") + "/v1/chat/completions", timeout=10)
    failure = _failure(classify(_raised(response.raise_for_status)))
    assert failure.code == FC.PROV_QUOTA
    assert failure.metadata["provider_code"] == "insufficient_quota"


def test_requests_timeout_and_connection(stub: ProviderStub) -> None:
    """requests' ReadTimeout is a timeout and its ConnectionError a connection failure."""
    import requests

    timeout = _raised(lambda: requests.get(stub.url("slow"), timeout=0.3))
    refused = _raised(lambda: requests.get(f"http://127.0.0.1:{closed_port()}/", timeout=5))
    assert _failure(classify(timeout)).code == FC.OS_TIMEOUT
    assert _failure(classify(refused)).code == FC.OS_CONNECTION


# -- completeness: every exported exception class has an explicit row ---------------------------


def _exported(module: Any, base: type[BaseException]) -> list[str]:
    return sorted(name for name, obj in list(vars(module).items())
                  if inspect.isclass(obj) and issubclass(obj, base))


def _missing(family: str, names: list[str]) -> list[str]:
    return [name for name in names if f"{family}.{name}" not in RULES]


def test_openai_all_exceptions_mapped() -> None:
    """Every exception class openai exports (OpenAIError subclasses) has a row."""
    import openai

    names = _exported(openai, openai.OpenAIError)
    assert len(names) > 10
    assert _missing("openai", names) == []


def test_anthropic_all_exceptions_mapped() -> None:
    """Every exception class anthropic exports (AnthropicError subclasses) has a row."""
    import anthropic

    names = _exported(anthropic, anthropic.AnthropicError)
    assert len(names) > 10
    assert _missing("anthropic", names) == []


def test_google_genai_all_exceptions_mapped() -> None:
    """Every exception class google.genai.errors defines has a row."""
    from google.genai import errors

    names = [name for name in _exported(errors, BaseException)
             if getattr(errors, name).__module__ == errors.__name__]
    assert "ClientError" in names
    assert _missing("google.genai", names) == []


@pytest.mark.parametrize("module_name", ["httpx", "httpx2", "httpcore"])
def test_httpx_all_exceptions_mapped(module_name: str) -> None:
    """Every exception class httpx (and the httpx2 fork, httpcore) exports has a row."""
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        missing(f"{module_name} is not installed")
    names = _exported(module, Exception)
    assert "ReadTimeout" in names
    assert _missing("httpx", names) == []


def test_requests_all_exceptions_mapped() -> None:
    """Every class in requests.exceptions (warnings included) has a row."""
    import requests

    names = [name for name in _exported(requests.exceptions, BaseException)
             if getattr(requests.exceptions, name).__module__.startswith("requests")]
    assert "HTTPError" in names
    assert _missing("requests", names) == []


# -- classify_http and classify_text share the rows -------------------------------------------


@pytest.mark.parametrize(("scenario", "code"), OPENAI_ROWS + ANTHROPIC_ROWS + GEMINI_ROWS)
def test_classify_http_agrees_with_the_sdk_rows(scenario: str, code: FC) -> None:
    """classify_http over the same raw status, body and headers gives the same code."""
    status, body, headers = SCENARIOS[scenario]
    failure = classify_http(status, body, headers)
    assert failure.code == code
    assert failure.metadata["http_status"] == status


@pytest.mark.parametrize(("call", "scenario", "code"), [
    (openai_exc, "oa_429_quota", FC.PROV_QUOTA),
    (openai_exc, "oa_429_rate", FC.PROV_RATE_LIMIT),
    (anthropic_exc, "an_529", FC.PROV_OVERLOADED),
    (anthropic_exc, "an_400_usage", FC.PROV_QUOTA),
    (gemini_exc, "ge_429_rate", FC.PROV_RATE_LIMIT),
    (gemini_exc, "ge_400_key", FC.PROV_AUTH),
])
def test_classify_text_of_a_real_sdk_message(stub: ProviderStub, call: Callable[[str], Any],
                                             scenario: str, code: FC) -> None:
    """The logged type name and str() of a real SDK error classify as the live exception."""
    exc = call(stub.url(scenario))
    name = f"{type(exc).__module__}.{type(exc).__qualname__}"
    live = _failure(classify(exc))
    text = classify_text(name, str(exc), traceback="".join(traceback.format_exception(exc)))
    assert isinstance(text, Failure)
    assert text.code == code == live.code
    assert text.signature == live.signature


def test_classify_http_headers_any_case_and_http_date() -> None:
    """Retry-After as an HTTP-date and header names in any case are read."""
    from email.utils import formatdate

    headers = {"Retry-After": formatdate(4102444800.0, usegmt=True), "X-Should-Retry": "false"}
    failure = classify_http(503, {"error": {"message": "busy"}}, headers)
    assert failure.code == FC.PROV_SERVER_ERROR
    assert failure.metadata["retry_after_s"] > 0
    assert failure.metadata["should_retry"] is False


def test_classify_http_bytes_body_and_default_surface() -> None:
    """A bytes body is decoded; an Anthropic-shaped body defaults the surface."""
    failure = classify_http(529, b'{"type":"error","error":{"type":"overloaded_error",'
                                 b'"message":"Overloaded"}}')
    assert failure.code == FC.PROV_OVERLOADED
    assert failure.surface == "llm.anthropic"
