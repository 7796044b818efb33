"""Print what aider's own code reads from chat histories, as JSON (run with aider's Python).

Aider restores a chat from ``.aider.chat.history.md`` with
``aider.utils.split_chat_history_markdown`` (``Coder.__init__`` with
``--restore-chat-history``): one ``user`` message per block of ``#### `` lines, one ``tool``
message per block of ``> `` lines. Aider writes ``# aider chat started at ...`` when a session
starts (``InputOutput.__init__``); the history is cut there into sessions, and each session's
text goes through aider's parser as it is. Usage: ``python aider_history.py FILE...``; prints
``{file: [{"heading": str | null, "messages": [{"role", "content"}]}]}``.
"""

import json
import re
import sys
from pathlib import Path

from aider import __version__
from aider.io import InputOutput
from aider.utils import split_chat_history_markdown

HEADING = re.compile(r"^# aider chat started at (.*)$")


def sessions(text: str) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    heading = None
    chunk: list[str] = []

    def close() -> None:
        messages = split_chat_history_markdown("".join(chunk), include_tool=True)
        if heading is not None or messages:
            out.append({"heading": heading, "messages": messages})

    for line in text.splitlines(keepends=True):
        found = HEADING.match(line.rstrip("\r\n"))
        if found is not None:
            close()
            heading, chunk = found.group(1).strip(), []
        else:
            chunk.append(line)
    close()
    return out


def main() -> None:
    io = InputOutput(pretty=False, yes=True, fancy_input=False)  # aider's own file reading
    result: dict[str, object] = {"aider": __version__}
    for name in sys.argv[1:]:
        text = io.read_text(Path(name), silent=True)
        result[name] = sessions(text) if text is not None else None
    print(json.dumps(result))


if __name__ == "__main__":
    main()
