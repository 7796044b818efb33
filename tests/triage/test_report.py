"""`failcode triage --store` and `failcode report --store`: one report, from logs or a store."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import jsonschema
from click.testing import CliRunner

from failcode.cli import main
from failcode.store import open_store
from tests._paths import REPO

if TYPE_CHECKING:
    from pathlib import Path

SCHEMA = json.loads((REPO / "docs" / "triage.schema.json").read_text())


def _run(*args: str) -> tuple[int, Any, str]:
    run = CliRunner().invoke(main, list(args))
    document = json.loads(run.stdout) if "--json" in args and run.stdout.strip() else None
    return run.exit_code, document, run.stderr


def _signatures(document: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(r["signature"], r["code"], r["kind"], r["category"], r["count"], r["sessions"])
            for r in document["signatures"]]


def _loops(document: dict[str, Any]) -> dict[tuple[str, str], list[Any]]:
    return {(s["path"], s["session"]): s["loops"] for s in document["sessions"]}


def test_report_agrees_with_triage_on_signatures_blame_and_loops(store_url: str) -> None:
    """triage --json and report --json of the same input: same signatures, counts, blame."""
    code, triaged, _ = _run("triage", "--json", "--store", store_url)
    assert code == 0
    code, reported, _ = _run("report", "--json", "--store", store_url)
    assert code == 0
    assert triaged["signatures"]  # the sample has failures: the comparison is not empty
    assert _signatures(reported) == _signatures(triaged)
    assert reported["blame"] == triaged["blame"]
    found = {key: loops for key, loops in _loops(triaged).items() if loops}
    assert found
    assert {key: loops for key, loops in _loops(reported).items() if loops} == found


def test_report_keeps_sessions_steps_and_endings(store_url: str) -> None:
    """Each session with findings comes back with its step count, end and failing steps."""
    _, triaged, _ = _run("triage", "--json", "--store", store_url)
    _, reported, _ = _run("report", "--json", "--store", store_url)

    def view(document: dict[str, Any]) -> dict[tuple[str, str], Any]:
        return {(s["path"], s["session"]): (
            s["format"], s["steps"], s["ended"]["status"],
            [(f["step"], f["source"], f["evidence"], f["repeats"]) for f in s["failures"]],
            [(o["step"], o["outcome"]["type"]) for o in s["outcomes"]])
            for s in document["sessions"] if s["failures"] or s["outcomes"]}

    assert view(reported) == view(triaged)


def test_a_second_triage_stores_nothing_twice(store_url: str) -> None:
    """Triaging the same input again adds no event, and the counts do not double."""
    _run("triage", "--json", "--store", store_url)
    with open_store(store_url) as store:
        first = store.stats().events_stored
    _, triaged, stderr = _run("triage", "--json", "--store", store_url)
    assert "recorded 0 new events" in stderr
    with open_store(store_url) as store:
        assert store.stats().events_stored == first
    _, reported, _ = _run("report", "--json", "--store", store_url)
    assert _signatures(reported) == _signatures(triaged)


def test_report_json_validates_against_the_schema(store_url: str) -> None:
    """report --json is a triage document (docs/triage.schema.json)."""
    _run("triage", "--json", "--store", store_url)
    code, reported, _ = _run("report", "--json", "--store", store_url)
    assert code == 0
    jsonschema.validate(reported, SCHEMA)


def test_report_of_an_empty_store_is_empty(store_url: str) -> None:
    """A store with no events reports no session and exits 0 (a store that does not exist
    is an error: tests/store/test_reliability_store.py)."""
    open_store(store_url).close()
    code, reported, _ = _run("report", "--json", "--store", store_url)
    assert code == 0
    assert (reported["sessions"], reported["signatures"]) == ([], [])


def test_report_writes_html(tmp_path: Path) -> None:
    """report --html writes one self-contained page with the store's signatures."""
    url = f"sqlite:///{tmp_path / 'failcode.db'}"
    _, triaged, _ = _run("triage", "--json", "--store", url)
    page = tmp_path / "report.html"
    code, _, _ = _run("report", "--store", url, "--html", str(page))
    assert code == 0
    html = page.read_text()
    assert triaged["signatures"][0]["code"] in html
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")


def test_a_store_that_cannot_be_opened_is_named_without_a_traceback(tmp_path: Path) -> None:
    """A bad store URL prints its FC-STORE code, not a traceback."""
    run = CliRunner().invoke(main, ["report", "--store", "nosuch://x"])
    assert run.exit_code != 0
    assert "FC-STORE-001" in run.stderr
    assert "Traceback" not in run.output


def test_a_masked_failure_stays_masked_through_the_store(tmp_path: Path) -> None:
    """A failure found behind ``| tail`` is still marked ``masked`` when reported from a store."""
    from tests.lab.runner import FIXTURES

    url = f"sqlite:///{tmp_path / 'failcode.db'}"
    session = str(FIXTURES / "codex" / "masked-pipe-tail" / "session")
    code, triaged, _ = _run("triage", session, "--json", "--store", url)
    assert code == 0
    code, reported, _ = _run("report", "--json", "--store", url)
    assert code == 0
    marks = [[f["masked"] for s in doc["sessions"] for f in s["failures"]]
             for doc in (triaged, reported)]
    assert marks == [[True], [True]]
