"""A provider's error is never an unclassified agent failure: what its type, status or wording
says, else the closest provider row (``classify_error``'s last rule, docs/triage.md "Provider
errors no rule names").

The wordings are Copilot CLI 1.0.60's own (``npm pack`` into the lab cache): the error its
retry loop throws when it gives up, found in its package and filled in as that code fills it,
and openai-node's ``APIError`` message (``<status> <body>``) as its ``makeMessage`` builds it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from failcode import FC
from failcode.triage._events import ErrorText
from failcode.triage.analysis._step import classify_error
from tests.triage.oracles.test_agent_strings import source
from tests.triage.test_copilot import START, _event, _one, _prompt, _write

if TYPE_CHECKING:
    from pathlib import Path

# the template of the error Copilot's retry loop throws, as its bundle writes it
_GAVE_UP = re.compile(
    r"`(Failed to get response from the AI model; retried )\$\{[^}]+\}( times \(total retry "
    r"wait time: )\$\{[^}]+\}( seconds\))\$\{[^}]+\}( Last error: )\$\{[^`]*?\"(Unknown error)\"")
_MAKE_MESSAGE = "return e&&o?`${e} ${o}`:e?`${e} status code (no body)`"


def gave_up(retries: int, last_error: str | None) -> str:
    """Copilot CLI's message after its last retry, from the template in its own package."""
    match = _GAVE_UP.search(source("copilot-cli"))
    assert match is not None, "Copilot CLI's retry error is no longer in its package"
    start, times, seconds, last, unknown = match.groups()
    return f"{start}{retries}{times}12.50{seconds}{last}{last_error or unknown}"


@pytest.mark.parametrize(("last_error", "code"), [
    (None, FC.PROV_SERVER_ERROR),  # no cause kept: the closest provider row
    ("429 Too Many Requests", FC.PROV_RATE_LIMIT),
    ("Request timed out.", FC.PROV_TIMEOUT),
    ("fetch failed", FC.PROV_CONNECTION),
])
def test_copilot_giving_up_is_a_provider_error(tmp_path: Path, last_error: str | None,
                                               code: FC) -> None:
    """The retry loop's last error names the cause when it kept one; without one the session
    still ends on the provider, never on an unclassified agent failure."""
    path = _write(tmp_path, [START, _prompt(), _event("session.error", {
        "errorType": "query", "message": gave_up(5, last_error)})])
    session = _one(path)
    assert session.status == "provider_error"
    assert session.ended_failure is not None
    assert session.ended_failure.code == code.value


def test_openai_node_status_messages_keep_their_status(tmp_path: Path) -> None:
    """openai-node's ``<status> <body>`` (a body that is a status line), kept JSON-quoted in a
    ``model_call`` error, is read by its status."""
    assert _MAKE_MESSAGE in source("copilot-cli")
    path = _write(tmp_path, [START, _prompt(), _event("session.error", {
        "errorType": "model_call", "message": '"400 400 Bad Request\\n"'})])
    session = _one(path)
    assert session.ended_failure is not None
    assert session.ended_failure.code == FC.PROV_BAD_REQUEST.value
    assert [f.evidence for f in session.failures] == ["400 400 Bad Request"]


@pytest.mark.parametrize("type_name", ["APIError", "Error", "SomeGatewayError", ""])
def test_no_provider_error_is_unclassified(type_name: str) -> None:
    """Whatever type the reader passes, a provider-sourced text is a provider row."""
    failure = classify_error(ErrorText(1, "provider", type_name, "something went wrong"))
    assert failure is not None
    assert failure.code.startswith("FC-PROV-"), failure.code
    assert failure.code == FC.PROV_SERVER_ERROR.value
