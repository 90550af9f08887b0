"""Canonical, span-free JSON forms of declarations, the input of every hash."""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction
from typing import Any

from engine.syntax import ast
from engine.units import to_base

# Fields that record how something was written, not what it means.
_PRESENTATION_FIELDS = frozenset({"span", "text", "note"})


def canonical_number(value: Fraction) -> str:
    """An exact rational as `p` or `p/q` in lowest terms."""
    return (
        str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    )


# A field's default when it has one, else this marker (no value equals it).
_NO_DEFAULT: Any = object()
_SEMANTIC_FIELDS: dict[type, tuple[tuple[str, Any], ...] | None] = {}


def _semantic_fields(node_type: type) -> tuple[tuple[str, Any], ...] | None:
    """The fields of an AST node type that carry meaning, each with its default value (or
    `_NO_DEFAULT`); None for a non-dataclass type.

    Cached per type: calling `dataclasses.fields` on every node made hashing twice as slow.
    """
    if node_type not in _SEMANTIC_FIELDS:
        _SEMANTIC_FIELDS[node_type] = (
            tuple(
                (
                    item.name,
                    _NO_DEFAULT if item.default is dataclasses.MISSING else item.default,
                )
                for item in dataclasses.fields(node_type)
                if item.name not in _PRESENTATION_FIELDS
            )
            if dataclasses.is_dataclass(node_type)
            else None
        )
    return _SEMANTIC_FIELDS[node_type]


def canonical_form(node: Any) -> Any:
    """A JSON-compatible form of an AST node that ignores layout, comments and spelling.

    Numbers become exact rationals in base units with their dimension, so `0.8`, `0.80`
    and `8e-1`, or `4 min` and `240 s`, have one form. `source` notes are documentation
    and are left out.
    """
    kind = type(node)
    if kind is str or node is None or kind is bool or kind is int:  # most calls: a leaf
        return node
    if isinstance(node, ast.Number):
        value, dimension = to_base(node.value, node.unit)
        return {
            "node": "Number",
            "value": canonical_number(value),
            "dim": list(dimension.exponents),
        }
    if isinstance(node, ast.Ident):
        return node.text
    if isinstance(node, ast.SetLiteral):  # a set has no order: `{"A", "B"}` is `{"B", "A"}`
        items = sorted((canonical_form(item) for item in node.items), key=canonical_json)
        return {"node": "SetLiteral", "items": items}
    names = _SEMANTIC_FIELDS.get(kind) or _semantic_fields(kind)
    if names is not None:
        form: dict[str, Any] = {"node": kind.__name__}
        for name, default in names:
            value = getattr(node, name)
            # A field with a default was added to the language later (`records ...
            # optional`, `attr ... as text`); left out while it holds that default, it
            # keeps the hash of every declaration that does not use the new syntax.
            if default is _NO_DEFAULT or (value is not default and value != default):
                form[name] = canonical_form(value)
        if isinstance(node, ast.ProtocolDecl):  # a bundle's documents have no order
            form["documents"] = sorted(form["documents"], key=lambda d: d["name"])
        if isinstance(node, ast.KindDecl) and len(node.graphs) == 1:
            # A kind of one graph keeps the form it had before kinds could be shared, so
            # that no hash of an unchanged rule file changes with the language's growth.
            form["graph"] = form.pop("graphs")[0]
        return form
    if isinstance(node, tuple | list):
        return [canonical_form(item) for item in node]
    if isinstance(node, Fraction):
        return canonical_number(node)
    if node is None or isinstance(node, str | bool | int):
        return node
    raise TypeError(f"no canonical form for {type(node).__name__}")


# One encoder for every call: `json.dumps` with options builds a new one each time.
_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def canonical_json(value: Any) -> bytes:
    """Canonical JSON bytes: sorted keys, no insignificant whitespace, UTF-8."""
    return _ENCODER.encode(value).encode("utf-8")
