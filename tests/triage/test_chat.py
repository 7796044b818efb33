"""Multi-agent chat transcripts (ag2-chat, autogen-messages, openai-messages), on transcripts
AG2 and AutoGen wrote when tests/fixtures/multiagent/make.py ran them against a scripted model.

What each scenario was written to do (which step fails, which agent took it, the executor's
exit status) is make.py's ``DESIGN``; nothing here is copied from triage's output.
"""

from __future__ import annotations

import importlib.util
import json
import random
import subprocess
from typing import TYPE_CHECKING, Any

import jsonschema
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from failcode.cli import main
from failcode.triage import FailureEntry, SessionResult, triage
from failcode.triage.readers import HEAD_BYTES, detect
from failcode.triage.report._html import render_html
from tests._needs import need_tool
from tests._paths import REPO
from tests.triage.test_lookalikes import _OTHER_VALUES, _places  # the same damage

if TYPE_CHECKING:
    from pathlib import Path
    from types import ModuleType

FIXTURES = REPO / "tests" / "fixtures" / "multiagent"
SCHEMA = json.loads((REPO / "docs" / "triage.schema.json").read_text())


def _make() -> ModuleType:
    spec = importlib.util.spec_from_file_location("multiagent_make", FIXTURES / "make.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DESIGN: dict[str, list[dict[str, Any]]] = _make().DESIGN

WRITER = {
    "ag2-two-agent.json": "ag2-chat",  # ChatResult.chat_history
    "ag2-group-chat.json": "ag2-chat",  # GroupChat.messages
    "ag2-tool-calls.json": "ag2-chat",
    "ag2-refused-timeout.json": "ag2-chat",
    "openai-messages.json": "openai-messages",  # the request AG2's OpenAI client posted
    "autogen-team.json": "autogen-messages",  # TaskResult.model_dump()
    "autogen-coder.json": "autogen-messages",
}
"""Which format each fixture is: the tool that wrote it (make.py's docstring)."""

ENDED = {
    "ag2-two-agent.json": "submitted",  # the coder says TERMINATE
    "ag2-group-chat.json": "unknown",  # the speaker function ran out; nobody said TERMINATE
    "ag2-tool-calls.json": "submitted",
    "ag2-refused-timeout.json": "submitted",
    "openai-messages.json": "unknown",  # a request: its last message awaits the model
    "autogen-team.json": "submitted",  # stop_reason: Text 'TERMINATE' mentioned
    "autogen-coder.json": "limit",  # stop_reason: Maximum number of turns 1 reached.
}


def _status(entry: FailureEntry) -> object:
    """The exit status a command's failure records."""
    failure = entry.failure
    return failure.params.get("exit_code", failure.metadata.get("exit_code"))


def _one(path: Path) -> SessionResult:
    result = triage([path])
    assert result.ok, [item.error_message for item in result.inputs]
    (session,) = result.sessions
    return session


def test_every_fixture_is_designed() -> None:
    """Every transcript make.py writes has its design and its format here."""
    written = {path.name for path in FIXTURES.glob("*.json")}
    assert written == set(DESIGN) == set(WRITER) == set(ENDED)


@pytest.mark.parametrize("name", sorted(WRITER))
def test_detected_as_the_format_that_wrote_it(name: str) -> None:
    """Detection names the framework's format from the file's first bytes."""
    reader = detect((FIXTURES / name).read_bytes()[:HEAD_BYTES])
    assert reader is not None
    assert reader.name == WRITER[name]


@pytest.mark.parametrize("name", sorted(DESIGN))
def test_failing_steps_name_the_agent_that_took_them(name: str) -> None:
    """Each designed failure is a failing step, in order, of the agent that took it, with the
    executor's status (a tool call's failure is the tool's)."""
    session = _one(FIXTURES / name)
    failures = [entry for entry in session.failures if entry.failure.surface != "agent"]
    assert len(failures) == len(DESIGN[name])
    steps = [entry.step for entry in failures]
    assert None not in steps
    assert steps == sorted(step or 0 for step in steps)
    for entry, designed in zip(failures, DESIGN[name], strict=True):
        assert entry.actor == designed["actor"]
        assert designed["runs"] in entry.evidence
        if designed["exit"] is None:
            assert entry.source == "tool"
        elif designed["exit"] == 124:  # the executor's timeout status
            assert entry.failure.error_class == "timeout"
        else:
            assert _status(entry) == designed["exit"]


@pytest.mark.parametrize("name", sorted(ENDED))
def test_session_ending(name: str) -> None:
    """How each transcript ended: the termination word, the team's stop reason, or unknown."""
    assert _one(FIXTURES / name).status == ENDED[name]


def test_missing_module_is_a_missing_dependency() -> None:
    """The coder's Python block importing an absent module is classified from its traceback."""
    session = _one(FIXTURES / "ag2-two-agent.json")
    first = session.failures[0]
    assert first.failure.error_class == "missing_module"
    assert "yaml_support_missing" in first.failure.message


def test_refused_block_is_a_rejected_action_of_its_agent() -> None:
    """The executor refusing a block of a language it cannot run is an outcome, not a
    failure, and names the agent that wrote the block."""
    session = _one(FIXTURES / "ag2-refused-timeout.json")
    (outcome,) = session.outcomes
    assert outcome.outcome.__struct_config__.tag == "rejected_action"
    assert outcome.actor == "coder"
    assert "unknown language rust" in str(outcome.outcome)


def test_team_limit_is_the_sessions_end_and_no_agents_step() -> None:
    """An AutoGen team stopped by its turn limit ends on the limit, which no agent took."""
    session = _one(FIXTURES / "autogen-coder.json")
    assert session.ended_failure is not None
    assert session.ended_failure.params == {"limit": "turn"}
    limit = [entry for entry in session.failures if entry.failure.surface == "agent"]
    assert [entry.actor for entry in limit] == [None]


def test_json_keeps_the_actor_and_matches_the_schema() -> None:
    """--json: each chat failure carries its actor; the document matches the schema."""
    run = CliRunner().invoke(main, ["triage", "--json", str(FIXTURES)])
    document = json.loads(run.stdout)
    jsonschema.validate(document, SCHEMA)
    by_file = {s["path"].rsplit("/", 1)[-1]: s for s in document["sessions"]}
    for name, designed in DESIGN.items():
        actors = [f.get("actor") for f in by_file[name]["failures"]
                  if f["failure"]["surface"] != "agent"]
        assert actors == [row["actor"] for row in designed]


def test_json_of_a_format_without_agents_has_no_actor() -> None:
    """A single-agent format's entries have no actor key (older documents stay the same)."""
    lab = REPO / "tests" / "lab" / "fixtures" / "qwen-code" / "missing-module"
    run = CliRunner().invoke(main, ["triage", "--json", str(lab)])
    document = json.loads(run.stdout)
    entries = [f for s in document["sessions"] for f in s["failures"]]
    assert entries
    assert all("actor" not in entry for entry in entries)


def test_session_timeline_names_who_ran_each_failing_step() -> None:
    """triage --session: the group chat's failing steps say which agent took them."""
    run = CliRunner().invoke(main, ["triage", str(FIXTURES / "ag2-group-chat.json"),
                                    "--session", "ag2-group-chat"])
    assert run.exit_code == 0, run.output
    lines = {line.split()[0]: line for line in run.stdout.splitlines()
             if line.strip()[:1].isdigit()}
    for step, designed in enumerate(DESIGN["ag2-group-chat.json"]):
        assert f"by {designed['actor']}" in lines[str(step)]


def test_chat_messages_saved_by_agent_is_one_session_per_peer(tmp_path: Path) -> None:
    """``chat_messages`` saved as {peer name: messages} reads each peer's chat as a session
    named after the file and the peer."""
    history = json.loads((FIXTURES / "ag2-two-agent.json").read_text())
    path = tmp_path / "proxy.json"
    path.write_text(json.dumps({"coder": history}))
    (session,) = triage([path]).sessions
    assert session.format == "ag2-chat"
    assert session.session == "proxy/coder"
    assert [e.actor for e in session.failures] == [r["actor"] for r in
                                                  DESIGN["ag2-two-agent.json"]]


def test_autogen_messages_alone_read_without_a_stop_reason(tmp_path: Path) -> None:
    """TaskResult's ``messages`` saved alone: the same steps, the ending unknown."""
    dumped = json.loads((FIXTURES / "autogen-team.json").read_text())
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(dumped["messages"]))
    session = _one(path)
    assert session.format == "autogen-messages"
    assert session.status == "unknown"
    assert [e.actor for e in session.failures] == [r["actor"] for r in
                                                  DESIGN["autogen-team.json"]]


def test_openai_shell_call_takes_the_status_its_result_states(tmp_path: Path) -> None:
    """An OpenAI list whose shell tool's result states the real command's exit code: the
    step is that command with that status, by the calling message's name."""
    need_tool("ls")
    done = subprocess.run(["ls", "missing_dir"], cwd=tmp_path, capture_output=True, text=True,
                          check=False, timeout=30)
    assert done.returncode != 0
    call = {"name": "shell", "arguments": json.dumps({"command": "ls missing_dir"})}
    messages = [
        {"role": "system", "content": "You run shell commands."},
        {"role": "user", "content": "What is in missing_dir?"},
        {"role": "assistant", "name": "explorer", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": call}]},
        {"role": "tool", "tool_call_id": "call_1",
         "content": f"Exit code: {done.returncode}\n{done.stderr}"},
    ]
    path = tmp_path / "request.json"
    path.write_text(json.dumps({"model": "m", "messages": messages}))
    session = _one(path)
    assert session.format == "openai-messages"
    (entry,) = session.failures
    assert entry.actor == "explorer"
    assert _status(entry) == done.returncode


def test_anthropic_message_lists_are_not_openai_messages() -> None:
    """A message list with Anthropic ``tool_use`` blocks is not claimed as an OpenAI list."""
    head = json.dumps([
        {"role": "user", "content": [{"type": "text", "text": "list files"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash",
                                           "input": {"command": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": "a"}]}]).encode()
    reader = detect(head)
    assert reader is None or reader.name not in {"openai-messages", "ag2-chat"}


def test_html_report_has_an_agent_column_only_for_a_team() -> None:
    """--html: a team's session table has an agent column naming who took each failing step;
    a single-agent format's has none."""
    team = render_html(triage([FIXTURES / "ag2-group-chat.json"]))
    assert "<th>agent</th>" in team
    for designed in DESIGN["ag2-group-chat.json"]:
        assert f"<td>{designed['actor']}</td>" in team
    single = render_html(triage([REPO / "tests" / "lab" / "fixtures" / "qwen-code" /
                                 "missing-module"]))
    assert "<th>agent</th>" not in single


@pytest.mark.parametrize("name", ["ag2-group-chat.json", "ag2-tool-calls.json",
                                  "autogen-team.json", "openai-messages.json"])
@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1),
       replacements=st.lists(_OTHER_VALUES, min_size=1, max_size=6))
def test_values_of_other_types_are_read_or_a_typed_error(
        tmp_path: Path, name: str, seed: int, replacements: list[Any]) -> None:
    """A transcript with values replaced at random places: triage never raises, and it is
    read (each failure at a step the session has) or its input's FC-DATA error."""
    document: Any = json.loads((FIXTURES / name).read_text())
    rng = random.Random(seed)
    for value in replacements:
        place = rng.choice(_places(document))
        target = document
        for key in place[:-1]:
            target = target[key]
        target[place[-1]] = value
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps(document))
    result = triage([damaged])
    (item,) = result.inputs
    if item.error_code is None:
        assert result.sessions, item
        for session in result.sessions:
            for entry in session.failures:
                assert entry.step is None or 0 <= entry.step < session.steps, session.to_dict()
    else:
        assert item.error_code.startswith("FC-DATA-00"), item


def test_a_cut_transcript_keeps_the_steps_before_the_cut(tmp_path: Path) -> None:
    """A transcript cut after the coder's second failure: FC-DATA-003, and the session keeps
    both failures by the coder."""
    text = (FIXTURES / "ag2-two-agent.json").read_text()
    cut = text.index("fallback ok")  # inside the third block, after both failures' results
    path = tmp_path / "cut.json"
    path.write_text(text[:cut])
    result = triage([path])
    (item,) = result.inputs
    assert item.error_code == "FC-DATA-003"
    (session,) = result.sessions
    assert [e.actor for e in session.failures] == [r["actor"] for r in
                                                  DESIGN["ag2-two-agent.json"]]


def test_a_store_keeps_who_took_each_step(tmp_path: Path) -> None:
    """triage --store, then report --store: the report's failures name the same agents."""
    store = f"sqlite:///{tmp_path / 'chats.db'}"
    triaged = CliRunner().invoke(main, ["triage", "--json", "--store", store, str(FIXTURES)])
    assert triaged.exit_code == 0, triaged.output
    reported = CliRunner().invoke(main, ["report", "--json", "--store", store])
    assert reported.exit_code == 0, reported.output

    def actors(document: dict[str, Any]) -> dict[tuple[str, str], list[Any]]:
        return {(s["path"], s["session"]): sorted(
            (f["step"], f["failure"]["code"], f.get("actor")) for f in s["failures"])
            for s in document["sessions"]}

    kept = actors(json.loads(reported.stdout))
    assert kept == actors(json.loads(triaged.stdout))
    assert {actor for rows in kept.values() for _, _, actor in rows} >= {
        row["actor"] for rows in DESIGN.values() for row in rows if row["actor"]}
