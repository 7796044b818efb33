"""Prices of model turns in US dollars, from genai-prices: a table its maintainers keep.

No price is written in failcode. genai-prices is the optional extra ``failcode[prices]``; it is
imported only to price a turn (it takes about 0.25 s to import), and without it every price is
unknown (``None``), never 0.
"""

from __future__ import annotations

import functools
from typing import Final

__all__ = ["PRICES", "price_table", "turn_price"]

PRICES: Final = "genai-prices"
"""The price table's package."""


@functools.lru_cache(maxsize=4096)
def turn_price(model: str, tokens: tuple[int, int, int, int]) -> tuple[float, str] | None:
    """The price in US dollars of one turn of ``model`` with ``tokens`` (input, output, cache
    read, cache write) and the table's name of the model; None when the table does not know
    the model or genai-prices is not installed."""
    try:
        from genai_prices import Usage as PriceUsage  # noqa: PLC0415 - heavy, only to price
        from genai_prices import calc_price  # noqa: PLC0415
    except ImportError:
        return None
    uncached, output, read, write = tokens
    usage = PriceUsage(input_tokens=uncached + read + write, output_tokens=output,
                       cache_read_tokens=read, cache_write_tokens=write)
    try:
        found = calc_price(usage, model_ref=model)
    except (LookupError, ValueError):
        return None
    return float(found.total_price), str(found.model.id)


def price_table() -> str | None:
    """The price table and its version (``genai-prices 0.2.5``); None when not installed."""
    import importlib.util  # noqa: PLC0415
    from importlib import metadata  # noqa: PLC0415

    try:  # found without importing it: a warm run prices nothing
        if importlib.util.find_spec("genai_prices") is None:  # not installed, or blocked
            return None
    except (ImportError, ValueError):
        return None
    try:
        return f"{PRICES} {metadata.version(PRICES)}"
    except metadata.PackageNotFoundError:
        return None
