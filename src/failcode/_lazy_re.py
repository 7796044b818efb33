"""Regular expressions compiled on first use, to keep start-up short.

failcode's tables hold several hundred patterns; compiling them all at import costs tens of
milliseconds, while one run uses a few (most rules run only when their gate substring occurs
in the text). :func:`lazy` returns a stand-in that compiles its pattern the first time any
attribute is read (``search``, ``finditer``, ``pattern``...), then copies that attribute onto
itself, so later calls cost what a compiled pattern's do. It is typed as the
:class:`re.Pattern` it stands for. It is not one for ``isinstance`` and cannot be passed to the
module-level :mod:`re` functions (``re.sub(p, ...)``): call its methods.

Any layer may use it; it imports nothing of failcode.
"""

from __future__ import annotations

import re
from typing import Any, cast

__all__ = ["lazy"]


class _LazyPattern:
    """A pattern and its flags, compiled when an attribute is first read."""

    def __init__(self, pattern: str, flags: int) -> None:
        self.__dict__["_source"] = (pattern, flags)
        self.__dict__["pattern"] = pattern

    def __getattr__(self, name: str) -> Any:
        # Only called for an attribute not set yet: compile once, then keep what was read.
        if name.startswith("__"):
            raise AttributeError(name)
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = re.compile(*self.__dict__["_source"])
            self.__dict__["_compiled"] = compiled
        value = getattr(compiled, name)
        self.__dict__[name] = value
        return value

    def __repr__(self) -> str:
        pattern, flags = self.__dict__["_source"]
        return f"lazy({pattern!r}, {flags!r})"


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, done the first time the result is used."""
    return cast("re.Pattern[str]", _LazyPattern(pattern, int(flags)))
