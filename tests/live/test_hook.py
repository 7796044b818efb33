"""``failcode hook AGENT EVENT``, the real program, fed the payloads real agents sent.

What it answers (the decision table of docs/live.md, on the lab's recorded payloads), that it
never breaks the agent (exit 0 and no answer for any input or state it cannot use, a line in
its own log), that parallel calls of one session are all counted, and that a failure reaches
a failcode service when one is configured.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from failcode import FAILCODE_SCHEMA, Section, Setting
from failcode.events._ids import call_event_id
from failcode.live import AGENTS, MARK
from failcode.live._hook import _DEFAULTS, run_hook
from tests.service.conftest import running

FIXTURES = Path(__file__).parent / "fixtures"


def hook(agent: str, event: str, payload: bytes | dict[str, Any], *, state: Path,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run(
        [sys.executable, "-m", "failcode", "hook", agent, event], input=data,
        capture_output=True, timeout=60, check=False,
        env={**os.environ, "FAILCODE_STATE_DIR": str(state), **(env or {})})


def recorded(agent: str, scenario: str) -> list[tuple[str, dict[str, Any]]]:
    run = FIXTURES / agent / scenario
    meta = json.loads((run / "meta.json").read_text())
    return [(event, json.loads((run / name).read_text()))
            for event, name in zip(meta["events"], meta["payloads"], strict=True)]


def failed_calls(agent: str, scenario: str, project: Path) -> list[tuple[str, dict[str, Any]]]:
    """The scenario's failed-call payloads, run from ``project`` (its configuration)."""
    return [(event, {**data, "cwd": str(project)}) for event, data in recorded(agent, scenario)
            if event in ("PostToolUseFailure", "AfterTool")]


def log_of(state: Path) -> str:
    path = state / "hook.log"
    return path.read_text() if path.exists() else ""


@pytest.mark.parametrize("agent", ["claude-code", "gemini-cli"])
def test_a_loop_is_told_to_the_model_at_its_second_step(agent: str, tmp_path: Path) -> None:
    """loop-same-failure: the same failing test run three times; the first failure gets no
    answer, the second and third a message in the agent's own format naming the command, the
    count, who must act and what to do instead."""
    answers = []
    for event, data in failed_calls(agent, "loop-same-failure", tmp_path):
        done = hook(agent, event, data, state=tmp_path / "state")
        assert done.returncode == 0
        answers.append(json.loads(done.stdout) if done.stdout.strip() else None)
    assert answers[0] is None
    for answer, times in zip(answers[1:], ("twice", "three times"), strict=True):
        assert answer is not None
        context = answer["hookSpecificOutput"]["additionalContext"]
        assert context.startswith(MARK)
        assert "`python -m pytest -q -p no:cacheprovider test_calc.py`" in context
        assert times in context
        assert "FC-TEST-003" in context
        assert "Who must act: you, the agent" in context


def test_the_threshold_is_the_projects_tell_after(tmp_path: Path) -> None:
    (tmp_path / "failcode.toml").write_text("[live]\ntell_after = 3\n")
    told = [hook("claude-code", event, data, state=tmp_path / "state").stdout.strip() != b""
            for event, data in failed_calls("claude-code", "loop-same-failure", tmp_path)]
    assert told == [False, False, True]


def _missing_modules(project: Path) -> list[dict[str, Any]]:
    """Three failed runs, each of a script that imports another module nobody installed."""
    template = recorded("claude-code", "missing-module")
    base = next(d for e, d in template if e == "PostToolUseFailure")
    calls = []
    for n, name in enumerate(("alpha", "beta", "gamma")):
        error = (f"Exit code 1\nTraceback (most recent call last):\n  File \"/lab/project/"
                 f"{name}.py\", line 1, in <module>\n    import fc_{name}\n"
                 f"ModuleNotFoundError: No module named 'fc_{name}'")
        calls.append({**base, "cwd": str(project), "tool_use_id": f"toolu_{n}",
                      "tool_input": {"command": f"python {name}.py"}, "error": error})
    return calls


def test_only_a_person_can_fix_it_stops_the_agent_at_its_next_call(tmp_path: Path) -> None:
    """Claude Code ignores a stop answered to PostToolUseFailure: the model is told at once,
    and the session's next PreToolUse is answered with the stop (the call denied), once."""
    state = tmp_path / "state"
    answers = [hook("claude-code", "PostToolUseFailure", call, state=state).stdout
               for call in _missing_modules(tmp_path)]
    assert answers[0] == b""
    told = json.loads(answers[2])["hookSpecificOutput"]["additionalContext"]
    assert "Only a person can fix this" in told
    assert "fc_gamma" in told
    before = {**_missing_modules(tmp_path)[0], "hook_event_name": "PreToolUse",
              "tool_use_id": "toolu_next"}
    stop = json.loads(hook("claude-code", "PreToolUse", before, state=state).stdout)
    assert stop["continue"] is False
    assert stop["stopReason"] == told
    assert stop["hookSpecificOutput"]["permissionDecision"] == "deny"
    again = hook("claude-code", "PreToolUse", before, state=state)
    assert again.stdout == b""  # a person who resumed the session is not stopped again


def test_stop_for_person_false_tells_the_model_instead(tmp_path: Path) -> None:
    (tmp_path / "failcode.toml").write_text("[live]\nstop_for_person = false\n")
    state = tmp_path / "state"
    last = [hook("claude-code", "PostToolUseFailure", call, state=state).stdout
            for call in _missing_modules(tmp_path)][-1]
    assert "Do not retry it" in json.loads(last)["hookSpecificOutput"]["additionalContext"]
    before = {**_missing_modules(tmp_path)[0], "tool_use_id": "toolu_next"}
    assert hook("claude-code", "PreToolUse", before, state=state).stdout == b""


@pytest.mark.parametrize(("payload", "logged"), [
    (b"", "JSONDecodeError"),
    (b"\xff\xfe not json", "Error"),
    (b"[1, 2, 3]", "not a JSON object"),
    (b'{"session_id": 7, "tool_name": ["x"], "tool_input": "no", "error": {}}', ""),
])
def test_input_it_cannot_use_is_answered_with_nothing(payload: bytes, logged: str,
                                                      tmp_path: Path) -> None:
    done = hook("claude-code", "PostToolUseFailure", payload, state=tmp_path)
    assert done.returncode == 0
    assert done.stdout == b""
    assert done.stderr == b""
    assert logged in log_of(tmp_path)


def test_an_agent_it_has_no_hooks_for_is_answered_with_nothing(tmp_path: Path) -> None:
    done = hook("no-such-agent", "PostToolUse", b"{}", state=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert "not an agent failcode has hooks for" in log_of(tmp_path)


def test_a_locked_history_costs_the_hook_its_answer_not_the_agent(tmp_path: Path) -> None:
    """Another process holds the history's write lock past the hook's time bound."""
    (tmp_path / "failcode.toml").write_text("[live]\ntimeout_s = 0.5\n")
    state = tmp_path / "state"
    calls = failed_calls("claude-code", "loop-same-failure", tmp_path)
    hook("claude-code", *calls[0], state=state)  # creates the history
    holder = sqlite3.connect(state / "live.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        done = hook("claude-code", *calls[1], state=state)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert "locked" in log_of(state) or "ran past" in log_of(state)


@pytest.mark.parametrize("damage", ["a file where the folder goes", "a damaged history"])
def test_a_state_folder_it_cannot_use_is_answered_with_nothing(damage: str,
                                                               tmp_path: Path) -> None:
    state = tmp_path / "state"
    if damage == "a file where the folder goes":
        state.write_text("not a folder")
    else:
        state.mkdir()
        (state / "live.db").write_bytes(b"SQLite format 3\x00" + b"\x13" * 4096)
    event, data = failed_calls("claude-code", "loop-same-failure", tmp_path)[0]
    done = hook("claude-code", event, data, state=state)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    if damage == "a damaged history":
        assert "DatabaseError" in log_of(state)


def test_a_broken_configuration_is_logged_and_the_defaults_apply(tmp_path: Path) -> None:
    (tmp_path / "failcode.toml").write_text("[live]\ntell_after = 'soon'\n")
    state = tmp_path / "state"
    answers = [hook("claude-code", e, d, state=state).stdout
               for e, d in failed_calls("claude-code", "loop-same-failure", tmp_path)]
    assert [a != b"" for a in answers] == [False, True, True]
    assert "config: ConfigError" in log_of(state)


def test_parallel_calls_of_one_session_are_each_counted_once(tmp_path: Path) -> None:
    state = tmp_path / "state"
    event, data = failed_calls("claude-code", "loop-same-failure", tmp_path)[0]
    calls = [{**data, "tool_use_id": f"toolu_parallel_{n}"} for n in range(8)]
    with ThreadPoolExecutor(4) as pool:
        done = list(pool.map(lambda c: hook("claude-code", event, c, state=state), calls))
    assert all(d.returncode == 0 for d in done)
    again = hook("claude-code", event, calls[0], state=state)  # the same call id: not again
    assert again.stdout == b""
    with sqlite3.connect(state / "live.db") as db:
        steps = [row[0] for row in db.execute("SELECT step FROM steps ORDER BY step")]
    assert steps == list(range(8))
    told = sum(1 for d in done if d.stdout)
    assert told == 7  # every failure after the first of the loop


def test_a_failure_reaches_the_service_without_the_hook_waiting(tmp_path: Path) -> None:
    with running("sqlite", tmp_path) as served:
        env = {"FAILCODE_URL": served.url, "FAILCODE_KEY": served.keys["ingest"]}
        state = tmp_path / "state"
        for event, data in failed_calls("gemini-cli", "missing-module", tmp_path):
            assert hook("gemini-cli", event, data, state=state, env=env).returncode == 0
        deadline = time.monotonic() + 60
        findings: list[Any] = []
        while time.monotonic() < deadline:  # the sender delivers on its own
            status, body = served.json("GET", "/v1/findings", key=served.keys["read"])
            assert status == 200
            findings = body["findings"]
            if findings:
                break
            time.sleep(0.2)
        assert findings, log_of(state)
        assert findings[0]["code"] == "FC-CMD-002"
        deadline = time.monotonic() + 60
        while any((state / "outbox").glob("*")) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any((state / "outbox").glob("*"))


def test_the_hooks_defaults_are_the_configurations() -> None:
    """The hook keeps ``[live]``'s defaults itself (it loads the configuration module only when
    the project has a file): they must be the schema's."""

    live = FAILCODE_SCHEMA.entries["live"]
    assert isinstance(live, Section)
    assert {key: setting.default for key, setting in live.entries.items()
                         if isinstance(setting, Setting)} == _DEFAULTS


def test_a_secret_in_the_command_is_not_repeated_in_the_message(tmp_path: Path) -> None:
    """The message names the command as the model wrote it, redacted: it is shown to the
    person and kept in the transcript."""
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
    command = f"curl -fsS -H 'Authorization: token {token}' https://api.github.com/user"
    state = tmp_path / "state"
    answers = []
    for event, data in failed_calls("claude-code", "loop-same-failure", tmp_path)[:2]:
        call = {**data, "tool_input": {"command": command},
                "error": "Exit code 22\ncurl: (22) The requested URL returned error: 401"}
        answers.append(hook("claude-code", event, call, state=state).stdout)
    told = json.loads(answers[1])["hookSpecificOutput"]["additionalContext"]
    assert "curl" in told
    assert token not in told
    assert token.encode() not in (state / "live.db").read_bytes()


def test_a_full_disk_costs_the_hook_its_answer_not_the_agent(tmp_path: Path) -> None:
    """No write succeeds (RLIMIT_FSIZE 0, SIGXFSZ ignored: every write fails with EFBIG, as
    on a full disk): the hook still exits 0 with no answer, and the history is intact."""
    state = tmp_path / "state"
    calls = failed_calls("claude-code", "loop-same-failure", tmp_path)
    hook("claude-code", *calls[0], state=state)
    with sqlite3.connect(state / "live.db") as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def no_growth() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))

    event, data = calls[1]
    done = subprocess.run(
        [sys.executable, "-m", "failcode", "hook", "claude-code", event],
        input=json.dumps(data).encode(), capture_output=True, timeout=60, check=False,
        preexec_fn=no_growth,
        env={**os.environ, "FAILCODE_STATE_DIR": str(state)})
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    with sqlite3.connect(state / "live.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("SELECT COUNT(*) FROM steps").fetchone() == (1,)


def test_the_hook_answers_from_a_thread_too(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Off the main thread no timer can interrupt it (signals go to the main thread): it
    answers without one rather than not at all."""
    monkeypatch.setenv("FAILCODE_STATE_DIR", str(tmp_path))
    calls = failed_calls("claude-code", "loop-same-failure", tmp_path)
    with ThreadPoolExecutor(1) as pool:
        answers = list(pool.map(
            lambda c: run_hook("claude-code", c[0], io.BytesIO(json.dumps(c[1]).encode()),
                               env={}), calls))
    assert [bool(a) for a in answers] == [False, True, True]


def test_an_outcome_reaches_the_service_as_triage_reports_it(tmp_path: Path) -> None:
    """A refused read (Claude Code's Read of a file that is not there: a rejected action, as
    triage reads the transcript) goes to the service as an ``action.rejected`` event of the
    session, at its step, under the call's own id; the session's start and its end (``Stop``:
    it finished) go with it."""
    with running("sqlite", tmp_path) as served:
        env = {"FAILCODE_URL": served.url, "FAILCODE_KEY": served.keys["ingest"]}
        state = tmp_path / "state"
        for event, data in recorded("claude-code", "read-missing-file"):
            assert hook("claude-code", event, {**data, "cwd": str(tmp_path)}, state=state,
                        env=env).returncode == 0
        control = Path(served.store.removeprefix("sqlite:///"))
        project = control.with_name(control.stem + ".projects") / "web.db"
        deadline = time.monotonic() + 60
        rows: list[tuple[str, str, int, str, str]] = []
        while time.monotonic() < deadline:  # the sender delivers on its own
            if project.exists():
                with contextlib.closing(sqlite3.connect(project)) as db:
                    rows = db.execute("SELECT event, session, step, event_id, body FROM events "
                                      "ORDER BY ts_us").fetchall()
            if len(rows) >= 3:
                break
            time.sleep(0.2)
    assert [(e, step) for e, _s, step, _id, _b in rows] == [
        ("session.started", None), ("action.rejected", 0), ("session.ended", None)], log_of(state)
    session = recorded("claude-code", "read-missing-file")[1][1]["session_id"]
    assert {row[1] for row in rows} == {session}
    assert rows[1][3] == call_event_id(session, "toolu_call_stub_0")
    ended = json.loads(rows[2][4])["outcome"]
    assert (ended["status"], ended["by"]) == ("submitted", "claude-code hook")


def _codex_transcript(path: Path, call: str, **item: Any) -> str:
    """A Codex 0.171 rollout whose last record is the executor's record of ``call`` (the
    shape its ``item_completed`` event has), after a line of another call."""
    lines = [{"type": "event_msg", "payload": {"type": "item_completed", "item": {
                 "type": "CommandExecution", "id": "call_other", "exit_code": 2}}},
             {"type": "event_msg", "payload": {"type": "item_completed", "item": {
                 "type": "CommandExecution", "id": call, "command": ["/bin/bash", "-c", "x"],
                 "aggregated_output": "", **item}}}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def test_codex_reads_the_exit_status_from_its_transcript(tmp_path: Path) -> None:
    """Codex's hook input has no exit status; the transcript it names has, written before the
    hook runs: a grep that found nothing (exit 1, no output) is the probe triage reports,
    not a success; a declined call has none; without the transcript the output decides."""
    from failcode.live._codex import recorded_exit
    from failcode.live._hook import step_result

    codex = AGENTS["codex"]
    payload = {**recorded("codex", "pytest-failure")[1][1],
               "tool_input": {"command": "grep -rn TODO ."}, "tool_response": "",
               "tool_use_id": "call_stub_0"}
    transcript = _codex_transcript(tmp_path / "rollout.jsonl", "call_stub_0", exit_code=1,
                                   status="failed")
    assert recorded_exit(transcript, "call_stub_0") == 1
    assert recorded_exit(transcript, "call_other") == 2
    assert recorded_exit(transcript, "call_unknown") is None
    assert recorded_exit(str(tmp_path / "missing.jsonl"), "call_stub_0") is None
    found = codex.read("PostToolUse", {**payload, "transcript_path": transcript})
    result, _source = step_result(found)
    assert type(result).__name__ == "NoMatch"
    declined = _codex_transcript(tmp_path / "declined.jsonl", "call_stub_0", exit_code=-1,
                                 status="declined")
    assert recorded_exit(declined, "call_stub_0") is None
    unread = codex.read("PostToolUse", {**payload, "transcript_path": str(tmp_path / "no")})
    assert step_result(unread)[0] is None  # no output, no status: reads as a success


@pytest.mark.parametrize(("agent", "transcript", "version"), [
    ("claude-code", ("claude-code/pytest-failure/session/claude/projects/-lab-project/"
     "00000000-0000-4000-8000-000000000001.jsonl"), "2.1.332"),
    ("codex", ("codex/permission-denied/session/codex/sessions/2026/01/01/rollout-2026-01-01T"
     "00-00-00-00000000-0000-4000-8000-000000000001.jsonl"), "0.171.0")])
def test_a_reported_failure_names_the_agents_version_from_its_transcript(
        agent: str, transcript: str, version: str, tmp_path: Path) -> None:
    """The agent writes its version in the transcript the hook input names (the lab's
    recorded transcripts): the failure the hook reports carries it; without the transcript,
    the agent alone."""
    from failcode.live._hook import _who

    hooks = AGENTS[agent]
    path = Path(__file__).parents[1] / "lab" / "fixtures" / transcript
    assert path.is_file()
    assert _who(hooks, {"transcript_path": str(path)}) == {"agent": agent,
                                                           "agent_version": version}
    assert _who(hooks, {"transcript_path": str(tmp_path / "gone.jsonl")}) == {"agent": agent}
    assert _who(AGENTS["gemini-cli"], {"transcript_path": str(path)}) == {"agent": "gemini-cli"}
