"""failcode triage: readers on real sessions, the analysis rules, the JSON contract, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from failcode import FC
from failcode.cli import main
from failcode.triage import FORMATS, TriageResult, infer_purpose, triage
from tests._paths import REPO
from tests.triage._data import labels, score, session_files, sessions_dir
from tests.triage.test_exact_steps import ENDING_DISAGREEMENTS

SCHEMA = json.loads((REPO / "docs" / "triage.schema.json").read_text())
REAL_FORMATS = {"mini-swe-agent", "swe-agent", "openhands", "aider", "claude-code"}


@pytest.fixture(scope="module")
def real() -> tuple[Path, TriageResult]:
    root = sessions_dir().resolve()
    return root, triage(session_files(root))


# -- readers on the real sessions --------------------------------------------------------------
def test_every_real_session_file_is_read_without_an_input_error(
        real: tuple[Path, TriageResult]) -> None:
    """Each of the 30 files is recognised and read to its end."""
    _, result = real
    assert len(result.inputs) == 30
    errors = [(item.path, item.error_message) for item in result.inputs if item.error_code]
    assert errors == []


def test_every_format_of_the_data_is_detected(real: tuple[Path, TriageResult]) -> None:
    """The five third-party formats are each found by content."""
    _, result = real
    assert {item.format for item in result.inputs} == REAL_FORMATS


def test_detection_reads_content_not_names(tmp_path: Path) -> None:
    """A trajectory renamed to .txt is still read as mini-swe-agent."""
    source = next(p for p in session_files(sessions_dir()) if p.name.endswith(".traj.json"))
    renamed = tmp_path / "renamed.txt"
    renamed.write_bytes(source.read_bytes())
    assert triage([renamed]).inputs[0].format == "mini-swe-agent"


def test_formats_are_listed_in_the_registry() -> None:
    """The registry names every format triage reads."""
    assert set(FORMATS) >= REAL_FORMATS


# -- accuracy against a reader's labels ------------------------------------------------------------
def test_triage_finds_the_labelled_failures(real: tuple[Path, TriageResult]) -> None:
    """Recall on labelled failing steps is at least 98 % (the issue's goal)."""
    root, result = real
    assert score(result.sessions, root)["recall"] >= 0.98


def test_probes_are_not_reported_as_failures(real: tuple[Path, TriageResult]) -> None:
    """At most 2 % of the labelled no-match probes come out as failures."""
    root, result = real
    assert score(result.sessions, root)["probes_as_failures"] <= 0.02


def test_rejected_actions_are_outcomes(real: tuple[Path, TriageResult]) -> None:
    """Every labelled rejected action is reported as an outcome."""
    root, result = real
    assert score(result.sessions, root)["rejected_found"] >= 0.95


def test_kinds_agree_with_the_labels(real: tuple[Path, TriageResult]) -> None:
    """The kind of a found failure agrees with the label at least 98 % of the time."""
    root, result = real
    assert score(result.sessions, root)["kind_agreement"] >= 0.98


def test_labelled_loops_are_found(real: tuple[Path, TriageResult]) -> None:
    """At least 80 % of the labelled loops are reported."""
    root, result = real
    assert score(result.sessions, root)["loops_found"] >= 0.80


def test_labelled_endings_agree(real: tuple[Path, TriageResult]) -> None:
    """Every labelled session ends with the labelled status, but for the endings named one by
    one in ``test_exact_steps.ENDING_DISAGREEMENTS`` (which checks that list exactly)."""
    root, result = real
    found = {(str(Path(s.path).relative_to(root)), s.session): s.status for s in result.sessions}
    wrong = [(path, name, label["ended"], found.get((path, name)))
             for path, by_session in labels().items() for name, label in by_session.items()
             if found.get((path, name)) != label["ended"]
             and name not in ENDING_DISAGREEMENTS.get(path, {})]
    assert wrong == []


def test_provider_errors_end_sessions_with_a_provider_failure(
        real: tuple[Path, TriageResult]) -> None:
    """A run a provider error ended carries that Failure as ``ended.failure``: the provider's
    own code, or a configuration code when the provider named missing credentials."""
    _, result = real
    ended = [s for s in result.sessions if s.status == "provider_error"]
    assert ended
    assert [(s.session, s.ended_failure and s.ended_failure.code) for s in ended
            if s.ended_failure is None
            or not s.ended_failure.code.startswith(("FC-PROV-", "FC-CFG-"))] == []


def test_iteration_limit_is_the_agents_failure(real: tuple[Path, TriageResult]) -> None:
    """OpenHands' "maximum iteration" ends the session as a limit with FC-LIFE-009."""
    _, result = real
    limited = [s for s in result.sessions if s.status == "limit"]
    assert limited
    assert {s.ended_failure.code for s in limited if s.ended_failure} == {"FC-LIFE-009"}


def test_harness_retries_are_one_failure_per_attempt(real: tuple[Path, TriageResult]) -> None:
    """A harness attempt's error line, traceback and retry banner count as repeats of one."""
    _, result = real
    harness = [e for s in result.sessions for e in s.failures if e.source == "harness"]
    assert harness
    assert all(e.failure.kind == "system_error" for e in harness)
    # the runtime-start failure: its ERROR line, its traceback chain and the retry banner
    runtime = [e for e in harness if "Unable to start runtime" in e.evidence]
    assert runtime
    assert {e.repeats for e in runtime} == {3}


# -- analysis rules ------------------------------------------------------------------------------
@pytest.mark.parametrize(("command", "purpose"), [
    ("cd /repo && python -m pytest tests/test_x.py -q", "test"),
    ("pytest -x 2>&1 | tail -20", "test"),
    ("python runtests.py migrations", "test"),
    ("python manage.py test app", "test"),
    ("make -j4", "build"),
    ("gcc -o app main.c", "build"),
    ("cargo build --release", "build"),
    ("cargo test", "test"),
    ("ruff check src", "static_analysis"),
    ("mypy --strict src", "static_analysis"),
    ("git merge feature", "merge"),
    ("git -c user.name=a rebase main", "merge"),
    ("git status", "general"),
    ("python reproduce_bug.py", "general"),
    ("python test_issue.py", "general"),
    ("grep -rn foo src", "general"),
    ("cd /repo && DJANGO_SETTINGS_MODULE=t.s python -m django test tests.x -v 2", "test"),
    ("django-admin test app", "test"),
    ("npm test", "test"),
    ("npm run test:unit -- --watch=false", "test"),
    ("yarn test-e2e", "test"),
    ("pnpm run build", "build"),
    ("yarn lint", "static_analysis"),
    ("npm run typecheck", "static_analysis"),
    ("npm run dev", "general"),
    ("npm run testing-data", "general"),
    ("npm install", "general"),
])
def test_infer_purpose(command: str, purpose: str) -> None:
    """The purpose comes from the tool the command runs."""
    assert infer_purpose(command) == purpose


def _traj(tmp_path: Path, steps: list[tuple[str, int, str]], status: str = "Submitted",
          name: str = "s.traj.json") -> Path:
    messages: list[dict[str, object]] = [{"role": "system", "content": "x"}]
    for index, (command, code, output) in enumerate(steps):
        messages.append({"role": "assistant", "content": "", "tool_calls": [{
            "id": f"c{index}", "function": {"name": "bash",
                                            "arguments": json.dumps({"command": command})}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{index}",
                         "content": f"<returncode>{code}</returncode><output>{output}</output>",
                         "extra": {"returncode": code, "raw_output": output}})
    doc = {"info": {"exit_status": status, "mini_version": "2"}, "messages": messages,
           "trajectory_format": "mini-swe-agent-1.1", "instance_id": "demo"}
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_a_signature_at_two_consecutive_steps_is_a_loop(tmp_path: Path) -> None:
    """The same failure at steps 0 and 1 is a loop."""
    failing = ("make", 2, "make: *** No rule to make target 'all'.  Stop.")
    session = triage([_traj(tmp_path, [failing, failing])]).sessions[0]
    assert [loop.steps for loop in session.loops] == [(0, 1)]


def test_a_signature_at_two_distant_steps_is_no_loop(tmp_path: Path) -> None:
    """The same failure at steps 0 and 2 only is not a loop."""
    failing = ("make", 2, "make: *** No rule to make target 'all'.  Stop.")
    session = triage([_traj(tmp_path, [failing, ("ls", 0, ""), failing])]).sessions[0]
    assert session.loops == []


def test_a_signature_at_three_steps_is_a_loop(tmp_path: Path) -> None:
    """The same failure at three separate steps is a loop."""
    failing = ("make", 2, "make: *** No rule to make target 'all'.  Stop.")
    ok = ("ls", 0, "")
    session = triage([_traj(tmp_path, [failing, ok, failing, ok, failing])]).sessions[0]
    assert [loop.steps for loop in session.loops] == [(0, 2, 4)]


def test_a_probe_that_finds_nothing_is_an_outcome(tmp_path: Path) -> None:
    """grep exiting 1 with no output is a no_match outcome, not a failure."""
    session = triage([_traj(tmp_path, [("grep -rn absent src", 1, "")])]).sessions[0]
    assert session.failures == []
    assert [e.outcome.probe for e in session.outcomes] == ["grep"]  # type: ignore[union-attr]


def test_a_timed_out_command_is_a_timeout(tmp_path: Path) -> None:
    """mini-swe-agent's -1 with a time-limit exception is a timeout failure."""
    path = _traj(tmp_path, [("sleep 100", 0, "")])
    doc = json.loads(path.read_text())
    doc["messages"][-1]["extra"] = {"returncode": -1, "raw_output": "",
                                    "exception_info": "Command 'sleep' timed out after 60 s"}
    path.write_text(json.dumps(doc))
    failure = triage([path]).sessions[0].failures[0].failure
    assert failure.error_class == "timeout"


def test_evidence_is_short_and_redacted(tmp_path: Path) -> None:
    """Evidence is at most 200 characters and carries no secret."""
    secret = "sk-" + "A1b2C3d4E5f6G7h8I9j0" * 3
    command = f"OPENAI_API_KEY={secret} python -m pytest " + "tests/x.py " * 40
    session = triage([_traj(tmp_path, [(command, 1, "1 failed")])]).sessions[0]
    evidence = session.failures[0].evidence
    assert len(evidence) <= 200
    assert secret not in evidence


# -- JSON contract --------------------------------------------------------------------------------
def test_json_output_validates_against_the_committed_schema(
        real: tuple[Path, TriageResult]) -> None:
    """The --json document of all real sessions matches docs/triage.schema.json."""
    _, result = real
    jsonschema.validate(result.to_dict(), SCHEMA)


def test_cli_json_validates_and_exits_0_on_the_embedded_sample() -> None:
    """`failcode triage --json` with no path triages the shipped sample."""
    run = CliRunner().invoke(main, ["triage", "--json"])
    assert run.exit_code == 0, run.output
    document = json.loads(run.output)
    jsonschema.validate(document, SCHEMA)
    assert document["sessions"]
    assert any(s["failures"] for s in document["sessions"])


def test_embedded_sample_shows_failures_probes_and_a_loop() -> None:
    """The shipped sample has real failures, probes and at least one loop."""
    document = json.loads(CliRunner().invoke(main, ["triage", "--json"]).output)
    kinds = {f["failure"]["kind"] for s in document["sessions"] for f in s["failures"]}
    assert {"build_error", "test_error", "merge_error"} <= kinds
    assert any(o["outcome"]["type"] == "no_match"
               for s in document["sessions"] for o in s["outcomes"])
    assert any(s["loops"] for s in document["sessions"])


def test_summary_prints_its_sections_in_order() -> None:
    """The terminal summary: totals first, then what to fix first, endings, who acts, loops,
    outcomes; the shipped sessions all read, so no inputs section."""
    run = CliRunner().invoke(main, ["triage"])
    assert run.exit_code == 0
    assert run.output.startswith("failcode triage: 4 inputs read, 0 skipped, 0 failed\n")
    headings = ("What to fix first", "How sessions ended", "Who acts", "Loops",
                "Outcomes, not failures")
    places = [run.output.index(heading) for heading in headings]
    assert places == sorted(places)
    assert "Inputs" not in run.output


def test_no_progress_bar_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    """Without a TTY, stderr stays empty."""
    done = subprocess.run([sys.executable, "-m", "failcode", "triage"], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0
    assert done.stderr == ""


# -- bad input ------------------------------------------------------------------------------------
def _codes(result: TriageResult) -> dict[str, str | None]:
    return {Path(item.path).name: item.error_code for item in result.inputs}


def test_truncated_trajectory_keeps_what_was_read(tmp_path: Path) -> None:
    """A trajectory cut in the middle is FC-DATA-003 and its steps so far are kept."""
    failing = ("make", 2, "make: *** No rule to make target 'all'.  Stop.")
    whole = _traj(tmp_path, [failing] * 4).read_bytes()
    cut = tmp_path / "cut.traj.json"
    cut.write_bytes(whole[: int(len(whole) * 0.8)])
    result = triage([cut])
    assert _codes(result) == {"cut.traj.json": "FC-DATA-003"}
    assert result.sessions
    assert result.sessions[0].failures
    assert "cut.traj.json" in (result.inputs[0].error_message or "")


@pytest.mark.parametrize(("name", "content", "code"), [
    ("empty.jsonl", b"", "FC-DATA-004"),
    ("blank.log", b"\n\n  \n", "FC-DATA-002"),
    ("image.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8, "FC-DATA-002"),
    ("notes.md", b"# Meeting notes\n\n- nothing about agents here\n", "FC-DATA-002"),
    ("data.json", b'{"a": 1, "b": [1, 2, 3]}', "FC-DATA-002"),
])
def test_bad_input_gets_a_code_naming_the_file(tmp_path: Path, name: str, content: bytes,
                                               code: str) -> None:
    """Empty, blank, binary and unknown inputs each get their FC code and the file's name."""
    path = tmp_path / name
    path.write_bytes(content)
    item = triage([path]).inputs[0]
    assert (item.error_code, item.format) == (code, None)
    assert name in (item.error_message or "")


def test_bad_input_codes_are_in_the_catalog() -> None:
    """Every code triage reports for an input is a catalog code of the DATA area."""
    assert {FC.DATA_UNKNOWN_FORMAT.spec.code, FC.DATA_MALFORMED_INPUT.spec.code,
            FC.DATA_EMPTY_INPUT.spec.code, FC.DATA_UNREADABLE_INPUT.spec.code} == {
        "FC-DATA-002", "FC-DATA-003", "FC-DATA-004", "FC-DATA-005"}


def test_unreadable_file_is_fc_data_005(tmp_path: Path) -> None:
    """A file that cannot be opened is FC-DATA-005."""
    missing = tmp_path / "gone.jsonl"
    assert triage([missing]).inputs[0].error_code == "FC-DATA-005"


def test_directory_of_mixed_files_triages_the_good_and_names_the_bad(tmp_path: Path) -> None:
    """In a directory, readable logs are triaged and the files that are no session log are
    skipped and counted; named, the same files are errors with their code."""
    _traj(tmp_path, [("make", 2, "make: *** No rule to make target 'all'.  Stop.")],
          name="good.traj.json")
    (tmp_path / "empty.log").write_bytes(b"")
    (tmp_path / "photo.bin").write_bytes(b"\x00\x01" * 100)
    result = triage([tmp_path])
    assert _codes(result) == {"good.traj.json": None}
    assert sorted(Path(p).name for p in result.skipped) == ["empty.log", "photo.bin"]
    assert len(result.sessions) == 1
    named = triage([tmp_path / "empty.log", tmp_path / "photo.bin"])
    assert _codes(named) == {"empty.log": "FC-DATA-004", "photo.bin": "FC-DATA-002"}


def test_cli_exits_2_when_any_input_is_bad_and_still_reports_the_rest(tmp_path: Path) -> None:
    """Exit 2, and the good input's sessions are in the JSON."""
    good = _traj(tmp_path, [("make", 2, "make: *** No rule to make target 'all'.  Stop.")])
    bad = tmp_path / "empty.jsonl"
    bad.write_bytes(b"")
    run = CliRunner().invoke(main, ["triage", "--json", str(good), str(bad)])
    assert run.exit_code == 2
    document = json.loads(run.output)
    assert [i["error"]["code"] if i["error"] else None for i in document["inputs"]] == [
        None, "FC-DATA-004"]
    assert len(document["sessions"]) == 1


def test_cli_exits_0_when_every_input_is_read(tmp_path: Path) -> None:
    """Exit 0 when all inputs were triaged, failures or not."""
    good = _traj(tmp_path, [("make", 2, "make: *** No rule to make target 'all'.  Stop.")])
    assert CliRunner().invoke(main, ["triage", str(good)]).exit_code == 0


_BIG_SCRIPT = r"""
import json, sys
from pathlib import Path
from failcode.triage import triage
path = Path(sys.argv[1])
head = b'{"type":"user","sessionId":"s1","message":{"content":"hi"}}\n'
with path.open("wb") as out:
    out.write(head * 2000)
    out.truncate(2 * 1024 ** 3)          # the rest is a hole: 2 GiB of NUL bytes, no newline
item = triage([path]).inputs[0]
# the peak of this process's own memory (ru_maxrss would carry the forking parent's peak)
status = Path("/proc/self/status").read_text()
rss_mib = int(next(l for l in status.splitlines() if l.startswith("VmHWM:")).split()[1]) / 1024
print(json.dumps({"code": item.error_code, "format": item.format, "rss_mib": rss_mib,
                  "message": item.error_message}))
"""


@pytest.mark.big_input
def test_a_2_gib_input_stays_under_200_mib(tmp_path: Path) -> None:
    """A 2 GiB log with a 2 GiB line is refused with FC-DATA-003 in bounded memory."""
    path = tmp_path / "huge.jsonl"
    done = subprocess.run([sys.executable, "-c", _BIG_SCRIPT, str(path)], capture_output=True,
                          text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    report = json.loads(done.stdout)
    assert report["code"] == "FC-DATA-003"
    assert report["format"] == "claude-code"
    assert report["rss_mib"] < 200
