"""Canonical, span-free JSON forms of declarations, the input of every hash."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from engine.codecache import compiled
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


def _semantic_fields(node_type: type) -> tuple[tuple[str, Any], ...]:
    """The fields of an AST node type (a dataclass) that carry meaning, each with its
    default value (or `_NO_DEFAULT`)."""
    return tuple(
        (item.name, _NO_DEFAULT if item.default is dataclasses.MISSING else item.default)
        for item in dataclasses.fields(node_type)
        if item.name not in _PRESENTATION_FIELDS
    )


def canonical_form(node: Any) -> Any:
    """A JSON-compatible form of an AST node that ignores layout, comments and spelling.

    Numbers become exact rationals in base units with their dimension, so `0.8`, `0.80`
    and `8e-1`, or `4 min` and `240 s`, have one form. `source` notes are documentation
    and are left out.
    """
    kind = node.__class__
    if kind is str or node is None or kind is bool or kind is int:  # most calls: a leaf
        return node
    form = _FORMS.get(kind) or _form_of(kind)
    return form(node)


def _number_form(node: ast.Number) -> dict[str, Any]:
    value, dimension = to_base(node.value, node.unit)
    return {"node": "Number", "value": canonical_number(value), "dim": list(dimension.exponents)}


def _ident_form(node: ast.Ident) -> str:
    return node.text


def _set_form(node: ast.SetLiteral) -> dict[str, Any]:
    # a set has no order: `{"A", "B"}` is `{"B", "A"}`
    items = sorted((canonical_form(item) for item in node.items), key=canonical_json)
    return {"node": "SetLiteral", "items": items}


def _sequence_form(node: tuple[Any, ...] | list[Any]) -> list[Any]:
    return [canonical_form(item) for item in node]


def _leaf_form(node: Any) -> Any:
    return node


def _no_form(node: Any) -> Any:
    raise TypeError(f"no canonical form for {type(node).__name__}")


def _by_name(document: dict[str, Any]) -> Any:
    return document["name"]


# The form of each type met so far: a function per AST node type, written from its fields.
_FORMS: dict[type, Callable[[Any], Any]] = {}


def _form_of(kind: type) -> Callable[[Any], Any]:
    """The function that makes the canonical form of a value of type `kind` (kept)."""
    form: Callable[[Any], Any]
    if issubclass(kind, ast.Number):
        form = _number_form
    elif issubclass(kind, ast.Ident):
        form = _ident_form
    elif issubclass(kind, ast.SetLiteral):
        form = _set_form
    elif dataclasses.is_dataclass(kind):
        form = _node_form(kind)
    elif issubclass(kind, tuple | list):
        form = _sequence_form
    elif issubclass(kind, Fraction):
        form = canonical_number
    elif issubclass(kind, str | bool | int):
        form = _leaf_form
    else:
        form = _no_form
    _FORMS[kind] = form
    return form


def _node_form(kind: type) -> Callable[[Any], Any]:
    """The form of an AST node type, written as Python from its fields: what the generic
    walk over `dataclasses.fields` did for each node, which was most of hashing a rule file.

    Each meaningful field is `"name": form`, the field's value as is when it is a leaf
    (text, integer, boolean, null). A field with a default was added to the language
    later (`records ... optional`, `attr ... as text`); left out while it holds that
    default, it keeps the hash of every declaration that does not use the new syntax.
    """
    namespace: dict[str, Any] = {"_form": canonical_form, "_by_name": _by_name}
    lines = ["def form(node):", f"    form = {{'node': {kind.__name__!r}}}"]
    leaf = "v.__class__ is str or v is None or v.__class__ is bool or v.__class__ is int"
    for position, (name, default) in enumerate(_semantic_fields(kind)):
        store = f"form[{name!r}] = v if {leaf} else _form(v)"
        lines.append(f"    v = node.{name}")
        if default is _NO_DEFAULT:
            lines.append(f"    {store}")
        else:
            namespace[f"_default{position}"] = default
            lines.append(f"    if v is not _default{position} and v != _default{position}:")
            lines.append(f"        {store}")
    if issubclass(kind, ast.ProtocolDecl):  # a bundle's documents have no order
        lines.append("    form['documents'] = sorted(form['documents'], key=_by_name)")
    if issubclass(kind, ast.KindDecl):
        # A kind of one graph keeps the form it had before kinds could be shared, so that
        # no hash of an unchanged rule file changes with the language's growth.
        lines.append("    if len(node.graphs) == 1:")
        lines.append("        form['graph'] = form.pop('graphs')[0]")
    lines.append("    return form")
    source = "\n".join(lines) + "\n"
    exec(compiled(source, f"<rulecheck canonical form {kind.__name__}>"), namespace)
    form: Callable[[Any], Any] = namespace["form"]
    return form


# What makes JSON canonical here: sorted keys, no blanks, UTF-8 text, finite numbers.
_CANONICAL: dict[str, Any] = {
    "sort_keys": True,
    "separators": (",", ":"),
    "ensure_ascii": False,
    "allow_nan": False,
}
# One encoder for every call: `json.dumps` with options builds a new one each time.
_ENCODER = json.JSONEncoder(**_CANONICAL)


def canonical_json(value: Any) -> bytes:
    """Canonical JSON bytes: sorted keys, no insignificant whitespace, UTF-8."""
    return _ENCODER.encode(value).encode("utf-8")


# The same encoder without its guard against cycles, which registers every list and map
# it enters: a tenth of encoding the forms of a rule file's declarations.
_TREE_ENCODER = json.JSONEncoder(**_CANONICAL, check_circular=False)


def canonical_data_json(value: Any) -> bytes:
    """`canonical_json` of JSON data as a JSON file parses (what `strictjson` gives: texts,
    whole numbers, booleans, null, lists, maps with text keys, and numbers written with a
    fraction or an exponent as `JsonFloat`), never a plain float, which orjson would write
    in digits of its own: the same bytes, written by orjson, several times faster on a
    large object (a campaign's blinded view hashes each review's final answer). orjson
    writes these as `canonical_json` does (keys in code point order, no blanks, UTF-8, the
    same escapes) and refuses the rest: a `JsonFloat` (whose digits are Python's), any
    other subclass of a text, number, list or map, an integer past 64 bits, a lone
    surrogate, a key that is not text, nesting past its depth. Such a value is written by
    `canonical_json`, as it always was.

    Raises:
        TypeError, ValueError: as `canonical_json`, for a value that is not JSON data.
    """
    import orjson  # a command that hashes no data does not load it

    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_SUBCLASS)
    except orjson.JSONEncodeError:
        return canonical_json(value)


def canonical_tree_json(value: Any) -> bytes:
    """`canonical_json` of a value that holds no cycle by construction (the payload of a
    declaration's hash: its canonical form, the hashes it uses): the same bytes. A
    document a user wrote goes through `canonical_json`, which refuses a cycle (a YAML
    alias can make one) with ValueError."""
    return _TREE_ENCODER.encode(value).encode("utf-8")
