"""Claude Code's retried API errors (``system`` ``api_error`` transcript lines, ``api_retry``
stream lines), its refused long ``sleep`` and its backgrounded commands, in the shapes the
binary writes them.

The oracle is the binary of each generation (Claude Code is a native executable: its text is
read from the file in the lab cache): the pinned release (2.1.332) and the previous pin
(2.1.197, installed into the cache on first use as ``python -m tests.lab install`` would). From
each binary come the record's fields (the function that builds the ``api_error`` line), the
fields of its ``error`` (the function that keeps what a failed request said), the shape of a
failed connection, the stream's ``api_retry`` fields and the error codes Claude Code gives
them, the SDK's own messages, the ``sleep`` refusal and the background texts. Each record is
fed to triage in a session the agent recovered from; what a careful triage reports is the
failure catalog's meaning of the request's own fields, never a failure of a step.
"""

from __future__ import annotations

import dataclasses
import json
import mmap
import re
from typing import TYPE_CHECKING, Any, Final

import pytest

from failcode import FC
from failcode.triage import triage
from tests._needs import missing
from tests.lab.agents import AgentUnavailableError, agents
from tests.lab.scenario import SCENARIOS, load
from tests.lab.score import fixtures

if TYPE_CHECKING:
    from pathlib import Path

PREVIOUS: Final = "2.1.197"
"""The pin before 2.1.332: the generation whose transcripts the committed lab fixtures held."""

_SESSION: Final = "00000000-0000-4000-8000-0000000000a1"


def _binary_of(version: str | None) -> bytes:
    """The native executable of Claude Code ``version`` (None: the pinned one), as bytes."""
    pinned = agents()["claude-code"]
    agent = pinned if version is None else dataclasses.replace(pinned, version=version)
    if not agent.installed():
        try:
            agent.install()
        except AgentUnavailableError as exc:
            missing(f"claude-code {agent.version} is not installed and did not install: {exc}")
    path = (agent.install_dir / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64"
            / "claude")
    if not path.exists():
        missing(f"claude-code {agent.version} has no linux-x64 binary at {path}")
    with path.open("rb") as handle:
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)[:]


@pytest.fixture(scope="module", params=[None, PREVIOUS], ids=["pinned", PREVIOUS])
def binary(request: pytest.FixtureRequest) -> bytes:
    return _binary_of(request.param)


_SHAPES: dict[int, Shapes] = {}


def _find(binary: bytes, pattern: bytes) -> re.Match[bytes]:
    found = re.search(pattern, binary)
    assert found is not None, f"{pattern!r} is not in the binary any more"
    return found


def _top_level_keys(code: bytes) -> list[str]:
    """The keys of the object literal ``code`` starts with (``{a:x,b:{c:y}}`` -> a, b)."""
    keys: list[str] = []
    depth, quote, i = 0, 0, 0
    while i < len(code):
        char = code[i]
        if quote:
            if char == 0x5C:  # a backslash escapes the next character
                i += 2
                continue
            quote = 0 if char == quote else quote
        elif char in b"\"'`":
            quote = char
        elif char in b"})]":
            depth -= 1
            if depth == 0:
                break
        else:
            if char in b"{([":
                depth += 1
            if char in b"{," and depth == 1:
                key = re.match(rb"([A-Za-z_$][\w$]*):", code[i + 1:i + 80])
                if key is not None:
                    keys.append(key.group(1).decode())
        i += 1
    return keys


# -- what the binary writes --------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Shapes:
    """The record shapes one binary writes."""

    record: list[str]
    """The ``api_error`` line's own fields, in order, between ``level`` and ``timestamp``."""
    error: list[str]
    """The fields of its ``error``."""
    connection: list[str]
    """The fields of ``error.connection``."""
    sources: list[str]
    """The ``source`` values (2.1.3xx), else empty."""
    stream: list[str]
    """The stream's ``api_retry`` fields."""
    codes: dict[int | None, str]
    """The stream's ``error`` code for a status (None: none of them)."""
    timeout_message: str
    """The SDK's message for a request that timed out."""
    connection_message: str
    """The SDK's message for a request whose connection failed."""
    closed_message: str
    """The text Claude Code reads as a closed connection (code ``ConnectionClosed``)."""


def shapes(binary: bytes) -> Shapes:
    """What ``binary`` writes (read once per binary)."""
    if id(binary) not in _SHAPES:
        _SHAPES[id(binary)] = _read_shapes(binary)
    return _SHAPES[id(binary)]


def _read_shapes(binary: bytes) -> Shapes:
    record = _find(binary, rb'return\{type:"system",subtype:"api_error",level:"error",'
                           rb'((?:\w+:[\w$]+,)+)timestamp:new Date\(\)\.toISOString\(\)')
    fields = [f.split(b":")[0].decode() for f in record.group(1).rstrip(b",").split(b",")]
    error = _find(binary, rb"return(\{message:([\w$]+)\.message,status:\2\.status,"
                          rb"requestId:\2\.requestID\?\?void 0,formatted:)")
    connection = _find(binary, rb"return\{code:[\w$]+,message:[\w$]+\.message,"
                               rb"isSSLError:[\w$]+\}")
    sources = sorted({m.decode() for m in re.findall(
        rb',"((?:request|connection|cut)_retry)"\)', binary)})
    stream = _find(binary, rb'subtype:"api_retry",(attempt:[\w$]+\.retryAttempt,.{0,200}?'
                           rb'error:[\w$]+\([\w$]+\.error\))')
    rules = _find(binary, rb'function [\w$]+\(e\)\{if\(e\.status===529\|\|e\.message\?\.includes'
                          rb'.{0,400}?return"unknown"\}')
    codes: dict[int | None, str] = {}
    for status, code in re.findall(rb'e\.status===(\d{3}).{0,80}?return"(\w+)"', rules.group(0)):
        codes.setdefault(int(status), code.decode())
    server = re.search(rb'e\.status>=(\d{3}).{0,5}return"(\w+)"', rules.group(0))
    assert server is not None
    codes[int(server.group(1))] = server.group(2).decode()  # 408 and above
    codes[None] = "unknown"
    timeout = _find(binary, rb'\{constructor\(\{message:[\w$]+\}=\{\}\)\{super\(\{message:'
                            rb'[\w$]+\?\?"(Request timed out\.)"\}\)\}\}')
    conn = _find(binary, rb'\|\|"(Connection error\.)"')
    closed = _find(binary, rb'"(The socket connection was closed unexpectedly)"')
    return Shapes(fields, _top_level_keys(binary[error.start(1):error.start(1) + 1200]),
                  _top_level_keys(connection.group(0)[6:]), sources,
                  [k.decode() for k in re.findall(rb"(?:^|,)(\w+):", stream.group(1))],
                  codes, timeout.group(1).decode(), conn.group(1).decode(),
                  closed.group(1).decode())


def test_the_shapes_are_read_from_both_generations(binary: bytes) -> None:
    """The parse finds what each generation writes; 2.1.3xx adds ``source`` and
    ``noResponse``."""
    found = shapes(binary)
    assert found.record[:4] == ["error", "retryInMs", "retryAttempt", "maxRetries"]
    assert {"message", "status", "formatted", "connection", "isNetworkDown"} <= set(found.error)
    assert found.connection == ["code", "message", "isSSLError"]
    assert found.stream[:5] == ["attempt", "max_retries", "retry_delay_ms", "error_status",
                                "error"]
    assert ("source" in found.record) == bool(found.sources) == ("noResponse" in found.error)


# -- the transcript's api_error line -----------------------------------------------------------
def _error(found: Shapes, **values: Any) -> dict[str, Any]:
    """An ``error`` with the binary's fields: the values given, the others as the binary
    leaves them when nothing is known (``null``, ``false``; an ``undefined`` one is not
    written)."""
    defaults = {"connection": None, "isNetworkDown": False, "rateLimits": None,
                "noResponse": None}
    out = {}
    for key in found.error:
        if key in values:
            out[key] = values[key]
        elif key in defaults:
            out[key] = defaults[key]
    unknown = set(values) - set(found.error)
    assert not unknown, f"the binary's error has no {unknown}"
    return out


def _record(found: Shapes, error: dict[str, Any], attempt: int = 1) -> dict[str, Any]:
    values = {"error": error, "retryInMs": 0, "retryAttempt": attempt, "maxRetries": 2,
              "source": (found.sources or ["request_retry"])[-1]}
    return {"parentUuid": None, "isSidechain": False, "type": "system", "subtype": "api_error",
            "level": "error", **{k: values[k] for k in found.record},
            "timestamp": "2026-01-01T00:00:03.000Z", "uuid": "u-retry", "userType": "external",
            "cwd": "/lab/project", "sessionId": _SESSION, "version": "2.1.332"}


def _transcript(tmp_path: Path, retries: list[dict[str, Any]]) -> Path:
    """A session the agent recovered from: a command, the retried request's failed tries,
    the next command and the final answer."""
    base = {"sessionId": _SESSION, "version": "2.1.332", "cwd": "/lab/project",
            "isSidechain": False}

    def call(n: int, command: str) -> list[dict[str, Any]]:
        return [{**base, "type": "assistant", "timestamp": f"2026-01-01T00:00:0{n}.000Z",
                 "message": {"role": "assistant", "model": "claude-sonnet-4-5", "content": [
                     {"type": "tool_use", "id": f"toolu_{n}", "name": "Bash",
                      "input": {"command": command}}]}},
                {**base, "type": "user", "timestamp": f"2026-01-01T00:00:0{n}.500Z",
                 "toolUseResult": {"stdout": command[5:], "stderr": "", "interrupted": False},
                 "message": {"role": "user", "content": [
                     {"type": "tool_result", "tool_use_id": f"toolu_{n}",
                      "content": command[5:], "is_error": False}]}}]

    lines = [{**base, "type": "user", "timestamp": "2026-01-01T00:00:00.000Z",
              "message": {"role": "user", "content": "run the steps"}},
             *call(1, "echo one"), *retries, *call(5, "echo two"),
             {**base, "type": "assistant", "timestamp": "2026-01-01T00:00:07.000Z",
              "message": {"role": "assistant", "model": "claude-sonnet-4-5",
                          "stop_reason": "end_turn",
                          "content": [{"type": "text", "text": "Done."}]}}]
    path = tmp_path / f"{_SESSION}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _body(status: int, kind: str, message: str) -> str:
    """The SDK's message of an HTTP error: the status, then the body the API answered."""
    return f"{status} " + json.dumps({"type": "error", "error": {"type": kind,
                                                                 "message": message}},
                                     separators=(",", ":"))


def _cases(found: Shapes) -> list[tuple[str, dict[str, Any], FC]]:
    """(what, the record's error, what it is)."""
    def conn(code: str, message: str | None = None) -> dict[str, Any]:
        return _error(found, message=found.connection_message,
                      formatted=found.connection_message,
                      connection={"code": code, "message": message or code,
                                  "isSSLError": False})

    cases = [
        ("timeout", _error(found, message=found.timeout_message,
                           formatted=found.timeout_message), FC.PROV_TIMEOUT),
        ("ETIMEDOUT", conn("ETIMEDOUT"), FC.PROV_TIMEOUT),
        ("ECONNRESET", conn("ECONNRESET"), FC.PROV_CONNECTION),
        ("ECONNREFUSED", conn("ECONNREFUSED"), FC.PROV_CONNECTION),
        ("closed", conn("ConnectionClosed", found.closed_message), FC.PROV_CONNECTION),
        ("408", _error(found, message=_body(408, "timeout_error", "Request timeout"),
                       status=408), FC.PROV_TIMEOUT),
        ("429", _error(found, message=_body(429, "rate_limit_error", "Rate limited"),
                       status=429), FC.PROV_RATE_LIMIT),
        ("500", _error(found, message=_body(500, "api_error", "Internal server error"),
                       status=500), FC.PROV_SERVER_ERROR),
        ("503", _error(found, message=_body(503, "api_error", "Service unavailable"),
                       status=503), FC.PROV_SERVER_ERROR),
        ("529", _error(found, message=_body(529, "overloaded_error", "Overloaded"),
                       status=529), FC.PROV_OVERLOADED),
    ]
    if "noResponse" in found.error:
        cases.append(("no response", _error(
            found, message=found.timeout_message, formatted=found.timeout_message,
            noResponse={"waitedMs": 20000, "retryWaitMs": 60000}), FC.PROV_TIMEOUT))
    return cases


def test_a_retried_api_error_is_the_provider_failure_its_fields_say(
        binary: bytes, tmp_path: Path) -> None:
    """Each failed try, in the binary's shape, is a provider failure at no step, of the kind
    its own status or connection says; the steps stay quiet and the session is the agent's
    answer."""
    found = shapes(binary)
    wrong = []
    for what, error, code in _cases(found):
        folder = tmp_path / what.replace(" ", "-")
        folder.mkdir()
        path = _transcript(folder, [_record(found, error, 1), _record(found, error, 2)])
        (session,) = triage([str(path)]).to_dict()["sessions"]
        got = [(f["step"], f["source"], f["failure"]["code"], f["repeats"])
               for f in session["failures"]]
        if got != [(None, "provider", code.value, 2)] or session["ended"]["status"] != (
                "submitted"):
            wrong.append(f"{what}: {got} ended {session['ended']['status']}")
    assert wrong == []


def test_a_request_retried_then_lost_ends_the_session_on_its_last_word(
        binary: bytes, tmp_path: Path) -> None:
    """When the tries run out, Claude Code's own ``API Error`` message is the session's
    end; the tries before it stay at no step."""
    found = shapes(binary)
    error = _error(found, message=_body(529, "overloaded_error", "Overloaded"), status=529)
    path = _transcript(tmp_path, [_record(found, error, 1), _record(found, error, 2)])
    lines = [*path.read_text().splitlines()[:-1], json.dumps({
        "sessionId": _SESSION, "version": "2.1.332", "type": "assistant",
        "isApiErrorMessage": True, "apiErrorStatus": 529, "error": "server_error",
        "timestamp": "2026-01-01T00:00:07.000Z", "message": {
            "role": "assistant", "model": "<synthetic>",
            "content": [{"type": "text", "text": "API Error: 529 Overloaded"}]}})]
    path.write_text("\n".join(lines) + "\n")
    (session,) = triage([str(path)]).to_dict()["sessions"]
    assert session["ended"]["status"] == "provider_error"
    assert session["ended"]["failure"]["code"] == FC.PROV_OVERLOADED.value
    assert {f["step"] for f in session["failures"]} == {None, 2}


# -- the stream's api_retry line ---------------------------------------------------------------
def _stream(tmp_path: Path, retry: dict[str, Any]) -> Path:
    base = {"session_id": _SESSION}
    lines = [{**base, "type": "system", "subtype": "init", "model": "claude-sonnet-4-5",
              "claude_code_version": "2.1.332"}, {**base, **retry},
             {**base, "type": "assistant", "parent_tool_use_id": None, "message": {
                 "role": "assistant", "model": "claude-sonnet-4-5", "stop_reason": "end_turn",
                 "content": [{"type": "text", "text": "Done."}]}},
             {**base, "type": "result", "subtype": "success", "is_error": False,
              "result": "Done.", "terminal_reason": "completed"}]
    path = tmp_path / "stream.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_stream_retry_is_the_provider_failure_its_fields_say(
        binary: bytes, tmp_path: Path) -> None:
    """The ``api_retry`` line as the binary derives it from the ``api_error`` line (the
    status, the code Claude Code gives it): the status decides, a 408 Claude Code calls a
    ``server_error`` is a timeout; with no status, no answer is a failed connection."""
    found = shapes(binary)
    code_of = found.codes
    cases: list[tuple[int | None, str, dict[str, Any], FC]] = [
        (408, code_of[408], {}, FC.PROV_TIMEOUT),
        (429, code_of[429], {}, FC.PROV_RATE_LIMIT),
        (500, code_of[408], {}, FC.PROV_SERVER_ERROR),
        (529, code_of[529], {}, FC.PROV_OVERLOADED),
        (None, code_of[None], {}, FC.PROV_CONNECTION),
    ]
    if "noResponse" in found.error:
        cases.append((None, code_of[None], {"no_response": {"waited_ms": 20000,
                                                            "retry_wait_ms": 60000}},
                      FC.PROV_TIMEOUT))
    wrong = []
    for index, (status, code, extra, want) in enumerate(cases):
        values = {"attempt": 1, "max_retries": 2, "retry_delay_ms": 0, "error_status": status,
                  "error": code}
        retry = {"type": "system", "subtype": "api_retry",
                 **{k: values[k] for k in found.stream}, **extra}
        folder = tmp_path / str(index)
        folder.mkdir()
        (session,) = triage([str(_stream(folder, retry))]).to_dict()["sessions"]
        got = [(f["step"], f["failure"]["code"]) for f in session["failures"]]
        if got != [(None, want.value)] or session["ended"]["status"] != "submitted":
            wrong.append(f"{status} {code} {extra}: {got} {session['ended']['status']}")
    assert wrong == []


# -- a refused long sleep, a command moved to the background -----------------------------------
_PLACEHOLDER: Final = re.compile(rb"\$\{[^}]{1,60}\}")


def _bash_result(tmp_path: Path, command: str, text: str, *, is_error: bool) -> Path:
    base = {"sessionId": _SESSION, "version": "2.1.332", "cwd": "/lab/project",
            "isSidechain": False}
    lines = [
        {**base, "type": "assistant", "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"role": "assistant", "model": "claude-sonnet-4-5", "content": [
             {"type": "tool_use", "id": "toolu_1", "name": "Bash",
              "input": {"command": command, "timeout": 3000}}]}},
        {**base, "type": "user", "timestamp": "2026-01-01T00:00:02.000Z",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_1", "content": text,
              "is_error": is_error}]}}]
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_refused_long_sleep_is_a_rejected_action(binary: bytes, tmp_path: Path) -> None:
    """The binary's refusal of a leading ``sleep`` (its threshold, its text), as Claude Code
    feeds a refused input back (``<tool_use_error>``): a rejected action, no failure."""
    rule = _find(binary, rb"<([\w$]+)\)return null;[^`]{0,80}`sleep \$\{[\w$.]+\} followed by: "
                         rb"\$\{[\w$.]+\}`:`(standalone sleep )\$\{")
    seconds = int(_find(binary, rb"[^\w$]" + re.escape(rule.group(1)) + rb"=(\d+)[,;]").group(1))
    what = rule.group(2).decode()
    refusal = _find(binary, rb"message:`Blocked: \$\{[\w$]+\}\. To wait for a condition, "
                            rb"use Monitor[^`]{0,400}`").group(0)[9:-1]
    text = _PLACEHOLDER.sub(f"{what}{seconds}".encode(), refusal).decode()
    path = _bash_result(tmp_path, f"sleep {seconds}", f"<tool_use_error>{text}</tool_use_error>",
                        is_error=True)
    (session,) = triage([str(path)]).to_dict()["sessions"]
    assert [(o["step"], o["outcome"]["type"]) for o in session["outcomes"]] == [
        (0, "rejected_action")]
    assert session["failures"] == []


_BACKGROUND: Final = [
    (b"Command did not complete within its ${...}s timeout and was moved to the background "
     b"(ID: ${...}). Output is being written to: ${...}."),
    (b"Command was moved to the background (ID: ${...}) after running for ${...}s. Output is "
     b"being written to: ${...}."),
    (b"Command was moved to the background (ID: ${...}) so that a message that arrived while "
     b"it was running can reach you; it was not interrupted."),
    (b"Command was manually backgrounded by user with ID: ${...}. Output is being written to: "
     b"${...}."),
    b"Command running in background with ID: ${...}. Output is being written to: ${...}.",
]


def test_a_command_moved_to_the_background_is_no_failure(binary: bytes,
                                                          tmp_path: Path) -> None:
    """Each background text the binary has (2.1.3xx moves a command past its timeout to the
    background instead of stopping it): still running, neither a failure nor an outcome."""
    present = 0
    for index, template in enumerate(_BACKGROUND):
        pattern = re.escape(template).replace(rb"\$\{\.\.\.\}", rb"\$\{[^}]{1,60}\}")
        found = re.search(pattern, binary)
        if found is None:
            continue
        present += 1
        text = _PLACEHOLDER.sub(b"7", found.group(0)).decode()
        folder = tmp_path / str(index)
        folder.mkdir()
        path = _bash_result(folder, "python3 -c 'import time; time.sleep(6)'", text,
                            is_error=False)
        (session,) = triage([str(path)]).to_dict()["sessions"]
        assert (session["failures"], session["outcomes"]) == ([], []), text
    assert present >= 1


# -- the lab's runs of the pinned release ------------------------------------------------------
_BY_STATUS: Final = {401: FC.PROV_AUTH, 429: FC.PROV_RATE_LIMIT, 500: FC.PROV_SERVER_ERROR,
                     503: FC.PROV_SERVER_ERROR, 529: FC.PROV_OVERLOADED}
"""What the stub's faults are, by the failure catalog (a status the scenario names)."""
_BY_MODE: Final = {"hang": FC.PROV_TIMEOUT, "malformed": FC.PROV_CONNECTION}
"""A request the stub never answers is a timeout; a stream it cuts, a connection the client
saw closed."""


def test_the_lab_runs_retried_faults_are_read_at_no_step() -> None:
    """Every claude-code fixture at the pin whose transcript keeps ``api_error`` lines: each
    line is a try of one provider failure at no step, of the kind the scenario's fault is."""
    pinned = agents()["claude-code"].version
    checked, wrong = 0, []
    for fixture in fixtures():
        if fixture.agent != "claude-code" or fixture.meta["version"] != pinned:
            continue
        transcripts = [fixture.path / name for name in fixture.meta["files"]]
        lines = [json.loads(line) for t in transcripts for line in t.read_text().splitlines()
                 if '"api_error"' in line]
        tries = [e for e in lines if e.get("type") == "system" and e.get(
            "subtype") == "api_error"]
        if not tries:
            continue
        checked += 1
        scenario = load(SCENARIOS / f"{fixture.scenario}.toml")
        want = {(_BY_STATUS[f.status] if f.mode == "http" else _BY_MODE[f.mode]).value
                for f in (*(f for step in scenario.steps for f in step.faults),
                          *scenario.final_faults)}
        (session,) = triage([str(t) for t in transcripts]).to_dict()["sessions"]
        retried = [f for f in session["failures"] if f["step"] is None]
        got = {f["failure"]["code"] for f in retried}
        if got != want or sum(f["repeats"] for f in retried) != len(tries):
            wrong.append(f"{fixture.scenario}: {sorted(got)} of {len(tries)} tries, "
                         f"want {sorted(want)}")
    assert checked >= 3, "the lab's provider scenarios keep Claude Code's api_error lines"
    assert wrong == []
