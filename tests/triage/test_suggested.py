"""Learned suggestions in triage and ``failcode classify`` (issue 39): a finding the rules left
unknown carries what the shipped model suggests for its first occurrence, marked as a
suggestion in every report, and never changes the finding.

Real parts: real tools (jq, sqlite3, awk, the interpreter) run in a temporary folder, their
output recorded as a mini-swe-agent trajectory that triage reads; the shipped model. What the
model says is asked of :func:`failcode.learned.suggest` in the test, from the tool's own
output, never pasted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from html import escape
from typing import TYPE_CHECKING, Any

import jsonschema
import pytest
from click.testing import CliRunner

from failcode import Failure, from_command
from failcode.cli import main
from failcode.learned import Suggestion, suggest, wants_suggestion
from failcode.triage import triage
from failcode.triage._findings import suggested_words
from tests._needs import need_tool
from tests._paths import REPO

if TYPE_CHECKING:
    from pathlib import Path

SCHEMA = json.loads((REPO / "docs" / "triage.schema.json").read_text())

UNKNOWN_TOOLS = (
    ("jq", "echo '{\"a\": [1, 2' | jq .a"),
    ("sqlite3", "sqlite3 :memory: 'selec 1 from nowhere'"),
    ("awk", "awk 'BEGIN { print (1 }'"),
)
"""Real tools' failures the rules leave unknown (checked by each test), whose output is one
short block (the record's detail is the whole output)."""
OTHER_INPUT = {
    "jq": "echo '{\"b\": tru}' | jq .b",
    "sqlite3": "sqlite3 :memory: 'select * frm t'",
    "awk": "awk 'BEGIN { x = }'",
}
"""The same program failing on another input: another output, the same signature."""


@dataclass
class Run:
    """One command run in a shell: what an agent typed, its status and its output."""

    command: str
    returncode: int
    stdout: str
    stderr: str

    @property
    def failure(self) -> Failure:
        found = from_command(self.command, self.returncode, self.stdout, self.stderr)
        assert isinstance(found, Failure), self
        return found

    def suggestion(self) -> Suggestion | None:
        """What the model says of this command's own output, asked here."""
        return suggest(self.command, self.returncode, self.stdout, self.stderr)


@dataclass
class Project:
    """A temporary folder: commands run in it, recorded as one trajectory's steps."""

    root: Path
    runs: list[Run] = field(default_factory=list)

    def run(self, command: str) -> Run:
        done = subprocess.run(["sh", "-c", command], cwd=self.root, capture_output=True,
                              text=True, timeout=60, check=False)
        ran = Run(command, done.returncode, done.stdout, done.stderr)
        self.runs.append(ran)
        return ran

    def trajectory(self, name: str = "s.traj.json") -> Path:
        """The runs as a mini-swe-agent trajectory (tool calls and their results)."""
        messages: list[dict[str, object]] = [{"role": "system", "content": "x"}]
        for index, ran in enumerate(self.runs):
            output = ran.stdout + ran.stderr
            messages.append({"role": "assistant", "content": "", "tool_calls": [{
                "id": f"c{index}", "function": {
                    "name": "bash", "arguments": json.dumps({"command": ran.command})}}]})
            messages.append({"role": "tool", "tool_call_id": f"c{index}",
                             "content": f"<returncode>{ran.returncode}</returncode>"
                                        f"<output>{output}</output>",
                             "extra": {"returncode": ran.returncode, "raw_output": output}})
        doc = {"info": {"exit_status": "Submitted", "mini_version": "2"}, "messages": messages,
               "trajectory_format": "mini-swe-agent-1.1", "instance_id": "demo"}
        path = self.root / name
        path.write_text(json.dumps(doc))
        return path


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def _unknown_run(project: Project) -> Run:
    """The first real tool failure of :data:`UNKNOWN_TOOLS` the rules leave unknown and the
    model has a suggestion for (asked here); the test fails when none has."""
    for program, command in UNKNOWN_TOOLS:
        need_tool(program)
        ran = project.run(command)
        if wants_suggestion(ran.failure) and ran.suggestion() is not None:
            project.runs.remove(ran)
            project.runs.insert(0, ran)
            return ran
    pytest.fail("the shipped model suggests nothing for any of "
                f"{[c for _, c in UNKNOWN_TOOLS]}: retrained? pick tools it knows")


def _known_run(project: Project) -> Run:
    """A failure the rules know: a module that is not installed."""
    ran = project.run(f"{sys.executable} -c 'import fc_not_installed_anywhere'")
    assert not wants_suggestion(ran.failure)
    return ran


def _document(paths: list[Path], *args: str) -> dict[str, Any]:
    done = CliRunner().invoke(main, ["triage", *map(str, paths), "--json", *args])
    assert done.exit_code == 0, done.output
    document: dict[str, Any] = json.loads(done.output)
    return document


def _finding_of(document: dict[str, Any], failure: Failure) -> dict[str, Any]:
    (found,) = [f for f in document["findings"] if failure.signature in f["signatures"]]
    return found


# -- the finding -------------------------------------------------------------------------------
def test_an_unknown_finding_carries_the_models_suggestion(project: Project) -> None:
    """suggested is what the model says of the failing command's own output."""
    ran = _unknown_run(project)
    expected = ran.suggestion()
    assert expected is not None
    finding = _finding_of(_document([project.trajectory()]), ran.failure)
    assert finding["suggested"] == expected.to_dict()


def test_a_known_finding_has_no_suggestion(project: Project) -> None:
    """A failure the rules classify has suggested null, whatever the model would say."""
    ran = _known_run(project)
    finding = _finding_of(_document([project.trajectory()]), ran.failure)
    assert finding["suggested"] is None


def test_a_suggestion_changes_nothing_in_the_finding(project: Project) -> None:
    """Code, kind, category and rank are the rules', with a suggestion or without."""
    unknown = _unknown_run(project)
    _known_run(project)
    document = _document([project.trajectory()])
    for ran in project.runs:
        finding = _finding_of(document, ran.failure)
        assert (finding["code"], finding["kind"], finding["category"]) == (
            ran.failure.code, str(ran.failure.kind), str(ran.failure.category))
    ranks = [f["code"] for f in document["findings"]]
    stripped = [f["code"] for f in sorted(
        document["findings"], key=lambda f: (-f["cost"], -f["count"], -f["sessions"]))]
    assert ranks == stripped
    assert _finding_of(document, unknown.failure)["suggested"] is not None


def test_the_document_with_a_suggestion_matches_the_schema(project: Project) -> None:
    """--json with a suggested finding validates against docs/triage.schema.json."""
    _unknown_run(project)
    _known_run(project)
    jsonschema.validate(_document([project.trajectory()]), SCHEMA)


def test_the_suggestion_is_the_first_occurrences(project: Project) -> None:
    """Two outputs of one signature (one finding): the suggestion is the first one's."""
    ran = _unknown_run(project)
    program = ran.command.split("|")[-1].split()[0]
    other = project.run(OTHER_INPUT[program])  # another output, a later step
    assert other.failure.signature == ran.failure.signature
    first, second = ran.suggestion(), other.suggestion()
    assert first is not None
    assert second != first  # else the test could not tell them apart
    (finding,) = [f for f in triage([project.trajectory()]).to_dict()["findings"]
                  if ran.failure.signature in f["signatures"]]
    assert finding["count"] == 2
    assert finding["suggested"] == first.to_dict()


# -- the reports -------------------------------------------------------------------------------
def test_the_terminal_report_marks_the_suggestion(project: Project) -> None:
    """The summary's finding has a line "suggested (learned, N%): kind ..."."""
    ran = _unknown_run(project)
    expected = ran.suggestion()
    assert expected is not None
    done = CliRunner().invoke(main, ["triage", str(project.trajectory())])
    assert done.exit_code == 0, done.output
    line = next(x for x in done.output.splitlines() if "suggested (learned," in x)
    assert f"{expected.confidence:.0%}): {expected.kind}" in line


def test_the_markdown_report_marks_the_suggestion(project: Project) -> None:
    """--format markdown shows the suggestion in the finding's cell, in italics."""
    ran = _unknown_run(project)
    expected = ran.suggestion()
    assert expected is not None
    done = CliRunner().invoke(main, ["triage", str(project.trajectory()),
                                     "--format", "markdown"])
    assert done.exit_code == 0, done.output
    kind = expected.kind.replace("_", "\\_")  # Markdown's escape of a log's value
    assert f"<br>_suggested (learned, {expected.confidence:.0%}): {kind}" in done.output


def test_the_html_report_marks_the_suggestion(project: Project, tmp_path: Path) -> None:
    """--html shows the suggestion in its own marked span, escaped."""
    ran = _unknown_run(project)
    expected = ran.suggestion()
    assert expected is not None
    out = tmp_path / "r.html"
    done = CliRunner().invoke(main, ["triage", str(project.trajectory()), "--html", str(out)])
    assert done.exit_code == 0, done.output
    assert "<span class=suggested title=\"A learned model's suggestion" in out.read_text()
    assert escape(suggested_words(expected)) in out.read_text()


def test_the_drill_down_lists_the_nearest_examples(project: Project) -> None:
    """--finding N shows the suggestion, each nearest example's program and the model."""
    ran = _unknown_run(project)
    expected = ran.suggestion()
    assert expected is not None
    done = CliRunner().invoke(main, ["triage", str(project.trajectory()), "--finding", "1"])
    assert done.exit_code == 0, done.output
    assert "suggested (learned," in done.output
    assert f"model {expected.model}" in done.output
    for near in expected.nearest:
        assert f"{near.program} · {near.kind} / {near.klass}" in done.output


# -- the cache ---------------------------------------------------------------------------------
def test_a_cached_input_gets_the_same_suggestion(project: Project, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The second run takes the input from the cache and shows the same suggestion: the
    cache keeps the records it is made from."""
    monkeypatch.setenv("FAILCODE_CACHE_DIR", str(tmp_path / "cache"))
    ran = _unknown_run(project)
    path = project.trajectory()
    first = triage([path], cache=True)
    second = triage([path], cache=True)
    assert (first.cached_inputs, second.cached_inputs) == (0, 1)
    expected = ran.suggestion()
    assert expected is not None
    for result in (first, second):
        finding = _finding_of(result.to_dict(), ran.failure)
        assert finding["suggested"] == expected.to_dict()


# -- failcode classify -------------------------------------------------------------------------
def _classify(text: str, *args: str) -> Any:
    done = CliRunner().invoke(main, ["classify", *args], input=text)
    assert done.exit_code == 0, done.output
    return done.output


TEXT_TOOLS = (
    ("gcc", "printf 'int f(void) { return count; }\\n' > a.c && gcc -c a.c"),
    ("make", "make no_such_target"),
)
"""Real tools' error text that ``failcode classify`` (no command: text only) leaves unknown,
and for which the model names a kind other than ``command_error`` (checked by each test)."""


def _text_run(project: Project) -> tuple[str, Suggestion]:
    """The first of :data:`TEXT_TOOLS` whose output, as text alone, the model has a
    suggestion for that is not ``command_error`` (asked here); the test fails when none has."""
    for program, command in TEXT_TOOLS:
        need_tool(program)
        ran = project.run(command)
        text = ran.stdout + ran.stderr
        said = suggest(None, None, "", text)
        if ran.returncode != 0 and said is not None and said.kind != "command_error":
            return text, said
    pytest.fail("the shipped model suggests no kind but command_error for any of "
                f"{[c for _, c in TEXT_TOOLS]} as text: retrained? pick tools it knows")


def test_classify_adds_the_suggestion_for_an_unknown_error(project: Project) -> None:
    """A tool's error text the rules leave unknown: --json's suggested is what the model
    says of that text."""
    text, expected = _text_run(project)
    answer = json.loads(_classify(text, "--json"))
    assert answer["failure"]["kind"] in ("unknown_error", "command_error")
    assert answer["suggested"] == expected.to_dict()


def test_classify_never_suggests_a_failed_command_without_a_command(project: Project) -> None:
    """Text alone (no command, no exit status) that the model would call a failed command
    gets no suggestion: the model learned that kind from commands only (an agent's own
    exception is no command's failure)."""
    ran = _unknown_run(project)
    text = ran.stdout + ran.stderr
    raw = suggest(None, None, "", text)
    assert raw is not None  # what the filter is for: a suggestion of a failed command
    assert raw.kind == "command_error", raw
    answer = json.loads(_classify(text, "--json"))
    assert answer["failure"]["kind"] == "unknown_error"
    assert answer["suggested"] is None


def test_classify_text_marks_the_suggestion(project: Project) -> None:
    """The text output has a line saying it is a suggestion, not the rules'."""
    text, expected = _text_run(project)
    output = _classify(text)
    said = (f"suggested (learned, {expected.confidence:.0%}; the rules say unknown): "
            f"kind {expected.kind}")
    assert said in output
    assert "a suggestion, not the rules' classification" in output


def test_classify_of_a_known_error_has_no_suggestion(project: Project) -> None:
    """A traceback the rules know: suggested is null and no suggestion line is printed."""
    ran = _known_run(project)
    text = ran.stdout + ran.stderr
    assert json.loads(_classify(text, "--json"))["suggested"] is None
    assert "suggested (learned" not in _classify(text)
