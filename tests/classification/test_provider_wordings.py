"""Provider errors in the wordings of litellm and the SDKs, made by their own code.

litellm runs in the lab's aider environment (``python -m tests.lab install``): its exception
types are built there with the messages its own raise sites format, and their text is what
aider and mini-swe-agent print. The openai SDK (a test dependency) builds its status errors
from a real ``httpx.Response``.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from failcode import FC, classify
from failcode.classification._classify import classify_text
from tests._needs import missing, need_module
from tests.lab.agents import agents

# (litellm type, keyword arguments besides model and llm_provider, the code); the messages are
# the ones litellm's raise sites format (llms/base_llm/base_model_iterator.py "Error parsing
# chunk: {e},\nReceived chunk: {chunk}", proxy/_types.py "Key does not have access to the
# model", litellm_core_utils/get_llm_provider_logic.py "LLM Provider NOT provided")
LITELLM = [
    ("APIConnectionError", {"message": "Error parsing chunk: Expecting value: line 1 column 1 "
                                       "(char 0),\nReceived chunk: data: {\"type\": "},
     FC.PROV_CONNECTION),
    ("APIError", {"status_code": 500, "message": "Error parsing chunk: Expecting value,\n"
                                                 "Received chunk: data: {"},
     FC.PROV_SERVER_ERROR),
    ("APIError", {"status_code": 400, "message": "Your request was blocked."},
     FC.PROV_CONTENT_FILTERED),
    ("BadRequestError", {"message": "LLM Provider NOT provided. Pass in the LLM provider you "
                                    "are trying to call. You passed model=claude-x"},
     FC.PROV_MODEL_NOT_FOUND),
    ("BadRequestError", {"message": "Key does not have access to the model"},
     FC.PROV_PERMISSION),
    ("BadRequestError", {"message": "The model `gpt-5` is not available on your current plan"},
     FC.PROV_PERMISSION),
]


def _litellm_texts() -> list[tuple[str, str]]:
    aider = agents()["aider"]
    python = aider.install_dir / "bin" / "python"
    if not python.exists():
        missing("the lab's aider (litellm) is not installed: python -m tests.lab install")
    script = (
        "import json, sys, litellm\n"
        "out = []\n"
        "for name, kwargs in json.loads(sys.argv[1]):\n"
        "    exc = getattr(litellm, name)(model='m', llm_provider='openai', **kwargs)\n"
        "    out.append([type(exc).__module__ + '.' + type(exc).__name__, str(exc)])\n"
        "print(json.dumps(out))\n")
    cases = json.dumps([[name, kwargs] for name, kwargs, _ in LITELLM])
    done = subprocess.run([str(python), "-c", script, cases], capture_output=True, text=True,
                          check=True, timeout=300)
    return [(name, text) for name, text in json.loads(done.stdout)]


def test_litellm_wordings_are_their_provider_codes() -> None:
    """litellm's own exceptions, as text, map to the code their wording names."""
    texts = _litellm_texts()
    got = [(name, text[:60], classify_text(name, text).code) for name, text in texts]
    assert got == [(name, text[:60], case[2].value)
                   for (name, text), case in zip(texts, LITELLM, strict=True)]


@pytest.mark.parametrize(("status", "body", "code"), [
    (400, {"error": {"message": "The model `gpt-5` is not available on your current plan.",
                     "type": "invalid_request_error"}}, FC.PROV_PERMISSION),
    (400, {"error": {"message": "Your organization does not have access to model o3.",
                     "type": "invalid_request_error"}}, FC.PROV_PERMISSION),
    (400, {"error": {"message": "The request was blocked by the safety systems.",
                     "code": "misalignment_policy_violation"}}, FC.PROV_CONTENT_FILTERED),
    (429, {"error": {"message": "The organization has reached its usage limit.",
                     "code": "organization_usage_limit_exceeded"}}, FC.PROV_QUOTA),
    (503, {"error": {"message": "The model service is temporarily overloaded.",
                     "code": "server_overloaded"}}, FC.PROV_OVERLOADED),
])
def test_openai_status_errors_in_new_wordings(status: int, body: dict[str, object],
                                              code: FC) -> None:
    """The openai SDK's own status errors carrying these bodies map to their codes."""
    openai = need_module("openai")
    httpx = need_module("httpx")
    request = httpx.Request("POST", "https://api.openai.com/v1/chat/completions")
    response = httpx.Response(status, json=body, request=request)
    client = openai.OpenAI(api_key="sk-test", base_url="https://api.openai.com/v1")
    exc = client._make_status_error_from_response(response)
    assert classify(exc).code == code.value
