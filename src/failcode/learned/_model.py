"""The shipped model, read with the standard library on first use (being built: issue 39)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from failcode.learned import Suggestion


def predict(argv: str | Sequence[str] | None, exit_code: int | None, stdout: str | bytes,
            stderr: str | bytes) -> Suggestion | None:
    """The suggestion for one failure; None while no model is shipped."""
    del argv, exit_code, stdout, stderr
    return None
