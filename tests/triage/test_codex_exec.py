"""Codex CLI's headless output (``codex exec --json``), checked against the event and item types
Codex's own TypeScript SDK declares for it, and the shapes the lab's runs do not produce.

The oracle for the shapes is ``dist/index.d.ts`` of ``@openai/codex-sdk`` (its ``ThreadEvent``
and ``ThreadItem`` unions, the types ``codex-rs/exec/src/exec_events.rs`` exports), installed
into the lab cache with npm on first use. Every line of every real stream (the lab's kept
stdout) must be one of them, and every type it declares must be known to the reader.

The shapes the lab cannot make (a turn that failed without an ``error`` event before it,
Codex's own failure, a declined or refused command, a cut stream, a failed patch or MCP call)
are the lab's real lines with the one field changed that the types declare.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from typing import TYPE_CHECKING, Any, Final

import pytest

from failcode.triage import triage
from failcode.triage.readers import detect
from failcode.triage.readers._codex_exec import (
    COMMAND_STATUSES,
    EVENTS,
    ITEMS,
    CodexExecReader,
    unwrap,
)
from tests._needs import missing
from tests.lab.agents import cache_dir
from tests.lab.runner import FIXTURES
from tests.triage._data import session_files, sessions_2_dir, sessions_dir

if TYPE_CHECKING:
    from pathlib import Path

SDK: Final = "@openai/codex-sdk"
SDK_VERSION: Final = "0.163.0"
"""The newest SDK on npm when the reader was written (the CLI it drives is pinned apart)."""

_UNION = re.compile(r"^type (\w+) = ([^{;]+);$", re.MULTILINE)
_OBJECT = re.compile(r"^type (\w+) = \{\n(.*?)\n\};$", re.MULTILINE | re.DOTALL)
_TYPE_FIELD = re.compile(r'^    type: "([^"]+)";$', re.MULTILINE)


def sdk_dir() -> Path:
    """The SDK package folder in the lab cache, installed with npm when it is not there."""
    root = cache_dir() / "oracles" / f"codex-sdk-{SDK_VERSION}"
    package = root / "node_modules" / "@openai" / "codex-sdk"
    if (root / ".complete").exists() and (package / "dist" / "index.d.ts").exists():
        return package
    npm = shutil.which("npm")
    if npm is None:
        missing("npm is not installed (the Codex SDK's types are the oracle)")
    root.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([npm, "install", "--prefix", str(root), "--no-audit", "--no-fund",
                           "--loglevel=error", "--ignore-scripts", "--omit=optional",
                           f"{SDK}@{SDK_VERSION}"], capture_output=True, text=True,
                          check=False, timeout=600)
    if done.returncode != 0 or not (package / "dist" / "index.d.ts").exists():
        missing(f"{SDK}@{SDK_VERSION} did not install: {done.stderr.strip()[-500:]}")
    (root / ".complete").write_text(SDK_VERSION + "\n")
    return package


@pytest.fixture(scope="module")
def dts() -> str:
    return (sdk_dir() / "dist" / "index.d.ts").read_text()


def _literals(dts: str, union: str) -> set[str]:
    """The ``type`` literals of the members of a declared union of object types, or the
    string literals of a union of strings."""
    unions = dict(_UNION.findall(dts))
    objects = dict(_OBJECT.findall(dts))
    members = [m.strip() for m in unions[union].split("|")]
    if all(m.startswith('"') for m in members):
        return {m.strip('"') for m in members}
    return {found for m in members for found in _TYPE_FIELD.findall(objects[m])}


def _streams() -> list[Path]:
    found = sorted(FIXTURES.glob("codex/*/exec.jsonl"))
    assert found, "no codex fixture keeps its stdout: python -m tests.lab run -a codex"
    return found


def _lines(scenario: str) -> list[dict[str, Any]]:
    path = FIXTURES / "codex" / scenario / "exec.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(tmp_path: Path, entries: list[dict[str, Any]], tail: str = "") -> Path:
    path = tmp_path / "exec.jsonl"
    path.write_text("".join(json.dumps(entry) + "\n" for entry in entries) + tail)
    return path


def _session(path: Path) -> dict[str, Any]:
    (session,) = triage([str(path)]).to_dict()["sessions"]
    assert session["format"] == "codex-exec-json"
    return dict(session)


def _item(entries: list[dict[str, Any]], command: str) -> dict[str, Any]:
    """The completed ``command_execution`` item of ``command`` (its shell's script)."""
    return next(e["item"] for e in entries if e["type"] == "item.completed"
                and e["item"]["type"] == "command_execution"
                and unwrap(e["item"]["command"]) == command)


# -- the SDK's declarations -----------------------------------------------------------------
def test_every_declared_event_type_is_known_to_the_reader(dts: str) -> None:
    """Each ``ThreadEvent`` member's ``type`` is read or deliberately passed over."""
    declared = _literals(dts, "ThreadEvent")
    assert {"thread.started", "turn.failed", "item.completed", "error"} <= declared
    assert declared <= set(EVENTS)


def test_every_declared_item_type_is_known_to_the_reader(dts: str) -> None:
    """Each ``ThreadItem`` member's ``type`` is a step or deliberately none."""
    declared = _literals(dts, "ThreadItem")
    assert {"command_execution", "file_change", "mcp_tool_call", "agent_message"} <= declared
    assert declared <= set(ITEMS)


def test_every_declared_command_status_is_known_to_the_reader(dts: str) -> None:
    """``CommandExecutionStatus``'s values are the reader's (``declined`` comes from
    ``exec_events.rs``, newer than the SDK's declaration)."""
    declared = _literals(dts, "CommandExecutionStatus")
    assert "failed" in declared
    assert declared <= set(COMMAND_STATUSES)


def test_every_real_stream_line_is_an_event_the_sdk_declares(dts: str) -> None:
    """The lab's kept stdout holds only declared events and items."""
    events, items = _literals(dts, "ThreadEvent"), _literals(dts, "ThreadItem")
    for path in _streams():
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            assert entry["type"] in events, (path, line[:200])
            if "item" in entry:
                assert entry["item"]["type"] in items, (path, line[:200])


# -- detection ------------------------------------------------------------------------------
def test_every_real_stream_is_detected_and_read_without_error() -> None:
    """Each kept stdout is ``codex-exec-json``, read whole, one session named by its thread."""
    for path in _streams():
        result = triage([str(path)]).to_dict()
        assert [i["error"] for i in result["inputs"]] == [None], path
        (session,) = result["sessions"]
        assert session["format"] == "codex-exec-json"
        assert session["session"] == _lines(path.parent.name)[0]["thread_id"]


def test_a_rollout_of_the_same_run_is_not_taken_for_the_stream() -> None:
    """The rollout beside a kept stdout is still read as a rollout."""
    for path in _streams()[:5]:
        meta = json.loads((path.parent / "meta.json").read_text())
        rollout = path.parent / meta["files"][0]
        reader = detect(rollout.read_bytes()[:65536])
        assert reader is not None
        assert reader.name == "codex"


def test_no_other_file_of_the_lab_or_the_corpora_is_taken_for_the_stream() -> None:
    """The reader accepts the lab's kept exec stdout and nothing else: every other lab
    fixture and corpus file stays with the reader that read it before."""
    reader = CodexExecReader()
    files = [*session_files(FIXTURES), *session_files(sessions_dir()),
             *session_files(sessions_2_dir())]
    accepted = []
    for path in files:
        with path.open("rb") as stream:
            if reader.sniff(stream.read(65536)):
                accepted.append(path)
    assert len(files) > 1000
    assert sorted(accepted) == _streams()


def test_a_stream_whose_first_line_was_cut_off_is_detected(tmp_path: Path) -> None:
    """Without ``thread.started``, an ``item_N`` event first is still the stream."""
    path = _write(tmp_path, _lines("mixed-session")[2:])
    reader = detect(path.read_bytes())
    assert reader is not None
    assert reader.name == "codex-exec-json"
    session = _session(path)
    assert session["steps"] == 6
    assert session["ended"]["status"] == "submitted"


@pytest.mark.parametrize(("command", "script"), [
    ("/bin/bash -c 'grep -rn TODO .'", "grep -rn TODO ."),
    ("/bin/bash -c \"python -c 'import calc'\"", "python -c 'import calc'"),
    ("bash -lc 'cd src && make'", "cd src && make"),
    ("/usr/bin/zsh -lc 'ls -a'", "ls -a"),
    ("bash -lc ls -la", "ls -la"),  # 0.4x joined the argv with spaces
    ("git status --short", "git status --short"),
    ("bash -lc 'unterminated", "bash -lc 'unterminated"),
])
def test_a_shell_wrapped_command_is_its_script(command: str, script: str) -> None:
    """Codex's shell-quoted argv is unwrapped to the shell's script, as the rollout's is."""
    assert unwrap(command) == script


# -- how a run ended ------------------------------------------------------------------------
def test_a_failed_turn_alone_is_the_provider_error_it_names(tmp_path: Path) -> None:
    """``turn.failed`` with no ``error`` event before it ends the session on that error."""
    entries = [e for e in _lines("provider-fatal-429") if e["type"] != "error"]
    session = _session(_write(tmp_path, entries))
    assert session["ended"]["status"] == "provider_error"
    assert session["ended"]["failure"]["error_class"] == "rate_limit"
    assert [f["step"] for f in session["failures"]] == [1]


def test_the_final_error_and_the_failed_turn_are_one_failure(tmp_path: Path) -> None:
    """The ``error`` event the turn stops on and the ``turn.failed`` repeating it are one
    failure at the step the request led to; the retried tries are at no step."""
    session = _session(FIXTURES / "codex" / "provider-fatal-500" / "exec.jsonl")
    assert session["ended"]["status"] == "provider_error"
    assert session["ended"]["failure"]["error_class"] == "server_error"
    steps = [f["step"] for f in session["failures"]]
    assert steps.count(1) == 1
    assert set(steps) == {None, 1}


@pytest.mark.parametrize("message", [
    "Reconnecting... 1/2 (exceeded retry limit, last status: 429 Too Many Requests)",
    ("stream error: exceeded retry limit, last status: 429 Too Many Requests; retrying 1/5 "
     "in 212ms…"),
])
def test_a_retried_try_is_a_provider_error_at_no_step(tmp_path: Path, message: str) -> None:
    """A retried try (the 0.171.0 text, and older Codex's) is a provider failure of the
    session at no step; the run goes on to its end."""
    entries = _lines("provider-retried")
    (retry,) = [e for e in entries if e["type"] == "error"]
    retry["message"] = message
    session = _session(_write(tmp_path, entries))
    assert session["ended"]["status"] == "submitted"
    (failure,) = session["failures"]
    assert failure["step"] is None
    assert failure["failure"]["error_class"] == "rate_limit"


def test_an_error_with_no_turn_end_after_it_still_ends_the_run(tmp_path: Path) -> None:
    """A stream cut after the turn's error, before ``turn.failed``, ends on that error."""
    entries = [e for e in _lines("provider-auth") if e["type"] != "turn.failed"]
    session = _session(_write(tmp_path, entries))
    assert session["ended"]["status"] == "provider_error"
    assert session["ended"]["failure"]["error_class"] == "auth"


def test_codex_own_failure_ends_the_run_unknown(tmp_path: Path) -> None:
    """``internal error; agent loop died unexpectedly`` is Codex's failure, not the
    provider's."""
    entries = [e for e in _lines("provider-fatal-500") if e["type"] != "error"]
    entries[-1]["error"]["message"] = "internal error; agent loop died unexpectedly"
    session = _session(_write(tmp_path, entries))
    assert session["ended"]["status"] == "unknown"
    assert session["ended"]["failure"]["kind"] != "provider_error"


def test_the_context_window_text_is_the_context_window(tmp_path: Path) -> None:
    """Codex's ``ran out of room in the model's context window`` is FC-PROV-006."""
    entries = [e for e in _lines("provider-fatal-500") if e["type"] != "error"]
    entries[-1]["error"]["message"] = (
        "Codex ran out of room in the model's context window. Start a new thread or clear "
        "earlier history before retrying.")
    session = _session(_write(tmp_path, entries))
    assert session["ended"]["status"] == "provider_error"
    assert session["ended"]["failure"]["code"] == "FC-PROV-006"


def test_an_interrupted_turn_ends_unknown(tmp_path: Path) -> None:
    """An interrupted turn prints no turn end: the last item is not an ending."""
    entries = [e for e in _lines("mixed-session") if e["type"] != "turn.completed"]
    assert _session(_write(tmp_path, entries))["ended"]["status"] == "unknown"


def test_a_turn_completed_with_no_answer_after_its_last_step_is_unknown(
        tmp_path: Path) -> None:
    """``turn.completed`` ends ``submitted`` only when an agent message answered."""
    entries = [e for e in _lines("mixed-session")
               if e.get("item", {}).get("type") != "agent_message"]
    assert _session(_write(tmp_path, entries))["ended"]["status"] == "unknown"


def test_a_cut_last_line_keeps_what_was_read(tmp_path: Path) -> None:
    """A last line cut short is FC-DATA-003 naming it; the steps before it are kept."""
    entries = _lines("mixed-session")
    whole = json.dumps(entries[-3])
    path = _write(tmp_path, entries[:-3], tail=whole[:len(whole) // 2])
    result = triage([str(path)]).to_dict()
    (entry,) = result["inputs"]
    assert entry["error"]["code"] == "FC-DATA-003"
    assert f"line {len(entries) - 2} ends early" in entry["error"]["message"]
    (session,) = result["sessions"]
    assert session["steps"] == 5
    assert session["ended"]["status"] == "unknown"
    assert session["failures"]


def test_two_threads_in_one_file_are_two_sessions(tmp_path: Path) -> None:
    """A new ``thread_id`` starts a new session; each ends on its own turn."""
    second = _lines("provider-auth")
    second[0]["thread_id"] = "00000000-0000-4000-8000-0000000000ff"
    path = _write(tmp_path, _lines("mixed-session") + second)
    sessions = triage([str(path)]).to_dict()["sessions"]
    assert [s["ended"]["status"] for s in sessions] == ["submitted", "provider_error"]


# -- what a step came to --------------------------------------------------------------------
def test_a_declined_command_is_cancelled_not_failed(tmp_path: Path) -> None:
    """``status: declined`` never ran: an outcome at its step, whatever its exit code."""
    entries = _lines("mixed-session")
    item = _item(entries, "python -c 'import calc'")
    item |= {"status": "declined", "exit_code": -1, "aggregated_output": ""}
    session = _session(_write(tmp_path, entries))
    assert 1 not in [f["step"] for f in session["failures"]]
    assert [o["outcome"]["type"] for o in session["outcomes"] if o["step"] == 1] == [
        "cancelled"]


def test_the_exit_code_alone_says_whether_a_command_failed(tmp_path: Path) -> None:
    """``exit_code`` is the only source of a command's status: ``status`` disagreeing with it
    (``completed`` with exit 3, ``failed`` with exit 0) changes nothing, and the failure
    carries the code itself, which no reading of ``status`` could give."""
    entries = _lines("mixed-session")
    _item(entries, "sed -i '/numpy_lab_missing/d' calc.py")["exit_code"] = 3  # completed
    _item(entries, "python -c 'import calc'")["exit_code"] = 0  # status stays failed
    failures = {f["step"]: f["failure"] for f in _session(_write(tmp_path, entries))["failures"]}
    assert 1 not in failures
    assert failures[2]["params"] == {"exit_code": 3, "program": "sed"}


def test_a_command_the_execpolicy_refused_is_a_rejected_action(tmp_path: Path) -> None:
    """With no exit status, output naming the execpolicy's refusal is a rejected action."""
    entries = _lines("mixed-session")
    item = _item(entries, "python -c 'import calc'")
    item |= {"status": "failed", "exit_code": None, "aggregated_output": (
        "exec_command failed: CreateProcess { message: \"Rejected(\\\"`/bin/bash -c 'python "
        "-c import calc'` rejected: policy forbids commands starting with `python`\\\")\" }")}
    session = _session(_write(tmp_path, entries))
    assert 1 not in [f["step"] for f in session["failures"]]
    assert [o["outcome"]["type"] for o in session["outcomes"] if o["step"] == 1] == [
        "rejected_action"]


def test_a_command_stopped_at_its_time_limit_is_a_timeout(tmp_path: Path) -> None:
    """Output saying the command timed out, with a non-zero status, is a timeout."""
    entries = _lines("mixed-session")
    _item(entries, "python -c 'import calc'")["aggregated_output"] = "command timed out"
    session = _session(_write(tmp_path, entries))
    (failure,) = [f["failure"] for f in session["failures"] if f["step"] == 1]
    assert failure["error_class"] == "timeout"


def test_a_command_still_running_when_the_stream_ends_is_nothing(tmp_path: Path) -> None:
    """A started command with no completion counts as a step and is no failure."""
    entries = _lines("mixed-session")
    cut = next(i for i, e in enumerate(entries) if e["type"] == "item.started"
               and unwrap(e["item"]["command"]).startswith("python -m pytest"))
    session = _session(_write(tmp_path, entries[:cut + 1]))
    assert session["steps"] == 4
    assert 3 not in [f["step"] for f in session["failures"]]
    assert session["ended"]["status"] == "unknown"


def _tool_item(entries: list[dict[str, Any]], replacement: dict[str, Any]) -> None:
    """Replace the first command item (started and completed) by another tool call."""
    first = _item(entries, "grep -rn TODO .")["id"]
    for entry in entries:
        if entry.get("item", {}).get("id") == first:
            entry["item"] = {"id": first, **replacement}


def test_a_patch_that_did_not_apply_is_a_rejected_action(tmp_path: Path) -> None:
    """A ``file_change`` with ``status: failed`` is a rejected action at its step."""
    entries = _lines("mixed-session")
    _tool_item(entries, {"type": "file_change", "status": "failed",
                         "changes": [{"path": "calc.py", "kind": "update"}]})
    session = _session(_write(tmp_path, entries))
    (outcome,) = [o for o in session["outcomes"] if o["step"] == 0]
    assert outcome["outcome"]["type"] == "rejected_action"
    assert session["steps"] == 6


def test_a_failed_mcp_call_is_a_rejected_action(tmp_path: Path) -> None:
    """An ``mcp_tool_call`` with ``status: failed`` is a rejected action naming the tool."""
    entries = _lines("mixed-session")
    _tool_item(entries, {"type": "mcp_tool_call", "server": "docs", "tool": "search",
                         "arguments": {}, "status": "failed",
                         "error": {"message": "tool call failed: unknown tool"}})
    session = _session(_write(tmp_path, entries))
    (outcome,) = [o for o in session["outcomes"] if o["step"] == 0]
    assert outcome["outcome"]["type"] == "rejected_action"
    assert "docs.search" in outcome["evidence"]


def test_a_warning_item_is_no_failure() -> None:
    """The ``error`` item every lab run opens with (model metadata not found) is a notice."""
    entries = _lines("refused-command")
    assert entries[1]["item"]["type"] == "error"
    session = _session(FIXTURES / "codex" / "refused-command" / "exec.jsonl")
    assert session["failures"] == []
