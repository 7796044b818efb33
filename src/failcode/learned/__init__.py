"""Learned suggestions: a kind and a class for the failures the rules leave unknown.

The rules stay the authority. When they give ``unknown_error``, or a ``command_error`` whose
class is ``unknown`` (:func:`wants_suggestion`), a small linear model trained on real tools'
output (``tests/learned``: examples whose labels are true by construction) may suggest a kind
and a class, with its confidence and the nearest known examples. Routing, decisions and codes
never depend on a suggestion; below :data:`THRESHOLD` nothing is suggested.

The model is a data file shipped in the package and read with the standard library only (no
scikit-learn at run time), on the first call: ``import failcode.learned`` costs nothing more.
See docs/classification.md, "Learned suggestions".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Sequence

    from failcode.record._failure import Failure

__all__ = ["THRESHOLD", "Nearest", "Suggestion", "adds_to", "suggest", "suggest_for",
           "wants_suggestion"]

THRESHOLD: Final = 0.475
"""Below this confidence (the model's probability of the kind) nothing is suggested: the
shipped model's own threshold (its file holds it; a test keeps the two equal), chosen by
cross-validation grouped by program, so every prediction it was chosen on is for a program the
model had not seen (docs/classification.md, "Learned suggestions")."""


@dataclass(frozen=True, slots=True)
class Nearest:
    """A known failure like the one suggested for: a training example, or a stored failure."""

    program: str
    """The program whose output it is (``gcc``, ``ruff``)."""
    kind: str
    klass: str
    """Its class (``class`` in JSON)."""
    excerpt: str
    """One normalized line of its output: no paths, numbers or secrets."""
    similarity: float
    """Cosine similarity of the two outputs' features, 0 to 1."""
    remedy: str | None = None
    """What fixes it, when known (a stored failure's remedy)."""

    def to_dict(self) -> dict[str, object]:
        """JSON form: ``class`` for :attr:`klass`."""
        out: dict[str, object] = {"program": self.program, "kind": self.kind,
                                  "class": self.klass, "excerpt": self.excerpt,
                                  "similarity": round(self.similarity, 3)}
        if self.remedy is not None:
            out["remedy"] = self.remedy
        return out


@dataclass(frozen=True, slots=True)
class Suggestion:
    """What the learned model suggests for a failure the rules left unknown."""

    kind: str
    """A :class:`failcode.Kind` value."""
    klass: str
    """A class of failcode's catalog (``class`` in JSON); ``unknown`` when the model is sure
    of the kind but not the class."""
    confidence: float
    """The model's probability of :attr:`kind`, 0 to 1 (how often it is right at each
    confidence, on programs held out of training: docs/classification.md)."""
    nearest: tuple[Nearest, ...]
    """The most similar known examples, most similar first."""
    model: str
    """The model's version, e.g. ``learned-1 3f2a9c1d``: the format and the file's hash."""

    def to_dict(self) -> dict[str, object]:
        """JSON form: ``{kind, class, confidence, nearest, model}``."""
        return {"kind": self.kind, "class": self.klass,
                "confidence": round(self.confidence, 3),
                "nearest": [n.to_dict() for n in self.nearest], "model": self.model}


def wants_suggestion(failure: Failure) -> bool:
    """True for a failure the rules did not know: ``unknown_error``, or a ``command_error``
    whose class is ``unknown``."""
    kind: str = failure.kind.value
    return kind == "unknown_error" or (kind == "command_error" and failure.error_class == "unknown")


def suggest(argv: str | Sequence[str] | None, exit_code: int | None, stdout: str | bytes = "",
            stderr: str | bytes = "") -> Suggestion | None:
    """The model's suggestion for a failed command (or any failure's text as ``stderr``).

    Args:
        argv: the command, as for :func:`failcode.from_command`; None when there is none.
        exit_code: its exit status, or None.
        stdout: its standard output (str or bytes).
        stderr: its standard error.

    Returns:
        A :class:`Suggestion`, or None when the model's confidence is below its threshold.
        Never raises for any input; the cost is bounded by the output's length.
    """
    from failcode.learned._model import predict  # noqa: PLC0415 - the model loads on first use

    return predict(argv, exit_code, stdout, stderr)


def adds_to(suggestion: Suggestion, failure: Failure) -> bool:
    """True when ``suggestion`` says more than the record: a class, or another kind.

    A rule-unknown ``command_error`` suggested as ``command_error`` with class ``unknown``
    repeats what the record says; it is not shown."""
    return suggestion.klass != "unknown" or suggestion.kind != failure.kind.value


def suggest_for(failure: Failure, argv: str | Sequence[str] | None = None,
                exit_code: int | None = None, output: str | bytes = "", *,
                stdout: str | bytes = "") -> Suggestion | None:
    """:func:`suggest` for a record the rules left unknown (None for any other record, and
    for a suggestion that only repeats the record: :func:`adds_to`).

    Without a command (``argv`` and ``exit_code`` both None: an exception's or a log line's
    text), a ``command_error`` suggestion is dropped: the model learned that kind from
    commands' output only, and on the corpora it called an agent's own exceptions (aider's
    ``NameError``, ``AttributeError``) failed commands every time.

    ``output`` is the command's standard error (or its whole output) when the caller has it,
    ``stdout`` its standard output; without either, the record's message and detail are
    used."""
    if not wants_suggestion(failure):
        return None
    text = output or ("" if stdout else "\n".join(t for t in (failure.message, failure.detail)
                                                  if t))
    suggestion = suggest(argv, exit_code, stdout, text)
    if suggestion is None or not adds_to(suggestion, failure):
        return None
    if suggestion.kind == "command_error" and argv is None and exit_code is None:
        return None  # the model learned command_error from commands: without one, out of reach
    return suggestion
