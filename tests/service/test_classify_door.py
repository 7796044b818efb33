"""The classify door's logic (``failcode.service._classify``): models and ``classify_payload``.

Real inputs throughout: commands run through :mod:`subprocess` in a temporary directory,
tracebacks printed by a real Python, provider errors fetched over HTTP from the provider stub on
127.0.0.1. Expected codes come from the catalog (``FC``) or from failcode's own classifiers run
on the same input, never from a pasted run.
"""

from __future__ import annotations

import os
import secrets
import string
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import httpx
import msgspec
import pytest

from failcode import (
    FC,
    Failure,
    History,
    NoMatch,
    available_languages,
    classify,
    classify_text,
    decide,
    find_secrets,
    from_command,
    render_user,
)
from tests._needs import need_module, need_tool
from tests.provider_stub import ProviderStub

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pydantic = need_module("pydantic")

from failcode.service._classify import (  # noqa: E402 - after the optional dependency's check
    MAX_BODY_CHARS,
    MAX_CONTEXT_KEYS,
    MAX_HEADERS,
    MAX_MESSAGE_CHARS,
    ClassifyRequest,
    ClassifyResponse,
    CommandInput,
    ExceptionInput,
    HttpInput,
    classify_payload,
)

MODELS = (ExceptionInput, CommandInput, HttpInput, ClassifyRequest, ClassifyResponse)
PYTHON = sys.executable


def _run(argv: list[str], cwd: Path, **extra: Any) -> CommandInput:
    """Run ``argv`` for real in ``cwd`` and describe the finished command."""
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False, **extra)
    return CommandInput(argv=argv, exit_code=done.returncode, stdout=done.stdout,
                        stderr=done.stderr)


def _door(**subject: Any) -> ClassifyResponse:
    return classify_payload(ClassifyRequest(**subject))


def _record(response: ClassifyResponse) -> Failure:
    """The answer's failure read back through the record's own decoder."""
    assert response.kind == "failure"
    assert response.failure is not None
    return Failure.from_dict(response.failure)


def _traceback_of(script: str, cwd: Path, **extra: Any) -> str:
    """The traceback a real Python prints running ``script`` as a file in ``cwd``."""
    (cwd / "app.py").write_text(script, encoding="utf-8")
    done = subprocess.run([PYTHON, "app.py"], cwd=cwd, capture_output=True, text=True,
                          check=False, **extra)
    assert done.returncode == 1
    return done.stderr


def _github_token() -> str:
    alphabet = string.ascii_letters + string.digits
    return "ghp_" + "".join(secrets.choice(alphabet) for _ in range(36))


def _anthropic_key() -> str:
    return "sk-ant-api03-" + secrets.token_urlsafe(72)[:93] + "AA"


def _secret_part(token: str) -> str:
    """The random part of a token (what redaction must remove), past its known prefix."""
    return token[-30:]


@pytest.fixture(scope="module")
def stub() -> Iterator[ProviderStub]:
    with ProviderStub() as server:
        yield server


def _fetch(stub: ProviderStub, scenario: str, path: str) -> HttpInput:
    """A provider's error response as a client receives it over HTTP."""
    response = httpx.post(stub.url(scenario) + path, json={"model": "m", "messages": []})
    return HttpInput(status=response.status_code, body=response.text,
                     headers=dict(response.headers))


# -- commands -----------------------------------------------------------------------------------


class TestCommand:
    def test_missing_module_from_real_python(self, tmp_path: Path) -> None:
        """A real Python's "No module named" stderr is the catalog's missing-module failure."""
        command = _run([PYTHON, "-c", "import nonexistent_mod_xyz"], tmp_path)
        response = _door(command=command)
        failure = _record(response)
        assert response.code == FC.CMD_MISSING_MODULE.value
        assert response.category == FC.CMD_MISSING_MODULE.spec.category.value
        assert failure.params["module"] == "nonexistent_mod_xyz"
        assert response.signature == failure.signature

    def test_the_door_agrees_with_from_command(self, tmp_path: Path) -> None:
        """The door's record is from_command's for the same command and output."""
        command = _run([PYTHON, "-c", "import nonexistent_mod_xyz"], tmp_path)
        direct = from_command(command.argv or [], command.exit_code, command.stdout,
                              command.stderr)
        assert isinstance(direct, Failure)
        failure = _record(_door(command=command))
        assert (failure.code, failure.signature, failure.params) == (
            direct.code, direct.signature, direct.params)

    def test_missing_program_exit_127(self, tmp_path: Path) -> None:
        """A shell that cannot find the program (exit 127) is a command-not-found failure."""
        need_tool("sh")
        command = _run(["sh", "-c", "nonexistent-prog-xyz"], tmp_path)
        assert command.exit_code == 127
        response = _door(command=command)
        assert response.code == FC.CMD_NOT_FOUND.value
        assert response.category == FC.CMD_NOT_FOUND.spec.category.value
        assert _record(response).params["program"] == "nonexistent-prog-xyz"

    def test_shell_string_and_argv_agree(self, tmp_path: Path) -> None:
        """The same command given as a shell string is the same failure as given as argv."""
        need_tool("sh")
        argv = _run(["sh", "-c", "nonexistent-prog-xyz"], tmp_path)
        script = CommandInput(command="sh -c 'nonexistent-prog-xyz'", exit_code=argv.exit_code,
                              stderr=argv.stderr)
        assert _door(command=script).signature == _door(command=argv).signature

    def test_probe_that_found_nothing_is_an_outcome(self, tmp_path: Path) -> None:
        """grep exiting 1 with no output is from_command's NoMatch: an outcome, no decision."""
        need_tool("grep")
        (tmp_path / "notes.txt").write_text("nothing to see\n", encoding="utf-8")
        command = _run(["grep", "needle", "notes.txt"], tmp_path)
        assert command.exit_code == 1
        response = _door(command=command)
        assert response.kind == "outcome"
        assert response.outcome is not None
        assert response.outcome["type"] == NoMatch.__struct_config__.tag
        assert response.outcome["probe"] == "grep"
        assert (response.failure, response.decision, response.user_text) == (None, None, None)

    def test_success_is_none(self, tmp_path: Path) -> None:
        """Exit 0 is no failure: kind none and nothing else."""
        response = _door(command=_run([PYTHON, "-c", "print('ok')"], tmp_path))
        assert response.kind == "none"
        rest = response.model_dump(exclude={"kind", "locale"})
        assert all(value is None for value in rest.values()), rest

    def test_timed_out_command(self, tmp_path: Path) -> None:
        """A command stopped at its time limit is the general purpose's timeout code."""
        argv = [PYTHON, "-c", "import time; time.sleep(60)"]
        with pytest.raises(subprocess.TimeoutExpired) as stopped:
            subprocess.run(argv, cwd=tmp_path, capture_output=True, timeout=0.5, check=False)
        command = CommandInput(argv=argv, exit_code=None, timed_out=True,
                               stdout=(stopped.value.stdout or b"").decode(),
                               stderr=(stopped.value.stderr or b"").decode())
        response = _door(command=command)
        assert response.code == FC.CMD_TIMEOUT.value
        assert response.category == FC.CMD_TIMEOUT.spec.category.value

    def test_duration_is_metadata_not_signature(self, tmp_path: Path) -> None:
        """duration_s is kept in the record's metadata and never changes its signature."""
        command = _run([PYTHON, "-c", "import nonexistent_mod_xyz"], tmp_path)
        quick = _record(_door(command=command.model_copy(update={"duration_s": 0.25})))
        slow = _record(_door(command=command.model_copy(update={"duration_s": 99.5})))
        assert (quick.metadata["duration_s"], slow.metadata["duration_s"]) == (0.25, 99.5)
        assert quick.signature == slow.signature

    @pytest.mark.parametrize("exit_code", [-(2**31), 2**32 - 1])
    def test_extreme_exit_statuses_classify(self, exit_code: int) -> None:
        """The bounds of an exit status are accepted and classified without an error."""
        response = _door(command=CommandInput(command="make all", exit_code=exit_code))
        assert response.kind == "failure"


# -- HTTP ---------------------------------------------------------------------------------------


class TestHttp:
    def test_anthropic_429_with_retry_after(self, stub: ProviderStub) -> None:
        """Anthropic's 429 is a transient rate limit; the decision retries after its delay."""
        http = _fetch(stub, "an_429", "/v1/messages")
        assert http.status == 429
        response = _door(http=http)
        failure = _record(response)
        assert response.code == FC.PROV_RATE_LIMIT.value
        assert response.category == FC.PROV_RATE_LIMIT.spec.category.value
        assert response.retryable is True
        assert failure.metadata["retry_after_s"] == float(http.headers["retry-after"])
        decision = response.decision
        assert decision is not None
        assert decision["action"] == "retry"
        assert decision["server_delay_s"] == failure.metadata["retry_after_s"]
        assert decision["delay_s"] >= failure.metadata["retry_after_s"]

    def test_openai_429_rate_limit(self, stub: ProviderStub) -> None:
        """OpenAI's rate-limit 429 (retry-after-ms) is the same transient code."""
        http = _fetch(stub, "oa_429_rate", "/chat/completions")
        response = _door(http=http.model_copy(update={"provider": "openai"}))
        failure = _record(response)
        assert response.code == FC.PROV_RATE_LIMIT.value
        assert failure.surface == "llm.openai"
        assert failure.metadata["retry_after_s"] == int(http.headers["retry-after-ms"]) / 1000

    def test_openai_insufficient_quota_is_not_retried(self, stub: ProviderStub) -> None:
        """A 429 saying the quota is spent is the quota code, whose category forbids a retry."""
        response = _door(http=_fetch(stub, "oa_429_quota", "/chat/completions"))
        assert response.code == FC.PROV_QUOTA.value
        assert response.category == FC.PROV_QUOTA.spec.category.value
        assert response.retryable is False
        assert response.decision is not None
        assert response.decision["action"] != "retry"

    def test_door_agrees_with_the_sdk_exception(self, stub: ProviderStub) -> None:
        """The raw response is classified as classify() classifies the SDK's own exception."""
        anthropic = need_module("anthropic")
        with anthropic.Anthropic(api_key="test", base_url=stub.url("an_429"),
                                 max_retries=0) as client, \
                pytest.raises(anthropic.RateLimitError) as raised:
            client.messages.create(model="claude-x", max_tokens=1,
                                   messages=[{"role": "user", "content": "hi"}])
        live = classify(raised.value)
        assert isinstance(live, Failure)
        response = _door(http=_fetch(stub, "an_429", "/v1/messages"))
        assert (response.code, _record(response).error_class) == (live.code, live.error_class)

    @pytest.mark.parametrize("status", [101, 200, 204, 301, 304])
    def test_status_outside_the_error_classes_is_none(self, status: int) -> None:
        """A status that is not 4xx or 5xx is no failure."""
        assert _door(http=HttpInput(status=status, body="{}")).kind == "none"


# -- exceptions and text ------------------------------------------------------------------------


class TestException:
    def test_module_not_found_with_real_traceback(self, tmp_path: Path) -> None:
        """A ModuleNotFoundError given as text is the catalog's missing-module failure."""
        traceback = _traceback_of("import nonexistent_mod_xyz\n", tmp_path)
        response = _door(exception=ExceptionInput(
            type="ModuleNotFoundError", message="No module named 'nonexistent_mod_xyz'",
            traceback=traceback))
        assert response.code == FC.CMD_MISSING_MODULE.value
        assert _record(response).params["module"] == "nonexistent_mod_xyz"

    def test_text_classified_like_the_live_exception(self, tmp_path: Path) -> None:
        """Type, message and traceback give the code, class and params of the live exception."""
        traceback = _traceback_of("import nonexistent_mod_xyz\n", tmp_path)
        with pytest.raises(ModuleNotFoundError) as raised:
            import nonexistent_mod_xyz  # type: ignore[import-not-found]  # noqa: F401
        live = classify(raised.value)
        assert isinstance(live, Failure)
        failure = _record(_door(exception=ExceptionInput(
            type=type(raised.value).__name__, message=str(raised.value), traceback=traceback)))
        assert (failure.code, failure.error_class, failure.params) == (
            live.code, live.error_class, live.params)

    def test_module_qualifies_a_bare_type(self) -> None:
        """module + type is the qualified name: the same failure as the dotted type."""
        message = "Error code: 429 - {'error': {'code': 'rate_limit_exceeded'}}"
        qualified = _door(exception=ExceptionInput(type="openai.RateLimitError", message=message))
        split = _door(exception=ExceptionInput(type="RateLimitError", module="openai",
                                               message=message))
        assert split.code == qualified.code == FC.PROV_RATE_LIMIT.value
        assert split.signature == qualified.signature

    def test_keyboard_interrupt_is_a_cancellation(self) -> None:
        """A KeyboardInterrupt is a Cancelled outcome, not a failure."""
        response = _door(exception=ExceptionInput(type="KeyboardInterrupt"))
        assert response.kind == "outcome"
        assert response.outcome is not None
        assert response.outcome["type"] == "cancelled"
        assert response.decision is None


class TestText:
    def test_printed_traceback_is_its_last_exception(self, tmp_path: Path) -> None:
        """A printed traceback is classified as its exception given as type and message."""
        traceback = _traceback_of(
            "def fetch():\n    raise TimeoutError('read timed out')\n\nfetch()\n", tmp_path)
        as_text = _record(_door(text=traceback))
        as_parts = _record(_door(exception=ExceptionInput(
            type="TimeoutError", message="read timed out", traceback=traceback)))
        assert as_text.code == as_parts.code == FC.OS_TIMEOUT.value
        assert as_text.signature == as_parts.signature

    def test_chained_traceback_is_the_exception_raised_last(self, tmp_path: Path) -> None:
        """Of a chained traceback, the exception raised last is classified."""
        traceback = _traceback_of(
            "try:\n    open('missing.txt')\nexcept FileNotFoundError as exc:\n"
            "    raise TimeoutError('gave up') from exc\n", tmp_path)
        assert _door(text=traceback).code == FC.OS_TIMEOUT.value

    def test_log_line_naming_an_exception(self) -> None:
        """A log line naming an exception mid-line is that exception's failure."""
        line = ("2025-06-01T10:00:00Z ERROR agent: openai.RateLimitError: Error code: 429 - "
                "{'error': {'message': 'Rate limit reached', 'code': 'rate_limit_exceeded'}}")
        expected = classify_text("openai.RateLimitError", line.split("RateLimitError: ", 1)[1])
        assert isinstance(expected, Failure)
        assert _door(text=line).code == expected.code == FC.PROV_RATE_LIMIT.value

    def test_text_naming_no_exception(self) -> None:
        """Text that names no exception is the message of a plain Exception."""
        expected = classify_text("Exception", "the build broke again")
        assert isinstance(expected, Failure)
        response = _door(text="the build broke again\n")
        assert (response.code, response.signature) == (expected.code, expected.signature)


# -- context --------------------------------------------------------------------------------------


class TestContext:
    def test_session_step_and_context_enter_the_record(self, tmp_path: Path) -> None:
        """session and step win over context keys of the same name; the rest is kept."""
        command = _run([PYTHON, "-c", "import nonexistent_mod_xyz"], tmp_path)
        failure = _record(_door(command=command, session="sess-1", step=4,
                                context={"agent": "claude-code", "session": "other",
                                         "retry": True, "score": 0.5}))
        assert dict(failure.context) == {"agent": "claude-code", "session": "sess-1", "step": 4,
                                         "retry": True, "score": 0.5}

    def test_context_does_not_change_the_signature(self, tmp_path: Path) -> None:
        """Who and where are context, never part of the signature."""
        command = _run([PYTHON, "-c", "import nonexistent_mod_xyz"], tmp_path)
        plain = _door(command=command)
        placed = _door(command=command, session="s", step=1, context={"model": "opus"})
        assert plain.signature == placed.signature

    def test_outcome_carries_the_context(self, tmp_path: Path) -> None:
        """A non-error outcome keeps the session too."""
        need_tool("grep")
        (tmp_path / "notes.txt").write_text("x\n", encoding="utf-8")
        response = _door(command=_run(["grep", "needle", "notes.txt"], tmp_path),
                         session="sess-2")
        assert response.outcome is not None
        assert response.outcome["context"] == {"session": "sess-2"}


# -- decision and texts -----------------------------------------------------------------------


class TestDecision:
    def test_decision_is_decide_on_a_first_occurrence(self, tmp_path: Path) -> None:
        """The decision is failcode.decide with an empty history."""
        need_tool("sh")
        response = _door(command=_run(["sh", "-c", "nonexistent-prog-xyz"], tmp_path))
        expected = decide(_record(response), History())
        assert response.decision is not None
        assert (response.decision["action"], response.decision["route"],
                response.decision["rule"]) == (str(expected.action), str(expected.route),
                                               int(expected.rule))

    def test_user_text_is_render_user_with_the_decision(self, tmp_path: Path) -> None:
        """user_text is render_user of the record, told the decision."""
        need_tool("sh")
        response = _door(command=_run(["sh", "-c", "nonexistent-prog-xyz"], tmp_path))
        failure = _record(response)
        assert response.user_text == render_user(failure, decision=decide(failure, History()))
        assert response.developer_text is not None
        assert failure.signature in response.developer_text

    def test_answer_is_json(self, tmp_path: Path) -> None:
        """The whole answer encodes as JSON and reads back as the same model."""
        response = _door(command=_run([PYTHON, "-c", "import nonexistent_mod_xyz"], tmp_path))
        again = ClassifyResponse.model_validate_json(response.model_dump_json())
        assert again == response


# -- language -----------------------------------------------------------------------------------


_NOT_FOUND = ClassifyRequest(command=CommandInput(
    command="nonexistent-prog-xyz", exit_code=127,
    stderr="sh: 1: nonexistent-prog-xyz: not found\n"))
"""A request whose decision has no jitter (no retry), so its texts compare whole."""


def _other_languages() -> list[str]:
    return [language for language in available_languages() if language != "en"]


def _without_id(response: ClassifyResponse) -> str:
    assert response.user_text is not None
    assert response.failure is not None
    return response.user_text.replace(response.failure["error_id"], "<id>")


class TestLocale:
    def test_a_catalog_besides_english_is_shipped(self) -> None:
        """failcode ships at least one language besides English (the tests below use it)."""
        assert _other_languages()

    @pytest.mark.parametrize("language", _other_languages())
    def test_shipped_language_changes_the_user_text(self, language: str) -> None:
        """A shipped language renders user text other than English's, and says so."""
        english = classify_payload(_NOT_FOUND)
        local = classify_payload(_NOT_FOUND, locale=language)
        assert (english.locale, local.locale) == ("en", language)
        assert _without_id(local) != _without_id(english)
        assert local.code == english.code

    @pytest.mark.parametrize("language", _other_languages())
    def test_region_and_encoding_find_the_language(self, language: str) -> None:
        """de-AT and de_AT.UTF-8 find the de catalog."""
        request = ClassifyRequest(exception=ExceptionInput(type="TimeoutError", message="x"))
        for tag in (f"{language}-ZZ", f"{language}_ZZ.UTF-8", language.upper()):
            assert classify_payload(request, locale=tag).locale == language

    @pytest.mark.parametrize("locale", ["xx", "", "C", "x" * 100, None])
    def test_unshipped_language_is_english(self, locale: str | None) -> None:
        """A language failcode ships no catalog for gets English."""
        response = classify_payload(_NOT_FOUND, locale=locale)
        english = classify_payload(_NOT_FOUND)
        assert response.locale == "en"
        assert _without_id(response) == _without_id(english)


# -- redaction ----------------------------------------------------------------------------------


class TestRedaction:
    def test_secret_in_real_stderr_never_comes_back(self, tmp_path: Path) -> None:
        """An Anthropic key a command printed to stderr is absent from the whole answer."""
        key = _anthropic_key()
        script = ("import os, sys\n"
                  "sys.stderr.write('anthropic.AuthenticationError: invalid x-api-key '"
                  " + os.environ['KEY'] + '\\n')\n"
                  "sys.exit(1)\n")
        command = _run([PYTHON, "-c", script], tmp_path, env={**os.environ, "KEY": key})
        assert key in command.stderr
        text = _door(command=command).model_dump_json()
        assert _secret_part(key) not in text
        assert not find_secrets(text)

    def test_secret_in_a_traceback_message_never_comes_back(self, tmp_path: Path) -> None:
        """A GitHub token in a printed exception message is absent from the whole answer."""
        token = _github_token()
        traceback = _traceback_of(
            "import os\nraise RuntimeError('push refused for ' + os.environ['TOKEN'])\n",
            tmp_path, env={**os.environ, "TOKEN": token})
        assert token in traceback
        for response in (_door(text=traceback), _door(exception=ExceptionInput(
                type="RuntimeError", message=f"push refused for {token}",
                traceback=traceback))):
            text = response.model_dump_json()
            assert _secret_part(token) not in text
            assert not find_secrets(text)

    def test_secret_in_body_and_context_never_comes_back(self, stub: ProviderStub) -> None:
        """A key echoed in a provider body or passed in context is absent from the answer."""
        key, token = _anthropic_key(), _github_token()
        body = msgspec.json.encode({"type": "error", "error": {
            "type": "authentication_error", "message": f"invalid x-api-key {key}"}}).decode()
        response = _door(http=HttpInput(status=401, body=body, headers={"x-api-key": key}),
                         context={"token": token, token: "as a key"})
        text = response.model_dump_json()
        assert response.code == FC.PROV_AUTH.value
        for secret in (key, token):
            assert _secret_part(secret) not in text
        assert response.failure is not None
        assert _secret_part(token) not in str(response.failure["context"])


# -- validation ---------------------------------------------------------------------------------


def _error(data: dict[str, Any]) -> dict[str, Any]:
    """The one validation error ``data`` raises as a ClassifyRequest."""
    with pytest.raises(pydantic.ValidationError) as raised:
        ClassifyRequest.model_validate(data)
    errors = raised.value.errors(include_url=False)
    assert len(errors) == 1, errors
    return dict(errors[0])


_COMMAND = {"argv": ["make"], "exit_code": 2}
_BIG = 2**64


class TestValidation:
    @pytest.mark.parametrize(("data", "given"), [
        ({}, "none"),
        ({"text": "x", "http": {"status": 500}}, "http, text"),
        ({"exception": {"type": "E"}, "command": _COMMAND, "http": {"status": 500},
          "text": "x"}, "exception, command, http, text"),
    ])
    def test_exactly_one_subject(self, data: dict[str, Any], given: str) -> None:
        """No subject, or several, is a subject_count error naming the fields given."""
        error = _error(data)
        assert error["type"] == "subject_count"
        assert f"got {given}" in error["msg"]
        assert "exception, command, http, text" in error["msg"]

    @pytest.mark.parametrize("command", [
        {"exit_code": 1}, {"argv": ["make"], "command": "make", "exit_code": 1}])
    def test_exactly_one_command_form(self, command: dict[str, Any]) -> None:
        """A command is argv or a shell string, exactly one of them."""
        error = _error({"command": command})
        assert (error["type"], error["loc"]) == ("command_form", ("command",))
        assert "argv, command" in error["msg"]

    @pytest.mark.parametrize(("data", "loc", "kind"), [
        ({"exception": {"type": "E" * 201}}, ("exception", "type"), "string_too_long"),
        ({"exception": {"type": ""}}, ("exception", "type"), "string_too_short"),
        ({"exception": {"type": "not a type"}}, ("exception", "type"), "type_name"),
        ({"exception": {"type": "E", "message": "m" * (MAX_MESSAGE_CHARS + 1)}},
         ("exception", "message"), "string_too_long"),
        ({"exception": {"type": "E", "traceback": "t" * (MAX_BODY_CHARS + 1)}},
         ("exception", "traceback"), "string_too_long"),
        ({"exception": {"type": "E", "module": "has space"}}, ("exception", "module"),
         "type_name"),
        ({"command": {"argv": [], "exit_code": 1}}, ("command", "argv"), "too_short"),
        ({"command": {"argv": ["a"] * 1001, "exit_code": 1}}, ("command", "argv"),
         "too_long"),
        ({"command": {"argv": ["a" * 8193], "exit_code": 1}}, ("command", "argv", 0),
         "string_too_long"),
        ({"command": {"command": "   ", "exit_code": 1}}, ("command", "command"), "blank"),
        ({"command": {"command": "m" * (64 * 1024 + 1), "exit_code": 1}},
         ("command", "command"), "too_long"),
        ({"command": {"argv": ["a"]}}, ("command", "exit_code"), "missing"),
        ({"command": {"argv": ["a"], "exit_code": 2**32}}, ("command", "exit_code"),
         "less_than_equal"),
        ({"command": {"argv": ["a"], "exit_code": -(2**31) - 1}}, ("command", "exit_code"),
         "greater_than_equal"),
        ({"command": {"argv": ["a"], "exit_code": True}}, ("command", "exit_code"), "int_type"),
        ({"command": {"argv": ["a"], "exit_code": "1"}}, ("command", "exit_code"), "int_type"),
        ({"command": {"argv": ["a"], "exit_code": 1.0}}, ("command", "exit_code"), "int_type"),
        ({"command": {**_COMMAND, "stderr": "e" * (MAX_BODY_CHARS + 1)}},
         ("command", "stderr"), "string_too_long"),
        ({"command": {**_COMMAND, "duration_s": -1}}, ("command", "duration_s"),
         "greater_than_equal"),
        ({"command": {**_COMMAND, "duration_s": float("inf")}}, ("command", "duration_s"),
         "finite_number"),
        ({"command": {**_COMMAND, "duration_s": "2.5"}}, ("command", "duration_s"),
         "float_type"),
        ({"command": {**_COMMAND, "timed_out": 1}}, ("command", "timed_out"), "bool_type"),
        ({"http": {"status": 99}}, ("http", "status"), "greater_than_equal"),
        ({"http": {"status": 600}}, ("http", "status"), "less_than_equal"),
        ({"http": {"status": 500, "body": "b" * (MAX_BODY_CHARS + 1)}}, ("http", "body"),
         "string_too_long"),
        ({"http": {"status": 500, "headers": {f"h{i}": "v" for i in range(MAX_HEADERS + 1)}}},
         ("http", "headers"), "too_long"),
        ({"http": {"status": 500, "provider": "OpenAI"}}, ("http", "provider"),
         "provider_slug"),
        ({"text": ""}, ("text",), "blank"),
        ({"text": " \n "}, ("text",), "blank"),
        ({"text": "x" * (MAX_BODY_CHARS + 1)}, ("text",), "too_long"),
        ({"text": "x", "session": ""}, ("session",), "blank"),
        ({"text": "x", "session": "s" * 201}, ("session",), "too_long"),
        ({"text": "x", "step": -1}, ("step",), "greater_than_equal"),
        ({"text": "x", "step": "3"}, ("step",), "int_type"),
        ({"text": "x", "context": {f"k{i}": i for i in range(MAX_CONTEXT_KEYS + 1)}},
         ("context",), "too_long"),
        ({"text": "x", "context": {"": 1}}, ("context", "", "[key]"), "blank"),
        ({"text": "x", "context": {"n": _BIG}}, ("context", "n"), "int64"),
        ({"text": "x", "context": {"n": -_BIG}}, ("context", "n"), "int64"),
        ({"text": "x", "context": {"v": "v" * 4001}}, ("context", "v"), None),
        ({"text": "x", "context": {"nested": {"a": 1}}}, ("context", "nested"), None),
        ({"text": "x", "context": {"f": float("nan")}}, ("context", "f"), None),
        ({"text": "x", "surface": "llm"}, ("surface",), "extra_forbidden"),
        ({"exception": {"type": "E", "stack": []}}, ("exception", "stack"), "extra_forbidden"),
    ])
    def test_bounds(self, data: dict[str, Any], loc: tuple[Any, ...], kind: str | None) -> None:
        """Every bound is a validation error at the field, of its type, naming the value."""
        with pytest.raises(pydantic.ValidationError) as raised:
            ClassifyRequest.model_validate(data)
        errors = raised.value.errors(include_url=False)
        # a union value (a context value) reports one error per member type at its field
        assert {tuple(error["loc"][:len(loc)]) for error in errors} == {loc}
        if kind is not None:
            assert [error["type"] for error in errors] == [kind]

    def test_pattern_errors_say_what_was_expected(self) -> None:
        """A type name that is not one says what it should look like and what it got."""
        error = _error({"exception": {"type": "not a type"}})
        assert "openai.RateLimitError" in error["msg"]
        assert "'not a type'" in error["msg"]

    def test_json_input_is_validated_the_same(self) -> None:
        """The JSON path (as FastAPI reads a body) refuses what the Python path refuses."""
        with pytest.raises(pydantic.ValidationError) as raised:
            ClassifyRequest.model_validate_json(
                '{"command": {"argv": ["a"], "exit_code": 1e400}}')
        assert raised.value.errors(include_url=False)[0]["loc"] == ("command", "exit_code")


# -- the schema -----------------------------------------------------------------------------------


class TestSchema:
    @pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
    def test_every_field_is_described(self, model: type[pydantic.BaseModel]) -> None:
        """The OpenAPI document describes every field of every model."""
        undescribed = [name for name, field in model.model_fields.items()
                       if not field.description]
        assert undescribed == []

    @pytest.mark.parametrize("model", MODELS[:4], ids=lambda model: model.__name__)
    def test_examples_are_valid_requests(self, model: type[pydantic.BaseModel]) -> None:
        """Each model's own example validates, and a request example classifies."""
        examples = model.model_json_schema()["examples"]
        assert examples
        for example in examples:
            instance = model.model_validate(example)
            if isinstance(instance, ClassifyRequest):
                assert classify_payload(instance).kind in {"failure", "outcome", "none"}

    def test_schema_states_the_bounds(self) -> None:
        """The JSON schema carries the bounds the models enforce."""
        schema = CommandInput.model_json_schema()["properties"]
        exit_code = next(item for item in schema["exit_code"]["anyOf"] if "minimum" in item)
        assert (exit_code["minimum"], exit_code["maximum"]) == (-(2**31), 2**32 - 1)
        assert "exit_code" in CommandInput.model_json_schema()["required"]
