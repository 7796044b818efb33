"""``--format agents-md`` and ``--fix-file``: what to fix first as instructions for a coding
agent's instruction file (AGENTS.md, CLAUDE.md, GEMINI.md), and the change that puts them there.

The block: a marker line ``<!-- failcode:begin -->``, a one-line header (what it is, how to
regenerate it), one Markdown bullet per finding the agent or the environment must act on, and
``<!-- failcode:end -->``. The rules:

- **Which findings**: those whose category is one of the table's ``[acts] categories``
  (``task``: the agent; ``environment``: the environment's owner, see
  :data:`~failcode.triage._findings.WHO_ACTS`); a transient failure is the retry's, a user
  failure a person's, a defect a developer's, and none gets a line; nor do the codes the table
  lists in ``[acts] person`` (the agent's model, the harness that runs it: a person's fix).
- **Wording**: data, not code (``failcode/triage/data/_agents_md.toml``): per code, a template
  over the params of the finding's first occurrence (the one its headline is from), its
  message, remedy and command; a key ``CODE param=value`` words one value apart. A code
  without a wording gets the fallback, built from the finding's message and remedy; a finding
  with neither wording nor remedy gets no line.
- **Safety**: every value from a log is redacted and made one printable line
  (:func:`~failcode.triage.report._terminal.safe`); a value shown as code loses its
  backticks (``'`` instead), so it cannot close the code span.
- **Order**: the findings' rank ("what to fix first"); a line equal to an earlier one is left
  out; at most ``top`` lines. No line: the block says so in one line (the run's findings are
  none the agent can act on, or it has none), never an empty block.

``--fix-file PATH`` (:func:`plan_fix`): the block goes between the markers of PATH, replacing
the failcode block there, else appended with one blank line before it (a missing file is
created). Every other byte of the file is kept, and its line ending (the first line's: a CRLF
file stays CRLF). A begin marker without its end, an end without a begin or a second block is
a :class:`FixFileError` naming the file and line (exit status 2). :meth:`Fix.write` writes
atomically (a temporary file in the same folder, its mode the file's, then ``os.replace``),
and only when the bytes change, so a second run leaves the file and its mtime alone.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import os
import stat
import tempfile
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from failcode.render._printable import printable
from failcode.triage.report._terminal import safe

if TYPE_CHECKING:
    from failcode.triage._findings import Finding, Findings
    from failcode.triage._result import SessionResult

__all__ = ["Fix", "FixFileError", "FirstParams", "block_lines", "instructions", "plan_fix"]

_COMMAND_CHARS: Final = 120
"""A longer command is cut (after redaction) and ends with an ellipsis."""


@functools.cache
def table() -> dict[str, Any]:
    """The wording table (``failcode/triage/data/_agents_md.toml``)."""
    text = (resources.files("failcode.triage") / "data" / "_agents_md.toml").read_text("utf-8")
    return tomllib.loads(text)


class FirstParams:
    """Per finding, the params and evidence of its first occurrence, added one session at a
    time after the findings counted it; memory grows with the findings, not the sessions."""

    __slots__ = ("_findings", "_first")

    def __init__(self, findings: Findings) -> None:
        self._findings = findings
        self._first: dict[int, tuple[dict[str, object], str]] = {}

    def add(self, session: SessionResult) -> None:
        """Keep the first occurrence of each finding new in ``session``."""
        for entry in session.failures:
            finding = self._findings.find(entry.failure.signature)
            if finding is not None and id(finding) not in self._first:
                self._first[id(finding)] = (dict(entry.failure.params), entry.evidence)

    def of(self, finding: Finding) -> tuple[dict[str, object], str]:
        """The params and evidence of ``finding``'s first occurrence (none: empty)."""
        return self._first.get(id(finding), ({}, ""))


def _code(value: object) -> str:
    """A log's value shown inside a code span: redacted, one line, no backtick."""
    return safe(value).replace("`", "'")


def _values(finding: Finding, params: dict[str, object], command: str) -> dict[str, str]:
    values = {name: _code(value) for name, value in params.items()}
    shown = safe(command)
    if len(shown) > _COMMAND_CHARS:
        shown = shown[:_COMMAND_CHARS - 1].rstrip() + "\N{HORIZONTAL ELLIPSIS}"
    values.update(code=finding.code, message=safe(finding.message),
                  remedy=safe(finding.remedy or ""), command=shown.replace("`", "'"))
    module = params.get("module")
    if module is not None:
        top = str(module).split(".", 1)[0]
        values["pip_package"] = _code(table()["pip_packages"].get(top, top))
    return values


def _line(finding: Finding, first: tuple[dict[str, object], str]) -> str | None:
    """The instruction for one finding, or None (no wording and no remedy)."""
    templates: dict[str, str] = table()["templates"]
    params, command = first
    values = _values(finding, params, command)
    keys = [f"{finding.code} {name}={value}" for name, value in sorted(params.items())]
    for key in [*keys, finding.code]:
        template = templates.get(key)
        if template is not None:
            with contextlib.suppress(KeyError, AttributeError, IndexError, ValueError):
                return "- " + template.format_map(values)
            break  # a param the wording needs is missing here: the fallback
    if not finding.remedy:
        return None
    return "- " + templates["fallback"].format_map(values)


def instructions(findings: list[Finding], params: FirstParams, *, top: int) -> list[str]:
    """The block's bullets: one per finding the agent or the environment acts on, in rank
    order, each once, at most ``top``."""
    acts = set(table()["acts"]["categories"])
    person = set(table()["acts"]["person"])
    lines: list[str] = []
    for finding in findings:
        if len(lines) >= top:
            break
        if finding.category not in acts or finding.code in person:
            continue
        line = _line(finding, params.of(finding))
        if line is not None and line not in lines:
            lines.append(line)
    return lines


def block_lines(findings: list[Finding], params: FirstParams, *, top: int) -> list[str]:
    """The whole block, markers included (``findings`` ranked, as ``Findings.ranked``)."""
    block = table()["block"]
    body = instructions(findings, params, top=top)
    if body:
        body = ["", *body]
    else:
        body = [block["none"].format(findings=f"{len(findings):,}") if findings
                else block["clean"]]
    return [block["begin"], block["header"], *body, block["end"]]


class FixFileError(Exception):
    """A fix file that cannot be read, has broken markers, or cannot be written: the message
    names it (and the line), ``status`` is the exit status (2 read, 1 write)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Fix:
    """The change ``--fix-file`` would make: the file's bytes before and after, and the diff."""

    path: Path
    label: str
    old: bytes | None
    """None: the file does not exist."""
    new: bytes
    diff: str

    @property
    def changed(self) -> bool:
        return self.old != self.new

    def write(self) -> None:
        """Write the new bytes atomically, keeping the file's mode; nothing when unchanged.

        Raises:
            FixFileError: the file or its folder cannot be written (status 1).
        """
        if not self.changed:
            return
        target = Path(os.path.realpath(self.path))  # through a symbolic link, not over it
        try:
            if self.old is not None:
                mode = stat.S_IMODE(target.stat().st_mode)
                if not os.access(target, os.W_OK):
                    raise PermissionError(13, "Permission denied (the file is read-only)")
            else:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
            handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                                 dir=target.parent)
        except OSError as exc:
            raise FixFileError(f"cannot write {self.label}: {exc.strerror or exc}", 1) from None
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(self.new)
                out.flush()
                os.fsync(out.fileno())
            Path(temporary).chmod(mode)
            Path(temporary).replace(target)
        except OSError as exc:
            with contextlib.suppress(OSError):
                Path(temporary).unlink()
            raise FixFileError(f"cannot write {self.label}: {exc.strerror or exc}", 1) from None


def _split(text: str) -> list[str]:
    """The lines of ``text``, each with its ending (``\\n`` only ends a line: a form feed or
    U+2028 in a user's file is text)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _markers(lines: list[str], label: str) -> tuple[int, int] | None:
    """The line indexes of the one failcode block's markers, None without a block.

    Raises:
        FixFileError: a begin without an end, an end without a begin, a second block.
    """
    block = table()["block"]
    begin, end = block["begin"], block["end"]
    found: tuple[int, int] | None = None
    opened: int | None = None
    for index, line in enumerate(lines):
        text = line.strip()
        if text == begin:
            if opened is not None:
                raise FixFileError(f"{label}:{index + 1}: {begin} again, but the block begun "
                                   f"at line {opened + 1} has no {end}; keep one block", 2)
            if found is not None:
                raise FixFileError(f"{label}:{index + 1}: a second failcode block (the first "
                                   f"is at line {found[0] + 1}); keep one", 2)
            opened = index
        elif text == end:
            if opened is None:
                raise FixFileError(f"{label}:{index + 1}: {end} with no {begin} before it; "
                                   "remove it or add the begin marker", 2)
            found, opened = (opened, index), None
    if opened is not None:
        raise FixFileError(f"{label}:{opened + 1}: {begin} with no {end} after it; add the end "
                           "marker where the block ends, or remove this line", 2)
    return found


def _read(path: Path, label: str) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise FixFileError(f"cannot read {label}: {exc.strerror or exc}", 2) from None


def plan_fix(path: Path, block: list[str]) -> Fix:
    """The change that puts ``block`` (its lines, markers included) into ``path``.

    Raises:
        FixFileError: the file cannot be read, is not UTF-8 text, or its markers are broken
            (status 2).
    """
    label = printable(path, one_line=True)
    old = _read(path, label)
    try:
        text = "" if old is None else old.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FixFileError(f"cannot read {label}: not UTF-8 text (byte {exc.start})", 2) from None
    lines = _split(text)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    body = newline.join(block)
    span = _markers(lines, label)
    if span is not None:
        first, last = span
        ending = lines[last][len(lines[last].rstrip("\r\n")):]
        new_text = "".join([*lines[:first], body + ending, *lines[last + 1:]])
    elif not text:
        new_text = body + newline
    elif lines[-1].strip() == "" and lines[-1].endswith("\n"):  # a blank line already
        new_text = text + body + newline
    else:
        new_text = text + ("" if text.endswith("\n") else newline) + newline + body + newline
    new = new_text.encode("utf-8")
    return Fix(path, label, old, new, _diff(lines, _split(new_text), label, exists=old is not None))


def _diff(old: list[str], new: list[str], label: str, *, exists: bool) -> str:
    """The unified diff, as git shows it (``\\ No newline at end of file`` included)."""
    lines = difflib.unified_diff(old, new, f"a/{label}" if exists else "/dev/null",
                                 f"b/{label}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)
