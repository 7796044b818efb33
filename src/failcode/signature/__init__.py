"""The signature layer: turn a failure's text and fields into a stable identity.

Holds redaction (one pass for every output), message normalization (volatile tokens to named
placeholders), the semantic signature (components, version, golden-pinned) and the online
template clusterer. It may use the record layer only.
"""
