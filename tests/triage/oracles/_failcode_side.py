"""What failcode's reader yields for one file: sessions, their steps, commands and statuses."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from failcode.triage._events import Command, SessionEnd, SessionStart
from failcode.triage.analysis._analyze import _Events
from failcode.triage.readers import HEAD_BYTES, READERS

if TYPE_CHECKING:
    from pathlib import Path
    from typing import BinaryIO

    from failcode.triage._events import Event


@dataclass
class Session:
    """One session as failcode's reader yields it."""

    name: str | None
    steps: int = 0
    commands: list[Command] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)


def reader_name(path: Path) -> str | None:
    """The format failcode detects for ``path`` (its reader's name), or None."""
    with path.open("rb") as stream:
        head = stream.read(HEAD_BYTES)
    return next((reader.name for reader in READERS if reader.sniff(head)), None)


def read_sessions(path: Path, format_name: str) -> list[Session]:
    """The sessions the reader named ``format_name`` yields for ``path``, in order."""
    reader = next(r for r in READERS if r.name == format_name)
    out: list[Session] = []
    if path.is_dir():  # an OpenHands V1 conversation folder: its events as triage joins them
        stream: BinaryIO = io.BufferedReader(io.BytesIO(_Events(path).read()))
    else:
        stream = path.open("rb")
    with stream:
        for event in reader.read(stream, str(path)):
            if isinstance(event, SessionStart):
                out.append(Session(event.name))
            elif isinstance(event, SessionEnd):
                out[-1].steps = event.steps
                out[-1].name = out[-1].name or event.name
            elif isinstance(event, Command):
                out[-1].commands.append(event)
            if not isinstance(event, SessionStart | SessionEnd):
                out[-1].events.append(event)
    return out
