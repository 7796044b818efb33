"""The registry of readers (:data:`READERS`), most specific first; the package imports it on
first use of ``READERS``, ``FORMATS`` or ``detect``, so that importing one reader module
(the live hooks read one tool result with the Claude Code reader's rules) imports no other."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from failcode.triage.readers._aider import AiderReader
from failcode.triage.readers._atif import AtifReader
from failcode.triage.readers._chat import AG2_CHAT, AUTOGEN_MESSAGES, OPENAI_MESSAGES, ChatReader
from failcode.triage.readers._claude_code import ClaudeCodeReader
from failcode.triage.readers._claude_stream import ClaudeStreamReader
from failcode.triage.readers._cline import ClineReader, ClineSessionReader
from failcode.triage.readers._codex import CodexReader
from failcode.triage.readers._codex_exec import CodexExecReader
from failcode.triage.readers._copilot import CopilotCliReader
from failcode.triage.readers._failcode_events import FailcodeEventsReader
from failcode.triage.readers._gemini import GeminiCliReader
from failcode.triage.readers._gemini_stream import GeminiStreamReader
from failcode.triage.readers._mini_swe_agent import MiniSweAgentReader
from failcode.triage.readers._opencode import OpenCodeReader
from failcode.triage.readers._opencode_db import OpenCodeDbReader
from failcode.triage.readers._openhands import OpenHandsReader
from failcode.triage.readers._qwen import QwenCodeReader
from failcode.triage.readers._swe_agent import SweAgentReader
from failcode.triage.readers._unread import UNREAD

if TYPE_CHECKING:
    from failcode.triage._events import Reader

__all__ = ["FORMATS", "READERS", "detect"]

READERS: Final[tuple[Reader, ...]] = (
    FailcodeEventsReader(),
    AtifReader(),  # before mini-swe-agent: a Harbor trajectory names the agent it ran
    MiniSweAgentReader(),
    SweAgentReader(),
    OpenHandsReader(),
    GeminiCliReader(),  # before Claude Code: its records also carry sessionId and type
    GeminiStreamReader(),  # an init event (or the json object) with session_id
    QwenCodeReader(),  # before Claude Code: its records carry the same uuid/parentUuid ids
    CopilotCliReader(),  # before Claude Code: its session.start carries sessionId
    ClaudeStreamReader(),  # before Claude Code: the same messages, with session_id
    ClaudeCodeReader(),
    CodexReader(),
    CodexExecReader(),  # codex exec --json: thread/turn/item events, no session_meta
    AiderReader(),
    ClineReader(),
    ClineSessionReader(),  # Cline's CLI 3.x: {"sessionId", "origin", "messages"}
    OpenCodeReader(),  # opencode export: {"info": {"id": "ses_..."}, "messages"}
    OpenCodeDbReader(),  # opencode.db, read by path (a SQLite database is binary)
    # multi-agent chats and plain message lists, last: their messages are the chat-completion
    # shape other formats' records also have (mini-swe-agent's, OpenHands' llm_completions)
    ChatReader(AUTOGEN_MESSAGES),
    ChatReader(AG2_CHAT),
    ChatReader(OPENAI_MESSAGES),
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
