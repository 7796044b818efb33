"""A click group that answers a mistyped command with the nearest ones ("Did you mean one of
these?"), from click-contrib's click-didyoumean; typed as a plain click group."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from click import Group as DidYouMeanGroup
else:
    from click_didyoumean import DYMGroup as DidYouMeanGroup

__all__ = ["DidYouMeanGroup"]
