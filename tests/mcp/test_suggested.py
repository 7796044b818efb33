"""``failcode mcp``'s classify tool carries the learned suggestion (issue 39): it answers with
the service's classify door's answer, ``suggested`` included.

Real parts: a real tool's failure the rules leave unknown (run in a temporary folder), the
MCP server started as ``python -m failcode mcp``, the shipped model asked in the test.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests._needs import need_module
from tests.triage.test_suggested import Project, _unknown_run

if TYPE_CHECKING:
    from pathlib import Path

need_module("mcp")

from tests.mcp.test_server import one  # noqa: E402 - after the optional dependency's check


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def test_the_classify_tool_carries_the_suggestion(project: Project) -> None:
    """A command the rules leave unknown: the tool's suggested is what the model says of its
    command, exit status and output."""
    ran = _unknown_run(project)
    expected = ran.suggestion()
    assert expected is not None
    got = one("classify", command=ran.command, exit_status=ran.returncode, output=ran.stdout,
              stderr=ran.stderr).structured_content
    assert got is not None
    assert got["code"] == ran.failure.code
    assert got["suggested"] == expected.to_dict()
