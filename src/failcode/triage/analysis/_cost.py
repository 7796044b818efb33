"""What a failure cost: the model turns that read it, their price, and the time to recover.

Rules:

- A model turn (a :class:`~failcode.triage._events.Usage` the reader yields where the log
  records tokens: Claude Code, Codex, Gemini CLI) belongs to the step whose result came last
  before it, any tool's (the reader says which: a file read that succeeded ends the failure
  before it too): it is the turn that read that result. When that step failed, the turn's tokens
  are the failure's (the first failure recorded at the step, when it has several): what the
  agent spent on it, up to its next step. A loop's turns are those of its failing steps.
- Every turn counts in its session's tokens; turns before the first step, or after a step
  that did not fail, are no failure's.
- A session whose log records no tokens has none (``None``), and so have its failures: their
  cost is unknown, never 0. In a session that records them, a failure no turn read (the
  session's last step) cost 0 tokens and 0 dollars.
- Price: each turn separately (a price may depend on one request's size). A turn whose log
  records its own price (:attr:`~failcode.triage._events.Usage.usd`: mini-swe-agent's
  ``extra.cost``, the increase of OpenHands' ``accumulated_cost``; the agent priced it from
  its own table) costs that, named ``"<model>, recorded by <agent>"`` (``priced_as``), with
  or without genai-prices. Any other turn is priced by its model, else the session's, from
  genai-prices, the price table its maintainers keep (the optional extra
  ``failcode[prices]``; no price is written here). Its input is the uncached input plus the
  cache's reads and writes, as the table expects. The table's name of the model is kept
  (``priced_as``; a failure whose turns were priced both ways names the first turn's). A turn
  neither the log nor the table prices (a model the table does not know, a run without
  genai-prices) leaves the failure's dollars unknown (``None``), whatever its other turns.
- A session's total the log records (stream-json's ``total_cost_usd``, SWE-agent's
  ``model_stats``, mini-swe-agent's ``instance_cost``) is never a turn: no reader yields it as
  one, so it is charged to no failure (readers yield the turns where the log has them).
- Recovery: the seconds from a failure to the session's next step that did not fail (a
  command that succeeded, a probe that found nothing), where the log records both times; a
  failure nothing succeeded after has none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from failcode.triage._prices import turn_price
from failcode.triage._result import Tokens

if TYPE_CHECKING:
    from failcode.triage._events import Usage
    from failcode.triage._result import FailureEntry

__all__ = ["charge", "recorded", "recorded_as", "settle", "turn"]


def recorded_as(model: str | None, agent: str | None) -> str:
    """The name of a price the log recorded: ``"deepseek-chat, recorded by mini-swe-agent"``
    (the model unknown: ``"recorded by mini-swe-agent"``)."""
    who = f"recorded by {agent or 'the agent'}"
    return f"{model}, {who}" if model else who


def turn(event: Usage) -> Tokens:
    """One turn's tokens."""
    return Tokens(event.input, event.output, event.cache_read, event.cache_write, 1)


def recorded(event: Usage) -> tuple[float, str] | None:
    """The price the log records for the turn and its name (:func:`recorded_as`); None: the
    table prices it."""
    if event.usd is None:
        return None
    return event.usd, recorded_as(event.model, event.priced_by)


def charge(entry: FailureEntry, tokens: Tokens, model: str | None,
           price_recorded: tuple[float, str] | None = None) -> None:
    """Count one turn into the failure ``entry``: its tokens, and its price when every turn so
    far had one (``price_recorded``, the log's price of the turn (:func:`recorded`), else the
    table's for ``model``)."""
    first = entry.tokens is None
    if entry.tokens is None:
        entry.tokens = Tokens()
    entry.tokens.add(tokens)
    if not first and entry.usd is None:
        return  # an earlier turn could not be priced: the total stays unknown
    price = price_recorded
    if price is None and model:
        price = turn_price(model, (tokens.input, tokens.output, tokens.cache_read,
                                   tokens.cache_write))
    if price is None:
        entry.usd = None
        return
    entry.usd = (0.0 if first else entry.usd or 0.0) + price[0]
    entry.priced_as = entry.priced_as or price[1]


def settle(entries: list[FailureEntry], session_tokens: Tokens | None) -> None:
    """At a session's end: in a session that records tokens, a failure no turn read cost
    nothing (0 tokens, 0 dollars); in one that records none, every cost stays unknown."""
    if session_tokens is None:
        return
    for entry in entries:
        if entry.tokens is None:
            entry.tokens, entry.usd = Tokens(), 0.0
