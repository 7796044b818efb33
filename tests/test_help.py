"""Every public name reads well in help(): its own docstring, never one of Python's."""

from __future__ import annotations

import inspect
import pydoc
import types

import pytest

import failcode

NAMES = sorted(failcode.__all__)
UNION_ALIASES = {"NonErrorOutcome", "Scalar"}
"""Type aliases written as `A | B`: typing objects, documented in the API reference."""


@pytest.mark.parametrize("name", NAMES)
def test_public_classes_and_functions_have_their_own_docstring(name: str) -> None:
    """help(failcode.X) shows X's own docstring for every public class and function."""
    value = getattr(failcode, name)
    if name in UNION_ALIASES:
        assert isinstance(value, types.UnionType)
        return
    if not (inspect.isclass(value) or inspect.isroutine(value)):
        return  # constants and enum members: their type's help is the right one
    doc = inspect.getdoc(value)
    assert doc, f"failcode.{name} has no docstring"
    assert "PEP 604" not in doc


def test_check_reads_as_a_protocol() -> None:
    """help(failcode.Check) explains what a start-up check is, and the built-in ones are
    instances of it."""
    text = pydoc.render_doc(failcode.Check, renderer=pydoc.plaintext)
    assert "PEP 604" not in text
    assert "start-up check" in text
    assert isinstance(failcode.Program("git"), failcode.Check)
    assert failcode.preflight([failcode.Program("sh")]) == []
