"""The same input gives the same events on every machine, whatever its time zone.

Every reader runs over its real sample inputs (the shared agent sessions, the session lab's
recorded runs, the sessions bundled with failcode), plus a Copilot CLI file built from the
documented shapes (no real one exists) and copies of a lab run of each format whose times
carry a zone with the zone taken off, in a ``failcode triage --json --store`` subprocess under
``TZ=UTC``, ``TZ=America/New_York`` and ``TZ=Asia/Kolkata``: the documents must be the same
byte for byte (but for each failure's ``error_id``, unique per occurrence by design) and the
store must hold the same event ids (:func:`failcode.events.derived_event_id` puts the step's
time in the id). The rule that makes it so (``failcode.triage.readers._text``): a time without
a zone is read as UTC, never as the machine's local time.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest

from failcode.store import open_store
from failcode.triage import FORMATS, triage
from tests._paths import REPO
from tests.lab.runner import FIXTURES as LAB
from tests.triage._data import mask_error_ids, sessions_2_dir, sessions_dir

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

ZONES = ("UTC", "America/New_York", "Asia/Kolkata")
BUNDLED = REPO / "src" / "failcode" / "triage" / "data"
_ZONED = re.compile(r'("timestamp": ?"\d{4}-\d\d-\d\d[T ][\d:.]+)(?:Z|[+-]\d\d:\d\d)"')
# formats whose writers put a zone on their times: a lab run of each, the zone taken off
_ZONELESS_COPIES = {"claude-code": "mixed-session", "codex": "mixed-session",
                    "gemini-cli": "mixed-session"}
_WHEN = 1746030835  # 2025-04-30, summer time in New York


def _copilot(folder: Path, *, zone: str) -> Path:
    """A Copilot CLI session (the SDK schema's envelope) whose times end in ``zone``."""
    def event(number: int, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        return {"type": kind, "data": data, "id": f"ev-{number}",
                "timestamp": f"2026-08-05T20:40:{number:02d}.000{zone}",
                "parentId": f"ev-{number - 1}" if number > 1 else None}

    args = {"command": "pytest -q", "description": "run the tests"}
    text = "FAILED tests/test_app.py::test_add - assert 1 == 2\n1 failed in 0.1s\n"
    records = [
        event(1, "session.start", {"sessionId": f"copilot-{zone or 'local'}", "version": 1,
                                   "producer": "copilot-agent", "copilotVersion": "1.0.78"}),
        event(2, "user.message", {"content": "make the tests pass", "attachments": []}),
        event(3, "assistant.message", {"messageId": "m-1", "content": "", "toolRequests": [
            {"toolCallId": "c1", "name": "bash", "arguments": args, "type": "function"}]}),
        event(4, "tool.execution_start", {"toolCallId": "c1", "toolName": "bash",
                                          "arguments": args}),
        event(5, "tool.execution_complete", {"toolCallId": "c1", "success": True, "result": {
            "content": f"{text}<exited with exit code 1>",
            "detailedContent": f"{text}<exited with exit code 1>"}}),
        event(6, "session.error", {"errorType": "rate_limit", "message": "rate limited"}),
    ]
    path = folder / f"copilot-{zone or 'local'}" / "events.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def _zoneless(folder: Path) -> list[Path]:
    """A copy of one lab run of each format that writes zoned times, with every zone taken
    off (``...T00:00:01.000Z`` becomes ``...T00:00:01.000``)."""
    copies = []
    for agent, scenario in _ZONELESS_COPIES.items():
        for source in sorted((LAB / agent / scenario / "session").rglob("*")):
            if not source.is_file():
                continue
            text, found = _ZONED.subn(r'\1"', source.read_text(encoding="utf-8"))
            assert found, f"{source} has no zoned time to take off"
            copy = folder / agent / source.name
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_text(text, encoding="utf-8")
            copies.append(copy)
    return copies


def _inputs(folder: Path) -> list[Path]:
    built = folder / "built"
    built.mkdir()
    return [sessions_dir(), LAB, BUNDLED, _copilot(built, zone="Z"), _copilot(built, zone=""),
            *_zoneless(built), sessions_2_dir() / "qwen-code", sessions_2_dir() / "harbor-atif",
            sessions_2_dir() / "cline", REPO / "tests" / "fixtures" / "multiagent"]


def _format_of(body: str) -> str:
    event = json.loads(body)
    subject = event.get("failure") or event.get("outcome") or {}
    return str(subject.get("context", {}).get("triage.format"))


def _run(zone: str, inputs: list[Path], folder: Path) -> dict[str, Any]:
    """``failcode triage --json --store`` under ``TZ=zone``: the document (error ids masked)
    and the stored event ids per format."""
    database = folder / f"{zone.replace('/', '_')}.db"
    done = subprocess.run(
        [sys.executable, "-m", "failcode", "triage", "--json", "--store",
         f"sqlite:///{database}", *map(str, inputs)],
        env={**os.environ, "TZ": zone}, capture_output=True, text=True, check=False,
        timeout=600)
    # 2: the lab's meta.json files are inputs of no known format (FC-DATA-002)
    assert done.returncode in {0, 2}, done.stderr[-2000:]
    store = open_store(f"sqlite:///{database}")
    try:
        rows = store.fetch("SELECT event_id, body FROM events ORDER BY event_id", ())
    finally:
        store.close()
    ids: dict[str, list[str]] = defaultdict(list)
    for event_id, body in rows:
        ids[_format_of(body)].append(event_id)
    return {"text": mask_error_ids(done.stdout), "ids": ids, "status": done.returncode}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("zones")
    inputs = _inputs(folder)
    return {zone: _run(zone, inputs, folder) for zone in ZONES}


def _sessions(run: dict[str, Any], fmt: str) -> list[dict[str, Any]]:
    return [s for s in json.loads(run["text"])["sessions"] if s["format"] == fmt]


def test_the_zones_differ_on_this_machine() -> None:
    """The three zones really are three offsets here (else the tests below prove nothing)."""
    offsets = []
    for zone in ZONES:
        done = subprocess.run(
            [sys.executable, "-c",
             f"import time; print(time.strftime('%z', time.localtime({_WHEN})))"],
            env={**os.environ, "TZ": zone}, capture_output=True, text=True, check=True)
        offsets.append(done.stdout.strip())
    assert offsets == ["+0000", "-0400", "+0530"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_gives_the_same_sessions_in_every_zone(
        runs: dict[str, dict[str, Any]], fmt: str) -> None:
    """Every reader: the same sessions, failures and step times under every TZ."""
    first = _sessions(runs[ZONES[0]], fmt)
    assert first, f"no {fmt} session among the inputs"
    for zone in ZONES[1:]:
        assert _sessions(runs[zone], fmt) == first, f"{fmt} differs under TZ={zone}"


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_gives_the_same_event_ids_in_every_zone(
        runs: dict[str, dict[str, Any]], fmt: str) -> None:
    """Every reader: the store gets the same event ids under every TZ, so two machines
    recording one input into one store record its failures once."""
    first = runs[ZONES[0]]["ids"].get(fmt, [])
    assert first, f"no {fmt} event among the inputs"
    for zone in ZONES[1:]:
        assert runs[zone]["ids"].get(fmt, []) == first, f"{fmt} event ids differ under TZ={zone}"


def test_the_json_documents_are_byte_identical(runs: dict[str, dict[str, Any]]) -> None:
    """The whole ``--json`` document, error ids aside, is the same bytes under every TZ."""
    assert len({runs[zone]["status"] for zone in ZONES}) == 1
    texts = {zone: runs[zone]["text"] for zone in ZONES}
    assert len(texts[ZONES[0]]) > 1000
    assert {zone: text == texts[ZONES[0]] for zone, text in texts.items()} == dict.fromkeys(
        ZONES, True)


def _utc(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


@pytest.fixture
def in_kolkata(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process in ``TZ=Asia/Kolkata`` (UTC+05:30) for the test, then back."""
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    try:
        yield
    finally:
        monkeypatch.undo()
        time.tzset()


@pytest.mark.usefixtures("in_kolkata")
def test_a_time_without_a_zone_is_read_as_utc(tmp_path: Path) -> None:
    """The documented rule: an aider heading's and an OpenHands event's zoneless local time are
    read as UTC (off by the writer's UTC offset, the same everywhere), not as this process's
    local time (here UTC+05:30)."""
    assert time.strftime("%z", time.localtime(_WHEN)) == "+0530"
    chat = tmp_path / ".aider.chat.history.md"
    chat.write_text("\n# aider chat started at 2025-03-01 10:00:00\n\n#### /run python app.py\n"
                    "\n> Traceback (most recent call last):  \n>   File \"app.py\", line 1  \n"
                    "> ModuleNotFoundError: No module named 'flask'  \n")
    events = tmp_path / "events.json"
    events.write_text(json.dumps([
        {"id": 0, "timestamp": "2025-04-30T16:32:54.707474", "source": "agent",
         "message": "", "action": "run", "args": {"command": "pytest"}},
        {"id": 1, "timestamp": "2025-04-30T16:32:55.5", "source": "agent", "message": "",
         "observation": "run", "cause": 0, "content": "1 failed in 0.1s",
         "extras": {"command": "pytest", "metadata": {"exit_code": 1}}}]))
    result = triage([chat, events])
    stamps = [entry.timestamp for session in result.sessions for entry in session.failures]
    assert stamps == [_utc("2025-03-01 10:00:00"), _utc("2025-04-30T16:32:55.5")]
