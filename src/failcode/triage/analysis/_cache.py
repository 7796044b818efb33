"""Incremental triage: each input's results kept between runs, keyed by what identifies its content.

Rules:

- An entry is one file per input under the cache folder (``$FAILCODE_CACHE_DIR``, else
  ``platformdirs.user_cache_dir("failcode")/triage``: ``~/.cache/failcode/triage`` on Linux),
  named by a hash of the input's absolute path and its label (the label is in the results).
- It is used only when everything that identifies the content is unchanged: the path, the
  size, ``mtime_ns``, inode and device, a blake2b hash of the first and last 16 KiB (of the
  whole file when smaller), failcode's ``__version__`` and a fingerprint of the code that makes the
  results (a hash of the files of ``failcode.triage``, ``classification``, ``codes``,
  ``signature`` and ``record``: any rule changed in a checkout changes it), and the same for
  a Harbor trial's ``result.json`` read beside its ``agent/trajectory.json``.
- The key is taken before the input is read: a file that changes while it is read is stored
  under its old identity, so the next run misses and reads it again.
- Not cached: folders (an OpenHands V1 conversation), inputs read by path (OpenCode's SQLite
  database: its write-ahead log changes without it), standard input, inputs that cannot be
  opened, and results that cannot be encoded.
- An entry that is corrupt, truncated, of another version or unreadable is a miss, never an
  error or a wrong result (msgpack decoded into the typed results, never pickle; a record that
  breaks an invariant fails its own validation), and each entry carries a hash of itself, so
  a flipped bit that would still decode is a miss too. Writes go to a temporary file, then
  ``os.replace``: concurrent runs and a killed one never leave a torn entry.
- A file that only grew (same path, inode and device; its old bytes hash the same at both
  edges) is read from where the last run stopped when its entry holds a checkpoint
  (:mod:`failcode.triage.analysis._resume`: Claude Code transcripts, Codex rollouts); else it
  is read whole.
- Bounded: after a run that wrote entries, the oldest used (an entry's modification time,
  touched on every hit) are removed until the folder holds at most :data:`MAX_BYTES`
  (``$FAILCODE_CACHE_MAX_MB`` to change it).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Final, NamedTuple

import msgspec

from failcode.triage._result import InputResult, SessionResult
from failcode.triage.analysis._resume import EDGE, Checkpoint, edges

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import TypeAlias

    Triaged: TypeAlias = tuple[InputResult, list[SessionResult]]

__all__ = ["EDGE", "MAX_BYTES", "Cache", "Found", "cache_dir", "code_hash", "fingerprint"]

MAX_BYTES: Final = 512 * 1024 * 1024
"""The cache folder's bound (512 MiB) unless ``$FAILCODE_CACHE_MAX_MB`` says otherwise."""
_TOUCH_AFTER: Final = 3600.0
"""An entry used is marked so (its modification time, which eviction orders by) when it was
last marked more than this many seconds ago: a warm run does not rewrite every entry's inode."""
SCHEMA: Final = 2
"""The entry layout; another is a miss."""
_PARTS: Final = ("triage", "classification", "codes", "signature", "record")


def cache_dir() -> Path:
    """``$FAILCODE_CACHE_DIR``, else the user's cache folder's ``failcode/triage``."""
    chosen = os.environ.get("FAILCODE_CACHE_DIR", "").strip()
    if chosen:
        return Path(chosen)
    import platformdirs  # noqa: PLC0415 - only the default path needs it

    return Path(platformdirs.user_cache_dir("failcode")) / "triage"


def _max_bytes() -> int:
    try:
        return max(0, int(float(os.environ["FAILCODE_CACHE_MAX_MB"]) * 1024 * 1024))
    except (KeyError, ValueError):
        return MAX_BYTES


_FINGERPRINT: list[str] = []


def fingerprint() -> str:
    """failcode's version and a hash of the code that makes triage's results (once per
    process: about 10 ms)."""
    if _FINGERPRINT:
        return _FINGERPRINT[0]
    import failcode  # noqa: PLC0415

    code = code_hash(Path(failcode.__file__).parent)
    _FINGERPRINT.append(f"{failcode.__version__}/{code}")
    return _FINGERPRINT[0]


def code_hash(root: Path) -> str:
    """A hash of the files under the package folder ``root`` that make triage's results: its
    own modules and every file of :data:`_PARTS` (bytecode left out)."""
    digest = hashlib.blake2b(digest_size=16)
    files = list(root.glob("*.py"))
    for part in _PARTS:
        files += [p for p in (root / part).rglob("*")
                  if "__pycache__" not in p.parts and p.suffix != ".pyc"]
    for path in sorted(files):
        with contextlib.suppress(OSError):
            if path.is_file():
                digest.update(path.relative_to(root).as_posix().encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


class Key(msgspec.Struct, frozen=True, array_like=True):
    """What identifies an input's content (see the module's rules)."""

    path: str
    label: str
    size: int
    mtime_ns: int
    inode: int
    device: int
    edges: bytes
    """blake2b of the first and last :data:`EDGE` bytes."""
    companion: tuple[int, int, bytes] | None = None
    """A Harbor trial's ``result.json``: size, mtime_ns and hash; None when there is none."""


class _Entry(msgspec.Struct, array_like=True):
    schema: int
    fingerprint: str
    key: Key
    item: InputResult
    sessions: list[SessionResult]
    checkpoint: Checkpoint | None = None


class _Results(msgspec.Struct, array_like=True):
    """An entry with its checkpoint left undecoded (a hit needs only the results)."""

    schema: int
    fingerprint: str
    key: Key
    item: InputResult
    sessions: list[SessionResult]
    checkpoint: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)


class _Resumable(msgspec.Struct, array_like=True):
    """An entry with only its checkpoint decoded (the results are not needed to resume)."""

    schema: int
    fingerprint: str
    key: Key
    item: msgspec.Raw
    sessions: msgspec.Raw
    checkpoint: Checkpoint | None = None


class _Head(msgspec.Struct, array_like=True):
    """The start of an entry, decoded first (a foreign one stops there)."""

    schema: int
    fingerprint: str
    key: Key


def _identity(path: Path, at: int | None = None) -> tuple[os.stat_result, bytes] | None:
    """The file's status and edge hash (as of byte ``at``, else of its whole size), taken
    from one open file; None for anything that is not a regular file that can be read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        return info, edges(fd, info.st_size if at is None else at)
    except OSError:
        return None
    finally:
        os.close(fd)


def _companion(path: Path) -> tuple[int, int, bytes] | None:
    """The identity of the file a reader consults beside the input: a Harbor trial's
    ``result.json`` next to the ``agent/`` folder of ``agent/trajectory.json``."""
    if path.parent.name != "agent":
        return None
    found = _identity(path.parent.parent / "result.json")
    if found is None:
        return None
    info, edges = found
    return info.st_size, info.st_mtime_ns, edges


class Found(NamedTuple):
    """What the cache holds for an input."""

    key: Key | None
    """None: the input is not cached (:meth:`Cache.key`)."""
    entry: bytes | None = None
    """The entry of this very key (its body), to be decoded by :meth:`Cache.get`."""
    resume: Checkpoint | None = None
    """Where the last reading of this file stopped, when it only grew since."""


_SUM: Final = 16
"""An entry starts with the blake2b hash of the rest (this many bytes)."""


def _checksum(body: bytes) -> bytes:
    return hashlib.blake2b(body, digest_size=_SUM).digest()


_ENCODER: Final = msgspec.msgpack.Encoder()
_HEAD: Final = msgspec.msgpack.Decoder(_Head)
_ENTRY: Final = msgspec.msgpack.Decoder(_Entry)
_RESUMABLE: Final = msgspec.msgpack.Decoder(_Resumable)
_RESULTS: Final = msgspec.msgpack.Decoder(_Results)


class Cache:
    """The cache folder, as one run uses it: look an input up, store its results.

    Nothing it does raises for the cache's sake: a folder that cannot be written leaves the
    run uncached.
    """

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = cache_dir() if folder is None else folder
        self.fingerprint = fingerprint()
        self.hits = 0
        """Inputs this run took from the cache."""
        self.written = 0
        self._names: dict[tuple[str, str], str] = {}
        self._used: dict[tuple[str, str], float] = {}
        """When each entry found was last marked used (its modification time)."""

    def key(self, path: Path, label: str) -> Key | None:
        """The input's key, or None when it is not cached (folders, unreadable, stdin...)."""
        if label == "<stdin>":
            return None
        absolute = str(path.absolute())  # the inode and device say which file it is
        found = _identity(path)
        if found is None:
            return None
        info, edges = found
        return Key(absolute, label, info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev,
                   edges, _companion(path))

    def _entry_path(self, key: Key) -> str:
        name = self._names.get((key.path, key.label))
        if name is None:
            digest = hashlib.blake2b(f"{key.path}\0{key.label}".encode("utf-8", "surrogatepass"),
                                     digest_size=20).hexdigest()
            name = self._names[key.path, key.label] = f"{self.folder}/{digest[:2]}/{digest}"
        return name  # a string: an entry's path is made once per input, without pathlib

    def find(self, key: Key) -> Found:
        """The entry of ``key`` if it is whole (its hash matches) and for this key, fingerprint
        and layout (its head only decoded); else the checkpoint of an entry for the same file
        that only grew since (:meth:`_grown`); neither: a miss."""
        try:
            with open(self._entry_path(key), "rb") as handle:  # noqa: PTH123 - one str path
                data = handle.read()
                self._used[key.path, key.label] = os.fstat(handle.fileno()).st_mtime
        except OSError:
            return Found(key)
        body = data[_SUM:]
        if data[:_SUM] != _checksum(body):
            return Found(key)  # damaged (a bit flipped that would still decode is caught here)
        try:
            head = _HEAD.decode(body)
        except Exception:  # noqa: BLE001 - a damaged entry is a miss
            return Found(key)
        if head.schema != SCHEMA or head.fingerprint != self.fingerprint:
            return Found(key)
        if head.key != key:
            return Found(key, None, self._grown(key, head.key, body))
        return Found(key, body)

    @staticmethod
    def _grown(key: Key, old: Key, body: bytes) -> Checkpoint | None:
        """The checkpoint of the entry ``body`` (for ``old``) when the file ``key`` identifies
        is the same file, grown past the checkpoint with the bytes before it unchanged at
        both edges (:mod:`failcode.triage.analysis._resume`'s rules); else None."""
        if (old.path, old.label, old.inode, old.device, old.companion) != (
                key.path, key.label, key.inode, key.device, key.companion) or key.size <= old.size:
            return None
        try:
            checkpoint = _RESUMABLE.decode(body).checkpoint
        except Exception:  # noqa: BLE001 - damaged: read the file whole
            return None
        if checkpoint is None or not 0 < checkpoint.offset < key.size:
            return None
        found = _identity(Path(key.path), checkpoint.offset)
        return checkpoint if found is not None and found[1] == checkpoint.edges else None

    def lookup(self, inputs: Sequence[tuple[Path, str]], *, threads: int = 2) -> list[Found]:
        """Each input's key and what the cache holds for it (:meth:`find`), taken by
        ``threads`` threads (reading and hashing release the GIL), all finished when it
        returns."""
        def one(item: tuple[Path, str]) -> Found:
            key = self.key(*item)
            return self.find(key) if key is not None else Found(None)

        if threads < 2 or len(inputs) < 16:
            return [one(item) for item in inputs]
        from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

        with ThreadPoolExecutor(threads) as pool:
            return list(pool.map(one, inputs, chunksize=8))

    def get(self, key: Key, found: bytes | None = None) -> Triaged | None:
        """The stored results of the input ``key`` identifies (from its entry ``found`` by
        :meth:`find`, else read now), or None (a miss)."""
        body = self.find(key).entry if found is None else found
        if body is None:
            return None
        try:
            entry = _RESULTS.decode(body)
        except Exception:  # noqa: BLE001 - corrupt, truncated, foreign: a miss
            return None
        if (entry.schema != SCHEMA or entry.fingerprint != self.fingerprint
                or entry.key != key):
            return None
        used = self._used.get((key.path, key.label))
        if used is None or time.time() - used > _TOUCH_AFTER:
            with contextlib.suppress(OSError):  # used now: evicted last
                os.utime(self._entry_path(key))
        self.hits += 1
        return entry.item, entry.sessions

    def put(self, key: Key, item: InputResult, sessions: list[SessionResult],
            *, cacheable: bool = True, checkpoint: Checkpoint | None = None) -> None:
        """Store an input's results under ``key`` (taken before reading it), with where its
        reading stopped; atomic."""
        if not cacheable:
            return
        try:
            body = _ENCODER.encode(_Entry(SCHEMA, self.fingerprint, key, item, sessions,
                                          checkpoint))
            data = _checksum(body) + body
        except Exception:  # noqa: BLE001 - results msgpack cannot hold: not cached
            return
        target = Path(self._entry_path(key))
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        except OSError:
            return
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            Path(temp).replace(target)
            self.written += 1
        except OSError:
            with contextlib.suppress(OSError):
                Path(temp).unlink()

    def trim(self) -> None:
        """Remove the entries used longest ago until the folder is within its bound (only
        after a run that wrote entries)."""
        if not self.written:
            return
        self.written = 0
        entries: list[tuple[int, int, str]] = []
        try:
            for sub in os.scandir(self.folder):
                if not sub.is_dir(follow_symlinks=False):
                    continue
                for item in os.scandir(sub.path):
                    with contextlib.suppress(OSError):
                        info = item.stat(follow_symlinks=False)
                        entries.append((info.st_mtime_ns, info.st_size, item.path))
        except OSError:
            return
        total = sum(size for _, size, _ in entries)
        bound = _max_bytes()
        for _, size, name in sorted(entries):
            if total <= bound:
                break
            with contextlib.suppress(OSError):
                Path(name).unlink()
                total -= size
