"""Keep an agent's SQLite session database in a fixture, normalized like the session files.

Rules (what :func:`keep_database` writes):

- Every table and index of the source is created again from its own ``CREATE`` statement (the
  agent's schema, unchanged); rows are copied table by table in ``rowid`` order.
- Every text cell goes through the run's :class:`~tests.lab.normalize.Normalizer` (paths, port,
  host, UUIDs, hex ids, times: the rules of the session files, so a JSON cell stays valid
  JSON); a 13-digit integer in a column named ``time_*`` (epoch milliseconds) becomes
  2026-01-01 plus one second per distinct instant, in the same order, so ordering by time
  survives and the values do not.
- The copy is one file (no write-ahead log) of 512-byte pages, vacuumed; the source is opened
  read-only (its write-ahead log read too) and never written.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Final

from failcode.triage.readers._opencode_db import open_read_only

if TYPE_CHECKING:
    from pathlib import Path

    from tests.lab.normalize import Normalizer

BASE_MS: Final = 1_767_225_600_000
"""2026-01-01T00:00:00Z in milliseconds."""


def _is_epoch_ms(column: str, value: object) -> bool:
    return (column.startswith("time_") and isinstance(value, int)
            and 10**12 <= value < 10**13)


def keep_database(source: Path, target: Path, normalizer: Normalizer) -> None:
    """Write the normalized copy of the database ``source`` to ``target`` (see the rules)."""
    with open_read_only(source) as connection:
        schema = connection.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
            "AND name NOT LIKE 'sqlite_%' ORDER BY type = 'index', rowid").fetchall()
        tables: list[tuple[str, list[str], list[tuple[object, ...]]]] = []
        for kind, name, _ in schema:
            if kind != "table":
                continue
            cursor = connection.execute(f'SELECT * FROM "{name}" ORDER BY rowid')
            columns = [d[0] for d in cursor.description]
            tables.append((name, columns, cursor.fetchall()))
    texts = [value for _, _, rows in tables for row in rows for value in row
             if isinstance(value, str)]
    normalized = iter(normalizer.texts(texts))
    instants = sorted({value for _, columns, rows in tables for row in rows
                       for column, value in zip(columns, row, strict=True)
                       if _is_epoch_ms(column, value)})
    rank = {instant: BASE_MS + 1000 * n for n, instant in enumerate(instants)}
    target.unlink(missing_ok=True)
    out = sqlite3.connect(target)
    try:
        out.execute("PRAGMA page_size = 512")  # the smallest: a fixture of a few pages
        for _, _, sql in schema:
            out.execute(sql)
        for name, columns, rows in tables:
            marks = ", ".join("?" * len(columns))
            out.executemany(f'INSERT INTO "{name}" VALUES ({marks})', [
                tuple(next(normalized) if isinstance(value, str) else
                      rank[value] if _is_epoch_ms(column, value) else value
                      for column, value in zip(columns, row, strict=True))
                for row in rows])
        out.commit()
        out.execute("VACUUM")
    finally:
        out.close()
