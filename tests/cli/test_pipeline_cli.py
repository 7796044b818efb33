"""`failcode pipeline validate|dry-run|show` and the demo's trace, through the console script."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests._paths import REPO, TESTS
from tests.cli._console import failcode

pytest.importorskip("pydantic")


@pytest.fixture(scope="module")
def demo_trace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The worked example's trace, written where it was told, and the demo's stderr."""
    trace = tmp_path_factory.mktemp("demo") / "trace.json"
    done = subprocess.run([sys.executable, str(REPO / "examples" / "pipeline_demo.py"),
                           str(trace)], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 1, done.stderr  # the demo's run aborts
    return trace, done.stderr


def test_show_prints_the_timeline(demo_trace: tuple[Path, str]) -> None:
    """`failcode pipeline show` lists the phases in order, the retry, the veto and the stop."""
    trace, _ = demo_trace
    result = failcode("pipeline", "show", str(trace))
    assert result.returncode == 0, result.stderr
    text = result.stdout
    phases = re.findall(r"^\s+\d+  (\w+)", text, re.MULTILINE)
    # the demo: plan, execute (a transient retry), judge, verify (a veto), execute, abort
    assert phases == ["init", "plan", "execute", "judge", "verify", "execute", "aborted"]
    assert re.search(r"executor failed: TRANSIENT .* -> retry after", text)
    assert "VETO by verifier" in text
    assert text.splitlines()[-2].startswith("stop: fatal_failure")
    assert text.splitlines()[-1] == ("counts: 1 retry, 1 veto, 1 failure artifact, "
                                     "4 model calls")


def test_demo_prints_the_same_timeline(demo_trace: tuple[Path, str]) -> None:
    """The demo says where it wrote the trace and prints the timeline `show` prints."""
    trace, stderr = demo_trace
    assert f"trace written to {trace}" in stderr
    assert failcode("pipeline", "show", str(trace)).stdout in stderr


def test_demo_default_trace_goes_to_a_temporary_directory(tmp_path: Path) -> None:
    """Without a path the demo writes into a new temporary directory and prints the path."""
    done = subprocess.run([sys.executable, str(REPO / "examples" / "pipeline_demo.py")],
                          cwd=tmp_path, capture_output=True, text=True, check=False, timeout=120)
    match = re.search(r"trace written to (\S+)", done.stderr)
    assert match is not None, done.stderr
    written = Path(match.group(1))
    assert written.is_file()
    assert not list(tmp_path.iterdir())  # nothing left in the working directory
    written.unlink()
    written.parent.rmdir()


def test_show_of_an_invalid_trace_exits_2() -> None:
    """An invalid trace is an invalid input: exit 2 with the problem named, no timeline."""
    result = failcode("pipeline", "show",
                      str(TESTS / "fixtures" / "pipeline_traces" / "missing_phase.json"))
    assert result.returncode == 2
    assert "[FC-LIFE-007]" in result.stderr
    assert result.stdout == ""


def test_show_of_a_missing_file_exits_2(tmp_path: Path) -> None:
    """A trace path that does not exist exits 2 (FC-LIFE-008)."""
    result = failcode("pipeline", "show", str(tmp_path / "nope.json"))
    assert result.returncode == 2
    assert "[FC-LIFE-008]" in result.stderr


def test_validate_prints_json(demo_trace: tuple[Path, str]) -> None:
    """`failcode pipeline validate` prints the final status as JSON and exits 0."""
    trace, _ = demo_trace
    result = failcode("pipeline", "validate", str(trace))
    assert result.returncode == 0
    document = json.loads(result.stdout)
    assert (document["valid"], document["final"]["stop_reason"]) == (True, "fatal_failure")


def test_dry_run_of_the_sample_input() -> None:
    """The sample examples/input.json passes a dry run."""
    result = failcode("pipeline", "dry-run", str(REPO / "examples" / "input.json"))
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["dry_run"] is True
    assert document["input"]["context_id"] == "ctx-ci-1234"


def test_python_m_pipeline_show_still_works(demo_trace: tuple[Path, str]) -> None:
    """`python -m failcode.pipeline show` prints the same timeline."""
    trace, _ = demo_trace
    done = subprocess.run([sys.executable, "-m", "failcode.pipeline", "show", str(trace)],
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0
    assert done.stdout == failcode("pipeline", "show", str(trace)).stdout
