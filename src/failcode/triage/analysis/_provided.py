"""What a session's own repository provides: the Python modules the agent wrote or listed.

The classifier alone cannot know the repository: ``No module named 'testapp'`` reads as a
package to install (``FC-CMD-002``). A session knows more. Triage collects, per session, the
module names the agent itself made exist or declared, and turns a missing module among them
into the agent's own mistake (``FC-CMD-014``, task) through
:func:`failcode.classification._command.as_local_module`. The rules:

- **A Python file the agent wrote** (an edit tool's path, a shell redirection or ``tee`` into
  ``x.py``): its module name (the file's stem) and the package it lies in (the directory the
  file is in), so ``testapp/models.py`` provides ``testapp`` and ``testapp.models``. A file
  inside an installed library or the standard library (``site-packages``, ``lib/python3.11``;
  a relative path after ``cd`` into one) is the library's, patched in place, never the
  project's.
- **An app the agent listed**: every quoted name in an ``INSTALLED_APPS`` list or tuple in text
  the agent wrote (a file's content, a heredoc, ``python -c``). Agents reproducing a Django
  issue configure settings with an app of their own invention and then import it; the app
  they listed is theirs to create, not a package to install. Django's own apps
  (``django.contrib.auth``) are Django's and are not taken.

Names that are not Python identifiers are never provided; a dotted name's prefixes are matched
by ``as_local_module``.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Final

from failcode._lazy_re import lazy
from failcode.classification._parsers import is_library_path

if TYPE_CHECKING:
    import re
    from collections.abc import Iterator

__all__ = ["listed_apps", "modules_of_command", "modules_of_file"]

_IDENT: Final = lazy(r"[A-Za-z_]\w*")
_INSTALLED_APPS: Final = lazy(r"INSTALLED_APPS\s*[=:]\s*[\[(]([^\])]{0,4000})[\])]")
_QUOTED: Final = lazy(r"""['"]([A-Za-z_][\w.]*)['"]""")
# `> x.py`, `>> pkg/x.py`, `tee [-a] x.py`: a Python file a shell command writes. `t(?<!\wt)ee`
# is `\btee` written so that the pattern starts with a literal: sre then skips to the next `>`
# or `t` instead of trying the pattern at every position (3x faster on long commands).
_WRITTEN: Final = lazy(r"""(?:>>?|t(?<!\wt)ee(?:\s+-a)?)\s*['"]?([^\s'"<>|;&]+\.py)\b""")
# Its two branches on their own, each starting with a literal sre finds by a fast scan (`>`,
# and `tee` with the look-behind after it): no position holding a `t` is tried (most of a
# heredoc's text). `_written` merges their matches into what `_WRITTEN.finditer` gives.
_WRITTEN_TAIL: Final = r"""\s*['"]?([^\s'"<>|;&]+\.py)\b"""
_WRITTEN_GT: Final = lazy(r">>?" + _WRITTEN_TAIL)
_WRITTEN_TEE: Final = lazy(r"tee(?<!\wtee)(?:\s+-a)?" + _WRITTEN_TAIL)
_CD: Final = lazy(r"""(?:^|[;&|(]\s*|\n)\s*cd\s+['"]?([^\s'";&|)]+)""")


def modules_of_file(path: str) -> set[str]:
    """The module names a written file provides: for ``dir/name.py``, ``name``, ``dir`` and
    ``dir.name`` (each only when it is an identifier); nothing for other files and for files
    of an installed library."""
    pure = PurePosixPath(path.replace("\\", "/"))
    if pure.suffix != ".py" or is_library_path(str(pure)):
        return set()
    stem, parent = pure.stem, pure.parent.name
    out = {stem} if _IDENT.fullmatch(stem) and stem != "__init__" else set()
    if parent and _IDENT.fullmatch(parent):
        out.add(parent)
        if stem != "__init__" and _IDENT.fullmatch(stem):
            out.add(f"{parent}.{stem}")
    return out


def listed_apps(text: str) -> set[str]:
    """The names quoted in an ``INSTALLED_APPS`` list or tuple of ``text``."""
    if "INSTALLED_APPS" not in text:
        return set()
    # the text may be a JSON- or shell-escaped copy: unescape the quotes that matter
    plain = text.replace("\\'", "'").replace('\\"', '"')
    return {name for block in _INSTALLED_APPS.finditer(plain)
            for name in _QUOTED.findall(block.group(1))
            if name != "django" and not name.startswith("django.")}


def _written(command: str) -> Iterator[re.Match[str]]:
    """``_WRITTEN.finditer(command)``: the leftmost match of either branch from where the last
    match ended (a position starts at most one branch: ``>`` or ``t``)."""
    gt, tee = _WRITTEN_GT.search(command), _WRITTEN_TEE.search(command)
    while True:
        if gt is not None and (tee is None or gt.start() < tee.start()):
            found = gt
        elif tee is not None:
            found = tee
        else:
            return
        yield found
        end = found.end()
        if gt is not None and gt.start() < end:
            gt = _WRITTEN_GT.search(command, end)
        if tee is not None and tee.start() < end:
            tee = _WRITTEN_TEE.search(command, end)


def modules_of_command(command: str) -> set[str]:
    """What a shell command provides: the Python files it writes and the apps it lists."""
    out = listed_apps(command)
    if ".py" in command:
        for found in _written(command):
            path = found.group(1)
            if not path.startswith("/"):
                where = [cd.group(1) for cd in _CD.finditer(command, 0, found.start())]
                path = f"{where[-1].rstrip('/')}/{path}" if where else path
            out |= modules_of_file(path)
    return out
