"""The reader registry: one reader per format, tried in order on the input's first bytes.

A new format is one new module with a class following
:class:`~failcode.triage._events.Reader`, added to :data:`READERS`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from failcode.triage._aider import AiderReader
from failcode.triage._atif import AtifReader
from failcode.triage._claude_code import ClaudeCodeReader
from failcode.triage._claude_stream import ClaudeStreamReader
from failcode.triage._cline import ClineReader
from failcode.triage._codex import CodexReader
from failcode.triage._copilot import CopilotCliReader
from failcode.triage._failcode_events import FailcodeEventsReader
from failcode.triage._gemini import GeminiCliReader
from failcode.triage._mini_swe_agent import MiniSweAgentReader
from failcode.triage._openhands import OpenHandsReader
from failcode.triage._qwen import QwenCodeReader
from failcode.triage._swe_agent import SweAgentReader
from failcode.triage._unread import UNREAD

if TYPE_CHECKING:
    from failcode.triage._events import Reader

__all__ = ["FORMATS", "HEAD_BYTES", "READERS", "detect"]

HEAD_BYTES: Final = 64 * 1024
"""How many leading bytes detection reads."""

READERS: Final[tuple[Reader, ...]] = (
    FailcodeEventsReader(),
    AtifReader(),  # before mini-swe-agent: a Harbor trajectory names the agent it ran
    MiniSweAgentReader(),
    SweAgentReader(),
    OpenHandsReader(),
    GeminiCliReader(),  # before Claude Code: its records also carry sessionId and type
    QwenCodeReader(),  # before Claude Code: its records carry the same uuid/parentUuid ids
    CopilotCliReader(),  # before Claude Code: its session.start carries sessionId
    ClaudeStreamReader(),  # before Claude Code: the same messages, with session_id
    ClaudeCodeReader(),
    CodexReader(),
    AiderReader(),
    ClineReader(),
)
"""Most specific first: the first reader whose ``sniff`` accepts the head reads the input."""

FORMATS: Final = tuple(reader.name for reader in READERS)


def detect(head: bytes) -> Reader | None:
    """The reader for an input whose first bytes are ``head``, or None. After every reader, a
    format failcode recognises but does not read (``_unread``) is detected too: reading it is
    its FC-DATA-002 naming the format."""
    for reader in (*READERS, *UNREAD):
        if reader.sniff(head):
            return reader
    return None
