"""The policy layer: what happens next.

Holds the pure :func:`~failcode.decide` function and its history, budget and ladder types, the
sync and async retry helpers (thin shims over ``decide``), the tenacity and stamina adapters,
start-up checks and the ``failcode.toml`` validator. It may use every layer below it
(record, signature, codes, classification), never rendering or boundaries.
"""
