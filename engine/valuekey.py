"""The key of a value by which two values are the same: `true` is never `1`, and `0.1`
is one tenth.

Python's `==` and `hash` call `True` and `1` the same, inside lists and maps too, and a
list the same as the tuple of its items. The language and JSON Schema do not: a boolean
equals only a boolean, a list only a list, a map only a map. Python also compares a float
with an exact number by the float's binary value, so the `0.1` a document holds would
not equal the `0.1` a rule writes (an exact tenth). A number is the decimal it was written
as (`exact_number`). Every comparison of whole values that cannot be left to Python (JSON
Schema's `enum`, `const` and `uniqueItems`, the rules' `==` of lists and maps and of a
float with another number, `in`, `unique`, `union`, `sorted_unique`, a replayed record's
content) compares these keys.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

_CONTAINERS = (list, dict)
_LEAVES = frozenset({str, int, type(None), tuple})  # most values, decided without isinstance


def exact_number(value: float) -> Fraction | float:
    """The exact number a float read from a document stands for: the decimal it was
    written as, which is the float's shortest form (the readers refuse a number a float
    cannot hold as written: `engine/limits.py`). A non-finite float, which no document
    can hold, stays as it is."""
    return Fraction(repr(float(value))) if math.isfinite(value) else value


def value_key(value: Any) -> Any:
    """A hashable key of `value`: texts, numbers, null and nodes are their own keys (so
    `1`, `1.0` and `Fraction(1)` share one; a float's is its `exact_number`, so `0.1` and
    `Fraction(1, 10)` share one), a boolean is tagged, and a list or a map is a
    tuple tagged by what it is, of its items' keys (a map's entries sorted by name).
    Iterative, post-order over an explicit stack: no nesting depth of the data can
    exhaust the interpreter's stack."""
    if value.__class__ in _LEAVES:
        return value
    if not isinstance(value, _CONTAINERS):
        return _scalar_key(value)
    built: dict[int, Any] = {}

    def part(item: Any) -> Any:
        if isinstance(item, _CONTAINERS):
            return built[id(item)]
        return item if item.__class__ in _LEAVES else _scalar_key(item)

    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, children_built = stack.pop()
        if children_built:
            if isinstance(item, list):
                built[id(item)] = ("[", *(part(v) for v in item))
            else:
                built[id(item)] = ("{", *sorted((k, part(v)) for k, v in item.items()))
            continue
        stack.append((item, True))
        children = item if isinstance(item, list) else item.values()
        stack += [(child, False) for child in children if isinstance(child, _CONTAINERS)]
    return built[id(value)]


def _scalar_key(value: Any) -> Any:
    """The key of a value that is neither a list nor a map (see `value_key`)."""
    if value.__class__ is bool:
        return ("bool", value)
    return exact_number(value) if isinstance(value, float) else value
