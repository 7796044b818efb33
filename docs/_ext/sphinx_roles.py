"""A griffe extension for the API reference: the Sphinx roles failcode's docstrings use
(:class:`Failure`, :func:`~failcode.decide`, :mod:`failcode.triage.analysis._loops`...) become
cross-references.

Each role becomes an optional autorefs reference (``<autoref identifier=... optional>``): a
link when its target is rendered in the reference, plain code when it is not (a private
module, an object of another package), never a raw role and never a broken link. A ``~``
shows only the last part of the name, as Sphinx does.
"""

from __future__ import annotations

import re
from html import escape
from typing import Any

from griffe import Extension

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|exc|obj|const):`(~?)([^`<>]+)`")


def _ref(match: re.Match[str]) -> str:
    short, target = match.group(1) == "~", match.group(2).strip()
    target = target.removesuffix("()")
    title = target.rsplit(".", 1)[-1] if short else target
    return (f'<autoref identifier="{escape(target)}" optional><code>{escape(title)}</code>'
            "</autoref>")


def rewrite(text: str) -> str:
    """``text`` with its Sphinx roles as optional cross-references."""
    return _ROLE.sub(_ref, text) if ":`" in text else text


class SphinxRoles(Extension):
    """Rewrite every loaded object's docstring."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rewrite(obj.docstring.value)
