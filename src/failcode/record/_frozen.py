"""An immutable ``dict`` for the record's mappings (params, context, metadata).

A ``dict`` subclass so msgspec encodes it natively and equality with a plain ``dict`` holds;
every mutating method raises :class:`TypeError`, as a ``MappingProxyType`` would.
"""

from __future__ import annotations

import math
from typing import Any, NoReturn

__all__ = ["MAX_KEYS", "FrozenDict", "Scalar"]

Scalar = str | int | float | bool | None
"""The values a record's mappings hold: JSON scalars. Nested data belongs in evidence."""
_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})
MAX_KEYS = 64
"""The most keys a record mapping holds."""


class FrozenDict(dict[str, Scalar]):
    """A read-only ``dict[str, Scalar]`` whose keys are str and values JSON scalars.

    Validated once, when built; every mutating method raises :class:`TypeError`. Hashing is
    refused, as for ``dict``.

    Raises:
        TypeError: a key is not a str or a value is not a JSON scalar.
        ValueError: a float value is NaN or infinite (it would not round-trip JSON).
    """

    __slots__ = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        dict.__init__(self, *args, **kwargs)
        if len(self) > MAX_KEYS:
            msg = f"at most {MAX_KEYS} keys, got {len(self)}"
            raise ValueError(msg)
        # a plain loop beats set(map(type, ...)) for the few keys a record mapping holds
        for key, value in dict.items(self):
            value_type = type(value)
            if type(key) is not str or value_type not in _SCALAR_TYPES:
                self._raise_type_error(key, value)
            if value_type is float and not math.isfinite(value):  # type: ignore[arg-type]
                msg = f"value {key!r}: {value!r} must be finite to round-trip JSON"
                raise ValueError(msg)

    @staticmethod
    def _raise_type_error(key: object, value: object) -> NoReturn:
        if type(key) is not str:
            msg = f"keys must be str, got {key!r}"
            raise TypeError(msg)
        msg = (f"values must be JSON scalars (str, int, float, bool, None), "
               f"got {key!r}: {type(value).__name__}")
        raise TypeError(msg)

    def _immutable(self, *_args: object, **_kwargs: object) -> NoReturn:
        msg = "failcode record mappings are immutable; build a new record with structs.replace"
        raise TypeError(msg)

    __setitem__ = _immutable
    __delitem__ = _immutable
    __ior__ = _immutable
    clear = _immutable
    pop = _immutable
    popitem = _immutable
    setdefault = _immutable
    update = _immutable

    def __reduce__(self) -> tuple[Any, ...]:
        # pickle would rebuild a dict subclass item by item through __setitem__
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, _memo: object) -> FrozenDict:
        return self

    def __repr__(self) -> str:
        return dict.__repr__(self)
