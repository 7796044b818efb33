"""What a shell prints before a command runs: lines that are not the command's output.

Agents run commands through a login or interactive shell (Codex runs ``bash -lc``), whose
start-up files print their own notices into the command's output. Read as the command's, they
make a probe that found nothing look like a failure and name the wrong cause ("The command rg
exited with status 1: shellenv.sh: line 18: /bin/ps: Operation not permitted"). Rules, each
from the program that prints the line:

- a shell's error from a start-up script: ``SCRIPT: line N: MESSAGE`` (bash's format for an
  error in a sourced file, ``error.c``) where SCRIPT is a shell script (``.sh``, ``.bash``,
  ``.zsh``, ``profile``, ``*rc``) that the command line itself does not name;
- bash's notices when it starts without a terminal (``jobs.c``): ``bash: cannot set terminal
  process group (N): ...`` and ``bash: no job control in this shell``;
- nvm's notice when a start-up file switches Node.js versions (``nvm.sh``'s ``nvm use``):
  ``Now using node vX (npm vY)``.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Final

from failcode._lazy_re import lazy

if TYPE_CHECKING:
    import re

__all__ = ["without_startup_noise"]

_STARTUP_ERROR: Final = lazy(
    r"(?m)^(?P<script>(?:/|~/|\./)?[^\s:]*(?:\.(?:sh|bash|zsh)|profile|rc)): line \d+: .*(?:\n|$)")
_NOTICES: Final = lazy(
    r"(?m)^(?:(?:ba|z|k)?sh: (?:cannot set terminal process group \(-?\d+\): .*"
    r"|no job control in this shell)"
    r"|Now using node v\S+(?: \(npm v\S+\))?)[ \t]*(?:\n|$)")
_HINTS: Final = ("line ", "job control", "terminal process group", "Now using node")


def without_startup_noise(text: str, command: str) -> str:
    """``text`` without the lines a shell's start-up printed (the module's rules); the
    command's own lines are kept as they are."""
    if not text or not any(hint in text for hint in _HINTS):
        return text

    def startup(match: re.Match[str]) -> str:
        script = match.group("script")
        if script in command or PurePosixPath(script).name in command:
            return match.group(0)  # the command ran this script: its own error
        return ""

    return _NOTICES.sub("", _STARTUP_ERROR.sub(startup, text))
