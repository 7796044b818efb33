"""The README is a front door: short, with the parts a newcomer looks for, the rest in docs/."""

from __future__ import annotations

import re

from tests._paths import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def test_the_readme_reads_in_three_minutes() -> None:
    """Under about 12,000 characters (what a reader gets through in three minutes)."""
    assert len(README) < 12_000, len(README)


def test_the_readme_has_what_a_newcomer_looks_for() -> None:
    """Quick start, triage of one's own agents (a table of where each agent logs), the library
    in a few lines, links into docs/, and every local link resolves."""
    headings = re.findall(r"^## (.+)$", README, re.MULTILINE)
    assert headings[0] == "Quick start"
    assert {"Triage your own agents", "The library in ten lines", "Documentation"} <= set(
        headings)
    triage = README.split("## Triage your own agents", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"^\|.*\|.*\|$", triage, re.MULTILINE), "no table of log locations"
    for target in re.findall(r"\]\(((?:docs|bench|deploy)/[^)#]+)", README):
        assert (REPO / target).exists(), target
