"""open_store takes a pathlib.Path as the SQLite file it names (issue 36, item 9); any other
value that is no URL is FC-STORE-001 naming it and what is expected, never an AttributeError."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

import pytest

from failcode import FC
from failcode.events import failure_event
from failcode.events import open_store as open_events_store
from failcode.store import StoreError, open_store

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize("opener", [open_store, open_events_store])
@pytest.mark.parametrize("name", ["failcode.db", "store.sqlite"])
def test_a_path_opens_the_sqlite_file_it_names(tmp_path: Path, opener: Any,
                                               name: str) -> None:
    """A Path is the embedded store in the file it names: an event written through it is in
    that SQLite file and read back when the Path is opened again, read-only."""
    path = tmp_path / "stores" / name
    path.parent.mkdir()
    failure = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"})
    with opener(path) as store:
        store.emit(failure_event(failure, event="command.failed", session="s", step=0))
    assert path.is_file()
    with sqlite3.connect(path) as db:  # a real SQLite file
        assert db.execute("pragma integrity_check").fetchone() == ("ok",)
    with opener(path, read_only=True) as store:
        assert store.stats().events_stored == 1


@pytest.mark.parametrize("value", [42, b"failcode.db", ["failcode.db"]])
def test_any_other_value_is_store_001_naming_it(value: object) -> None:
    """A value that is neither a URL string nor a path is FC-STORE-001, naming the value, its
    type and what is expected."""
    with pytest.raises(StoreError) as caught:
        open_store(value)  # type: ignore[arg-type]
    failure = caught.value.failure
    assert failure.code == "FC-STORE-001"
    assert repr(value) in failure.message
    assert type(value).__name__ in failure.message
    assert "pathlib.Path" in failure.message
