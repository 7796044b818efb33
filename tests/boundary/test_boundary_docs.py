"""docs/boundaries.md shows the boundary table as the code declares it."""

from __future__ import annotations

from failcode.boundary import boundaries_markdown
from tests._paths import REPO

DOCS = REPO / "docs" / "boundaries.md"


def test_docs_table_matches_the_code() -> None:
    """The table section of docs/boundaries.md is the generated table, unchanged."""
    text = DOCS.read_text(encoding="utf-8")
    assert text.endswith(boundaries_markdown()), (
        "docs/boundaries.md is stale: replace its table with "
        "failcode.boundary.boundaries_markdown()")
