"""`failcode triage --jobs N`: files read in parallel processes, output identical to a serial run;
outputs written as the inputs are read (``_stream``) with the same content as the whole result."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import jsonschema
from click.testing import CliRunner

from failcode.cli import main
from failcode.store import open_store
from failcode.triage import triage
from failcode.triage._record import Recorder, result_events
from failcode.triage.analysis._analyze import expand
from failcode.triage.analysis._run import FileResults
from failcode.triage.report._stream import JsonDocument, Summary
from failcode.triage.report._terminal import render_summary
from tests._paths import REPO
from tests.triage._data import mask_error_ids

if TYPE_CHECKING:
    from pathlib import Path

    from failcode.triage import TriageResult

FIXTURES = REPO / "tests" / "lab" / "fixtures"
"""The lab's recorded sessions: a real multi-file folder of every agent's logs (and each
scenario's ``meta.json``, an input of no known format: FC-DATA-002, exit status 2)."""
SCHEMA = json.loads((REPO / "docs" / "triage.schema.json").read_text())
_TS = re.compile(r'"ts": ?"[^"]*"')


def _stable(text: str) -> str:
    """The text with what differs between any two runs masked: each failure's ``error_id``
    (unique per occurrence by design) and, in stored events, the time of recording."""
    return _TS.sub('"ts": "?"', mask_error_ids(text))


def _stored(url: str) -> list[tuple[str, str]]:
    store = open_store(url)
    try:
        rows = store.fetch("SELECT event_id, body FROM events ORDER BY event_id", ())
    finally:
        store.close()
    return [(event_id, _stable(body)) for event_id, body in rows]


def _triage(tmp_path: Path, name: str, *args: str) -> tuple[int, str, str, str, list[Any]]:
    html = tmp_path / f"{name}.html"
    url = f"sqlite:///{tmp_path / name}.db"
    run = CliRunner().invoke(main, ["triage", str(FIXTURES), "--json", "--html", str(html),
                                    "--store", url, *args])
    return run.exit_code, run.stdout, run.stderr, html.read_text(encoding="utf-8"), _stored(url)


def test_the_fixtures_are_read_in_parallel_with_two_jobs() -> None:
    """The folder the tests below compare is large enough for the parallel path."""
    with FileResults(expand([FIXTURES]), jobs=2) as results:
        assert results.parallel
    with FileResults(expand([FIXTURES]), jobs=1) as results:
        assert not results.parallel
    with FileResults(expand([FIXTURES])[:1], jobs=2) as results:
        assert not results.parallel  # one file: no worker processes


def test_jobs_two_writes_what_jobs_one_writes(tmp_path: Path) -> None:
    """--json, --html, --store and the recorded-events line are the same byte for byte with
    --jobs 1 and --jobs 2 (error ids and recording times masked: they differ on every run)."""
    serial = _triage(tmp_path, "serial", "--jobs", "1")
    parallel = _triage(tmp_path, "parallel", "--jobs", "2")
    assert serial[0] == parallel[0] == 2
    assert _stable(parallel[1]) == _stable(serial[1])
    assert parallel[2].replace("parallel.db", "serial.db") == serial[2]
    assert parallel[3] == serial[3]
    assert parallel[4] == serial[4]
    assert len(serial[4]) > 100
    jsonschema.validate(json.loads(serial[1]), SCHEMA)


def test_jobs_two_prints_the_summary_jobs_one_prints() -> None:
    """The terminal summary is the same byte for byte, and so is the exit status."""
    runs = [CliRunner().invoke(main, ["triage", str(FIXTURES), "--top", "20", "--jobs", jobs])
            for jobs in ("1", "2")]
    assert runs[0].exit_code == runs[1].exit_code == 2
    assert runs[0].stdout == runs[1].stdout
    assert "failing steps" in runs[0].stdout
    assert "FC-DATA-002" in runs[0].stdout


def test_the_python_api_takes_jobs() -> None:
    """``triage(paths, jobs=2)`` is ``triage(paths)`` (the default reads in this process)."""
    serial, parallel = triage([FIXTURES]), triage([FIXTURES], jobs=2)
    assert _stable(json.dumps(parallel.to_dict())) == _stable(json.dumps(serial.to_dict()))
    assert [s.session for s in parallel.sessions] == [s.session for s in serial.sessions]


def test_a_bad_input_among_many_keeps_its_place_and_exit_status(tmp_path: Path) -> None:
    """An unreadable input in a parallel run is listed where a serial run lists it, exit 2."""
    folder = tmp_path / "runs"
    folder.mkdir()
    for index, path in enumerate(sorted(FIXTURES.rglob("*.traj.json"))[:6]):
        (folder / f"{index}.traj.json").write_bytes(path.read_bytes())
    # a trajectory cut off mid-value, padded over the parallel floor (a file walking finds
    # that is no session log at all is skipped, not an input: see test_discovery)
    (folder / "3a.traj.json").write_bytes(
        b'{"trajectory_format": "mini-swe-agent-1.1", "messages": [' + b" " * 1_200_000
        + b"broken")
    runs = [CliRunner().invoke(main, ["triage", str(folder), "--json", "--jobs", jobs])
            for jobs in ("1", "2")]
    assert runs[0].exit_code == runs[1].exit_code == 2
    assert _stable(runs[0].stdout) == _stable(runs[1].stdout)
    paths = [item["path"] for item in json.loads(runs[1].stdout)["inputs"]]
    assert paths == sorted(paths)


def _document(result: TriageResult) -> dict[str, Any]:
    parts: list[str] = []
    JsonDocument.write_result(result, parts.append)
    text = "".join(parts)
    assert text.endswith("}\n")
    assert text.count("\n") == 1
    document: dict[str, Any] = json.loads(text)
    return document


def test_the_streamed_document_is_the_whole_results_dict() -> None:
    """The document written session by session holds what ``TriageResult.to_dict`` holds."""
    result = triage([FIXTURES])
    assert _document(result) == json.loads(json.dumps(result.to_dict()))
    empty = triage([])
    assert _document(empty) == empty.to_dict()


def test_the_summary_added_session_by_session_prints_the_whole_results_summary(
        tmp_path: Path) -> None:
    """Tables, counts and the sessions with the most loops (ties in report order) are the
    same whether the summary sees the whole result or one session at a time."""
    result = triage([FIXTURES])
    summary = Summary(top=3)
    for session in result.sessions:
        summary.add(session)
    for item in result.inputs:
        summary.add_input(item)
    summary.skipped = len(result.skipped)  # as the CLI sets it from the walk
    assert summary.tables.signatures() == result.signatures()
    assert summary.tables.blame() == result.blame()
    assert summary.tables.outcome_counts() == result.outcome_counts()
    looping = sorted((s for s in result.sessions if s.loops), key=lambda s: -len(s.loops))
    assert looping, "the fixtures have sessions with loops"
    assert [(s.path, s.session) for s in summary.top_looping()] == [
        (s.path, s.session) for s in looping[:3]]
    whole, streamed = tmp_path / "whole.txt", tmp_path / "streamed.txt"
    with whole.open("w") as out:
        render_summary(result, top=3, file=out)
    with streamed.open("w") as out:
        render_summary(summary, top=3, file=out)
    assert streamed.read_text() == whole.read_text()


def test_the_recorder_appends_the_pages_record_appends(tmp_path: Path) -> None:
    """Sessions recorded one at a time go in pages of the same events in the same order."""
    result = triage([FIXTURES])
    pages: list[list[str]] = []

    class _Store:
        url = "memory:"

        def append(self, page: list[Any]) -> int:
            pages.append([event.event_id for event in page])
            return len(page)

    recorder = Recorder(_Store())  # type: ignore[arg-type]
    for session in result.sessions:
        recorder.add(session)
    new, known = recorder.close()
    ids = [event.event_id for event in result_events(result)]
    assert (new, known) == (len(ids), 0)
    assert [event_id for page in pages for event_id in page] == ids
    assert [len(page) for page in pages[:-1]] == [2000] * (len(pages) - 1)
