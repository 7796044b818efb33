"""The documentation stands alone: a pip user has no design notes and no seed documents."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from tests._paths import REPO

if TYPE_CHECKING:
    from pathlib import Path

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")),
         *sorted((REPO / "src").rglob("*.py")), *sorted((REPO / "examples").glob("*.py"))]
OUTSIDE = re.compile(r"DESIGN\.md|\.\./shared|shared/seeds|seeds/|STYLE\.md"
                     r"|\b[Ss]eed 00\d\b|§\s?\d")


@pytest.mark.parametrize("path", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_no_reference_to_material_a_user_does_not_have(path: Path) -> None:
    """README, docs, docstrings and examples never send the reader to the design notes, the
    seed documents or the shared folder beside the repository."""
    text = path.read_text(encoding="utf-8")
    found = [f"line {text.count(chr(10), 0, m.start()) + 1}: {m.group()}"
             for m in OUTSIDE.finditer(text)]
    assert not found
