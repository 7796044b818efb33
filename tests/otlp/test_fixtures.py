"""The recorded OTLP fixtures: complete, OTLP/JSON, and naming no machine."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest

from tests.otlp.capture import FIXTURES, KERNEL

_ISO_DAY = re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})(?:[T ]|-(?=\d{2}-\d{2}))\d{2}[:-]\d{2}")
_NANOS = re.compile(r'"(?:time|observedTime|startTime|endTime)UnixNano": "(\d+)"')
_SIGNAL_KEYS = {"logs": "resourceLogs", "traces": "resourceSpans", "metrics": "resourceMetrics"}
RUNS = sorted(path.parent for path in FIXTURES.glob("*/*/meta.json"))


def texts() -> list[tuple[str, str]]:
    return [(str(path.relative_to(FIXTURES)), path.read_text()) for run in RUNS
            for path in sorted(run.glob("*.json"))]


def test_there_are_fixtures() -> None:
    """The three agents docs/team.md sets up each have recorded runs."""
    assert {run.parent.name for run in RUNS} >= {"claude-code", "codex", "gemini-cli"}


@pytest.mark.parametrize("run", RUNS, ids=lambda run: f"{run.parent.name}/{run.name}")
def test_meta_lists_every_request_file(run: Path) -> None:
    """meta.json names each request file once, in order, with the path it came to."""
    meta = json.loads((run / "meta.json").read_text())
    listed = [entry["file"] for entry in meta["otlp"]]
    assert listed == sorted(p.name for p in run.glob("[0-9][0-9]-*.json"))
    for number, entry in enumerate(meta["otlp"], start=1):
        assert entry["file"].startswith(f"{number:02d}-")
        assert "authorization" not in entry["headers"]


@pytest.mark.parametrize("run", RUNS, ids=lambda run: f"{run.parent.name}/{run.name}")
def test_each_request_is_otlp_json_of_its_signal(run: Path) -> None:
    """Each accepted request holds the top-level list of the signal its path names."""
    meta = json.loads((run / "meta.json").read_text())
    for entry in meta["otlp"]:
        if entry["status"] != 200:
            continue
        body = json.loads((run / entry["file"]).read_text())
        assert _SIGNAL_KEYS[entry["path"].rsplit("/", 1)[1]] in body


def test_fixtures_name_no_host() -> None:
    """No fixture contains this machine's host name as a word."""
    host = socket.gethostname()
    if host in {"", "localhost", "lab-host"}:
        host = "\0"
    pattern = re.compile(rf"(?<![A-Za-z0-9]){re.escape(host)}(?![A-Za-z0-9])")
    assert [name for name, text in texts() if pattern.search(text)] == []


def test_fixtures_name_no_real_home_or_tmp() -> None:
    """No fixture contains a path in this user's real home or under /tmp/."""
    pattern = re.compile(rf"(?<![\w.-])(?:{re.escape(str(Path.home()))}|/tmp)/")
    assert [(name, m.group(0)) for name, text in texts() for m in pattern.finditer(text)] == []


def test_fixtures_have_times_on_the_lab_day_only() -> None:
    """Every ISO time and every *UnixNano time in a fixture is on 2026-01-01 (or 0)."""
    day = range(1_767_225_600 * 10**9, 1_767_312_000 * 10**9)
    for name, text in texts():
        assert {m.group(1) for m in _ISO_DAY.finditer(text)} <= {"2026-01-01"}, name
        assert all(int(m.group(1)) == 0 or int(m.group(1)) in day
                   for m in _NANOS.finditer(text)), name


def test_fixtures_name_no_kernel() -> None:
    """The machine's kernel release is replaced in every fixture."""
    release = Path("/proc/sys/kernel/osrelease")
    kernel = release.read_text().strip() if release.is_file() else KERNEL
    assert kernel == KERNEL or [name for name, text in texts() if kernel in text] == []
