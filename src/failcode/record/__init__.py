"""The record layer: what a failure *is*, with no opinion on what to do about it.

Holds :class:`~failcode.Failure` and its invariants, :class:`~failcode.FrozenDict`, the axes
(kind, category, severity, retryability, route, outcome) with their per-kind defaults, the typed
non-error outcomes, the versioned wire envelope and the projections into each seed's shape.
It is the bottom layer: it imports nothing else of failcode's, so every other layer may use it.
"""
