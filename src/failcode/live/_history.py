"""The sessions' history: a small SQLite file in the user's state directory.

``$FAILCODE_STATE_DIR/live.db``, else ``platformdirs.user_state_dir("failcode")/live.db``
(``~/.local/state/failcode/live.db`` on Linux). One row per step an agent's hook saw, keyed
by the agent, its session id and the step's number in that session (counted here, from 0, in
the order the hooks ran); a failed step keeps its Failure as JSON. A tool call the hook saw
before (the same call id: failcode's hooks installed both for the user and the project) is
not counted twice.

Writers are the agent's parallel tool calls: each step is one ``BEGIN IMMEDIATE``
transaction, waiting at most the hook's time bound for the lock (then the hook answers
nothing). Sessions not seen for :data:`KEEP_DAYS` days are deleted when a session starts.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from failcode.record._failure import Failure

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["KEEP_DAYS", "History", "Step", "state_dir"]

KEEP_DAYS: Final = 14
_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS steps (
    agent TEXT NOT NULL,
    session TEXT NOT NULL,
    step INTEGER NOT NULL,
    call TEXT,
    failure TEXT,
    at REAL NOT NULL,
    PRIMARY KEY (agent, session, step)
);
CREATE UNIQUE INDEX IF NOT EXISTS steps_call ON steps (agent, session, call);
CREATE INDEX IF NOT EXISTS steps_at ON steps (at);
CREATE TABLE IF NOT EXISTS stops (
    agent TEXT NOT NULL,
    session TEXT NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (agent, session)
);
"""


def state_dir() -> Path:
    """Where failcode keeps the hooks' state (and its log)."""
    env = os.environ.get("FAILCODE_STATE_DIR")
    if env:
        return Path(env)
    import platformdirs  # noqa: PLC0415 - only the default path needs it

    return Path(platformdirs.user_state_dir("failcode"))


@dataclass(frozen=True, slots=True)
class Step:
    """One failed step of a session, as the history keeps it."""

    step: int
    failure: Failure


class History:
    """The history file, opened for one hook call (a context manager)."""

    def __init__(self, path: Path, *, timeout_s: float) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path, timeout=timeout_s, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self._db.close()

    def record(self, agent: str, session: str, call: str | None,
               failure: Failure | None) -> tuple[int, list[Step]] | None:
        """Count one step of ``session`` (its failure, if any) and return its number and the
        session's failed steps so far, this one included; None when the call was counted
        before."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            if call is not None and db.execute(
                    "SELECT 1 FROM steps WHERE agent=? AND session=? AND call=?",
                    (agent, session, call)).fetchone():
                db.execute("COMMIT")
                return None
            row = db.execute("SELECT MAX(step) FROM steps WHERE agent=? AND session=?",
                             (agent, session)).fetchone()
            step = 0 if row[0] is None else int(row[0]) + 1
            db.execute("INSERT INTO steps VALUES (?, ?, ?, ?, ?, ?)",
                       (agent, session, step, call,
                        None if failure is None else failure.to_json(), time.time()))
            failed = list(self._failed(agent, session))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return step, failed

    def _failed(self, agent: str, session: str) -> Iterator[Step]:
        for step, text in self._db.execute(
                "SELECT step, failure FROM steps WHERE agent=? AND session=? "
                "AND failure IS NOT NULL ORDER BY step", (agent, session)):
            yield Step(int(step), Failure.from_json(text))

    def hold(self, agent: str, session: str, reason: str) -> None:
        """Keep a stop for the session's next tool call (an agent that cannot stop from the
        hook after a failed call stops before its next one)."""
        self._db.execute("INSERT OR REPLACE INTO stops VALUES (?, ?, ?)", (agent, session, reason))

    def release(self, agent: str, session: str) -> str | None:
        """The stop held for the session, if any, taken (it is answered once: a person who
        resumes the session after fixing the cause is not stopped again)."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute("SELECT reason FROM stops WHERE agent=? AND session=?",
                             (agent, session)).fetchone()
            if row is not None:
                db.execute("DELETE FROM stops WHERE agent=? AND session=?", (agent, session))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return None if row is None else str(row[0])

    def prune(self, days: float = KEEP_DAYS) -> int:
        """Delete the sessions not seen for ``days`` days; how many steps went."""
        cutoff = time.time() - days * 86400
        cursor = self._db.execute(
            "DELETE FROM steps WHERE (agent, session) IN (SELECT agent, session FROM steps "
            "GROUP BY agent, session HAVING MAX(at) < ?)", (cutoff,))
        self._db.execute("DELETE FROM stops WHERE (agent, session) NOT IN "
                         "(SELECT agent, session FROM steps)")
        return cursor.rowcount

    def sessions(self) -> list[tuple[str, str, int, int]]:
        """Each session kept: agent, session id, steps, failed steps."""
        return [(str(a), str(s), int(n), int(f)) for a, s, n, f in self._db.execute(
            "SELECT agent, session, COUNT(*), COUNT(failure) FROM steps "
            "GROUP BY agent, session ORDER BY MAX(at) DESC")]
