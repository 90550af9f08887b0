"""JSON Schema validation of data documents with schemas compiled once per run."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from engine.bundle.schemac import Validator, compile_schema
from engine.bundle.strictjson import locate
from engine.errors import Diagnostic, Location
from engine.freeze.hashing import sha256_hex
from engine.resources import shipped

SCHEMA_SUFFIX = ".schema.json"


@cache
def schema_text(name: str) -> bytes:
    """The bytes of a shipped JSON Schema, by file stem."""
    return shipped("schemas").joinpath(name + SCHEMA_SUFFIX).read_bytes()


def schema_digest(name: str) -> str:
    """sha256 of a shipped JSON Schema file, as recorded in execution manifests."""
    return sha256_hex(schema_text(name))


@cache
def compiled_schema(name: str) -> Validator:
    """The compiled validator of a shipped schema."""
    schema: dict[str, Any] = json.loads(schema_text(name))
    return compile_schema(schema)


def schema_errors(name: str, value: Any, raw: bytes, file: str, code: str) -> list[Diagnostic]:
    """Every violation of schema `name` by `value`, located in `raw`; empty when valid."""
    errors = compiled_schema(name)(value)
    diagnostics = []
    for pointer, _keyword, message in errors:
        position = locate(raw, pointer) if raw else None
        line, column = position if position else (None, None)
        diagnostics.append(Diagnostic(code, message, Location(file, line, column, pointer=pointer)))
    return diagnostics
