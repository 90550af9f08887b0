"""The key of a value by which two values are the same: `true` is never `1`.

Python's `==` and `hash` call `True` and `1` the same, inside lists and maps too, and a
list the same as the tuple of its items. The language and JSON Schema do not: a boolean
equals only a boolean, a list only a list, a map only a map. Every comparison of whole
values that cannot be left to Python (JSON Schema's `enum`, `const` and `uniqueItems`,
the rules' `==` of lists and maps, `in`, `unique`, `union`, `sorted_unique`, a replayed
record's content) compares these keys.
"""

from __future__ import annotations

from typing import Any

_CONTAINERS = (list, dict)
_LEAVES = frozenset({str, int, type(None), tuple})  # most values, decided without isinstance


def value_key(value: Any) -> Any:
    """A hashable key of `value`: texts, numbers, null and nodes are their own keys (so
    `1`, `1.0` and `Fraction(1)` share one), a boolean is tagged, and a list or a map is a
    tuple tagged by what it is, of its items' keys (a map's entries sorted by name).
    Iterative, post-order over an explicit stack: no nesting depth of the data can
    exhaust the interpreter's stack."""
    if value.__class__ in _LEAVES or not isinstance(value, _CONTAINERS):
        return ("bool", value) if value.__class__ is bool else value
    built: dict[int, Any] = {}

    def part(item: Any) -> Any:
        if isinstance(item, _CONTAINERS):
            return built[id(item)]
        return ("bool", item) if item.__class__ is bool else item

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
