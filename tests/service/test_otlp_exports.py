"""``parse_otlp`` over what the pinned agents really export, scored against the lab's truth.

Each run of ``tests/otlp/fixtures/<agent>/<scenario>/`` is fed, request after request in the
order it was sent, to :func:`parse_otlp` (metrics are not a signal the service accepts). The
events of the run are then taken as the store keeps them: once per event id, the first to
arrive winning. They are scored against the scenario of ``tests/lab/scenarios/`` (each step's
exit status, the failure a careful triage reports, a refusal) and the stub's own log in
``meta.json`` (which answers were provider faults, which step then succeeded), as far as each
agent's export can support it:

============  ==================  ==========  =================================================
agent         exit status         output      what the export says of a failed command
============  ==================  ==========  =================================================
claude-code   no                  no          ``Shell command failed`` and the command
codex         ``output`` text     yes         ``Process exited with code N`` then ``Output:``
gemini-cli    ``metadata``        no          ``{"exitCode": N, "isError": true}``
qwen-code     ``error`` text      yes         ``Exit Code: N`` and ``Output: ...``
============  ==================  ==========  =================================================
"""

from __future__ import annotations

import json
import re
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

from failcode.service._otlp import parse_otlp

if TYPE_CHECKING:
    from failcode.events import Event

ROOT: Final = Path(__file__).resolve().parents[1]
FIXTURES: Final = ROOT / "otlp" / "fixtures"
SCENARIOS: Final = ROOT / "lab" / "scenarios"
RUNS: Final = sorted(path.parent for path in FIXTURES.glob("*/*/meta.json"))

EXIT_AND_OUTPUT: Final = frozenset({"codex", "qwen-code"})
"""Agents whose export carries a failed command's exit status and its output."""
EXIT_ONLY: Final = frozenset({"gemini-cli"})
"""Agents whose export carries the exit status, not the output."""
AGENT: Final = {"claude-code": ("claude-code", "2.1.332"), "codex": ("codex", "0.171.0"),
                "gemini-cli": ("gemini-cli", None), "qwen-code": ("qwen-code", "0.24.4")}
"""(context ``agent``, ``agent_version``) per agent: Gemini CLI's ``service.version`` is Node's
(``v20.20.2``) and its own version is in no record, so none is shown."""
SESSION_KEY: Final = {"claude-code": "session.id", "codex": "conversation.id",
                      "gemini-cli": "session.id", "qwen-code": "session.id"}
RECOVERED_LATER: Final = {("codex", "provider-retried"): 1, ("gemini-cli", "provider-retried"): 1}
"""Recovered provider faults whose recovery was exported in a LATER request than the failure
(Codex's 429 and Gemini CLI's 429 at step 1): one request cannot tell them from a fatal one,
so each stays one provider failure (the documented limit, docs/service-otlp.md)."""
PROVIDER_EVENTS: Final = re.compile(r"(?:^|\.)(?:api_error|api_request|sse_event|llm_call|"
                                    r"llm_request|websocket_request)$")


def _agent(run: Path) -> str:
    return run.parent.name.split("+", 1)[0]


@dataclass
class Run:
    agent: str
    scenario: str
    events: list[Event]
    """Once per event id, the first to arrive, in arrival order."""
    sent: list[Event] = field(default_factory=list)
    """Every event of every request, repeats included."""
    session: str | None = None


def _attr_values(node: Any, key: str) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        if node.get("key") == key and isinstance(node.get("value"), dict):
            value = node["value"].get("stringValue")
            if isinstance(value, str):
                found.add(value)
        for child in node.values():
            found |= _attr_values(child, key)
    elif isinstance(node, list):
        for child in node:
            found |= _attr_values(child, key)
    return found


def _play(run: Path) -> Run:
    meta = json.loads((run / "meta.json").read_text())
    agent = _agent(run)
    played = Run(agent=agent, scenario=run.name, events=[])
    seen: set[str] = set()
    sessions: set[str] = set()
    for entry in meta["otlp"]:
        signal = entry["path"].rsplit("/", 1)[1]
        if entry["status"] != 200 or signal not in ("logs", "traces"):
            continue
        body = (run / entry["file"]).read_bytes()
        sessions |= _attr_values(json.loads(body), SESSION_KEY[agent])
        batch = parse_otlp(signal, body, content_type="application/json")
        assert batch.failures + batch.outcomes + batch.ignored == batch.items
        for event in batch.events:
            played.sent.append(event)
            if event.event_id not in seen:
                seen.add(event.event_id)
                played.events.append(event)
    assert len(sessions) == 1, sessions
    played.session = sessions.pop()
    return played


@dataclass
class Truth:
    failing: list[dict[str, Any]]
    """The steps whose command ran and failed (exit != 0, no ``no_match`` outcome)."""
    refused: list[str]
    quiet: list[str]
    """Commands whose non-zero exit is no failure (a probe that found nothing)."""
    recovered: int
    """Provider faults the agent recovered from (a later answer of the step succeeded)."""
    fatal: list[int]
    """Statuses of the faults no later answer of their step recovered (one per step)."""


def _truth(run: Path) -> Truth:
    scenario = tomllib.loads((SCENARIOS / f"{run.name}.toml").read_text())
    failing, refused, quiet = [], [], []
    for step in scenario["step"]:
        expect = step.get("expect", {})
        if step.get("refused"):
            refused.append(step["run"])
        elif step.get("exit", 0) != 0 and "failure" in expect:
            failing.append({"run": step["run"], "exit": step["exit"], **expect["failure"]})
        elif step.get("exit", 0) != 0:
            quiet.append(step["run"])
    answers = [r for r in json.loads((run / "meta.json").read_text())["requests"] if "step" in r]
    recovered = 0
    fatal: dict[int, int] = {}
    for index, answer in enumerate(answers):
        if answer["fault"] is None:
            continue
        later = [a for a in answers[index + 1:] if a["step"] == answer["step"]]
        if any(a["fault"] is None for a in later):
            recovered += 1
        else:
            fatal[answer["step"]] = answer["fault"]
    return Truth(failing=failing, refused=refused, quiet=quiet, recovered=recovered,
                 fatal=list(fatal.values()))


def _is_provider(event: Event) -> bool:
    failure = event.failure
    name = failure.context.get("otlp_event") if failure is not None else None
    return isinstance(name, str) and bool(PROVIDER_EVENTS.search(name))


def _ids(run: Path) -> str:
    return f"{run.parent.name}/{run.name}"


@pytest.fixture(scope="module", params=RUNS, ids=_ids)
def scored(request: pytest.FixtureRequest) -> tuple[Run, Truth]:
    run: Path = request.param
    return _play(run), _truth(run)


def test_there_are_runs_of_the_four_agents() -> None:
    """Every pinned agent the lab recorded has runs here."""
    assert {_agent(run) for run in RUNS} == set(AGENT)


def test_each_failing_command_is_one_command_failure(scored: tuple[Run, Truth]) -> None:
    """Every failing command the export carries is exactly one ``command.failed``; with the
    exit status and output, of the triage's kind, category and class; with the exit status
    alone, of its class when the status decides it (126, 127), else of its kind (a test run)
    or a command failure with its status; with neither, a failure of unknown cause."""
    run, truth = scored
    commands = [e for e in run.events if e.event == "command.failed"]
    assert len(commands) == len(truth.failing), [e.failure.code for e in commands]
    for event, step in zip(commands, truth.failing, strict=True):
        failure = event.failure
        assert failure is not None
        got = (failure.kind, failure.category, failure.error_class)
        want = (step["kind"], step["category"], step["class"])
        if run.agent in EXIT_AND_OUTPUT or (run.agent in EXIT_ONLY
                                            and step["exit"] in (126, 127)):
            assert got == want, (step["run"], failure.code, failure.message)
        elif run.agent in EXIT_ONLY:
            # exit 1 without output: the command's purpose gives the kind (a test run), else
            # a command that failed with its status and no known cause
            assert got[:2] == want[:2] or (
                failure.code == "FC-CMD-003" and failure.params.get("exit_code") == step["exit"]
            ), (step["run"], failure.code, failure.message)
        else:
            assert (failure.code, failure.error_class) == ("FC-SYS-001", "unknown")


@pytest.mark.parametrize("path", [run for run in RUNS if _agent(run) == "claude-code"
                                  and _truth(run).failing], ids=_ids)
def test_a_failure_without_cause_keeps_commands_apart(path: Path) -> None:
    """A failure with no cause (Claude Code's ``Shell command failed``) has a signature per
    command: two different commands are two signatures, one command twice is one."""
    run, truth = _play(path), _truth(path)
    commands = [e for e in run.events if e.event == "command.failed"]
    by_command: dict[str, set[str]] = {}
    for event, step in zip(commands, truth.failing, strict=True):
        assert event.failure is not None
        by_command.setdefault(step["run"], set()).add(event.failure.signature)
    assert all(len(signatures) == 1 for signatures in by_command.values())
    assert len(set().union(*by_command.values())) == len(by_command)


def test_a_refused_command_is_a_rejected_action(scored: tuple[Run, Truth]) -> None:
    """A command the permission rules refused is one ``action.rejected``, never a failure."""
    run, truth = scored
    rejected = [e for e in run.events if e.event == "action.rejected"]
    assert len(rejected) == len(truth.refused)
    if truth.refused:
        failed = [e for e in run.events if e.failure is not None and not _is_provider(e)]
        assert len(failed) == len(truth.failing)


def test_successes_and_probes_give_no_failure(scored: tuple[Run, Truth]) -> None:
    """Successful commands give nothing; grep exiting 1 with no match is no failure (at most
    a ``probe.no_match``)."""
    run, truth = scored
    names = Counter(e.event for e in run.events)
    allowed = {"command.failed", "tool.failed", "action.rejected", "probe.no_match",
               "session.started"}
    assert set(names) <= allowed, names
    assert names["probe.no_match"] <= len(truth.quiet)
    tools = [e for e in run.events if e.event == "tool.failed"]
    assert all(_is_provider(e) for e in tools), [e.failure.code for e in tools if e.failure]


def test_a_session_starts_once(scored: tuple[Run, Truth]) -> None:
    """Each run's session is in the service even when nothing failed: one ``session.started``
    of its session (every prompt record says it, and they are one event), from the export,
    which never says the hooks report the session (only a hook's start does)."""
    run, _truth = scored
    started = [e for e in run.events if e.event == "session.started"]
    assert [(e.session, e.source) for e in started] == [(run.session, "otlp")]
    assert len({e.event_id for e in run.sent if e.event == "session.started"}) == 1


def test_only_a_give_up_record_ends_a_session(scored: tuple[Run, Truth]) -> None:
    """Claude Code logs its ``api_error`` once, when its retries gave up: that failure ended
    the session (``session.ended`` = ``provider_error``). Codex and Gemini CLI record no give-up:
    none of their failures says it ended anything (the session's end stays unknown)."""
    run, truth = scored
    ends = [e.failure.context.get("session.ended") for e in run.events
            if e.failure is not None and "session.ended" in e.failure.context]
    if run.agent == "claude-code" and truth.fatal:
        assert ends == ["provider_error"]
    else:
        assert ends == []


def test_provider_faults(scored: tuple[Run, Truth]) -> None:
    """A fault the agent recovered from is no failure (but for a recovery exported in a later
    request: RECOVERED_LATER); a fatal one is one provider failure with its status."""
    run, truth = scored
    provider = [e for e in run.events if _is_provider(e)]
    assert all(e.event == "tool.failed" for e in provider)
    expected = len(truth.fatal) + RECOVERED_LATER.get((run.agent, run.scenario), 0)
    assert len(provider) == expected, [(e.failure.code, e.failure.context.get("status_code"))
                                       for e in provider if e.failure]
    statuses = sorted(e.failure.context.get("status_code") for e in provider if e.failure)
    if not RECOVERED_LATER.get((run.agent, run.scenario)):
        assert statuses == sorted(truth.fatal)
    # every record of the same provider failure, repeated in later requests, is that event
    assert {e.event_id for e in run.sent if _is_provider(e)} == {e.event_id for e in provider}


def test_agent_version_and_session(scored: tuple[Run, Truth]) -> None:
    """Every event names the agent, its version (never Node's) and the run's session."""
    run, _truth = scored
    agent, version = AGENT[run.agent]
    for event in run.events:
        record = event.failure or event.outcome
        assert record is not None
        assert record.context.get("agent") == agent
        assert record.context.get("agent_version") == version
        assert event.session == run.session
