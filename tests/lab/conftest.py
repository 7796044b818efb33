"""The lab's scores go into pytest's terminal summary, so every run shows them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import pytest

SCORES: Final[list[str]] = []
"""Lines the scoring tests add (agent, checks passed, share)."""


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if SCORES:
        terminalreporter.section("session lab: ground-truth checks triage passes, per agent")
        for line in SCORES:
            terminalreporter.write_line(line)
