"""Make a session file a fixture: no machine named, stable bytes.

Rules, applied to the text of every file an agent wrote (JSON or Markdown alike, so one pass
serves every format and a JSON file stays valid JSON):

- The run's own folders become fixed paths: the project ``/lab/project``, HOME ``/lab/home``,
  TMPDIR ``/lab/tmp``, the agent's install ``/lab/agent``, the Python running the lab
  ``/lab/python``, the user's real home ``/lab/user``; also in Claude Code's folder-name form
  (every character but a letter or digit as ``-``).
- Paths are replaced as whole names only (``/root`` is not the start of ``/rootfs``).
- The stub's port becomes ``8765``; the host name, as a word, ``lab-host`` (agents run as user
  ``lab``: ``USER`` and ``LOGNAME`` are set so).
- Every UUID becomes ``00000000-0000-4000-8000-<n>``, numbered by first appearance; every other
  long hex id (16 or more hex digits with a digit and a letter) ``<n>`` hex digits the same way.
- Date folders (``2026/12/01/``, Codex's) become ``2026/01/01/``; an 8-hex-digit token that
  begins one of the run's UUIDs (Gemini's file names) begins its replacement.
- Every ISO-8601 time (``2026-12-01T18:40:12.345Z``, with ``T`` or ``-`` between date and time,
  as in Gemini's file names) becomes a time on 2026-01-01, in the same order: the n-th distinct
  instant is 00:00:00 plus n seconds, so order survives, values do not. A time is never the
  start of a longer token (Gemini's ``T18-40-12c23fbc`` is minutes, then an id), and a zone
  written without a colon is no zone when a hex id follows (Codex's ``T18-40-12-0199d4a2-...``).
  A date in words (``Tuesday, December 1, 2026``) becomes ``Thursday, January 1, 2026``.
- Epoch times in milliseconds (13 digits) and seconds (10 digits from 2017 on) keyed by a name
  with ``time``/``created``/``updated``/``ts``/``stamp``/``_at`` become 2026-01-01 (the order
  lives in the ISO times), and durations keyed by a name with ``duration``/``elapsed``/
  ``_ms``/``Ms``/``latency`` become 0; Gemini's ``Process Group PGID: N`` and
  ``pid``/``pgid``/``process_id`` values become 4242; Codex's ``current_date`` (in its
  environment context and its settings) becomes 2026-01-01, its ``Chunk ID: x`` and
  ``Wall time: N seconds`` ``000000`` and ``0.0000``.

Re-normalizing a normalized file changes nothing (tested).
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Final

LAB_PORT: Final = "8765"

_UUID: Final = re.compile(
    r"(?<![0-9a-fA-F])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
    r"[0-9a-fA-F]{12}(?![0-9a-fA-F])")
_HEX: Final = re.compile(r"(?<![0-9A-Za-z_])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{16,}"
                         r"(?![0-9A-Za-z_])")
_ISO: Final = re.compile(
    r"(?<!\d)(\d{4})-(\d{2})-(\d{2})([T ]|-(?=\d{2}-\d{2}))(\d{2})[:-](\d{2})"
    r"(?:[:-](\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}|[+-]\d{4}(?![0-9A-Za-z-]))?"
    r"(?![0-9A-Za-z])")
_LONG_DATE: Final = re.compile(
    r"\b(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, (?:January|February|March|April|May|June|"
    r"July|August|September|October|November|December) \d{1,2}, \d{4}\b")
_EPOCH: Final = re.compile(
    r'("[A-Za-z_]*(?:[tT]ime|[cC]reated|[uU]pdated|ts|[sS]tamp|_at|At)[A-Za-z_]*"\s*:\s*)'
    r"(1[5-9]\d{8}|1[5-9]\d{11})(\.\d+)?(?!\d)")
_DURATION: Final = re.compile(
    r'("[A-Za-z_]*(?:[dD]uration|[eE]lapsed|_ms|Ms|[lL]atency|_secs|_seconds)[A-Za-z_]*"'
    r"\s*:\s*)(\d+(?:\.\d+)?)")
_DAY_FOLDER: Final = re.compile(r"(?<!\d)20\d\d/[01]\d/[0-3]\d(?=/)")
_CODEX_RUN: Final = re.compile(r"(Chunk ID: )[0-9a-f]+|(Wall time: )[0-9.]+( seconds)")
_PID: Final = re.compile(r'(PGID: |"(?:pid|pgid|process_id)"\s*:\s*"?)\d+')
_CURRENT_DATE: Final = re.compile(
    r'(<current_date>|"current_date"\s*:\s*")20\d\d-[01]\d-[0-3]\d(?=</current_date>|")')


@dataclass(slots=True)
class Normalizer:
    """One run's replacements; keeps its numbering across the files of that run."""

    paths: dict[str, str]
    port: int | None = None
    uuids: dict[str, str] = field(default_factory=dict)
    hexes: dict[str, str] = field(default_factory=dict)
    instants: dict[str, str] = field(default_factory=dict)

    def _literal(self, text: str) -> str:
        pairs: dict[str, str] = {}
        for real, fake in self.paths.items():
            if not real or real == "/":
                continue
            pairs[real] = fake
            dashed = re.sub(r"[^A-Za-z0-9]", "-", real)
            pairs[dashed] = re.sub(r"[^A-Za-z0-9]", "-", fake)
        if pairs:  # whole path names only: /root is not the start of /rootfs or --rootdir
            pattern = "|".join(re.escape(real) for real in sorted(pairs, key=len, reverse=True))
            text = re.sub(rf"(?<![A-Za-z0-9_])(?:{pattern})(?![A-Za-z0-9_])",
                          lambda m: pairs[m.group(0)], text)
        if self.port is not None:
            text = re.sub(rf"(127\.0\.0\.1|localhost):{self.port}(?!\d)",
                          rf"\1:{LAB_PORT}", text)
        host = socket.gethostname()
        if host and host not in ("lab-host", "localhost"):
            text = re.sub(rf"(?<![\w.-]){re.escape(host)}(?![\w-])", "lab-host", text)
        return text

    def _uuid(self, match: re.Match[str]) -> str:
        value = match.group(0).lower()
        if value.startswith("00000000-0000-4000-8000-"):
            return value
        if value not in self.uuids:
            self.uuids[value] = f"00000000-0000-4000-8000-{len(self.uuids) + 1:012d}"
        return self.uuids[value]

    def _uuid_prefixes(self, text: str) -> str:
        """An 8-hex token that begins a UUID of the run (Gemini's file names) is that UUID's
        replacement's beginning."""
        prefixes = {real[:8]: fake[:8] for real, fake in self.uuids.items()}
        if not prefixes:
            return text
        return re.sub(r"(?<![0-9a-f])[0-9a-f]{8}(?![0-9a-f-])",
                      lambda m: prefixes.get(m.group(0), m.group(0)), text)

    def _hex(self, match: re.Match[str]) -> str:
        value = match.group(0)
        if value not in self.hexes:
            number = f"{len(self.hexes) + 1:x}"
            self.hexes[value] = "0" * (len(value) - len(number) - 1) + "f" + number
        return self.hexes[value]

    def _collect_instants(self, texts: list[str]) -> None:
        found: set[tuple[datetime, str]] = set()
        for text in texts:
            for match in _ISO.finditer(text):
                instant = _parse_iso(match)
                if instant is not None:
                    found.add((instant, match.group(0)))
        base = datetime(2026, 1, 1, tzinfo=UTC)
        order = sorted({instant for instant, _ in found})
        if order and order[0].year == 2026 and order[0].month == 1 and order[0].day == 1:
            return  # already normalized
        rank = {instant: n for n, instant in enumerate(order)}
        for instant, raw in found:
            fake = base + timedelta(seconds=rank[instant])
            self.instants[raw] = _format_like(raw, fake)

    def _iso(self, match: re.Match[str]) -> str:
        return self.instants.get(match.group(0), match.group(0))

    def texts(self, texts: list[str]) -> list[str]:
        """Normalize the files of one run together (one numbering for all of them)."""
        texts = [self._literal(text) for text in texts]
        self._collect_instants(texts)
        texts = [_ISO.sub(self._iso, text) for text in texts]
        texts = [_UUID.sub(self._uuid, text) for text in texts]  # every file's, before prefixes
        return [self._uuid_prefixes(self._volatile(text)) for text in texts]

    def _volatile(self, text: str) -> str:
        text = _LONG_DATE.sub("Thursday, January 1, 2026", text)
        text = _CURRENT_DATE.sub(lambda m: m.group(1) + "2026-01-01", text)
        text = _EPOCH.sub(lambda m: m.group(1) + _epoch_fake(m.group(2)), text)
        text = _DURATION.sub(lambda m: m.group(1) + "0", text)
        text = _PID.sub(lambda m: m.group(1) + "4242", text)
        text = _HEX.sub(self._hex, text)
        text = _DAY_FOLDER.sub("2026/01/01", text)
        return _CODEX_RUN.sub(lambda m: f"{m.group(1)}000000" if m.group(1)
                              else f"{m.group(2)}0.0000{m.group(3)}", text)

    def name(self, relative: str) -> str:
        """A file's path inside the run's HOME, normalized like its content."""
        return self.texts([relative])[0]


def _parse_iso(match: re.Match[str]) -> datetime | None:
    year, month, day, _, hour, minute, second, fraction, zone = match.groups()
    try:
        instant = datetime(int(year), int(month), int(day), int(hour), int(minute),
                           int(second or 0), tzinfo=UTC)
    except ValueError:
        return None
    if fraction:
        instant += timedelta(microseconds=int(float(fraction) * 1_000_000))
    del zone  # every agent here writes UTC or local time of a UTC machine
    return instant


def _format_like(raw: str, fake: datetime) -> str:
    """``fake`` written in the shape of ``raw`` (separators, precision, zone kept)."""
    match = _ISO.fullmatch(raw)
    assert match is not None
    _, _, _, sep, _, _, second, fraction, zone = match.groups()
    time_sep = ":" if ":" in raw[11:] or (sep in ("T", " ") and "-" not in raw[13:16]) else "-"
    text = f"{fake:%Y-%m-%d}{sep}{fake:%H}{time_sep}{fake:%M}"
    if second is not None:
        text += f"{time_sep}{fake:%S}"
    if fraction:
        text += "." + "0" * (len(fraction) - 1)
    return text + (zone or "")


def _epoch_fake(raw: str) -> str:
    base = 1_767_225_600  # 2026-01-01T00:00:00Z
    return str(base * 1000) if len(raw) == 13 else str(base)
