"""An immutable ``dict`` for the record's mappings (params, context, metadata).

A ``dict`` subclass so msgspec encodes it natively and equality with a plain ``dict`` holds;
every mutating method raises :class:`TypeError`, as a ``MappingProxyType`` would.

Rule (text that is safe everywhere): every string a record holds (a key or value here, every
text field of a Failure, a cause link, an entity ref, an outcome, an event) has its lone
surrogates and its NUL characters (U+0000) replaced by U+FFFD when the record is built or
decoded (:func:`replace_surrogates`): UTF-8 encoders refuse the first, PostgreSQL's ``text``
refuses the second, and neither may poison a sink or a store. Other control characters are
kept (a record is data); renderers escape them.
"""

from __future__ import annotations

import math
import re
from typing import Any, Final, NoReturn

__all__ = ["MAX_INT", "MAX_KEYS", "MAX_VALUE_CHARS", "FrozenDict", "Scalar", "is_clean",
           "replace_surrogates"]

Scalar = str | int | float | bool | None
"""The values a record's mappings hold: JSON scalars. Nested data belongs in evidence."""
_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})
MAX_KEYS = 64
"""The most keys a record mapping holds."""
MAX_VALUE_CHARS: Final = 4000
"""The longest string value a record mapping holds."""
MAX_INT: Final = 2**63
"""Integer values lie in ``-MAX_INT <= value < 2 * MAX_INT`` (int64 or uint64), so every JSON
reader keeps them and arithmetic on them (a delay, a status) never overflows a float."""
_SURROGATE: Final = re.compile("[\x00\ud800-\udfff]")


def replace_surrogates(text: str) -> str:
    """``text`` with every lone surrogate (an undecodable byte smuggled in by
    ``surrogateescape``, a broken JSON escape) and every NUL replaced by U+FFFD, so it
    encodes as UTF-8 and every store keeps it; ``text`` itself when it has neither."""
    if text.isascii():
        return text.replace("\x00", "\ufffd") if "\x00" in text else text
    return _SURROGATE.sub("\ufffd", text)


def is_clean(text: str) -> bool:
    """Whether :func:`replace_surrogates` leaves ``text`` as it is (ASCII without NUL: the
    cheap test; other text is checked by the replacement itself)."""
    return text.isascii() and "\x00" not in text


class FrozenDict(dict[str, Scalar]):
    """A read-only ``dict[str, Scalar]`` whose keys are str and values JSON scalars.

    Validated once, when built; every mutating method raises :class:`TypeError`. Hashing is
    refused, as for ``dict``. Lone surrogates and NUL in keys and string values are replaced by
    U+FFFD, so the mapping always encodes as UTF-8 JSON and every store keeps it.

    Raises:
        TypeError: a key is not a str or a value is not a JSON scalar.
        ValueError: more than :data:`MAX_KEYS` keys; a float value that is NaN or infinite (it
            would not round-trip JSON); a string value over :data:`MAX_VALUE_CHARS` characters;
            an integer outside int64 / uint64 (see :data:`MAX_INT`).
    """

    __slots__ = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        dict.__init__(self, *args, **kwargs)
        if len(self) > MAX_KEYS:
            msg = f"at most {MAX_KEYS} keys, got {len(self)}"
            raise ValueError(msg)
        dirty = False
        # a plain loop beats set(map(type, ...)) for the few keys a record mapping holds
        for key, value in dict.items(self):
            value_type = type(value)
            if type(key) is not str or value_type not in _SCALAR_TYPES:
                self._raise_type_error(key, value)
            if value_type is str:
                if len(value) > MAX_VALUE_CHARS:  # type: ignore[arg-type]
                    msg = (f"value {key!r}: a string of {len(value)} characters; "  # type: ignore[arg-type]
                           f"at most {MAX_VALUE_CHARS}")
                    raise ValueError(msg)
                if not value.isascii() or "\x00" in value:  # type: ignore[union-attr,operator]
                    dirty = True
            elif value_type is float:
                if not math.isfinite(value):  # type: ignore[arg-type]
                    msg = f"value {key!r}: {value!r} must be finite to round-trip JSON"
                    raise ValueError(msg)
            elif value_type is int and not -MAX_INT <= value < 2 * MAX_INT:  # type: ignore[operator]
                msg = (f"value {key!r}: an integer of {value.bit_length()} bits; "  # type: ignore[union-attr]
                       f"at most 64")
                raise ValueError(msg)
            if not key.isascii() or "\x00" in key:  # every key, whatever its value
                dirty = True
        if dirty:
            self._replace_surrogates()

    def _replace_surrogates(self) -> None:
        items = [(replace_surrogates(key), replace_surrogates(value) if type(value) is str
                  else value) for key, value in dict.items(self)]
        dict.clear(self)
        dict.update(self, items)

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
