"""Triage many files: each file's row and sessions in input order, in parallel processes.

Rules:

- :class:`FileResults` yields ``(InputResult, sessions)`` per input, in the order of the
  inputs, whatever the number of processes: a report built from them (terminal, ``--json``,
  ``--html``, ``--store``) is the same as a serial run's.
- ``jobs`` 1, a single input, or inputs of less than :data:`PARALLEL_MIN_BYTES` in all are read
  in this process: starting worker processes costs more than such a run.
- Otherwise ``min(jobs, inputs)`` worker processes read one file each at a time (forked on
  Linux, so they start with failcode already imported); at most :data:`AHEAD` files per worker
  are handed out beyond the next one to yield, so the results waiting behind a slow file stay
  bounded. Each worker ignores SIGINT: Ctrl-C stops the parent, which stops the workers.
- One input never costs the others: an error a worker's result raises (it could not be sent
  back) is that input's FC-DATA-003. A worker that dies (killed, out of memory) breaks the
  pool: the input next in order is read again alone in a fresh worker (FC-DATA-003 if that one
  dies too: it is the culprit), and the inputs after it go to a fresh pool.
- With a :class:`~failcode.triage.analysis._cache.Cache`, each input's key is taken before
  any is read; an input the cache holds is yielded from it (never handed to a worker, its
  size not counted towards :data:`PARALLEL_MIN_BYTES`), and each input read is stored in it
  by this process (not an input whose worker died, nor one read by path).
"""

from __future__ import annotations

import os
import sys
from collections import deque
from typing import TYPE_CHECKING, Any, Final

from failcode.triage.analysis._analyze import FileRead, triage_file_from, unexpected

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from concurrent.futures import Future, ProcessPoolExecutor
    from pathlib import Path
    from types import TracebackType
    from typing import TypeAlias

    from failcode.triage._result import InputResult, SessionResult
    from failcode.triage.analysis._cache import Cache, Key
    from failcode.triage.analysis._resume import Checkpoint

    Triaged: TypeAlias = tuple[InputResult, list[SessionResult]]

__all__ = ["AHEAD", "PARALLEL_MIN_BYTES", "FileResults", "default_jobs"]

PARALLEL_MIN_BYTES: Final = 1024 * 1024
"""Inputs smaller than this in all are triaged in this process whatever ``jobs`` says."""
AHEAD: Final = 16
"""Files handed out per worker beyond the next one to yield. With 4, a worker went idle
whenever the file next in order was a slow one (an aider history takes ~10x a trajectory's
time), and --jobs 2 gave 1.16x on the real sessions x4; with 16, 1.6x
(``bench/bench_triage_scale.py --only jobs``)."""


def default_jobs() -> int:
    """The number of CPU cores this process may use (at least 1)."""
    count = getattr(os, "process_cpu_count", None)
    found = count() if count is not None else None
    if found is None:
        try:
            found = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            found = os.cpu_count()
    return max(1, found or 1)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _ignore_interrupts() -> None:  # pragma: no cover - runs in the workers
    import signal  # noqa: PLC0415 - only in a worker

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _triage_one(path: Path, label: str, resume: Checkpoint | None, checkpoint: bool,
                ) -> FileRead:  # pragma: no cover - runs in the workers
    return triage_file_from(path, label, resume=resume, checkpoint=checkpoint)


def _crashed(label: str, exc: BaseException) -> InputResult:
    """The row of an input whose worker failed to give its result (FC-DATA-003)."""
    from concurrent.futures.process import BrokenProcessPool  # noqa: PLC0415

    from failcode import FC  # noqa: PLC0415
    from failcode.triage._result import InputResult  # noqa: PLC0415

    problem = ("the process reading it stopped (killed, or out of memory)"
               if isinstance(exc, BrokenProcessPool) else unexpected(exc))
    failure = FC.DATA_MALFORMED_INPUT.failure(surface="triage.input", params={
        "path": label, "problem": problem[:200]})
    return InputResult(label, None, 0, failure.code, failure.message, 0)


def _cacheable(item: InputResult) -> bool:
    """Whether an input's result may be kept: not one a reader reads by path (a database
    whose write-ahead log changes apart from it), not a failure of this machine's moment
    (out of memory)."""
    from failcode.triage.readers import READERS  # noqa: PLC0415

    if item.format is not None and any(
            reader.name == item.format and getattr(reader, "reads_path", False)
            for reader in READERS):
        return False
    return "MemoryError" not in (item.error_message or "")


class FileResults:
    """The files' results in input order; a context manager (it owns the worker processes).

    Worker processes start when it is created (before a caller starts threads of its own,
    such as a progress bar's), so a forked worker inherits no running thread.
    """

    def __init__(self, inputs: Sequence[tuple[Path, str]], *, jobs: int = 1,
                 progress: Callable[[int], None] | None = None,
                 cache: Cache | None = None) -> None:
        self._inputs = list(inputs)
        self._progress = progress
        self._pool: ProcessPoolExecutor | None = None
        self._pending: deque[tuple[Future[FileRead] | None, int]] = deque()
        """Futures handed out (None: an input the cache holds) and the index of their input."""
        self._next = 0
        self._cache = cache
        self._keys: list[Key | None] = [None] * len(self._inputs)
        self._found: list[bytes | None] = [None] * len(self._inputs)
        """The cache's entries of the inputs it holds, until they are yielded."""
        self._resume: list[Checkpoint | None] = [None] * len(self._inputs)
        """Where the last reading of each input that only grew since stopped."""
        self.resumed = 0
        """Inputs read from where the last run stopped (:mod:`._resume`)."""
        if cache is not None:
            found = cache.lookup(self._inputs, threads=max(2, jobs))
            self._keys = [item.key for item in found]
            self._found = [item.entry for item in found]
            self._resume = [item.resume for item in found]
        self._held = [entry is not None for entry in self._found]
        """Inputs whose entry the cache holds."""
        workers = min(jobs, len(self._inputs) - sum(self._held))
        self._workers = workers
        self._serial = workers < 2 or sum(
            _size(path) for (path, _), held in zip(self._inputs, self._held, strict=True)
            if not held) < PARALLEL_MIN_BYTES
        if not self._serial:
            self._start(workers)

    @property
    def cached(self) -> int:
        """How many inputs were taken from the cache so far."""
        return self._cache.hits if self._cache is not None else 0

    def _from_cache(self, index: int) -> Triaged | None:
        key, entry = self._keys[index], self._found[index]
        if self._cache is None or key is None or entry is None:
            return None
        self._found[index] = None
        found = self._cache.get(key, entry)
        if found is not None and self._progress is not None and found[0].size:
            self._progress(found[0].size)
        return found

    def _read(self, index: int) -> Triaged:
        """The input read in this process."""
        path, label = self._inputs[index]
        return self._store(index, triage_file_from(
            path, label, progress=self._progress, resume=self._resume[index],
            checkpoint=self._cache is not None))

    def _store(self, index: int, read: FileRead) -> Triaged:
        item, sessions, checkpoint, resumed = read
        key = self._keys[index]
        self.resumed += resumed
        if self._cache is not None and key is not None:
            self._cache.put(key, item, sessions, cacheable=_cacheable(item),
                            checkpoint=checkpoint)
        return item, sessions

    @property
    def parallel(self) -> bool:
        """True when the files are read by worker processes."""
        return not self._serial

    def _start(self, workers: int) -> None:
        from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415 - only in parallel

        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=self._context(),
                                         initializer=_ignore_interrupts)
        for _ in range(workers * (AHEAD + 1)):
            if not self._submit():
                break

    def _submit(self) -> bool:
        if self._pool is None or self._next >= len(self._inputs):
            return False
        while self._held[self._next]:  # read from the cache when its turn comes
            self._pending.append((None, self._next))
            self._next += 1
            if self._next >= len(self._inputs):
                return False
        path, label = self._inputs[self._next]
        self._pending.append((self._pool.submit(_triage_one, path, label,
                                                self._resume[self._next],
                                                self._cache is not None), self._next))
        self._next += 1
        return True

    def __iter__(self) -> Iterator[Triaged]:
        try:
            if self._serial:
                for index in range(len(self._inputs)):
                    found = self._from_cache(index)
                    yield found if found is not None else self._read(index)
                return
            while self._pending:
                future, index = self._pending.popleft()
                found = self._from_cache(index) if future is None else None
                if found is not None:
                    yield found
                    continue
                if future is None:  # the entry went bad since: read it here
                    yield self._read(index)
                    continue
                item, sessions = self._result(future, index)
                self._submit()
                if self._progress is not None and item.size:
                    self._progress(item.size)
                yield item, sessions
        finally:
            self.close()

    def _result(self, future: Future[FileRead], index: int) -> Triaged:
        """The input's result; whatever getting it raises is the input's error."""
        from concurrent.futures.process import BrokenProcessPool  # noqa: PLC0415

        path, label = self._inputs[index]
        try:
            return self._store(index, future.result())
        except BrokenProcessPool:
            again = self._alone(path, label)
            self._restart()
            return again
        except Exception as exc:  # noqa: BLE001 - this input's error, never the run's
            return _crashed(label, exc), []

    def _alone(self, path: Path, label: str) -> Triaged:
        """The input read again in a worker of its own (after a worker died)."""
        from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415

        pool = ProcessPoolExecutor(max_workers=1, mp_context=self._context(),
                                   initializer=_ignore_interrupts)
        try:
            read = pool.submit(_triage_one, path, label, None, False).result()
            return read.item, read.sessions
        except Exception as exc:  # noqa: BLE001 - it died again: this input is the culprit
            return _crashed(label, exc), []
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _restart(self) -> None:
        """A fresh pool for the inputs handed out to the broken one and those after them."""
        pending = [index for _, index in self._pending]
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool = None
        self._pending.clear()
        self._next = pending[0] if pending else self._next
        self._start(self._workers)

    @staticmethod
    def _context() -> Any:
        import multiprocessing  # noqa: PLC0415

        return multiprocessing.get_context("fork") if sys.platform.startswith(
            "linux") else None

    def close(self) -> None:
        """Stop the workers (files not yet read are dropped); keep the cache in its bound."""
        if self._cache is not None:
            self._cache.trim()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
            self._pending.clear()

    def __enter__(self) -> FileResults:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
