"""The codes layer: the taxonomy as data.

Holds :class:`~failcode.CodeSpec`, :class:`~failcode.CodeEnum` and :class:`~failcode.Catalog`
(declaration checks, the lock file), failcode's own ``FC`` catalog, the generated reference and
the one factory that builds a :class:`~failcode.Failure` from a code. It may use the record and
signature layers.
"""
