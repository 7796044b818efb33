"""classify / classify_text / classify_http: builtin and OS rows, chains, outcomes, location,
stability, and the never-raise contract (Hypothesis).

OS failures are caused for real where a route exists (a missing file, /dev/full, exec of a
non-executable file, a socket that times out or is refused, a service-name lookup that fails
without any network traffic).
"""

from __future__ import annotations

import asyncio
import errno
import importlib
import itertools
import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from failcode import FC, Cancelled, Failure, FailureError, classify, classify_http, classify_text
from tests.provider_stub import closed_port

if TYPE_CHECKING:
    from collections.abc import Callable


def _raised(call: Callable[[], object]) -> BaseException:
    try:
        call()
    except BaseException as exc:  # noqa: BLE001 - the test wants whatever was raised
        return exc
    pytest.fail("the call did not raise")


def _failure(result: object) -> Failure:
    assert isinstance(result, Failure), result
    return result


# -- builtin and OS rows, caused for real --------------------------------------------------------


def test_file_not_found(tmp_path: Path) -> None:
    """Opening a missing file is file_not_found, with the path in params."""
    exc = _raised((tmp_path / "mian.py").open)
    failure = _failure(classify(exc))
    assert failure.code == FC.OS_FILE_NOT_FOUND
    assert failure.error_class == "file_not_found"
    assert failure.params["path"].endswith("mian.py")
    assert failure.metadata["errno"] == errno.ENOENT


def test_permission_denied_by_exec_of_a_non_executable_file(tmp_path: Path) -> None:
    """Executing a file with no x bit is EACCES even for root: permission_denied."""
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    exc = _raised(lambda: subprocess.run([str(script)], check=False))
    assert isinstance(exc, PermissionError)
    failure = _failure(classify(exc))
    assert failure.code == FC.OS_PERMISSION_DENIED
    assert failure.retryability == "retryable_after_change"


def test_disk_full_by_writing_dev_full() -> None:
    """Writing /dev/full fails with ENOSPC: disk_full."""
    def write() -> None:
        with Path("/dev/full").open("wb", buffering=0) as handle:
            handle.write(b"x")

    exc = _raised(write)
    failure = _failure(classify(exc))
    assert failure.code == FC.OS_DISK_FULL
    assert failure.metadata["errno"] == errno.ENOSPC


def test_out_of_memory() -> None:
    """An allocation the machine cannot satisfy raises MemoryError: out_of_memory."""
    exc = _raised(lambda: bytearray(1 << 62))
    assert isinstance(exc, MemoryError)
    assert _failure(classify(exc)).code == FC.OS_OUT_OF_MEMORY


def test_socket_timeout_is_a_tool_timeout_or_provider_timeout() -> None:
    """A real socket read timeout: OS timeout on a tool surface, provider timeout on llm.*."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=0.05) as client:
            exc = _raised(lambda: client.recv(1))
    assert isinstance(exc, TimeoutError)
    assert _failure(classify(exc)).code == FC.OS_TIMEOUT
    assert _failure(classify(exc, surface="llm.openai")).code == FC.PROV_TIMEOUT


def test_connection_refused() -> None:
    """Connecting to a closed port: OS connection failure, provider connection on llm.*."""
    exc = _raised(lambda: socket.create_connection(("127.0.0.1", closed_port()), timeout=5))
    assert isinstance(exc, ConnectionRefusedError)
    assert _failure(classify(exc)).code == FC.OS_CONNECTION
    assert _failure(classify(exc, surface="llm.anthropic")).code == FC.PROV_CONNECTION


def test_address_lookup_failure_is_a_connection_failure() -> None:
    """socket.gaierror (a lookup that fails locally: unknown service name) is connection."""
    exc = _raised(lambda: socket.getaddrinfo("127.0.0.1", "no-such-service-failcode"))
    assert isinstance(exc, socket.gaierror)
    assert _failure(classify(exc)).code == FC.OS_CONNECTION


def test_missing_module_names_the_module() -> None:
    """ModuleNotFoundError is missing_module with the module's name in params."""
    exc = _raised(lambda: importlib.import_module("failcode_no_such_module"))
    failure = _failure(classify(exc))
    assert failure.code == FC.CMD_MISSING_MODULE
    assert failure.params["module"] == "failcode_no_such_module"


def test_pydantic_validation_error_of_an_input() -> None:
    """A pydantic ValidationError of an input: validation, problem = first loc and msg."""
    import pydantic

    class Task(pydantic.BaseModel):
        goal: str
        budget: int

    exc = _raised(lambda: Task.model_validate({"budget": 3}))
    failure = _failure(classify(exc))
    assert failure.code == FC.DATA_INVALID_INPUT
    assert failure.params["problem"] == "goal: Field required"


def test_json_error_outside_model_output_is_unknown() -> None:
    """A JSONDecodeError on a tool surface is not malformed model output."""
    exc = _raised(lambda: json.loads("{not json"))
    assert _failure(classify(exc)).code == FC.SYS_UNKNOWN
    assert _failure(classify(exc, surface="llm.output")).code == FC.PROV_MALFORMED_OUTPUT


def test_any_other_exception_is_unknown() -> None:
    """An exception no row knows is unknown, naming its type and keeping its message."""
    failure = _failure(classify(_raised(lambda: int("twelve"))))
    assert failure.code == FC.SYS_UNKNOWN
    assert failure.params["exception"] == "ValueError"
    assert "twelve" in failure.message


def test_keyboard_interrupt_is_cancelled() -> None:
    """KeyboardInterrupt is a Cancelled outcome with SIGINT, context kept."""
    def interrupt() -> None:
        raise KeyboardInterrupt

    result = classify(_raised(interrupt), context={"session": "s1"})
    assert isinstance(result, Cancelled)
    assert result.signal == 2
    assert result.context["session"] == "s1"


def test_cancelled_task_is_cancelled() -> None:
    """A cancelled asyncio task's CancelledError is a Cancelled outcome."""
    async def await_cancelled() -> BaseException:
        task = asyncio.create_task(asyncio.sleep(10))
        await asyncio.sleep(0)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError as exc:
            return exc
        pytest.fail("not cancelled")

    exc = asyncio.run(await_cancelled())
    assert isinstance(classify(exc), Cancelled)


def test_failure_error_passes_its_failure_through_with_context() -> None:
    """A FailureError gives back its own Failure, the given context merged in."""
    inner = FC.PROV_QUOTA.failure(surface="llm.openai", params={"provider": "OpenAI"},
                                  context={"step": 1})
    result = _failure(classify(FailureError(inner), context={"session": "s9"}))
    assert result.code == inner.code
    assert result.signature == inner.signature
    assert dict(result.context) == {"step": 1, "session": "s9"}


# -- chains ------------------------------------------------------------------------------------


def test_wrapper_of_a_timeout_is_a_timeout() -> None:
    """A RuntimeError raised from a real socket timeout is classified as the timeout."""
    def wrapped() -> None:
        with socket.socket() as server:
            server.bind(("127.0.0.1", 0))
            server.listen(1)
            with socket.create_connection(server.getsockname(), timeout=0.05) as client:
                try:
                    client.recv(1)
                except TimeoutError as exc:
                    msg = "model call failed"
                    raise RuntimeError(msg) from exc

    failure = _failure(classify(_raised(wrapped)))
    assert failure.code == FC.OS_TIMEOUT
    assert failure.cause[0].type == "RuntimeError"
    assert failure.cause[1].type == "TimeoutError"


def test_connection_error_wrapping_a_timeout_is_a_timeout() -> None:
    """A connection-class error whose cause is a timeout is the timeout (more specific)."""
    outer = ConnectionError("request failed")
    outer.__cause__ = TimeoutError("read timed out")
    assert _failure(classify(outer)).code == FC.OS_TIMEOUT


def test_cause_cycle_terminates() -> None:
    """A cause cycle neither loops nor raises."""
    first, second = ValueError("a"), ValueError("b")
    first.__cause__, second.__cause__ = second, first
    assert _failure(classify(first)).code == FC.SYS_UNKNOWN


# -- location ------------------------------------------------------------------------------------


def _write_module(directory: Path) -> None:
    (directory / "pkg").mkdir()
    (directory / "pkg" / "__init__.py").write_text("")
    (directory / "pkg" / "loader.py").write_text(
        "def load(name):\n"
        "    with open(name) as handle:\n"
        "        return handle.read()\n")


def _fail_in(directory: Path, monkeypatch: pytest.MonkeyPatch) -> Failure:
    _write_module(directory)
    monkeypatch.chdir(directory)
    monkeypatch.syspath_prepend(str(directory))
    sys.modules.pop("pkg.loader", None)
    sys.modules.pop("pkg", None)
    module = importlib.import_module("pkg.loader")
    return _failure(classify(_raised(lambda: module.load(str(directory / "config.toml")))))


def test_location_is_the_innermost_frame_in_cwd(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The location is the innermost frame inside cwd, relative, with no line number."""
    failure = _fail_in(tmp_path, monkeypatch)
    assert failure.location == "pkg/loader.py"
    assert failure.params["path"] == "config.toml"


def test_same_failure_in_another_temp_dir_has_the_same_signature(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same failure in two temp directories gives one signature."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = _fail_in(tmp_path / "a", monkeypatch)
    second = _fail_in(tmp_path / "b", monkeypatch)
    assert first.signature == second.signature


def test_location_from_traceback_text(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """classify_text reads the innermost 'File' line inside cwd from a traceback's text."""
    monkeypatch.chdir(tmp_path)
    text = (f'Traceback (most recent call last):\n  File "{tmp_path}/app/main.py", line 9, in '
            f'run\n  File "{tmp_path}/app/io.py", line 3, in read\n  File '
            f'"/usr/lib/python3.11/socket.py", line 12, in recv\nTimeoutError: timed out\n')
    failure = _failure(classify_text("TimeoutError", "timed out", traceback=text))
    assert failure.location == "app/io.py"
    assert failure.code == FC.OS_TIMEOUT


# -- stability and identity ------------------------------------------------------------------------


def test_request_id_and_time_do_not_change_the_signature() -> None:
    """Another request id and another Retry-After date give the same signature."""
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limited"}}
    first = classify_http(429, body, {"request-id": "req_01AAA", "retry-after": "3"})
    second = classify_http(429, body, {"request-id": "req_01BBB",
                                       "retry-after": "Wed, 21 Oct 2099 07:28:00 GMT"})
    assert first.metadata["request_id"] != second.metadata["request_id"]
    assert first.signature == second.signature


@pytest.mark.parametrize(("type_name", "first", "second"), [
    ("ModuleNotFoundError", "No module named 'requests'", "No module named 'requests2'"),
    ("openai.NotFoundError", ("Error code: 404 - {'error': {'message': 'The model `gpt-4o` "
     "does not exist', 'code': 'model_not_found'}}"), ("Error code: 404 - {'error': {'message': "
     "'The model `gpt-4o-mini` does not exist', 'code': 'model_not_found'}}")),
])
def test_different_identities_have_different_signatures(type_name: str, first: str,
                                                         second: str) -> None:
    """Another module or model name is another failure: the signatures differ."""
    one = _failure(classify_text(type_name, first))
    two = _failure(classify_text(type_name, second))
    assert one.code == two.code
    assert one.signature != two.signature


def test_same_text_from_a_log_twice_is_one_signature() -> None:
    """The same log line with a new request id and timestamp keeps its signature."""
    one = classify_text("anthropic.RateLimitError", "Error code: 429 - {'type': 'error', "
                        "'error': {'type': 'rate_limit_error', 'message': 'Rate limited at "
                        "2025-01-01T10:00:00Z'}, 'request_id': 'req_011AAA'}")
    two = classify_text("anthropic.RateLimitError", "Error code: 429 - {'type': 'error', "
                        "'error': {'type': 'rate_limit_error', 'message': 'Rate limited at "
                        "2025-03-04T11:22:33Z'}, 'request_id': 'req_011BBB'}")
    assert _failure(one).signature == _failure(two).signature
    assert _failure(one).code == FC.PROV_RATE_LIMIT


# -- text rows and anchoring --------------------------------------------------------------------


@pytest.mark.parametrize(("type_name", "message", "code"), [
    ("FileNotFoundError", "[Errno 2] No such file or directory: 'src/mian.py'",
     FC.OS_FILE_NOT_FOUND),
    ("builtins.PermissionError", "[Errno 13] Permission denied: 'out.log'",
     FC.OS_PERMISSION_DENIED),
    ("OSError", "[Errno 28] No space left on device", FC.OS_DISK_FULL),
    ("MemoryError", "", FC.OS_OUT_OF_MEMORY),
    ("ModuleNotFoundError", "No module named 'yaml'", FC.CMD_MISSING_MODULE),
    ("httpx.ConnectError", "[Errno 111] Connection refused", FC.OS_CONNECTION),
    ("requests.exceptions.ReadTimeout", ("HTTPSConnectionPool(host='api.example.com', "
     "port=443): Read timed out. (read timeout=10)"), FC.OS_TIMEOUT),
    ("pydantic_core._pydantic_core.ValidationError", ("1 validation error for Task\ngoal\n  "
     "Field required [type=missing, input_value={}, input_type=dict]"), FC.DATA_INVALID_INPUT),
    ("RateLimitError", "Rate limit reached for requests", FC.PROV_RATE_LIMIT),
    ("google.genai.errors.ServerError", ("503 UNAVAILABLE. {'error': {'code': 503, 'message': "
     "'The model is overloaded. Please try again later.', 'status': 'UNAVAILABLE'}}"),
     FC.PROV_OVERLOADED),
    ("openai.BadRequestError", ("Error code: 400 - {'error': {'message': \"Unknown parameter: "
     "'_litellm_rate_limit_descriptors'.\", 'type': 'invalid_request_error'}}"),
     FC.PROV_BAD_REQUEST),
    ("openai.BadRequestError", "Error code: 400 - prompt_token_ids [1, 429, 17]",
     FC.PROV_BAD_REQUEST),
    ("ValueError", "token ids [1, 429, 17]", FC.SYS_UNKNOWN),
])
def test_classify_text_rows(type_name: str, message: str, code: FC) -> None:
    """Text gets the same rows as live exceptions; numbers in text are never a status."""
    assert _failure(classify_text(type_name, message)).code == code


def test_classify_text_keyboard_interrupt_is_cancelled() -> None:
    """A logged KeyboardInterrupt is a Cancelled outcome, not a failure."""
    assert isinstance(classify_text("KeyboardInterrupt", ""), Cancelled)


def test_surface_is_normalized() -> None:
    """A surface with ':' or spaces is normalized to a valid signature part."""
    failure = _failure(classify(TimeoutError("x"), surface="my tool: run"))
    assert ":" not in failure.surface
    assert " " not in failure.surface


# -- never raises ---------------------------------------------------------------------------


class _UnprintableError(Exception):
    def __str__(self) -> str:
        msg = "no str for you"
        raise RuntimeError(msg)


class _BadAttrsError(Exception):
    """Every attribute an SDK error might have raises."""

    def __getattribute__(self, name: str) -> Any:
        if name in {"status_code", "response", "body", "code", "request", "errno", "filename",
                    "name", "details", "request_id", "llm_provider"}:
            msg = f"no {name}"
            raise RuntimeError(msg)
        return super().__getattribute__(name)


EXCEPTION_TYPES = [ValueError, KeyError, OSError, TimeoutError, ConnectionResetError,
                   FileNotFoundError, PermissionError, RuntimeError, _UnprintableError,
                   _BadAttrsError,
                   MemoryError, ModuleNotFoundError, json.JSONDecodeError]


@st.composite
def exceptions(draw: st.DrawFn) -> BaseException:
    """An exception of an arbitrary type, message and args, with an arbitrary (cyclic) chain."""
    chain = []
    for _ in range(draw(st.integers(1, 4))):
        cls = draw(st.sampled_from(EXCEPTION_TYPES))
        text = draw(st.text(max_size=200))
        if cls is json.JSONDecodeError:
            exc: BaseException = json.JSONDecodeError(text, "doc", 0)
        elif cls is OSError:
            exc = OSError(draw(st.integers(-10, 200)), text, draw(st.none() | st.text()))
        else:
            exc = cls(text)
        chain.append(exc)
    for outer, inner in itertools.pairwise(chain):
        if draw(st.booleans()):
            outer.__cause__ = inner
        else:
            outer.__context__ = inner
    if draw(st.booleans()):
        chain[-1].__cause__ = chain[0]  # a cycle
    return chain[0]


SURFACES = st.none() | st.sampled_from(["llm.openai", "python", "agent.parse", "a b:c", ""])


@settings(max_examples=150)
@given(exceptions(), SURFACES)
def test_classify_never_raises(exc: BaseException, surface: str | None) -> None:
    """classify returns a Failure or outcome for any exception, chain and surface."""
    result = classify(exc, surface=surface)
    assert isinstance(result, (Failure, Cancelled))


@settings(max_examples=150)
@given(st.text(max_size=80) | st.sampled_from(["openai.RateLimitError", "OSError",
                                               "google.genai.errors.ClientError"]),
       st.text(max_size=2000) | st.binary(max_size=500), st.none() | st.text(max_size=500),
       SURFACES)
def test_classify_text_never_raises(type_name: str, message: Any, tb: str | None,
                                    surface: str | None) -> None:
    """classify_text returns for any type name, message (text or bytes) and traceback."""
    result = classify_text(type_name, message, traceback=tb, surface=surface)
    assert isinstance(result, (Failure, Cancelled))


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=30),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=20)


@settings(max_examples=150)
@given(st.integers(-1000, 1000), JSON | st.text(max_size=500) | st.binary(max_size=300),
       st.none() | st.dictionaries(st.text(max_size=20), st.text(max_size=40), max_size=5),
       SURFACES)
def test_classify_http_never_raises(status: int, body: Any, headers: dict[str, str] | None,
                                    surface: str | None) -> None:
    """classify_http returns a Failure for any status, body and headers."""
    assert isinstance(classify_http(status, body, headers, surface=surface), Failure)


def test_huge_message_and_huge_body() -> None:
    """A 10 MB message or body is bounded, not read in full, and never raises."""
    huge = "x" * 10_000_000
    assert isinstance(classify(ValueError(huge)), Failure)
    assert isinstance(classify_text("openai.RateLimitError", "Error code: 429 - {" + huge),
                      Failure)
    assert isinstance(classify_http(400, "{" + huge), Failure)


def test_location_of_a_raise_in_the_repository() -> None:
    """An exception raised in this file is located here, repo-relative (run from the repo)."""
    exc = _raised(lambda: {}["k"])
    assert _failure(classify(exc)).location == "tests/classification/test_classify.py"


# -- a missing program, whichever way it is run (item: command_not_found) --------------------------

def test_subprocess_run_of_a_missing_program_is_command_not_found(tmp_path: Any) -> None:
    """subprocess.run raising FileNotFoundError for the program is FC-CMD-001, like exit 127."""
    import subprocess

    program = "failcode-no-such-program"
    try:
        subprocess.run([program, "--version"], check=False, cwd=tmp_path)
    except FileNotFoundError as exc:
        failure = classify(exc)
    assert isinstance(failure, Failure)
    assert (failure.code, failure.error_class, failure.category.value) == (
        "FC-CMD-001", "command_not_found", "environment")
    assert failure.params["program"] == program


def test_subprocess_with_a_missing_data_file_stays_file_not_found(tmp_path: Any) -> None:
    """A program that exists but opens a missing file is a missing file, not a missing program."""
    import subprocess
    import sys

    missing = tmp_path / "data.csv"
    result = subprocess.run([sys.executable, "-c", f"open({str(missing)!r})"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 1
    failure = classify_text("FileNotFoundError", result.stderr.strip().splitlines()[-1])
    assert isinstance(failure, Failure)
    assert failure.code == "FC-OS-002"
    try:
        with missing.open():
            pass
    except FileNotFoundError as exc:
        live = classify(exc)
    assert isinstance(live, Failure)
    assert live.code == "FC-OS-002"


# -- unknown failures keep what tells them apart -------------------------------------------------

def _unknown(message: str) -> Failure:
    def boom() -> None:
        raise RuntimeError(message)
    return _failure(classify(_raised(boom)))


def test_two_runtime_errors_from_one_file_are_two_signatures() -> None:
    """Different messages of one type at one location sign differently; volatile parts do not."""
    locked = _unknown("database is locked")
    exhausted = _unknown("worker pool exhausted")
    assert locked.location == exhausted.location
    assert locked.signature != exhausted.signature
    assert _unknown("timeout after 1234 ms").signature == _unknown(
        "timeout after 99 ms").signature


def test_unknown_user_text_shows_the_redacted_message() -> None:
    """The user sees the exception's message, with secrets redacted."""
    from failcode import render_user

    secret = "sk-proj-" + "q9w8e7r6t5" * 4
    text = render_user(_unknown(f"login failed with key {secret}"))
    assert "login failed with key" in text
    assert "q9w8e7r6t5" not in text


def test_classify_text_unknowns_of_one_type_differ_by_message() -> None:
    """Through classify_text too, every RuntimeError no longer collides."""
    a = _failure(classify_text("RuntimeError", "database is locked"))
    b = _failure(classify_text("RuntimeError", "worker pool exhausted"))
    assert a.signature != b.signature
    assert "database is locked" in a.message


# -- defects (seed 003: the agent is wrong) -------------------------------------------------------

def _own_defect(make: Any) -> Failure:
    return _failure(classify(_raised(make)))


@pytest.mark.parametrize(("make", "error_class"), [
    (lambda: _assert_positive(-1), "assertion_failed"),
    (lambda: {}["missing"], "key_error"),
    (lambda: _attribute_of(None), "attribute_error"),
    (lambda: len(5), "type_error"),  # type: ignore[arg-type]
    (lambda: [][0], "index_error"),  # noqa: PLE0643 - the IndexError under test
    (lambda: undefined_name_zz, "name_error"),  # type: ignore[name-defined]  # noqa: F821
    (lambda: _unbound(), "unbound_local"),  # noqa: PLW0108 - defined below
    (lambda: 1 / 0, "zero_division"),
    (lambda: _recurse(), "recursion_error"),  # noqa: PLW0108 - defined below
], ids=["assert", "key", "attribute", "type", "index", "name", "unbound", "zero", "recursion"])
def test_defects_in_own_code_are_category_defect(make: Any, error_class: str) -> None:
    """AssertionError anywhere, and Type/Attribute/Key/Index/Name/UnboundLocal/ZeroDivision/
    RecursionError raised in the caller's own code are defects: never retried, with
    module:function frames and no line number in the location."""
    failure = _own_defect(make)
    assert (failure.code, failure.category.value, failure.error_class) == (
        "FC-SYS-002", "defect", error_class)
    assert failure.location == "tests/classification/test_classify.py"
    frames = str(failure.metadata["frames"])
    assert "tests.classification.test_classify:" in frames
    assert not any(ch.isdigit() for ch in str(failure.location))
    from failcode import History, decide

    assert decide(failure, History()).action.value == "abort"


def _attribute_of(value: Any) -> Any:
    return value.upper()


def _unbound() -> int:
    total += 1  # type: ignore[has-type]  # noqa: F821 - the UnboundLocalError under test
    return total


def _recurse() -> None:
    _recurse()


def _assert_positive(value: int) -> None:
    assert value > 0, "value must be positive"


def test_failing_invariant_type_is_a_defect() -> None:
    """An exception named as a failed invariant or contract is a defect wherever raised."""
    class InvariantViolation(Exception):  # noqa: N818 - the name under test
        pass

    def check() -> None:
        raise InvariantViolation("balance < 0")
    assert _own_defect(check).category.value == "defect"


def test_key_error_raised_outside_own_code_is_not_a_defect() -> None:
    """A KeyError raised inside the standard library is not the caller's defect."""
    import string

    failure = _failure(classify(_raised(lambda: string.Template("$who").substitute({}))))
    assert failure.code == FC.SYS_UNKNOWN


def test_an_unset_environment_variable_is_a_missing_env_var() -> None:
    """os.environ[name] raising KeyError is FC-CFG-006 naming the variable."""
    import os

    failure = _failure(classify(_raised(lambda: os.environ["FAILCODE_SURELY_UNSET_VAR"])))
    assert (failure.code, failure.params["name"]) == ("FC-CFG-006", "FAILCODE_SURELY_UNSET_VAR")
    assert failure.category.value == "environment"


def test_an_unset_environment_variable_is_found_in_a_traceback_text() -> None:
    """The same from its formatted traceback, whose os frame is "<frozen os>" or os.py."""
    import os
    import traceback

    exc = _raised(lambda: os.environ["FAILCODE_SURELY_UNSET_VAR"])
    text = "".join(traceback.format_exception(exc))
    failure = _failure(classify_text("KeyError", str(exc), traceback=text))
    assert (failure.code, failure.params["name"]) == ("FC-CFG-006", "FAILCODE_SURELY_UNSET_VAR")
    as_file = text.replace("<frozen os>", "/usr/lib/python3.11/os.py")
    assert _failure(classify_text("KeyError", str(exc), traceback=as_file)).code == "FC-CFG-006"


def test_a_key_error_of_another_mapping_named_like_a_variable_is_not_one() -> None:
    """A KeyError of a plain dict in library code stays what it was, not an env var."""
    tb = ('Traceback (most recent call last):\n  File "/usr/lib/python3.11/string.py", '
          'line 1, in convert\nKeyError: \'HOME\'\n')
    assert _failure(classify_text("KeyError", "'HOME'", traceback=tb)).code == FC.SYS_UNKNOWN


def test_classify_text_recognizes_a_defect_from_its_traceback(tmp_path: Any,
                                                              monkeypatch: Any) -> None:
    """A traceback whose innermost frame is under the working directory makes a defect."""
    monkeypatch.chdir(tmp_path)
    tb = (f'Traceback (most recent call last):\n  File "{tmp_path}/app/orders.py", line 12, '
          f'in total\n    total.check()\n')
    failure = _failure(classify_text("TypeError", "unsupported operand", traceback=tb))
    assert (failure.code, failure.location) == ("FC-SYS-002", "app/orders.py")
    assert failure.metadata["frames"] == "orders:total"
    outside = _failure(classify_text("TypeError", "unsupported operand",
                                     traceback='  File "/usr/lib/python3/x.py", line 1, in f\n'))
    assert outside.code == FC.SYS_UNKNOWN


# -- validation errors by who produced the input ---------------------------------------------------

def _validation_error() -> BaseException:
    from pydantic import BaseModel

    class SearchArgs(BaseModel):
        limit: int

    return _raised(lambda: SearchArgs.model_validate({"limit": "many"}))


@pytest.mark.parametrize("surface", ["tool_args", "tool.search.args", "agent.tool.arguments",
                                     "llm.tool_call"])
def test_validation_of_tool_arguments_is_fed_back_to_the_model(surface: str) -> None:
    """Model-proposed tool arguments that fail validation are a RejectedAction, not a Failure."""
    from failcode import RejectedAction

    outcome = classify(_validation_error(), surface=surface)
    assert isinstance(outcome, RejectedAction)
    assert outcome.action == "SearchArgs"
    assert "limit" in outcome.reason


@pytest.mark.parametrize("surface", ["user.input", "config.load", "api.request", None])
def test_validation_of_user_input_stays_a_user_failure(surface: str | None) -> None:
    """The same error on a user-input surface is a user failure that waits for a person."""
    failure = _failure(classify(_validation_error(), surface=surface))
    assert (failure.code, failure.category.value) == ("FC-DATA-001", "user")


def test_validation_of_model_output_is_sampled_again() -> None:
    """On a model-output surface that is not a tool call it stays malformed output (transient)."""
    failure = _failure(classify(_validation_error(), surface="llm.output"))
    assert (failure.code, failure.category.value) == ("FC-PROV-014", "transient")


# -- LLM gateways and missing credentials files (seen in real agent logs) ---------------------
@pytest.mark.parametrize(("type_name", "message", "code"), [
    ("litellm.Timeout", "litellm.Timeout: Connection timed out after 600.0 seconds.",
     "FC-PROV-011"),
    ("litellm.exceptions.Timeout", "Timeout Error: DeepseekException - timed out", "FC-PROV-011"),
    ("litellm.APIConnectionError", "APIConnectionError: OpenAIException - streaming error",
     "FC-PROV-012"),
])
def test_a_gateway_timeout_or_connection_error_is_the_providers(
        type_name: str, message: str, code: str) -> None:
    """litellm's Timeout / APIConnectionError are provider failures, not the OS's."""
    assert classify_text(type_name, message).code == code


@pytest.mark.parametrize(("type_name", "code", "category"), [
    ("litellm.ContextWindowExceededError", "FC-PROV-006", "task"),
    ("litellm.exceptions.ContextWindowExceededError", "FC-PROV-006", "task"),
    ("ContextWindowExceededError", "FC-PROV-006", "task"),
    ("litellm.ContentPolicyViolationError", "FC-PROV-013", "user"),
    ("litellm.ServiceUnavailableError", "FC-PROV-010", "transient"),
    ("litellm.BudgetExceededError", "FC-PROV-004", "user"),
])
def test_litellms_own_error_types_decide_by_name(type_name: str, code: str,
                                                 category: str) -> None:
    """litellm's own types, named in text, decide even when the message says nothing more
    (litellm documents ContextWindowExceededError as its subclass of BadRequestError)."""
    failure = classify_text(type_name, "OpenAIException - request failed")
    assert (failure.code, failure.category, failure.surface) == (code, category, "llm")


@pytest.mark.parametrize(("type_name", "message", "path"), [
    ("litellm.InternalServerError", ("VertexAIException - File "
     "/srv/gcloud/application_default_credentials.json was not found."),
     "/srv/gcloud/application_default_credentials.json"),
    ("InternalServerError", "Could not find credentials file: /srv/aws/credentials",
     "/srv/aws/credentials"),
    ("openai.APIError", "the credentials file does not exist", "credentials file"),
])
def test_a_missing_credentials_file_is_an_environment_failure(
        type_name: str, message: str, path: str) -> None:
    """A provider error whose message says a credentials file is missing is FC-CFG-007."""
    failure = classify_text(type_name, message)
    assert (failure.code, failure.category, failure.params["path"]) == (
        "FC-CFG-007", "environment", path)


def test_a_server_error_without_credentials_words_stays_a_server_error() -> None:
    """An ordinary 500 is not mistaken for a missing credentials file."""
    assert classify_text("litellm.InternalServerError",
                         "AnthropicException - Internal server error").code == "FC-PROV-010"


# -- fast paths (the private pattern is imported here, in one place) --------------------------

from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from failcode.classification._classify import _CREDENTIALS_FILE_RE  # noqa: E402

_CREDENTIAL_PIECES = st.sampled_from([
    "credential", "Credentials", "CREDENTIALS", "key", "KEY", " file", " File", "File ",
    " not found", " was not found", " does not exist", "could not find", "cannot load ",
    "the default ", "'", "/root/.aws/", ": ", " ", "is missing", "can", "not be read",
])


@settings(max_examples=1000)
@given(st.lists(_CREDENTIAL_PIECES | st.text(alphabet="abcdefKkeyfil /'.:", max_size=4),
                max_size=10).map("".join))
@example("Key File x was not found")
@example("File '/x/credentials.json' was not found")
def test_a_credentials_file_needs_a_word_the_ascii_gate_looks_for(text: str) -> None:
    """ASCII text the credentials-file pattern matches holds "credential" or "key file"."""
    low = text.lower()
    if _CREDENTIALS_FILE_RE.search(text) is not None:
        assert "credential" in low or "key file" in low
