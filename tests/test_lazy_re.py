"""failcode._lazy_re: a pattern compiled on first use behaves as the compiled pattern."""

from __future__ import annotations

import re

from failcode._lazy_re import lazy


def test_lazy_pattern_matches_as_compiled() -> None:
    source, flags = r"(?P<word>[a-z]+)(\d*)", re.IGNORECASE
    pattern, compiled = lazy(source, flags), re.compile(source, flags)
    assert pattern.pattern == source
    assert "_compiled" not in vars(pattern)  # reading .pattern compiles nothing
    text = "Abc12 def x9"
    assert [m.span() for m in pattern.finditer(text)] == [
        m.span() for m in compiled.finditer(text)]
    assert pattern.sub("-", text) == compiled.sub("-", text)
    assert pattern.flags == compiled.flags
    assert pattern.groupindex == compiled.groupindex
    found = pattern.search(text)
    assert found is not None
    assert found.group("word") == "Abc"
    assert "search" in vars(pattern)  # kept: later calls go straight to the compiled method
