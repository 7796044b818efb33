"""Learned suggestions in the service (issue 39): ``POST /v1/classify``'s ``suggested``, and a
finding's detail with the suggestion and the store's known remedies for the nearest stored
signatures, on both backends.

Real parts: real tools run in a temporary folder (awk, jq, sqlite3, the interpreter), a store
filled by ``failcode triage --store`` from their trajectory, the shipped model. What the model
says is asked of :func:`failcode.learned.suggest` in the test, from the tool's own output.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner

from failcode.cli import main
from failcode.learned import suggest, wants_suggestion
from failcode.store import open_store
from tests._needs import need_module, need_tool
from tests.triage.test_suggested import (
    UNKNOWN_TOOLS,
    Project,
    Run,
    _known_run,
    _text_run,
    _unknown_run,
)

if TYPE_CHECKING:
    from pathlib import Path

need_module("pydantic")

from failcode.service._classify import (  # noqa: E402 - after the optional dependency's check
    ClassifyRequest,
    CommandInput,
    ExceptionInput,
    classify_payload,
)
from failcode.service._findings import SUGGESTED_REMEDIES, Findings, ensure_tables  # noqa: E402


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path / "work")


@pytest.fixture(autouse=True)
def _folder(project: Project) -> None:
    project.root.mkdir()


# -- POST /v1/classify ---------------------------------------------------------------------------
def test_classify_of_an_unknown_command_carries_the_suggestion(project: Project) -> None:
    """A command the rules leave unknown: suggested is what the model says of its argv, exit
    status, stdout and stderr."""
    ran = _unknown_run(project)
    answer = classify_payload(ClassifyRequest(command=CommandInput(
        command=ran.command, exit_code=ran.returncode, stdout=ran.stdout, stderr=ran.stderr)))
    expected = suggest(ran.command, ran.returncode, ran.stdout, ran.stderr)
    assert expected is not None
    assert answer.suggested == expected.to_dict()
    assert answer.code == ran.failure.code  # the rules' answer, unchanged


def test_classify_of_a_known_command_has_no_suggestion(project: Project) -> None:
    """A command the rules classify: suggested is null."""
    ran = _known_run(project)
    answer = classify_payload(ClassifyRequest(command=CommandInput(
        command=ran.command, exit_code=ran.returncode, stdout=ran.stdout, stderr=ran.stderr)))
    assert answer.kind == "failure"
    assert answer.suggested is None


def test_classify_of_an_unknown_exception_reads_its_message(project: Project) -> None:
    """An exception no rule knows: the suggestion is the model's for ``Type: message``."""
    text, _ = _text_run(project)
    message = text.strip()
    answer = classify_payload(ClassifyRequest(exception=ExceptionInput(
        type="ToolError", message=message)))
    assert answer.failure is not None
    assert answer.failure["kind"] == "unknown_error"
    expected = suggest(None, None, "", f"ToolError: {message}")
    assert expected is not None
    assert expected.kind != "command_error", expected  # kept without a command (below)
    assert answer.suggested == expected.to_dict()


def test_an_exception_is_never_suggested_a_failed_command(project: Project) -> None:
    """An exception's text that the model would call a failed command has no suggestion: the
    model learned that kind from commands only."""
    ran = _unknown_run(project)
    message = (ran.stdout + ran.stderr).strip()
    raw = suggest(None, None, "", f"ToolError: {message}")
    assert raw is not None  # what the rule is for: a suggestion of a failed command
    assert raw.kind == "command_error", raw
    answer = classify_payload(ClassifyRequest(exception=ExceptionInput(
        type="ToolError", message=message)))
    assert answer.suggested is None


def test_the_response_model_documents_suggested() -> None:
    """The OpenAPI model says what suggested is, and that it is a suggestion only."""
    schema = json.dumps(classify_payload(ClassifyRequest(exception=ExceptionInput(
        type="ValueError", message="x"))).model_json_schema())
    assert "suggested" in schema
    assert "A suggestion only" in schema


# -- a finding's detail --------------------------------------------------------------------------
def _stored(project: Project, store_url: str) -> None:
    done = CliRunner().invoke(main, ["triage", str(project.trajectory()), "--store", store_url,
                                     "--json"])
    assert done.exit_code == 0, done.output


def _neighbour(project: Project) -> Run:
    """A failure the rules know of kind command_error and class syntax_error: Python's."""
    ran = project.run(f"{sys.executable} -c 'x = ('")
    assert (str(ran.failure.kind), ran.failure.error_class) == ("command_error", "syntax_error")
    return ran


def test_an_unknown_findings_detail_carries_the_suggestion(project: Project,
                                                           store_url: str) -> None:
    """suggested is the model's for its latest stored occurrence (its command, status and
    output); a known finding has none."""
    ran = _unknown_run(project)
    known = _known_run(project)
    _stored(project, store_url)
    expected = ran.suggestion()
    assert expected is not None
    with open_store(store_url) as store:
        ensure_tables(store)
        findings = Findings(store)
        detail = findings.detail(findings.id_of(ran.failure.signature))
        assert detail.suggested == expected.to_dict()
        assert detail.finding.code == ran.failure.code  # the rules', unchanged
        other = findings.detail(findings.id_of(known.failure.signature))
        assert other.suggested is None
        assert other.suggested_remedies == ()


def test_the_nearest_stored_signatures_remedies_are_listed(project: Project,
                                                           store_url: str) -> None:
    """A stored signature of the suggestion's (or a nearest example's) kind and class with a
    remedy reported on it is listed with that remedy; one of another kind and class, whose
    record has a remedy of its own, is not."""
    need_tool("awk")
    ran = project.run(dict(UNKNOWN_TOOLS)["awk"])  # a syntax error of a language rules lack
    assert wants_suggestion(ran.failure)
    neighbour = _neighbour(project)
    known = _known_run(project)
    expected = ran.suggestion()
    assert expected is not None
    pairs = {(expected.kind, expected.klass), *((n.kind, n.klass) for n in expected.nearest)}
    if ("command_error", "syntax_error") not in pairs:
        pytest.fail(f"the model's suggestion for {ran.command!r} is {pairs}, no longer "
                    "command_error / syntax_error: pick a neighbour of its kind and class")
    assert known.failure.remedy  # a remedy of its own, yet another kind and class
    assert (str(known.failure.kind), known.failure.error_class) not in pairs
    _stored(project, store_url)
    with open_store(store_url) as store:
        store.record_remedy(neighbour.failure.signature, "close the bracket", worked=True)
        ensure_tables(store)
        findings = Findings(store)
        detail = findings.detail(findings.id_of(ran.failure.signature))
        listed = {item["signature"]: item for item in detail.suggested_remedies}
        assert known.failure.signature not in listed
        item = listed[neighbour.failure.signature]
        assert [r["remedy"] for r in item["known_remedies"]] == ["close the bracket"]
        assert item["finding"] == findings.id_of(neighbour.failure.signature)
        assert (item["kind"], item["class"]) == ("command_error", "syntax_error")
        assert item["status"] == findings.get(item["finding"]).status  # as the API shows it
        assert len(detail.suggested_remedies) <= SUGGESTED_REMEDIES


def test_a_stored_signature_without_a_remedy_is_not_listed(project: Project,
                                                           store_url: str) -> None:
    """The nearest stored signature is listed only once a remedy is known for it."""
    ran = _unknown_run(project)
    neighbour = _neighbour(project)
    _stored(project, store_url)
    assert neighbour.failure.remedy is None
    assert wants_suggestion(ran.failure)
    with open_store(store_url) as store:
        ensure_tables(store)
        findings = Findings(store)
        detail = findings.detail(findings.id_of(ran.failure.signature))
        assert neighbour.failure.signature not in {
            item["signature"] for item in detail.suggested_remedies}
