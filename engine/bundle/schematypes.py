"""What a JSON Schema guarantees about the records a pointer finds: the JSON types each
member may hold in any document the schema accepts.

The graph builder tests the type of every declared attribute of every record; where the
document's schema passed and already allows a member one type only, that test can never
fail, and the builder leaves it out. So the reading here must be sound for the schemas
`engine.bundle.schemac` compiles: a type is guaranteed only by a `type` keyword reached
through `properties`, `items` (one schema for every item), local `$ref`s, and the one
branch of a `oneOf` or `anyOf` whose other branches allow only null (a value that is not
null satisfies it), each of which that compiler enforces. Every other keyword can only
narrow what a value may be, never widen it, so ignoring it keeps the answer sound;
anything else on the way (a `$ref` outside the file, `*` over an object, an index) gives
no guarantee at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.bundle.schemac import resolved
from engine.pointer import unescape_token

_OBJECT = frozenset({"object"})
_ARRAY = frozenset({"array"})
_NULL = frozenset({"null"})


@dataclass(frozen=True, slots=True)
class MemberTypes:
    """The JSON types a member may hold (`string`, `integer`, `null`, ...) and, for a
    list, those its items may hold (None when the schema does not say)."""

    types: frozenset[str]
    item_types: frozenset[str] | None = None


def record_member_types(schema: Any, pointer: str) -> dict[str, MemberTypes]:
    """For every document `schema` accepts: the types each member of each record found at
    `pointer` may hold, for the members whose types the schema fixes (none when it fixes
    no record's shape there). A record is the value at the pointer when that is an object,
    each of its items when it is a list, as `records` clauses read them; `*` steps
    through a list's items."""
    node: Mapping[str, Any] | None = _unwrapped(schema, schema)[0]
    for token in pointer.split("/")[1:] if pointer else ():
        if node is None:
            return {}
        if token == "*":  # over a list only: `*` over an object steps through its members
            node = _items(schema, node) if _types(node) == _ARRAY else None
        else:
            node = _property(schema, node, unescape_token(token))
    record = None
    if node is not None:
        types = _types(node)
        if types == _ARRAY:
            record = _items(schema, node)
        elif types == _OBJECT:
            record = node
    if record is None or _types(record) != _OBJECT:
        return {}
    properties = record.get("properties")
    if not isinstance(properties, dict):
        return {}
    found = {}
    for name, written in properties.items():
        member, nullable = _unwrapped(schema, written)
        types = _types(member) if member is not None else None
        if member is not None and types:
            found[name] = MemberTypes(
                types | _NULL if nullable else types,
                _item_types(schema, member) if "array" in types else None,
            )
    return found


def _types(node: Mapping[str, Any]) -> frozenset[str] | None:
    declared = node.get("type")
    if isinstance(declared, str):
        return frozenset({declared})
    if isinstance(declared, list) and declared and all(isinstance(t, str) for t in declared):
        return frozenset(declared)
    return None


def _property(root: Any, node: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    if _types(node) != _OBJECT:  # else `properties` bind nothing of a list or a text
        return None
    properties = node.get("properties")
    if not isinstance(properties, dict) or name not in properties:
        return None
    return _unwrapped(root, properties[name])[0]


def _items(root: Any, node: Mapping[str, Any]) -> Mapping[str, Any] | None:
    items = node.get("items")
    return _unwrapped(root, items)[0] if isinstance(items, dict) else None


def _item_types(root: Any, node: Mapping[str, Any]) -> frozenset[str] | None:
    """The types every item of a list that `node` accepts may hold (null among them where
    its item schema allows null), None when it does not say."""
    written = node.get("items")
    if not isinstance(written, dict):
        return None
    items, nullable = _unwrapped(root, written)
    types = _types(items) if items is not None else None
    return types | _NULL if types and nullable else types


def _unwrapped(root: Any, node: Any) -> tuple[Mapping[str, Any] | None, bool]:
    """The schema every value but null satisfies, and whether null is also allowed: the
    schema itself, or the one branch of a `oneOf`/`anyOf` without a `type` of its own
    whose other branches each allow null only (`{"oneOf": [{"type": "null"}, {...}]}`,
    the way a schema writes "this object, or null")."""
    node = _resolved(root, node)
    if node is None or "type" in node:
        return node, False
    for combinator in ("oneOf", "anyOf"):
        branches = node.get(combinator)
        if not isinstance(branches, list):
            continue
        resolved = [_resolved(root, branch) for branch in branches]
        others = [b for b in resolved if b is None or _types(b) != _NULL]
        if len(others) == 1 and others[0] is not None and len(resolved) > 1:
            return others[0], True
    return node, False


def _resolved(root: Any, node: Any) -> Mapping[str, Any] | None:
    """The schema `node` stands for, its `$ref`s followed as the compiler follows them."""
    found = resolved(root, node)
    return found if isinstance(found, dict) else None
