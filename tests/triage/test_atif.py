"""Harbor trials: ATIF trajectories and trial results, read from the real files in place.

Harbor's ``harbor`` package (its ATIF pydantic models) is not on the package index this project
installs from, so the shape's oracle is the raw Claude Code stream of the same runs
(``claude-stream-json/``, what Harbor converted): the same tool results in the same order, each
Bash result's command and ``Exit code N`` as the agent wrote them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from failcode.triage import triage
from failcode.triage._events import Command
from tests._needs import missing
from tests.lab.oracles import oracles
from tests.triage._data import session_files, sessions_2_dir, sessions_dir
from tests.triage.oracles._failcode_side import read_sessions

_EXIT = re.compile(r"^(?:Error: )?Exit code (-?\d+)")
_ORACLE = Path(__file__).with_name("oracles") / "atif_trajectory.py"


def _trials() -> Path:
    return sessions_2_dir() / "harbor-atif"


def test_every_harbor_file_is_read_or_rejected_as_a_trial_result() -> None:
    """Walking the trials: every trajectory is a session; a result.json beside one is read
    with it (skipped as an input); a result.json alone is the trial's session; named on its
    own, a result.json beside a trajectory is FC-DATA-002 naming a Harbor trial result."""
    files = session_files(_trials())
    assert len(files) >= 30, files
    result = triage([_trials()])
    by_path = {item.path: item for item in result.inputs}
    problems = []
    for path in files:
        beside = path.name == "result.json" and (path.parent / "agent").is_dir()
        if beside:
            if str(path) not in result.skipped:
                problems.append(f"{path}: not read with its trajectory")
            named = triage([path]).inputs[0]
            if named.error_code != "FC-DATA-002" or "Harbor trial result" not in str(
                    named.error_message):
                problems.append(f"{path} named alone: {named}")
            continue
        item = by_path[str(path)]
        if item.format != "harbor-atif" or item.error_code is not None or item.sessions != 1:
            problems.append(f"{path}: {item}")
    assert not problems, "\n".join(problems)
    ended = {s.session: s.status for s in result.sessions}
    assert ended["fix-code-vulnerability__rLmCuAo"] == "timeout"  # AgentTimeoutError, no steps
    assert ended["polyglot-c-py__3z6k7TU"] == "submitted"  # reward 1.0, the agent returned
    assert ended["caffe-cifar-10__incQ5z3"] == "submitted"  # reward 0.0: a score, no failure


def _stream(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The raw stream's tool calls by id and its tool results in order."""
    uses: dict[str, Any] = {}
    results: list[dict[str, Any]] = []
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        content = record.get("message", {}).get("content") if isinstance(record, dict) else None
        for block in content if isinstance(content, list) else ():
            if block.get("type") == "tool_use":
                uses[block["id"]] = block
            elif block.get("type") == "tool_result":
                results.append(block)
    return uses, results


def test_steps_agree_with_the_claude_code_stream_harbor_converted() -> None:
    streams = sessions_2_dir() / "claude-stream-json" / "NJU-LINK__CodeTracer"
    problems: list[str] = []
    checked = 0
    for trajectory in sorted(_trials().glob("*/*/agent/trajectory.json")):
        stream = streams / trajectory.parent.parent.name / "agent" / "claude-code.txt"
        if not stream.exists():
            continue
        uses, results = _stream(stream)
        (session,) = read_sessions(trajectory, "harbor-atif")
        if session.steps != len(results):
            problems.append(f"{trajectory}: {session.steps} steps, the stream has "
                            f"{len(results)} tool results")
            continue
        for event in session.events:
            if not isinstance(event, Command) or event.step is None:
                continue
            block = results[event.step]
            call = uses.get(block["tool_use_id"], {})
            text = block.get("content") if isinstance(block.get("content"), str) else ""
            found = _EXIT.match(text)
            if call.get("name") != "Bash" or call["input"].get("command") != event.command:
                problems.append(f"{trajectory} step {event.step}: {event.command!r}, the "
                                f"stream's call {call.get('name')} {call.get('input')}")
            elif found and not event.timed_out and event.exit_code != int(found[1]):
                problems.append(f"{trajectory} step {event.step}: exit {event.exit_code}, "
                                f"the stream's {found[0]!r}")
            elif not found and not block.get("is_error") and event.exit_code not in (0, 1):
                problems.append(f"{trajectory} step {event.step}: exit {event.exit_code} "
                                "on a result that is no error")
            checked += 1
    assert checked >= 300, checked
    assert not problems, "\n".join(problems)


def _reading(path: Path) -> list[tuple[Any, ...]]:
    (session,) = read_sessions(path, "harbor-atif")
    return [(type(e).__name__, e.step, getattr(e, "command", None), getattr(e, "exit_code", None),
             getattr(e, "timed_out", None)) for e in session.events
            if type(e).__name__ in {"Command", "RecordedOutcome", "Rejected"}]


def test_a_result_reads_the_same_from_its_text_alone(tmp_path: Path) -> None:
    """A converter that keeps no raw result (other agents' converters): the text Harbor wrote,
    with its appended sections, gives the same steps, commands and statuses."""
    compared = 0
    for trajectory in sorted(_trials().glob("*/*/agent/trajectory.json")):
        doc = json.loads(trajectory.read_text())
        for step in doc["steps"]:
            extra = step.get("extra") or {}
            for key in ("tool_result_metadata", "metadata", "tool_result_is_error"):
                extra.pop(key, None)
        copy = tmp_path / trajectory.parent.parent.name / "agent" / "trajectory.json"
        copy.parent.mkdir(parents=True)
        copy.write_text(json.dumps(doc))
        assert _reading(copy) == _reading(trajectory), trajectory
        compared += len(_reading(copy))
    assert compared >= 300, compared


def test_steps_are_the_calls_the_atif_models_pair_with_a_result() -> None:
    oracle = oracles()["atif"]
    if not oracle.installed():
        missing("the atif oracle is not installed (python -m tests.lab install)")
    files = sorted(_trials().glob("*/*/agent/trajectory.json"))
    theirs = json.loads(oracle.run(_ORACLE, *map(str, files)).strip().splitlines()[-1])
    problems: list[str] = []
    for path in files:
        calls = theirs[str(path)]["calls"]
        (session,) = read_sessions(path, "harbor-atif")
        if session.steps != len(calls):
            problems.append(f"{path}: {session.steps} steps, the models pair {len(calls)}")
            continue
        for event in session.events:
            if isinstance(event, Command) and event.step is not None:
                command = calls[event.step]["arguments"].get("command")
                if command != event.command:
                    problems.append(f"{path} step {event.step}: {event.command!r}, the "
                                    f"models' call {calls[event.step]}")
    assert not problems, "\n".join(problems)


def _as_harbor_converts(trajectory: dict[str, Any]) -> dict[str, Any]:
    """A mini-swe-agent 2.x trajectory in ATIF as Harbor's mini-swe-agent converter lays it
    out: an agent step per assistant message with its tool calls, each later ``tool`` or
    ``user`` message's content a result of the last agent step, with no ``source_call_id``."""
    steps: list[dict[str, Any]] = []
    for index, message in enumerate(trajectory["messages"]):
        role = message.get("role")
        if role == "assistant":
            calls = [{"tool_call_id": call["id"], "function_name": call["function"]["name"],
                      "arguments": json.loads(call["function"]["arguments"])}
                     for call in message.get("tool_calls") or []]
            steps.append({"step_id": len(steps) + 1, "source": "agent",
                          "message": message.get("content") or "", "tool_calls": calls or None})
        elif role in {"tool", "user"} and index > 1 and steps and steps[-1]["source"] == "agent":
            observation = steps[-1].setdefault("observation", {"results": []})
            observation["results"].append({"content": message.get("content")})
        elif role in {"system", "user"}:
            steps.append({"step_id": len(steps) + 1, "source": role,
                          "message": message.get("content")})
    return {"schema_version": "ATIF-v1.7", "session_id": "s",
            "agent": {"name": "mini-swe-agent", "version": trajectory["info"]["mini_version"]},
            "steps": steps}


def test_a_mini_swe_agent_trial_reads_as_its_own_trajectory(tmp_path: Path) -> None:
    """Results without ``source_call_id`` pair with their calls in order, and mini-swe-agent's
    ``<returncode>`` observations keep their statuses: the same steps as the trajectory."""
    originals = sorted((sessions_dir() / "mini-swe-agent").rglob("*.traj.json"))
    assert len(originals) >= 10, originals
    for original in originals:
        copy = tmp_path / original.stem / "agent" / "trajectory.json"
        copy.parent.mkdir(parents=True)
        copy.write_text(json.dumps(_as_harbor_converts(json.loads(original.read_text()))))
        (mine,) = read_sessions(original, "mini-swe-agent")
        (atif,) = read_sessions(copy, "harbor-atif")
        expected = [(e.step, e.command, e.exit_code, e.timed_out) for e in mine.events
                    if isinstance(e, Command)]
        assert [(e.step, e.command, e.exit_code, e.timed_out) for e in atif.events
                if isinstance(e, Command)] == expected, original
        assert atif.steps == mine.steps, original


def _graded(result_json: Path) -> str:
    """The verdict a trial's own result.json states (a single ``reward``, no exception, in
    the corpus): 1 passed, 0 failed."""
    doc = json.loads(result_json.read_text())
    reward = doc["verifier_result"]["rewards"]["reward"]
    info = doc["exception_info"]
    assert info is None or info["exception_type"] == "AgentTimeoutError", result_json
    return "passed" if reward >= 1 else "failed" if reward <= 0 else "partial"


def test_a_job_folder_prints_one_line_per_trial_with_its_verdict() -> None:
    """``failcode triage JOB``: the summary lists every trial once, failed first, with the
    verdict its own result.json states; ``--json`` keeps it with the reward; the Markdown
    summary has the same rows."""
    expected = {path.parent.name: _graded(path) for path in _trials().rglob("result.json")}
    assert len(expected) >= 15, expected
    done = subprocess.run([sys.executable, "-m", "failcode", "triage", str(_trials())],
                          capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    start = lines.index("Trials (graded by their verifier; failed first)")
    assert lines[start + 1].split() == ["trial", "verdict", "ended", "failing", "steps"]
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("  "):
            break
        rows.append(line.split())
    assert sorted(row[0] for row in rows) == sorted(expected)
    assert all(row[1] == expected[row[0]] for row in rows), rows
    order = [row[1] for row in rows]
    assert order == sorted(order, key=["failed", "ungraded", "partial", "passed"].index)
    counts = {v: list(expected.values()).count(v) for v in ("failed", "passed") if v in
              expected.values()}
    assert "  verifier: " + ", ".join(f"{n} {v}" for v, n in counts.items()) in lines

    as_json = json.loads(subprocess.run(
        [sys.executable, "-m", "failcode", "triage", "--json", str(_trials())],
        capture_output=True, text=True, check=True, timeout=300).stdout)
    ended = {s["session"]: s["ended"] for s in as_json["sessions"]}
    for trial, verdict in expected.items():
        assert ended[trial]["verdict"] == verdict, trial
        assert ended[trial]["reward"] == (1.0 if verdict == "passed" else 0.0), trial

    markdown = subprocess.run(
        [sys.executable, "-m", "failcode", "triage", "--format", "markdown", str(_trials())],
        capture_output=True, text=True, check=False, timeout=300).stdout
    markdown = re.sub(r"\\([\\`*_{}\[\]<>()#+!|-])", r"\1", markdown)  # Markdown's escapes
    for trial, verdict in expected.items():
        reward = 1 if verdict == "passed" else 0
        assert re.search(rf"^\| {re.escape(trial)} \| {verdict} \| {reward} \|", markdown,
                         re.MULTILINE), trial


def test_the_html_report_has_the_trials_table(tmp_path: Path) -> None:
    """``--html``: a Trials table with a row per trial, its verdict as its result.json says."""
    expected = {path.parent.name: _graded(path) for path in _trials().rglob("result.json")}
    html = tmp_path / "report.html"
    subprocess.run([sys.executable, "-m", "failcode", "triage", "--html", str(html),
                    str(_trials())], capture_output=True, text=True, check=False, timeout=300)
    table = html.read_text().split("<h2>Trials</h2>", 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr><td>([^<]+)</td><td>([a-z]+)</td>", table)
    assert dict(rows) == expected
    assert len(rows) == len(expected)


def test_a_graded_trial_keeps_its_verdict_through_the_store(tmp_path: Path) -> None:
    """``triage --store`` then ``report``: a trial with failing steps keeps its verdict."""
    url = f"sqlite:///{tmp_path / 'failcode.db'}"
    subprocess.run([sys.executable, "-m", "failcode", "triage", "--store", url, str(_trials())],
                   capture_output=True, text=True, check=False, timeout=300)
    report = json.loads(subprocess.run(
        [sys.executable, "-m", "failcode", "report", "--store", url, "--json"],
        capture_output=True, text=True, check=True, timeout=300).stdout)
    stored = {s["session"]: s["ended"] for s in report["sessions"]}
    direct = {s.session: (s.verdict, s.reward) for s in triage([_trials()]).sessions
              if s.failures}
    assert direct
    assert all((stored[name].get("verdict"), stored[name].get("reward")) == verdict
               for name, verdict in direct.items()), (stored, direct)
