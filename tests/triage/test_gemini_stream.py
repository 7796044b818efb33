"""Gemini CLI's headless output (``gemini -p ... --output-format stream-json`` and ``json``),
checked against the pinned Gemini CLI's own code and runs.

The event names, the ``ToolErrorType`` values and the ``Fatal*Error`` exit codes the reader
keys on are read from the pinned ``@google/gemini-cli`` bundle in the lab cache (its
``packages/core/src/output/types.ts``, ``tools/tool-error.ts``, ``utils/errors.ts``), so a
new version that renames one fails here. The lab keeps every gemini-cli run's stream-json
stdout (``tests/lab/test_gemini_stream_fixtures.py`` scores them); the shapes the lab's stream
runs do not hold are made here: the ``json`` output of real runs of the pinned Gemini CLI
against the lab's scripted model (a success on stdout, a turn limit and a fatal server error
printed to stderr among Gemini CLI's warnings and traces), a ``--debug`` run's stream (whose
shell results state every exit status), a stream cut in its last line, and ``error`` events
in the shape ``nonInteractiveCli.ts`` writes them, put into a lab stream.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import TYPE_CHECKING, Any, Final

import pytest

from failcode import FC
from failcode.triage import triage
from failcode.triage._events import Command
from failcode.triage.readers import detect
from failcode.triage.readers._gemini_stream import (
    _CANCELLED,
    _DENIED,
    _MAX_TURNS,
    _SHELL_ERROR,
    _TURN_LIMIT,
)
from tests._needs import missing
from tests.lab.agents import GeminiCli, Launch, RunContext, agents
from tests.lab.runner import FIXTURES, run
from tests.lab.scenario import SCENARIOS, load

if TYPE_CHECKING:
    from pathlib import Path

AGENT: Final = "gemini-cli"
EVENT_TYPES: Final = {"init", "message", "tool_use", "tool_result", "error", "result"}
"""The event types the reader reads (one per ``JsonStreamEventType``)."""
_FATAL = re.compile(r"var (Fatal\w+Error) = class extends FatalError \{\n  constructor\(message\)"
                    r" \{\n    super\(message, (\d+)\);")


@pytest.fixture(scope="module")
def bundle() -> str:
    """The text of the pinned Gemini CLI's bundle: the chunks that hold its core package's
    output types and its non-interactive mode."""
    agent = agents()[AGENT]
    if not agent.installed():
        missing(f"{AGENT} {agent.version} is not installed (python -m tests.lab install)")
    folder = agent.install_dir / "node_modules" / "@google" / "gemini-cli" / "bundle"
    found = {}
    for path in sorted(folder.glob("*.js")):
        data = path.read_bytes()
        for source in (b"// packages/core/src/output/types.ts",
                       b"// packages/cli/src/nonInteractiveCli.ts"):
            if source in data and source not in found:
                found[source] = data.decode(errors="replace")
    if len(found) < 2:
        pytest.fail(f"{folder} holds no core output types or non-interactive mode")
    return "\n".join(found.values())


def _enum(text: str, name: str) -> set[str]:
    """The values of one TypeScript enum as esbuild writes it (``Name2["KEY"] = "value";``)."""
    return set(re.findall(rf'\b{name}2\["\w+"\] = "([^"]*)";', text))


def _stream(scenario: str) -> Path:
    path = FIXTURES / AGENT / scenario / "stream.jsonl"
    if not path.exists():
        pytest.fail(f"{path} missing: python -m tests.lab run -a {AGENT} -s {scenario}")
    return path


def _events(scenario: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in _stream(scenario).read_text().splitlines()]


def _write(tmp_path: Path, events: list[dict[str, Any]], name: str = "stream.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events))
    return path


def _session(path: Path) -> dict[str, Any]:
    result = triage([str(path)]).to_dict()
    assert [i["format"] for i in result["inputs"]] == ["gemini-stream-json"], result["inputs"]
    (session,) = result["sessions"]
    return session  # type: ignore[no-any-return]


def _seen(path: Path) -> tuple[Any, ...]:
    """What triage says of a session: its steps, failures, outcomes and ending."""
    session = _session(path)
    ended = session["ended"]["failure"]
    return (session["steps"], [(f["step"], f["failure"]["code"]) for f in session["failures"]],
            [(o["step"], o["outcome"]["type"]) for o in session["outcomes"]],
            session["ended"]["status"], ended and ended["code"])


# -- the pinned Gemini CLI's names ------------------------------------------------------------
def test_the_reader_reads_every_event_type_gemini_cli_declares(bundle: str) -> None:
    """``JsonStreamEventType`` of the pinned version is the set the reader reads."""
    assert _enum(bundle, "JsonStreamEventType") == EVENT_TYPES


def test_the_tool_error_types_the_reader_keys_on_are_gemini_clis(bundle: str) -> None:
    """``policy_violation`` and ``shell_execute_error`` are ``ToolErrorType`` values."""
    assert {_DENIED, _SHELL_ERROR} <= _enum(bundle, "ToolErrorType")


def test_the_fatal_errors_the_reader_keys_on_exit_as_documented(bundle: str) -> None:
    """The turn limit exits 53 and a cancellation 130, as the module's rules say."""
    codes = dict(_FATAL.findall(bundle))
    assert codes[_TURN_LIMIT] == "53"
    assert codes[_CANCELLED] == "130"
    assert f'message = "{_MAX_TURNS}"' in bundle


def test_every_lab_stream_line_is_an_event_type_gemini_cli_declares(bundle: str) -> None:
    """Every line Gemini CLI printed in the lab is one of its declared events."""
    declared = _enum(bundle, "JsonStreamEventType")
    lines = [json.loads(line) for path in sorted((FIXTURES / AGENT).glob("*/stream.jsonl"))
             for line in path.read_text().splitlines()]
    assert lines, f"no kept stdout: python -m tests.lab run -a {AGENT}"
    assert {entry["type"] for entry in lines} <= declared


# -- the lab's streams ------------------------------------------------------------------------
def test_every_lab_stream_is_read_and_ends_on_its_result() -> None:
    """No input error; ``submitted`` exactly when the result's status is ``success``."""
    for path in sorted((FIXTURES / AGENT).glob("*/stream.jsonl")):
        session = _session(path)
        last = json.loads(path.read_text().splitlines()[-1])
        assert last["type"] == "result", path
        assert (session["ended"]["status"] == "submitted") == (last["status"] == "success"), path


@pytest.mark.parametrize(("scenario", "status", "code"), [
    ("turn-limit", "limit", FC.LIFE_AGENT_LIMIT),
    ("provider-fatal-500", "provider_error", FC.PROV_SERVER_ERROR),
    ("provider-fatal-429", "provider_error", FC.PROV_RATE_LIMIT),
    ("provider-auth", "provider_error", FC.PROV_AUTH),
])
def test_an_error_result_decides_the_ending(scenario: str, status: str, code: FC) -> None:
    """The lab's runs that stopped on a turn limit or a fatal provider fault (the stub's
    HTTP status) end so; the chat recording of the same runs keeps no trace of either."""
    session = _session(_stream(scenario))
    assert session["ended"]["status"] == status
    assert session["ended"]["failure"]["code"] == code
    (recording,) = triage([str(FIXTURES / AGENT / scenario / "session")]).to_dict()["sessions"]
    assert recording["ended"]["failure"] is None


def test_a_denied_command_is_a_rejected_action() -> None:
    """A deny rule's ``policy_violation`` result is a rejected action, not a failure."""
    session = _session(_stream("refused-command"))
    assert [o["step"] for o in session["outcomes"] if o["outcome"]["type"] == "rejected_action"
            ] == [0]
    assert [f for f in session["failures"] if f["step"] == 0] == []


def test_a_last_line_cut_short_keeps_what_came_before(tmp_path: Path) -> None:
    """A stream cut in its last line is FC-DATA-003 naming it; its steps are still read."""
    text = _stream("pytest-failure").read_text()
    cut = text[:text.rindex('"type":"result"') + 20]
    path = tmp_path / "stream.jsonl"
    path.write_text(cut)
    result = triage([str(path)]).to_dict()
    (item,) = result["inputs"]
    assert item["format"] == "gemini-stream-json"
    assert item["error"]["code"] == "FC-DATA-003"
    assert f"line {cut.count(chr(10)) + 1}" in item["error"]["message"]
    (session,) = result["sessions"]
    assert session["steps"] == 2
    assert [f["step"] for f in session["failures"]] == [1]
    assert session["ended"]["status"] == "unknown"


def test_stderr_kept_with_stdout_is_passed_over(tmp_path: Path) -> None:
    """A job that keeps stderr with stdout (``2>&1``): Gemini CLI's warnings around the
    events change nothing."""
    stream = _stream("pytest-failure")
    lines = stream.read_text().splitlines()
    mixed = tmp_path / "ci.log"
    mixed.write_text("\n".join([
        "YOLO mode is enabled. All tool calls will be automatically approved.",
        lines[0], "Ripgrep is not available. Falling back to GrepTool.", *lines[1:]]) + "\n")
    assert _seen(mixed) == _seen(stream)


# -- error events -----------------------------------------------------------------------------
def _error(message: str, severity: str = "error") -> dict[str, Any]:
    """An ``error`` event as ``nonInteractiveCli.ts`` writes one."""
    return {"type": "error", "timestamp": "2026-01-01T00:00:20.000Z", "severity": severity,
            "message": message}


def test_a_session_turn_cap_error_event_is_the_turn_limit(tmp_path: Path) -> None:
    """Gemini CLI's own cap (``Maximum session turns exceeded``, then a success result)."""
    events = _events("pytest-failure")
    path = _write(tmp_path, [*events[:-2], _error(_MAX_TURNS), events[-1]])
    session = _session(path)
    assert session["ended"]["status"] == "limit"
    assert session["ended"]["failure"]["kind"] == "agent_error"


def test_an_api_error_event_with_no_result_ends_on_the_provider(tmp_path: Path) -> None:
    """A quota error event that nothing answered (the run cut off after it)."""
    events = _events("pytest-failure")
    message = ("[API Error: You have exhausted your capacity on this model. "
               "(Status: RESOURCE_EXHAUSTED)]")
    session = _session(_write(tmp_path, [*events[:-2], _error(message)]))
    assert session["ended"]["status"] == "provider_error"
    assert session["ended"]["failure"]["kind"] == "provider_error"
    assert session["ended"]["failure"]["code"] == FC.PROV_RATE_LIMIT  # RESOURCE_EXHAUSTED: 429


def test_an_invalid_response_then_an_error_result_is_a_provider_error(
        tmp_path: Path, bundle: str) -> None:
    """An empty model response: the error event with Gemini CLI's own text, then a result
    of status ``error`` and no ``error`` member."""
    message = re.search(r'var TRUE_EMPTY_RESPONSE_MESSAGE = "([^"]+)";', bundle)
    assert message is not None
    events = _events("pytest-failure")
    result = {k: v for k, v in events[-1].items() if k != "error"} | {"status": "error"}
    session = _session(_write(tmp_path, [*events[:-2], _error(message.group(1)), result]))
    assert session["ended"]["status"] == "provider_error"
    assert session["ended"]["failure"]["kind"] == "provider_error"


def test_a_warning_event_changes_nothing(tmp_path: Path) -> None:
    """``Loop detected, stopping execution`` is a warning: the run still ends on its result."""
    events = _events("pytest-failure")
    path = _write(tmp_path, [*events[:-1], _error("Loop detected, stopping execution",
                                                  "warning"), events[-1]])
    session = _session(path)
    assert session["ended"]["status"] == "submitted"
    assert _seen(path) == _seen(_stream("pytest-failure"))


# -- --output-format json, from real runs -----------------------------------------------------
@dataclasses.dataclass(slots=True)
class _GeminiJson(GeminiCli):
    """The lab's Gemini CLI launched with ``--output-format json``."""

    def launch(self, ctx: RunContext) -> Launch:
        launch = GeminiCli.launch(self, ctx)
        argv = ["json" if arg == "stream-json" else arg for arg in launch.argv]
        return Launch(argv, launch.env, launch.stdin)


@pytest.fixture(scope="module")
def json_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, Path, Path]]:
    """Per scenario: the exit code, stdout and stderr of one ``--output-format json`` run."""
    base = agents()[AGENT]
    if not base.installed():
        missing(f"{AGENT} {base.version} is not installed (python -m tests.lab install)")
    agent = _GeminiJson(**{f.name: getattr(base, f.name) for f in dataclasses.fields(base)})
    folder = tmp_path_factory.mktemp("gemini-json")
    out = {}
    for name in ("pytest-failure", "turn-limit", "provider-fatal-500"):
        result, _ = run(agent, load(SCENARIOS / f"{name}.toml"), keep=folder / "runs")
        assert not result.timed_out, result.stderr[-2000:]
        assert result.exit_code is not None
        stdout, stderr = folder / f"{name}.stdout.json", folder / f"{name}.stderr.txt"
        stdout.write_text(result.stdout)
        stderr.write_text(result.stderr)
        out[name] = (result.exit_code, stdout, stderr)
    return out


@dataclasses.dataclass(slots=True)
class _GeminiDebug(GeminiCli):
    """The lab's Gemini CLI launched with ``--debug`` (stream-json still)."""

    def launch(self, ctx: RunContext) -> Launch:
        launch = GeminiCli.launch(self, ctx)
        return Launch([*launch.argv, "--debug"], launch.env, launch.stdin)


def test_under_debug_every_status_is_the_chat_recordings(tmp_path: Path) -> None:
    """``--debug`` shows the model's own text of a shell call (``Output: ... Exit Code: N``):
    the stream then gives each step's exit status, the same as the chat recording of the run
    (``diff``: differences, twice, ``git diff --exit-code``, a missing file)."""
    base = agents()[AGENT]
    if not base.installed():
        missing(f"{AGENT} {base.version} is not installed (python -m tests.lab install)")
    agent = _GeminiDebug(**{f.name: getattr(base, f.name) for f in dataclasses.fields(base)})
    scenario = load(SCENARIOS / "diff-differences.toml")
    result, _ = run(agent, scenario, keep=tmp_path / "run")
    assert not result.timed_out, result.stderr[-2000:]
    stream = tmp_path / "stream.jsonl"
    stream.write_text(result.stdout)
    (recording,) = result.files

    def steps(path: Path) -> list[tuple[object, ...]]:
        reader = detect(path.read_bytes()[:65536])
        assert reader is not None, path
        with path.open("rb") as handle:
            return [(e.step, e.command, e.exit_code) for e in reader.read(handle, str(path))
                    if isinstance(e, Command)]

    found = steps(stream)
    assert [(command, code) for _, command, code in found] == [
        (step.command, step.exit) for step in scenario.steps if step.command]
    assert found == steps(recording)


def test_the_json_output_of_a_run_ends_as_its_stream(
        json_runs: dict[str, tuple[int, Path, Path]]) -> None:
    """A run that finished prints one object on stdout: its session is submitted, with as
    many steps as the stream of the same scenario, and no step read (it holds none)."""
    code, stdout, _ = json_runs["pytest-failure"]
    assert code == 0
    session = _session(stdout)
    stream = _session(_stream("pytest-failure"))
    assert session["ended"]["status"] == stream["ended"]["status"] == "submitted"
    assert session["steps"] == stream["steps"]
    assert session["failures"] == []


def test_a_turn_limit_is_one_object_on_stderr(
        json_runs: dict[str, tuple[int, Path, Path]]) -> None:
    """Exit 53: the error object on stderr (printed twice, among warnings) is one session
    ended by the turn limit, as the stream of the same scenario ends."""
    code, stdout, stderr = json_runs["turn-limit"]
    assert code == 53
    assert not stdout.read_text().strip()
    assert stderr.read_text().count(f'"type": "{_TURN_LIMIT}"') == 2
    session = _session(stderr)
    assert session["ended"]["status"] == "limit"
    assert session["ended"]["failure"]["code"] == _session(
        _stream("turn-limit"))["ended"]["failure"]["code"]


def test_a_fatal_server_error_is_the_provider_error_with_its_status(
        json_runs: dict[str, tuple[int, Path, Path]]) -> None:
    """The error object after Node's traces on stderr: ``code`` 500 is the HTTP status, the
    same failure as the stream of the same scenario."""
    code, _, stderr = json_runs["provider-fatal-500"]
    assert code == 500 % 256
    session = _session(stderr)
    assert session["ended"]["status"] == "provider_error"
    assert session["ended"]["failure"]["code"] == _session(
        _stream("provider-fatal-500"))["ended"]["failure"]["code"] == FC.PROV_SERVER_ERROR
