"""The API reference renders cross-references, never raw Sphinx roles (docs/_ext/sphinx_roles.py,
the griffe extension mkdocs.yml loads)."""

from __future__ import annotations

import importlib.util

import griffe

from tests._paths import REPO

_PATH = REPO / "docs" / "_ext" / "sphinx_roles.py"
_SPEC = importlib.util.spec_from_file_location("sphinx_roles", _PATH)
assert _SPEC is not None
assert _SPEC.loader is not None
roles = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(roles)


def test_a_role_becomes_an_optional_cross_reference() -> None:
    assert roles.rewrite("See :class:`~failcode.Failure` and :func:`decide()`.") == (
        'See <autoref identifier="failcode.Failure" optional><code>Failure</code></autoref> '
        'and <autoref identifier="decide" optional><code>decide</code></autoref>.')
    assert roles.rewrite("no roles here") == "no roles here"


def test_no_docstring_of_the_reference_keeps_a_raw_role() -> None:
    """Every docstring griffe loads for the reference, through the extension."""
    extensions = griffe.load_extensions(f"{_PATH}:SphinxRoles")
    package = griffe.load("failcode", search_paths=[str(REPO / "src")], extensions=extensions,
                          resolve_aliases=False)
    raw = []

    def walk(obj: griffe.Object) -> None:
        if obj.docstring is not None and ":`" in obj.docstring.value and (
                roles._ROLE.search(obj.docstring.value)):
            raw.append(obj.path)
        for member in obj.members.values():
            if not member.is_alias:
                walk(member)

    walk(package)
    assert raw == []
