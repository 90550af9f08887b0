"""A compiled fast path for the cerberus schemas of YAML documents.

Cerberus stays the reference: its schemas in `manifests/schemas/*.yaml` are the source of
truth and its messages are the ones users see. But it validates a list of 10,000 records
in seconds, so each schema is also translated once into JSON Schema and compiled
(`engine.bundle.schemac`); a document that passes the compiled check is accepted without
running cerberus, and one that fails is handed to cerberus for the full located report.
`tests/test_cerberus_fast.py` holds the two to the same verdicts.
"""

from __future__ import annotations

from typing import Any

from engine.bundle.schemac import Validator, compile_schema

_TYPES = {
    "integer": "integer",
    "string": "string",
    "boolean": "boolean",
    "dict": "object",
    "list": "array",
    "float": "number",
    "number": "number",
}
_KNOWN = frozenset(
    {
        "type",
        "allowed",
        "empty",
        "regex",
        "nullable",
        "min",
        "max",
        "schema",
        "keysrules",
        "valuesrules",
    }
)


class UnsupportedRule(ValueError):
    """The cerberus schema uses a rule the translation does not cover."""


def _field(rules: Any) -> dict[str, Any]:
    if not isinstance(rules, dict):
        raise UnsupportedRule("a field's cerberus rules must be a mapping")
    unknown = sorted(set(rules) - _KNOWN)
    if unknown:
        raise UnsupportedRule("cerberus rule(s) not translated: " + ", ".join(unknown))
    declared = rules.get("type")
    if not isinstance(declared, str) or declared not in _TYPES:
        raise UnsupportedRule(f"cerberus type not translated: {declared!r}"[:200])
    kind = _TYPES[declared]
    schema: dict[str, Any] = {"type": [kind, "null"] if rules.get("nullable") else kind}
    if "allowed" in rules:
        if not isinstance(rules["allowed"], list):
            raise UnsupportedRule("cerberus rule `allowed` must be a list")
        schema["enum"] = list(rules["allowed"]) + ([None] if rules.get("nullable") else [])
    sized = {"string": "minLength", "array": "minItems", "object": "minProperties"}
    if rules.get("empty") is False and kind in sized:  # cerberus tests only sized values
        schema[sized[kind]] = 1
    if "regex" in rules:
        if not isinstance(rules["regex"], str):
            raise UnsupportedRule("cerberus rule `regex` must be a string")
        schema["pattern"] = "^(?:" + rules["regex"] + ")(?![\\s\\S])"
    if "min" in rules:
        schema["minimum"] = rules["min"]
    if "max" in rules:
        schema["maximum"] = rules["max"]
    nested = rules.get("schema")
    if kind == "object" and nested is not None:
        schema.update(mapping(nested))
    elif kind == "array" and nested is not None:
        schema["items"] = _field(nested)
    if "keysrules" in rules:
        schema["propertyNames"] = _field(rules["keysrules"])
    if "valuesrules" in rules:  # every value, those `schema` names too, as cerberus does
        values = _field(rules["valuesrules"])
        schema["additionalProperties"] = values
        for name, named in schema.get("properties", {}).items():
            schema["properties"][name] = {"allOf": [named, values]}
    return schema


def mapping(fields: dict[str, Any]) -> dict[str, Any]:
    """A cerberus document schema (every field required, no unknown keys) as JSON Schema."""
    if not isinstance(fields, dict):
        raise UnsupportedRule("a cerberus schema must be a mapping of field names to rules")
    return {
        "type": "object",
        "required": list(fields),
        "additionalProperties": False,
        "properties": {name: _field(rules) for name, rules in fields.items()},
    }


def compile_cerberus(fields: dict[str, Any]) -> Validator:
    """The compiled fast check of a cerberus document schema."""
    return compile_schema(mapping(fields))
